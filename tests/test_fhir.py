"""FHIR R4 import: validation (an invalid bundle writes nothing; the error names the resource
and field), each resource kind and status rule, partial dates, medicationReference, provenance,
re-import idempotence, a changed resource through the supersession path, dry run by default."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core.ingest.fhir import partial_date
from tests.conftest import Clock

PID = "NW-1001"
CS = "http://terminology.hl7.org/CodeSystem/"
PATIENT = {"reference": f"Patient/{PID}"}


def status(kind: str, code: str) -> dict[str, Any]:
    return {"coding": [{"system": CS + kind, "code": code}]}


def concept(text: str, code: str = "x", system: str = "http://snomed.info/sct") -> dict[str, Any]:
    return {"coding": [{"system": system, "code": code, "display": text.title()}], "text": text}


def bundle(*resources: dict[str, Any], kind: str = "collection") -> dict[str, Any]:
    entries = [
        {"fullUrl": f"urn:uuid:pat-{PID}", "resource": {"resourceType": "Patient", "id": PID}}
    ]
    entries += [{"resource": r} for r in resources]
    return {"resourceType": "Bundle", "type": kind, "entry": entries}


def allergy(rid: str, substance: str, clinical: str | None = "active", **kw: Any) -> dict[str, Any]:
    res: dict[str, Any] = {
        "resourceType": "AllergyIntolerance",
        "id": rid,
        "code": concept(substance),
        "patient": PATIENT,
        **kw,
    }
    if clinical:
        res["clinicalStatus"] = status("allergyintolerance-clinical", clinical)
    return res


def med_statement(rid: str, st: str, **kw: Any) -> dict[str, Any]:
    return {
        "resourceType": "MedicationStatement",
        "id": rid,
        "status": st,
        "subject": PATIENT,
        "medicationCodeableConcept": concept("metformin ER 500 mg tablet"),
        **kw,
    }


def observation(
    rid: str, loinc: str, value: float, unit: str, when: str, **kw: Any
) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": rid,
        "status": kw.pop("status", "final"),
        "code": {"coding": [{"system": "http://loinc.org", "code": loinc}]},
        "subject": PATIENT,
        "effectiveDateTime": when,
        "valueQuantity": {"value": value, "unit": unit},
        **kw,
    }


def run(
    engine: mc.MemoryEngine, *resources: dict[str, Any], apply: bool = True
) -> mc.FhirImportReport:
    return engine.import_fhir(bundle(*resources), by="importer", dry_run=not apply)


def created(report: mc.FhirImportReport) -> dict[str, str]:
    return {i.source: f"{i.memory_type}: {i.content}" for i in report.created}


def skipped(report: mc.FhirImportReport) -> dict[str, str]:
    return {i.source: i.reason for i in report.skipped}


# --- validation --------------------------------------------------------------------------------
def test_invalid_bundle_names_resource_and_field_and_writes_nothing(
    engine: mc.MemoryEngine,
) -> None:
    bad = allergy("a1", "penicillin")
    bad["clinicalStatus"] = "active"  # a bare string instead of a CodeableConcept
    b = bundle(med_statement("m1", "active"), bad)
    with pytest.raises(mc.ValidationError) as err:
        engine.import_fhir(b, by="importer", dry_run=False)
    assert "entry[2] AllergyIntolerance/a1.clinicalStatus" in str(err.value)
    assert engine.list_memories(PID) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"type": "history-of-everything"}, "bundle.type"),
        ({"resourceType": "Patient"}, "bundle.resourceType"),
    ],
)
def test_bundle_kind_is_checked(
    engine: mc.MemoryEngine, change: dict[str, str], field: str
) -> None:
    b = {**bundle(), **change}
    with pytest.raises(mc.ValidationError, match=field.replace(".", r"\.")):
        engine.import_fhir(b, by="importer")


@pytest.mark.parametrize("kind", ["document", "transaction", "collection", "searchset"])
def test_each_bundle_type_is_accepted(engine: mc.MemoryEngine, kind: str) -> None:
    b = bundle(allergy("a1", "penicillin"), kind=kind)
    if kind == "transaction":
        for e in b["entry"]:
            e["request"] = {"method": "PUT", "url": f"{e['resource']['resourceType']}/x"}
    if kind == "document":
        b["identifier"] = {"system": "urn:example", "value": "doc-1"}
        b["timestamp"] = "2026-05-01T00:00:00Z"
    report = engine.import_fhir(b, by="importer")
    assert len(report.created) == 1


def test_path_or_dict_and_the_patient_rule(engine: mc.MemoryEngine, tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle(allergy("a1", "penicillin"))), encoding="utf-8")
    assert engine.import_fhir(str(path), by="i").patient_id == PID  # the bundle's Patient
    report = engine.import_fhir(path, patient_id="NW-1009", by="i")
    assert report.patient_id == "NW-1009"  # the product's id wins
    no_patient = {"resourceType": "Bundle", "type": "collection", "entry": []}
    with pytest.raises(mc.ValidationError, match="patient_id"):
        engine.import_fhir(no_patient, by="i")
    (tmp_path / "bad.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(mc.ValidationError, match="not valid JSON"):
        engine.import_fhir(tmp_path / "bad.json", by="i")


def test_dry_run_is_the_default_and_writes_nothing(engine: mc.MemoryEngine) -> None:
    report = engine.import_fhir(bundle(allergy("a1", "penicillin")), by="importer")
    assert report.dry_run and len(report.created) == 1
    assert engine.list_memories(PID) == [] and engine.audit_log(limit=10) == []


# --- each resource kind and status rule --------------------------------------------------------
def test_allergy_status_rules(engine: mc.MemoryEngine) -> None:
    reaction = [{"manifestation": [concept("hives")], "severity": "severe"}]
    report = run(
        engine,
        allergy("active", "penicillin", reaction=reaction, criticality="high"),
        allergy(
            "eie",
            "codeine",
            verificationStatus=status("allergyintolerance-verification", "entered-in-error"),
        ),
        allergy(
            "refuted",
            "aspirin",
            None,
            verificationStatus=status("allergyintolerance-verification", "refuted"),
        ),
        allergy("resolved", "latex", "resolved"),
        allergy("inactive", "sulfa", "inactive"),
    )
    c = created(report)
    assert c["fhir:AllergyIntolerance/active"] == (
        "allergy: Patient has a documented penicillin allergy "
        "(reaction: hives; severity severe; criticality high)"
    )
    assert "not current" in c["fhir:AllergyIntolerance/resolved"]
    assert "recorded as inactive" in c["fhir:AllergyIntolerance/inactive"]
    s = skipped(report)
    assert s["fhir:AllergyIntolerance/eie"] == "verificationStatus is entered-in-error"
    assert s["fhir:AllergyIntolerance/refuted"] == "verificationStatus is refuted"
    mems = {m.source: m for m in engine.list_memories(PID)}
    assert mems["fhir:AllergyIntolerance/active"].pinned  # a current allergy: pinned, 10
    assert mems["fhir:AllergyIntolerance/active"].importance == 10
    old = mems["fhir:AllergyIntolerance/resolved"]
    assert not old.pinned and old.importance < engine.policy.decay.warn_threshold


def test_medication_statement_and_request_status_rules(engine: mc.MemoryEngine) -> None:
    dosage = [
        {
            "timing": {"repeat": {"frequency": 2, "period": 1, "periodUnit": "d"}},
            "doseAndRate": [{"doseQuantity": {"value": 500, "unit": "mg"}}],
        }
    ]
    request = {
        "resourceType": "MedicationRequest",
        "id": "r1",
        "status": "active",
        "intent": "order",
        "subject": PATIENT,
        "medicationCodeableConcept": concept("lisinopril 20 mg tablet"),
        "authoredOn": "2024-05-02",
    }
    report = run(
        engine,
        med_statement("active", "active", dosage=dosage),
        med_statement("stopped", "stopped", statusReason=[concept("persistent diarrhoea")]),
        med_statement("completed", "completed"),
        med_statement("eie", "entered-in-error"),
        med_statement("unknown", "unknown"),
        request,
        {**request, "id": "r2", "status": "draft"},
        {**request, "id": "r3", "status": "cancelled"},
        med_statement("hold", "on-hold"),
        med_statement("intended", "intended"),
        med_statement("not-taken", "not-taken"),
    )
    c = created(report)
    assert c["fhir:MedicationStatement/active"] == (
        "medication: Patient takes metformin ER 500 mg tablet twice per day"  # the dose once
    )
    assert c["fhir:MedicationStatement/stopped"] == (
        "medication: Patient stopped metformin ER 500 mg tablet because of persistent diarrhoea; "
        "not a current medication"
    )
    assert "not a current medication" in c["fhir:MedicationStatement/completed"]
    assert c["fhir:MedicationRequest/r1"] == (
        "medication: Patient is prescribed lisinopril 20 mg tablet (since 2024-05-02)"
    )
    assert "not a current medication" in c["fhir:MedicationRequest/r3"]
    assert c["fhir:MedicationStatement/hold"].endswith("is on hold")
    assert "intends to take" in c["fhir:MedicationStatement/intended"]
    assert "is not taking" in c["fhir:MedicationStatement/not-taken"]
    s = skipped(report)
    assert s["fhir:MedicationStatement/eie"] == "status is entered-in-error"
    assert s["fhir:MedicationStatement/unknown"] == "status is unknown"
    assert s["fhir:MedicationRequest/r2"].startswith("status is draft")


def test_medication_reference_resolved_inside_the_bundle(engine: mc.MemoryEngine) -> None:
    med = {
        "resourceType": "Medication",
        "id": "med1",
        "code": concept("empagliflozin 10 mg tablet"),
    }
    by_url = med_statement("s1", "active")
    del by_url["medicationCodeableConcept"]
    by_url["medicationReference"] = {"reference": "urn:uuid:med-1"}
    by_id = {**by_url, "id": "s2", "medicationReference": {"reference": "Medication/med1"}}
    dangling = {**by_url, "id": "s3", "medicationReference": {"reference": "Medication/nope"}}
    b = bundle(by_url, by_id, dangling)
    b["entry"].append({"fullUrl": "urn:uuid:med-1", "resource": med})
    report = engine.import_fhir(b, by="i")
    c = created(report)
    assert (
        c["fhir:MedicationStatement/s1"] == "medication: Patient takes empagliflozin 10 mg tablet"
    )
    assert c["fhir:MedicationStatement/s2"] == c["fhir:MedicationStatement/s1"]
    assert "not a Medication in the bundle" in skipped(report)["fhir:MedicationStatement/s3"]


def test_condition_clinical_status(engine: mc.MemoryEngine) -> None:
    def cond(rid: str, st: str, **kw: Any) -> dict[str, Any]:
        return {
            "resourceType": "Condition",
            "id": rid,
            "clinicalStatus": status("condition-clinical", st),
            "code": concept("type 2 diabetes"),
            "subject": PATIENT,
            **kw,
        }

    report = run(
        engine,
        cond("active", "active", onsetDateTime="2015"),
        cond("resolved", "resolved", abatementDateTime="2026-01"),
        cond("remission", "remission"),
        cond("recurrence", "recurrence"),
        cond("refuted", "active", verificationStatus=status("condition-ver-status", "refuted")),
    )
    c = created(report)
    assert c["fhir:Condition/active"] == "condition: Patient has type 2 diabetes (since 2015)"
    assert c["fhir:Condition/resolved"] == (
        "condition: Patient's type 2 diabetes is resolved, not a current condition "
        "(in January 2026)"
    )
    assert "in remission" in c["fhir:Condition/remission"]
    assert (
        c["fhir:Condition/recurrence"] == "condition: Patient has a recurrence of type 2 diabetes"
    )
    assert skipped(report)["fhir:Condition/refuted"] == "verificationStatus is refuted"


@pytest.mark.parametrize(
    ("loinc", "label"),
    [
        ("4548-4", "HbA1c"),
        ("33914-3", "eGFR"),
        ("62238-1", "eGFR"),
        ("98979-8", "eGFR"),
        ("18262-6", "LDL cholesterol"),
        ("13457-7", "LDL cholesterol"),
        ("1558-6", "fasting glucose"),
        ("2823-3", "potassium"),
        ("9318-7", "urine albumin/creatinine ratio"),
    ],
)
def test_observation_loinc_analytes(engine: mc.MemoryEngine, loinc: str, label: str) -> None:
    report = run(engine, observation("o1", loinc, 7.25, "u", "2026-03-05T09:00:00+01:00"))
    (item,) = report.created
    assert item.content == f"Patient's {label} was 7.25 u on 2026-03-05"
    assert item.memory_type == "lab_result"
    assert item.created_at == datetime(2026, 3, 5, 8, 0, tzinfo=UTC)  # effectiveDateTime, in UTC


def test_every_coded_observation_with_a_value_and_the_skips(engine: mc.MemoryEngine) -> None:
    no_value = observation("nv", "8302-2", 1, "cm", "2026-05-20")
    del no_value["valueQuantity"]
    no_code = {**observation("nc", "1-1", 1, "u", "2026-05-20"), "code": {"text": "a reading"}}
    report = run(
        engine,
        observation("hba1c", "4548-4", 7.6, "%", "2026-05-20"),
        observation("hr", "8867-4", 72, "/min", "2026-05-20"),
        observation("eie", "4548-4", 9.9, "%", "2026-05-20", status="entered-in-error"),
        {**observation("snomed", "4548-4", 6.1, "%", "2026-05-20"), "code": concept("HbA1c")},
        no_value,
        no_code,
    )
    assert created(report) == {
        "fhir:Observation/hba1c": "lab_result: Patient's HbA1c was 7.6% on 2026-05-20",
        # a vital sign the old hand list did not know
        "fhir:Observation/hr": "vital_sign: Patient's heart rate was 72/min on 2026-05-20",
        # coded in another system, named by a spelling the lexicon knows
        "fhir:Observation/snomed": "lab_result: Patient's HbA1c was 6.1% on 2026-05-20",
    }
    s = skipped(report)
    assert s["fhir:Observation/eie"] == "status is entered-in-error"
    assert s["fhir:Observation/nv"] == "no value"
    assert s["fhir:Observation/nc"] == "no code"
    counts = {(t, r, c): n for t, r, c, n in report.skipped_counts()}
    assert counts[("Observation", "no value", "loinc:8302-2")] == 1  # counted by kind and code


# --- dates, provenance, idempotence ------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "start", "phrase"),
    [
        ("2015", datetime(2015, 1, 1, tzinfo=UTC), "in 2015"),
        ("2016-10", datetime(2016, 10, 1, tzinfo=UTC), "in October 2016"),
        ("2016-10-05", datetime(2016, 10, 5, tzinfo=UTC), "on 2016-10-05"),
        ("2016-10-05T23:30:00-02:00", datetime(2016, 10, 6, 1, 30, tzinfo=UTC), "on 2016-10-06"),
    ],
)
def test_partial_dates_start_of_period_utc(raw: str, start: datetime, phrase: str) -> None:
    assert partial_date(raw, "f") == (start, phrase)


def test_partial_dates_in_sentences_and_created_at(engine: mc.MemoryEngine) -> None:
    report = run(engine, allergy("a1", "penicillin", recordedDate="2016-10"))
    (item,) = report.created
    assert item.content.endswith("recorded in October 2016")
    (mem,) = engine.list_memories(PID)
    assert mem.created_at == datetime(2016, 10, 1, tzinfo=UTC)
    assert mem.source == "fhir:AllergyIntolerance/a1"


def test_future_dated_resources_are_skipped(engine: mc.MemoryEngine) -> None:
    report = run(engine, observation("o1", "4548-4", 7, "%", "2099-01-01"))
    assert "in the future" in skipped(report)["fhir:Observation/o1"]
    assert engine.list_memories(PID) == []


# --- one patient per import --------------------------------------------------------------------
def two_patients() -> dict[str, Any]:
    """The issue's bundle: NW-1001's record with a second person's peanut allergy and HIV."""
    other = {"reference": "Patient/p2"}
    b = bundle(allergy("a1", "penicillin"))
    b["entry"] += [
        {"resource": {"resourceType": "Patient", "id": "p2"}},
        {"resource": {**allergy("a2", "peanut"), "patient": other}},
        {
            "resource": {
                "resourceType": "Condition",
                "id": "c2",
                "code": concept("HIV infection"),
                "subject": other,
            }
        },
    ]
    return b


