"""SQLite store: the embedded default. One file (WAL), numbered migrations, float32 blobs, an
append-only audit table enforced by triggers."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import (
    ConflictError,
    NotAStoreError,
    NotFoundError,
    StaleSnapshotError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreNotFoundError,
    StoreProblem,
    StoreReadOnlyError,
    ValidationError,
)
from ..values import AuditAction, AuditEntry, InjectionRecord, Memory, Supersession, Tier
from .audit import Derived, Key, derive, promotion_entries, touched
from .base import AccessCount, AuditQuery, ChangeSet, MemoryStore, Usage
from .codec import (
    MEMORY_FIELDS,
    MEMORY_UPDATABLE,
    SUPERSESSION_FIELDS,
    SUPERSESSION_UPDATABLE,
    audit_from_record,
    check_embedding_binding,
    dumps,
    from_us,
    injection_from_record,
    injection_items,
    memory_from_row,
    memory_row,
    memory_state_json,
    seconds,
    supersession_from_row,
    supersession_row,
    to_us,
)
from .sqlite_schema import MIGRATIONS, SCHEMA_VERSION, check_ours, migrate

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteStore", "from_us", "migrate", "to_us"]

#: Change sets inserting at least this many memories get a larger page cache while applied.
_LARGE_WRITE = 2_000
_LARGE_WRITE_CACHE = -65_536  # KiB (64 MiB), released when the write is done

#: the memory columns: the shared record fields, then the float32 blob
_MEM_COLS = ", ".join((*MEMORY_FIELDS, "embedding"))
_SUP_COLS = ", ".join(SUPERSESSION_FIELDS)
_AUDIT_COLS = ("at_us", "actor", "action", "entity", "entity_id", "patient_id", "before", "after")
_INJECTION_COLS = ("id", "patient_id", "at_us", "query", "items", "tokens", "text", "agent")


def _memory(row: Sequence[Any]) -> Memory:
    return memory_from_row(row, np.frombuffer(row[-1], dtype=np.float32))


_NO_VECTOR = np.zeros(0, dtype=np.float32)  # the stored state an audit row shows has none
_STATE_COLS = ", ".join(MEMORY_FIELDS)


def _wall() -> datetime:
    """The store's clock: an audit row dated after it (beyond the skew) is refused."""
    return datetime.now(UTC)


#: the updatable fields' places in a stored row (:func:`memory_row`, :func:`supersession_row`)
_MEM_UPDATABLE = itemgetter(*(MEMORY_FIELDS.index(c) for c in MEMORY_UPDATABLE))
_SUP_UPDATABLE = itemgetter(*(SUPERSESSION_FIELDS.index(c) for c in SUPERSESSION_UPDATABLE))


def _mem_params(m: Memory) -> tuple[Any, ...]:
    # a bytearray: sqlite3 binds it directly (bytes go through its adapter lookup first)
    blob = bytearray(np.ascontiguousarray(m.embedding, dtype=np.float32))
    return (*memory_row(m), blob)


def _updatable(m: Memory) -> tuple[Any, ...]:
    return tuple(_MEM_UPDATABLE(memory_row(m)))


def _audit_params(a: AuditEntry) -> tuple[Any, ...]:
    return (
        to_us(a.at),
        a.actor,
        a.action,
        a.entity,
        a.entity_id,
        a.patient_id,
        None if a.before is None else dumps(a.before),
        None if a.after is None else dumps(a.after),
    )


def _insert(table: str, cols: Sequence[str]) -> str:
    return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"


#: the audit row of an inserted memory (:func:`memory_core.store.audit.add_entry`), written
#: straight from the memory: no before-state
_INSERT_MEMORY_AUDIT = (
    "INSERT INTO audit (at_us, actor, action, entity, entity_id, patient_id, after) "
    "VALUES (?, ?, ?, 'memory', ?, ?, ?)"
)
_INSERT_ACCESS = "INSERT INTO accesses (memory_id, patient_id, at_us) VALUES (?, ?, ?)"
_INSERT_SESSION = "INSERT INTO sessions (patient_id, at_us) VALUES (?, ?)"
_UPDATE_MEMORY = (
    f"UPDATE memories SET {', '.join(f'{c} = ?' for c in MEMORY_UPDATABLE)}, version = ? "
    "WHERE id = ? AND version = ?"
)
_UPDATE_SUPERSESSION = (
    f"UPDATE supersessions SET {', '.join(f'{c} = ?' for c in SUPERSESSION_UPDATABLE)}, "
    "version = ? WHERE id = ? AND version = ?"
)


