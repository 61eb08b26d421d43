"""A hospital stay's days, told once and referred to after (issue 31: dates relative to the
conversation): "you came in on Tuesday the 28th ... and went home Monday the 4th" makes the
4th the day of discharge, and "by the day you went home it had come down to 5.1" a result of
the 4th. The words are data (``dialogue.json``'s ``stays``); this module reads them. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from ..facts.lexicon import lexicon
from .dates import DateSpan
from .statements import dialogue_words

#: words that may stand between a stay's event and the date said of it ("went home on Monday
#: the 4th", "came home last Friday"), besides the weekdays
_BETWEEN = frozenset({"on", "at", "the", "last", "this", "past"})


@dataclass(frozen=True)
class _Words:
    told: re.Pattern[str]  # a person (or "and"), then an event told ("you went home")
    named: re.Pattern[str]  # an event named by a noun ("on discharge")
    not_day: re.Pattern[str]  # before an event: a period, not its day ("since")
    event_of: dict[str, str]  # each event's word -> "admission" | "discharge"


@cache
def _words() -> _Words:
    raw = dialogue_words()["stays"]

    def alts(words: Sequence[str]) -> str:
        return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))

    told_words = [w for words in raw["told"].values() for w in words]
    return _Words(
        told=re.compile(
            rf"\b(?:(?:{alts(raw['persons'])})(?:\s*(?:{alts(raw['auxiliaries'])}))*|and|then)"
            rf"\s+(?P<ev>{alts(told_words)})\b",
            re.I,
        ),
        named=re.compile(rf"\b(?P<ev>{alts(list(raw['named']))})\b", re.I),
        not_day=re.compile(rf"\b(?:{alts(raw['not_the_day'])})\s+(?:\w+\s+){{0,2}}$", re.I),
        event_of={
            **{w: ev for ev, words in raw["told"].items() for w in words},
            **raw["named"],
        },
    )


def _not_the_day(text: str, at: int) -> bool:
    """A word before the event that makes it a period ("since he got home")."""
    return _words().not_day.search(text[max(0, at - 30) : at]) is not None


def told_days(text: str, dates: Sequence[DateSpan]) -> dict[str, DateSpan]:
    """The stay's events ``text`` tells with a date right after them: {"discharge": the 4th}."""
    w = _words()
    between = _BETWEEN | set(lexicon().weekdays)
    out: dict[str, DateSpan] = {}
    for m in w.told.finditer(text):
        if _not_the_day(text, m.start()):
            continue
        after = next((d for d in dates if d.start >= m.end()), None)
        if after is None:
            continue
        gap = re.findall(r"[a-z]+", text[m.end() : after.start].lower())
        if len(gap) <= 3 and set(gap) <= between and "." not in text[m.end() : after.start]:
            out[w.event_of[m.group("ev").lower()]] = after
    return out


def referred(text: str) -> tuple[str, int, int] | None:
    """The stay's event ``text`` names as a day ("by the day you went home", "on discharge"),
    not as a period ("since he got home", "before you came in"), and where it is said."""
    w = _words()
    for pattern in (w.told, w.named):
        for m in pattern.finditer(text):
            if not _not_the_day(text, m.start()):
                return w.event_of[m.group("ev").lower()], m.start(), m.end()
    return None
