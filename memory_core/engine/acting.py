"""The one guarded path for a person's changes: ``engine.acting_as(actor, role)``.

Every write the dashboard offers goes through an :class:`Acting` bound to the signed-in user
(or the name typed in a local dashboard) and their :class:`~memory_core.access.Role`. Each
method checks the role first -- a viewer gets :class:`PermissionDeniedError` and nothing is
written -- then calls the engine with the actor as ``by``, so the audit log names who acted.
The pages disable their write buttons for viewers as well; this check is what holds when a
disabled button is clicked by a crafted request, or a page forgets one.

Previews (a FHIR import's dry run) write nothing and are open to every role.

An agent principal (:data:`~memory_core.access.Role.AGENT`, ``agent:<name>``: the MCP server
and the HTTP API of :mod:`memory_core.server`) goes through the same path: it may be given a
patient's context or search results (recorded in the injection ledger under its name) and
add memories (audited under its name, its supersessions decided as anyone's, the review-gated
ones pending for a reviewer), and read proposals, reviews and histories; every other write is
refused. With ``patients`` (a :class:`~memory_core.access.PatientScope`) a call about any other
patient is refused with :class:`~memory_core.errors.OutOfScopeError` before anything is read,
written or recorded."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..access import PatientScope, Role, permits
from ..errors import PermissionDeniedError
from ..store.base import AuditQuery
from ..values import (
    AddResult,
    AuditEntry,
    ContextResult,
    Memory,
    ScoredMemory,
    StaleFlag,
    Supersession,
    SupersessionState,
)
from .core import SYSTEM

if TYPE_CHECKING:
    from ..ingest.fhir import FhirImportReport
    from ..ingest.proposals import Proposals
    from ..policy import EnginePolicy
    from .facade import MemoryEngine

#: The writes an :class:`Acting` offers, each refused for a viewer (the dashboard test walks
#: every page's write widgets against this list).
WRITES: tuple[str, ...] = (
    "pin",
    "unpin",
    "set_importance",
    "archive",
    "restore",
    "add_memory",
    "confirm_supersession",
    "reject_supersession",
    "undo_supersession",
    "scan_contradictions",
    "keep_flagged",
    "confirm_flagged",
    "save_policy",
    "accept_proposals",
    "import_fhir",
    "seed_demo",
)

#: What an agent principal is given and may read (the operations of memory_core.server): the
#: first two are recorded in the injection ledger under its name (refused to a viewer), the
#: others only read. All are held to the principal's patients.
AGENT_CALLS: tuple[str, ...] = ("get_context", "search", "propose", "reviews", "get", "history")


class History(NamedTuple):
    """A memory's history: the memory, every supersession it is the older or newer side of
    (oldest first), the memories on their other side, and its audit rows (newest first)."""

    memory: Memory
    supersessions: tuple[Supersession, ...]
    others: dict[str, Memory]
    audit: tuple[AuditEntry, ...]


class Acting:
    """A user's (or an agent's) changes, role-checked and held to ``patients`` when given.
    Create it with :meth:`MemoryEngine.acting_as`."""

    def __init__(
        self,
        engine: MemoryEngine,
        actor: str,
        role: Role | str,
        *,
        patients: Iterable[str] | None = None,
    ) -> None:
        self._engine = engine
        self.actor = actor
        self.role = Role(role)
        self.scope = PatientScope.of(patients)

    @property
    def may_write(self) -> bool:
        return self.role is Role.REVIEWER

    def _require(self, action: str) -> None:
        if not permits(self.role, action):
            raise PermissionDeniedError(action, self.actor, self.role.value)

    def _patient(self, patient_id: object) -> None:
        """OutOfScopeError for a patient outside the scope (an id-based call under a limited
        scope must name its patient)."""
        self.scope.check(patient_id, self.actor)

    def _scoped(self, patient_id: str | None) -> None:
        if patient_id is not None or self.scope.limited:
            self._patient(patient_id)

    def _unscoped(self, action: str) -> None:
        """A store-wide change (the policy, the demo) is refused to a principal held to some
        patients."""
        if self.scope.limited:
            raise PermissionDeniedError(action, self.actor, self.role.value)

    # --- one memory --------------------------------------------------------------------------
    # Each id-based change takes ``patient_id``: the patient the page shows. When given, an id
    # of another patient's record is NotFoundError and nothing is written (the pages always
    # pass it).
    def pin(
        self,
        memory_id: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        self._require("pin")
        self._scoped(patient_id)
        return self._engine.pin(
            memory_id, self.actor, expected_version=expected_version, patient_id=patient_id
        )

    def unpin(
        self,
        memory_id: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        self._require("unpin")
        self._scoped(patient_id)
        return self._engine.unpin(
            memory_id, self.actor, expected_version=expected_version, patient_id=patient_id
        )

    def set_importance(
        self,
        memory_id: str,
        importance: float,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        self._require("set_importance")
        self._scoped(patient_id)
        return self._engine.set_importance(
            memory_id,
            importance,
            self.actor,
            expected_version=expected_version,
            patient_id=patient_id,
        )

    def archive(
        self,
        memory_id: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        self._require("archive")
        self._scoped(patient_id)
        return self._engine.archive(
            memory_id, self.actor, expected_version=expected_version, patient_id=patient_id
        )

    def restore(
        self,
        memory_id: str,
        *,
        expected_version: int | None = None,
        patient_id: str | None = None,
    ) -> Memory:
        self._require("restore")
        self._scoped(patient_id)
        return self._engine.restore(
            memory_id, self.actor, expected_version=expected_version, patient_id=patient_id
        )

    def add_memory(
        self,
        patient_id: str,
        content: str,
        memory_type: str,
        *,
        importance: float | None = None,
        source: str | None = None,
        keep: Collection[str] = (),
        now: datetime | None = None,
    ) -> AddResult:
        """Add a memory; ``keep`` names older memories the reviewer chose to keep beside it
        when the save would replace several: each such supersession is taken back at once (an
        automatic one undone, a pending one closed as "keep both"), audited under the actor
        (a reviewer's decision: refused to an agent). ``source`` defaults to the actor for an
        agent (the memory names who wrote it). Returns the memory and its supersessions as
        they now stand."""
        self._require("add_memory")
        self._patient(patient_id)
        if keep:  # taking a supersession back is a reviewer's decision
            self._require("reject_supersession")
        eng = self._engine
        if source is None and self.role is Role.AGENT:
            source = self.actor
        res = eng.add_memory(
            patient_id,
            content,
            memory_type,
            importance=importance,
            source=source,
            by=self.actor,
            now=now,
        )
        if not keep or not res.supersessions:
            return res
        out: list[Supersession] = []
        for sup in res.supersessions:
            if sup.old_id in keep and sup.state is SupersessionState.AUTO:
                sup = eng.undo_supersession(sup.id, self.actor, now=now, patient_id=patient_id)
            elif sup.old_id in keep and sup.state is SupersessionState.PENDING:
                sup = eng.reject_supersession(sup.id, self.actor, now=now, patient_id=patient_id)
            out.append(sup)
        return AddResult(
            memory=eng.get(res.memory.id, patient_id=patient_id), supersessions=tuple(out)
        )

    # --- reviews and flags -------------------------------------------------------------------
    def confirm_supersession(
        self, supersession_id: str, *, patient_id: str | None = None
    ) -> Supersession:
        self._require("confirm_supersession")
        self._scoped(patient_id)
        return self._engine.confirm_supersession(supersession_id, self.actor, patient_id=patient_id)

    def reject_supersession(
        self, supersession_id: str, *, patient_id: str | None = None
    ) -> Supersession:
        self._require("reject_supersession")
        self._scoped(patient_id)
        return self._engine.reject_supersession(supersession_id, self.actor, patient_id=patient_id)

    def undo_supersession(
        self, supersession_id: str, *, patient_id: str | None = None
    ) -> Supersession:
        self._require("undo_supersession")
        self._scoped(patient_id)
        return self._engine.undo_supersession(supersession_id, self.actor, patient_id=patient_id)

    def scan_contradictions(self, patient_id: str) -> list[Supersession]:
        self._require("scan_contradictions")
        self._patient(patient_id)
        return self._engine.scan_contradictions(patient_id, by=self.actor)

    def keep_flagged(
        self, memory_id: str, change_id: str, *, patient_id: str | None = None
    ) -> StaleFlag:
        self._require("keep_flagged")
        self._scoped(patient_id)
        return self._engine.keep_flagged(memory_id, change_id, self.actor, patient_id=patient_id)

    def confirm_flagged(
        self, memory_id: str, change_id: str, *, patient_id: str | None = None
    ) -> Memory:
        self._require("confirm_flagged")
        self._scoped(patient_id)
        return self._engine.confirm_flagged(memory_id, change_id, self.actor, patient_id=patient_id)

    # --- policy, ingest, demo ------------------------------------------------------------------
    def save_policy(self, policy: EnginePolicy) -> None:
        self._require("save_policy")
        self._unscoped("save_policy")
        self._engine.save_policy(policy, self.actor)

    def accept_proposals(self, patient_id: str, proposals: Sequence[Any]) -> list[AddResult]:
        self._require("accept_proposals")
        self._patient(patient_id)
        return self._engine.accept_proposals(patient_id, proposals, by=self.actor)

    def import_fhir(
        self,
        bundle: Mapping[str, Any] | str | Path,
        *,
        patient_id: str | None = None,
        fhir_patient: str | None = None,
        dry_run: bool = True,
    ) -> FhirImportReport:
        """A dry run (the preview) is open to every role; writing needs a reviewer."""
        if not dry_run:
            self._require("import_fhir")
        self._scoped(patient_id)
        by = self.actor if not dry_run else (self.actor or SYSTEM)  # a preview records nothing
        return self._engine.import_fhir(
            bundle, patient_id=patient_id, fhir_patient=fhir_patient, by=by, dry_run=dry_run
        )

    def seed_demo(self, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Load the synthetic demo patients (the dashboard's empty state)."""
        self._require("seed_demo")
        self._unscoped("seed_demo")
        from ..seed import seed_demo  # the demo is not part of the engine's import

        return seed_demo(self._engine, progress=progress)

    # --- what an agent is given and may read (scope-checked; the first two recorded) ----------
    def get_context(
        self,
        patient_id: str,
        question: str,
        *,
        max_memories: int = 5,
        max_tokens: int | None = None,
    ) -> ContextResult:
        """The patient's context section for ``question``, given to the actor: its accesses and
        an injection record naming it are written (what the agent was told)."""
        self._require("get_context")
        self._patient(patient_id)
        return self._engine.build_context(
            patient_id,
            question,
            max_memories=max_memories,
            max_tokens=max_tokens,
            record_access=True,
            agent=self.actor,
        )

    def search(self, patient_id: str, query: str, *, k: int = 5) -> list[ScoredMemory]:
        """The ``k`` best active memories for ``query``, given to the actor (recorded as the
        context is, the injection's text the memories' lines)."""
        self._require("search")
        self._patient(patient_id)
        return self._engine.retrieve(patient_id, query, k=k, record_access=True, agent=self.actor)

    def propose(self, patient_id: str, transcript: str) -> Proposals:
        """Proposals from a transcript, each with what it would replace (nothing written)."""
        self._patient(patient_id)
        return self._engine.extract_memories(patient_id, transcript)

    def reviews(self, patient_id: str | None = None) -> list[Supersession]:
        """What waits for a reviewer: the pending supersessions of ``patient_id``, or of every
        patient the scope allows. Reading only: deciding them stays a reviewer's."""
        if patient_id is not None:
            self._patient(patient_id)
        pending = self._engine.supersessions(patient_id, state=SupersessionState.PENDING.value)
        return [s for s in pending if self.scope.allows(s.patient_id)]

    def get(self, memory_id: str, patient_id: str) -> Memory:
        """A memory of the patient (NotFoundError for an id of another patient's)."""
        self._patient(patient_id)
        return self._engine.get(memory_id, patient_id=patient_id)

    def history(self, patient_id: str, memory_id: str, *, limit: int = 200) -> History:
        """What replaced what, when, by whom and why, for one memory of the patient."""
        self._patient(patient_id)
        eng = self._engine
        memory = eng.get(memory_id, patient_id=patient_id)
        sups = tuple(s for s in eng.supersessions(patient_id) if memory.id in (s.old_id, s.new_id))
        ids = sorted({i for s in sups for i in (s.old_id, s.new_id)} - {memory.id})
        others = {m.id: m for m in eng.store.get_memories(ids) if m.patient_id == patient_id}
        rows = eng.store.list_audit(AuditQuery(patient_id=patient_id, entity_id=memory.id))
        by_sup = [
            e
            for sid in (s.id for s in sups)
            for e in eng.store.list_audit(AuditQuery(patient_id=patient_id, entity_id=sid))
        ]
        audit = sorted([*rows, *by_sup], key=lambda e: (e.at, e.seq), reverse=True)[:limit]
        return History(memory, sups, others, tuple(audit))
