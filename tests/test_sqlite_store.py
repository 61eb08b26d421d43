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
    assert store._read("PRAGMA user_version")[0][0] == sq.SCHEMA_VERSION == 9
    assert store.versions("NW-1") == (7, 0)  # the new column, old data kept
    tables = {r[0] for r in store._read("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "memories_fts" not in tables and "memories" in tables  # 3: keyword index in memory
    indexes = {r[0] for r in store._read("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "audit_patient_action" in indexes  # 5: one patient's keep decisions by index
    columns = {r[1] for r in store._read("PRAGMA table_info(memories)")}
    assert "facts" in columns  # 6: each memory's clinical facts
    assert "confirmations" in columns  # 7: each memory's confirmations
    store.close()


def test_memories_stored_before_facts_are_read_from_their_text(tmp_path: Path) -> None:
    """Schema 6 added each memory's clinical facts and each supersession's rule and evidence:
    a file of schema 5 upgrades in place, its memories' facts read from their text and its
    supersessions with no rule recorded."""
    import numpy as np

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    script = "".join(m() for m in sq.MIGRATIONS[:5])
    db.executescript(f"BEGIN;{script}PRAGMA user_version = 5;COMMIT;")
    blob = np.ones(4, dtype=np.float32).tobytes()
    db.execute(
        "INSERT INTO memories (id, patient_id, memory_type, content, importance, created_us, "
        "last_accessed_us, tier, status, embedding, embedding_model) VALUES "
        "('m1', 'NW-1', 'medication', 'Metformin 500 mg BID', 7, 0, 0, 'long_term', 'active', "
        "?, 'test')",
        (blob,),
    )
    db.execute("INSERT INTO patients (patient_id, version) VALUES ('NW-1', 1)")
    db.execute(
        "INSERT INTO supersessions (id, patient_id, old_id, new_id, similarity, method, "
        "verdict, state, detected_us) VALUES ('s1', 'NW-1', 'm0', 'm1', 0.9, 'rules', "
        "'updates', 'auto', 0)"
    )
    db.commit()
    db.close()
    store = sq.SQLiteStore(str(path))
    (m,) = store.list_memories("NW-1")
    assert m.facts is not None and "drug:metformin" in m.facts.keys
    (sup,) = store.list_supersessions("NW-1")
    assert (sup.rule, sup.evidence) == ("", "")
    store.close()


def test_memories_stored_before_confirmations_read_as_never_confirmed(tmp_path: Path) -> None:
    """Schema 7 added each memory's confirmations: a file of schema 6 upgrades in place, its
    memories never confirmed (their age counts from creation, as before), and a confirmation
    written after the upgrade is kept."""
    from datetime import UTC, datetime

    import numpy as np

    import memory_core as mc

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    script = "".join(m() for m in sq.MIGRATIONS[:6])
    db.executescript(f"BEGIN;{script}PRAGMA user_version = 6;COMMIT;")
    blob = np.ones(4, dtype=np.float32).tobytes()
    db.execute(
        "INSERT INTO memories (id, patient_id, memory_type, content, importance, created_us, "
        "last_accessed_us, tier, status, embedding, embedding_model) VALUES "
        "('m1', 'NW-1', 'condition', 'Essential hypertension', 7, 0, 0, 'long_term', 'active', "
        "?, 'test')",
        (blob,),
    )
    db.execute("INSERT INTO patients (patient_id, version) VALUES ('NW-1', 1)")
    db.commit()
    db.close()
    store = sq.SQLiteStore(str(path))
    (m,) = store.list_memories("NW-1")
    assert m.confirmations == () and m.confirmed_at is None
    at = datetime(1971, 1, 1, tzinfo=UTC)
    grown = m.with_confirmation(mc.Confirmation(at, mc.ConfirmationKind.RECORD, "fhir:x"))
    from memory_core.store.base import AuditQuery, ChangeSet

    store.apply(ChangeSet(update_memories=[(grown, m.version)], actor="t"))
    assert store.get_memory("m1").confirmed_at == at
    (row,) = store.list_audit(AuditQuery(patient_id="NW-1"))  # written by the store
    assert row.action == "confirm_memory" and row.actor == "t"
    assert row.after is not None and row.after["confirmation"]["ref"] == "fhir:x"
    store.close()


def test_injections_recorded_before_agents_were_named_read_as_no_agent(tmp_path: Path) -> None:
    """Schema 9 added the agent an injection was given to (issue 33): a file of schema 8
    upgrades in place and its injections name no agent."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    script = "".join(m() for m in sq.MIGRATIONS[:8])
    db.executescript(f"BEGIN;{script}PRAGMA user_version = 8;COMMIT;")
    db.execute(
        "INSERT INTO injections (id, patient_id, at_us, query, items, tokens, text) VALUES "
        "('inj_1', 'NW-1', 0, 'allergies?', '[[\"m1\", 0.5]]', 3, '1. x')"
    )
    db.commit()
    db.close()
    store = sq.SQLiteStore(str(path))
    (inj,) = store.list_injections("NW-1")
    assert (inj.id, inj.query, inj.items, inj.agent) == (
        "inj_1",
        "allergies?",
        (("m1", 0.5),),
        None,
    )
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


def test_audit_documents_are_stored_as_sorted_key_json(tmp_path: Path) -> None:
    import json
    from datetime import UTC, datetime

    from memory_core.policy import EnginePolicy
    from memory_core.store.base import ChangeSet

    store = sq.SQLiteStore(str(tmp_path / "a.db"))
    after = {"z": 1, "content": 'Patiënt \u2028 "quoted"', "a": [1.5, None, True], "n": {"y": 1e-7}}
    at = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    store.apply(ChangeSet(policy=after, actor="dr-a", at=at))  # the store writes the row
    before = json.loads(json.dumps(EnginePolicy().to_dict()))  # before any saved policy
    raw = sqlite3.connect(tmp_path / "a.db").execute("SELECT before, after FROM audit").fetchone()
    assert raw == (json.dumps(before, sort_keys=True), json.dumps(after, sort_keys=True))
    (got,) = store.list_audit(mc.store.base.AuditQuery())
    assert (got.before, got.after, got.at, got.action) == (before, after, at, "policy_change")
    store.close()


def test_a_large_write_gets_a_bigger_page_cache_only_while_it_is_applied(tmp_path: Path) -> None:
    from memory_core.embedding import HashingEmbedder

    eng = mc.open_engine(f"sqlite:///{tmp_path}/big.db", HashingEmbedder())
    store = eng.store
    assert isinstance(store, sq.SQLiteStore)
    default = store._db.execute("PRAGMA cache_size").fetchone()[0]
    vec = [1.0] * eng.embedder.dimensions
    recs = [
        {"patient_id": f"P-{k % 3}", "content": f"Note {k}", "memory_type": "observation",
         "embedding": vec}
        for k in range(sq._LARGE_WRITE)
    ]  # fmt: skip
    eng.add_memories(recs, detect=False)
    assert store.count_memories() == sq._LARGE_WRITE
    assert store._db.execute("PRAGMA cache_size").fetchone()[0] == default
    from memory_core.store.base import ChangeSet

    again = [m for p in ("P-0", "P-1", "P-2") for m in store.list_memories(p)]
    with pytest.raises(mc.ConflictError):  # ids exist: refused as a whole, cache reset too
        store.apply(ChangeSet(insert_memories=again, actor="dr-a"))
    assert store._db.execute("PRAGMA cache_size").fetchone()[0] == default
    assert store.count_memories() == sq._LARGE_WRITE
    eng.store.close()
