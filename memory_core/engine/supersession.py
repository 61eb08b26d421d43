"""Supersession: detection on insert and by back-scan, the preview before saving, the records
and their audit entries, and the reviewer's confirm, reject and undo."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from .. import validation as v
from ..access import AGENT_PREFIX
from ..contradictions import (
    CANDIDATE_LIMIT,
    SimilarityValues,
    candidates_for_new,
    facts_of,
    filed,
    newer_strips,
    same_type_pair_arrays,
    same_type_pairs,
    same_type_similarities,
)
from ..errors import StateError
from ..facts import Decision, Fact, KeyKind, Strength, Verdict, reach_keys
from ..facts import decide as decide_facts
from ..facts.classes import ClassChange, class_changes, clipped_changes
from ..facts.rules import decide_by_class, decide_elsewhere, stopped_elsewhere
from ..importance import default_importance
from ..ranking import cosine_to_all
from ..status import holders, status_at
from ..store.base import ChangeSet, MemoryUpdate, SupersessionUpdate
from ..values import (
    IN_EFFECT,
    AuditAction,
    Confirmation,
    ConfirmationKind,
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
    decision: Decision,
    auto: bool,
    by: str,
    now: datetime,
    changes: ChangeSet,
) -> Supersession:
    """A new supersession record (auto: in effect from the newer memory's created_at;
    otherwise pending review), with the rule that took it and its evidence, added to
    ``changes`` (the store audits it)."""
    sup = Supersession(
        id=new_id("sup"),
        patient_id=older.patient_id,
        old_id=older.id,
        new_id=newer.id,
        similarity=similarity,
        method=core.adjudicator.method,
        verdict=decision.verdict.value,
        state=SupersessionState.AUTO if auto else SupersessionState.PENDING,
        detected_at=now,
        effective_at=newer.created_at if auto else None,
        decided_by=by if auto else None,
        decided_at=now if auto else None,
        rule=decision.rule,
        evidence=decision.evidence,
    )
    changes.insert_supersessions.append(sup)
    return sup


def confirm_restated(older: Memory, newer: Memory, decision: Decision) -> Memory:
    """``older`` confirmed at ``newer``'s created_at when ``decision`` says ``newer`` restates
    it (a duplicate, by any rule: the same fact stated again; the store audits the added
    confirmation); otherwise ``older`` as it is. On a review-gated type the older memory stays
    active while the duplicate waits for review: its age counts from the restatement."""
    if decision.verdict is not Verdict.DUPLICATE:
        return older
    return older.with_confirmation(
        Confirmation(newer.created_at, ConfirmationKind.RESTATED, newer.id)
    )


def demote(older: Memory, newer_id: str) -> Memory:
    """``older`` superseded by ``newer_id`` (base importance kept; the store audits the
    update as a supersession)."""
    return replace(older, status=Status.SUPERSEDED, superseded_by=newer_id)


# --- detection on insert -----------------------------------------------------------------------
def applies_at_once(
    core: Core,
    memory_type: str,
    decision: Decision,
    older: str = "",
    newer: str = "",
    by: str = "",
) -> bool:
    """A decision is applied at once only on strong evidence and an automatic type; anything
    weaker waits for a reviewer (domain.md) -- and so does whatever an agent's write would
    replace (``by`` an agent principal): an agent's reading of a conversation never hides a
    clinician's record without a person's look. On a review-gated type, a newer statement
    saying word for word what the older says (``older``/``newer``: their contents) restates it
    at once: a memory is never put to review against its own copy, and superseding a copy drops
    no fact (audited, undoable) -- as the back-scan chains such restatements."""
    if not decision.strong:
        return False
    copy = (
        decision.verdict is Verdict.DUPLICATE
        and bool(older)
        and restatement_key(older) == restatement_key(newer)
    )
    if copy:  # the same words again, whoever writes them
        return True
    return (
        not by.startswith(AGENT_PREFIX)
        and core.policy.contradiction.mode_for(memory_type) == "auto"
    )


def with_keys(
    hits: list[tuple[int, float, bool]],
    new: Memory,
    memories: Sequence[Memory],
    matrix: npt.NDArray[np.float32],
    rows: Iterable[int],
    eligible: Sequence[bool] | npt.NDArray[np.bool_] | None = None,
) -> list[tuple[int, float, bool]]:
    """``hits`` (rows of :func:`candidates_for_new`) plus the rows ``rows`` about a key the new
    memory is about too, whatever their cosine ("Lantus 26 units" meets "insulin glargine 20
    units"; "NKDA" meets "allergic to codeine"), each with its cosine; ``eligible``: the rows
    that may be compared."""
    seen = {r for r, _s, _o in hits}
    extra = sorted(
        r
        for r in set(rows)
        if r not in seen
        and memories[r].id != new.id
        and memories[r].memory_type == new.memory_type
        and (eligible is None or eligible[r])
    )
    if not extra:
        return hits
    created_s = new.created_at.timestamp()
    sims = cosine_to_all(new.embedding, matrix[extra]).tolist()
    olders = [memories[r].created_at.timestamp() <= created_s for r in extra]
    return hits + list(zip(extra, sims, olders, strict=True))


def keyed_rows(snap: Snapshot, pool: PatientPool | None, new: Memory) -> set[int]:
    """The rows (of the snapshot, then of the pool's added memories) about a key ``new`` is
    about, of its type (and of what it progresses from: :func:`..facts.reach_keys`)."""
    keys = reach_keys(facts_of(new), new.memory_type)
    if not keys:
        return set()
    index = snap.key_index().rows
    rows = {r for k in keys for r in index.get((new.memory_type, k), ())}
    if pool is not None:
        added = _added_key_index(pool)
        rows |= {r for k in keys for r in added.get((new.memory_type, k), ())}
    return rows


#: Each pool's added memories by (type, key), indexed as they are added: a batch of n new
#: memories reads each one's keys once, not n times (a 1,000-memory import read 500,000).
_ADDED_KEYS: weakref.WeakKeyDictionary[
    PatientPool, tuple[list[int], dict[tuple[str, str], list[int]]]
] = weakref.WeakKeyDictionary()


def _added_key_index(pool: PatientPool) -> dict[tuple[str, str], list[int]]:
    state = _ADDED_KEYS.get(pool)
    if state is None:
        state = _ADDED_KEYS[pool] = ([pool.n_stored], {})
    done, index = state
    for key, r in filed(pool.memories, done[0]):
        index.setdefault(key, []).append(r)
    done[0] = len(pool.memories)
    return index


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
    hits = with_keys(hits, new, pool.memories, matrix, keyed_rows(pool.snapshot, pool, new), active)
    for row, sim, row_is_older in hits:
        other = pool.memories[row]
        if other.status is not Status.ACTIVE:
            continue
        older, newer = (other, new) if row_is_older else (new, other)
        new_is_older = not row_is_older
        decision = core.adjudicator.decide(older, newer, sim)
        if not decision.supersedes:
            continue
        if (new if new_is_older else older).status is not Status.ACTIVE:
            continue  # already demoted by an earlier hit
        auto = applies_at_once(core, new.memory_type, decision, older.content, newer.content, by)
        sup = record(core, older, newer, sim, decision, auto, by, now, changes)
        found.append(sup)
        confirmed = confirm_restated(older, newer, decision)
        if confirmed is not older:
            older = confirmed
            if new_is_older:
                new = confirmed
            else:
                pool.replace(row, confirmed)
        if sup.state is SupersessionState.AUTO:
            demoted = demote(older, newer.id)
            if new_is_older:
                new = demoted
            else:
                pool.replace(row, demoted)
    found.extend(_medication_reviews(core, new, pool, now, by, changes, found))
    found.extend(_result_reviews(core, new, pool, now, by, changes, found))
    return new


def _medication_reviews(
    core: Core,
    new: Memory,
    pool: PatientPool,
    now: datetime,
    by: str,
    changes: ChangeSet,
    found: Sequence[Supersession],
) -> list[Supersession]:
    """What a statement says of the patient's medications beyond its own type's candidates,
    always for a reviewer (weak): a note of another type that says a drug was stopped or
    switched away from ("dry cough on lisinopril resolved after switching to losartan":
    ``drug.stop-named-elsewhere``), and a stop or change said of a drug class without its drug
    ("PPI stopped", "steroids down to 10 mg": ``drug.class-named``) or of a drug named by the
    first letters of its name ("levo increased to 0.125 mg": ``drug.clipped-name``). A
    medication memory decided already with this statement (a model read "the blood sugar
    tablets" as metformin) is not decided again."""
    if "medication" in core.policy.contradiction.exempt_types:
        return []
    asks: list[tuple[frozenset[str], Fact | ClassChange]] = [
        (frozenset({f.key}), f) for f in stopped_elsewhere(facts_of(new), new.memory_type)
    ]
    asks += [(c.keys, c) for c in class_changes(new.content, new.memory_type)]
    asks += [(c.keys, c) for c in clipped_changes(new.content, new.memory_type)]
    if not asks:
        return []
    indexes = _key_indexes(pool)
    decided = {s.old_id for s in found}
    out = []
    for keys, said in asks:
        for row, older in _older_filed(pool, indexes, "medication", keys, new, decided):
            d = _decide_named(older, said, new)
            if d is None:
                continue
            decided.add(older.id)
            out.append(_for_review(core, older, new, pool, row, d, by, now, changes))
    return out


def _key_indexes(pool: PatientPool) -> tuple[Mapping[tuple[str, str], Sequence[int]], ...]:
    """The pool's key index and the rows added since it was built, by (type, key)."""
    return pool.snapshot.key_index().rows, _added_key_index(pool)


def _older_filed(
    pool: PatientPool,
    indexes: tuple[Mapping[tuple[str, str], Sequence[int]], ...],
    memory_type: str,
    keys: Iterable[str],
    new: Memory,
    decided: set[str],
) -> Iterator[tuple[int, Memory]]:
    """The active memories of ``memory_type`` filed under any of ``keys``, recorded no later
    than ``new`` and not decided yet (``decided`` is read as the caller adds to it), in row
    order, with their rows."""
    rows = {r for k in keys for index in indexes for r in index.get((memory_type, k), ())}
    for row in sorted(rows):
        older = pool.memories[row]
        if older.id in decided or older.status is not Status.ACTIVE:
            continue
        if older.created_at > new.created_at:
            continue
        yield row, older


def _for_review(
    core: Core,
    older: Memory,
    new: Memory,
    pool: PatientPool,
    row: int,
    d: Decision,
    by: str,
    now: datetime,
    changes: ChangeSet,
) -> Supersession:
    """``d`` recorded for a reviewer, with the two memories' similarity."""
    sim = float(cosine_to_all(new.embedding, pool.arrays()[0][[row]])[0])
    return record(core, older, new, sim, d, False, by, now, changes)


#: The types a test's result is written as: a newer result of a test makes an older one of
#: another of these types out of date too -- for a reviewer.
RESULT_TYPES = ("lab_result", "vital_sign", "observation")


def _result_reviews(
    core: Core,
    new: Memory,
    pool: PatientPool,
    now: datetime,
    by: str,
    changes: ChangeSet,
    found: Sequence[Supersession],
) -> list[Supersession]:
    """A test's newer result written as another type than an older one ("MoCA 22/30" an
    observation, "MoCA 19/30" a lab result): the older is out of date, for a reviewer (the
    decision of :func:`memory_core.facts.decide` on the two, weak)."""
    if new.memory_type not in RESULT_TYPES:
        return []
    facts = facts_of(new)
    keys = {f.key for f in facts.facts if f.kind is KeyKind.LOINC and f.asserted}
    if not keys:
        return []
    exempt = core.policy.contradiction.exempt_types
    indexes = _key_indexes(pool)
    decided = {s.old_id for s in found}
    out = []
    for other in (t for t in RESULT_TYPES if t != new.memory_type and t not in exempt):
        for row, older in _older_filed(pool, indexes, other, keys, new, decided):
            d = decide_facts(
                facts_of(older),
                facts,
                "lab_result",
                older.content,
                new.content,
                older_on=older.created_at.date().isoformat(),
                newer_on=new.created_at.date().isoformat(),
            )
            if not d.supersedes or d.verdict is Verdict.DUPLICATE or d.key not in keys:
                continue  # the same result again, written as another type: nothing out of date
            why = f"{d.evidence}; written as {older.memory_type}, then as {new.memory_type}"
            decided.add(older.id)
            weak = Decision(d.verdict, d.rule, Strength.WEAK, why, d.key)
            out.append(_for_review(core, older, new, pool, row, weak, by, now, changes))
    return out


def _decide_named(older: Memory, said: Fact | ClassChange, new: Memory) -> Decision | None:
    """The decision on one medication memory: of a drug a note of another type says stopped,
    or of a drug of a class (or a clipped name) a statement says stopped or changed."""
    if isinstance(said, ClassChange):
        return decide_by_class(facts_of(older), said, new.content, older.content)
    return decide_elsewhere(facts_of(older), said, new.memory_type, new.content)


class Preview(NamedTuple):
    """What a new memory would do to one active memory if saved: supersede it at once
    (``mode`` "auto") or after review ("review"), by ``rule`` on ``evidence``."""

    memory: Memory
    similarity: float
    mode: str
    verdict: str
    rule: str
    evidence: str


def preview(
    core: Core,
    patient_id: str,
    content: str,
    memory_type: str,
    created_at: datetime | None,
    now: datetime | None,
    facts: Any = None,
) -> list[Preview]:
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
        facts=v.facts(facts, text, mtype),
    )
    hits = with_keys(hits, new, snap.memories, snap.matrix, keyed_rows(snap, None, new))
    out: list[Preview] = []
    for r, sim, older in hits:
        old = snap.memories[r]
        if not older or status[r] is not Status.ACTIVE:
            continue
        d = core.adjudicator.decide(old, new, sim)
        if d.supersedes:
            mode = "auto" if applies_at_once(core, mtype, d, old.content, text) else "review"
            out.append(Preview(old, sim, mode, d.verdict.value, d.rule, d.evidence))
    # most similar first, whether found by cosine or by a shared key (a key's hits came last,
    # which `make bench`'s agreement check refused)
    return sorted(out, key=lambda p: -p.similarity)


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
    # both stand: the reviewer has just kept the older memory's fact (confirmed at the review)
    old = core.store.get_memory(sup.old_id)
    if now >= old.created_at:  # (a review dated before the memory existed confirms nothing)
        kept = old.with_confirmation(Confirmation(now, ConfirmationKind.REVIEW_KEPT, sup.id))
        if kept is not old:
            changes.update_memories.append(MemoryUpdate(kept, old.version))
    core.apply(changes, reviewer)
    return core.store.get_supersession(sup.id)


def undo(
    core: Core,
    supersession_id: str,
    reviewer: str,
    now: datetime | None,
    patient_id: str | None = None,
) -> Supersession:
    """Undo a reviewer's or the engine's decision on a supersession.

    In effect (automatic or confirmed): the older memory is active again (unless something else
    holds it). An automatic one becomes ``undone``. A *confirmed* one of a review-gated type
    (the policy's mode for the older memory's type is ``review``) reopens its review: the same
    record is ``pending`` again, back in the queue, and keeps ``effective_at``..``ended_at`` as
    the window it was in effect, so as-of views of that window still read it as applied.

    Rejected ("keep both"): the review is reopened -- the record is ``pending`` again, back in
    the queue, ``decided_by`` / ``decided_at`` naming who reopened it and when. No memory
    changes (a rejection demoted nothing); the store's audit row records the state before and
    after."""
    reviewer, now, sup = _pending_or_decided(core, supersession_id, reviewer, now, patient_id)
    if sup.state is SupersessionState.REJECTED:
        reopened = _decide(
            sup, reviewer, AuditAction.UNDO_SUPERSESSION, SupersessionState.PENDING, now
        )
        core.apply(reopened, reviewer)
        return core.store.get_supersession(sup.id)
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
    # per type: (older, newer, similarity, decision) of the pairs to record, positions in act
    picks: dict[str, list[tuple[int, int, float, Decision]]] = {t: [] for t in checked}

    def pick(t: str, older_k: int, newer_k: int, sim: float) -> bool:
        older, newer = snap.memories[act[older_k]], snap.memories[act[newer_k]]
        if (older.id, newer.id) in known:
            return False
        decision = core.adjudicator.decide(older, newer, sim)
        if not decision.supersedes:
            return False
        known.add((older.id, newer.id))
        picks[t].append((older_k, newer_k, sim, decision))
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
    review = [t for t in checked if t not in auto]
    # restatements: on a review-gated type, memories saying word for word the same thing are
    # one fact -- chained as duplicates, each by the next (the newest stays active), and only
    # the newest takes part in the pairs below (500 restatements of 3 allergies made 318,649
    # pending reviews, one per pair)
    chains, restated = _restatements(snap, act, types, place, review)
    for t, older_k, newer_k in chains:
        sim = float(cosine_to_all(vectors[older_k], vectors[[newer_k]])[0])
        older, newer = snap.memories[act[older_k]], snap.memories[act[newer_k]]
        if (older.id, newer.id) not in known:
            picks[t].append((older_k, newer_k, sim, RESTATED))
    # review: every other pair becomes a record, most similar first
    for t, a, b, vals in same_type_pair_arrays(types, vectors, cuts, only=review):
        if restated.size:
            keep = ~(restated[a] | restated[b])
            a, b, vals = a[keep], b[keep], vals[keep]
        a_first = place[a] < place[b]  # older first: by created_at, then by id
        olders = np.where(a_first, a, b)
        newers = np.where(a_first, b, a)
        for k in np.argsort(-vals, kind="stable").tolist():
            pick(t, int(olders[k]), int(newers[k]), float(vals[k]))
    # pairs about one key whatever their cosine ("NKDA" / "allergic to codeine"; "Lantus" /
    # "insulin glargine"): each memory against the next few newer ones about the same key,
    # those below the cut that the arrays left out (a restatement's older copies sit out)
    taken = {p[0] for t in auto for p in picks[t]}  # an automatic older memory goes once
    for t, older_k, newer_k in _keyed_pairs(snap, act, place, checked):
        if (t in auto and older_k in taken) or (
            restated.size and (restated[older_k] or restated[newer_k])
        ):
            continue
        sim = float(cosine_to_all(vectors[older_k], vectors[[newer_k]])[0])
        if sim < cuts[t] and pick(t, older_k, newer_k, sim) and t in auto:
            taken.add(older_k)
    changes = ChangeSet()
    found: list[Supersession] = []
    demoted: set[int] = set()
    chained = {(t, o, n) for t, o, n in chains}
    written: dict[str, Memory] = {}  # memory id -> as it is to be written (confirmed, demoted)
    for t in checked:  # types in order of first appearance; automatic ones by older memory
        ordered = sorted(picks[t], key=lambda p: p[:3]) if t in auto else picks[t]
        for older_k, newer_k, sim, decision in ordered:
            stored, newer = snap.memories[act[older_k]], snap.memories[act[newer_k]]
            older = written.get(stored.id, stored)
            strong_auto = t in auto and decision.strong and older_k not in demoted
            at_once = strong_auto or (t, older_k, newer_k) in chained
            found.append(record(core, older, newer, sim, decision, at_once, by, now, changes))
            older = confirm_restated(older, newer, decision)
            if at_once:
                demoted.add(older_k)
                older = demote(older, newer.id)
            if older is not stored:
                written[stored.id] = older
    changes.update_memories.extend(
        MemoryUpdate(m, snap.memories[snap.index[mid]].version) for mid, m in written.items()
    )
    if changes.insert_supersessions:
        core.apply(changes, by)
    return found


#: Of the memories about one key, each is compared with at most this many newer ones (a
#: restated fact chains A -> B -> C; comparing every pair of a key would be quadratic).
KEY_PAIR_SPAN = 8


def _keyed_pairs(
    snap: Snapshot,
    act: Sequence[int],
    place: npt.NDArray[np.int64],
    checked: Sequence[str],
) -> Iterator[tuple[str, int, int]]:
    """``(type, older position, newer position)`` in ``act`` of the pairs about one key (each
    memory and its next :data:`KEY_PAIR_SPAN` newer ones about that key), each pair once."""
    index = snap.key_index().rows
    where = {row: k for k, row in enumerate(act)}
    seen: set[tuple[int, int]] = set()
    for (t, _key), rows in index.items():
        if t not in checked:
            continue
        ks = sorted((where[r] for r in rows if r in where), key=lambda k: int(place[k]))
        for x, older_k in enumerate(ks):
            for newer_k in ks[x + 1 : x + 1 + KEY_PAIR_SPAN]:
                if (older_k, newer_k) not in seen:
                    seen.add((older_k, newer_k))
                    yield t, older_k, newer_k


#: The decision recorded for a word-for-word restatement chained on a review-gated type.
RESTATED = Decision(
    Verdict.DUPLICATE, "statement.restated", Strength.STRONG, "the same statement word for word"
)


def restatement_key(content: str) -> str:
    """What two statements saying word for word the same thing share: the text with case,
    runs of white space and a closing full stop set aside."""
    return " ".join(content.casefold().split()).rstrip(".")


def _restatements(
    snap: Snapshot,
    act: Sequence[int],
    types: Sequence[str],
    place: npt.NDArray[np.int64],
    review: Sequence[str],
) -> tuple[list[tuple[str, int, int]], npt.NDArray[np.bool_]]:
    """On the review-gated types, the restatements among the active memories (positions in
    ``act``): (type, older, newer) links chaining each group of word-for-word equal statements
    oldest to newest (by created_at, then id), and a mask of the positions that are not the
    newest of their group (left out of the pairwise reviews). A word-for-word restatement adds
    nothing the newest does not say: superseding it drops no fact (audited, undoable)."""
    groups: dict[tuple[str, str], list[int]] = {}
    gated = set(review)
    # a restatement a reviewer kept (a supersession of it undone or rejected) is never chained
    # again: it is reviewed pair by pair, as any other statement
    kept = {
        s.old_id
        for s in snap.supersessions
        if s.state in (SupersessionState.UNDONE, SupersessionState.REJECTED)
    }
    for k, t in enumerate(types):
        if t in gated and snap.memories[act[k]].id not in kept:
            key = (t, restatement_key(snap.memories[act[k]].content))
            groups.setdefault(key, []).append(k)
    chains: list[tuple[str, int, int]] = []
    restated = np.zeros(len(types), dtype=np.bool_)
    for (t, _text), ks in groups.items():
        if len(ks) < 2:
            continue
        ks.sort(key=lambda k: int(place[k]))
        chains += [(t, a, b) for a, b in itertools.pairwise(ks)]
        restated[ks[:-1]] = True
    return chains, (restated if chains else np.zeros(0, dtype=np.bool_))


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
