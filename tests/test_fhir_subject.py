"""Issue 34, finding 5: a FHIR resource is filed only to the Patient it names. An
AllergyIntolerance whose ``patient`` is ``{"identifier": {"value": "SOMEONE-ELSE"}}``, or that
names no patient at all, was imported into the bundle's Patient with ``other_patients == []``.
Now a subject must resolve to the chosen Patient by reference or by identifier: one naming
another identifier is about another patient (the bundle refused, or skipped and counted when the
caller named the Patient), one naming nobody is skipped and counted."""

from __future__ import annotations

from typing import Any

import pytest

import memory_core as mc

PID = "NW-1001"
MRN = {"system": "urn:oid:2.16.840.1.113883.3.9999", "value": "MRN-1001"}


def _bundle(*resources: dict[str, Any]) -> dict[str, Any]:
    patient = {"resourceType": "Patient", "id": PID, "identifier": [MRN]}
    entries = [{"fullUrl": f"urn:uuid:{PID}", "resource": patient}]
    return {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": entries + [{"resource": r} for r in resources],
    }


def _allergy(rid: str, substance: str, who: dict[str, Any] | None) -> dict[str, Any]:
    res: dict[str, Any] = {
        "resourceType": "AllergyIntolerance",
        "id": rid,
        "code": {"text": substance},
    }
    if who is not None:
        res["patient"] = who
    return res


def _condition(rid: str, text: str, who: dict[str, Any] | None) -> dict[str, Any]:
    res: dict[str, Any] = {
        "resourceType": "Condition",
        "id": rid,
        "code": {"text": text},
        "clinicalStatus": {
            "coding": [
                {
                    "system": "http://terminology.hl7.org/CodeSystem/condition-clinical",
                    "code": "active",
                }
            ]
        },
    }
    if who is not None:
        res["subject"] = who
    return res


OURS = {"reference": f"Patient/{PID}"}


def test_a_subject_named_by_another_identifier_refuses_the_bundle(
    engine: mc.MemoryEngine,
) -> None:
    other = _allergy("a2", "latex", {"identifier": {"value": "SOMEONE-ELSE"}})
    with pytest.raises(mc.PatientMismatchError) as err:
        engine.import_fhir(
            _bundle(_allergy("a1", "penicillin", OURS), other), by="i", dry_run=False
        )
    assert err.value.resources == ("AllergyIntolerance/a2 (about identifier SOMEONE-ELSE)",)
    assert engine.list_patients() == []  # before: the latex allergy filed to NW-1001


def test_naming_the_patient_skips_and_counts_another_identifier(engine: mc.MemoryEngine) -> None:
    other = _allergy("a2", "latex", {"identifier": {"system": MRN["system"], "value": "MRN-2"}})
    report = engine.import_fhir(
        _bundle(_allergy("a1", "penicillin", OURS), other),
        fhir_patient=PID,
        by="i",
        dry_run=False,
    )
    assert [m.content for m in engine.list_memories(PID)] == [
        "Patient has a documented penicillin allergy"
    ]
    reasons = {i.source: i.reason for i in report.skipped}
    assert reasons == {"fhir:AllergyIntolerance/a2": "about another patient of the bundle"}
    assert report.other_patients == [f"identifier {MRN['system']}|MRN-2"]


def test_a_resource_naming_no_patient_is_skipped_and_counted(engine: mc.MemoryEngine) -> None:
    report = engine.import_fhir(
        _bundle(
            _allergy("a1", "penicillin", OURS),
            {  # an Observation's subject is optional in FHIR (an AllergyIntolerance's is not)
                "resourceType": "Observation",
                "id": "o1",
                "status": "final",
                "code": {"coding": [{"system": "http://loinc.org", "code": "29463-7"}]},
                "effectiveDateTime": "2026-05-01",
                "valueQuantity": {"value": 70, "unit": "kg"},
            },
            _condition("c1", "asthma", {"display": "the patient"}),
        ),
        by="i",
        dry_run=False,
    )
    assert [m.content for m in engine.list_memories(PID)] == [
        "Patient has a documented penicillin allergy"
    ]
    reasons = {i.source: i.reason for i in report.skipped}
    assert reasons == {
        "fhir:Observation/o1": "names no patient (no reference or identifier)",
        "fhir:Condition/c1": "names no patient (no reference or identifier)",
    }


def test_a_subject_named_by_the_patients_own_identifier_is_imported(
    engine: mc.MemoryEngine,
) -> None:
    by_mrn = _allergy("a2", "latex", {"identifier": MRN})
    by_value = _condition("c1", "asthma", {"identifier": {"value": "MRN-1001"}})
    report = engine.import_fhir(
        _bundle(_allergy("a1", "penicillin", OURS), by_mrn, by_value), by="i", dry_run=False
    )
    assert sorted(i.source for i in report.created) == [
        "fhir:AllergyIntolerance/a1",
        "fhir:AllergyIntolerance/a2",
        "fhir:Condition/c1",
    ]
    assert report.skipped == []
    # the same value in another system is someone else
    elsewhere = _allergy(
        "a3", "peanut", {"identifier": {"system": "urn:other", "value": "MRN-1001"}}
    )
    with pytest.raises(mc.PatientMismatchError):
        engine.import_fhir(_bundle(elsewhere), by="i")