@pytest.mark.parametrize("apply", [False, True])
def test_a_bundle_of_two_patients_is_refused_whole(engine: mc.MemoryEngine, apply: bool) -> None:
    with pytest.raises(mc.PatientMismatchError) as err:
        engine.import_fhir(two_patients(), patient_id="NW-9", by="i", dry_run=not apply)
    assert err.value.resources == ("Patient/NW-1001", "Patient/p2")
    assert "Patient/p2" in str(err.value) and "nothing was written" in str(err.value)
    assert engine.list_memories("NW-9") == [] and engine.list_memories(PID) == []
    assert engine.audit_log(limit=10) == []


def test_naming_the_patient_to_take_skips_and_counts_the_others(engine: mc.MemoryEngine) -> None:
    report = engine.import_fhir(
        two_patients(), patient_id="NW-9", fhir_patient=PID, by="i", dry_run=False
    )
    assert [m.content for m in engine.list_memories("NW-9")] == [
        "Patient has a documented penicillin allergy"
    ]
    assert report.other_patients == ["Patient/p2"]
    s = skipped(report)
    assert s["fhir:AllergyIntolerance/a2"] == s["fhir:Condition/c2"]
    assert s["fhir:Condition/c2"] == "about another patient of the bundle"
    # a patient_id that is one of the bundle's Patients names it too
    again = engine.import_fhir(two_patients(), patient_id="p2", by="i")
    assert [i.content for i in again.created] == [
        "Patient has a documented peanut allergy",
        "Patient has HIV infection",
    ]
    with pytest.raises(mc.ValidationError, match="fhir_patient"):
        engine.import_fhir(two_patients(), fhir_patient="p3", by="i")


