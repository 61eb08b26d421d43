"""What the injected section says about uncertainty, derived (never stored) from a patient's
memories and supersessions as of a moment: "possibly stale" flags, pending supersessions, a
lab result's history, and when a fact was last asserted.

Derived, so an as-of query sees the flags as they stood then and undoing a supersession
clears the flags it raised; only a reviewer's "keep" decision is recorded (an audit entry,
read back by the engine and passed here as ``kept``). Pure: no I/O, no clock.

The look-ups go through a :class:`FlagIndex` (the supersessions by the drug or condition a
change names, by older and by newer memory), built once per patient snapshot in time linear
in the supersessions and advanced with the engine's own writes: a line's annotations cost a
few dictionary look-ups, not a scan of every supersession or of every active memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from .context import sanitize_line
from .drugs import canonical_names
from .facts import KeyKind, mentioned
from .importance import HISTORY_TYPES
from .status import holders, status_at
from .values import Memory, StaleFlag, Status, Supersession, SupersessionState

# verdicts that change a fact's state (a duplicate says the same thing: nothing is stale)
CHANGING_VERDICTS = frozenset({"updates", "contradicts"})
#: the kinds of memory whose change flags the other memories naming the same drug or condition
FLAGGED_KINDS: tuple[str, ...] = ("medication", "condition")
PENDING_CHARS = 80  # the newer statement of a pending supersession, shortened to this

_VALUE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?%?)")

#: a snapshot's look-up of a memory by id (None: not in it)
MemoryOf = Callable[[str], "Memory | None"]


def condition_mentions(text: str, broader: bool = True) -> frozenset[str]:
    """The conditions ``text`` names (the lexicon's concept ids, each with the broader ones it
    is filed under unless ``broader`` is false: "type 2 diabetes" also names "diabetes")."""
    return mentioned(text, KeyKind.CONDITION, broader)


def analyte_mentions(text: str) -> frozenset[str]:
    """The lab analytes and vital signs ``text`` names (the lexicon's analyte ids, with the
    broader ones: "fasting glucose" also names "glucose")."""
    return mentioned(text, KeyKind.LOINC)


@lru_cache(maxsize=65_536)
def drug_names(text: str) -> frozenset[str]:
    """The drugs ``text`` names (canonical names from :mod:`memory_core.drugs`, the same
    dictionary the verdict rule uses); a bare "insulin" next to a named insulin is dropped, so
    that a glargine change does not flag lispro."""
    found = canonical_names(text)
    return found - {"insulin"} if len(found) > 1 else found


def mentions(memory: Memory, kind: str, broader: bool = True) -> frozenset[str]:
    """The conditions (``kind == "condition"``; ``broader``: with the concepts they are filed
    under) or else the drugs ``memory`` names."""
    if kind == "condition":
        return condition_mentions(memory.content, broader)
    return drug_names(memory.content)


@lru_cache(maxsize=64)
def flagged_by(memory_type: str) -> tuple[str, ...]:
    """The kinds of change that can flag a memory of this type: none for history that stays
    true after the change (:data:`~memory_core.importance.HISTORY_TYPES`: a reaction to the
    drug, an allergy, a past result); otherwise a medication or a condition change, but never
    one of its own kind (a medication is superseded, not flagged)."""
    if memory_type in HISTORY_TYPES:
        return ()
    return tuple(k for k in FLAGGED_KINDS if k != memory_type)


def active_at(
    memories: Sequence[Memory], supersessions: Iterable[Supersession], now: datetime
) -> list[Memory]:
    """The memories active at ``now`` (created by then, not archived, not held by a
    supersession in effect)."""
    held = holders(supersessions, now)
    return [
        m for m in memories if m.created_at <= now and status_at(m, held, now)[0] is Status.ACTIVE
    ]


def _newest_first(s: Supersession) -> tuple[float, str]:
    """A change's place in its list: newest ``effective_at`` first, then by id."""
    return (-s.effective_at.timestamp() if s.effective_at is not None else 0.0, s.id)


