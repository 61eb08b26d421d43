"""When what is told happened: a clause's date, a story told under one date, a date said alone
(of what was just told, or the day of a month told before), "since then", a stay's day, and a
message's send date."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from ...facts.lexicon import lexicon
from ..dates import DateSpan, day, narrowest, told_as_done
from ..dialogue import Sentence, moment
from ..proposals import Extraction
from ..sentence import Named
from ..statements import PATIENT
from .base import _words_besides

#: a clause that compares values over time: its dates are the values', not the clause's
_COMPARED_CLAUSE = re.compile(r"\b(?:from \S+ (?:in|on|last)\b|than|compared|used to be)\b", re.I)
#: the next clause opens with "since", a few words before its date: the clause's start
_SINCE_NEXT = re.compile(r"^\W*since\b(?:\W+\w+){0,4}?\W*$")
#: words that bring a told story back to now ("I take amlodipine now", "it's fine these days")
_NOW_AGAIN = re.compile(
    r"\b(?:now|currently|today|these days|nowadays|at the moment|at present|still|anymore|"
    r"any more|am|is|are|i'm|we're|you're|they're|he's|she's|it's|do|does|don't|doesn't|take|"
    r"takes|use|uses|have|has|i've|feel|feels|get|gets|need|needs|want|wants|will|won't|"
    r"i'll|going to)\b",
    re.I,
)
#: a sentence that is only a "since" and its date ("Since my birthday, the 12th of
#: September."): what the next sentence says holds from then
_SINCE_ALONE = re.compile(r"\W*(?:and\s+|ever\s+)?since\b[^.!?;]{0,60}[.!?;]?\s*$", re.I)
#: a date pointed back to: "since then", "from then on", "since that day"
_SINCE_THEN = re.compile(
    r"\b(?:since|from|ever since) (?:then|that (?:day|time|date|point))\b", re.I
)
#: a day said as the one just named ("They also did bloods that day."), not one reckoned from
#: it ("that day after") nor an event's ("that day I started the tablet"); "the same day" is
#: more often an instruction's ("ring us the same day")
_THAT_DAY = re.compile(
    r"\b(?:that (?:day|date))\b"
    r"(?!\s+(?:after|before|as|when|that|i|you|he|she|we|they)\b)",
    re.I,
)
#: how many turns back the day "that day" names may have been said (a question and its answer
#: may come between)
_THAT_DAY_TURNS = 3
#: a told story's date: the date, the turn, and where the sentence that says it is
Story = tuple[DateSpan, int, int, int]


def _story(
    told: Story | None, s: Sentence, r: Named, asked_past: bool = False
) -> tuple[Story | None, Story | None]:
    """The story a sentence goes on, and the one it is told under. A sentence told in the past
    with one date begins a story ("I went to A&E on Saturday."); the sentences after it in the
    same turn that say no date of their own and stay in the past are told under its date
    ("They said my potassium was 5.9 and stopped the ramipril."); a question, or a sentence
    back in the present ("I take amlodipine now"), ends it -- but for what the story led to
    ("So now I live with my daughter": since then). A dated answer to a question asked in the
    past tense begins one too ("Did you see the GP?" -- "Yes, last Friday, the 11th.")."""
    if r.dates:
        one = narrowest(r.dates)
        if one is not None and not s.question and (asked_past or told_as_done(s.text)):
            return (one, s.turn, s.start, s.end), None
        return None, None
    if told is None or told[1] != s.turn or s.question:
        return None, None
    if _NOW_AGAIN.search(s.text) and not _SO_NOW.match(s.text):
        return None, None
    return told, told


#: words a sentence that only gives a date may hold besides it ("It was the 3rd of May, I
#: think.", "Yes, first of June.", "That stopped at the start of September too.", "They
#: started that on the eighth."): the date of what was just told
_DATE_FILLERS = frozenset({
    "on", "in", "at", "since", "around", "about", "roughly", "approximately", "it", "was",
    "that", "that's", "thats", "it's", "its", "yes", "yeah", "no", "i", "think", "the", "of",
    "back", "maybe", "sometime", "so", "um", "er", "erm", "well", "oh", "and", "from", "this",
    "they", "started", "stopped", "began", "happened", "changed", "finished", "ended", "did",
    "were", "start", "end", "beginning", "middle", "too", "also", "then",
    # where it is written, which says no more than when ("The letter says that was started on
    # the 10th.")
    "letter", "discharge", "notes", "says", "said",
})  # fmt: skip


#: how many turns after the one that named a month a day said alone ("the 9th") is read in it
#: ("born on the 1st of October" ... "since I came home on the 4th"); later, the latest such day
TOLD_TURNS = 2


def _date_alone(s: Sentence, r: Named) -> DateSpan | None:
    """The date a sentence says, where the sentence says nothing else ("The 3rd of May.",
    "First of June.", "15.08.2026.") or only when the last one was ("Last cigarette was the
    bank holiday weekend in August."); None for any other sentence."""
    if not r.dates or s.question:
        return None
    if _LAST_ONE.match(s.low):
        return narrowest(list(r.dates))
    if len({d.at for d in r.dates}) != 1:
        return None  # one day, perhaps said two ways ("New Year's Day, the 1st of January.")
    d = r.dates[0]
    start, end = r.dates[0].start, r.dates[-1].end
    if _words_besides(s, start, end) - set(lexicon().weekdays) <= _DATE_FILLERS:
        return d  # "Saturday the 25th of July.": the weekday is the date's
    # "14.07.2026, here in the practice, with the nurse.": the date first, then only where or
    # with whom (nothing named, no number)
    head, tail = s.low[: d.start], s.low[d.end :]
    where = _WHERE_DONE.match(tail)
    if where and set(re.findall(r"[a-z0-9']+", head)) <= _DATE_FILLERS:
        return None if (r.drugs or r.findings or r.analytes or re.search(r"\d", tail)) else d
    return None


#: what may follow a date said alone: where or with whom it was done ("..., here in the
#: practice, with the nurse", "..., at the pharmacy")
_WHERE_DONE = re.compile(r"^\s*,\s*(?:here|there|at|in|with|by)\b[^.?!;]*[.?!]?\s*$")


#: a sentence that says when the last of something was: the date of a stop just told ("I
#: stopped smoking. Last cigarette was ...", "Last tablet on the 31st of August.")
_LAST_ONE = re.compile(
    r"^\W*(?:(?:and|yes|yeah|well),?\s+)?(?:my\s+|the\s+|his\s+|her\s+)?(?:very\s+)?last\s+"
    r"(?:cigarette|cig|fag|smoke|drink|dose|tablet|pill|one|injection|jab|patch|puff)s?\b"
)


def _stay_alone(s: Sentence, start: int, end: int) -> bool:
    """A sentence that says only that something was done on a stay's day, named at
    ``start``..``end`` ("They lowered it on the day you went home.")."""
    return _words_besides(s, start, end) <= _DATE_FILLERS | _DONE_WORDS | {"day", "by", "time"}


#: what a sentence may say was done to what the sentence before told, besides its date
_DONE_WORDS = frozenset({
    "lowered", "reduced", "increased", "raised", "upped", "cut", "halved", "doubled",
    "decreased", "switched", "swapped", "adjusted", "put", "up", "down", "off", "took", "taken",
    "you", "he", "she", "we", "when", "your", "his", "her",
})  # fmt: skip


def _refine_days(out: Extraction, r: Named, s: Sentence, told: range) -> None:
    """The day ``s`` says alone refines the month the candidates ``told`` were dated to: what
    they dated to that month's first day (a month said) is dated to the day. Read where a
    clinician reads the day out as the first words of their turn ("Yep, I can see it here,
    fifth of May.") after the patient's side told of the month ("One bad one in May. Dr Nguyen
    gave me the prednisolone."), and where a sentence that tells nothing but a day follows in
    the turn that told the month ("I retired in March. My last day was the thirty-first.")."""
    if len(r.dates) != 1 or r.dates[0].precision != "day":
        return
    day_ = r.dates[0].at
    for k in told:
        c = out.candidates[k]
        at = c.created_at
        if c.whose != PATIENT or at is None or at.day != 1 or day_.day == 1:
            continue
        if (at.year, at.month) == (day_.year, day_.month):
            out.candidates[k] = replace(c, created_at=day_, dated_by=(s.start, s.end))


#: a question that asks when ("When was that?", "When did you stop it?")
_WHEN_ASKED_Q = re.compile(r"^\W*(?:(?:and|so|okay|right),?\s+)?(?:when|what date)\b", re.I)


def _told_before(
    s: Sentence,
    prev: Sentence | None,
    question: tuple[Sentence, Named] | None,
    by_turn: Mapping[int, Sequence[Sentence]],
) -> tuple[Sentence, ...]:
    """What a date said alone (at ``s``) may be the date of, the first that tells something
    first: the sentence just before it in its turn, or -- as the first words of an answer to
    "When was that?" -- the sentence the question followed ("I see your GP increased the
    sertraline. When was that?" -- "First of June."), else the last of the turn before the
    question's, where the other speaker told it ("I've stopped smoking." -- "Oh, brilliant.
    When did you stop?" -- "New Year's Day."); with no question, the last sentence of the
    other speaker's turn just before ("You had a fall, I see." -- "Saturday the 25th.")."""
    if prev is not None and prev.turn == s.turn:
        return (prev,)
    if question is None or not _WHEN_ASKED_Q.match(question[0].text):
        # "You mentioned a fall on the form too." -- "Yes, Saturday the 25th of July.": the
        # other speaker's answer gives the date of what was just told
        if prev is None or prev.question or prev.turn != s.turn - 1 or prev.speaker == s.speaker:
            return ()
        return (prev,)
    q = question[0]
    before = [x for x in by_turn.get(q.turn, ()) if x.end <= q.start]
    told = [x for x in by_turn.get(q.turn - 1, ()) if x.speaker != q.speaker]
    return (*before[-1:], *told[-1:])


#: a sentence that says what the story's event led to ("My husband went back to Jordan in May.
#: So now I live with my daughter."): it holds from the story's date
_SO_NOW = re.compile(r"\W*(?:and\s+)?so\s+now\b", re.I)


def _at(d: DateSpan | None) -> datetime | None:
    return d.at if d is not None else None


def _sent_day(s: Sentence, session: datetime, now: datetime) -> datetime | None:
    """A message's send date when it is not the session's (a portal thread's message)."""
    sent = day(moment(s, session, now))
    return sent if sent != day(session) else None
