"""Words a clinician reads for the engine's codes: memory types, statuses, supersession states
and verdicts, audited actions, record fields and the audit log as sentences. The one place the
dashboard and the CLI take them from. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from .access import agent_name
from .importance import CLINICAL, GENERAL
from .values import (
    AuditAction,
    AuditEntry,
    Confirmation,
    ConfirmationKind,
    InjectionRecord,
    Memory,
)

TYPE_LABELS: dict[str, str] = {
    "allergy": "Allergy",
    "adverse_reaction": "Adverse reaction",
    "medication": "Medication",
    "condition": "Condition",
    "treatment_response": "Treatment response",
    "care_plan": "Care plan",
    "lab_result": "Lab result",
    "vital_sign": "Vital sign",
    "preference": "Preference",
    "social": "Social history",
    "observation": "Observation",
    "immunization": "Immunization",
    "procedure": "Procedure",
    "intermediate_step": "Intermediate step",
    "user_preference": "User preference",
    "explicit_instruction": "Explicit instruction",
    "task_result": "Task result",
}

#: Types of the general-assistant rule set that a clinical store does not offer or list.
GENERAL_ASSISTANT_TYPES = frozenset(GENERAL) - {"observation"}

STATUS_LABELS: dict[str, str] = {
    "active": "Active",
    "superseded": "Replaced by a newer memory",
    "archived": "Archived",
}

#: one word per status, for narrow columns (the CLI's ``show``)
STATUS_WORDS: dict[str, str] = {
    "active": "active",
    "superseded": "replaced",
    "archived": "archived",
}

STATE_LABELS: dict[str, str] = {
    "pending": "Waiting for review",
    "auto": "Applied automatically",
    "confirmed": "Confirmed by a reviewer",
    "rejected": "Both kept (rejected)",
    "undone": "Undone",
}

VERDICT_LABELS: dict[str, str] = {
    "updates": "updates",
    "contradicts": "contradicts",
    "duplicate": "repeats",
    "compatible": "is compatible with",
}

TIER_LABELS: dict[str, str] = {"short_term": "Short-term", "long_term": "Long-term"}

#: the decay policy's models and clocks (domain.md) as the Decay lab offers them
MODEL_LABELS: dict[str, str] = {
    "exponential": "exponential",
    "linear": "linear",
    "strength": "strength (hourly)",
}
CLOCK_LABELS: dict[str, str] = {
    "wall": "real time",
    "interactions": "the patient's sessions",
    "hybrid": "the smaller of the two",
}

#: why a memory's fact counts as confirmed (domain.md, "Age counts from the last confirmation")
CONFIRMATION_LABELS: dict[ConfirmationKind, str] = {
    ConfirmationKind.RESTATED: "stated again by a newer memory",
    ConfirmationKind.REVIEW_KEPT: "kept by a reviewer who rejected a newer statement",
    ConfirmationKind.FLAG_KEPT: "kept by a reviewer when flagged possibly out of date",
    ConfirmationKind.RECORD: "asserted by its record",
}


def type_label(memory_type: str) -> str:
    """``"adverse_reaction"`` -> ``"Adverse reaction"``; an unknown snake_case type reads as
    words too."""
    return TYPE_LABELS.get(memory_type) or memory_type.replace("_", " ").strip().capitalize()


#: Whose fact a proposal is (memory_core.ingest.Proposal.whose).
WHOSE_LABELS = {"patient": "Patient", "family history": "Family history"}


def whose_label(whose: str) -> str:
    """ "Patient" for the patient's own fact, "Family history" for a relative's condition."""
    return WHOSE_LABELS.get(whose, whose.capitalize())


def status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status.replace("_", " ").capitalize())


def status_word(status: str) -> str:
    return STATUS_WORDS.get(status, status.replace("_", " "))


def state_label(state: str) -> str:
    return STATE_LABELS.get(state, state.replace("_", " ").capitalize())


def verdict_label(verdict: str) -> str:
    return VERDICT_LABELS.get(verdict, verdict.replace("_", " "))


def confirmation_label(confirmation: Confirmation) -> str:
    """Why a confirmation counts, in words: "asserted by its record fhir:Condition/c1"."""
    words = CONFIRMATION_LABELS[confirmation.kind]
    if confirmation.kind is ConfirmationKind.RECORD and confirmation.ref:
        return f"{words} {confirmation.ref}"
    return words


def age_label(memory: Memory, now: datetime) -> str:
    """Where the memory's age (the decay of the monthly models) counts from at ``now``: "age
    from last confirmation 2026-03-02 (stated again by a newer memory)", or "age from creation
    2024-01-15" when it has not been confirmed since (an as-of ``now`` before a confirmation
    does not count it)."""
    c = memory.confirmation_at(now)
    if c is None or c.at <= memory.created_at:
        return f"age from creation {memory.created_at:%Y-%m-%d}"
    return f"age from last confirmation {c.at:%Y-%m-%d} ({confirmation_label(c)})"


def offered_types(rules: Literal["clinical", "general"] = "clinical") -> tuple[str, ...]:
    """The memory types a form offers under the policy's importance rules: a clinical store
    does not list the general assistant's types (intermediate_step, user_preference, ...)."""
    if rules == "general":
        return (*GENERAL, *(t for t in CLINICAL if t not in GENERAL))
    return tuple(t for t in CLINICAL if t not in GENERAL_ASSISTANT_TYPES)


