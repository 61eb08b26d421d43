"""The flags' index (issue 25, finding 6): the possibly-stale flags, pending-review and
lab-history annotations looked up in a :class:`flags.FlagIndex` equal what the plain rules of
domain.md give (written here as the scan every change against every memory that the index
replaced), whatever the records, the moment and the reviewers' keep decisions; an index advanced
record by record equals one built afresh; and the engine advances its snapshot's index with its
own writes instead of building it again (the section path after one add was 82 s at 50,000
memories: every write rebuilt the flags by a scan of every change against every memory)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memory_core as mc
from memory_core import flags
from memory_core.context import sanitize_line
from memory_core.embedding import HashingEmbedder
from memory_core.importance import HISTORY_TYPES
from memory_core.values import Memory, StaleFlag, Status, Supersession, SupersessionState
from tests.conftest import NOW, Clock

T0 = NOW - timedelta(days=100)
CONTENTS = {
    "medication": (
        "Patient takes metformin 500mg",
        "Patient takes metformin 1000mg",
        "Patient takes lisinopril 10mg",
        "Patient switched from lisinopril to losartan",
    ),
    "condition": ("Patient's diabetes is well controlled", "Patient has hypertension"),
    "care_plan": ("Take metformin with meals", "Review lisinopril and hypertension"),
    "observation": ("Home glucose lower on metformin", "Patient walks daily"),
    "adverse_reaction": ("Cough on lisinopril", "Loose stools on metformin"),
    "allergy": ("Hives with metformin",),
    "lab_result": ("HbA1c was 7.1% on metformin", "HbA1c was 6.8%", "eGFR was 60"),
}
TYPES = tuple(CONTENTS)
STATES = tuple(SupersessionState)


def _memory(i: int, mtype: str, content: str, day: int) -> Memory:
    at = T0 + timedelta(days=day)
    return Memory(
        id=f"m{i:02d}",
        patient_id="P",
        memory_type=mtype,
        content=content,
        importance=5.0,
        created_at=at,
        last_accessed=at,
        embedding=np.ones(3, dtype=np.float32),
        embedding_model="x",
    )


# --- the plain rules (the scans the index replaced) --------------------------------------------
def plain_flags(
    memories: Sequence[Memory],
    sups: Sequence[Supersession],
    now: datetime,
    kept: Mapping[tuple[str, str], datetime],
) -> list[StaleFlag]:
    by_id = {m.id: m for m in memories}
    active = flags.active_at(memories, sups, now)
    out = []
    for s in sups:
        old = by_id.get(s.old_id)
        if s.verdict not in flags.CHANGING_VERDICTS or not s.in_effect(now) or old is None:
            continue
        if old.memory_type not in ("medication", "condition") or s.effective_at is None:
            continue
        kind = old.memory_type
        names = flags.mentions(old, kind)
        for m in active:
            if m.memory_type in HISTORY_TYPES or m.memory_type == kind or m.id == s.new_id:
                continue
            if m.created_at >= s.effective_at:
                continue
            common = names & flags.mentions(m, kind)
            at = kept.get((m.id, s.id))
            if not common or (at is not None and at <= now):
                continue
            subject = sorted(common)[0]
            out.append(StaleFlag(m.id, "P", s.id, old.id, s.new_id, subject, kind, s.effective_at))
    out.sort(key=lambda f: (-f.since.timestamp(), f.memory_id, f.change_id))
    return out


def plain_pending(
    m: Memory, sups: Iterable[Supersession], by_id: Mapping[str, Memory], now: datetime
) -> str | None:
    # a review waits from its newer memory's created_at (whenever it was detected) until a
    # reviewer decided it -- confirmed: until it took effect; rejected: until the rejection;
    # undone after a confirmation: until it had taken effect -- and again while reopened;
    # an automatic one never waits (domain.md, "When a supersession takes effect")
    decided_at = {
        SupersessionState.PENDING: lambda s: None,
        SupersessionState.CONFIRMED: lambda s: s.effective_at,
        SupersessionState.REJECTED: lambda s: s.decided_at or T0,
        SupersessionState.UNDONE: lambda s: s.effective_at or T0,
    }
    newest = None
    for s in sups:
        if s.old_id != m.id or s.state is SupersessionState.AUTO or s.in_effect(now):
            continue
        newer = by_id.get(s.new_id)
        if newer is None or newer.created_at > now:
            continue
        decided = decided_at[s.state](s)
        if decided is not None and decided <= now:
            continue
        if newest is None or newer.created_at > newest.created_at:
            newest = newer
    if newest is None:
        return None
    return f"(pending review: {sanitize_line(newest.content, flags.PENDING_CHARS)})"


def plain_history(
    m: Memory, sups: Sequence[Supersession], by_id: Mapping[str, Memory], now: datetime
) -> str | None:
    if m.memory_type != "lab_result":
        return None
    analytes = flags.analyte_mentions(m.content)
    if not analytes:
        return None
    seen, frontier, found = {m.id}, [m.id], []
    while frontier:
        nxt = []
        for mid in frontier:
            for s in sups:
                o = by_id.get(s.old_id)
                if s.new_id != mid or not s.in_effect(now) or o is None or o.id in seen:
                    continue
                if o.memory_type != "lab_result":
                    continue
                seen.add(o.id)
                if flags.analyte_mentions(o.content) & analytes and o.created_at <= now:
                    found.append(o)
                    nxt.append(o.id)
        frontier = nxt
    readings = []
    for o in sorted(found, key=lambda x: x.created_at, reverse=True):
        value = flags.lab_value(o.content)
        if value is not None:
            readings.append((value, o.created_at))
        if len(readings) >= 3:
            break
    # months name the readings unless a month would be named twice, or is the line's own
    # month (81e4be1): then each reading's day
    months = [(d.year, d.month) for _, d in readings]
    own = (m.created_at.year, m.created_at.month)
    if len(set(months)) < len(months) or own in months:
        parts = [f"{v} on {d.strftime('%Y-%m-%d')}" for v, d in readings]
    else:
        parts = [f"{v} in {d.strftime('%B %Y')}" for v, d in readings]
    return f"(was {', '.join(parts)})" if parts else None


# --- random patients ---------------------------------------------------------------------------
@st.composite
def patients(draw: st.DrawFn) -> tuple[list[Memory], list[Supersession], list[Supersession]]:
    """Memories, supersessions, and later versions of some of them (a reviewer's decisions)."""
    n = draw(st.integers(2, 12))
    memories = []
    for i in range(n):
        mtype = draw(st.sampled_from(TYPES))
        content = draw(st.sampled_from(CONTENTS[mtype]))
        memories.append(_memory(i, mtype, content, draw(st.integers(0, 90))))
    sups = []
    for k in range(draw(st.integers(0, 10))):
        a, b = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        older, newer = sorted((memories[a], memories[b]), key=lambda m: (m.created_at, m.id))
        state = draw(st.sampled_from(STATES))
        eff = newer.created_at + timedelta(days=draw(st.integers(0, 5)))
        effective = None if state is SupersessionState.PENDING and draw(st.booleans()) else eff
        ended = eff + timedelta(days=draw(st.integers(1, 20))) if draw(st.booleans()) else None
        sups.append(
            Supersession(
                id=f"s{k:02d}",
                patient_id="P",
                old_id=older.id,
                new_id=newer.id,
                similarity=0.9,
                method="test",
                verdict=draw(st.sampled_from(("updates", "contradicts", "duplicate"))),
                state=state,
                detected_at=newer.created_at,
                effective_at=effective,
                ended_at=ended,
            )
        )
    later = []
    for s in draw(st.lists(st.sampled_from(sups), unique_by=lambda s: s.id)) if sups else []:
        state = draw(st.sampled_from(STATES))
        when = s.detected_at + timedelta(days=draw(st.integers(0, 10)))
        later.append(
            Supersession(
                **{
                    **s.__dict__,
                    "state": state,
                    "effective_at": s.effective_at or when,
                    "ended_at": when if state is SupersessionState.UNDONE else s.ended_at,
                    "version": s.version + 1,
                }
            )
        )
    return memories, sups, later


def _replaced(sups: Sequence[Supersession], later: Sequence[Supersession]) -> list[Supersession]:
    newer = {s.id: s for s in later}
    return [newer.get(s.id, s) for s in sups]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    patients(),
    st.integers(0, 120),
    st.dictionaries(st.tuples(st.integers(0, 11), st.integers(0, 9)), st.integers(0, 120)),
)
def test_the_index_gives_what_the_plain_rules_give(
    patient: tuple[list[Memory], list[Supersession], list[Supersession]],
    day: int,
    keeps: dict[tuple[int, int], int],
) -> None:
    memories, first, later = patient
    sups = _replaced(first, later)
    now = T0 + timedelta(days=day)
    kept = {(f"m{a:02d}", f"s{b:02d}"): T0 + timedelta(days=d) for (a, b), d in keeps.items()}
    by_id = {m.id: m for m in memories}
    built = flags.FlagIndex.build(sups, by_id.get)
    # the same records, written one by one and then decided, as a snapshot is advanced
    advanced = flags.FlagIndex.build([], by_id.get)
    for s in first:
        advanced = advanced.advanced([s], by_id.get)
    advanced = advanced.advanced(later, by_id.get)
    want = plain_flags(memories, sups, now, kept)
    for index in (built, advanced):
        assert flags.stale_flags(memories, sups, now, kept, index=index) == want
    assert flags.stale_flags(memories, sups, now, kept) == want
    active = flags.active_at(memories, sups, now)
    for m in active:
        mine = [f for f in want if f.memory_id == m.id]
        for index in (built, advanced):
            assert index.flags_of(m, now, kept) == mine
            assert index.flags_of(m, now, kept, newest=True) == mine[:1]
    for m in memories:
        for index in (built, advanced):
            assert index.pending_annotation(m, now, by_id.get) == plain_pending(m, sups, by_id, now)
            assert index.lab_history(m, now, by_id.get) == plain_history(m, sups, by_id, now)