def test_resources_about_another_subject_are_refused_naming_them(
    engine: mc.MemoryEngine,
) -> None:
    other = {**allergy("a2", "latex"), "patient": {"reference": "Patient/someone-else"}}
    with pytest.raises(mc.PatientMismatchError) as err:
        run(engine, allergy("a1", "penicillin"), other)
    assert err.value.resources == ("AllergyIntolerance/a2 (about Patient/someone-else)",)
    assert engine.list_memories(PID) == []
    # no Patient in the bundle: the resources must be about the patient named
    lone = {"resourceType": "Bundle", "type": "collection", "entry": [{"resource": other}]}
    with pytest.raises(mc.PatientMismatchError):
        engine.import_fhir(lone, patient_id="NW-9", by="i")
    report = engine.import_fhir(lone, patient_id="someone-else", by="i")
    assert len(report.created) == 1


def test_reimport_creates_nothing_and_a_changed_resource_supersedes(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    clock.now = datetime(2026, 11, 1, 12, tzinfo=UTC)  # after every date in the demo bundle
    demo = json.loads(
        files("memory_core").joinpath("data/demo/fhir_nw1001_bundle.json").read_text("utf-8")
    )
    first = engine.import_fhir(demo, by="importer", dry_run=False)
    assert first.created and not first.unchanged
    n = len(engine.list_memories(PID))
    again = engine.import_fhir(demo, by="importer", dry_run=False)
    assert again.created == [] and len(again.unchanged) == len(first.created)
    assert again.skipped == first.skipped
    assert len(engine.list_memories(PID)) == n

    changed = copy.deepcopy(demo)
    for e in changed["entry"]:
        if e["resource"].get("id") == "obs-hba1c-2026-10":
            e["resource"]["valueQuantity"]["value"] = 7.9
    preview = engine.import_fhir(changed, by="importer")
    (item,) = preview.created
    assert item.source == "fhir:Observation/obs-hba1c-2026-10"
    assert item.reason.startswith("changed since the last import")
    report = engine.import_fhir(changed, by="importer", dry_run=False)
    (new,) = report.created
    old = next(
        m
        for m in engine.list_memories(PID)
        if m.content == "Patient's HbA1c was 7.6% on 2026-10-20"
    )
    # the normal supersession path decides: what the report says is what the engine recorded
    sups = [s for s in engine.supersessions(PID) if s.new_id == new.memory_id]
    assert [(s.old_id, s.state.value) for s in sups] == [
        (s.old_id, s.state) for s in report.superseded
    ]
    # the preview is the same add_memories run, written nothing: the same records and states
    assert [(s.old_id, s.state) for s in preview.superseded] == [
        (s.old_id, s.state) for s in report.superseded
    ]
    assert [s.old_id for s in sups] == [old.id]  # the same analyte, a new value: an update


# --- command line ------------------------------------------------------------------------------
def test_cli_import_fhir_dry_run_then_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory_core.cli import main

    url = f"sqlite:///{tmp_path}/cli.db"
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle(allergy("a1", "penicillin"))), encoding="utf-8")
    base = ["--store", url, "--embedder", "hashing", "import-fhir", str(path)]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "would create [allergy] Patient has a documented penicillin allergy" in out
    assert "dry run: nothing written" in out
    assert main([*base, "--apply"]) == 0
    assert "created 1" in capsys.readouterr().out
    assert main([*base, "--apply"]) == 0
    assert "unchanged fhir:AllergyIntolerance/a1" in capsys.readouterr().out
    eng = mc.open_engine(url, "hashing")
    assert [m.source for m in eng.list_memories(PID)] == ["fhir:AllergyIntolerance/a1"]
    eng.store.close()


