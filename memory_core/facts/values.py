"""The value a statement gives a thing: a drug's dose, frequency and formulation, a result's
value (converted to the analyte's unit) or qualitative result, a condition's stage and
severity, a slot's values; and the date a statement gives. Values are written as ``name=value``
pairs joined by ``"; "`` (:func:`parts` reads them back). Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise

from . import units
from .lexicon import Analyte, Lexicon, Slot, lexicon
from .text import Span, Text, name_after, name_calls, numbers

#: Words that make a number a target or a range, not a result ("INR target 2-3"), or what a
#: reading is aimed at or compared with ("dry weight 78 kg", "ideal body weight", "predicted
#: peak flow 480").
TARGET_WORDS = frozenset({
    "target", "targets", "goal", "goals", "range", "aim", "aiming", "keep", "dry", "ideal",
    "predicted",
})  # fmt: skip
#: Qualifiers of a condition and the words they take ("stage 3a", "NYHA class II").
QUALIFIERS = frozenset({"stage", "class", "grade", "type", "gold", "nyha", "cga", "phase"})
_SEVERITY = {
    "mild": "mild",
    "moderate": "moderate",
    "severe": "severe",
    "controlled": "controlled",
    "uncontrolled": "uncontrolled",
    "stable": "stable",
    "unstable": "unstable",
    "acute": "acute",
    "chronic": "chronic",
    "active": "active",
    "inactive": "inactive",
}
_CLOCK = re.compile(r"(\d{1,2})(?::\d{2})?\s*(am|pm|a\.m\.|p\.m\.)", re.IGNORECASE)
_TIME_UNITS = frozenset(
    {
        "minutes", "minute", "mins", "min", "hours", "hour", "hrs", "hr", "h", "steps", "km",
        "miles", "pack", "packs", "ppd", "cigarettes", "cigs", "cigars", "drinks", "units",
        "glasses", "pints", "beers", "bottles", "cans", "shots", "u", "unit",
    }
)  # fmt: skip
#: one name for a unit written several ways ("14u/wk", "14 units a week")
_UNIT_ALIASES = {"u": "units", "unit": "units", "cigs": "cigarettes", "pack": "packs"}


def parts(value: str) -> dict[str, str]:
    """The ``name=value`` pairs of a fact's value."""
    out: dict[str, str] = {}
    for piece in value.split("; "):
        name, eq, v = piece.partition("=")
        if eq:
            out[name] = v
    return out


def join(pairs: Sequence[tuple[str, str]]) -> str:
    return "; ".join(f"{n}={v}" for n, v in pairs if v)


def window(t: Text, span: Span, spans: Sequence[Span]) -> tuple[int, int]:
    """The tokens after ``span`` that speak of it: up to the next thing named, and at most to
    the end of the next sentence ("GI distress on metformin; switched to extended-release":
    the formulation is metformin's)."""
    end = min((s.start for s in spans if s.start >= span.end and s != span), default=len(t.tokens))
    last = t.sentence[span.start] + 1
    s_end = span.end
    while s_end < len(t.tokens) and t.sentence[s_end] <= last:
        s_end += 1
    return span.end, min(end, s_end)


# --- drugs -------------------------------------------------------------------------------------
def drug_value(t: Text, span: Span, spans: Sequence[Span]) -> str:
    lex = lexicon()
    a, b = window(t, span, spans)
    nxt = next((s for s in spans if s.start == b and s != span), None)
    if nxt is not None:
        # "5 mg amlodipine and 10 mg ramipril": a dose said before the next drug, which has
        # none after it, is that drug's ("Amlodipine 5 mg ramipril 10 mg": amlodipine's)
        lead = _dose_lead(t, nxt, lex)[0]
        if lead < b and not _dose(t, *window(t, nxt, spans), lex):
            b = max(a, lead)
    dose = _dose(t, a, b, lex) or _dose_before(t, span, spans, lex)
    # a most's period ("up to 8 puffs a day") is no frequency either
    limits = {i + 2 for i, _d in _doses(t, a, b, lex) if _a_most(t, i, a)}
    freq = [
        m.value
        for m in lex.frequencies.find(t.tokens[a:b], t.raw[a:b])
        if t.tokens[a + m.start - 1] not in HOW_LONG  # "for a week": a course, not weekly
        and a + m.start not in limits
    ]
    before = max(0, span.start - 3)
    forms = [
        m.value
        for m in lex.formulations.find(t.tokens[before:b], t.raw[before:b])
        if not _a_title(t.raw[before + m.start : before + m.end], lex)
    ]
    course = course_length(t.tokens[a:b], lex.number_words)
    return join(
        [
            ("dose", dose),
            ("freq", freq[0] if freq else ""),
            ("form", forms[0] if forms else ""),
            ("course", course[2] if course else ""),
            ("day", _weekly_day(t, a, b, lex)),
        ]
    )


def _weekly_day(t: Text, a: int, b: int, lex: Lexicon) -> str:
    """The day of the week a dose is taken on, where it recurs ("on Mondays", "every Sunday",
    "moved to Fridays"): a weekly order's day; "" where none is said (a day said once -- "seen
    on Monday" -- is no day of the order)."""
    for i in range(a, b):
        word = t.tokens[i]
        day = word[:-1] if word.endswith("s") and word[:-1] in lex.weekdays else ""
        if not day and word in lex.weekdays and i > 0 and t.tokens[i - 1] in _EVERY:
            day = word
        if day:
            return day
    return ""


#: Words before a weekday that make it recur ("every Monday", "each Friday").
_EVERY = frozenset({"every", "each"})


def _dose_before(t: Text, span: Span, spans: Sequence[Span], lex: Lexicon) -> str:
    """A dose said right before its drug, where none follows it: "100mg of sertraline", "the
    40 mg omeprazole" -- a number and a dose unit, then "of" or a determiner or both, with no
    other thing named between."""
    start, dose = _dose_lead(t, span, lex)
    if any(s.start < span.start and s.end > start for s in spans if s != span):
        return ""
    return dose


def _dose_lead(t: Text, span: Span, lex: Lexicon) -> tuple[int, str]:
    """Where a dose said right before ``span`` begins, and the dose ("100mg of the
    sertraline": the token of 100, "100 mg"); ``span.start`` and "" where none is."""
    i = span.start
    while i > 0 and t.tokens[i - 1] in _BEFORE_DRUG and t.sentence[i - 1] == t.sentence[span.start]:
        i -= 1
    for start, dose in _doses(t, max(0, i - 3), i, lex):
        unit_ends_here = start == i - 2 or (
            start == i - 3 and " ".join(t.tokens[i - 2 : i]) in lex.dose_units
        )
        spaced = all(not t.text[t.ends[k] : t.starts[k + 1]].strip() for k in range(start, i))
        if unit_ends_here and spaced and not _a_most(t, start, max(0, i - 3)):
            return start, dose  # "5 mg, ramipril": the comma gives 5 mg to what came before
    return span.start, ""


#: The words that may stand between a dose and its drug said after it ("100mg of the").
_BEFORE_DRUG = frozenset({"of", "the", "my", "her", "his", "your", "their"})


#: The units a course's length is counted in, by their days.
_COURSE_DAYS = {"day": 1, "days": 1, "week": 7, "weeks": 7}


