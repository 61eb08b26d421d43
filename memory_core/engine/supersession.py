"""Supersession: detection on insert and by back-scan, the preview before saving, the records
and their audit entries, and the reviewer's confirm, reject and undo."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import validation as v
from ..adjudicate import STANDING_TYPES, standing_candidate
from ..contradictions import (
    CANDIDATE_LIMIT,
    SUPERSEDING_VERDICTS,
    SimilarityValues,
    candidates_for_new,
    newer_strips,
    same_type_pair_arrays,
    same_type_pairs,
    same_type_similarities,
)
from ..errors import StateError
from ..importance import default_importance
from ..ranking import cosine_to_all
from ..status import holders, status_at
from ..store.base import ChangeSet, MemoryUpdate, SupersessionUpdate
from ..values import (
    IN_EFFECT,
    AuditAction,
    Memory,
    Status,
    Supersession,
    SupersessionState,
)
from .asof import active_indices, statuses
from .core import Core, Progress, new_id
from .snapshot import PatientPool, Snapshot

F32 = npt.NDArray[np.float32]
# cosines this close count as equal: the tie goes to the newer memory first in (created_at, id)
TIE = 1e-6


# --- records -----------------------------------------------------------------------------------
def record(
    core: Core,
    older: Memory,
    newer: Memory,
    similarity: float,
    verdict: str,
    auto: bool,
    by: str,
    now: datetime,
    changes: ChangeSet,
) -> Supersession:
    """A new supersession record (auto: in effect from the newer memory's created_at;
    otherwise pending review), added to ``changes`` (the store audits it)."""
    sup = Supersession(
        id=new_id("sup"),
        patient_id=older.patient_id,
        old_id=older.id,
        new_id=newer.id,
        similarity=similarity,
        method=core.adjudicator.method,
        verdict=verdict,
        state=SupersessionState.AUTO if auto else SupersessionState.PENDING,
        detected_at=now,
        effective_at=newer.created_at if auto else None,
        decided_by=by if auto else None,
        decided_at=now if auto else None,
    )
    changes.insert_supersessions.append(sup)
    return sup


def demote(older: Memory, newer_id: str) -> Memory:
    """``older`` superseded by ``newer_id`` (base importance kept; the store audits the
    update as a supersession)."""
    return replace(older, status=Status.SUPERSEDED, superseded_by=newer_id)


# --- detection on insert -----------------------------------------------------------------------
def with_standing(
    hits: list[tuple[int, float, bool]],
    new: Memory,
    memories: Sequence[Memory],
    matrix: npt.NDArray[np.float32],
    eligible: Sequence[bool] | npt.NDArray[np.bool_] | None = None,
) -> list[tuple[int, float, bool]]:
    """``hits`` (rows of :func:`candidates_for_new`) plus the rows adjudicated whatever their
    cosine (:func:`memory_core.adjudicate.standing_candidate`: an empty allergy list and an
    allergy it covers), each with its cosine; ``eligible``: the rows that may be compared."""
    if new.memory_type not in STANDING_TYPES:
        return hits
    seen = {r for r, _s, _o in hits}
    created_s = new.created_at.timestamp()
    rows: list[int] = []
    older_flags: list[bool] = []
    for row, m in enumerate(memories):
        if row in seen or m.memory_type != new.memory_type:
            continue
        if eligible is not None and not eligible[row]:
            continue
        is_older = m.created_at.timestamp() <= created_s
        older, newer = (m.content, new.content) if is_older else (new.content, m.content)
        if standing_candidate(older, newer, new.memory_type):
            rows.append(row)
            older_flags.append(is_older)
    if not rows:
        return hits
    sims = cosine_to_all(new.embedding, matrix[rows]).tolist()
    return hits + list(zip(rows, sims, older_flags, strict=True))


def detect_batch(
    core: Core, memories: list[Memory], by: str, now: datetime, changes: ChangeSet
) -> tuple[dict[str, list[Supersession]], list[PatientPool], list[Memory]]:
    """Supersessions of new memories against each patient's stored ones and each other
    (oldest first), recorded in ``changes``: ``(supersessions by new id, the pools, the new
    memories as they are to be written)`` in the order given."""
    sups_by_new: dict[str, list[Supersession]] = {m.id: [] for m in memories}
    # process oldest first per patient, so each new memory sees the ones before it
    order = sorted(range(len(memories)), key=lambda i: (memories[i].created_at, i))
    by_patient: dict[str, list[int]] = {}
    for i in order:
        by_patient.setdefault(memories[i].patient_id, []).append(i)
    pools: list[PatientPool] = []
    for pid, idxs in by_patient.items():
        pool = PatientPool(core.snapshots.snapshot(pid))
        pools.append(pool)
        for i in idxs:
            mem = memories[i]
            if mem.memory_type not in core.policy.contradiction.exempt_types:
                mem = detect(core, mem, pool, now, by, changes, sups_by_new[mem.id])
            pool.add(mem)
    final = {m.id: m for pool in pools for m in pool.added()}
    return sups_by_new, pools, [final[m.id] for m in memories]


def detect(
    core: Core,
    new: Memory,
    pool: PatientPool,
    now: datetime,
    by: str,
    changes: ChangeSet,
    found: list[Supersession],
) -> Memory:
    """Find supersession candidates of ``new`` in ``pool``, record them in ``changes`` and
    ``found``. Returns ``new`` (possibly superseded itself when an existing memory is newer)."""
    matrix, types, created, active, norms = pool.arrays()
    hits = candidates_for_new(
        new.embedding,
        new.memory_type,
        new.created_at.timestamp(),
        types,
        created,
        matrix,
        core.threshold_for(new.memory_type),
        active,
        norms,
        CANDIDATE_LIMIT,
    )
    hits = with_standing(hits, new, pool.memories, matrix, active)
    mode = core.policy.contradiction.mode_for(new.memory_type)
    for row, sim, row_is_older in hits:
        other = pool.memories[row]
        if other.status is not Status.ACTIVE:
            continue
        older, newer = (other, new) if row_is_older else (new, other)
        new_is_older = not row_is_older
        verdict = core.adjudicator.adjudicate(older, newer, sim)
        if verdict not in SUPERSEDING_VERDICTS:
            continue
        if (new if new_is_older else older).status is not Status.ACTIVE:
            continue  # already demoted by an earlier hit
        sup = record(core, older, newer, sim, verdict, mode == "auto", by, now, changes)
        found.append(sup)
        if sup.state is SupersessionState.AUTO:
            demoted = demote(older, newer.id)
            if new_is_older:
                new = demoted
            else:
                pool.replace(row, demoted)
    return new


def preview(
    core: Core,
    patient_id: str,
    content: str,
    memory_type: str,
    created_at: datetime | None,
    now: datetime | None,
) -> list[tuple[Memory, float, str]]:
    v.patient_id(patient_id)
    text = v.content(content)
    mtype = v.memory_type(memory_type)
    now = core.now(now)
    created = now if created_at is None else v.timestamp(created_at, "created_at", now)
    if mtype in core.policy.contradiction.exempt_types:
        return []
    snap = core.snapshots.snapshot(patient_id)
    vec = core.embedder.embed(text)
    status = statuses(snap, now, range(len(snap.memories)))
    hits = candidates_for_new(
        vec,
        mtype,
        created.timestamp(),
        snap.types_arr,
        snap.created_s,
        snap.matrix,
        core.threshold_for(mtype),
        limit=CANDIDATE_LIMIT,
    )
    mode = core.policy.contradiction.mode_for(mtype)
    new = Memory(
        id="preview",
        patient_id=patient_id,
        memory_type=mtype,
        content=text,
        importance=default_importance(mtype, text, core.policy.importance_rules),
        created_at=created,
        last_accessed=created,
        embedding=vec,
        embedding_model=core.embedder.model_id,
    )
    hits = with_standing(hits, new, snap.memories, snap.matrix)
    out: list[tuple[Memory, float, str]] = []
    for r, sim, older in hits:
        old = snap.memories[r]
        if not older or status[r] is not Status.ACTIVE:
            continue
        if core.adjudicator.adjudicate(old, new, sim) in SUPERSEDING_VERDICTS:
            out.append((old, sim, mode))
    return out


# --- reviewer actions --------------------------------------------------------------------------
def _decide(
    sup: Supersession,
    by: str,
    action: AuditAction,
    new_state: SupersessionState,
    now: datetime,
    **fields: Any,
) -> ChangeSet:
    changed = replace(sup, state=new_state, decided_by=by, decided_at=now, **fields)
    return ChangeSet(
        update_supersessions=[SupersessionUpdate(changed, sup.version)],
        actions={sup.id: action.value},
    )


def _pending_or_decided(
    core: Core, supersession_id: str, reviewer: str, now: datetime | None, patient_id: str | None
) -> tuple[str, datetime, Supersession]:
    """The reviewer, the action's moment and the supersession (of ``patient_id`` when given:
    another patient's id is NotFoundError, nothing written)."""
    reviewer = v.actor(reviewer, "reviewer")
    sid = v.record_id(supersession_id, "supersession_id")
    now = core.action_time(now)
    return reviewer, now, core.supersession_of(sid, patient_id)


