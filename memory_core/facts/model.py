"""The clinical facts of one statement, and the decision on a pair of statements: frozen
values and their enumerations (pure; no I/O, no clock).

A statement is read once (:mod:`.reader` for text, :mod:`.coded` for a coded record, a
configured model for what neither can key) into :class:`ClinicalFacts`: one :class:`Fact` per
thing it is about -- a key such as ``drug:metformin`` or ``loinc:4548-4`` -- with that thing's
value, state and context. :mod:`.rules` compares two statements' facts key by key and returns a
:class:`Decision`: a :class:`Verdict`, the rule that took it, how strong its evidence is and
the evidence in plain words.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


class KeyKind(enum.StrEnum):
    """The namespace of a key: what kind of thing a fact is about."""

    DRUG = "drug"  # drug:<generic name>, one key per ingredient
    LOINC = "loinc"  # loinc:<code>: a lab analyte or a vital sign
    CONDITION = "condition"  # condition:<concept>: a diagnosis, symptom or finding
    ALLERGEN = "allergen"  # allergen:<substance or class>
    SLOT = "slot"  # slot:<chart slot>: household, tobacco, visit-time, ...
    QUESTION = "question"  # question:<the question's words>: a question and its answer
    SNOMED = "snomed"  # a code exactly as a FHIR resource carries it
    RXNORM = "rxnorm"
    CVX = "cvx"

    @classmethod
    def of(cls, key: str) -> KeyKind:
        return _kind_of(key)


#: The key kinds a statement of each memory type is about (a type not listed: every kind). A
#: medication statement is about its drugs, a lab result about its analytes; other kinds it
#: names are setting ("GI distress on metformin" is a medication statement about metformin).
SUBJECT_KINDS: dict[str, frozenset[KeyKind]] = {
    "medication": frozenset({KeyKind.DRUG, KeyKind.RXNORM}),
    "allergy": frozenset({KeyKind.ALLERGEN, KeyKind.SLOT, KeyKind.SNOMED, KeyKind.RXNORM}),
    "adverse_reaction": frozenset(
        {KeyKind.DRUG, KeyKind.ALLERGEN, KeyKind.CONDITION, KeyKind.RXNORM}
    ),
    "condition": frozenset({KeyKind.CONDITION, KeyKind.SNOMED}),
    "lab_result": frozenset({KeyKind.LOINC}),
    "vital_sign": frozenset({KeyKind.LOINC}),
    "treatment_response": frozenset({KeyKind.CONDITION, KeyKind.LOINC, KeyKind.DRUG}),
    "care_plan": frozenset({KeyKind.SLOT, KeyKind.DRUG, KeyKind.LOINC, KeyKind.SNOMED}),
    "preference": frozenset({KeyKind.SLOT, KeyKind.DRUG}),
    "social": frozenset({KeyKind.SLOT, KeyKind.LOINC}),
    "observation": frozenset({KeyKind.LOINC, KeyKind.SLOT, KeyKind.CONDITION}),
    "immunization": frozenset({KeyKind.CVX, KeyKind.DRUG}),
    "procedure": frozenset({KeyKind.SNOMED, KeyKind.SLOT}),
}


@lru_cache(maxsize=65_536)
def _kind_of(key: str) -> KeyKind:
    """A key's kind (its namespace), cached: every candidate search reads every key's kind."""
    return KeyKind(key.partition(":")[0])


@lru_cache(maxsize=1024)
def subject_kinds(memory_type: str) -> frozenset[KeyKind]:
    """The kinds a statement of ``memory_type`` is about (a question asked and answered, of
    any type, is about its question)."""
    return SUBJECT_KINDS.get(memory_type, frozenset(KeyKind)) | {KeyKind.QUESTION}


#: Kinds whose keys are codes of a terminology, as a record carries them: two different codes
#: of one system are two different things, whatever their texts share.
CODE_KINDS = frozenset({KeyKind.SNOMED, KeyKind.RXNORM, KeyKind.CVX})


class State(enum.StrEnum):
    """The state a statement gives the thing a fact is about."""

    ACTIVE = "active"  # asserted, no change named ("takes metformin", "HTN")
    STARTED = "started"  # started, restarted, added, resumed
    STOPPED = "stopped"  # stopped, discontinued, held, quit, no longer
    CHANGED = "changed"  # re-dosed, titrated, switched formulation, worse, better
    RESOLVED = "resolved"  # resolved, healed, in remission
    REFUTED = "refuted"  # entered in error, ruled out, not allergic after all
    PLANNED = "planned"  # booked, referred, scheduled, to be done
    DONE = "done"  # attended, completed, done
    CANCELLED = "cancelled"  # cancelled, declined


#: States that end the thing (what ended is history).
ENDED = frozenset({State.STOPPED, State.RESOLVED, State.REFUTED, State.CANCELLED})
#: The chart slots that are a care plan's items (slot:referral cardiology, slot:follow up ...).
PLAN_SLOTS = ("referral ", "procedure ", "follow up")


class Context(enum.StrEnum):
    """What a statement says about a fact besides asserting it now: medspaCy ConText's
    categories, and the assertion step's (:mod:`.assertion`): what the statement does with
    the thing or with its change when it does not assert it as the patient's state now."""

    NEGATED = "negated"  # "no chest pain", "denies smoking"
    UNCERTAIN = "uncertain"  # "possible sulfa allergy", "?gout", "thinks she has"
    HYPOTHETICAL = "hypothetical"  # "if cough develops ...", "consider stopping ..."
    HISTORICAL = "historical"  # "history of", "as a child", "quit 20 years ago"
    OTHER_PERSON = "other_person"  # "mother has diabetes", a baby, a pet, another patient
    QUESTION = "question"  # "asked whether to stop metformin", "can I stop ...?"
    INSTRUCTION = "instruction"  # "sick day rules: stop metformin when vomiting"
    DEFINITION = "definition"  # "an HbA1c of 48 or more is diagnostic", reference ranges
    FUTURE = "future"  # a plan for a later date: "will reduce ... next month"
    REPORTED = "reported"  # "read that sertraline can be stopped", "was told ..."


