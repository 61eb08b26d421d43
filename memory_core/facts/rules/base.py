"""What every row of the decision table shares: the candidate pair as the rules read it
(:class:`Pair`), a row (:class:`Rule`), decisions and how facts are said in evidence, and the
small readings several subjects' rules use (a negation, an addition, a change, a place). Pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from ..lexicon import PhraseMatcher, lexicon
from ..model import (
    ClinicalFacts,
    Context,
    Decision,
    Fact,
    KeyKind,
    Role,
    State,
    Strength,
    Verdict,
    subject_kinds,
)
from ..values import parts

STRONG, WEAK = Strength.STRONG, Strength.WEAK
SAFETY_TYPES = frozenset({"allergy", "adverse_reaction"})


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
    newer_on: str = ""  # the day the newer statement was recorded (YYYY-MM-DD), if known
    # read once per pair, when it is made (every row of the table asks; a back-scan decides
    # tens of thousands of pairs)
    _shared: tuple[tuple[Fact, Fact], ...] = field(init=False, repr=False, compare=False)
    _about: tuple[tuple[Fact, Fact], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        shared = tuple(_shared(self.older, self.newer, self.kinds))
        object.__setattr__(self, "_shared", shared)
        about = tuple((a, b) for a, b in shared if Role.MENTION not in (a.role, b.role))
        object.__setattr__(self, "_about", about)

    @property
    def kinds(self) -> frozenset[KeyKind]:
        return subject_kinds(self.memory_type)

    def shared(self) -> list[tuple[Fact, Fact]]:
        """``(older fact, newer fact)`` for every key both name, of the type's kinds."""
        return list(self._shared)

    def about(self) -> list[tuple[Fact, Fact]]:
        """The shared facts neither statement names only in passing."""
        return list(self._about)

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
    decisions carry (``ids``; its own id when it names no others)."""

    id: str
    types: frozenset[str]
    doc: str
    check: Callable[[Pair], Decision | None]
    ids: tuple[str, ...] = ()

    def applies(self, memory_type: str) -> bool:
        return not self.types or memory_type in self.types

    @property
    def decides(self) -> tuple[str, ...]:
        return self.ids or (self.id,)


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
        return f"{analyte.display if analyte else 'test'} (LOINC {f.name})"
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


def _alike(small: frozenset[str], large: frozenset[str]) -> set[str]:
    """The words of ``small`` found in ``large``, as they are or by their first five letters
    (word stems, :func:`.text.rest_words`); empty when the two share no word."""
    heads = {w[:5] for w in large if len(w) >= 5}
    return {w for w in small if w in large or (len(w) >= 5 and w[:5] in heads)}


@lru_cache(maxsize=1)
def qualifier_dimensions() -> tuple[str, ...]:
    """The qualifiers' dimensions (side, site, when, exertion, posture, setting ...), as
    words.json's ``qualifiers`` names them: what a value says of where and when."""
    return tuple(lexicon().qualifiers)


@lru_cache(maxsize=65_536)
def _spread(text: str) -> bool:
    """The newer says the finding spread ("the hives have spread to his legs"): its new sites
    update it rather than name another finding."""
    from ..text import parse

    t = parse(text)
    return bool(lexicon().spread.find(t.tokens, t.raw))


def _changed(f: Fact) -> bool:
    return f.state in (State.CHANGED, State.STARTED, State.STOPPED)


def _ingredient(a: Fact, b: Fact) -> bool:
    return Role.INGREDIENT in (a.role, b.role)


def _negated(f: Fact) -> bool:
    return Context.NEGATED in f.contexts


# --- allergies and reactions ----------------------------------------------------------------------
_LIST = "slot:allergy list"


def _additions(text: str) -> bool:
    from ..text import parse

    t = parse(text)
    return any(m.value for m in lexicon().additions.find(t.tokens, t.raw))


