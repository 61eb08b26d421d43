"""Hardening, second round (issue 15), the store-level items: files that are not a store, a
write lock held past the busy timeout, control characters in store URLs, the append-only audit
against ``REPLACE``, purged ids (tombstones) and purge of a supersession's newer memory,
concurrent contradicting adds from real processes, unaudited ``store.apply`` and an open
engine following a policy saved elsewhere. The contract-level versions (both stores) are in
tests/test_store_contract.py."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.cli import main
from memory_core.embedding import HashingEmbedder
from memory_core.errors import (
    ConfigurationError,
    NotAStoreError,
    StaleSnapshotError,
    StoreBusyError,
)
from memory_core.policy import ContradictionPolicy, DecayPolicy, EnginePolicy
from memory_core.store import open_store
from memory_core.store.base import ChangeSet, MemoryUpdate
from memory_core.store.sqlite import SQLiteStore
from memory_core.values import Status, SupersessionState
from tests.conftest import NOW, Clock

# --- item 2: a store URL that names something else -------------------------------------------


def _other_apps_db(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
        "INSERT INTO meta VALUES ('app', 'someone else');"
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL);"
    )
    db.commit()
    db.close()


@pytest.mark.parametrize(
    "kind", ["text", "directory", "other-app", "other-app-version", "other-app-id"]
)
def test_a_url_naming_something_else_is_a_typed_error(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.db"
    if kind == "text":
        path.write_text("these are my notes, not a database\n" * 50)
    elif kind == "directory":
        path.mkdir()
    elif kind == "other-app":
        _other_apps_db(path)
    elif kind == "other-app-version":  # another application that numbers its schema too
        _other_apps_db(path)
        db = sqlite3.connect(path)
        db.execute("PRAGMA user_version = 7")
        db.close()
    else:  # an SQLite file stamped with another application id
        db = sqlite3.connect(path)
        db.execute("PRAGMA application_id = 1234")
        db.execute("CREATE TABLE notes (body TEXT)")
        db.commit()
        db.close()
    before = path.read_bytes() if path.is_file() else None
    url = f"sqlite:///{path}"
    with pytest.raises(NotAStoreError) as err:
        mc.open_engine(url, embedder="hashing")
    assert str(path) in str(err.value)
    assert isinstance(err.value, mc.MemoryCoreError) and not err.value.retryable
    rc = main(["--store", url, "--embedder", "hashing", "patients"])
    out = capsys.readouterr()
    assert rc == 2 and out.err.startswith("error: ") and "Traceback" not in out.err
    assert str(path) in out.err
    if before is not None:
        assert path.read_bytes() == before  # nothing was written to someone else's file
    if kind == "other-app":
        db = sqlite3.connect(path)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"meta", "orders"}
        db.close()


def test_an_empty_file_and_an_old_memory_core_file_still_open(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    SQLiteStore(str(empty)).close()  # a zero-byte file is a new database
    SQLiteStore(str(tmp_path / "new.db")).close()
    SQLiteStore(str(tmp_path / "new.db")).close()  # reopening ours is fine


# --- item 2: the write lock held past the busy timeout -----------------------------------------


def _hold_write_lock(path: str, held: threading.Event, release: threading.Event) -> None:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("BEGIN IMMEDIATE")
    held.set()
    release.wait(30)
    db.execute("ROLLBACK")
    db.close()


def _locker_process(path: str, held: mp.synchronize.Event, release: mp.synchronize.Event) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    held.set()
    release.wait(30)
    db.execute("ROLLBACK")
    db.close()


def test_a_lock_held_past_the_busy_timeout_is_a_retryable_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "busy.db")
    url = f"sqlite:///{path}?busy_timeout=0.3"
    engine = mc.open_engine(url, embedder="hashing")
    store = engine.store
    assert isinstance(store, SQLiteStore) and store.busy_timeout == 0.3
    engine.add_memory("P-1", "Patient walks every morning", "observation")
    ctx = mp.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    locker = ctx.Process(target=_locker_process, args=(path, held, release))
    locker.start()
    try:
        assert held.wait(60)
        t0 = time.perf_counter()
        with pytest.raises(StoreBusyError) as err:
            engine.add_memory("P-1", "Patient swims on Fridays", "observation")
        waited = time.perf_counter() - t0
        assert err.value.retryable is True and isinstance(err.value, mc.MemoryCoreError)
        assert "busy timeout (0.3 s)" in str(err.value) and "busy_timeout" in str(err.value)
        assert 0.25 <= waited < 5.0  # the configured timeout, not 30 s
        rc = main(
            ["--store", url, "--embedder", "hashing", "add", "P-1", "x y", "--type", "observation"]
        )
        out = capsys.readouterr()
        assert rc == 2 and out.err.startswith("error: store ") and "is busy" in out.err
    finally:
        release.set()
        locker.join(30)
    # nothing was written by the refused calls; the same call now succeeds
    assert [m.content for m in engine.list_memories("P-1")] == ["Patient walks every morning"]
    engine.add_memory("P-1", "Patient swims on Fridays", "observation")
    assert len(engine.list_memories("P-1")) == 2


def test_the_busy_timeout_defaults_to_30_s_and_is_validated(tmp_path: Path) -> None:
    s = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    assert isinstance(s, SQLiteStore) and s.busy_timeout == 30.0
    s.close()
    for bad in ("-1", "abc", "99999"):
        with pytest.raises(ConfigurationError, match="busy_timeout"):
            open_store(f"sqlite:///{tmp_path / 'a.db'}?busy_timeout={bad}")
    with pytest.raises(ConfigurationError, match="unknown parameter"):
        open_store(f"sqlite:///{tmp_path / 'a.db'}?timeout=3")


def test_reads_under_a_held_write_lock_still_work(tmp_path: Path) -> None:
    path = str(tmp_path / "wal.db")
    engine = mc.open_engine(f"sqlite:///{path}?busy_timeout=0.2", embedder="hashing")
    m = engine.add_memory("P-1", "Patient walks every morning", "observation").memory
    held, release = threading.Event(), threading.Event()
    t = threading.Thread(target=_hold_write_lock, args=(path, held, release))
    t.start()
    try:
        assert held.wait(10)
        assert engine.get(m.id).content == m.content  # WAL: readers are not blocked
    finally:
        release.set()
        t.join()


# --- bullet: control characters in store paths -------------------------------------------------


@pytest.mark.parametrize("bad", ["a\x00b.db", "a\nb.db", "a\x1bb.db", "a\u202eb.db", "a\x85b.db"])
def test_control_characters_in_a_store_url_are_refused(bad: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/{bad}"
    with pytest.raises(ConfigurationError) as err:
        open_store(url)
    assert "store URL" in str(err.value) and "control character" in str(err.value)
    assert list(tmp_path.iterdir()) == []  # no file was created


# --- item 7: REPLACE cannot overwrite audit rows ------------------------------------------------


def test_replace_into_audit_is_refused(tmp_path: Path) -> None:
    engine = mc.open_engine(f"sqlite:///{tmp_path / 'a.db'}", embedder="hashing")
    engine.add_memory("NW-1", "Patient checks glucose daily", "observation")
    engine.add_memory("NW-1", "Patient walks every morning", "observation")
    store = engine.store
    assert isinstance(store, SQLiteStore)
    db = store._db
    rows = db.execute("SELECT * FROM audit ORDER BY seq").fetchall()
    assert [r[0] for r in rows] == [1, 2]
    cols = "seq, at_us, actor, action, entity, entity_id, patient_id, before, after"
    forged = "(1, 0, 'mallory', 'add', 'memory', 'x', 'NW-1', NULL, NULL)"
    for verb in ("INSERT OR REPLACE INTO", "REPLACE INTO"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(f"{verb} audit ({cols}) VALUES {forged}")
    db.execute("PRAGMA recursive_triggers = ON")  # the delete trigger's path, too
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute(f"REPLACE INTO audit ({cols}) VALUES {forged}")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute(f"INSERT INTO audit ({cols}) VALUES {forged}")
    assert db.execute("SELECT * FROM audit ORDER BY seq").fetchall() == rows
    # appending still works
    engine.pin(engine.list_memories("NW-1")[0].id, "dr-a")
    assert len(db.execute("SELECT * FROM audit").fetchall()) == 3


# --- item 6: purged ids, purge of the newer side ------------------------------------------------


def _engine(tmp_path: Path, clock: Clock) -> mc.MemoryEngine:
    return mc.MemoryEngine(
        SQLiteStore(str(tmp_path / "p.db")), HashingEmbedder(), DecayPolicy(), clock=clock
    )


def test_a_purged_id_is_never_reused(tmp_path: Path) -> None:
    clock = Clock()
    engine = _engine(tmp_path, clock)
    old = engine.add_memory(
        "P-1", "Patient prefers morning appointments", "preference", created_at=NOW - timedelta(9)
    ).memory
    res = engine.add_memory("P-1", "Patient prefers morning appointments now", "preference")
    (sup,) = res.supersessions
    assert engine.get(old.id).status is Status.SUPERSEDED
    engine.archive(old.id, "dr-a")
    clock.advance(days=40)
    assert [m.id for m in engine.purge(older_than_days=30, dry_run=False, by="dr-a")] == [old.id]
    reused = {
        "id": old.id,
        "patient_id": "P-1",
        "content": "Patient is allergic to latex",
        "memory_type": "allergy",
    }
    with pytest.raises(mc.ValidationError) as err:
        engine.add_memories([reused])
    assert err.value.field == "records[0].id" and "purged" in err.value.message
    with pytest.raises(mc.ValidationError) as err2:  # another patient: ids are global
        engine.add_memories([{**reused, "patient_id": "P-2"}])
    assert err2.value.field == "records[0].id"
    # straight through the store too
    m = engine.add_memory("P-9", "Patient is allergic to latex", "allergy").memory
    with pytest.raises(mc.ValidationError) as err3:
        from dataclasses import replace

        reuse = replace(m, id=old.id, patient_id="P-1")
        engine.store.apply(ChangeSet(insert_memories=[reuse], actor="x", at=engine.clock()))
    assert err3.value.field == "id"
    # the old supersession stays the old memory's, and nothing else carries its id
    assert engine.store.get_supersession(sup.id).old_id == old.id
    # (the newer memory restates it: confirmed at the restatement, then superseded by it)
    assert [x.action for x in engine.audit_log(entity_id=old.id)] == [
        "purge",
        "archive",
        "supersede",
        "confirm_memory",  # the newer restated it (issue 23: its age counted from then)
        "add",
    ]
    active = engine.list_memories("P-1", include_inactive=False)
    assert [x.id for x in active] == [res.memory.id]


def test_purging_the_newer_memory_ends_its_supersession(tmp_path: Path) -> None:
    clock = Clock()
    engine = _engine(tmp_path, clock)
    old = engine.add_memory(
        "P-1", "Patient prefers morning appointments", "preference", created_at=NOW - timedelta(9)
    ).memory
    new = engine.add_memory("P-1", "Patient prefers morning appointments now", "preference")
    (sup,) = new.supersessions
    engine.archive(new.memory.id, "dr-a")
    # the archived newer still holds the older: the patient has no active memory now
    assert engine.list_memories("P-1", include_inactive=False) == []
    clock.advance(days=40)
    assert [m.id for m in engine.purge(older_than_days=30, dry_run=False, by="dr-p")] == [
        new.memory.id
    ]
    ended = engine.store.get_supersession(sup.id)
    assert ended.state is SupersessionState.UNDONE and ended.ended_at == clock.now
    got = engine.get(old.id)
    assert (got.status, got.superseded_by) == (Status.ACTIVE, None)
    active = engine.list_memories("P-1", include_inactive=False)
    assert [m.id for m in active] == [old.id]
    actions = [(a.action, a.actor) for a in engine.audit_log(entity_id=old.id)]
    assert actions[0] == ("unsupersede", "dr-p")
    assert next(a.action for a in engine.audit_log(entity_id=sup.id)) == "undo_supersession"
    text = engine.build_context("P-1", "appointments", now=clock.now).text
    assert "morning appointments" in text
    view = engine.view("P-1", now=clock.now)
    assert [view.memories[i].id for i, s in enumerate(view.status) if s is Status.ACTIVE] == [
        old.id
    ]


def test_purging_a_pending_supersessions_memory_rejects_it(tmp_path: Path) -> None:
    clock = Clock()
    policy = EnginePolicy(contradiction=ContradictionPolicy(modes={"preference": "review"}))
    engine = mc.MemoryEngine(
        SQLiteStore(str(tmp_path / "p.db")), HashingEmbedder(), policy, clock=clock
    )
    old = engine.add_memory(
        "P-1", "Patient prefers morning appointments", "preference", created_at=NOW - timedelta(9)
    ).memory
    res = engine.add_memory("P-1", "Patient prefers morning appointments now", "preference")
    (pend,) = res.supersessions
    assert pend.state is SupersessionState.PENDING
    engine.archive(res.memory.id, "dr-a")
    clock.advance(days=40)
    assert [m.id for m in engine.purge(older_than_days=30, dry_run=False, by="dr-p")] == [
        res.memory.id
    ]
    got = engine.store.get_supersession(pend.id)
    assert got.state is SupersessionState.REJECTED and got.decided_by == "dr-p"
    with pytest.raises(mc.StateError):  # nothing left to confirm onto a deleted memory
        engine.confirm_supersession(pend.id, "dr-c")
    assert engine.get(old.id).status is Status.ACTIVE


# --- item 9: two processes adding contradicting memories at once --------------------------------

PATIENTS = 30


def _adder(
    path: str, who: int, barrier: mp.synchronize.Barrier, out: mp.Queue[tuple[int, int]]
) -> None:
    engine = mc.MemoryEngine(SQLiteStore(path), HashingEmbedder())
    retries = 0
    for p in range(PATIENTS):
        barrier.wait(60)
        text = "Patient prefers morning appointments" + (" now" if who else " again")
        try:
            engine.add_memory(f"P-{p:02d}", text, "preference", by=f"agent-{who}")
        except StaleSnapshotError:
            retries += 1
    out.put((who, retries))


def test_concurrent_contradicting_adds_from_two_processes_are_superseded(tmp_path: Path) -> None:
    path = str(tmp_path / "race.db")
    engine = mc.MemoryEngine(SQLiteStore(path), HashingEmbedder())
    # each patient starts with something, so both adders load a snapshot first
    engine.add_memories(
        [
            {
                "patient_id": f"P-{p:02d}",
                "content": "Patient walks daily",
                "memory_type": "observation",
            }
            for p in range(PATIENTS)
        ]
    )
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    out: mp.Queue[tuple[int, int]] = ctx.Queue()
    procs = [ctx.Process(target=_adder, args=(path, w, barrier, out)) for w in (0, 1)]
    for pr in procs:
        pr.start()
    results = [out.get(timeout=300) for _ in procs]
    for pr in procs:
        pr.join(60)
        assert pr.exitcode == 0
    assert sorted(r[1] for r in results) == [0, 0]  # no add gave up
    both_active = 0
    for p in range(PATIENTS):
        prefs = [m for m in engine.list_memories(f"P-{p:02d}") if m.memory_type == "preference"]
        assert len(prefs) == 2
        active = [m for m in prefs if m.status is Status.ACTIVE]
        sups = engine.supersessions(f"P-{p:02d}")
        if len(active) != 1 or len(sups) != 1:
            both_active += 1
    assert both_active == 0  # issue 15: 22 of 30 before


# --- bullets: unaudited store writes; the policy follows the store ------------------------------


def test_store_apply_without_audit_is_refused(tmp_path: Path) -> None:
    from dataclasses import replace

    engine = _engine(tmp_path, Clock())
    m = engine.add_memory("P-1", "Patient walks every morning", "observation").memory
    before = (engine.store.versions("P-1"), len(engine.audit_log(limit=1000)))
    with pytest.raises(mc.ValidationError) as err:
        engine.store.apply(
            ChangeSet(update_memories=[MemoryUpdate(replace(m, importance=1.0), m.version)])
        )
    assert err.value.field == "actor"  # the store writes the audit: it needs who acts
    with pytest.raises(mc.ValidationError):
        engine.store.apply(ChangeSet(policy={"decay": {"rate": 0.9}}))
    assert engine.get(m.id).importance == m.importance
    assert (engine.store.versions("P-1"), len(engine.audit_log(limit=1000))) == before


def _save_policy_elsewhere(path: str, rate: float) -> None:
    other = mc.MemoryEngine(SQLiteStore(path), HashingEmbedder())
    other.save_policy(EnginePolicy(decay=DecayPolicy(rate=rate)), by="dr-other")


def test_an_open_engine_follows_a_policy_saved_by_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "pol.db")
    engine = mc.MemoryEngine(SQLiteStore(path), HashingEmbedder())
    engine._core.policy_check_s = 0.0
    default_rate = engine.policy.decay.rate
    ctx = mp.get_context("spawn")
    pr = ctx.Process(target=_save_policy_elsewhere, args=(path, default_rate / 2))
    pr.start()
    pr.join(120)
    assert pr.exitcode == 0
    assert engine.policy.decay.rate == default_rate / 2
    # cheap: without a new save the body is not loaded again
    loads: list[int] = []
    real = engine.store.load_policy

    def counted() -> dict[str, object] | None:
        loads.append(1)
        return real()

    monkeypatch.setattr(engine.store, "load_policy", counted)
    for _ in range(50):
        assert engine.policy.decay.rate == default_rate / 2
    assert loads == []
