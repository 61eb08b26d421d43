"""The candidate pool computed without a full sort (memory_core.engine.retrieval ``vector_ranks``)
against a brute-force pool, in both modes that multiply a relevance by importance. Every active
memory is ranked by cosine (equal cosines share the best rank) and by BM25; ``similarity`` mode
(the seed's rule): reciprocal-rank fusion with the keyword ranks over all of them, the best 50
plus every allergy, then score = similarity × current importance / 10; ``hybrid`` mode (the
default): relevance = 0.6 · max(cosine, 0) + 0.4 · BM25 / the best BM25 (0 without a keyword
hit), the best 50 relevances plus every allergy, then score = relevance × current importance /
10. A memory about a clinical key the question names (``key_matches``, issue 23) is a keyword
match as good as the best word match, ranked after the word matches by cosine; with it off, the
seed's rule alone. Patients with many exact duplicates (tied cosines) and superseded memories."""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import pytest

import memory_core as mc
from memory_core import standing
from memory_core.embedding.base import Embedder
from memory_core.engine.retrieval import keyed
from memory_core.policy import RankingMode
from memory_core.question import analyse
from tests.conftest import NOW, Clock

WORDS = [
    *("metformin", "insulin", "glucose", "morning", "walks", "daughter", "penicillin", "hives"),
    *("appointment", "diet", "sleep", "pain", "knee", "blood", "pressure", "lisinopril"),
    *("statin", "fatigue", "dizziness", "swelling", "rash"),
]
TYPES = ["observation", "medication", "preference", "lab_result", "allergy", "social"]


class CountEmbedder(Embedder):
    """Word counts in 64 buckets: small whole numbers, so every dot product is exact whatever
    the BLAS kernel's summation order, and identical texts tie exactly."""

    model_id = "test/word-counts"
    dimensions = 64

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, zlib.crc32(w.encode()) % self.dimensions] += 1
        return out


def brute_force(engine: mc.MemoryEngine, pid: str, query: str) -> list[tuple[str, int, int]]:
    pol = engine.policy.ranking
    view = engine.view(pid)
    act = [i for i, s in enumerate(view.status) if s is mc.Status.ACTIVE]
    mems = [view.memories[i] for i in act]
    cur = view.current_importance[act]
    q = engine.embedder.embed(query)
    mat = np.vstack([m.embedding for m in mems]).astype(np.float32)
    dots = mat @ q
    denom = np.linalg.norm(mat, axis=1).astype(np.float32) * np.float32(np.linalg.norm(q))
    sims = np.clip(np.where(denom > 0, dots / denom, np.float32(0)), -1, 1).astype(np.float64)
    vrank = np.array([1 + int((sims > s).sum()) for s in sims])  # equal cosines share a rank
    hits = engine.keyword_search(pid, query, limit=200)
    kw = {m.id: r for r, (m, _) in enumerate(hits, 1)}
    bm = {m.id: b for m, b in hits}
    krank = np.array([kw.get(m.id, 0) for m in mems])
    keys = analyse(query).keys if pol.key_matches else frozenset()
    about = [keyed(m.memory_type, standing.reading(m).keys & keys) for m in mems]
    # a keyed memory with no word match: ranked after the word matches, by cosine
    extra = sorted((i for i in range(len(mems)) if about[i] and not krank[i]),
                   key=lambda i: (-sims[i], i))  # fmt: skip
    for r, i in enumerate(extra, len(hits) + 1):
        krank[i] = r
    if pol.mode == "similarity":
        fused = 1.0 / (pol.rrf_k + vrank) + np.where(krank > 0, 1.0 / (pol.rrf_k + krank), 0.0)
        pool = sorted(range(len(mems)), key=lambda i: (-fused[i], i))[: pol.candidate_pool]
        rel = list(sims)
    else:
        w = pol.keyword_weight
        best = max(bm.values(), default=1.0 if any(about) else 0.0)
        evidence = [max(bm.get(m.id, 0.0), best) if about[i] else bm.get(m.id, 0.0)
                    for i, m in enumerate(mems)]  # fmt: skip
        rel = [
            (1 - w) * max(float(sims[i]), 0.0) + w * (evidence[i] / best if best else 0.0)
            for i in range(len(mems))
        ]
        pool = sorted(range(len(mems)), key=lambda i: (-rel[i], i))[: pol.candidate_pool]
    pool = sorted(set(pool) | {i for i, m in enumerate(mems) if m.memory_type == "allergy"})
    score = {i: rel[i] * cur[i] / 10 for i in pool}
    best_first = sorted(pool, key=lambda i: (-score[i], -mems[i].created_at.timestamp()))
    return [(mems[i].id, int(vrank[i]), int(krank[i])) for i in best_first]


#: Scores this close are equal: two products equal in exact arithmetic (0.8 x 1 / 10 and
#: 0.2 x 4 / 10) differ in their last bits between the engine's float32 cosines and the brute
#: force's, so their order is either.
TIE = 1e-6


