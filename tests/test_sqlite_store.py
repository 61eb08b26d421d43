"""SQLite specifics: numbered migrations, refusal of a newer schema, float32 blobs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.store import sqlite as sq


def test_migrations_upgrade_an_old_file_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(f"BEGIN;{sq.MIGRATIONS[0]()}PRAGMA user_version = 1;COMMIT;")
    db.execute("INSERT INTO patients (patient_id, version) VALUES ('NW-1', 7)")
    db.close()
    store = sq.SQLiteStore(str(path))
    assert store._read("PRAGMA user_version")[0][0] == sq.SCHEMA_VERSION == 3
    assert store.versions("NW-1") == (7, 0)  # the new column, old data kept
    tables = {r[0] for r in store._read("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "memories_fts" not in tables and "memories" in tables  # 3: keyword index in memory
    store.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    sq.SQLiteStore(str(path)).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {sq.SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(mc.StateError, match="newer than this code"):
        sq.SQLiteStore(str(path))


def test_microsecond_timestamps_round_trip() -> None:
    from datetime import UTC, datetime

    d = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
    assert sq.from_us(sq.to_us(d)) == d
