"""Issue 34, finding 4: the memory types are one closed list (memory_core.values.MemoryType).
An unknown type -- "drug_allergy", "allergies" -- used to be stored at importance 5: a latex
allergy without its ⚠️, left out of the section, and an "NKDA" that superseded nothing. Now it
is refused with the list, a close misspelling suggested, and nothing is written; `add --help`
lists the types."""

from __future__ import annotations

from pathlib import Path

import pytest

import memory_core as mc
from memory_core.cli import build_parser, main
from memory_core.importance import CLINICAL, GENERAL, KNOWN_TYPES
from memory_core.values import MemoryType


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("drug_allergy", "allergy"),
        ("allergies", "allergy"),
        ("medications", "medication"),
        ("labresult", "lab_result"),
        ("vitals", "vital_sign"),
    ],
)
def test_a_look_alike_type_is_refused_naming_the_type_meant(
    engine: mc.MemoryEngine, typed: str, meant: str
) -> None:
    with pytest.raises(mc.ValidationError) as err:
        engine.add_memory("NW-1", "Patient is allergic to latex", typed)
    assert err.value.field == "records[0].memory_type"  # add_memory is a one-record add_memories
    assert f"did you mean {meant!r}" in str(err.value)
    assert all(t.value in str(err.value) for t in MemoryType)  # the list, every type
    assert engine.list_patients() == [] and engine.audit_log() == []


def test_a_type_like_nothing_is_refused_with_the_list(engine: mc.MemoryEngine) -> None:
    with pytest.raises(mc.ValidationError) as err:
        engine.add_memories(
            [
                {"patient_id": "NW-1", "content": "Walks daily", "memory_type": "observation"},
                {"patient_id": "NW-1", "content": "Keeps a diary", "memory_type": "diary_habit"},
            ]
        )
    assert err.value.field == "records[1].memory_type"
    assert "did you mean" not in str(err.value)
    assert "one of: allergy, adverse_reaction," in str(err.value)
    assert engine.list_patients() == []


def test_the_known_types_are_the_enum() -> None:
    assert tuple(t.value for t in MemoryType) == KNOWN_TYPES
    assert set(CLINICAL) | set(GENERAL) <= set(MemoryType)


def test_every_known_type_is_accepted(engine: mc.MemoryEngine) -> None:
    for t in MemoryType:
        engine.add_memory("NW-1", f"A statement filed as {t.value}", t.value, importance=5)
    assert len(engine.list_memories("NW-1")) == len(MemoryType)


def test_the_cli_refuses_an_unknown_type_before_opening_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    rc = main(
        ["--store", url, "--embedder", "hashing", "add", "NW-1", "latex", "--type", "allergies"]
    )
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("error: --type:")
    assert "did you mean 'allergy'" in err
    assert not db.exists()


def test_add_help_lists_the_types() -> None:
    add = build_parser()._subparsers._group_actions[0].choices["add"]  # type: ignore[union-attr]
    text = add.format_help()
    for t in MemoryType:
        assert t.value in text
