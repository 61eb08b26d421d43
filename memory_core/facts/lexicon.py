"""The clinical lexicon: the data files of ``memory_core/data/lexicon/`` read, validated and
compiled into phrase matchers, once per process and only when first used.

One folder holds every phrase the readers use (conditions, lab analytes and vitals, chart
slots, state words, ConText rules, dose and frequency words, the drug dictionary's supplement);
the facts reader, the possibly-stale flags, the query vocabulary and the transcript extractor
all read it from here, so a phrase is added in one place. :func:`lexicon` returns the compiled
:class:`Lexicon`; its ``version`` is a digest of the files, stored with every memory's facts so
a memory read under an older lexicon is read again (:func:`memory_core.facts.current`).

A phrase is lower-case words (hyphens, slashes and apostrophes are read as spaces, as the
reader tokenises text); a phrase written in capitals (``AS``, ``ED``) is an abbreviation that is
also a common word, matched only where the text writes it in capitals. A malformed file raises
:class:`~memory_core.errors.ConfigurationError` naming the file and the entry.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Generic, TypeVar

from ..errors import ConfigurationError
from .units import Unit, compile_units
from .units import key as unit_key

_V = TypeVar("_V")

FILES = (
    "conditions",
    "labs",
    "slots",
    "states",
    "context",
    "assertion",
    "units",
    "words",
    "drugs",
    "questions",
)
#: Bumped when the reader's own logic changes how a text is read (the files' digest covers
#: the data): part of the version every memory's facts carry.
READER_VERSION = "6"

#: A modifier's scope (context.json, assertion.json): ConText's three, then the assertion
#: step's -- its whole sentence, from it to the end of the statement (a heading), the whole
#: sentence when it is the sentence's subject, from the start of its clause to the end of its
#: sentence (a condition: "reduce X if Y", "if Y, reduce X").
DIRECTIONS = frozenset(
    {
        "FORWARD",
        "BACKWARD",
        "BIDIRECTIONAL",
        "TERMINATE",
        "PSEUDO",
        "SENTENCE",
        "STATEMENT",
        "SUBJECT",
        "CLAUSE",
    }
)
CATEGORIES = frozenset(
    {
        "NEGATED_EXISTENCE",
        "POSSIBLE_EXISTENCE",
        "HYPOTHETICAL",
        "HISTORICAL",
        "FAMILY",
        "TERMINATE",
        "PSEUDO",
        "QUESTION",
        "INSTRUCTION",
        "DEFINITION",
        "FUTURE",
        "REPORTED",
    }
)
#: The analytes a result of which is two numbers, systolic/diastolic (LOINC blood-pressure
#: panels).
PAIRED = frozenset({"85354-9", "55284-4", "35094-2"})
STATES = frozenset(
    {
        "active",
        "started",
        "stopped",
        "changed",
        "resolved",
        "refuted",
        "planned",
        "done",
        "cancelled",
    }
)
KEY_KINDS = frozenset({"drug", "loinc", "condition", "allergen", "slot"})
#: The kinds an assertion rule may be limited to: a key's, or ``measure`` -- a chart slot of a
#: habit with an amount (slots.json's ``measure``: alcohol, tobacco, exercise ...).
MEASURED = "measure"
RULE_KINDS = KEY_KINDS | {MEASURED}

_APOSTROPHE = re.compile(r"['’‘`]")
#: A token: a number (decimal point kept), a word (letters then letters/digits, "k+"), or one of
#: the signs the rules read ("?", "%", arrows).
TOKEN = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:[.,]\d{1,2}(?!\d)|\.\d+)?|[a-z][a-z0-9]*\+?|->|=>|→|\?|%|<|>"
)


def tokenize(text: str) -> list[tuple[str, int, int]]:
    """``(token, start, end)`` of ``text``: lower-cased, apostrophes dropped (so "doesn't" is
    "doesnt"), a possessive's (or a contracted "is") "'s" dropped with its apostrophe ("AF's"
    is "af", "daughter's" is "daughter", "she's" is "she"; the token's span keeps the "'s"),
    hyphens and slashes separating words; a number's decimal comma read as a point ("7,4" is
    7.4) and its thousands separators dropped ("1,000")."""
    low = _APOSTROPHE.sub("\x00", text.lower())
    out = []
    for m in TOKEN.finditer(low):
        tok = m.group(0)
        if tok[0].isdigit() and "," in tok:
            # "1,000" is a thousand; "7,4" a decimal comma
            tok = tok.replace(",", "") if re.search(r",\d{3}", tok) else tok.replace(",", ".")
        out.append((tok, m.start(), m.end()))
    # an apostrophe joins its two sides ("doesn't" -> "doesnt"): merge across the marker
    if "\x00" not in low:
        return out
    merged: list[tuple[str, int, int]] = []
    for tok, s, e in out:
        if merged and s >= 1 and low[s - 1] == "\x00" and merged[-1][2] == s - 1:
            prev, ps, _pe = merged.pop()
            merged.append((prev if tok == "s" else prev + tok, ps, e))
        else:
            merged.append((tok, s, e))
    return merged


def _possessive(raw: str) -> bool:
    """A token written with "'s" (its "s" dropped by :func:`tokenize`)."""
    return len(raw) > 2 and raw[-1] in "sS" and raw[-2] in "'’‘`"


_POSSESSIVE_ENDS = tuple(f"{a}{s}\x00" for a in "'’‘`" for s in "sS")


def _any_possessive(raw: Sequence[str]) -> bool:
    """Whether any token of ``raw`` is written with "'s" (one pass in C over the joined text)."""
    joined = "\x00".join(raw) + "\x00"
    return any(e in joined for e in _POSSESSIVE_ENDS)


def _bare(raw: str) -> str:
    """A token as written without its "'s" ("AF's" is written in capitals)."""
    return raw[:-2] if _possessive(raw) else raw


def _same(toks: tuple[str, ...], tokens: Sequence[str], raw: Sequence[str], i: int) -> bool:
    """The phrase ``toks`` is written at token ``i``, a word written with "'s" read either way."""
    n = len(toks)
    if tuple(tokens[i : i + n]) == toks:
        return True
    if i + n > len(tokens):
        return False
    return all(
        t == w or (t == w + "s" and _possessive(r))
        for t, w, r in zip(toks, tokens[i : i + n], raw[i : i + n], strict=True)
    )


def phrase_tokens(phrase: str) -> tuple[str, ...]:
    """A lexicon phrase as the tokens the reader compares it with."""
    return tuple(t for t, _s, _e in tokenize(phrase))


@dataclass(frozen=True, slots=True)
class Match(Generic[_V]):
    """A phrase found at tokens ``start``..``end`` (exclusive) with its ``value``."""

    start: int
    end: int
    value: _V


class PhraseMatcher(Generic[_V]):
    """Longest-match lookup of phrases over a token sequence, left to right; a phrase written
    in capitals matches only tokens written in capitals."""

    def __init__(self) -> None:
        self._by_first: dict[str, list[tuple[tuple[str, ...], bool, _V]]] = {}
        #: the phrases of two words or more by their first two, and those of one word: an exact
        #: reading looks only at the phrases that can match there (a rule's alternatives may
        #: put hundreds of phrases behind one first word: "the dose my son", "the one her ...")
        self._by_two: dict[tuple[str, str], list[tuple[tuple[str, ...], bool, _V]]] = {}
        self._one: dict[str, list[tuple[tuple[str, ...], bool, _V]]] = {}
        self.size = 0

    def add(self, phrase: str, value: _V) -> None:
        toks = phrase_tokens(phrase)
        if not toks:
            raise ValueError(f"empty phrase {phrase!r}")
        caps = phrase.strip() != phrase.strip().lower()
        entry = (toks, caps, value)
        first = self._by_first.setdefault(toks[0], [])
        first.append(entry)
        first.sort(key=lambda e: -len(e[0]))
        if len(toks) > 1:
            two = self._by_two.setdefault((toks[0], toks[1]), [])
            two.append(entry)
            two.sort(key=lambda e: -len(e[0]))
        else:
            self._one.setdefault(toks[0], []).append(entry)
        self.size += 1

    def at(
        self, tokens: Sequence[str], raw: Sequence[str], i: int, loose: bool | None = None
    ) -> Match[_V] | None:
        """The longest phrase starting at token ``i``. A token written with "'s" matches a
        phrase's word with or without its "s" ("Alzheimer's" is "alzheimer" and "alzheimers");
        ``loose``: whether any token is so written (read from ``raw`` when not given)."""
        if loose is None:
            loose = _any_possessive(raw)
        if not loose:  # the common case, read exactly: longer phrases first, then one word
            two = self._by_two.get((tokens[i], tokens[i + 1]), ()) if i + 1 < len(tokens) else ()
            for toks, caps, value in (*two, *self._one.get(tokens[i], ())):
                n = len(toks)
                if tuple(tokens[i : i + n]) != toks:
                    continue
                if caps and not all(r.isupper() for r in raw[i : i + n]):
                    continue
                return Match(i, i + n, value)
            return None
        best: Match[_V] | None = None
        firsts = (tokens[i], tokens[i] + "s") if _possessive(raw[i]) else (tokens[i],)
        for first in firsts:
            for toks, caps, value in self._by_first.get(first, ()):
                n = len(toks)
                if best is not None and n <= best.end - best.start:
                    break  # longest first: nothing longer follows
                if not _same(toks, tokens, raw, i):
                    continue
                if caps and not all(_bare(r).isupper() for r in raw[i : i + n]):
                    continue
                best = Match(i, i + n, value)
                break
        return best

    def values(self) -> set[_V]:
        """Every value its phrases name."""
        return {v for entries in self._by_first.values() for _t, _c, v in entries}

    def words(self) -> set[str]:
        """Every word of its phrases."""
        return {w for entries in self._by_first.values() for toks, _c, _v in entries for w in toks}

    def find(self, tokens: Sequence[str], raw: Sequence[str]) -> list[Match[_V]]:
        """Every non-overlapping longest match, left to right."""
        out: list[Match[_V]] = []
        loose = _any_possessive(raw)
        i = 0
        while i < len(tokens):
            m = self.at(tokens, raw, i, loose)
            if m is None:
                i += 1
            else:
                out.append(m)
                i = m.end
        return out

    def find_all(self, tokens: Sequence[str], raw: Sequence[str]) -> list[Match[_V]]:
        """Every match starting at every token (overlaps kept; the longest at each start)."""
        out: list[Match[_V]] = []
        loose = _any_possessive(raw)
        for i in range(len(tokens)):
            m = self.at(tokens, raw, i, loose)
            if m is not None:
                out.append(m)
        return out


# --- entries -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Concept:
    id: str
    kind: str  # disorder | finding
    within: tuple[str, ...]
    measured_by: tuple[str, ...] = ()  # analyte ids
    follows: tuple[str, ...] = ()  # precursors it is the progression of ("prediabetes")


#: The memory type of a result of each kind of analyte (labs.json's ``kind``).
KIND_TYPES = {"lab": "lab_result", "vital": "vital_sign", "score": "observation"}


@dataclass(frozen=True, slots=True)
class Analyte:
    id: str
    loinc: str
    codes: tuple[str, ...]
    kind: str  # lab | vital | score (a questionnaire's total: PHQ-9, MoCA)
    unit: str
    parent: str
    qualitative: bool
    conversions: tuple[tuple[str, float, float], ...]  # (unit, scale, offset)
    # the qualifiers that make a reading of its parent one of it (fasting glucose: a glucose
    # taken fasting): (dimension, value) pairs of the reader's qualifiers
    when: tuple[tuple[str, str], ...] = ()
    label: str = ""  # how a clinician writes its name where the id is not ("HbA1c")
    units: tuple[str, ...] = ()  # every unit a result may be written in (units.json codes)
    mw: float = 0.0  # molar mass, g/mol: mass <-> substance concentrations
    valence: float = 1.0  # equivalents <-> substance
    bounds: tuple[float, ...] = ()  # (low, high): physiologically possible, canonical unit
    #: units a value said in names this test without its name ("That's 104.2 kilograms")
    named_by: tuple[str, ...] = ()

    @property
    def memory_type(self) -> str:
        """The memory type a result of it is (a lab test's, a vital sign's; a questionnaire's
        score is an observation, as FHIR files it under "survey", not a lab result)."""
        return KIND_TYPES[self.kind]

    @property
    def pair(self) -> bool:
        """A result of two numbers ("142/88"): a blood pressure."""
        return self.loinc in PAIRED

    @property
    def key(self) -> str:
        return f"loinc:{self.loinc}"

    @property
    def display(self) -> str:
        """The analyte's name in a statement: its label, else its id ("body weight")."""
        return self.label or self.id


