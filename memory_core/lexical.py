"""The keyword half of retrieval: BM25 over one patient's memory contents, held in memory,
and the analyser that turns a text into the word forms it searches.

Pure (no I/O). The engine keeps one :class:`LexicalIndex` per cached patient snapshot, built
once per content version and extended in place of a rebuild when the engine appends its own
new memories, so a keyword query costs a few dictionary look-ups and array additions whatever
the store (SQLite or Cosmos DB) and however many other patients the store holds.

**Tokens** follow SQLite FTS5's ``unicode61 remove_diacritics 2`` tokenizer: runs of letters and
digits, lower case, accents removed. **Word forms** (:func:`form`): each token through the
Snowball English stemmer (PyStemmer, the Porter2 algorithm), so "lives", "living" and "live"
are one term, as are "drives"/"driving", "doses"/"dose", "fasts"/"fasting" (why this stemmer and
not a lemmatiser: docs/section.md, "Word forms"). A memory is analysed once, when the index
is built or extended; a question once, by :mod:`memory_core.question`. Scores follow FTS5's
``bm25()`` formula (idf floored at 1e-6) over the word forms, with Anserini's parameters
k1 = 0.9, b = 0.4 in place of FTS5's 1.2 and 0.75 (a memory is one short statement: less length
normalisation; measured in docs/section.md, "The keyword half"). The collection statistics
(document count, average length, document frequency) are taken over the patient's own
memories, every status included. A query is an OR of its words' forms, less one-letter words
and the lexicon's function words (they match nearly every memory and carry no clinical
meaning). A weighted query (:meth:`LexicalIndex.search_weighted`) groups terms: each group
counts once per memory, as its weight times the BM25 of its best term there; the engine uses it
to add a clinical vocabulary's expansions to the query's own words
(:mod:`memory_core.vocabulary`).
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .facts.lexicon import lexicon
from .ranking import top_indices

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

#: BM25's term-frequency saturation and length normalisation (Anserini's defaults; FTS5's
#: ``bm25()`` uses 1.2 and 0.75).
K1 = 0.9
B = 0.4
MAX_QUERY_TERMS = 32

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def stopwords() -> frozenset[str]:
    """Left out of keyword queries (not of document lengths): the lexicon's function words
    (``words.json``, ``stopwords.function``), the one list the facts reader stops too."""
    return lexicon().function_words


def tokens(text: str) -> list[str]:
    """FTS5 ``unicode61 remove_diacritics 2``-like tokens: lower case, no accents."""
    low = text.lower()
    if not low.isascii():
        low = "".join(c for c in unicodedata.normalize("NFKD", low) if not unicodedata.combining(c))
    return _TOKEN.findall(low)


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...
    def stemWords(self, words: Sequence[str]) -> list[str]: ...


#: The Snowball algorithm of the word forms (PyStemmer's name for Porter2).
STEMMER = "english"
_local = threading.local()  # a PyStemmer object is not safe to share between threads


def _stemmer() -> _Stemmer:
    got: _Stemmer | None = getattr(_local, "stemmer", None)
    if got is None:
        import Stemmer  # PyStemmer: C Snowball stemmers, with a cache of recent words

        got = _local.stemmer = Stemmer.Stemmer(STEMMER)
    return got


def form(token: str) -> str:
    """A token's word form: its Snowball stem ("living" -> "live", "doses" -> "dose")."""
    return _stemmer().stemWord(token)


def as_written(token: str, text: str) -> str:
    """A lower-case token as ``text`` writes it ("egfr" in "Patient's eGFR was 89" -> "eGFR"),
    for an explanation; the token itself when the text does not hold it as a word."""
    m = re.search(rf"(?<!\w){re.escape(token)}(?!\w)", text, flags=re.IGNORECASE)
    return m.group() if m else token


def forms(toks: Sequence[str]) -> list[str]:
    """The word forms of these tokens, in order."""
    return _stemmer().stemWords(toks)


def analyse(text: str) -> list[str]:
    """The word forms of a text: what the index holds for a memory and searches for a query."""
    return forms(tokens(text))


def searched(toks: Sequence[str]) -> list[str]:
    """The distinct word forms searched for these tokens, in order (at most 32): one-letter
    words and function words left out."""
    stop = stopwords()
    kept = [t for t in toks if len(t) > 1 and t not in stop]
    return list(dict.fromkeys(forms(kept)))[:MAX_QUERY_TERMS]


def query_terms(query: str) -> list[str]:
    """The distinct word forms of a query that are searched, in order (at most 32)."""
    return searched(tokens(query))


def _postings(texts: Iterable[str], first_row: int) -> tuple[dict[str, tuple[I32, F32]], list[int]]:
    """term -> (rows, term frequencies) for these documents, rows numbered from ``first_row``;
    and each document's length in tokens."""
    rows: dict[str, list[int]] = {}
    tfs: dict[str, list[int]] = {}
    lengths: list[int] = []
    for row, text in enumerate(texts, start=first_row):
        toks = analyse(text)
        lengths.append(len(toks))
        counts: dict[str, int] = {}
        for t in toks:
            counts[t] = counts.get(t, 0) + 1
        for t, c in counts.items():
            r = rows.get(t)
            if r is None:
                rows[t] = [row]
                tfs[t] = [c]
            else:
                r.append(row)
                tfs[t].append(c)
    return (
        {
            t: (np.array(r, dtype=np.int32), np.array(tfs[t], dtype=np.float32))
            for t, r in rows.items()
        },
        lengths,
    )


