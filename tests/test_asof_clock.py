"""As-of means as of (issue 23, item 5): a review raised on back-dated memories is pending from
the newer memory's created_at in the patient's record -- not from the wall-clock moment it was
detected -- until a reviewer decided it; the section's "pending review" note and the worklist
read that one clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from tests.conftest import Clock

# the engine's clock stays behind the wall clock: a store refuses a change dated after its own
# clock (issue 25: no audit row in the future)
TODAY = datetime(2026, 11, 5, 9, 0, tzinfo=UTC)  # when the review is recorded
RETEST = datetime(2026, 10, 27, 10, 0, tzinfo=UTC)  # the back-dated re-test
AS_OF = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
PID = "NW-1001"
DOCUMENTED = "Patient has documented penicillin allergy with anaphylactic reaction"
RETESTED = "Patient's penicillin allergy re-tested: reaction was a mild rash, not anaphylaxis"


@pytest.fixture
def clock() -> Clock:
    return Clock(TODAY)


@pytest.fixture
def eng(clock: Clock) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=clock)
    yield e
    e.store.close()


def _back_dated(eng: mc.MemoryEngine) -> mc.Supersession:
    eng.add_memory(PID, DOCUMENTED, "allergy", created_at=datetime(2024, 3, 1, tzinfo=UTC))
    (sup,) = eng.add_memory(PID, RETESTED, "allergy", created_at=RETEST).supersessions
    assert sup.state is mc.SupersessionState.PENDING and sup.detected_at == TODAY
    return sup


def _note(eng: mc.MemoryEngine, now: datetime) -> str | None:
    res = eng.build_context(
        PID, "Is the patient allergic to penicillin?", now=now, record_access=False
    )
    item = next(i for i in res.items if i.scored.memory.content == DOCUMENTED)
    assert item.included
    return next((a for a in item.annotations if a.startswith("(pending review:")), None)


def test_a_review_on_back_dated_memories_is_pending_as_of_the_newer_memory(
    eng: mc.MemoryEngine,
) -> None:
    _back_dated(eng)
    note = _note(eng, AS_OF)  # before the review was recorded on the wall clock
    assert note is not None and "re-tested" in note
    res = eng.build_context(PID, "penicillin", now=AS_OF, record_access=False)
    assert "(pending review: Patient's penicillin allergy re-tested" in res.text
    # before the re-test existed there was nothing to review
    assert _note(eng, RETEST - timedelta(days=1)) is None
    # the worklist as of then shows it, waiting since the re-test
    (item,) = [w for w in eng.worklist(now=AS_OF) if w.kind == "review"]
    assert item.since == RETEST and item.safety
    assert [w for w in eng.worklist(now=RETEST - timedelta(days=1)) if w.kind == "review"] == []


def test_a_decided_review_was_pending_until_its_decision(
    eng: mc.MemoryEngine, clock: Clock
) -> None:
    sup = _back_dated(eng)
    decided = clock.advance(days=2)
    eng.reject_supersession(sup.id, "dr-a")
    assert _note(eng, decided + timedelta(hours=1)) is None  # both stand: nothing waits
    assert _note(eng, AS_OF) is not None  # as of before the rejection it waited
    assert _note(eng, decided - timedelta(hours=1)) is not None
    assert [w.ref for w in eng.worklist(now=AS_OF) if w.kind == "review"] == [sup.id]
    assert [w for w in eng.worklist() if w.kind == "review"] == []


def test_a_confirmed_review_waited_until_it_took_effect(eng: mc.MemoryEngine, clock: Clock) -> None:
    sup = _back_dated(eng)
    confirmed = clock.advance(days=1)
    eng.confirm_supersession(sup.id, "dr-a")
    assert [w.ref for w in eng.worklist(now=AS_OF) if w.kind == "review"] == [sup.id]
    assert _note(eng, AS_OF) is not None
    later = eng.build_context(PID, "penicillin", now=confirmed, record_access=False)
    assert DOCUMENTED not in later.text  # replaced from the confirmation on
    assert [w for w in eng.worklist() if w.kind == "review"] == []
