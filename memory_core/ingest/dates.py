"""Dates as people say them in a session, read against the session's own date (pure).

"on 2026-10-20", "12 October", "October 12th", "in May", "since August", "last week",
"yesterday", "this morning", "on Friday", "two weeks ago", "3 wks ago", "in 2019", "last
summer", "over the winter". A month or day named without a year is the latest one not after the
session ("in June", said in November, is this June; said in March, last June) -- unless a day
and month are at most 31 days ahead ("the 7th of April", said on the 30th of March: a plan, no
date). Each date read keeps its place in the text,
so a value can be paired with the date said next to it, and its precision, so a statement says
no more than was said: "in May 2026" for a month, "in the week of 2026-11-16" for "last week",
"around 2026-10-15" for "three weeks ago".

Month, weekday and season names come from the lexicon (``words.json``); "may" and "march" are
read as months only after a preposition or beside a day or a year. A season is the northern
hemisphere's three months from the month ``words.json`` gives ("last summer", said in April
2026: June to August 2025); "fall" is a season only with its year ("a fall" is an accident).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache

from ..facts.lexicon import lexicon

_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


@dataclass(frozen=True)
class DateSpan:
    """A date said at ``text[start:end]``: the start of its period in UTC, how a statement
    writes it, and its precision (day, week, month, season, year; ``about`` for "N days
    ago")."""

    start: int
    end: int
    at: datetime
    phrase: str
    precision: str
    relative: bool = False  # read against the session's date ("yesterday", "in June")
    # said with no year and no direction ("on the 10th of August", "in June", "the 27th",
    # "Friday") and read as the last one not after the session: a plan means the next one
    guessed_past: bool = False

    @property
    def since(self) -> bool:
        """Said after "since" ("since Christmas"): when a period began, not the day of a value
        or a change said with it."""
        return self.phrase.startswith("since")

    @property
    def date(self) -> str:
        """``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY`` as precise as it was said."""
        if self.precision in ("year", "season"):
            return f"{self.at:%Y}"
        if self.precision == "month":
            return f"{self.at:%Y-%m}"
        return f"{self.at:%Y-%m-%d}"


def day(d: datetime) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


#: "since" before a date of any pattern, in its clause ("since the 12th of May", "since
#: 12/05/2026", "since I came home on the 4th")
_SINCE_BEFORE = re.compile(r"\bsince\b[^,.;:!?]{0,30}$")


_FIRSTS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_TENTHS = (
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth",
)  # fmt: skip
#: A day of the month said as an ordinal word ("the fifth", "the twenty-first").
ORDINAL_WORDS: dict[str, int] = {
    **{w: i + 1 for i, w in enumerate(_FIRSTS)},
    **{w: i + 10 for i, w in enumerate(_TENTHS)},
    **{f"twenty{sep}{w}": 21 + i for i, w in enumerate(_FIRSTS) for sep in ("-", " ", "")},
    "thirtieth": 30,
    **{f"thirty{sep}first": 31 for sep in ("-", " ", "")},
}
_ORDINAL = "|".join(sorted((re.escape(w) for w in ORDINAL_WORDS), key=len, reverse=True))


def _dom(said: str) -> int:
    """A day of the month as written: "5", "5th" or "fifth"."""
    return ORDINAL_WORDS.get(said) or int(re.sub(r"\D", "", said))


#: Holidays said as dates, their month and day (a movable feast: its days from Easter Sunday).
HOLIDAYS: dict[str, tuple[int, int]] = {
    "new year's day": (1, 1), "new years day": (1, 1), "new year": (1, 1), "new year's": (1, 1),
    "new years": (1, 1), "valentine's day": (2, 14), "valentines day": (2, 14),
    "valentine's": (2, 14), "st patrick's day": (3, 17), "st patricks day": (3, 17),
    "independence day": (7, 4), "the fourth of july": (7, 4), "halloween": (10, 31),
    "bonfire night": (11, 5), "guy fawkes night": (11, 5), "remembrance day": (11, 11),
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25),
    "xmas": (12, 25), "boxing day": (12, 26), "new year's eve": (12, 31),
    "new years eve": (12, 31), "hogmanay": (12, 31),
}  # fmt: skip
EASTER_DAYS: dict[str, int] = {
    "good friday": -2, "easter sunday": 0, "easter monday": 1, "easter": 0,
}  # fmt: skip


