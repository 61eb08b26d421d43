"""Values derived from a patient's snapshot on first use and kept with it (a snapshot never
changes): the keyword index over the memories' word forms, inverse norms, tiers by type, masks
of types, each memory's tokens and word forms, and where each memory stands. Read by the
ranking (:mod:`.retrieval`) and the section (:mod:`.section`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .. import context as ctx
from .. import ranking, standing
from ..lexical import LexicalIndex, forms, tokens
from .snapshot import Snapshot


def lexical(snap: Snapshot) -> LexicalIndex:
    index = snap.lexical.index
    if index is None:  # two threads may both build it: the same index either way
        index = LexicalIndex.build([m.content for m in snap.memories])
        snap.lexical.index = index
    return index


def inverse_norms(snap: Snapshot) -> npt.NDArray[np.float32]:
    """1 / each row's L2 norm, 0 for a zero row."""
    return snap.memoized("inverse_norms", lambda: ranking.inverse_norms(snap.norms))


def type_tiers(snap: Snapshot) -> npt.NDArray[np.int8]:
    """Each row's context tier by type alone (:func:`context.type_tiers`)."""
    return snap.memoized("type_tiers", lambda: ctx.type_tiers(snap.types_arr))


def always_mask(snap: Snapshot, types: Sequence[str]) -> npt.NDArray[np.bool_]:
    """Rows of the always-included types."""
    return snap.memoized(("always", tuple(types)), lambda: np.isin(snap.types_arr, list(types)))


Analysed = tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]


def analysed(snap: Snapshot, row: int) -> Analysed:
    """A row's memory as the keyword half reads it: its tokens, their word forms
    (:func:`memory_core.lexical.form`) and the set of those, read on use and kept with the
    snapshot (what the explanations and a question's slot words are looked up in)."""
    memo: dict[int, Analysed] = snap.memoized("word-forms", dict)
    got = memo.get(row)
    if got is None:
        words = tokens(snap.memories[row].content)
        word_forms = tuple(forms(words))
        got = memo[row] = (tuple(words), word_forms, frozenset(word_forms))
    return got


def word_forms(snap: Snapshot, row: int) -> frozenset[str]:
    """The word forms a row's memory holds (:func:`analysed`)."""
    return analysed(snap, row)[2]


def readings(snap: Snapshot) -> dict[int, standing.Reading]:
    """Snapshot row -> where its memory stands (:func:`standing.reading`), filled on use and
    kept with the snapshot (a memory's facts never change within one)."""
    return snap.memoized("readings", dict)


def reading_of(snap: Snapshot, row: int) -> standing.Reading:
    memo = readings(snap)
    got = memo.get(row)
    if got is None:
        got = memo[row] = standing.reading(snap.memories[row])
    return got
