"""The read path's shortcuts give what the longer way gives: a keyword index's kept per-term
scores (searched before and after an extension), the two ways of :func:`ranking.top_indices`,
and the fused ranks."""

from __future__ import annotations

import numpy as np

from memory_core import ranking
from memory_core.lexical import LexicalIndex, query_terms
from tests.test_lexical import DOCS

QUERIES = ["metformin", "morning walks with daughter", "penicillin hives metformin", "absent"]


def test_kept_term_scores_are_the_index_own_before_and_after_an_extension() -> None:
    base = LexicalIndex.build(DOCS[:3])
    searched = {q: base.scores(query_terms(q)).tolist() for q in QUERIES}  # keeps the terms
    grown = base.extended(DOCS[3:])
    fresh = LexicalIndex.build(DOCS)
    for q in QUERIES:
        terms = query_terms(q)
        # the same floats, not approximately: the kept value is the one computed afresh
        assert base.scores(terms).tolist() == searched[q]
        assert base.scores(terms).tolist() == LexicalIndex.build(DOCS[:3]).scores(terms).tolist()
        # the extended index scores with its own statistics (more rows, another mean length)
        assert grown.scores(terms).tolist() == fresh.scores(terms).tolist()


def _by_stable_sort(values: np.ndarray, n: int) -> list[int]:
    return [int(i) for i in np.argsort(-values, kind="stable")[:n]]


def test_top_indices_is_the_same_above_and_below_the_full_sort_size() -> None:
    rng = np.random.default_rng(7)
    for size in (5, ranking.SORT_ALL_UP_TO, ranking.SORT_ALL_UP_TO + 1, 3000):
        values = np.round(rng.random(size) * 20) / 4  # many ties, also at the cut
        for n in (1, 7, 50, size - 1, size, size + 3):
            got = ranking.top_indices(values, n).tolist()
            assert got == _by_stable_sort(values, n), (size, n)
    assert ranking.top_indices(np.zeros(3000), 0).tolist() == []


def test_fused_ranks_sum_each_list_share() -> None:
    vrank = np.array([1, 0, 3, 2], dtype=np.int64)
    krank = np.array([0, 1, 2, 0], dtype=np.int64)
    got = ranking.reciprocal_rank_fusion([vrank, krank], 60)
    want = [1 / 61, 1 / 61, 1 / 63 + 1 / 62, 1 / 62]
    assert got.tolist() == want
    assert ranking.reciprocal_rank_fusion([vrank], 0).tolist() == [1.0, 0.0, 1 / 3, 1 / 2]
