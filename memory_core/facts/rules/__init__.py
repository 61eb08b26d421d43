"""The decision table: what a newer statement does to an older one of the same type, decided
from their clinical facts by an ordered table of small named rules (pure).

Each rule declares the memory types it applies to and returns a :class:`~.model.Decision` --
a verdict, its own id, the strength of its evidence and the evidence in plain words -- or None
to pass the pair on. The first rule that decides wins; the table ends with ``default.compatible``.
Principles (domain.md, "Clinical facts and keys"):

- no key in common -> ``compatible``, whatever the similarity; two different codes of one
  terminology are two things, whatever their texts share;
- a hypothetical, conditional, uncertain or other person's statement never supersedes;
- strong evidence -- the same key and an explicit change of its value or state -- may apply
  at once on an automatic type; weak evidence (a key shared only as an ingredient, a change
  word without a changed value, a paraphrase, an older statement that was itself uncertain)
  always goes to a reviewer.

:data:`TABLE` is the table; ``docs/verdicts.md`` says it in words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from ..assertion import (
    disputed,
    for_the_writers,
    hedges,
    inpatient_named,
    mood_unclear,
    proviso,
    reporter_pronoun,
)
from ..assertion_model import reasons_not_asserted
from ..classes import ClassChange
from ..lexicon import lexicon
from ..model import (
    ENDED,
    ClinicalFacts,
    Context,
    Decision,
    Fact,
    KeyKind,
    Origin,
    Role,
    State,
    Verdict,
    subject_kinds,
)
from ..reader import read
from ..text import parse
from .allergies import (
    _allergy_list,
    _allergy_lists_same,
    _allergy_refuted,
    _class_said_none,
    _reaction_change,
    _same_agent,
    _second_reaction,
    class_keys,
)
from .base import _LIST, SAFETY_TYPES, STRONG, WEAK, Pair, Rule, _compatible, name_of, said
from .conditions import (
    _condition_ended,
    _condition_episode,
    _condition_presence,
    _condition_progressed,
    _condition_restated,
    _condition_stage,
    _dated_episodes,
)
from .corrections import DOC as CORRECTS_DOC
from .corrections import RULE as CORRECTS_ID
from .corrections import correction, record_words
from .dates import out_of_time
from .drugs import (
    _drug_change_word,
    _drug_refuted,
    _drug_regimen,
    _drug_restart,
    _drug_same,
    _drug_stop,
    _orders,
    _two_orders,
)
from .gates import (
    CONTEXT_RULES,
    _codes_differ,
    _history_before_record,
    _newer_not_asserted,
    _nothing_shared,
    _other_person_statement,
    _passing_only,
    _question,
    _restated,
    _siblings,
    _two_places,
    _two_speakers,
    chat_label,
    conversational,
)
from .labs import (
    _lab_newer_value,
    _lab_other_measure,
    _lab_result,
    _lab_target,
    _lab_value,
    _plan_item,
)
from .responses import _response
from .slots import (
    _slot_addition,
    _slot_admitted,
    _slot_kinds,
    _slot_plan_restated,
    _slot_presence,
    _slot_state,
    _slot_value,
)

# --- the table ------------------------------------------------------------------------------------
ALL: frozenset[str] = frozenset()
MEDS = frozenset({"medication", "care_plan", "preference"})
LABS = frozenset({"lab_result", "vital_sign", "observation", "social"})
TARGETS = LABS | {"care_plan"}
CONDITIONS = frozenset({"condition", "observation"})
SAFETY = SAFETY_TYPES
SLOTS = frozenset({"social", "preference", "care_plan", "observation"})

#: The rule ids a row's decisions carry, where the row decides more than one thing.
DECIDES: dict[str, tuple[str, ...]] = {
    "context.not-asserted": tuple(f"context.{c.value.replace('_', '-')}" for c in CONTEXT_RULES),
    "allergy.empty-list": ("allergy.empty-list", "allergy.list-scope"),
    "allergy.list-restated": ("allergy.list-restated", "allergy.list-scope"),
    "question.answer": ("question.new-answer", "question.same-answer"),
    "allergy.refuted": ("allergy.refuted", "allergy.reinstated"),
    "reaction.another": ("reaction.another", "reaction.first", "reaction.added"),
    "reaction.class-member": ("reaction.class-member",),
    "reaction.changed": ("reaction.resolved", "reaction.recurred", "reaction.changed"),
    "allergy.same-agent": ("allergy.reaction-change", "allergy.same-agent"),
    "drug.regimen": ("drug.dose-change", "drug.frequency-change", "drug.formulation-change"),
    "plan.item": ("plan.done-or-cancelled", "plan.later-dose", "plan.new-timing"),
    "lab.target": ("lab.target", "lab.new-target", "lab.same-target"),
    "lab.value": ("lab.new-value", "lab.new-date", "lab.same-value"),
    "lab.result": ("lab.result-flip", "lab.same-result"),
    "lab.first-value": ("lab.first-value", "plan.restated"),
    "condition.ended": ("condition.refuted", "condition.resolved"),
    "condition.presence": ("condition.presence", "condition.recurred"),
    "condition.stage": ("condition.spread", "condition.new-stage", "condition.changed"),
    "slot.value": (
        "slot.single-valued", "slot.new-amount", "slot.scoped-value", "slot.another-value",
        "slot.new-entry", "slot.same-value", "slot.same-amount", "slot.past-amount",
    ),
    "slot.plan-restated": ("slot.two-items", "slot.plan-restated"),
    "response": (
        "response.refuted", "response.treatment-changed", "response.two-treatments",
        "response.outcome-changed", "response.two-outcomes", "response.added",
        "response.restated",
    ),
    "key.none-shared": ("key.none-shared", "words.same-subject", "statement.restated"),
}  # fmt: skip

_ROWS: tuple[Rule, ...] = (
    Rule("code.different", ALL, "two coded records with different codes are two things",
         _codes_differ),
    Rule("condition.progressed", CONDITIONS,
         "a diagnosis the older's condition progresses to (prediabetes, then diabetes)",
         _condition_progressed),
    Rule("reaction.class-member", SAFETY,
         "the older says a drug class caused nothing; the newer names a reaction to one of its "
         "drugs", _class_said_none),
    Rule("key.none-shared", ALL, "no key in common: compatible, whatever the similarity",
         _nothing_shared),
    Rule("context.not-asserted", ALL,
         "a hypothetical, conditional, uncertain or other person's statement supersedes nothing",
         _newer_not_asserted),
    Rule("history.before-record", ALL,
         "the newer is history dated before the older was recorded: it says nothing of now",
         _history_before_record),
    Rule("allergy.empty-list", frozenset({"allergy"}),
         "an empty allergy list and an allergy it covers", _allergy_list),
    Rule("allergy.list-restated", frozenset({"allergy"}), "the same empty list restated",
         _allergy_lists_same),
    Rule("key.in-passing", ALL, "a key named only in passing says nothing of that thing",
         _passing_only),
    Rule("context.other-person", ALL, "one statement is another person's fact",
         _other_person_statement),
    Rule("speaker.another", ALL, "two chat turns of two speakers, each about its own speaker",
         _two_speakers),
    Rule("statement.restated", ALL, "the same statement word for word", _restated),
    Rule("key.siblings", ALL, "two specific things that share only a broader one", _siblings),
    Rule("episode.dated-apart", ALL,
         "the same thing ended in both, each on its own date: two episodes of history",
         _dated_episodes),
    Rule("question.answer", ALL, "the same question with another answer (or the same one)",
         _question),
    Rule("qualifier.two-places", ALL,
         "two sites or sides of a finding, two times or settings of a reading: two facts",
         _two_places),
    Rule("allergy.refuted", SAFETY,
         "the same agent said not to cause it (delabelled, tolerated, entered in error)",
         _allergy_refuted),
    Rule("reaction.another", SAFETY, "the same agent, another reaction: two facts",
         _second_reaction),
    Rule("reaction.changed", SAFETY, "the same agent and reaction, resolved or changed",
         _reaction_change),
    Rule("allergy.same-agent", SAFETY, "the same agent restated", _same_agent),
    Rule("drug.combination-and-part", MEDS, "a combination and one of its ingredients: two orders",
         _orders),
    Rule("drug.refuted", MEDS, "the same drug said never taken or charted in error",
         _drug_refuted),
    Rule("drug.stop", MEDS, "the same drug stopped", _drug_stop),
    Rule("drug.restart", MEDS, "the same drug started again", _drug_restart),
    Rule("drug.two-orders", MEDS, "an as-needed order beside a scheduled one in another form",
         _two_orders),
    Rule("drug.regimen", MEDS, "a new dose, frequency or formulation of the same drug",
         _drug_regimen),
    Rule("drug.change-word", MEDS, "the same drug said to change, with no changed value",
         _drug_change_word),
    Rule("drug.same", MEDS, "the same drug restated", _drug_same),
    Rule("plan.item", frozenset({"care_plan", "immunization", "procedure"}),
         "a plan item done, cancelled, or due at another time", _plan_item),
    Rule("lab.other-measure", LABS, "a test and a broader one it belongs to: two measurements",
         _lab_other_measure),
    Rule("lab.target", TARGETS, "a target range is no result; a new target updates", _lab_target),
    Rule("lab.value", LABS, "a new value (or date) of the same test; the same value: duplicate",
         _lab_value),
    Rule("lab.result", LABS, "a qualitative result of the same test flipped or restated",
         _lab_result),
    Rule("lab.first-value", LABS, "a value where the older had none", _lab_newer_value),
    Rule("condition.ended", CONDITIONS, "the same condition resolved or refuted",
         _condition_ended),
    Rule("condition.presence", CONDITIONS, "the same condition denied / asserted",
         _condition_presence),
    Rule("condition.stage", CONDITIONS, "a new stage or severity of the same condition",
         _condition_stage),
    Rule("condition.another", CONDITIONS, "another episode of the condition (new, second)",
         _condition_episode),
    Rule("condition.restated", CONDITIONS, "the same condition restated", _condition_restated),
    Rule("slot.two-kinds", SLOTS, "two kinds of one slot are two facts", _slot_kinds),
    Rule("slot.addition", SLOTS, "an addition to a slot (also, another)", _slot_addition),
    Rule("slot.presence", SLOTS, "a slot denied in one statement and admitted in the other",
         _slot_presence),
    Rule("slot.value", SLOTS, "a single-valued slot restated with another value", _slot_value),
    Rule("slot.state-change", SLOTS, "a plan item's or habit's state changed", _slot_state),
    Rule("slot.plan-restated", SLOTS, "the same plan item restated", _slot_plan_restated),
    Rule("slot.admitted", SLOTS, "a slot denied by its value none, then said in other words",
         _slot_admitted),
    Rule("response", frozenset({"treatment_response"}),
         "the same treatment and outcome with another state", _response),
)  # fmt: skip
#: The table: the rows in order, each with the rule ids its decisions carry.
TABLE: tuple[Rule, ...] = tuple(replace(r, ids=DECIDES.get(r.id, ())) for r in _ROWS)

#: What a pair of chat turns takes where the table's evidence was weak (after the table).
CHAT = Rule(
    "chat.weak-evidence",
    ALL,
    "two chat turns (each labelled with a speaker's name): weak evidence is not raised",
    lambda p: None,
)

#: After the table: a newer note that says an earlier record of its type was wrong, where the
#: table found the two compatible (:mod:`.corrections`).
CORRECTS = Rule(CORRECTS_ID, ALL, CORRECTS_DOC, lambda p: None)

DEFAULT = Rule(
    "default.compatible",
    ALL,
    "no rule found one thing whose state changed: both stay",
    lambda p: None,
)


def rule_ids() -> tuple[str, ...]:
    """Every rule id a decision can carry, in table order (and the chat filter's, a change
    named in a note of another type and a change said of a drug class or a clipped name)."""
    ids = [i for r in (*TABLE, CHAT, CORRECTS, DEFAULT) for i in r.decides]
    return tuple(dict.fromkeys([*ids, ELSEWHERE, CLASS_NAMED, CLIPPED_NAME]))


def decide(
    older: ClinicalFacts,
    newer: ClinicalFacts,
    memory_type: str,
    older_text: str = "",
    newer_text: str = "",
    older_on: str = "",
    newer_on: str = "",
) -> Decision:
    """The first decision of the table on the pair, capped to weak where the older statement
    was itself uncertain, the newer is history or the newer is dated before ``older_on`` (the
    day the older was recorded; a month without its year is the last such month up to
    ``newer_on``, the day the newer was recorded); ``default.compatible`` when no rule decides."""
    return decide_row(older, newer, memory_type, older_text, newer_text, older_on, newer_on)[1]


def decide_row(
    older: ClinicalFacts,
    newer: ClinicalFacts,
    memory_type: str,
    older_text: str = "",
    newer_text: str = "",
    older_on: str = "",
    newer_on: str = "",
) -> tuple[Rule, Decision]:
    """:func:`decide`, with the row of the table that decided."""
    pair = Pair(older, newer, memory_type, older_text, newer_text, older_on, newer_on)
    for rule in rows_for(memory_type):
        d = rule.check(pair)
        if d is not None:
            d = _capped(d, pair)
            return (CHAT, _chat(d)) if _chat_noise(d, pair) else _corrected(rule, d, pair)
    d = _compatible(DEFAULT.id, "no rule found one thing whose state changed")
    return _corrected(DEFAULT, d, pair)


def _corrected(rule: Rule, d: Decision, pair: Pair) -> tuple[Rule, Decision]:
    """The row's decision, or -- where it left the two compatible and the newer note says an
    earlier record was wrong -- the correction's weak update (:mod:`.corrections`)."""
    if d.verdict is not Verdict.COMPATIBLE:
        return rule, d
    c = correction(pair, rule.id)
    if c is None or _chat_noise(c, pair):
        return rule, d
    return CORRECTS, c


