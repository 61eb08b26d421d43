"""The worklist's reads (issue 16): only supersessions, the audit log and the memories they
name -- never every memory of every patient. Shaping and order: :mod:`memory_core.worklist`.

The cleanup count needs a patient's memories, so it is computed only for the first
``cleanup_patients`` distinct patients already on the worklist (the ones a reviewer sees
first); for any other patient the Memories page and ``cleanup(dry_run=True, patient_id=...)``
give it on demand.
"""

from __future__ import annotations

from datetime import datetime

from .. import worklist as wl
from ..store.base import AuditQuery
from ..values import AuditEntry, SupersessionState
from .core import Core
from .lifecycle import cleanup

#: How many recent audit entries of each demoting action are read (newest first).
AUDIT_SCAN = 5000


def worklist(core: Core, now: datetime | None, limit: int, cleanup_patients: int) -> wl.WorkList:
    now = core.now(now)
    store = core.store
    pending = [
        s
        for s in store.list_supersessions(state=SupersessionState.PENDING.value)
        if s.detected_at <= now
    ]
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

    # >>> STALE FLAGS (issue 14) -- the one place "possibly stale" flags join the worklist.
    # The lead wires P3's engine.stale_flags here after merging it, one wl.stale_flag_item(...)
    # per open flag, for the patients that have any. Until then there are none (not faked).
    # <<< STALE FLAGS

    policy_threshold = core.policy.decay.cleanup_threshold
    for pid in wl.first_patients(items, cleanup_patients):
        res = cleanup(core, now, None, True, pid, "worklist")
        item = wl.cleanup_item(pid, res.archived, policy_threshold)
        if item is not None:
            items.append(item)
    return wl.build(items, limit)