class LexicalIndex:
    """Postings (term -> rows and term frequencies, int32 / float32 to keep a large patient's
    index small) and document lengths of one patient's memories, rows in the snapshot's order.
    Immutable: :meth:`extended` returns a new index that shares every posting list the new
    documents do not touch."""

    __slots__ = ("_avgdl", "_postings", "_scored", "b", "k1", "lengths")

    def __init__(
        self, postings: dict[str, tuple[I32, F32]], lengths: F64, k1: float = K1, b: float = B
    ) -> None:
        self._postings = postings
        self.lengths = lengths
        self.k1, self.b = k1, b
        self._avgdl = max(float(lengths.mean()), 1e-9) if lengths.size else 1.0
        # each searched term's rows and BM25 there, kept (they depend on the index only)
        self._scored: dict[str, tuple[I32, F64]] = {}

    @classmethod
    def build(cls, texts: Sequence[str], k1: float = K1, b: float = B) -> LexicalIndex:
        postings, lengths = _postings(texts, 0)
        return cls(postings, np.array(lengths, dtype=np.float64), k1, b)

    def __len__(self) -> int:
        return int(self.lengths.size)

    def extended(self, texts: Sequence[str]) -> LexicalIndex:
        """This index with ``texts`` appended as the next rows."""
        if not texts:
            return self
        added, lengths = _postings(texts, len(self))
        postings = dict(self._postings)
        for t, (r, tf) in added.items():
            old = postings.get(t)
            postings[t] = (r, tf) if old is None else (np.append(old[0], r), np.append(old[1], tf))
        more = np.append(self.lengths, np.array(lengths, np.float64))
        return LexicalIndex(postings, more, self.k1, self.b)

    def _term(self, term: str) -> tuple[I32, F64] | None:
        """The rows holding ``term`` and the term's BM25 in each (None: no row holds it),
        computed on the term's first search and kept: a term's BM25 in a row depends only on
        the index (why: a query's terms cost a dictionary look-up each instead of a handful
        of array operations; an :meth:`extended` index starts afresh, its statistics
        differ)."""
        got = self._scored.get(term)
        if got is None:
            got = self._score(term)
            if got is not None:  # absent terms are not kept: queries' words are unbounded
                self._scored[term] = got
        return got

    def _score(self, term: str) -> tuple[I32, F64] | None:
        hit = self._postings.get(term)
        if hit is None:
            return None
        n = len(self)
        rows, tf = hit
        df = rows.size
        idf = math.log((n - df + 0.5) / (df + 0.5))
        idf = idf if idf > 0 else 1e-6
        k1, b = self.k1, self.b
        norm = k1 * (1 - b + b * self.lengths[rows] / self._avgdl)
        f = tf.astype(np.float64)
        return rows, idf * (f * (k1 + 1)) / (f + norm)

    def scores(self, terms: Sequence[str]) -> F64:
        """BM25 of every row for these query terms (0 where no term occurs); higher = better."""
        out = np.zeros(len(self), dtype=np.float64)
        for term in terms:
            hit = self._term(term)
            if hit is not None:
                out[hit[0]] += hit[1]
        return out

    def weighted_scores(self, groups: Sequence[tuple[float, Sequence[str]]]) -> F64:
        """BM25 of every row for a weighted query: each group of terms counts once, as
        ``weight`` × the BM25 of its best term in the row (a group of one term at weight 1 is
        a plain query term, as in :meth:`scores`)."""
        n = len(self)
        out = np.zeros(n, dtype=np.float64)
        for weight, terms in groups:
            if weight <= 0.0:
                continue
            hits = [h for h in (self._term(t) for t in terms) if h is not None]
            if not hits:
                continue
            if len(hits) == 1:
                rows, s = hits[0]
                out[rows] += s if weight == 1.0 else weight * s
                continue
            best = np.zeros(n, dtype=np.float64)
            for rows, s in hits:  # rows are distinct within one term
                best[rows] = np.maximum(best[rows], s)
            out += weight * best
        return out

    def search(
        self, query: str, limit: int, allowed: npt.NDArray[np.bool_] | None = None
    ) -> tuple[I64, F64]:
        """The ``limit`` best rows for ``query`` (among ``allowed`` rows) and their scores,
        best first; ties: the earlier row first."""
        return self.search_weighted([(1.0, (t,)) for t in query_terms(query)], limit, allowed)

    def search_weighted(
        self,
        groups: Sequence[tuple[float, Sequence[str]]],
        limit: int,
        allowed: npt.NDArray[np.bool_] | None = None,
    ) -> tuple[I64, F64]:
        """:meth:`search` for a weighted query (:meth:`weighted_scores`): the ``limit`` best
        rows with a score above 0 (among ``allowed`` rows), best first; ties: the earlier row
        first."""
        if not groups or limit <= 0 or len(self) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        s = self.weighted_scores(groups)
        hit = s > 0
        if allowed is not None:
            hit &= allowed
        rows = np.flatnonzero(hit)
        rows = rows[top_indices(s[rows], limit)]
        return rows, s[rows]


def bm25(docs: Sequence[str], query: str) -> F64:
    """BM25 of each document for ``query`` (a one-off index; for tests and tools)."""
    return LexicalIndex.build(docs).scores(query_terms(query))
