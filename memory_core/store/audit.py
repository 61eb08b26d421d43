"""The audit rows of a change set, derived by the store from the change itself (issue 25).

A caller of :meth:`MemoryStore.apply` says *what* changes and *who* acts (``ChangeSet.actor``);
the store writes the audit: the action is read from the change (a memory whose status goes
from active to archived was archived; a supersession going from pending to confirmed was
confirmed), the before-state is the stored record, the after-state the record as written, and
the moment is checked against the store's own clock and against the store's last write of
every record the change touches. So no caller can date a row before the state it changes or
in the future, name another action, leave out the before or after, or write an audit row
without the change it records (a "keep" of a possibly-stale flag is a change of its own,
:class:`~memory_core.store.base.FlagKeep`, checked against the flag's memory and supersession).

Where one change can be made by several actions (an archive by a reviewer, by cleanup or by
confirming a stale flag), ``ChangeSet.actions`` may name which of those it was; any other
action is refused. ``ChangeSet.notes`` adds context to a record's after-state (a cleanup's
strength, a purge's reason) under keys the derived state does not use.

Pure: no I/O. Both stores read what is needed (the stored records, their last audited moments,
the saved policy) and call :func:`derive`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import validation as v
from ..errors import ValidationError
from ..values import (
    IN_EFFECT,
    AuditAction,
    AuditEntry,
    Confirmation,
    Memory,
    Status,
    Supersession,
)
from ..values import SupersessionState as S

if TYPE_CHECKING:
    from .base import ChangeSet

#: the memory fields an update may carry (codec.MEMORY_UPDATABLE, by attribute name)
MEMORY_CHANGEABLE = (
    "memory_type",
    "content",
    "importance",
    "pinned",
    "tier",
    "status",
    "superseded_by",
    "archived_at",
    "source",
    "confirmations",
)
#: written once, when the memory is added: no action changes them (the clinical facts are read
#: from the content then, and read again only when the lexicon changes)
WRITTEN_ONCE = ("content", "memory_type", "source", "facts")
SUPERSESSION_CHANGEABLE = ("state", "effective_at", "ended_at", "decided_by", "decided_at")
#: the archive actions: one change (active or superseded -> archived), three reasons
ARCHIVE_ACTIONS = (AuditAction.ARCHIVE, AuditAction.CLEANUP_ARCHIVE, AuditAction.CONFIRM_FLAGGED)
MAX_NOTE_CHARS = 4000

Key = tuple[str, str]  # (entity, id): ("memory", "mem_1"), ("supersession", "sup_1")


@dataclass(frozen=True)
class Derived:
    """What the store writes beside the change: the moment and actor of every row, the rows of
    everything but the inserted memories (each of those is an ``add`` row with no before-state
    and its public state after -- :func:`add_entry`, which SQLite writes without a dict)."""

    at: datetime
    actor: str
    entries: list[AuditEntry]


def touched(changes: ChangeSet) -> dict[Key, str]:
    """The stored records the change set writes or relies on, (entity, id) -> patient: their
    last audited moments bound the change's moments from below."""
    out: dict[Key, str] = {}
    for m, _ in changes.update_memories:
        out[("memory", m.id)] = m.patient_id
    for m, _ in changes.delete_memories:
        out[("memory", m.id)] = m.patient_id
    for s, _ in changes.update_supersessions:
        out[("supersession", s.id)] = s.patient_id
    inserted = {m.id for m in changes.insert_memories}
    for s in changes.insert_supersessions:
        for mid in (s.old_id, s.new_id):
            if mid not in inserted:
                out[("memory", mid)] = s.patient_id
    for k in changes.flag_keeps:
        out[("memory", k.memory_id)] = k.patient_id
        out[("supersession", k.change_id)] = k.patient_id
    return out


def add_entry(m: Memory, at: datetime, actor: str) -> AuditEntry:
    """The audit row of an inserted memory: no before-state, its public state after (SQLite
    writes the same row straight from the memory: ``codec.memory_state_json``)."""
    return AuditEntry(
        at, actor, AuditAction.ADD.value, "memory", m.id, m.patient_id, None, m.to_public_dict()
    )


def _iso(d: datetime) -> str:
    return d.isoformat()


