"""A medicine named by its class ("PPI stopped", "steroids down to 10 mg", "the water tablet was
stopped"): the patient's drugs of that class go to a reviewer (``drug.class-named``, weak),
never hidden at once; a question, a plan or another person's class changes nothing. Found on the
held-out statements' dev halves (four authors wrote such sentences: water tablet, PPI, blood
thinner, steroids, statin); the sentences here are written for the test."""

from __future__ import annotations

from datetime import timedelta

import pytest

import memory_core as mc
from memory_core.facts.classes import class_changes
from tests.conftest import NOW


def _pending(res: mc.AddResult) -> list[tuple[str, str]]:
    return [
        (s.old_id, s.rule) for s in res.supersessions if s.state is mc.SupersessionState.PENDING
    ]


def test_a_class_stopped_puts_its_drugs_to_review(engine: mc.MemoryEngine) -> None:
    ppi = engine.add_memory(
        "P1", "Lansoprazole 30 mg each morning", "medication", created_at=NOW - timedelta(days=30)
    )
    statin = engine.add_memory(
        "P1", "Simvastatin 40 mg at night", "medication", created_at=NOW - timedelta(days=30)
    )
    res = engine.add_memory(
        "P1", "Her PPI was stopped at the pharmacist review.", "medication",
        created_at=NOW - timedelta(days=10),
    )  # fmt: skip
    assert _pending(res) == [(ppi.memory.id, "drug.class-named")]
    assert not any(s.state is mc.SupersessionState.AUTO for s in res.supersessions)
    kept = {m.id: m for m in engine.list_memories("P1")}
    assert kept[ppi.memory.id].superseded_by is None  # not hidden until a reviewer agrees
    assert kept[statin.memory.id].superseded_by is None
    (sup,) = res.supersessions
    assert "PPI" in sup.evidence and "lansoprazole" in sup.evidence


def test_a_class_changed_in_a_note_of_another_type(engine: mc.MemoryEngine) -> None:
    """A dose change said of the class in an observation: the order goes to a reviewer."""
    pred = engine.add_memory(
        "P1", "Prednisolone 20 mg once daily", "medication", created_at=NOW - timedelta(days=30)
    )
    res = engine.add_memory(
        "P1", "Steroids cut down to 5 mg a day by the rheumatology team.", "observation",
        created_at=NOW - timedelta(days=10),
    )  # fmt: skip
    assert _pending(res) == [(pred.memory.id, "drug.class-named")]


@pytest.mark.parametrize(
    "text",
    [
        "Should her water tablets be stopped while she has diarrhoea?",  # a question
        "Plan to stop the water tablets at the next review.",  # a plan
        "Her husband's water tablets were stopped last week.",  # another person
        "Water tablets started today.",  # a class started ends no order
        "Water tablet leaflet given.",  # named only
    ],
)
def test_what_asserts_no_change_of_the_patients_class_changes_nothing(
    engine: mc.MemoryEngine, text: str
) -> None:
    engine.add_memory(
        "P1", "Furosemide 40 mg each morning", "medication", created_at=NOW - timedelta(days=30)
    )
    res = engine.add_memory("P1", text, "medication", created_at=NOW - timedelta(days=5))
    assert res.supersessions == ()


def test_a_drug_named_is_read_as_itself_not_by_its_class() -> None:
    """'PPI (omeprazole) stopped' names the drug: the drug's own rules decide it."""
    assert class_changes("PPI (omeprazole) stopped.", "medication") == ()
    (c,) = class_changes("PPIs stopped.", "medication")
    assert c.words == "PPIs" and c.state is mc.facts.State.STOPPED
    assert "drug:omeprazole" in c.keys
