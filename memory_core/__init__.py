"""memory_core: clinical agent memory with temporal decay.

Public API (stable): :func:`open_engine` and :class:`MemoryEngine`; values in
:mod:`memory_core.values`; policies in :mod:`memory_core.policy`; errors in
:mod:`memory_core.errors`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from .access import AccessRule, Role
from .contradictions import Adjudicator
from .embedding import Embedder, make_embedder
from .engine import MemoryEngine, PatientView, PolicyDelta
from .engine.acting import Acting
from .engine.snapshot import DEFAULT_CACHE_BYTES
from .errors import (
    ConfigurationError,
    ConflictError,
    EmbeddingMismatchError,
    MemoryCoreError,
    NotAStoreError,
    NotFoundError,
    OutOfScopeError,
    PatientMismatchError,
    PermissionDeniedError,
    StaleSnapshotError,
    StateError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreNotFoundError,
    StoreProblem,
    StoreReadOnlyError,
    ValidationError,
)
from .ingest import FhirImportReport, LLMExtractor, Proposal, RuleExtractor
from .policy import (
    ContextPolicy,
    ContradictionPolicy,
    DecayPolicy,
    EnginePolicy,
    RankingPolicy,
)
from .store import MemoryStore, open_store
from .validation import utc_now
from .values import (
    AddResult,
    AuditEntry,
    CleanupResult,
    Confirmation,
    ConfirmationKind,
    ContextItem,
    ContextResult,
    InjectionRecord,
    Memory,
    MemoryType,
    ScoredMemory,
    StaleFlag,
    Status,
    Supersession,
    SupersessionState,
    Tier,
)

__all__ = [
    "AccessRule",
    "Acting",
    "AddResult",
    "Adjudicator",
    "AuditEntry",
    "CleanupResult",
    "ConfigurationError",
    "Confirmation",
    "ConfirmationKind",
    "ConflictError",
    "ContextItem",
    "ContextPolicy",
    "ContextResult",
    "ContradictionPolicy",
    "DecayPolicy",
    "Embedder",
    "EmbeddingMismatchError",
    "EnginePolicy",
    "FhirImportReport",
    "InjectionRecord",
    "LLMExtractor",
    "Memory",
    "MemoryCoreError",
    "MemoryEngine",
    "MemoryStore",
    "MemoryType",
    "NotAStoreError",
    "NotFoundError",
    "OutOfScopeError",
    "PatientMismatchError",
    "PatientView",
    "PermissionDeniedError",
    "PolicyDelta",
    "Proposal",
    "RankingPolicy",
    "Role",
    "RuleExtractor",
    "ScoredMemory",
    "StaleFlag",
    "StaleSnapshotError",
    "StateError",
    "Status",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "StoreNotFoundError",
    "StoreProblem",
    "StoreReadOnlyError",
    "Supersession",
    "SupersessionState",
    "Tier",
    "ValidationError",
    "open_engine",
]


def open_engine(
    store: str | MemoryStore | None = None,
    embedder: str | Embedder = "minilm",
    policy: EnginePolicy | DecayPolicy | None = None,
    *,
    adjudicator: Adjudicator | None = None,
    clock: Callable[[], datetime] = utc_now,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
    create: bool = True,
) -> MemoryEngine:
    """Open an engine: ``store="sqlite:///path.db" | "sqlite:///:memory:"`` (default: the
    repository's ``data/memory.db`` or ``MEMORY_CORE_STORE``), ``embedder="minilm" | "hashing"
    | "openai:<model>"``, ``policy`` (default: the store's saved policy, else the defaults),
    ``cache_bytes`` (the bound of the per-patient caches; default 512 MiB), ``create`` (False:
    open an existing store only, else :class:`StoreNotFoundError` -- a read creates nothing).
    Every argument is checked before the store is opened, so a bad one creates no store
    file."""
    from .engine.core import check_options

    emb = make_embedder(embedder)
    check_options(policy, adjudicator, clock, cache_bytes)
    return MemoryEngine(
        open_store(store, create=create),
        emb,
        policy,
        adjudicator=adjudicator,
        clock=clock,
        cache_bytes=cache_bytes,
    )