def confirm(
    core: Core,
    supersession_id: str,
    reviewer: str,
    now: datetime | None,
    patient_id: str | None = None,
) -> Supersession:
    reviewer, now, sup = _pending_or_decided(core, supersession_id, reviewer, now, patient_id)
    if sup.state is not SupersessionState.PENDING:
        raise StateError(f"supersession {sup.id} is {sup.state.value}, not pending")
    changes = _decide(
        sup,
        reviewer,
        AuditAction.CONFIRM_SUPERSESSION,
        SupersessionState.CONFIRMED,
        now,
        effective_at=now,
    )
    old = core.store.get_memory(sup.old_id)
    if old.status is Status.ACTIVE:
        changes.update_memories.append(MemoryUpdate(demote(old, sup.new_id), old.version))
    core.apply(changes, reviewer)
    return core.store.get_supersession(sup.id)


def reject(
    core: Core,
    supersession_id: str,
    reviewer: str,
    now: datetime | None,
    patient_id: str | None = None,
) -> Supersession:
    reviewer, now, sup = _pending_or_decided(core, supersession_id, reviewer, now, patient_id)
    if sup.state is not SupersessionState.PENDING:
        raise StateError(
            f"supersession {sup.id} is {sup.state.value}; only pending ones can be rejected "
            "(undo one that is in effect)"
        )
    changes = _decide(
        sup, reviewer, AuditAction.REJECT_SUPERSESSION, SupersessionState.REJECTED, now
    )
    core.apply(changes, reviewer)
    return core.store.get_supersession(sup.id)


