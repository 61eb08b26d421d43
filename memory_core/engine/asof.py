"""As-of state: which memories were visible and active at a moment, their usage then, and the
views built on it (the dashboard's numbers, the decay lab's policy comparison).

The status rule itself is :mod:`memory_core.status`; this module only adds the fast paths that
skip it when no status changes after the moment asked about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import decay, ranking
from .. import validation as v
from ..policy import DecayPolicy
from ..status import holders, status_at
from ..store.base import MemoryStore
from ..values import Memory, Status
from .core import Core
from .snapshot import Snapshot, Use

F64 = npt.NDArray[np.float64]


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


def statuses(snap: Snapshot, now: datetime, idx: Sequence[int]) -> list[Status]:
    """The status of each of these snapshot rows at ``now`` (:func:`status.status_at`)."""
    if now.timestamp() >= snap.settled_s:  # nothing changes after now: stored statuses
        return [snap.memories[i].status for i in idx]
    held = holders(snap.supersessions, now)
    return [status_at(snap.memories[i], held, now)[0] for i in idx]


def active_indices(snap: Snapshot, now: datetime) -> npt.NDArray[np.int64]:
    """Snapshot rows of the memories active at ``now`` (created by then, not archived, not
    superseded by a supersession in effect)."""
    now_s = now.timestamp()
    if now_s >= snap.settled_s and now_s + 1e-6 >= snap.memoized(
        "created_max", lambda: float(snap.created_s.max(initial=-np.inf))
    ):  # every memory visible, no status change after now: the stored statuses
        return snap.memoized("active", lambda: np.flatnonzero(snap.active).astype(np.int64))
    visible = snap.created_s <= now_s + 1e-6
    if now_s >= snap.settled_s:
        return np.flatnonzero(visible & snap.active).astype(np.int64)
    idx = np.flatnonzero(visible).astype(np.int64)
    status = statuses(snap, now, idx.tolist())
    return idx[np.array([st is Status.ACTIVE for st in status], dtype=np.bool_)]


def decay_inputs(
    store: MemoryStore, snap: Snapshot, use: Use, idx: npt.NDArray[np.int64], now_s: float
) -> decay.DecayInputs:
    """The decay inputs of these rows at ``now_s``; as of the past, later accesses and
    confirmations are forgotten (the access events are loaded once per usage version; the
    confirmations are the memories' own). The interactions clock counts the patient's sessions
    since the later of the last access and the last confirmation."""
    count = use.access_count[idx]
    last = use.last_s[idx]
    created = snap.created_s[idx]
    if now_s < use.latest_s:
        if use.events is None:
            use.events = store.access_events(snap.memories[0].patient_id)
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
    confirmed = confirmations_at(snap, idx, now_s)
    used = last if confirmed is None else np.fmax(last, confirmed)
    sessions = use.sessions_s
    since = (
        np.searchsorted(sessions, now_s, side="right")
        - np.searchsorted(sessions, used, side="right")
    ).astype(np.float64)
    return decay.DecayInputs(
        importance=snap.importance[idx],
        created_s=created,
        last_access_s=last,
        access_count=count,
        pinned=snap.pinned[idx],
        short_term=snap.short_term[idx],
        sessions_since_access=since,
        confirmed_s=confirmed,
    )


def confirmations_at(snap: Snapshot, idx: npt.NDArray[np.int64], now_s: float) -> F64 | None:
    """Each row's latest confirmation taken effect by ``now_s`` (epoch seconds; NaN: none), or
    None when none of the patient's memories is confirmed. A row whose latest confirmation is
    later than ``now_s`` reads its earlier ones (:meth:`Memory.confirmation_at`)."""
    if snap.confirmed_s is None:
        return None
    conf = snap.confirmed_s[idx]
    late = np.flatnonzero(conf > now_s)  # NaN compares false: never confirmed
    if late.size:
        conf = conf.copy()
        for j in late.tolist():
            m = snap.memories[int(idx[j])]
            earlier = [c.at.timestamp() for c in m.confirmations if c.at.timestamp() <= now_s]
            conf[j] = earlier[-1] if earlier else np.nan
    return conf


def with_usage(m: Memory, count: float, last: float) -> Memory:
    """The memory with the access fields of the moment it is seen at."""
    if m.access_count == count and m.last_accessed.timestamp() == last:
        return m
    return replace(
        m,
        access_count=int(count),
        last_accessed=datetime.fromtimestamp(last, tz=m.created_at.tzinfo),
    )


def view(
    core: Core, patient_id: str, now: datetime | None, policy: DecayPolicy | None
) -> PatientView:
    """The patient's memories as of ``now`` (created by then), with their status, current
    importance and strength under ``policy`` (default: the engine's). Reads only; records
    nothing."""
    v.patient_id(patient_id)
    now = core.now(now)
    pol = policy or core.policy.decay
    snap, use = core.snapshots.state(patient_id)
    now_s = now.timestamp()
    idx = np.flatnonzero(snap.created_s <= now_s + 1e-6).astype(np.int64)
    inputs = decay_inputs(core.store, snap, use, idx, now_s)
    status = statuses(snap, now, idx.tolist())
    cur = decay.current_importance(inputs, pol, now_s)
    sup = np.array([s is Status.SUPERSEDED for s in status], dtype=np.bool_)
    cur = np.where(sup, pol.floor, cur)
    return PatientView(
        now=now,
        memories=tuple(
            with_usage(snap.memories[i], inputs.access_count[j], inputs.last_access_s[j])
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
    core: Core,
    patient_id: str,
    saved: DecayPolicy,
    tuned: DecayPolicy,
    now: datetime | None,
    top_n: int,
) -> list[PolicyDelta]:
    """How a tuned decay policy changes a patient's active memories against the saved one:
    current importance and rank (by current importance, newest first on ties) under both,
    whether the memory enters or leaves the top ``top_n``, and whether it crosses each
    policy's cleanup threshold. Reads only."""
    a = view(core, patient_id, now, saved)
    b = view(core, patient_id, now, tuned)
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
        protected = m.pinned or m.memory_type in core.policy.review_gated_types
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
