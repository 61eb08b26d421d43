"""When the newer statement says its change happened (pure): a reading dated before the older
was charted -- by its date, a month without its year ("SpO2 was 89 % in January", written in
July: January of that year), or "N days/weeks/months/years ago" -- and a change dated from a
month still ahead ("From 1 July ramipril goes up to 10 mg", written in February). Either caps a
decision to weak (:func:`..rules._capped`): a reviewer decides."""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache

from ..lexicon import lexicon
from ..model import Fact, KeyKind
from ..text import parse
from .base import Pair


def out_of_time(p: Pair, a: Fact | None, b: Fact | None) -> str:
    """Why the newer fact ``b`` (the older ``a``) is out of time for an automatic change, in
    words; "" when it is not. Before the older's own date, or else the day it was recorded (a
    month without its year on either side is read from the day its statement was written)."""
    before = dated_before(p, a, b)
    if before:
        return before
    starts = _starts_later(p.newer_text, p.newer_on)
    if starts:
        return f"the newer dates it from {starts}, after it was written"
    return ""


def dated_before(p: Pair, a: Fact | None, b: Fact | None) -> str:
    """Why the newer fact ``b`` is dated before the older ``a`` -- before the older's own date,
    or else the day it was recorded --, in words; "" when it is not."""
    since = (_in_year(a.date, p.older_on) if a is not None else "") or p.older_on
    when = ""
    if b is not None:
        reading = _dated_event(b, p)
        when = _in_year(b.date, p.newer_on) if reading else b.date
        if reading and not b.date:
            when = _ago(p.newer_text, p.newer_on)
    if when and _dated_before(when, since):
        return f"the newer is dated {when}, before the older's {since}"
    return ""


def _dated_event(fact: Fact, p: Pair) -> bool:
    """Whether a month said in the newer statement dates its reading ("SpO2 was 89 % in
    January"): a result is taken at one moment, unless a word of now or of this occasion says
    the month is of another value ("eGFR 44 this week; it was 52 in March"). A state is said
    with the month it began ("teetotal since January", "on her own since he died in March"):
    current."""
    return fact.kind is KeyKind.LOINC and not _says_now(p.newer_text)


@lru_cache(maxsize=65_536)
def _says_now(text: str) -> bool:
    """A word of now or of this occasion in ``text`` (read once per text: a new statement is
    decided against each of its candidates)."""
    t, lex = parse(text), lexicon()
    return any(m.find(t.tokens, t.raw) for m in (lex.now_words, lex.occasions))


def _in_year(date: str, on: str) -> str:
    """``date``; a month without its year (``--MM``) written on the day ``on`` (YYYY-MM-DD) is
    the last such month up to it: "in January" written in July 2026 is 2026-01, "in
    September" 2025-09. Unchanged without ``on``."""
    m = re.fullmatch(r"--(\d\d)", date)
    if m is None or not re.fullmatch(r"\d{4}-\d\d-\d\d", on):
        return date
    year, month = int(on[:4]), int(on[5:7])
    return f"{year if int(m.group(1)) <= month else year - 1}-{m.group(1)}"


#: "a year ago", "3 months ago", "two weeks ago", "last year": how long before the writing.
_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|last)\s+"
    r"(day|week|month|year)(?:s?\s+ago)?\b",
    re.IGNORECASE,
)
_AGO_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def _ago(text: str, on: str) -> str:
    """The day a reading said "N days / weeks / months / years ago" or "last week / month /
    year" was taken, written on the day ``on`` (YYYY-MM-DD): "eGFR was 60 a year ago" written
    on 2026-07-01 is 2025-07-01. "" without ``on`` or such words."""
    # "a year", "two weeks" without "ago": a length of time, not a moment before the writing
    m = next(
        (x for x in _AGO.finditer(text) if x[1].lower() == "last" or x[0].lower().endswith("ago")),
        None,
    )
    if m is None or not re.fullmatch(r"\d{4}-\d\d-\d\d", on):
        return ""
    word = m.group(1).lower()
    n = int(word) if word.isdigit() else lexicon().number_words.get(word, 1.0)  # "a", "last": 1
    then = date.fromisoformat(on) - timedelta(days=int(n * _AGO_DAYS[m.group(2).lower()]))
    return then.isoformat()


#: A change dated from a month ("from 1 July", "starting in March", "as of 3rd May").
_FROM_MONTH = re.compile(
    r"\b(?:from|starting|as of|wef|w\.e\.f\.|commencing|beginning)\s+(?:on\s+|in\s+)?"
    r"(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?:of\s+)?([a-z]+)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=65_536)
def _starts_later(text: str, on: str) -> str:
    """The month a change is dated from ("From 1 July ramipril goes up to 10 mg"), where that
    month's nearest occurrence to the day ``on`` the statement was written is after it: a plan.
    "" otherwise (no such words, or the month is this one or the nearest is past)."""
    if not re.fullmatch(r"\d{4}-\d\d-\d\d", on):
        return ""
    months = lexicon().months
    for m in _FROM_MONTH.finditer(text):
        month = months.get(m.group(1).lower())
        if month is None:
            continue
        ahead = (month - int(on[5:7])) % 12  # months forward to its next occurrence
        if 0 < ahead <= 6:  # nearer ahead than behind
            return m.group(1)
    return ""


def _dated_before(date: str, day: str) -> bool:
    """``date`` (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``; a month without its year is never
    before anything) is wholly before ``day`` (a date of the same forms)."""
    if not (date and day) or date.startswith("-") or day.startswith("-"):
        return False
    n = min(len(date), len(day))
    return date[:n] < day[:n]