def undo(
    core: Core,
    supersession_id: str,
    reviewer: str,
    now: datetime | None,
    patient_id: str | None = None,
) -> Supersession:
    """Undo a supersession in effect: the older memory is active again (unless something else
    holds it). An automatic one becomes ``undone``. A *confirmed* one of a review-gated type
    (the policy's mode for the older memory's type is ``review``) reopens its review: the same
    record is ``pending`` again, back in the queue, and keeps ``effective_at``..``ended_at`` as
    the window it was in effect, so as-of views of that window still read it as applied."""
    reviewer, now, sup = _pending_or_decided(core, supersession_id, reviewer, now, patient_id)
    if sup.state not in IN_EFFECT:
        raise StateError(f"supersession {sup.id} is {sup.state.value}; nothing to undo")
    old = core.store.get_memory(sup.old_id)
    reopen = (
        sup.state is SupersessionState.CONFIRMED
        and core.policy.contradiction.mode_for(old.memory_type) == "review"
    )
    changes = _decide(
        sup,
        reviewer,
        AuditAction.UNDO_SUPERSESSION,
        SupersessionState.PENDING if reopen else SupersessionState.UNDONE,
        now,
        ended_at=now,
    )
    others = [s for s in core.store.list_supersessions(sup.patient_id) if s.id != sup.id]
    status, superseded_by = status_at(old, holders(others))
    restored = replace(old, status=status, superseded_by=superseded_by)
    if restored != old or restored.superseded_by != old.superseded_by:
        changes.update_memories.append(MemoryUpdate(restored, old.version))
    core.apply(changes, reviewer)
    return core.store.get_supersession(sup.id)