@lru_cache(maxsize=1024)
def rows_for(memory_type: str) -> tuple[Rule, ...]:
    """The rows of :data:`TABLE` that apply to ``memory_type``, in table order: picked once per
    type (a back-scan decides tens of thousands of pairs; a pair that passes the whole table
    asked each of the 45 rows whether it applies)."""
    return tuple(rule for rule in TABLE if rule.applies(memory_type))


#: A note of another type (an adverse reaction, a response, an observation) that says a drug
#: was stopped or switched away from ("cough resolved after switching to losartan"): evidence
#: about the medication, always for a reviewer.
ELSEWHERE = "drug.stop-named-elsewhere"


def stopped_elsewhere(newer: ClinicalFacts, memory_type: str) -> tuple[Fact, ...]:
    """The drugs a statement of a type other than medication asserts were stopped (a switch
    away from one included) -- what may make a medication memory out of date."""
    if memory_type == "medication":
        return ()
    return tuple(
        f for f in newer.facts if f.kind is KeyKind.DRUG and f.state is State.STOPPED and f.asserted
    )


def decide_elsewhere(
    older: ClinicalFacts, stopped: Fact, newer_type: str, newer_text: str = ""
) -> Decision | None:
    """A medication memory (``older``) about a drug a note of another type says was stopped:
    an update, weak evidence -- a reviewer decides whether the order ended."""
    a = older.get(stopped.key)
    if a is None or a.role is not Role.SUBJECT or a.state in ENDED or not a.asserted:
        return None
    what = newer_type.replace("_", " ")
    article = "an" if what[:1] in "aeiou" else "a"
    shown = f' ("{newer_text[:80]}")' if newer_text else ""
    why = f"{article} {what} note says {name_of(a)} was stopped{shown}: {said(a)} → stopped"
    return Decision(Verdict.UPDATES, ELSEWHERE, WEAK, why, a.key)