# --- the engine keeps its index with the snapshot ------------------------------------------------
class SameDrug:
    method = "test"

    def adjudicate(self, older: Memory, newer: Memory, similarity: float) -> str:
        a = flags.mentions(older, older.memory_type)
        return "updates" if a & flags.mentions(newer, newer.memory_type) else "compatible"


def test_a_write_advances_the_snapshots_index_instead_of_building_it(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    pol = mc.EnginePolicy(
        contradiction=mc.ContradictionPolicy(type_thresholds={"medication": -1.0})
    )
    eng = mc.open_engine(
        "sqlite:///:memory:", HashingEmbedder(), pol, adjudicator=SameDrug(), clock=clock
    )
    t0 = NOW - timedelta(days=50)
    eng.add_memory("P", "Patient takes metformin 500mg", "medication", created_at=t0)
    plan = eng.add_memory(
        "P", "Patient takes metformin with meals", "care_plan", created_at=t0
    ).memory
    second = t0 + timedelta(days=1)
    eng.add_memory("P", "Patient takes metformin 1000mg", "medication", created_at=second)
    builds: list[int] = []
    real = flags.FlagIndex.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type[flags.FlagIndex], *args: object) -> flags.FlagIndex:
        builds.append(1)
        return real(cls, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(flags.FlagIndex, "build", classmethod(counting))
    first = eng.build_context("P", "metformin", record_access=False)
    assert len(builds) == 1
    assert any("may be outdated: metformin" in a for i in first.items for a in i.annotations)
    # another change: the flag moves to it, and the index follows the write
    (newest,) = eng.add_memory("P", "Patient takes metformin 1500mg", "medication").supersessions
    again = eng.build_context("P", "metformin", record_access=False)
    assert len(builds) == 1
    (line,) = [i for i in again.items if i.scored.memory.id == plan.id]
    assert line.annotations == (
        f"(may be outdated: metformin changed on {NOW.date().isoformat()})",
    )
    # a reviewer's decision is a write too: undoing the newest change moves the flag back
    eng.undo_supersession(newest.id, "dr-a")
    undone = eng.build_context("P", "metformin", record_access=False)
    assert len(builds) == 1
    (line,) = [i for i in undone.items if i.scored.memory.id == plan.id]
    day = second.date().isoformat()
    assert line.annotations == (f"(may be outdated: metformin changed on {day})",)
    assert eng.get(plan.id).status is Status.ACTIVE
    eng.store.close()


def test_a_labs_history_kept_with_the_snapshot_follows_writes_and_moments(clock: Clock) -> None:
    """A lab result's history line is kept with the snapshot once every record's moment is
    past (it walks the analyte's whole chain); a write brings a new snapshot and a new line, and
    a view of an earlier moment reads the chain as it stood then."""
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=clock)
    days = (90, 60, 30)
    for value, ago in zip(("8.1", "7.4"), days, strict=False):
        eng.add_memory("P", f"HbA1c {value}%", "lab_result", created_at=NOW - timedelta(ago))

    def history(now: datetime | None = None) -> list[str]:
        got = eng.build_context("P", "HbA1c", record_access=False, now=now)
        return [a for i in got.items for a in i.annotations if a.startswith("(was")]

    assert history() == ["(was 8.1% in March 2026)"]  # NOW is 2026-06-01
    assert history() == ["(was 8.1% in March 2026)"]  # the kept line
    eng.add_memory("P", "HbA1c 6.9%", "lab_result", created_at=NOW - timedelta(days[2]))
    assert history() == ["(was 7.4% in April 2026, 8.1% in March 2026)"]
    # as of a moment between the first two results: no history yet
    assert history(NOW - timedelta(75)) == []
    eng.store.close()