def visible_types(
    types: Iterable[str], rules: Literal["clinical", "general"] = "clinical"
) -> list[str]:
    """``types`` without the general-assistant ones when the rules are clinical (order kept)."""
    if rules == "general":
        return list(types)
    return [t for t in types if t not in GENERAL_ASSISTANT_TYPES]


# --- the audit log in words -------------------------------------------------------------------

#: Each audited action as a short label (the Settings page's filter, the CLI).
ACTION_LABELS: dict[str, str] = {
    AuditAction.ADD: "Memory added",
    AuditAction.PIN: "Pinned",
    AuditAction.UNPIN: "Unpinned",
    AuditAction.EDIT_IMPORTANCE: "Importance changed",
    AuditAction.ARCHIVE: "Archived",
    AuditAction.RESTORE: "Restored",
    AuditAction.CLEANUP_ARCHIVE: "Archived by cleanup",
    AuditAction.PURGE: "Deleted (purge)",
    AuditAction.PROMOTE: "Became long-term",
    AuditAction.DETECT_SUPERSESSION: "Replacement found",
    AuditAction.SUPERSEDE: "Replaced by a newer memory",
    AuditAction.UNSUPERSEDE: "Active again",
    AuditAction.CONFIRM_SUPERSESSION: "Replacement confirmed",
    AuditAction.REJECT_SUPERSESSION: "Both kept",
    AuditAction.UNDO_SUPERSESSION: "Decision undone",
    AuditAction.POLICY_CHANGE: "Policy changed",
    AuditAction.IMPORT_SESSIONS: "Past sessions recorded",
    AuditAction.KEEP_FLAGGED: "Kept despite a change",
    AuditAction.CONFIRM_FLAGGED: "Confirmed out of date",
    AuditAction.CONFIRM_MEMORY: "Confirmed again",
}

#: The record fields a person reads, in words (memories, supersessions, policies).
FIELD_LABELS: dict[str, str] = {
    "content": "statement",
    "memory_type": "type",
    "importance": "base importance",
    "pinned": "pinned",
    "tier": "tier",
    "status": "status",
    "superseded_by": "replaced by",
    "archived_at": "archived on",
    "created_at": "written on",
    "last_accessed": "last used",
    "access_count": "times used",
    "source": "source",
    "state": "review",
    "decided_by": "decided by",
    "decided_at": "decided on",
    "effective_at": "in effect from",
    "ended_at": "ended on",
    "detected_at": "found on",
    "similarity": "similarity",
    "verdict": "verdict",
    "method": "decided by",
    "rule": "rule",
    "evidence": "evidence",
    "decay": "decay",
    "ranking": "ranking",
    "context": "injected section",
    "contradiction": "contradiction detection",
    "model": "decay model",
    "rate": "monthly rate",
    "lam": "hourly rate",
    "floor": "floor",
    "clock": "clock",
    "cleanup_threshold": "cleanup threshold",
    "boost": "boost per use",
    "boost_cap": "boost cap",
}