def easter(year: int) -> datetime:
    """Easter Sunday of ``year`` (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    lk = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * lk) // 451
    month, day_ = divmod(h + lk - 7 * m + 114, 31)
    return datetime(year, month, day_ + 1, tzinfo=UTC)


def _holiday(name: str, year: int) -> datetime:
    if name in EASTER_DAYS:
        return easter(year) + timedelta(days=EASTER_DAYS[name])
    month, dom = HOLIDAYS[name]
    return datetime(year, month, dom, tzinfo=UTC)


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    months = sorted(lexicon().months, key=len, reverse=True)
    m = "|".join(re.escape(x) for x in months)
    seasons = "|".join(re.escape(x) for x in sorted(lexicon().seasons, key=len, reverse=True))
    num = r"(\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    wd = "|".join(lexicon().weekdays)
    short = "|".join(sorted(_SHORT_DAYS, key=len, reverse=True))
    return {
        "iso": re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
        # day-month-year as Europe writes it: "20.08.2026", "20/08/2026" (a slash read so only
        # where the day cannot be a month: "20/08"), "3.4.26"
        "dotted": re.compile(r"(?<![\d.,])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})(?![\d.,]\d)"),
        "slashed": re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])"),
        # ... and without the year, the month closed by its dot ("since 12.06."), only after a
        # word that says a date follows: "it was 5.1." is a value
        "dotted_dm": re.compile(r"\b(?:since|until|till|dated)\s+(\d{1,2})\.(\d{1,2})\.(?![\d])"),
        # "12/05", "12/05/2026" with both numbers 12 or less: read only by a month said beside it
        "either_way": re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}))?(?![\d/])"),
        "dmy": re.compile(
            rf"\b(\d{{1,2}}|{_ORDINAL})(?:st|nd|rd|th)?\s+(?:of\s+)?({m})\.?"
            rf"(?:,?\s+(\d{{4}}))?\b"
        ),
        "mdy": re.compile(
            rf"\b({m})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*(?:mg|mcg|g|units?|%))(?:,?\s+(\d{{4}}))?"
        ),
        "my": re.compile(
            rf"\b(?:(since|from|in|during|last|this past|back in|early|late|mid|of)\s+)?({m})\b\.?"
            rf"(?:\s+(?:of\s+)?(\d{{4}}))?"
        ),
        "year": re.compile(r"\b(in|since|from|during|back in|of)\s+((?:19|20)\d{2})\b"),
        # "last summer", "over the winter", "the autumn of 2024"; "fall" only with its year
        "season": re.compile(
            rf"\b(?:(last|this past|this|since the|since|in the|over the|during the|through the"
            rf"|from the|in|early|late|mid)\s+)?({seasons})\b(?:,?\s+(?:of\s+)?((?:19|20)\d{{2}}))?"
        ),
        "rel_year": re.compile(r"\b(last|this|previous) year\b"),
        # a holiday as a day: after "on", "since", "at", "over", "round" (or "last", "this
        # past"), or said alone ("Valentine's Day."); "before Christmas" is no day
        "holiday": re.compile(
            r"(?:^\W*|\b(?:on|since|from|at|over|around|round|(last|this past|next|this))\s+)("
            + "|".join(
                re.escape(h).replace("'", "['’]?")
                for h in sorted((*HOLIDAYS, *EASTER_DAYS), key=len, reverse=True)
            )
            + r")(?!\w)"
        ),
        "today": re.compile(
            r"\b(today|this morning|this afternoon|this evening|tonight|earlier today)\b"
        ),
        "yesterday": re.compile(r"\b(yesterday|last night)\b"),
        "week": re.compile(
            r"(?<!over the )(?<!in the )(?<!for the )\b(last|this|previous|past) week\b"
        ),
        # a day of the month said beside a week: "last week, the eighteenth", "last week, on
        # the 20th" -- that day, where the week holds it
        "week_nth": re.compile(
            rf"(?<!over the )(?<!in the )(?<!for the )\b(last|this|previous|past) week,?\s+"
            rf"(?:on\s+)?the\s+(?:(\d{{1,2}})(?:st|nd|rd|th)|({_ORDINAL}))\b"
        ),
        # a weekday of a named week -- one day: "Tuesday last week", "Tuesday of last week",
        # "last week on Tuesday", "Monday the week before last", "the Tuesday before last"
        "weekday_of_week": re.compile(
            rf"\b(?:on\s+)?(?:the\s+)?(?P<d1>{wd}|{short})\.?,?\s+(?:of\s+)?(?:the\s+)?"
            rf"(?:(?P<w1>last|this|previous|past)\s+week|(?P<b1>week\s+)?before\s+last)\b"
            rf"|\b(?P<w2>last|previous|past|this)\s+week,?\s+on\s+(?:the\s+)?(?P<d2>{wd}|{short})\b"
        ),
        # "the 16th", "Wednesday the 2nd", "the 2nd of this month": a day of this month (or
        # the last one not after the session)
        "nth": re.compile(
            r"\bthe (\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|"
            r"sep|oct|nov|dec)[a-z]*\b)(?: of (this|last) month)?"
        ),
        # "on the fifth", "Tuesday the sixth", "my last day was the thirty-first": a day said
        # in words, where a day is meant -- after "on", "since", "was", ... or a weekday, and
        # ending its phrase ("on the second floor" is no day)
        "nth_word": re.compile(
            rf"\b(?:on|since|from|until|till|by|was|were|{wd}),?\s+the\s+({_ORDINAL})\b"
            r"(?:\s+of\s+(this|last)\s+month)?(?=\s*(?:[,.;:!?)\-–—]|$|and\b|when\b|at\b|"
            r"in the\b|so\b|but\b|because\b))"
        ),
        "month": re.compile(r"\b(last|this|previous|past) month\b"),
        "ago": re.compile(
            rf"(?<![\d.,])\b{num}(?:\s+|(?<=\d))(day|days|week|weeks|wk|wks|fortnight|fortnights|month|months|mth|mths|mo|"
            rf"mos|year|years|yr|yrs)\s+ago\b"
        ),
        # "I've had a cough for about 3 weeks", "have been puffy for two months": a state that
        # has lasted to now, since that long ago (not "for five days", a course's length)
        "lasting": re.compile(
            rf"\b(?:'ve|have|has|'s)\s+(?:had|been)\b[^.;!?]{{0,60}}?\b(?P<span>for\s+(?:about\s+|"
            rf"around\s+|nearly\s+|almost\s+|over\s+|the\s+(?:last|past)\s+)?{num}\s+(day|days|"
            r"week|weeks|fortnight|fortnights|month|months|year|years))\b"
        ),
        "weekday": re.compile(rf"\b(?:(on|last|this past)\s+)?({wd})\b(?!,?\s+the\s+\d)"),
        # a day or month said ahead of the session: "next Tuesday", "this coming Monday",
        # "Friday week", "Tuesday next", "a week on Friday", "next June" -- a plan's, no date of
        # what happened (read before any other pattern, so none reads it as the last one)
        "ahead": re.compile(
            rf"\b(?:(?:next|this coming|coming|a week on|a week)\s+(?:{wd}|{short}|{m})"
            rf"|(?:{wd}|{short})\s+(?:next|week|after next)"
            rf"|next week,?\s+(?:on\s+)?(?:{wd}|{short})|(?:the day after )?tomorrow)\b"
        ),
        # "this Friday": this week's -- ahead of the session when its weekday is still to come
        "this_weekday": re.compile(rf"\bthis\s+({wd}|{short})\b"),
        # a weekday right before a day of the month ("last Tuesday, the 27th")
        "weekday_before": re.compile(rf"\b(?:{wd}),?\s+$"),
        "weekday_short": re.compile(
            r"\b(on|last|this past)\s+(mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)\b\.?"
        ),
    }


#: How long before the session a day named with its month still sets the month of a day said
#: alone after it.
TOLD_REACH = timedelta(days=62)


#: how many months back a day of the month said alone may be ("the 31st" said on the 14th of
#: May: the 31st of March, April having none)
DOM_REACH = 2


def _day_of_month(session: datetime, dom: int, back: int, ahead_ok: bool) -> datetime | None:
    """Day ``dom`` of the month ``back`` months before the session's; said without "this" or
    "last" (``ahead_ok`` False), the latest such day not after the session, up to
    :data:`DOM_REACH` months further back where a month has no such day; None if none."""
    for k in range(back, back + DOM_REACH + 1):
        first = _month_back(session, k)
        try:
            at = datetime(first.year, first.month, dom, tzinfo=UTC)
        except ValueError:
            continue  # "the 31st" in a month of 30 days: the month before
        if ahead_ok or at <= day(session):
            return at
    return None


def _on_or_after(told: datetime | None, dom: int, session: datetime) -> datetime | None:
    """The first day ``dom`` of a month on or after ``told`` ("born on the 1st of October ...
    home on the 4th": the 4th of October), if not after the session; None when ``told`` is
    none or too long before it."""
    if told is None or not day(session) - TOLD_REACH <= told <= day(session):
        return None
    y, m = told.year, told.month
    for _ in range(2):  # told's month, then the next
        with contextlib.suppress(ValueError):
            at = datetime(y, m, dom, tzinfo=UTC)
            if told <= at <= day(session):
                return at
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return None


#: weekdays as people shorten them, Monday 0
_SHORT_DAYS = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3,
               "thurs": 3, "fri": 4, "sat": 5, "sun": 6}  # fmt: skip


def _weekday_index(name: str) -> int:
    """Monday 0 .. Sunday 6, for a weekday's name or its short form."""
    days = lexicon().weekdays
    return days.index(name) if name in days else _SHORT_DAYS[name]


def _monday(session: datetime, which: str) -> datetime:
    """The first day of the week named ("this", "last", "previous", "past") -- of the session's
    week, or of the one before."""
    return day(session) - timedelta(days=session.weekday(), weeks=0 if which == "this" else 1)


def _weekday_of_week(mt: re.Match[str], session: datetime) -> datetime | None:
    """The day a weekday of a named week names (pattern ``weekday_of_week``); None when it is
    still to come (a plan's day, no date of what happened)."""
    name = mt.group("d1") or mt.group("d2")
    which = mt.group("w1") or mt.group("w2")
    if which is not None:  # "Tuesday last week": that week's Tuesday
        at = _monday(session, which)
    elif mt.group("b1"):  # "Monday the week before last"
        at = _monday(session, "last") - timedelta(weeks=1)
    else:  # "the Tuesday before last": the one before the last Tuesday
        back = (session.weekday() - _weekday_index(name)) % 7 or 7
        return day(session) - timedelta(days=back + 7)
    at += timedelta(days=_weekday_index(name))
    return None if at > day(session) else at


def day_planned(text: str, session: datetime) -> datetime | None:
    """The one day a plan names, read ahead of the session -- the next such day on or after
    the session's day: a day and a month ("the 10th of August", "Tuesday 23 June", "March
    25th"), a day of the month alone ("on the 27th"), a weekday alone ("on Monday", "this
    Friday"), "tomorrow". None where it names none, or more than one ("... on Thursday 26 March
    and ... on Thursday 9 April"), or a time counted ("in two weeks")."""
    low = text.lower()
    p = _plan_patterns()
    today = day(session)
    days: list[datetime] = []
    taken: list[tuple[int, int]] = []

    def take(mt: re.Match[str], at: datetime | None) -> None:
        if at is not None:
            days.append(at)
            taken.append(mt.span())

    def inside(mt: re.Match[str]) -> bool:  # a part of a day already read
        return any(a <= mt.start() < b for a, b in taken)

    for key in ("dom_month", "month_dom"):
        for mt in p[key].finditer(low):
            dom, month = (mt.group(1), mt.group(2)) if key == "dom_month" else mt.group(2, 1)
            take(mt, _next_date(today, _dom(dom), _month(month)))
    for mt in p["dom"].finditer(low):
        if not inside(mt):
            take(mt, _next_date(today, _dom(mt.group(1)), None))
    for mt in p["weekday"].finditer(low):
        if inside(mt):
            continue
        ahead = (lexicon().weekdays.index(mt.group(1)) - today.weekday()) % 7
        days.append(today + timedelta(days=ahead))
    if p["tomorrow"].search(low):
        days.append(today + timedelta(days=1))
    return days[0] if len(set(days)) == 1 else None


def _next_date(today: datetime, dom: int, month: int | None) -> datetime | None:
    """The next day ``dom`` (of ``month``, or of any month) on or after ``today``."""
    for k in range(0, 14):
        y, m = divmod(today.month - 1 + k, 12)
        if month is not None and m + 1 != month:
            continue
        with contextlib.suppress(ValueError):  # no 31st in June
            at = datetime(today.year + y, m + 1, dom, tzinfo=UTC)
            if at >= today:
                return at
    return None


@cache
def _plan_patterns() -> dict[str, re.Pattern[str]]:
    months = "|".join(sorted(lexicon().months, key=len, reverse=True))
    wd = "|".join(lexicon().weekdays)
    nth = rf"(\d{{1,2}}|{_ORDINAL})(?:st|nd|rd|th)?"
    return {
        "dom_month": re.compile(rf"\b(?:the\s+)?{nth}\s+(?:of\s+)?({months})\b"),
        "month_dom": re.compile(rf"\b({months})\s+(?:the\s+)?{nth}\b(?!\s*(?::|am|pm))"),
        # a day of the month alone, said as one ("on the 27th", "the nineteenth"), not a dose
        # ("the 21 mg patches")
        "dom": re.compile(rf"\bthe\s+(\d{{1,2}}(?:st|nd|rd|th)|{_ORDINAL})\b"),
        # a weekday alone, not one a day of the month follows ("Tuesday 23 June", "Wednesday
        # the nineteenth of August"), nor a weekday that recurs ("Thursday evenings")
        "weekday": re.compile(
            rf"\b({wd})\b(?!,?\s+(?:the\s+)?(?:\d|(?:{_ORDINAL})\b))"
            r"(?!\s+(?:evenings|mornings|afternoons|nights)\b)"
        ),
        "tomorrow": re.compile(r"\btomorrow\b"),
    }


def said_ahead(text: str) -> tuple[int, int] | None:
    """Where ``text`` names a day or a month ahead of when it is said ("next Tuesday", "this
    coming Monday", "Friday week", "next June", "tomorrow"), if it does."""
    mt = _patterns()["ahead"].search(text.lower())
    return mt.span() if mt else None


def day_alone(text: str, d: DateSpan) -> int:
    """The day of the month of a day said alone ("the 4th"), or 0."""
    m = re.fullmatch(r"the (\d{1,2})(?:st|nd|rd|th)", text[d.start : d.end].lower())
    return int(m.group(1)) if m else 0


def month_named(text: str, d: DateSpan) -> bool:
    """A day said with its month ("the 1st of October", "03/10/2026", "2026-10-03")."""
    said = text[d.start : d.end].lower()
    months = lexicon().months
    return d.precision == "day" and (
        any(w in months for w in re.findall(r"[a-z]+", said)) or bool(re.search(r"\d[./-]\d", said))
    )


_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
#: units of "N ... ago" as people abbreviate them ("3 wks ago", "2 yrs ago")
_AGO_UNITS = {"wk": "week", "wks": "week", "mth": "month", "mths": "month", "mo": "month",
              "mos": "month", "yr": "year", "yrs": "year"}  # fmt: skip
# "may" and "march" are words too: read as months only with a preposition, a day or a year
_AMBIGUOUS = frozenset({"may", "mar", "march", "jan", "jun", "sept", "sep", "dec", "oct", "aug"})


def _month(name: str) -> int:
    return lexicon().months[name.lower().rstrip(".")]


#: A day and month said without a year are the coming one, not last year's, when that is this
#: close ahead ("the 7th of April", said on the 30th of March, is next week: a plan).
SOON_DAYS = 31


def _latest(year: int | None, month: int, dom: int, session: datetime) -> datetime | None:
    """The date ``dom``/``month``/``year``; without a year the latest not after the session --
    unless the coming one is within :data:`SOON_DAYS` (then that one, after the session)."""
    try:
        if year is not None:
            return datetime(year, month, dom, tzinfo=UTC)
        d = datetime(session.year, month, dom, tzinfo=UTC)
        if d <= day(session):
            ahead = datetime(session.year + 1, month, dom, tzinfo=UTC)
            return ahead if ahead - day(session) <= timedelta(days=SOON_DAYS) else d
        return d if d - day(session) <= timedelta(days=SOON_DAYS) else d.replace(year=d.year - 1)
    except ValueError:
        return None


def _season(
    how: str | None, name: str, year: str | None, session: datetime
) -> tuple[datetime | None, bool]:
    """When a season said began, and whether it was guessed to be the last one (said with no
    year and no direction); None for "fall" without its year, or a season named alone."""
    first = lexicon().seasons[name]
    if year:
        return datetime(int(year), first, 1, tzinfo=UTC), False
    if name == "fall" or how is None:
        return None, False  # "her last fall", "in the fall": the accident, not the season
    y = session.year if first <= session.month else session.year - 1
    begun = datetime(y, first, 1, tzinfo=UTC)  # the latest one begun
    if how in ("last", "this past"):  # the latest one over
        n = begun.month + 2  # its end: the first day of the month after its third
        ends = datetime(begun.year + n // 12, n % 12 + 1, 1, tzinfo=UTC)
        return (begun if ends <= day(session) else begun.replace(year=y - 1)), False
    if how == "this":  # this year's (a winter said in January or February: the one begun)
        y = session.year - 1 if first == 12 and session.month <= 2 else session.year
        return datetime(y, first, 1, tzinfo=UTC), False
    return begun, True


def _month_back(session: datetime, n: int) -> datetime:
    y, m = session.year, session.month - n
    while m < 1:
        y, m = y - 1, m + 12
    return datetime(y, m, 1, tzinfo=UTC)


def _season_name(month: int) -> str:
    return next(k for k, v in lexicon().seasons.items() if v == month)


def _fmt(at: datetime, precision: str, since: bool = False) -> str:
    if precision == "year":
        text = f"{at:%Y}"
    elif precision == "season":
        text = f"{_season_name(at.month)} {at.year}"
    elif precision == "month":
        text = f"{_MONTH_NAMES[at.month - 1]} {at.year}"
    elif precision == "week":
        return f"{'since' if since else 'in'} the week of {at:%Y-%m-%d}"
    elif precision == "about":
        return f"{'since' if since else 'around'} {at:%Y-%m-%d}"
    else:
        return f"{'since' if since else 'on'} {at:%Y-%m-%d}"
    return f"{'since' if since else 'in'} {text}"


_NARROWER = {"year": 0, "season": 1, "month": 2, "week": 3, "about": 4, "day": 4}


def _contains(wide: DateSpan, at: datetime) -> bool:
    """Whether ``at`` falls in the period ``wide`` says ("this year" holds the 2nd of
    October)."""
    w = wide.at
    if wide.precision == "year":
        return at.year == w.year
    if wide.precision == "month":
        return (at.year, at.month) == (w.year, w.month)
    if wide.precision == "season":
        return 0 <= (at.year - w.year) * 12 + at.month - w.month < 3
    if wide.precision == "week":
        return w <= at < w + timedelta(days=7)
    return day(at) == day(w)


def narrowest(dates: list[DateSpan]) -> DateSpan | None:
    """Of dates said together, the most precise when every other one holds it ("this year
    ... on the 2nd of October": the 2nd of October); None when they disagree."""
    if not dates:
        return None
    best = max(dates, key=lambda d: _NARROWER.get(d.precision, 0))
    return best if all(_contains(d, best.at) for d in dates if d is not best) else None


#: Past participles that set a date ahead rather than say something was done on it ("booked
#: for the 10th of August").
_SET_FOR = frozenset({"booked", "scheduled", "arranged", "planned", "pencilled", "penciled"})


@lru_cache(maxsize=4096)
def told_as_done(text: str) -> bool:
    """Whether ``text`` tells of something done: a word in the past tense (the assertion
    step's reading) that does not set a date ahead. Read once per text: a sentence's every
    medicine asks it of the same words (a long unpunctuated turn asked it 720 times)."""
    from ..facts.assertion import past_tense

    words = re.findall(r"[a-z]+", _HAVE_GOT.sub("have", text.lower()))
    return any(past_tense(w) and w not in _SET_FOR for w in words)


#: "'ve got" / "have got": to have, in British speech ("I've got a scan on Monday"), no past;
#: not "got" as became or came to ("it's got worse", "I've got used to it", "got back")
_HAVE_GOT = re.compile(
    r"(?:'ve|’ve|\bhave|\bhas|'s)\s+got\b"
    r"(?!\s+(?:worse|better|bigger|smaller|higher|lower|heavier|thinner|weaker|stronger|harder|"
    r"easier|older|rid|used|back|over|into|to|up|down|sorted|through)\b)"
)


def dates_in(
    text: str,
    session: datetime,
    told: datetime | None = None,
    days: Mapping[int, datetime] | None = None,
) -> list[DateSpan]:
    """Every date said in ``text``, in order, none overlapping (the first reading of a place
    wins: "12 October 2026" is one date, not a day and a year). ``told``: the day the
    conversation last named with its month ("born on the 1st of October"): a day said alone
    after it ("came home on the 4th") is the first such day on or after it (in its month or
    the next), where that is not after the session and ``told`` is within :data:`TOLD_REACH`
    of it. ``days``: the days said alone before in the conversation, as they were read: the
    same day said alone again is the same date ("... home on the 4th" twice)."""
    p = _patterns()
    low = text.lower()
    found: list[DateSpan] = []
    taken: list[tuple[int, int]] = [(mt.start(), mt.end()) for mt in p["ahead"].finditer(low)]
    for mt in p["this_weekday"].finditer(low):
        if _weekday_index(mt.group(1)) > session.weekday():
            taken.append((mt.start(), mt.end()))  # "this Friday", said on a Wednesday: ahead

    def add(
        start: int,
        end: int,
        at: datetime | None,
        precision: str,
        since: bool = False,
        relative: bool = True,
        guessed: bool = False,
    ) -> None:
        if at is None or any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))  # a plan's words are no other date ("of April" ahead)
        if at > day(session) + timedelta(days=1):
            return  # a date after the session is a plan, not when something happened
        since = since or low.startswith("since", start)  # a pattern that holds its "since"
        since = since or bool(_SINCE_BEFORE.search(low, max(0, start - 40), start))
        phrase = _fmt(at, precision, since)
        found.append(DateSpan(start, end, at, phrase, precision, relative, guessed))

    for mt in p["iso"].finditer(low):
        y, mo, d = (int(x) for x in mt.groups())
        with contextlib.suppress(ValueError):  # not a calendar date ("2026-02-30")
            add(mt.start(), mt.end(), datetime(y, mo, d, tzinfo=UTC), "day", relative=False)
    for key in ("dotted", "slashed"):
        for mt in p[key].finditer(low):
            d, mo, y = (int(x) for x in mt.groups())
            y = y + 2000 if y < 100 else y
            if key == "slashed" and d <= 12:
                continue  # "04/02/2026" may be April or February: not read
            with contextlib.suppress(ValueError):
                add(mt.start(), mt.end(), datetime(y, mo, d, tzinfo=UTC), "day", relative=False)
    for mt in p["dotted_dm"].finditer(low):
        at = _latest(None, int(mt.group(2)), int(mt.group(1)), session)
        if at is not None and 1 <= int(mt.group(2)) <= 12:
            add(mt.start(1), mt.end(), at, "day", guessed=True)
    for mt in p["dmy"].finditer(low):
        year = int(mt.group(3)) if mt.group(3) else None
        add(
            mt.start(),
            mt.end(),
            _latest(year, _month(mt.group(2)), _dom(mt.group(1)), session),
            "day",
            relative=year is None,
            guessed=year is None,
        )
    for mt in p["mdy"].finditer(low):
        year = int(mt.group(3)) if mt.group(3) else None
        add(
            mt.start(),
            mt.end(),
            _latest(year, _month(mt.group(1)), int(mt.group(2)), session),
            "day",
            relative=year is None,
            guessed=year is None,
        )
    for mt in p["my"].finditer(low):
        prep, name, year_s = mt.group(1), mt.group(2), mt.group(3)
        if name in _AMBIGUOUS and not prep and not year_s:
            continue
        mo = _month(name)
        if year_s:
            at = datetime(int(year_s), mo, 1, tzinfo=UTC)
        else:
            y = session.year if mo <= session.month else session.year - 1
            if prep == "last" and mo == session.month:
                y -= 1
            at = datetime(y, mo, 1, tzinfo=UTC)
        undirected = not year_s and prep in (None, "in", "of", "during", "early", "late", "mid")
        add(mt.start(), mt.end(), at, "month", prep in ("since", "from"), not year_s, undirected)
    for mt in p["season"].finditer(low):
        began, guessed = _season(mt.group(1), mt.group(2), mt.group(3), session)
        if began is not None:
            since = (mt.group(1) or "").startswith("since") or mt.group(1) == "from the"
            add(mt.start(), mt.end(), began, "season", since, not mt.group(3), guessed)
    for mt in p["year"].finditer(low):
        add(mt.start(), mt.end(), datetime(int(mt.group(2)), 1, 1, tzinfo=UTC), "year",
            since=mt.group(1) in ("since", "from"), relative=False)  # fmt: skip
    for mt in p["holiday"].finditer(low):
        said, name = mt.group(1), mt.group(2).replace("’", "'")
        name = name if name in HOLIDAYS or name in EASTER_DAYS else name.replace("'", "")
        if said in ("next", "this") or (name not in HOLIDAYS and name not in EASTER_DAYS):
            continue  # a holiday ahead is a plan's
        at = _holiday(name, session.year)
        if at > day(session):
            at = _holiday(name, session.year - 1)  # the last one not after the session
        add(mt.start(), mt.end(), at, "day", guessed=said is None)
    for mt in p["rel_year"].finditer(low):
        y = session.year if mt.group(1) == "this" else session.year - 1
        add(mt.start(), mt.end(), datetime(y, 1, 1, tzinfo=UTC), "year")
    for mt in p["today"].finditer(low):
        add(mt.start(), mt.end(), day(session), "day")
    for mt in p["yesterday"].finditer(low):
        add(mt.start(), mt.end(), day(session) - timedelta(days=1), "day")
    for mt in p["weekday_of_week"].finditer(low):
        in_week = _weekday_of_week(mt, session)
        if in_week is None:
            taken.append((mt.start(), mt.end()))  # "Friday this week", said on a Wednesday
        add(mt.start(), mt.end(), in_week, "day")
    for mt in p["week_nth"].finditer(low):
        monday = _monday(session, mt.group(1))
        dom = int(mt.group(2)) if mt.group(2) else ORDINAL_WORDS[mt.group(3)]
        held = [monday + timedelta(days=k) for k in range(7)]
        on = next((d for d in held if d.day == dom and d <= day(session)), None)
        if on is not None:
            add(mt.start(), mt.end(), on, "day")
        else:  # not a day of that week: the week alone
            add(mt.start(), mt.end(), monday, "week")
    for mt in p["week"].finditer(low):
        add(mt.start(), mt.end(), _monday(session, mt.group(1)), "week")
    nths = [(mt, int(mt.group(1))) for mt in p["nth"].finditer(low)]
    nths += [(mt, ORDINAL_WORDS[mt.group(1)]) for mt in p["nth_word"].finditer(low)]
    for mt, dom in nths:
        back = 1 if mt.group(2) == "last" else 0
        at = _day_of_month(session, dom, back, ahead_ok=mt.group(2) is not None)
        if at is None:
            continue
        after = None
        before = p["weekday_before"].search(low, max(0, mt.start() - 14), mt.start())
        first_word = mt.group(0).split()[0].strip(",")  # "tuesday the sixth"
        named = before.group(0).strip(" ,") if before else first_word
        named_day = named in lexicon().weekdays
        if named_day and mt.group(2) is None:
            # "Tuesday the 22nd": the month the day falls on that weekday in -- this one
            # (ahead of the session: a plan), else the last; neither: no date
            weekday = lexicon().weekdays.index(named)
            here = _day_of_month(session, dom, 0, ahead_ok=True)
            at = here if here is not None and here.weekday() == weekday else at
            if at.weekday() != weekday:
                taken.append((mt.start(), mt.end()))
                continue
        if mt.group(2) is None and not named_day:  # "last Tuesday, the 27th": this month's
            again = (days or {}).get(dom)
            after = again if again is not None else _on_or_after(told, dom, session)
        add(mt.start(), mt.end(), after or at, "day", guessed=mt.group(2) is None)
    for mt in p["month"].finditer(low):
        add(mt.start(), mt.end(), _month_back(session, 0 if mt.group(1) == "this" else 1), "month")
    for mt in p["ago"].finditer(low):
        add(mt.start(), mt.end(), *_back(mt.group(1), mt.group(2), session))
    for mt in p["lasting"].finditer(low):
        at, precision = _back(mt.group(2), mt.group(3), session)
        add(mt.start("span"), mt.end("span"), at, precision, since=True)
    for mt in p["weekday"].finditer(low):
        back = (session.weekday() - lexicon().weekdays.index(mt.group(2))) % 7 or 7
        undirected = mt.group(1) in (None, "on")
        add(mt.start(), mt.end(), day(session) - timedelta(days=back), "day", guessed=undirected)
    for mt in p["weekday_short"].finditer(low):
        back = (session.weekday() - _SHORT_DAYS[mt.group(2)]) % 7 or 7
        undirected = mt.group(1) == "on"
        add(mt.start(), mt.end(), day(session) - timedelta(days=back), "day", guessed=undirected)
    _either_way(p["either_way"], low, found, add, session)
    found.sort(key=lambda d: d.start)
    return found


