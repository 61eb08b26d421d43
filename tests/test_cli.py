"""The command line, on a real SQLite file with the real embedder and the demo data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('cli')}/demo.db"
    assert main(["--store", url, "seed-demo", "--now", "2026-11-01T12:00:00+00:00"]) == 0
    return url


def test_seed_demo_content(seeded: str, capsys: pytest.CaptureFixture[str]) -> None:
    eng = mc.open_engine(seeded)
    patients = eng.list_patients()
    assert len(patients) == 8
    counts = [len(eng.list_memories(p)) for p in patients]
    assert all(30 <= n <= 150 for n in counts)
    pending = eng.supersessions(state="pending")
    # every decision says which rule took it and why; the safety types wait for a reviewer
    assert pending and all(s.rule and s.evidence for s in eng.supersessions())
    assert {eng.get(s.old_id).memory_type for s in pending} >= {"allergy", "adverse_reaction"}
    auto = eng.supersessions(state="auto")
    assert auto and not any(
        eng.get(s.old_id).memory_type in ("allergy", "adverse_reaction") for s in auto
    )
    # seeding again with --if-empty is a no-op
    assert main(["--store", seeded, "seed-demo", "--if-empty"]) == 0
    assert "not seeding" in capsys.readouterr().out
    assert sum(len(eng.list_memories(p)) for p in patients) == sum(counts)


def test_context_preview_records_nothing(seeded: str, capsys: pytest.CaptureFixture[str]) -> None:
    eng = mc.open_engine(seeded)
    before = eng.injections("NW-1001")
    assert main(["--store", seeded, "context", "NW-1001", "metformin side effects"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("**Patient Context from Previous Interactions:**")
    assert "⚠️" in out.out and "o200k_base" in out.err
    assert eng.injections("NW-1001") == before
    assert main(["--store", seeded, "show", "NW-1001"]) == 0
    assert "Patient lives alone" in capsys.readouterr().out


def test_cleanup_is_a_dry_run_unless_applied(
    seeded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    eng = mc.open_engine(seeded)
    before = [m.status for p in eng.list_patients() for m in eng.list_memories(p)]
    assert main(["--store", seeded, "cleanup", "--threshold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "would archive" in out and "dry run: nothing changed" in out
    assert [m.status for p in eng.list_patients() for m in eng.list_memories(p)] == before


def test_export_import_round_trip(seeded: str, tmp_path: Path) -> None:
    dump = tmp_path / "nw1002.jsonl"
    assert main(["--store", seeded, "export", "--patient", "NW-1002", "--out", str(dump)]) == 0
    rows = [json.loads(x) for x in dump.read_text().splitlines()]
    assert len(rows) == len(mc.open_engine(seeded).list_memories("NW-1002"))
    target = f"sqlite:///{tmp_path}/copy.db"
    assert main(["--store", target, "import", str(dump)]) == 0
    copy = mc.open_engine(target)
    got = {m.id: m for m in copy.list_memories("NW-1002")}
    assert {r["id"] for r in rows} == set(got)
    one = rows[0]
    assert got[one["id"]].content == one["content"]
    assert got[one["id"]].access_count == len(one["access_times"])


def test_import_is_all_or_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = {
        "patient_id": "NW-9",
        "content": "Patient note",
        "memory_type": "observation",
        "created_at": "2026-01-01T00:00:00+00:00",
    }
    bad = dict(good, content="Another", importance="high")
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in (good, good | {"content": "x2"}, bad)) + "\n")
    url = f"sqlite:///{tmp_path}/i.db"
    assert main(["--store", url, "import", str(f)]) == 2
    err = capsys.readouterr().err
    assert "line 3" in err and "importance" in err and "nothing was imported" in err
    assert mc.open_engine(url).list_patients() == []
    f.write_text(json.dumps(good) + "\n{not json\n")
    assert main(["--store", url, "import", str(f)]) == 2
    assert "line 2: not valid JSON" in capsys.readouterr().err


def test_bad_store_url_exits_cleanly() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memory_core", "--store", "mysql://x", "patients"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "unknown store URL" in proc.stderr and "Traceback" not in proc.stderr


def test_the_embedder_comes_from_the_environment_as_the_readme_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MEMORY_CORE_EMBEDDER sets the CLI's embedder (it was ignored: always minilm)."""
    from memory_core.cli import build_parser

    monkeypatch.setenv("MEMORY_CORE_EMBEDDER", "hashing")
    assert build_parser().parse_args(["show", "NW-1"]).embedder == "hashing"
    monkeypatch.delenv("MEMORY_CORE_EMBEDDER")
    assert build_parser().parse_args(["show", "NW-1"]).embedder == "minilm"