# --- back-scan ---------------------------------------------------------------------------------
def _best_first(sims: F32, best: int, cut: float) -> Iterator[int]:
    """An older memory's newer candidates (positions of ``sims``, which are in (created_at, id)
    order): ``best`` first, then the others at or above ``cut``, most similar first, each run
    of cosines within :data:`TIE` of the run's first in position order. Only ranked if the
    best is passed over."""
    yield best
    cand = np.flatnonzero(sims >= cut)
    if cand.size > 1:
        ranked = cand[np.lexsort((cand, -sims[cand]))].tolist()
        i = 0
        while i < len(ranked):
            j = i + 1
            while j < len(ranked) and sims[ranked[j]] >= sims[ranked[i]] - TIE:
                j += 1
            yield from (k for k in sorted(ranked[i:j]) if k != best)
            i = j


def active_rows(snap: Snapshot, act: Sequence[int] | npt.NDArray[np.int64]) -> F32:
    """The vectors of the rows ``act`` (ascending): the snapshot's matrix itself when that is
    every row (no copy of a large patient's vectors)."""
    return snap.matrix if len(act) == len(snap.memories) else snap.matrix[act]


def scan_contradictions(
    core: Core,
    patient_id: str | None,
    by: str,
    now: datetime | None,
    progress: Progress | None,
) -> list[Supersession]:
    by = v.actor(by)
    now = core.action_time(now)
    patients = [v.patient_id(patient_id)] if patient_id else core.store.list_patients()
    found: list[Supersession] = []
    for n, pid in enumerate(patients, start=1):
        found += _scan_patient(core, pid, by, now)
        if progress is not None:
            progress(n, len(patients))
    return found


