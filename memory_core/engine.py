"""The engine: ties policy, embedder, store and the pure domain modules together.

Every public method that depends on time takes ``now`` (default: the engine's clock). Queries
with ``now`` in the past are *as of* that moment: memories created later are invisible,
supersessions not yet in effect are not applied, and accesses recorded later are not counted.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

from . import context as ctx
from . import decay, ranking
from . import validation as v
from .contradictions import (
    SUPERSEDING_VERDICTS,
    Adjudicator,
    SimilarityAdjudicator,
    candidates_for_new,
    same_type_pair_arrays,
    same_type_pairs,
    same_type_similarities,
)
from .embedding.base import Embedder
from .errors import StateError, ValidationError
from .importance import default_importance, default_pinned
from .ingest import service as _ingest
from .ingest.fhir import FhirImportReport
from .ingest.proposals import Proposals
from .lexical import LexicalIndex
from .policy import DecayPolicy, EnginePolicy
from .store.base import AuditQuery, ChangeSet, MemoryStore
from .tokens import DEFAULT_ENCODING
from .values import (
    IN_EFFECT,
    AddResult,
    AuditEntry,
    CleanupResult,
    ContextResult,
    InjectionRecord,
    Memory,
    ScoredMemory,
    Status,
    Supersession,
    SupersessionState,
    Tier,
)

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
_T = TypeVar("_T")
Progress = Callable[[int, int], None]
SYSTEM = "system"
# a cosine scan of this many rows or more is split in two halves, one on a helper thread
SCAN_SPLIT_ROWS = 4096
AGENT = "agent"


def _settled_s(mems: Sequence[Memory], supersessions: Sequence[Supersession]) -> float:
    """The last moment at which any status of these memories changed."""
    moments = [m.archived_at.timestamp() for m in mems if m.archived_at is not None]
    for sup in supersessions:
        for t in (sup.effective_at, sup.ended_at):
            if t is not None:
                moments.append(t.timestamp())
    return max(moments, default=-np.inf)


def _point_embeddings(mems: Sequence[Memory], buffer: F32, start: int = 0) -> None:
    """Make each memory's embedding a view of its row in the snapshot buffer, so the vectors
    are held once (the store's own copies can then be freed)."""
    for i, m in enumerate(mems, start=start):
        object.__setattr__(m, "embedding", buffer[i])


def _make_snapshot(
    version: int,
    mems: tuple[Memory, ...],
    supersessions: tuple[Supersession, ...],
    dims: int,
) -> _Snapshot:
    n = len(mems)
    buffer = np.zeros((n + 16, dims), dtype=np.float32)
    if n:
        buffer[:n] = np.vstack([m.embedding for m in mems])
    _point_embeddings(mems, buffer)
    return _Snapshot(
        version=version,
        memories=mems,
        matrix=buffer[:n],
        created_s=np.fromiter((m.created_at.timestamp() for m in mems), np.float64, n),
        types=tuple(m.memory_type for m in mems),
        index={m.id: i for i, m in enumerate(mems)},
        supersessions=supersessions,
        importance=np.fromiter((m.importance for m in mems), np.float64, n),
        pinned=np.fromiter((m.pinned for m in mems), np.bool_, n),
        short_term=np.fromiter((m.tier is Tier.SHORT_TERM for m in mems), np.bool_, n),
        types_arr=np.array([m.memory_type for m in mems], dtype="<U40"),
        buffer=buffer,
        active=np.fromiter((m.status is Status.ACTIVE for m in mems), np.bool_, n),
        norms=np.linalg.norm(buffer[:n], axis=1).astype(np.float32),
        settled_s=_settled_s(mems, supersessions),
        lexical=_LexSlot(),
    )


def _advance(
    snap: _Snapshot, use: _Use, pid: str, changes: ChangeSet, version: tuple[int, int]
) -> tuple[_Snapshot, _Use] | None:
    """The snapshot and usage after this engine's own ``changes`` (None: rebuild instead)."""
    if any(m.patient_id == pid for m, _ in changes.delete_memories):
        return None
    new = [m for m in changes.insert_memories if m.patient_id == pid]
    if new and snap.memories and min(m.created_at for m in new) < snap.memories[-1].created_at:
        return None  # back-filled history: keep the oldest-first order of a fresh read
    mems = list(snap.memories)
    importance, pinned = snap.importance.copy(), snap.pinned.copy()
    short, active = snap.short_term.copy(), snap.active.copy()
    for m, expected in changes.update_memories:
        if m.patient_id == pid:
            i = snap.index.get(m.id)
            if i is None or m.memory_type != snap.types[i]:
                return None
            if m.content != mems[i].content:
                return None  # the keyword index is extended, never edited: rebuild
            mems[i] = replace(m, version=expected + 1, embedding=snap.buffer[i])
            importance[i], pinned[i] = m.importance, m.pinned
            short[i], active[i] = m.tier is Tier.SHORT_TERM, m.status is Status.ACTIVE
    new.sort(key=lambda m: m.created_at)
    n, k = len(mems), len(new)
    buffer = snap.buffer
    if n + k > buffer.shape[0]:
        buffer = np.zeros((2 * (n + k) + 16, buffer.shape[1]), dtype=np.float32)
        buffer[:n] = snap.buffer[:n]
        _point_embeddings(mems, buffer)  # let the old buffer go
    for j, m in enumerate(new):
        buffer[n + j] = m.embedding
    _point_embeddings(new, buffer, n)
    mems += new
    updated = [(s, e) for s, e in changes.update_supersessions if s.patient_id == pid]
    inserted = tuple(s for s in changes.insert_supersessions if s.patient_id == pid)
    if updated:
        sups = {s.id: s for s in snap.supersessions}
        for s, expected in updated:
            sups[s.id] = replace(s, version=expected + 1)
        sups.update((s.id, s) for s in inserted)
        supersessions = tuple(sups.values())
    else:  # new ids (the store refuses a duplicate): appended, as the dict above would
        supersessions = snap.supersessions + inserted
    index = dict(snap.index)
    index.update((m.id, n + j) for j, m in enumerate(new))
    changed = [m for m, _ in changes.update_memories if m.patient_id == pid]
    lex = snap.lexical.index  # contents never change: extend by the new rows only
    fresh = _Snapshot(
        version=version[0],
        memories=tuple(mems),
        matrix=buffer[: n + k],
        created_s=np.concatenate([snap.created_s, [m.created_at.timestamp() for m in new]]),
        types=snap.types + tuple(m.memory_type for m in new),
        index=index,
        supersessions=supersessions,
        importance=np.concatenate([importance, [m.importance for m in new]]),
        pinned=np.concatenate([pinned, np.array([m.pinned for m in new], dtype=np.bool_)]),
        short_term=np.concatenate(
            [short, np.array([m.tier is Tier.SHORT_TERM for m in new], dtype=np.bool_)]
        ),
        types_arr=np.concatenate(
            [snap.types_arr, np.array([m.memory_type for m in new], dtype="<U40")]
        ),
        buffer=buffer,
        active=np.concatenate(
            [active, np.array([m.status is Status.ACTIVE for m in new], dtype=np.bool_)]
        ),
        norms=np.concatenate([snap.norms, np.linalg.norm(buffer[n : n + k], axis=1)]).astype(
            np.float32
        ),
        settled_s=max(
            snap.settled_s,
            _settled_s(
                [*new, *changed],
                [*inserted, *(x for x, _ in updated)],
            ),
        ),
        lexical=_LexSlot(None if lex is None else lex.extended([m.content for m in new])),
    )
    times = [at.timestamp() for _, p, at in changes.accesses if p == pid]
    latest = max([use.latest_s, *times])
    sessions = use.sessions_s
    added = sorted(at.timestamp() for p, at in changes.sessions if p == pid)
    if added:
        sessions = np.sort(np.concatenate([sessions, np.array(added)]))
    return fresh, _Use(
        version=version,
        access_count=np.concatenate(
            [use.access_count, np.array([m.access_count for m in new], dtype=np.float64)]
        ),
        last_s=np.concatenate(
            [use.last_s, np.array([m.last_accessed.timestamp() for m in new], dtype=np.float64)]
        ),
        sessions_s=sessions,
        latest_s=latest,
        events=None if times else use.events,
    )


def _best_first_groups(olders: npt.NDArray[np.intp], sims: F32) -> Iterator[Iterator[int]]:
    """The pairs (positions) grouped by older memory, groups in ascending older row; within a
    group, most similar first and ties in position order. The best pair of every group is
    found in one vectorised pass; a group is sorted only if its best pair is passed over."""
    if olders.size == 0:
        return
    by_old = np.argsort(olders, kind="stable")
    o_sorted = olders[by_old]
    s_sorted = sims[by_old]
    starts = np.flatnonzero(np.r_[True, o_sorted[1:] != o_sorted[:-1]])
    ends = np.r_[starts[1:], o_sorted.size]
    top = np.maximum.reduceat(s_sorted, starts)
    at_top = np.flatnonzero(s_sorted == np.repeat(top, ends - starts))
    best = at_top[np.searchsorted(at_top, starts)]  # first position of each group's maximum
    for st, en, bk in zip(starts.tolist(), ends.tolist(), by_old[best].tolist(), strict=True):
        yield _then_rest(bk, by_old[st:en], sims)


def _then_rest(best: int, group: npt.NDArray[np.intp], sims: F32) -> Iterator[int]:
    yield best
    if group.size > 1:
        rest = group[np.argsort(-sims[group], kind="stable")].tolist()
        yield from (k for k in rest if k != best)


def _field_of(record: Mapping[str, Any] | Any, key: str) -> Any:
    """A record's field, whether the record is a mapping or an object."""
    if isinstance(record, Mapping):
        return record.get(key)
    return getattr(record, key, None)


def _new_id(prefix: str) -> str:
    """``prefix_`` and a random (version 4) UUID in hex, as ``uuid.uuid4().hex`` writes it."""
    h = os.urandom(16).hex()
    return f"{prefix}_{h[:12]}4{h[13:16]}{'89ab'[int(h[16], 16) & 3]}{h[17:]}"


_NO_VECTOR: F32 = np.zeros(0, dtype=np.float32)  # a record's embedding until it is embedded
_NO_VECTOR.flags.writeable = False


@dataclass(frozen=True)
class _Snapshot:
    """Everything about one patient the hot paths need, cached by the store's patient version."""

    version: int
    memories: tuple[Memory, ...]
    matrix: F32  # a view of the first len(memories) rows of `buffer`
    created_s: F64
    types: tuple[str, ...]
    index: dict[str, int]
    supersessions: tuple[Supersession, ...]
    importance: F64
    pinned: npt.NDArray[np.bool_]
    short_term: npt.NDArray[np.bool_]
    types_arr: npt.NDArray[np.str_]
    buffer: F32  # room to append this engine's own new memories without copying
    active: npt.NDArray[np.bool_]  # stored status == active
    norms: npt.NDArray[np.float32]  # L2 norm of each row of `matrix`
    settled_s: float  # no status change takes effect after this moment (as-of fast path)
    lexical: _LexSlot  # the keyword index, built on first use
    memo: dict[Any, Any] = field(default_factory=dict)  # other derived values, built on use

    def memoized(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """A value derived from this snapshot, made on first use and kept with it."""
        if key in self.memo:
            got: _T = self.memo[key]
            return got
        value = self.memo[key] = make()
        return value


@dataclass
class _LexSlot:
    """A snapshot's keyword index, built when a keyword query first needs it."""

    index: LexicalIndex | None = None


@dataclass
class _Use:
    """A patient's usage (accesses, sessions) aligned with a snapshot's memories, cached by the
    store's usage version; access events are loaded only for as-of queries in the past."""

    version: tuple[int, int]
    access_count: F64
    last_s: F64
    sessions_s: F64
    latest_s: float
    events: dict[str, F64] | None = None


@dataclass(frozen=True)
class PatientView:
    """A patient's memories as of ``now`` under a decay policy: the dashboard's numbers."""

    now: datetime
    memories: tuple[Memory, ...]  # visible (created at or before now), oldest first
    status: tuple[Status, ...]  # as of now
    access_count: F64  # as of now
    current_importance: F64  # superseded memories: the floor
    strength: F64  # the 0-1 value cleanup compares
    sessions_since_access: F64

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                **m.to_public_dict(),
                "status": self.status[i].value,
                "access_count": int(self.access_count[i]),
                "current_importance": float(self.current_importance[i]),
                "strength": float(self.strength[i]),
            }
            for i, m in enumerate(self.memories)
        ]


