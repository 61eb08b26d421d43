"""The engine's public face, a table of contents: each method delegates to the module that
owns its job -- :mod:`.snapshot` (the per-patient cache), :mod:`.asof` (state at a
moment), :mod:`.retrieval`, :mod:`.ingest`, :mod:`.supersession` and :mod:`.lifecycle`.

Every public method that depends on time takes ``now`` (default: the engine's clock). Queries
with ``now`` in the past are *as of* that moment: memories created later are invisible,
supersessions not yet in effect are not applied, and accesses recorded later are not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import context as ctx
from .. import validation as v
from ..access import Role
from ..contradictions import Adjudicator
from ..embedding.base import Embedder
from ..facts import ClinicalFacts
from ..ingest import service as ingest_service
from ..ingest.fhir import FhirImportReport
from ..ingest.fhir_bulk import BulkImportReport
from ..ingest.proposals import Proposals
from ..ingest.service import Extractor
from ..policy import DecayPolicy, EnginePolicy
from ..store.base import AuditQuery, MemoryStore
from ..tokens import DEFAULT_ENCODING
from ..values import (
    AddResult,
    AuditEntry,
    CleanupResult,
    ContextResult,
    InjectionRecord,
    Memory,
    ScoredMemory,
    StaleFlag,
    Supersession,
)
from ..worklist import WorkList
from . import (
    asof,
    confirmation,
    core,
    flagging,
    ingest,
    lifecycle,
    reads,
    retrieval,
    section,
    supersession,
)
from . import worklist as worklist_reads
from .acting import Acting
from .asof import PatientView, PolicyDelta
from .core import AGENT, SYSTEM, Progress
from .retrieval import SCAN_SPLIT_ROWS
from .snapshot import DEFAULT_CACHE_BYTES, F32

__all__ = ["AGENT", "SCAN_SPLIT_ROWS", "SYSTEM", "MemoryEngine", "PatientView", "PolicyDelta"]


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
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        """``cache_bytes`` bounds the per-patient snapshot and usage caches (LRU, estimated)."""
        args = (policy, adjudicator, clock, encoding, role, cache_bytes)
        self._core = core.open_core(store, embedder, *args)

    # --- state and policy ------------------------------------------------------------------------
    @property
    def store(self) -> MemoryStore:
        return self._core.store

    @property
    def embedder(self) -> Embedder:
        return self._core.embedder

    @property
    def adjudicator(self) -> Adjudicator:
        return self._core.adjudicator

    @property
    def clock(self) -> Callable[[], datetime]:
        return self._core.clock

    @property
    def encoding(self) -> str:
        return self._core.encoding

    @property
    def role(self) -> str:
        return self._core.role

    @property
    def policy(self) -> EnginePolicy:
        return self._core.policy

    @property
    def contradiction_threshold(self) -> float:
        return self._core.contradiction_threshold

    def threshold_for(self, memory_type: str) -> float:
        """The cosine at or above which two memories of this type are a candidate pair."""
        return self._core.threshold_for(memory_type)

    def save_policy(self, policy: EnginePolicy, by: str) -> None:
        """Make ``policy`` the engine's policy and store it (audited, before and after)."""
        core.save_policy(self._core, policy, by)

    def acting_as(
        self, actor: str, role: Role | str, *, patients: Iterable[str] | None = None
    ) -> Acting:
        """The one guarded path for a person's (or an agent's) changes: each write checks
        ``role`` (a viewer is refused with ``PermissionDeniedError``) and is audited under
        ``actor``; with ``patients``, a call about any other patient is ``OutOfScopeError``."""
        return Acting(self, actor, role, patients=patients)

    # --- reading the store -----------------------------------------------------------------------
    def get(self, memory_id: str, *, patient_id: str | None = None) -> Memory:
        """The memory (NotFoundError when there is none -- or, with ``patient_id``, when it is
        not that patient's)."""
        return self._core.memory_of(memory_id, patient_id)

    def list_patients(self) -> list[str]:
        return self.store.list_patients()

    def list_memories(self, patient_id: str, include_inactive: bool = True) -> list[Memory]:
        return reads.list_memories(self._core, patient_id, include_inactive)

    def supersessions(
        self, patient_id: str | None = None, state: str | None = None
    ) -> list[Supersession]:
        return reads.supersessions(self._core, patient_id, state)

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

    # --- as-of views -----------------------------------------------------------------------------
    def view(
        self, patient_id: str, *, now: datetime | None = None, policy: DecayPolicy | None = None
    ) -> PatientView:
        """The patient's memories as of ``now`` with importance and strength under ``policy``."""
        return asof.view(self._core, patient_id, now, policy)

    def compare_policies(
        self,
        patient_id: str,
        saved: DecayPolicy,
        tuned: DecayPolicy,
        *,
        now: datetime | None = None,
        top_n: int = 5,
    ) -> list[PolicyDelta]:
        """How a tuned decay policy changes the patient's active memories against the saved."""
        return asof.compare_policies(self._core, patient_id, saved, tuned, now, top_n)

    # --- retrieval and the context section -------------------------------------------------------
    def keyword_search(
        self, patient_id: str, query: str, *, limit: int = 50, now: datetime | None = None
    ) -> list[tuple[Memory, float]]:
        """The keyword half of retrieval on its own: active memories by BM25 for ``query``."""
        return retrieval.keyword_search(self._core, patient_id, query, limit, now)

    def retrieve(
        self,
        patient_id: str,
        query: str,
        *,
        k: int = 5,
        now: datetime | None = None,
        record_access: bool = True,
        query_vector: F32 | None = None,
        agent: str | None = None,
    ) -> list[ScoredMemory]:
        """The ``k`` best active memories for ``query`` (``record_access``: an agent's use;
        ``agent``: the agent principal given them, recorded in the injection ledger)."""
        args = (patient_id, query, k, now, record_access, query_vector, agent)
        return retrieval.retrieve(self._core, *args)

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
        agent: str | None = None,
    ) -> ContextResult:
        """The exact "Patient Context from Previous Interactions" section, every candidate
        explained; ``record_access`` (an agent call) records the accesses and the injection
        (naming ``agent``, the agent principal told, when given)."""
        args = (now, max_memories, max_tokens, record_access, query_vector, policy, agent)
        return section.build_context(self._core, patient_id, query, *args)

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
        args = (patient_id, session_context, query, now, max_memories, max_tokens, record_access)
        return section.build_system_prompt(self._core, *args)

    # --- possibly-stale flags --------------------------------------------------------------------
    def stale_flags(self, patient_id: str, *, now: datetime | None = None) -> list[StaleFlag]:
        """Active memories naming a drug or condition whose memory was superseded, at ``now``."""
        return flagging.stale_flags(self._core, patient_id, now)

    def keep_flagged(
        self, memory_id: str, change_id: str, by: str, *, patient_id: str | None = None
    ) -> StaleFlag:
        """A reviewer keeps the flagged memory as it is: the flag is cleared (audited)."""
        return flagging.keep_flagged(self._core, memory_id, change_id, by, patient_id)

    def confirm_flagged(
        self,
        memory_id: str,
        change_id: str,
        by: str,
        *,
        now: datetime | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        """A reviewer confirms the flagged memory is outdated: it is archived (audited;
        undone with :meth:`restore`)."""
        return flagging.confirm_flagged(self._core, memory_id, change_id, by, now, patient_id)

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
        facts: Mapping[str, Any] | ClinicalFacts | None = None,
        confirmed_at: datetime | str | None = None,
        by: str = SYSTEM,
        now: datetime | None = None,
    ) -> AddResult:
        """Add one memory; returns it and the supersessions it triggered. ``facts``: a coded
        record's codes and status (else the facts are read from ``content``);
        ``confirmed_at``: when its system of record last asserted the fact (its age counts
        from then; not before ``created_at``, not in the future)."""
        record = {
            "patient_id": patient_id,
            "content": content,
            "memory_type": memory_type,
            "importance": importance,
            "created_at": created_at,
            "pinned": pinned,
            "tier": tier,
            "source": source,
            "facts": facts,
            "confirmed_at": confirmed_at,
        }
        return ingest.add_memories(self._core, [record], by, now)[0]

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
        dry_run: bool = False,
    ) -> list[AddResult]:
        """Add many memories: all validated first (a bad one named by index and field, nothing
        written), then embedded, checked for supersession (against the store and each other,
        oldest first) and written in one transaction, or per ``batch_size`` records with
        ``on_batch(index, first, end)`` after each commit. A record: the add_memory fields and
        optional ``id``, ``access_times`` and pre-computed ``embedding`` (mapping or object).
        ``dry_run``: the same work and results, nothing written (a preview of the write)."""
        args = (by, now, progress, detect, batch_size, on_batch, dry_run)
        return ingest.add_memories(self._core, records, *args)

    def confirm_memories(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        by: str = SYSTEM,
        now: datetime | None = None,
    ) -> list[Memory]:
        """Stored memories whose system of record asserts their facts again (a re-import that
        finds the resource still active): each item ``{"memory_id", "confirmed_at" (default
        now), "source" (default the memory's)}``; each memory's age counts from its latest
        confirmation. All checked first, one transaction, audited (``confirm_memory``)."""
        return confirmation.confirm_memories(self._core, items, by, now)

    # --- supersessions ---------------------------------------------------------------------------
    def preview_supersessions(
        self,
        patient_id: str,
        content: str,
        memory_type: str,
        *,
        created_at: datetime | None = None,
        now: datetime | None = None,
        facts: Mapping[str, Any] | ClinicalFacts | None = None,
    ) -> list[supersession.Preview]:
        """Which active memories a new one would supersede: ``Preview(memory, similarity,
        mode ("auto": at once, "review": after review), verdict, rule, evidence)``, by the
        same decision as saving (candidates, exempt types, the decision table)."""
        return supersession.preview(
            self._core, patient_id, content, memory_type, created_at, now, facts
        )

    def confirm_supersession(
        self,
        supersession_id: str,
        reviewer: str,
        *,
        now: datetime | None = None,
        patient_id: str | None = None,
    ) -> Supersession:
        """A reviewer confirms a pending supersession: the older memory is demoted now."""
        return supersession.confirm(self._core, supersession_id, reviewer, now, patient_id)

    def reject_supersession(
        self,
        supersession_id: str,
        reviewer: str,
        *,
        now: datetime | None = None,
        patient_id: str | None = None,
    ) -> Supersession:
        """A reviewer says both memories stand: the pending supersession is closed."""
        return supersession.reject(self._core, supersession_id, reviewer, now, patient_id)

    def undo_supersession(
        self,
        supersession_id: str,
        reviewer: str,
        *,
        now: datetime | None = None,
        patient_id: str | None = None,
    ) -> Supersession:
        """Undo a decision: an automatic or confirmed supersession (the older memory is active
        again) or a rejected one (its review is reopened)."""
        return supersession.undo(self._core, supersession_id, reviewer, now, patient_id)

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
        return supersession.scan_contradictions(self._core, patient_id, by, now, progress)

    def similarity_values(self, patient_id: str, *, now: datetime | None = None) -> dict[str, F32]:
        """Per type, the cosines of the active same-type pairs (the threshold histogram)."""
        return supersession.similarity_values(self._core, patient_id, now)

    def similarity_pairs(
        self, patient_id: str, *, now: datetime | None = None, min_similarity: float = -1.0
    ) -> list[tuple[Memory, Memory, float]]:
        """The active same-type pairs at or above ``min_similarity``, most similar first."""
        return supersession.similarity_pairs(self._core, patient_id, now, min_similarity)

    # --- reviewer actions on memories ------------------------------------------------------------
    # Each takes ``patient_id``: when given, an id of another patient's record is NotFoundError
    # and nothing is written (the dashboard and the CLI always pass the patient they show).
    def pin(
        self,
        memory_id: str,
        by: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        return lifecycle.set_pinned(self._core, memory_id, True, by, expected_version, patient_id)

    def unpin(
        self,
        memory_id: str,
        by: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        return lifecycle.set_pinned(self._core, memory_id, False, by, expected_version, patient_id)

    def set_importance(
        self,
        memory_id: str,
        importance: float,
        by: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        return lifecycle.set_importance(
            self._core, memory_id, importance, by, expected_version, patient_id
        )

    def archive(
        self,
        memory_id: str,
        by: str,
        *,
        now: datetime | None = None,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        return lifecycle.archive(self._core, memory_id, by, now, expected_version, patient_id)

    def restore(
        self,
        memory_id: str,
        by: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        return lifecycle.restore(self._core, memory_id, by, expected_version, patient_id)

    # --- cleanup, purge and imported sessions ----------------------------------------------------
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
        (default: the policy's). Pinned memories and review-gated types are never archived.
        Written in batches of whole patients; a patient another writer kept changing through
        every retry is left as it was and named in ``CleanupResult.skipped``."""
        return lifecycle.cleanup(self._core, now, threshold, dry_run, patient_id, by)

    def purge(
        self,
        *,
        older_than_days: float,
        now: datetime | None = None,
        dry_run: bool = True,
        patient_id: str | None = None,
        by: str = SYSTEM,
    ) -> list[Memory]:
        """The only deletion: memories archived over ``older_than_days`` (dry run by default)."""
        return lifecycle.purge(self._core, older_than_days, now, dry_run, patient_id, by)

    def record_sessions(self, patient_id: str, times: Sequence[datetime], by: str = SYSTEM) -> None:
        """Import past session moments of a patient (the interactions clock counts them)."""
        lifecycle.record_sessions(self._core, patient_id, times, by)

    # --- ingest: transcripts and FHIR, proposed then saved (memory_core.ingest) ------------------
    def extract_memories(
        self,
        patient_id: str,
        transcript: str,
        *,
        now: datetime | None = None,
        extractor: Extractor | None = None,
        name: str | None = None,
    ) -> Proposals:
        """Proposals from a session transcript, each with what it would supersede (no write)."""
        return ingest_service.extract_memories(
            self, patient_id, transcript, now=now, extractor=extractor, name=name
        )

    def accept_proposals(
        self, patient_id: str, proposals: Sequence[Any], *, by: str, now: datetime | None = None
    ) -> list[AddResult]:
        """Write accepted proposals in one ``add_memories`` call (one transaction, audited)."""
        return ingest_service.accept_proposals(self, patient_id, proposals, by=by, now=now)

    def import_fhir(
        self,
        bundle: Mapping[str, Any] | str | Path,
        *,
        patient_id: str | None = None,
        fhir_patient: str | None = None,
        by: str,
        dry_run: bool = True,
        now: datetime | None = None,
    ) -> FhirImportReport:
        """A FHIR R4 Bundle as memories of one patient; a dry run unless ``dry_run=False``.
        ``fhir_patient`` names the bundle's Patient to take when it holds several."""
        return ingest_service.import_fhir(
            self,
            bundle,
            patient_id=patient_id,
            fhir_patient=fhir_patient,
            by=by,
            dry_run=dry_run,
            now=now,
        )

    def import_fhir_bulk(
        self,
        paths: Iterable[str | Path],
        *,
        by: str,
        dry_run: bool = True,
        now: datetime | None = None,
        report_path: str | Path | None = None,
        progress: Progress | None = None,
    ) -> BulkImportReport:
        """The NDJSON files of a FHIR Bulk Data export, one patient (one transaction) at a
        time; a dry run unless ``dry_run=False``; resumable through ``report_path``."""
        return ingest_service.import_fhir_bulk(
            self,
            paths,
            by=by,
            dry_run=dry_run,
            now=now,
            report_path=report_path,
            progress=progress,
        )

    # --- the reviewer's worklist across patients (issue 16) ---------------------------------------
    def worklist(
        self,
        *,
        now: datetime | None = None,
        limit: int = 200,
        cleanup_patients: int = 20,
        flag_patients: int = 200,
    ) -> WorkList:
        """What waits for a reviewer across all patients, most urgent first. Reads only.
        ``cleanup_patients`` / ``flag_patients``: for how many patients the cleanup count and
        the possibly-out-of-date flags are worked out (0: none, a quick first view)."""
        args = (now, limit, cleanup_patients, flag_patients)
        return worklist_reads.worklist(self._core, *args)