def _back(count: str, unit_word: str, session: datetime) -> tuple[datetime, str]:
    """The start of the period a count of units back from the session ("two weeks", "three
    months"): the day for days, about the day for weeks, the month, the year."""
    n = int(count) if count.isdigit() else _NUMBERS[count]
    unit = _AGO_UNITS.get(unit_word, unit_word.rstrip("s"))
    if unit == "day":
        return day(session) - timedelta(days=n), "day"
    if unit in ("week", "fortnight"):
        return day(session) - timedelta(weeks=n * (2 if unit == "fortnight" else 1)), "about"
    if unit == "month":
        return _month_back(session, n), "month"
    return datetime(session.year - n, 1, 1, tzinfo=UTC), "year"


def _either_way(
    pattern: re.Pattern[str],
    low: str,
    found: list[DateSpan],
    add: Callable[..., None],
    session: datetime,
) -> None:
    """A slashed day and month that read either way round ("12/05": the 12th of May as Europe
    writes it, the 5th of December as the US does), read the one way a month said beside it
    agrees with ("in May - on 12/05"); with no such month, written with two digits each, the
    one way that falls in the month before the session, where the other does not ("02/07"
    said on the 15th of July: the 2nd of July, not the 7th of February); else not read ("6/12"
    is six months)."""
    months = [d for d in found if d.precision == "month"]
    for mt in pattern.finditer(low):
        a, b = int(mt.group(1)), int(mt.group(2))
        if a == b or not (1 <= a <= 12 and 1 <= b <= 12):
            continue
        agree = [
            (dom, m.at.replace(day=1) if not mt.group(3) else m.at.replace(year=int(mt.group(3))))
            for dom, mo in ((a, b), (b, a))
            for m in months
            if m.at.month == mo
        ]
        if len(agree) == 1:
            dom, first = agree[0]
            with contextlib.suppress(ValueError):  # not a calendar date ("31/04")
                add(mt.start(), mt.end(), first.replace(day=dom), "day", relative=False)
        elif not months and not mt.group(3) and len(mt.group(1)) == len(mt.group(2)) == 2:
            # both written with two digits ("02/07"): a date, not a duration ("6/12": months)
            recent = [at for at in (_recent(a, b, session), _recent(b, a, session)) if at]
            if len(recent) == 1:
                add(mt.start(), mt.end(), recent[0], "day", guessed=True)


