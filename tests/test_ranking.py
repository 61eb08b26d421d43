"""The hybrid relevance (domain.md "Retrieval and ranking"): one number in [0, 1] from the
cosine and the BM25 evidence, the default score relevance × current importance / 10 with ties
newer first, the seed's rule kept as the `similarity` mode, and older saved policies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pytest

import memory_core as mc
from memory_core.embedding.base import Embedder
from memory_core.errors import ValidationError
from memory_core.policy import RankingMode
from memory_core.ranking import KEYWORD_WEIGHT, default_score, hybrid_relevance
from memory_core.store.base import ChangeSet
from tests.conftest import Clock


def arr(*x: float) -> np.ndarray:
    return np.array(x, dtype=np.float64)


# --- the pure function: golden values worked by hand ------------------------------------------


def test_golden_values() -> None:
    # 0.6·max(c, 0) + 0.4·b / 4
    got = hybrid_relevance(arr(0.8, 0.5, -0.2, 0.3), arr(0.0, 2.0, 4.0, 1.0), 4.0, 0.4)
    assert got.tolist() == pytest.approx([0.48, 0.50, 0.40, 0.28], abs=1e-12)


def test_the_shipped_weight_is_0_4() -> None:
    assert KEYWORD_WEIGHT == 0.4
    assert mc.RankingPolicy().keyword_weight == 0.4
    assert mc.RankingPolicy().mode == "hybrid"
    # the default best BM25 is the largest given
    got = hybrid_relevance(arr(1.0, 0.0), arr(3.0, 1.5))
    assert got.tolist() == pytest.approx([1.0, 0.2], abs=1e-12)


def test_without_keyword_hits_it_is_a_monotone_function_of_the_cosine() -> None:
    cos = arr(0.9, 0.1, 0.55, -0.3, 0.0, 1.0)
    got = hybrid_relevance(cos, np.zeros(6), 0.0)
    assert got.tolist() == pytest.approx([0.54, 0.06, 0.33, 0.0, 0.0, 0.6], abs=1e-12)
    order = np.argsort(-got, kind="stable").tolist()
    assert order == np.argsort(-np.maximum(cos, 0), kind="stable").tolist()
    # a memory without a keyword match gets the same value whatever the others match
    with_hits = hybrid_relevance(cos, arr(0, 5, 0, 0, 0, 0), 5.0)
    assert with_hits[0] == got[0] and with_hits[2] == got[2]


def test_one_memory() -> None:
    assert hybrid_relevance(arr(0.5), arr(0.000002)).tolist() == pytest.approx([0.7])
    assert hybrid_relevance(arr(0.5), arr(0.0)).tolist() == pytest.approx([0.3])
    assert hybrid_relevance(arr(-1.0), arr(0.0)).tolist() == [0.0]
    assert hybrid_relevance(np.zeros(0), np.zeros(0)).size == 0


@pytest.mark.parametrize("w", [0.0, 0.25, 0.4, 1.0])
def test_always_in_0_1(w: float) -> None:
    rng = np.random.default_rng(7)
    cos = rng.uniform(-1, 1, 500)
    bm = np.where(rng.random(500) < 0.5, rng.exponential(3.0, 500), 0.0)
    for best in (None, float(bm.max()), float(bm.max()) / 2, 0.0):
        got = hybrid_relevance(cos, bm, best, w)
        assert np.all(got >= 0.0) and np.all(got <= 1.0)
    assert hybrid_relevance(arr(1.0), arr(7.0), 7.0, w).tolist() == pytest.approx([1.0])
    # the extremes are the two halves alone
    if w == 0.0:
        assert hybrid_relevance(cos, bm, keyword_weight=w).tolist() == np.clip(cos, 0, 1).tolist()
    if w == 1.0:
        assert hybrid_relevance(cos, bm, keyword_weight=w).tolist() == pytest.approx(
            (bm / bm.max()).tolist()
        )


def test_more_evidence_never_lowers_relevance() -> None:
    base = hybrid_relevance(arr(0.2, 0.2, 0.6), arr(1.0, 2.0, 2.0), 2.0)
    assert base[1] > base[0]  # more BM25, same cosine
    assert base[2] > base[1]  # more cosine, same BM25


def test_bad_weight_is_refused() -> None:
    with pytest.raises(ValueError):
        hybrid_relevance(arr(0.5), arr(1.0), 1.0, 1.5)
    with pytest.raises(ValidationError):
        mc.RankingPolicy(keyword_weight=-0.1)


def test_default_score_is_relevance_times_importance_over_ten() -> None:
    assert default_score(arr(0.5, 0.25), arr(8.0, 10.0)).tolist() == pytest.approx([0.4, 0.25])


# --- policies -----------------------------------------------------------------------------------


def test_modes_and_validation() -> None:
    modes: tuple[RankingMode, ...] = ("hybrid", "similarity", "weighted")
    for mode in modes:
        assert mc.RankingPolicy(mode=mode).mode == mode
    bad: dict[str, Any]
    for bad in ({"mode": "score"}, {"mode": "cosine"}, {"mode": ""}):
        with pytest.raises(ValidationError) as err:
            mc.RankingPolicy(**bad)  # the old name only loads through from_dict
        assert err.value.field == "mode"
    for bad in ({"rrf_k": 0}, {"candidate_pool": 0}, {"candidate_pool": 2.5}):
        with pytest.raises(ValidationError):
            mc.RankingPolicy(**bad)


def test_saved_policies_round_trip_and_old_mode_names_load() -> None:
    for rp in (mc.RankingPolicy(), mc.RankingPolicy(mode="similarity", keyword_weight=0.3)):
        pol = mc.EnginePolicy(ranking=rp)
        assert mc.EnginePolicy.from_dict(pol.to_dict()) == pol
    # a policy saved before issue 12: the mode was called "score" and had no keyword_weight
    old = mc.EnginePolicy().to_dict()
    old["ranking"] = {k: v for k, v in old["ranking"].items() if k != "keyword_weight"}
    old["ranking"]["mode"] = "score"
    loaded = mc.EnginePolicy.from_dict(old)
    assert loaded.ranking == mc.RankingPolicy()
    assert loaded.ranking.mode == "hybrid"
    weighted = {"ranking": {"mode": "weighted", "always_include_types": ["allergy"]}}
    assert mc.EnginePolicy.from_dict(weighted).ranking.mode == "weighted"
    with pytest.raises(ValidationError):
        mc.EnginePolicy.from_dict({"ranking": {"mode": "nonsense"}})


def test_an_old_store_policy_opens_as_hybrid(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/old.db"
    eng = mc.open_engine(url, "hashing")
    old = mc.EnginePolicy().to_dict()
    old["ranking"]["mode"] = "score"
    del old["ranking"]["keyword_weight"]
    # as an older version saved it
    eng.store.apply(ChangeSet(policy=old, actor="an-older-version"))
    eng.store.close()
    again = mc.open_engine(url, "hashing")
    assert again.policy.ranking.mode == "hybrid"
    again.store.close()


# --- through the engine ---------------------------------------------------------------------------


class TableEmbedder(Embedder):
    """Fixed vectors: the text's first word picks the direction (``"near"`` texts lie close to
    the query, the rest are orthogonal to it), so a test decides what the embedding misses."""

    model_id = "test/table"
    dimensions = 4

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for i, t in enumerate(texts):
            word = t.split()[0].lower()
            if word == "query":
                out[i] = (1, 0, 0, 0)
            elif word == "near":
                k = len(t) % 7  # cosine with the query 0.64 (k = 0) down to 0.38
                out[i] = (1, 1.2 + 0.3 * k, 0, 0)
            else:
                out[i] = (0, 0, 1, 0)
        return out


def _engine(mode: RankingMode, clock: Clock) -> mc.MemoryEngine:
    pol = mc.EnginePolicy(ranking=mc.RankingPolicy(mode=mode))
    return mc.MemoryEngine(mc.open_store("sqlite:///:memory:"), TableEmbedder(), pol, clock=clock)


def _fill(eng: mc.MemoryEngine, days_ago: Callable[[float], datetime]) -> str:
    """60 observations the embedding finds, and one medication it misses that names the drug
    the query asks about. Returns the medication's id."""
    recs = [
        {
            "patient_id": "NW-1",
            "content": f"near note {'x' * (i % 7)} number {i}",
            "memory_type": "observation",
            "created_at": days_ago(10 + i),
        }
        for i in range(60)
    ]
    eng.add_memories(recs, by="test", detect=False)
    return eng.add_memory(
        "NW-1", "Other: takes semaglutide weekly", "medication", created_at=days_ago(5)
    ).memory.id


