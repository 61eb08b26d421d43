"""Contradiction / supersession detection (pure: numpy in, candidate pairs out)."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from . import facts as cf
from .ranking import cosine_to_all, unit_rows
from .values import Memory

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
_A = TypeVar("_A", bound=np.generic)

SUPERSEDING_VERDICTS = frozenset(v.value for v in cf.SUPERSEDING)
#: The most similar candidates of one memory that are adjudicated (the candidate cut is low, so
#: a large pool of one type would otherwise send thousands of pairs to the verdict per write).
CANDIDATE_LIMIT = 32


class Adjudicator(Protocol):
    """Decides what a candidate pair (same patient, same type) means."""

    method: str

    def decide(self, older: Memory, newer: Memory, similarity: float) -> cf.Decision:
        """The decision: a verdict, the rule that took it, the strength of its evidence and
        the evidence in plain words."""
        ...


__all__ = [
    "CANDIDATE_LIMIT",
    "SUPERSEDING_VERDICTS",
    "Adjudicator",
    "KeyIndex",
    "RuleAdjudicator",
    "candidates_for_new",
    "deciding",
    "facts_of",
    "filed",
    "make_adjudicator",
    "newer_strips",
    "same_type_pair_arrays",
    "same_type_pairs",
    "same_type_similarities",
]


class Deciding:
    """An adjudicator written against the older protocol (``adjudicate(older, newer,
    similarity) -> "updates" | "contradicts" | "duplicate" | "compatible"``) as a deciding
    one: its verdict is taken as strong evidence, by a rule named after its method."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.method = str(getattr(inner, "method", "custom"))
        self.reader = getattr(inner, "reader", None)

    def decide(self, older: Memory, newer: Memory, similarity: float) -> cf.Decision:
        verdict = cf.Verdict(self.inner.adjudicate(older, newer, similarity))
        strength = cf.Strength.STRONG if verdict in cf.SUPERSEDING else cf.Strength.NONE
        return cf.Decision(verdict, f"custom.{self.method}", strength, f"by {self.method}")


def deciding(adjudicator: Any) -> Adjudicator:
    """``adjudicator`` as one with ``decide`` (see :class:`Deciding`)."""
    if hasattr(adjudicator, "decide"):
        return adjudicator  # type: ignore[no-any-return]
    if hasattr(adjudicator, "adjudicate"):
        return Deciding(adjudicator)
    raise TypeError("an adjudicator needs decide(older, newer, similarity)")


def facts_of(m: Memory) -> cf.ClinicalFacts:
    """A memory's facts (read from its text when it was built by hand without them)."""
    return m.facts if m.facts is not None else cf.read(m.content, m.memory_type)


class KeyIndex:
    """``(memory type, key)`` -> the rows (in order) of the memories about that key
    (:func:`memory_core.facts.index_keys`): the candidate search's way to a fact whatever its
    wording. Contents and facts never change, so an index is advanced by the rows appended,
    copying only the lists of the keys those rows name (rebuilding it on every write made
    ``add_memory`` at 10,000 memories 21/s)."""

    __slots__ = ("entries", "rows")

    def __init__(self, rows: dict[tuple[str, str], list[int]], entries: int) -> None:
        self.rows = rows
        self.entries = entries  # rows listed in all, for the cache's size estimate

    @classmethod
    def build(cls, memories: Sequence[Memory]) -> KeyIndex:
        return cls({}, 0).extended(memories, 0)

    def extended(self, memories: Sequence[Memory], start: int) -> KeyIndex:
        """This index with the rows ``start:`` of ``memories`` added (``self`` unchanged)."""
        rows = dict(self.rows)
        copied: set[tuple[str, str]] = set()
        entries = self.entries
        for key, row in filed(memories, start):
            if key not in copied:
                copied.add(key)
                rows[key] = [*rows.get(key, ())]
            rows[key].append(row)
            entries += 1
        return KeyIndex(rows, entries)


def filed(memories: Sequence[Memory], start: int = 0) -> Iterator[tuple[tuple[str, str], int]]:
    """``((memory type, key), row)`` for each key each memory from row ``start`` on is about
    (:func:`memory_core.facts.index_keys`): what a key index files."""
    for row in range(start, len(memories)):
        m = memories[row]
        for k in cf.index_keys(facts_of(m), m.memory_type):
            yield (m.memory_type, k), row


def make_adjudicator(spec: str = "rules") -> RuleAdjudicator:
    """The decision table, with the offline reader only (``"rules"``) or with a chat model
    reading what the offline reader cannot key (``"openai:<model>"``)."""
    from .facts_llm import make_reader

    return RuleAdjudicator(make_reader(spec))