def course_length(
    toks: Sequence[str], number_words: Mapping[str, float]
) -> tuple[int, int, str] | None:
    """A course's length said among ``toks`` ("for 5 days", "x 7 days", "for a week", "for
    two more weeks"): its tokens' range and its days ("7 days"); None where none is said. A dose
    said with one is a course, not a standing order."""
    for i, w in enumerate(toks[:-2]):
        if w not in ("for", "x"):
            continue
        n = 1.0 if toks[i + 1] in ("a", "an") else as_number(toks[i + 1])
        n = number_words.get(toks[i + 1]) if n is None else n
        j = i + 2 + (toks[i + 2] == "more" and i + 3 < len(toks))
        if n and toks[j] in _COURSE_DAYS:
            days = n * _COURSE_DAYS[toks[j]]
            return i, j + 1, f"{days:g} day{'s' if days != 1 else ''}"
    return None


#: Words before a frequency's phrase that make it a length of time ("for a week", "for a day or
#: two", "within a day"): how long, not how often.
HOW_LONG = frozenset({"for", "within", "over"})


def _a_title(raw: Sequence[str], lex: Lexicon) -> bool:
    """A formulation's abbreviation written as a title is the title ("Dr Khan", "Sr Jones":
    not "DR", delayed release)."""
    return (
        len(raw) == 1
        and raw[0].lower() in lex.titles
        and raw[0][:1].isupper()
        and raw[0][1:].islower()
    )


def _dose(t: Text, a: int, b: int, lex: Lexicon) -> str:
    """The dose a statement gives the drug now: of the numbers followed by a dose unit ("500
    mg", "10 units", "30/500 mg"), the one a change goes to ("from 50 mg to 100 mg", "went up
    to 100 mg", "was 500 mg, now 1 g"), else the first."""
    said = _dose_said(t, a, b, lex)
    if said is None:
        return ""
    i, dose = said
    return times(dose, _forms_count(t, i, a, b, lex) or 1.0)


def _dose_said(t: Text, a: int, b: int, lex: Lexicon) -> tuple[int, str] | None:
    """The dose :func:`_dose` reads, as written, and its number's token."""
    doses = [(i, d) for i, d in _doses(t, a, b, lex) if not _a_most(t, i, a)]
    if not doses:
        return None
    target = [(i, d) for i, d in doses if _is_target(t, i, a)]
    return target[0] if target else doses[0]


def dose_in_doubt(t: Text, span: Span, spans: Sequence[Span]) -> bool:
    """A number follows the drug's dose that does not say how many forms it is ("500 mg - two
    BD", "50 micrograms, 2 daily", "500 mg 1-2 tablets", "500 mg-1 g"), or a second strength
    is added to it ("100 mcg plus 25 mcg"): the dose a statement gives may be one form's
    strength, a range or a part, so no change of it is asserted."""
    lex = lexicon()
    a, b = window(t, span, spans)
    said = _dose_said(t, a, b, lex)
    if said is None:
        return False
    i = said[0]
    if i + 1 >= b or not _mass(t.tokens[i + 1], lex) or _forms_count(t, i, a, b, lex):
        return False
    k = i + 2 + (i + 2 < b and t.tokens[i + 2] in _FORMS)
    if k + 2 < b and t.tokens[k] in _PLUS and _mass(t.tokens[k + 2], lex):
        k += 1  # "100 mcg plus 25 mcg": two strengths taken together
    if k >= b or not (t.tokens[k][:1].isdigit() or t.tokens[k] in lex.number_words):
        return False
    if _is_period(t, k) or _is_date_number(t, k, lex.months):
        return False  # "increased to 10 mg 2 weeks ago", "... 5 mg 3 March"
    # "twice daily", "one time in day": how often, not how many
    return not any(m.start == 0 for m in lex.frequencies.find(t.tokens[k:b], t.raw[k:b]))


#: What joins a second strength to a dose ("100 mcg plus 25 mcg", "100 mcg and 25 mcg").
_PLUS = frozenset({"plus", "and"})

#: The dose units (of the lexicon's) that count dose forms ("2 tabs", "two puffs"), not a
#: mass or a volume; a dose of several is the strength of one times their number.
_FORMS = frozenset({
    "tab", "tabs", "tablet", "tablets", "cap", "caps", "capsule", "capsules", "puff", "puffs",
    "patch", "patches", "drop", "drops", "spray", "sprays",
})  # fmt: skip


def _mass(token: str, lex: Lexicon) -> bool:
    """A unit of mass (a form's strength: "mg", "micrograms", "g")."""
    unit = units.unit_named(lex, _unit(token))
    return unit is not None and unit.dimension == "mass"


#: The most forms a dose is said to be; a larger number is a pack's size ("56 tablets").
MOST_FORMS = 10
#: "x2": a count of forms written onto the times sign.
_TIMES_N = re.compile(r"x(\d{1,2})")


def _forms_count(t: Text, i: int, a: int, b: int, lex: Lexicon) -> float | None:
    """How many forms of the strength at token ``i`` (a number, then its unit) a dose is: "2 x
    500 mg", "500 mg x2", "two 500 mg tablets", "500 mg tablets, two twice a day", "500 mg, 2
    tabs", and parts of one ("half a 5 mg tablet", "5 mg, half a tablet", "3 mg x 1.5": the
    normaliser reads "½" and "one and a half" as numbers); None where none is said, or the
    number counts days ("x 5 days") or a pack ("56 tablets supplied")."""
    toks = t.tokens

    def n(k: int) -> float | None:
        if not a <= k < b:
            return None
        w = toks[k]
        got = lex.number_words.get(w) if not w[:1].isdigit() else as_number(w)
        return got if got is not None and _a_count(got) else None

    def period(k: int) -> bool:
        return a <= k < b and _is_period(t, k - 1)

    j = i + 2 if i + 1 < b and _mass(toks[i + 1], lex) else -1
    if j < 0:
        return None
    if i - 1 >= a and toks[i - 1] in _ONE:  # "half a 5 mg tablet", "half of a 5 mg tablet"
        part = n(i - 3 if i - 2 >= a and toks[i - 2] == "of" else i - 2)
        return part if part is not None and part < 1 else None
    if (before := n(i - 2)) and toks[i - 1] == "x":
        return before  # "2 x 500 mg"
    if (before := n(i - 1)) and j < b and toks[j] in _FORMS:
        return before  # "two 500 mg tablets"
    if j < b and (m := _TIMES_N.fullmatch(toks[j])) and not period(j + 1):
        return _n_of(m.group(1))  # "500 mg x2"
    if j + 1 < b and toks[j] == "x" and (after := n(j + 1)) and not period(j + 2):
        return after  # "500 mg x 2"
    formed = j < b and toks[j] in _FORMS
    k = j + 1 if formed else j
    if (after := n(k)) and not period(k + 1):
        f = k + 1 + (after < 1 and k + 1 < b and toks[k + 1] in _ONE)  # "half a tablet"
        named = f < b and toks[f] in _FORMS
        if named or (formed and not (k + 1 < b and toks[k + 1] in lex.dose_units)):
            return after  # "500 mg, 2 tabs"; "500 mg tablets, two twice a day"
    return None