def _flag_order(f: StaleFlag) -> tuple[float, str, str]:
    return (-f.since.timestamp(), f.memory_id, f.change_id)


@dataclass(frozen=True)
class Change:
    """What a changing supersession is indexed under: the kind of its older memory and the
    drugs or conditions that memory names (none of which changes after it is written)."""

    kind: str
    names: frozenset[str]


def change_of(s: Supersession, memory_of: MemoryOf) -> Change | None:
    """The change ``s`` makes for the flags, or None when it can never raise one (a duplicate,
    an older memory that is no medication or condition, or one naming no drug or condition)."""
    if s.verdict not in CHANGING_VERDICTS:
        return None
    old = memory_of(s.old_id)
    if old is None or old.memory_type not in FLAGGED_KINDS:
        return None
    # the changed memory's own conditions, not the broader ones: a change of type 1 diabetes
    # does not flag a note on type 2 diabetes, a change of "diabetes" flags both
    names = mentions(old, old.memory_type, broader=False)
    return Change(old.memory_type, names) if names else None


def _merged(
    index: Mapping[str, tuple[Supersession, ...]],
    sups: Iterable[Supersession],
    key: Callable[[Supersession], str],
) -> dict[str, tuple[Supersession, ...]]:
    """``index`` with ``sups`` filed under ``key``: one already filed (same id) is replaced in
    its place, a new one appended. Only the keys touched get a new tuple."""
    groups: dict[str, list[Supersession]] = {}
    for s in sups:
        groups.setdefault(key(s), []).append(s)
    out = dict(index)
    for k, new in groups.items():
        fresh = {s.id: s for s in new}
        old = out.get(k, ())
        kept = tuple(fresh.pop(s.id, s) for s in old)
        out[k] = kept + tuple(fresh.values())
    return out


