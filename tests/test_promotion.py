"""The promotion rule (memory_core.promotion): decided once, in the core; the stores only apply
it (tests/test_store_contract.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core.errors import ValidationError
from memory_core.policy import DecayPolicy
from memory_core.promotion import due_for_promotion, promotions
from memory_core.store.audit import promotion_entries
from memory_core.values import AuditAction, Tier
from tests.conftest import NOW


def test_a_short_term_memory_is_due_once_it_reaches_promote_after() -> None:
    policy = DecayPolicy(promote_after=3)
    assert [due_for_promotion(Tier.SHORT_TERM, n, policy) for n in range(5)] == [
        False,
        False,
        False,
        True,
        True,
    ]
    assert not due_for_promotion(Tier.LONG_TERM, 99, policy)
    assert due_for_promotion("short_term", 1, DecayPolicy(promote_after=1))


def test_promotions_picks_the_due_ones_in_order() -> None:
    accessed = [("a", 3, Tier.SHORT_TERM), ("b", 2, Tier.SHORT_TERM), ("c", 7, Tier.LONG_TERM)]
    accessed.append(("d", 4, Tier.SHORT_TERM))
    assert promotions(accessed, DecayPolicy(promote_after=3)) == ["a", "d"]


def test_the_store_audits_a_promotion_from_the_flip() -> None:
    """The promotion row is the store's (memory_core.store.audit): the tier before and after,
    the agent, the access moment; a moment after the store's clock is refused."""
    at = NOW + timedelta(hours=2)
    (entry,) = promotion_entries("P-1", ["mem_1"], "agent", at, NOW + timedelta(days=1))
    assert (entry.action, entry.entity, entry.entity_id, entry.patient_id) == (
        AuditAction.PROMOTE,
        "memory",
        "mem_1",
        "P-1",
    )
    assert (entry.at, entry.actor, entry.before, entry.after, entry.seq) == (
        at,
        "agent",
        {"tier": "short_term"},
        {"tier": "long_term"},
        None,
    )
    with pytest.raises(ValidationError) as err:
        promotion_entries("P-1", ["mem_1"], "agent", at, NOW)
    assert err.value.field == "at"