#: The article between part of a form and the form ("half a tablet", "half of a 5 mg tablet").
_ONE = frozenset({"a", "an"})


def _a_count(x: float) -> bool:
    """A number of forms a dose may be: whole ones up to :data:`MOST_FORMS`, or quarters of
    one ("half a tablet", "one and a half tablets")."""
    return 0.25 <= x <= MOST_FORMS and (x * 4).is_integer()


def _n_of(digits: str) -> float | None:
    x = float(digits)
    return x if 1 <= x <= MOST_FORMS else None


def as_number(w: str) -> float | None:
    """``w`` read as a number, or None ("132/84", "13 st 2")."""
    try:
        return float(w)
    except ValueError:
        return None


def times(dose: str, count: float) -> str:
    """A dose ``count`` times: "500 mg" x 2 -> "1000 mg" (two forms, or two doses a day)."""
    if count == 1:
        return dose
    number, _sp, unit = dose.partition(" ")
    strength = as_number(number)
    return dose if strength is None else f"{strength * count:g} {unit}"


#: The arrows a note writes from one dose to the next, as the tokenizer keeps them.
_ARROWS = frozenset({"->", "=>", "→"})
#: Movement words before "up to" / "down to" that make its dose a target, not a maximum ("went
#: up to 100 mg"; "up to 8 tablets a day" is a most).
_MOVED = frozenset({
    "went", "gone", "go", "goes", "going", "came", "come", "put", "moved", "bumped",
    "titrated", "increased", "reduced", "cut", "dropped", "stepped",
})  # fmt: skip


def _is_target(t: Text, i: int, a: int) -> bool:
    """The dose at token ``i`` is what a change in the clause goes to: "to 100 mg" (not a bare
    "up to"), "now 1 g", after an arrow ("10mg -> 5mg")."""
    before = list(t.tokens[max(a, i - 3) : i])
    if before[-1:] == ["now"] or (before[-1:] and before[-1] in _ARROWS):
        return True
    if before[-1:] != ["to"]:
        return False
    if before[-2:-1] in (["up"], ["down"]):
        return len(before) == 3 and before[0] in _MOVED
    return True


def _a_most(t: Text, i: int, a: int) -> bool:
    """The dose at token ``i`` is a most, not a dose taken: "max 4 g", "a maximum of 8
    tablets", "no more than 4 g", and "up to 8 puffs a day" -- "up to" with a day's period
    after the dose, none of "put it up to 5 mg", "titrated up to 24 units nocte", "MTX up to
    20 mg weekly" (a change, in a note's shorthand)."""
    before = list(t.tokens[max(a, i - 3) : i])
    if before[-2:] == ["up", "to"]:
        moved = any(w in _MOVED for w in t.tokens[a : i - 2])
        after = tuple(t.tokens[i + 2 : i + 4])
        return not moved and (after in _A_DAY_AFTER or after[:1] == ("daily",))
    if before[-1:] == ["of"]:
        before = before[:-1]  # "a maximum of 8"
    return bool(before[-1:] and before[-1] in _MOST) or before[-2:] == ["more", "than"]


#: A day's period right after a dose and its unit ("up to 8 puffs a day").
_A_DAY_AFTER = frozenset({("a", "day"), ("per", "day"), ("each", "day"), ("in", "24")})
#: Words right before a dose that make it a most ("max 4 g", "maximum of 8", "at most").
_MOST = frozenset({"max", "maximum", "most", "exceed", "exceeding"})


def _doses(t: Text, a: int, b: int, lex: Lexicon) -> Iterator[tuple[int, str]]:
    """Each number in tokens ``a``..``b`` followed by a dose unit, with its token."""
    for i in range(a, b):
        if not t.tokens[i][:1].isdigit():
            continue
        j = i + 1
        strength = t.tokens[i]
        while j + 1 < b and t.text[t.ends[j - 1] : t.starts[j]] == "/" and t.tokens[j][0].isdigit():
            strength += "/" + t.tokens[j]
            j += 1
        unit = next(
            (
                u
                for n in (2, 1)
                if j + n <= b and (u := " ".join(t.tokens[j : j + n])) in lex.dose_units
            ),
            "",
        )
        if unit:
            yield i, f"{_num(strength)} {_unit(unit)}"
            k = j + len(unit.split())  # "from 5 mg to 10": the unit said once, for both
            if (
                k + 1 < b
                and t.tokens[k] == "to"
                and t.tokens[k + 1][:1].isdigit()
                and (k + 2 >= b or t.tokens[k + 2] not in lex.dose_units | _NOT_A_DOSE_AFTER)
            ):
                yield k + 1, f"{_num(t.tokens[k + 1])} {_unit(unit)}"
        elif "/" in strength:
            yield i, _num(strength)  # a combination's strengths ("co-codamol 30/500")


#: words after a number that make it no dose of the unit said before it ("5 mg to 10 days")
_NOT_A_DOSE_AFTER = frozenset(
    {"day", "days", "week", "weeks", "month", "months", "year", "years", "hour", "hours",
     "minute", "minutes", "times", "x", "tablets", "tablet", "puffs"}
)  # fmt: skip

#: One spelling of a dose unit written several ways.
_DOSE_UNITS = {
    "u": "units", "unit": "units", "iu": "units", "ug": "mcg", "microgram": "mcg",
    "micrograms": "mcg", "milligram": "mg", "milligrams": "mg", "gram": "g", "grams": "g",
    "gm": "g",
}  # fmt: skip


def _unit(unit: str) -> str:
    return _DOSE_UNITS.get(unit, unit)


def _num(s: str) -> str:
    """A number written without trailing zeros ("20.0" is "20")."""
    try:
        return "/".join(f"{float(x):g}" for x in s.split("/"))
    except ValueError:
        return s


# --- results -----------------------------------------------------------------------------------
def lab_value(
    t: Text, span: Span, spans: Sequence[Span], analyte: Analyte | None, plan: bool = False
) -> str:
    """A result's value (converted to the analyte's unit) or qualitative result, with where and
    when it was taken; a target instead when it is one. In a plan (``plan``) a test has no
    result: its target, or when it is due."""
    lex = lexicon()
    a, b = window(t, span, [s for s in spans if s.how == "lab"])
    before = max(0, span.start - 4)
    outside = (*t.tokens[before : span.start], *t.tokens[span.end : b])
    where = qualifiers(t, span, spans)
    if any(w in TARGET_WORDS for w in outside) and _target_first(t, span, a, b):
        # a target is set for where and when it is read, as a result is ("home BP target")
        return join([("target", _first_number(t, a, b) or "yes"), *where])
    qual = lex.qualitative.find(t.tokens[a:b], t.raw[a:b]) or [
        m
        for m in lex.qualitative.find(t.tokens[before : span.start], t.raw[before : span.start])
        if not _bounded(t, a, b)  # "Normal eGFR is above 90": what normal is
    ]
    lo, hi = _sentence(t, span.start)
    when = [("timing", timing(t, lo, hi, lex))]
    if plan:
        return join(when)
    drugs_at = [x.start for x in spans if x.how in ("drug", "combination") and a <= x.start < b]
    number = _result_number(t, a, b, analyte, drugs_at) or _score_before(t, span)
    if number:
        return join([("value", number), *where])
    return join([("result", qual[0].value), *where]) if qual else join([*where, *when])