@dataclass(frozen=True)
class FlagIndex:
    """One patient's supersessions indexed for the flags and annotations.

    ``changes``: (kind, drug or condition) -> the changing supersessions of a memory of that
    kind naming it that have taken effect at some moment (``effective_at`` set), newest first;
    ``indexed``: supersession id -> its :class:`Change` (None: it raises no flag);
    ``by_old`` / ``by_new``: older / newer memory id -> its supersessions, in the order given.

    Immutable: :meth:`advanced` returns a new index sharing every key the new records do not
    touch, so a snapshot advanced by one write costs the keys that write touches."""

    changes: Mapping[tuple[str, str], tuple[Supersession, ...]]
    indexed: Mapping[str, Change | None]
    by_old: Mapping[str, tuple[Supersession, ...]]
    by_new: Mapping[str, tuple[Supersession, ...]]

    @classmethod
    def build(cls, supersessions: Iterable[Supersession], memory_of: MemoryOf) -> FlagIndex:
        """The index of a patient's supersessions (``memory_of`` finds their memories)."""
        return cls({}, {}, {}, {}).advanced(supersessions, memory_of)

    def advanced(self, supersessions: Iterable[Supersession], memory_of: MemoryOf) -> FlagIndex:
        """This index with ``supersessions`` added, or replacing those of the same id (a
        reviewer's decision changes a record's state and ``effective_at``)."""
        sups = list({s.id: s for s in supersessions}.values())
        if not sups:
            return self
        indexed = dict(self.indexed)
        touched: dict[tuple[str, str], list[Supersession]] = {}
        for s in sups:
            if s.id in indexed:
                change = indexed[s.id]
            else:
                change = indexed[s.id] = change_of(s, memory_of)
            if change is not None:
                for name in change.names:
                    touched.setdefault((change.kind, name), []).append(s)
        changes = dict(self.changes)
        for key, new in touched.items():
            ids = {s.id for s in new}
            merged = [s for s in changes.get(key, ()) if s.id not in ids]
            merged += [s for s in new if s.effective_at is not None]
            merged.sort(key=_newest_first)
            changes[key] = tuple(merged)
        return FlagIndex(
            changes,
            indexed,
            _merged(self.by_old, sups, lambda s: s.old_id),
            _merged(self.by_new, sups, lambda s: s.new_id),
        )

    def estimated_bytes(self) -> int:
        """An upper estimate of the index's size (the snapshot cache counts it): per record
        its entries in the three maps by id (measured with tracemalloc at 120-235 bytes), per
        change listed its slot."""
        listed = sum(len(v) for v in self.changes.values())
        return 1024 + 240 * len(self.indexed) + 16 * listed

    @property
    def has_changes(self) -> bool:
        """Whether any change can raise a flag at some moment."""
        return any(self.changes.values())

    def flags_of(
        self,
        memory: Memory,
        now: datetime,
        kept: Mapping[tuple[str, str], datetime] | None = None,
        *,
        newest: bool = False,
    ) -> list[StaleFlag]:
        """The "possibly stale" flags of ``memory`` (active at ``now``) at ``now``: one per
        change in effect then, of a medication (or condition) naming a drug (or condition)
        ``memory`` names, that took effect after ``memory`` was created -- unless ``memory``
        is history that stays true (:func:`flagged_by`), is the change's newer memory, or a
        reviewer kept it for that change by ``now``. Newest first (then change id);
        ``newest``: only the first."""
        kinds = flagged_by(memory.memory_type)
        if not kinds or not self.changes:
            return []
        best: dict[str, StaleFlag] = {}
        created = memory.created_at
        for kind in kinds:
            names = mentions(memory, kind)
            for name in names:
                for s in self.changes.get((kind, name), ()):
                    since = s.effective_at
                    if since is None or since <= created:
                        break  # newest first: every later one took effect before it too
                    if s.id in best or s.new_id == memory.id or not s.in_effect(now):
                        continue
                    if kept is not None:
                        at = kept.get((memory.id, s.id))
                        if at is not None and at <= now:
                            continue
                    change = self.indexed[s.id]
                    assert change is not None
                    best[s.id] = StaleFlag(
                        memory_id=memory.id,
                        patient_id=memory.patient_id,
                        change_id=s.id,
                        changed_id=s.old_id,
                        new_id=s.new_id,
                        subject=sorted(change.names & names)[0],
                        kind=kind,
                        since=since,
                    )
                    if newest:
                        break  # the newest of this list; other lists may hold a newer one
        out = sorted(best.values(), key=_flag_order)
        return out[:1] if newest else out

    def pending_annotation(self, memory: Memory, now: datetime, memory_of: MemoryOf) -> str | None:
        """``(pending review: <newer statement, shortened>)`` when a supersession of
        ``memory`` waits for a reviewer at ``now`` (the newest such one). A review is pending
        from the newer memory's ``created_at`` in the patient's record -- not from the moment
        it was detected -- until a reviewer decided it (:meth:`Supersession.pending_at`), so an
        as-of view of back-filled history shows the review as it stood then."""
        newest: Memory | None = None
        for s in self.by_old.get(memory.id, ()):
            if s.state is SupersessionState.AUTO:  # never waited for a reviewer
                continue
            newer = memory_of(s.new_id)
            if newer is None or not s.pending_at(now, newer.created_at):
                continue
            if newest is None or newer.created_at > newest.created_at:
                newest = newer
        if newest is None:
            return None
        return f"(pending review: {sanitize_line(newest.content, PENDING_CHARS)})"

    def lab_history(
        self, memory: Memory, now: datetime, memory_of: MemoryOf, limit: int = 3
    ) -> str | None:
        """``(was 85 in July 2026, 90 in February 2026, 89 in October 2025)``: the values of
        the same analyte that ``memory`` (a lab result) superseded, directly or along a chain
        of supersessions in effect at ``now``, newest first, at most ``limit``."""
        if memory.memory_type != "lab_result":
            return None
        analytes = analyte_mentions(memory.content)
        if not analytes:
            return None
        seen = {memory.id}
        frontier = [memory.id]
        found: list[Memory] = []
        while frontier:
            nxt: list[str] = []
            for mid in frontier:
                for s in self.by_new.get(mid, ()):
                    oid = s.old_id
                    if oid in seen or not s.in_effect(now):
                        continue
                    o = memory_of(oid)
                    if o is None or o.memory_type != "lab_result":
                        continue
                    seen.add(oid)
                    if analyte_mentions(o.content) & analytes and o.created_at <= now:
                        found.append(o)
                        nxt.append(oid)
            frontier = nxt
        shown: list[tuple[str, datetime]] = []
        for o in sorted(found, key=lambda m: m.created_at, reverse=True):
            value = lab_value(o.content)
            if value is None:
                continue
            shown.append((value, o.created_at))
            if len(shown) >= limit:
                break
        # a month named twice says nothing about which came first: then each reading's day
        months = [f"{d:%Y-%m}" for _v, d in shown]
        by_day = len(set(months)) < len(months) or any(
            f"{d:%Y-%m}" == f"{memory.created_at:%Y-%m}" for _v, d in shown
        )
        parts = [f"{v} on {d:%Y-%m-%d}" if by_day else f"{v} in {d:%B %Y}" for v, d in shown]
        return f"(was {', '.join(parts)})" if parts else None


