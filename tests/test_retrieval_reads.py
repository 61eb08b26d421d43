"""What one agent turn reads from the store: ``build_context`` looks at the patient's version
once and builds the section (tiers, annotations) on the snapshot it ranked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.embedding.base import F32
from memory_core.engine import retrieval, section


def counting(fn: Callable[..., Any], calls: list[str]) -> Callable[..., Any]:
    def wrapped(patient_id: str) -> Any:
        calls.append(patient_id)
        return fn(patient_id)

    return wrapped


def seed(engine: mc.MemoryEngine) -> None:
    engine.add_memory("NW-1", "Allergic to penicillin (rash)", "allergy")
    engine.add_memory("NW-1", "Takes metformin 500 mg twice daily", "medication")
    engine.add_memory("NW-1", "Nausea after starting metformin", "adverse_reaction")
    engine.add_memory("NW-1", "Prefers morning appointments", "preference")


@pytest.mark.parametrize("record", [False, True])
def test_build_context_reads_the_patient_version_once(
    engine: mc.MemoryEngine, monkeypatch: pytest.MonkeyPatch, record: bool
) -> None:
    seed(engine)
    engine.build_context("NW-1", "metformin side effects", record_access=False)  # warm
    calls: list[str] = []
    monkeypatch.setattr(engine.store, "versions", counting(engine.store.versions, calls))
    result = engine.build_context("NW-1", "metformin side effects", record_access=record)
    assert "Nausea after starting metformin" in result.text
    # the ranking's read, plus (when recording) the one the access write checks against
    assert calls.count("NW-1") == (2 if record else 1)


def test_section_uses_the_snapshot_it_ranked(
    engine: mc.MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write landing between the ranking and the section (another engine on the same store)
    does not mix two states of the patient in one section."""
    seed(engine)
    other = mc.MemoryEngine(engine.store, engine.embedder, clock=engine.clock)
    ranked_on: list[int] = []
    real_rank = retrieval.rank

    def rank_then_write(*args: Any, **kw: Any) -> retrieval.Ranked:
        got = real_rank(*args, **kw)
        ranked_on.append(got.snapshot.version)
        other.add_memory("NW-1", "Takes lisinopril 10 mg daily", "medication")
        return got

    monkeypatch.setattr(retrieval, "rank", rank_then_write)
    seen: list[int] = []
    real_tiers = section.section_tiers

    def tiers(snap: Any, *args: Any) -> list[int]:
        seen.append(snap.version)
        return real_tiers(snap, *args)

    monkeypatch.setattr(section, "section_tiers", tiers)
    engine.build_context("NW-1", "metformin side effects", record_access=False)
    assert seen == ranked_on
    assert engine.store.versions("NW-1")[0] > ranked_on[0]  # the write did land in between


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> F32:
        self.texts.extend(texts)
        return super().embed_batch(texts)


def test_a_patient_without_active_memories_is_not_embedded_for(clock: Any) -> None:
    """An agent's turn for a patient with nothing to inject embeds nothing (with a hosted
    embedder, no call at all)."""
    emb = CountingEmbedder()
    eng = mc.open_engine("sqlite:///:memory:", emb, clock=clock)
    m = eng.add_memory("NW-1", "Prefers morning appointments", "preference")
    eng.archive(m.memory.id, "dr-lee")
    for _ in range(2):  # not cached yet, then cached without an active memory
        emb.texts.clear()
        assert eng.build_context("NW-1", "appointments", record_access=False).text == ""
        assert eng.build_context("NW-2", "appointments", record_access=False).text == ""
        assert emb.texts == []