@dataclass(frozen=True)
class PolicyDelta:
    """One memory under the saved and the tuned decay policy (the decay lab's comparison)."""

    memory: Memory
    saved_importance: float
    tuned_importance: float
    saved_rank: int
    tuned_rank: int
    saved_top: bool
    tuned_top: bool
    saved_cleanup: bool  # would be archived by cleanup under the saved policy
    tuned_cleanup: bool

    @property
    def change(self) -> str:
        if self.tuned_top and not self.saved_top:
            return "enters top"
        if self.saved_top and not self.tuned_top:
            return "leaves top"
        if self.tuned_cleanup and not self.saved_cleanup:
            return "falls below cleanup"
        if self.saved_cleanup and not self.tuned_cleanup:
            return "rises above cleanup"
        if self.saved_rank != self.tuned_rank:
            return "rank changes"
        return ""


class MemoryEngine:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        policy: EnginePolicy | DecayPolicy | None = None,
        *,
        adjudicator: Adjudicator | None = None,
        clock: Callable[[], datetime] = v.utc_now,
        encoding: str = DEFAULT_ENCODING,
        role: str = ctx.DEFAULT_ROLE,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.adjudicator: Adjudicator = adjudicator or SimilarityAdjudicator()
        self.clock = clock
        self.encoding = encoding
        self.role = role
        store.bind_embedding_model(embedder.model_id, embedder.dimensions)
        if isinstance(policy, DecayPolicy):
            policy = EnginePolicy(decay=policy)
        if policy is None:
            saved = store.load_policy()
            policy = EnginePolicy.from_dict(saved) if saved else EnginePolicy()
        self._policy = policy
        self._cache: dict[str, _Snapshot] = {}
        self._usage_cache: dict[str, _Use] = {}
        self._cache_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    # --- policy ----------------------------------------------------------------------------------
    @property
    def policy(self) -> EnginePolicy:
        return self._policy

    @property
    def contradiction_threshold(self) -> float:
        t = self._policy.contradiction.threshold
        return self.embedder.default_contradiction_threshold if t is None else t

    def threshold_for(self, memory_type: str) -> float:
        """The cosine at or above which two memories of this type are a candidate pair."""
        c = self._policy.contradiction
        if memory_type in c.type_thresholds:
            return c.type_thresholds[memory_type]
        if c.threshold is None and memory_type in self.embedder.default_type_thresholds:
            return self.embedder.default_type_thresholds[memory_type]
        return self.contradiction_threshold

    def save_policy(self, policy: EnginePolicy, by: str) -> None:
        """Make ``policy`` the engine's policy and store it (audited, before and after)."""
        by = v.actor(by)
        before = self._policy.to_dict()
        after = policy.to_dict()
        self._apply(
            ChangeSet(
                policy=after,
                audit=[self._audit(by, "policy_change", "policy", "engine", None, before, after)],
            )
        )
        self._policy = policy

    # --- reading ---------------------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        return self.store.get_memory(memory_id)

    def list_patients(self) -> list[str]:
        return self.store.list_patients()

    def list_memories(self, patient_id: str, include_inactive: bool = True) -> list[Memory]:
        v.patient_id(patient_id)
        mems = self.store.list_memories(patient_id)
        return mems if include_inactive else [m for m in mems if m.status is Status.ACTIVE]

    def supersessions(
        self, patient_id: str | None = None, state: str | None = None
    ) -> list[Supersession]:
        if state is not None and state not in {s.value for s in SupersessionState}:
            raise ValidationError("state", f"unknown supersession state {state!r}")
        return self.store.list_supersessions(patient_id, state)

    def audit_log(
        self,
        *,
        patient_id: str | None = None,
        actor: str | None = None,
        action: str | None = None,
        entity_id: str | None = None,
        limit: int = 500,
    ) -> list[AuditEntry]:
        return self.store.list_audit(AuditQuery(patient_id, actor, action, entity_id, limit))

    def injections(self, patient_id: str, limit: int = 100) -> list[InjectionRecord]:
        return self.store.list_injections(patient_id, limit)

    def access_times(self, patient_id: str) -> dict[str, list[datetime]]:
        return self.store.access_times(patient_id)

    # --- snapshots and as-of views ---------------------------------------------------------------
    def _snapshot(self, patient_id: str) -> _Snapshot:
        return self._state(patient_id)[0]

    def _state(self, patient_id: str) -> tuple[_Snapshot, _Use]:
        """The patient's snapshot (memories, vectors, supersessions) and usage, each rebuilt
        only when the store says it changed."""
        content, usage = self.store.versions(patient_id)
        with self._cache_lock:
            snap = self._cache.get(patient_id)
            use = self._usage_cache.get(patient_id)
        if snap is None or snap.version != content:
            snap = self._build_snapshot(patient_id, content)
            use = None
        if use is None or use.version != (content, usage):
            use = self._build_usage(patient_id, snap, (content, usage))
        with self._cache_lock:
            self._cache[patient_id] = snap
            self._usage_cache[patient_id] = use
        return snap, use

    def _build_snapshot(self, patient_id: str, version: int) -> _Snapshot:
        mems = tuple(self.store.list_memories(patient_id))
        return _make_snapshot(
            version,
            mems,
            tuple(self.store.list_supersessions(patient_id)),
            self.embedder.dimensions,
        )

    def _apply(self, changes: ChangeSet) -> None:
        """Write through the store, then bring this engine's cached snapshots up to date by
        applying the same changes in memory -- when nobody else wrote in between (the store's
        content version moved by exactly one); otherwise the next read rebuilds."""
        patients = changes.patients()
        with self._cache_lock:
            before = {p: (self._cache.get(p), self._usage_cache.get(p)) for p in patients}
        self.store.apply(changes)
        for pid, (snap, use) in before.items():
            content, usage = self.store.versions(pid)
            fresh = None
            if snap is not None and use is not None and content == snap.version + 1:
                fresh = _advance(snap, use, pid, changes, (content, usage))
            with self._cache_lock:
                if fresh is not None and self._cache.get(pid) is snap:
                    self._cache[pid], self._usage_cache[pid] = fresh
                else:
                    self._cache.pop(pid, None)
                    self._usage_cache.pop(pid, None)

    def _build_usage(self, patient_id: str, snap: _Snapshot, version: tuple[int, int]) -> _Use:
        u = self.store.usage(patient_id)
        count = np.fromiter((m.access_count for m in snap.memories), np.float64, len(snap.index))
        last = np.fromiter(
            (m.last_accessed.timestamp() for m in snap.memories), np.float64, len(snap.index)
        )
        for k, mid in enumerate(u.ids):
            i = snap.index.get(mid)
            if i is not None:
                count[i] = u.access_count[k]
                last[i] = u.last_accessed_s[k]
        used = last[count > 0]
        return _Use(
            version=version,
            access_count=count,
            last_s=last,
            sessions_s=u.sessions_s,
            latest_s=float(used.max()) if used.size else 0.0,
        )

    def _with_usage(self, m: Memory, inputs_count: float, last: float) -> Memory:
        """The memory with the access fields of the moment it is seen at."""
        if m.access_count == inputs_count and m.last_accessed.timestamp() == last:
            return m
        return replace(
            m,
            access_count=int(inputs_count),
            last_accessed=datetime.fromtimestamp(last, tz=m.created_at.tzinfo),
        )

    def _statuses(self, snap: _Snapshot, now: datetime, idx: Sequence[int]) -> list[Status]:
        if now.timestamp() >= snap.settled_s:  # nothing changes after now: stored statuses
            return [snap.memories[i].status for i in idx]
        demoted = {s.old_id for s in snap.supersessions if s.in_effect(now)}
        out: list[Status] = []
        for i in idx:
            m = snap.memories[i]
            if m.archived_at is not None and m.archived_at <= now:
                out.append(Status.ARCHIVED)
            elif m.id in demoted:
                out.append(Status.SUPERSEDED)
            else:
                out.append(Status.ACTIVE)
        return out

    def _active_indices(self, snap: _Snapshot, now: datetime) -> npt.NDArray[np.int64]:
        """Snapshot rows of the memories active at ``now`` (created by then, not archived,
        not superseded by a supersession in effect)."""
        now_s = now.timestamp()
        if now_s >= snap.settled_s and now_s + 1e-6 >= snap.memoized(
            "created_max", lambda: float(snap.created_s.max(initial=-np.inf))
        ):  # every memory visible, no status change after now: the stored statuses
            return snap.memoized("active", lambda: np.flatnonzero(snap.active).astype(np.int64))
        visible = snap.created_s <= now_s + 1e-6
        if now_s >= snap.settled_s:
            return np.flatnonzero(visible & snap.active).astype(np.int64)
        idx = np.flatnonzero(visible).astype(np.int64)
        status = self._statuses(snap, now, idx.tolist())
        return idx[np.array([st is Status.ACTIVE for st in status], dtype=np.bool_)]

    def _decay_inputs(
        self, snap: _Snapshot, use: _Use, idx: npt.NDArray[np.int64], now_s: float
    ) -> decay.DecayInputs:
        count = use.access_count[idx]
        last = use.last_s[idx]
        created = snap.created_s[idx]
        if now_s < use.latest_s:  # as of the past: forget later accesses
            if use.events is None:
                use.events = self.store.access_events(snap.memories[0].patient_id)
            count = count.copy()
            last = last.copy()
            for j, i in enumerate(idx):
                acc = use.events.get(snap.memories[int(i)].id)
                if acc is None or acc.size == 0:
                    if last[j] > now_s:
                        last[j] = created[j]
                    continue
                seen = int(np.searchsorted(acc, now_s, side="right"))
                count[j] = max(0.0, count[j] - (acc.size - seen))
                last[j] = acc[seen - 1] if seen else created[j]
        sessions = use.sessions_s
        since = (
            np.searchsorted(sessions, now_s, side="right")
            - np.searchsorted(sessions, last, side="right")
        ).astype(np.float64)
        return decay.DecayInputs(
            importance=snap.importance[idx],
            created_s=created,
            last_access_s=last,
            access_count=count,
            pinned=snap.pinned[idx],
            short_term=snap.short_term[idx],
            sessions_since_access=since,
        )

    def view(
        self, patient_id: str, *, now: datetime | None = None, policy: DecayPolicy | None = None
    ) -> PatientView:
        """The patient's memories as of ``now``, with current importance and strength under
        ``policy`` (default: the engine's). Reads only; records nothing."""
        v.patient_id(patient_id)
        now = self._now(now)
        pol = policy or self._policy.decay
        snap, use = self._state(patient_id)
        now_s = now.timestamp()
        idx = np.flatnonzero(snap.created_s <= now_s + 1e-6).astype(np.int64)
        inputs = self._decay_inputs(snap, use, idx, now_s)
        status = self._statuses(snap, now, idx.tolist())
        cur = decay.current_importance(inputs, pol, now_s)
        sup = np.array([s is Status.SUPERSEDED for s in status], dtype=np.bool_)
        cur = np.where(sup, pol.floor, cur)
        return PatientView(
            now=now,
            memories=tuple(
                self._with_usage(snap.memories[i], inputs.access_count[j], inputs.last_access_s[j])
                for j, i in enumerate(idx)
            ),
            status=tuple(status),
            access_count=inputs.access_count,
            current_importance=cur,
            strength=decay.cleanup_strength(inputs, pol, now_s),
            sessions_since_access=(
                inputs.sessions_since_access
                if inputs.sessions_since_access is not None
                else np.zeros(len(idx))
            ),
        )

    def compare_policies(
        self,
        patient_id: str,
        saved: DecayPolicy,
        tuned: DecayPolicy,
        *,
        now: datetime | None = None,
        top_n: int = 5,
    ) -> list[PolicyDelta]:
        """How a tuned decay policy changes a patient's active memories against the saved one:
        current importance and rank (by current importance, newest first on ties) under both,
        whether the memory enters or leaves the top ``top_n``, and whether it crosses each
        policy's cleanup threshold. Reads only."""
        a = self.view(patient_id, now=now, policy=saved)
        b = self.view(patient_id, now=now, policy=tuned)
        act = [i for i, s in enumerate(a.status) if s is Status.ACTIVE]
        created = np.array([a.memories[i].created_at.timestamp() for i in act])

        def ranks(values: F64) -> dict[int, int]:
            order = ranking.order_by_score(values, created)
            return {act[int(o)]: r for r, o in enumerate(order, start=1)}

        ra = ranks(a.current_importance[act])
        rb = ranks(b.current_importance[act])
        out = []
        for i in act:
            m = a.memories[i]
            protected = m.pinned or m.memory_type in self._policy.review_gated_types
            out.append(
                PolicyDelta(
                    memory=m,
                    saved_importance=float(a.current_importance[i]),
                    tuned_importance=float(b.current_importance[i]),
                    saved_rank=ra[i],
                    tuned_rank=rb[i],
                    saved_top=ra[i] <= top_n,
                    tuned_top=rb[i] <= top_n,
                    saved_cleanup=not protected and a.strength[i] < saved.cleanup_threshold,
                    tuned_cleanup=not protected and b.strength[i] < tuned.cleanup_threshold,
                )
            )
        out.sort(key=lambda d: d.tuned_rank)
        return out

    # --- retrieval -------------------------------------------------------------------------------
    def _now(self, now: datetime | None) -> datetime:
        return self.clock() if now is None else v.now_value(now)

    @staticmethod
    def _lexical(snap: _Snapshot) -> LexicalIndex:
        index = snap.lexical.index
        if index is None:  # two threads may both build it: the same index either way
            index = LexicalIndex.build([m.content for m in snap.memories])
            snap.lexical.index = index
        return index

    def _keyword_hits(
        self, snap: _Snapshot, query: str, active: npt.NDArray[np.int64], limit: int
    ) -> tuple[npt.NDArray[np.int64], F64]:
        """Snapshot rows and BM25 of the ``limit`` best keyword matches among ``active``."""
        if not query.strip() or active.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        allowed = None
        if active.size < len(snap.memories):
            allowed = np.zeros(len(snap.memories), dtype=np.bool_)
            allowed[active] = True
        return self._lexical(snap).search(query, limit, allowed)

    def keyword_search(
        self, patient_id: str, query: str, *, limit: int = 50, now: datetime | None = None
    ) -> list[tuple[Memory, float]]:
        """The patient's active memories that match ``query``'s words, best BM25 first (the
        keyword half of retrieval, on its own). Reads only."""
        v.patient_id(patient_id)
        v.query(query)
        limit = v.positive_int(limit, "limit")
        now = self._now(now)
        snap, _ = self._state(patient_id)
        rows, scores = self._keyword_hits(snap, query, self._active_indices(snap, now), limit)
        return [(snap.memories[r], s) for r, s in zip(rows.tolist(), scores.tolist(), strict=True)]

    def _workers(self) -> ThreadPoolExecutor:
        """A helper thread that takes half of a large cosine scan (numpy releases the GIL)."""
        with self._cache_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="memory-core")
            return self._pool

    def _dots(self, matrix: F32, q: F32) -> npt.NDArray[np.float32]:
        """:func:`ranking.dots`; from :data:`SCAN_SPLIT_ROWS` rows the lower half runs on a
        helper thread (measured in the benchmark run at 10,000 rows, the matrix out of the CPU
        caches after the query embedding: 1.2 ms split vs 1.7 ms on one thread)."""
        n = matrix.shape[0]
        if n < SCAN_SPLIT_ROWS:
            return ranking.dots(matrix, q)
        out = np.empty(n, dtype=np.float32)
        half = n // 2
        job = self._workers().submit(ranking.dots, matrix[half:], q, out[half:])
        ranking.dots(matrix[:half], q, out[:half])
        job.result()
        return out

    @staticmethod
    def _vector_ranks(
        sims: npt.NDArray[np.float32], pool_n: int, extra: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The rows that can enter the candidate pool -- every row whose cosine ranks in the
        best ``pool_n``, plus ``extra`` (keyword hits, always-included types), ascending -- and
        their vector ranks: 1 + the number of rows with a higher cosine (equal cosines, e.g.
        the same text saved twice, share a rank). Any other row ranks below ``pool_n`` and has
        no keyword rank, so its fused value is lower than that of each of the best ``pool_n``:
        it cannot enter the pool, and its rank is never computed (no full sort)."""
        asc = np.sort(sims)
        mask = sims >= asc[sims.size - pool_n]
        mask[extra] = True
        cand = np.flatnonzero(mask)
        higher = sims.size - np.searchsorted(asc, sims[cand], side="right")
        return cand, (1 + higher).astype(np.int64)

    def _rank(
        self,
        patient_id: str,
        query: str,
        now: datetime,
        query_vector: F32 | None = None,
        policy: EnginePolicy | None = None,
        present: bool = False,
    ) -> _Ranked:
        """Every candidate of the pool, best first. ``present``: ``now`` is the current moment
        (not an as-of query), so a store's own vector search may be used."""
        pol = policy or self._policy
        rp = pol.ranking
        snap, use = self._state(patient_id)
        now_s = now.timestamp()
        active = self._active_indices(snap, now)
        if active.size == 0:
            return _Ranked.empty(self)
        kw_rows, _ = self._keyword_hits(snap, query, active, max(rp.candidate_pool * 4, 50))
        kw_pos = np.searchsorted(active, kw_rows)  # snapshot row -> active position
        always = np.flatnonzero(self._always_mask(snap, rp.always_include_types)[active])
        q = self.embedder.embed(query) if query_vector is None else query_vector
        q = q.astype(np.float32, copy=False)
        qn = math.sqrt(float(np.dot(q, q)))
        inv = self._inverse_norms(snap)
        if active.size == len(snap.memories):
            sims = ranking.cosine_scaled(self._dots(snap.matrix, q), inv, qn)
        elif 2 * active.size < len(snap.memories):  # mostly superseded: scan the active rows
            sims = ranking.cosine_scaled(self._dots(snap.matrix[active], q), inv[active], qn)
        else:
            sims = ranking.cosine_scaled(self._dots(snap.matrix, q), inv, qn)[active]
        pool_n = min(rp.candidate_pool, active.size)
        served = self.store.vector_candidates(patient_id, q, rp.candidate_pool) if present else None
        if served is None:
            cand, vrank = self._vector_ranks(sims, pool_n, np.concatenate([kw_pos, always]))
        else:
            # a store that searches vectors itself (Cosmos DB `server` mode) picks the vector
            # list; similarities stay the exact cosines from the snapshot, so the ranking is
            # the same on every store
            act = set(active.tolist())
            served_rows = [
                i for i in (snap.index.get(mid) for mid, _ in served) if i is not None and i in act
            ]
            served_pos = np.searchsorted(active, served_rows).tolist()
            cand = np.unique(np.array([*served_pos, *kw_pos, *always], dtype=np.int64))
            vrank = np.zeros(cand.size, dtype=np.int64)
            vrank[np.searchsorted(cand, served_pos)] = np.arange(1, len(served_pos) + 1)
        krank = np.zeros(cand.size, dtype=np.int64)
        krank[np.searchsorted(cand, kw_pos)] = np.arange(1, kw_pos.size + 1)
        fused = ranking.reciprocal_rank_fusion([vrank, krank], rp.rrf_k)
        # the pool: best fused ranks, plus every always-included (safety) type
        order = ranking.top_indices(fused, min(pool_n, cand.size))
        chosen = np.unique(np.concatenate([order, np.searchsorted(cand, always)]))
        rows = active[cand[chosen]]
        inputs = self._decay_inputs(snap, use, rows, now_s)
        cur = decay.current_importance(inputs, pol.decay, now_s)
        csims = sims[cand[chosen]].astype(np.float64)
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
        else:
            score = ranking.default_score(csims, cur)
        ordering = ranking.order_by_score(score, inputs.created_s)
        return _Ranked(
            self,
            snap.memories,
            rows[ordering],
            cur[ordering],
            csims[ordering],
            score[ordering],
            krank[chosen[ordering]],
            vrank[chosen[ordering]],
            cfused[ordering],
            inputs.access_count[ordering],
            inputs.last_access_s[ordering],
            pol.decay.warn_threshold,
            self._type_tiers(snap)[rows[ordering]],
        )

    @staticmethod
    def _inverse_norms(snap: _Snapshot) -> npt.NDArray[np.float32]:
        """1 / each row's L2 norm, 0 for a zero row (cached per snapshot)."""
        return snap.memoized("inverse_norms", lambda: ranking.inverse_norms(snap.norms))

    @staticmethod
    def _type_tiers(snap: _Snapshot) -> npt.NDArray[np.int8]:
        """Each row's context tier by type alone (:func:`context.type_tiers`), cached per
        snapshot; a high current importance lifts a 2 to 1 per call."""
        return snap.memoized("type_tiers", lambda: ctx.type_tiers(snap.types_arr))

    @staticmethod
    def _always_mask(snap: _Snapshot, types: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Rows of the always-included types (cached per snapshot)."""
        return snap.memoized(("always", tuple(types)), lambda: np.isin(snap.types_arr, list(types)))

    def retrieve(
        self,
        patient_id: str,
        query: str,
        *,
        k: int = 5,
        now: datetime | None = None,
        record_access: bool = True,
        query_vector: F32 | None = None,
    ) -> list[ScoredMemory]:
        """The ``k`` best active memories for ``query``. With ``record_access`` (an agent is
        being given them) each returned memory's access count and last access are refreshed
        atomically; previews pass ``record_access=False`` and change nothing."""
        v.patient_id(patient_id)
        v.query(query)
        k = v.positive_int(k, "k")
        present = now is None
        now = self._now(now)
        found = self._rank(patient_id, query, now, query_vector, present=present).top(k)
        if record_access and found:
            self._record(patient_id, [s.memory.id for s in found], now, None)
        return found

    def _record(
        self, patient_id: str, ids: list[str], now: datetime, injection: InjectionRecord | None
    ) -> None:
        self.store.record_access(
            patient_id, ids, now, self._policy.decay.promote_after, injection, AGENT
        )

    def build_context(
        self,
        patient_id: str,
        query: str,
        *,
        now: datetime | None = None,
        max_memories: int = 5,
        max_tokens: int | None = None,
        record_access: bool = True,
        query_vector: F32 | None = None,
        policy: EnginePolicy | None = None,
    ) -> ContextResult:
        """The exact "Patient Context from Previous Interactions" section for this query, with
        every candidate explained. ``record_access=True`` (an agent call) refreshes the
        included memories and appends an injection record."""
        v.patient_id(patient_id)
        v.query(query)
        max_memories = v.positive_int(max_memories, "max_memories")
        if max_tokens is not None:
            max_tokens = v.positive_int(max_tokens, "max_tokens")
        present = now is None
        now = self._now(now)
        pol = policy or self._policy
        ranked = self._rank(patient_id, query, now, query_vector, pol, present=present)
        sel = ctx.select_and_render(
            ranked,
            max_memories=max_memories,
            max_tokens=max_tokens,
            warn_threshold=pol.decay.warn_threshold,
            encoding=self.encoding,
            tiers=ranked.tiers,
        )
        injection_id = None
        if record_access:
            included = [ranked[i] for i in sel.chosen]  # in section order
            record = InjectionRecord(
                id=_new_id("inj"),
                at=now,
                patient_id=patient_id,
                query=query,
                items=tuple((s.memory.id, s.score) for s in included),
                tokens=sel.tokens,
                text=sel.text,
            )
            self._record(patient_id, [s.memory.id for s in included], now, record)
            injection_id = record.id
        return ContextResult(
            text=sel.text,
            tokens=sel.tokens,
            encoding=self.encoding,
            injection_id=injection_id,
            explain=lambda: sel.items,
        )

    def build_system_prompt(
        self,
        patient_id: str,
        session_context: str,
        *,
        query: str | None = None,
        now: datetime | None = None,
        max_memories: int = 5,
        max_tokens: int | None = None,
        record_access: bool = True,
    ) -> str:
        """Role line, the memory section, the Current Session part and the guidance line."""
        result = self.build_context(
            patient_id,
            session_context if query is None else query,
            now=now,
            max_memories=max_memories,
            max_tokens=max_tokens,
            record_access=record_access,
        )
        return ctx.build_system_prompt(result.text, session_context, self.role)

    # --- adding memories -------------------------------------------------------------------------
    def add_memory(
        self,
        patient_id: str,
        content: str,
        memory_type: str,
        *,
        importance: float | None = None,
        created_at: datetime | str | None = None,
        pinned: bool | None = None,
        tier: str = "long_term",
        source: str | None = None,
        by: str = SYSTEM,
        now: datetime | None = None,
    ) -> AddResult:
        """Add one memory; returns it and the supersessions it triggered."""
        results = self.add_memories(
            [
                {
                    "patient_id": patient_id,
                    "content": content,
                    "memory_type": memory_type,
                    "importance": importance,
                    "created_at": created_at,
                    "pinned": pinned,
                    "tier": tier,
                    "source": source,
                }
            ],
            by=by,
            now=now,
        )
        return results[0]

    def _prepare(
        self,
        record: Mapping[str, Any] | Any,
        where: str,
        checks: v.BatchChecks,
        out: _Prepared,
        defer_finite: bool = False,
    ) -> None:
        """One record validated and appended to ``out`` (nothing is appended when it is bad);
        the memory carries the given embedding (else an empty one). ``defer_finite``: a
        float32 vector of the right shape is not yet checked for NaN or infinite values (the
        caller checks the whole batch at once)."""
        get: Callable[[str], Any] = (
            record.get if type(record) is dict else lambda key: _field_of(record, key)
        )
        pid = checks.patient_id(get("patient_id"), where)
        text = v.content(get("content"), f"{where}content")
        mtype = checks.memory_type(get("memory_type"), where)
        imp = checks.importance(get("importance"), where)
        created_raw = get("created_at")
        created = (
            checks.now
            if created_raw is None
            else checks.timestamp(created_raw, f"{where}created_at")
        )
        pinned_raw = get("pinned")
        if pinned_raw is None:
            pinned = default_pinned(mtype)
        elif type(pinned_raw) is bool:
            pinned = pinned_raw
        else:
            pinned = v.boolean(pinned_raw, f"{where}pinned")
        tier = checks.tier(get("tier") or "long_term", where)
        src = checks.source(get("source"), where)
        accesses = checks.access_times(get("access_times"), created, where)
        vec_raw = get("embedding")
        dims = self.embedder.dimensions
        vec: F32 | None
        if vec_raw is None:
            vec = None
        elif (
            defer_finite
            and type(vec_raw) is np.ndarray
            and vec_raw.dtype == np.float32
            and vec_raw.shape == (dims,)
        ):
            vec = vec_raw
        else:
            vec = v.embedding(vec_raw, dims, f"{where}embedding")
        model = get("embedding_model")
        if vec is not None and model not in (None, self.embedder.model_id):
            raise ValidationError(
                f"{where}embedding_model",
                f"vectors from {model!r} cannot be mixed with {self.embedder.model_id!r}",
            )
        mid = get("id")
        if mid is not None and (not isinstance(mid, str) or not 1 <= len(mid) <= 80):
            raise ValidationError(f"{where}id", "must be a string of 1-80 characters")
        if imp is None:
            imp = default_importance(mtype, text, self._policy.importance_rules)
        memory = Memory(
            id=mid or _new_id("mem"),
            patient_id=pid,
            memory_type=mtype,
            content=text,
            importance=imp,
            created_at=created,
            last_accessed=accesses[-1] if accesses else created,
            embedding=_NO_VECTOR if vec is None else vec,
            embedding_model=self.embedder.model_id,
            access_count=len(accesses),
            pinned=pinned,
            tier=tier,
            source=src,
        )
        if mid is not None:
            out.given_ids.append(len(out.memories))
        out.memories.append(memory)
        out.accesses.append(accesses)
        out.vectors.append(vec)

    def _prepare_all(self, items: Sequence[Mapping[str, Any] | Any], now: datetime) -> _Prepared:
        """Every record validated, in order; the first bad one (by index, then field) raises.
        Given vectors are checked for NaN and infinite values in one pass over the batch."""
        checks = v.BatchChecks(now)
        prepared = _Prepared()
        try:
            for i, r in enumerate(items):
                self._prepare(r, f"records[{i}].", checks, prepared, defer_finite=True)
        except ValidationError:
            # an earlier record's vector may be the first error; else this record, checked in
            # full, names its first bad field
            self._check_finite(items, prepared)
            i = len(prepared.memories)
            self._prepare(items[i], f"records[{i}].", checks, _Prepared())
            raise
        self._check_finite(items, prepared)
        return prepared

    def _check_finite(self, items: Sequence[Mapping[str, Any] | Any], prepared: _Prepared) -> None:
        given = [(i, vec) for i, vec in enumerate(prepared.vectors) if vec is not None]
        if not given:
            return
        finite = np.isfinite(np.stack([vec for _, vec in given])).all(axis=1)
        if not finite.all():
            i = given[int(np.argmin(finite))][0]
            v.embedding(
                _field_of(items[i], "embedding"),
                self.embedder.dimensions,
                f"records[{i}].embedding",
            )

    def add_memories(
        self,
        records: Iterable[Mapping[str, Any] | Any],
        *,
        by: str = SYSTEM,
        now: datetime | None = None,
        progress: Progress | None = None,
        detect: bool = True,
        batch_size: int | None = None,
        on_batch: Callable[[int, int, int], None] | None = None,
    ) -> list[AddResult]:
        """Add many memories. Every record is validated first (a bad record names its index
        and field, and nothing is written); then they are embedded, checked for supersession
        against the store and each other (oldest first) and written -- in one transaction, or
        with ``batch_size`` in transactions of that many records, ``on_batch(index, first,
        end)`` being called after each batch is committed. Records are mappings (or objects)
        with the add_memory fields plus optional ``id``, ``access_times`` and a pre-computed
        ``embedding``."""
        by = v.actor(by)
        now = self._now(now)
        items = list(records)
        if batch_size is not None:
            batch_size = v.positive_int(batch_size, "batch_size")
        prepared = self._prepare_all(items, now)
        ids = [m.id for m in prepared.memories]
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            for i, mid in enumerate(ids):
                if mid in seen:
                    raise ValidationError(f"records[{i}].id", f"duplicate id {mid!r} in the batch")
                seen.add(mid)
        given = prepared.given_ids
        for k in range(0, len(given), 500):
            chunk = given[k : k + 500]
            found = {m.id for m in self.store.get_memories([ids[i] for i in chunk])}
            for i in chunk:
                if ids[i] in found:
                    raise ValidationError(f"records[{i}].id", f"memory id {ids[i]!r} exists")
        total = len(prepared.memories)
        step = batch_size or max(total, 1)
        need_total = sum(vec is None for vec in prepared.vectors)
        embedded_so_far = 0
        results: list[AddResult] = []
        for b, first in enumerate(range(0, total, step)):
            end = min(first + step, total)
            memories: list[Memory] = []
            for k in range(first, end, 256):
                group = prepared.memories[k : min(k + 256, end)]
                vectors = prepared.vectors[k : min(k + 256, end)]
                todo = [m.content for m, vec in zip(group, vectors, strict=True) if vec is None]
                if todo:
                    rows = iter(self.embedder.embed_batch(todo))
                    memories += [
                        m if vec is not None else replace(m, embedding=next(rows))
                        for m, vec in zip(group, vectors, strict=True)
                    ]
                else:
                    memories += group
                embedded_so_far += len(todo)
                if progress is not None and todo:
                    progress(embedded_so_far, need_total)
            results += self._write_batch(memories, prepared.accesses[first:end], by, now, detect)
            if on_batch is not None:
                on_batch(b, first, end)
        return results

    def _write_batch(
        self,
        memories: list[Memory],
        accesses: Sequence[Sequence[datetime]],
        by: str,
        now: datetime,
        detect: bool,
    ) -> list[AddResult]:
        """Detect supersessions for embedded new memories and write them in one transaction."""
        changes = ChangeSet()
        if detect:
            sups_by_new, pools, added = self._detect_batch(memories, by, now, changes)
        else:  # nothing to compare: the patients' snapshots are not even loaded
            sups_by_new, pools, added = {}, [], memories
        changes.insert_memories.extend(added)
        changes.accesses.extend(
            [
                (m.id, m.patient_id, t)
                for m, times in zip(added, accesses, strict=True)
                for t in times
            ]
        )
        clock = self.clock  # one audit entry per memory, as _audit makes them
        changes.audit.extend(
            [
                AuditEntry(
                    clock(), by, "add", "memory", m.id, m.patient_id, None, m.to_public_dict()
                )
                for m in added
            ]
        )
        for pool in pools:
            changes.update_memories.extend((m, pool.versions(m.id)) for m in pool.replaced.values())
        self._apply(changes)
        return [AddResult(memory=m, supersessions=tuple(sups_by_new.get(m.id, ()))) for m in added]

    def _detect_batch(
        self, memories: list[Memory], by: str, now: datetime, changes: ChangeSet
    ) -> tuple[dict[str, list[Supersession]], list[_PatientPool], list[Memory]]:
        """Supersessions of new memories against each patient's stored ones and each other
        (oldest first), recorded in ``changes``: ``(supersessions by new id, the pools, the new
        memories as they are to be written)`` in the order given."""
        sups_by_new: dict[str, list[Supersession]] = {m.id: [] for m in memories}
        # process oldest first per patient, so each new memory sees the ones before it
        order = sorted(range(len(memories)), key=lambda i: (memories[i].created_at, i))
        by_patient: dict[str, list[int]] = {}
        for i in order:
            by_patient.setdefault(memories[i].patient_id, []).append(i)
        pools: list[_PatientPool] = []
        for pid, idxs in by_patient.items():
            snap = self._snapshot(pid)
            pool = _PatientPool(snap)
            pools.append(pool)
            for i in idxs:
                mem = memories[i]
                if mem.memory_type not in self._policy.contradiction.exempt_types:
                    mem = self._detect(mem, pool, now, by, changes, sups_by_new)
                pool.add(mem)
        final = {m.id: m for pool in pools for m in pool.added()}
        return sups_by_new, pools, [final[m.id] for m in memories]

    def _detect(
        self,
        new: Memory,
        pool: _PatientPool,
        now: datetime,
        by: str,
        changes: ChangeSet,
        sups_by_new: dict[str, list[Supersession]],
    ) -> Memory:
        """Find supersession candidates of ``new`` in ``pool`` and record them in ``changes``.
        Returns ``new`` (possibly superseded itself when an existing memory is newer)."""
        matrix, types, created, active, norms = pool.arrays()
        hits = candidates_for_new(
            new.embedding,
            new.memory_type,
            new.created_at.timestamp(),
            types,
            created,
            matrix,
            self.threshold_for(new.memory_type),
            active,
            norms,
        )
        mode = self._policy.contradiction.mode_for(new.memory_type)
        for row, sim, row_is_older in hits:
            other = pool.memories[row]
            if other.status is not Status.ACTIVE:
                continue
            older, newer = (other, new) if row_is_older else (new, other)
            new_is_older = not row_is_older
            verdict = self.adjudicator.adjudicate(older, newer, sim)
            if verdict not in SUPERSEDING_VERDICTS:
                continue
            if (new if new_is_older else older).status is not Status.ACTIVE:
                continue  # already demoted by an earlier hit
            sup = self._record_supersession(
                older, newer, sim, verdict, mode == "auto", by, now, changes
            )
            sups_by_new[new.id].append(sup)
            if sup.state is SupersessionState.AUTO:
                demoted = self._demote(older, newer.id, by, changes)
                if new_is_older:
                    new = demoted
                else:
                    pool.replace(row, demoted)
        return new

    # --- reviewer actions on supersessions -------------------------------------------------------
    def preview_supersessions(
        self,
        patient_id: str,
        content: str,
        memory_type: str,
        *,
        created_at: datetime | None = None,
        now: datetime | None = None,
    ) -> list[tuple[Memory, float, str]]:
        """Which active memories a new one would supersede, before saving:
        ``(older memory, similarity, "auto" | "review")``. The same decision as saving (the
        threshold, exempt types and the adjudicator's verdict). Writes nothing."""
        v.patient_id(patient_id)
        text = v.content(content)
        mtype = v.memory_type(memory_type)
        now = self._now(now)
        created = now if created_at is None else v.timestamp(created_at, "created_at", now)
        if mtype in self._policy.contradiction.exempt_types:
            return []
        snap = self._snapshot(patient_id)
        vec = self.embedder.embed(text)
        status = self._statuses(snap, now, range(len(snap.memories)))
        hits = candidates_for_new(
            vec,
            mtype,
            created.timestamp(),
            snap.types_arr,
            snap.created_s,
            snap.matrix,
            self.threshold_for(mtype),
        )
        mode = self._policy.contradiction.mode_for(mtype)
        new = Memory(
            id="preview",
            patient_id=patient_id,
            memory_type=mtype,
            content=text,
            importance=default_importance(mtype, text, self._policy.importance_rules),
            created_at=created,
            last_accessed=created,
            embedding=vec,
            embedding_model=self.embedder.model_id,
        )
        out: list[tuple[Memory, float, str]] = []
        for r, sim, older in hits:
            old = snap.memories[r]
            if not older or status[r] is not Status.ACTIVE:
                continue
            if self.adjudicator.adjudicate(old, new, sim) in SUPERSEDING_VERDICTS:
                out.append((old, sim, mode))
        return out

    def _record_supersession(
        self,
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
        otherwise pending review), added to ``changes`` with its audit entry."""
        sup = Supersession(
            id=_new_id("sup"),
            patient_id=older.patient_id,
            old_id=older.id,
            new_id=newer.id,
            similarity=similarity,
            method=self.adjudicator.method,
            verdict=verdict,
            state=SupersessionState.AUTO if auto else SupersessionState.PENDING,
            detected_at=now,
            effective_at=newer.created_at if auto else None,
            decided_by=by if auto else None,
            decided_at=now if auto else None,
        )
        changes.insert_supersessions.append(sup)
        changes.audit.append(
            self._audit(
                by,
                "detect_supersession",
                "supersession",
                sup.id,
                sup.patient_id,
                None,
                sup.to_public_dict(),
            )
        )
        return sup

    def _demote(self, older: Memory, newer_id: str, by: str, changes: ChangeSet) -> Memory:
        """``older`` superseded by ``newer_id`` (base importance kept), with its audit entry
        added to ``changes``."""
        demoted = replace(older, status=Status.SUPERSEDED, superseded_by=newer_id)
        before = older.to_public_dict()
        after = {**before, "status": demoted.status.value, "superseded_by": newer_id}
        changes.audit.append(
            self._audit(by, "supersede", "memory", older.id, older.patient_id, before, after)
        )
        return demoted

    def _sup_change(
        self,
        sup: Supersession,
        by: str,
        action: str,
        new_state: SupersessionState,
        now: datetime,
        **fields: Any,
    ) -> ChangeSet:
        changed = replace(sup, state=new_state, decided_by=by, decided_at=now, **fields)
        return ChangeSet(
            update_supersessions=[(changed, sup.version)],
            audit=[
                self._audit(
                    by,
                    action,
                    "supersession",
                    sup.id,
                    sup.patient_id,
                    sup.to_public_dict(),
                    changed.to_public_dict(),
                )
            ],
        )

    def confirm_supersession(
        self, supersession_id: str, reviewer: str, *, now: datetime | None = None
    ) -> Supersession:
        """A reviewer confirms a pending supersession: the older memory is demoted now."""
        reviewer = v.actor(reviewer, "reviewer")
        now = self._now(now)
        sup = self.store.get_supersession(supersession_id)
        if sup.state is not SupersessionState.PENDING:
            raise StateError(f"supersession {sup.id} is {sup.state.value}, not pending")
        changes = self._sup_change(
            sup,
            reviewer,
            "confirm_supersession",
            SupersessionState.CONFIRMED,
            now,
            effective_at=now,
        )
        old = self.store.get_memory(sup.old_id)
        if old.status is Status.ACTIVE:
            demoted = self._demote(old, sup.new_id, reviewer, changes)
            changes.update_memories.append((demoted, old.version))
        self._apply(changes)
        return self.store.get_supersession(sup.id)

    def reject_supersession(
        self, supersession_id: str, reviewer: str, *, now: datetime | None = None
    ) -> Supersession:
        """A reviewer says both memories stand: the pending supersession is closed."""
        reviewer = v.actor(reviewer, "reviewer")
        now = self._now(now)
        sup = self.store.get_supersession(supersession_id)
        if sup.state is not SupersessionState.PENDING:
            raise StateError(
                f"supersession {sup.id} is {sup.state.value}; only pending ones can be rejected "
                "(undo one that is in effect)"
            )
        self._apply(
            self._sup_change(sup, reviewer, "reject_supersession", SupersessionState.REJECTED, now)
        )
        return self.store.get_supersession(sup.id)

    def undo_supersession(
        self, supersession_id: str, reviewer: str, *, now: datetime | None = None
    ) -> Supersession:
        """Undo an automatic or confirmed supersession: the older memory is active again
        (unless another supersession in effect or an archive still holds it)."""
        reviewer = v.actor(reviewer, "reviewer")
        now = self._now(now)
        sup = self.store.get_supersession(supersession_id)
        if sup.state not in IN_EFFECT:
            raise StateError(f"supersession {sup.id} is {sup.state.value}; nothing to undo")
        changes = self._sup_change(
            sup, reviewer, "undo_supersession", SupersessionState.UNDONE, now, ended_at=now
        )
        old = self.store.get_memory(sup.old_id)
        others = [
            s
            for s in self.store.list_supersessions(sup.patient_id)
            if s.old_id == old.id and s.id != sup.id and s.state in IN_EFFECT
        ]
        if old.status is Status.SUPERSEDED and not others:
            restored = replace(old, status=Status.ACTIVE, superseded_by=None)
        elif old.status is Status.SUPERSEDED:
            restored = replace(old, superseded_by=others[-1].new_id)
        else:
            restored = old
        if restored != old or restored.superseded_by != old.superseded_by:
            changes.update_memories.append((restored, old.version))
            changes.audit.append(
                self._audit(
                    reviewer,
                    "unsupersede",
                    "memory",
                    old.id,
                    old.patient_id,
                    old.to_public_dict(),
                    restored.to_public_dict(),
                )
            )
        self._apply(changes)
        return self.store.get_supersession(sup.id)

    def scan_contradictions(
        self,
        patient_id: str | None = None,
        *,
        by: str = SYSTEM,
        now: datetime | None = None,
        progress: Progress | None = None,
    ) -> list[Supersession]:
        """Back-scan: every same-type pair of active memories at or above the threshold that
        has no supersession record yet becomes one (older superseded by newer)."""
        by = v.actor(by)
        now = self._now(now)
        patients = [v.patient_id(patient_id)] if patient_id else self.list_patients()
        found: list[Supersession] = []
        for n, pid in enumerate(patients, start=1):
            snap = self._snapshot(pid)
            act = self._active_indices(snap, now).tolist()
            known = {(s.old_id, s.new_id) for s in snap.supersessions}
            known |= {(b, a) for a, b in known}
            types = [snap.types[i] for i in act]
            cuts = {t: self.threshold_for(t) for t in set(types)}
            created = snap.created_s[act]
            ids = np.array([snap.memories[i].id for i in act], dtype=np.str_)
            changes = ChangeSet()
            for t, a, b, vals in same_type_pair_arrays(types, snap.matrix[act], cuts):
                if t in self._policy.contradiction.exempt_types:
                    continue
                # older first: by created_at, then by id
                ca, cb = created[a], created[b]
                a_first = ca < cb
                tie = np.flatnonzero(ca == cb)
                if tie.size:
                    a_first[tie] = ids[a[tie]] < ids[b[tie]]
                olders = np.where(a_first, a, b)
                newers = np.where(a_first, b, a)
                auto = self._policy.contradiction.mode_for(t) == "auto"
                groups: Iterable[Iterable[int]]
                if auto:
                    # an older memory is demoted by its most similar newer one that the
                    # adjudicator says supersedes it (ties: the first pair); its other pairs
                    # are then moot
                    groups = _best_first_groups(olders, vals)
                else:  # review: every pair becomes a record, most similar first
                    groups = [np.argsort(-vals, kind="stable").tolist()]
                for group in groups:
                    for k in group:
                        older = snap.memories[act[int(olders[k])]]
                        newer = snap.memories[act[int(newers[k])]]
                        if (older.id, newer.id) in known:
                            continue
                        sim = float(vals[k])
                        verdict = self.adjudicator.adjudicate(older, newer, sim)
                        if verdict not in SUPERSEDING_VERDICTS:
                            continue
                        sup = self._record_supersession(
                            older, newer, sim, verdict, auto, by, now, changes
                        )
                        found.append(sup)
                        if auto:
                            d = self._demote(older, newer.id, by, changes)
                            changes.update_memories.append((d, older.version))
                            break
            if changes.insert_supersessions:
                self._apply(changes)
            if progress is not None:
                progress(n, len(patients))
        return found

    def similarity_values(
        self, patient_id: str, *, now: datetime | None = None
    ) -> dict[str, npt.NDArray[np.float32]]:
        """The cosine of every same-type pair of the patient's active memories, per type, as
        arrays: the threshold tuner's histogram without one object per pair."""
        v.patient_id(patient_id)
        now = self._now(now)
        snap = self._snapshot(patient_id)
        act = self._active_indices(snap, now)
        return same_type_similarities([snap.types[i] for i in act], snap.matrix[act])

    def similarity_pairs(
        self, patient_id: str, *, now: datetime | None = None, min_similarity: float = -1.0
    ) -> list[tuple[Memory, Memory, float]]:
        """Every same-type pair of the patient's active memories with cosine at or above
        ``min_similarity`` (older first, most similar first): the pairs a threshold flags."""
        v.patient_id(patient_id)
        now = self._now(now)
        snap = self._snapshot(patient_id)
        act = self._active_indices(snap, now).tolist()
        pairs = same_type_pairs([snap.types[i] for i in act], snap.matrix[act], min_similarity)
        out = []
        for a, b, sim in pairs:
            ma, mb = snap.memories[act[a]], snap.memories[act[b]]
            out.append((ma, mb, sim) if ma.created_at <= mb.created_at else (mb, ma, sim))
        out.sort(key=lambda t: -t[2])
        return out

    # --- reviewer actions on memories ------------------------------------------------------------
    def _update(
        self,
        memory_id: str,
        by: str,
        action: str,
        change: Callable[[Memory], Memory],
        expected_version: int | None,
    ) -> Memory:
        by = v.actor(by)
        old = self.store.get_memory(memory_id)
        version = old.version if expected_version is None else expected_version
        new = change(old)
        if new == old and new.pinned == old.pinned:
            return old
        self._apply(
            ChangeSet(
                update_memories=[(new, version)],
                audit=[
                    self._audit(
                        by,
                        action,
                        "memory",
                        old.id,
                        old.patient_id,
                        old.to_public_dict(),
                        new.to_public_dict(),
                    )
                ],
            )
        )
        return self.store.get_memory(memory_id)

    def pin(self, memory_id: str, by: str, *, expected_version: int | None = None) -> Memory:
        return self._update(
            memory_id, by, "pin", lambda m: replace(m, pinned=True), expected_version
        )

    def unpin(self, memory_id: str, by: str, *, expected_version: int | None = None) -> Memory:
        return self._update(
            memory_id, by, "unpin", lambda m: replace(m, pinned=False), expected_version
        )

    def set_importance(
        self, memory_id: str, importance: float, by: str, *, expected_version: int | None = None
    ) -> Memory:
        imp = v.importance(importance)
        if imp is None:
            raise ValidationError("importance", "must be a number from 1 to 10")
        return self._update(
            memory_id, by, "edit_importance", lambda m: replace(m, importance=imp), expected_version
        )

    def archive(
        self,
        memory_id: str,
        by: str,
        *,
        now: datetime | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        now = self._now(now)

        def change(m: Memory) -> Memory:
            if m.status is Status.ARCHIVED:
                raise StateError(f"memory {m.id} is already archived")
            return replace(m, status=Status.ARCHIVED, archived_at=now)

        return self._update(memory_id, by, "archive", change, expected_version)

    def restore(self, memory_id: str, by: str, *, expected_version: int | None = None) -> Memory:
        def change(m: Memory) -> Memory:
            if m.status is not Status.ARCHIVED:
                raise StateError(f"memory {m.id} is {m.status.value}, not archived")
            held = [
                s
                for s in self.store.list_supersessions(m.patient_id)
                if s.old_id == m.id and s.state in IN_EFFECT
            ]
            status = Status.SUPERSEDED if held else Status.ACTIVE
            return replace(m, status=status, archived_at=None)

        return self._update(memory_id, by, "restore", change, expected_version)

    # --- cleanup ---------------------------------------------------------------------------------
    def cleanup(
        self,
        *,
        now: datetime | None = None,
        threshold: float | None = None,
        dry_run: bool = True,
        patient_id: str | None = None,
        by: str = SYSTEM,
    ) -> CleanupResult:
        """Archive (never delete) active memories whose strength is below ``threshold``
        (default: the policy's). Pinned memories and review-gated types are never archived."""
        by = v.actor(by)
        now = self._now(now)
        pol = self._policy
        thr = pol.decay.cleanup_threshold if threshold is None else float(threshold)
        if not (0.0 <= thr <= 1.0):
            raise ValidationError("threshold", f"must be a strength between 0 and 1, got {thr}")
        patients = [v.patient_id(patient_id)] if patient_id else self.list_patients()
        archived: list[Memory] = []
        strengths: dict[str, float] = {}
        changes = ChangeSet()
        for pid in patients:
            view = self.view(pid, now=now)
            for i, m in enumerate(view.memories):
                if view.status[i] is not Status.ACTIVE or m.status is not Status.ACTIVE:
                    continue
                if m.pinned or m.memory_type in pol.review_gated_types:
                    continue
                s = float(view.strength[i])
                if s < thr:
                    strengths[m.id] = s
                    done = replace(m, status=Status.ARCHIVED, archived_at=now)
                    archived.append(done)
                    changes.update_memories.append((done, m.version))
                    changes.audit.append(
                        self._audit(
                            by,
                            "cleanup_archive",
                            "memory",
                            m.id,
                            pid,
                            m.to_public_dict(),
                            {**done.to_public_dict(), "strength": s, "threshold": thr},
                        )
                    )
        if not dry_run and changes.update_memories:
            self._apply(changes)
        return CleanupResult(tuple(archived), strengths, dry_run, thr)

    def purge(
        self,
        *,
        older_than_days: float,
        now: datetime | None = None,
        dry_run: bool = True,
        patient_id: str | None = None,
        by: str = SYSTEM,
    ) -> list[Memory]:
        """Delete memories that have been *archived* for longer than the retention age. The only
        way anything is deleted: explicit, dry run by default, never pinned or review-gated
        memories, one audit entry per memory holding the whole record as ``before``."""
        by = v.actor(by)
        now = self._now(now)
        if not (isinstance(older_than_days, int | float) and older_than_days >= 0):
            raise ValidationError("older_than_days", "must be a number of days >= 0")
        cutoff = now.timestamp() - float(older_than_days) * 86_400.0
        patients = [v.patient_id(patient_id)] if patient_id else self.list_patients()
        doomed: list[Memory] = []
        changes = ChangeSet()
        for pid in patients:
            for m in self.store.list_memories(pid):
                if m.status is not Status.ARCHIVED or m.archived_at is None:
                    continue
                if m.archived_at.timestamp() > cutoff:
                    continue
                if m.pinned or m.memory_type in self._policy.review_gated_types:
                    continue
                doomed.append(m)
                changes.delete_memories.append((m, m.version))
                changes.audit.append(
                    self._audit(by, "purge", "memory", m.id, pid, m.to_public_dict(), None)
                )
        if not dry_run and doomed:
            self._apply(changes)
        return doomed

    # --- sessions (seeding, imports) -------------------------------------------------------------
    def record_sessions(self, patient_id: str, times: Sequence[datetime], by: str = SYSTEM) -> None:
        """Import past session moments of a patient (the interactions clock counts them)."""
        v.patient_id(patient_id)
        now = self.clock()
        ts = [v.timestamp(t, f"times[{i}]", now) for i, t in enumerate(times)]
        self._apply(
            ChangeSet(
                sessions=[(patient_id, t) for t in ts],
                audit=[
                    self._audit(
                        v.actor(by),
                        "import_sessions",
                        "store",
                        patient_id,
                        patient_id,
                        None,
                        {"sessions": len(ts)},
                    )
                ],
            )
        )

    # --- ingest (memory_core.ingest.service; thin facade) ----------------------------------------
    def extract_memories(
        self, patient_id: str, transcript: str, *, now: datetime | None = None, **kw: Any
    ) -> Proposals:
        """Proposals from a session transcript; writes nothing (see ``ingest.service``)."""
        return _ingest.extract_memories(self, patient_id, transcript, now=now, **kw)

    def accept_proposals(
        self, patient_id: str, proposals: Sequence[Any], *, by: str, now: datetime | None = None
    ) -> list[AddResult]:
        """Write accepted proposals in one ``add_memories`` call (see ``ingest.service``)."""
        return _ingest.accept_proposals(self, patient_id, proposals, by=by, now=now)

    def import_fhir(
        self,
        bundle: Any,
        *,
        patient_id: str | None = None,
        by: str,
        dry_run: bool = True,
        **kw: Any,
    ) -> FhirImportReport:
        """FHIR R4 Bundle in; a dry run unless ``dry_run=False`` (see ``ingest.fhir``)."""
        return _ingest.import_fhir(
            self, bundle, patient_id=patient_id, by=by, dry_run=dry_run, **kw
        )

    # --- audit helper ----------------------------------------------------------------------------
    def _audit(
        self,
        actor: str,
        action: str,
        entity: str,
        entity_id: str,
        patient_id: str | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
    ) -> AuditEntry:
        return AuditEntry(
            at=self.clock(),
            actor=actor,
            action=action,
            entity=entity,
            entity_id=entity_id,
            patient_id=patient_id,
            before=before,
            after=after,
        )


class _Ranked(Sequence[ScoredMemory]):
    """The candidate pool of one retrieval, best first, held as arrays: a
    :class:`ScoredMemory` is made only for the candidates that are looked at (an agent call
    reads the few it injects; the explanation of every candidate is built on demand)."""

    def __init__(
        self,
        engine: MemoryEngine,
        memories: Sequence[Memory],
        rows: npt.NDArray[np.int64],
        cur: F64,
        sims: F64,
        score: F64,
        krank: npt.NDArray[np.int64],
        vrank: npt.NDArray[np.int64],
        fused: F64,
        count: F64,
        last: F64,
        warn: float,
        type_tiers: npt.NDArray[np.int8],
    ) -> None:
        """``type_tiers``: each candidate's tier by type (see ``MemoryEngine._type_tiers``)."""
        self._engine = engine
        self._memories = memories
        self._cols = (rows, cur, sims, score, krank, vrank, fused, count, last)
        self._made: list[ScoredMemory | None] = [None] * len(rows)
        tiers = np.where((type_tiers == 2) & (cur >= warn), 1, type_tiers)
        self.tiers: list[int] = tiers.tolist()
        self._safety = tiers < 2

    @classmethod
    def empty(cls, engine: MemoryEngine) -> _Ranked:
        z, f = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return cls(engine, (), z, f, f, f, z, z, f, f, f, 10.0, np.zeros(0, dtype=np.int8))

    def __len__(self) -> int:
        return len(self._made)

    def _make(self, i: int) -> ScoredMemory:
        got = self._made[i]
        if got is None:
            rows, cur, sims, score, krank, vrank, fused, count, last = self._cols
            got = ScoredMemory(
                memory=self._engine._with_usage(
                    self._memories[int(rows[i])], float(count[i]), float(last[i])
                ),
                similarity=float(sims[i]),
                current_importance=float(cur[i]),
                score=float(score[i]),
                keyword_rank=int(krank[i]) or None,
                vector_rank=int(vrank[i]) or None,
                fused=float(fused[i]),
                safety=bool(self._safety[i]),
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


@dataclass(slots=True)
class _Prepared:
    """Validated records as parallel lists (no tuple per record): the memories, their access
    times, their given vectors (None: to be embedded) and the positions of records that named
    their id."""

    memories: list[Memory] = field(default_factory=list)
    accesses: list[Sequence[datetime]] = field(default_factory=list)
    vectors: list[F32 | None] = field(default_factory=list)
    given_ids: list[int] = field(default_factory=list)


class _PatientPool:
    """A patient's memories during a batch add: the stored ones plus those added so far, in
    growable arrays (appending a memory is O(1) amortised, not a copy of the whole matrix)."""

    def __init__(self, snap: _Snapshot) -> None:
        self.memories = list(snap.memories)
        self.n_stored = len(self.memories)
        self._snap = snap
        self._n = self.n_stored
        self._matrix = snap.matrix
        self._types = snap.types_arr
        self._created = snap.created_s
        self._active = snap.active  # status is active; copied before the first change
        self._norms = snap.norms
        self._own_active = False
        self._pending: list[Memory] = []
        self.replaced: dict[str, Memory] = {}  # stored memories demoted by the batch

    def versions(self, memory_id: str) -> int:
        return self._snap.memories[self._snap.index[memory_id]].version

    def arrays(self) -> tuple[F32, npt.NDArray[np.str_], F64, npt.NDArray[np.bool_], F32]:
        """(matrix, types, created_s, active, norms) of every memory in the pool."""
        if self._pending:
            self._flush()
        n = self._n
        return (
            self._matrix[:n],
            self._types[:n],
            self._created[:n],
            self._active[:n],
            self._norms[:n],
        )

    def add(self, m: Memory) -> None:
        """Add a memory; its row is written only when a later detection needs it (a single
        add never copies the patient's matrix)."""
        self.memories.append(m)
        self._pending.append(m)

    def _flush(self) -> None:
        n, k = self._n, len(self._pending)
        if n == self.n_stored or n + k > self._matrix.shape[0]:
            # first growth (the snapshot's arrays are shared: copy) or full: grow
            cap = max(2 * (n + k), n + k + 64)
            matrix = np.zeros((cap, self._snap.buffer.shape[1]), dtype=np.float32)
            matrix[:n] = self._matrix[:n]
            types = np.empty(cap, dtype="<U40")
            types[:n] = self._types[:n]
            created = np.zeros(cap, dtype=np.float64)
            created[:n] = self._created[:n]
            active = np.zeros(cap, dtype=np.bool_)
            active[:n] = self._active[:n]
            norms = np.zeros(cap, dtype=np.float32)
            norms[:n] = self._norms[:n]
            self._matrix, self._types, self._created = matrix, types, created
            self._active, self._norms, self._own_active = active, norms, True
        for j, m in enumerate(self._pending):
            self._matrix[n + j] = m.embedding
            self._types[n + j] = m.memory_type
            self._created[n + j] = m.created_at.timestamp()
            self._active[n + j] = self.memories[n + j].status is Status.ACTIVE
        self._norms[n : n + k] = np.linalg.norm(self._matrix[n : n + k], axis=1)
        self._n = n + k
        self._pending = []

    def replace(self, row: int, m: Memory) -> None:
        self.memories[row] = m
        if row < self._n:
            if not self._own_active:
                self._active = self._active.copy()
                self._own_active = True
            self._active[row] = m.status is Status.ACTIVE
        if row < self.n_stored:
            self.replaced[m.id] = m

    def added(self) -> list[Memory]:
        return self.memories[self.n_stored :]
