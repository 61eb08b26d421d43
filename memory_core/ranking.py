"""Ranking: cosine similarity, reciprocal-rank fusion, the hybrid relevance, and the scores of
the ranking modes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]


def dots(matrix: F32, q: F32, out: F32 | None = None) -> F32:
    """``matrix @ q`` for float32 rows by numpy's own vectorised loop over each row rather than
    BLAS (why: it streams a row-major matrix faster than ``sgemv`` when the matrix is out of
    the CPU caches, as on an agent's turn). Every row is summed in the same order, so
    identical rows get identical products. ``out``: where to write them (a float32 vector of
    ``len(matrix)``)."""
    got: F32 = np.einsum("ij,j->i", matrix, q, out=out)
    return got


def inverse_norms(norms: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``1 / norms``, with 0 for a zero norm (a zero vector then scores 0 in
    :func:`cosine_scaled`)."""
    out = np.zeros_like(norms, dtype=np.float32)
    np.divide(np.float32(1.0), norms, out=out, where=norms > 0)
    return out


def cosine_scaled(dots: F32, inverse: npt.NDArray[np.float32], qn: float) -> F32:
    """The cosine kernel: cosines from the dot products of a query (of L2 norm ``qn``) with
    rows of :func:`inverse_norms` ``inverse``, in float32, written over ``dots`` (a fresh
    array of the caller's; why: three passes and no temporaries on retrieval's hot path).
    Equal rows get equal values; a zero vector scores 0. Every cosine of the engine comes
    from here or from the same unit rows (:func:`unit_rows`)."""
    np.multiply(dots, inverse, out=dots)
    dots *= np.float32(1.0 / qn) if qn > 0 else np.float32(0.0)
    # clipped to [-1, 1] by the two ufuncs (``np.clip``'s Python wrapper costs more than both)
    np.minimum(dots, np.float32(1.0), out=dots)
    np.maximum(dots, np.float32(-1.0), out=dots)
    return dots


def cosine_to_all(query: F32, matrix: F32, norms: npt.NDArray[np.float32] | None = None) -> F64:
    """Cosine of a query with each row by :func:`cosine_scaled` (``norms``: the rows' L2
    norms, if already known), as float64 (each float32 value exactly)."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    q = query.astype(np.float32, copy=False)
    if norms is None:
        norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    sims = cosine_scaled(dots(matrix, q), inverse_norms(norms), float(np.linalg.norm(q)))
    return sims.astype(np.float64)


def unit_rows(matrix: F32) -> F32:
    """The rows scaled to unit length by :func:`inverse_norms` (zero rows stay zero): their
    products are cosines."""
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    out: F32 = matrix * inverse_norms(norms)[:, None]
    return out


#: Up to this many values, :func:`top_indices` sorts them all: fewer array operations than a
#: partition and its tie handling, and faster (measured up to ~1,500 values).
SORT_ALL_UP_TO = 1024


def top_indices(values: F64, n: int) -> npt.NDArray[np.int64]:
    """Indices of the ``n`` largest values, largest first (ties by position, also at the cut:
    of equal values there, the earliest are taken)."""
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    if n >= values.size or values.size <= SORT_ALL_UP_TO:
        return np.argsort(-values, kind="stable")[:n].astype(np.int64)
    thr = values[np.argpartition(-values, n - 1)[n - 1]]
    above = np.flatnonzero(values > thr)
    sel = np.concatenate([above, np.flatnonzero(values == thr)[: n - above.size]])
    return sel[np.lexsort((sel, -values[sel]))].astype(np.int64)


def ranks_desc(values: F64) -> npt.NDArray[np.int64]:
    """1-based rank of each value, highest first (ties by position)."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def reciprocal_rank_fusion(rank_lists: Sequence[npt.NDArray[np.int64]], k: int = 60) -> F64:
    """RRF: ``Σ 1 / (k + rank)`` over the lists; a rank of 0 means "not in that list"."""
    if not rank_lists:
        return np.zeros(0)
    total = np.zeros(len(rank_lists[0]), dtype=np.float64)
    for ranks in rank_lists:
        total += np.divide(1.0, k + ranks, out=np.zeros(total.size), where=ranks > 0)
    return total


#: The keyword half's weight in :func:`hybrid_relevance` (the middle of the dev plateau: on
#: REALTALK dev every weight from 0.3 to 0.5 gives the same recall@5, see docs/evaluation.md).
KEYWORD_WEIGHT = 0.4


def hybrid_relevance(
    cosine: F64,
    bm25: F64,
    best_bm25: float | None = None,
    keyword_weight: float = KEYWORD_WEIGHT,
) -> F64:
    """One relevance in [0, 1] from the two halves of retrieval:
    ``(1 - w) · max(cosine, 0) + w · bm25 / best_bm25``.

    ``bm25``: each memory's BM25 for the query, 0 for a memory without a keyword match (or
    outside the keyword hit list); ``best_bm25``: the best BM25 among the query's keyword hits
    (default: the largest of ``bm25``), so the best keyword match gets the whole keyword
    weight ``w`` and the others their share of it. Without any keyword hit the relevance is
    ``(1 - w) · max(cosine, 0)``: a monotone function of the cosine, so the order is the
    cosine's; a memory without a keyword match gets that value whatever the other memories
    match. A negative cosine counts as no evidence (0). One memory with a keyword match is
    its query's best match (keyword part ``w``)."""
    if not 0.0 <= keyword_weight <= 1.0:
        raise ValueError(f"keyword_weight must be in [0, 1], got {keyword_weight!r}")
    c = np.clip(np.asarray(cosine, dtype=np.float64), 0.0, 1.0)
    b = np.maximum(np.asarray(bm25, dtype=np.float64), 0.0)
    top = float(b.max(initial=0.0)) if best_bm25 is None else float(best_bm25)
    ok = top > 0.0 and math.isfinite(top)
    k = np.minimum(b / top, 1.0) if ok else np.zeros_like(b)
    out: F64 = (1.0 - keyword_weight) * c + keyword_weight * k
    return out


def default_score(relevance: F64, current_importance: F64) -> F64:
    """domain.md's default score, ``relevance × current_importance / 10`` (in ``similarity``
    mode the relevance is the cosine: the seed's rule)."""
    return relevance * current_importance / 10.0


def minmax(values: F64) -> F64:
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 1e-12:
        return np.ones_like(values)
    return (values - lo) / (hi - lo)


def weighted_score(
    relevance: F64,
    current_importance: F64,
    hours_since_access: F64,
    *,
    alpha: float,
    beta: float,
    gamma: float,
    recency_half_life_days: float,
) -> F64:
    """Generative-Agents style: ``α·rel + β·imp + γ·recency``, each min-max normalised over the
    candidates; recency decays exponentially with the given half-life since last access."""
    recency = np.power(0.5, hours_since_access / (24.0 * recency_half_life_days))
    return alpha * minmax(relevance) + beta * minmax(current_importance) + gamma * minmax(recency)


def order_by_score(score: F64, created_s: F64) -> npt.NDArray[np.int64]:
    """Indices by score descending, ties broken by newer first."""
    return np.lexsort((-created_s, -score)).astype(np.int64)