#: The engine's own actors (engine.core.SYSTEM and AGENT, seed.DEMO_ACTOR) as a person reads
#: them; a person's name or e-mail is shown as it is, an agent principal (``agent:<name>``,
#: memory_core.access) as "agent <name>".
ACTOR_LABELS: dict[str, str] = {
    "system": "The system",
    "agent": "The care assistant",
    "demo-seed": "The demo loader",
}

#: fields a reviewer does not need in "what changed" (the raw record keeps them)
TECHNICAL_FIELDS = frozenset(
    {
        "embedding_model",
        "version",
        "id",
        "patient_id",
        "old_id",
        "new_id",
        "embedding",
        "superseded_by",  # an id: the sentence names what replaced it
    }
)
QUOTE_CHARS = 160


def action_label(action: str) -> str:
    return ACTION_LABELS.get(action) or action.replace("_", " ").capitalize()


def field_label(name: str) -> str:
    return FIELD_LABELS.get(name) or name.replace("_", " ")


def actor_label(actor: str) -> str:
    name = agent_name(actor)
    if name is not None:
        return f"agent {name}"
    return ACTOR_LABELS.get(actor, actor)


def injection_sentence(injection: InjectionRecord) -> str:
    """Who was given what, for the ledger: "agent ward-assistant was given 4 memories (212
    tokens)"; a record that names no agent (an in-process call) says "The care assistant"."""
    who = actor_label(injection.agent) if injection.agent else ACTOR_LABELS["agent"]
    n = len(injection.items)
    what = "1 memory" if n == 1 else f"{n} memories"
    return f"{who} was given {what} ({injection.tokens} tokens)"


def quoted(text: str | None, limit: int = QUOTE_CHARS) -> str:
    """A statement in quotation marks, shortened past ``limit`` characters."""
    if not text:
        return "a memory no longer stored"
    one = " ".join(str(text).split())
    return f"“{one if len(one) <= limit else one[: limit - 1] + '…'}”"


def _value(name: str, value: Any) -> str:
    """One field's value as a person reads it."""
    if value is None or value == "":
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "status" and isinstance(value, str):
        return status_label(value).lower()
    if name == "state" and isinstance(value, str):
        return state_label(value).lower()
    if name == "tier" and isinstance(value, str):
        return TIER_LABELS.get(value, value).lower()
    if name == "memory_type" and isinstance(value, str):
        return type_label(value).lower()
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] == "T":
        try:  # an ISO timestamp: the day and the minute, UTC
            return f"{datetime.fromisoformat(value).astimezone(UTC):%d %b %Y %H:%M} UTC"
        except ValueError:
            return value
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict | list):
        return "changed"
    return str(value)


def changed_in_words(
    before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, limit: int = 4
) -> str:
    """The fields that differ, in words: ``"status: active → archived; archived on: none →
    01 Dec 2026 20:23 UTC"``; a new record is "created", a deleted one "deleted"."""
    if before is None and after is None:
        return ""
    if before is None:
        return "created"
    if after is None:
        return "deleted (the raw record keeps what it was)"
    keys = [
        k
        for k in dict.fromkeys([*before, *after])
        if k not in TECHNICAL_FIELDS and before.get(k) != after.get(k)
    ]
    parts = [
        f"{field_label(k)}: {_value(k, before.get(k))} → {_value(k, after.get(k))}"
        for k in keys[:limit]
    ]
    if len(keys) > limit:
        parts.append(f"and {len(keys) - limit} more")
    return "; ".join(parts) or "no visible change"


