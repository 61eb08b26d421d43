"""Issue 34, findings 2 and 3: a read never creates a store, an unknown patient is a typed
NotFoundError, and every store error is a typed StoreError naming the store and the cause
(read-only file, read-only folder, locked, corrupt) -- in the API and as one CLI line.

Read-only files and folders are made for real: as root, permissions do not stop a write, so
those checks run in a child process as the unprivileged user ``nobody`` (``setpriv``)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.cli import main
from memory_core.embedding import HashingEmbedder
from memory_core.errors import StoreProblem

ROOT = Path(__file__).resolve().parents[1]


def _one_line_error(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    return err


# --- finding 2: reads create nothing; an unknown patient is NotFoundError ----------------------

READS = [
    ["show", "NW-1"],
    ["context", "NW-1", "allergies"],
    ["export"],
    ["export", "--patient", "NW-1"],
    ["patients"],
    ["cleanup"],
    ["purge", "--older-than-days", "30"],
    ["scan-contradictions", "--patient", "NW-1"],
]


@pytest.mark.parametrize("argv", READS, ids=[" ".join(a) for a in READS])
def test_a_read_of_a_missing_store_creates_nothing(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "nonexist"
    url = f"sqlite:///{folder}/x.db"
    rc = main(["--store", url, "--embedder", "hashing", *argv])
    err = _one_line_error(capsys.readouterr().err)
    assert rc == 3
    assert f"store {url!r} not found" in err
    assert not folder.exists()  # before: the folder and an empty store, exit 0


def test_the_api_opens_an_existing_store_only_when_asked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/nonexist/x.db"
    with pytest.raises(mc.NotFoundError) as err:
        mc.open_engine(url, "hashing", create=False)
    assert isinstance(err.value, mc.StoreError) and err.value.cause is StoreProblem.MISSING
    assert err.value.store == url
    assert not (tmp_path / "nonexist").exists()
    empty = tmp_path / "empty.db"
    empty.touch()  # a zero-byte file holds no store either
    with pytest.raises(mc.NotFoundError):
        mc.open_engine(f"sqlite:///{empty}", "hashing", create=False)
    assert empty.stat().st_size == 0


@pytest.fixture
def one_patient(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/s.db"
    eng = mc.open_engine(url, HashingEmbedder())
    eng.add_memory("NW-1", "Patient is allergic to latex", "allergy")
    eng.store.close()
    return url


UNKNOWN = [
    ["show", "NW-9999"],
    ["context", "NW-9999", "allergies"],
    ["export", "--patient", "NW-9999"],
    ["cleanup", "--patient", "NW-9999"],
    ["purge", "--older-than-days", "30", "--patient", "NW-9999"],
    ["scan-contradictions", "--patient", "NW-9999"],
]


@pytest.mark.parametrize("argv", UNKNOWN, ids=[" ".join(a) for a in UNKNOWN])
def test_an_unknown_patient_is_not_found(
    one_patient: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = Path(one_patient.removeprefix("sqlite:///")).read_bytes()
    rc = main(["--store", one_patient, "--embedder", "hashing", *argv])
    out = capsys.readouterr()
    err = _one_line_error(out.err)
    assert rc == 3 and out.out == ""  # before: a header and exit 0
    assert "patient 'NW-9999' not found" in err
    assert Path(one_patient.removeprefix("sqlite:///")).read_bytes() == before


def test_api_reads_of_an_unknown_patient_write_nothing(one_patient: str) -> None:
    eng = mc.open_engine(one_patient, HashingEmbedder())
    audit = len(eng.audit_log(limit=1000))
    versions = eng.store.versions("NW-9999")
    assert len(eng.view("NW-9999").memories) == 0
    assert eng.build_context("NW-9999", "allergies", record_access=False).text == ""
    assert eng.list_memories("NW-9999") == []
    assert eng.list_patients() == ["NW-1"]
    assert eng.store.versions("NW-9999") == versions == (0, 0)
    assert len(eng.audit_log(limit=1000)) == audit


# --- finding 3: read-only files and folders, locks, corruption -----------------------------------

_AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

#: the child's script: each API call on the store, as it answered (error class, cause, message)
_PROBE = r"""
import json, sys
import memory_core as mc
from memory_core.embedding import HashingEmbedder

url = sys.argv[1]
out = {}

def call(name, fn):
    try:
        fn()
        out[name] = "ok"
    except Exception as exc:
        out[name] = [type(exc).__name__, str(getattr(exc, "cause", "")), str(exc)]

eng = None
def open_it():
    global eng
    eng = mc.open_engine(url, HashingEmbedder())
