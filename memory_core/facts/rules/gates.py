"""The table's first rows, for every memory type: what makes a pair no pair at all -- two
different codes, no key in common (and, for statements the reader could not key, their words),
a newer statement that asserts nothing (the assertion step's contexts), a key named only in
passing, another person's fact, the same statement again, two kinds of one thing, the same
question answered, two places or times. Pure."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from .. import units
from ..lexicon import lexicon
from ..model import CODE_KINDS, Context, Decision, KeyKind, Origin, Role, Verdict
from ..values import join, parts, qualifiers
from .base import (
    STRONG,
    WEAK,
    Pair,
    _alike,
    _compatible,
    _d,
    _spread,
    evidence,
    name_of,
    qualifier_dimensions,
)
from .dates import dated_before

if TYPE_CHECKING:
    from ..model import Fact
    from ..text import Text


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
    if not (keyed_a and keyed_b) and not _named_apart(p):
        by_words = _by_words(p)
        if by_words is not None:
            return by_words
    return _compatible("key.none-shared", "the two statements name no key in common")


def _named_apart(p: Pair) -> bool:
    """Both statements name, as their subject, things of one kind -- none the same ("UDS:
    buprenorphine positive" / "UDS: fentanyl positive"): two things, whatever words they
    share."""
    kinds_a = {f.kind for f in p.older.facts if f.role is Role.SUBJECT}
    kinds_b = {f.kind for f in p.newer.facts if f.role is Role.SUBJECT}
    return bool(kinds_a & kinds_b)


#: Free-text types (domain.md: never superseded on similarity alone): their unkeyed statements
#: are notes of the moment, which words in common do not make one replace the other -- on the
#: pair sets the words-only reading found no replacement of these types (0 of 1,173) and sent 3
#: compatible pairs to review; on chat turns (stored as observations) it made 22 reviews per 100
#: turns (REALTALK, make eval). A word-for-word restatement still chains as a duplicate.
FREE_TEXT_TYPES = frozenset({"observation", "care_plan", "social"})

#: Words that say a statement's subject changed, for statements the lexicon cannot key.
_CHANGE_RULES = frozenset(
    {"stopped", "started", "changed", "resolved", "refuted", "done", "cancelled"}
)


def _by_words(p: Pair) -> Decision | None:
    """Statements the reader could not key, read by their words: most of the shorter's words
    in the other's, and the newer says something changed (a state word, another number, a
    negation the older lacks) -- an update; nearly the same words and numbers -- a duplicate.
    Weak evidence only: a reviewer decides."""
    from ..text import parse, rest_words

    if p.newer_text.rstrip().endswith("?"):
        return None  # a question asserts nothing
    restated = _restated(p)
    if restated is not None:
        return restated  # the same words again: a restatement, as for keyed statements
    if p.memory_type in FREE_TEXT_TYPES:
        return None  # two notes of the moment that share words: neither replaces the other
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
    clash = _qualifier_clash(_said_where(ta), _said_where(tb))
    if clash:  # "wart on left hand" / "wart on right foot": two places, two facts
        return _compatible("qualifier.two-places", f"read from words: {clash}")
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
    from ..text import stem

    heads = {w[:5] for w in shared if len(w) >= 5}
    stems = [stem(w) for w in t.tokens]
    at = [i for i, w in enumerate(stems) if w in shared or (len(w) >= 5 and w[:5] in heads)]
    return {j for i in at for j in range(i - NEAR_WORDS, i + NEAR_WORDS + 1)}


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
    if any(b.asserted or _goal_for_goal(a, b) for a, b in shared):
        return None
    _a, b = shared[0]
    ctx = ", ".join(sorted(c.value.replace("_", " ") for c in b.contexts))
    return _compatible(
        f"context.{_context_id(b.contexts)}",
        f"{name_of(b)} is {ctx} in the newer statement: it supersedes nothing",
        b.key,
    )


def _history_before_record(p: Pair) -> Decision | None:
    """Every fact the newer statement shares with the older is history, dated before the older
    was recorded ("Previously took levothyroxine 100 mcg from 2018 to 2022" after "Levothyroxine
    125 mcg od" was charted this year): what held before the older was written says nothing of
    it now -- both stay, and no reviewer is asked."""
    about = p.about()
    if not about:
        return None
    whens = [dated_before(p, a, b) for a, b in about if Context.HISTORICAL in b.contexts]
    if len(whens) < len(about) or not all(whens):
        return None
    _a, b = about[0]
    return _compatible(
        "history.before-record",
        f"{name_of(b)} is history in the newer statement; {whens[0]}",
        b.key,
    )


def _goal_for_goal(a: Fact, b: Fact) -> bool:
    """A goal, limit or target of a chart slot said where the older was one too ("Goal: walk 10
    minutes daily" / "Goal: walk 30 minutes daily"): the newer is hedged only as the older is,
    and is read as the older was."""
    return (
        b.kind is KeyKind.SLOT
        and a.contexts == b.contexts
        and Context.DEFINITION in b.contexts
        and b.contexts <= _GOAL  # "Goal: walk 30 minutes daily": a goal, its verb a bare form
    )


_GOAL = frozenset({Context.DEFINITION, Context.INSTRUCTION})


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


def _said_where(t: Text) -> str:
    """Where and when a statement's first sentence says (its qualifiers as a value)."""
    from ..text import Span

    return join(qualifiers(t, Span("", 0, 0, "")))


def _qualifier_clash(older: str, newer: str) -> str:
    """The qualifier both values give and disagree on ("side: left / right"), or ""."""
    qa, qb = dict(_qualifiers(older)), dict(_qualifiers(newer))
    for dim in qualifier_dimensions():
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
        if eq and name in qualifier_dimensions():
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
    from ..text import SPEAKER, parse

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
    # a unit after a number is part of the value ("50 mcg" is not "50 mg")
    kept |= {
        i
        for i, w in enumerate(t.tokens)
        if i
        and t.tokens[i - 1][:1].isdigit()
        and (w in lex.dose_units or units.key(w) in lex.units)
    }
    words = tuple(
        (i, w)
        for i, w in enumerate(t.tokens)
        if i in kept or (i not in now and (w not in lex.stopwords or w[0].isdigit()))
    )
    # a speaker's label ("Emi: ...") says who, not what: a turn of nothing but stop words says
    # nothing to restate ("Emi: They really are" / "Emi: Will do!")
    said = [w for i, w in words if not (i == 0 and SPEAKER.match(text))]
    return tuple(w for _i, w in words) if said else ()


def _is_unit(word: str) -> bool:
    """A dose unit or a unit of measure ("mcg", "mmol", "kg")."""
    lex = lexicon()
    return word in lex.dose_units or units.key(word) in lex.units


def _siblings(p: Pair) -> Decision | None:
    """Two specific things that share only a broader one (type 1 / type 2 diabetes; two
    products with one ingredient) are two things."""
    about = p.about()
    if about and all(a.role is Role.INGREDIENT and b.role is Role.INGREDIENT for a, b in about):
        a, _b = about[0]
        return _compatible("key.siblings", f"two kinds of {name_of(a)}", a.key)
    return None


#: Words of a conversation: a chat turn speaks in the first or second person.
_CONVERSATION = frozenset(
    {"i", "im", "ive", "id", "my", "me", "mine", "you", "your", "youre", "yours", "we", "our"}
)
#: Words that say a statement is its speaker's own ("Paola: I haven't slept well").
_FIRST_PERSON = frozenset({"i", "im", "ive", "id", "ill", "my", "me", "mine", "myself"})


@lru_cache(maxsize=65_536)
def chat_label(text: str) -> str:
    """The name a chat turn is labelled with ("Paola: I'm tired", "elise: Drink water" ->
    "paola", "elise"): a one-word label that is a name -- not a chart heading the lexicon or
    the stop words know ("Plan:", "Allergy:", "Pharmacy:", "Correction:"); "" otherwise."""
    from ..text import SPEAKER, parse

    m = SPEAKER.match(text)
    if m is None:
        return ""
    label = m.group(0).rstrip(": \t").strip()
    lex = lexicon()
    if label.lower() in lex.stopwords or label.lower() in lex.chart_headings:
        return ""
    if not parse(label).tokens or things_named(label):
        return ""
    return label.lower()


def conversational(text: str) -> bool:
    """A turn that speaks in the first or second person, as a conversation does."""
    from ..text import SPEAKER, parse

    m = SPEAKER.match(text)
    return bool(_CONVERSATION & set(parse(text[m.end() if m else 0 :]).tokens))


@lru_cache(maxsize=65_536)
def _speaker(text: str) -> str:
    """The speaker of a chat turn that speaks of its speaker (first person), or ""."""
    from ..text import SPEAKER, parse

    label = chat_label(text)
    m = SPEAKER.match(text)
    if not label or m is None or not _FIRST_PERSON & set(parse(text[m.end() :]).tokens):
        return ""
    return label


@lru_cache(maxsize=65_536)
def things_named(label: str) -> bool:
    """Whether a label names a thing the reader keys, of any type (a chart heading: "HbA1c",
    "Address", "Pharmacy")."""
    from ..text import parse, things

    t = parse(label)
    return bool(things(t, "")) or bool(lexicon().slot_triggers.find(t.tokens, t.raw))


def _two_speakers(p: Pair) -> Decision | None:
    """Two chat turns of two speakers, each about its own speaker ("Kevin: I'm exhausted" /
    "Paola: I haven't slept well"): two people's statements, nothing in common."""
    a, b = _speaker(p.older_text), _speaker(p.newer_text)
    if a and b and a != b:
        return _compatible("speaker.another", f"two speakers' own statements ({a} / {b})")
    return None


def _other_person_statement(p: Pair) -> Decision | None:
    """A statement whose facts are another person's is not the patient's: nothing in common."""
    older_other = all(Context.OTHER_PERSON in a.contexts for a, _b in p.about())
    newer_other = all(Context.OTHER_PERSON in b.contexts for _a, b in p.about())
    if p.about() and older_other != newer_other:
        return _compatible("context.other-person", "one statement is another person's fact")
    return None
