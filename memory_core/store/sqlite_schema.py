"""The SQLite store's schema: numbered migrations, applied in order and tracked by
``PRAGMA user_version``, and the check that a file is a memory_core store at all (another
application's SQLite file is refused before anything is written to it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..errors import NotAStoreError, StateError

# --- migrations: numbered functions, applied in order, tracked by PRAGMA user_version ---------


def _m001_initial() -> str:
    return """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE patients (
            patient_id TEXT PRIMARY KEY,
            version INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE memories (
            id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL,
            memory_type TEXT NOT NULL,
            content TEXT NOT NULL,
            importance REAL NOT NULL CHECK (importance >= 1 AND importance <= 10),
            created_us INTEGER NOT NULL,
            last_accessed_us INTEGER NOT NULL,
            access_count INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
            pinned INTEGER NOT NULL DEFAULT 0,
            tier TEXT NOT NULL CHECK (tier IN ('short_term', 'long_term')),
            status TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'archived')),
            superseded_by TEXT,
            archived_us INTEGER,
            source TEXT,
            embedding BLOB NOT NULL,
            embedding_model TEXT NOT NULL,
            version INTEGER NOT NULL DEFAULT 1
        );
        CREATE INDEX memories_patient ON memories (patient_id, created_us);
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            pk, content, memory_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE TABLE supersessions (
            id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL,
            old_id TEXT NOT NULL,  -- kept after a purge: the audit log holds the content
            new_id TEXT NOT NULL,
            similarity REAL NOT NULL,
            method TEXT NOT NULL,
            verdict TEXT NOT NULL,
            state TEXT NOT NULL,
            detected_us INTEGER NOT NULL,
            effective_us INTEGER,
            ended_us INTEGER,
            decided_by TEXT,
            decided_us INTEGER,
            version INTEGER NOT NULL DEFAULT 1,
            UNIQUE (old_id, new_id)
        );
        CREATE INDEX supersessions_patient ON supersessions (patient_id, state);
        CREATE TABLE accesses (
            memory_id TEXT NOT NULL,
            patient_id TEXT NOT NULL,
            at_us INTEGER NOT NULL
        );
        CREATE INDEX accesses_patient ON accesses (patient_id, at_us);
        CREATE TABLE sessions (patient_id TEXT NOT NULL, at_us INTEGER NOT NULL);
        CREATE INDEX sessions_patient ON sessions (patient_id, at_us);
        CREATE TABLE injections (
            id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL,
            at_us INTEGER NOT NULL,
            query TEXT NOT NULL,
            items TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX injections_patient ON injections (patient_id, at_us);
        CREATE TABLE audit (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at_us INTEGER NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            entity TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            patient_id TEXT,
            before TEXT,
            after TEXT
        );
        CREATE INDEX audit_patient ON audit (patient_id, seq);
        CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
            BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
        CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
            BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
        CREATE TABLE policies (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at_us INTEGER NOT NULL,
            body TEXT NOT NULL
        );
        """


def _m002_usage_version() -> str:
    """Accesses and sessions get their own version, so an agent's own access does not make
    every cached patient snapshot stale."""
    return """
        ALTER TABLE patients ADD COLUMN usage_version INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX accesses_memory ON accesses (memory_id, at_us);
        """


def _m003_drop_fts() -> str:
    """The keyword half of retrieval moved into the engine (``memory_core.lexical``, BM25 over
    the patient's cached snapshot, the same on every store): the FTS5 table is no longer read,
    and keeping it cost a second insert per memory."""
    return "DROP TABLE memories_fts;"


#: ``PRAGMA application_id`` of a memory_core file (ASCII "MCmc"), set by migration 4
APPLICATION_ID = 0x4D436D63


def _m004_tombstones_and_audit_replace() -> str:
    """Purged memory ids are tombstoned (never reused), ``INSERT OR REPLACE`` / ``REPLACE INTO``
    cannot overwrite an audit row (a BEFORE INSERT trigger: the conflict path of REPLACE does
    not fire the delete trigger unless ``recursive_triggers`` is on), and the file says it is
    memory_core's (``application_id``)."""
    return f"""
        CREATE TABLE purged (
            id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL,
            purged_us INTEGER NOT NULL
        );
        CREATE TRIGGER purged_no_update BEFORE UPDATE ON purged
            BEGIN SELECT RAISE(ABORT, 'purged ids are permanent'); END;
        CREATE TRIGGER purged_no_delete BEFORE DELETE ON purged
            BEGIN SELECT RAISE(ABORT, 'purged ids are permanent'); END;
        CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit
            WHEN EXISTS (SELECT 1 FROM audit WHERE seq = NEW.seq)
            BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
        PRAGMA application_id = {APPLICATION_ID};
        """


def _m005_audit_by_action() -> str:
    """The audit entries of one patient and one action found by an index (the section reads a
    patient's "keep" decisions on every call that shows a possibly-stale flag: without it, a
    scan of every audit row of the patient, 18 ms at 50,000 memories)."""
    return "CREATE INDEX audit_patient_action ON audit (patient_id, action, seq);"


def _m006_facts_and_rules() -> str:
    """Each memory's clinical facts (JSON; read from the text when NULL) and each
    supersession's rule and evidence (empty on records made before)."""
    return """
        ALTER TABLE memories ADD COLUMN facts TEXT;
        ALTER TABLE supersessions ADD COLUMN rule TEXT NOT NULL DEFAULT '';
        ALTER TABLE supersessions ADD COLUMN evidence TEXT NOT NULL DEFAULT '';
    """


def _m007_confirmations() -> str:
    """Each memory's confirmations (JSON, oldest first; NULL: never confirmed): the age of the
    monthly decay models counts from the latest one (domain.md, "Age counts from the last
    confirmation")."""
    return "ALTER TABLE memories ADD COLUMN confirmations TEXT;"


def _m008_audit_by_record() -> str:
    """The audit rows of one record, newest moment first: the store bounds every change's
    moment by its last write of the records it changes (issue 25), and the dashboard lists a
    record's history."""
    return "CREATE INDEX audit_entity ON audit (entity_id, at_us);"


def _m009_injection_agent() -> str:
    """Each injection names the agent principal that was told (issue 33: the MCP server and
    the HTTP API act as one named agent); NULL on the records made before."""
    return "ALTER TABLE injections ADD COLUMN agent TEXT;"


#: Migration N (1-based) is MIGRATIONS[N - 1]: a function returning the SQL that takes the
#: schema from version N - 1 to N. Append new ones; never edit a released one.
MIGRATIONS: list[Callable[[], str]] = [
    _m001_initial,
    _m002_usage_version,
    _m003_drop_fts,
    _m004_tombstones_and_audit_replace,
    _m005_audit_by_action,
    _m006_facts_and_rules,
    _m007_confirmations,
    _m008_audit_by_record,
    _m009_injection_agent,
]
SCHEMA_VERSION = len(MIGRATIONS)


def check_ours(db: sqlite3.Connection, where: str) -> int:
    """The file's schema version, or NotAStoreError when it is another application's SQLite
    file (another application id, or tables but no memory_core schema version)."""
    current = int(db.execute("PRAGMA user_version").fetchone()[0])
    app = int(db.execute("PRAGMA application_id").fetchone()[0])
    if app not in (0, APPLICATION_ID):
        raise NotAStoreError(
            f"{where} is another application's SQLite file (application id {app:#x}), not a "
            "memory_core store; nothing was written"
        )
    tables = [
        str(t[0])
        for t in db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name"
        ).fetchall()
    ]
    # version 0 with tables, or a version but none of our tables (files of versions 1-3
    # predate the application id but always have these)
    foreign = bool(tables) if current == 0 else app == 0 and not {"audit", "meta"} <= set(tables)
    if foreign:
        names = ", ".join(tables[:3]) + (", ..." if len(tables) > 3 else "")
        raise NotAStoreError(
            f"{where} is an SQLite file of another application (tables {names or 'none'}, "
            f"schema version {current}), not a memory_core store; nothing was written"
        )
    return current


def migrate(db: sqlite3.Connection, where: str = "the database") -> int:
    """Apply the migrations the file has not seen yet; returns the resulting version."""
    current = check_ours(db, where)
    if current > SCHEMA_VERSION:
        raise StateError(
            f"database schema {current} is newer than this code ({SCHEMA_VERSION}); upgrade"
        )
    for number in range(current, SCHEMA_VERSION):
        script = MIGRATIONS[number]()
        try:
            db.executescript(
                f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number + 1};\nCOMMIT;"
            )
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    return SCHEMA_VERSION
