"""Lifecycle: a reviewer's pin, unpin, importance edit, archive and restore; cleanup (archive,
never delete), purge (the only deletion) and imported session moments. Every change audited."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from .. import validation as v
from ..errors import ConflictError, StateError, StoreBusyError, ValidationError
from ..status import holders, status_at
from ..store.base import ChangeSet, MemoryDelete, MemoryUpdate, SessionMark, SupersessionUpdate
from ..values import IN_EFFECT, AuditAction, CleanupResult, Memory, Status, SupersessionState
from .asof import view
from .core import Core


def update(
    core: Core,
    memory_id: str,
    by: str,
    action: AuditAction,
    change: Callable[[Memory], Memory],
    expected_version: int | None,
    patient_id: str | None = None,
) -> Memory:
    """One memory changed by ``change`` (nothing is written when it is unchanged); with
    ``patient_id``, only a memory of that patient (another's id: NotFoundError)."""
    by = v.actor(by)
    if expected_version is not None:
        expected_version = v.positive_int(expected_version, "expected_version")
    old = core.memory_of(memory_id, patient_id)
    version = old.version if expected_version is None else expected_version
    new = change(old)
    if new == old and new.pinned == old.pinned:
        return old
    changes = ChangeSet(update_memories=[MemoryUpdate(new, version)], actions={old.id: action})
    core.apply(changes, by)
    return core.store.get_memory(old.id)


def set_pinned(
    core: Core,
    memory_id: str,
    pinned: bool,
    by: str,
    expected_version: int | None,
    patient_id: str | None = None,
) -> Memory:
    action = AuditAction.PIN if pinned else AuditAction.UNPIN
    return update(
        core,
        memory_id,
        by,
        action,
        lambda m: replace(m, pinned=pinned),
        expected_version,
        patient_id,
    )


def set_importance(
    core: Core,
    memory_id: str,
    importance: float,
    by: str,
    expected_version: int | None,
    patient_id: str | None = None,
) -> Memory:
    imp = v.importance(importance)
    if imp is None:
        raise ValidationError("importance", "must be a number from 1 to 10")
    return update(
        core,
        memory_id,
        by,
        AuditAction.EDIT_IMPORTANCE,
        lambda m: replace(m, importance=imp),
        expected_version,
        patient_id,
    )


def archive(
    core: Core,
    memory_id: str,
    by: str,
    now: datetime | None,
    expected_version: int | None,
    patient_id: str | None = None,
) -> Memory:
    at = core.action_time(now)

    def change(m: Memory) -> Memory:
        if m.status is Status.ARCHIVED:
            raise StateError(f"memory {m.id} is already archived")
        return replace(m, status=Status.ARCHIVED, archived_at=at)

    return update(core, memory_id, by, AuditAction.ARCHIVE, change, expected_version, patient_id)


def restore(
    core: Core,
    memory_id: str,
    by: str,
    expected_version: int | None,
    patient_id: str | None = None,
) -> Memory:
    def change(m: Memory) -> Memory:
        if m.status is not Status.ARCHIVED:
            raise StateError(f"memory {m.id} is {m.status.value}, not archived")
        unarchived = replace(m, status=Status.ACTIVE, archived_at=None)
        held = holders(core.store.list_supersessions(m.patient_id))
        status, superseded_by = status_at(unarchived, held)
        return replace(unarchived, status=status, superseded_by=superseded_by)

    return update(core, memory_id, by, AuditAction.RESTORE, change, expected_version, patient_id)


def _patients(core: Core, patient_id: str | None) -> list[str]:
    return [v.patient_id(patient_id)] if patient_id else core.store.list_patients()


#: memories archived per change set of a cleanup (one patient's are never split over two)
CLEANUP_BATCH = 1_000
#: attempts per patient, each on a fresh view, when a concurrent write moved its memories
CLEANUP_ATTEMPTS = 4
#: a change refused because another writer got there first, or the store was busy: the same
#: patient's cleanup, computed again, may well pass
_RACED = (ConflictError, StoreBusyError)


def _weak(
    core: Core, pid: str, now: datetime, threshold: float
) -> tuple[list[Memory], dict[str, float], ChangeSet]:
    """One patient's active memories below ``threshold`` at ``now`` (never pinned, never a
    review-gated type), their strengths, and the change set archiving them (each named a
    cleanup archive, with its strength and the threshold: the store audits it)."""
    pol = core.policy
    seen = view(core, pid, now, None)
    archived: list[Memory] = []
    strengths: dict[str, float] = {}
    changes = ChangeSet()
    for i, m in enumerate(seen.memories):
        if seen.status[i] is not Status.ACTIVE or m.status is not Status.ACTIVE:
            continue
        if m.pinned or m.memory_type in pol.review_gated_types:
            continue
        s = float(seen.strength[i])
        if s < threshold:
            strengths[m.id] = s
            done = replace(m, status=Status.ARCHIVED, archived_at=now)
            archived.append(done)
            changes.update_memories.append(MemoryUpdate(done, m.version))
            changes.actions[m.id] = AuditAction.CLEANUP_ARCHIVE
            changes.notes[m.id] = {"strength": s, "threshold": threshold}
    return archived, strengths, changes


def cleanup(
    core: Core,
    now: datetime | None,
    threshold: float | None,
    dry_run: bool,
    patient_id: str | None,
    by: str,
) -> CleanupResult:
    """Archive the weak memories of one patient or of every patient, in change sets of about
    :data:`CLEANUP_BATCH` memories, whole patients each (each all-or-nothing). A change set a
    concurrent write refused is redone patient by patient, each on a fresh view, up to
    :data:`CLEANUP_ATTEMPTS` times; a patient that still cannot be written is left as it was
    and named in ``skipped`` (the others are archived). Without a given ``now``, a patient
    redone after a concurrent write is archived at the clock's moment then (never before the
    write that moved it)."""
    by = v.actor(by)
    dry_run = v.boolean(dry_run, "dry_run")
    clocked = now is None
    now = core.now(now) if dry_run else core.action_time(now)  # a dry run writes nothing
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise ValidationError("threshold", f"must be a strength between 0 and 1, got {threshold!r}")
    thr = core.policy.decay.cleanup_threshold if threshold is None else float(threshold)
    if not (0.0 <= thr <= 1.0):
        raise ValidationError("threshold", f"must be a strength between 0 and 1, got {thr}")
    archived: list[Memory] = []
    strengths: dict[str, float] = {}
    skipped: list[str] = []
    batch: list[tuple[str, list[Memory], dict[str, float], ChangeSet]] = []

    def one(pid: str) -> None:
        for attempt in range(CLEANUP_ATTEMPTS):
            at = core.clock() if clocked else now
            mems, found, changes = _weak(core, pid, at, thr)
            if not mems:
                return
            try:
                core.apply(changes, by)
            except _RACED:
                time.sleep(random.uniform(0.0, 0.01 * 2**attempt))
                continue
            archived.extend(mems)
            strengths.update(found)
            return
        skipped.append(pid)

    def flush() -> None:
        if not batch:
            return
        changes = ChangeSet()
        for _pid, _mems, _found, part in batch:
            changes.update_memories += part.update_memories
            changes.actions.update(part.actions)
            changes.notes.update(part.notes)
        try:
            core.apply(changes, by)
        except _RACED:  # someone wrote to one of these patients meanwhile: one by one
            for pid, *_ in batch:
                one(pid)
        else:
            for _pid, mems, found, _part in batch:
                archived.extend(mems)
                strengths.update(found)
        batch.clear()

    pending = 0
    for pid in _patients(core, patient_id):
        mems, found, changes = _weak(core, pid, now, thr)
        if not mems:
            continue
        if dry_run:
            archived.extend(mems)
            strengths.update(found)
            continue
        batch.append((pid, mems, found, changes))
        pending += len(mems)
        if pending >= CLEANUP_BATCH:
            flush()
            pending = 0
    flush()
    return CleanupResult(tuple(archived), strengths, dry_run, thr, tuple(skipped))


def purge(
    core: Core,
    older_than_days: float,
    now: datetime | None,
    dry_run: bool,
    patient_id: str | None,
    by: str,
) -> list[Memory]:
    """Delete archived memories archived at least ``older_than_days`` ago (not pinned, not
    review-gated), each audited with its content; the store tombstones their ids (never
    reused). A supersession the purged memory takes part in ends with it: one in effect in
    which it is the newer memory is undone (the older memory is active again unless another
    supersession still holds it, audited), and a pending one naming it is rejected -- so no
    memory is left superseded by a deleted id."""
    by = v.actor(by)
    dry_run = v.boolean(dry_run, "dry_run")
    now = core.now(now) if dry_run else core.action_time(now)  # a dry run writes nothing
    if (
        isinstance(older_than_days, bool)
        or not isinstance(older_than_days, int | float)
        or not 0 <= older_than_days < 1e7
    ):
        raise ValidationError(
            "older_than_days", f"must be a number of days >= 0, got {older_than_days!r}"
        )
    cutoff = now.timestamp() - float(older_than_days) * 86_400.0
    patients = _patients(core, patient_id)
    doomed: list[Memory] = []
    changes = ChangeSet()
    for pid in patients:
        mems = core.store.list_memories(pid)
        gone: dict[str, Memory] = {}
        for m in mems:
            if m.status is not Status.ARCHIVED or m.archived_at is None:
                continue
            if m.archived_at.timestamp() > cutoff:
                continue
            if m.pinned or m.memory_type in core.policy.review_gated_types:
                continue
            gone[m.id] = m
            doomed.append(m)
            changes.delete_memories.append(MemoryDelete(m, m.version))
        if gone:
            _end_supersessions(core, pid, mems, gone, by, now, changes)
    if not dry_run and doomed:
        core.apply(changes, by)
    return doomed


def _end_supersessions(
    core: Core,
    patient_id: str,
    mems: Sequence[Memory],
    gone: dict[str, Memory],
    by: str,
    now: datetime,
    changes: ChangeSet,
) -> None:
    """The purge rule for supersessions (see :func:`purge`), added to ``changes``."""
    sups = core.store.list_supersessions(patient_id)
    ended: set[str] = set()
    for s in sups:
        ended_at: datetime | None
        if s.new_id in gone and s.state in IN_EFFECT:
            state, ended_at = SupersessionState.UNDONE, now
        elif (s.new_id in gone or s.old_id in gone) and s.state is SupersessionState.PENDING:
            state, ended_at = SupersessionState.REJECTED, s.ended_at
        else:
            continue
        changed = replace(s, state=state, decided_by=by, decided_at=now, ended_at=ended_at)
        action = (
            AuditAction.UNDO_SUPERSESSION
            if state is SupersessionState.UNDONE
            else AuditAction.REJECT_SUPERSESSION
        )
        changes.update_supersessions.append(SupersessionUpdate(changed, s.version))
        changes.actions[s.id] = action
        changes.notes[s.id] = {"reason": "purge"}
        ended.add(s.id)
    if not ended:
        return
    held = holders([s for s in sups if s.id not in ended])
    for m in mems:
        if m.id in gone or m.status is not Status.SUPERSEDED:
            continue
        status, superseded_by = status_at(m, held)
        if status is m.status and superseded_by == m.superseded_by:
            continue
        freed = replace(m, status=status, superseded_by=superseded_by)
        changes.update_memories.append(MemoryUpdate(freed, m.version))
        changes.actions[m.id] = AuditAction.UNSUPERSEDE
        changes.notes[m.id] = {"reason": "purge"}


def record_sessions(core: Core, patient_id: str, times: Sequence[datetime], by: str) -> None:
    v.patient_id(patient_id)
    now = core.clock()
    ts = v.timestamps(times, "times", now)
    if not ts:
        return
    core.apply(ChangeSet(sessions=[SessionMark(patient_id, t) for t in ts]), v.actor(by))