def audit_ids(entry: AuditEntry) -> list[str]:
    """The memory ids an audit row's sentence quotes (look their statements up first)."""
    if entry.entity == "memory":
        return [entry.entity_id]
    if entry.entity == "supersession":
        rec = entry.after or entry.before or {}
        return [str(rec[k]) for k in ("old_id", "new_id") if rec.get(k)]
    return []


def _confirmation_words(kind: Any) -> str:
    try:
        return CONFIRMATION_LABELS[ConfirmationKind(kind)]
    except ValueError:
        return ""


def audit_sentence(entry: AuditEntry, content_of: Mapping[str, str]) -> str:
    """One audit row as a sentence with the memories' statements, e.g. ``Dr Lee confirmed
    that “…” replaces “…”``. ``content_of`` maps memory ids to their statements (the row's
    own before/after is used first for a memory row)."""
    who = actor_label(entry.actor)
    a = entry.action
    rec = entry.after or entry.before or {}
    if entry.entity == "memory":
        text = quoted(rec.get("content") or content_of.get(entry.entity_id))
    else:
        text = ""
    old = quoted(content_of.get(str(rec.get("old_id", ""))))
    new = quoted(content_of.get(str(rec.get("new_id", ""))))
    before = entry.before or {}
    after = entry.after or {}
    if a == AuditAction.ADD:
        kind = type_label(str(rec.get("memory_type", "memory"))).lower()
        return f"{who} {'wrote' if agent_name(entry.actor) else 'added'} {text} ({kind})"
    if a == AuditAction.PIN:
        return f"{who} pinned {text}: it no longer fades"
    if a == AuditAction.UNPIN:
        return f"{who} unpinned {text}: it fades again"
    if a == AuditAction.EDIT_IMPORTANCE:
        return (
            f"{who} changed the base importance of {text} from "
            f"{_value('importance', before.get('importance'))} to "
            f"{_value('importance', after.get('importance'))}"
        )
    if a == AuditAction.ARCHIVE:
        return f"{who} archived {text}"
    if a == AuditAction.RESTORE:
        return f"{who} restored {text}"
    if a == AuditAction.CLEANUP_ARCHIVE:
        return f"Cleanup archived {text}: it had faded below the threshold ({who.lower()} ran it)"
    if a == AuditAction.PURGE:
        return f"{who} deleted {text} for good (it had been archived past the retention age)"
    if a == AuditAction.PROMOTE:
        return f"{text} became a long-term memory (used often)"
    if a == AuditAction.SUPERSEDE:
        return f"{text} was replaced by a newer memory"
    if a == AuditAction.UNSUPERSEDE:
        return f"{text} is active again"
    if a == AuditAction.DETECT_SUPERSESSION:
        if rec.get("state") == "auto":
            return f"{new} replaced {old} automatically"
        return f"{new} may replace {old}: waiting for a reviewer"
    if a == AuditAction.CONFIRM_SUPERSESSION:
        return f"{who} confirmed that {new} replaces {old}"
    if a == AuditAction.REJECT_SUPERSESSION:
        return f"{who} kept both {old} and {new}"
    if a == AuditAction.UNDO_SUPERSESSION:
        if before.get("state") == "rejected":
            return f"{who} reopened the review of {old} and {new} (undid “keep both”)"
        if after.get("state") == "pending":
            return f"{who} undid the confirmation that {new} replaces {old}: back to review"
        return f"{who} undid the replacement of {old} by {new}"
    if a == AuditAction.POLICY_CHANGE:
        return f"{who} changed the policy ({changed_in_words(before, after, limit=3)})"
    if a == AuditAction.IMPORT_SESSIONS:
        n = rec.get("sessions")
        what = "1 past session" if n == 1 else f"{n if n is not None else 'some'} past sessions"
        return f"{who} recorded {what} of the patient"
    if a == AuditAction.KEEP_FLAGGED:
        return f"{who} kept {text} although a drug or condition it names changed"
    if a == AuditAction.CONFIRM_FLAGGED:
        return f"{who} confirmed {text} is out of date (archived; Restore undoes it)"
    if a == AuditAction.CONFIRM_MEMORY:
        conf = after.get("confirmation")
        conf = conf if isinstance(conf, Mapping) else {}
        why = _confirmation_words(conf.get("kind"))
        ref = conf.get("ref")
        if why and conf.get("kind") == ConfirmationKind.RECORD.value and ref:
            why = f"{why} {ref}"
        return f"{text} was confirmed again by {who}{f' ({why})' if why else ''}: its age restarts"
    return f"{who}: {action_label(a).lower()} {text}".strip()


