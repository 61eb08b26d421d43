"""FHIR Bulk Data import (issue 24, item 3): the NDJSON files of an export, many patients whose
resources are spread over the files in any order, imported one patient (one transaction) at a
time; Medications referenced across files; a refused patient writes nothing and the others go
on; progress; a report file that resumes; the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc

LOINC = "http://loinc.org"


def weight(rid: str, pid: str, kg: float, when: str) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": rid,
        "status": "final",
        "code": {"coding": [{"system": LOINC, "code": "29463-7", "display": "Body Weight"}]},
        "subject": {"reference": f"Patient/{pid}"},
        "effectiveDateTime": when,
        "valueQuantity": {"value": kg, "unit": "kg"},
    }


def hba1c(rid: str, pid: str, pct: float, when: str) -> dict[str, Any]:
    res = weight(rid, pid, pct, when)
    res["code"] = {"coding": [{"system": LOINC, "code": "4548-4", "display": "Hemoglobin A1c"}]}
    res["valueQuantity"] = {"value": pct, "unit": "%"}
    return res


def export(tmp_path: Path, *, bad: bool = False) -> Path:
    """Three patients; their resources interleaved in the files, as an export lists them."""
    out = tmp_path / "export"
    out.mkdir()
    files: dict[str, list[dict[str, Any]]] = {
        "Patient": [{"resourceType": "Patient", "id": p} for p in ("p1", "p2", "p3")],
        "Medication": [
            {
                "resourceType": "Medication",
                "id": "med1",
                "code": {"text": "lisinopril 10 mg tablet"},
            }
        ],
        "Observation": [
            hba1c("h1", "p1", 7.1, "2024-01-05"),
            weight("w2", "p2", 61, "2024-02-01"),
            hba1c("h2", "p1", 6.8, "2025-01-05"),
            weight("w4", "p3", 70, "2024-03-01"),
        ],
        "MedicationRequest": [
            {
                "resourceType": "MedicationRequest",
                "id": "mr1",
                "status": "active",
                "intent": "order",
                "subject": {"reference": "Patient/p2"},
                "medicationReference": {"reference": "Medication/med1"},
                "authoredOn": "2023-05-01",
            }
        ],
        "Claim": [{"resourceType": "Claim", "id": "c1", "patient": {"reference": "Patient/p1"}}],
        "Organization": [{"resourceType": "Organization", "id": "org1"}],
    }
    if bad:  # p3's weight is no number: p3 is refused, not the others
        files["Observation"][3]["valueQuantity"]["value"] = "heavy"
    for rtype, rows in files.items():
        (out / f"{rtype}.ndjson").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    return out


def test_each_patient_of_an_export_in_its_own_transaction(
    engine: mc.MemoryEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[set[str]] = []
    real = engine.add_memories

    def counted(records: Any, **kw: Any) -> Any:
        records = list(records)
        calls.append({r["patient_id"] for r in records})
        return real(records, **kw)

    monkeypatch.setattr(engine, "add_memories", counted)
    seen: list[tuple[int, int]] = []
    report = engine.import_fhir_bulk(
        [export(tmp_path)], by="bulk", dry_run=False, progress=lambda d, n: seen.append((d, n))
    )
    assert calls == [{"p1"}, {"p2"}, {"p3"}]  # one add_memories (one transaction) per patient
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [p.fhir_id for p in report.patients] == ["p1", "p2", "p3"]
    assert sorted(m.content for m in engine.list_memories("p2")) == [
        "Patient is prescribed lisinopril 10 mg tablet (since 2023-05-01)",  # across files
        "Patient's body weight was 61 kg on 2024-02-01",
    ]
    # p1's two HbA1c results: the newer supersedes the older (the normal path decides)
    assert report.patients[0].created == 2 and report.patients[0].superseded == 1
    counts = dict(report.skipped_counts())
    assert counts["Claim: Claim is not imported as a memory"] == 1
    assert counts["Organization: Organization is not imported as a memory"] == 1
    assert report.resources == 11 and not report.failed


def test_a_dry_run_writes_nothing(engine: mc.MemoryEngine, tmp_path: Path) -> None:
    report = engine.import_fhir_bulk([export(tmp_path)], by="bulk")
    assert report.dry_run and report.created == 5
    assert engine.list_patients() == [] and engine.audit_log(limit=5) == []


def test_a_bad_resource_refuses_its_patient_only(engine: mc.MemoryEngine, tmp_path: Path) -> None:
    report = engine.import_fhir_bulk([export(tmp_path, bad=True)], by="bulk", dry_run=False)
    (failed,) = report.failed
    assert failed.fhir_id == "p3" and "Observation/w4.valueQuantity.value" in failed.error
    assert engine.list_memories("p3") == []
    assert len(engine.list_memories("p1")) == 2 and len(engine.list_memories("p2")) == 2


def test_the_report_file_resumes_an_interrupted_import(
    engine: mc.MemoryEngine, tmp_path: Path
) -> None:
    folder = export(tmp_path)
    path = tmp_path / "report.jsonl"
    first = engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and json.loads(lines[1])["fhir_id"] == "p1"
    # as if the report had lost p2's and p3's lines after their commits: they run again, find
    # their memories there, and are counted from the store as this import's (issue 34)
    path.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    again = engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
    assert again.resumed == ["p1"]
    assert [p.created for p in again.patients] == [p.created for p in first.patients]
    assert [p.unchanged for p in again.patients[1:]] == [0, 0]
    with pytest.raises(mc.ValidationError, match="written import's report"):
        engine.import_fhir_bulk([folder], by="bulk", report_path=path)  # a dry run
    other = tmp_path / "other"
    other.mkdir()
    (other / "Patient.ndjson").write_text('{"resourceType": "Patient", "id": "z"}\n')
    with pytest.raises(mc.ValidationError, match="another export"):
        engine.import_fhir_bulk([other], by="bulk", report_path=path)


def test_cli_imports_an_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memory_core.cli import main

    url = f"sqlite:///{tmp_path}/cli.db"
    folder = export(tmp_path)
    base = ["--store", url, "--embedder", "hashing", "import-fhir", str(folder)]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "3 patients (0 resumed, 0 refused), 11 resources: would create 5" in out
    report = tmp_path / "r.jsonl"
    assert main([*base, "--apply", "--report", str(report)]) == 0
    assert "created 5" in capsys.readouterr().out
    assert main([*base, "--patient", "p1"]) == 2
    assert "name one patient of a Bundle" in capsys.readouterr().err