#: A medicine named by its class with a stop or a change ("PPI stopped", "steroids down to
#: 10 mg", "the water tablet was stopped on Monday"): evidence about the patient's drugs of
#: that class, always for a reviewer (the statement does not say which drug).
CLASS_NAMED = "drug.class-named"
#: A medicine named by the first letters of its name ("levo increased to 0.125 mg", "Pred
#: weaned down to 15 mg"), which may begin several medicines' names: evidence about the
#: patient's drug whose name it begins, always for a reviewer.
CLIPPED_NAME = "drug.clipped-name"


def decide_by_class(
    older: ClinicalFacts, change: ClassChange, newer_text: str = "", older_text: str = ""
) -> Decision | None:
    """A medication memory (``older``) about a drug of a class a newer statement says was
    stopped or changed: an update, weak evidence -- a reviewer decides whether it is this
    drug's order that ended or changed. Of a clipped name, the table decides the pair with
    the clip read as the older order's drug ("amlo now 5 mg" as "amlodipine now 5 mg"): what
    would out-date that order is for a reviewer; the same dose again is nothing."""
    for a in older.facts:
        if a.key in change.keys and a.role is Role.SUBJECT and a.state not in ENDED and a.asserted:
            if change.clipped:
                return _by_clip(older, a, change, newer_text, older_text)
            what = "stopped" if change.state is State.STOPPED else "changed"
            shown = f' ("{newer_text[:80]}")' if newer_text else ""
            why = (
                f"a newer note says the patient's {change.words} was {what}{shown}; "
                f"{name_of(a)} ({said(a)}) is one ({change.name})"
            )
            return Decision(Verdict.UPDATES, CLASS_NAMED, WEAK, why, a.key)
    return None