# --- a decision's rule and evidence in sentences (the dashboard's "Why" lines, the CLI) -----
#: The decision table's rule ids (memory_core.facts.rules.rule_ids(), every one of them) in a
#: clinician's words; an id not listed is said from its own words ("lab.new-date" -> "lab: new
#: date").
RULE_WORDS: dict[str, str] = {
    "code.different": "two coded records with no code in common",
    "key.none-shared": "nothing in common",
    "key.in-passing": "the only thing in common is named in passing",
    "key.siblings": "two kinds of one broader thing",
    "context.other-person": "the newer statement is about someone else",
    "context.question": "the newer statement only asks",
    "context.definition": "the newer statement only defines a term or a range",
    "context.instruction": "the newer statement is an instruction, not the patient's state",
    "context.reported": "the newer statement only reports what was read or told",
    "context.hypothetical": "the newer statement says it only as a possibility",
    "context.future": "the newer statement plans it for later",
    "context.uncertain": "the newer statement is unsure",
    "history.before-record": "the newer statement is history from before the older was recorded",
    "speaker.another": "two people each speaking of themselves",
    "episode.dated-apart": "two episodes, each ended on its own date",
    "question.new-answer": "a new answer to the same question",
    "question.same-answer": "the same answer to the same question",
    "qualifier.two-places": "the same thing at two sites, sides, times or settings",
    "drug.stop": "the same drug stopped",
    "drug.restart": "the same drug started again",
    "drug.dose-change": "the same drug at a new dose",
    "drug.frequency-change": "the same drug at a new frequency",
    "drug.formulation-change": "the same drug in a new formulation",
    "drug.same": "the same drug restated",
    "drug.refuted": "the same drug said not to be taken",
    "drug.change-word": "a change of the same drug said in words",
    "drug.stop-named-elsewhere": "the drug said stopped in another note",
    "drug.class-named": "a drug of the class said stopped or changed",
    "drug.clipped-name": "a drug whose name the clipped word begins, said stopped or changed",
    "drug.combination-and-part": "a combination and one of its ingredients",
    "drug.two-orders": "an as-needed order beside a scheduled one",
    "lab.new-value": "a new value of the same test",
    "lab.new-date": "the same test on a new date",
    "lab.same-value": "the same test with the same value",
    "lab.same-result": "the same test with the same result",
    "lab.new-target": "a new target for the same test",
    "lab.same-target": "the same target for the same test",
    "lab.target": "a target, not a result",
    "lab.result-flip": "the same test with the opposite result",
    "lab.other-measure": "a test and a broader one it belongs to",
    "lab.first-value": "a value where the older statement had none",
    "reaction.changed": "the same reaction described differently",
    "reaction.resolved": "the same reaction resolved",
    "reaction.recurred": "the same reaction back again",
    "reaction.another": "another reaction to the same agent",
    "reaction.first": "a reaction to an agent the older note said caused none",
    "reaction.class-member": "a reaction to one drug of a class the older note said caused none",
    "reaction.added": "a reaction added to the same agent",
    "allergy.reaction-change": "the same allergy with a different reaction",
    "allergy.same-agent": "the same allergy restated",
    "allergy.refuted": "the same allergy ruled out",
    "allergy.reinstated": "the same allergy confirmed again",
    "allergy.empty-list": "no known allergies and an allergy",
    "allergy.list-scope": "no known allergies says nothing of this allergen",
    "allergy.list-restated": "no known allergies restated",
    "condition.restated": "the same condition restated",
    "condition.progressed": "a diagnosis the older condition progresses to",
    "condition.resolved": "the same condition resolved",
    "condition.refuted": "the same condition ruled out",
    "condition.recurred": "the same condition back again",
    "condition.new-stage": "the same condition at a new stage",
    "condition.changed": "the same condition changed",
    "condition.presence": "the same condition denied in one statement and present in the other",
    "condition.spread": "the same condition spread to new sites",
    "condition.another": "another episode of the condition",
    "statement.restated": "the same statement made again",
    "plan.restated": "the same planned test restated",
    "plan.done-or-cancelled": "the same plan done or cancelled",
    "plan.later-dose": "a later dose of the same vaccine",
    "plan.new-timing": "the same plan at a new time",
    "slot.single-valued": "a new answer to the same question (one answer at a time)",
    "slot.state-change": "the same item in a new state",
    "slot.new-amount": "a new amount of the same habit or measure",
    "slot.same-amount": "the same amount restated",
    "slot.past-amount": "a past amount, beside a current one of another amount",
    "slot.same-value": "the same answer restated",
    "slot.new-entry": "a new chart entry for the same question",
    "slot.scoped-value": "a value for one setting beside a general one",
    "slot.another-value": "another answer to a question with several",
    "slot.two-kinds": "two kinds of the same habit",
    "slot.addition": "an addition, not a replacement",
    "slot.presence": "the same item denied in one statement and present in the other",
    "slot.two-items": "two different plan items",
    "slot.plan-restated": "the same plan item restated",
    "slot.admitted": "something the older note said the patient does not do, now said to be done",
    "words.same-subject": "the same subject read from the words only",
    "response.outcome-changed": "the same treatment with a new outcome",
    "response.treatment-changed": "a change of treatment",
    "response.refuted": "the treatment said never taken",
    "response.two-treatments": "two different treatments",
    "response.two-outcomes": "two outcomes of the same treatment",
    "response.added": "an outcome added",
    "response.restated": "the same response restated",
    "chat.weak-evidence": "two chat turns: only strong evidence counts",
    "statement.corrects": "the newer note says an earlier record was wrong",
    "default.compatible": "no change of one thing found",
}

