"""Where a memory stands now, read from its clinical facts (:mod:`memory_core.facts`): what it
says is *current* (a drug taken, a problem active, a result), what it says *ended* (a drug
stopped, a condition resolved, an order completed or cancelled, a record refuted), and the short
label a shared line of the section writes for it ("lisinopril 10 mg once daily", "chronic kidney
disease stage 1", "HbA1c 6.7 % (Aug 2026)").

Nothing here reads words of its own: the states and contexts are the facts reader's (a coded
record's status is its facts' state), the names are the facts' keys and values. Pure.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from .context import sanitize_line
from .facts.model import (
    CODE_KINDS,
    ENDED,
    NEVER_SUPERSEDES,
    Context,
    Fact,
    KeyKind,
    Role,
    State,
    subject_kinds,
)
from .values import Memory

#: States that end what a fact is about: the facts model's ``ENDED`` and a completed order or
#: course ("completed a course of amoxicillin").
HISTORY_STATES = ENDED | {State.DONE}
#: States of something going on now.
CURRENT_STATES = frozenset({State.ACTIVE, State.STARTED, State.CHANGED})
#: A current state named as a change: with an ended fact beside it, a switch ("switched from
#: lisinopril to losartan": lisinopril ended, losartan current).
CHANGES = frozenset({State.STARTED, State.CHANGED})
#: The memory types whose facts can end. History that stays true (an adverse reaction, an
#: allergy, a result) and records of a moment never do.
ENDING_TYPES = frozenset({"medication", "condition", "care_plan"})
#: What a fact of any other type may say and still stand: anything but a refutation ("not
#: allergic after all", "entered in error") or a state it does not give.
LASTING_STATES = frozenset(State) - {State.REFUTED}
#: Contexts under which a fact is no statement about the patient now: negated, uncertain,
#: hypothetical, another person's.
NOT_ASSERTED = NEVER_SUPERSEDES | {Context.NEGATED}


class Standing(enum.StrEnum):
    """What a memory says of the patient now."""

    CURRENT = "current"  # what it is about is going on now (or a switch: one ended, one started)
    ENDED = "ended"  # every fact it is about ended
    OTHER = "other"  # planned, negated, uncertain, about someone else: no list can hold it
    UNKEYED = "unkeyed"  # nothing it is about is keyed: only its own line can say it


@dataclass(frozen=True, slots=True)
class Reading:
    """A memory's :class:`Standing`, the facts that make it (the current ones of a current
    memory, the ended ones of an ended memory) and every key it is about."""

    standing: Standing
    facts: tuple[Fact, ...] = ()
    keys: frozenset[str] = frozenset()


def subject_facts(memory: Memory) -> tuple[Fact, ...]:
    """The facts a memory is about: of its type's kinds, not named in passing."""
    if memory.facts is None:
        return ()
    kinds = subject_kinds(memory.memory_type) - {KeyKind.QUESTION}
    return tuple(f for f in memory.facts.facts if f.kind in kinds and f.role is not Role.MENTION)


def _ended(f: Fact, memory_type: str) -> bool:
    """A fact of an ending type in an ended state. A historical context alone ("diagnosed 9
    years ago", "history of") dates the fact; it does not end it."""
    return memory_type in ENDING_TYPES and f.state in HISTORY_STATES


def reading(memory: Memory) -> Reading:
    """Where ``memory`` stands now (see :class:`Standing`)."""
    facts = subject_facts(memory)
    keys = frozenset(f.key for f in facts)
    if not facts:
        return Reading(Standing.UNKEYED)
    statement = memory.facts.contexts if memory.facts is not None else frozenset()
    if statement & NOT_ASSERTED:
        return Reading(Standing.OTHER, (), keys)
    ended = tuple(f for f in facts if _ended(f, memory.memory_type))
    live = CURRENT_STATES if memory.memory_type in ENDING_TYPES else LASTING_STATES
    current = tuple(
        f for f in facts if f not in ended and f.state in live and not (f.contexts & NOT_ASSERTED)
    )
    if len(ended) + len(current) < len(facts):
        return Reading(Standing.OTHER, (), keys)
    if ended and current and not any(f.state in CHANGES for f in current):
        # "stopped A / B" read as A stopped, B merely named: neither a list of current facts
        # nor history can say it for sure; its own line does
        return Reading(Standing.OTHER, (), keys)
    if current:
        return Reading(Standing.CURRENT, current, keys)
    return Reading(Standing.ENDED, ended, keys)


