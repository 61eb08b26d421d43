"""Value types of the engine: one frozen dataclass per record, no I/O."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from .facts.model import ClinicalFacts

Vector = npt.NDArray[np.float32]


class Status(enum.StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


class MemoryType(enum.StrEnum):
    """The memory types: one closed list (an unknown type is refused, naming these;
    :func:`memory_core.validation.memory_type`). The clinical ones, then the general
    assistant's; base importance by type: :mod:`memory_core.importance`."""

    ALLERGY = "allergy"
    ADVERSE_REACTION = "adverse_reaction"
    MEDICATION = "medication"
    CONDITION = "condition"
    TREATMENT_RESPONSE = "treatment_response"
    CARE_PLAN = "care_plan"
    LAB_RESULT = "lab_result"
    VITAL_SIGN = "vital_sign"
    PREFERENCE = "preference"
    SOCIAL = "social"
    OBSERVATION = "observation"
    IMMUNIZATION = "immunization"
    PROCEDURE = "procedure"
    INTERMEDIATE_STEP = "intermediate_step"
    USER_PREFERENCE = "user_preference"
    EXPLICIT_INSTRUCTION = "explicit_instruction"
    TASK_RESULT = "task_result"


class Tier(enum.StrEnum):
    SHORT_TERM = "short_term"
    LONG_TERM = "long_term"


class SupersessionState(enum.StrEnum):
    PENDING = "pending"  # waiting for a reviewer; nothing demoted yet
    AUTO = "auto"  # applied automatically at the newer memory's created_at
    CONFIRMED = "confirmed"  # applied when a reviewer confirmed it
    REJECTED = "rejected"  # a reviewer said both memories stand
    UNDONE = "undone"  # was in effect, then a reviewer undid it


IN_EFFECT = frozenset({SupersessionState.AUTO, SupersessionState.CONFIRMED})


class AuditAction(enum.StrEnum):
    """Every action written to the audit log: the engine writes them, both stores store them,
    the Settings page filters by them. A new kind of mutation gets a member here first."""

    ADD = "add"
    PIN = "pin"
    UNPIN = "unpin"
    EDIT_IMPORTANCE = "edit_importance"
    ARCHIVE = "archive"
    RESTORE = "restore"
    CLEANUP_ARCHIVE = "cleanup_archive"
    PURGE = "purge"
    PROMOTE = "promote"
    DETECT_SUPERSESSION = "detect_supersession"
    SUPERSEDE = "supersede"
    UNSUPERSEDE = "unsupersede"
    CONFIRM_SUPERSESSION = "confirm_supersession"
    REJECT_SUPERSESSION = "reject_supersession"
    UNDO_SUPERSESSION = "undo_supersession"
    POLICY_CHANGE = "policy_change"
    IMPORT_SESSIONS = "import_sessions"
    KEEP_FLAGGED = "keep_flagged"  # a reviewer kept a possibly-stale memory (flag cleared)
    CONFIRM_FLAGGED = "confirm_flagged"  # a reviewer confirmed it stale: archived (undoable)
    CONFIRM_MEMORY = "confirm_memory"  # the memory's fact was confirmed (its age restarts)


class ConfirmationKind(enum.StrEnum):
    """What confirmed a memory's fact (domain.md, "Age counts from the last confirmation")."""

    RESTATED = "restated"  # a newer memory was decided a duplicate (restatement) of it
    REVIEW_KEPT = "review_kept"  # a reviewer rejected a supersession of it: it stands
    FLAG_KEPT = "flag_kept"  # a reviewer kept it when it was flagged possibly stale
    RECORD = "record"  # its system of record asserted it at a date (an import's confirmed_at)


@dataclass(frozen=True, slots=True)
class Confirmation:
    """One confirmation of a memory's fact: at ``at`` (the time it took effect in the patient's
    record), of ``kind``, by ``ref`` -- the newer memory that restated it, the supersession a
    reviewer rejected, the change whose flag a reviewer cleared, or the record's source."""

    at: datetime
    kind: ConfirmationKind
    ref: str

    def to_public_dict(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "kind": self.kind.value, "ref": self.ref}


