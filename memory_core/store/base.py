"""The store interface every backend implements (SQLite here; Cosmos DB behind the same ABC).

The engine computes *what* changes (a :class:`ChangeSet`); the store applies it atomically.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError
from ..values import AuditAction, AuditEntry, InjectionRecord, Memory, Supersession, Tier
from .codec import from_seconds

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Usage:
    ids: list[str]
    access_count: F64
    last_accessed_s: F64
    sessions_s: F64  # ascending


class MemoryUpdate(NamedTuple):
    """A memory as the engine wants it stored, and the version it was computed from."""

    memory: Memory
    expected_version: int


class MemoryDelete(NamedTuple):
    """An archived memory to purge, at the version the purge was planned on."""

    memory: Memory
    expected_version: int


class SupersessionUpdate(NamedTuple):
    supersession: Supersession
    expected_version: int


class Access(NamedTuple):
    memory_id: str
    patient_id: str
    at: datetime


class SessionMark(NamedTuple):
    patient_id: str
    at: datetime


class FlagKeep(NamedTuple):
    """A reviewer keeps a memory flagged "possibly stale" by the supersession ``change_id``:
    the flag is cleared from the change set's moment on (audited as ``keep_flagged``)."""

    memory_id: str
    patient_id: str
    change_id: str


class AccessCount(NamedTuple):
    """What :meth:`MemoryStore.record_access` reports per memory: the counts after the
    increment, and the tier then (what the promotion rule needs)."""

    memory_id: str
    access_count: int
    tier: Tier


@dataclass
class ChangeSet:
    """Everything one logical operation writes; applied all-or-nothing, audited by the store.

    ``update_memories`` / ``update_supersessions`` carry the version the change was computed
    from: if the stored record has moved on, the whole set is refused with ConflictError.
    The entries are named tuples, so plain ``(memory, version)`` tuples read the same; stores
    unpack them by position.

    The audit is not the caller's to write: the store derives one row per change from the
    change itself and the stored records (:mod:`memory_core.store.audit`) -- the action, the
    before- and after-state -- stamped with ``actor`` (who acts: required, checked like every
    actor) and ``at`` (the acting engine's clock; default the store's clock), which the store
    refuses after its own clock or before its last write of a record the set changes.
    ``actions`` names, per updated record id, which of the actions that fit its change it was
    (an archive by a reviewer, by cleanup or by confirming a stale flag); ``notes`` adds
    context to a record's after-state. ``audit`` is refused when not empty.
    """

    insert_memories: list[Memory] = field(default_factory=list)
    update_memories: list[MemoryUpdate] = field(default_factory=list)
    # only archived memories, only through MemoryEngine.purge (explicit, audited)
    delete_memories: list[MemoryDelete] = field(default_factory=list)
    insert_supersessions: list[Supersession] = field(default_factory=list)
    update_supersessions: list[SupersessionUpdate] = field(default_factory=list)
    #: ``Access`` entries or plain ``(memory id, patient id, at)`` tuples (a bulk add writes
    #: plain ones: tens of thousands of them, which the garbage collector stops tracking); only
    #: of memories the set inserts (an agent's accesses go through ``record_access``)
    accesses: list[tuple[str, str, datetime]] = field(default_factory=list)
    sessions: list[SessionMark] = field(default_factory=list)
    flag_keeps: list[FlagKeep] = field(default_factory=list)
    policy: dict[str, Any] | None = None
    #: patient -> the content version the change was computed from (e.g. the snapshot that
    #: supersession detection compared against): refused with StaleSnapshotError if moved
    expected_patient_versions: dict[str, int] = field(default_factory=dict)
    actor: str | None = None
    at: datetime | None = None
    actions: dict[str, str] = field(default_factory=dict)
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: refused when not empty: the store writes the audit (kept so that an old caller gets a
    #: ValidationError naming it, not a TypeError)
    audit: list[AuditEntry] = field(default_factory=list)

    def patients(self) -> set[str]:
        out = {m.patient_id for m in self.insert_memories}
        out |= {m.patient_id for m, _ in self.update_memories}
        out |= {m.patient_id for m, _ in self.delete_memories}
        out |= {s.patient_id for s in self.insert_supersessions}
        out |= {s.patient_id for s, _ in self.update_supersessions}
        out |= {p for _, p, _ in self.accesses}
        out |= {p for p, _ in self.sessions}
        return out

    def mutated_ids(self) -> set[str]:
        """The ids of the memories and supersessions this set inserts, updates or deletes."""
        out = {m.id for m in self.insert_memories}
        out |= {m.id for m, _ in self.update_memories}
        out |= {m.id for m, _ in self.delete_memories}
        out |= {s.id for s in self.insert_supersessions}
        out |= {s.id for s, _ in self.update_supersessions}
        return out

    def is_empty(self) -> bool:
        """Nothing to write (then nothing is audited either)."""
        return not (
            self.insert_memories
            or self.update_memories
            or self.delete_memories
            or self.insert_supersessions
            or self.update_supersessions
            or self.accesses
            or self.sessions
            or self.flag_keeps
            or self.policy is not None
            or self.audit
        )


#: the most audit rows one query returns
MAX_AUDIT_LIMIT = 1_000_000


@dataclass(frozen=True)
class AuditQuery:
    """Filters of :meth:`MemoryStore.list_audit` (each None: any), newest first, at most
    ``limit`` rows (1 to :data:`MAX_AUDIT_LIMIT`). Checked when made: a bad filter is a
    ValidationError naming it."""

    patient_id: str | None = None
    actor: str | None = None
    action: str | None = None
    entity_id: str | None = None
    limit: int = 500

    def __post_init__(self) -> None:
        for name in ("patient_id", "actor", "action", "entity_id"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValidationError(name, f"must be a string or None, got {value!r}")
            if isinstance(value, str):
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise ValidationError(name, "contains a lone surrogate") from exc
        if self.action is not None and self.action not in set(AuditAction):
            raise ValidationError(
                "action",
                f"unknown audit action {self.action!r}; one of "
                f"{', '.join(a.value for a in AuditAction)}",
            )
        limit = self.limit
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int | np.integer)
            or not 1 <= limit <= MAX_AUDIT_LIMIT
        ):
            raise ValidationError(
                "limit", f"must be an integer from 1 to {MAX_AUDIT_LIMIT:,}, got {limit!r}"
            )
        object.__setattr__(self, "limit", int(limit))


