"""The engine's shared state, which every part of the engine takes as its first argument: the
store, the embedder, the adjudicator, the clock, the policy and the snapshot cache."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from .. import validation as v
from ..contradictions import Adjudicator, RuleAdjudicator, deciding
from ..embedding.base import Embedder
from ..errors import NotFoundError, ValidationError
from ..policy import DecayPolicy, EnginePolicy
from ..store.base import ChangeSet, MemoryStore
from ..values import Memory, Supersession
from .snapshot import Snapshots

SYSTEM = "system"
AGENT = "agent"
Progress = Callable[[int, int], None]


def new_id(prefix: str) -> str:
    """``prefix_`` and a random UUID in hex."""
    return f"{prefix}_{uuid.uuid4().hex}"


@dataclass
class Core:
    store: MemoryStore
    embedder: Embedder
    adjudicator: Adjudicator
    clock: Callable[[], datetime]
    encoding: str
    role: str
    _policy: EnginePolicy
    snapshots: Snapshots
    _pool: ThreadPoolExecutor | None = field(default=None, repr=False)
    _pool_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: seconds between two looks at the store's policy version (another process may save one)
    policy_check_s: float = 1.0
    _policy_version: int = field(default=0, repr=False)
    _policy_checked: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        self._policy_version = self.store.policy_version()
        self._policy_checked = time.monotonic()

    @property
    def policy(self) -> EnginePolicy:
        """The engine's policy; when the store's policy version has moved since it was loaded
        (another engine or process saved one), the saved policy is loaded again. The version is
        looked at most every :attr:`policy_check_s` seconds (one small read, no policy body)."""
        t = time.monotonic()
        if t - self._policy_checked >= self.policy_check_s:
            self._policy_checked = t
            version = self.store.policy_version()
            if version != self._policy_version:
                saved = self.store.load_policy()
                self._policy_version = version
                if saved:
                    self._policy = EnginePolicy.from_dict(saved)
        return self._policy

    @policy.setter
    def policy(self, policy: EnginePolicy) -> None:
        self._policy = policy

    def now(self, now: datetime | None) -> datetime:
        """The moment a read looks at: the clock, or any given moment (as-of views)."""
        return self.clock() if now is None else v.now_value(now)

    def action_time(self, now: datetime | None) -> datetime:
        """The moment an action records (an archive, a review, an undo, a purge, a cleanup, an
        add): the engine's clock, or a given ``now`` no later than the clock allows
        (:data:`validation.CLOCK_SKEW` after it) -- later is a ValidationError naming ``now``.
        The store refuses a moment before its last write of a record the action changes
        (:mod:`memory_core.store.audit`), so no action can be dated before the state it
        changes."""
        clock = self.clock()
        return clock if now is None else v.timestamp(now, "now", clock)

    def memory_of(self, memory_id: Any, patient_id: Any = None) -> Memory:
        """The stored memory ``memory_id`` (checked as an id); with ``patient_id``, only if it
        is that patient's (NotFoundError otherwise: nothing of another patient is touched)."""
        mid = v.record_id(memory_id, "memory_id")
        return _of_patient("memory", mid, patient_id, self.store.get_memory)

    def supersession_of(self, supersession_id: Any, patient_id: Any = None) -> Supersession:
        """As :meth:`memory_of`, for a supersession."""
        sid = v.record_id(supersession_id, "supersession_id")
        return _of_patient("supersession", sid, patient_id, self.store.get_supersession)

    def apply(self, changes: ChangeSet, actor: str) -> None:
        """Write through the store as ``actor`` at the engine's clock (the store derives and
        writes the audit rows); the snapshot cache follows (see :meth:`Snapshots.apply`)."""
        changes.actor = actor
        changes.at = self.clock()
        self.snapshots.apply(changes)

    def workers(self) -> ThreadPoolExecutor:
        """A helper thread that takes half of a large cosine scan (numpy releases the GIL)."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="memory-core")
            return self._pool

    @property
    def contradiction_threshold(self) -> float:
        t = self.policy.contradiction.threshold
        return self.embedder.default_contradiction_threshold if t is None else t

    def threshold_for(self, memory_type: str) -> float:
        """The cosine at or above which two memories of this type are a candidate pair."""
        c = self.policy.contradiction
        if memory_type in c.type_thresholds:
            return c.type_thresholds[memory_type]
        if c.threshold is None and memory_type in self.embedder.default_type_thresholds:
            return self.embedder.default_type_thresholds[memory_type]
        return self.contradiction_threshold


def check_options(
    policy: Any, adjudicator: Any, clock: Any, cache_bytes: Any, encoding: Any = None
) -> None:
    """The engine's options, checked before anything touches a store (ValidationError naming
    the option): a policy of the wrong kind would otherwise be accepted and fail on first use."""
    if policy is not None and not isinstance(policy, EnginePolicy | DecayPolicy):
        raise ValidationError(
            "policy",
            f"must be an EnginePolicy, a DecayPolicy or None, got {type(policy).__name__}",
        )
    if adjudicator is not None and not any(
        callable(getattr(adjudicator, name, None)) for name in ("decide", "adjudicate")
    ):
        raise ValidationError("adjudicator", "must have decide(older, newer, similarity)")
    if not callable(clock):
        raise ValidationError("clock", f"must be callable, got {type(clock).__name__}")
    if isinstance(cache_bytes, bool) or not isinstance(cache_bytes, int) or cache_bytes < 0:
        raise ValidationError("cache_bytes", f"must be a non-negative integer, got {cache_bytes!r}")
    if encoding is not None and not isinstance(encoding, str):
        raise ValidationError("encoding", f"must be a tokenizer name, got {encoding!r}")


def open_core(
    store: MemoryStore,
    embedder: Embedder,
    policy: EnginePolicy | DecayPolicy | None,
    adjudicator: Adjudicator | None,
    clock: Callable[[], datetime],
    encoding: str,
    role: str,
    cache_bytes: int,
) -> Core:
    """The engine's state over ``store``: the store is bound to the embedder's model and
    dimensions; a bare :class:`DecayPolicy` becomes an engine policy with it as its decay part;
    no policy means the store's saved one (else the defaults); no adjudicator means the
    :class:`RuleAdjudicator`. ``cache_bytes`` bounds the snapshot and usage caches."""
    check_options(policy, adjudicator, clock, cache_bytes, encoding)
    if not isinstance(store, MemoryStore):
        raise ValidationError("store", f"must be a MemoryStore, got {type(store).__name__}")
    if not isinstance(embedder, Embedder):
        raise ValidationError("embedder", f"must be an Embedder, got {type(embedder).__name__}")
    store.bind_embedding_model(embedder.model_id, embedder.dimensions)
    if isinstance(policy, DecayPolicy):
        policy = EnginePolicy(decay=policy)
    if policy is None:
        saved = store.load_policy()
        policy = EnginePolicy.from_dict(saved) if saved else EnginePolicy()
    adjudicator = deciding(adjudicator) if adjudicator is not None else RuleAdjudicator()
    snaps = Snapshots(store, embedder.dimensions, cache_bytes)
    return Core(store, embedder, adjudicator, clock, encoding, role, policy, snaps)


def save_policy(core: Core, policy: EnginePolicy, by: str) -> None:
    """Make ``policy`` the engine's policy and store it (audited, before and after)."""
    by = v.actor(by)
    if not isinstance(policy, EnginePolicy):
        raise ValidationError("policy", f"must be an EnginePolicy, got {type(policy).__name__}")
    core.apply(ChangeSet(policy=policy.to_dict()), by)
    core.policy = policy
    core._policy_version = core.store.policy_version()  # our own save: nothing to reload


_Record = TypeVar("_Record", Memory, Supersession)


def _of_patient(
    what: str, record_id: str, patient_id: Any, get: Callable[[str], _Record]
) -> _Record:
    """The stored record ``record_id`` read by ``get``; with ``patient_id`` (checked first), only
    if it is that patient's (NotFoundError otherwise)."""
    pid = None if patient_id is None else v.patient_id(patient_id)
    got = get(record_id)
    if pid is not None and got.patient_id != pid:
        raise NotFoundError(what, record_id, pid)
    return got