@dataclass(frozen=True, slots=True)
class Slot:
    id: str
    single_valued: bool
    people: bool
    measure: bool
    types: frozenset[str]
    #: keyed only by a statement that names one of its values: its trigger alone is a thing
    #: named in passing ("handed over after every visit" is no visit time)
    by_value: bool = False
    #: values of a slot of several that cannot hold together ("drives" and "no car"): one
    #: replaces the other as on a single-valued slot
    exclusive: tuple[frozenset[str], ...] = ()
    #: the unit of a count said with a period and no unit of its own ("smokes 10 a day")
    count_unit: str = ""
    #: spellings of its values that say which one, or which use of it, beyond the value
    #: itself ("landline", "voicemails" of the phone): kept in what is proposed
    particular: frozenset[str] = frozenset()
    #: its value is a name the statement gives right after a trigger ("call me Peggy",
    #: "Preferred name: Margaret"), not one of a list
    named: bool = False
    #: the verbs that give a named slot's value after a person's word ("call me Peggy")
    calls: frozenset[str] = frozenset()

    def excludes(self, older: frozenset[str], newer: frozenset[str]) -> bool:
        """Whether ``newer`` names a value that cannot hold beside one of ``older``."""
        return any(
            (older & group) and (newer & group) and not (older & newer & group)
            for group in self.exclusive
        )

    @property
    def key(self) -> str:
        return f"slot:{self.id}"


