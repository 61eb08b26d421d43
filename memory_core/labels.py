"""Words a clinician reads for the engine's codes: memory types, statuses, supersession states
and verdicts, worklist kinds. The one place the dashboard (and anything else that shows these
to a person) takes them from. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from .importance import CLINICAL, GENERAL
from .values import Confirmation, ConfirmationKind, Memory

TYPE_LABELS: dict[str, str] = {
    "allergy": "Allergy",
    "adverse_reaction": "Adverse reaction",
    "medication": "Medication",
    "condition": "Condition",
    "treatment_response": "Treatment response",
    "care_plan": "Care plan",
    "lab_result": "Lab result",
    "preference": "Preference",
    "social": "Social history",
    "observation": "Observation",
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


def status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status.replace("_", " ").capitalize())


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
