"""The command line a newcomer meets first (issue 35, item 5): the types in ``add --help`` and
in the error for an unknown one, ``show`` with dates and newest first, a typed error for an
unknown patient, the FHIR dry run in full sentences, ``context`` headlining a safety memory
left out, and ``make help``. A small SQLite store with the hashing embedder (fast); the
decisions that matter here are read from clinical facts, not from the embedding."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.values import MemoryType

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "memory_core" / "data" / "demo" / "fhir_nw1001_bundle.json"


def _add(store: str, pid: str, text: str, mtype: str, when: str) -> None:
    assert (
        main(
            [
                *("--store", store, "--embedder", "hashing", "add", pid, text, "--type", mtype),
                *("--created-at", when),
            ]
        )
        == 0
    )


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/cli.db"
    _add(url, "NW-1001", "Patient walks a large dog twice a day", "social", "2025-03-01T09:00:00Z")
    _add(
        url,
        "NW-1001",
        "Patient's blood pressure medicine is lisinopril 10mg daily",
        "medication",
        "2025-09-12T09:00:00Z",
    )
    _add(url, "NW-1001", "Patient's HbA1c was 6.7%", "lab_result", "2024-01-05T09:00:00Z")
    return url


def _cli(store: str, *args: str) -> int:
    return main(["--store", store, "--embedder", "hashing", *args])


def test_add_help_and_error_list_the_types(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["add", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert all(t.value in helptext for t in MemoryType)
    assert main(["--store", "sqlite:///:memory:", "add", "NW-1", "x", "--type", "allergies"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'allergy'?" in err
    assert all(t.value in err for t in MemoryType)


def test_show_has_dates_newest_first(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert _cli(store, "show", "NW-1001", "--now", "2026-01-01T00:00:00Z") == 0
    out = capsys.readouterr().out.splitlines()
    assert "date" in out[0].split()
    dates = [re.search(r"\d{4}-\d{2}-\d{2}", line).group(0) for line in out[1:]]  # type: ignore[union-attr]
    assert dates == ["2025-09-12", "2025-03-01", "2024-01-05"]


def test_show_unknown_patient_is_a_typed_error(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert _cli(store, "show", "NW-9999") == 3
    got = capsys.readouterr()
    assert got.out == ""  # no header for a patient the store does not hold
    assert "patient 'NW-9999' not found" in got.err


def test_fhir_dry_run_in_full_sentences(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert _cli(store, "import-fhir", str(BUNDLE)) == 0
    out = capsys.readouterr().out
    # the dose the medication's name already says is not repeated
    assert "20 mg tablet 20mg" not in out
    assert "lisinopril 20 mg tablet once daily" in out
    lines = [line for line in out.splitlines() if "replace" in line]
    assert lines, out
    for line in lines:
        assert "<-" not in line and "->" not in line and "→" not in line, line
        assert line.rstrip().endswith("."), line
        assert "by the rule" in line and "because" in line, line
        assert '"' in line  # both statements quoted in full, never cut mid-word
    lisinopril = next(line for line in lines if "lisinopril 10mg" in line)
    assert "would replace" in lisinopril
    assert "Patient's blood pressure medicine is lisinopril 10mg daily" in lisinopril


def test_context_headlines_a_safety_memory_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path}/ctx.db"
    for drug in ("penicillin", "sulfa drugs", "codeine", "latex gloves"):
        _add(url, "P-1", f"Patient has a documented {drug} allergy with hives", "allergy",
             "2025-01-01T00:00:00Z")  # fmt: skip
    capsys.readouterr()
    assert _cli(url, "context", "P-1", "any allergies?", "--max-tokens", "20") == 0
    got = capsys.readouterr()
    # the first line on the terminal (stderr, printed before the section): stdout stays the
    # exact section a script may pipe to an agent
    first = got.err.splitlines()[0]
    assert first.startswith("WARNING:") and "safety" in first and "left out" in first, got.err
    assert "would NOT reach the agent" in first and "raise --max-tokens" in first
    assert "WARNING" not in got.out


def test_make_help_lists_the_targets() -> None:
    proc = subprocess.run(
        ["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    for target in ("run", "test", "lint", "seed", "eval", "bench", "clean", "help"):
        assert re.search(rf"^make {target}\b", proc.stdout, re.M), proc.stdout
    assert "PORT" in proc.stdout
