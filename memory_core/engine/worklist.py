"""The worklist's reads (issue 16): only supersessions, the audit log and the memories they
name -- never every memory of every patient. Shaping and order: :mod:`memory_core.worklist`.

The cleanup count needs a patient's memories, so it is computed only for the first
``cleanup_patients`` distinct patients already on the worklist (the ones a reviewer sees
first); for any other patient the Memories page and ``cleanup(dry_run=True, patient_id=...)``
give it on demand. "Possibly stale" flags are derived per patient (:mod:`memory_core.flags`),
so they are expanded only for the patients whose medication or condition memory was replaced
(found from the supersession records), at most ``flag_patients`` of them, newest change first.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from .. import worklist as wl
from ..errors import ValidationError
from ..flags import CHANGING_VERDICTS
from ..store.base import AuditQuery
from ..values import AuditEntry, Memory, Supersession, SupersessionState
from . import flagging
from .core import Core
from .lifecycle import cleanup

#: The states a review can be in after a reviewer decided it (it was pending before).
DECIDED_AFTER_REVIEW = (
    SupersessionState.CONFIRMED,
    SupersessionState.REJECTED,
    SupersessionState.UNDONE,
)


def raised(s: Supersession, newer: Mapping[str, Memory]) -> datetime:
    """When the review of ``s`` was raised in the patient's record: its newer memory's
    created_at (its detection moment when that memory was purged)."""
    m = newer.get(s.new_id)
    return s.detected_at if m is None else m.created_at


#: How many recent audit entries of each demoting action are read (newest first).
AUDIT_SCAN = 5000
#: The kinds of memory whose replacement flags the patient's other memories naming them.
FLAGGED_KINDS = frozenset({"medication", "condition"})


def flag_items(core: Core, now: datetime, max_patients: int) -> list[wl.WorkItem]:
    """The open "possibly stale" flags (issue 14) of the patients that can have one: those with
    a changing supersession in effect of a medication or condition memory -- found from the
    supersession records and the older memories they name, never from every memory. At most
    ``max_patients`` patients, most recent change first, are expanded into their flags."""
    store = core.store
    changes = [
        s
        for state in (SupersessionState.AUTO, SupersessionState.CONFIRMED)
        for s in store.list_supersessions(state=state.value)
        if s.verdict in CHANGING_VERDICTS and s.in_effect(now)
    ]
    olders = {m.id: m for m in store.get_memories(sorted({s.old_id for s in changes}))}
    latest: dict[str, datetime] = {}
    for s in changes:
        old = olders.get(s.old_id)
        if old is not None and old.memory_type in FLAGGED_KINDS and s.effective_at is not None:
            latest[s.patient_id] = max(latest.get(s.patient_id, s.effective_at), s.effective_at)
    patients = sorted(latest, key=lambda p: (-latest[p].timestamp(), p))[:max_patients]
    items: list[wl.WorkItem] = []
    for pid in patients:
        flags = flagging.stale_flags(core, pid, now)
        if not flags:
            continue
        named = {m.id: m for m in store.get_memories(sorted({f.memory_id for f in flags}))}
        for f in flags:
            m = named.get(f.memory_id)
            if m is not None:
                reason = f"{f.subject} changed on {f.since.day} {f.since:%b %Y}"
                items.append(
                    wl.stale_flag_item(pid, m.id, m.content, reason, f.since, m.memory_type)
                )
    return items


def worklist(
    core: Core, now: datetime | None, limit: int, cleanup_patients: int, flag_patients: int = 200
) -> wl.WorkList:
    """What waits for a reviewer across all patients, most urgent first (at most ``limit``
    items; ``.totals`` counts every item by kind): pending supersession reviews (safety types
    first, oldest first), safety-critical memories demoted or archived in the last 7 days,
    "possibly stale" flags, and the next cleanup's count for the first ``cleanup_patients``
    patients on the list. Reads supersessions and the audit log, not every memory. Reads
    only."""
    if limit < 0:
        raise ValidationError("limit", f"must be 0 or more, got {limit}")
    now = core.now(now)
    store = core.store
    reviews = store.list_supersessions(state=SupersessionState.PENDING.value)
    if now < core.clock():  # as of the past: reviews decided since were waiting then
        for state in DECIDED_AFTER_REVIEW:
            reviews += store.list_supersessions(state=state.value)
    newer = {m.id: m for m in store.get_memories(sorted({s.new_id for s in reviews}))}
    pending = [s for s in reviews if s.pending_at(now, raised(s, newer))]
    named = {i for s in pending for i in (s.old_id, s.new_id)}
    entries: list[AuditEntry] = []
    since = now - wl.SAFETY_WINDOW
    for action in wl.DEMOTING_ACTIONS:
        for e in store.list_audit(AuditQuery(action=action.value, limit=AUDIT_SCAN)):
            if e.at < since:
                break  # newest first: the rest is older
            entries.append(e)
    named |= {e.entity_id for e in entries if e.entity == "memory"}
    memories = {m.id: m for m in store.get_memories(sorted(named))}
    items = wl.review_items(pending, memories)
    items += wl.safety_change_items(entries, memories, now)

    items += flag_items(core, now, flag_patients)

    policy_threshold = core.policy.decay.cleanup_threshold
    for pid in wl.first_patients(items, cleanup_patients):
        res = cleanup(core, now, None, True, pid, "worklist")
        item = wl.cleanup_item(pid, res.archived, policy_threshold)
        if item is not None:
            items.append(item)
    return wl.build(items, limit)