#: What a statement says of a thing, as the decision's evidence records it (facts.rules.base.
#: ``said``: a value's words, then the fact's state and contexts, "named" for none): the codes
#: among them said as a clinician would; a value's own words (a dose, a site) are kept.
SAID_WORDS: dict[str, str] = {
    "named": "names it",
    "started": "says started",
    "stopped": "says stopped",
    "changed": "says changed",
    "resolved": "says resolved",
    "refuted": "says it was ruled out",
    "planned": "says planned",
    "done": "says done",
    "cancelled": "says cancelled",
    "negated": "rules it out",
    "uncertain": "is unsure of it",
    "hypothetical": "says it only as a possibility",
    "historical": "says it was in the past",
    "other person": "says it of someone else",
    "question": "asks about it",
    "instruction": "gives it as an instruction",
    "definition": "only defines it",
    "future": "plans it for later",
    "reported": "reports it second-hand",
}


def rule_words(rule: str) -> str:
    """A decision's rule in words: "drug.dose-change" -> "the same drug at a new dose"."""
    if rule in RULE_WORDS:
        return RULE_WORDS[rule]
    head, _, tail = rule.partition(".")
    return f"{head}: {tail.replace('-', ' ')}" if tail else rule.replace("-", " ")


def said_words(said: str) -> str:
    """One side of a decision's evidence as a clause: "10 mg, once daily" -> "says 10 mg, once
    daily"; "mild, negated" -> "says mild and rules it out"; "named" -> "names it"."""
    bits = [b.strip() for b in said.split(", ") if b.strip()]
    values = [b for b in bits if b not in SAID_WORDS]
    codes = [SAID_WORDS[b] for b in bits if b in SAID_WORDS]
    says = [c.removeprefix("says ") for c in codes if c.startswith("says ")]
    rest = [c for c in codes if not c.startswith("says ")]
    said_ = [*values, *says]
    clauses = [f"says {', '.join(said_)}"] if said_ else []
    clauses += [c for c in rest if c != "names it" or not clauses]
    return " and ".join(clauses) or "names it"


