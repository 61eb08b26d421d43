"""Issue 25, finding 4: id-based calls take an optional ``patient_id``; when given, a record of
another patient is NotFoundError (naming the patient, not saying whether the id exists
elsewhere) and nothing is written. The dashboard passes the patient it shows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from tests.conftest import Clock
from tests.test_action_times import POLICY, Updates


@pytest.fixture
def eng(clock: Clock) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), POLICY, adjudicator=Updates())
    e._core.clock = clock
    yield e
    e.store.close()


def _patient(e: mc.MemoryEngine, clock: Clock, pid: str) -> dict[str, Any]:
    codeine = e.add_memory(pid, "Patient is allergic to codeine", "allergy").memory
    pending = e.add_memory(pid, "Patient is allergic to codeine: vomiting", "allergy")
    e.add_memory(pid, "Takes lisinopril 10 mg daily", "medication")
    plan = e.add_memory(pid, "Check blood pressure weekly while on lisinopril", "care_plan").memory
    clock.advance(minutes=1)
    auto = e.add_memory(pid, "Stopped lisinopril: cough", "medication").supersessions[0]
    archived = e.add_memory(pid, "Walks daily", "observation").memory
    e.archive(archived.id, "dr")
    return {
        "codeine": codeine,
        "pending": pending.supersessions[0],
        "auto": auto,
        "plan": plan,
        "archived": archived,
    }


CALLS: dict[str, Callable[[mc.MemoryEngine, dict[str, Any], str], object]] = {
    "get": lambda e, b, p: e.get(b["codeine"].id, patient_id=p),
    "confirm": lambda e, b, p: e.confirm_supersession(b["pending"].id, "dr", patient_id=p),
    "reject": lambda e, b, p: e.reject_supersession(b["pending"].id, "dr", patient_id=p),
    "undo": lambda e, b, p: e.undo_supersession(b["auto"].id, "dr", patient_id=p),
    "pin": lambda e, b, p: e.pin(b["plan"].id, "dr", patient_id=p),
    "unpin": lambda e, b, p: e.unpin(b["codeine"].id, "dr", patient_id=p),
    "set_importance": lambda e, b, p: e.set_importance(b["codeine"].id, 1, "dr", patient_id=p),
    "archive": lambda e, b, p: e.archive(b["plan"].id, "dr", patient_id=p),
    "restore": lambda e, b, p: e.restore(b["archived"].id, "dr", patient_id=p),
    "keep_flagged": lambda e, b, p: e.keep_flagged(b["plan"].id, b["auto"].id, "dr", patient_id=p),
    "confirm_flagged": lambda e, b, p: e.confirm_flagged(
        b["plan"].id, b["auto"].id, "dr", patient_id=p
    ),
}


def _state(e: mc.MemoryEngine) -> tuple[object, ...]:
    return (
        [(m.id, m.version) for p in e.list_patients() for m in e.list_memories(p)],
        [(s.id, s.version) for s in e.supersessions()],
        len(e.audit_log(limit=100_000)),
    )


@pytest.mark.parametrize("name", list(CALLS))
def test_another_patients_id_is_refused_when_the_patient_is_named(
    eng: mc.MemoryEngine, clock: Clock, name: str
) -> None:
    _patient(eng, clock, "A")
    b = _patient(eng, clock, "B")
    clock.advance(minutes=1)
    before = _state(eng)
    with pytest.raises(mc.NotFoundError) as err:
        CALLS[name](eng, b, "A")
    assert err.value.patient_id == "A" and "for patient 'A'" in str(err.value)
    assert _state(eng) == before
    CALLS[name](eng, b, "B")  # the record's own patient: done


def test_the_codeine_allergy_of_another_patient_keeps_its_importance(
    eng: mc.MemoryEngine, clock: Clock
) -> None:
    b = _patient(eng, clock, "B")
    with pytest.raises(mc.NotFoundError):
        eng.set_importance(b["codeine"].id, 1, "dr", patient_id="A")
    assert eng.get(b["codeine"].id).importance == 10.0


def test_a_bad_patient_id_is_a_validation_error(eng: mc.MemoryEngine, clock: Clock) -> None:
    b = _patient(eng, clock, "B")
    for bad in ("", "a b", 5, ["B"]):
        with pytest.raises(mc.ValidationError) as err:
            eng.pin(b["plan"].id, "dr", patient_id=bad)  # type: ignore[arg-type]
        assert err.value.field == "patient_id"
    clock.advance(days=1)
    assert eng.pin(b["plan"].id, "dr", patient_id=None).pinned  # not given: unchecked
    assert eng.get(b["plan"].id).pinned and clock.now > b["plan"].created_at + timedelta(hours=1)