def test_a_keyword_only_match_enters_the_pool_and_ranks_by_relevance(
    clock: Clock, days_ago: Callable[[float], datetime]
) -> None:
    eng = _engine("hybrid", clock)
    med = _fill(eng, days_ago)
    got = eng.retrieve("NW-1", "query semaglutide", k=100, record_access=False)
    assert len(got) == 50
    top = got[0]
    assert top.memory.id == med
    assert top.similarity == 0.0 and top.keyword_rank == 1 and top.bm25 > 0
    assert top.relevance == pytest.approx(0.4)  # the keyword half alone, as its query's best
    [(hit, bm)] = eng.keyword_search("NW-1", "query semaglutide")
    assert hit.id == med and top.bm25 == bm
    for s in got:
        assert 0.0 <= s.relevance <= 1.0
        assert s.score == pytest.approx(s.relevance * s.current_importance / 10, abs=1e-15)
        if s.memory.id != med:  # no keyword hit: bm25 0, relevance 0.6 × cosine
            assert s.bm25 == 0.0 and s.keyword_rank is None
            assert s.relevance == pytest.approx(0.6 * s.similarity)
    # the explanation of every candidate carries the numbers
    items = eng.build_context("NW-1", "query semaglutide", record_access=False).items
    assert items[0].scored.memory.id == med and items[0].included
    assert [i.scored.relevance for i in items] == [s.relevance for s in got]


