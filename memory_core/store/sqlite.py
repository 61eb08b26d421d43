"""SQLite store: the embedded default. One file (WAL), numbered migrations, float32 blobs, an
append-only audit table enforced by triggers."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConflictError, EmbeddingMismatchError, NotFoundError, StateError
from ..values import (
    AuditEntry,
    InjectionRecord,
    Memory,
    Status,
    Supersession,
    SupersessionState,
    Tier,
)
from .base import AuditQuery, ChangeSet, MemoryStore, Usage

#: ``json.dumps(x, sort_keys=True)`` without building an encoder per call (the audit writes
#: one or two documents per row): the C encoder ``JSONEncoder.encode`` would build, built once
#: (no circular-reference check: audit documents are plain trees)
_ENCODER = json.JSONEncoder(sort_keys=True)
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # CPython's (not in typeshed)
_C_ENCODER: Callable[[Any, int], Sequence[str]] | None = (
    None
    if _MAKE_C_ENCODER is None
    else _MAKE_C_ENCODER(
        None,
        _ENCODER.default,
        json.encoder.encode_basestring_ascii,
        None,
        _ENCODER.key_separator,
        _ENCODER.item_separator,
        True,
        False,
        True,
    )
)


def _json(doc: Any) -> str:
    """``json.dumps(doc, sort_keys=True)``."""
    if _C_ENCODER is None or not isinstance(doc, dict):
        return _ENCODER.encode(doc)
    return "".join(_C_ENCODER(doc, 0))


# --- time <-> integer microseconds since the epoch (UTC) --------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_us(d: datetime) -> int:
    delta = d - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    from datetime import timedelta

    return _EPOCH + timedelta(microseconds=us)


def _opt_us(d: datetime | None) -> int | None:
    return None if d is None else to_us(d)


def _opt_dt(us: int | None) -> datetime | None:
    return None if us is None else from_us(us)


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


#: Migration N (1-based) is MIGRATIONS[N - 1]: a function returning the SQL that takes the
#: schema from version N - 1 to N. Append new ones; never edit a released one.
MIGRATIONS: list[Callable[[], str]] = [_m001_initial, _m002_usage_version, _m003_drop_fts]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: sqlite3.Connection) -> int:
    """Apply the migrations the file has not seen yet; returns the resulting version."""
    current = int(db.execute("PRAGMA user_version").fetchone()[0])
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


#: Change sets inserting at least this many memories get a larger page cache while applied.
_LARGE_WRITE = 2_000
_LARGE_WRITE_CACHE = -65_536  # KiB (64 MiB), released when the write is done

_MEM_COLS = (
    "id, patient_id, memory_type, content, importance, created_us, last_accessed_us, "
    "access_count, pinned, tier, status, superseded_by, archived_us, source, embedding, "
    "embedding_model, version"
)
_SUP_COLS = (
    "id, patient_id, old_id, new_id, similarity, method, verdict, state, detected_us, "
    "effective_us, ended_us, decided_by, decided_us, version"
)


class SQLiteStore(MemoryStore):
    def __init__(self, path: str) -> None:
        self.path = path
        self.url = f"sqlite:///{path}"
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        self._lock = threading.RLock()
        with self._lock:
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA busy_timeout = 30000")
            if path != ":memory:":
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")
            migrate(self._db)
            self._cache_size = int(self._db.execute("PRAGMA cache_size").fetchone()[0])

    # --- helpers -----------------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            else:
                self._db.execute("COMMIT")

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    @staticmethod
    def _memory(row: Sequence[Any]) -> Memory:
        return Memory(
            id=row[0],
            patient_id=row[1],
            memory_type=row[2],
            content=row[3],
            importance=float(row[4]),
            created_at=from_us(row[5]),
            last_accessed=from_us(row[6]),
            access_count=int(row[7]),
            pinned=bool(row[8]),
            tier=Tier(row[9]),
            status=Status(row[10]),
            superseded_by=row[11],
            archived_at=_opt_dt(row[12]),
            source=row[13],
            embedding=np.frombuffer(row[14], dtype=np.float32),
            embedding_model=row[15],
            version=int(row[16]),
        )

    @staticmethod
    def _supersession(row: Sequence[Any]) -> Supersession:
        return Supersession(
            id=row[0],
            patient_id=row[1],
            old_id=row[2],
            new_id=row[3],
            similarity=float(row[4]),
            method=row[5],
            verdict=row[6],
            state=SupersessionState(row[7]),
            detected_at=from_us(row[8]),
            effective_at=_opt_dt(row[9]),
            ended_at=_opt_dt(row[10]),
            decided_by=row[11],
            decided_at=_opt_dt(row[12]),
            version=int(row[13]),
        )

    # --- embedding model -----------------------------------------------------------------------
    def embedding_model(self) -> tuple[str, int] | None:
        rows = self._read("SELECT value FROM meta WHERE key = 'embedding_model'")
        if not rows:
            return None
        data = json.loads(rows[0][0])
        return str(data["model_id"]), int(data["dimensions"])

    def bind_embedding_model(self, model_id: str, dimensions: int) -> None:
        with self._tx() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO meta (key, value) VALUES ('embedding_model', ?)",
                    (json.dumps({"model_id": model_id, "dimensions": dimensions}),),
                )
                return
            data = json.loads(row[0])
            if data["model_id"] != model_id or int(data["dimensions"]) != dimensions:
                raise EmbeddingMismatchError(
                    f"store {self.url} holds vectors of {data['model_id']} "
                    f"({data['dimensions']} dimensions); the engine's embedder is {model_id} "
                    f"({dimensions} dimensions). Use the same embedder or a new store."
                )

    # --- reads ---------------------------------------------------------------------------------
    def get_memory(self, memory_id: str) -> Memory:
        rows = self._read(f"SELECT {_MEM_COLS} FROM memories WHERE id = ?", (memory_id,))
        if not rows:
            raise NotFoundError("memory", memory_id)
        return self._memory(rows[0])

    def get_memories(self, memory_ids: Sequence[str]) -> list[Memory]:
        if not memory_ids:
            return []
        marks = ",".join("?" * len(memory_ids))
        rows = self._read(f"SELECT {_MEM_COLS} FROM memories WHERE id IN ({marks})", memory_ids)
        by_id = {r[0]: self._memory(r) for r in rows}
        return [by_id[i] for i in memory_ids if i in by_id]

    def list_memories(self, patient_id: str) -> list[Memory]:
        rows = self._read(
            f"SELECT {_MEM_COLS} FROM memories WHERE patient_id = ? ORDER BY created_us, rowid",
            (patient_id,),
        )
        return [self._memory(r) for r in rows]

    def list_patients(self) -> list[str]:
        return [
            r[0]
            for r in self._read(
                "SELECT patient_id FROM patients WHERE patient_id IN "
                "(SELECT DISTINCT patient_id FROM memories) ORDER BY patient_id"
            )
        ]

    def patient_version(self, patient_id: str) -> int:
        return self.versions(patient_id)[0]

    def versions(self, patient_id: str) -> tuple[int, int]:
        rows = self._read(
            "SELECT version, usage_version FROM patients WHERE patient_id = ?", (patient_id,)
        )
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def usage(self, patient_id: str) -> Usage:
        with self._lock:  # one consistent read of both tables
            self._db.execute("BEGIN")
            try:
                rows = self._db.execute(
                    "SELECT id, access_count, last_accessed_us FROM memories WHERE patient_id = ?",
                    (patient_id,),
                ).fetchall()
                sess = self._db.execute(
                    "SELECT at_us FROM sessions WHERE patient_id = ? ORDER BY at_us",
                    (patient_id,),
                ).fetchall()
            finally:
                self._db.execute("COMMIT")
        return Usage(
            ids=[r[0] for r in rows],
            access_count=np.array([r[1] for r in rows], dtype=np.float64),
            last_accessed_s=np.array([r[2] for r in rows], dtype=np.float64) / 1e6,
            sessions_s=np.array([r[0] for r in sess], dtype=np.float64) / 1e6,
        )

    def access_events(self, patient_id: str) -> dict[str, npt.NDArray[np.float64]]:
        out: dict[str, list[int]] = {}
        for mid, at in self._read(
            "SELECT memory_id, at_us FROM accesses WHERE patient_id = ? ORDER BY at_us",
            (patient_id,),
        ):
            out.setdefault(mid, []).append(at)
        return {k: np.array(v, dtype=np.float64) / 1e6 for k, v in out.items()}

    def get_supersession(self, supersession_id: str) -> Supersession:
        rows = self._read(f"SELECT {_SUP_COLS} FROM supersessions WHERE id = ?", (supersession_id,))
        if not rows:
            raise NotFoundError("supersession", supersession_id)
        return self._supersession(rows[0])

    def list_supersessions(
        self, patient_id: str | None = None, state: str | None = None
    ) -> list[Supersession]:
        sql = f"SELECT {_SUP_COLS} FROM supersessions WHERE 1 = 1"
        params: list[Any] = []
        if patient_id is not None:
            sql += " AND patient_id = ?"
            params.append(patient_id)
        if state is not None:
            sql += " AND state = ?"
            params.append(state)
        sql += " ORDER BY detected_us, id"
        return [self._supersession(r) for r in self._read(sql, params)]

    def access_times(self, patient_id: str) -> dict[str, list[datetime]]:
        out: dict[str, list[datetime]] = {}
        for mid, at in self._read(
            "SELECT memory_id, at_us FROM accesses WHERE patient_id = ? ORDER BY at_us",
            (patient_id,),
        ):
            out.setdefault(mid, []).append(from_us(at))
        return out

    def session_times(self, patient_id: str) -> list[datetime]:
        return [
            from_us(r[0])
            for r in self._read(
                "SELECT at_us FROM sessions WHERE patient_id = ? ORDER BY at_us", (patient_id,)
            )
        ]

    def list_injections(self, patient_id: str, limit: int = 100) -> list[InjectionRecord]:
        rows = self._read(
            "SELECT id, at_us, patient_id, query, items, tokens, text FROM injections "
            "WHERE patient_id = ? ORDER BY at_us DESC LIMIT ?",
            (patient_id, limit),
        )
        return [
            InjectionRecord(
                id=r[0],
                at=from_us(r[1]),
                patient_id=r[2],
                query=r[3],
                items=tuple((str(a), float(b)) for a, b in json.loads(r[4])),
                tokens=int(r[5]),
                text=r[6],
            )
            for r in rows
        ]

    def list_audit(self, query: AuditQuery) -> list[AuditEntry]:
        sql = (
            "SELECT seq, at_us, actor, action, entity, entity_id, patient_id, before, after "
            "FROM audit WHERE 1 = 1"
        )
        params: list[Any] = []
        for col, val in (
            ("patient_id", query.patient_id),
            ("actor", query.actor),
            ("action", query.action),
            ("entity_id", query.entity_id),
        ):
            if val is not None:
                sql += f" AND {col} = ?"
                params.append(val)
        sql += " ORDER BY seq DESC LIMIT ?"
        params.append(query.limit)
        return [
            AuditEntry(
                seq=int(r[0]),
                at=from_us(r[1]),
                actor=r[2],
                action=r[3],
                entity=r[4],
                entity_id=r[5],
                patient_id=r[6],
                before=json.loads(r[7]) if r[7] else None,
                after=json.loads(r[8]) if r[8] else None,
            )
            for r in self._read(sql, params)
        ]

    def load_policy(self) -> dict[str, Any] | None:
        rows = self._read("SELECT body FROM policies ORDER BY seq DESC LIMIT 1")
        return json.loads(rows[0][0]) if rows else None

    def count_memories(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM memories")[0][0])

    # --- writes --------------------------------------------------------------------------------
    @staticmethod
    def _mem_params(m: Memory) -> tuple[Any, ...]:
        return (
            m.id,
            m.patient_id,
            m.memory_type,
            m.content,
            float(m.importance),
            to_us(m.created_at),
            to_us(m.last_accessed),
            int(m.access_count),
            int(m.pinned),
            m.tier.value,
            m.status.value,
            m.superseded_by,
            _opt_us(m.archived_at),
            m.source,
            np.ascontiguousarray(m.embedding, dtype=np.float32).tobytes(),
            m.embedding_model,
            int(m.version),
        )

    @staticmethod
    def _sup_params(s: Supersession) -> tuple[Any, ...]:
        return (
            s.id,
            s.patient_id,
            s.old_id,
            s.new_id,
            float(s.similarity),
            s.method,
            s.verdict,
            s.state.value,
            to_us(s.detected_at),
            _opt_us(s.effective_at),
            _opt_us(s.ended_at),
            s.decided_by,
            _opt_us(s.decided_at),
            int(s.version),
        )

    @staticmethod
    def _audit_params(a: AuditEntry) -> tuple[Any, ...]:
        return (
            to_us(a.at),
            a.actor,
            a.action,
            a.entity,
            a.entity_id,
            a.patient_id,
            None if a.before is None else _json(a.before),
            None if a.after is None else _json(a.after),
        )

    def apply(self, changes: ChangeSet) -> None:
        if len(changes.insert_memories) < _LARGE_WRITE:
            with self._tx() as db:
                self._apply(db, changes)
            return
        # a large write: a page cache big enough that index pages are not spilled to the WAL
        # (and rewritten there) part-way through; back to the default afterwards
        with self._lock:
            self._db.execute(f"PRAGMA cache_size = {_LARGE_WRITE_CACHE}")
            try:
                with self._tx() as db:
                    self._apply(db, changes)
            finally:
                self._db.execute(f"PRAGMA cache_size = {self._cache_size}")

    def _apply(self, db: sqlite3.Connection, changes: ChangeSet) -> None:
        # row parameters are generated as each row is bound (not listed first): a bulk add
        # then never holds every blob copy and parameter tuple at once
        if changes.insert_memories:
            try:
                db.executemany(
                    f"INSERT INTO memories ({_MEM_COLS}) VALUES ({','.join('?' * 17)})",
                    map(self._mem_params, changes.insert_memories),
                )
            except sqlite3.IntegrityError as exc:
                raise ConflictError(f"memory id already exists: {exc}") from exc
        if changes.update_memories:
            sql = (
                "UPDATE memories SET memory_type = ?, content = ?, importance = ?, pinned = ?, "
                "tier = ?, status = ?, superseded_by = ?, archived_us = ?, source = ?, "
                "version = ? WHERE id = ? AND version = ?"
            )
            params = [
                (
                    m.memory_type,
                    m.content,
                    float(m.importance),
                    int(m.pinned),
                    m.tier.value,
                    m.status.value,
                    m.superseded_by,
                    _opt_us(m.archived_at),
                    m.source,
                    expected + 1,
                    m.id,
                    expected,
                )
                for m, expected in changes.update_memories
            ]
            db.execute("SAVEPOINT updates")
            if db.executemany(sql, params).rowcount != len(params):  # summed over the rows
                # some memory moved past its expected version: redo one by one to name it
                db.execute("ROLLBACK TO updates")
                for (m, expected), p in zip(changes.update_memories, params, strict=True):
                    if db.execute(sql, p).rowcount != 1:
                        raise ConflictError(
                            f"memory {m.id} was changed by someone else (expected version "
                            f"{expected}); reload and try again"
                        )
            db.execute("RELEASE updates")
        if changes.insert_supersessions:
            try:
                db.executemany(
                    f"INSERT INTO supersessions ({_SUP_COLS}) VALUES ({','.join('?' * 14)})",
                    [self._sup_params(s) for s in changes.insert_supersessions],
                )
            except sqlite3.IntegrityError as exc:
                raise ConflictError(f"supersession already recorded: {exc}") from exc
        for s, expected in changes.update_supersessions:
            cur = db.execute(
                "UPDATE supersessions SET state = ?, effective_us = ?, ended_us = ?, "
                "decided_by = ?, decided_us = ?, version = ? WHERE id = ? AND version = ?",
                (
                    s.state.value,
                    _opt_us(s.effective_at),
                    _opt_us(s.ended_at),
                    s.decided_by,
                    _opt_us(s.decided_at),
                    expected + 1,
                    s.id,
                    expected,
                ),
            )
            if cur.rowcount != 1:
                raise ConflictError(
                    f"supersession {s.id} was changed by someone else; reload and try again"
                )
        for m, expected in changes.delete_memories:
            cur = db.execute(
                "DELETE FROM memories WHERE id = ? AND version = ? AND status = 'archived'",
                (m.id, expected),
            )
            if cur.rowcount != 1:
                raise ConflictError(f"memory {m.id} changed since the purge was planned")
        if changes.accesses:
            db.executemany(
                "INSERT INTO accesses (memory_id, patient_id, at_us) VALUES (?, ?, ?)",
                ((m, p, to_us(at)) for m, p, at in changes.accesses),
            )
        if changes.sessions:
            db.executemany(
                "INSERT INTO sessions (patient_id, at_us) VALUES (?, ?)",
                [(p, to_us(at)) for p, at in changes.sessions],
            )
        if changes.audit:
            db.executemany(
                "INSERT INTO audit (at_us, actor, action, entity, entity_id, patient_id, "
                "before, after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                map(self._audit_params, changes.audit),
            )
        if changes.policy is not None:
            db.execute(
                "INSERT INTO policies (at_us, body) VALUES (?, ?)",
                (to_us(datetime.now(UTC)), json.dumps(changes.policy, sort_keys=True)),
            )
        self._bump(db, changes.patients())

    @staticmethod
    def _bump(db: sqlite3.Connection, patients: set[str], content: bool = True) -> None:
        if not patients:
            return
        if content:
            db.executemany(
                "INSERT INTO patients (patient_id, version, usage_version) VALUES (?, 1, 1) "
                "ON CONFLICT (patient_id) DO UPDATE SET version = version + 1, "
                "usage_version = usage_version + 1",
                [(p,) for p in sorted(patients)],
            )
        else:
            db.executemany(
                "INSERT INTO patients (patient_id, version, usage_version) VALUES (?, 0, 1) "
                "ON CONFLICT (patient_id) DO UPDATE SET usage_version = usage_version + 1",
                [(p,) for p in sorted(patients)],
            )

    def record_access(
        self,
        patient_id: str,
        memory_ids: Sequence[str],
        at: datetime,
        promote_after: int,
        injection: InjectionRecord | None,
        actor: str,
    ) -> list[str]:
        at_us = to_us(at)
        promoted: list[str] = []
        with self._tx() as db:
            for mid in memory_ids:
                row = db.execute(
                    "UPDATE memories SET access_count = access_count + 1, "
                    "last_accessed_us = MAX(last_accessed_us, ?) "
                    "WHERE id = ? AND patient_id = ? RETURNING access_count, tier",
                    (at_us, mid, patient_id),
                ).fetchone()
                if row is None:
                    raise NotFoundError("memory", mid)
                if row[1] == Tier.SHORT_TERM.value and int(row[0]) >= promote_after:
                    promoted.append(mid)
            db.executemany(
                "INSERT INTO accesses (memory_id, patient_id, at_us) VALUES (?, ?, ?)",
                [(mid, patient_id, at_us) for mid in memory_ids],
            )
            db.execute(
                "INSERT INTO sessions (patient_id, at_us) VALUES (?, ?)", (patient_id, at_us)
            )
            if injection is not None:
                db.execute(
                    "INSERT INTO injections (id, patient_id, at_us, query, items, tokens, text) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        injection.id,
                        injection.patient_id,
                        at_us,
                        injection.query,
                        json.dumps([list(x) for x in injection.items]),
                        injection.tokens,
                        injection.text,
                    ),
                )
            for mid in promoted:
                db.execute(
                    "UPDATE memories SET tier = 'long_term', version = version + 1 WHERE id = ?",
                    (mid,),
                )
                db.execute(
                    "INSERT INTO audit (at_us, actor, action, entity, entity_id, patient_id, "
                    "before, after) VALUES (?, ?, 'promote', 'memory', ?, ?, ?, ?)",
                    (
                        at_us,
                        actor,
                        mid,
                        patient_id,
                        json.dumps({"tier": "short_term"}),
                        json.dumps({"tier": "long_term"}),
                    ),
                )
            self._bump(db, {patient_id}, content=bool(promoted))
        return promoted

    def close(self) -> None:
        with self._lock:
            self._db.close()
