"""Issue 25, finding 12: bad input through the public API and the CLI. Every bad input below
gets a typed error (a MemoryCoreError, a ValidationError naming the field where there is one);
none raises a raw Python exception, none writes anything (no memory, audit row, version or
store file), and no misspelled record key is dropped silently."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memory_core as mc
from memory_core.cli import main
from memory_core.embedding import HashingEmbedder
from memory_core.store.base import AuditQuery, ChangeSet
from tests.conftest import NOW, Clock

Probe = Callable[[mc.MemoryEngine, dict[str, str]], object]
BAD_IDS: list[Any] = [1, [1], {"a": 1}, None, "\ud800", "a b", "", "x" * 200, b"mem", 1.5]
BAD_ACTORS: list[Any] = [None, 5, "", "   ", "dr\x1b[31m", "dr\n", "\ud800"]


def _id_probes() -> dict[str, Probe]:
    out: dict[str, Probe] = {}
    for k, bad in enumerate(BAD_IDS):
        out |= {
            f"get[{k}]": lambda e, ids, b=bad: e.get(b),
            f"pin[{k}]": lambda e, ids, b=bad: e.pin(b, "dr"),
            f"unpin[{k}]": lambda e, ids, b=bad: e.unpin(b, "dr"),
            f"archive[{k}]": lambda e, ids, b=bad: e.archive(b, "dr"),
            f"restore[{k}]": lambda e, ids, b=bad: e.restore(b, "dr"),
            f"set_importance[{k}]": lambda e, ids, b=bad: e.set_importance(b, 5, "dr"),
            f"confirm_supersession[{k}]": lambda e, ids, b=bad: e.confirm_supersession(b, "dr"),
            f"reject_supersession[{k}]": lambda e, ids, b=bad: e.reject_supersession(b, "dr"),
            f"undo_supersession[{k}]": lambda e, ids, b=bad: e.undo_supersession(b, "dr"),
            f"keep_flagged[{k}]": lambda e, ids, b=bad: e.keep_flagged(b, ids["sup"], "dr"),
            f"confirm_flagged[{k}]": lambda e, ids, b=bad: e.confirm_flagged(ids["m"], b, "dr"),
        }
    for k, bad in enumerate(BAD_ACTORS):
        out |= {
            f"pin by[{k}]": lambda e, ids, b=bad: e.pin(ids["m"], b),
            f"archive by[{k}]": lambda e, ids, b=bad: e.archive(ids["m"], b),
            f"confirm by[{k}]": lambda e, ids, b=bad: e.confirm_supersession(ids["sup"], b),
            f"add by[{k}]": lambda e, ids, b=bad: e.add_memory("NW-1", "Tea", "preference", by=b),
            f"save_policy by[{k}]": lambda e, ids, b=bad: e.save_policy(e.policy, b),
        }
    return out


def _record(**kw: Any) -> dict[str, Any]:
    return {"patient_id": "NW-1", "content": "Drinks green tea", "memory_type": "preference", **kw}


NAN = np.full(HashingEmbedder().dimensions, np.nan, dtype=np.float32)
PROBES: dict[str, Probe] = {
    **_id_probes(),
    # audit log filters
    **{
        f"audit_log(limit={lim!r})": lambda e, ids, lim=lim: e.audit_log(limit=lim)
        for lim in ("x", None, 1.5, 10**20, -1, 0, True, float("nan"))
    },
    "audit_log(patient_id=5)": lambda e, ids: e.audit_log(patient_id=5),  # type: ignore[arg-type]
    "audit_log(action='nonsense')": lambda e, ids: e.audit_log(action="nonsense"),
    "audit_log(actor=[1])": lambda e, ids: e.audit_log(actor=[1]),  # type: ignore[arg-type]
    # records
    "add_memories(None)": lambda e, ids: e.add_memories(None),  # type: ignore[arg-type]
    "add_memories(5)": lambda e, ids: e.add_memories(5),  # type: ignore[arg-type]
    "add_memories('abc')": lambda e, ids: e.add_memories("abc"),
    "add_memories({...})": lambda e, ids: e.add_memories(_record()),
    "add_memories([5])": lambda e, ids: e.add_memories([5]),
    "add_memories([None])": lambda e, ids: e.add_memories([None]),
    "importnace": lambda e, ids: e.add_memories([_record(importnace=9)]),
    "createdAt": lambda e, ids: e.add_memories([_record(createdAt="2020-01-01T00:00:00+00:00")]),
    "second record misspelt": lambda e, ids: e.add_memories([_record(), _record(sourse="x")]),
    "key 5": lambda e, ids: e.add_memories([{**_record(), 5: "x"}]),
    "ESC in content": lambda e, ids: e.add_memory("NW-1", "Walks \x1b[2J daily", "observation"),
    "NUL in content": lambda e, ids: e.add_memory("NW-1", "Walks\x00daily", "observation"),
    "BEL in content": lambda e, ids: e.add_memory("NW-1", "Walks\x07daily", "observation"),
    "C1 in content": lambda e, ids: e.add_memory("NW-1", "Walks\x9bdaily", "observation"),
    "DEL in content": lambda e, ids: e.add_memory("NW-1", "Walks\x7fdaily", "observation"),
    # importance, numbers, flags
    **{
        f"set_importance({v!r})": lambda e, ids, v=v: e.set_importance(ids["m"], v, "dr")
        for v in ("x", float("nan"), 100, None, True, 10**400)
    },
    "expected_version='x'": lambda e, ids: e.pin(ids["m"], "dr", expected_version="x"),
    "cleanup(threshold='x')": lambda e, ids: e.cleanup(threshold="x"),  # type: ignore[arg-type]
    "cleanup(dry_run='no')": lambda e, ids: e.cleanup(dry_run="no"),  # type: ignore[arg-type]
    "purge(older_than_days='x')": lambda e, ids: e.purge(older_than_days="x"),  # type: ignore[arg-type]
    "purge(older_than_days=-1)": lambda e, ids: e.purge(older_than_days=-1),
    "purge(older_than_days=True)": lambda e, ids: e.purge(older_than_days=True),
    "purge(older_than_days=1e308)": lambda e, ids: e.purge(older_than_days=1e308, dry_run=False),
    "purge(dry_run=0)": lambda e, ids: e.purge(older_than_days=1, dry_run=0),  # type: ignore[arg-type]
    "scan(patient_id=5)": lambda e, ids: e.scan_contradictions(5),  # type: ignore[arg-type]
    # sessions
    "record_sessions(None)": lambda e, ids: e.record_sessions("NW-1", None),  # type: ignore[arg-type]
    "record_sessions('x')": lambda e, ids: e.record_sessions("NW-1", "x"),  # type: ignore[arg-type]
    "record_sessions([5])": lambda e, ids: e.record_sessions("NW-1", [5]),  # type: ignore[list-item]
    "record_sessions(naive)": lambda e, ids: e.record_sessions(
        "NW-1",
        [NOW.replace(tzinfo=None)],
    ),
    "record_sessions(future)": lambda e, ids: e.record_sessions("NW-1", [NOW.replace(year=2100)]),
    # query vectors and context arguments
    "retrieve(query_vector=NaN)": lambda e, ids: e.retrieve("NW-1", "tea", query_vector=NAN),
    "build_context(query_vector=NaN)": lambda e, ids: e.build_context(
        "NW-1", "tea", query_vector=NAN
    ),
    "retrieve(query_vector=3 dims)": lambda e, ids: e.retrieve(
        "NW-1", "tea", query_vector=np.ones(3, dtype=np.float32)
    ),
    "retrieve(query_vector=zeros)": lambda e, ids: e.retrieve(
        "NW-1", "tea", query_vector=np.zeros(NAN.shape, dtype=np.float32)
    ),
    "retrieve(query_vector='x')": lambda e, ids: e.retrieve("NW-1", "tea", query_vector="x"),  # type: ignore[arg-type]
    "retrieve(k=0)": lambda e, ids: e.retrieve("NW-1", "tea", k=0),
    "build_context(max_memories='x')": lambda e, ids: e.build_context(
        "NW-1",
        "tea",
        max_memories="x",  # type: ignore[arg-type]
    ),
    "build_context(max_tokens=-1)": lambda e, ids: e.build_context("NW-1", "tea", max_tokens=-1),
    "keyword_search(limit='x')": lambda e, ids: e.keyword_search("NW-1", "tea", limit="x"),  # type: ignore[arg-type]
    "build_context(query=5)": lambda e, ids: e.build_context("NW-1", 5),  # type: ignore[arg-type]
    "view(patient_id=5)": lambda e, ids: e.view(5),  # type: ignore[arg-type]
    # policy
    "save_policy('x')": lambda e, ids: e.save_policy("x", "dr"),  # type: ignore[arg-type]
    # FHIR
    "import_fhir(5)": lambda e, ids: e.import_fhir(5, by="dr"),  # type: ignore[arg-type]
    "import_fhir(None)": lambda e, ids: e.import_fhir(None, by="dr"),  # type: ignore[arg-type]
    "import_fhir(missing)": lambda e, ids: e.import_fhir(ids["dir"] + "/missing.json", by="dr"),
    "import_fhir(directory)": lambda e, ids: e.import_fhir(ids["dir"], by="dr"),
    "import_fhir(latin-1)": lambda e, ids: e.import_fhir(ids["latin1"], by="dr"),
    "import_fhir(NUL in path)": lambda e, ids: e.import_fhir("a\x00b.json", by="dr"),
    "import_fhir(dry_run='no')": lambda e, ids: e.import_fhir(
        {"resourceType": "Bundle", "type": "collection"},
        by="dr",
        dry_run="no",  # type: ignore[arg-type]
    ),
}


@pytest.fixture
def eng(tmp_path: Path, clock: Clock) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(f"sqlite:///{tmp_path}/bad.db", HashingEmbedder(), clock=clock)
    yield e
    e.store.close()


def _fixtures(e: mc.MemoryEngine, tmp_path: Path, clock: Clock) -> dict[str, str]:
    m = e.add_memory("NW-1", "Takes lisinopril 10 mg daily", "medication").memory
    plan = e.add_memory("NW-1", "Check blood pressure weekly while on lisinopril", "care_plan")
    e.add_memory("NW-2", "Patient prefers mornings", "preference")
    sup = e.add_memory("NW-2", "Patient now prefers afternoons", "preference").supersessions
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{"resourceType": "Bundle", "type": "collection", "x": "caf\xe9"}')
    clock.advance(minutes=1)
    return {
        "m": m.id,
        "plan": plan.memory.id,
        "sup": sup[0].id if sup else "sup_none",
        "dir": str(tmp_path),
        "latin1": str(latin1),
    }


def _written(e: mc.MemoryEngine) -> tuple[object, ...]:
    pats = e.store.list_patients()
    return (
        [(m.id, m.version) for p in pats for m in e.store.list_memories(p)],
        [(s.id, s.version) for s in e.store.list_supersessions()],
        [(p, e.store.versions(p)) for p in pats],
        len(e.store.list_audit(AuditQuery(limit=100_000))),
        e.store.load_policy(),
    )


def test_no_bad_input_raises_raw_or_writes(
    eng: mc.MemoryEngine, tmp_path: Path, clock: Clock
) -> None:
    ids = _fixtures(eng, tmp_path, clock)
    raw: list[str] = []
    partial: list[str] = []
    accepted: list[str] = []
    before = _written(eng)
    for name, probe in PROBES.items():
        try:
            probe(eng, ids)
            accepted.append(name)
        except mc.MemoryCoreError:
            pass
        except Exception as exc:  # the defect this test counts
            raw.append(f"{name}: {type(exc).__name__}: {exc}"[:160])
        if _written(eng) != before:
            partial.append(name)
            before = _written(eng)
    assert len(PROBES) >= 150
    assert raw == []  # issue 25: 36 before
    assert partial == []
    assert accepted == []  # every probe above is bad input: none may pass silently


@pytest.mark.parametrize(
    ("record", "field"),
    [
        (_record(importnace=9), "records[0].importnace"),
        (_record(createdAt="2020-01-01T00:00:00+00:00"), "records[0].createdAt"),
        (_record(Content="x"), "records[0].Content"),
    ],
)
def test_a_misspelt_record_key_is_named(
    eng: mc.MemoryEngine, record: dict[str, Any], field: str
) -> None:
    with pytest.raises(mc.ValidationError) as err:
        eng.add_memories([record])
    assert err.value.field == field and "did you mean" in err.value.message
    assert eng.store.count_memories() == 0


def test_control_characters_are_refused_naming_the_character(eng: mc.MemoryEngine) -> None:
    with pytest.raises(mc.ValidationError) as err:
        eng.add_memory("NW-1", "Walks \x1b[31mdaily", "observation")
    assert err.value.field == "records[0].content" and "U+001B (ESC)" in err.value.message
    # line breaks and tabs are text: kept (the section makes them spaces)
    m = eng.add_memory("NW-1", "Walks\tdaily\r\nand swims", "observation").memory
    assert m.content == "Walks\tdaily\r\nand swims"


def test_open_engine_checks_everything_before_creating_the_store(tmp_path: Path) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"embedder": "bogus"}, "embedder"),
        ({"embedder": 5}, "embedder"),
        ({"policy": "x"}, "policy"),
        ({"cache_bytes": -1}, "cache_bytes"),
        ({"cache_bytes": "big"}, "cache_bytes"),
        ({"clock": 5}, "clock"),
        ({"adjudicator": "x"}, "adjudicator"),
    ]
    for n, (kw, what) in enumerate(cases):
        path = tmp_path / f"s{n}.db"
        kw.setdefault("embedder", "hashing")
        with pytest.raises(mc.MemoryCoreError) as err:
            mc.open_engine(f"sqlite:///{path}", **kw)
        assert what in str(err.value)
        assert not path.exists(), kw


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_bad_files_are_typed_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/cli.db"
    latin1 = tmp_path / "bundle.json"
    latin1.write_bytes(b'{"resourceType": "Bundle", "type": "collection", "x": "caf\xe9"}')
    rc, _, err = _cli(capsys, "--store", url, "--embedder", "hashing", "import-fhir", str(latin1))
    assert rc == 2 and err.startswith("error: bundle:") and "UTF-8" in err
    assert "Traceback" not in err
    typo = tmp_path / "typo.jsonl"
    rows = [
        {"patient_id": "NW-9", "content": "Tea daily", "memory_type": "preference"},
        {"patient_id": "NW-9", "content": "Coffee", "memory_type": "preference", "importnace": 9},
    ]
    typo.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    rc, _, err = _cli(capsys, "--store", url, "--embedder", "hashing", "import", str(typo))
    assert rc == 2 and "line 2" in err and "importnace" in err and "importance" in err
    assert mc.open_store(url).count_memories() == 0
    # what an export writes (the stored state too) imports again: those keys are known
    eng = mc.open_engine(url, "hashing")
    eng.add_memory("NW-1", "Walks daily", "observation")
    export = tmp_path / "export.jsonl"
    assert main(["--store", url, "--embedder", "hashing", "export", "--out", str(export)]) == 0
    other = f"sqlite:///{tmp_path}/other.db"
    rc, _, err = _cli(capsys, "--store", other, "--embedder", "hashing", "import", str(export))
    assert rc == 0, err
    eng.store.close()


def test_cli_show_escapes_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A statement stored with an escape sequence (straight through the store, or by an older
    version) is listed with the sequence escaped, never sent to the terminal."""
    url = f"sqlite:///{tmp_path}/show.db"
    eng = mc.open_engine(url, "hashing")
    m = eng.add_memory("NW-1", "Walks daily", "observation").memory
    from dataclasses import replace

    raw = replace(m, id="mem_raw", content="Clear \x1b[2J screen \u202e")
    eng.store.apply(ChangeSet(insert_memories=[raw], actor="older-version"))
    eng.store.close()
    rc, out, _ = _cli(capsys, "--store", url, "--embedder", "hashing", "show", "NW-1")
    assert rc == 0 and "\x1b" not in out and "\u202e" not in out
    assert "Clear \\x1b[2J screen \\u202e" in out
