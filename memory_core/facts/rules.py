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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from . import units
from .lexicon import lexicon
from .model import (
    CODE_KINDS,
    ENDED,
    ClinicalFacts,
    Context,
    Decision,
    Fact,
    KeyKind,
    Origin,
    Role,
    State,
    Strength,
    Verdict,
    subject_kinds,
)
from .values import parts

if TYPE_CHECKING:
    from .text import Text

STRONG, WEAK = Strength.STRONG, Strength.WEAK
SAFETY_TYPES = frozenset({"allergy", "adverse_reaction"})
PLAN_SLOTS = ("referral ", "procedure ", "follow up")


@dataclass(frozen=True)
class Pair:
    """A candidate pair as the rules read it: both statements' facts and texts, the memory
    type, and the facts they share (of the kinds the type is about), older side first."""

    older: ClinicalFacts
    newer: ClinicalFacts
    memory_type: str
    older_text: str = ""
    newer_text: str = ""
    older_on: str = ""  # the day the older statement was recorded (YYYY-MM-DD), if known

    @property
    def kinds(self) -> frozenset[KeyKind]:
        return subject_kinds(self.memory_type)

    def shared(self) -> list[tuple[Fact, Fact]]:
        """``(older fact, newer fact)`` for every key both name, of the type's kinds."""
        return list(self._shared)

    def about(self) -> list[tuple[Fact, Fact]]:
        """The shared facts neither statement names only in passing."""
        return list(self._about)

    # read once per pair (every row of the table asks): a back-scan decides thousands of pairs
    @cached_property
    def _shared(self) -> tuple[tuple[Fact, Fact], ...]:
        return tuple(_shared(self.older, self.newer, self.kinds))

    @cached_property
    def _about(self) -> tuple[tuple[Fact, Fact], ...]:
        return tuple((a, b) for a, b in self._shared if Role.MENTION not in (a.role, b.role))

    def of_kind(self, *kinds: KeyKind) -> list[tuple[Fact, Fact]]:
        return [(a, b) for a, b in self._about if a.kind in kinds]


def _shared(
    older: ClinicalFacts, newer: ClinicalFacts, kinds: frozenset[KeyKind]
) -> list[tuple[Fact, Fact]]:
    mine = {f.key: f for f in older.facts if f.kind in kinds}
    return [(mine[f.key], f) for f in newer.facts if f.key in mine]


@dataclass(frozen=True)
class Rule:
    """One row of the table: ``id``, the memory types it applies to (empty: every type), what
    it checks (``doc``, one line for docs/verdicts.md), the check, and the rule ids its
    decisions carry (:data:`DECIDES`; its own id when it names no others)."""

    id: str
    types: frozenset[str]
    doc: str
    check: Callable[[Pair], Decision | None]

    def applies(self, memory_type: str) -> bool:
        return not self.types or memory_type in self.types

    @property
    def decides(self) -> tuple[str, ...]:
        return DECIDES.get(self.id, (self.id,))


def _d(verdict: Verdict, rule: str, strength: Strength, evidence: str, key: str = "") -> Decision:
    return Decision(verdict, rule, strength, evidence, key)


def _compatible(rule: str, evidence: str, key: str = "") -> Decision:
    return Decision(Verdict.COMPATIBLE, rule, Strength.NONE, evidence, key)


# --- how facts are said in evidence ---------------------------------------------------------------
_NOUN = {
    KeyKind.DRUG: "drug",
    KeyKind.LOINC: "test",
    KeyKind.CONDITION: "condition",
    KeyKind.ALLERGEN: "allergen",
    KeyKind.SLOT: "",
    KeyKind.SNOMED: "SNOMED code",
    KeyKind.RXNORM: "RxNorm code",
    KeyKind.CVX: "vaccine code",
    KeyKind.QUESTION: "question",
}


def name_of(f: Fact) -> str:
    """A key as a clinician reads it: "metformin", "HbA1c (LOINC 4548-4)", "household"."""
    if f.kind is KeyKind.LOINC:
        analyte = lexicon().analyte_for_code(f.name)
        return f"{analyte.id if analyte else 'test'} (LOINC {f.name})"
    return f.name


def said(f: Fact) -> str:
    """What a statement says of a thing: its value's parts and its state."""
    bits = [v for k, v in parts(f.value).items() if v and k != "entry"]
    if f.state is not None and f.state is not State.ACTIVE:
        bits.append(f.state.value)
    for c in sorted(f.contexts):
        bits.append(c.value.replace("_", " "))
    return ", ".join(bits) or "named"


def evidence(a: Fact, b: Fact, what: str = "") -> str:
    noun = _NOUN.get(a.kind, "")
    head = f"same {noun} {name_of(a)}".replace("  ", " ") if noun else f"same {name_of(a)}"
    tail = f" ({what})" if what else ""
    return f"{head}: {said(a)} → {said(b)}{tail}"


# --- gates ----------------------------------------------------------------------------------------
def _codes_differ(p: Pair) -> Decision | None:
    """Two coded records with no code in common in a terminology both use are two things."""
    if not (p.older.origin is Origin.CODED and p.newer.origin is Origin.CODED):
        return None
    a = {c for c in p.older.codes if KeyKind.of(c) in CODE_KINDS | {KeyKind.LOINC}}
    b = {c for c in p.newer.codes if KeyKind.of(c) in CODE_KINDS | {KeyKind.LOINC}}
    systems = {KeyKind.of(c) for c in a} & {KeyKind.of(c) for c in b}
    if not systems or a & b:
        return None
    shown = ", ".join(sorted(a)) + " / " + ", ".join(sorted(b))
    return _compatible("code.different", f"two different codes: {shown}")


def _nothing_shared(p: Pair) -> Decision | None:
    """No key in common: compatible -- unless one statement names no key at all (the reader
    could not key it), where its words may still name the other's subject (weak evidence, for
    a reviewer: :func:`_by_words`)."""
    if any(Role.MENTION not in (a.role, b.role) or a.role != b.role for a, b in p.shared()):
        return None  # (two entries of one list, both named in passing, share nothing)
    kinds = p.kinds
    keyed_a = any(f.kind in kinds and f.role is not Role.MENTION for f in p.older.facts)
    keyed_b = any(f.kind in kinds and f.role is not Role.MENTION for f in p.newer.facts)
    if not (keyed_a and keyed_b):
        by_words = _by_words(p)
        if by_words is not None:
            return by_words
    return _compatible("key.none-shared", "the two statements name no key in common")


#: Words that say a statement's subject changed, for statements the lexicon cannot key.
_CHANGE_RULES = frozenset(
    {"stopped", "started", "changed", "resolved", "refuted", "done", "cancelled"}
)