#: seconds a write waits for another process's write lock before StoreBusyError
DEFAULT_BUSY_TIMEOUT = 30.0

_BUSY = ("database is locked", "database table is locked", "database is busy")


def _folder_read_only(path: str) -> bool:
    folder = Path(path).resolve().parent
    return folder.is_dir() and not os.access(folder, os.W_OK)


def _store_error(
    exc: sqlite3.DatabaseError, url: str, path: str, busy_timeout: float
) -> StoreError | None:
    """The typed error of an sqlite3 error about the store (by its result code), or None."""
    code = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or any(b in text for b in _BUSY):
        return StoreBusyError(
            f"store {url} is busy: another process held its write lock for longer than the "
            f"busy timeout ({busy_timeout:g} s); nothing was written, try again (set the "
            "timeout with ?busy_timeout=SECONDS in the store URL)",
            store=url,
        )
    folder = Path(path).resolve().parent
    if code == "SQLITE_READONLY_DIRECTORY" or (
        code.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) and _folder_read_only(path)
    ):
        name = Path(path).name
        return StoreReadOnlyError(
            f"store {url} is in a read-only folder ({folder}): SQLite creates {name}-wal and "
            f"{name}-shm beside the file, even to read it; nothing was written -- make the "
            "folder writable, or copy the store to a writable folder",
            store=url,
            cause=StoreProblem.READ_ONLY_FOLDER,
        )
    if code.startswith("SQLITE_READONLY"):
        return StoreReadOnlyError(
            f"store {url} is a read-only file ({exc}); nothing was written -- reads work, "
            "writes need write permission on the file",
            store=url,
            cause=StoreProblem.READ_ONLY_FILE,
        )
    if code.startswith("SQLITE_CORRUPT") or "malformed" in text:
        return StoreCorruptError(
            f"store {url} is corrupt ({exc}); nothing was written -- restore it from a "
            "backup or an export",
            store=url,
        )
    if code == "SQLITE_NOTADB" or "file is not a database" in text:
        return NotAStoreError(
            f"{url} is not a memory_core store: {exc}; nothing was written", store=url
        )
    if code.startswith("SQLITE_CANTOPEN") or "unable to open database file" in text:
        return StoreError(
            f"store {url} cannot be opened ({exc}): is {folder} there and may this user read it?",
            store=url,
            cause=StoreProblem.CANNOT_OPEN,
        )
    if code.startswith("SQLITE_FULL"):
        return StoreError(
            f"store {url}: the disk is full ({exc}); nothing was written",
            store=url,
            cause=StoreProblem.DISK_FULL,
        )
    if code.startswith("SQLITE_IOERR"):
        return StoreError(
            f"store {url}: I/O error ({exc}); nothing was written", store=url, cause=StoreProblem.IO
        )
    return None