class _Deriver:
    def __init__(
        self,
        changes: ChangeSet,
        memories: Mapping[str, Memory],
        supersessions: Mapping[str, Supersession],
        last_written: Mapping[Key, datetime],
        clock: datetime,
    ) -> None:
        self.changes = changes
        self.memories = memories
        self.supersessions = supersessions
        self.last = last_written
        if changes.audit:
            raise ValidationError(
                "audit",
                "audit rows are written by the store from the change it records; name who "
                "acts in the change set's actor (nothing was written)",
            )
        self.actor = v.actor(changes.actor, "actor")
        at = clock if changes.at is None else v.timestamp(changes.at, "at", clock)
        self.at = at
        self.entries: list[AuditEntry] = []
        for key in list(changes.actions) + list(changes.notes):
            if not isinstance(key, str):
                raise ValidationError("actions", f"keys are record ids, got {key!r}")
        ids = {m.id for m, _ in changes.update_memories} | {
            s.id for s, _ in changes.update_supersessions
        }
        stray = set(changes.actions) - ids
        if stray:
            raise ValidationError(
                "actions", f"names {sorted(stray)[0]!r}, which this change set does not update"
            )

    # --- moments ---------------------------------------------------------------------------
    def after_last_write(self, key: Key, when: datetime, field: str, what: str) -> None:
        """``when`` not before the store's last audited write of ``key`` (less the skew)."""
        last = self.last.get(key)
        if last is not None and when < last - v.CLOCK_SKEW:
            raise ValidationError(
                field,
                f"{what} ({_iso(when)}) is before the store's last write of {key[0]} "
                f"{key[1]!r} ({_iso(last)}); an action cannot be dated before the state it "
                "changes -- nothing was written",
            )

    def moment(self, key: Key, when: datetime | None, name: str) -> None:
        """A moment an action records in a record (archived_at, decided_at, ...): between the
        store's last write of the record and the change's moment."""
        if when is None:
            return
        what = f"{key[0]} {key[1]!r}'s {name}"
        if when > self.at + v.CLOCK_SKEW:
            raise ValidationError(
                "now",
                f"{what} ({_iso(when)}) is after the change's moment ({_iso(self.at)}) -- "
                "nothing was written",
            )
        self.after_last_write(key, when, "now", what)

    def check_at(self) -> None:
        for key in touched(self.changes):
            self.after_last_write(key, self.at, "at", "the change's moment")

    # --- notes and actions -----------------------------------------------------------------
    def after_with_note(self, rid: str, after: dict[str, Any]) -> dict[str, Any]:
        note = self.changes.notes.get(rid)
        if not note:
            return after
        if not isinstance(note, Mapping):
            raise ValidationError(f"notes[{rid!r}]", "must be a mapping of context")
        clash = sorted(k for k in note if not isinstance(k, str) or k in after)
        if clash:
            raise ValidationError(
                f"notes[{rid!r}]",
                f"key {clash[0]!r} is part of the derived record; a note only adds context",
            )
        try:
            text = json.dumps(note, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"notes[{rid!r}]", f"must be JSON data: {exc}") from exc
        if len(text) > MAX_NOTE_CHARS:
            raise ValidationError(
                f"notes[{rid!r}]", f"is {len(text)} characters; the limit is {MAX_NOTE_CHARS}"
            )
        return {**after, **json.loads(text)}

    def pick(self, rid: str, allowed: Sequence[AuditAction], what: str) -> AuditAction:
        hint = self.changes.actions.get(rid)
        if hint is None:
            return allowed[0]
        for a in allowed:
            if hint == a.value:
                return a
        raise ValidationError(
            f"actions[{rid!r}]",
            f"{hint!r} does not describe this change ({what}: "
            f"{' or '.join(a.value for a in allowed)})",
        )

    def add(
        self,
        action: AuditAction,
        entity: str,
        rid: str,
        patient: str | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
    ) -> None:
        self.entries.append(
            AuditEntry(self.at, self.actor, action.value, entity, rid, patient, before, after)
        )

    # --- memories --------------------------------------------------------------------------
    def inserted(self) -> None:
        ids = set()
        for m in self.changes.insert_memories:
            ids.add(m.id)
            if m.status is Status.ARCHIVED or m.archived_at is not None:
                raise ValidationError(
                    "insert_memories", f"memory {m.id!r}: a memory is added active (archive it)"
                )
            if m.created_at > self.at + v.CLOCK_SKEW:
                raise ValidationError(
                    "insert_memories",
                    f"memory {m.id!r}: created_at {_iso(m.created_at)} is after the change's "
                    f"moment ({_iso(self.at)})",
                )
            for c in m.confirmations:
                self.confirmation_moment(m, c)
        for mid, _pid, when in self.changes.accesses:
            if mid not in ids:
                raise ValidationError(
                    "accesses",
                    f"memory {mid!r} is not added by this change set; an agent's accesses are "
                    "recorded by record_access",
                )
            if when > self.at + v.CLOCK_SKEW:
                raise ValidationError("accesses", f"an access at {_iso(when)} is in the future")

    def inserted_demotions(self) -> None:
        """A memory inserted already superseded (a batch in which a newer memory replaces an
        older one of the same batch) is audited as added, then as superseded -- and only an
        automatic supersession inserted beside it may hold it."""
        holders = {
            (s.old_id, s.new_id) for s in self.changes.insert_supersessions if s.state is S.AUTO
        }
        for m in self.changes.insert_memories:
            if m.status is not Status.SUPERSEDED:
                continue
            if (m.id, m.superseded_by) not in holders:
                raise ValidationError(
                    "insert_memories",
                    f"memory {m.id!r} is added superseded by {m.superseded_by!r}, but no "
                    "automatic supersession of it is recorded beside it",
                )
            before = replace(m, status=Status.ACTIVE, superseded_by=None).to_public_dict()
            self.add(
                AuditAction.SUPERSEDE, "memory", m.id, m.patient_id, before, m.to_public_dict()
            )

    def memory_update(self, new: Memory, expected: int) -> None:
        old = self.memories[new.id]
        key = ("memory", new.id)
        if new.patient_id != old.patient_id:
            raise ValidationError(
                "update_memories",
                f"memory {new.id!r} belongs to patient {old.patient_id!r}, not {new.patient_id!r}",
            )
        changed = [f for f in MEMORY_CHANGEABLE if getattr(old, f) != getattr(new, f)]
        if new.facts is not None and old.facts is not None and new.facts != old.facts:
            changed.append("facts")  # read from the content when it is written, like it
        once = [f for f in changed if f in WRITTEN_ONCE]
        if once:
            raise ValidationError(
                "update_memories",
                f"memory {new.id!r}: {once[0]} is written once, when the memory is added; no "
                "action changes it",
            )
        if "confirmations" in changed:
            changed.remove("confirmations")
            if not changed:  # a confirmation only
                self.pick(new.id, [AuditAction.CONFIRM_MEMORY], "a confirmation")
            old = self.confirmations(old, new)
            if not changed:
                return
        action = self.memory_action(old, new, set(changed))
        if "archived_at" in changed:
            self.moment(key, new.archived_at, "archived_at")
        written = replace(
            old, **{f: getattr(new, f) for f in MEMORY_CHANGEABLE}, version=expected + 1
        )
        after = self.after_with_note(new.id, written.to_public_dict())
        self.add(action, "memory", new.id, old.patient_id, old.to_public_dict(), after)

    def confirmation_moment(self, m: Memory, c: Confirmation) -> None:
        """A confirmation takes effect between the memory's creation and the change's moment."""
        if c.at > self.at + v.CLOCK_SKEW:
            raise ValidationError(
                "confirmed_at",
                f"memory {m.id!r}'s confirmation at {_iso(c.at)} is after the change's moment "
                f"({_iso(self.at)}) -- nothing was written",
            )
        if c.at < m.created_at:
            raise ValidationError(
                "confirmed_at",
                f"memory {m.id!r}'s confirmation at {_iso(c.at)} is before it was created "
                f"({_iso(m.created_at)}) -- nothing was written",
            )

    def confirmations(self, old: Memory, new: Memory) -> Memory:
        """The confirmations an update adds (none is ever taken away): each one audited as
        ``confirm_memory`` (before: the memory without it; after: with it, and the confirmation
        itself). Returns ``old`` with them, from which any other change of the update is
        derived."""
        gone = [c for c in old.confirmations if c not in new.confirmations]
        if gone:
            raise ValidationError(
                "update_memories",
                f"memory {new.id!r}: a confirmation is never taken away (at {_iso(gone[0].at)})",
            )
        for c in new.confirmations:
            if c in old.confirmations:
                continue
            self.confirmation_moment(old, c)
            confirmed = old.with_confirmation(c)
            after = {**confirmed.to_public_dict(), "confirmation": c.to_public_dict()}
            self.add(
                AuditAction.CONFIRM_MEMORY,
                "memory",
                new.id,
                old.patient_id,
                old.to_public_dict(),
                after,
            )
            old = confirmed
        return old

    def memory_action(self, old: Memory, new: Memory, changed: set[str]) -> AuditAction:
        rid = new.id
        if not changed:
            raise ValidationError("update_memories", f"memory {rid!r}: nothing changes")
        if changed == {"pinned"}:
            return self.pick(rid, [AuditAction.PIN if new.pinned else AuditAction.UNPIN], "pin")
        if changed == {"importance"}:
            return self.pick(rid, [AuditAction.EDIT_IMPORTANCE], "a new base importance")
        if changed == {"tier"} and new.tier.value == "long_term":
            return self.pick(rid, [AuditAction.PROMOTE], "promotion")
        if "status" in changed or changed == {"superseded_by"}:
            o, n = old.status, new.status
            if n is Status.ARCHIVED and o is not Status.ARCHIVED:
                if changed <= {"status", "archived_at"} and new.archived_at is not None:
                    return self.pick(rid, ARCHIVE_ACTIONS, "an archive")
            elif o is Status.ARCHIVED and n is not Status.ARCHIVED:
                if new.archived_at is None and changed <= {
                    "status",
                    "archived_at",
                    "superseded_by",
                }:
                    return self.pick(rid, [AuditAction.RESTORE], "a restore")
            elif o is Status.ACTIVE and n is Status.SUPERSEDED:
                if changed <= {"status", "superseded_by"} and new.superseded_by:
                    return self.pick(rid, [AuditAction.SUPERSEDE], "a supersession")
            elif o is Status.SUPERSEDED and n in (Status.ACTIVE, Status.SUPERSEDED):
                freed = n is Status.ACTIVE and new.superseded_by is None
                held = n is Status.SUPERSEDED and bool(new.superseded_by)
                if changed <= {"status", "superseded_by"} and (freed or held):
                    return self.pick(rid, [AuditAction.UNSUPERSEDE], "a supersession ended")
        raise ValidationError(
            "update_memories",
            f"memory {rid!r}: no one action changes {', '.join(sorted(changed))} this way "
            f"({old.status.value} -> {new.status.value}); one entry is one action",
        )

    def memory_delete(self, m: Memory, expected: int) -> None:
        old = self.memories[m.id]
        if old.patient_id != m.patient_id:
            raise ValidationError(
                "delete_memories", f"memory {m.id!r} belongs to patient {old.patient_id!r}"
            )
        del expected  # checked by the store with the version
        self.add(AuditAction.PURGE, "memory", m.id, old.patient_id, old.to_public_dict(), None)

    # --- supersessions ---------------------------------------------------------------------
    def supersession_insert(self, s: Supersession) -> None:
        if s.state not in (S.PENDING, S.AUTO):
            raise ValidationError(
                "insert_supersessions",
                f"supersession {s.id!r} is {s.state.value}; one is recorded pending or auto, "
                "and a reviewer's decision is a change of its own",
            )
        if s.state is S.AUTO and s.decided_by != self.actor:
            raise ValidationError(
                "insert_supersessions",
                f"supersession {s.id!r} is decided by {s.decided_by!r}, not by the change set's "
                f"actor {self.actor!r}",
            )
        for name in ("detected_at", "decided_at"):
            when = getattr(s, name)
            if when is not None and when > self.at + v.CLOCK_SKEW:
                raise ValidationError(
                    "now", f"supersession {s.id!r}'s {name} ({_iso(when)}) is in the future"
                )
            for mid in (s.old_id, s.new_id):
                if when is not None:
                    self.after_last_write(
                        ("memory", mid), when, "now", f"supersession {s.id!r}'s {name}"
                    )
        self.add(
            AuditAction.DETECT_SUPERSESSION,
            "supersession",
            s.id,
            s.patient_id,
            None,
            s.to_public_dict(),
        )

    def supersession_update(self, new: Supersession, expected: int) -> None:
        old = self.supersessions[new.id]
        key = ("supersession", new.id)
        if new.patient_id != old.patient_id:
            raise ValidationError(
                "update_supersessions",
                f"supersession {new.id!r} belongs to patient {old.patient_id!r}",
            )
        o, n = old.state, new.state
        if o is S.PENDING and n is S.CONFIRMED and new.effective_at and new.decided_at:
            action = AuditAction.CONFIRM_SUPERSESSION
        elif o is S.PENDING and n is S.REJECTED and new.decided_at:
            action = AuditAction.REJECT_SUPERSESSION
        elif (
            (o in IN_EFFECT and n is S.UNDONE) or (o is S.CONFIRMED and n is S.PENDING)
        ) and new.ended_at:
            action = AuditAction.UNDO_SUPERSESSION
        elif o is S.REJECTED and n is S.PENDING and new.decided_at and new.ended_at == old.ended_at:
            action = AuditAction.UNDO_SUPERSESSION  # "keep both" undone: the review reopened
        else:
            raise ValidationError(
                "update_supersessions",
                f"supersession {new.id!r}: no action takes it from {o.value} to {n.value} this "
                "way (confirm or reject a pending one, undo one in effect or a rejection)",
            )
        self.pick(new.id, [action], "a decision")
        if new.decided_by != self.actor:
            raise ValidationError(
                "update_supersessions",
                f"supersession {new.id!r} is decided by {new.decided_by!r}, not by the change "
                f"set's actor {self.actor!r}",
            )
        for name in ("effective_at", "ended_at", "decided_at"):
            if getattr(new, name) != getattr(old, name):
                self.moment(key, getattr(new, name), name)
        written = replace(
            old, **{f: getattr(new, f) for f in SUPERSESSION_CHANGEABLE}, version=expected + 1
        )
        after = self.after_with_note(new.id, written.to_public_dict())
        self.add(action, "supersession", new.id, old.patient_id, old.to_public_dict(), after)

    # --- flag decisions, sessions, policy ----------------------------------------------------
    def flag_keep(self, memory_id: str, patient_id: str, change_id: str) -> None:
        memory = self.memories.get(memory_id)
        change = self.supersessions.get(change_id)
        if memory is None or memory.patient_id != patient_id:
            raise ValidationError(
                "flag_keeps", f"memory {memory_id!r} is not a memory of patient {patient_id!r}"
            )
        if change is None or change.patient_id != patient_id or change.state not in IN_EFFECT:
            raise ValidationError(
                "flag_keeps",
                f"{change_id!r} is not a supersession of patient {patient_id!r} in effect; only "
                "such a change raises a possibly-stale flag",
            )
        before = {"change_id": change_id, "kept": False}
        after = self.after_with_note(memory_id, {"change_id": change_id, "kept": True})
        self.add(AuditAction.KEEP_FLAGGED, "memory", memory_id, patient_id, before, after)

    def sessions(self) -> None:
        counts: dict[str, int] = {}
        for pid, when in self.changes.sessions:
            if when > self.at + v.CLOCK_SKEW:
                raise ValidationError("sessions", f"a session at {_iso(when)} is in the future")
            counts[pid] = counts.get(pid, 0) + 1
        for pid, n in counts.items():
            self.add(AuditAction.IMPORT_SESSIONS, "store", pid, pid, None, {"sessions": n})

    def policy(self, stored: Callable[[], dict[str, Any] | None]) -> None:
        body = self.changes.policy
        if body is None:
            return
        from ..policy import EnginePolicy  # the defaults stand before any saved policy

        before = stored() or EnginePolicy().to_dict()
        try:
            after = json.loads(json.dumps(body, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise ValidationError("policy", f"must be JSON data: {exc}") from exc
        self.add(AuditAction.POLICY_CHANGE, "policy", "engine", None, before, after)


def derive(
    changes: ChangeSet,
    memories: Mapping[str, Memory],
    supersessions: Mapping[str, Supersession],
    last_written: Mapping[Key, datetime],
    clock: datetime,
    stored_policy: Callable[[], dict[str, Any] | None] = lambda: None,
) -> Derived:
    """Check ``changes`` and derive its audit rows (ValidationError, nothing written, when it
    cannot be one truthful set of actions). ``memories`` / ``supersessions``: the stored
    records it updates, deletes or keeps a flag on, by id, as stored (the caller has checked
    their versions); ``last_written``: the latest audited moment of each record of
    :func:`touched`; ``clock``: the store's clock now (a change dated after it, beyond
    :data:`~memory_core.validation.CLOCK_SKEW`, is refused); ``stored_policy``: the saved
    policy (read only for a policy change)."""
    d = _Deriver(changes, memories, supersessions, last_written, clock)
    d.check_at()
    d.inserted()
    for s in changes.insert_supersessions:
        d.supersession_insert(s)
    d.inserted_demotions()
    for s, expected in changes.update_supersessions:
        d.supersession_update(s, expected)
    for m, expected in changes.update_memories:
        d.memory_update(m, expected)
    for m, expected in changes.delete_memories:
        d.memory_delete(m, expected)
    for k in changes.flag_keeps:
        d.flag_keep(k.memory_id, k.patient_id, k.change_id)
    d.sessions()
    d.policy(stored_policy)
    return Derived(d.at, d.actor, d.entries)


def promotion_entries(
    patient_id: str, memory_ids: Sequence[str], actor: str, at: datetime, clock: datetime
) -> list[AuditEntry]:
    """The audit rows of promotions (the tier before and after), the moment checked against
    the store's clock."""
    actor = v.actor(actor, "actor")
    at = v.timestamp(at, "at", clock)
    return [
        AuditEntry(
            at,
            actor,
            AuditAction.PROMOTE.value,
            "memory",
            mid,
            patient_id,
            {"tier": "short_term"},
            {"tier": "long_term"},
        )
        for mid in memory_ids
    ]
