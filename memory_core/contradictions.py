"""Contradiction / supersession detection (pure: numpy in, candidate pairs out)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .adjudicate import verdict_by_rule
from .ranking import cosine_to_all, unit_rows
from .values import Memory

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

SUPERSEDING_VERDICTS = frozenset({"contradicts", "updates", "duplicate"})
#: The most similar candidates of one memory that are adjudicated (the candidate cut is low, so
#: a large pool of one type would otherwise send thousands of pairs to the verdict per write).
CANDIDATE_LIMIT = 32


class Adjudicator(Protocol):
    """Decides what a candidate pair (same patient, same type, similar) means."""

    method: str

    def adjudicate(self, older: Memory, newer: Memory, similarity: float) -> str:
        """One of ``contradicts``, ``updates``, ``duplicate``, ``compatible``."""
        ...


__all__ = [
    "CANDIDATE_LIMIT",
    "SUPERSEDING_VERDICTS",
    "Adjudicator",
    "RuleAdjudicator",
    "SimilarityAdjudicator",
    "candidates_for_new",
    "same_type_pair_arrays",
    "same_type_pairs",
    "same_type_similarities",
    "verdict_by_rule",
]


class RuleAdjudicator:
    """The offline default: a verdict from evidence in the two statements (the same drug
    through the drug dictionary, the same lab analyte with its values compared, the same
    subject with a changed value or a change word), never from similarity alone; see
    :func:`memory_core.adjudicate.verdict_by_rule`. Candidates still come from the type's
    cosine threshold."""

    method = "rules"

    def adjudicate(self, older: Memory, newer: Memory, similarity: float) -> str:
        return verdict_by_rule(older.content, newer.content, similarity, older.memory_type)


# the name the engine and older callers use for the default adjudicator
SimilarityAdjudicator = RuleAdjudicator


def candidates_for_new(
    new_vector: F32,
    new_type: str,
    new_created_s: float,
    types: Sequence[str] | npt.NDArray[np.str_],
    created_s: npt.NDArray[np.float64],
    matrix: F32,
    threshold: float,
    active: npt.NDArray[np.bool_] | None = None,
    norms: npt.NDArray[np.float32] | None = None,
    limit: int | None = None,
) -> list[tuple[int, float, bool]]:
    """Existing memories (rows of ``matrix``) of the same type whose cosine with the new one is
    at least ``threshold``: ``(row, similarity, row_is_older)``, most similar first. With
    ``active``, only the rows it marks are compared (a superseded or archived memory cannot be
    superseded again, nor supersede); ``norms``: the rows' L2 norms, precomputed; ``limit``: at
    most that many, the most similar."""
    if matrix.shape[0] == 0:
        return []
    same = (
        types == new_type
        if isinstance(types, np.ndarray)
        else np.fromiter((t == new_type for t in types), np.bool_, len(types))
    )
    if active is not None:
        same &= active
    rows = np.flatnonzero(same)
    if rows.size == 0:
        return []
    sims = cosine_to_all(new_vector, matrix[rows], None if norms is None else norms[rows])
    hit = np.flatnonzero(sims >= threshold)
    if hit.size == 0:
        return []
    hit = hit[np.argsort(-sims[hit], kind="stable")]  # most similar first; ties by row
    if limit is not None:
        hit = hit[:limit]
    return [
        (int(r), float(s), bool(c <= new_created_s))
        for r, s, c in zip(
            rows[hit].tolist(), sims[hit].tolist(), created_s[rows[hit]].tolist(), strict=True
        )
    ]


def _unit_blocks(
    types: Sequence[str], matrix: F32
) -> Iterator[tuple[str, npt.NDArray[np.intp], F32]]:
    """Per memory type: (type, rows, the cosine matrix of those rows)."""
    if matrix.shape[0] < 2:
        return
    unit = unit_rows(matrix)
    by_type: dict[str, list[int]] = {}
    for i, t in enumerate(types):
        by_type.setdefault(t, []).append(i)
    for t, rows in by_type.items():
        if len(rows) >= 2:
            idx = np.asarray(rows, dtype=np.intp)
            u = unit[idx]
            yield t, idx, u @ u.T


def _type_blocks(
    types: Sequence[str], matrix: F32
) -> Iterator[tuple[str, npt.NDArray[np.intp], npt.NDArray[np.intp], F32]]:
    """Per memory type: (type, row of the first, row of the second, cosine) of every pair
    i < j of that type, vectorised one block per type."""
    for t, idx, block in _unit_blocks(types, matrix):
        iu, ju = np.triu_indices(len(idx), k=1)
        yield t, idx[iu], idx[ju], block[iu, ju]


def same_type_pairs(
    types: Sequence[str], matrix: F32, min_similarity: float = -1.0
) -> list[tuple[int, int, float]]:
    """Every pair (i < j) of rows with the same type and cosine ≥ ``min_similarity``: the
    dashboard's list of the pairs a threshold flags. Cosines from the same block product as
    the back-scan's (:func:`same_type_pair_arrays`)."""
    out: list[tuple[int, int, float]] = []
    for _t, a, b, vals in _type_blocks(types, matrix):
        keep = vals >= min_similarity
        out.extend(
            (int(i), int(j), float(v)) for i, j, v in zip(a[keep], b[keep], vals[keep], strict=True)
        )
    return out


def same_type_pair_arrays(
    types: Sequence[str], matrix: F32, cuts: Mapping[str, float]
) -> Iterator[tuple[str, npt.NDArray[np.intp], npt.NDArray[np.intp], F32]]:
    """Per type, the pairs (rows a < b) whose cosine reaches that type's cut, as arrays: the
    back-scan without one Python object per pair (only the hits are ever indexed). Cosines
    straight from the block product; near-equal ones are tied explicitly by the back-scan."""
    for t, idx, block in _unit_blocks(types, matrix):
        ia, ja = np.nonzero(np.triu(block >= cuts.get(t, 1.0), k=1))
        if ia.size:
            yield t, idx[ia], idx[ja], block[ia, ja]


def same_type_similarities(types: Sequence[str], matrix: F32) -> dict[str, F32]:
    """The cosine of every same-type pair, per type, as arrays (no per-pair objects): the
    dashboard's histogram at thousands of memories."""
    return {t: vals for t, _a, _b, vals in _type_blocks(types, matrix)}
