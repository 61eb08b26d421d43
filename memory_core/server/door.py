"""The operations an agent reaches through the MCP server and the HTTP API, on the one guarded
path (``engine.acting_as(agent:<name>, Role.AGENT, patients=...)``), with their results as
plain JSON and the engine's typed errors as JSON with an HTTP status.

Both servers call the same :class:`Door` methods, so an answer over MCP and over HTTP is the
same document. Every call names its patient; the patients a call may reach are the server's
(``--patient``) narrowed by the request's grant (a bearer token's launch context over HTTP):
anything else is :class:`~memory_core.errors.OutOfScopeError` (403), refused before anything
is read, written or recorded. What an agent is given (a context section, search results) is
recorded in the injection ledger under its name; what it writes is audited under its name."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from .. import validation as v
from ..access import PatientScope, Role, agent_principal
from ..engine import MemoryEngine
from ..engine.acting import Acting
from ..errors import (
    ConflictError,
    MemoryCoreError,
    NotFoundError,
    PermissionDeniedError,
    StateError,
    StoreBusyError,
    ValidationError,
)
from ..ingest.proposals import Proposal
from ..labels import (
    action_label,
    actor_label,
    audit_ids,
    audit_sentence,
    matched_words,
    state_label,
    status_label,
    type_label,
    verdict_label,
)
from ..question import analyse as analyse_question
from ..tokens import count_tokens
from ..values import AuditEntry, Memory, ScoredMemory, Supersession, SupersessionState

log = logging.getLogger("memory_core.server")

#: The tools' descriptions, as a clinician (and the model choosing a tool) reads them; the
#: HTTP API's operations carry the same words.
DESCRIPTIONS: dict[str, str] = {
    "get_patient_context": (
        "What this patient's care team has recorded that bears on the question, as the exact "
        "section to put in your system prompt: allergies always first, then the most relevant "
        "current facts; anything stale, replaced or waiting for review is marked or left out. "
        "The section you are given is recorded under your name (its injection id is returned)."
    ),
    "search_memories": (
        "Search the patient's current memories for a query: each with its type, when it was "
        "written and last confirmed, its status, its current importance after decay and why "
        "it matched. What you are given is recorded under your name."
    ),
    "propose_memories": (
        "Read a session transcript and propose what is worth remembering about the patient, "
        "each with the evidence it was read from and what it would replace (by which rule, on "
        "what evidence). Nothing is written: save one with remember."
    ),
    "remember": (
        "Write one memory about the patient, under your name, through the same checks as the "
        "dashboard. Returns what it replaced or may replace (rule, evidence, state): a change "
        "to an allergy or another safety-critical fact waits for a reviewer; you cannot "
        "confirm, reject or undo it."
    ),
    "list_reviews": (
        "What waits for a clinical reviewer (for one patient, or every patient you may "
        "reach): a newer memory that may replace an older one, with the rule and evidence. "
        "You can read these; only a reviewer decides them."
    ),
    "memory_history": (
        "The history of one memory: what replaced it or what it replaced, when, by whom and "
        "why, and every recorded change to it."
    ),
}

#: What a context resource (``patient://{id}/context``) asks when no question is given.
GENERAL_QUESTION = "What should the care team keep in mind about this patient today?"

#: How many of the server's patients the warm-up loads, and the question it asks (a preview:
#: nothing recorded).
WARM_PATIENTS = 8
WARM_QUESTION = "Any drug allergies or current medications?"

#: HTTP status of each typed error (the first class that matches, most specific first).
STATUS: tuple[tuple[type[MemoryCoreError], int, str], ...] = (
    (ValidationError, 400, "invalid"),
    (PermissionDeniedError, 403, "forbidden"),
    (NotFoundError, 404, "not_found"),
    (StoreBusyError, 503, "busy"),
    (ConflictError, 409, "conflict"),
    (StateError, 409, "conflict"),
)


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """An error as ``(HTTP status, JSON body)``: a typed error with its message (and the field
    or patient it names); anything else a 500 that says only that the server failed (the
    details go to the server's log, never to the caller)."""
    if isinstance(exc, MemoryCoreError):
        status, code = next(
            ((st, c) for cls, st, c in STATUS if isinstance(exc, cls)), (400, "refused")
        )
        body: dict[str, Any] = {"error": code, "status": status, "message": str(exc)}
        if isinstance(exc, ValidationError):
            body["field"] = exc.field
        if isinstance(exc, PermissionDeniedError):
            body["action"] = exc.action
            if hasattr(exc, "patient_id"):
                body["patient_id"] = exc.patient_id
        body["retryable"] = exc.retryable
        return status, body
    log.error("internal error", exc_info=exc)
    return 500, {
        "error": "internal",
        "status": 500,
        "message": "the server failed on this request; its log says why",
        "retryable": False,
    }


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def memory_json(m: Memory) -> dict[str, Any]:
    """A memory as an agent reads it (no embedding, no internal version)."""
    return {
        "memory_id": m.id,
        "patient_id": m.patient_id,
        "type": m.memory_type,
        "type_label": type_label(m.memory_type),
        "content": m.content,
        "status": m.status.value,
        "status_label": status_label(m.status.value),
        "written_at": _iso(m.created_at),
        "last_confirmed_at": _iso(m.confirmed_at),
        "base_importance": m.importance,
        "pinned": m.pinned,
        "source": m.source,
    }


#: labels.matched_words's heads, as a search result's reasons begin
_WHY_HEADS = {"through": "matched through", "about": "about what the query names:"}


def why_matched(s: ScoredMemory) -> list[str]:
    """Why a search found a memory, in words."""
    out: list[str] = []
    if s.keyword_rank is not None:
        out.append(f"shares words with the query (keyword rank {s.keyword_rank})")
    # what the query reached the memory through and the keys it names, as the dashboard says
    # them ("kidney function (eGFR)", "HbA1c"), not as code names
    for line in matched_words((), s.keyword_via, s.keys, s.memory.content):
        head, _, said = line.partition(": ")
        out.append(f"{_WHY_HEADS[head]} {said}")
    out.append(f"similar in meaning (cosine {s.similarity:.2f})")
    if s.safety:
        out.append("safety-critical: always offered")
    return out


def _sup_json(s: Supersession, content: dict[str, str]) -> dict[str, Any]:
    return {
        "supersession_id": s.id,
        "patient_id": s.patient_id,
        "older_memory_id": s.old_id,
        "older": content.get(s.old_id),
        "newer_memory_id": s.new_id,
        "newer": content.get(s.new_id),
        "verdict": s.verdict,
        "in_words": f"the newer {verdict_label(s.verdict)} the older",
        "state": s.state.value,
        "state_label": state_label(s.state.value),
        "rule": s.rule,
        "evidence": s.evidence,
        "similarity": round(s.similarity, 4),
        "found_at": _iso(s.detected_at),
        "in_effect_from": _iso(s.effective_at),
        "decided_by": actor_label(s.decided_by) if s.decided_by else None,
        "decided_at": _iso(s.decided_at),
    }


def _proposal_json(p: Proposal) -> dict[str, Any]:
    return {
        "content": p.content,
        "memory_type": p.memory_type,
        "type_label": type_label(p.memory_type),
        "importance": p.importance,
        "evidence": p.evidence,
        "confidence": p.confidence,
        "would_replace": [
            {
                "memory_id": s.memory_id,
                "content": s.content,
                "similarity": round(s.similarity, 4),
                "when": "at once" if s.mode == "auto" else "after a reviewer confirms",
                "rule": s.rule,
                "evidence": s.evidence,
            }
            for s in p.supersedes
        ],
    }


class Door:
    """The agent principal ``agent:<agent>`` over ``engine``, held to ``patients`` (None: every
    patient the request's grant allows). Calls are made one at a time (a lock): the answers of
    one agent stay in the order it asked them."""

    def __init__(
        self, engine: MemoryEngine, agent: str, patients: Iterable[str] | None = None
    ) -> None:
        self.engine = engine
        self.actor = agent_principal(agent)
        self.agent = agent
        ids = None if patients is None else [v.patient_id(p, "patient") for p in patients]
        if ids is not None and not ids:
            raise ValidationError("patient", "name at least one patient, or none for all")
        self.scope = PatientScope.of(ids)
        self._lock = threading.Lock()

    def warm(self, patients: int = WARM_PATIENTS) -> None:
        """Load what a first answer needs -- the embedder's session, the token encoding, the
        clinical lexicon and drug dictionary, the snapshots of (the first ``patients`` of) the
        server's patients -- so that the host's first call does not wait for it: the servers
        run it on a thread as they start (a call that comes first waits for it under the lock).
        Writes nothing (a preview)."""
        with self._lock:
            try:
                self.engine.embedder.embed_batch([WARM_QUESTION])
                count_tokens(WARM_QUESTION, self.engine.encoding)
                analyse_question(WARM_QUESTION)
                for pid in sorted(self.scope.patients or ())[:patients]:
                    self.engine.build_context(pid, WARM_QUESTION, record_access=False)
            except Exception:  # a warm-up never stops a server: the first call will say why
                log.warning("warm-up failed", exc_info=True)

    def warm_in_background(self) -> threading.Thread:
        t = threading.Thread(target=self.warm, name="memory-core-warm", daemon=True)
        t.start()
        return t

    def acting(self, grant: Iterable[str] | None = None) -> Acting:
        """The guarded path for one request: the server's patients narrowed by ``grant``."""
        scope = self.scope.narrowed(grant)
        return self.engine.acting_as(self.actor, Role.AGENT, patients=scope.patients)

    def launch(self, grant: Iterable[str] | None = None) -> dict[str, Any]:
        """Who the server acts as and which patients a request with ``grant`` may reach."""
        scope = self.scope.narrowed(grant)
        return {
            "agent": self.agent,
            "principal": self.actor,
            "role": Role.AGENT.value,
            "patients": None if scope.patients is None else sorted(scope.patients),
        }

    # --- the six operations ----------------------------------------------------------------
    def get_patient_context(
        self,
        patient_id: str,
        question: str,
        max_tokens: int | None = None,
        *,
        grant: Iterable[str] | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            res = self.acting(grant).get_context(patient_id, question, max_tokens=max_tokens)
            omitted = [
                {
                    "memory_id": i.scored.memory.id,
                    "type": i.scored.memory.memory_type,
                    "content": i.scored.memory.content,
                }
                for i in res.safety_omitted
            ]
        return {
            "patient_id": patient_id,
            "question": question,
            "section": res.text,
            "tokens": res.tokens,
            "encoding": res.encoding,
            "injection_id": res.injection_id,
            # safety-critical facts the token budget left out: surface them, never drop them
            "safety_omitted": omitted,
        }

    def search_memories(
        self, patient_id: str, query: str, k: int = 5, *, grant: Iterable[str] | None = None
    ) -> dict[str, Any]:
        with self._lock:
            found = self.acting(grant).search(patient_id, query, k=k)
        return {
            "patient_id": patient_id,
            "query": query,
            "memories": [
                {
                    **memory_json(s.memory),
                    "current_importance": round(s.current_importance, 3),
                    "score": round(s.score, 4),
                    "why": why_matched(s),
                }
                for s in found
            ],
        }

    def propose_memories(
        self, patient_id: str, transcript: str, *, grant: Iterable[str] | None = None
    ) -> dict[str, Any]:
        with self._lock:
            proposals = self.acting(grant).propose(patient_id, transcript)
        return {
            "patient_id": patient_id,
            "written": False,
            "proposals": [_proposal_json(p) for p in proposals],
            "rejected": [{"index": r.index, "reason": r.reason} for r in proposals.rejected],
        }

    def remember(
        self,
        patient_id: str,
        content: str,
        memory_type: str,
        *,
        grant: Iterable[str] | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            acting = self.acting(grant)
            try:
                res = acting.add_memory(patient_id, content, memory_type)
            except ValidationError as exc:  # one record: name its field, not its index
                field = exc.field.removeprefix("records[0].")
                raise ValidationError(field, exc.message) from None
            ids = [s.old_id for s in res.supersessions]
            content_of = self._contents(patient_id, ids)
        content_of[res.memory.id] = res.memory.content
        return {
            "memory": memory_json(res.memory),
            "supersessions": [_sup_json(s, content_of) for s in res.supersessions],
            "waiting_for_review": sum(
                s.state is SupersessionState.PENDING for s in res.supersessions
            ),
        }

    def list_reviews(
        self, patient_id: str | None = None, *, grant: Iterable[str] | None = None
    ) -> dict[str, Any]:
        with self._lock:
            pending = self.acting(grant).reviews(patient_id)
            content_of: dict[str, str] = {}
            for pid in sorted({s.patient_id for s in pending}):
                ids = [i for s in pending if s.patient_id == pid for i in (s.old_id, s.new_id)]
                content_of.update(self._contents(pid, ids))
        return {
            "patient_id": patient_id,
            "reviews": [_sup_json(s, content_of) for s in pending],
            "note": "only a reviewer decides these (the dashboard's Contradictions page)",
        }

    def memory_history(
        self, patient_id: str, memory_id: str, *, grant: Iterable[str] | None = None
    ) -> dict[str, Any]:
        with self._lock:
            h = self.acting(grant).history(patient_id, memory_id)
            content_of = {i: m.content for i, m in h.others.items()}
            content_of[h.memory.id] = h.memory.content
            extra = {i for e in h.audit for i in audit_ids(e)} - set(content_of)
            content_of.update(self._contents(patient_id, sorted(extra)))
        mid = h.memory.id
        return {
            "memory": memory_json(h.memory),
            "replaced_by": [_sup_json(s, content_of) for s in h.supersessions if s.old_id == mid],
            "replaces": [_sup_json(s, content_of) for s in h.supersessions if s.new_id == mid],
            "events": [_event(e, content_of) for e in h.audit],
        }

    def _contents(self, patient_id: str, ids: Iterable[str]) -> dict[str, str]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        found = self.engine.store.get_memories(wanted)
        return {m.id: m.content for m in found if m.patient_id == patient_id}


def _event(e: AuditEntry, content_of: dict[str, str]) -> dict[str, Any]:
    return {
        "at": _iso(e.at),
        "who": actor_label(e.actor),
        "actor": e.actor,
        "action": e.action,
        "action_label": action_label(e.action),
        "what_happened": audit_sentence(e, content_of),
    }