def _by_words(p: Pair) -> Decision | None:
    """Statements the reader could not key, read by their words: most of the shorter's words
    in the other's, and the newer says something changed (a state word, another number, a
    negation the older lacks) -- an update; nearly the same words and numbers -- a duplicate.
    Weak evidence only: a reviewer decides."""
    from .text import parse, rest_words

    if p.newer_text.rstrip().endswith("?"):
        return None  # a question asserts nothing
    restated = _restated(p)
    if restated is not None:
        return restated  # the same words again: a restatement, as for keyed statements
    wa, wb = rest_words(p.older_text, p.memory_type), rest_words(p.newer_text, p.memory_type)
    small, large = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    alike = _alike(small, large)
    shared = len(alike)
    if shared < 2 or 2 * shared < len(small) or 3 * shared < len(large):
        # most of the shorter's words and a third of the longer's: two long chat turns share a
        # few words by chance
        return None
    ta, tb = parse(p.older_text), parse(p.newer_text)
    lex = lexicon()
    # a change counts where it is said of the shared words (within a few words of one): "I'm
    # gonna start my basketball game" changes nothing of "see you tomorrow, Kate"
    near = _near(tb, alike)
    older_states = {m.value.state for m in lex.states.find(ta.tokens, ta.raw)}
    states = {
        m.value.state
        for m in lex.states.find(tb.tokens, tb.raw)
        if near & set(range(m.start, m.end)) and m.value.state not in older_states
    }
    numbers_a = {w for w in ta.tokens if w[:1].isdigit()}
    numbers_b = {i: w for i, w in enumerate(tb.tokens) if w[:1].isdigit()}
    numbers_near = {w for i, w in numbers_b.items() if i in near}
    negated = _negations(tb, near) != _negations(ta, _near(ta, alike))
    words = f"{shared} of {len(small)} words in common"
    changed = bool(numbers_a and numbers_near) and numbers_a != numbers_near
    if states & _CHANGE_RULES or changed or negated:
        return _d(
            Verdict.UPDATES, "words.same-subject", WEAK, f"read from words: {words}, a change"
        )
    if 4 * shared >= 3 * len(large) and numbers_a == set(numbers_b.values()):
        return _d(Verdict.DUPLICATE, "words.same-subject", WEAK, f"read from words: {words}")
    return None


#: How far from a shared word a change may be said and still be said of it.
NEAR_WORDS = 4


def _near(t: Text, shared: frozenset[str] | set[str]) -> set[int]:
    """The token positions within :data:`NEAR_WORDS` of a shared word (its stem, or the stem's
    first five letters)."""
    from .text import stem

    heads = {w[:5] for w in shared if len(w) >= 5}
    stems = [stem(w) for w in t.tokens]
    at = [i for i, w in enumerate(stems) if w in shared or (len(w) >= 5 and w[:5] in heads)]
    return {j for i in at for j in range(i - NEAR_WORDS, i + NEAR_WORDS + 1)}


def _alike(small: frozenset[str], large: frozenset[str]) -> set[str]:
    """The words of ``small`` found in ``large``, as they are or by their first five letters
    (word stems, :func:`.text.rest_words`); empty when the two share no word."""
    heads = {w[:5] for w in large if len(w) >= 5}
    return {w for w in small if w in large or (len(w) >= 5 and w[:5] in heads)}


def _negations(t: Text, near: set[int] | None = None) -> int:
    """Negation words of ``t`` (at the positions ``near``, when given)."""
    return sum(
        1
        for i, w in enumerate(t.tokens)
        if w in ("no", "not", "never", "denies", "without", "none") and (near is None or i in near)
    )


def _newer_not_asserted(p: Pair) -> Decision | None:
    """Every shared fact of the newer statement is hypothetical, uncertain or another
    person's: it supersedes nothing."""
    shared = p.shared()
    if any(b.asserted for _a, b in shared):
        return None
    _a, b = shared[0]
    ctx = ", ".join(sorted(c.value.replace("_", " ") for c in b.contexts))
    return _compatible(
        f"context.{_context_id(b.contexts)}",
        f"{name_of(b)} is {ctx} in the newer statement: it supersedes nothing",
        b.key,
    )


#: The order in which a fact's contexts name the rule of a statement that asserts nothing.
CONTEXT_RULES = (
    Context.OTHER_PERSON,
    Context.QUESTION,
    Context.DEFINITION,
    Context.INSTRUCTION,
    Context.REPORTED,
    Context.HYPOTHETICAL,
    Context.FUTURE,
    Context.UNCERTAIN,
)


def _context_id(contexts: frozenset[Context]) -> str:
    for c in CONTEXT_RULES:
        if c in contexts:
            return c.value.replace("_", "-")
    return "not-asserted"


def _passing_only(p: Pair) -> Decision | None:
    """A key the newer (or older) statement names only in passing ("added to metformin", "while
    on furosemide", a rescue medicine beside an allergy) says nothing of that thing."""
    if p.about() or not p.shared():
        return None
    a, _b = p.shared()[0]
    return _compatible(
        "key.in-passing",
        f"{name_of(a)} is named in passing ({'older' if a.role is Role.MENTION else 'newer'}"
        " statement); nothing is said of it",
        a.key,
    )


QUALIFIER_DIMENSIONS = ("side", "site", "when", "exertion", "setting", "meal", "specimen", "sample")


def _qualifier_clash(older: str, newer: str) -> str:
    """The qualifier both values give and disagree on ("side: left / right"), or ""."""
    qa, qb = dict(_qualifiers(older)), dict(_qualifiers(newer))
    for dim in QUALIFIER_DIMENSIONS:
        x, y = qa.get(dim), qb.get(dim)
        if x and y and not x & y:
            return f"{dim}: {'+'.join(sorted(x))} / {'+'.join(sorted(y))}"
    return ""


