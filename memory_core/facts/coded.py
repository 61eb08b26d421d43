"""A coded record's facts: its codes are its keys and its status its state (a FHIR Condition,
MedicationRequest, AllergyIntolerance, Observation ...), not its text. The text (the sentence
the import wrote) is still read for the concept keys that let a coded memory meet one written
in words (SNOMED 38341003 and "HTN" are both ``condition:hypertension``), but every fact takes
the record's state and, for a result, its value. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from .lexicon import lexicon
from .model import ClinicalFacts, Context, Fact, KeyKind, Origin, Role, State
from .reader import read

#: A code as a record carries it: ``<system>:<code>``.
CODE = re.compile(r"^(snomed:\d{4,18}|rxnorm:\d{1,10}|loinc:\d{1,7}-\d|cvx:\d{1,4})$")

#: A record's status (FHIR clinicalStatus, verificationStatus, MedicationRequest.status,
#: Observation.status ...) as the state of its facts.
STATUS_STATES: dict[str, State] = {
    "active": State.ACTIVE,
    "recurrence": State.ACTIVE,
    "relapse": State.ACTIVE,
    "confirmed": State.ACTIVE,
    "unconfirmed": State.ACTIVE,
    "provisional": State.ACTIVE,
    "differential": State.ACTIVE,
    "final": State.ACTIVE,
    "amended": State.ACTIVE,
    "corrected": State.ACTIVE,
    "preliminary": State.ACTIVE,
    "registered": State.ACTIVE,
    "intended": State.PLANNED,
    "draft": State.PLANNED,
    "planned": State.PLANNED,
    "scheduled": State.PLANNED,
    "not-started": State.PLANNED,
    "in-progress": State.ACTIVE,
    "on-hold": State.STOPPED,
    "stopped": State.STOPPED,
    "inactive": State.RESOLVED,
    "resolved": State.RESOLVED,
    "remission": State.RESOLVED,
    "completed": State.DONE,
    "cancelled": State.CANCELLED,
    "not-done": State.CANCELLED,
    "revoked": State.CANCELLED,
    "refuted": State.REFUTED,
    "entered-in-error": State.REFUTED,
}
#: Statuses that say the record is uncertain (an unconfirmed or provisional diagnosis).
UNCERTAIN_STATUSES = frozenset({"unconfirmed", "provisional", "differential", "preliminary"})
STATUSES = frozenset(STATUS_STATES)


def read_coded(
    content: str,
    memory_type: str,
    codes: Sequence[str],
    status: str = "",
    value: str = "",
    date: str = "",
) -> ClinicalFacts:
    """The facts of a coded record: one fact per code (the record's status its state, its
    value the record's value) and, with the same state, the concept keys its text names of
    the kinds the type is about; a LOINC code the lexicon knows under another code of the same
    measurement also keys the lexicon's code (loinc 38483-4 is creatinine, 2160-0)."""
    lex = lexicon()
    state = STATUS_STATES.get(status)
    text = read(content, memory_type)
    keyed = [str(c) for c in codes]
    fact_value = f"value={value}" if value else ""
    if value and value.split(" ")[0] in ("positive", "negative"):
        fact_value = f"result={value.split(' ')[0]}"
    facts: list[Fact] = [
        Fact(code, value=fact_value, state=state, role=Role.SUBJECT, date=date) for code in keyed
    ]
    for code in keyed:
        if code.startswith("loinc:"):
            analyte = lex.analyte_for_code(code.partition(":")[2])
            if analyte is not None and analyte.key not in keyed:
                facts.append(Fact(analyte.key, fact_value, state, role=Role.SUBJECT, date=date))
    have = {f.key for f in facts}
    for f in text.facts:
        if f.key in have or f.kind is KeyKind.LOINC:
            continue  # a result's analyte is its code's
        facts.append(replace(f, state=state or f.state, date=date or f.date))
    contexts: frozenset[Context] = frozenset()
    if status in UNCERTAIN_STATUSES:
        contexts = frozenset({Context.UNCERTAIN})
        facts = [replace(f, contexts=f.contexts | contexts) for f in facts]
    return ClinicalFacts(
        facts=tuple(facts),
        contexts=contexts,
        origin=Origin.CODED,
        lexicon=lex.version,
        codes=tuple(keyed),
        status=status,
    )