def test_the_similarity_mode_keeps_the_seed_rule(
    clock: Clock, days_ago: Callable[[float], datetime]
) -> None:
    eng = _engine("similarity", clock)
    med = _fill(eng, days_ago)
    got = eng.retrieve("NW-1", "query semaglutide", k=100, record_access=False)
    for s in got:
        assert s.score == s.similarity * s.current_importance / 10
    # the keyword match is in the pool (fused rank), but cosine 0 puts it last
    assert got[-1].memory.id == med and got[-1].score == 0.0
    assert got[-1].relevance == pytest.approx(0.4)  # the relevance is shown in every mode


def test_ties_go_to_the_newer_memory(clock: Clock, days_ago: Callable[[float], datetime]) -> None:
    eng = _engine("hybrid", clock)
    recs = [
        {
            "patient_id": "NW-1",
            "content": "near same words",
            "memory_type": "observation",
            "created_at": days_ago(d),
            "importance": 5,
            "pinned": True,  # no decay: equal scores
        }
        for d in (30, 10, 20)
    ]
    ids = [r.memory.id for r in eng.add_memories(recs, by="test", detect=False)]
    got = eng.retrieve("NW-1", "query words", k=3, record_access=False)
    assert len({s.score for s in got}) == 1
    assert [s.memory.id for s in got] == [ids[1], ids[2], ids[0]]


def test_one_memory_gets_a_meaningful_relevance(clock: Clock) -> None:
    eng = _engine("hybrid", clock)
    eng.add_memory("NW-1", "near takes metformin", "medication")
    [hit] = eng.retrieve("NW-1", "query metformin", record_access=False)
    # one memory: BM25's idf is floored, but a keyword match is still its query's best
    assert hit.bm25 > 0 and hit.relevance == pytest.approx(0.6 * hit.similarity + 0.4)
    [miss] = eng.retrieve("NW-1", "query insulin", record_access=False)
    assert miss.bm25 == 0.0 and miss.relevance == pytest.approx(0.6 * miss.similarity)


@pytest.mark.parametrize("mode", ["hybrid", "similarity"])
def test_domain_hba1c_worked_example_in_both_modes(
    minilm: mc.Embedder, clock: Clock, days_ago: Callable[[float], datetime], mode: RankingMode
) -> None:
    """domain.md: "HbA1c was 8.2% in January" then "improved to 7.1% in March": the newer
    ranks first; the older is kept as history (and is what an as-of query in February sees)."""
    pol = mc.EnginePolicy(ranking=mc.RankingPolicy(mode=mode))
    e = mc.open_engine("sqlite:///:memory:", minilm, pol, clock=clock)
    e.add_memory("NW-1", "Patient lives alone", "social", created_at=days_ago(200))
    jan = e.add_memory(
        "NW-1", "Patient's HbA1c was 8.2% in January", "lab_result", created_at=days_ago(140)
    ).memory
    mar = e.add_memory(
        "NW-1", "Patient's HbA1c improved to 7.1% in March", "lab_result", created_at=days_ago(80)
    ).memory
    got = e.retrieve("NW-1", "latest HbA1c", record_access=False)
    assert got[0].memory.id == mar.id
    assert jan.id in {m.id for m in e.list_memories("NW-1", include_inactive=True)}
    feb = e.retrieve("NW-1", "latest HbA1c", now=days_ago(100), record_access=False)
    assert feb[0].memory.id == jan.id