@dataclass(frozen=True, slots=True)
class StateRule:
    state: str
    direction: str
    kinds: frozenset[str]  # empty: every kind
    record: bool = False  # says an earlier record was wrong ("entered in error", "incorrect")
    hold: bool = False  # a stop for a while ("held", "on hold"): the order may go on after it
    negated: bool = False  # a stop said with a negation ("not ... anymore"): the stop's own


@dataclass(frozen=True, slots=True)
class ContextRule:
    category: str
    direction: str
    kinds: frozenset[str] = frozenset()  # empty: every kind


@dataclass(frozen=True)
class Lexicon:
    """The compiled lexicon (see the module docstring)."""

    version: str
    concepts: Mapping[str, Concept]
    condition_phrases: PhraseMatcher[str]
    analytes: Mapping[str, Analyte]
    analyte_phrases: PhraseMatcher[str]
    analyte_by_code: Mapping[str, str]
    symbols: Mapping[str, str]
    units: Mapping[str, Unit]  # a unit by each of its spellings (units.key)
    unit_pattern: re.Pattern[str]  # the longest unit spelling at a position
    derived_words: frozenset[str]  # "ratio": the analytes named before it are in passing
    own_specimens: frozenset[str]  # blood: an analyte said after another specimen is in passing
    #: words before which a condition's name in capitals is another abbreviation (SI joint)
    abbreviation_not_before: frozenset[str]
    slots: Mapping[str, Slot]
    slot_triggers: PhraseMatcher[str]
    slot_values: Mapping[str, PhraseMatcher[str]]
    slot_kinds: Mapping[str, PhraseMatcher[str]]
    specialty_phrases: PhraseMatcher[str]
    referral_triggers: PhraseMatcher[str]
    procedure_phrases: PhraseMatcher[str]
    morning_before: int
    evening_from: int
    states: PhraseMatcher[StateRule]
    mentions: PhraseMatcher[str]
    causes: PhraseMatcher[str]  # "secondary to": the condition after it is another's cause
    # nouns a thing's name qualifies: "drug" (a drug's only: "methotrexate day") or "any"
    modified_heads: PhraseMatcher[str]
    switch_phrases: PhraseMatcher[str]
    episodes: frozenset[str]  # an episode of a condition, after its name ("asthma attack")
    context: PhraseMatcher[ContextRule]  # context.json's ConText rules and assertion.json's
    # what a plan is timed by ("before the operation"): a change before one is a plan
    before_events: PhraseMatcher[str]
    # a sentence opening with one ("Not confirmed with family.") hedges the whole statement
    statement_hedges: PhraseMatcher[str]
    events: frozenset[str]
    past_forms: frozenset[str]  # "when I was ...": a time in the past, not a condition
    either_mood: frozenset[str]  # "Cut down to ...": advice, or what was done
    standing_requests: PhraseMatcher[str]  # "... from now on": a request that lasts
    provisos: PhraseMatcher[str]  # "subject to bloods": a change that holds on a condition
    relatives_by_pronoun: Mapping[str, frozenset[str]]  # "she" -> the relatives she can be
    take_verbs: frozenset[str]  # "stopped taking X": a way of taking a thing, not another act
    # a relative who writes the statement -> the words they name the patient by ("mum")
    writer_kin: Mapping[str, frozenset[str]]
    # a change disputed in its sentence: contrast, pointer and continuation words
    disputes: Mapping[str, frozenset[str]]
    # a relative as a label after what is theirs: the words before ("lead") and after ("tail")
    labels: Mapping[str, frozenset[str]]
    dose_units: frozenset[str]
    frequencies: PhraseMatcher[str]
    #: the frequencies that say when a once-daily dose is taken ("in the morning")
    once_daily_timings: frozenset[str]
    #: the frequencies that say when, not how often ("with meals")
    uncounted_timings: frozenset[str]
    #: the doses a day of the frequencies that say it ("twice daily": 2)
    doses_a_day: Mapping[str, float]
    formulations: PhraseMatcher[str]
    qualitative: PhraseMatcher[str]
    number_words: Mapping[str, float]
    reporting: frozenset[str]
    measuring: frozenset[str]  # "carer weighed him": a person acting on the patient
    #: beside a disease in an immunization statement, the vaccine against it ("tetanus booster")
    vaccine_words: frozenset[str]
    additions: PhraseMatcher[str]
    qualifiers: Mapping[str, PhraseMatcher[str]]
    contrast: PhraseMatcher[str]
    spread: PhraseMatcher[str]
    single_doses: PhraseMatcher[str]  # "stat", "a single dose": one dose given, no new order
    spoilt_samples: PhraseMatcher[str]  # "haemolysed": the value may be the sample's
    durations: Mapping[str, float]
    periods: Mapping[str, float]  # days an amount is counted over ("a week": 7)
    now_words: PhraseMatcher[str]
    occasions: PhraseMatcher[str]  # one session of a recurring plan ("this week", "today")
    months: Mapping[str, int]
    #: a season's name and the month it begins (the northern hemisphere's: "summer" 6)
    seasons: Mapping[str, int]
    weekdays: tuple[str, ...]  # Monday first, as datetime.weekday() counts them
    stopwords: frozenset[str]  # the function words and the clinical filler
    function_words: frozenset[str]  # stop words of a keyword query too
    chart_headings: frozenset[str]  # "Plan:", "Allergy:": a heading, never a chat speaker
    #: words whose full stop ends no sentence: titles ("Dr. Okafor"), and the others where a
    #: lower-case word or a number follows ("approx. 15")
    titles: frozenset[str]
    abbreviations: frozenset[str]
    drugs: Mapping[str, Any]
    questions: Mapping[str, Any]
    allergic_reactions: frozenset[str] = frozenset()  # findings that make a report an allergy

    def concept_keys(self, concept_id: str) -> str:
        return f"condition:{concept_id}"

    def analyte_for_code(self, code: str) -> Analyte | None:
        """The analyte a LOINC code (its main one or another of the same measurement) names."""
        aid = self.analyte_by_code.get(code)
        return self.analytes[aid] if aid else None

    def all_phrases(self) -> int:
        return sum(
            m.size
            for m in (
                self.condition_phrases,
                self.analyte_phrases,
                self.slot_triggers,
                self.states,
                self.context,
                self.frequencies,
                self.formulations,
            )
        )


