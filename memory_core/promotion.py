"""The promotion rule, decided once: a short-term memory whose access count reaches the policy's
``promote_after`` becomes long-term. The engine asks this module after a store recorded
accesses (the store reports the post-increment counts) and hands the due ids to
:meth:`MemoryStore.promote`, which flips only memories still short-term and audits each flip
(:attr:`AuditAction.PROMOTE`, the tier before and after), so of two concurrent agents exactly
one promotes and audits. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable

from .policy import DecayPolicy
from .values import Tier


def due_for_promotion(tier: Tier | str, access_count: int, policy: DecayPolicy) -> bool:
    """Whether a memory of ``tier`` with ``access_count`` accesses is promoted under ``policy``."""
    return Tier(tier) is Tier.SHORT_TERM and access_count >= policy.promote_after


def promotions(accessed: Iterable[tuple[str, int, Tier | str]], policy: DecayPolicy) -> list[str]:
    """The ids due for promotion after accesses reported as ``(memory id, access count, tier)``
    (what :meth:`MemoryStore.record_access` returns), in that order."""
    return [
        memory_id for memory_id, count, tier in accessed if due_for_promotion(tier, count, policy)
    ]