@dataclass(frozen=True, slots=True)
class Memory:
    """One short statement about one patient, kept between sessions."""

    id: str
    patient_id: str
    memory_type: str
    content: str
    importance: float  # base importance 1-10; never overwritten by decay
    created_at: datetime
    last_accessed: datetime
    embedding: Vector = field(repr=False, compare=False)
    embedding_model: str
    access_count: int = 0
    pinned: bool = False
    tier: Tier = Tier.LONG_TERM
    status: Status = Status.ACTIVE
    superseded_by: str | None = None
    archived_at: datetime | None = None
    source: str | None = None
    version: int = 1  # optimistic-concurrency counter, bumped by every update
    # what the statement is about, read once when it was written (memory_core.facts); None
    # only on a memory built by hand before it is stored
    facts: ClinicalFacts | None = field(default=None, compare=False, repr=False)
    # every confirmation of its fact, oldest first (:meth:`with_confirmation`); the age of the
    # monthly decay models counts from the latest one at or before the moment asked about
    confirmations: tuple[Confirmation, ...] = ()

    @property
    def confirmed_at(self) -> datetime | None:
        """The moment of the latest confirmation (None: never confirmed)."""
        return self.confirmations[-1].at if self.confirmations else None

    def confirmation_at(self, at: datetime | None = None) -> Confirmation | None:
        """The latest confirmation in effect at ``at`` (taken effect at or before it; ``None``:
        the latest of all) -- as of a moment before a confirmation, it does not count."""
        if at is None:
            return self.confirmations[-1] if self.confirmations else None
        for c in reversed(self.confirmations):
            if c.at <= at:
                return c
        return None

    def age_start(self, at: datetime) -> datetime:
        """Where the memory's age counts from at ``at``: its creation, or its last
        confirmation by then when that is later (domain.md)."""
        c = self.confirmation_at(at)
        return self.created_at if c is None or c.at < self.created_at else c.at

    def with_confirmation(self, confirmation: Confirmation) -> Memory:
        """This memory with one more confirmation, kept in time order (an identical one --
        same moment, kind and reference -- is not added twice)."""
        if confirmation in self.confirmations:
            return self
        ordered = sorted((*self.confirmations, confirmation), key=lambda c: c.at)
        return replace(self, confirmations=tuple(ordered))

    def to_public_dict(self, include_embedding: bool = False) -> dict[str, Any]:
        """JSON-friendly dict (ISO timestamps); used by export, audit and the dashboard. The
        facts are derived from the content (and a coded record's codes): not part of it."""
        out: dict[str, Any] = {
            "id": self.id,
            "patient_id": self.patient_id,
            "memory_type": self.memory_type,
            "content": self.content,
            "importance": self.importance,
            "created_at": self.created_at.isoformat(),
            "last_accessed": self.last_accessed.isoformat(),
            "access_count": self.access_count,
            "pinned": self.pinned,
            "tier": self.tier.value,
            "status": self.status.value,
            "superseded_by": self.superseded_by,
            "archived_at": self.archived_at.isoformat() if self.archived_at else None,
            "source": self.source,
            "embedding_model": self.embedding_model,
            "version": self.version,
            "confirmed_at": None if self.confirmed_at is None else self.confirmed_at.isoformat(),
            "confirmations": [c.to_public_dict() for c in self.confirmations],
        }
        if include_embedding:
            out["embedding"] = [float(x) for x in self.embedding]
        return out