def _by_clip(
    older: ClinicalFacts, a: Fact, change: ClassChange, newer_text: str, older_text: str
) -> Decision | None:
    """The table's decision on ``older`` with the clip in ``newer_text`` read as the name of
    ``a``'s drug, for a reviewer when it would out-date ``a``."""
    name = a.key.partition(":")[2]
    pattern = re.compile(rf"\b{re.escape(change.words)}\b")
    newer = pattern.sub(name, newer_text, count=1)
    d = decide(older, read(newer, "medication"), "medication", older_text, newer)
    if not d.supersedes or d.verdict is Verdict.DUPLICATE or d.key != a.key:
        return None
    why = (
        f'a newer note names "{change.words}" ("{newer_text[:80]}"), the first letters of '
        f"{change.name}; read as the patient's {name_of(a)} ({said(a)}): {d.evidence}"
    )
    return Decision(Verdict.UPDATES, CLIPPED_NAME, WEAK, why, a.key)


def _chat_noise(d: Decision, p: Pair) -> bool:
    """Between two chat turns (each labelled with a speaker's name: a conversation stored as
    memories) only strong evidence counts: weak evidence read from chat -- a paraphrase, a
    presence, a habit named again -- is not raised for a reviewer (REALTALK: 4.3 reviews per
    100 turns, nearly all of them small talk)."""
    return (
        d.supersedes
        and not d.strong
        and bool(chat_label(p.older_text))
        and bool(chat_label(p.newer_text))
        and (conversational(p.older_text) or conversational(p.newer_text))
    )