class SQLiteStore(MemoryStore):
    def __init__(
        self, path: str, busy_timeout: float = DEFAULT_BUSY_TIMEOUT, *, create: bool = True
    ) -> None:
        """Open the store at ``path``; ``create=False``: only an existing store
        (:class:`StoreNotFoundError` otherwise, and nothing is created -- a read)."""
        self.path = path
        self.url = f"sqlite:///{path}"
        self.busy_timeout = float(busy_timeout)
        if path != ":memory:":
            p = Path(path)
            if p.is_dir():
                raise NotAStoreError(
                    f"{self.url} names a directory, not a database file", store=self.url
                )
            if not create and (not p.is_file() or p.stat().st_size == 0):
                raise StoreNotFoundError(
                    self.url,
                    f"store {self.url!r} not found: no memory_core store at {path} (a read "
                    "creates none; add memories or seed it first)",
                )
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"store {self.url}: cannot create its folder {p.parent}: {exc.strerror or exc}",
                    store=self.url,
                    cause=StoreProblem.CANNOT_OPEN,
                ) from exc
        self._lock = threading.RLock()
        self._held = False  # write_lock's transaction is open (on this connection)
        with self._errors():
            self._db = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=self.busy_timeout
            )
        try:
            with self._lock, self._errors():
                self._db.execute("PRAGMA foreign_keys = ON")
                self._db.execute(f"PRAGMA busy_timeout = {round(self.busy_timeout * 1000)}")
                check_ours(self._db, self.url)  # before WAL mode rewrites another's header
                if path != ":memory:":
                    self._db.execute("PRAGMA journal_mode = WAL")
                    self._db.execute("PRAGMA synchronous = NORMAL")
                migrate(self._db, self.url)
                self._cache_size = int(self._db.execute("PRAGMA cache_size").fetchone()[0])
        except BaseException:
            self._db.close()
            raise

    # --- helpers -----------------------------------------------------------------------------
    @contextmanager
    def _errors(self) -> Iterator[None]:
        """sqlite3's errors about the file, its folder or its lock as typed StoreErrors naming
        the store and the cause (:func:`_store_error`); others (a bug) as they are."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            typed = _store_error(exc, self.url, self.path, self.busy_timeout)
            if typed is None:
                raise
            raise typed from exc

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """The database's write lock (``BEGIN IMMEDIATE``) for the block: other connections'
        writes wait (up to the busy timeout); each ``apply`` inside is a savepoint of its own,
        and what was applied is committed when the block ends, whatever it raised."""
        with self._lock:
            if self._held:
                yield
                return
            with self._errors():
                self._db.execute("BEGIN IMMEDIATE")
            self._held = True
            try:
                yield
            finally:
                self._held = False
                self._commit()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors():  # a write refused by the file or folder: typed
            if self._held:  # inside write_lock: all or nothing as a savepoint
                self._db.execute("SAVEPOINT write")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK TO write")
                    self._db.execute("RELEASE write")
                    raise
                self._db.execute("RELEASE write")
                return
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._commit()

    def _commit(self) -> None:
        """COMMIT the open transaction (rolled back if the commit fails)."""
        try:
            with self._errors():
                self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._errors():
            return self._db.execute(sql, params).fetchall()

    def _one(self, what: str, table: str, cols: str, key: str) -> tuple[Any, ...]:
        rows = self._read(f"SELECT {cols} FROM {table} WHERE id = ?", (key,))
        if not rows:
            raise NotFoundError(what, key)
        return rows[0]

    # --- embedding model -----------------------------------------------------------------------
    def embedding_model(self) -> tuple[str, int] | None:
        rows = self._read("SELECT value FROM meta WHERE key = 'embedding_model'")
        if not rows:
            return None
        data = json.loads(rows[0][0])
        return str(data["model_id"]), int(data["dimensions"])

    def bind_embedding_model(self, model_id: str, dimensions: int) -> None:
        bound = self.embedding_model()  # a read first: a bound store opens read-only too
        if bound is not None:
            check_embedding_binding(self.url, bound, model_id, dimensions)
            return
        with self._tx() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO meta (key, value) VALUES ('embedding_model', ?)",
                    (json.dumps({"model_id": model_id, "dimensions": dimensions}),),
                )
                return
            data = json.loads(row[0])
            check_embedding_binding(
                self.url, (data["model_id"], int(data["dimensions"])), model_id, dimensions
            )

    # --- reads ---------------------------------------------------------------------------------
    def get_memory(self, memory_id: str) -> Memory:
        return _memory(self._one("memory", "memories", _MEM_COLS, memory_id))

    def get_memories(self, memory_ids: Sequence[str]) -> list[Memory]:
        if not memory_ids:
            return []
        marks = ",".join("?" * len(memory_ids))
        rows = self._read(f"SELECT {_MEM_COLS} FROM memories WHERE id IN ({marks})", memory_ids)
        by_id = {r[0]: _memory(r) for r in rows}
        return [by_id[i] for i in memory_ids if i in by_id]

    def list_memories(self, patient_id: str) -> list[Memory]:
        rows = self._read(
            f"SELECT {_MEM_COLS} FROM memories WHERE patient_id = ? ORDER BY created_us, rowid",
            (patient_id,),
        )
        return [_memory(r) for r in rows]

    def list_patients(self) -> list[str]:
        return [
            r[0]
            for r in self._read(
                "SELECT patient_id FROM patients WHERE patient_id IN "
                "(SELECT DISTINCT patient_id FROM memories) ORDER BY patient_id"
            )
        ]

    def versions(self, patient_id: str) -> tuple[int, int]:
        rows = self._read(
            "SELECT version, usage_version FROM patients WHERE patient_id = ?", (patient_id,)
        )
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def usage(self, patient_id: str) -> Usage:
        with self._lock, self._errors():  # one consistent read of both tables
            opened = not self._held  # inside write_lock the read is in its transaction
            if opened:
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
                if opened:
                    self._db.execute("COMMIT")
        return Usage(
            ids=[r[0] for r in rows],
            access_count=np.array([r[1] for r in rows], dtype=np.float64),
            last_accessed_s=seconds([r[2] for r in rows]),
            sessions_s=seconds([r[0] for r in sess]),
        )

    def access_events(self, patient_id: str) -> dict[str, npt.NDArray[np.float64]]:
        out: dict[str, list[int]] = {}
        for mid, at in self._read(
            "SELECT memory_id, at_us FROM accesses WHERE patient_id = ? ORDER BY at_us",
            (patient_id,),
        ):
            out.setdefault(mid, []).append(at)
        return {k: seconds(v) for k, v in out.items()}

    def get_supersession(self, supersession_id: str) -> Supersession:
        return supersession_from_row(
            self._one("supersession", "supersessions", _SUP_COLS, supersession_id)
        )

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
        return [supersession_from_row(r) for r in self._read(sql, params)]

    def list_injections(self, patient_id: str, limit: int = 100) -> list[InjectionRecord]:
        rows = self._read(
            f"SELECT {', '.join(_INJECTION_COLS)} FROM injections "
            "WHERE patient_id = ? ORDER BY at_us DESC LIMIT ?",
            (patient_id, limit),
        )
        out: list[InjectionRecord] = []
        for r in rows:
            rec = dict(zip(_INJECTION_COLS, r, strict=True))
            rec["items"] = json.loads(rec["items"])
            out.append(injection_from_record(rec))
        return out

    def list_audit(self, query: AuditQuery) -> list[AuditEntry]:
        sql = f"SELECT seq, {', '.join(_AUDIT_COLS)} FROM audit WHERE 1 = 1"
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
        out: list[AuditEntry] = []
        for r in self._read(sql, params):
            rec = dict(zip(("seq", *_AUDIT_COLS), r, strict=True))
            for doc in ("before", "after"):
                rec[doc] = json.loads(rec[doc]) if rec[doc] else None
            out.append(audit_from_record(rec))
        return out

    def load_policy(self) -> dict[str, Any] | None:
        rows = self._read("SELECT body FROM policies ORDER BY seq DESC LIMIT 1")
        return json.loads(rows[0][0]) if rows else None

    def count_memories(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM memories")[0][0])

    def policy_version(self) -> int:
        return int(self._read("SELECT COALESCE(MAX(seq), 0) FROM policies")[0][0])

    def purged_ids(self, memory_ids: Sequence[str]) -> set[str]:
        with self._lock, self._errors():
            return self._purged_in(self._db, list(memory_ids))

    # --- writes --------------------------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> None:
        if changes.is_empty():
            return
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
        for pid, expected in sorted(changes.expected_patient_versions.items()):
            row = db.execute("SELECT version FROM patients WHERE patient_id = ?", (pid,)).fetchone()
            if (int(row[0]) if row else 0) != expected:
                raise StaleSnapshotError(
                    f"patient {pid}'s memories changed since this change was computed (content "
                    f"version {expected}, now {row[0] if row else 0}); read again and retry"
                )
        derived = self._derive(db, changes)
        if changes.insert_memories:
            tomb = self._purged_in(db, [m.id for m in changes.insert_memories])
            if tomb:
                raise ValidationError(
                    "id",
                    f"memory id {sorted(tomb)[0]!r} belonged to a purged memory; ids are "
                    "never reused",
                )
            try:
                db.executemany(
                    _insert("memories", (*MEMORY_FIELDS, "embedding")),
                    map(_mem_params, changes.insert_memories),
                )
            except sqlite3.IntegrityError as exc:
                raise ConflictError(f"memory id already exists: {exc}") from exc
        if changes.update_memories:
            params = [
                (*_updatable(m), expected + 1, m.id, expected)
                for m, expected in changes.update_memories
            ]
            db.execute("SAVEPOINT updates")
            if db.executemany(_UPDATE_MEMORY, params).rowcount != len(params):  # summed
                # some memory moved past its expected version: redo one by one to name it
                db.execute("ROLLBACK TO updates")
                for (m, expected), p in zip(changes.update_memories, params, strict=True):
                    if db.execute(_UPDATE_MEMORY, p).rowcount != 1:
                        raise ConflictError(
                            f"memory {m.id} was changed by someone else (expected version "
                            f"{expected}); reload and try again"
                        )
            db.execute("RELEASE updates")
        if changes.insert_supersessions:
            try:
                db.executemany(
                    _insert("supersessions", SUPERSESSION_FIELDS),
                    map(supersession_row, changes.insert_supersessions),
                )
            except sqlite3.IntegrityError as exc:
                raise ConflictError(f"supersession already recorded: {exc}") from exc
        for s, expected in changes.update_supersessions:
            cur = db.execute(
                _UPDATE_SUPERSESSION,
                (*_SUP_UPDATABLE(supersession_row(s)), expected + 1, s.id, expected),
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
            db.execute(
                "INSERT INTO purged (id, patient_id, purged_us) VALUES (?, ?, ?)",
                (m.id, m.patient_id, to_us(datetime.now(UTC))),
            )
        if changes.accesses:
            db.executemany(_INSERT_ACCESS, ((m, p, to_us(at)) for m, p, at in changes.accesses))
        if changes.sessions:
            db.executemany(_INSERT_SESSION, [(p, to_us(at)) for p, at in changes.sessions])
        if changes.insert_memories:
            # plain str (not an enum): sqlite3 binds it without an adapter lookup
            at_us, actor, action = to_us(derived.at), str(derived.actor), AuditAction.ADD.value
            db.executemany(
                _INSERT_MEMORY_AUDIT,
                (
                    (at_us, actor, action, m.id, m.patient_id, memory_state_json(m))
                    for m in changes.insert_memories
                ),
            )
        if derived.entries:
            db.executemany(_insert("audit", _AUDIT_COLS), map(_audit_params, derived.entries))
        if changes.policy is not None:
            db.execute(
                "INSERT INTO policies (at_us, body) VALUES (?, ?)",
                (to_us(datetime.now(UTC)), dumps(changes.policy)),
            )
        self._bump(db, changes.patients())

    def _derive(self, db: sqlite3.Connection, changes: ChangeSet) -> Derived:
        """The change set's audit rows (:func:`memory_core.store.audit.derive`) from the stored
        records it changes, read in the write's transaction; ConflictError first when one of
        them has moved past the version the change was computed from."""
        mem_ids = [m.id for m, _ in changes.update_memories]
        mem_ids += [m.id for m, _ in changes.delete_memories]
        mem_ids += [k.memory_id for k in changes.flag_keeps]
        sup_ids = [s.id for s, _ in changes.update_supersessions]
        sup_ids += [k.change_id for k in changes.flag_keeps]
        mems = {
            r[0]: memory_from_row(r, _NO_VECTOR)
            for r in self._rows(db, f"SELECT {_STATE_COLS} FROM memories", mem_ids)
        }
        sups = {
            r[0]: supersession_from_row(r)
            for r in self._rows(db, f"SELECT {_SUP_COLS} FROM supersessions", sup_ids)
        }
        for m, expected in changes.update_memories:
            got = mems.get(m.id)
            if got is None or got.version != expected:
                raise ConflictError(
                    f"memory {m.id} was changed by someone else (expected version "
                    f"{expected}); reload and try again"
                )
        for m, expected in changes.delete_memories:
            got = mems.get(m.id)
            if got is None or got.version != expected or got.status.value != "archived":
                raise ConflictError(f"memory {m.id} changed since the purge was planned")
        for s, expected in changes.update_supersessions:
            got_s = sups.get(s.id)
            if got_s is None or got_s.version != expected:
                raise ConflictError(
                    f"supersession {s.id} was changed by someone else; reload and try again"
                )
        last = self._last_written(db, list(touched(changes)))
        return derive(changes, mems, sups, last, _wall(), lambda: self._policy(db))

    @staticmethod
    def _rows(db: sqlite3.Connection, select: str, ids: Sequence[str]) -> list[Any]:
        out: list[Any] = []
        ids = list(dict.fromkeys(ids))
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            marks = ",".join("?" * len(chunk))
            out += db.execute(f"{select} WHERE id IN ({marks})", chunk).fetchall()
        return out

    @staticmethod
    def _policy(db: sqlite3.Connection) -> dict[str, Any] | None:
        row = db.execute("SELECT body FROM policies ORDER BY seq DESC LIMIT 1").fetchone()
        return json.loads(row[0]) if row else None

    @staticmethod
    def _last_written(
        db: sqlite3.Connection, keys: Sequence[Key], patient_id: str | None = None
    ) -> dict[Key, datetime]:
        wanted = set(keys)
        ids = list(dict.fromkeys(i for _, i in keys))
        mine = "" if patient_id is None else " AND patient_id = ?"
        out: dict[Key, datetime] = {}
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            marks = ",".join("?" * len(chunk))
            params = chunk if patient_id is None else [*chunk, patient_id]
            for entity, eid, at_us in db.execute(
                f"SELECT entity, entity_id, MAX(at_us) FROM audit WHERE entity_id IN ({marks})"
                f"{mine} GROUP BY entity, entity_id",
                params,
            ):
                if (entity, eid) in wanted:
                    out[(entity, eid)] = from_us(at_us)
        return out

    def last_written(self, patient_id: str, keys: Sequence[tuple[str, str]]) -> dict[Key, datetime]:
        with self._lock, self._errors():
            return self._last_written(self._db, list(keys), patient_id)

    @staticmethod
    def _purged_in(db: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
        out: set[str] = set()
        # no tombstone at all (no purge yet, most stores): nothing to look up id by id
        if not ids or db.execute("SELECT NOT EXISTS (SELECT 1 FROM purged)").fetchone()[0]:
            return out
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            marks = ",".join("?" * len(chunk))
            out |= {r[0] for r in db.execute(f"SELECT id FROM purged WHERE id IN ({marks})", chunk)}
        return out

    @staticmethod
    def _bump(
        db: sqlite3.Connection, patients: set[str], content: bool = True, usage: bool = True
    ) -> None:
        """Content and/or usage version + 1 for each patient (a row created at 0 first)."""
        if not patients:
            return
        sets = [
            f"{col} = {col} + 1"
            for col, on in (("version", content), ("usage_version", usage))
            if on
        ]
        db.executemany(
            "INSERT INTO patients (patient_id, version, usage_version) VALUES (?, ?, ?) "
            f"ON CONFLICT (patient_id) DO UPDATE SET {', '.join(sets)}",
            [(p, int(content), int(usage)) for p in sorted(patients)],
        )

    def record_access(
        self,
        patient_id: str,
        memory_ids: Sequence[str],
        at: datetime,
        injection: InjectionRecord | None = None,
    ) -> list[AccessCount]:
        at_us = to_us(at)
        out: list[AccessCount] = []
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
                out.append(AccessCount(mid, int(row[0]), Tier(row[1])))
            db.executemany(_INSERT_ACCESS, [(mid, patient_id, at_us) for mid in memory_ids])
            db.execute(_INSERT_SESSION, (patient_id, at_us))
            if injection is not None:
                db.execute(
                    _insert("injections", _INJECTION_COLS),
                    (
                        injection.id,
                        injection.patient_id,
                        at_us,
                        injection.query,
                        json.dumps(injection_items(injection)),
                        injection.tokens,
                        injection.text,
                        injection.agent,
                    ),
                )
            self._bump(db, {patient_id}, content=False)
        return out

    def promote(
        self, patient_id: str, memory_ids: Sequence[str], actor: str, at: datetime
    ) -> list[str]:
        entries = promotion_entries(patient_id, memory_ids, actor, at, _wall())
        promoted: list[str] = []
        with self._tx() as db:
            for entry in entries:
                cur = db.execute(
                    "UPDATE memories SET tier = ?, version = version + 1 "
                    "WHERE id = ? AND patient_id = ? AND tier = ?",
                    (Tier.LONG_TERM.value, entry.entity_id, patient_id, Tier.SHORT_TERM.value),
                )
                if cur.rowcount == 1:
                    promoted.append(entry.entity_id)
                    db.execute(_insert("audit", _AUDIT_COLS), _audit_params(entry))
            if promoted:
                self._bump(db, {patient_id}, usage=False)
        return promoted

    def close(self) -> None:
        with self._lock:
            self._db.close()
