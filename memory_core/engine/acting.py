"""The one guarded path for a person's changes: ``engine.acting_as(actor, role)``.

Every write the dashboard offers goes through an :class:`Acting` bound to the signed-in user
(or the name typed in a local dashboard) and their :class:`~memory_core.access.Role`. Each
method checks the role first -- a viewer gets :class:`PermissionDeniedError` and nothing is
written -- then calls the engine with the actor as ``by``, so the audit log names who acted.
The pages disable their write buttons for viewers as well; this check is what holds when a
disabled button is clicked by a crafted request, or a page forgets one.

Previews (a FHIR import's dry run) write nothing and are open to every role."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..access import Role
from ..errors import PermissionDeniedError
from ..values import AddResult, Memory, StaleFlag, Supersession, SupersessionState
from .core import SYSTEM

if TYPE_CHECKING:
    from ..ingest.fhir import FhirImportReport
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


class Acting:
    """A user's changes, role-checked. Create it with :meth:`MemoryEngine.acting_as`."""

    def __init__(self, engine: MemoryEngine, actor: str, role: Role | str) -> None:
        self._engine = engine
        self.actor = actor
        self.role = Role(role)

    @property
    def may_write(self) -> bool:
        return self.role is Role.REVIEWER

    def _require(self, action: str) -> None:
        if not self.may_write:
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
        automatic one undone, a pending one closed as "keep both"), audited under the actor.
        Returns the memory and its supersessions as they now stand."""
        self._require("add_memory")
        eng = self._engine
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
        return self._engine.confirm_supersession(supersession_id, self.actor, patient_id=patient_id)

    def reject_supersession(
        self, supersession_id: str, *, patient_id: str | None = None
    ) -> Supersession:
        self._require("reject_supersession")
        return self._engine.reject_supersession(supersession_id, self.actor, patient_id=patient_id)

    def undo_supersession(
        self, supersession_id: str, *, patient_id: str | None = None
    ) -> Supersession:
        self._require("undo_supersession")
        return self._engine.undo_supersession(supersession_id, self.actor, patient_id=patient_id)

    def scan_contradictions(self, patient_id: str) -> list[Supersession]:
        self._require("scan_contradictions")
        return self._engine.scan_contradictions(patient_id, by=self.actor)

    def keep_flagged(
        self, memory_id: str, change_id: str, *, patient_id: str | None = None
    ) -> StaleFlag:
        self._require("keep_flagged")
        return self._engine.keep_flagged(memory_id, change_id, self.actor, patient_id=patient_id)

    def confirm_flagged(
        self, memory_id: str, change_id: str, *, patient_id: str | None = None
    ) -> Memory:
        self._require("confirm_flagged")
        return self._engine.confirm_flagged(memory_id, change_id, self.actor, patient_id=patient_id)

    # --- policy, ingest, demo ------------------------------------------------------------------
    def save_policy(self, policy: EnginePolicy) -> None:
        self._require("save_policy")
        self._engine.save_policy(policy, self.actor)

    def accept_proposals(self, patient_id: str, proposals: Sequence[Any]) -> list[AddResult]:
        self._require("accept_proposals")
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
        by = self.actor if not dry_run else (self.actor or SYSTEM)  # a preview records nothing
        return self._engine.import_fhir(
            bundle, patient_id=patient_id, fhir_patient=fhir_patient, by=by, dry_run=dry_run
        )

    def seed_demo(self, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Load the synthetic demo patients (the dashboard's empty state)."""
        self._require("seed_demo")
        from ..seed import seed_demo  # the demo is not part of the engine's import

        return seed_demo(self._engine, progress=progress)
