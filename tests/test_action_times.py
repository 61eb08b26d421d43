"""Issue 25, finding 1: every action that records a time takes it from the engine's clock. A
``now`` beyond the clock (more than 5 s), or before the store's last write of a record the
action changes, is a ValidationError naming ``now``, and nothing is written (domain.md, "When
a supersession takes effect")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core.cli import main
from memory_core.embedding import HashingEmbedder
from memory_core.values import Memory
from tests.conftest import NOW, Clock


class Updates:
    """Two statements of a type always update each other (a deterministic verdict)."""

    method = "test"

    def adjudicate(self, older: Memory, newer: Memory, similarity: float) -> str:
        return "updates"


POLICY = mc.EnginePolicy(
    contradiction=mc.ContradictionPolicy(
        type_thresholds={"allergy": -1.0, "medication": -1.0},
        modes={"allergy": "review", "medication": "auto"},
    )
)
FUTURE = NOW + timedelta(days=4 * 365)  # 2030: the issue's reviewer clicking into the future
PAST = NOW - timedelta(days=1)  # before the store wrote any of the records


@pytest.fixture
def eng(clock: Clock) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), POLICY, adjudicator=Updates())
    e._core.clock = clock
    yield e
    e.store.close()


def _setup(e: mc.MemoryEngine) -> dict[str, Any]:
    nkda = e.add_memory("NW-1", "NKDA - no known drug allergies", "allergy").memory
    codeine = e.add_memory("NW-1", "Patient is allergic to codeine: vomiting", "allergy")
    e.add_memory("NW-1", "Takes metformin 500 mg daily", "medication")
    metformin = e.add_memory("NW-1", "Takes metformin 1000 mg daily", "medication")
    plan = e.add_memory("NW-1", "Walks daily", "observation").memory
    return {
        "nkda": nkda,
        "pending": codeine.supersessions[0],
        "auto": metformin.supersessions[0],
        "plan": plan,
    }


ACTIONS: dict[str, Callable[[mc.MemoryEngine, dict[str, Any], Any], object]] = {
    "confirm_supersession": lambda e, s, t: e.confirm_supersession(s["pending"].id, "dr", now=t),
    "reject_supersession": lambda e, s, t: e.reject_supersession(s["pending"].id, "dr", now=t),
    "undo_supersession": lambda e, s, t: e.undo_supersession(s["auto"].id, "dr", now=t),
    "archive": lambda e, s, t: e.archive(s["plan"].id, "dr", now=t),
    "purge": lambda e, s, t: e.purge(older_than_days=0, now=t, dry_run=False),
    "cleanup": lambda e, s, t: e.cleanup(now=t, threshold=1.0, dry_run=False),
    "scan_contradictions": lambda e, s, t: e.scan_contradictions(now=t),
    "add_memories": lambda e, s, t: e.add_memories(
        [{"patient_id": "NW-1", "content": "Swims on Fridays", "memory_type": "observation"}],
        now=t,
    ),
}


def _state(e: mc.MemoryEngine) -> tuple[object, ...]:
    return (
        [
            (m.id, m.version, m.status, m.archived_at)
            for p in e.list_patients()
            for m in e.list_memories(p)
        ],
        [(s.id, s.version, s.state) for s in e.supersessions()],
        len(e.audit_log(limit=100_000)),
    )


@pytest.mark.parametrize("name", list(ACTIONS))
def test_an_action_dated_after_the_clock_is_refused(eng: mc.MemoryEngine, name: str) -> None:
    setup = _setup(eng)
    before = _state(eng)
    with pytest.raises(mc.ValidationError) as err:
        ACTIONS[name](eng, setup, FUTURE)
    assert err.value.field == "now" and "future" in err.value.message
    assert _state(eng) == before
    ACTIONS[name](eng, setup, NOW + timedelta(seconds=4))  # within the clock's skew: fine


@pytest.mark.parametrize(
    "name", ["confirm_supersession", "reject_supersession", "undo_supersession", "archive"]
)
def test_an_action_dated_before_the_records_last_write_is_refused(
    eng: mc.MemoryEngine, name: str
) -> None:
    setup = _setup(eng)
    before = _state(eng)
    with pytest.raises(mc.ValidationError) as err:
        ACTIONS[name](eng, setup, PAST)
    assert err.value.field == "now" and "before the store's last write" in err.value.message
    assert _state(eng) == before


def test_confirm_flagged_refuses_a_moment_after_the_clock(
    eng: mc.MemoryEngine, clock: Clock
) -> None:
    old = eng.add_memory("NW-1", "Takes lisinopril 10 mg daily", "medication").memory
    plan = eng.add_memory("NW-1", "Check blood pressure weekly while on lisinopril", "care_plan")
    clock.advance(minutes=1)
    eng.add_memory("NW-1", "Stopped lisinopril: cough", "medication")
    (flag,) = [f for f in eng.stale_flags("NW-1") if f.memory_id == plan.memory.id]
    assert flag.changed_id == old.id
    with pytest.raises(mc.ValidationError) as err:
        eng.confirm_flagged(plan.memory.id, flag.change_id, "dr", now=FUTURE)
    assert err.value.field == "now"
    with pytest.raises(mc.ValidationError) as err:
        eng.confirm_flagged(plan.memory.id, flag.change_id, "dr", now=PAST)
    assert err.value.field == "now"
    assert eng.get(plan.memory.id).status is mc.Status.ACTIVE
    eng.confirm_flagged(plan.memory.id, flag.change_id, "dr")
    assert eng.get(plan.memory.id).archived_at == clock.now


def test_the_issue_scenario_record_and_agent_agree(eng: mc.MemoryEngine, clock: Clock) -> None:
    """confirm(now=2030) on a pending NKDA -> codeine review: refused; the record stays
    pending and the section still carries the pending note. archive(now=1800) then purge(365):
    the archive is refused, so nothing is deleted."""
    setup = _setup(eng)
    with pytest.raises(mc.ValidationError):
        eng.confirm_supersession(setup["pending"].id, "dr", now=FUTURE)
    assert eng.store.get_supersession(setup["pending"].id).state is mc.SupersessionState.PENDING
    text = eng.build_context("NW-1", "allergies", record_access=False).text
    assert "NKDA" in text and "pending review" in text
    with pytest.raises(mc.ValidationError):
        eng.archive(setup["plan"].id, "dr", now=NOW.replace(year=1800))
    clock.advance(days=1)
    eng.archive(setup["plan"].id, "dr")  # archived now, by the clock
    assert eng.purge(older_than_days=365, dry_run=False) == []
    assert eng.get(setup["plan"].id).status is mc.Status.ARCHIVED


def test_seed_demo_refuses_a_future_now_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path}/demo.db"
    rc = main(
        ["--store", url, "--embedder", "hashing", "seed-demo", "--now", "2031-01-01T00:00:00+00:00"]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: now:") and "Traceback" not in err
    store = mc.open_store(url)
    assert store.count_memories() == 0 and store.list_audit(mc.store.base.AuditQuery()) == []
    store.close()


def test_cleanup_and_scan_dated_before_the_records_they_change_are_refused(
    eng: mc.MemoryEngine,
) -> None:
    """Back-filled memories (created ten days ago, written now): a cleanup or a back-scan dated
    yesterday would archive or demote records the store wrote after that moment."""
    ago = NOW - timedelta(days=10)
    records = [
        {"patient_id": "NW-2", "content": c, "memory_type": "medication", "created_at": ago}
        for c in ("Takes metformin 500 mg daily", "Takes metformin 1000 mg daily")
    ]
    eng.add_memories(records, detect=False)
    before = _state(eng)
    for call in (
        lambda: eng.cleanup(now=PAST, threshold=1.0, dry_run=False),
        lambda: eng.scan_contradictions("NW-2", now=PAST),
    ):
        with pytest.raises(mc.ValidationError) as err:
            call()
        assert err.value.field == "now" and "before the store's last write" in err.value.message
        assert _state(eng) == before
    assert eng.cleanup(now=PAST, threshold=1.0).archived  # a dry run may look at any moment
    assert len(eng.scan_contradictions("NW-2")) == 1  # at the clock: done
