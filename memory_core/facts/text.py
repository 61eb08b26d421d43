"""One statement's text as the readers see it: tokens with their character spans, sentences
and clauses, and the things named in it (drugs, lab analytes, conditions, allergens, chart
slots) as spans of tokens. Pure; cached per text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import drugs
from ..normalize import fold
from .lexicon import Lexicon, Match, PhraseMatcher, lexicon, tokenize
from .model import KeyKind, subject_kinds
from .spoken import spoken_numbers

#: What ends a sentence between two tokens; what ends a clause (for a state word's reach).
_SENTENCE_END = re.compile(r"[.;!\n]|\?\s")
_CLAUSE_END = re.compile(r"[,(){}\[\]]|\s(?:--?|[–—])\s|:\s")


@dataclass(frozen=True, slots=True)
class Span:
    """A thing named in a statement: its key, tokens ``start``..``end`` (exclusive), and what
    kind of mention it is (``drug``, ``combination`` (a product of several ingredients),
    ``ingredient``, ``class``, ``lab``, ``condition``, ``allergen``, ``slot``)."""

    key: str
    start: int
    end: int
    how: str


@dataclass(frozen=True)
class Text:
    """A statement tokenised: ``tokens`` (normalised), ``raw`` (as written), their character
    spans, and for each token its sentence and clause number."""

    text: str
    tokens: tuple[str, ...]
    raw: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    sentence: tuple[int, ...]
    clause: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.tokens)

    def words(self, start: int, end: int) -> str:
        """The text of tokens ``start``..``end`` as written."""
        if start >= end:
            return ""
        return self.text[self.starts[start] : self.ends[end - 1]]

    def token_at(self, char: int) -> int:
        """The first token that ends after character ``char``."""
        for i, e in enumerate(self.ends):
            if e > char:
                return i
        return len(self.tokens)


@lru_cache(maxsize=65_536)
def parse(text: str) -> Text:
    """``text`` tokenised, with sentence and clause numbers, as the readers read it: through
    the one normaliser (invisible characters removed, compatibility and look-alike forms
    folded: :mod:`memory_core.normalize`) and with numbers of several words said in words
    read as digits (:mod:`.spoken`: "seventy-nine point five kilos"); ``Text.text`` is that
    text."""
    text = spoken_numbers(fold(text))
    # a misspelt state word written in lower case ("stoped"): a capitalised word may be a name
    toks = [(_spelled(t) if text[s:e].islower() else t, s, e) for t, s, e in tokenize(text)]
    starts = tuple(s for _t, s, _e in toks)
    ends = tuple(e for _t, _s, e in toks)
    sentence: list[int] = []
    clause: list[int] = []
    s_no = c_no = 0
    for i in range(len(toks)):
        if i:
            gap = text[ends[i - 1] : starts[i]]
            if (
                _SENTENCE_END.search(gap) or (toks[i - 1][0] == "?" and gap[:1].isspace())
            ) and not _abbreviation_stop(text, toks, i, gap):
                s_no += 1
                c_no += 1
            elif _CLAUSE_END.search(gap):
                c_no += 1
        sentence.append(s_no)
        clause.append(c_no)
    return Text(
        text=text,
        tokens=tuple(t for t, _s, _e in toks),
        raw=tuple(text[s:e] for s, e in zip(starts, ends, strict=True)),
        starts=starts,
        ends=ends,
        sentence=tuple(sentence),
        clause=tuple(clause),
    )


#: How long a word must be to be read as a misspelt state word (one edit from one: an
#: insertion, a deletion, a substitution or two letters swapped).
MISSPELT_STATE_MIN = 6


@lru_cache(maxsize=65_536)
def _spelled(word: str) -> str:
    """A word as the state words spell it: a word of :data:`MISSPELT_STATE_MIN` letters or
    more, of no English, that is one edit from exactly one of states.json's words and keeps its
    first letter ("stoped": stopped, "incresed": increased, "discontinuted"), as a misspelt
    drug is the drug; any other word as it is. A drug's name is never one, nor another form
    of the state word (its Snowball stem: "titrate" is no misspelt "titrated")."""
    if len(word) < MISSPELT_STATE_MIN or not word.isalpha():
        return word
    near = _state_spellings().get(word[0], ())
    if word in near:
        return word
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    from ..lexical import form

    hits = process.extract(word, near, scorer=OSA.distance, score_cutoff=1, limit=2)
    if len(hits) != 1 or drugs.english(word) or drugs.resolve(word):
        return word
    if form(word) == form(hits[0][0]):
        return word  # another form of the word ("titrate", "prescriber"), no misspelling
    return hits[0][0]


@lru_cache(maxsize=1)
def _state_spellings() -> dict[str, tuple[str, ...]]:
    """The state words a misspelt word may be one edit from (one letter fewer than
    :data:`MISSPELT_STATE_MIN` or more: "stoped" is one letter short of "stopped"), by first
    letter."""
    out: dict[str, list[str]] = {}
    for w in sorted(lexicon().states.words()):
        if len(w) >= MISSPELT_STATE_MIN - 1 and w.isalpha():
            out.setdefault(w[0], []).append(w)
    return {k: tuple(v) for k, v in out.items()}


def _abbreviation_stop(text: str, toks: Sequence[tuple[str, int, int]], i: int, gap: str) -> bool:
    """The full stop between tokens ``i - 1`` and ``i`` is an abbreviation's, which ends no
    sentence: inside a dotted one ("e.g", "b.i.d", "a.m"); after one -- a dotted one, or a word
    of words.json's ``period_abbreviations`` -- where a lower-case word or a number follows
    ("e.g. walking", "approx. 15"); after a title whatever follows ("Dr. Okafor")."""
    if gap.strip() != ".":
        return False
    prev, nxt = toks[i - 1][0], toks[i][0]
    if gap == ".":  # no space: a dotted abbreviation's inner full stop, between single letters
        return len(prev) == len(nxt) == 1 and prev.isalpha() and nxt.isalpha()
    if gap[0] != ".":
        return False
    lex = lexicon()
    if prev in lex.titles:
        return True
    dotted = (
        len(prev) == 1
        and i >= 2
        and len(toks[i - 2][0]) == 1
        and text[toks[i - 2][2] : toks[i - 1][1]] == "."
    )
    first = text[toks[i][1]]
    return (dotted or prev in lex.abbreviations) and (first.islower() or first.isdigit())


# --- things named ------------------------------------------------------------------------------
def things(t: Text, memory_type: str) -> list[Span]:
    """Every thing ``t`` names, longest first where two overlap, in order of appearance."""
    lex = lexicon()
    found = [
        *_question_spans(t, lex),
        *_code_spans(t),
        *_drug_spans(t, memory_type, lex),
        *_lab_spans(t, lex),
        *_condition_spans(t, lex),
        *_slot_spans(t, memory_type, lex),
    ]
    if memory_type in RESULT_TYPES and not any(s.how == "lab" for s in found):
        found += _named_by_unit(t, lex)
    drug_ends = {s.end for s in found if s.how in _DRUG_SPANS}
    found = [s for s in found if not _other_abbreviation(s, t, drug_ends, lex)]
    kept = _without_overlaps(found, memory_type)
    if memory_type == "immunization":
        kept = [_as_vaccine(s, t, lex) for s in kept]
    return kept


def _as_vaccine(s: Span, t: Text, lex: Lexicon) -> Span:
    """A thing an immunization statement names, as the vaccine it is: a disease with a vaccine
    word beside it (words.json's ``vaccine_words``: "tetanus booster", "3rd hep B dose",
    "vaccinated against measles") is the vaccine against it, and a vaccine the drug dictionary
    names ("Comirnaty", "Shingrix") is keyed by the disease its name says -- one vaccine, one
    key, however it is written."""
    if s.how in ("drug", "combination"):
        disease = _disease_of_vaccine(s.key.partition(":")[2])
        return s if disease is None else Span(vaccine_key(disease), s.start, s.end, "drug")
    if s.how != "condition":
        return s
    near = t.tokens[max(0, s.start - VACCINE_WORD_BEFORE) : s.start]
    near += t.tokens[s.end : s.end + VACCINE_WORD_AFTER]
    if not any(w in lex.vaccine_words for w in near):
        return s
    # the vaccine word right after the disease is the vaccine's name ("hep B course: 2 of 3
    # doses" names the course, not a course of something else)
    after = s.end < len(t.tokens) and t.tokens[s.end] in lex.vaccine_words
    return Span(vaccine_key(s.key.partition(":")[2]), s.start, s.end + after, "drug")


#: How far a vaccine word may be from the disease it names the vaccine of, in words: before
#: ("vaccinated against measles") and after ("Tetanus: last booster", "hep B course: 2 of 3").
VACCINE_WORD_BEFORE = 2
VACCINE_WORD_AFTER = 3


def vaccine_key(disease: str) -> str:
    """The key of the vaccine against ``disease`` (a condition's id): one word, so that it is
    no drug family's member."""
    return f"drug:{disease.replace(' ', '-')}-vaccine"


@lru_cache(maxsize=1024)
def _disease_of_vaccine(drug: str) -> str | None:
    """The disease a vaccine of the drug dictionary is named for ("recombinant zoster
    (shingles) vaccine" -> shingles; "covid-19 vaccine, mrna" -> covid 19); None for a drug
    that is no vaccine or names no disease of the lexicon."""
    if "vaccin" not in drug:
        return None
    lex = lexicon()
    named = parse(drug)
    found = lex.condition_phrases.find_all(named.tokens, named.raw)
    return str(found[0].value) if found else None


_DRUG_SPANS = frozenset({"drug", "combination", "ingredient", "class"})


def _other_abbreviation(s: Span, t: Text, drug_ends: set[int], lex: Lexicon) -> bool:
    """A condition named by an abbreviation in capitals ("MR", "SI", "AS") where it is another
    word or abbreviation: a formulation's abbreviation right after a drug's name ("gliclazide MR
    60 mg": modified release, not mitral regurgitation) or before a word of conditions.json's
    ``abbreviation_not_before`` ("SI joint", "MR scan")."""
    if s.how != "condition" or s.end - s.start != 1:
        return False
    raw = t.raw[s.start]
    if not (raw.isupper() and raw.isalpha()):
        return False
    after = t.tokens[s.end] if s.end < len(t.tokens) else ""
    if after in lex.abbreviation_not_before:
        return True
    # a formulation's abbreviation right after its drug, a space apart ("Apixaban AF" and
    # "Lansoprazole - GERD" name a condition)
    if s.start not in drug_ends or t.text[t.ends[s.start - 1] : t.starts[s.start]].strip():
        return False
    form = lex.formulations.at(t.tokens, t.raw, s.start)
    return form is not None and form.end == s.end


#: A question and its answer ("who won the championship this year? UCLA"): the question is the
#: key, its answer the value.
#: A speaker's label before it ("elise: How about you, Kate? ...") is no word of the question.
_LABEL_RE = r"[A-Za-z][\w.' -]{0,30}:\s+"
SPEAKER = re.compile(r"[A-Za-z][\w'-]{0,30}:\s")
_QA = re.compile(rf"^(?:{_LABEL_RE})?(?P<q>[^?]{{8,}}\?)\s*(?P<a>\S.*)$", re.DOTALL)


def _question_spans(t: Text, lex: Lexicon) -> list[Span]:
    m = _QA.match(t.text)
    if m is None or m.group("a").rstrip().endswith("?"):
        return []  # a question followed by another question is no question and its answer
    if not any(c.isalnum() for c in m.group("a")):
        return []  # '"... can I have it as a syrup?"': a closing quote is no answer
    if t.text[m.end("q") - 2 : m.end("q") - 1].isspace() and m.group("a")[:1].isalnum():
        return []  # "increased to 80 mg for ?ADHF": a query written onto a word, no question
    words = [w for w, _s, _e in tokenize(m.group("q")) if w not in lex.stopwords and w != "?"]
    if len(words) < 2:
        return []
    end = t.token_at(m.end("q") - 1) + 1
    return [Span(f"question:{' '.join(words)}", 0, end, "question")]


#: A code written in the text ("LOINC 4548-4", "SNOMED CT 44054006", "RxNorm: 860975").
_CODE = re.compile(
    r"\b(loinc|snomed(?:[ -]?ct)?|rxnorm|cvx)\b[\s:#=]*(\d{1,7}-\d|\d{2,18})", re.IGNORECASE
)


def _code_spans(t: Text) -> list[Span]:
    """Codes a statement writes out: the key is the code itself (codes win over words)."""
    out = []
    for m in _CODE.finditer(t.text):
        system = m.group(1).lower()
        ns = "snomed" if system.startswith("snomed") else system
        if ns == "loinc" and "-" not in m.group(2):
            continue
        a, b = t.token_at(m.start()), t.token_at(m.end() - 1) + 1
        out.append(Span(f"{ns}:{m.group(2)}", a, b, "code"))
    return out


def _without_overlaps(spans: list[Span], memory_type: str) -> list[Span]:
    """A code written out wins; then longer spans win over those they overlap; of two as long,
    the kind the statement's type is about ("vitamin D 1000 IU" on a medication list is a drug,
    in a lab result an analyte). A drug's ingredient keys ride with their product's span."""
    kinds = {k.value for k in subject_kinds(memory_type)}

    def rank(s: Span) -> tuple[int, int, int, int, int]:
        own = 0 if s.key.partition(":")[0] in kinds else 1
        return (
            0 if s.how in ("code", "question") else 1,
            -(s.end - s.start),
            own,
            _PRIORITY.get(s.how, 9),
            s.start,
        )

    ranked = sorted(spans, key=rank)
    taken: list[tuple[int, int]] = []
    kept: list[Span] = []
    for s in ranked:
        if s.how in _RIDERS:
            kept.append(s)
            continue
        if any(s.start < e and b < s.end for b, e in taken):
            continue
        taken.append((s.start, s.end))
        kept.append(s)
    anchored = {(s.start, s.end) for s in kept if s.how not in _RIDERS}
    kept = [s for s in kept if s.how not in _RIDERS or (s.start, s.end) in anchored]
    return sorted(kept, key=lambda s: (s.start, _PRIORITY.get(s.how, 9)))


#: Which of two equally long overlapping spans wins (lower first).
_PRIORITY = {
    "question": -2,
    "code": -1,
    "lab": 0,
    "drug": 1,
    "combination": 1,
    "allergen": 1,
    "condition": 2,
    "slot": 3,
}
#: Spans that ride on another's tokens (a combination's ingredients, a drug's class).
_RIDERS = frozenset({"ingredient", "class"})


def _drug_spans(t: Text, memory_type: str, lex: Lexicon) -> list[Span]:
    out: list[Span] = []
    allergy = memory_type == "allergy"
    non_drug = lex.drugs["non_drug_allergens"]
    for d in drugs.resolve(t.text):
        a, b = t.token_at(d.start), t.token_at(d.end - 1) + 1
        if a >= b:
            continue
        parts = drugs.ingredients(d.name)
        if d.name in non_drug:
            out.append(Span(f"allergen:{d.name}", a, b, "allergen"))
            continue
        ns = "allergen" if allergy else "drug"
        if len(parts) > 1:
            out.append(Span(f"{ns}:{d.name}", a, b, "combination"))
            out += [Span(f"{ns}:{p}", a, b, "ingredient") for p in parts]
        else:
            out.append(Span(f"{ns}:{d.name}", a, b, "allergen" if allergy else "drug"))
        if allergy:
            out += [Span(f"allergen:{c}", a, b, "class") for c in drugs.classes(d.name)]
    return out


def _lab_spans(t: Text, lex: Lexicon) -> list[Span]:
    out = [
        Span(lex.analytes[m.value].key, m.start, m.end, "lab")
        for m in lex.analyte_phrases.find_all(t.tokens, t.raw)
    ]
    for i, tok in enumerate(t.tokens[:-1]):
        sym = lex.symbols.get(tok)
        if sym and _is_number(t.tokens[i + 1]) and t.raw[i][:1].isupper():
            out.append(Span(lex.analytes[sym].key, i, i + 1, "lab"))
    return out


#: The memory types whose statements give results: a value alone in a unit that names its
#: test is that test's.
RESULT_TYPES = frozenset({"vital_sign", "lab_result", "observation"})


def _named_by_unit(t: Text, lex: Lexicon) -> list[Span]:
    """The test a value's unit names by itself where no test is named ("Down to 88 kg", "Afebrile
    now, 98.4 F": labs.json's ``named_by``): the first such value that is no amount of change
    ("lost 3 kg"), bound ("under 90 kg") or guess and is inside physiology, as a name of no
    words just before it."""
    from . import units
    from .values import BOUND_BEFORE, CHANGE_BEFORE, GUESS_BEFORE

    named = units.tests_named_by_unit(lex)
    for i, number in numbers(t, 0, len(t.tokens)):
        found = units.unit_after(lex, t.text, t.ends[i])
        before = t.text[max(0, t.starts[i] - 16) : t.starts[i]]
        if found is None or any(
            p.search(before) for p in (CHANGE_BEFORE, BOUND_BEFORE, GUESS_BEFORE)
        ):
            continue
        analyte = named.get(units.key(found[0].code))
        if analyte is None:
            continue
        x = units.to_canonical(lex, analyte, number, found[0])
        if x is not None and analyte.bounds and analyte.bounds[0] <= x <= analyte.bounds[1]:
            return [Span(analyte.key, i, i, "lab")]  # (no value outside physiology names it)
    return []


def _condition_spans(t: Text, lex: Lexicon) -> list[Span]:
    return [
        Span(f"condition:{m.value}", m.start, m.end, "condition")
        for m in lex.condition_phrases.find_all(t.tokens, t.raw)
    ]


def _slot_spans(t: Text, memory_type: str, lex: Lexicon) -> list[Span]:
    out = [
        Span(f"slot:{m.value}", m.start, m.end, "slot")
        for m in lex.slot_triggers.find_all(t.tokens, t.raw)
        if memory_type in lex.slots[m.value].types
        and not _moved_in_time(t, m, lex)
        and (not lex.slots[m.value].named or name_after(t, m.end, len(t.tokens), lex))
    ]
    out += [s for s in name_calls(t, lex) if memory_type in lex.slots[s.key[5:]].types]
    if memory_type == "care_plan":
        specialties = lex.specialty_phrases.find(t.tokens, t.raw) + _clinics(t, lex)
        out += [Span(f"slot:referral {m.value}", m.start, m.end, "slot") for m in specialties]
        out = [_follow_up_of(s, specialties, t) for s in out]
    if memory_type in _PROCEDURE_TYPES:  # a plan's procedure, or the procedure itself
        out += [
            Span(f"slot:procedure {m.value}", m.start, m.end, "slot")
            for m in lex.procedure_phrases.find(t.tokens, t.raw)
        ]
    return out


def name_calls(t: Text, lex: Lexicon) -> list[Span]:
    """A call that gives a name ("call me Peggy", "calls her Peg"): a named slot's verb, a
    person's word, then the name -- the slot's thing (a call with no name after it is the
    contact channel's: "call me on my mobile")."""
    out = []
    for slot in [x for x in lex.slots.values() if x.calls]:  # the named slots' verbs
        for i in range(len(t.tokens) - 2):
            called = t.tokens[i] in slot.calls and t.tokens[i + 1] in _CALLED
            if called and name_after(t, i + 2, i + 3, lex):
                out.append(Span(slot.key, i, i + 2, "slot"))
    return out


#: the person a name is given to ("call me", "call her")
_CALLED = frozenset({"me", "her", "him", "them"})


def name_after(t: Text, at: int, hi: int, lex: Lexicon) -> str:
    """The name given right after a trigger at token ``at`` ("call me Peggy", "to be addressed
    as William", "Preferred name: 'Bill'"): a capitalised word within the next three (before
    token ``hi``) that is no day or month; "" where none is ("call me on my mobile")."""
    for j in range(at, min(hi, at + 3)):
        raw, tok = t.raw[j], t.tokens[j]
        if raw[:1].isupper() and raw.isalpha() and tok != "i":
            return "" if tok in lex.weekdays or tok in lex.months else tok
    return ""


#: The memory types whose statements name procedures (slots.json's ``procedures``) as things.
_PROCEDURE_TYPES = frozenset({"care_plan", "procedure"})


#: Words that open a time ("moved to 2 April", "moved to next week"), besides the lexicon's
#: months and weekdays ("moved to Tuesday").
_TIME_OPENERS = frozenset({"next", "tomorrow", "later", "early", "mid", "end"})


def _moved_in_time(t: Text, m: Match[str], lex: Lexicon) -> bool:
    """A people slot's trigger that ends in "to" followed by a time ("colonoscopy moved to 2
    April", "moved to next week"): an appointment rescheduled, not where someone lives."""
    toks = t.tokens
    if not lex.slots[m.value].people or toks[m.end - 1] != "to" or m.end >= len(toks):
        return False
    after = toks[m.end]
    if after == "the":  # "moved to the 14th", not "moved to the care home"
        nxt = toks[m.end + 1] if m.end + 1 < len(toks) else ""
        return nxt[:1].isdigit()
    return (
        after[:1].isdigit()
        or after in lex.months
        or after in lex.weekdays
        or after in _TIME_OPENERS
    )


def _clinics(t: Text, lex: Lexicon) -> list[Match[str]]:
    """A clinic named by what it sees ("falls clinic", "memory clinic", "anticoagulation
    clinic") is a referral's specialty too."""
    out = []
    for i, tok in enumerate(t.tokens):
        if tok == "clinic" and i > 0 and t.tokens[i - 1][:1].isalpha():
            name = t.tokens[i - 1]
            if (
                name not in lex.stopwords
                and lex.specialty_phrases.at(t.tokens, t.raw, i - 1) is None
            ):
                out.append(Match(i - 1, i + 1, f"{name} clinic"))
    return out


def _follow_up_of(s: Span, specialties: Sequence[Match[str]], t: Text) -> Span:
    """A follow-up with a specialty named in its sentence is that specialty's follow-up ("f/u
    cardiology" and "f/u podiatry" are two plan items)."""
    if s.key != "slot:follow up":
        return s
    named = sorted({m.value for m in specialties if t.sentence[m.start] == t.sentence[s.start]})
    return Span(f"slot:follow up {'+'.join(named)}", s.start, s.end, s.how) if named else s


def _is_number(tok: str) -> bool:
    return tok[:1].isdigit()


def numbers(t: Text, start: int, end: int) -> list[tuple[int, float]]:
    """``(token index, value)`` of the numbers among tokens ``start``..``end``."""
    return [(i, float(t.tokens[i])) for i in range(start, end) if _is_number(t.tokens[i])]


def clause_bounds(t: Text, i: int) -> tuple[int, int]:
    """The token range of the clause token ``i`` is in."""
    c = t.clause[i]
    a = i
    while a > 0 and t.clause[a - 1] == c:
        a -= 1
    b = i
    while b < len(t.tokens) and t.clause[b] == c:
        b += 1
    return a, b


def sentence_bounds(t: Text, i: int) -> tuple[int, int]:
    s = t.sentence[i]
    a = i
    while a > 0 and t.sentence[a - 1] == s:
        a -= 1
    b = i
    while b < len(t.tokens) and t.sentence[b] == s:
        b += 1
    return a, b


def spans_in(spans: Sequence[Span], start: int, end: int) -> list[Span]:
    return [s for s in spans if start <= s.start < end]


def stem(w: str) -> str:
    """A crude stem: enough to match smoker / smoking, reaction / reactions."""
    for suf in ("ings", "ing", "ers", "er", "ed", "es", "s", "y"):
        if len(w) - len(suf) >= 4 and w.endswith(suf) and not w.endswith("ss"):
            return w[: -len(suf)]
    return w


@lru_cache(maxsize=65_536)
def rest_words(text: str, memory_type: str) -> frozenset[str]:
    """The stems of a statement's other words: not a thing the lexicon keys, a state, context,
    dose, frequency, formulation or qualifier word, a number or a stop word -- what two
    statements about one thing say of it besides ("sleepwalking" / "next-morning
    grogginess", "cashew" / "walnut")."""
    lex = lexicon()
    t = parse(text)
    covered = [False] * len(t.tokens)
    for s in things(t, memory_type):
        covered[s.start : s.end] = [True] * (s.end - s.start)
    matchers: tuple[PhraseMatcher[Any], ...] = (
        lex.states,
        lex.context,
        lex.frequencies,
        lex.formulations,
        lex.mentions,
        lex.additions,
        lex.now_words,
        *lex.qualifiers.values(),
    )
    for matcher in matchers:
        for m in matcher.find(t.tokens, t.raw):
            covered[m.start : m.end] = [True] * (m.end - m.start)
    if SPEAKER.match(text):  # a speaker's one-word label ("elise: ...") says who, not what
        covered[0] = True
    from .values import UNIT_WORDS

    return frozenset(
        stem(w)
        for w, c in zip(t.tokens, covered, strict=True)
        if not c and w[:1].isalpha() and len(w) > 2 and w not in lex.stopwords
        and w not in lex.dose_units and w not in UNIT_WORDS
    )  # fmt: skip


# --- names anywhere ----------------------------------------------------------------------------
@lru_cache(maxsize=65_536)
def mentioned(text: str, kind: KeyKind, broader: bool = True) -> frozenset[str]:
    """The names of the conditions (``KeyKind.CONDITION``: concept ids) or of the lab analytes
    and vital signs (``KeyKind.LOINC``: analyte ids) that ``text`` names anywhere, whatever
    the statement's type and contexts -- what the possibly-stale flags and the lab history look
    up. The longest name wins where two overlap; ``broader``: each with the concepts it is
    filed under ("type 2 diabetes" also names "diabetes", "fasting glucose" also "glucose")."""
    t = parse(text)
    lex = lexicon()
    out: set[str] = set()
    if kind is KeyKind.CONDITION:
        for m in lex.condition_phrases.find(t.tokens, t.raw):
            out.add(m.value)
            if broader:
                out.update(lex.concepts[m.value].within)
    elif kind is KeyKind.LOINC:
        spans = _lab_spans(t, lex)
        by_key = {a.key: a for a in lex.analytes.values()}
        for s in _without_overlaps(spans, ""):
            a = by_key[s.key]
            out.add(a.id)
            if broader and a.parent:
                out.add(a.parent)
    else:
        raise ValueError(f"names of kind {kind!r} are not looked up here")
    return frozenset(out)