#: A score said before the test it is of ("scored 19 out of 30 on the MoCA").
_SCORED_BEFORE = re.compile(
    r"\b(?:scored|score of|got)\s+(\d+(?:\.\d+)?)\s*(?:out of|/)\s*\d+\s+(?:on|in)\s+"
    r"(?:the|her|his|their|my|your|a)?\s*$",
    re.I,
)


def _score_before(t: Text, span: Span) -> str:
    """The score a sentence gives a test before naming it ("The patient scored 19 out of 30 on
    the MoCA memory test": 19), or ""."""
    lo = max(0, t.starts[span.start] - 60)
    m = _SCORED_BEFORE.search(t.text, lo, t.starts[span.start])
    return f"{float(m.group(1)):g}" if m else ""


def _bounded(t: Text, a: int, b: int) -> bool:
    """The window's numbers include a bound or a range ("above 90", "0.4-4.0")."""
    return any(
        t.tokens[i][:1].isdigit() and (_threshold(t, i) or _in_range(t, i)) for i in range(a, b)
    )


def _target_first(t: Text, span: Span, a: int, b: int) -> bool:
    """A target word comes before the first number ("INR target range 2-3"; not "INR 1.8,
    goal 2-3")."""
    first_num = next((i for i in range(a, b) if t.tokens[i][:1].isdigit()), b)
    lo = max(0, span.start - 4)
    words = (i for i in range(lo, first_num) if not span.start <= i < span.end)
    return any(t.tokens[i] in TARGET_WORDS for i in words)


def _first_number(t: Text, a: int, b: int) -> str:
    for _i, v in numbers(t, a, b):
        return f"{v:g}"
    return ""


def _result_number(
    t: Text, a: int, b: int, analyte: Analyte | None, drugs_at: Sequence[int] = ()
) -> str:
    """The result the window gives (:func:`result_at`): the number after the window's last
    word of now ("HbA1c was 58 last year, now down to 52"), or right before one ("dropped to
    98 but back up to 125 now"), or else its first, that is no date,
    period, threshold or range bound; a number in a dose unit that is not the analyte's is a
    dose, not its result: after a drug named in the window ("creatinine, since starting
    spironolactone 25 mg, up to 1.6"), or in a unit spelt as a word ("repeat Hb after 2 units
    of red cells"; not a letter or two: "K 3.1 (L)" is flagged low)."""
    lex = lexicon()
    said = lex.now_words.find(t.tokens[a:b], t.raw[a:b])
    now = [m.end for m in said]
    candidates = [i for i in range(a, b) if _is_result_number(t, i, lex)]
    # with a word of now right after it in its clause ("back up to 125 now", "52 today, 58 in
    # March"), or after the last word of now
    latest = [
        i
        for i in candidates
        if any(0 < a + m.start - i <= 3 and t.clause[a + m.start] == t.clause[i] for m in said)
    ] + [i for i in candidates if now and i >= a + now[-1]]
    # "HbA1c 58 -> 52": where the arrows go, the last
    arrowed = [j for i, j in pairwise(candidates) if _ARROW.search(t.text, t.ends[i], t.starts[j])]
    for i in (*latest[:1], *arrowed[-1:], *candidates):
        after_drug = any(d < i for d in drugs_at)
        nxt = t.tokens[i + 1 : i + 2]
        dose = bool(nxt) and nxt[0] in lex.dose_units and (after_drug or len(nxt[0]) > 2)
        if dose and not _unit_of(t, i, analyte):
            continue
        got = result_at(t, i, analyte)
        if got:
            return got
    return ""


#: An arrow from one value to the next ("58 -> 52", "110 → 135").
_ARROW = re.compile(r"->|→|=>|⟶|>>")


def _is_result_number(t: Text, i: int, lex: Lexicon) -> bool:
    """A number of the window that may be a result: no date, no period of time, no threshold
    and no range ("6-8 on my meter", "an HbA1c of 48 or over", "eGFR 45-59")."""
    if not t.tokens[i][:1].isdigit() or _part_of_another(t, i) or _label(t, i):
        return False
    if _is_date_number(t, i, lex.months) or _is_period(t, i):
        return False
    return not (_threshold(t, i) or _in_range(t, i) or _change_amount(t, i))


def _label(t: Text, i: int) -> bool:
    """A number with a letter written on it is a label, not an amount ("stage 3b", "G3a",
    "grade 2c"); with an ordinal's ending, a place in an order ("on 3rd March", "the 2nd
    check")."""
    nxt = i + 1
    if nxt >= len(t.tokens) or t.starts[nxt] != t.ends[i]:
        return False
    word = t.tokens[nxt]
    return (len(word) == 1 and word in "abcde") or word == _ordinal_ending(t.tokens[i])


def _ordinal_ending(number: str) -> str:
    """The ending an ordinal of ``number`` is written with ("1st", "22nd", "13th"): "13st" is
    thirteen stone, not the thirteenth."""
    if not number.isdigit():
        return ""
    n = int(number)
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _part_of_another(t: Text, i: int) -> bool:
    """A number that is part of something else: a unit's ("mL/min/1.73 m2"), the second of a
    pair ("142/88"), a decade ("the 130s")."""
    if t.starts[i] and t.text[t.starts[i] - 1] == "/":
        return True
    nxt = i + 1
    return nxt < len(t.tokens) and t.tokens[nxt] == "s" and t.starts[nxt] == t.ends[i]


#: Words before a number that make it a bound, not a result ("over 30", "at least 5").
BOUND_BEFORE = re.compile(
    r"(?:(?<![-=>])>=?|<=?|≥|≤|\b(?:over|above|below|under|greater than|less than|more than|"
    r"fewer than|at least|at most|exceeds|exceeding|beyond|between))\s*$",  # "->": an arrow
    re.IGNORECASE,
)
#: Words before a number that make it a guess, not a reading taken ("that's nearly 5 kilos").
GUESS_BEFORE = re.compile(
    r"\b(?:another|extra|about|around|nearly|almost|roughly|approximately)\s*$", re.I
)
#: Words before a number that make it an amount of change, not the result now ("down 3 kg to
#: 81 kg", "lost 3 kg", "up by 10").
AMOUNT_BEFORE = re.compile(
    r"\b(?:by|down|up|lost|lose|losing|gained|gain|gaining|put on|dropped|dropping|fell|"
    r"rose|risen|fallen|minus|plus)(?:\s+(?:about|around|nearly|almost|roughly|over|a good))?"
    r"\s*$",
    re.IGNORECASE,
)
#: ... and those words or "from": an amount of change or the value it changed from ("from 8.1 %
#: to 7.2 %").
CHANGE_BEFORE = re.compile(rf"\bfrom\s*$|{AMOUNT_BEFORE.pattern}", re.IGNORECASE)
#: Words right after a number and its unit that make it an amount of change ("two kilos down",
#: "3 kg lighter"; not "58 mmol/mol down from 64": what it is now).
AMOUNT_AFTER = re.compile(
    r"\s*(?:down|up|lighter|heavier|less|more|off)\b(?!\s+(?:from|to)\b)", re.IGNORECASE
)
#: Words after a number (and its unit) that make it a bound ("48 or more", "30+").
_BOUND_AFTER = re.compile(
    r"^\s*(?:\+|or (?:more|above|over|higher|greater|less|below|under|lower)|and (?:above|over|"
    r"below|under|higher|lower)|plus\b)",
    re.IGNORECASE,
)


