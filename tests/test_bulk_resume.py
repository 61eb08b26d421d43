"""Issue 34, finding 8: the Bulk Data report after a crash. A crash while the report's last line
was being written left a cut line; the next run appended onto it, later resumes appended
duplicate rows, and the resumed totals disagreed with the store (4,130 created reported, 4,200
in the store). Now a resume keeps only whole lines, one per patient; a patient whose line was
lost is counted from the store (what this import added to it), so the totals are the store's."""

from __future__ import annotations

import json
from pathlib import Path

import memory_core as mc
from tests.test_fhir_bulk import export


def _rows(path: Path) -> list[dict[str, object]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def _fhir_memories(engine: mc.MemoryEngine) -> int:
    return sum(
        1
        for p in engine.list_patients()
        for m in engine.list_memories(p)
        if (m.source or "").startswith("fhir:")
    )


def test_a_cut_last_line_is_dropped_and_the_totals_are_the_stores(
    engine: mc.MemoryEngine, tmp_path: Path
) -> None:
    folder = export(tmp_path)
    path = tmp_path / "report.jsonl"
    first = engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
    assert first.created == _fhir_memories(engine) == 5
    # a crash in the middle of writing p3's line: p3's memories are committed, its line cut
    whole = path.read_bytes()
    path.write_bytes(whole[: whole.rindex(b'"fhir_id"') + 5])
    resumed = engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
    assert resumed.resumed == ["p1", "p2"]
    assert resumed.created == _fhir_memories(engine) == 5  # before: 4 (p3 found "unchanged")
    assert [p.created for p in resumed.patients] == [p.created for p in first.patients]
    assert [p.superseded for p in resumed.patients] == [p.superseded for p in first.patients]
    rows = _rows(path)  # before: p3's new line was appended onto the cut one
    assert [r.get("fhir_id") for r in rows[1:]] == ["p1", "p2", "p3"]
    again = engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
    assert again.resumed == ["p1", "p2", "p3"] and again.created == 5
    assert [r.get("fhir_id") for r in _rows(path)[1:]] == ["p1", "p2", "p3"]


def test_a_refused_patient_has_one_row_however_often_it_is_resumed(
    engine: mc.MemoryEngine, tmp_path: Path
) -> None:
    folder = export(tmp_path, bad=True)
    path = tmp_path / "report.jsonl"
    for _ in range(3):
        report = engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
        assert [p.fhir_id for p in report.failed] == ["p3"]
        assert report.created == _fhir_memories(engine) == 4
    ids = [r.get("fhir_id") for r in _rows(path)[1:]]
    assert ids == ["p1", "p2", "p3"]  # before: p3 once per run


def test_a_report_of_old_runs_with_duplicate_rows_is_cleaned_on_resume(
    engine: mc.MemoryEngine, tmp_path: Path
) -> None:
    folder = export(tmp_path)
    path = tmp_path / "report.jsonl"
    engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, lines[1], '{"fhir_id": "p2", "cre']) + "\n")
    report = engine.import_fhir_bulk([folder], by="bulk", dry_run=False, report_path=path)
    assert report.resumed == ["p1", "p2", "p3"] and report.created == 5
    assert [r.get("fhir_id") for r in _rows(path)[1:]] == ["p1", "p2", "p3"]