#: Contexts under which a statement never supersedes anything (domain.md: "asserted, or not
#: evidence at all").
NEVER_SUPERSEDES = frozenset(
    {
        Context.UNCERTAIN,
        Context.HYPOTHETICAL,
        Context.OTHER_PERSON,
        Context.QUESTION,
        Context.INSTRUCTION,
        Context.DEFINITION,
        Context.FUTURE,
        Context.REPORTED,
    }
)


class Role(enum.StrEnum):
    """How a statement names a thing: as what it is about, or in passing ("added to
    metformin", "while on furosemide", a rescue medicine carried with an allergy)."""

    SUBJECT = "subject"
    INGREDIENT = "ingredient"  # an ingredient of a combination the statement is about
    MENTION = "mention"


class Origin(enum.StrEnum):
    """Where the facts came from."""

    TEXT = "text"  # the offline reader, from the statement's words
    CODED = "coded"  # a coded record (FHIR): codes and statuses
    MODEL = "model"  # a configured language model, checked against the lexicon


class Verdict(enum.StrEnum):
    UPDATES = "updates"
    CONTRADICTS = "contradicts"
    DUPLICATE = "duplicate"
    COMPATIBLE = "compatible"


#: Verdicts that make a supersession.
SUPERSEDING = frozenset({Verdict.UPDATES, Verdict.CONTRADICTS, Verdict.DUPLICATE})


class Strength(enum.StrEnum):
    """How strong a superseding decision's evidence is: ``strong`` may apply at once on an
    automatic type; ``weak`` always goes to a reviewer."""

    STRONG = "strong"
    WEAK = "weak"
    NONE = "none"  # compatible: nothing to apply


@dataclass(frozen=True, slots=True)
class Fact:
    """One thing a statement is about: its ``key``, the ``value`` given (normalised words:
    "500 mg twice daily", "7.1 %", "afternoon"; "" when none), the ``state`` (None when the
    statement names it without asserting anything of it), the ``contexts`` around it, its
    ``role``, the words as written (``text``) and a ``date`` the statement gives for it
    (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``; "" when none)."""

    key: str
    value: str = ""
    state: State | None = State.ACTIVE
    contexts: frozenset[Context] = frozenset()
    role: Role = Role.SUBJECT
    text: str = ""
    date: str = ""

    @property
    def kind(self) -> KeyKind:
        return _kind_of(self.key)

    @property
    def name(self) -> str:
        """The key's name without its namespace ("metformin" of ``drug:metformin``)."""
        return self.key.partition(":")[2]

    @property
    def asserted(self) -> bool:
        """Said of the patient, now, as fact: none of the contexts that never supersede."""
        return not (self.contexts & NEVER_SUPERSEDES)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key}
        if self.value:
            out["value"] = self.value
        out["state"] = self.state.value if self.state else None
        if self.contexts:
            out["contexts"] = sorted(c.value for c in self.contexts)
        if self.role is not Role.SUBJECT:
            out["role"] = self.role.value
        if self.text:
            out["text"] = self.text
        if self.date:
            out["date"] = self.date
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Fact:
        state = d.get("state")
        return cls(
            key=str(d["key"]),
            value=str(d.get("value", "")),
            state=None if state is None else State(state),
            contexts=frozenset(Context(c) for c in d.get("contexts", ())),
            role=Role(d.get("role", Role.SUBJECT.value)),
            text=str(d.get("text", "")),
            date=str(d.get("date", "")),
        )