def _scan_patient(core: Core, pid: str, by: str, now: datetime) -> list[Supersession]:
    """One patient's back-scan, recorded in one change set."""
    snap = core.snapshots.snapshot(pid)
    act = active_indices(snap, now).tolist()
    known = {(s.old_id, s.new_id) for s in snap.supersessions}
    known |= {(b, a) for a, b in known}
    types = [snap.types[i] for i in act]
    cuts = {t: core.threshold_for(t) for t in set(types)}
    created = snap.created_s[act]
    ids = np.array([snap.memories[i].id for i in act], dtype=np.str_)
    place = np.empty(len(act), dtype=np.int64)  # each one's place in (created_at, id) order
    place[np.lexsort((ids, created))] = np.arange(len(act))
    policy = core.policy.contradiction
    checked = [t for t in dict.fromkeys(types) if t not in policy.exempt_types]
    auto = {t for t in checked if policy.mode_for(t) == "auto"}
    vectors = active_rows(snap, act)
    # per type: (older, newer, similarity, verdict) of the pairs to record, positions in act
    picks: dict[str, list[tuple[int, int, float, str]]] = {t: [] for t in checked}

    def pick(t: str, older_k: int, newer_k: int, sim: float) -> bool:
        older, newer = snap.memories[act[older_k]], snap.memories[act[newer_k]]
        if (older.id, newer.id) in known:
            return False
        verdict = core.adjudicator.adjudicate(older, newer, sim)
        if verdict not in SUPERSEDING_VERDICTS:
            return False
        picks[t].append((older_k, newer_k, sim, verdict))
        return True

    # auto: an older memory is demoted by its most similar newer one that the adjudicator says
    # supersedes it (ties: the earliest newer one); its other pairs are then moot
    for t, rows, i0, strip in newer_strips(types, vectors, place, auto):
        cut = cuts[t]
        best = strip.max(axis=1)
        first = np.argmax(strip >= np.maximum(best - TIE, cut)[:, None], axis=1)
        for r in np.flatnonzero(best >= cut).tolist():
            older_k = int(rows[i0 + r])
            for c in _best_first(strip[r], int(first[r]), cut):
                if pick(t, older_k, int(rows[i0 + c]), float(strip[r, c])):
                    break
        del strip  # before the next strip is made
    # review: every pair becomes a record, most similar first
    review = [t for t in checked if t not in auto]
    for t, a, b, vals in same_type_pair_arrays(types, vectors, cuts, only=review):
        a_first = place[a] < place[b]  # older first: by created_at, then by id
        olders = np.where(a_first, a, b)
        newers = np.where(a_first, b, a)
        for k in np.argsort(-vals, kind="stable").tolist():
            pick(t, int(olders[k]), int(newers[k]), float(vals[k]))
    # pairs adjudicated whatever their cosine (an empty allergy list and an allergy), on the
    # review-gated types they belong to: those below the cut, which the arrays left out
    for t in (t for t in review if t in STANDING_TYPES):
        ks = sorted((k for k, tk in enumerate(types) if tk == t), key=lambda k: int(place[k]))
        for x, older_k in enumerate(ks):
            older = snap.memories[act[older_k]]
            for newer_k in ks[x + 1 :]:
                newer = snap.memories[act[newer_k]]
                if not standing_candidate(older.content, newer.content, t):
                    continue
                sim = float(cosine_to_all(vectors[older_k], vectors[[newer_k]])[0])
                if sim < cuts[t]:
                    pick(t, older_k, newer_k, sim)
    changes = ChangeSet()
    found: list[Supersession] = []
    for t in checked:  # types in order of first appearance; automatic ones by older memory
        for older_k, newer_k, sim, verdict in sorted(picks[t]) if t in auto else picks[t]:
            older, newer = snap.memories[act[older_k]], snap.memories[act[newer_k]]
            found.append(record(core, older, newer, sim, verdict, t in auto, by, now, changes))
            if t in auto:
                changes.update_memories.append(MemoryUpdate(demote(older, newer.id), older.version))
    if changes.insert_supersessions:
        core.apply(changes, by)
    return found


# the threshold tuner's list of flagged pairs holds at most this many (the most similar)
PAIR_LIMIT = 100_000


def similarity_values(core: Core, patient_id: str, now: datetime | None) -> SimilarityValues:
    """Per type, the cosines of the active same-type pairs (a seeded sample above
    :data:`~memory_core.contradictions.MAX_SIMILARITY_VALUES` pairs; the result says so)."""
    v.patient_id(patient_id)
    now = core.now(now)
    snap = core.snapshots.snapshot(patient_id)
    act = active_indices(snap, now)
    return same_type_similarities([snap.types[i] for i in act], active_rows(snap, act))


def similarity_pairs(
    core: Core,
    patient_id: str,
    now: datetime | None,
    min_similarity: float,
    limit: int | None = PAIR_LIMIT,
) -> list[tuple[Memory, Memory, float]]:
    """The active same-type pairs at or above ``min_similarity``, older first, most similar
    first; at most ``limit`` (the most similar), so memory stays bounded at any size."""
    v.patient_id(patient_id)
    now = core.now(now)
    snap = core.snapshots.snapshot(patient_id)
    act = active_indices(snap, now).tolist()
    types = [snap.types[i] for i in act]
    pairs = same_type_pairs(types, active_rows(snap, act), min_similarity, limit)
    out = []
    for a, b, sim in pairs:
        ma, mb = snap.memories[act[a]], snap.memories[act[b]]
        out.append((ma, mb, sim) if ma.created_at <= mb.created_at else (mb, ma, sim))
    out.sort(key=lambda t: -t[2])
    return out
