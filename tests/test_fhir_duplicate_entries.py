"""Issue 34, finding 7 (duplicates): two entries with one resource id but different content
were reported only as "duplicate entry", without saying the content differed. A repeated entry
that is the same resource is still a plain duplicate; one that differs says so and which entry
was imported."""

from __future__ import annotations

from typing import Any

import memory_core as mc

PID = "NW-1001"


def _allergy(substance: str) -> dict[str, Any]:
    return {
        "resourceType": "AllergyIntolerance",
        "id": "a1",
        "patient": {"reference": f"Patient/{PID}"},
        "code": {"text": substance},
    }


def _bundle(*resources: dict[str, Any]) -> dict[str, Any]:
    entries = [{"resource": {"resourceType": "Patient", "id": PID}}]
    return {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": entries + [{"resource": r} for r in resources],
    }


def test_a_duplicate_id_with_different_content_says_so(engine: mc.MemoryEngine) -> None:
    report = engine.import_fhir(
        _bundle(_allergy("penicillin"), _allergy("latex")), by="i", dry_run=False
    )
    assert [i.content for i in report.created] == ["Patient has a documented penicillin allergy"]
    (skip,) = report.skipped
    assert skip.source == "fhir:AllergyIntolerance/a1"
    assert skip.reason == (
        "duplicate entry id with different content (the first entry, entry[1], was imported)"
    )  # before: "duplicate entry"


def test_a_repeated_identical_entry_is_a_plain_duplicate(engine: mc.MemoryEngine) -> None:
    report = engine.import_fhir(
        _bundle(_allergy("penicillin"), _allergy("penicillin")), by="i", dry_run=False
    )
    assert [i.reason for i in report.skipped] == ["duplicate entry (the same resource again)"]
