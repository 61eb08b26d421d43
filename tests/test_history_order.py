"""The History tab's order (views/contradictions.py): the newest decision first, and decisions
made at one moment — a bulk import or the demo's seeding decides them all at once — ordered by
the statements they are about, newest first, the same on every read (the store returns them in
detection order, ties by a random id)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from memory_core.values import Memory, Supersession, SupersessionState
from memory_core.worklist import newest_decisions_first

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _memory(mid: str, day: int) -> Memory:
    at = T0 + timedelta(days=day)
    return Memory(
        id=mid,
        patient_id="P",
        memory_type="lab_result",
        content=f"statement {mid}",
        importance=5.0,
        created_at=at,
        last_accessed=at,
        embedding=np.ones(3, dtype=np.float32),
        embedding_model="x",
    )


def _sup(
    sid: str, old: str, new: str, decided: datetime | None, detected: datetime
) -> Supersession:
    return Supersession(
        id=sid,
        patient_id="P",
        old_id=old,
        new_id=new,
        similarity=0.9,
        method="rules",
        verdict="updates",
        state=SupersessionState.AUTO if decided is None else SupersessionState.CONFIRMED,
        detected_at=detected,
        decided_at=decided,
    )


def test_one_moment_is_ordered_by_the_newer_statement_newest_first() -> None:
    seeded = T0 + timedelta(days=300)
    mems = {m.id: m for m in (_memory(f"m{d}", d) for d in (1, 5, 9, 40, 70, 200))}
    # ids chosen so that id order, input order and statement order all differ
    sups = [
        _sup("s-c", "m1", "m9", None, seeded),
        _sup("s-a", "m40", "m200", None, seeded),
        _sup("s-b", "m5", "m70", None, seeded),
    ]
    for order in (sups, sups[::-1], [sups[1], sups[2], sups[0]]):
        got = [s.new_id for s in newest_decisions_first(order, mems)]
        assert got == ["m200", "m70", "m9"]


def test_a_later_decision_comes_first_whatever_its_statements() -> None:
    seeded = T0 + timedelta(days=300)
    mems = {m.id: m for m in (_memory(f"m{d}", d) for d in (1, 5, 9, 200))}
    confirmed = _sup("s-x", "m1", "m5", seeded + timedelta(minutes=3), seeded)
    auto = _sup("s-y", "m9", "m200", None, seeded)
    assert [s.id for s in newest_decisions_first([auto, confirmed], mems)] == ["s-x", "s-y"]


def test_a_statement_not_at_hand_falls_back_and_the_order_is_still_total() -> None:
    seeded = T0 + timedelta(days=300)
    mems = {m.id: m for m in (_memory(f"m{d}", d) for d in (1, 9))}
    known = _sup("s-1", "m1", "m9", None, seeded)
    gone_a = _sup("s-2", "m1", "archived-a", None, seeded)
    gone_b = _sup("s-3", "m1", "archived-b", None, seeded)
    first = [s.id for s in newest_decisions_first([gone_a, known, gone_b], mems)]
    again = [s.id for s in newest_decisions_first([gone_b, gone_a, known], mems)]
    assert first == again
    assert set(first) == {"s-1", "s-2", "s-3"}