class RuleAdjudicator:
    """The product's judgement: the decision table of :mod:`memory_core.facts.rules` over the
    two memories' clinical facts (keys, values, states, contexts), never similarity alone
    (``similarity`` is the cosine that made the pair a candidate, recorded with the decision).
    A configured language model, where there is one, reads the facts of statements the offline
    reader cannot key; the same table decides."""

    method = "rules"

    def __init__(self, reader: Any = None) -> None:
        #: a configured model that reads the statements the offline reader cannot key
        #: (:class:`memory_core.facts_llm.ModelReader`), or None
        self.reader = reader

    def decide(self, older: Memory, newer: Memory, similarity: float) -> cf.Decision:
        return cf.decide(
            facts_of(older),
            facts_of(newer),
            older.memory_type,
            older.content,
            newer.content,
            older_on=older.created_at.date().isoformat(),
            newer_on=newer.created_at.date().isoformat(),
        )


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


# One strip of the cosine matrix of a type (some rows against every later row) holds at most
# this many bytes: the scans' memory is bounded by it (plus one unit-length copy of the type's
# vectors and the hits), whatever the patient's size (why: the whole n x n product of 50,000
# memories is 9.3 GiB). A type of up to 5,792 memories is one strip. Why not smaller: a strip
# of few rows streams all later rows through the cache once per strip (at 50,000 memories,
# 167-row strips took 61.7 s, 671-row ones 37.7 s, one run each on a loaded machine).
BLOCK_BYTES = 128 * 2**20
# The threshold tuner's histogram holds at most this many cosines; beyond, a seeded sample.
MAX_SIMILARITY_VALUES = 2_000_000
SAMPLE_SEED = 15


def _by_type(types: Sequence[str]) -> dict[str, npt.NDArray[np.intp]]:
    """The rows of each type (types in order of first appearance), for types of 2 or more."""
    by_type: dict[str, list[int]] = {}
    for i, t in enumerate(types):
        by_type.setdefault(t, []).append(i)
    return {t: np.asarray(r, dtype=np.intp) for t, r in by_type.items() if len(r) >= 2}


