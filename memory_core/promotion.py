"""The promotion rule, decided once: a short-term memory whose access count reaches the policy's
``promote_after`` becomes long-term, audited as :attr:`AuditAction.PROMOTE` with the tier before
and after. The engine asks this module after a store recorded accesses (the store reports the
post-increment counts) and hands the entries to :meth:`MemoryStore.promote`, which flips only
memories still short-term, so of two concurrent agents exactly one promotes and audits.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .policy import DecayPolicy
from .values import AuditAction, AuditEntry, Tier


def due_for_promotion(tier: Tier | str, access_count: int, policy: DecayPolicy) -> bool:
    """Whether a memory of ``tier`` with ``access_count`` accesses is promoted under ``policy``."""
    return Tier(tier) is Tier.SHORT_TERM and access_count >= policy.promote_after


def promotion_audit(memory_id: str, patient_id: str, at: datetime, actor: str) -> AuditEntry:
    """The audit entry of one promotion (the store writes it only if the memory flipped)."""
    return AuditEntry(
        at=at,
        actor=actor,
        action=AuditAction.PROMOTE.value,
        entity="memory",
        entity_id=memory_id,
        patient_id=patient_id,
        before={"tier": Tier.SHORT_TERM.value},
        after={"tier": Tier.LONG_TERM.value},
    )


def promotions(
    accessed: Iterable[tuple[str, int, Tier | str]],
    policy: DecayPolicy,
    patient_id: str,
    at: datetime,
    actor: str,
) -> list[AuditEntry]:
    """The promotion entries due after accesses reported as ``(memory id, access count, tier)``
    (what :meth:`MemoryStore.record_access` returns)."""
    return [
        promotion_audit(memory_id, patient_id, at, actor)
        for memory_id, count, tier in accessed
        if due_for_promotion(tier, count, policy)
    ]