def _chat(d: Decision) -> Decision:
    return _compatible(CHAT.id, f"two chat turns; the evidence is weak ({d.evidence})", d.key)


def _capped(d: Decision, p: Pair) -> Decision:
    """Strong evidence becomes weak when either statement was read by a configured model only
    (what the offline reader did not read is for a reviewer), the older statement about the
    key was not asserted (an uncertain allergy confirmed is for a reviewer), the newer is
    history, the newer names the test only by its value's unit ("Down to 88 kg"), the newer
    says anywhere something it does not assert -- a question, a condition,
    a plan, reported speech, another person (:func:`..assertion.hedges`: an automatic change
    needs a statement that only asserts) --, the newer says an earlier record was wrong (a
    correction, whichever row read its change), the newer says the change holds only on a
    condition (:func:`..assertion.proviso`: "subject to bloods", "16 units when fasting sugars
    are under 4"), a chart slot's change opens with a verb that may be advice or a note of
    what was done ("Cut down to 14 units a week") -- :func:`_says_otherwise` --, the newer is
    dated before the older was recorded ("2019: omeprazole 40 mg BD for 8 weeks" read after
    "omeprazole 20 mg OD" was charted: an earlier course, not a change), or -- last, where no
    rule said why -- the learned assertion model reads the newer as not asserting
    (:func:`_second_opinion`)."""
    if d.strength is not STRONG or not d.key:
        return d
    if Origin.MODEL in (p.older.origin, p.newer.origin):  # what only a model read: a reviewer
        return Decision(d.verdict, d.rule, WEAK, f"{d.evidence}; read by a model only", d.key)
    a, b = p.older.get(d.key), p.newer.get(d.key)
    if (a is not None and not a.asserted) or (b is not None and Context.HISTORICAL in b.contexts):
        return Decision(d.verdict, d.rule, WEAK, d.evidence, d.key)
    named_by_unit = b is not None and not b.text and KeyKind.of(d.key) is KeyKind.LOINC
    if named_by_unit and p.newer.origin is Origin.TEXT:
        # "Down to 88 kg": the test named by its value's unit alone, no word of it
        why = f"{d.evidence}; the newer statement names the test only by its value's unit"
        return Decision(d.verdict, d.rule, WEAK, why, d.key)
    said = _says_otherwise(p, d.key) if d.verdict is not Verdict.DUPLICATE else ""
    if said:  # safe before clever: a reviewer decides
        return Decision(d.verdict, d.rule, WEAK, f"{d.evidence}; {said}", d.key)
    when = out_of_time(p, a, b)  # dated before the older, or from a month still ahead
    if when:
        return Decision(d.verdict, d.rule, WEAK, f"{d.evidence}; {when}", d.key)
    if KeyKind.of(d.key) is KeyKind.DRUG and _names_supplier(p.newer_text):
        # "no longer gets her levothyroxine from Boots": a change of where it comes from
        why = f"{d.evidence}; the newer statement names where the medicine comes from"
        return Decision(d.verdict, d.rule, WEAK, why, d.key)
    leaning = _second_opinion(p, d.key) if d.verdict is not Verdict.DUPLICATE else ()
    if leaning:
        words = ", ".join(f'"{w}"' for w in leaning)
        why = (
            f"{d.evidence}; the newer statement reads like one that does not assert a change "
            f"(the assertion model, learned from held-out statements: {words})"
        )
        return Decision(d.verdict, d.rule, WEAK, why, d.key)
    return d


