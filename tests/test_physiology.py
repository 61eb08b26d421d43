"""Values outside physiology (issue 34, finding 7) are refused or skipped, with the reason, on
every path: a memory through the API, a transcript's proposal, a FHIR Observation (the FHIR
path: tests/test_fhir_map.py). The bounds are data (labs.json, per LOINC analyte, in its
canonical unit; a value in another unit is converted first)."""

from __future__ import annotations

import pytest

import memory_core as mc
from tests.conftest import NOW


@pytest.mark.parametrize(
    ("text", "mtype"),
    [
        ("Body weight was 0 kg", "vital_sign"),
        ("Adult triage: weight 70 g", "vital_sign"),  # never read as 70 kg either
        ("Weighs 300 st", "vital_sign"),
        ("Temperature 380 °C this morning", "vital_sign"),
        ("Potassium 55 mmol/L", "lab_result"),
    ],
)
def test_the_api_refuses_a_result_outside_physiology(
    engine: mc.MemoryEngine, text: str, mtype: str
) -> None:
    with pytest.raises(mc.ValidationError) as err:
        engine.add_memory("NW-1", text, mtype)
    assert err.value.field.endswith("content") and "outside physiology" in str(err.value)
    assert engine.list_memories("NW-1") == []  # nothing written


@pytest.mark.parametrize(
    "text",
    [
        "Weight 82 kg",
        "Weight 12 st 6 lb",
        "Weight 12 st 0 lb",
        "Temperature 101.3 °F",
        "Fasting glucose 6.1",
        # one reading in two units: it had been added up as "12 st 6 lb" is (202.6 °F), and
        # the statement refused as outside physiology
        "Temp 38.5 °C (101.3 °F)",
        "Fever threshold on this ward is 38.0 C (100.4 F).",
    ],
)
def test_a_possible_value_is_kept(engine: mc.MemoryEngine, text: str) -> None:
    assert engine.add_memory("NW-1", text, "vital_sign").memory.content == text


def test_a_reading_in_two_units_is_the_first() -> None:
    from memory_core.facts import read

    fact = read("Temp 38.5 °C (101.3 °F)", "vital_sign").facts[0]
    assert fact.value == "value=38.5 °C"


def test_a_transcripts_result_outside_physiology_is_not_proposed(engine: mc.MemoryEngine) -> None:
    """'body weight was 0 kg' from a transcript was proposed; it is listed with the reason."""
    t = "Nurse: Your body weight today was 0 kg.\nNurse: Your blood pressure is 128/74."
    props = engine.extract_memories("NW-1", t, now=NOW)
    assert [p.content for p in props] == ["Patient's blood pressure was 128/74"]
    assert any("outside physiology" in r.reason for r in props.rejected)


@pytest.mark.parametrize(
    "text",
    ["Urine sodium 15 mEq/L", "24 hour urine sodium 80 mmol/L", "CSF glucose 3.1 mmol/L"],
)
def test_another_specimens_result_is_no_result_of_the_blood_test(
    engine: mc.MemoryEngine, text: str
) -> None:
    """A urine sodium of 15 is no serum sodium (90-200 mmol/L): it is written, keyed to no
    blood test, and never replaces the patient's serum sodium (the CI run of 2026-12-04 refused
    a calibration pair's 'Urine sodium 15 mEq/L' as a serum sodium outside physiology)."""
    serum = engine.add_memory("NW-1", "Sodium 138 mmol/L", "lab_result", now=NOW).memory
    engine.add_memory("NW-1", text, "lab_result", now=NOW)
    kept = {m.id: m for m in engine.list_memories("NW-1")}
    assert kept[serum.id].superseded_by is None
    facts = mc.facts.read(text, "lab_result").facts
    labs = [f for f in facts if f.key.startswith("loinc")]
    assert labs and all(f.role is mc.facts.Role.MENTION for f in labs)


def test_a_specimen_said_elsewhere_in_the_sentence_leaves_the_result() -> None:
    """'urine output' beside a sodium names no specimen of it: the sodium is a result."""
    (f,) = mc.facts.read("Sodium 138 mmol/L, urine output fine", "lab_result").facts
    assert f.role is mc.facts.Role.SUBJECT and "value=138 mmol/L" in f.value