call("open", open_it)
if eng is not None:
    mid = next(m.id for m in eng.list_memories("NW-1") if not m.pinned)
    call("view", lambda: eng.view("NW-1"))
    call("preview", lambda: eng.build_context("NW-1", "latex", record_access=False))
    call("add_memory", lambda: eng.add_memory("NW-1", "Patient swims weekly", "observation"))
    call("build_context", lambda: eng.build_context("NW-1", "latex", record_access=True))
    call("pin", lambda: eng.pin(mid, "dr"))
    call("save_policy", lambda: eng.save_policy(mc.EnginePolicy(), "dr"))
print(json.dumps(out))
"""


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder the unprivileged user may enter (pytest's tmp_path is root's alone)."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.fail("running as root without setpriv: cannot make a read-only store")
    d = Path(tempfile.mkdtemp(prefix="mc-readonly-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        d.chmod(0o755)
        shutil.rmtree(d, ignore_errors=True)


def _as_other_user(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    prefix = _AS_NOBODY if os.geteuid() == 0 else []
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    return subprocess.run(
        [*prefix, sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd,
        timeout=120,
    )  # fmt: skip


def _store_for_nobody(folder: Path) -> tuple[Path, str]:
    db = folder / "s.db"
    eng = mc.open_engine(f"sqlite:///{db}", HashingEmbedder())
    eng.add_memory("NW-1", "Patient is allergic to latex", "allergy")
    eng.add_memory("NW-1", "Patient walks daily", "observation")
    eng.store.close()
    if os.geteuid() == 0:
        for p in [folder, *folder.iterdir()]:
            os.chown(p, 65534, 65534)
    return db, f"sqlite:///{db}"


def _probe(folder: Path, url: str) -> dict[str, object]:
    done = _as_other_user(["-c", _PROBE, url], folder)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_read_only_store_file_reads_and_refuses_writes_with_a_typed_error(
    shared_dir: Path,
) -> None:
    db, url = _store_for_nobody(shared_dir)
    db.chmod(0o444)
    got = _probe(shared_dir, url)
    assert got["open"] == got["view"] == got["preview"] == "ok"
    for call in ("add_memory", "build_context", "pin", "save_policy"):
        name, cause, message = got[call]  # type: ignore[misc]
        assert (name, cause) == ("StoreReadOnlyError", "read-only file"), got[call]
        assert url in message and "nothing was written" in message
    # the CLI: one line, no traceback
    done = _as_other_user(
        ["-m", "memory_core", "--store", url, "--embedder", "hashing", "add", "NW-1", "Swims",
         "--type", "observation"],
        shared_dir,
    )  # fmt: skip
    assert done.returncode == 2
    assert "read-only" in _one_line_error(done.stderr)


def test_a_store_in_a_read_only_folder_says_so(shared_dir: Path) -> None:
    _db, url = _store_for_nobody(shared_dir)
    shared_dir.chmod(0o555)
    got = _probe(shared_dir, url)
    name, cause, message = got["open"]  # type: ignore[misc]
    assert (name, cause) == ("StoreReadOnlyError", "read-only folder"), got
    assert url in message and str(shared_dir) in message and "-wal" in message
    done = _as_other_user(
        ["-m", "memory_core", "--store", url, "--embedder", "hashing", "show", "NW-1"], shared_dir
    )
    assert done.returncode == 2
    err = _one_line_error(done.stderr)  # before: "unable to open database file", no hint
    assert "read-only folder" in err


def test_a_corrupt_store_is_a_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.db"
    url = f"sqlite:///{path}"
    eng = mc.open_engine(url, HashingEmbedder())
    eng.add_memories(
        [
            {
                "patient_id": "NW-1",
                "content": f"Patient note {i} " + "x" * 400,
                "memory_type": "observation",
            }
            for i in range(200)
        ]
    )
    eng.store.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray(path.read_bytes())
    page = 4096
    for k in range(3 * page, len(data) - page, page):  # every page after the schema, garbled
        data[k + 8 : k + 64] = b"\xff" * 56
    path.write_bytes(bytes(data))
    with pytest.raises(mc.StoreError) as err:
        mc.open_engine(url, HashingEmbedder()).list_memories("NW-1")
    assert err.value.cause is StoreProblem.CORRUPT and err.value.store == url
    rc = main(["--store", url, "--embedder", "hashing", "show", "NW-1"])
    assert rc == 2 and "corrupt" in _one_line_error(capsys.readouterr().err)


def test_a_locked_store_names_the_store_and_the_cause(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    url = f"sqlite:///{path}?busy_timeout=0.2"
    eng = mc.open_engine(url, HashingEmbedder())
    eng.add_memory("NW-1", "Patient walks daily", "observation")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(mc.StoreBusyError) as err:
            eng.add_memory("NW-1", "Patient swims", "observation")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert err.value.cause is StoreProblem.LOCKED and err.value.store == eng.store.url