def _says_otherwise(p: Pair, key: str) -> str:
    """Why the newer statement, though it reads a change, may not assert it as the patient's
    own change now, in words -- it also says what it does not assert, disputes the change,
    says whose it may be, says an earlier record was wrong, says the change holds only on a
    condition, or opens with a verb of either mood --; "" where it says none of these."""
    t = parse(p.newer_text)
    hedged = hedges(p.newer)
    if hedged:
        said = ", ".join(sorted(c.value.replace("_", " ") for c in hedged))
        return f"the newer statement also says what it does not assert ({said})"
    if disputed(t):
        return "the newer statement disputes the change in the same sentence"
    whom = for_the_writers(t)
    if whom:
        return f"the newer statement says it is {whom!r}: the patient, or another?"
    ward = inpatient_named(p.newer_text)
    if ward:
        return f"the newer statement names {ward!r}: the patient, or another?"
    said_by = reporter_pronoun(t)
    if said_by:
        return f"the newer statement says {said_by!r}: the patient, or the relative?"
    if record_words(p.newer_text):
        # "Wheelchair entry incorrect; walks with a frame": a correction is never applied at
        # once, whichever row read the change
        said = ", ".join(f'"{w}"' for w in dict.fromkeys(record_words(p.newer_text)))
        return f"the newer note says an earlier record was wrong ({said})"
    held = proviso(t, p.memory_type) if p.newer.origin is Origin.TEXT else ""
    if held:
        return f"the newer statement says it holds {held!r}: a standing change?"
    verb = mood_unclear(t) if KeyKind.of(key) is KeyKind.SLOT else ""
    if verb:
        return f"the newer statement opens with {verb!r}: advice, or what was done?"
    return ""