def _threshold(t: Text, i: int) -> bool:
    before = t.text[max(0, t.starts[i] - 16) : t.starts[i]]
    if BOUND_BEFORE.search(before):
        return True
    end = t.ends[i]
    found = units.unit_after(lexicon(), t.text, end)
    if found is not None:
        end = found[1]
    # "48 mmol/mol (6.5%) or above": the bound is 48's, and the restatement's
    restated = _RESTATED.match(t.text, end) or _CLOSED.match(t.text, end)
    if restated:
        end = restated.end()
    return bool(_BOUND_AFTER.match(t.text[end : end + 16]))


#: a value restated in brackets in other units right after it ("48 mmol/mol (6.5%)")
_RESTATED = re.compile(r"\s*\(\s*[<>≤≥~]?\s*\d[\d.,]*\s*[^()\d\s][^()]{0,12}\)")
#: the bracket a restated value closes ("(6.5%) or above")
_CLOSED = re.compile(r"\s*\)")


def _change_amount(t: Text, i: int) -> bool:
    """A number said as the amount a result changed by ("lost 3 kg", "two kilos down"), or the
    value it changed from, or as a rate of change ("2 kg in three days", "3 kg over a week")."""
    if CHANGE_BEFORE.search(t.text[max(0, t.starts[i] - 12) : t.starts[i]]):
        return True
    found = units.unit_after(lexicon(), t.text, t.ends[i])
    if found is not None and AMOUNT_AFTER.match(t.text, found[1]):
        return True  # "two kilos down"
    return rate_after(t.text, t.ends[i])


def rate_after(text: str, end: int) -> bool:
    """Whether the number ending at ``end`` of ``text`` is said with its unit and a span of
    time: a rate of change ("2 kg in three days", "3 kg over a week"), not a reading."""
    found = units.unit_after(lexicon(), text, end)
    return found is not None and bool(_RATE_AFTER.match(text, found[1]))


#: A span of time after a number and its unit that makes it a rate of change.
_RATE_AFTER = re.compile(
    r"\s*(?:in|over|within)\s+(?:(?:\d+|a|an|one|two|three|four|five|six|seven)"
    r"(?:\s+(?:or|to)\s+(?:\d+|two|three|four|five|six|seven|eight))?|a couple of|a few)"
    r"\s+(?:days?|weeks?|hours?|months?)\b",
    re.IGNORECASE,
)


_RANGE_LINK = re.compile(r"^\s*(?:[-–—]|to)\s*$")


def _in_range(t: Text, i: int) -> bool:
    """Either bound of a range: "6-8", "42 to 47", "30.0-34.9", "between 45 and 59" (a blood
    pressure's "/" is no range)."""
    nxt, prev = i + 1, i - 1
    if prev >= 2 and t.tokens[prev] == "and" and t.tokens[prev - 2] == "between":
        return t.tokens[prev - 1][:1].isdigit()
    link = t.text[t.ends[i] : t.starts[nxt]] if nxt < len(t.tokens) else ""
    if nxt < len(t.tokens) and t.tokens[nxt][:1].isdigit() and _RANGE_LINK.match(link):
        return True
    if nxt + 1 < len(t.tokens) and t.tokens[nxt] == "to" and t.tokens[nxt + 1][:1].isdigit():
        return True
    if prev >= 0 and t.tokens[prev][:1].isdigit():
        return bool(_RANGE_LINK.match(t.text[t.ends[prev] : t.starts[i]]))
    return prev >= 1 and t.tokens[prev] == "to" and t.tokens[prev - 1][:1].isdigit()


def other_specimen(t: Text, span: Span) -> bool:
    """An analyte named right after a specimen that is not its own ("urine sodium", "CSF
    glucose"): a measurement the lexicon keys no code for, whose numbers are no result of it."""
    lex = lexicon()
    lo = max(0, span.start - 4)
    found = lex.qualifiers["specimen"].find(t.tokens[lo : span.start], t.raw[lo : span.start])
    return any(
        m.value and m.end + lo == span.start and m.value not in lex.own_specimens for m in found
    )


def implausible(t: Text, spans: Sequence[Span]) -> str:
    """Why a result the statement writes with its unit cannot be its test's ("weight 0 kg",
    "HbA1c 1e308 %"): a number followed by a unit of the test that converts outside its
    physiological bounds; "" when none does (a bare number is never refused: it only gets no
    value)."""
    lex = lexicon()
    labs = [s for s in spans if s.how == "lab"]
    for span in (s for s in labs if not other_specimen(t, s)):
        analyte = lex.analyte_for_code(span.key.partition(":")[2])
        if analyte is None or not analyte.bounds:
            continue
        a, b = window(t, span, labs)
        tails: set[int] = set()  # the pounds of "12 st 0 lb": part of the stones' value
        for i in (i for i in range(a, b) if _is_result_number(t, i, lex) and i not in tails):
            x, unit = float(t.tokens[i]), _unit_of(t, i, analyte)
            compound = _compound(t, i, analyte)
            if compound is not None:
                x, unit, _spelt_as, tail = compound
                tails.add(tail)
            canon = None if unit is None else units.to_canonical(lex, analyte, x, unit)
            if unit is not None and canon is not None and not units.plausible(analyte, canon):
                lo, hi = analyte.bounds
                return (
                    f"{analyte.display} {x:g} {unit.code} is outside physiology "
                    f"({lo:g}-{hi:g} {analyte.unit})"
                )
    return ""


def result_at(t: Text, i: int, analyte: Analyte | None) -> str:
    """The result written at number token ``i``: the number with the unit written after it
    ("64 mmol/mol", "124 umol/L"), a blood pressure's two numbers ("142/88 mmHg", "142 over
    88"), a score out of its scale's maximum ("21/30": 21), or a number written without a unit
    where one unit of the analyte makes it possible ("HbA1c 69": "69", compared as mmol/mol).
    "" when the number is no result: a unit that is not the analyte's ("glucose 6.1 %",
    "weight 70 g" of an adult), a value outside physiology, a bare number of two possible
    units."""
    x = float(t.tokens[i])
    nxt = i + 1
    slash = nxt < len(t.tokens) and t.text[t.ends[i] : t.starts[nxt]] == "/"
    if slash and t.tokens[nxt][:1].isdigit():
        if analyte is not None and analyte.unit == "{score}":
            return _reading(x, None) if _possible(analyte, x, None) else ""  # a score
        # two numbers are a blood pressure's; of another test a date ("on 2/10") or a ratio
        return _pair(t, i, nxt, analyte) if analyte is None or analyte.pair else ""
    spoken = t.tokens[nxt : nxt + 2]  # "128 over 78": a blood pressure said aloud
    aloud = len(spoken) == 2 and spoken[0] == "over" and spoken[1][:1].isdigit()
    if aloud and analyte is not None and analyte.pair:
        return _pair(t, i, nxt + 1, analyte)
    unit, spelt = _unit_of(t, i, analyte), _spelt(t, t.ends[i])
    compound = _compound(t, i, analyte)
    if compound is not None:
        x, unit, spelt, _tail = compound
    if analyte is None:
        return _reading(x, unit, spelt)
    if unit is None and _foreign_unit(t, i):
        return ""
    return _reading(x, unit, spelt) if _possible(analyte, x, unit) else ""


