"""Preferences and social history: appointment times, contact channel, written instructions,
language; household, smoking, work, family help, and a habit given up in answer to a question
about it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from ...facts.lexicon import lexicon
from ..dates import DateSpan
from ..dialogue import REQUEST, Sentence, State
from ..sentence import Named, date_for
from ..statements import dialogue_words, stated
from .base import Item, _a, _clean, _third_person
from .changes import _MED_NEG

_PREFER = re.compile(
    r"\b(prefer\w*|rather|better|best|suit\w*|work\w* for me|works? best|like|easier|easiest|"
    r"want|please|(?:would|will|'d)(?: really)? help)\b"
)
_NOW = re.compile(r"\b(now|instead|these days|anymore|any more|from now on|switch)\b")
_CONTRAST = re.compile(r"\b(rather than|instead of|not|never|no|don't|do not|than)\b")
#: a channel the speaker cannot take, in its own clause ("I can't really answer calls at work",
#: "I can never pick up my phone"): not the one they prefer
_CANT_TAKE = re.compile(
    r"\b(?:can't|can’t|cannot|can not|unable to|couldn't|can never|never)\s+(?:\w+\s+){0,2}?"
    r"(?:answer|take|pick up|get to|get|hear|check|read|use)\b[^,.;:!?]*$"
)
_LANG_CUE = re.compile(
    r"\b(first language|native language|mother tongue|prefer\w*|speak\w*|interpreter)\b"
)
#: smoking given up, denied or counted ("smokin": the g dropped, as patients write it)
_SMOKE = re.compile(
    r"\b(?:(quit|stopped|gave up) smokin[g']?(?: (?:in|back in) (\d{4}))?|(don't|do not|never|"
    r"doesn't|does not) smoke|(smokes?|smokin[g']?) (?:about |around )?(\d+|a pack|half a pack))"
)
#: the habit's absence since a day: "not had a cigarette since", "haven't smoked since"
_SMOKE_FREE_SINCE = re.compile(
    r"(?:\bnot|n't|\bnever|\bno)\s+(?:had\s+)?(?:a\s+(?:single\s+)?)?"
    r"(?:cigarettes?|fags?|smoke|smoked|smoking)\s+since\b"
)
#: how far after "since" the day it names may begin ("since the 3rd", "since Monday the 5th")
_SINCE_DATE_REACH = 6


def _date_right_after(r: Named, at: int) -> DateSpan | None:
    """The date said right after ``at`` (its first words within :data:`_SINCE_DATE_REACH`)."""
    return next((d for d in r.dates if at <= d.start <= at + _SINCE_DATE_REACH), None)


_WORK = re.compile(
    r"\bwork(?:s|ing)? (night shifts?|nights|shifts|from home|full[- ]time|part[- ]time|as an? "
    r"[a-z]+(?: [a-z]+)?)\b"
    # where, said as the speaker's own ("I work at the garden centre", "I work for the council",
    # "I'm working in a warehouse"; not "that works for me")
    r"|\bi(?:'m| am)? (?:still |now |currently )?work(?:ing)? ((?:at|for|in an?) [a-z])"
    # what the work is ("I teach Year 3")
    r"|\bi (?:still |now |currently )?(teach) [a-z0-9]"
)
#: work begun again, said as done ("I went back to part-time nursing in March", "I've gone back
#: to work"); "go back to work next week" is a plan
_BACK_TO_WORK = re.compile(
    r"\bi(?:'ve| have)? (?:went|gone|got) back to ((?:full|part)[- ]time [a-z]+|work|my job|"
    r"[a-z]+ing)\b(?<!\bfeeling)(?<!\bthinking)"
)
#: up to five words to the end of a clause (not over a word that joins another clause)
_CLAUSE_WORDS = (
    r"(?:\s+(?!(?:and|so|but|because|which|where|when|since|as|if|though)\b)[a-z0-9'&-]+){1,5}"
)
#: the words after a job that say where or what it is ("... at the Royal Infirmary", "..., doing
#: software testing")
_JOB_TAIL = re.compile(r"(?:\s+(?:at|in|for|with|on)|,?\s+doing)" + _CLAUSE_WORDS)
#: what is taught ("I teach Year 3")
_TAUGHT = re.compile(_CLAUSE_WORDS)
#: the words a tail cut at five may end on that belong to what comes next ("at the garden
#: centre on the ring road": "... centre")
_LOOSE_END = re.compile(r"(?:\s+(?:the|a|an|on|in|at|of|to|for|with|by|near|round|now))+$", re.I)
#: a date said as when something began ("since July", "from January")
_SINCE_WORDS = re.compile(r"\b(?:since|from|as of|starting)\s+(?:\w+\s+){0,2}?\S*$")
#: a job word of :data:`_WORK`'s first group that a tail may follow
_TAILED = re.compile(r"^(?:as |from home)")
#: what the words before a job say of it: held before ("used to work as", "I was a"), or
#: not the speaker's own ("my son works as")
_JOB_BEFORE = re.compile(r"\b(?:used to|previously|before|retired|was|were|my|his|her|their)\W+$")


def _job(s: Sentence) -> str | None:
    """The patient's job now, said by them ("I work as a postman", "I'm a plumber", "I am cook
    in a hotel", "I work at the garden centre", "I teach Year 3") or to them ("you work
    nights"), with where or what it is as said ("as a porter at the Royal Infirmary"); not a
    relative's own ("Daughter: I'm a teacher"), not one held before ("I used to work as a
    cleaner")."""
    if s.speaker == "patient" and s.relation:
        return None  # a relative speaks of their own job; the patient's is said as "he", "she"
    low = s.low
    m = _WORK.search(low)
    if m and s.speaker != "patient" and not re.search(r"\byou(?:.re| are)?\W+$", low[: m.start()]):
        m = None  # the clinician's own job ("I'm a nurse with the heart team", "I work nights")
    if m is None and s.speaker == "patient":
        m = _i_am_job().search(low)
    if m is None or _JOB_BEFORE.search(low[max(0, m.start() - 30) : m.start()]):
        return None
    said = s.text if len(s.text) == len(low) else low  # the words as written ("Royal Infirmary")
    if m.re is _WORK:
        if m.group(3):  # "I teach Year 3 at the primary school"
            taught = _TAUGHT.match(low, m.end(3))
            words = _LOOSE_END.sub("", taught.group(0)) if taught else ""
            return f"teaches{said[m.end(3) : m.end(3) + len(words)]}" if words else None
        if m.group(2):  # "I work at the garden centre": the workplace is the tail
            job, end = "", m.start(2) - 1
        else:
            job, end = m.group(1), m.end(1)
            if not _TAILED.match(job):
                return job
    else:
        g = next(k for k in range(1, len(m.groups()) + 1) if m.group(k))
        job, end = f"as {'an' if m.group(g)[0] in 'aeiou' else 'a'} {m.group(g)}", m.end(g)
    tail = _JOB_TAIL.match(low, end)
    shown = said[tail.start() : tail.end()] if tail else ""
    return (job + _LOOSE_END.sub("", shown)).strip() or None