def _recent(dom: int, month: int, session: datetime) -> datetime | None:
    """The day ``dom`` of ``month`` in the 31 days up to the session, or None."""
    for year in (session.year, session.year - 1):
        with contextlib.suppress(ValueError):
            at = datetime(year, month, dom, tzinfo=UTC)
            if day(session) - timedelta(days=31) <= at <= day(session):
                return at
    return None


_SESSION = re.compile(
    r"^[ \t]*(?:session date|visit date|date of (?:visit|session|call)|date)[ \t]*:[ \t]*(.+)$",
    re.I | re.M,
)


#: far enough ahead that no written date is "after the session" when a header is read for the
#: date it gives, whatever it is
_FAR = datetime(9998, 12, 31, tzinfo=UTC)


def future_session_date(header: str, now: datetime) -> datetime | None:
    """The date a transcript's header gives ("Date: 2031-05-02", written out, not relative),
    when it is after ``now``'s day by more than a day (a time zone ahead may already be on
    the next day); else None. A relative date said in such a transcript ("yesterday") cannot
    be placed in time."""
    for mt in _SESSION.finditer(header):
        for d in dates_in(mt.group(1), _FAR):
            if d.precision == "day" and not d.relative and d.at > day(now) + timedelta(days=1):
                return d.at
    return None


def session_date(header: str, now: datetime) -> datetime | None:
    """The session's date from a transcript's header line ("Date: 2026-11-24"), if it gives
    one on or before ``now``."""
    for mt in _SESSION.finditer(header):
        for d in dates_in(mt.group(1), now):
            if d.precision == "day" and d.at <= now:
                return d.at
    return None