# --- loading -----------------------------------------------------------------------------------
def _read(name: str) -> tuple[bytes, dict[str, Any]]:
    path = resources.files("memory_core").joinpath("data", "lexicon", f"{name}.json")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"lexicon file {name}.json is missing: {exc}") from exc
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigurationError(f"lexicon file {name}.json is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"lexicon file {name}.json: the top level must be an object")
    return raw, data


class _Check:
    """Field checks that name the file and the entry of what is wrong."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, where: str, what: str) -> ConfigurationError:
        return ConfigurationError(f"lexicon {self.file}.json, {where}: {what}")

    def obj(self, v: Any, where: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise self.fail(where, "must be an object")
        return v

    def strs(self, v: Any, where: str, *, empty: bool = False) -> list[str]:
        if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
            raise self.fail(where, "must be a list of non-empty strings")
        if not v and not empty:
            raise self.fail(where, "must not be empty")
        return v

    def str_(self, v: Any, where: str) -> str:
        if not isinstance(v, str) or not v.strip():
            raise self.fail(where, "must be a non-empty string")
        return v

    def flag(self, v: Any, where: str) -> bool:
        if not isinstance(v, bool):
            raise self.fail(where, "must be true or false")
        return v

    def one_of(self, v: Any, allowed: Iterable[str], where: str) -> str:
        allowed = frozenset(allowed)
        if v not in allowed:
            raise self.fail(where, f"must be one of {sorted(allowed)}, got {v!r}")
        return str(v)

    def phrases(
        self, matcher: PhraseMatcher[_V], phrases: list[str], value: _V, where: str
    ) -> None:
        for p in phrases:
            try:
                matcher.add(p, value)
            except ValueError as exc:
                raise self.fail(where, str(exc)) from exc


def _allergic_reactions(data: dict[str, Any], concepts: Mapping[str, Concept]) -> frozenset[str]:
    c = _Check("conditions")
    block = c.obj(data.get("allergic_reactions", {"concepts": []}), "allergic_reactions")
    ids = c.strs(block.get("concepts", []), "allergic_reactions.concepts", empty=True)
    for cid in ids:
        if cid not in concepts:
            raise c.fail("allergic_reactions.concepts", f"{cid!r} is no concept")
    return frozenset(ids)


def _said_with_verbs(names: Sequence[str], verbs: Mapping[str, Sequence[str]]) -> list[str]:
    """A finding of a body part said with the part as the subject of a verb (conditions.json's
    ``symptom_verbs``): "joint aches" -> "joints ached", "joint aching", ...; "chest pain" ->
    "chest hurts", ... Two-word names only; every form of each verb and of the part
    (lemminflect)."""
    if not verbs:
        return []
    from lemminflect import getAllInflections, getAllLemmas

    out: list[str] = []
    for name in names:
        words = name.split()
        if len(words) != 2:
            continue
        part, symptom = words
        lemmas = getAllLemmas(symptom)
        lemma = (lemmas.get("NOUN") or lemmas.get("VERB") or [""])[0]
        said = [*verbs.get(symptom, ()), *verbs.get(lemma, ())]
        nouns = getAllLemmas(part).get("NOUN")
        if not said or not nouns:
            continue
        parts = {part, *(f for fs in getAllInflections(nouns[0], upos="NOUN").values() for f in fs)}
        forms = {f for v in said for fs in getAllInflections(v, upos="VERB").values() for f in fs}
        out += [f"{p} {f}" for p in sorted(parts) for f in sorted(forms)]
    return out


def _concepts(data: dict[str, Any]) -> tuple[dict[str, Concept], PhraseMatcher[str]]:
    c = _Check("conditions")
    out: dict[str, Concept] = {}
    matcher: PhraseMatcher[str] = PhraseMatcher()
    raw_verbs = c.obj(data.get("symptom_verbs", {}), "symptom_verbs")
    verbs = {
        k: tuple(c.strs(v, f"symptom_verbs.{k}")) for k, v in raw_verbs.items() if k != "about"
    }
    for i, e in enumerate(data.get("concepts") or []):
        where = f"concepts[{i}]"
        e = c.obj(e, where)
        cid = c.str_(e.get("id"), f"{where}.id")
        if cid in out:
            raise c.fail(f"{where}.id", f"{cid!r} is listed twice")
        kind = c.one_of(e.get("kind"), ("disorder", "finding"), f"{where}.kind")
        within = tuple(c.strs(e.get("within", []), f"{where}.within", empty=True))
        measured = tuple(c.strs(e.get("measured_by", []), f"{where}.measured_by", empty=True))
        follows = tuple(c.strs(e.get("follows", []), f"{where}.follows", empty=True))
        out[cid] = Concept(cid, kind, within, measured, follows)
        names = [x for n in c.strs(e.get("names"), f"{where}.names") for x in alternatives(n)]
        if kind == "finding":
            names += [v for v in _said_with_verbs(names, verbs) if v not in names]
        c.phrases(matcher, names, cid, where)
    for cid, concept in out.items():
        for field, ids in (("within", concept.within), ("follows", concept.follows)):
            for w in ids:
                if w not in out:
                    raise c.fail(f"concept {cid!r}.{field}", f"{w!r} is no concept")
    return out, matcher


def _analyte(c: _Check, e: Any, where: str) -> tuple[Analyte, list[str]]:
    """One entry of labs.json's analytes, checked (and its names)."""
    e = c.obj(e, where)
    aid = c.str_(e.get("id"), f"{where}.id")
    loinc = c.str_(e.get("loinc"), f"{where}.loinc")
    if not re.fullmatch(r"\d{1,7}-\d", loinc):
        raise c.fail(f"{where}.loinc", f"{loinc!r} is not a LOINC code (digits-check digit)")
    convs = []
    for j, cv in enumerate(e.get("conversions", [])):
        cv = c.obj(cv, f"{where}.conversions[{j}]")
        scale, offset = cv.get("scale"), cv.get("offset", 0)
        if not isinstance(scale, int | float) or not isinstance(offset, int | float):
            raise c.fail(f"{where}.conversions[{j}]", "scale and offset must be numbers")
        convs.append((c.str_(cv.get("unit"), f"{where}.conversions[{j}].unit"), scale, offset))
    a = Analyte(
        id=aid,
        loinc=loinc,
        codes=tuple(c.strs(e.get("codes", []), f"{where}.codes", empty=True)),
        kind=c.one_of(e.get("kind"), tuple(KIND_TYPES), f"{where}.kind"),
        unit=str(e.get("unit", "")),
        parent=str(e.get("parent", "")),
        qualitative=bool(e.get("qualitative", False)),
        conversions=tuple((u, float(s), float(o)) for u, s, o in convs),
        when=tuple(
            (str(k), c.str_(v, f"{where}.when.{k}"))
            for k, v in c.obj(e.get("when", {}), f"{where}.when").items()
        ),
        units=tuple(
            c.strs(
                e.get("units", [e["unit"]] if e.get("unit") else []), f"{where}.units", empty=True
            )
        ),
        mw=_number(c, e.get("mw", 0), f"{where}.mw"),
        valence=_number(c, e.get("valence", 1), f"{where}.valence"),
        bounds=_bounds(c, e.get("bounds"), f"{where}.bounds"),
        named_by=tuple(c.strs(e.get("named_by", []), f"{where}.named_by", empty=True)),
    )
    return a, c.strs(e.get("names"), f"{where}.names")


def _number(c: _Check, v: Any, where: str) -> float:
    if not isinstance(v, int | float) or isinstance(v, bool):
        raise c.fail(where, "must be a number")
    return float(v)


def _bounds(c: _Check, v: Any, where: str) -> tuple[float, ...]:
    if v is None:
        return ()
    if not (isinstance(v, list) and len(v) == 2 and v[0] < v[1]):
        raise c.fail(where, "must be [low, high] with low < high")
    return (_number(c, v[0], where), _number(c, v[1], where))


def _units_of(analytes: Mapping[str, Analyte], units: Mapping[str, Unit]) -> None:
    """Every unit an analyte names is a unit of units.json, its canonical one among them."""
    c = _Check("labs")
    for a in analytes.values():
        for code in (a.unit, *a.units, *(u for u, _s, _o in a.conversions)):
            if code and unit_key(code) not in units:
                raise c.fail(f"analyte {a.id!r}", f"unit {code!r} is no unit of units.json")
        if a.unit and a.unit not in a.units:
            raise c.fail(f"analyte {a.id!r}.units", f"must list its unit {a.unit!r}")
        for code in a.named_by:
            if code not in a.units:
                raise c.fail(f"analyte {a.id!r}.named_by", f"{code!r} is none of its units")
            if any(code in b.units for b in analytes.values() if b is not a):
                raise c.fail(f"analyte {a.id!r}.named_by", f"{code!r} measures another test too")


def _analytes(
    data: dict[str, Any],
) -> tuple[dict[str, Analyte], PhraseMatcher[str], dict[str, str], dict[str, str]]:
    c = _Check("labs")
    out: dict[str, Analyte] = {}
    matcher: PhraseMatcher[str] = PhraseMatcher()
    by_code: dict[str, str] = {}
    for i, e in enumerate(data.get("analytes") or []):
        where = f"analytes[{i}]"
        a, names = _analyte(c, e, where)
        if a.id in out:
            raise c.fail(f"{where}.id", f"{a.id!r} is listed twice")
        out[a.id] = a
        for code in (a.loinc, *a.codes):
            if code in by_code:
                raise c.fail(where, f"LOINC {code} is also listed under {by_code[code]!r}")
            by_code[code] = a.id
        c.phrases(matcher, names, a.id, where)
    for a in out.values():
        if a.parent and a.parent not in out:
            raise c.fail(f"analyte {a.id!r}.parent", f"{a.parent!r} is no analyte")
        if a.when and not a.parent:
            raise c.fail(f"analyte {a.id!r}.when", "only an analyte with a parent has one")
    symbols = {str(k): str(v) for k, v in c.obj(data.get("symbols", {}), "symbols").items()}
    for sym, aid in symbols.items():
        if aid not in out:
            raise c.fail(f"symbols.{sym}", f"{aid!r} is no analyte")
    labels = c.obj(data.get("labels", {}), "labels")
    for aid, label in labels.items():
        if aid == "about":
            continue
        if aid not in out:
            raise c.fail(f"labels.{aid}", f"{aid!r} is no analyte")
        out[aid] = replace(out[aid], label=c.str_(label, f"labels.{aid}"))
    return out, matcher, by_code, symbols


#: The shortest "-ing" word also read with its "g" dropped ("smokin", "drinkin").
SPOKEN_MIN = 6


def numbered(phrases: list[str]) -> list[str]:
    """``phrases`` and each in the other number of its last word ("examinations" ->
    "examination", "abnormal result" -> "abnormal results"): a kind of a slot is named either
    way ("for anything needing examination", "if any result is abnormal")."""
    out = list(phrases)
    have = set(out)
    for p in phrases:
        head, _, last = p.rpartition(" ")
        if last.endswith("ss") or not last.isalpha():
            continue
        other = last[:-1] if last.endswith("s") else last + "s"
        said = f"{head} {other}".strip()
        if said not in have:
            out.append(said)
            have.add(said)
    return out


def spoken(phrases: list[str]) -> list[str]:
    """``phrases`` and, for each with an "-ing" word, the phrase as it is said with the g
    dropped ("stopped smoking" -> "stopped smokin"): patients write habits as they say them."""
    out = list(phrases)
    have = set(out)
    for p in phrases:
        words = p.split()
        said = " ".join(w[:-1] if len(w) >= SPOKEN_MIN and w.endswith("ing") else w for w in words)
        if said not in have:
            out.append(said)
            have.add(said)
    return out


def _slots(data: dict[str, Any]) -> dict[str, Any]:
    c = _Check("slots")
    slots: dict[str, Slot] = {}
    triggers: PhraseMatcher[str] = PhraseMatcher()
    values: dict[str, PhraseMatcher[str]] = {}
    kinds: dict[str, PhraseMatcher[str]] = {}
    for i, e in enumerate(data.get("slots") or []):
        where = f"slots[{i}]"
        e = c.obj(e, where)
        sid = c.str_(e.get("id"), f"{where}.id")
        if sid in slots:
            raise c.fail(f"{where}.id", f"{sid!r} is listed twice")
        slots[sid] = Slot(
            id=sid,
            single_valued=bool(e.get("single_valued", False)),
            people=bool(e.get("people", False)),
            measure=bool(e.get("measure", False)),
            types=frozenset(c.strs(e.get("types"), f"{where}.types")),
            by_value=bool(e.get("keyed_by_value", False)),
            exclusive=tuple(
                frozenset(c.strs(g, f"{where}.exclusive[{j}]"))
                for j, g in enumerate(e.get("exclusive", []))
            ),
            count_unit=c.str_(e["count_unit"], f"{where}.count_unit") if "count_unit" in e else "",
            particular=(
                frozenset(c.strs(e["particular"], f"{where}.particular"))
                if "particular" in e
                else frozenset()
            ),
            named=c.flag(e.get("named", False), f"{where}.named"),
            calls=frozenset(c.strs(e["calls"], f"{where}.calls")) if "calls" in e else frozenset(),
        )
        unknown = {v for g in slots[sid].exclusive for v in g} - set(e.get("values", {}))
        if unknown:
            raise c.fail(f"{where}.exclusive", f"not a value of the slot: {sorted(unknown)}")
        spellings = {w for ws in e.get("values", {}).values() for w in ws}
        if slots[sid].particular - spellings:
            raise c.fail(
                f"{where}.particular",
                f"not a spelling of the slot's values: {sorted(slots[sid].particular - spellings)}",
            )
        c.phrases(triggers, spoken(c.strs(e.get("triggers"), f"{where}.triggers")), sid, where)
        vm: PhraseMatcher[str] = PhraseMatcher()
        for value, phrases in c.obj(e.get("values", {}), f"{where}.values").items():
            c.phrases(vm, spoken(c.strs(phrases, f"{where}.values.{value}")), value, where)
            if e.get("values_are_triggers"):
                c.phrases(triggers, phrases, sid, where)
        values[sid] = vm
        km: PhraseMatcher[str] = PhraseMatcher()
        for value, phrases in c.obj(e.get("kinds", {}), f"{where}.kinds").items():
            c.phrases(km, numbered(c.strs(phrases, f"{where}.kinds.{value}")), value, where)
        kinds[sid] = km
    spec = c.obj(data.get("specialties"), "specialties")
    specialties: PhraseMatcher[str] = PhraseMatcher()
    for value, phrases in c.obj(spec.get("values"), "specialties.values").items():
        c.phrases(specialties, c.strs(phrases, f"specialties.values.{value}"), value, "specialties")
    referral: PhraseMatcher[str] = PhraseMatcher()
    c.phrases(
        referral,
        c.strs(spec.get("referral_triggers"), "specialties.referral_triggers"),
        "referral",
        "specialties",
    )
    proc = c.obj(data.get("procedures"), "procedures")
    procedures: PhraseMatcher[str] = PhraseMatcher()
    for value, phrases in c.obj(proc.get("values"), "procedures.values").items():
        c.phrases(procedures, c.strs(phrases, f"procedures.values.{value}"), value, "procedures")
    clock = c.obj(data.get("clock_times"), "clock_times")
    return {
        "slots": slots,
        "slot_triggers": triggers,
        "slot_values": values,
        "slot_kinds": kinds,
        "specialty_phrases": specialties,
        "referral_triggers": referral,
        "procedure_phrases": procedures,
        "morning_before": int(clock.get("morning_before", 12)),
        "evening_from": int(clock.get("evening_from", 17)),
    }


def _own_specimens(labs: dict[str, Any], words: dict[str, Any]) -> frozenset[str]:
    """The specimens the analytes are measured in: each a value of words.json's specimen
    qualifier (the one vocabulary of specimens)."""
    own = _Check("labs").strs(labs.get("specimens"), "specimens")
    known = set(words.get("qualifiers", {}).get("specimen", {}))
    unknown = [s for s in own if s not in known]
    if unknown:
        raise ValueError(f"labs.json specimens: not a words.json specimen qualifier: {unknown}")
    return frozenset(own)


def _states(data: dict[str, Any]) -> dict[str, Any]:
    c = _Check("states")
    states: PhraseMatcher[StateRule] = PhraseMatcher()
    for i, e in enumerate(data.get("states") or []):
        where = f"states[{i}]"
        e = c.obj(e, where)
        rule = StateRule(
            state=c.one_of(e.get("state"), STATES, f"{where}.state"),
            direction=c.one_of(
                e.get("direction"), ("FORWARD", "BACKWARD", "BIDIRECTIONAL"), f"{where}.direction"
            ),
            kinds=frozenset(c.one_of(k, KEY_KINDS, f"{where}.kinds") for k in e.get("kinds", [])),
            record=c.flag(e.get("record", False), f"{where}.record"),
            hold=c.flag(e.get("hold", False), f"{where}.hold"),
            negated=c.flag(e.get("negated", False), f"{where}.negated"),
        )
        c.phrases(states, [c.str_(e.get("literal"), f"{where}.literal")], rule, where)
    mentions: PhraseMatcher[str] = PhraseMatcher()
    c.phrases(mentions, c.strs(data.get("mentions"), "mentions"), "mention", "mentions")
    causes: PhraseMatcher[str] = PhraseMatcher()
    c.phrases(causes, c.strs(data.get("causes"), "causes"), "cause", "causes")
    heads: PhraseMatcher[str] = PhraseMatcher()
    for kinds, words in c.obj(data.get("modified_heads"), "modified_heads").items():
        kind = c.one_of(kinds, ("drug", "condition", "slot", "any"), "modified_heads")
        where = f"modified_heads.{kind}"
        c.phrases(heads, c.strs(words, where), kinds, where)
    switches: PhraseMatcher[str] = PhraseMatcher()
    for i, e in enumerate(data.get("switches") or []):
        e = c.obj(e, f"switches[{i}]")
        c.phrases(switches, [c.str_(e.get("from"), f"switches[{i}].from")], "from", "switches")
    c.phrases(
        switches, c.strs(data.get("switch_arrows"), "switch_arrows"), "arrow", "switch_arrows"
    )
    return {
        "states": states,
        "mentions": mentions,
        "causes": causes,
        "modified_heads": heads,
        "switch_phrases": switches,
        "episodes": frozenset(c.strs(data.get("episodes"), "episodes")),
    }


_ALTERNATION = re.compile(r"\{([^{}]*)\}")


def alternatives(literal: str) -> list[str]:
    """A rule's literal with its ``{a|b}`` groups spelled out, every combination ("in {his|her}
    {20s|twenties}": four phrases); a literal without braces is itself."""
    out = [""]
    at = 0
    for m in _ALTERNATION.finditer(literal):
        head = literal[at : m.start()]
        out = [f"{o}{head}{option}" for o in out for option in m.group(1).split("|")]
        at = m.end()
    return [" ".join(f"{o}{literal[at:]}".split()) for o in out]


def _context(context: dict[str, Any], assertion: dict[str, Any]) -> dict[str, Any]:
    """context.json's ConText rules and assertion.json's, in one matcher (a literal listed in
    both files is an error: only one of its rules could ever match)."""
    matcher: PhraseMatcher[ContextRule] = PhraseMatcher()
    seen: dict[tuple[str, ...], str] = {}
    for file, data, field in (
        ("context", context, "context_rules"),
        ("assertion", assertion, "rules"),
    ):
        c = _Check(file)
        for i, e in enumerate(data.get(field) or []):
            where = f"{field}[{i}]"
            e = c.obj(e, where)
            rule = ContextRule(
                category=c.one_of(e.get("category"), CATEGORIES, f"{where}.category"),
                direction=c.one_of(e.get("direction"), DIRECTIONS, f"{where}.direction"),
                kinds=frozenset(
                    c.one_of(k, RULE_KINDS, f"{where}.kinds") for k in e.get("kinds", [])
                ),
            )
            literals = alternatives(c.str_(e.get("literal"), f"{where}.literal"))
            for literal in literals:
                toks = phrase_tokens(literal)
                if toks in seen:
                    raise c.fail(f"{where}.literal", f"{literal!r} is also a rule of {seen[toks]}")
                seen[toks] = f"{file}.json"
            c.phrases(matcher, literals, rule, where)
    c = _Check("assertion")
    before: PhraseMatcher[str] = PhraseMatcher()
    c.phrases(before, c.strs(assertion.get("before_events"), "before_events"), "before", "before")
    hedges: PhraseMatcher[str] = PhraseMatcher()
    c.phrases(
        hedges, c.strs(assertion.get("statement_hedges"), "statement_hedges"), "hedge", "hedge"
    )
    standing: PhraseMatcher[str] = PhraseMatcher()
    said = c.strs(assertion.get("standing_requests"), "standing_requests")
    c.phrases(standing, said, "standing", "standing_requests")
    provisos: PhraseMatcher[str] = PhraseMatcher()
    for key, value in (("provisos", "proviso"), ("not_provisos", "none")):
        said = [a for p in c.strs(assertion.get(key), key) for a in alternatives(p)]
        c.phrases(provisos, said, value, key)
    return {
        "context": matcher,
        "before_events": before,
        "statement_hedges": hedges,
        "events": frozenset(c.strs(assertion.get("events"), "events")),
        "past_forms": frozenset(c.strs(assertion.get("past_forms"), "past_forms")),
        "either_mood": frozenset(c.strs(assertion.get("either_mood"), "either_mood")),
        "standing_requests": standing,
        "provisos": provisos,
        "relatives_by_pronoun": {
            k: frozenset(c.strs(v, f"relatives_by_pronoun.{k}"))
            for k, v in c.obj(
                assertion.get("relatives_by_pronoun", {}), "relatives_by_pronoun"
            ).items()
        },
        "take_verbs": frozenset(c.strs(assertion.get("take_verbs"), "take_verbs")),
        "writer_kin": _writer_kin(c, assertion.get("writer_kin") or []),
        "disputes": {
            k: frozenset(c.strs(v, f"disputes.{k}"))
            for k, v in c.obj(assertion.get("disputes", {}), "disputes").items()
        },
        "labels": {
            k: frozenset(c.strs(v, f"labels.{k}"))
            for k, v in c.obj(assertion.get("labels", {}), "labels").items()
        },
    }


def _writer_kin(c: _Check, groups: list[Any]) -> dict[str, frozenset[str]]:
    """assertion.json's ``writer_kin``: each writer's word (its phrase tokens, joined) -> the
    words that writer names the patient by."""
    out: dict[str, frozenset[str]] = {}
    for i, g in enumerate(groups):
        g = c.obj(g, f"writer_kin[{i}]")
        said = c.strs(g.get("patient"), f"writer_kin[{i}].patient")
        patient = frozenset(" ".join(phrase_tokens(w)) for w in said)
        for w in c.strs(g.get("writer"), f"writer_kin[{i}].writer"):
            key = " ".join(phrase_tokens(w))
            out[key] = out.get(key, frozenset()) | patient
    return out


#: an abbreviation short enough to be written dotted, one letter at a time ("bd", "qds", "qhs")
_SHORT_ABBREVIATION = re.compile(r"[a-z]{2,4}")


def _words(data: dict[str, Any]) -> dict[str, Any]:
    c = _Check("words")

    def grouped(field: str, dotted: bool = False) -> PhraseMatcher[str]:
        """``dotted``: each short abbreviation is read with a full stop after each letter
        too ("qds" as "q.d.s.", whose tokens are its letters)."""
        m: PhraseMatcher[str] = PhraseMatcher()
        for value, phrases in c.obj(data.get(field), field).items():
            listed = c.strs(phrases, f"{field}.{value}")
            spelt = [" ".join(p) for p in listed if dotted and _SHORT_ABBREVIATION.fullmatch(p)]
            c.phrases(m, listed + spelt, value, field)
        return m

    def grouped_of(groups: dict[str, Any], where: str) -> PhraseMatcher[str]:
        m: PhraseMatcher[str] = PhraseMatcher()
        for value, phrases in groups.items():
            c.phrases(m, c.strs(phrases, f"{where}.{value}"), value, where)
        return m

    def listed(field: str) -> PhraseMatcher[str]:
        m: PhraseMatcher[str] = PhraseMatcher()
        c.phrases(m, c.strs(data.get(field), field), field, field)
        return m

    def but_not(m: PhraseMatcher[str], field: str) -> PhraseMatcher[str]:
        """``m`` with the phrases of ``field`` that hold its words in another sense, valued "":
        the longest match where both start ("since New Year" adds nothing; "back to baseline"
        names no body site)."""
        c.phrases(m, c.strs(data.get(field, []), field, empty=True), "", field)
        return m

    def additions() -> PhraseMatcher[str]:
        """The addition words, but not the phrases that begin with one and add nothing ("since
        New Year", "every other day")."""
        return but_not(listed("additions"), "not_additions")

    def qualifier(groups: dict[str, Any], where: str) -> PhraseMatcher[str]:
        """A qualifier's phrases, but not the phrases with its words in another sense ("back to
        baseline", "came back")."""
        return but_not(grouped_of(groups, where), "not_qualifiers")

    numbers = c.obj(data.get("number_words"), "number_words")
    if not all(isinstance(v, int | float) for v in numbers.values()):
        raise c.fail("number_words", "values must be numbers")
    months = c.obj(data.get("months"), "months")
    if not all(isinstance(v, int) and 1 <= v <= 12 for v in months.values()):
        raise c.fail("months", "values must be month numbers 1-12")
    weekdays = tuple(c.strs(data.get("weekdays"), "weekdays"))
    if len(weekdays) != 7:
        raise c.fail("weekdays", "must name the seven days, Monday first")
    seasons = c.obj(data.get("seasons"), "seasons")
    if not all(isinstance(v, int) and 1 <= v <= 12 for v in seasons.values()):
        raise c.fail("seasons", "values must be month numbers 1-12")
    stops = c.obj(data.get("stopwords"), "stopwords")
    function = c.strs(stops.get("function"), "stopwords.function")
    clinical = c.strs(stops.get("clinical"), "stopwords.clinical")
    abbreviations = c.obj(data.get("period_abbreviations"), "period_abbreviations")
    doses_a_day = c.obj(data.get("doses_a_day"), "doses_a_day")
    if not all(isinstance(v, int) and v > 0 for v in doses_a_day.values()):
        raise c.fail("doses_a_day", "values must be whole numbers of doses")
    if set(doses_a_day) - set(c.obj(data.get("frequencies"), "frequencies")):
        raise c.fail("doses_a_day", "names must be frequencies")
    return {
        "dose_units": frozenset(
            " ".join(phrase_tokens(u)) for u in c.strs(data.get("dose_units"), "dose_units")
        ),
        "frequencies": grouped("frequencies", dotted=True),
        "once_daily_timings": frozenset(
            c.strs(data.get("once_daily_timings"), "once_daily_timings")
        ),
        "uncounted_timings": frozenset(c.strs(data.get("uncounted_timings"), "uncounted_timings")),
        "doses_a_day": {str(k): float(v) for k, v in doses_a_day.items()},
        "formulations": grouped("formulations"),
        "qualitative": grouped("qualitative"),
        "number_words": {str(k): float(v) for k, v in numbers.items()},
        "reporting": frozenset(c.strs(data.get("reporting"), "reporting")),
        "vaccine_words": frozenset(c.strs(data.get("vaccine_words"), "vaccine_words")),
        "measuring": frozenset(c.strs(data.get("measuring"), "measuring")),
        "additions": additions(),
        "contrast": listed("contrast"),
        "spread": listed("spread"),
        "single_doses": listed("single_doses"),
        "spoilt_samples": listed("spoilt_samples"),
        "durations": {
            str(k): float(v) for k, v in c.obj(data.get("durations"), "durations").items()
        },
        "periods": {str(k): float(v) for k, v in c.obj(data.get("periods"), "periods").items()},
        "qualifiers": {
            dim: qualifier(c.obj(groups, f"qualifiers.{dim}"), f"qualifiers.{dim}")
            for dim, groups in c.obj(data.get("qualifiers"), "qualifiers").items()
        },
        "now_words": listed("now_words"),
        "occasions": listed("occasions"),
        "months": {str(k): int(v) for k, v in months.items()},
        "seasons": {str(k): int(v) for k, v in seasons.items()},
        "weekdays": weekdays,
        "function_words": frozenset(function),
        "chart_headings": frozenset(c.strs(data.get("chart_headings"), "chart_headings")),
        "titles": frozenset(c.strs(abbreviations.get("titles"), "period_abbreviations.titles")),
        "abbreviations": frozenset(
            c.strs(abbreviations.get("before_lower"), "period_abbreviations.before_lower")
        ),
        "stopwords": frozenset(function) | frozenset(clinical),
    }


def _drugs(data: dict[str, Any]) -> dict[str, Any]:
    c = _Check("drugs")
    sup = c.obj(data.get("supplement"), "supplement")
    for k, v in sup.items():
        c.str_(v, f"supplement.{k}")
    kinds = c.obj(data.get("non_drug_allergens"), "non_drug_allergens")
    for k, v in kinds.items():
        c.one_of(v, ("food", "environment", "venom"), f"non_drug_allergens.{k}")
    return {
        "supplement": {str(k).lower(): str(v) for k, v in sup.items()},
        "non_drug_allergens": {str(k): str(v) for k, v in kinds.items()},
        "not_drugs": frozenset(c.strs(data.get("not_drugs"), "not_drugs")),
        "aliases": {str(k): str(v) for k, v in c.obj(data.get("aliases"), "aliases").items()},
        "uk_spellings": {
            str(k): str(v) for k, v in c.obj(data.get("uk_spellings"), "uk_spellings").items()
        },
        "rescue": frozenset(c.strs(data.get("rescue"), "rescue")),
        "classes": tuple(c.strs(data.get("classes"), "classes")),
        "same_moiety": _endings(c, data.get("same_moiety", []), "same_moiety"),
    }


def _endings(c: _Check, v: Any, where: str) -> tuple[tuple[str, str], ...]:
    """Pairs of name endings ([["ic acid", "ate"]])."""
    if not isinstance(v, list):
        raise c.fail(where, "must be a list of [ending, ending] pairs")
    out = []
    for i, pair in enumerate(v):
        got = c.strs(pair, f"{where}[{i}]")
        if len(got) != 2:
            raise c.fail(f"{where}[{i}]", "must be two endings")
        out.append((got[0], got[1]))
    return tuple(out)


def _questions(data: dict[str, Any]) -> dict[str, Any]:
    """The query vocabulary (memory_core.vocabulary): checked for shape; phrases of 1-3 words."""
    c = _Check("questions")
    c.strs(data.get("medication_heads"), "medication_heads")
    for i, e in enumerate(data.get("drug_classes") or []):
        e = c.obj(e, f"drug_classes[{i}]")
        c.str_(e.get("name"), f"drug_classes[{i}].name")
        c.strs(e.get("qualifiers", []), f"drug_classes[{i}].qualifiers", empty=True)
        c.strs(e.get("names", []), f"drug_classes[{i}].names", empty=True)
        c.strs(e.get("members"), f"drug_classes[{i}].members")
    for group in ("body_systems", "contact"):
        for i, e in enumerate(data.get(group) or []):
            e = c.obj(e, f"{group}[{i}]")
            c.str_(e.get("name"), f"{group}[{i}].name")
            for p in c.strs(e.get("phrases"), f"{group}[{i}].phrases"):
                if not 0 < len(phrase_tokens(p)) <= 3:
                    raise c.fail(f"{group}[{i}].phrases", f"{p!r}: 1 to 3 words")
            c.strs(e.get("terms"), f"{group}[{i}].terms")
    return data


def load() -> Lexicon:
    """Read, validate and compile every file (uncached: :func:`lexicon` caches it)."""
    raws: list[bytes] = []
    data: dict[str, dict[str, Any]] = {}
    for name in FILES:
        raw, data[name] = _read(name)
        raws.append(raw)
    digest = hashlib.sha256(READER_VERSION.encode())
    for raw in raws:
        digest.update(hashlib.sha256(raw).digest())
    concepts, condition_phrases = _concepts(data["conditions"])
    analytes, analyte_phrases, by_code, symbols = _analytes(data["labs"])
    try:
        units, unit_pattern = compile_units(data["units"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"lexicon units.json: {exc}") from exc
    _units_of(analytes, units)
    for concept in concepts.values():
        for aid in concept.measured_by:
            if aid not in analytes:
                raise ConfigurationError(
                    f"lexicon conditions.json, concept {concept.id!r}.measured_by: {aid!r} is no "
                    "analyte of labs.json"
                )
    return Lexicon(
        version=digest.hexdigest()[:12],
        concepts=concepts,
        condition_phrases=condition_phrases,
        analytes=analytes,
        analyte_phrases=analyte_phrases,
        analyte_by_code=by_code,
        symbols=symbols,
        units=units,
        unit_pattern=unit_pattern,
        derived_words=frozenset(_Check("labs").strs(data["labs"].get("derived"), "derived")),
        own_specimens=_own_specimens(data["labs"], data["words"]),
        abbreviation_not_before=frozenset(
            _Check("conditions").strs(
                data["conditions"].get("abbreviation_not_before"), "abbreviation_not_before"
            )
        ),
        **_slots(data["slots"]),
        **_states(data["states"]),
        **_context(data["context"], data["assertion"]),
        **_words(data["words"]),
        drugs=_drugs(data["drugs"]),
        questions=_questions(data["questions"]),
        allergic_reactions=_allergic_reactions(data["conditions"], concepts),
    )


_lock = threading.Lock()
_loaded: Lexicon | None = None


def lexicon() -> Lexicon:
    """The compiled lexicon, loaded on first use (never at import)."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = load()
    return _loaded


def version() -> str:
    return lexicon().version