@lru_cache(maxsize=65_536)
def _qualifiers(value: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each qualifier a value gives (one fact's, or several joined by "; "), with the set of
    its values over every piece that names it."""
    dims: dict[str, set[str]] = {}
    for piece in value.split("; "):
        name, eq, v = piece.partition("=")
        if eq and name in QUALIFIER_DIMENSIONS:
            dims.setdefault(name, set()).update(x for x in v.split("+") if x)
    return tuple((k, frozenset(v)) for k, v in dims.items())


def _two_places(p: Pair) -> Decision | None:
    """Two findings at two sites or sides, or two readings at two times or settings, are two
    facts ("osteoarthritis, left knee" / "right hip"; "home BP" / "clinic BP"): what the
    statements' shared things say of where and when, taken together, disagrees."""
    about = p.about()
    if not about or _spread(p.newer_text):
        return None
    older = "; ".join(a.value for a, _b in about if a.value)
    newer = "; ".join(b.value for _a, b in about if b.value)
    clash = _qualifier_clash(older, newer)
    if clash:
        a, _b = about[0]
        return _compatible("qualifier.two-places", f"{name_of(a)}: {clash}", a.key)
    return None


@lru_cache(maxsize=65_536)
def _spread(text: str) -> bool:
    """The newer says the finding spread ("the hives have spread to his legs"): its new sites
    update it rather than name another finding."""
    from .text import parse

    t = parse(text)
    return bool(lexicon().spread.find(t.tokens, t.raw))


def _question(p: Pair) -> Decision | None:
    """The same question with another answer updates (the newest answer wins); the same
    answer is a duplicate."""
    for a, b in p.of_kind(KeyKind.QUESTION):
        x, y = parts(a.value).get("answer", ""), parts(b.value).get("answer", "")
        if x and y and x != y:
            return _d(Verdict.UPDATES, "question.new-answer", STRONG, evidence(a, b), a.key)
        if x and x == y:
            return _d(Verdict.DUPLICATE, "question.same-answer", STRONG, evidence(a, b), a.key)
    return None


def _restated(p: Pair) -> Decision | None:
    """The same statement again, word for word -- case, punctuation, spacing, stop words and a
    word of now ("still", "now", "currently") aside: a duplicate."""
    a, b = _plain_words(p.older_text), _plain_words(p.newer_text)
    if a and a == b:
        return _d(Verdict.DUPLICATE, "statement.restated", STRONG, "the same statement again")
    return None


@lru_cache(maxsize=65_536)
def _plain_words(text: str) -> tuple[str, ...]:
    """A statement's words without stop words and words of now -- but never a word of a state
    or a modifier ("no longer", "not", "denies", "stopped" stay: they change what is said)."""
    from .text import SPEAKER, parse

    lex = lexicon()
    t = parse(text)
    now_spans = {(m.start, m.end) for m in lex.now_words.find(t.tokens, t.raw)}
    now = {i for a, b in now_spans for i in range(a, b)}
    kept = {i for m in lex.context.find(t.tokens, t.raw) for i in range(m.start, m.end)}
    kept |= {
        i
        for m in lex.states.find(t.tokens, t.raw)
        if (m.start, m.end) not in now_spans or m.value.state != "changed"
        for i in range(m.start, m.end)
    }  # "now", "these days" say no state of their own; "no longer", "increased" do
    words = tuple(
        (i, w)
        for i, w in enumerate(t.tokens)
        if i in kept or (i not in now and (w not in lex.stopwords or w[0].isdigit()))
    )
    # a speaker's label ("Emi: ...") says who, not what: a turn of nothing but stop words says
    # nothing to restate ("Emi: They really are" / "Emi: Will do!")
    said = [w for i, w in words if not (i == 0 and SPEAKER.match(text))]
    return tuple(w for _i, w in words) if said else ()


def _siblings(p: Pair) -> Decision | None:
    """Two specific things that share only a broader one (type 1 / type 2 diabetes; two
    products with one ingredient) are two things."""
    about = p.about()
    if about and all(a.role is Role.INGREDIENT and b.role is Role.INGREDIENT for a, b in about):
        a, _b = about[0]
        return _compatible("key.siblings", f"two kinds of {name_of(a)}", a.key)
    return None


def _other_person_statement(p: Pair) -> Decision | None:
    """A statement whose facts are another person's is not the patient's: nothing in common."""
    older_other = all(Context.OTHER_PERSON in a.contexts for a, _b in p.about())
    newer_other = all(Context.OTHER_PERSON in b.contexts for _a, b in p.about())
    if p.about() and older_other != newer_other:
        return _compatible("context.other-person", "one statement is another person's fact")
    return None


# --- drugs ----------------------------------------------------------------------------------------
def _drugs(p: Pair) -> list[tuple[Fact, Fact]]:
    return p.of_kind(KeyKind.DRUG, KeyKind.RXNORM)


def _orders(p: Pair) -> Decision | None:
    """A combination and one of its ingredients on a medication list are two orders
    ("buprenorphine/naloxone" and a naloxone kit)."""
    drugs = _drugs(p)
    combos = any("/" in f.name for f in (*p.older.facts, *p.newer.facts) if f.kind is KeyKind.DRUG)
    parts_only = combos and drugs and all(_ingredient(a, b) for a, b in drugs)
    if p.memory_type == "medication" and parts_only and not any(_changed(b) for _a, b in drugs):
        a, b = drugs[0]
        return _compatible("drug.combination-and-part", evidence(a, b, "two products"), a.key)
    return None


def _strong_for(p: Pair, ok: bool = True) -> Strength:
    """Drug evidence is strong on a medication list only: in a plan, "hold warfarin" and
    "resume warfarin after surgery" are two steps, for a reviewer to join."""
    return STRONG if ok and p.memory_type == "medication" else WEAK


def _drug_stop(p: Pair) -> Decision | None:
    for a, b in _drugs(p):
        if b.state is State.STOPPED and a.state is not State.STOPPED:
            strength = _strong_for(p, _same_order(a, b))
            why = "" if strength is STRONG else "the stop names another dose: maybe another order"
            return _d(Verdict.UPDATES, "drug.stop", strength, evidence(a, b, why), a.key)
    return None


def _same_order(a: Fact, b: Fact) -> bool:
    """The stop is of the order the older names: no dose or form on the newer side, or the
    same ones."""
    pa, pb = parts(a.value), parts(b.value)
    return all(not pb.get(k) or not pa.get(k) or pa[k] == pb[k] for k in ("dose", "form"))


def _drug_refuted(p: Pair) -> Decision | None:
    """The newer says the drug was never taken or was charted in error: a correction, for a
    reviewer."""
    for a, b in _drugs(p):
        if (b.state is State.REFUTED or _negated(b)) and not (
            a.state is State.REFUTED or _negated(a)
        ):
            return _d(Verdict.CONTRADICTS, "drug.refuted", WEAK, evidence(a, b), a.key)
    return None


def _drug_restart(p: Pair) -> Decision | None:
    for a, b in _drugs(p):
        if a.state is State.STOPPED and b.state in (State.STARTED, State.ACTIVE, State.CHANGED):
            return _d(Verdict.UPDATES, "drug.restart", _strong_for(p), evidence(a, b), a.key)
    return None


def _two_orders(p: Pair) -> Decision | None:
    """An as-needed order beside a scheduled one in another form ("nitroglycerin SL PRN" and a
    nitroglycerin patch) are two orders of one drug."""
    for a, b in _drugs(p):
        pa, pb = parts(a.value), parts(b.value)
        prn = (pa.get("freq") == "as needed") != (pb.get("freq") == "as needed")
        forms = pa.get("form") and pb.get("form") and pa["form"] != pb["form"]
        if prn and forms and not _changed(b):
            return _compatible("drug.two-orders", evidence(a, b, "two orders"), a.key)
    return None


def _changed(f: Fact) -> bool:
    return f.state in (State.CHANGED, State.STARTED, State.STOPPED)


def _drug_regimen(p: Pair) -> Decision | None:
    """A new dose, frequency or formulation of the same drug."""
    for a, b in _drugs(p):
        pa, pb = parts(a.value), parts(b.value)
        for part, rule in (("dose", "drug.dose-change"), ("freq", "drug.frequency-change")):
            if pa.get(part) and pb.get(part) and pa[part] != pb[part]:
                comparable = part != "dose" or _unit_of(pa[part]) == _unit_of(pb[part])
                strength = _strong_for(p, comparable and not _ingredient(a, b))
                return _d(Verdict.UPDATES, rule, strength, evidence(a, b), a.key)
        if pb.get("form") and pa.get("form") != pb["form"] and (pa.get("form") or _changed(b)):
            strength = _strong_for(p, _changed(b) and not _ingredient(a, b))
            return _d(Verdict.UPDATES, "drug.formulation-change", strength, evidence(a, b), a.key)
    return None


def _unit_of(dose: str) -> str:
    """A dose's unit ("500 mg" -> "mg"; "2 tabs" -> "tabs"): a strength and a count of tablets
    are no two values of one thing."""
    return dose.partition(" ")[2]


def _ingredient(a: Fact, b: Fact) -> bool:
    return Role.INGREDIENT in (a.role, b.role)


def _drug_change_word(p: Pair) -> Decision | None:
    """The newer says the drug changed (started, increased, switched) with no changed value."""
    for a, b in _drugs(p):
        if _changed(b) and b.state != a.state:
            return _d(Verdict.UPDATES, "drug.change-word", WEAK, evidence(a, b), a.key)
    return None


def _drug_same(p: Pair) -> Decision | None:
    for a, b in _drugs(p):
        if a.state == b.state:
            explicit = bool(parts(a.value).get("dose")) and a.value == b.value
            strength = _strong_for(p, explicit and not _ingredient(a, b))
            return _d(Verdict.DUPLICATE, "drug.same", strength, evidence(a, b), a.key)
    return None


# --- lab results and vitals -----------------------------------------------------------------------
def _labs(p: Pair) -> list[tuple[Fact, Fact]]:
    return [(a, b) for a, b in p.of_kind(KeyKind.LOINC) if not _ingredient(a, b)]


def _lab_other_measure(p: Pair) -> Decision | None:
    """A test and a broader one it belongs to (a fasting glucose and a glucose, an OGTT's
    glucose) are two measurements."""
    labs = p.shared()
    labs = [(a, b) for a, b in labs if a.kind is KeyKind.LOINC]
    if labs and all(_ingredient(a, b) for a, b in labs) and not _labs_exact(p):
        a, b = labs[0]
        return _compatible("lab.other-measure", evidence(a, b, "two measurements"), a.key)
    return None


def _labs_exact(p: Pair) -> list[tuple[Fact, Fact]]:
    return [(a, b) for a, b in _labs(p) if not _ingredient(a, b)]


def _lab_target(p: Pair) -> Decision | None:
    """A target is no result; two targets of one test: a new one updates, the same one is a
    duplicate."""
    for a, b in _labs(p):
        ta, tb = parts(a.value).get("target"), parts(b.value).get("target")
        if bool(ta) != bool(tb):
            return _compatible("lab.target", evidence(a, b, "a target is no result"), a.key)
        if ta and tb:
            if _same_number(ta, tb):
                return _d(Verdict.DUPLICATE, "lab.same-target", STRONG, evidence(a, b), a.key)
            return _d(Verdict.UPDATES, "lab.new-target", STRONG, evidence(a, b), a.key)
    return None


def _lab_value(p: Pair) -> Decision | None:
    """A new value of the same test updates, whatever units the two were written in (strong
    where both convert to the test's unit, or are written alike, and say the same of where and
    when); the same value on another date is a new measurement; the same value and date a
    duplicate."""
    for a, b in _labs(p):
        pa, pb = parts(a.value), parts(b.value)
        if pa.get("value") and pb.get("value"):
            same = _same_value(a, pa["value"], pb["value"])
            if not same:
                ok = same is not None and _same_places(pa, pb)
                why = "" if same is not None else "the two values' units cannot be compared"
                strength = STRONG if ok else WEAK
                return _d(Verdict.UPDATES, "lab.new-value", strength, evidence(a, b, why), a.key)
            if a.date and b.date and a.date != b.date:
                return _d(Verdict.UPDATES, "lab.new-date", STRONG, _dated(a, b), a.key)
            return _d(Verdict.DUPLICATE, "lab.same-value", STRONG, evidence(a, b), a.key)
    return None


def _same_places(pa: dict[str, str], pb: dict[str, str]) -> bool:
    """Both readings say the same of where and when (or neither says): one said "after her
    run" and the other nothing may be two readings."""
    return all(pa.get(d) == pb.get(d) for d in QUALIFIER_DIMENSIONS)


def _same_value(f: Fact, x: str, y: str) -> bool | None:
    """Whether two values of ``f``'s test are one (:func:`.units.same_value`: converted to the
    test's unit, within rounding); None when their units cannot be compared."""
    lex = lexicon()
    analyte = lex.analyte_for_code(f.name) if f.kind is KeyKind.LOINC else None
    return units.same_value(lex, analyte, x, y)


def _same_number(x: str, y: str) -> bool:
    """Two targets are one number (a target's unit is its test's)."""
    try:
        return float(x.split(" ")[0]) == float(y.split(" ")[0])
    except ValueError:
        return x == y


def _dated(a: Fact, b: Fact) -> str:
    return f"same test {name_of(a)}: {said(a)} on {a.date} → {said(b)} on {b.date}"


def _lab_result(p: Pair) -> Decision | None:
    for a, b in _labs(p):
        ra, rb = parts(a.value).get("result"), parts(b.value).get("result")
        if ra and rb:
            if ra != rb:
                return _d(Verdict.UPDATES, "lab.result-flip", STRONG, evidence(a, b), a.key)
            return _d(Verdict.DUPLICATE, "lab.same-result", STRONG, evidence(a, b), a.key)
    return None


def _lab_newer_value(p: Pair) -> Decision | None:
    for a, b in _labs(p):
        pa, pb = parts(a.value), parts(b.value)
        if (pb.get("value") or pb.get("result")) and not (pa.get("value") or pa.get("result")):
            return _d(Verdict.UPDATES, "lab.first-value", WEAK, evidence(a, b), a.key)
        if p.memory_type == "care_plan" and a.state == b.state and not (pa or pb):
            return _d(Verdict.DUPLICATE, "plan.restated", WEAK, evidence(a, b), a.key)
    return None


def _plan_item(p: Pair) -> Decision | None:
    """A plan's test, procedure or follow-up: done or cancelled, due at another time, or the
    same item restated."""
    if p.memory_type != "care_plan":
        return None
    for a, b in p.of_kind(KeyKind.LOINC, KeyKind.SLOT, KeyKind.DRUG):
        if a.key == _LIST:
            continue
        ta, tb = parts(a.value).get("timing"), parts(b.value).get("timing")
        if b.state in (State.DONE, State.CANCELLED, State.REFUTED) and b.state != a.state:
            return _d(Verdict.UPDATES, "plan.done-or-cancelled", STRONG, evidence(a, b), a.key)
        if ta and tb and ta != tb:
            strength = STRONG if b.state is State.CHANGED else WEAK
            return _d(Verdict.UPDATES, "plan.new-timing", strength, evidence(a, b), a.key)
    return None


# --- conditions -----------------------------------------------------------------------------------
def _conditions(p: Pair) -> list[tuple[Fact, Fact]]:
    return p.of_kind(KeyKind.CONDITION, KeyKind.SNOMED)


def _negated(f: Fact) -> bool:
    return Context.NEGATED in f.contexts


def _condition_ended(p: Pair) -> Decision | None:
    for a, b in _conditions(p):
        if b.state is State.REFUTED and a.state is not State.REFUTED:
            return _d(Verdict.CONTRADICTS, "condition.refuted", STRONG, evidence(a, b), a.key)
        if b.state is State.RESOLVED and a.state not in ENDED:
            return _d(Verdict.UPDATES, "condition.resolved", STRONG, evidence(a, b), a.key)
    return None


def _condition_presence(p: Pair) -> Decision | None:
    """One statement says the condition is there, the other that it is not ("denies chest
    pain" / "chest pain on exertion"; "HTN" / "no hypertension")."""
    for a, b in _conditions(p):
        if _negated(a) != _negated(b):
            verdict = Verdict.UPDATES if _negated(a) else Verdict.CONTRADICTS
            return _d(verdict, "condition.presence", WEAK, evidence(a, b), a.key)
        if a.state in ENDED and b.state not in ENDED:
            return _d(Verdict.UPDATES, "condition.recurred", WEAK, evidence(a, b), a.key)
    return None


def _condition_stage(p: Pair) -> Decision | None:
    for a, b in _conditions(p):
        if _spread(p.newer_text):
            return _d(Verdict.UPDATES, "condition.spread", STRONG, evidence(a, b), a.key)
        pa, pb = parts(a.value), parts(b.value)
        common = [k for k in pa if k in pb and pa[k] != pb[k] and k not in QUALIFIER_DIMENSIONS]
        if common:
            return _d(Verdict.UPDATES, "condition.new-stage", STRONG, evidence(a, b), a.key)
        if b.state is State.CHANGED:
            return _d(Verdict.UPDATES, "condition.changed", WEAK, evidence(a, b), a.key)
    return None


def _condition_episode(p: Pair) -> Decision | None:
    """The newer names another episode or another one of the condition ("new DVT", "a second
    UTI"): two facts."""
    for a, b in _conditions(p):
        if _additions(p.newer_text) and b.state not in ENDED and b.state is not State.CHANGED:
            return _compatible("condition.another", evidence(a, b, "another one"), a.key)
    return None


#: States that close an episode of something (a course stopped, an illness resolved, a plan item
#: done): two statements of one, each on its own date, are two episodes.
EPISODE_ENDS = ENDED | {State.DONE}


def _dated_episodes(p: Pair) -> Decision | None:
    """The same thing ended in both statements, each on a date of its own ("acute bronchitis,
    resolved 2015-06-04" / "..., resolved 2016-03-29"; two antenatal blood tests done): two
    episodes, both true history -- neither replaces the other, nothing for a reviewer."""
    for a, b in p.about():
        if a.state is b.state and a.state in EPISODE_ENDS and "" != a.date != b.date != "":
            return _compatible(
                "episode.dated-apart", evidence(a, b, "two episodes, dated apart"), a.key
            )
    return None


def _condition_restated(p: Pair) -> Decision | None:
    for a, b in _conditions(p):
        if a.state == b.state:
            return _d(Verdict.DUPLICATE, "condition.restated", WEAK, evidence(a, b), a.key)
    return None


# --- allergies and reactions ----------------------------------------------------------------------
_LIST = "slot:allergy list"


def _allergy_list(p: Pair) -> Decision | None:
    """An empty allergy list ("NKDA") and an allergy it covers: the list changed, or the
    allergy is said not to be there."""
    a, b = p.older.get(_LIST), p.newer.get(_LIST)
    if a is None or b is None or Role.MENTION not in (a.role, b.role) or a.role == b.role:
        return None
    empty, entry = (a, b) if a.role is Role.SUBJECT else (b, a)
    scope = set(parts(empty.value).get("value", "").split("+")) or {"drug"}
    covered = set(parts(entry.value).get("entry", "drug").split("+"))
    if not (covered & (scope - {""}) or scope == {""}):
        return _compatible("allergy.list-scope", "the empty list does not cover this allergy")
    verdict = Verdict.UPDATES if empty is a else Verdict.CONTRADICTS
    words = "no known allergies → an allergy" if empty is a else "an allergy → no known allergies"
    return _d(verdict, "allergy.empty-list", STRONG, f"allergy list: {words}", _LIST)


def _allergy_lists_same(p: Pair) -> Decision | None:
    a, b = p.older.get(_LIST), p.newer.get(_LIST)
    if a is None or b is None or a.role is not Role.SUBJECT or b.role is not Role.SUBJECT:
        return None
    if parts(a.value).get("value") == parts(b.value).get("value"):
        return _d(Verdict.DUPLICATE, "allergy.list-restated", STRONG, evidence(a, b), _LIST)
    return _compatible("allergy.list-scope", "two empty lists of different scope")


def _agents(p: Pair) -> list[tuple[Fact, Fact]]:
    return p.of_kind(KeyKind.ALLERGEN, KeyKind.DRUG, KeyKind.RXNORM, KeyKind.SNOMED)


def _allergy_refuted(p: Pair) -> Decision | None:
    for a, b in _agents(p):
        if b.state is State.REFUTED or (_negated(b) and not _negated(a)):
            return _d(Verdict.CONTRADICTS, "allergy.refuted", STRONG, evidence(a, b), a.key)
        if a.state is State.REFUTED:
            return _d(Verdict.UPDATES, "allergy.reinstated", WEAK, evidence(a, b), a.key)
    return None


def _reactions(f: ClinicalFacts) -> dict[str, Fact]:
    return {x.key: x for x in f.facts if x.kind is KeyKind.CONDITION and x.role is Role.SUBJECT}


def _additions(text: str) -> bool:
    from .text import parse

    t = parse(text)
    return bool(lexicon().additions.find(t.tokens, t.raw))


def _second_reaction(p: Pair) -> Decision | None:
    """The same agent with reactions that share none, or a newer one said to be another ("also",
    "new"): two facts."""
    agents = _agents(p)
    if not agents:
        return None
    ra, rb = _reactions(p.older), _reactions(p.newer)
    a, b = agents[0]
    if p.memory_type == "allergy" and not _additions(p.newer_text):
        return None  # an allergy is its agent's: another reaction restates or changes it
    if ra and rb and not ra.keys() & rb.keys():
        return _compatible("reaction.another", evidence(a, b, "a second reaction"), a.key)
    if not ra.keys() & rb.keys() and _words_apart(p):
        return _compatible("reaction.another", evidence(a, b, "another reaction, by its words"))
    if rb.keys() - ra.keys() and _additions(p.newer_text) and not _changed(b):
        return _compatible("reaction.added", evidence(a, b, "a reaction added"), a.key)
    return None


def _words_apart(p: Pair) -> bool:
    """What the two say besides their shared thing -- the conditions they name that the other
    does not share, and their other words -- has nothing in common, and both say something:
    "sleepwalking" / "next-morning grogginess", "hypothyroidism" / "skin discoloration",
    "cashew" / "walnut"."""
    from .text import rest_words

    shared = {a.key for a, _b in p.shared()}
    ka = {f.key for f in p.older.facts if f.kind is KeyKind.CONDITION} - shared
    kb = {f.key for f in p.newer.facts if f.kind is KeyKind.CONDITION} - shared
    wa = rest_words(p.older_text, p.memory_type)
    wb = rest_words(p.newer_text, p.memory_type)
    if ka and kb:
        return not (ka & kb) and not _alike(wa, wb)
    return bool(wa and wb) and not (ka & kb) and not _alike(wa, wb)


def _own_parts(f: Fact) -> dict[str, str]:
    """A fact's value without where and when (a severity, a stage)."""
    return {k: v for k, v in parts(f.value).items() if k not in QUALIFIER_DIMENSIONS}


def _reaction_change(p: Pair) -> Decision | None:
    agents = _agents(p)
    if not agents:
        return None
    ra, rb = _reactions(p.older), _reactions(p.newer)
    for key in ra.keys() & rb.keys():
        x, y = ra[key], rb[key]
        if y.state in ENDED and x.state not in ENDED:
            return _d(Verdict.UPDATES, "reaction.resolved", STRONG, evidence(x, y), key)
        if x.state in ENDED and y.state not in ENDED:
            return _d(Verdict.UPDATES, "reaction.recurred", WEAK, evidence(x, y), key)
        if _own_parts(x) != _own_parts(y) or y.state is State.CHANGED:
            return _d(Verdict.UPDATES, "reaction.changed", WEAK, evidence(x, y), key)
    return None


def _same_agent(p: Pair) -> Decision | None:
    ra, rb = _reactions(p.older), _reactions(p.newer)
    for a, b in _agents(p):
        if p.memory_type == "allergy" and ra.keys() != rb.keys() and rb:
            return _d(Verdict.UPDATES, "allergy.reaction-change", WEAK, evidence(a, b), a.key)
        return _d(Verdict.DUPLICATE, "allergy.same-agent", WEAK, evidence(a, b), a.key)
    return None


# --- chart slots ----------------------------------------------------------------------------------
def _slots(p: Pair) -> list[tuple[Fact, Fact]]:
    return [(a, b) for a, b in p.of_kind(KeyKind.SLOT) if a.key != _LIST]


def _slot_kinds(p: Pair) -> Decision | None:
    """Two kinds of one slot are two facts (cigars / cigarettes, cannabis / cocaine)."""
    for a, b in _slots(p):
        ka, kb = _set(parts(a.value).get("kind")), _set(parts(b.value).get("kind"))
        if ka and kb and not ka & kb:
            return _compatible("slot.two-kinds", evidence(a, b, "two kinds"), a.key)
    return None


def _set(v: str | None) -> frozenset[str]:
    return frozenset(x for x in (v or "").split("+") if x)


def _slot_addition(p: Pair) -> Decision | None:
    for a, b in _slots(p):
        if _additions(p.newer_text) and not _changed(b):
            return _compatible("slot.addition", evidence(a, b, "an addition"), a.key)
    return None


def _plan(a: Fact) -> bool:
    return a.name.startswith(PLAN_SLOTS)


def _slot_presence(p: Pair) -> Decision | None:
    """One statement denies what the other admits ("denies alcohol use" / "admits a pint of
    vodka daily"): a correction, for a reviewer."""
    for a, b in _slots(p):
        if _negated(a) != _negated(b) and a.text.lower() == b.text.lower():
            verdict = Verdict.CONTRADICTS if _negated(a) else Verdict.UPDATES
            return _d(verdict, "slot.presence", WEAK, evidence(a, b), a.key)
    return None


def _slot_state(p: Pair) -> Decision | None:
    """A plan item or a habit whose state changed (referred -> attended; smokes -> quit)."""
    lex = lexicon()
    for a, b in _slots(p):
        if b.state in (None, State.ACTIVE) or b.state == a.state:
            continue
        if b.state is State.PLANNED and not _plan(a):
            continue  # "on a waiting list for a flat" plans a change of housing, makes none
        slot_ = lex.slots.get(a.name)
        several = not _plan(a) and not (slot_ is not None and slot_.single_valued)
        if several and b.state in (State.STARTED, State.DONE):
            # "started swimming" beside "walks 5,000 steps": another value; "had my first yoga
            # class" beside "goes out for a walk": an event, no change of the habit
            continue
        slot = lex.slots.get(a.name)
        single = _plan(a) or (slot is not None and slot.single_valued)
        strength = STRONG if single and Context.HISTORICAL not in b.contexts else WEAK
        return _d(Verdict.UPDATES, "slot.state-change", strength, evidence(a, b), a.key)
    return None


def _slot_value(p: Pair) -> Decision | None:
    """A single-valued slot restated with another value updates (the newest value wins); a
    slot of several values needs a change word; the same values are a duplicate."""
    lex = lexicon()
    for a, b in _slots(p):
        va, vb = _set(parts(a.value).get("value")), _set(parts(b.value).get("value"))
        amount = _amounts_differ(a, b)
        slot = lex.slots.get(a.name)
        single = _plan(a) or (slot is not None and slot.single_valued)
        if single and bool(va) != bool(vb) and vb and _words_apart(p):
            return _d(Verdict.UPDATES, "slot.single-valued", WEAK, evidence(a, b), a.key)
        if (va and vb and va != vb) or amount:
            if single and _one_sided_kind(a, b) and not amount and "none" not in va:
                # "likes reminders by text" beside "prefers phone calls": a scoped preference
                return _compatible("slot.scoped-value", evidence(a, b, "for another purpose"))
            if single or amount or b.state is State.CHANGED:
                # a new amount is an explicit new value, as a new lab value is; another value
                # of a single-valued slot needs the newer to say it changed
                explicit = amount or _said_changed(p, b) or _entries(a, b)
                strength = STRONG if (single or amount) and explicit else WEAK
                if Context.HISTORICAL in b.contexts or _one_sided_kind(a, b):
                    strength = WEAK
                rule = "slot.new-amount" if amount else "slot.single-valued"
                return _d(Verdict.UPDATES, rule, strength, evidence(a, b), a.key)
            return _compatible("slot.another-value", evidence(a, b, "another value"), a.key)
        if single and _entries(a, b) and _entry_changed(a, b) and not (va and vb and va != vb):
            # a chart field restated with other words ("Address: 14 Elm Road" / "Address:
            # Flat 3, 22 Birch Court") may replace it; free words are no value: a reviewer
            return _d(Verdict.UPDATES, "slot.new-entry", WEAK, evidence(a, b), a.key)
        if va and va == vb and a.state == b.state:
            # a slot's values are coarse (medicare, housed): the details said beside them may
            # differ ("Medicare Part A" / "Part D"), so a restated value is for a reviewer
            return _d(Verdict.DUPLICATE, "slot.same-value", WEAK, evidence(a, b), a.key)
        x, y = parts(a.value).get("amount"), parts(b.value).get("amount")
        if x and x == y:
            return _d(Verdict.DUPLICATE, "slot.same-amount", WEAK, evidence(a, b), a.key)
    return None


def _said_changed(p: Pair, b: Fact) -> bool:
    """The newer says its value is a change: a change state, or a word of now ("now prefers
    afternoons", "currently", "moved in")."""
    from .text import parse

    if b.state in (State.CHANGED, State.STARTED, State.STOPPED, State.DONE):
        return True
    t = parse(p.newer_text)
    return bool(lexicon().now_words.find(t.tokens, t.raw))


def _entries(a: Fact, b: Fact) -> bool:
    """Both are chart entries headed by the slot ("Insurance: ..."): the newer entry replaces
    the older, as on a single-valued slot."""
    return parts(a.value).get("entry") == parts(b.value).get("entry") == "chart"


def _entry_changed(a: Fact, b: Fact) -> bool:
    """Two chart entries of a slot whose words differ (the heading set aside)."""
    x, y = parts(a.value).get("text", ""), parts(b.value).get("text", "")
    return bool(x and y and x != y)


def _one_sided_kind(a: Fact, b: Fact) -> bool:
    """The newer scopes the slot where the older did not ("phone calls for results", "mail
    order for Eliquis"): maybe a second fact beside it, for a reviewer. (A newer statement of
    the whole slot -- "quit smoking" after "smokes 10 cigarettes" -- covers the older's.)"""
    return bool(parts(b.value).get("kind")) and not parts(a.value).get("kind")


def _amounts_differ(a: Fact, b: Fact) -> bool:
    x, y = parts(a.value).get("amount", ""), parts(b.value).get("amount", "")
    if not (x and y):
        return False
    ux, uy = x.partition(" ")[2], y.partition(" ")[2]
    return ux == uy and x != y


def _slot_plan_restated(p: Pair) -> Decision | None:
    for a, b in _slots(p):
        if _plan(a) and _words_apart(p):
            return _compatible("slot.two-items", evidence(a, b, "two items, by their words"))
        if _plan(a) and a.state == b.state:
            return _d(Verdict.DUPLICATE, "slot.plan-restated", WEAK, evidence(a, b), a.key)
    return None


# --- treatment responses --------------------------------------------------------------------------
def _response(p: Pair) -> Decision | None:
    """A response: its outcome (a condition or a result) under a treatment. The treatment said
    never taken, or changed; the same outcome's state flipped; two outcomes or two treatments
    are two facts; the same treatment and outcome restated. Read from words: weak."""
    for rule in (
        _response_refuted,
        _response_treatment,
        _response_by_words,
        _response_outcome,
        _response_two,
    ):
        d = rule(p)
        if d is not None:
            return d
    return None


def _response_refuted(p: Pair) -> Decision | None:
    for a, b in p.of_kind(KeyKind.DRUG):
        if (b.state in (State.REFUTED, State.STOPPED) or _negated(b)) and a.state not in ENDED:
            return _d(Verdict.CONTRADICTS, "response.refuted", WEAK, evidence(a, b), a.key)
    return None


def _response_treatment(p: Pair) -> Decision | None:
    for a, b in p.of_kind(KeyKind.DRUG):
        if b.state is State.CHANGED and a.state is not State.CHANGED:
            return _d(Verdict.UPDATES, "response.treatment-changed", WEAK, evidence(a, b), a.key)
    return None


def _response_by_words(p: Pair) -> Decision | None:
    """Two treatments the lexicon cannot name ("group diabetes classes", "the glucose sensor")
    told apart by their words: two treatments' effects, two facts."""
    drugs = [f for f in (*p.older.facts, *p.newer.facts) if f.kind is KeyKind.DRUG]
    if not drugs and _words_apart(p):
        return _compatible("response.two-treatments", "two treatments, by their words")
    return None


def _response_outcome(p: Pair) -> Decision | None:
    for a, b in p.of_kind(KeyKind.CONDITION, KeyKind.LOINC):
        if _negated(a) != _negated(b) or _flipped(p):
            return _d(Verdict.UPDATES, "response.outcome-changed", WEAK, evidence(a, b), a.key)
    return None


def _flipped(p: Pair) -> bool:
    """One statement says the treatment works and the other that it does not (the outcome
    words of :data:`RESPONSE_WORDS`)."""
    return _response_sense(p.older_text) * _response_sense(p.newer_text) < 0


def _response_sense(text: str) -> int:
    from .text import parse

    words = set(parse(text).tokens)
    if words & _BAD:
        return -1
    return 1 if words & _GOOD else 0


_GOOD = frozenset({"helping", "helped", "helps", "working", "works", "controlled", "improved",
                   "improving", "better", "responded", "response", "remission", "effective",
                   "goal", "well", "resolved", "down", "reduced", "relief"})  # fmt: skip
_BAD = frozenset({"not", "no", "failed", "failure", "worse", "unchanged", "despite", "still",
                  "persistent", "ongoing", "isnt", "stopped", "without", "partial"})  # fmt: skip


def _response_two(p: Pair) -> Decision | None:
    drugs_a = {f.key for f in p.older.facts if f.kind is KeyKind.DRUG and f.role is Role.SUBJECT}
    drugs_b = {f.key for f in p.newer.facts if f.kind is KeyKind.DRUG and f.role is Role.SUBJECT}
    if drugs_a and drugs_b and not drugs_a & drugs_b:
        return _compatible("response.two-treatments", "two treatments' effects: two facts")
    outcomes = p.of_kind(KeyKind.CONDITION, KeyKind.LOINC)
    if _outcomes(p.older) and _outcomes(p.newer) and not outcomes:
        return _compatible("response.two-outcomes", "two outcomes of a treatment: two facts")
    if _additions(p.newer_text):
        return _compatible("response.added", "a further response said to be another")
    if not outcomes and _words_apart(p):
        return _compatible("response.two-outcomes", "two outcomes, by their words")
    pairs = outcomes or p.of_kind(KeyKind.DRUG)
    if not pairs:
        return None
    a, b = pairs[0]
    return _d(Verdict.DUPLICATE, "response.restated", WEAK, evidence(a, b), a.key)


def _outcomes(f: ClinicalFacts) -> frozenset[str]:
    return frozenset(
        x.key for x in f.facts if x.kind in (KeyKind.CONDITION, KeyKind.LOINC) and x.asserted
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
    "reaction.another": ("reaction.another", "reaction.added"),
    "reaction.changed": ("reaction.resolved", "reaction.recurred", "reaction.changed"),
    "allergy.same-agent": ("allergy.reaction-change", "allergy.same-agent"),
    "drug.regimen": ("drug.dose-change", "drug.frequency-change", "drug.formulation-change"),
    "plan.item": ("plan.done-or-cancelled", "plan.new-timing"),
    "lab.target": ("lab.target", "lab.new-target", "lab.same-target"),
    "lab.value": ("lab.new-value", "lab.new-date", "lab.same-value"),
    "lab.result": ("lab.result-flip", "lab.same-result"),
    "lab.first-value": ("lab.first-value", "plan.restated"),
    "condition.ended": ("condition.refuted", "condition.resolved"),
    "condition.presence": ("condition.presence", "condition.recurred"),
    "condition.stage": ("condition.spread", "condition.new-stage", "condition.changed"),
    "slot.value": (
        "slot.single-valued", "slot.new-amount", "slot.scoped-value", "slot.another-value",
        "slot.new-entry", "slot.same-value", "slot.same-amount",
    ),
    "slot.plan-restated": ("slot.two-items", "slot.plan-restated"),
    "response": (
        "response.refuted", "response.treatment-changed", "response.two-treatments",
        "response.outcome-changed", "response.two-outcomes", "response.added",
        "response.restated",
    ),
    "key.none-shared": ("key.none-shared", "words.same-subject", "statement.restated"),
}  # fmt: skip

TABLE: tuple[Rule, ...] = (
    Rule("code.different", ALL, "two coded records with different codes are two things",
         _codes_differ),
    Rule("key.none-shared", ALL, "no key in common: compatible, whatever the similarity",
         _nothing_shared),
    Rule("context.not-asserted", ALL,
         "a hypothetical, conditional, uncertain or other person's statement supersedes nothing",
         _newer_not_asserted),
    Rule("allergy.empty-list", frozenset({"allergy"}),
         "an empty allergy list and an allergy it covers", _allergy_list),
    Rule("allergy.list-restated", frozenset({"allergy"}), "the same empty list restated",
         _allergy_lists_same),
    Rule("key.in-passing", ALL, "a key named only in passing says nothing of that thing",
         _passing_only),
    Rule("context.other-person", ALL, "one statement is another person's fact",
         _other_person_statement),
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
    Rule("plan.item", frozenset({"care_plan"}),
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
    Rule("response", frozenset({"treatment_response"}),
         "the same treatment and outcome with another state", _response),
)  # fmt: skip

DEFAULT = Rule(
    "default.compatible",
    ALL,
    "no rule found one thing whose state changed: both stay",
    lambda p: None,
)


def rule_ids() -> tuple[str, ...]:
    """Every rule id a decision can carry, in table order."""
    return tuple(dict.fromkeys(i for r in (*TABLE, DEFAULT) for i in r.decides))


def decide(
    older: ClinicalFacts,
    newer: ClinicalFacts,
    memory_type: str,
    older_text: str = "",
    newer_text: str = "",
    older_on: str = "",
) -> Decision:
    """The first decision of the table on the pair, capped to weak where the older statement
    was itself uncertain, the newer is history or the newer is dated before ``older_on`` (the
    day the older was recorded); ``default.compatible`` when no rule decides."""
    return decide_row(older, newer, memory_type, older_text, newer_text, older_on)[1]


def decide_row(
    older: ClinicalFacts,
    newer: ClinicalFacts,
    memory_type: str,
    older_text: str = "",
    newer_text: str = "",
    older_on: str = "",
) -> tuple[Rule, Decision]:
    """:func:`decide`, with the row of the table that decided."""
    pair = Pair(older, newer, memory_type, older_text, newer_text, older_on)
    for rule in TABLE:
        if rule.applies(memory_type):
            d = rule.check(pair)
            if d is not None:
                return rule, _capped(d, pair)
    return DEFAULT, _compatible(DEFAULT.id, "no rule found one thing whose state changed")


def _capped(d: Decision, p: Pair) -> Decision:
    """Strong evidence becomes weak when either statement was read by a configured model only
    (what the offline reader did not read is for a reviewer), the older statement about the
    key was not asserted (an uncertain allergy confirmed is for a reviewer), the newer is
    history, or the newer is
    dated before the older was recorded ("2019: omeprazole 40 mg BD for 8 weeks" read after
    "omeprazole 20 mg OD" was charted: an earlier course, not a change)."""
    if d.strength is not STRONG or not d.key:
        return d
    if Origin.MODEL in (p.older.origin, p.newer.origin):  # what only a model read: a reviewer
        return Decision(d.verdict, d.rule, WEAK, f"{d.evidence}; read by a model only", d.key)
    a, b = p.older.get(d.key), p.newer.get(d.key)
    if (a is not None and not a.asserted) or (b is not None and Context.HISTORICAL in b.contexts):
        return Decision(d.verdict, d.rule, WEAK, d.evidence, d.key)
    # before the older's own date, or else the day it was recorded
    since = (a.date if a is not None else "") or p.older_on
    if b is not None and _dated_before(b.date, since):
        why = f"{d.evidence}; the newer is dated {b.date}, before the older's {since}"
        return Decision(d.verdict, d.rule, WEAK, why, d.key)
    return d


def _dated_before(date: str, day: str) -> bool:
    """``date`` (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``; a month without its year is never
    before anything) is wholly before ``day`` (a date of the same forms)."""
    if not (date and day) or date.startswith("-") or day.startswith("-"):
        return False
    n = min(len(date), len(day))
    return date[:n] < day[:n]


def index_keys(facts: ClinicalFacts, memory_type: str) -> frozenset[str]:
    """The keys a memory is found by as a candidate: what it is about, of its type's kinds
    (not what it names in passing)."""
    kinds = subject_kinds(memory_type)
    return frozenset(
        f.key
        for f in facts.facts
        if f.kind in kinds and (f.role is not Role.MENTION or f.key == _LIST)
    )


def _keys_of(facts: Iterable[Fact]) -> frozenset[str]:
    return frozenset(f.key for f in facts)


@lru_cache(maxsize=1)
def table_rows() -> tuple[tuple[str, str, str], ...]:
    """``(rule id, types, what it checks)`` for docs and the dashboard."""
    rows = [(r.id, ", ".join(sorted(r.types)) or "every type", r.doc) for r in (*TABLE, DEFAULT)]
    return tuple(rows)