def _spelt(t: Text, at: int) -> str:
    """The unit as the statement writes it at character ``at`` ("mU/L", "bpm", "F", "kgs"):
    what a value shows (the unit's own code is what it compares in)."""
    m = lexicon().unit_pattern.match(t.text, at)
    return " ".join(m.group(0).split()) if m is not None else ""


def _unit_of(t: Text, i: int, analyte: Analyte | None) -> units.Unit | None:
    """The unit written after number ``i`` that is one of ``analyte``'s (any unit when no
    analyte is known)."""
    found = units.unit_after(lexicon(), t.text, t.ends[i])
    if found is None:
        return None
    unit = found[0]
    return unit if analyte is None or unit.code in analyte.units else None


def _foreign_unit(t: Text, i: int) -> bool:
    """A unit after the number that is not the analyte's -- but not an ordinary word a unit
    is also spelt as ("7.1 in March", "6 m ago"), which says no unit at all."""
    lex = lexicon()
    m = lex.unit_pattern.match(t.text, t.ends[i])
    if m is None:
        return False
    written = m.group(0).strip()
    return not (written.isalpha() and (len(written) <= 2 or written in lex.function_words))


def _compound(
    t: Text, i: int, analyte: Analyte | None
) -> tuple[float, units.Unit, str, int] | None:
    """ "12 st 6 lb", "5 ft 10 in": one value in the smaller unit (174 lb, 70 in), as spelt,
    and the index of the smaller unit's number."""
    lex = lexicon()
    found = units.unit_after(lex, t.text, t.ends[i])
    if found is None or analyte is None:
        return None
    big, end = found
    j = t.token_at(end)
    if j >= len(t.tokens) or not t.tokens[j][:1].isdigit():
        return None
    if t.text[end : t.starts[j]].strip() or big.offset:
        return None  # "38.5 °C (101.3 °F)": one reading in two units, never their sum
    small = units.unit_after(lex, t.text, t.ends[j])
    if small is None or small[0].dimension != big.dimension or small[0].factor >= big.factor:
        return None
    if not {big.code, small[0].code} <= set(analyte.units):
        return None
    whole = small[0].from_base(big.to_base(float(t.tokens[i])))
    return round(whole + float(t.tokens[j]), 4), small[0], _spelt(t, t.ends[j]), j


def _possible(analyte: Analyte, x: float, unit: units.Unit | None) -> bool:
    """A reading the analyte can have: in one of its units (a bare number: the one unit that
    makes it possible) and within its physiological bounds."""
    lex = lexicon()
    if unit is None:
        code = units.bare_unit(analyte, x)
        unit = units.unit_named(lex, code) if code else None
        if unit is None:
            return not analyte.units  # an analyte with no unit: a count, a titre
    canon = units.to_canonical(lex, analyte, x, unit)
    return canon is not None and units.plausible(analyte, canon)


def _reading(x: float, unit: units.Unit | None, spelt: str = "") -> str:
    """A value as the statement writes it: the number, and the unit as spelt when there is
    one (a bare number keeps none)."""
    number = _num(str(x))
    return f"{number} {spelt or unit.code}" if unit is not None else number


def _pair(t: Text, i: int, j: int, analyte: Analyte | None) -> str:
    """A blood pressure's systolic/diastolic ("142/88"), with its unit when written."""
    a, b = float(t.tokens[i]), float(t.tokens[j])
    if analyte is not None and analyte.bounds:
        lo, hi = analyte.bounds
        if not (lo <= b < a <= hi):
            return ""
    found = units.unit_after(lexicon(), t.text, t.ends[j])
    shown = f"{_num(t.tokens[i])}/{_num(t.tokens[j])}"
    if found is not None and (analyte is None or found[0].code in analyte.units):
        return f"{shown} {_spelt(t, t.ends[j])}"
    return shown


def _is_period(t: Text, i: int) -> bool:
    """A number that counts days, weeks, months or years ("repeat in 3 months", "at 12 weeks"):
    a time, never a result (one-letter units aside: "3 m" may be a length)."""
    nxt = t.tokens[i + 1 : i + 2]
    return bool(nxt) and len(nxt[0]) > 1 and nxt[0] in _TIMING_UNITS


def _is_date_number(t: Text, i: int, months: dict[str, int] | object) -> bool:
    """A number that is part of a date: a year, or a day of a month (1 to 31) next to a month
    name ("3rd March = 99 mg/dL": 99 is no day)."""
    tok = t.tokens[i]
    if re.fullmatch(r"(19|20)\d\d", tok):
        return True
    near = t.tokens[max(0, i - 1) : i] + t.tokens[i + 1 : i + 2]
    day = tok.isdigit() and 1 <= int(tok) <= 31
    return isinstance(months, dict) and any(w in months for w in near) and day


# --- conditions and slots ----------------------------------------------------------------------
def condition_value(t: Text, span: Span, spans: Sequence[Span]) -> str:
    _a, b = window(t, span, spans)
    lo = max(0, span.start - 3)
    pairs: list[tuple[str, str]] = []
    toks = t.tokens
    for i in (*range(lo, span.start), *range(span.start, b)):
        if toks[i] in QUALIFIERS and i + 1 < len(toks):
            pairs.append((toks[i], _joined(t, i + 1)))
        elif toks[i] in _SEVERITY:
            pairs.append(("severity", _SEVERITY[toks[i]]))
    episode = episode_of(t, span)
    if episode:
        pairs.append(("episode", episode))  # "asthma attack": an episode of it
    return join(_unique(pairs) + qualifiers(t, span, spans))


def episode_of(t: Text, span: Span) -> str:
    """The episode word a condition is named with, after it ("asthma attack", "gout flare") or
    before it with "of" ("an exacerbation of COPD", "a flare of ulcerative colitis"); "" when
    it names the condition itself."""
    episodes = lexicon().episodes
    toks = t.tokens
    if span.end < len(toks) and toks[span.end] in episodes:
        return toks[span.end]
    before = toks[max(0, span.start - 2) : span.start]
    if len(before) == 2 and before[1] == "of" and before[0] in episodes:
        return before[0]
    return ""


def _joined(t: Text, i: int) -> str:
    """A qualifier's value as written, a number and a letter joined ("3a", "IIIb")."""
    if i + 1 < len(t.tokens) and t.ends[i] == t.starts[i + 1] and len(t.tokens[i + 1]) <= 2:
        return t.tokens[i] + t.tokens[i + 1]
    return t.tokens[i]