@dataclass(frozen=True)
class Supersession:
    """The record that ``new_id`` replaces ``old_id``."""

    id: str
    patient_id: str
    old_id: str
    new_id: str
    similarity: float
    method: str  # "rules" (the decision table; "llm:<model>" on records of older versions)
    verdict: str  # contradicts | updates | duplicate
    state: SupersessionState
    detected_at: datetime
    effective_at: datetime | None = None  # when it took effect (auto: newer created_at)
    ended_at: datetime | None = None  # when it was undone (or its review reopened)
    decided_by: str | None = None
    decided_at: datetime | None = None
    version: int = 1
    # the decision table's rule that took it (memory_core.facts.rules, e.g. "drug.stop") and
    # its evidence in plain words ("same drug metformin: 500 mg, twice daily → stopped");
    # empty on records made before rules were recorded
    rule: str = ""
    evidence: str = ""

    def in_effect(self, at: datetime) -> bool:
        """True when this supersession demotes the older memory at moment ``at``."""
        if self.effective_at is None or self.effective_at > at:
            return False
        if self.state in IN_EFFECT:
            return True
        # an undone supersession was in effect between effective_at and ended_at; so was a
        # review-gated one whose undo reopened the review (pending again, or since rejected)
        return self.ended_at is not None and at < self.ended_at

    def pending_at(self, at: datetime, raised: datetime) -> bool:
        """True when this supersession waits for a reviewer at moment ``at``. ``raised`` is
        the newer memory's ``created_at``: a review is pending from then in the patient's record
        (domain.md), whenever it was detected -- a review raised on back-filled history is
        pending as of that history. It waits until a reviewer decides it (confirmed: until
        it took effect; rejected: until ``decided_at``) and again after its undo reopened it;
        an automatic one never waits."""
        if at < raised or self.in_effect(at):
            return False
        state = self.state
        if state in (SupersessionState.PENDING, SupersessionState.CONFIRMED):
            return True
        if state is SupersessionState.REJECTED:
            return self.decided_at is not None and at < self.decided_at
        if state is SupersessionState.UNDONE:  # a confirmed one, undone: it waited until then
            return self.effective_at is not None and at < self.effective_at
        return False  # automatic: in effect from ``raised`` on

    def to_public_dict(self) -> dict[str, Any]:
        def iso(d: datetime | None) -> str | None:
            return d.isoformat() if d else None

        return {
            "id": self.id,
            "patient_id": self.patient_id,
            "old_id": self.old_id,
            "new_id": self.new_id,
            "similarity": self.similarity,
            "method": self.method,
            "verdict": self.verdict,
            "state": self.state.value,
            "detected_at": iso(self.detected_at),
            "effective_at": iso(self.effective_at),
            "ended_at": iso(self.ended_at),
            "decided_by": self.decided_by,
            "decided_at": iso(self.decided_at),
            "version": self.version,
            "rule": self.rule,
            "evidence": self.evidence,
        }


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One append-only audit row: who did what to which record, before and after."""

    at: datetime
    actor: str
    action: str
    entity: str  # "memory" | "supersession" | "policy" | "store"
    entity_id: str
    patient_id: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    seq: int | None = None  # assigned by the store


@dataclass(frozen=True)
class InjectionRecord:
    """What an agent was told: one per agent-side build_context call (and per search an agent
    principal makes through the server, :mod:`memory_core.server`)."""

    id: str
    at: datetime
    patient_id: str
    query: str
    items: tuple[tuple[str, float], ...]  # (memory id, score) in injected order
    tokens: int
    text: str
    #: the agent principal's name (``memory_core.access.agent_principal``) when a named agent
    #: was told; None on records of in-process calls and of versions before issue 33
    agent: str | None = None


@dataclass(frozen=True)
class ScoredMemory:
    """A retrieval candidate with every number that explains its rank."""

    memory: Memory
    similarity: float  # cosine of query and memory embeddings
    current_importance: float  # 1-10 under the policy at `now`
    score: float  # the number the ranking sorts by
    keyword_rank: int | None = None  # rank in the BM25 keyword list (1 = best), None if no match
    vector_rank: int | None = None
    fused: float = 0.0  # RRF of the two ranks (picks the pool in similarity and weighted modes)
    bm25: float = 0.0  # the keyword half's BM25 score (0 without a keyword match)
    relevance: float = 0.0  # cosine and BM25 evidence combined, in [0, 1] (issue 12)
    # the keyword matches made through the clinical vocabulary ("kidney function → egfr"),
    # beside the query's own words (memory_core.vocabulary)
    keyword_via: tuple[str, ...] = ()
    # the question's own words the memory holds, by word form ("live → lives": the question's
    # word, then the memory's where the two differ only in form; memory_core.question)
    keyword_words: tuple[str, ...] = ()
    # the clinical keys the memory shares with the question ("loinc:4548-4": a question about
    # blood sugar control names HbA1c through its body system; memory_core.question)
    keys: tuple[str, ...] = ()
    # a safety-critical type: an allergy, or (in a context section) an adverse reaction naming a
    # drug the query or an active medication names; never "current importance >= 8"
    safety: bool = False


@dataclass(frozen=True, slots=True)
class StaleFlag:
    """A "possibly stale" flag: ``memory_id`` (active, not a medication/condition itself) names
    ``subject`` -- a drug, or a condition -- whose ``kind`` memory ``changed_id`` was
    superseded by ``new_id`` (supersession ``change_id``), in effect ``since``. Derived from the
    memories and supersessions in effect at a moment, so undoing the change clears it."""

    memory_id: str
    patient_id: str
    change_id: str
    changed_id: str
    new_id: str
    subject: str
    kind: str  # "medication" | "condition"
    since: datetime

    @property
    def annotation(self) -> str:
        return f"(may be outdated: {self.subject} changed on {self.since.date().isoformat()})"

    def to_public_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "patient_id": self.patient_id,
            "change_id": self.change_id,
            "changed_id": self.changed_id,
            "new_id": self.new_id,
            "subject": self.subject,
            "kind": self.kind,
            "since": self.since.isoformat(),
        }


@dataclass(frozen=True)
class ContextItem:
    """One candidate of build_context: included or not, and why."""

    scored: ScoredMemory
    included: bool
    position: int | None  # 1-based line number in the section, None when excluded
    line: str  # the exact line (without numbering) as it would be injected
    tokens: int
    rule: str  # why it was included or excluded, in plain words
    annotations: tuple[str, ...] = ()  # "(pending review: ...)" etc., on the memory's own line
    reported: bool = False  # safety-critical and left out by the token budget: surface it
    # "" when the memory has a line of its own; else the kind of line it shares with others
    # (memory_core.context.LineKind: "list", "history", "pair", "allergies")
    part_of: str = ""


@dataclass(frozen=True)
class ContextResult:
    """The injected section (``text``, its exact token count under ``encoding``) and every
    candidate explained (``items``: built on first access from ``explain``)."""

    text: str
    tokens: int
    encoding: str
    injection_id: str | None = None
    explain: Callable[[], tuple[ContextItem, ...]] = field(default=tuple, repr=False, compare=False)
    places: int = 0  # lines that used one of the max_memories places (allergies use none)
    #: the safety-critical candidates left out, explained without explaining every candidate
    #: (None: read from ``items``)
    omit: Callable[[], tuple[ContextItem, ...]] | None = field(
        default=None, repr=False, compare=False
    )

    @cached_property
    def items(self) -> tuple[ContextItem, ...]:
        return self.explain()

    @property
    def included(self) -> tuple[ContextItem, ...]:
        return tuple(i for i in self.items if i.included)

    @property
    def safety_omitted(self) -> tuple[ContextItem, ...]:
        """Safety-critical candidates (allergies first) that the token budget or the places
        left out of the section: callers must surface these, never drop them silently."""
        if self.omit is None:
            return tuple(i for i in self.items if i.reported)
        return self.omit()


@dataclass(frozen=True, slots=True)
class AddResult:
    memory: Memory
    supersessions: tuple[Supersession, ...]


@dataclass(frozen=True)
class CleanupResult:
    archived: tuple[Memory, ...]  # the memories archived (or that would be, on a dry run)
    strengths: dict[str, float]
    dry_run: bool
    threshold: float
    #: patients left as they were: another writer kept changing their memories through every
    #: attempt (a whole-store cleanup archives patient by patient; run it again for these)
    skipped: tuple[str, ...] = ()