def strip_rows(n: int, block_bytes: int | None = None) -> int:
    """Rows per strip for a type of ``n`` memories (a strip: rows x up to ``n`` float32;
    ``block_bytes`` default: :data:`BLOCK_BYTES`)."""
    limit = BLOCK_BYTES if block_bytes is None else block_bytes
    return max(1, min(n, limit // (4 * max(n, 1))))


def _strips(
    types: Sequence[str],
    matrix: F32,
    block_bytes: int | None = None,
    only: Collection[str] | None = None,
) -> Iterator[tuple[str, npt.NDArray[np.intp], int, F32]]:
    """Per memory type (those in ``only``, if given), in strips of rows: ``(type, rows of the
    type, first, strip)`` where ``strip[r, c]`` is the cosine of the type's rows ``first + r``
    and ``first + c`` (so the pairs i < j of the strip are its entries with ``c > r``). Each
    strip is at most ``block_bytes``; the strips of a type cover each of its pairs once, in
    row-major order."""
    if matrix.shape[0] < 2:
        return
    for t, idx in _by_type(types).items():
        if only is not None and t not in only:
            continue
        u = unit_rows(matrix if len(idx) == matrix.shape[0] else matrix[idx])  # one copy
        n = len(idx)
        step = strip_rows(n, block_bytes)
        for i0 in range(0, n - 1, step):
            i1 = min(n, i0 + step)
            yield t, idx, i0, u[i0:i1] @ u[i0:].T


def _upper(strip: F32) -> npt.NDArray[np.bool_]:
    """The entries of a strip that are pairs i < j (column after row)."""
    r, c = strip.shape
    return np.arange(c)[None, :] > np.arange(r)[:, None]


def _strip_hits(
    strip: F32, i0: int, cut: float, limit: int | None = None
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], F32]:
    """The pairs of one strip at or above ``cut``: (first, second) positions within the type
    and the cosines, row-major. With ``limit``, about the ``limit`` most similar only (all
    that tie with the ``limit``-th), so a low cut never makes one index per entry."""
    mask = strip >= cut
    mask &= _upper(strip)
    count = int(np.count_nonzero(mask))
    if limit is not None and count > limit:
        vals = strip[mask]
        vals.partition(count - limit)  # in place: no index array as large as the strip
        kth = vals[count - limit]
        del vals
        mask &= strip >= kth
    ia, ja = np.nonzero(mask)
    return ia + i0, ja + i0, strip[ia, ja]


def _concat(parts: list[npt.NDArray[_A]], dtype: type[_A]) -> npt.NDArray[_A]:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def same_type_pairs(
    types: Sequence[str],
    matrix: F32,
    min_similarity: float = -1.0,
    limit: int | None = None,
) -> list[tuple[int, int, float]]:
    """Every pair (i < j) of rows with the same type and cosine ≥ ``min_similarity``: the
    dashboard's list of the pairs a threshold flags, in strips of bounded memory. Cosines from
    the same strips as the back-scan's (:func:`same_type_pair_arrays`). With ``limit``, only
    the ``limit`` most similar (ties: the earlier pair), in the same order."""
    a_parts: list[npt.NDArray[np.intp]] = []
    b_parts: list[npt.NDArray[np.intp]] = []
    v_parts: list[F32] = []
    held = 0
    floor = min_similarity  # with a limit: the least similar pair still kept, once full
    for _t, idx, i0, strip in _strips(types, matrix):
        ia, ja, vals = _strip_hits(strip, i0, floor, limit)
        del strip  # before the next strip is made: one strip alive at a time
        a_parts.append(idx[ia])
        b_parts.append(idx[ja])
        v_parts.append(vals)
        held += vals.size
        if limit is not None and held > 2 * limit:
            a_parts, b_parts, v_parts = _most_similar(a_parts, b_parts, v_parts, limit)
            held = v_parts[0].size
            floor = max(floor, float(v_parts[0].min()))  # ties with it may still enter
    if limit is not None:
        a_parts, b_parts, v_parts = _most_similar(a_parts, b_parts, v_parts, limit)
    a = _concat(a_parts, np.intp)
    b = _concat(b_parts, np.intp)
    v = _concat(v_parts, np.float32)
    return list(zip(a.tolist(), b.tolist(), v.astype(np.float64).tolist(), strict=True))


def _most_similar(
    a: list[npt.NDArray[np.intp]], b: list[npt.NDArray[np.intp]], v: list[F32], limit: int
) -> tuple[list[npt.NDArray[np.intp]], list[npt.NDArray[np.intp]], list[F32]]:
    """The ``limit`` most similar of the pairs held (ties: the earlier), in their order."""
    aa, bb, vv = _concat(a, np.intp), _concat(b, np.intp), _concat(v, np.float32)
    if vv.size > limit:
        keep = np.sort(np.argsort(-vv, kind="stable")[:limit])
        aa, bb, vv = aa[keep], bb[keep], vv[keep]
    return [aa], [bb], [vv]


def same_type_pair_arrays(
    types: Sequence[str],
    matrix: F32,
    cuts: Mapping[str, float],
    only: Collection[str] | None = None,
) -> Iterator[tuple[str, npt.NDArray[np.intp], npt.NDArray[np.intp], F32]]:
    """Per type (those in ``only``, if given), the pairs (rows a < b) whose cosine reaches that
    type's cut, as arrays: the back-scan of review-gated types without one Python object per
    pair (only the hits are ever indexed). Computed in strips of at most :data:`BLOCK_BYTES`
    (the memory is that plus the hits, not the square of the type's size); cosines straight
    from the strip products, in row-major order; near-equal ones are tied explicitly by the
    back-scan."""
    current: str | None = None
    parts: list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], F32]] = []

    def flush(t: str) -> Iterator[tuple[str, npt.NDArray[np.intp], npt.NDArray[np.intp], F32]]:
        if parts:
            yield (
                t,
                np.concatenate([p[0] for p in parts]),
                np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]),
            )

    for t, idx, i0, strip in _strips(types, matrix, only=only):
        if t != current:
            if current is not None:
                yield from flush(current)
            current, parts = t, []
        ia, ja, vals = _strip_hits(strip, i0, cuts.get(t, 1.0))
        del strip  # before the next strip is made: one strip alive at a time
        if ia.size:
            parts.append((idx[ia], idx[ja], vals))
    if current is not None:
        yield from flush(current)