def _lookup(memories: Iterable[Memory]) -> MemoryOf:
    return {m.id: m for m in memories}.get


def stale_flags(
    memories: Sequence[Memory],
    supersessions: Sequence[Supersession],
    now: datetime,
    kept: Mapping[tuple[str, str], datetime] | None = None,
    *,
    active: Sequence[Memory] | None = None,
    index: FlagIndex | None = None,
) -> list[StaleFlag]:
    """The "possibly stale" flags at ``now``: those of every active memory
    (:meth:`FlagIndex.flags_of`). ``kept``: (memory id, change id) -> when a reviewer kept the
    memory; the flag is cleared from then on. ``active``: the memories active at ``now``
    when the caller knows them already; ``index``: the supersessions' index, when the caller
    holds one. Ordered by ``since``, newest first, then memory id. Linear in the active
    memories and the flags (each active memory's names are looked up, never compared with
    every change)."""
    if index is None:
        index = FlagIndex.build(supersessions, _lookup(memories))
    if not index.has_changes:
        return []
    if active is None:
        active = active_at(memories, supersessions, now)
    out: list[StaleFlag] = []
    for m in active:
        if flagged_by(m.memory_type):
            out += index.flags_of(m, now, kept)
    out.sort(key=_flag_order)
    return out


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def day_label(at: datetime) -> str:
    """A day as a clinician writes it, in UTC and in any locale: "3 Mar 2026"."""
    return f"{at.day} {_MONTHS[at.month - 1]} {at.year}"


def dated_annotation(memory: Memory, now: datetime) -> str:
    """When the memory's fact was last asserted as of ``now`` (issue 35): "(last confirmed
    14 May 2026)" when a confirmation after its recording is in effect then (a restatement, a
    reviewer's keep, its record asserting it: :class:`values.Confirmation`), else "(recorded
    3 Mar 2026)" -- the moment age counts from (domain.md). Never the last access: an agent
    being told a fact does not make it true again."""
    c = memory.confirmation_at(now)
    if c is not None and c.at > memory.created_at:
        return f"(last confirmed {day_label(c.at)})"
    return f"(recorded {day_label(memory.created_at)})"


def lab_value(text: str) -> str | None:
    """The first number of a lab statement (with its ``%``), e.g. ``85`` or ``9.6%``."""
    m = _VALUE.search(text)
    return m.group(1) if m else None