def _back_to_work(s: Sentence, r: Named) -> tuple[str, DateSpan | None] | None:
    """Work begun again, said by the patient as done, with its date."""
    if s.speaker != "patient" or s.relation:
        return None
    m = _BACK_TO_WORK.search(s.low)
    if m is None:
        return None
    return f"went back to {m.group(1)}", date_for(r, m.start(), m.end())


@cache
def _i_am_job() -> re.Pattern[str]:
    """ "I'm a plumber", "I am cook", "I'm a school nurse at the academy", "I started as a
    school nurse": a job of dialogue.json's occupations said as what the speaker is, or has
    started as (a word that says which before it only where a workplace follows, or after
    "started as": not "I'm a good cook", "a nervous driver")."""
    jobs = sorted(dialogue_words()["occupations"], key=len, reverse=True)
    names = "|".join(map(re.escape, jobs))
    return re.compile(
        rf"\bi(?:'m|’m| am) (?:now )?(?:an? )?({names})\b"
        rf"|\bi(?:'m|’m| am) (?:now )?an? ((?:[a-z]+ )?(?:{names})) (?:at|in|for) "
        rf"|\bi(?: have|'ve)? started (?:work )?as an? ((?:[a-z]+ )?(?:{names}))\b"
    )


_FAMILY = re.compile(
    r"\bmy (daughter|son|wife|husband|partner|carer|caregiver|neighbou?r|sister|brother) "
    r"((?:helps|visits|manages|drives|checks|cooks|sorts|stays|comes)\b[^.,;!?]{0,60})"
)
_PATIENT_SUBJECT = re.compile(r"\b(i|she|he|patient|they)\b(?:\s+\w+){0,2}\s*$")
#: giving up a habit, said without naming it ("I stopped in January", "gave up last year")
_GAVE_UP = re.compile(
    r"^\W*(?:(?:no|yes|well|actually|oh),?\s+)?(?:i(?:'ve| have)?\s+)?"
    r"(?:stopped|quit|gave (?:(?:it|that|them) )?up|given (?:(?:it|that|them) )?up|"
    r"packed (?:it )?in|stop(?=\s*[.!;]|\s*$))\b"
)  # "I stop." alone: said in English as a second language for "I stopped"; "Stopped!" with
#  no subject: the answer's
#: what may follow a give-up verb that names no thing given up ("I stopped in January", "gave
#: up last year", "stopped completely", "quit two years ago"); any other word names it ("I've
#: given up fizzy drinks")
_NO_OBJECT = re.compile(
    r"^\W*(?:$|(?:in|on|at|last|about|around|when|after|before|since|ago|completely|totally|"
    r"altogether|now|then|already|for|it|that|them|this|and|but|back|over|a|an|the (?:day|"
    r"week|month|year|start|end)|years?|months?|weeks?|days?|\d+|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|yesterday|today|recently|ages)\b)"
)
#: the habits a question may ask about, and how a statement names them
_HABITS = (
    (re.compile(r"\b(smoke|smoking|cigarettes?|cigs?)\b"), "smoking"),
    (re.compile(r"\b(drink|drinking|alcohol)\b"), "drinking"),
)
#: the chart's other habits a question may name by their own word ("And the cannabis?", "Still
#: vaping?"): slots.json's triggers of these slots
_HABIT_SLOTS = frozenset({"tobacco", "substance use"})


