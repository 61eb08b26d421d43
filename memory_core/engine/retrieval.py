"""Retrieval: the question analysed once (:func:`memory_core.question.analyse`), its keyword
and vector ranks, the memories about what it names, the candidate pool (by hybrid relevance, or
by reciprocal-rank fusion), the ranking of the pool (:class:`Ranked`), and the access recording.
The context section built from a ranking: :mod:`.section`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from typing import overload

import numpy as np
import numpy.typing as npt

from .. import decay, ranking
from .. import validation as v
from ..context import sanitize_line
from ..contradictions import facts_of
from ..facts import index_keys
from ..facts.model import KeyKind, subject_kinds
from ..policy import EnginePolicy
from ..promotion import promotions
from ..question import EMPTY, Question
from ..question import analyse as analyse_question
from ..store.codec import seconds, to_us
from ..tokens import count_tokens
from ..values import InjectionRecord, Memory, ScoredMemory
from .asof import active_indices, decay_inputs, with_usage
from .core import AGENT, Core, new_id
from .derived import always_mask, analysed, inverse_norms, lexical, reading_of, type_tiers
from .snapshot import Snapshot

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
# a cosine scan of this many rows or more is split in two halves, one on a helper thread
SCAN_SPLIT_ROWS = 4096
#: At most this many memories of a kind the question asks for ("what medications") join the
#: candidates (the most similar to the question): the section's list line is built from them.
KIND_LIMIT = 200
#: The types whose statement is the keyed fact itself (a result, a drug taken, a condition, an
#: allergy, a reaction, an event): a memory of these types about a key the question names is a
#: keyword match. A plan or a treatment's outcome only touches the key ("repeat the kidney
#: function tests"): its words still match.
KEYED_TYPES = frozenset(
    {"lab_result", "vital_sign", "observation", "medication", "condition", "allergy",
     "adverse_reaction", "immunization", "procedure"}
)  # fmt: skip
#: The types whose statement about a chart slot is the slot's fact (the social history, the
#: patient's preferences, a plan, a home observation: "lives with a spouse", "drives a truck
#: for work", "prefers morning appointments"): a memory of these types about a slot the
#: question names is a keyword match too.
SLOT_TYPES = frozenset({"social", "preference", "care_plan", "observation"})


class Ranked(Sequence[ScoredMemory]):
    """The candidate pool of one retrieval, best first, held as arrays: a
    :class:`ScoredMemory` is made only for the candidates that are looked at (an agent call
    reads the few it injects; the explanation of every candidate is built on demand)."""

    def __init__(
        self,
        snapshot: Snapshot,
        rows: I64,
        cur: F64,
        sims: F64,
        score: F64,
        krank: I64,
        vrank: I64,
        fused: F64,
        bm25: F64,
        relevance: F64,
        count: F64,
        last: F64,
        warn: float,
        type_tiers: npt.NDArray[np.int8],
        question: Question = EMPTY,
        keyed: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        """``snapshot``: the patient's snapshot the pool was ranked on (the section's tiers and
        annotations read the same one); ``type_tiers``: each candidate's tier by type (see
        :func:`type_tiers`); ``question``: the analysed question (its words, what its
        vocabulary added to the keyword query, what it names and asks for); ``keyed``: which
        candidates are about a key it names."""
        self.snapshot = snapshot
        self._memories = snapshot.memories
        self.question = question
        self.rows = rows
        self._keyed = keyed
        self._cols = (rows, cur, sims, score, krank, vrank, fused, bm25, relevance, count, last)
        self._made: list[ScoredMemory | None] = [None] * len(rows)
        # a tier is a type, never a current importance (the ⚠️ marker is display only)
        self.tiers: list[int] = type_tiers.tolist()
        self._safety = type_tiers < 2

    @classmethod
    def empty(cls, snapshot: Snapshot) -> Ranked:
        z, f = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return cls(snapshot, z, f, f, f, z, z, f, f, f, f, f, 10.0, np.zeros(0, dtype=np.int8))

    def __len__(self) -> int:
        return len(self._made)

    def _make(self, i: int) -> ScoredMemory:
        got = self._made[i]
        if got is None:
            rows, cur, sims, score, krank, vrank, fused, bm25, rel, count, last = self._cols
            memory = self._memories[int(rows[i])]
            keys: tuple[str, ...] = ()
            if self._keyed is not None and self._keyed[i]:
                named = index_keys(facts_of(memory), memory.memory_type) & self.question.keys
                keys = tuple(sorted(named))
            got = ScoredMemory(
                memory=with_usage(memory, float(count[i]), float(last[i])),
                similarity=float(sims[i]),
                current_importance=float(cur[i]),
                score=float(score[i]),
                keyword_rank=int(krank[i]) or None,
                vector_rank=int(vrank[i]) or None,
                fused=float(fused[i]),
                bm25=float(bm25[i]),
                relevance=float(rel[i]),
                safety=bool(self._safety[i]),
                keys=keys,
            )
            self._made[i] = got
        return got

    @overload
    def __getitem__(self, i: int) -> ScoredMemory: ...
    @overload
    def __getitem__(self, i: slice) -> list[ScoredMemory]: ...
    def __getitem__(self, i: int | slice) -> ScoredMemory | list[ScoredMemory]:
        if isinstance(i, slice):
            return [self._make(j) for j in range(len(self))[i]]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._make(i)

    def top(self, k: int) -> list[ScoredMemory]:
        """The ``k`` best, each with what it matched (:meth:`matched`)."""
        return [self.matched(self._make(j)) for j in range(min(k, len(self)))]

    def matched(self, s: ScoredMemory) -> ScoredMemory:
        """``s`` with what its keyword evidence is: the question's words it holds ("driving →
        drives") and the expansions it matched ("kidney function → egfr"). Made for what is
        explained or returned, never for the candidates a selection only reads (a chat-derived
        patient's section reads ~1,300 of them)."""
        row = self.snapshot.index.get(s.memory.id)
        if s.bm25 <= 0 or row is None:
            return s
        toks, word_forms, held = analysed(self.snapshot, row)
        return replace(
            s,
            keyword_words=self.question.words_in(s.memory.content, (toks, word_forms)),
            keyword_via=self.question.via(s.memory.content, held),
        )


# --- the two ranks ---------------------------------------------------------------------------
def keyword_hits(snap: Snapshot, question: Question, active: I64, limit: int) -> tuple[I64, F64]:
    """Snapshot rows and BM25 of the ``limit`` best keyword matches among ``active``: the
    question's own word forms, plus what its concepts and brand names add at a lower weight
    (``Question.groups``)."""
    if not question.groups or active.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    allowed = None
    if active.size < len(snap.memories):
        allowed = np.zeros(len(snap.memories), dtype=np.bool_)
        allowed[active] = True
    return lexical(snap).search_weighted(question.groups, limit, allowed)


def keyword_search(
    core: Core, patient_id: str, query: str, limit: int, now: datetime | None
) -> list[tuple[Memory, float]]:
    """The patient's active memories that match ``query``'s words, best BM25 first (the
    keyword half of retrieval, on its own). Reads only."""
    v.patient_id(patient_id)
    v.query(query)
    limit = v.positive_int(limit, "limit")
    now = core.now(now)
    snap = core.snapshots.snapshot(patient_id)
    rows, scores = keyword_hits(snap, analyse_question(query), active_indices(snap, now), limit)
    return [(snap.memories[r], s) for r, s in zip(rows.tolist(), scores.tolist(), strict=True)]


def dots(core: Core, matrix: F32, q: F32) -> F32:
    """:func:`ranking.dots`; from :data:`SCAN_SPLIT_ROWS` rows the lower half runs on a helper
    thread (why: a large scan is bound by memory bandwidth, which two cores share better)."""
    n = matrix.shape[0]
    if n < SCAN_SPLIT_ROWS:
        return ranking.dots(matrix, q)
    out = np.empty(n, dtype=np.float32)
    half = n // 2
    job = core.workers().submit(ranking.dots, matrix[half:], q, out[half:])
    ranking.dots(matrix[:half], q, out[:half])
    job.result()
    return out


def vector_ranks(sims: F32, pool_n: int, extra: I64) -> tuple[I64, I64]:
    """The rows that can enter the candidate pool -- every row whose cosine ranks in the best
    ``pool_n``, plus ``extra`` (keyword hits, always-included types), ascending -- and their
    vector ranks: 1 + the number of rows with a higher cosine (equal cosines, e.g. the same
    text saved twice, share a rank). Any other row ranks below ``pool_n`` and has no keyword
    rank, so its fused value and its hybrid relevance are lower than those of each of the best
    ``pool_n``: it cannot enter the pool, and its rank is never looked up. One sort of the
    cosines gives the cut and every candidate's rank."""
    asc = np.sort(sims)
    mask = sims >= asc[sims.size - pool_n]
    mask[extra] = True
    cand = mask.nonzero()[0]
    higher = sims.size - asc.searchsorted(sims[cand], side="right")
    return cand, (1 + higher).astype(np.int64)


# --- what the question names and asks for --------------------------------------------------------
def _best(pos: I64, sims: F32, limit: int) -> I64:
    """At most ``limit`` of these active positions, the most similar to the question."""
    if pos.size <= limit:
        return pos
    return np.sort(pos[np.argsort(-sims[pos], kind="stable")[:limit]])


@lru_cache(maxsize=64)
def keyed_types(kind: KeyKind) -> frozenset[str]:
    """The types whose statement about a key of this kind is a key match: the
    :data:`KEYED_TYPES` about that kind, and for a chart slot the :data:`SLOT_TYPES` too."""
    types = KEYED_TYPES | SLOT_TYPES if kind is KeyKind.SLOT else KEYED_TYPES
    return frozenset(t for t in types if kind in subject_kinds(t))


def keyed(memory_type: str, keys: frozenset[str]) -> bool:
    """A memory of this type about these keys (those it shares with the question) is a key
    match (:func:`keyed_types`)."""
    return any(memory_type in keyed_types(KeyKind.of(k)) for k in keys)


#: The memo key (with the question's keys) of the snapshot rows about those keys.
KEY_ROWS = "rows-about-keys"


def key_matches(snap: Snapshot, rows: I64, keys: frozenset[str]) -> npt.NDArray[np.bool_]:
    """Which of these snapshot rows hold a memory (of :func:`keyed_types`) about a key the
    question names: the rows the snapshot's key index files under such a key whose standing
    names one (what a memory stands on is among the keys it is indexed by), found once per
    snapshot and key set -- not every row of those types read per call (all 4,566 lab results
    at 10,000 memories) -- then marked on a mask of the snapshot's rows read at ``rows`` (a
    set look-up of every active row, ``np.isin``, cost ~5 % of a section at 2,000 memories)."""
    if not keys or rows.size == 0:
        return np.zeros(rows.size, dtype=np.bool_)
    about = np.zeros(len(snap.memories), dtype=np.bool_)
    about[snap.memoized((KEY_ROWS, keys), lambda: _rows_about(snap, keys))] = True
    return about[rows]


def _rows_about(snap: Snapshot, keys: frozenset[str]) -> I64:
    """The snapshot rows whose memory stands on one of ``keys`` (see :func:`key_matches`)."""
    index = snap.key_index().rows
    filed = {r for k in keys for t in keyed_types(KeyKind.of(k)) for r in index.get((t, k), ())}
    about = [r for r in sorted(filed) if keyed(snap.types[r], reading_of(snap, r).keys & keys)]
    return np.array(about, dtype=np.int64)


def kind_positions(snap: Snapshot, active: I64, question: Question, sims: F32) -> I64:
    """Active positions of the memories of the kinds the question asks for (at most
    :data:`KIND_LIMIT` per kind, the most similar)."""
    out = [np.zeros(0, dtype=np.int64)]
    for kind in question.kinds:
        mask = always_mask(snap, kind.types)[active]
        out.append(_best(np.flatnonzero(mask), sims, KIND_LIMIT))
    return np.unique(np.concatenate(out)).astype(np.int64)


# --- ranking ---------------------------------------------------------------------------------
def rank(
    core: Core,
    patient_id: str,
    query: str,
    now: datetime,
    query_vector: F32 | None = None,
    policy: EnginePolicy | None = None,
    present: bool = False,
) -> Ranked:
    """Every candidate of the pool, best first. ``present``: ``now`` is the current moment
    (not an as-of query), so a store's own vector search may be used."""
    pol = policy or core.policy
    rp = pol.ranking
    snap, use = core.snapshots.state(patient_id)
    now_s = now.timestamp()
    active = active_indices(snap, now)
    if active.size == 0:
        return Ranked.empty(snap)
    question = analyse_question(query)  # read once; every stage reads this object
    limit = max(rp.candidate_pool * 4, 50)
    kw_rows, kw_bm25 = keyword_hits(snap, question, active, limit)
    kw_pos = active.searchsorted(kw_rows)  # snapshot row -> active position
    always = np.flatnonzero(always_mask(snap, rp.always_include_types)[active])
    q = core.embedder.embed(query) if query_vector is None else query_vector
    q = q.astype(np.float32, copy=False)
    qn = math.sqrt(float(np.dot(q, q)))
    inv = inverse_norms(snap)
    if active.size == len(snap.memories):
        sims = ranking.cosine_scaled(dots(core, snap.matrix, q), inv, qn)
    elif 2 * active.size < len(snap.memories):  # mostly superseded: scan the active rows
        sims = ranking.cosine_scaled(dots(core, snap.matrix[active], q), inv[active], qn)
    else:
        sims = ranking.cosine_scaled(dots(core, snap.matrix, q), inv, qn)[active]
    # the memories of a kind the question asks for join the candidates
    if pol.context.lists and question.kinds:
        always = np.union1d(always, kind_positions(snap, active, question, sims)).astype(np.int64)
    # the memories about a key the question names compete for the pool as keyword matches
    keys = question.keys if rp.key_matches else frozenset()
    about = key_matches(snap, active, keys)
    key_pos = _best(np.flatnonzero(about), sims, KIND_LIMIT)
    pool_n = min(rp.candidate_pool, active.size)
    served = core.store.vector_candidates(patient_id, q, rp.candidate_pool) if present else None
    if served is None:
        cand, vrank = vector_ranks(sims, pool_n, np.concatenate([kw_pos, always, key_pos]))
    else:
        # a store that searches vectors itself (Cosmos DB `server` mode) picks the vector
        # list; similarities stay the exact cosines from the snapshot, so the ranking is
        # the same on every store
        act = set(active.tolist())
        served_rows = [
            i for i in (snap.index.get(mid) for mid, _ in served) if i is not None and i in act
        ]
        served_pos = np.searchsorted(active, served_rows).tolist()
        cand = np.unique(np.array([*served_pos, *kw_pos, *always, *key_pos], dtype=np.int64))
        vrank = np.zeros(cand.size, dtype=np.int64)
        vrank[np.searchsorted(cand, served_pos)] = np.arange(1, len(served_pos) + 1)
    kw_at = cand.searchsorted(kw_pos)
    krank = np.zeros(cand.size, dtype=np.int64)
    krank[kw_at] = np.arange(1, kw_pos.size + 1)
    bm25 = np.zeros(cand.size, dtype=np.float64)  # 0 outside the keyword hit list
    bm25[kw_at] = kw_bm25
    # a candidate about a key the question names is a keyword match of its own: the best one's
    # evidence (after the word matches in the keyword list's order). The pool stays complete:
    # a keyed row left out of the candidates is less similar than the KIND_LIMIT kept
    keyed = about[cand]
    extra = keyed & (krank == 0)
    krank[extra] = kw_pos.size + 1 + np.argsort(np.argsort(-sims[cand[extra]]))
    fused = ranking.reciprocal_rank_fusion([vrank, krank], rp.rrf_k)
    all_sims = sims[cand].astype(np.float64)
    # the hybrid relevance, in every mode (the explanations show it); the best BM25 of the
    # query's hits is the first hit's
    best = float(kw_bm25[0]) if kw_bm25.size else (1.0 if keyed.any() else 0.0)
    evidence = np.where(keyed, np.maximum(bm25, best), bm25)
    all_rel = ranking.hybrid_relevance(all_sims, evidence, best, rp.keyword_weight)
    if rp.mode == "hybrid":
        # the pool: the best relevance. Complete: a row outside ``cand`` has no keyword hit
        # and a cosine below each of the best ``pool_n``, so a lower relevance than theirs.
        order = ranking.top_indices(all_rel, min(pool_n, cand.size))
    else:
        order = ranking.top_indices(fused, min(pool_n, cand.size))  # the best fused ranks
    # ... plus every always-included (safety) type
    picked = np.zeros(cand.size, dtype=np.bool_)
    picked[order] = True
    picked[cand.searchsorted(always)] = True
    chosen = picked.nonzero()[0]  # ascending, as the candidates
    rows = active[cand[chosen]]
    inputs = decay_inputs(core.store, snap, use, rows, now_s)
    cur = decay.current_importance(inputs, pol.decay, now_s)
    csims = all_sims[chosen]
    crel = all_rel[chosen]
    cfused = fused[chosen]
    if rp.mode == "weighted":
        hours = np.maximum(now_s - inputs.last_access_s, 0.0) / 3600.0
        score = ranking.weighted_score(
            cfused,
            cur,
            hours,
            alpha=rp.alpha,
            beta=rp.beta,
            gamma=rp.gamma,
            recency_half_life_days=rp.recency_half_life_days,
        )
    elif rp.mode == "similarity":  # the seed's rule: the cosine in the relevance's place
        score = ranking.default_score(csims, cur)
    else:
        score = ranking.default_score(crel, cur)
    ordering = ranking.order_by_score(score, inputs.created_s)
    return Ranked(
        snap,
        rows[ordering],
        cur[ordering],
        csims[ordering],
        score[ordering],
        krank[chosen[ordering]],
        vrank[chosen[ordering]],
        cfused[ordering],
        bm25[chosen[ordering]],
        crel[ordering],
        inputs.access_count[ordering],
        inputs.last_access_s[ordering],
        pol.decay.warn_threshold,
        type_tiers(snap)[rows[ordering]],
        question,
        keyed[chosen[ordering]],
    )


def record_access(
    core: Core,
    patient_id: str,
    ids: list[str],
    now: datetime,
    injection: InjectionRecord | None,
) -> None:
    """The one place an agent's use of memories is written (accesses, promotion, injection).
    The engine's cached usage of the patient follows in memory (no reload of the patient's
    whole usage) unless another writer moved it in between. A promotion is audited under the
    agent the injection names (else the engine's own ``agent``)."""
    accessed = core.store.record_access(patient_id, ids, now, injection)
    at_s = float(seconds([to_us(now)])[0])  # the moment as the store reports it
    core.snapshots.accessed(patient_id, [(a.memory_id, a.access_count) for a in accessed], at_s)
    due = promotions(accessed, core.policy.decay)
    if due:
        actor = injection.agent if injection is not None and injection.agent else AGENT
        core.store.promote(patient_id, due, actor, now)


def query_vec(core: Core, value: F32 | None) -> F32 | None:
    """A caller's query vector, checked like a stored one (:func:`validation.embedding`: the
    embedder's dimensions, finite, not all zero), so no NaN score can come of it."""
    return None if value is None else v.embedding(value, core.embedder.dimensions, "query_vector")


def access_moment(core: Core, now: datetime) -> datetime:
    """``now`` for a call that records accesses: not in the future of the engine's clock
    (more than :data:`validation.CLOCK_SKEW` after it), which would make later views of the
    present hide the access -- a :class:`ValidationError` naming ``now``. Previews (no
    recording) may look at any moment."""
    return v.timestamp(now, "now", core.clock())


def retrieve(
    core: Core,
    patient_id: str,
    query: str,
    k: int,
    now: datetime | None,
    record: bool,
    query_vector: F32 | None,
    agent: str | None = None,
) -> list[ScoredMemory]:
    """The ``k`` best active memories for ``query``. With ``record`` (an agent is being given
    them) each returned memory's access count and last access are refreshed atomically;
    previews pass ``record=False`` and change nothing. ``agent`` (an agent principal being
    given them) also appends an injection record naming it, its text the memories' lines."""
    v.patient_id(patient_id)
    v.query(query)
    k = v.positive_int(k, "k")
    query_vector = query_vec(core, query_vector)
    agent = None if agent is None else v.actor(agent, "agent")
    present = now is None
    now = core.now(now)
    if record:
        now = access_moment(core, now)
    found = rank(core, patient_id, query, now, query_vector, present=present).top(k)
    if record and found:
        injection = None
        if agent is not None:
            text = "\n".join(f"- {sanitize_line(s.memory.content)}" for s in found)
            injection = InjectionRecord(
                id=new_id("inj"),
                at=now,
                patient_id=patient_id,
                query=query,
                items=tuple((s.memory.id, s.score) for s in found),
                tokens=count_tokens(text, core.encoding),
                text=text,
                agent=agent,
            )
        record_access(core, patient_id, [s.memory.id for s in found], now, injection)
    return found
