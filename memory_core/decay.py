"""Decay: current importance and strength, vectorised with numpy over many memories.

Nothing here reads a clock: every function takes ``now`` (epoch seconds for the array
functions, an aware datetime for the one-memory helpers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from .policy import DAYS_PER_MONTH, DecayPolicy
from .values import Memory, Tier

F64 = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Now = float | F64  # one moment, or one moment per memory

SECONDS_PER_DAY = 86_400.0
SECONDS_PER_HOUR = 3_600.0


@dataclass(frozen=True)
class DecayInputs:
    """Columns of the memories to decay (one entry per memory)."""

    importance: F64
    created_s: F64  # epoch seconds
    last_access_s: F64  # epoch seconds
    access_count: F64
    pinned: Bools
    short_term: Bools
    # patient sessions since the memory was last used or confirmed (interactions / hybrid)
    sessions_since_access: F64 | None = None
    # epoch seconds of each memory's latest confirmation in effect at the moment decayed
    # (NaN: none); None: no memory confirmed. A moment after ``now`` is never counted.
    confirmed_s: F64 | None = None

    def __len__(self) -> int:
        return int(self.importance.shape[0])

    @classmethod
    def from_memories(
        cls,
        memories: Sequence[Memory],
        sessions_since_access: Sequence[float] | None = None,
        at: datetime | None = None,
    ) -> DecayInputs:
        """The columns of ``memories``; their confirmations as of ``at`` (None: the latest)."""
        n = len(memories)
        imp = np.fromiter((m.importance for m in memories), np.float64, n)
        created = np.fromiter((m.created_at.timestamp() for m in memories), np.float64, n)
        last = np.fromiter((m.last_accessed.timestamp() for m in memories), np.float64, n)
        count = np.fromiter((m.access_count for m in memories), np.float64, n)
        pinned = np.fromiter((m.pinned for m in memories), np.bool_, n)
        short = np.fromiter((m.tier is Tier.SHORT_TERM for m in memories), np.bool_, n)
        sessions = (
            None
            if sessions_since_access is None
            else np.asarray(sessions_since_access, dtype=np.float64)
        )
        confirmed = None
        if any(m.confirmations for m in memories):
            confirmed = np.fromiter(
                (
                    np.nan if (c := m.confirmation_at(at)) is None else c.at.timestamp()
                    for m in memories
                ),
                np.float64,
                n,
            )
        return cls(imp, created, last, count, pinned, short, sessions, confirmed)


def since_confirmed(start_s: F64, inputs: DecayInputs, now_s: Now) -> F64:
    """``start_s`` (creation, or last access), or the latest confirmation when that is later
    and taken effect by ``now_s`` (domain.md, "Age counts from the last confirmation")."""
    conf = inputs.confirmed_s
    if conf is None:
        return start_s
    in_effect = np.where(conf <= now_s, conf, np.nan)  # NaN (none, or later) loses to fmax
    return np.fmax(start_s, in_effect)


def _sessions(inputs: DecayInputs) -> F64:
    if inputs.sessions_since_access is None:
        return np.zeros(len(inputs), dtype=np.float64)
    return inputs.sessions_since_access


def age_days(inputs: DecayInputs, policy: DecayPolicy, now_s: Now) -> F64:
    """Age used by the monthly models, in days, under the policy's clock.

    wall: since creation or the last confirmation, whichever is later; interactions: sessions
    since last use (or confirmation) × session length; hybrid: the smaller of the two.
    """
    start = since_confirmed(inputs.created_s, inputs, now_s)
    wall = np.maximum(now_s - start, 0.0) / SECONDS_PER_DAY
    if policy.clock == "wall":
        return wall
    inter = _sessions(inputs) * policy.session_length_days
    if policy.clock == "interactions":
        return inter
    return np.minimum(wall, inter)


def age_hours_since_access(inputs: DecayInputs, policy: DecayPolicy, now_s: Now) -> F64:
    """Hours since the last access or confirmation, whichever is later, used by the strength
    model, under the policy's clock."""
    start = since_confirmed(inputs.last_access_s, inputs, now_s)
    wall = np.maximum(now_s - start, 0.0) / SECONDS_PER_HOUR
    if policy.clock == "wall":
        return wall
    inter = _sessions(inputs) * policy.session_length_days * 24.0
    if policy.clock == "interactions":
        return inter
    return np.minimum(wall, inter)


def decayed_importance(inputs: DecayInputs, policy: DecayPolicy, now_s: Now) -> F64:
    """Monthly models only: importance after decay, before boost and clamping."""
    months = age_days(inputs, policy, now_s) / DAYS_PER_MONTH
    rate = np.where(inputs.short_term, policy.short_term_rate, policy.rate)
    if policy.model == "linear":
        factor = np.maximum(0.0, 1.0 - rate * months)
    else:
        factor = np.power(1.0 - rate, months)
    factor = np.where(inputs.pinned, 1.0, factor)
    return inputs.importance * factor