def qualifiers(t: Text, span: Span, spans: Sequence[Span] = ()) -> list[tuple[str, str]]:
    """Where and when, in the thing's sentence: its side and body site, the time of day, at
    rest or on exertion, at home or in clinic, before or after meals ("side=left;
    site=knee") -- but not a word of another thing's name ("urine" of "urine ACR" is no
    specimen of the HbA1c beside it)."""
    lo, hi = _sentence(t, span.start)
    others = {i for s in spans if s != span for i in range(s.start, s.end)}
    out = []
    lex = lexicon()
    for dim, matcher in lex.qualifiers.items():
        found = sorted(
            {
                m.value
                for m in matcher.find(t.tokens[lo:hi], t.raw[lo:hi])
                if m.value
                and not _in_unit(t, m.start + lo)
                and m.start + lo not in others
                and not (dim == "side" and _once_daily(t, m.start + lo, lex))
            }
        )
        if found:
            out.append((dim, "+".join(found)))
    return _sides_with_sites(t, lo, hi, out)


def _sides_with_sites(
    t: Text, lo: int, hi: int, found: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """A side is a qualifier where a body site is named too, or where it is an abbreviation
    in capitals (R, L, RE, LE): "right after her run" has no side."""
    if any(dim == "site" for dim, _v in found):
        return found
    caps = any(
        r.isupper() and t.tokens[i] in _SIDE_ABBREVIATIONS for i, r in enumerate(t.raw[lo:hi], lo)
    )
    return found if caps else [(dim, v) for dim, v in found if dim != "side"]


_SIDE_ABBREVIATIONS = frozenset({"r", "l", "rt", "lt", "re", "le", "od", "os", "ou"})


def _once_daily(t: Text, i: int, lex: Lexicon) -> bool:
    """ "OD" after a dose ("amlodipine 5 mg OD") is once daily, not the right eye ("1 drop OD")."""
    if t.tokens[i] != "od" or i == 0:
        return False
    before = t.tokens[i - 1]
    return before[:1].isdigit() or before in lex.units


def slot_value(t: Text, span: Span, spans: Sequence[Span], lex: Lexicon) -> str:
    sid = span.key.partition(":")[2]
    matcher = lex.slot_values.get(sid)
    lo, hi = _sentence(t, span.start)
    found: set[str] = set()
    if matcher is not None:
        aside = _set_aside(t, lo, hi, lex) - set(range(span.start, span.end))
        aside |= _names_called(t, lo, hi, lex)  # never a value, not even the trigger's own
        found = {
            m.value
            for m in matcher.find(t.tokens[lo:hi], t.raw[lo:hi])
            if m.start + lo not in aside
        }
    if sid == "visit time":
        found |= _clock_parts(t.text[t.starts[lo] : t.ends[hi - 1]], lex)
    slot = lex.slots.get(sid)
    if slot is not None and slot.named:
        found = {name_after(t, span.end, hi, lex)} - {""}
    pairs = [("value", "+".join(sorted(found)))]
    kinds = lex.slot_kinds.get(sid)
    if kinds is not None:
        named = {m.value for m in kinds.find(t.tokens[lo:hi], t.raw[lo:hi])}
        pairs.append(("kind", "+".join(sorted(named))))
    if slot is not None and slot.measure:
        pairs.append(("amount", _amount(t, lo, hi, lex) or _count_a_day(t, lo, hi, lex, slot)))
    pairs.append(("timing", timing(t, lo, hi, lex)))
    return join(pairs)


def _names_called(t: Text, lo: int, hi: int, lex: Lexicon) -> set[int]:
    """A "call" that gives the name a person is called by ("call her Peggy", "call me Bill"):
    no phone call (:func:`.text.name_calls`)."""
    return {s.start for s in name_calls(t, lex) if lo <= s.start < hi}


def _set_aside(t: Text, lo: int, hi: int, lex: Lexicon) -> set[int]:
    """Tokens a contrast word puts aside ("in writing rather than verbally": verbally; "not by
    phone"): the two tokens after each contrast phrase."""
    out: set[int] = set()
    for m in lex.contrast.find(t.tokens[lo:hi], t.raw[lo:hi]):
        out.update(range(m.end + lo, min(hi, m.end + lo + 3)))
    return out


_TIMING_UNITS = {
    "day": "day", "days": "day", "d": "day",
    "week": "week", "weeks": "week", "wk": "week", "wks": "week", "w": "week",
    "weekly": "week",
    "month": "month", "months": "month", "mo": "month", "mos": "month", "m": "month",
    "monthly": "month",
    "year": "year", "years": "year", "yr": "year", "yrs": "year", "yearly": "year",
}  # fmt: skip
#: The UK's fractions of a period: "6/12" six months, "2/52" two weeks, "5/7" five days.
_PERIOD_FRACTIONS = {"12": "month", "52": "week", "7": "day"}


#: Words of time and amount units (never a statement's subject).
UNIT_WORDS = frozenset(_TIMING_UNITS) | _TIME_UNITS


#: Words that are an interval of their own ("fortnightly": every 2 weeks; "weekly" every week).
_INTERVALS = {w: f"1 {unit}" for w, unit in _TIMING_UNITS.items() if w.endswith("ly")} | {
    "fortnightly": "2 week", "annual": "1 year", "annually": "1 year", "quarterly": "3 month",
}  # fmt: skip
#: How many times in a period ("twice weekly", "3 times a week"), before the period.
_TIMES = {"once": 1.0, "twice": 2.0, "thrice": 3.0}


def timing(t: Text, lo: int, hi: int, lex: Lexicon) -> str:
    """When a plan item is due or how often: "in 3 months", "every 6 weeks", "at 36 weeks",
    "3-monthly", "F/U 3/12" -> "3 month"; "fortnightly" -> "2 week", "annual" -> "1 year";
    "twice weekly", "3 times a week" -> "2/week", "3/week" (more than once a period)."""
    toks = t.tokens
    for i in range(lo, hi):
        times = _times_per(toks, i, hi, lex)
        if times:
            return times
        n = _number_at(toks, i, lex) if i < hi - 1 else None
        if n is None and toks[i] in _INTERVALS and not (i > lo and _number_at(toks, i - 1, lex)):
            return _INTERVALS[toks[i]]
        if i == hi - 1:
            break
        if n is not None and toks[i + 1] in _TIMING_UNITS:
            return f"{n:g} {_TIMING_UNITS[toks[i + 1]]}"
        slash = t.text[t.ends[i] : t.starts[i + 1]] == "/"
        if n is not None and slash and toks[i + 1] in _PERIOD_FRACTIONS and n < float(toks[i + 1]):
            return f"{n:g} {_PERIOD_FRACTIONS[toks[i + 1]]}"
    return ""


def _times_per(toks: Sequence[str], i: int, hi: int, lex: Lexicon) -> str:
    """ "twice weekly", "twice a week", "3 times a month" at ``i``: "2/week" ("once a week" is
    the interval "1 week")."""
    if toks[i] in _TIMES:
        n, j = _TIMES[toks[i]], i + 1
    elif toks[i][:1].isdigit() and i + 1 < hi and toks[i + 1] == "times":
        n, j = _number_at(toks, i, lex) or 0.0, i + 2
    else:
        return ""
    if j < hi and toks[j] in ("a", "an", "per", "every", "each"):
        j += 1
    unit = _TIMING_UNITS.get(toks[j]) if j < hi else None
    if unit is None or not n:
        return ""
    return f"1 {unit}" if n == 1 else f"{n:g}/{unit}"


def _number_at(toks: Sequence[str], i: int, lex: Lexicon) -> float | None:
    if toks[i][:1].isdigit():
        try:
            return float(toks[i])
        except ValueError:
            return None
    return lex.number_words.get(toks[i])


def _in_unit(t: Text, i: int) -> bool:
    """A token that is part of a unit ("mmol/L", "2 L/min"), not a side."""
    start = t.starts[i]
    before = t.text[max(0, start - 1) : start]
    after = t.text[t.ends[i] : t.ends[i] + 1]
    prev_num = i > 0 and t.tokens[i - 1][:1].isdigit() and len(t.tokens[i]) == 1
    return before == "/" or after == "/" or prev_num


def _clock_parts(text: str, lex: Lexicon) -> set[str]:
    out = set()
    for m in _CLOCK.finditer(text):
        hour = int(m.group(1)) % 12 + (12 if m.group(2).lower().startswith("p") else 0)
        if hour < lex.morning_before:
            out.add("morning")
        elif hour < lex.evening_from:
            out.add("afternoon")
        else:
            out.add("evening")
    return out


def _amount(t: Text, lo: int, hi: int, lex: Lexicon) -> str:
    """The first number with a unit of time, distance or count ("30 minutes", "half an hour",
    "4 h"); durations in minutes."""
    return _amount_found(t, lo, hi, lex)[0]


def amount_at(t: Text, span: Span, lex: Lexicon) -> int:
    """The token of the number a measured habit's amount is read from, in the sentence of
    ``span`` (-1: none): the amount is said there, under that place's contexts ("Sleep
    hygiene: aim for 7-8 hours")."""
    slot = lex.slots.get(span.key.partition(":")[2])
    if slot is None or not slot.measure:
        return -1
    return _amount_found(t, *_sentence(t, span.start), lex)[1]


def _amount_found(t: Text, lo: int, hi: int, lex: Lexicon) -> tuple[str, int]:
    """The first amount (and its number's token) among tokens ``lo``..``hi`` -- or a bare number
    said after a word of now ("previously 30 units a week, now 10") in the first's unit."""
    toks = t.tokens
    for i in range(lo, hi - 1):
        n = _number_at(toks, i, lex)
        j = i + 1
        if n is not None and toks[j] in ("an", "a") and j + 1 < hi:
            j += 1  # "half an hour"
        if n is None or toks[j] not in _TIME_UNITS:
            continue
        minutes = lex.durations.get(toks[j])
        if minutes is not None:
            return f"{n * minutes:g} min", i
        unit = _UNIT_ALIASES.get(toks[j], toks[j])
        k = j + 3 if toks[j + 1 : j + 2] == ("of",) else j + 1  # "20 units of alcohol a week"
        said = f"{unit}{_period(toks[k : k + 2], lex)}"
        now = _bare_now(t, j + 1, hi, lex)
        if now is not None:
            return f"{now[0]:g} {said}", now[1]
        return f"{n:g} {said}", i
    return "", -1


def _count_a_day(t: Text, lo: int, hi: int, lex: Lexicon, slot: Slot) -> str:
    """A count said with its period and no unit ("smokes 10 a day", "20 per day"), in the
    slot's count unit (slots.json's ``count_unit``: cigarettes); "" where the slot has none."""
    if not slot.count_unit:
        return ""
    toks = t.tokens
    for i in range(lo, hi - 1):
        n = _number_at(toks, i, lex)
        slash = t.text[t.ends[i] : t.starts[i + 1]] == "/"  # "20/day"
        said = slash or toks[i + 1] in _PER or toks[i + 1] in ("daily", "nightly")
        period = _period(toks[i + 1 : i + 3], lex) if n is not None and said else ""
        if period:  # not "in 3 wks": how long, not how many
            return f"{n:g} {slot.count_unit}{period}"
    return ""


def _bare_now(t: Text, lo: int, hi: int, lex: Lexicon) -> tuple[float, int] | None:
    """A number with no unit of its own right after a word of now, among tokens ``lo``..``hi``
    ("..., now 10"): the current amount, in the unit said before it."""
    for m in lex.now_words.find(t.tokens, t.raw):
        i = m.end
        if lo <= m.start and i < hi and (i + 1 >= hi or t.tokens[i + 1] not in _TIME_UNITS):
            n = _number_at(t.tokens, i, lex)
            if n is not None:
                return n, i
    return None


#: Words between an amount and its period ("20 a day", "14 units per week").
_PER = frozenset({"a", "an", "per", "each", "every"})


#: The name a period is written with in a value, by its days ("/week").
_PERIOD_NAMES = {1.0: "day", 7.0: "week", 30.0: "month"}


def _period(after: tuple[str, ...] | list[str], lex: Lexicon) -> str:
    """The period an amount is counted over, said right after it ("a day", "per week",
    "daily", "nightly"), as ``/day``, ``/week`` or ``/month``; "" when none is said."""
    words = list(after)
    if words[:1] and words[0] in _PER:
        words = words[1:]
    days = lex.periods.get(words[0]) if words else None
    return f"/{_PERIOD_NAMES[days]}" if days in _PERIOD_NAMES else ""


def entry_text(t: Text, span: Span, lex: Lexicon) -> str:
    """What a chart entry says after its heading ("Address: Flat 3, 22 Birch Court" -> "flat
    3 22 birch court"): the words to the end of its sentence, less the function words."""
    _lo, hi = _sentence(t, span.start)
    words = [w for w in t.tokens[span.end : hi] if w.isalnum() and w not in lex.function_words]
    return " ".join(words)


def _sentence(t: Text, i: int) -> tuple[int, int]:
    s = t.sentence[i]
    lo = i
    while lo > 0 and t.sentence[lo - 1] == s:
        lo -= 1
    hi = i
    while hi < len(t.tokens) and t.sentence[hi] == s:
        hi += 1
    return lo, hi


def _unique(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in pairs:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


# --- dates -------------------------------------------------------------------------------------
def statement_date(t: Text) -> str:
    """The first date ``t`` gives: ``YYYY-MM-DD``, ``YYYY-MM``, ``YYYY`` or ``--MM`` (a month
    without its year); "" when none."""
    months = lexicon().months
    toks = t.tokens
    for i, tok in enumerate(toks):
        if tok in months and not _may_word(t, i):
            year = next((x for x in toks[i + 1 : i + 3] if re.fullmatch(r"(19|20)\d\d", x)), "")
            return f"{year}-{months[tok]:02d}" if year else f"--{months[tok]:02d}"
    iso = re.search(r"\b(19\d\d|20\d\d)-(\d{1,2})(?:-(\d{1,2}))?\b", t.text)
    if iso:
        parts_ = [iso.group(1), f"{int(iso.group(2)):02d}"]
        if iso.group(3):
            parts_.append(f"{int(iso.group(3)):02d}")
        return "-".join(parts_)
    year = next((x for x in toks if re.fullmatch(r"(19|20)\d\d", x)), "")
    return year


def _may_word(t: Text, i: int) -> bool:
    """A short month name that is a word ("may", "mar", "dec"): a month is written with a
    capital or stands next to a number."""
    if t.tokens[i] not in ("may", "mar", "dec", "jan", "jun", "aug", "sep", "oct", "nov"):
        return False
    near_number = any(x[:1].isdigit() for x in t.tokens[max(0, i - 1) : i + 2] if x != t.tokens[i])
    return not (t.raw[i][:1].isupper() or near_number)
