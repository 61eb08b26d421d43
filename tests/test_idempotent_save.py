"""Issue 34, finding 9: a double click on the Ingest page's "Save N accepted" wrote every
proposal twice (1 in 5 tries: 24 memories for 12, two batches 160 ms apart, and pending reviews
of a memory against its own copy). A proposal batch now carries an id: each proposal's memory
id is derived from it, so the batch is written once whatever the clicks -- a second save, or one
racing the first, returns what the first wrote. And a word-for-word copy of a memory is never
put to review against it: it restates it (applied at once, audited, undoable)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.values import SupersessionState

PID = "NW-1001"
WHEN = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _transcript() -> str:
    return (
        files("memory_core")
        .joinpath("data/demo/transcript_nw1001_followup.txt")
        .read_text(encoding="utf-8")
    )


def _engine(url: str = "sqlite:///:memory:") -> mc.MemoryEngine:
    return mc.open_engine(url, HashingEmbedder(), clock=lambda: WHEN)


def _copies(engine: mc.MemoryEngine) -> list[tuple[str, str]]:
    """Pending reviews of a memory against a word-for-word copy of it."""
    out = []
    for s in engine.supersessions(state="pending"):
        old, new = engine.get(s.old_id), engine.get(s.new_id)
        if old.content == new.content:
            out.append((old.content, s.id))
    return out


def test_a_batch_carries_an_id_and_each_proposal_names_it() -> None:
    eng = _engine()
    one, two = eng.extract_memories(PID, _transcript()), eng.extract_memories(PID, _transcript())
    assert one.batch_id and two.batch_id and one.batch_id != two.batch_id
    assert {p.batch_id for p in one} == {one.batch_id}
    assert [p.number for p in one] == list(range(1, len(one) + 1))


def test_saving_a_batch_twice_writes_it_once() -> None:
    eng = _engine()
    props = eng.extract_memories(PID, _transcript())
    first = eng.accept_proposals(PID, list(props), by="dr")
    again = eng.accept_proposals(PID, list(props), by="dr")
    assert [r.memory.id for r in again] == [r.memory.id for r in first]
    assert len(eng.list_memories(PID)) == len(props)  # before: twice as many
    adds = [a for a in eng.audit_log(limit=10_000) if a.action == "add"]
    assert len(adds) == len(props)
    assert _copies(eng) == []


def test_saves_of_one_batch_racing_each_other_write_it_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    engines = [_engine(url) for _ in range(4)]
    props = engines[0].extract_memories(PID, _transcript())
    rows = [{**p.__dict__} for p in props]  # as the page passes them (edited rows)
    start = threading.Barrier(len(engines))
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def save(eng: mc.MemoryEngine) -> None:
        start.wait()
        try:
            results.append([r.memory.id for r in eng.accept_proposals(PID, rows, by="dr")])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert len(results) == 4 and all(r == results[0] for r in results)
    reader = _engine(url)
    assert len(reader.list_memories(PID)) == len(props)
    assert _copies(reader) == []


def test_a_batch_saved_with_other_content_under_its_ids_is_refused() -> None:
    eng = _engine()
    props = eng.extract_memories(PID, _transcript())
    eng.accept_proposals(PID, list(props), by="dr")
    edited: list[dict[str, Any]] = [{**p.__dict__} for p in props]
    edited[0]["content"] = "Patient stopped metformin (edited after saving)"
    with pytest.raises(mc.ConflictError, match="saved already"):
        eng.accept_proposals(PID, edited, by="dr")
    assert len(eng.list_memories(PID)) == len(props)


@pytest.mark.parametrize(
    ("mtype", "text"),
    [
        ("adverse_reaction", "Patient reports diarrhoea on metformin ER"),
        ("allergy", "Patient is allergic to penicillin (hives)"),
    ],
)
def test_a_word_for_word_copy_is_never_put_to_review(mtype: str, text: str) -> None:
    eng = _engine()
    first = eng.add_memory(PID, text, mtype).memory
    again = eng.add_memory(PID, text, mtype)  # before: a pending review of the pair
    (sup,) = again.supersessions
    assert sup.state is SupersessionState.AUTO and sup.rule == "statement.restated"
    assert sup.old_id == first.id and _copies(eng) == []
    (pre,) = eng.preview_supersessions(PID, text, mtype)
    assert pre.mode == "auto"
    # a statement that differs is still reviewed
    other = eng.add_memory(PID, text.replace("Patient", "The patient now"), mtype)
    assert all(s.state is SupersessionState.PENDING for s in other.supersessions)