def access_boost(inputs: DecayInputs, policy: DecayPolicy) -> F64:
    return np.minimum(inputs.access_count * policy.boost, policy.boost_cap)


def strength(inputs: DecayInputs, policy: DecayPolicy, now_s: Now) -> F64:
    """The strength model: ``min(exp(-λh) + min(n·0.05, 0.3), 1) × min(b·1.5, 1)``;
    pinned memories have strength 1.0."""
    hours = age_hours_since_access(inputs, policy, now_s)
    lam = np.where(inputs.short_term, policy.short_term_lam, policy.lam)
    retention = np.exp(-lam * hours)
    bonus = np.minimum(inputs.access_count * policy.strength_boost, policy.strength_boost_cap)
    b = inputs.importance / 10.0
    s = np.minimum(retention + bonus, 1.0) * np.minimum(b * 1.5, 1.0)
    return np.where(inputs.pinned, 1.0, s)


def current_importance(inputs: DecayInputs, policy: DecayPolicy, now_s: Now) -> F64:
    """Current importance (floor..ceiling) of every memory at ``now_s``.

    exponential/linear: ``clamp(decayed + min(n·boost, cap), floor, ceiling)``.
    strength: ``clamp(10 × strength, floor, ceiling)``; a pinned memory keeps its base.
    """
    if policy.model == "strength":
        raw = np.where(inputs.pinned, inputs.importance, 10.0 * strength(inputs, policy, now_s))
    else:
        raw = decayed_importance(inputs, policy, now_s) + access_boost(inputs, policy)
    return np.clip(raw, policy.floor, policy.ceiling)


def cleanup_strength(inputs: DecayInputs, policy: DecayPolicy, now_s: Now) -> F64:
    """The 0-1 value cleanup compares with its threshold. Monthly models:
    ``min(decayed + boost, ceiling) / 10`` without the floor; strength: the strength."""
    if policy.model == "strength":
        return strength(inputs, policy, now_s)
    raw = decayed_importance(inputs, policy, now_s) + access_boost(inputs, policy)
    return np.minimum(raw, policy.ceiling) / 10.0


# --- one-memory helpers (dashboard, tests) ---------------------------------------------------


def current_importance_of(
    memory: Memory, policy: DecayPolicy, now: datetime, sessions_since_access: float = 0.0
) -> float:
    inputs = DecayInputs.from_memories([memory], [sessions_since_access], now)
    return float(current_importance(inputs, policy, now.timestamp())[0])


def curve(
    memory: Memory,
    policy: DecayPolicy,
    times: Sequence[datetime],
    access_times: Sequence[datetime] = (),
) -> F64:
    """Current importance of one memory at each of ``times`` (wall clock), counting only the
    accesses recorded and the confirmations taken effect up to each moment: the curve drawn by
    the dashboard's decay lab (it climbs back at each confirmation)."""
    t = np.array([x.timestamp() for x in times], dtype=np.float64)
    acc = np.sort(np.array([a.timestamp() for a in access_times], dtype=np.float64))
    n = len(t)
    counts = np.searchsorted(acc, t, side="right").astype(np.float64)
    created = memory.created_at.timestamp()
    last_idx = counts.astype(np.int64) - 1
    last = (
        np.where(last_idx >= 0, acc[np.maximum(last_idx, 0)], created)
        if acc.size
        else np.full(n, created)
    )
    inputs = DecayInputs(
        importance=np.full(n, memory.importance),
        created_s=np.full(n, created),
        last_access_s=last,
        access_count=counts,
        pinned=np.full(n, memory.pinned),
        short_term=np.full(n, memory.tier is Tier.SHORT_TERM),
        sessions_since_access=None,
        confirmed_s=_confirmed_at_each(memory, t),
    )
    # every point is evaluated at its own moment (now_s broadcasts elementwise)
    out = current_importance(inputs, _wall(policy), t)
    return np.where(t < created, np.nan, out)


def _confirmed_at_each(memory: Memory, t: F64) -> F64 | None:
    """The latest confirmation of ``memory`` at or before each moment of ``t`` (NaN: none)."""
    if not memory.confirmations:
        return None
    conf = np.array([c.at.timestamp() for c in memory.confirmations], dtype=np.float64)
    k = np.searchsorted(conf, t, side="right") - 1
    return np.where(k >= 0, conf[np.maximum(k, 0)], np.nan)


def _wall(policy: DecayPolicy) -> DecayPolicy:
    return policy if policy.clock == "wall" else replace(policy, clock="wall")