def _words_apart(p: Pair, set_aside: frozenset[str] = frozenset(), outcomes: bool = False) -> bool:
    """What the two say besides their shared thing -- the conditions they name that the other
    does not share, and their other words but the stems ``set_aside`` -- has nothing in
    common, and both say something: "sleepwalking" / "next-morning grogginess",
    "hypothyroidism" / "skin discoloration", "cashew" / "walnut". With ``outcomes`` (a
    reaction's or a response's statements, whose conditions are what happened), a condition
    one names may be what the other says in words: they are set side by side, and a number
    with its unit said in both ("5 kg") is one outcome."""
    from ..text import rest_words

    shared = {a.key for a, _b in p.shared()}
    ka = {f.key for f in p.older.facts if f.kind is KeyKind.CONDITION} - shared
    kb = {f.key for f in p.newer.facts if f.kind is KeyKind.CONDITION} - shared
    wa = rest_words(p.older_text, p.memory_type) - set_aside
    wb = rest_words(p.newer_text, p.memory_type) - set_aside
    if ka and kb:
        return not (ka & kb) and not _alike(wa, wb)
    if outcomes:
        # one names a condition, the other says what happened in words the lexicon does not
        # key ("genital yeast infection" / "always running to the bathroom"): the condition's
        # words as written stand beside the other's ("low mood" / "mood still poor": alike)
        if _measures(p.older_text) & _measures(p.newer_text):
            return False
        said = (KeyKind.CONDITION, KeyKind.LOINC)  # a result is an outcome too
        oa = {f.key for f in p.older.facts if f.kind in said} - shared
        ob = {f.key for f in p.newer.facts if f.kind in said} - shared
        wa |= _written(p.older, oa)
        wb |= _written(p.newer, ob)
        return bool(wa and wb) and not (oa & ob) and not _alike(wa, wb)
    return bool(wa and wb) and not (ka & kb) and not _alike(wa, wb)


@lru_cache(maxsize=65_536)
def _states_said(text: str) -> bool:
    """The statement says something changed or ended ("settled", "stopped", "worse"): an
    outcome or a reaction said in words may be the older one's course, not another."""
    from ..text import parse

    t = parse(text)
    return bool(lexicon().states.find(t.tokens, t.raw))


@lru_cache(maxsize=65_536)
def _measures(text: str) -> frozenset[tuple[str, str]]:
    """The numbers a statement says with a word after them ("5 kg", "2 pillows")."""
    from ..text import parse

    t = parse(text)
    return frozenset(
        (t.tokens[i], t.tokens[i + 1])
        for i in range(len(t.tokens) - 1)
        if t.tokens[i][:1].isdigit() and t.tokens[i + 1][:1].isalpha()
    )


def _written(f: ClinicalFacts, keys: set[str]) -> frozenset[str]:
    """The stems of the words the facts ``keys`` of ``f`` were named with."""
    from ..lexicon import tokenize
    from ..text import stem

    said = (w for x in f.facts if x.key in keys for w, _s, _e in tokenize(x.text))
    return frozenset(stem(w) for w in said if w[:1].isalpha() and len(w) > 2)


def one_occasion(text: str) -> bool:
    """The newer names one occasion ("physio cancelled this week", "today's session"): what
    was cancelled may be that session, not the plan -- for a reviewer."""
    from ..text import parse

    t = parse(text)
    return bool(lexicon().occasions.find(t.tokens, t.raw))


def words_said(words: PhraseMatcher[str], text: str, not_of: frozenset[str] = frozenset()) -> str:
    """The first of ``words`` (a lexicon list) said in ``text``, not denied right before
    ("non-haemolysed", "not haemolysed") nor said of what ``not_of`` names in the few words
    before it ("prior 6.4 was a hemolyzed specimen"), as written; "" where none is."""
    from ..text import parse

    t = parse(text)
    for m in words.find(t.tokens, t.raw):
        if m.start and t.tokens[m.start - 1] in ("non", "not", "no"):
            continue
        if not_of.intersection(t.tokens[max(0, m.start - 6) : m.start]):
            continue
        return " ".join(t.raw[m.start : m.end])
    return ""
