"""The store interface every backend implements (SQLite here; Cosmos DB behind the same ABC).

The engine computes *what* changes (a :class:`ChangeSet`); the store applies it atomically.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..values import AuditEntry, InjectionRecord, Memory, Supersession

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Usage:
    ids: list[str]
    access_count: F64
    last_accessed_s: F64
    sessions_s: F64  # ascending


@dataclass
class ChangeSet:
    """Everything one logical operation writes; applied all-or-nothing.

    ``update_memories`` / ``update_supersessions`` carry the version the change was computed
    from: if the stored record has moved on, the whole set is refused with ConflictError.
    """

    insert_memories: list[Memory] = field(default_factory=list)
    update_memories: list[tuple[Memory, int]] = field(default_factory=list)
    # only archived memories, only through MemoryEngine.purge (explicit, audited)
    delete_memories: list[tuple[Memory, int]] = field(default_factory=list)
    insert_supersessions: list[Supersession] = field(default_factory=list)
    update_supersessions: list[tuple[Supersession, int]] = field(default_factory=list)
    accesses: list[tuple[str, str, datetime]] = field(default_factory=list)  # (mem, patient, at)
    sessions: list[tuple[str, datetime]] = field(default_factory=list)  # (patient, at)
    audit: list[AuditEntry] = field(default_factory=list)
    policy: dict[str, Any] | None = None

    def patients(self) -> set[str]:
        out = {m.patient_id for m in self.insert_memories}
        out |= {m.patient_id for m, _ in self.update_memories}
        out |= {m.patient_id for m, _ in self.delete_memories}
        out |= {s.patient_id for s in self.insert_supersessions}
        out |= {s.patient_id for s, _ in self.update_supersessions}
        out |= {p for _, p, _ in self.accesses}
        out |= {p for p, _ in self.sessions}
        return out


@dataclass(frozen=True)
class AuditQuery:
    patient_id: str | None = None
    actor: str | None = None
    action: str | None = None
    entity_id: str | None = None
    limit: int = 500


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

    @abstractmethod
    def patient_version(self, patient_id: str) -> int:
        """A number that changes whenever the patient's memories or supersessions change
        (not on mere accesses): the cache key of the engine's snapshot."""

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

    @abstractmethod
    def access_times(self, patient_id: str) -> dict[str, list[datetime]]:
        """Recorded access moments per memory id, oldest first."""

    @abstractmethod
    def session_times(self, patient_id: str) -> list[datetime]: ...

    @abstractmethod
    def list_injections(self, patient_id: str, limit: int = 100) -> list[InjectionRecord]: ...

    @abstractmethod
    def list_audit(self, query: AuditQuery) -> list[AuditEntry]: ...

    @abstractmethod
    def load_policy(self) -> dict[str, Any] | None: ...

    @abstractmethod
    def count_memories(self) -> int: ...

    # --- writes (each call is atomic) --------------------------------------------------------
    @abstractmethod
    def apply(self, changes: ChangeSet) -> None:
        """Apply everything or nothing (ConflictError on a stale version)."""

    @abstractmethod
    def record_access(
        self,
        patient_id: str,
        memory_ids: Sequence[str],
        at: datetime,
        promote_after: int,
        injection: InjectionRecord | None,
        actor: str,
    ) -> list[str]:
        """Atomically: access_count + 1 and last_accessed = at for each id (never losing a
        concurrent increment), one session for the patient, the injection record if given, and
        promotion of short-term memories that reach ``promote_after`` accesses. Returns the ids
        promoted to long-term."""

    # --- optional server-side vector search -------------------------------------------------
    def vector_candidates(
        self, patient_id: str, query: F32, k: int
    ) -> list[tuple[str, float]] | None:
        """The ``k`` stored-status-active memories of the patient nearest to ``query`` as
        ``(memory id, cosine similarity)``, most similar first, computed by the store; ``None``
        when the store does not search vectors itself (the engine then scores client-side)."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
