"""Retrieval: keyword and vector ranks, the candidate pool (by hybrid relevance, or by their
reciprocal-rank fusion), the ranking of the pool, the context section and system prompt built
from it, and the access recording."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from typing import overload

import numpy as np
import numpy.typing as npt

from .. import context as ctx
from .. import decay, flags, ranking, standing, vocabulary
from .. import validation as v
from ..contradictions import facts_of
from ..errors import ValidationError
from ..facts import index_keys
from ..facts.model import KeyKind, subject_kinds
from ..lexical import LexicalIndex
from ..policy import ContextPolicy, EnginePolicy
from ..promotion import promotions
from ..store.codec import seconds, to_us
from ..tokens import count_tokens
from ..values import (
    ContextResult,
    InjectionRecord,
    Memory,
    ScoredMemory,
    StaleFlag,
    SupersessionState,
)
from . import flagging
from .asof import active_indices, decay_inputs, with_usage
from .core import AGENT, Core, new_id
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
        expansions: Sequence[vocabulary.Expansion] = (),
        question: vocabulary.Question | None = None,
        keyed: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        """``snapshot``: the patient's snapshot the pool was ranked on (the section's tiers and
        annotations read the same one); ``type_tiers``: each candidate's tier by type (see
        :func:`type_tiers`); ``expansions``: what the clinical vocabulary added to the keyword
        query; ``question``: what it names and asks for (:func:`vocabulary.question`);
        ``keyed``: which candidates are about a key it names."""
        self.snapshot = snapshot
        self._memories = snapshot.memories
        self._expansions = tuple(expansions)
        self.question = question or vocabulary.Question()
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
            via: tuple[str, ...] = ()
            if self._expansions and bm25[i] > 0:
                via = vocabulary.matched(self._expansions, memory.content)
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
                keyword_via=via,
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
        return [self._make(j) for j in range(min(k, len(self)))]


# --- per-snapshot derived values (made on first use, kept with the snapshot) --------------------
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


# --- the two ranks ---------------------------------------------------------------------------
def keyword_hits(
    snap: Snapshot,
    query: str,
    active: I64,
    limit: int,
    expansions: Sequence[vocabulary.Expansion] | None = None,
) -> tuple[I64, F64]:
    """Snapshot rows and BM25 of the ``limit`` best keyword matches among ``active``: the
    query's own words, plus what its clinical concept words and brand names add at a lower
    weight (:func:`vocabulary.weighted_terms`; ``expansions``: the query's, if known)."""
    if not query.strip() or active.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    allowed = None
    if active.size < len(snap.memories):
        allowed = np.zeros(len(snap.memories), dtype=np.bool_)
        allowed[active] = True
    groups = vocabulary.weighted_terms(query, expansions)
    return lexical(snap).search_weighted(groups, limit, allowed)


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
    rows, scores = keyword_hits(snap, query, active_indices(snap, now), limit)
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


@lru_cache(maxsize=256)
def _types_about(kinds: frozenset[KeyKind]) -> tuple[str, ...]:
    """The :data:`KEYED_TYPES` whose statements are about keys of these kinds."""
    return tuple(t for t in sorted(KEYED_TYPES) if subject_kinds(t) & kinds)


#: The memo key (with the question's keys) of the snapshot rows about those keys.
KEY_ROWS = "rows-about-keys"


def key_matches(snap: Snapshot, rows: I64, keys: frozenset[str]) -> npt.NDArray[np.bool_]:
    """Which of these snapshot rows hold a memory (of :data:`KEYED_TYPES`) about a key the
    question names: the rows the snapshot's key index files under such a key whose standing
    names one (what a memory stands on is among the keys it is indexed by), found once per
    snapshot and key set -- not every row of those types read per call (all 4,566 lab results
    at 10,000 memories)."""
    if not keys or rows.size == 0:
        return np.zeros(rows.size, dtype=np.bool_)
    return np.isin(rows, snap.memoized((KEY_ROWS, keys), lambda: _rows_about(snap, keys)))


def _rows_about(snap: Snapshot, keys: frozenset[str]) -> I64:
    """The snapshot rows whose memory stands on one of ``keys`` (see :func:`key_matches`)."""
    index = snap.key_index().rows
    types = _types_about(frozenset(KeyKind.of(k) for k in keys))
    filed = {r for t in types for k in keys for r in index.get((t, k), ())}
    about = [r for r in sorted(filed) if reading_of(snap, r).keys & keys]
    return np.array(about, dtype=np.int64)


def kind_positions(snap: Snapshot, active: I64, question: vocabulary.Question, sims: F32) -> I64:
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
    expansions = vocabulary.expand(query)
    question = vocabulary.question(query)
    limit = max(rp.candidate_pool * 4, 50)
    kw_rows, kw_bm25 = keyword_hits(snap, query, active, limit, expansions)
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
        expansions if kw_bm25.size else (),
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
            text = "\n".join(f"- {ctx.sanitize_line(s.memory.content)}" for s in found)
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


def build_context(
    core: Core,
    patient_id: str,
    query: str,
    now: datetime | None,
    max_memories: int,
    max_tokens: int | None,
    record: bool,
    query_vector: F32 | None,
    policy: EnginePolicy | None,
    agent: str | None = None,
) -> ContextResult:
    """The exact "Patient Context from Previous Interactions" section for this query, with
    every candidate explained (``policy``: default the engine's). ``record`` (an agent call)
    refreshes the included memories and appends an injection record (naming ``agent``, the
    agent principal told, when given)."""
    v.patient_id(patient_id)
    v.query(query)
    max_memories = v.positive_int(max_memories, "max_memories")
    if max_tokens is not None:
        max_tokens = v.positive_int(max_tokens, "max_tokens")
    query_vector = query_vec(core, query_vector)
    agent = None if agent is None else v.actor(agent, "agent")
    present = now is None
    now = core.now(now)
    if record:
        now = access_moment(core, now)
    pol = policy or core.policy
    ranked = rank(core, patient_id, query, now, query_vector, pol, present=present)
    snap = ranked.snapshot
    layout = section_layout(snap, ranked, now, pol.context)
    sel = ctx.select_and_render(
        ranked,
        max_memories=max_memories,
        max_tokens=max_tokens,
        warn_threshold=pol.decay.warn_threshold,
        encoding=core.encoding,
        tiers=section_tiers(snap, ranked, now),
        annotate=annotator(core, snap, patient_id, ranked, now, pol.context),
        shared=layout.shared,
        order=layout.order,
        allergy_entries=lambda i: standing.allergy_label(ranked[i].memory),
    )
    injection_id = None
    if record:
        included = [ranked[i] for i in sel.chosen]  # in section order
        injection = InjectionRecord(
            id=new_id("inj"),
            at=now,
            patient_id=patient_id,
            query=query,
            items=tuple((s.memory.id, s.score) for s in included),
            tokens=sel.tokens,
            text=sel.text,
            agent=agent,
        )
        record_access(core, patient_id, [s.memory.id for s in included], now, injection)
        injection_id = injection.id
    return ContextResult(
        text=sel.text,
        tokens=sel.tokens,
        encoding=core.encoding,
        injection_id=injection_id,
        explain=lambda: sel.items,
        places=sel.places,
    )


# --- the section's tiers and shared lines ------------------------------------------------------
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


def current_drugs(snap: Snapshot, now: datetime) -> frozenset[str]:
    """The drugs the patient's current medications name at ``now``, with their ingredients
    and allergy classes (:func:`vocabulary.drug_family`)."""
    active = active_indices(snap, now)
    names: list[str] = []
    for row in active[snap.types_arr[active] == "medication"].tolist():  # numpy picks the few
        r = reading_of(snap, row)
        if r.standing is standing.Standing.CURRENT:
            names += [f.name for f in r.facts if f.kind.value == "drug"]
    return vocabulary.drug_family(names)


def section_tiers(snap: Snapshot, ranked: Ranked, now: datetime) -> list[int]:
    """The context tiers of the candidates: 0 allergy; 1 an adverse reaction concerning a drug
    the question or one of the patient's current medications names -- the same drug, one of
    its ingredients or a class it belongs to, by the drug dictionary (co-codamol: codeine;
    amoxicillin: penicillins) -- or any adverse reaction when the question asks about
    allergies and reactions; 2 the rest (never by importance)."""
    tiers = list(ranked.tiers)
    if 1 not in tiers:
        return tiers
    question = ranked.question
    if question.asks_for("adverse_reaction") is not None:
        return tiers
    drugs = set(question.drugs) | current_drugs(snap, now)
    for j, t in enumerate(tiers):
        if t != 1:
            continue
        facts = facts_of(ranked[j].memory)
        names = [f.name for f in facts.facts if f.kind.value == "drug"]
        if not (vocabulary.drug_family(names) & drugs):
            tiers[j] = 2
    return tiers


class Layout:
    """The shared lines of a section (:class:`context.Shared`) and the candidates whose own
    line moves (``order``: what ended, after the current memories of its type; a memory of a
    kind the question asks for that no list can say, right after the lists)."""

    def __init__(self) -> None:
        self.shared: list[ctx.Shared] = []
        self.order: dict[int, float] = {}


def _about_drug(question: vocabulary.Question, r: standing.Reading) -> bool:
    """The question names a class this memory's drug belongs to ("the diabetes medication")."""
    return any(question.about_drug(f.name) for f in r.facts if f.kind.value == "drug")


def section_layout(
    snap: Snapshot, ranked: Ranked, now: datetime, policy: ContextPolicy | None = None
) -> Layout:
    """What the section says on shared lines (domain.md, "Injected context format"):

    - **lists**: when the question asks for a kind ("what medications", "active problems",
      "latest labs"), every current candidate of its types on one line from its facts, one
      entry per label (a result: the newest of its analyte);
    - **history**: what ended (a drug stopped, a condition resolved, an order completed), unless
      the question is about it, goes after the current memories of its type; two or more of a
      type share one line, newest first;
    - **pairs**: an allergy and the newer allergy statements pending review against it, on one
      line (the documented one in force, the newer one unconfirmed).

    Each is switched by the ``policy`` (``lists``, ``history_last``, ``allergy_pairs``)."""
    pol = policy or ContextPolicy()
    out = Layout()
    question = ranked.question if pol.lists else replace(ranked.question, kinds=())
    # the types that can have a history line, and those of a kind asked for with a list line
    wanted = standing.ENDING_TYPES | {
        t for k in question.kinds for t in k.types if vocabulary.line_title(t, "current")
    }
    by_type: dict[str, list[int]] = {}
    types = snap.types
    for j, row in enumerate(ranked.rows.tolist()):
        if types[row] in wanted:
            by_type.setdefault(types[row], []).append(j)
    for t, js in by_type.items():
        _type_lines(snap, ranked, question, t, js, out, pol.history_last)
    if pol.allergy_pairs:
        _pairs(snap, ranked, now, out)
    return out


def _type_lines(
    snap: Snapshot,
    ranked: Ranked,
    question: vocabulary.Question,
    t: str,
    js: list[int],
    out: Layout,
    history: bool,
) -> None:
    """The list line of type ``t`` (when the question asks for it) and its history (``history``:
    what ended goes last)."""
    rows = ranked.rows.tolist()
    n = len(ranked)
    read = {j: reading_of(snap, rows[j]) for j in js}
    wanted = question.asks_for_ended(t)  # "past medications": what ended, in score order
    ended = [
        j
        for j in js
        if read[j].standing is standing.Standing.ENDED
        and (wanted or not (read[j].keys & question.keys or _about_drug(question, read[j])))
    ]
    kind = question.asks_for(t)
    title = vocabulary.line_title(t, "current")
    if kind is not None and title:
        current = [j for j in js if read[j].standing is standing.Standing.CURRENT]
        entries = _entries(ranked, current, read, t)
        listed = {i for e in entries for i in e.members}
        if entries:
            # the question asks for it: the list leads the other lines
            lead = -1.0 + question.kinds.index(kind) / 100
            why = f"the question asks for the {kind.name}"
            out.shared.append(ctx.Shared(ctx.LineKind.LIST, entries, title, why, lead))
        for j in js:  # what no list can say follows the lists, in score order
            if j not in listed and read[j].standing is not standing.Standing.ENDED:
                out.order[j] = -0.5 + j / (2 * n)
    last = max((j for j in js if read[j].standing is not standing.Standing.ENDED), default=None)
    if not history:
        return
    if len(ended) >= 2 or (wanted and ended):
        ended.sort(key=lambda j: -ranked[j].memory.created_at.timestamp())
        entries = tuple(
            ctx.Entry(standing.ended_label(ranked[j].memory, read[j].facts), (j,)) for j in ended
        )
        title = vocabulary.line_title(t, "ended") or f"Ended ({t.replace('_', ' ')})"
        if wanted:
            why, after = "the question asks for what ended", None
        else:
            why = "what ended is history"
            after = None if last is None else max(last, min(ended)) + 0.5
        out.shared.append(ctx.Shared(ctx.LineKind.HISTORY, entries, title, why, after))
    elif ended and last is not None and last > ended[0]:
        out.order[ended[0]] = last + 0.5


def _entries(
    ranked: Ranked, current: list[int], read: dict[int, standing.Reading], t: str
) -> tuple[ctx.Entry, ...]:
    """One entry per label, in score order; a result or vital sign only the newest of its
    analyte (the older ones keep their own lines)."""
    if t in ("lab_result", "vital_sign"):
        newest: dict[frozenset[str], int] = {}
        for j in current:
            k = read[j].keys
            if k not in newest or ranked[j].memory.created_at > ranked[newest[k]].memory.created_at:
                newest[k] = j
        current = [j for j in current if newest.get(read[j].keys) == j]
    groups: dict[str, list[int]] = {}
    for j in current:
        groups.setdefault(standing.label(ranked[j].memory, read[j].facts), []).append(j)
    return tuple(ctx.Entry(text, tuple(js)) for text, js in groups.items() if text)


def _pairs(snap: Snapshot, ranked: Ranked, now: datetime, out: Layout) -> None:
    """An allergy and the newer allergies pending review against it, as one line. Only the
    allergies with a supersession record as the older memory are looked at (every active
    allergy is a candidate)."""
    index = snap.flag_index()
    by_old = index.by_old
    mems = snap.memories
    rows = ranked.rows.tolist()
    allergies = {mems[rows[j]].id: j for j, t in enumerate(ranked.tiers) if t == 0}
    if len(allergies) < 2 or not any(mid in by_old for mid in allergies):
        return
    taken: set[int] = set()
    for mid, j in sorted(allergies.items(), key=lambda kv: kv[1]):
        sups = index.by_old.get(mid, ())
        if j in taken or not sups:
            continue
        newer = [
            allergies[s.new_id]
            for s in sups
            if s.state is SupersessionState.PENDING and s.new_id in allergies
        ]
        newer = [n for n in dict.fromkeys(newer) if n not in taken and n != j]
        older = mems[rows[j]]
        if not newer or index.pending_annotation(older, now, snap.memory_of) is None:
            continue  # nothing pending against it at ``now`` (the flags' clock)
        newer.sort(key=lambda n: -mems[rows[n]].created_at.timestamp())
        taken.update((j, *newer))
        entries = (
            ctx.Entry(ctx.sanitize_line(older.content), (j,)),
            *(ctx.Entry(ctx.sanitize_line(mems[rows[n]].content), (n,)) for n in newer),
        )
        out.shared.append(ctx.Shared(ctx.LineKind.PAIR, entries, why="pending review"))


#: The memo key of the lab results' history lines kept with a snapshot (see :func:`annotator`).
LAB_HISTORY = "lab-history"


def annotator(
    core: Core,
    snap: Snapshot,
    patient_id: str,
    ranked: Ranked,
    now: datetime,
    policy: ContextPolicy,
) -> Callable[[int], tuple[ctx.Note, ...]]:
    """Candidate index -> the annotations of its line, as the policy switches them on
    (:mod:`memory_core.flags`): pending review, possibly stale, lab history -- each with the
    short form a safety line may use under the token budget (a pending review and a possible
    staleness are shortened, never dropped; a lab history may go). Each is looked up for the
    line's own memory in the snapshot's flag index (never every flag of the patient); the
    reviewers' keep decisions are read once, and only when a line has a flag."""
    index = snap.flag_index()
    kept: dict[tuple[str, str], datetime] | None = None
    # once every record's moments are past, a lab's history is the same at any later moment:
    # kept with the snapshot (it walks the analyte's whole chain: 1,700 links at 10,000)
    settled = bool(snap.memories) and now.timestamp() >= max(
        snap.settled_s, float(snap.created_s.max())
    )

    def lab_history(m: Memory) -> str | None:
        limit = policy.lab_history_max
        if not settled:
            return index.lab_history(m, now, snap.memory_of, limit=limit)
        lines: dict[tuple[str, int], str | None] = snap.memoized(LAB_HISTORY, dict)
        key = (m.id, limit)
        if key not in lines:
            lines[key] = index.lab_history(m, now, snap.memory_of, limit=limit)
        return lines[key]

    def flag_of(m: Memory) -> StaleFlag | None:
        nonlocal kept
        if not flags.flagged_by(m.memory_type) or not index.flags_of(m, now, newest=True):
            return None
        if kept is None:
            kept = flagging.kept(core, patient_id)
        found = index.flags_of(m, now, kept, newest=True)
        return found[0] if found else None

    def annotate(i: int) -> tuple[ctx.Note, ...]:
        m = ranked[i].memory
        out: list[ctx.Note] = []
        if policy.annotate_pending:
            pending = index.pending_annotation(m, now, snap.memory_of)
            if pending:
                out.append(ctx.Note(pending, "(pending review)", "pending"))
        if policy.annotate_stale:
            f = flag_of(m)
            if f is not None:
                out.append(ctx.Note(f.annotation, f"(may be outdated: {f.subject})", "stale"))
        if policy.annotate_lab_history and m.memory_type == "lab_result":
            hist = lab_history(m)
            if hist:
                out.append(ctx.Note(hist, "", "history"))
        return tuple(out)

    return annotate


def build_system_prompt(
    core: Core,
    patient_id: str,
    session_context: str,
    query: str | None,
    now: datetime | None,
    max_memories: int,
    max_tokens: int | None,
    record: bool,
) -> str:
    """The memory section for ``query`` in the system prompt. Without a query the session
    context is the query: its first :data:`validation.MAX_QUERY_CHARS` characters (a longer
    session context is not refused -- the prompt shows it cut at its cap, README)."""
    if not isinstance(session_context, str):
        raise ValidationError(
            "session_context", f"must be a string, got {type(session_context).__name__}"
        )
    q = v.session_query(session_context) if query is None else query
    result = build_context(core, patient_id, q, now, max_memories, max_tokens, record, None, None)
    return ctx.build_system_prompt(result.text, session_context, core.role)
