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
from typing import Any

from .. import validation as v
from ..contradictions import Adjudicator, RuleAdjudicator, deciding
from ..embedding.base import Embedder
from ..policy import DecayPolicy, EnginePolicy
from ..store.base import ChangeSet, MemoryStore
from ..values import AuditAction, AuditEntry
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
        return self.clock() if now is None else v.now_value(now)

    def apply(self, changes: ChangeSet) -> None:
        """Write through the store; the snapshot cache follows (see :meth:`Snapshots.apply`)."""
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

    def audit(
        self,
        actor: str,
        action: AuditAction,
        entity: str,
        entity_id: str,
        patient_id: str | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
    ) -> AuditEntry:
        """One audit entry, stamped with the engine's clock."""
        return AuditEntry(self.clock(), actor, action, entity, entity_id, patient_id, before, after)


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
    before, after = core.policy.to_dict(), policy.to_dict()
    entry = core.audit(by, AuditAction.POLICY_CHANGE, "policy", "engine", None, before, after)
    core.apply(ChangeSet(policy=after, audit=[entry]))
    core.policy = policy
    core._policy_version = core.store.policy_version()  # our own save: nothing to reload