def test_cli_import_fhir_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory_core.cli import main

    bad = bundle(allergy("a1", "penicillin"))
    bad["entry"][1]["resource"]["clinicalStatus"] = "active"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    base = ["--store", f"sqlite:///{tmp_path}/cli.db", "--embedder", "hashing", "import-fhir"]
    assert main([*base, str(path), "--apply"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "AllergyIntolerance/a1.clinicalStatus" in err
    assert main([*base, str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_the_demo_preview_and_import_report_the_same(demo_db: str, tmp_path: Path) -> None:
    """On the seeded demo store the preview said "superseded 2" and the import did 8: the
    preview compared each new memory with the stored ones only. Now it is the import's own
    add_memories call with nothing written (issue 24)."""
    import shutil

    from tests.conftest import DEMO_NOW

    copy = tmp_path / "store.db"
    shutil.copyfile(demo_db, copy)
    eng = mc.open_engine(f"sqlite:///{copy}", "minilm", clock=lambda: DEMO_NOW)
    demo = json.loads(
        files("memory_core").joinpath("data/demo/fhir_nw1001_bundle.json").read_text("utf-8")
    )

    def what(r: mc.FhirImportReport) -> tuple[Any, ...]:
        sups = [(s.old_content, s.new_content, s.state) for s in r.superseded]
        return len(r.created), len(r.unchanged), len(r.skipped), sups

    preview = eng.import_fhir(demo, by="r")
    done = eng.import_fhir(demo, by="r", dry_run=False)
    assert what(preview) == what(done)
    assert len(done.superseded) == 8
    eng.store.close()
