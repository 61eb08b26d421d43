"""The back-scan and restatements (issue 25, finding 10): a chat-derived patient restates the
same allergy hundreds of times word for word; the back-scan recorded one pending review per
pair of them (318,649 for ~500 restatements of 3 allergies). Restatements of one fact are now
one duplicate chain -- each superseded by the next, the newest active, audited and undoable --
and only the newest takes part in the pairwise reviews, so the pending reviews are at most the
distinct facts; statements that differ still get every pair reviewed (tests/test_back_scan_rule
and tests/test_engine pin that)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import timedelta

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from tests.conftest import NOW, Clock

FACTS = (
    "Patient is allergic to penicillin: hives and swelling",
    "Patient reports a sulfa allergy with a widespread rash",
    "Patient has a codeine allergy: severe vomiting",
)
TIMES = 60


@pytest.fixture
def eng(clock: Clock) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=clock)
    yield e
    e.store.close()


def _restated(eng: mc.MemoryEngine) -> list[mc.Memory]:
    recs = []
    for k in range(TIMES * len(FACTS)):
        text = FACTS[k % len(FACTS)]
        if k % 7 == 0:  # the same words, said a little differently
            text = "  " + text.upper() + "."
        recs.append(
            {
                "patient_id": "NW-1",
                "content": text,
                "memory_type": "allergy",
                "created_at": NOW - timedelta(hours=1_000 - k),
            }
        )
    eng.add_memories(recs, detect=False)
    return eng.list_memories("NW-1")


def test_restatements_become_one_duplicate_chain_per_fact(eng: mc.MemoryEngine) -> None:
    memories = _restated(eng)
    found = eng.scan_contradictions("NW-1")
    pending = [s for s in found if s.state is mc.SupersessionState.PENDING]
    assert len(pending) <= len(FACTS)
    chains = [s for s in found if s.state is mc.SupersessionState.AUTO]
    assert len(chains) == len(memories) - len(FACTS)
    assert {s.verdict for s in chains} == {"duplicate"}
    # each fact: every restatement superseded by the next one, the newest active
    by_id = {m.id: m for m in memories}
    for fact in FACTS:
        same = sorted(
            (m for m in memories if m.content.strip().rstrip(".").lower() == fact.lower()),
            key=lambda m: (m.created_at, m.id),
        )
        links = {(s.old_id, s.new_id) for s in chains if by_id[s.old_id] in same}
        assert links == {(a.id, b.id) for a, b in itertools.pairwise(same)}
        statuses = [eng.get(m.id).status for m in same]
        assert statuses == [mc.Status.SUPERSEDED] * (len(same) - 1) + [mc.Status.ACTIVE]
    # every fact still reaches the agent, once
    text = eng.build_context("NW-1", "drug allergies", record_access=False).text
    for fact in FACTS:
        assert text.lower().count(fact.lower()) == 1
    # audited, and undone like any supersession; a restatement a reviewer kept is never
    # chained again (at most reviewed against the newest)
    assert len(eng.audit_log(action="detect_supersession", limit=1_000)) == len(found)
    eng.undo_supersession(chains[0].id, "dr-a")
    assert eng.get(chains[0].old_id).status is mc.Status.ACTIVE
    again = eng.scan_contradictions("NW-1")
    assert len(again) <= 1
    assert all(s.state is mc.SupersessionState.PENDING for s in again)
    assert eng.get(chains[0].old_id).status is mc.Status.ACTIVE


def test_a_different_statement_is_still_reviewed_against_the_newest_restatement(
    eng: mc.MemoryEngine,
) -> None:
    """The pairs a reviewer must see are kept: a statement that changes the fact is reviewed
    against the restatement that stays active, once (not once per restatement)."""
    _restated(eng)
    pol = mc.EnginePolicy(contradiction=mc.ContradictionPolicy(type_thresholds={"allergy": -1.0}))
    eng.save_policy(pol, "dr-a")
    (changed,) = (
        r.memory
        for r in eng.add_memories(
            [
                {
                    "patient_id": "NW-1",
                    "content": "Patient's penicillin allergy re-tested: tolerated amoxicillin",
                    "memory_type": "allergy",
                }
            ],
            detect=False,
        )
    )
    found = eng.scan_contradictions("NW-1")
    pending = [s for s in found if s.state is mc.SupersessionState.PENDING]
    assert len(pending) <= len(FACTS) + 1
    newest = max(
        (
            m
            for m in eng.list_memories("NW-1")
            if "penicillin" in m.content.lower() and m.id != changed.id
        ),
        key=lambda m: (m.created_at, m.id),
    )
    assert [(s.old_id, s.new_id) for s in pending if s.new_id == changed.id] in (
        [(newest.id, changed.id)],
        [],  # the verdict rule may call the two compatible; never one review per restatement
    )
    assert sum(1 for s in pending if s.new_id == changed.id) <= 1