class MemoryStore(ABC):
    """Persistence of memories, supersessions, accesses, sessions, injections, audit, policy."""

    url: str

    # --- embedding model binding -----------------------------------------------------------
    @abstractmethod
    def bind_embedding_model(self, model_id: str, dimensions: int) -> None:
        """Record the store's embedding model on first use; refuse another one later
        (EmbeddingMismatchError)."""

    @abstractmethod
    def embedding_model(self) -> tuple[str, int] | None: ...

    # --- reads -----------------------------------------------------------------------------
    @abstractmethod
    def get_memory(self, memory_id: str) -> Memory:
        """The memory, or NotFoundError."""

    @abstractmethod
    def get_memories(self, memory_ids: Sequence[str]) -> list[Memory]: ...

    @abstractmethod
    def list_memories(self, patient_id: str) -> list[Memory]:
        """Every memory of the patient (all statuses), oldest first."""

    @abstractmethod
    def list_patients(self) -> list[str]: ...

    def patient_version(self, patient_id: str) -> int:
        """A number that changes whenever the patient's memories or supersessions change
        (not on mere accesses): the content version of :meth:`versions`."""
        return self.versions(patient_id)[0]

    @abstractmethod
    def versions(self, patient_id: str) -> tuple[int, int]:
        """``(content version, usage version)``; the usage version changes on every access
        or session."""

    @abstractmethod
    def usage(self, patient_id: str) -> Usage:
        """Access counts and last-access moments of the patient's memories, and the patient's
        session moments (epoch seconds)."""

    @abstractmethod
    def access_events(self, patient_id: str) -> dict[str, F64]:
        """Every recorded access moment per memory id (epoch seconds, ascending)."""

    @abstractmethod
    def get_supersession(self, supersession_id: str) -> Supersession: ...

    @abstractmethod
    def list_supersessions(
        self, patient_id: str | None = None, state: str | None = None
    ) -> list[Supersession]: ...

    def access_times(self, patient_id: str) -> dict[str, list[datetime]]:
        """Recorded access moments per memory id, oldest first (:meth:`access_events` as
        datetimes)."""
        return {k: [from_seconds(t) for t in v] for k, v in self.access_events(patient_id).items()}

    def session_times(self, patient_id: str) -> list[datetime]:
        """The patient's session moments, oldest first (from :meth:`usage`)."""
        return [from_seconds(t) for t in self.usage(patient_id).sessions_s]

    @abstractmethod
    def list_injections(self, patient_id: str, limit: int = 100) -> list[InjectionRecord]: ...

    @abstractmethod
    def list_audit(self, query: AuditQuery) -> list[AuditEntry]: ...

    @abstractmethod
    def load_policy(self) -> dict[str, Any] | None: ...

    @abstractmethod
    def count_memories(self) -> int: ...

    @abstractmethod
    def policy_version(self) -> int:
        """A number that grows whenever a policy is saved (0: none saved yet). One small read
        (no policy body): the engine polls it to follow policies other processes save."""

    @abstractmethod
    def purged_ids(self, memory_ids: Sequence[str]) -> set[str]:
        """Those of ``memory_ids`` that belonged to purged memories (tombstones: an id is never
        reused; an insert naming one is refused with ValidationError on ``id``)."""

    # --- writes (each call is atomic) --------------------------------------------------------
    @abstractmethod
    def apply(self, changes: ChangeSet) -> None:
        """Apply everything or nothing, with the audit rows derived from the change
        (:func:`memory_core.store.audit.derive`): ConflictError on a stale version,
        StaleSnapshotError when a patient's content version is not
        ``expected_patient_versions``; ValidationError for a change that is not one truthful
        action (see :mod:`memory_core.store.audit`), a moment outside the store's bounds or an
        insert of a purged id. A purge (``delete_memories``) leaves a tombstone for each id."""

    @abstractmethod
    def record_access(
        self,
        patient_id: str,
        memory_ids: Sequence[str],
        at: datetime,
        injection: InjectionRecord | None = None,
    ) -> list[AccessCount]:
        """access_count + 1 and last_accessed = max(stored, at) for each id (never losing a
        concurrent increment; NotFoundError for an id that is not the patient's), one access
        event each, one session for the patient and the injection record if given; the usage
        version moves, the content version does not. Returns each memory's count and tier
        after its increment, in ``memory_ids`` order (the engine decides promotion from them:
        :mod:`memory_core.promotion`)."""

    @abstractmethod
    def promote(
        self, patient_id: str, memory_ids: Sequence[str], actor: str, at: datetime
    ) -> list[str]:
        """For each memory of the patient: set its tier to long-term and bump its version,
        only if it is still short-term, and audit it (``promote`` by ``actor`` at ``at``, the
        tier before and after; ``at`` after the store's clock is refused). Of concurrent
        callers exactly one flips a memory and audits it. The content version moves when
        anything was promoted. Returns the ids promoted here."""

    @abstractmethod
    def last_written(
        self, patient_id: str, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], datetime]:
        """The latest audited moment of each ``(entity, id)`` of the patient ("memory" or
        "supersession"), for those that have one: what bounds an action's moment from below."""

    # --- optional server-side vector search -------------------------------------------------
    def vector_candidates(
        self, patient_id: str, query: F32, k: int
    ) -> list[tuple[str, float]] | None:
        """The ``k`` stored-status-active memories of the patient nearest to ``query`` as
        ``(memory id, cosine similarity)``, most similar first, computed by the store; ``None``
        when the store does not search vectors itself (the engine then scores client-side)."""
        return None

    def write_lock(self) -> AbstractContextManager[None]:
        """Hold off every other writer of the store while the block runs: an add that lost its
        race to other writers several times detects and writes inside it, and lands (under 4
        writer processes three starved for 60 s behind a fourth whose snapshot was always
        current). Each ``apply`` inside stays atomic on its own and stays applied whatever the
        block does after it; the same thread may nest it. A store without such a lock holds
        nothing (Cosmos DB: optimistic concurrency only, each write checked by its etags)."""
        return nullcontext()

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