def _second_opinion(p: Pair, key: str) -> tuple[str, ...]:
    """The words for which the learned assertion model (:mod:`..assertion_model`) reads the
    newer statement as a question, a rule, a plan, history, reported speech, another person's
    or a thing only named -- what no phrase rule caught; ``()`` where it reads an assertion.
    Only the offline reader's statements are weighed (a coded record asserts by its status), and
    not a care plan's (a plan is what it states: "booked for 3 June" changes the plan) nor a
    question's new answer (said beside its question)."""
    if p.newer.origin is not Origin.TEXT or p.memory_type == "care_plan":
        return ()
    if KeyKind.of(key) is KeyKind.QUESTION:
        return ()
    return reasons_not_asserted(p.newer_text)


#: The chart slot whose words name where a medicine is supplied from.
_SUPPLIER = "pharmacy"


def _names_supplier(text: str) -> bool:
    """Whether ``text`` names a pharmacy as where a medicine comes from ("from Boots", "from
    the chemist", "from that pharmacy"): a drug's change said beside it may be a change of
    supplier, not of the drug. A pharmacy a prescription is sent to, or a pharmacy's own
    message, names no source."""
    t = parse(text)
    return any(
        m.value == _SUPPLIER and "from" in t.tokens[max(0, m.start - 2) : m.start]
        for m in lexicon().slot_triggers.find(t.tokens, t.raw)
    )


def index_keys(facts: ClinicalFacts, memory_type: str) -> frozenset[str]:
    """The keys a memory is found by as a candidate: what it is about, of its type's kinds
    (not what it names in passing)."""
    kinds = subject_kinds(memory_type)
    return frozenset(
        f.key
        for f in facts.facts
        if f.kind in kinds and (f.role is not Role.MENTION or f.key == _LIST)
    )


def reach_keys(facts: ClinicalFacts, memory_type: str) -> frozenset[str]:
    """The keys a new memory looks its candidates up by: its :func:`index_keys`, the
    precursors of the conditions it is about (conditions.json's ``follows``): a diagnosis of
    type 2 diabetes reaches the memory of prediabetes it progresses from; and, for an allergy
    or adverse reaction, its drugs' classes (a reaction to simvastatin reaches "no adverse
    reactions to statins")."""
    keys = index_keys(facts, memory_type)
    concepts = lexicon().concepts
    before = {
        f"{KeyKind.CONDITION.value}:{p}"
        for k in keys
        if KeyKind.of(k) is KeyKind.CONDITION
        for p in getattr(concepts.get(k.partition(":")[2]), "follows", ())
    }
    if memory_type in SAFETY:  # a reaction to a drug reaches "no reactions to <its class>"
        before |= {c for k in keys if KeyKind.of(k) is KeyKind.DRUG for c in class_keys(k)}
    return keys | before if before else keys


def _keys_of(facts: Iterable[Fact]) -> frozenset[str]:
    return frozenset(f.key for f in facts)


@lru_cache(maxsize=1)
def table_rows() -> tuple[tuple[str, str, str], ...]:
    """``(rule id, types, what it checks)`` for docs and the dashboard."""
    rows = [
        (r.id, ", ".join(sorted(r.types)) or "every type", r.doc) for r in (*TABLE, CHAT, DEFAULT)
    ]
    return tuple(rows)
