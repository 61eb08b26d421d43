"""Possibly-stale flags (derived by :mod:`memory_core.flags`) and a reviewer's two decisions on
them: keep the memory (the flag is cleared; an audit entry is the record) or confirm it stale
(the memory is archived, audited, undoable with ``restore``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import numpy as np

from .. import flags
from .. import validation as v
from ..errors import NotFoundError, StateError
from ..store.base import AuditQuery, ChangeSet, FlagKeep, MemoryUpdate
from ..values import AuditAction, Confirmation, ConfirmationKind, Memory, StaleFlag, Status
from .asof import active_indices
from .core import Core
from .snapshot import Snapshot

KEEP_LIMIT = 100_000  # keep decisions read back per patient


def active_memories(snap: Snapshot, now: datetime) -> list[Memory]:
    return [snap.memories[i] for i in active_indices(snap, now).tolist()]


def derived_flags(snap: Snapshot, now: datetime) -> list[StaleFlag]:
    """The flags at ``now`` before any reviewer's keep decision; kept with the snapshot when
    ``now`` is past every status change and creation (then they cannot differ)."""

    def make() -> list[StaleFlag]:
        index = snap.flag_index()
        if not index.has_changes:
            return []
        return flags.stale_flags(
            snap.memories,
            snap.supersessions,
            now,
            active=active_memories(snap, now),
            index=index,
        )

    now_s = now.timestamp()
    latest = float(snap.created_s.max(initial=-np.inf))
    if now_s >= snap.settled_s and now_s + 1e-6 >= latest:
        return snap.memoized("stale_flags", make)
    return make()


def kept(core: Core, patient_id: str) -> dict[tuple[str, str], datetime]:
    """(memory id, change id) -> when a reviewer first kept it."""
    entries = core.store.list_audit(
        AuditQuery(patient_id=patient_id, action=AuditAction.KEEP_FLAGGED.value, limit=KEEP_LIMIT)
    )
    out: dict[tuple[str, str], datetime] = {}
    for e in entries:
        change = (e.after or {}).get("change_id")
        if isinstance(change, str):
            key = (e.entity_id, change)
            if key not in out or e.at < out[key]:
                out[key] = e.at
    return out


def flags_at(core: Core, snap: Snapshot, patient_id: str, now: datetime) -> list[StaleFlag]:
    raw = derived_flags(snap, now)
    if not raw:
        return raw
    done = kept(core, patient_id)
    return [f for f in raw if (at := done.get((f.memory_id, f.change_id))) is None or at > now]


def stale_flags(core: Core, patient_id: str, now: datetime | None) -> list[StaleFlag]:
    """The patient's "possibly stale" flags at ``now`` (newest change first): active memories
    naming a drug (or condition) whose medication (or condition) memory was superseded, each
    with the change that raised it and since when. Derived, so as-of queries see them as they
    stood then and undoing the change clears them."""
    v.patient_id(patient_id)
    now = core.now(now)
    snap = core.snapshots.snapshot(patient_id)
    return flags_at(core, snap, patient_id, now)


def _flag(
    core: Core, memory_id: str, change_id: str, patient_id: str | None
) -> tuple[Memory, StaleFlag]:
    """The memory (of ``patient_id`` when given) and its open flag for this change now (looked
    up for the one memory in the snapshot's flag index, not among every flag of the patient)."""
    memory = core.memory_of(memory_id, patient_id)
    cid = v.record_id(change_id, "change_id")
    now = core.now(None)
    snap = core.snapshots.snapshot(memory.patient_id)
    row = snap.index.get(memory.id)
    active = active_indices(snap, now)
    if row is not None and row in active[np.searchsorted(active, row) :][:1]:
        index, mine = snap.flag_index(), snap.memories[row]
        if any(f.change_id == cid for f in index.flags_of(mine, now)):
            for f in index.flags_of(mine, now, kept(core, memory.patient_id)):
                if f.change_id == cid:
                    return memory, f
    raise NotFoundError("possibly-stale flag", f"{memory.id} / {cid}")


def keep_flagged(
    core: Core, memory_id: str, change_id: str, by: str, patient_id: str | None = None
) -> StaleFlag:
    """The reviewer keeps the memory: the flag is cleared (a change of its own, audited by the
    store as KEEP_FLAGGED with the flag) and the memory's fact is confirmed now -- a reviewer
    just said it still holds, so its age counts from the keep (audited by the store as
    CONFIRM_MEMORY, naming the change)."""
    by = v.actor(by)
    memory, flag = _flag(core, memory_id, change_id, patient_id)
    changes = ChangeSet(
        flag_keeps=[FlagKeep(memory.id, memory.patient_id, flag.change_id)],
        notes={memory.id: {"flag": flag.to_public_dict()}},
    )
    at = core.clock()
    kept_memory = memory.with_confirmation(
        Confirmation(at, ConfirmationKind.FLAG_KEPT, flag.change_id)
    )
    if kept_memory is not memory and at >= memory.created_at:
        changes.update_memories.append(MemoryUpdate(kept_memory, memory.version))
    core.apply(changes, by)
    return flag


def confirm_flagged(
    core: Core,
    memory_id: str,
    change_id: str,
    by: str,
    now: datetime | None = None,
    patient_id: str | None = None,
) -> Memory:
    """The reviewer confirms the memory is stale: it is archived (audited, CONFIRM_FLAGGED;
    undone by ``restore``)."""
    by = v.actor(by)
    at = core.action_time(now)
    memory, flag = _flag(core, memory_id, change_id, patient_id)
    if memory.status is not Status.ACTIVE:
        raise StateError(f"memory {memory.id} is {memory.status.value}, not active")
    new = replace(memory, status=Status.ARCHIVED, archived_at=at)
    changes = ChangeSet(
        update_memories=[MemoryUpdate(new, memory.version)],
        actions={memory.id: AuditAction.CONFIRM_FLAGGED},
        notes={memory.id: {"flag": flag.to_public_dict()}},
    )
    core.apply(changes, by)
    return core.store.get_memory(memory.id)