def newer_strips(
    types: Sequence[str],
    matrix: F32,
    order: npt.NDArray[np.int64],
    only: Collection[str],
    block_bytes: int | None = None,
) -> Iterator[tuple[str, npt.NDArray[np.intp], int, F32]]:
    """Per type in ``only`` (in order of first appearance), its rows sorted by ``order``
    (oldest first) and their cosines in strips: ``(type, rows, first, strip)`` where
    ``strip[r, c]`` is the cosine of ``rows[first + r]`` with the newer ``rows[first + c]``
    for ``c > r``, and -inf for ``c <= r`` (itself and the older ones). The back-scan of
    automatic types reads each older memory's newer candidates straight off its strip row,
    without listing the pairs (at a low cut nearly every pair is one). Strips are bounded as
    :func:`same_type_pair_arrays`' are."""
    if matrix.shape[0] < 2:
        return
    for t, idx in _by_type(types).items():
        if t not in only:
            continue
        rows = idx[np.argsort(order[idx], kind="stable")]
        u = unit_rows(matrix[rows])
        n = len(rows)
        step = strip_rows(n, block_bytes)
        for i0 in range(0, n - 1, step):
            i1 = min(n, i0 + step)
            strip = u[i0:i1] @ u[i0:].T
            for r in range(i1 - i0):
                strip[r, : r + 1] = -np.inf
            yield t, rows, i0, strip
            del strip  # before the next strip is made: one strip alive at a time


class SimilarityValues(dict[str, F32]):
    """Per type, the cosines of the patient's same-type pairs (the threshold tuner's
    histogram): every pair, or -- when there are more than ``max_values`` -- a sample.

    The sample: from each type the same fraction of its memories, drawn at random without
    replacement from a generator seeded with ``seed`` (the same patient gives the same sample),
    and every pair among them -- each pair of the type is in it with the same chance, and
    there are at most ``max_values``. ``pairs`` holds the true number of pairs per type,
    ``memories`` how many memories of each type the values come from, ``sampled`` whether the
    values are a sample."""

    def __init__(
        self,
        values: Mapping[str, F32],
        pairs: Mapping[str, int],
        memories: Mapping[str, int],
        sampled: bool,
        max_values: int,
        seed: int,
    ) -> None:
        super().__init__(values)
        self.pairs = dict(pairs)
        self.memories = dict(memories)
        self.sampled = sampled
        self.max_values = max_values
        self.seed = seed

    @property
    def total_pairs(self) -> int:
        return sum(self.pairs.values())

    def describe(self) -> str:
        """One sentence for the page: what the values are."""
        held = sum(v.size for v in self.values())
        if not self.sampled:
            return f"All {held:,} same-type pairs."
        return (
            f"A sample: the {held:,} pairs among {sum(self.memories.values()):,} memories "
            f"drawn at random from each type alike (seed {self.seed}, the same on every "
            f"visit), of {self.total_pairs:,} same-type pairs; counts below are counts in the "
            "sample."
        )


def same_type_similarities(
    types: Sequence[str],
    matrix: F32,
    max_values: int | None = None,
    seed: int = SAMPLE_SEED,
) -> SimilarityValues:
    """The cosine of every same-type pair, per type, as arrays (no per-pair objects): the
    dashboard's histogram at thousands of memories, in strips of bounded memory. Above
    ``max_values`` pairs in all (default :data:`MAX_SIMILARITY_VALUES`), the pairs among a
    seeded random sample of each type's memories (:class:`SimilarityValues`)."""
    if max_values is None:
        max_values = MAX_SIMILARITY_VALUES
    groups = _by_type(types) if matrix.shape[0] >= 2 else {}
    pairs = {t: len(idx) * (len(idx) - 1) // 2 for t, idx in groups.items()}
    total = sum(pairs.values())
    sampled = total > max_values
    if sampled:  # the same fraction of each type: about that fraction squared of its pairs
        rng = np.random.default_rng(seed)
        frac = math.sqrt(max_values / total)
        groups = {
            t: np.sort(rng.choice(idx, size=int(len(idx) * frac), replace=False))
            for t, idx in groups.items()
        }
        groups = {t: idx for t, idx in groups.items() if len(idx) >= 2}
    out: dict[str, list[F32]] = {}
    rows = np.concatenate(list(groups.values())) if groups else np.zeros(0, dtype=np.intp)
    sub_types = [t for t, idx in groups.items() for _ in range(len(idx))]
    src_types, src = (sub_types, matrix[rows]) if sampled else (types, matrix)
    for t, _idx, _i0, strip in _strips(src_types, src):
        out.setdefault(t, []).append(strip[_upper(strip)])
        del strip
    values = {t: np.concatenate(p) for t, p in out.items()}
    counts = {t: len(idx) for t, idx in groups.items()}
    return SimilarityValues(values, pairs, counts, sampled, max_values, seed)