def _habit_named(asked: str) -> str | None:
    """The habit a question names by a trigger of one of :data:`_HABIT_SLOTS`, as said."""
    from ...facts.text import parse

    t = parse(asked)
    lex = lexicon()
    for m in lex.slot_triggers.find_all(t.tokens, t.raw):
        if m.value in _HABIT_SLOTS:
            return " ".join(t.tokens[m.start : m.end])
    return None


#: what, besides the words of a preference (:data:`_PREFER`), asks for a choice of time
#: ("Which days can you do?", "Are you available on Tuesdays?") -- not a question that only
#: names a visit ("How has she been since Monday's visit?")
_WHEN_ASKED = re.compile(
    r"\b(?:when can|what time|which days?|what days?|available|availability|convenient|"
    r"good for you|mornings? or|afternoons? or|any particular)\b"
)


class SocialRules:
    """The rules of preferences and social history."""

    def _preference(self, s: Sentence, r: Named, st: State) -> Iterator[Item]:
        low = s.low
        span = (s.start, s.end)
        answering = s.speaker != "clinician"
        times = r.slot_values("visit time")
        triggers = {slot for _a, _b, slot in r.slot_triggers()}
        if (
            times
            and ("visit time" in triggers or (answering and st.appointments))
            and (_PREFER.search(low) or (answering and st.appointments))
        ):
            when = times[0][2]
            now_word = "now " if _NOW.search(low) else ""
            # how, said with when ("video appointments in the mornings")
            mode = next((f"{low[a:b]} " for a, b, _v in r.slot_values("visit mode")), "")
            text = f"Patient {now_word}prefers {when} {mode}appointments"
            yield "preference", text, 0.85, None, *span
        channels = r.slot_values("contact channel")
        request = answering and s.question and REQUEST.match(s.text) is not None
        if channels and (
            _PREFER.search(low)
            or re.search(r"\bplease (?:text|e-?mail|call|phone|write)", low)
            or (answering and st.contact)
            or request
        ):
            refused = [
                c
                for c in channels
                if _CONTRAST.search(low[max(0, c[0] - 14) : c[0]])
                or _CANT_TAKE.search(low[max(0, c[0] - 40) : c[0]])
            ]
            allowed = [c for c in channels if c not in refused]
            # which one, or which use of it, beyond the channel (slots.json's "particular")
            particular = lexicon().slots["contact channel"].particular
            unwanted = [low[x:y] for x, y, _v in refused if low[x:y] in particular]
            if not allowed and unwanted:  # "Please don't leave voicemails"
                yield "preference", f"Patient prefers no {unwanted[0]}", 0.8, None, *span
            appt_before = [
                c for c in allowed if re.search(r"\bappointments?\b", low[max(0, c[0] - 15) : c[0]])
            ]
            allowed = [c for c in allowed if c not in appt_before]
            if allowed:
                label = {"text": "by text message", "phone": "by phone", "email": "by email",
                         "letter": "by letter", "portal": "through the patient portal"}  # fmt: skip
                # "letters in large print", "letters in Arabic": how it is to be written
                shown = [v for _a, _b, v in r.slot_values("instructions format")]
                how = [v for v in shown if v == "large print"]
                how += [v.title() for _a, _b, v in r.slot_values("language")]
                value = allowed[0][2]
                # which one ("ring the landline"), and what not ("don't leave voicemails"), as said
                which = next(
                    (low[x:y] for x, y, v in allowed if v == value and low[x:y] in particular), ""
                )
                detail = ", ".join(([which] if which else []) + [f"not {n}" for n in unwanted[:1]])
                yield (
                    "preference",
                    f"Patient prefers to be contacted {label[value]}"
                    + "".join(f" in {h}" for h in how[:1])
                    + (f" ({detail})" if detail else ""),
                    0.8,
                    None,
                    *span,
                )
        written = re.search(
            r"\bwritten instructions\b|\bwrite (?:it|things|them) down\b|\bin writing\b", low
        )
        if written and (_PREFER.search(low) or "please" in low or s.question):
            yield "preference", "Patient prefers written instructions", 0.8, None, *span
        langs = r.slot_values("language")
        if langs and _LANG_CUE.search(low):
            name = langs[0][2].title()
            if "interpreter" in low:
                yield "preference", f"Patient needs a {name} interpreter", 0.85, None, *span
            else:
                yield "preference", f"Patient prefers to communicate in {name}", 0.85, None, *span

    def _social(self, s: Sentence, r: Named) -> Iterator[Item]:
        low = s.low
        span = (s.start, s.end)
        yield from self._household(s, r)
        if m := _SMOKE.search(low):
            if m.group(1):
                when = None if m.group(2) else date_for(r, m.start(), m.end())
                year = f" in {m.group(2)}" if m.group(2) else (f" {when.phrase}" if when else "")
                at = when.at if when else None
                yield "social", f"Patient quit smoking{year}", 0.85, at, *span
            elif m.group(3):
                yield "social", "Patient does not smoke", 0.85, None, *span
            else:
                yield (
                    "social",
                    f"Patient smokes {m.group(5)} a day"
                    if m.group(5)[0].isdigit()
                    else "Patient smokes",
                    0.75,
                    None,
                    *span,
                )
        elif (q := _SMOKE_FREE_SINCE.search(low)) and (when := _date_right_after(r, q.end())):
            # "I've not had a cigarette since the 3rd": quit that day (a day said right after
            # "since"; "since I came out of hospital" names an event, not a day)
            on = re.sub(r"^since ", "on ", when.phrase)
            yield "social", f"Patient quit smoking {on}", 0.8, when.at, *span
        if job := _job(s):
            # the day the job began, where the sentence says one ("Since July I work at ...")
            when = next((d for d in r.dates if _SINCE_WORDS.search(s.low, 0, d.end)), None)
            what = job if job.startswith("teaches") else f"works {job}"
            on = f" ({when.phrase})" if when else ""
            yield "social", f"Patient {what}{on}", 0.8, when.at if when else None, *span
        elif back := _back_to_work(s, r):
            what, when = back
            on = f" {when.phrase}" if when else ""
            yield "social", f"Patient {what}{on}", 0.8, when.at if when else None, *span
        yield from self._family(s)

    @staticmethod
    def _habit_answer(s: Sentence, r: Named, st: State) -> Iterator[Item]:
        """An answer that gives up the habit a question asked about ("Do you smoke?" -- "I
        stopped in January."), or the clinician's turn raised ("Now, smoking. Last time you were
        on about ten a day."): the habit, said only there, is what was given up."""
        # asked in a question, or raised by the clinician's turn before ("Now, smoking.")
        asked = f"{st.question[0].low if st.question else ''} {st.habit_raised}".strip()
        if s.speaker == "clinician" or not asked or _SMOKE.search(s.low):
            return
        quit_ = _GAVE_UP.search(s.low)
        if quit_ is None or _MED_NEG.search(s.low) or r.drugs:
            return
        if not _NO_OBJECT.match(s.low[quit_.end() :]):
            return  # "I've given up fizzy drinks": what was given up is named, and read as said
        habit = next(
            (h for topic, h in _HABITS if topic.search(asked) and not topic.search(s.low)), None
        )
        if habit is None:  # another habit the chart keeps, named by the question ("And the
            habit = _habit_named(asked)  # cannabis?"), and not named again in the answer
            if habit is None or habit in s.low:
                return
        when = date_for(r, quit_.start(), quit_.end())
        on = f" {when.phrase}" if when else ""
        yield "social", f"Patient quit {habit}{on}", 0.8, when.at if when else None, s.start, s.end

    @staticmethod
    def _names_others(s: Sentence, st: State) -> Iterator[Item]:
        """In a sentence about another person, what names them by what they may do for the
        patient ("My neighbour Sue can pick up my prescriptions", "So your niece Priya can be
        told about your results"): the patient's preference, with the person as said."""
        for x in stated(s, done_types=frozenset(), drugs_done=True, patient_name=st.names(),
                        pronoun=st.patient_pronoun, others_only=True):  # fmt: skip
            yield x.type, x.content, 0.7, None, s.start, s.end

    @staticmethod
    def _family(s: Sentence) -> Iterator[Item]:
        if s.relation:
            return  # a relative's "my son" is not the patient's
        if m := _FAMILY.search(s.low):
            rest = _third_person(_clean(m.group(2)))
            yield "social", f"Patient's {m.group(1)} {rest}", 0.75, None, s.start, s.end

    @staticmethod
    def _household(s: Sentence, r: Named) -> Iterator[Item]:
        low = s.low
        for a, b, slot in r.slot_triggers():
            if slot != "household" or not re.match(r"(li?ve|lives|living|lived)\b", low[a:b]):
                continue
            if not _PATIENT_SUBJECT.search(low[max(0, a - 30) : a]):
                continue
            rest = low[b : b + 80]
            rest = re.split(r"[.;!?]|,\s*(?:but|and|so)\b|\b(?:now|since|but|though)\b", rest)[0]
            values = [v for x, _y, v in r.slot_values("household") if a <= x < b + len(rest)]
            if "alone" in values:
                yield "social", "Patient lives alone", 0.85, None, s.start, s.end
            elif values and "with" in low[a:b]:
                who = rest.strip()
                if s.relation:  # a relative's "me" is the relative
                    who = re.sub(r"\bme\b", f"their {s.relation}", who)
                    who = re.sub(r"\bmy\b", f"their {s.relation}'s", who)
                who = _third_person(who)
                if not who.startswith(("their", "a ", "the ")):
                    who = f"their {who}"
                yield "social", f"Patient lives with {who.strip(' ,')}", 0.85, None, s.start, s.end
            elif values:
                yield "social", f"Patient lives in {_a(values[0])}", 0.8, None, s.start, s.end
            return