@dataclass(frozen=True, slots=True)
class ClinicalFacts:
    """What one statement is about, read once when it is written (``Memory.facts``).

    ``facts``: one per key, in order of appearance; ``contexts``: contexts of the whole
    statement (a relative's fact, a plan conditional on something); ``origin``: who read it;
    ``lexicon``: the version of the lexicon it was read with (re-read when that changes);
    ``codes``: the codes of its source record exactly as given (``snomed:...``), kept so a
    coded memory can be re-keyed under a newer lexicon."""

    facts: tuple[Fact, ...] = ()
    contexts: frozenset[Context] = frozenset()
    origin: Origin = Origin.TEXT
    lexicon: str = ""
    codes: tuple[str, ...] = ()
    status: str = ""  # a coded record's status as given ("active", "resolved", "stopped")

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(f.key for f in self.facts)

    def subject_keys(self) -> frozenset[str]:
        """The keys the statement is about (not those it names in passing)."""
        return frozenset(f.key for f in self.facts if f.role is Role.SUBJECT)

    def get(self, key: str) -> Fact | None:
        for f in self.facts:
            if f.key == key:
                return f
        return None

    def of_kind(self, *kinds: KeyKind) -> tuple[Fact, ...]:
        return tuple(f for f in self.facts if f.kind in kinds)

    @property
    def coded(self) -> bool:
        return self.origin is Origin.CODED

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "facts": [f.to_dict() for f in self.facts],
            "origin": self.origin.value,
            "lexicon": self.lexicon,
        }
        if self.contexts:
            out["contexts"] = sorted(c.value for c in self.contexts)
        if self.codes:
            out["codes"] = list(self.codes)
        if self.status:
            out["status"] = self.status
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClinicalFacts:
        return cls(
            facts=tuple(Fact.from_dict(f) for f in d.get("facts", ())),
            contexts=frozenset(Context(c) for c in d.get("contexts", ())),
            origin=Origin(d.get("origin", Origin.TEXT.value)),
            lexicon=str(d.get("lexicon", "")),
            codes=tuple(str(c) for c in d.get("codes", ())),
            status=str(d.get("status", "")),
        )


def _filled(first: str, later: str) -> str:
    """A key's value from two mentions: the first's parts, and after them the parts only the
    later mention says ("kidney function result back today: eGFR 41": the result is the
    second mention's, the first named no value)."""
    if not first or not later:
        return first or later
    have = {piece.partition("=")[0] for piece in first.split("; ")}
    more = [piece for piece in later.split("; ") if piece.partition("=")[0] not in have]
    return "; ".join([first, *more])


def merge(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    """One fact per key, the first mention keeping its place; a later mention of a key fills
    what the first left empty (a value, a state, a date), a subject mention wins over a
    passing one, and a context holds only where every mention has it ("no chest pain at rest;
    chest pain on exertion" asserts chest pain). A change only one mention gives, under a
    context that asserts nothing, is not the key's where another mention says it plainly ("a
    repeat FBC in two weeks to see if the count has recovered": the FBC, no recovery), and
    keeps that context where none does."""
    out: dict[str, Fact] = {}
    for f in facts:
        had = out.get(f.key)
        if had is None:
            out[f.key] = f
            continue
        state = _stronger(had.state, f.state)
        changed_by, other = (had, f) if state is had.state else (f, had)
        contexts = had.contexts & f.contexts  # a context holds where every mention has it
        if state not in (None, State.ACTIVE) and changed_by.contexts & NEVER_SUPERSEDES:
            if not other.contexts & NEVER_SUPERSEDES:
                state = other.state  # the thing said plainly; its change only supposed
            else:
                contexts |= changed_by.contexts
        out[f.key] = Fact(
            key=f.key,
            value=_filled(had.value, f.value),
            state=state,
            contexts=contexts,
            role=min(had.role, f.role, key=_ROLE_RANK.__getitem__),
            text=had.text or f.text,
            date=had.date or f.date,
        )
    return tuple(out.values())


_ROLE_RANK = {Role.SUBJECT: 0, Role.INGREDIENT: 1, Role.MENTION: 2}


def _stronger(a: State | None, b: State | None) -> State | None:
    """The more informative of two states of one key: any named change beats a plain
    assertion, which beats none."""
    if a in (None, State.ACTIVE):
        return b if b is not None else a
    return a


@dataclass(frozen=True, slots=True)
class Decision:
    """What a newer statement does to an older one: the ``verdict``, the ``rule`` that took it
    (an id of :mod:`.rules`' table, e.g. ``drug.stop``), its ``strength`` and the ``evidence``
    in plain words ("same drug metformin: 500 mg twice daily → stopped")."""

    verdict: Verdict
    rule: str
    strength: Strength = Strength.NONE
    evidence: str = ""
    key: str = ""  # the key the decision rests on ("" for none)

    @property
    def supersedes(self) -> bool:
        return self.verdict in SUPERSEDING

    @property
    def strong(self) -> bool:
        return self.strength is Strength.STRONG


EMPTY = ClinicalFacts()
__all__ = [
    "CODE_KINDS",
    "EMPTY",
    "ENDED",
    "NEVER_SUPERSEDES",
    "SUPERSEDING",
    "ClinicalFacts",
    "Context",
    "Decision",
    "Fact",
    "KeyKind",
    "Origin",
    "Role",
    "State",
    "Strength",
    "Verdict",
    "merge",
]