# --- labels ------------------------------------------------------------------------------------
#: A label taken from a statement's text (its record names it only by code), cut to this.
LABEL_CHARS = 60
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _shorten(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def month_year(when: date | str) -> str:
    """ "Mar 2024" of a date or of a fact's ``YYYY``/``YYYY-MM``/``YYYY-MM-DD`` date."""
    if isinstance(when, str):
        parts = when.split("-")
        if len(parts) >= 2 and parts[1].isdigit() and 1 <= int(parts[1]) <= 12:
            return f"{_MONTHS[int(parts[1]) - 1]} {parts[0]}"
        return parts[0]
    return f"{_MONTHS[when.month - 1]} {when.year}"


def _values(value: str) -> dict[str, str]:
    """A fact's value ("dose=10 mg; freq=once daily") as its named parts."""
    out: dict[str, str] = {}
    for part in value.split(";"):
        name, eq, v = part.strip().partition("=")
        if eq and v.strip():
            out.setdefault(name.strip(), v.strip())
    return out


def _fewest(facts: Sequence[Fact]) -> list[Fact]:
    """The facts a label names: those the statement is about (a combination's ingredients only
    when it names no whole; a record's bare codes only when nothing else names it), without a
    name another one's name holds ("insulin" beside "insulin glargine")."""
    named = [f for f in facts if f.kind not in CODE_KINDS] or list(facts)
    subjects = [f for f in named if f.role is Role.SUBJECT] or named
    names = [f.name for f in subjects]
    out = []
    for f in subjects:
        if any(f.name != n and f.name in n for n in names) or f in out:
            continue
        out.append(f)
    return out


#: Value parts a label writes after the name, by kind of key.
_DRUG_PARTS = ("dose", "freq", "form")
_CONDITION_PARTS = ("severity", "stage", "type", "site")


def _drug(f: Fact) -> str:
    v = _values(f.value)
    return " ".join([f.name, *(v[p] for p in _DRUG_PARTS if p in v)])


def _condition(f: Fact) -> str:
    v = _values(f.value)
    name = f.name
    words = []
    for p in _CONDITION_PARTS:
        got = " and ".join(w for w in v.get(p, "").split("+") if w and w not in name)
        if got:
            words.append(f"{p} {got}" if p in ("stage", "type") else got)
    return f"{name} ({', '.join(words)})" if words else name


def _result(f: Fact, memory: Memory) -> str:
    v = _values(f.value)
    shown = v.get("value") or v.get("result") or ""
    when = month_year(f.date) if f.date else month_year(memory.created_at.date())
    name = f.text or f.name
    return f"{name} {shown} ({when})" if shown else f"{name} ({when})"


def label(memory: Memory, facts: Sequence[Fact]) -> str:
    """The short name of ``facts`` of ``memory`` on a shared line: drugs by their generic
    name with dose, frequency and form; conditions by their concept with stage, type, site; a
    result by its analyte as written, value and month; an allergen by name, with its reaction."""
    parts: list[str] = []
    fewest = _fewest(facts)
    if all(f.kind in CODE_KINDS for f in fewest):  # a code says nothing to a reader: the text
        return _shorten(sanitize_line(memory.content), LABEL_CHARS)
    for f in fewest:
        if f.kind is KeyKind.DRUG:
            parts.append(_drug(f))
        elif f.kind is KeyKind.LOINC:
            parts.append(_result(f, memory))
        elif f.kind is KeyKind.CONDITION:
            parts.append(_condition(f))
        elif f.kind is KeyKind.ALLERGEN:
            parts.append(f.name)
        else:
            parts.append(f.text or f.name)
    return " + ".join(dict.fromkeys(p for p in parts if p))


def allergy_label(memory: Memory) -> tuple[str, str]:
    """An allergy on a shared line: its allergens and the reactions it names, e.g.
    ``("penicillins", "anaphylaxis")``; ``("", "")`` when no allergen is keyed."""
    if memory.facts is None:
        return "", ""
    allergens = [f.name for f in memory.facts.facts if f.kind is KeyKind.ALLERGEN]
    reactions = [
        f.name
        for f in memory.facts.facts
        if f.kind is KeyKind.CONDITION and not (f.contexts & NOT_ASSERTED)
    ]
    if not allergens:
        return "", ""
    return ", ".join(dict.fromkeys(allergens)), ", ".join(dict.fromkeys(reactions))


def ended_label(memory: Memory, facts: Sequence[Fact]) -> str:
    """An ended memory on a history line: its label and when it was recorded ("naproxen
    220 mg (May 2023)")."""
    dated = next((f.date for f in facts if f.date), "")
    when = month_year(dated) if dated else month_year(memory.created_at.date())
    return f"{label(memory, facts)} ({when})"


def drug_names(memories: Iterable[Memory]) -> list[str]:
    """The drugs ``memories`` say are current (their current drug facts' names)."""
    out: list[str] = []
    for m in memories:
        r = reading(m)
        if r.standing is Standing.CURRENT:
            out += [f.name for f in r.facts if f.kind is KeyKind.DRUG]
    return out