def in_tie_order(
    got: list[tuple[str, int, int]], want: list[tuple[str, int, int]], scores: dict[str, float]
) -> list[tuple[str, int, int]]:
    """``got`` with each run of candidates whose scores are within :data:`TIE` of the run's
    first put in ``want``'s order (the same candidates, or the lists differ anyway)."""
    where = {w[0]: k for k, w in enumerate(want)}
    out, k = [], 0
    while k < len(got):
        j = k + 1
        while j < len(got) and abs(scores.get(got[j][0], 0.0) - scores.get(got[k][0], 0.0)) < TIE:
            j += 1
        out += sorted(got[k:j], key=lambda g: where.get(g[0], -1))
        k = j
    return out


@pytest.mark.parametrize("key_matches", [True, False])
@pytest.mark.parametrize("mode", ["similarity", "hybrid"])
@pytest.mark.parametrize("seed", range(6))
def test_pool_matches_brute_force(seed: int, mode: RankingMode, key_matches: bool) -> None:
    rng = random.Random(seed)
    policy = mc.EnginePolicy(ranking=mc.RankingPolicy(mode=mode, key_matches=key_matches))
    store = mc.open_store("sqlite:///:memory:")
    engine = mc.MemoryEngine(store, CountEmbedder(), policy, clock=Clock())
    pid = f"POOL-{seed}"
    phrases = [" ".join(rng.sample(WORDS, rng.randint(2, 5))) for _ in range(40)]
    n = rng.choice([30, 80, 200, 400])
    records = [
        {
            "patient_id": pid,
            "content": rng.choice(phrases),  # many exact duplicates: tied cosines
            "memory_type": rng.choice(TYPES),
            "created_at": NOW - timedelta(days=rng.uniform(0, 400)),
            "importance": rng.randint(1, 10),
        }
        for _ in range(n)
    ]
    engine.add_memories(records, now=NOW, by="test", detect=seed % 2 == 1)
    for query in ("metformin morning glucose", "penicillin rash", "daughter", "zzz unknown"):
        got = engine.retrieve(pid, query, k=1000, record_access=False)
        want = brute_force(engine, pid, query)
        scores = {s.memory.id: s.score for s in got}
        ranked = [(s.memory.id, s.vector_rank, s.keyword_rank or 0) for s in got]
        assert in_tie_order(ranked, want, scores) == want
        ctx = engine.build_context(pid, query, record_access=False)
        items = [(i.scored.memory.id, 0, 0) for i in ctx.items]
        assert [i[0] for i in in_tie_order(items, want, scores)] == [w[0] for w in want]


def test_top_indices_takes_the_earliest_of_equal_values_at_the_cut() -> None:
    from memory_core.ranking import top_indices

    v = np.array([0.1, 0.5, 0.3, 0.5, 0.3, 0.3, 0.9])
    assert top_indices(v, 4).tolist() == [6, 1, 3, 2]
    assert top_indices(v, 5).tolist() == [6, 1, 3, 2, 4]
    assert top_indices(v, 0).tolist() == []
    assert top_indices(v, 10).tolist() == [6, 1, 3, 2, 4, 5, 0]
    ties = np.full(200, 0.25)
    assert top_indices(ties, 50).tolist() == list(range(50))


@pytest.mark.parametrize("n", [1, 7, 33, 2_049])
def test_dots_match_the_matrix_product_and_give_identical_rows_identical_values(n: int) -> None:
    rng = np.random.default_rng(n)
    matrix = rng.standard_normal((n, 384)).astype(np.float32)
    q = rng.standard_normal(384).astype(np.float32)
    matrix[-1] = matrix[0]  # the same vector first and last (any vectorised tail included)
    got = mc.ranking.dots(matrix, q)
    assert got.dtype == np.float32 and got.shape == (n,)
    np.testing.assert_allclose(got, matrix.astype(np.float64) @ q.astype(np.float64), atol=1e-4)
    assert got[-1] == got[0]


def test_scaled_cosines_match_the_plain_ones_and_score_a_zero_vector_zero() -> None:
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((50, 384)).astype(np.float32)
    matrix[3] = 0.0  # an all-zero row
    matrix[9] = matrix[4]
    q = rng.standard_normal(384).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    inverse = mc.ranking.inverse_norms(norms)
    assert inverse[3] == 0.0 and np.isfinite(inverse).all()
    dots = mc.ranking.dots(matrix, q)
    denom = norms * np.float32(np.linalg.norm(q))  # the plain float32 cosines
    plain = np.clip(np.where(denom > 0, dots / np.where(denom > 0, denom, 1), 0), -1, 1)
    scaled = mc.ranking.cosine_scaled(dots.copy(), inverse, float(np.linalg.norm(q)))
    np.testing.assert_allclose(scaled, plain, atol=1e-6)
    assert scaled[3] == 0.0 and scaled[9] == scaled[4]
    assert np.all(np.abs(scaled) <= 1.0)
    # a zero query scores every row 0 (no division by zero)
    zero = mc.ranking.cosine_scaled(dots.copy(), inverse, 0.0)
    assert np.all(zero == 0.0)
