"""What one sentence of a session names, each thing found once and kept with its place:
drugs (the drug dictionary), findings (the lexicon's symptoms and reactions), analytes and
vital signs with their values and the dates said beside them, frequencies, dose units and the
chart slots of preferences and social history (the lexicon). Pure; each reading is bounded to
its sentence, so reading a transcript is linear in its length.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache, cached_property

from .. import drugs
from ..facts.lexicon import Analyte, PhraseMatcher, lexicon, tokenize
from ..facts.spoken import values_said_alone
from ..facts.values import (
    AMOUNT_AFTER,
    AMOUNT_BEFORE,
    BOUND_BEFORE,
    CHANGE_BEFORE,
    GUESS_BEFORE,
    HOW_LONG,
    QUALIFIERS,
    rate_after,
)
from . import names
from .dates import DateSpan, dates_in
from .dialogue import Sentence, State

# --- what a sentence names -----------------------------------------------------------------
_FORM = re.compile(r"\s*(er|xr|xl|sr|ir|extended[- ]release)\b", re.I)
_FORM_BEFORE = re.compile(r"(extended[- ]release|immediate[- ]release)\s+$", re.I)
#: the reason a change was made ("because of the cough")
REASON = re.compile(
    r"\b(?:(?P<of>because of|due to)|because|since|as it|as they)\b\s*"
    r"(?P<why>(?:(?!,\s*(?:and|but|so)\b)[^.;!?,])+)"
)
#: a sentence that is a value, said just after its measurement was named ("Now your blood
#: pressure. ... 148 over 90."; "84.5 kilos."; "Best was 360")
_BARE_VALUE = re.compile(
    # "No, sorry, 11.2.": the speaker's correction (a bare "No, 70." is no value of its own)
    r"^\W*(?:(?:(?:no|nope),?\s+)?(?:sorry|i mean),?\s+)?"
    r"(?:(?:about|around|roughly|nearly|just over|just under|best was|worst was|it's|it is|"
    r"that's|that is|so)\s+)?\d+(?:[.,]\d+)?(?:\s*(?:/|over)\s*\d+)?\b(?:\s*\S+){0,4}\W*$",
    re.I,
)
#: a value opening a sentence that goes on to name another measurement ("104/66, pulse 58"):
#: the value of what was named just before
_LEADING_VALUE = re.compile(r"^\W*\d+(?:[.,]\d+)?(?:\s*(?:/|over)\s*\d+)?\s*,")

#: a pronoun standing for a measurement ("it was 2.6")
#: a result said of the test just named: "it was 5.1", "it had come down to 5.1", "it's crept up"
_LAB_PRONOUN = re.compile(
    r"\b(it|that)\s*(?:'s\s+|\s)(?:(?:had|has|have)\s+)?(?:was|is|came back|come back|were|went|"
    r"gone|come|comes|came|dropped|fallen|fell|risen|rose|climbed|crept|settled|got|reached|now)\b"
    # a questionnaire's score said of the person who answered it ("In March you scored 19")
    r"|\b(?:you|he|she|they|i|we)\s+(?P<scored>scored)\b",
    re.I,
)


@dataclass(frozen=True)
class Drug:
    name: str  # canonical
    phrase: str  # as it goes into the statement ("metformin ER", "acetaminophen (Paracetamol)")
    start: int
    end: int
    implicit: bool = False  # named by a pronoun or by the question answered

    def at(self, start: int, end: int) -> Drug:
        return Drug(self.name, self.phrase, start, end, True)


@dataclass(frozen=True)
class Finding:
    concept: str
    shown: str
    start: int
    end: int


@dataclass(frozen=True)
class Result:
    analyte: Analyte
    value: str  # "7.4", "132/84"
    unit: str  # as written (normalised), or the analyte's
    start: int
    end: int
    date: DateSpan | None = None
    #: the test's name as said where it is the display name in another spelling ("haemoglobin")
    said: str = ""


def shown(written: str, concept: str) -> str:
    """A finding as the statement writes it: the words as said when they are a noun ("hives",
    "dry cough", "swollen ankles", "irritability"), else the concept ("dizzy" -> dizziness,
    "vomit" -> vomiting, "swell up" -> swelling)."""
    w = re.sub(r"\s+", " ", written.lower()).strip()
    if w == concept:
        return w
    if (w.endswith(("y", "ed", "ous")) and not w.endswith("ity")) or re.search(r"\b(up|out)$", w):
        return concept
    nounish = w.endswith(
        ("ing", "ness", "ion", "ia", "ea", "oea", "ache", "aches", "s", "sis", "ity")
    )
    return w if " " in w or nounish else concept


@cache
def units() -> tuple[re.Pattern[str], frozenset[str]]:
    """A value's unit (built from the lexicon's analyte units and conversions, as written in
    records and as said), and the dose units that end a run of results."""
    lex = lexicon()
    raw: set[str] = {"%", "kg", "lb", "lbs", "pounds", "cm", "mmhg", "bpm", "/min", "l/min"}
    raw |= {"°c", "°f", "degrees", "beats per minute", "breaths per minute", "ml/min"}
    for a in lex.analytes.values():
        for u in (a.unit, *(c[0] for c in a.conversions)):
            if u and not u.startswith("{"):
                raw |= {u.lower(), names.unit(u).lower()}
    raw.discard("")
    alts = "|".join(re.escape(u) for u in sorted(raw, key=len, reverse=True))
    pattern = re.compile(rf"\s*({alts})(?![a-z])", re.I)
    dose = frozenset(u for u in lex.dose_units if u not in raw and u != "%")
    return pattern, dose


_NUMBER = re.compile(r"(?<![\d.,/-])(\d{1,4}(?:[.,]\d{1,3}(?![\d]))?)(?![\d/]|\s*(?:/|over)\s*\d)")
_PAIR = re.compile(r"(?<![\d.])(\d{2,3})\s*(?:/|over)\s*(\d{2,3})(?!\d|[.,]\d)")
_NOT_A_VALUE = re.compile(
    r"\s*(?:times?|x\b|days?|weeks?|months?|years?|hours?|hrs?|minutes?|mins?|am\b|pm\b|:|"
    r"a day|a week|per|tablets?|puffs?|doses?|units?|mg|mcg|g\b|ml\b|cigarettes?|"
    r"lit(?:re|er)s?\b(?!\s*(?:per|/|a min))|pints?\b|cups?\b|glasses\b)",
    re.I,
)


class Named:
    """What one sentence names, each found once (lazily) and kept with its place."""

    def __init__(
        self,
        s: Sentence,
        session: datetime,
        told: datetime | None = None,
        days: Mapping[int, datetime] | None = None,
    ) -> None:
        self.s = s
        self.text = s.text
        self.low = s.text.lower()
        self.session = session
        self.told = told  # the day last named with its month (dates.dates_in)
        self.days = days  # the days said alone before, as read
        self._found: dict[int, list[tuple[int, int, str]]] = {}

    @cached_property
    def date_starts(self) -> frozenset[int]:
        """Where each date said in the sentence begins."""
        return frozenset(d.start for d in self.dates)

    @cached_property
    def clause_breaks(self) -> list[int]:
        """Where each clause break of the sentence is (:data:`_CLAUSE_BREAK`), in order."""
        return [m.start() for m in _CLAUSE_BREAK.finditer(self.text)]

    @cached_property
    def _tokens(self) -> tuple[list[str], list[str], list[tuple[int, int]]]:
        toks = tokenize(self.text)
        return (
            [t for t, _a, _b in toks],
            [self.text[a:b] for _t, a, b in toks],
            [(a, b) for _t, a, b in toks],
        )

    def _matches(self, matcher: PhraseMatcher[str]) -> list[tuple[int, int, str]]:
        found = self._found.get(id(matcher))
        if found is None:
            words, raw, spans = self._tokens
            found = self._found[id(matcher)] = [
                (spans[m.start][0], spans[m.end - 1][1], m.value) for m in matcher.find(words, raw)
            ]
        return found

    @cached_property
    def drugs(self) -> list[Drug]:
        out: list[Drug] = []
        text = self.text
        for m in drugs.resolve(text):
            surface = m.text.lower()
            if surface in m.name and m.origin == "dictionary":
                phrase = m.name  # "glargine" -> "insulin glargine"
            elif surface.startswith(m.name[:5]) or (m.origin == "supplement" and "/" not in m.name):
                # a combination by its own name keeps its ingredients beside it, as the
                # dictionary's brands do ("acetaminophen/codeine (co-codamol)"): what a reviewer
                # checks an allergy against
                phrase = re.sub(r"\s+drugs$", " drug", surface)
            else:
                phrase = f"{m.name} ({m.text})"
            end = m.end
            form = _FORM.match(text, m.end)
            before = _FORM_BEFORE.search(text[max(0, m.start - 25) : m.start])
            if form:
                tag = form.group(1)
                phrase += " ER" if tag.lower().startswith("extended") else f" {tag.upper()}"
                end = form.end()
            elif before and before.group(1).lower().startswith("extended"):
                phrase += " ER"
            out.append(Drug(m.name, phrase, m.start, end))
        merged: list[Drug] = []
        for d in out:  # "sacubitril valsartan", "sulfa antibiotics": one product, one name
            if merged and re.fullmatch(r"[\s/-]+", text[merged[-1].end : d.start] or "x"):
                a = merged.pop()
                d = Drug(f"{a.name}/{d.name}", text[a.start : d.end].lower(), a.start, d.end)
            merged.append(d)
        return merged

    @cached_property
    def findings(self) -> list[Finding]:
        lex = lexicon()
        out = []
        for a, b, cid in self._matches(lex.condition_phrases):
            if lex.concepts[cid].kind == "finding":
                out.append(Finding(cid, shown(self.text[a:b], cid), a, b))
        return out

    @cached_property
    def analytes(self) -> list[tuple[int, int, Analyte]]:
        lex = lexicon()
        return [(a, b, lex.analytes[v]) for a, b, v in self._matches(lex.analyte_phrases)]

    @cached_property
    def freqs(self) -> list[tuple[int, int, str]]:
        """How often a dose is taken, as said -- not a length of time ("for a week")."""
        return [
            m
            for m in self._matches(lexicon().frequencies)
            if not HOW_LONG.intersection(self.low[max(0, m[0] - 8) : m[0]].split()[-1:])
        ]

    @cached_property
    def dates(self) -> list[DateSpan]:
        return dates_in(self.text, self.session, self.told, self.days)

    def slot_values(self, slot: str) -> list[tuple[int, int, str]]:
        return self._matches(lexicon().slot_values[slot])

    def slot_triggers(self) -> list[tuple[int, int, str]]:
        return self._matches(lexicon().slot_triggers)

    def negated(self, start: int) -> bool:
        """A negation word shortly before ``start`` ("no dizziness", "not any rash")."""
        return bool(
            re.search(
                r"\b(no|not|without|never|denies|any)\b[^.,;]{0,20}$",
                self.low[max(0, start - 25) : start],
            )
        )


#: how far after a drug's name its dose and its frequency are read (characters)
DOSE_REACH = 45
FREQ_REACH = 60


def dose_after(text: str, pos: int, limit: int = DOSE_REACH) -> str:
    units = "|".join(re.escape(u) for u in sorted(lexicon().dose_units, key=len, reverse=True))
    m = re.compile(rf"(\d+(?:[.,]\d+)?)\s?(micrograms?|{units})\b", re.I).search(
        text, pos, min(len(text), pos + limit)
    )
    if not m:
        # a strength said right after the drug's name ("Aspirin 81, once a day", "gliclazide
        # 80 twice a day"): the number is its dose in the unit the name implies (none written)
        bare = _BARE_STRENGTH.match(text, pos)
        return bare.group(1).replace(",", ".") if bare else ""
    unit = m.group(2).lower()
    unit = DOSE_UNIT_SPELLINGS.get(unit, unit)
    value = m.group(1).replace(",", ".")
    return f"{value} {unit}"


#: Dose units as said, written as the chart writes them ("10 milligrams" -> "10 mg").
DOSE_UNIT_SPELLINGS = {
    "unit": "units",
    "micrograms": "mcg",
    "microgram": "mcg",
    "iu": "units",
    "ug": "mcg",
    "milligrams": "mg",
    "milligram": "mg",
    "mgs": "mg",
    "grams": "g",
    "gram": "g",
    "millilitres": "ml",
    "milliliters": "ml",
    "millilitre": "ml",
    "milliliter": "ml",
}
#: a number right after a drug's name, before a frequency, a comma or the end (no unit)
_BARE_STRENGTH = re.compile(
    r"\s*(?:succinate|tartrate|er|xr|sr|mr)?\s*(\d+(?:[.,]\d+)?(?:/\d+(?:\.\d+)?)?)(?=\s*(?:,|\.|$|once|twice|"
    r"three|four|daily|a day|every|each|at|in the|one|two|bd|od|tds|qds|mg|mcg))",
    re.I,
)


def freq_after(r: Named, pos: int, limit: int = FREQ_REACH) -> str:
    for a, _b, _v in r.freqs:
        if pos <= a < pos + limit:
            # the words as said ("at night", "twice a day"), with an "every" before them, and
            # the count said before a period ("one a day", "two capsules a day")
            count = _COUNT_BEFORE.search(r.low, pos, a)
            start = count.start() if count else a
            if re.match(_COUNT, r.low[start:_b]):  # "three, four times a day": from the range
                low_end = _RANGE_BEFORE.search(r.low, pos, start)
                start = low_end.start() if low_end else start
            bound = _BOUND_BEFORE.search(r.low, pos, start)  # "up to", "about", "maybe"
            return r.low[bound.start() if bound else start : _b]
    clock = _AT_CLOCK.search(r.low, pos, pos + limit)  # "Carry on with it at 7 pm"
    return clock.group(0) if clock else ""


#: a clock time ("7 pm", "8.30am", "10:15 a.m."), and one a dose is taken at ("at 7 pm")
CLOCK_TIME = r"\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)"
_AT_CLOCK = re.compile(rf"\bat\s+{CLOCK_TIME}")


#: the words that bound or doubt how often, said right before it ("up to four times a day",
#: "about three times a day", "maybe twice a day")
_BOUND_BEFORE = re.compile(
    r"\b(?:up to|no more than|not more than|at most|about|around|roughly|maybe|perhaps)\s+$"
)


#: a count of doses said right before a period ("one a day", "2 capsules a day", "three times
#: a week", "four or five times a day", "three or four days a week")
_COUNT = r"\b(?:[1-9]|one|two|three|four|five|six|seven)\b"
#: the lower end of a range of counts ("three or", "4-", "three, ")
_LOWER = rf"(?<![\d.,/]){_COUNT}\s*(?:,|or|to|-|–)\s*"
_RANGE_BEFORE = re.compile(rf"{_LOWER}$")
_COUNT_BEFORE = re.compile(
    rf"(?<![\d.,/])(?:{_LOWER})?{_COUNT}\s+(?:(?:capsules?|tablets?|pills?|puffs?|drops?|"
    r"sprays?|sachets?|patch(?:es)?|teaspoons?|spoonfuls?|spoons?|times|days?|nights?)\s+)?$"
)


def reason_after(r: Named, pos: int) -> re.Match[str] | None:
    """The reason clause said after ``pos`` ("because it gave me a rash", "since it upset my
    stomach") -- not a "since" that opens a date ("since February", "since the 6th")."""
    starts = r.date_starts
    stop = min(len(r.text), pos + _REASON_REACH)
    m = REASON.search(r.text, pos, stop)
    while m is not None and (
        m.start() in starts
        or _dated(r.text, m.start("why"), starts)
        or (m.group(0).lower().startswith("since") and any(m.start() < x < m.end() for x in starts))
    ):  # "since I came home on the 4th": a time, not a reason
        m = REASON.search(r.text, m.start() + 1, stop)
    return m


#: how far after a thing its reason clause may begin (an unpunctuated turn of speech runs on
#: for pages: a "because" there is another clause's)
_REASON_REACH = 400


def _dated(text: str, at: int, starts: AbstractSet[int]) -> bool:
    """A date begins at ``at``, or after a "the" there ("since the 12th of May")."""
    return at in starts or (text[at : at + 4].lower() == "the " and at + 4 in starts)


#: where one clause of a sentence ends and the next begins ("You stopped the ramipril on the
#: 18th, and started the Entresto on the 20th"); a comma alone may set off a name or a dose
_CLAUSE_BREAK = re.compile(r";|,\s*(?:and|but|then|so)\b|\s(?:and then|but)\s", re.I)


def date_for(r: Named, start: int, end: int, extra: Sequence[DateSpan] = ()) -> DateSpan | None:
    """The date said for what is at ``start``..``end``: the nearest in its clause, else in its
    sentence (a reason clause's dates excluded), else one said in the answer that confirmed
    it."""
    reason = reason_after(r, end)
    limit = reason.start() if reason else len(r.text)
    breaks = r.clause_breaks
    k = bisect_left(breaks, start)
    lo = breaks[k - 1] if k > 0 else 0
    j = bisect_left(breaks, end)
    hi = breaks[j] if j < len(breaks) else len(r.text)
    own = [d for d in r.dates if lo <= d.start < min(hi, limit)]
    best = None
    for d in own or r.dates:
        if d.start >= limit:
            continue
        dist = d.start - end if d.start >= end else start - d.end
        if best is None or dist < best[0]:
            best = (dist, d)
    if best is not None:
        return best[1]
    return extra[0] if extra else None


#: How far (in characters) a value may be said after its test or the value before it.
_REACH = 60


def _gap(a: int, b: int, dates: Sequence[tuple[int, int]]) -> int:
    """The characters from ``a`` to ``b`` that are not a date said between ("HbA1c from the day
    you started, the 16th of September, was 44": the date does not push the value away)."""
    return b - a - sum(min(b, e) - max(a, s) for s, e in dates if s < b and a < e)


def _leads(text: str, mentions: Sequence[tuple[int, int, Analyte]]) -> bool:
    """A value opens the sentence before the first measurement it names."""
    lead = _LEADING_VALUE.match(text)
    return lead is not None and lead.end() <= mentions[0][0]


def _of_topic(s: Sentence, st: State) -> list[tuple[int, int, Analyte]]:
    """The measurement talked about, where the sentence gives its value without naming it:
    "it was 2.6", an answer to a question about it, a value alone ("148 over 90.")."""
    topic = st.topic_analyte()
    if topic is None:
        return []
    lab_pronoun = _LAB_PRONOUN.search(s.text)
    if lab_pronoun and lab_pronoun.group("scored") and topic.kind != "score":
        lab_pronoun = None  # "you scored" tells a questionnaire's score, no test's value
    asked = (
        s.speaker != "clinician"
        and st.question is not None
        and any(a is topic for _x, _y, a in st.question[1].analytes)
    )
    bare = _BARE_VALUE.match(s.text)  # "148 over 90.", "84.5 kilos.", "Best was 360"
    if not lab_pronoun and not asked and not bare:
        return []
    first = _NUMBER.search(s.text)
    if lab_pronoun and first and first.start() < lab_pronoun.start():
        lab_pronoun = None  # "Best was 360, that was Sunday": the value comes first
    pos = lab_pronoun.end() if lab_pronoun else 0
    return [(pos, pos, topic)]


def _by_unit(text: str) -> list[tuple[int, int, Analyte]]:
    """The test a value's unit names by itself, where no test is named ("That's 104.2
    kilograms": a weight; labs.json's ``named_by``) -- not an amount of change ("lost 5 kg")."""
    from ..facts import units as facts_units

    lex = lexicon()
    if _ECHO.match(text):
        return []  # "Right, 2 kilos.": the clinician's number said back
    for m in _NUMBER.finditer(text):
        found = facts_units.unit_after(lex, text, m.end())
        if found is None or _changed_by(text[max(0, m.start() - 16) : m.start()]):
            continue
        if rate_after(text, m.end()):
            continue  # "2 kg in three days": how fast it changes, no reading
        a = facts_units.tests_named_by_unit(lex).get(facts_units.key(found[0].code))
        if a is not None:
            return [(m.start(), m.start(), a)]
    return []


def _by_pair(text: str) -> list[tuple[int, int, Analyte]]:
    """The panel a pair of values is by its shape, where no test is named ("Let me check it
    today. 118/76."): each part within its part's bounds, the first above the second (blood
    pressure); never a pair with another unit after it ("50/20 mg"), nor one a target's word
    says shortly before it ("aim for under 135/85")."""
    from ..facts.values import TARGET_WORDS

    unit_re, _dose = units()
    for m in _PAIR.finditer(text):
        u = unit_re.match(text, m.end())
        a, b = float(m.group(1)), float(m.group(2))
        if set(re.findall(r"[a-z]+", text[: m.start()].lower())[-_TARGET_WORDS_BEFORE:]) & (
            TARGET_WORDS
        ):
            continue  # "At home we aim for under 135/85": a target, no reading
        for panel, (hi, lo) in _panel_parts().items():
            fits = hi.bounds[0] <= a <= hi.bounds[1] and lo.bounds[0] <= b <= lo.bounds[1]
            said = u is None or unit_shown(u.group(1)) == panel.unit
            if fits and a > b and said:
                return [(m.start(), m.start(), panel)]
    return []


#: How many words before a pair known by its shape a target's word makes it a target
_TARGET_WORDS_BEFORE = 4


@cache
def _panel_parts() -> dict[Analyte, tuple[Analyte, Analyte]]:
    """Each two-part panel (:func:`panels`) and its parts, the first as written first."""
    lex = lexicon()
    out: dict[Analyte, tuple[Analyte, Analyte]] = {}
    for pid in panels():
        parts = [a for a in lex.analytes.values() if a.parent == pid and a.bounds]
        if len(parts) == 2:
            out[lex.analytes[pid]] = (parts[0], parts[1])
    return out


def _targets(text: str) -> frozenset[str]:
    """The tests the facts reader reads a target of in ``text`` ("aim for a weight of 90 kilos",
    "keep your blood pressure under 140 over 90"): read only around a target's word (the facts
    reader, given a whole unpunctuated turn of 99,000 characters, takes minutes)."""
    from ..facts import read
    from ..facts.values import TARGET_WORDS, parts

    out: set[str] = set()
    for m in _TARGET_WORD.finditer(text):
        if m.group(0).lower() not in TARGET_WORDS:
            continue
        near = text[max(0, m.start() - _TARGET_REACH) : m.end() + _TARGET_REACH]
        for mtype in ("vital_sign", "lab_result"):
            out |= {f.key for f in read(near, mtype).facts if parts(f.value).get("target")}
    return frozenset(out)


#: a word, for finding a target's (facts.values.TARGET_WORDS) -- and how far around it the
#: target and its test are read
_TARGET_WORD = re.compile(r"[A-Za-z]+")
_TARGET_REACH = 120


def _changed_by(before: str) -> bool:
    """The words before a number make it no reading: a change, a bound or a guess (the facts
    reader's words)."""
    return any(p.search(before) for p in (CHANGE_BEFORE, BOUND_BEFORE, GUESS_BEFORE))


#: A sentence that only says a number back ("Right, 2 kilos.", "OK, 38.5 degrees.").
_ECHO = re.compile(
    r"^\W*(?:right|ok|okay|so|got it|yes|yeah|sure)\W+\d+(?:[.,]\d+)?\s*\w*\W*$", re.I
)


def results(s: Sentence, r: Named, st: State) -> list[Result]:
    """Each result a sentence gives, with the date said beside it."""
    unit_re, dose_units = units()
    mentions = list(r.analytes)
    topic = st.topic_analyte()
    named = {id(a) for _x, _y, a in mentions}
    if mentions and topic is not None and id(topic) not in named and _leads(s.text, mentions):
        mentions.insert(0, (0, 0, topic))  # "Your blood pressure. 104/66, pulse 58."
    elif mentions:
        # "This morning it was 118 over 70, pulse 58": a pair before the first measurement
        # named is the panel its shape says (as it is said alone)
        shaped = _by_pair(s.text[: mentions[0][0]])
        if shaped and id(shaped[0][2]) not in named:
            mentions.insert(0, shaped[0])
    if not mentions:
        mentions = _of_topic(s, st) or _by_unit(s.text) or _by_pair(s.text)
        if not mentions:
            return []
    aims = _targets(s.text)  # "aim for a weight of 90 kilos": a target, no reading
    mentions = [x for x in mentions if x[2].key not in aims]
    taken = [(d.start, d.end) for d in r.dates]
    said = values_said_alone(s.text)
    raw: list[tuple[Analyte, str, str, int, int]] = []
    for k, (_a, b, analyte) in enumerate(mentions):
        stop = mentions[k + 1][0] if k + 1 < len(mentions) else len(s.text)
        drug_at = [d.start for d in r.drugs if d.start >= b]
        stop = min([stop, *drug_at])
        pos, last = b, b
        while pos < stop:
            if analyte.id in panels():  # blood pressure: "132/84", "132 over 84"
                m = _PAIR.search(s.text, pos, stop)
                if not m or _gap(last, m.start(), taken) > _REACH:
                    break
                pair = f"{m.group(1)}/{m.group(2)}"
                u = unit_re.match(s.text, m.end())  # a value keeps only a unit it was said with
                end = u.end() if u else m.end()
                raw.append((analyte, pair, unit_shown(u.group(1)) if u else "", m.start(), end))
                pos = last = end
                continue
            m = _NUMBER.search(said, pos, stop)  # "free T4 is eleven, which ...": 11
            if not m or _gap(last, m.start(), taken) > _REACH:
                break
            pos = m.end()
            if any(a <= m.start() < e for a, e in taken) or _QUALIFIED.search(
                s.text, max(0, m.start() - 12), m.start()
            ):
                continue  # a date's number, or a stage's ("so still stage 3a": no eGFR of 3)
            if AMOUNT_BEFORE.search(said, max(0, m.start() - 24), m.start()):
                continue  # "80 kg now, I've lost 4 kg": an amount of change, no reading
            if rate_after(s.text, m.end()):
                continue  # "if it goes up by more than two kilos in three days": a rate
            u = unit_re.match(s.text, m.end())
            spelled = None if u else _analyte_unit_after(analyte, s.text, m.end())
            if u is None and spelled is None and _NOT_A_VALUE.match(s.text, m.end()):
                if dose_unit_re(dose_units).match(s.text, m.end()):
                    break  # a dose: the results are over
                continue
            # never the analyte's default unit: the unit said, as units.json spells it
            unit = unit_shown(u.group(1)) if u else (spelled[0] if spelled else "")
            end = u.end() if u else (spelled[1] if spelled else m.end())
            if unit and AMOUNT_AFTER.match(s.text, end):
                continue  # "two kilos down since Easter": an amount of change, no reading
            value = m.group(1).replace(",", ".")
            pounds = _POUNDS.match(s.text, end) if unit == "st" else None
            if pounds:  # "13 stone 2": the pounds are part of the weight, not a weight of 2
                value, unit, end = f"{value} st {pounds.group(1)}", "lb", pounds.end()
            scale = _OUT_OF.match(s.text, end) if analyte.kind == "score" else None
            if scale:  # "22 out of 25": the scale's top is no second score
                end = scale.end()
            raw.append((analyte, value, unit, m.start(), end))
            pos = last = end
        if k == 0 and not raw and analyte.id not in panels():
            raw.extend(_said_before(analyte, s.text, _a, taken))
    found = _one_date_for_all(pair_dates(raw, r.dates, len(s.text), s.text), r.dates, s.text)
    names = {id(a): _spelled_as_said(s.text[n:e], a) for n, e, a in reversed(mentions) if e > n}
    # "82 kilos today, down from 85": what it was, with no date of its own, is no result
    return [
        replace(x, said=names.get(id(x.analyte), ""))
        for x in found
        if x.date is not None or not _FROM_BEFORE.search(s.text, 0, x.start)
    ]


def _spelled_as_said(said: str, analyte: Analyte) -> str:
    """The test's name as said where it is the display name spelled the British way
    ("haemoglobin", "haematocrit", "oestradiol"): the statement keeps the speaker's spelling;
    "" otherwise."""
    words = " ".join(said.split()).lower()
    display = analyte.display.lower()
    if words == display or _BRITISH.sub("e", words) != display:
        return ""
    return words


#: the British spellings of a vowel the American spell "e" ("haem-", "faec-", "oestr-"); only
#: a name that then reads as the display name is kept as said
_BRITISH = re.compile(r"ae|\boe")


#: a condition's qualifier right before a number: a stage, class or grade, not a value
_QUALIFIED = re.compile(rf"\b(?:{'|'.join(sorted(QUALIFIERS))})\s*$", re.I)
#: the words before the value a result changed from ("down from 85", "up from 52")
_FROM_BEFORE = re.compile(
    r"\b(?:down|up|fallen|dropped|risen|rose|fell|increased|decreased|reduced|went|gone|come|"
    r"came)\s+from\s+(?:the\s+|a\s+)?$",
    re.I,
)
#: the top of a score's scale said after it ("22 out of 25", "19/30")
_OUT_OF = re.compile(r"\s*(?:out of|/)\s*\d+")
#: the pounds after a weight in stones ("13 stone 2", "12 st 4 lb")
_POUNDS = re.compile(
    r"\s*,?\s*(1[0-3]|[0-9])(?:\s*(?:lb|lbs|pounds?)\b|(?=\s*(?:[.,;:!?)]|$)))", re.I
)


def _said_before(
    analyte: Analyte, text: str, start: int, taken: list[tuple[int, int]]
) -> list[tuple[Analyte, str, str, int, int]]:
    """A value said before the name of what it measures, in a unit of it ("84 kg on the
    bathroom scales"): the last such number before ``start``; none without the unit."""
    out = []
    for m in _NUMBER.finditer(text, 0, start):
        if any(a <= m.start() < e for a, e in taken):
            continue
        spelled = _analyte_unit_after(analyte, text, m.end())
        if spelled is not None and spelled[1] <= start:
            out = [(analyte, m.group(1).replace(",", "."), spelled[0], m.start(), spelled[1])]
    return out


def _analyte_unit_after(analyte: Analyte, text: str, pos: int) -> tuple[str, int] | None:
    """A unit of the analyte's written after ``pos`` in any spelling units.json knows ("84.5
    kilos": kg), as its code; None when none is."""
    from ..facts import units as facts_units

    found = facts_units.unit_after(lexicon(), text, pos)
    if found is None:
        return None
    unit, end = found
    codes = {facts_units.key(c) for c in analyte.units}
    return (unit.code, end) if facts_units.key(unit.code) in codes else None


@cache
def dose_unit_re(units: frozenset[str]) -> re.Pattern[str]:
    alts = "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True))
    return re.compile(rf"\s*({alts})\b", re.I)


def unit_shown(written: str) -> str:
    known = names.unit(written)
    if written.islower() and known:
        return known
    return written


def with_date(x: Result, d: DateSpan) -> Result:
    return replace(x, date=d)


_COMPARED = re.compile(
    r"\b(than|from|compared|previous|previously|before|down|up|last time|was|were|used to)\b",
    re.I,
)


def _one_date_for_all(found: list[Result], dates: list[DateSpan], text: str) -> list[Result]:
    """A sentence with one date and results it did not pair: the date is theirs too when it
    is said after them all ("LDL 3.1 and total cholesterol 5.4, taken on 20 November") or is
    the only date any result took ("heart rate today is 68 and weight 91 kg"); never a "since"
    ("72.4 kg, a kilo down since Christmas")."""
    if len(dates) != 1 or all(x.date is not None for x in found) or dates[0].since:
        return found
    only = dates[0]
    last = max(x.end for x in found)
    # ... unless a word between brings in another value the date is that one's ("54, much the
    # same as last year")
    after_all = (
        all(x.date in (None, only) for x in found)
        and only.start > last
        and not _COMPARED_WITH.search(text, last, only.start)
    )
    dated = [x for x in found if x.date is not None]
    # "52, lower than the 56 in November": one value's date -- a comparison word said after
    # the first value ("before discharge ... the potassium was 5.1 and the creatinine 142"
    # compares nothing)
    compared = _COMPARED.search(text, min(x.end for x in found))
    if (after_all and not (compared and dated)) or (
        len(dated) == 1 and dated[0].date is only and not compared
    ):
        return [x if x.date else with_date(x, only) for x in found]
    return found


@cache
def panels() -> frozenset[str]:
    """Analytes read as their parts' values, two or more analytes of one unit ("132/84":
    blood pressure, systolic over diastolic)."""
    parts: dict[str, int] = {}
    lex = lexicon()
    for a in lex.analytes.values():
        if a.parent and a.unit == lex.analytes[a.parent].unit:
            parts[a.parent] = parts.get(a.parent, 0) + 1
    return frozenset(p for p, n in parts.items() if n >= 2)


#: where a value's own words end: a connector, or a clause break (";", a dash) -- a date after
#: it opens the next clause ("TSH 6.8 -- raised; in December it was 3.1": December is the 3.1's)
_CONNECTOR = re.compile(
    r",|;|\s-\s|\s?[\u2013\u2014]\s?|\b(and|but|from|than|compared|versus|vs|was|were|it)\b", re.I
)


#: a word after a value that brings in another to compare it with: a date after it is that
#: other value's
_COMPARED_AFTER = re.compile(
    r"\b(than|compared|from|previous|previously|last time|same as|similar to)\b", re.I
)
#: ... of them, those that bring in another value whatever follows ("from" may say where a
#: value came from: "5.1 from Monday's bloods")
_COMPARED_WITH = re.compile(
    r"\b(than|compared|previous|previously|last time|same as|similar to)\b", re.I
)


def pair_dates(
    raw: list[tuple[Analyte, str, str, int, int]], dates: list[DateSpan], n: int, text: str
) -> list[Result]:
    """Each value with the date said beside it: after it before the next connector ("7.2 % on
    Friday, and ..."), else before it since the previous value ("INR yesterday was 3.4"); a
    "since" after it is no value's day."""
    out: list[Result] = []
    claimed: set[int] = set()
    for i, (analyte, value, unit, start, end) in enumerate(raw):
        nxt = raw[i + 1][3] if i + 1 < len(raw) else n
        prev = raw[i - 1][4] if i > 0 else 0
        gap = text[end:nxt]
        cut = _CONNECTOR.search(gap)
        limit = end + (cut.start() if cut and i + 1 < len(raw) else len(gap))
        compared = _COMPARED_AFTER.search(gap)
        if compared:  # "52, a little lower than the 56 in November": November is the 56's
            limit = min(limit, end + compared.start())
        mine = next(
            (
                k
                for k, d in enumerate(dates)
                if end <= d.start < limit and k not in claimed and not d.since
            ),
            None,
        )
        if mine is None:
            mine = next(
                (
                    k
                    for k, d in reversed(list(enumerate(dates)))
                    if prev <= d.start < start and k not in claimed
                ),
                None,
            )
        if mine is not None:
            claimed.add(mine)
        out.append(
            Result(analyte, value, unit, start, end, dates[mine] if mine is not None else None)
        )
    return out
