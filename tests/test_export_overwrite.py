"""Issue 34, finding 1: `export --out` overwrote any file -- the live store included (`export
--out s.db` left the store a JSON Lines file) and another store (exit 0). Now the export is
written to a temporary file beside the target and renamed; an existing path is refused without
--force; the store's own file, its -wal and -shm, and any SQLite database never."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.cli import main
from memory_core.embedding import HashingEmbedder


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    eng = mc.open_engine(f"sqlite:///{path}", HashingEmbedder())
    eng.add_memories(
        [
            {"patient_id": "NW-1", "content": f"Patient note {i}", "memory_type": "observation"}
            for i in range(40)
        ]
    )
    eng.store.close()
    return path


def _export(store: Path, *args: str) -> int:
    return main(["--store", f"sqlite:///{store}", "--embedder", "hashing", "export", *args])


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


def _memories(store: Path) -> int:
    eng = mc.open_engine(f"sqlite:///{store}", HashingEmbedder(), create=False)
    try:
        return len(eng.list_memories("NW-1"))
    finally:
        eng.store.close()


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
@pytest.mark.parametrize("force", [False, True])
def test_export_never_writes_over_the_store_itself(
    store: Path, suffix: str, force: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    target = Path(f"{store}{suffix}")
    rc = _export(store, "--out", str(target), *(["--force"] if force else []))
    err = _one_line(capsys.readouterr().err)
    assert rc == 2 and "the store's own" in err
    assert not target.exists() or not target.read_bytes().startswith(b'{"')
    assert _memories(store) == 40  # before: the store became a JSON Lines file


def test_export_through_another_name_of_the_store_is_refused(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "alias.db"
    link.symlink_to(store)
    rc = _export(store, "--out", str(link), "--force")
    assert rc == 2 and "the store's own" in _one_line(capsys.readouterr().err)
    assert _memories(store) == 40


def test_export_refuses_another_store_even_with_force(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.db"
    eng = mc.open_engine(f"sqlite:///{other}", HashingEmbedder())
    eng.add_memory("NW-2", "Patient is allergic to latex", "allergy")
    eng.store.close()
    for extra in ([], ["--force"]):
        rc = _export(store, "--out", str(other), *extra)
        assert rc == 2 and "database" in _one_line(capsys.readouterr().err)
        assert _memories(other) == 0 and mc.open_engine(
            f"sqlite:///{other}", HashingEmbedder()
        ).list_patients() == ["NW-2"]  # before: replaced, exit 0


def test_export_refuses_an_existing_file_without_force(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "notes.jsonl"
    out.write_text("my own notes\n")
    assert _export(store, "--out", str(out)) == 2
    err = _one_line(capsys.readouterr().err)
    assert "exists" in err and "--force" in err
    assert out.read_text() == "my own notes\n"
    assert _export(store, "--out", str(out), "--force") == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 40


def test_export_writes_a_temporary_file_and_renames_it(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure part-way leaves the target as it was and no temporary file behind."""
    out = tmp_path / "export.jsonl"
    out.write_text("previous export\n")
    import memory_core.cli as cli

    calls = {"n": 0}
    real = cli._export_row

    def failing(*a: object, **k: object) -> str:
        calls["n"] += 1
        if calls["n"] == 20:
            raise OSError(28, "No space left on device")
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "_export_row", failing)
    assert _export(store, "--out", str(out), "--force") == 2
    assert out.read_text() == "previous export\n"
    store_files = {"s.db", "s.db-wal", "s.db-shm"}
    assert sorted(set(os.listdir(tmp_path)) - store_files) == ["export.jsonl"]
    monkeypatch.undo()
    fresh = tmp_path / "fresh.jsonl"
    assert _export(store, "--out", str(fresh)) == 0
    assert len(fresh.read_text().splitlines()) == 40
    assert sorted(set(os.listdir(tmp_path)) - store_files) == ["export.jsonl", "fresh.jsonl"]