_LOINC_NAMED = re.compile(r"([\w][\w /-]*?) \(LOINC ([0-9]+-[0-9])\)")


def _analyte_as_written(text: str) -> str:
    """A test named by its analyte's id in an older store's evidence ("egfr (LOINC 33914-3)")
    said as a clinician writes it ("eGFR (LOINC 33914-3)"; the lexicon's label)."""
    from .facts.lexicon import lexicon

    def said(m: re.Match[str]) -> str:
        analyte = lexicon().analyte_for_code(m.group(2))
        name = m.group(1)
        if analyte is not None and name.endswith(analyte.id):
            name = name.removesuffix(analyte.id) + analyte.display
        return f"{name} (LOINC {m.group(2)})"

    return _LOINC_NAMED.sub(said, text)


def evidence_words(evidence: str) -> str:
    """A decision's evidence as a clause, its arrow said in words: "same drug lisinopril: 20 mg
    → 10 mg" -> "same drug lisinopril: the older note says 20 mg; the newer note says 10 mg";
    "same condition cough: named → resolved" -> "…: the older note names it; the newer note
    says resolved"."""
    evidence = _analyte_as_written(evidence)
    subject, sep, change = evidence.partition(": ")
    if "→" not in change:
        if "→" not in subject:
            return evidence
        subject, sep, change = "", "", evidence
    before, _, after = change.partition("→")
    before, after = before.strip(" ,"), after.strip(" ,")
    tail = ""
    for mark in ("; ", " ("):  # what follows the newer side: a note of the rule's own
        head, found, rest = after.partition(mark)
        if found and "→" not in rest:
            after, tail = head, f"{found}{rest}"
            break
    said = (
        f"the older note {said_words(before) if before else 'says nothing of it'}; "
        f"the newer note {said_words(after) if after else 'says nothing of it'}{tail}"
    )
    return f"{subject}{sep}{said}"


def decision_words(rule: str, evidence: str) -> str:
    """Why a supersession was proposed or applied, for a card: its rule in words, then its
    evidence in words ("Why: the same drug stopped — same drug lisinopril: the older note says
    10 mg, once daily; the newer note says stopped"). Never the rule's id."""
    parts = [p for p in (rule_words(rule) if rule else "", evidence_words(evidence)) if p]
    return "Why: " + " — ".join(parts) if parts else ""


# --- what a memory matched of a question (the Prompt preview's "Matched" line) ----------------
def matched_words(
    words: Iterable[str], via: Iterable[str], keys: Iterable[str], content: str
) -> list[str]:
    """What a memory matched of a question, in words (memory_core.values.ScoredMemory's
    ``keyword_words``, ``keyword_via`` and ``keys``): "words: asks (as asked), HbA1c",
    "through: kidney function (eGFR)", "about: eGFR". The memory's words are said as it writes
    them; the search's own are lower case."""
    from .lexical import as_written
    from .question import key_label

    out = []

    def pair(item: str, joined: str) -> str:
        asked, arrow, found = item.partition(" → ")
        if not arrow:
            return as_written(item, content)
        return joined.format(asked, as_written(found, content))

    w = [pair(x, "{} (as {})") for x in words]
    if w:
        out.append("words: " + ", ".join(w))
    v = [pair(x, "{} ({})") for x in via]
    if v:
        out.append("through: " + ", ".join(v))
    k = list(dict.fromkeys(key_label(x) for x in keys))
    if k:
        out.append("about: " + ", ".join(k))
    return out
