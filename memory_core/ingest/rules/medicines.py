"""Medications: what a sentence says of each drug it names -- taken (with dose, frequency and
since when), a course, started, stopped (and why), switched or replaced, re-dosed (to what),
moved to another time of day, given, or a change planned for a later day."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import pairwise

from ...facts.lexicon import lexicon, tokenize
from ...facts.values import course_length
from ..dates import DateSpan
from ..dialogue import Sentence, State
from ..sentence import (
    DOSE_REACH,
    DOSE_UNIT_SPELLINGS,
    FREQ_REACH,
    Drug,
    Named,
    date_for,
    dose_after,
    freq_after,
    reason_after,
)
from ..statements import TIME_TOLD_BY
from .base import Item, _clean, _third_person, _window
from .changes import (
    _DOWN,
    _GAVE,
    _HEDGE,
    _MED_NEG,
    _MOVED,
    _NOT_NOW,
    _PARTICLE,
    _START,
    _STARTED_SAID,
    _STOP,
    _SWITCH,
    _SWITCH_TO,
    _TAKE,
    _TAKE_QUESTION,
    _UP,
    _done_on,
    _done_so,
    _hedged,
    _later_for,
    _lower,
    _moved_from,
    _planned,
    _planned_verb,
    _retimed,
    _told_when,
)

#: one drug in place of another: "<new> instead of <old>", "swapped <old> for <new>"
_INSTEAD = re.compile(r"\binstead of (?:the |my |your |his |her |their )?$")
_SWAPPED = re.compile(r"\bswap\w* (?:my |your |his |her |their |the )?$")


#: "after starting" and the like right before a drug: a time told by its start, no start
#: ("a kidney blood test two weeks after starting the ramipril").
_WHEN_STARTING = re.compile(
    rf"\b{TIME_TOLD_BY}\s+(?:starting|beginning|stopping)\s+"
    r"(?:on\s+)?(?:the|my|your|his|her|their)?\s*$"
)


def _another(o: Drug, d: Drug, low: str) -> bool:
    """Whether ``o``, named after ``d``, is another drug whose dose follows it: not ``d``
    under another name or one of its ingredients ("Spiolto, that's tiotropium and
    olodaterol"), not ``d`` named again beside it ("colecalciferol -- that's vitamin D --
    800 units"), nor a drug coordinated with it ("the ramipril and the amlodipine, one of each
    in the morning": said of both)."""
    if o.start <= d.start or set(d.name.split("/")) & set(o.name.split("/")):
        return False
    between = low[d.end : o.start]
    return not (_APPOSITION.match(between) or _COORDINATED.match(between))


#: the words between a drug and its other name ("colecalciferol, that's vitamin D")
_APPOSITION = re.compile(
    r"^[\s,(—–-]*(?:(?:that'?s|that is|which is|i\.?e\.?|aka|also called|called|known as)\b)?"
    r"[\s,(—–-]*$"
)


def _replaced(low: str, found: list[Drug]) -> tuple[Drug, Drug] | None:
    """The drug given up and the one in its place, where a sentence says one replaced the
    other: "put me on apixaban instead of the warfarin", "swapped my simvastatin for
    atorvastatin"; None otherwise."""
    named = [d for d in found if not d.implicit]
    for first, second in pairwise(named):
        if _INSTEAD.search(low[: second.start]) and first.end <= second.start:
            return second, first
        between = low[first.end : second.start]
        if _SWAPPED.search(low[: first.start]) and re.fullmatch(r"\s+for\s+(?:the\s+)?", between):
            return first, second
    return None


def _course(low: str, start: int, end: int) -> str:
    """The length of a course said right after a drug (before the next drug, within 60
    characters; :func:`..facts.values.course_length`): "prednisolone 30 mg for five days" --
    a course, not a medicine taken from now on."""
    said = low[start : min(end, start + 60)]
    toks = tokenize(said)
    found = course_length([w for w, _a, _b in toks], lexicon().number_words)
    return said[toks[found[0]][1] : toks[found[1] - 1][2]] if found else ""


#: a drug named as what another is (not) to be taken with ("not to mix it with sertraline",
#: "can't take it alongside warfarin", "interacts with the apixaban"): no change of its own
_PARTNER = re.compile(
    r"\b(?:mix\w*|combin\w*|take|taking|use|using|have|having)\s+(?:it|them|that|this|those)\s+"
    r"(?:with|alongside)\s+(?:the |your |my |his |her |their )?$"
    r"|\b(?:interact\w*|together) with\s+(?:the |your |my |his |her |their )?$"
)
#: how far before a drug's name the words that make it a partner are read (characters)
_PARTNER_REACH = 40
#: the most words a stated reason keeps ("because of the cough", "as it upset my stomach")
MAX_REASON_WORDS = 12


#: how many turns a drug's start or change told with its date dates what is said of it next
_DRUG_DATE_TURNS = 2


def _start_told(r: Named, drug: Drug, when: DateSpan, found: Sequence[Drug]) -> bool:
    """Whether ``when`` is the drug's own start told ("edoxaban 60 mg, first dose on the 22nd"):
    a start said between the drug and the date, no other drug between them, a date told."""
    a, b = (drug.end, when.end) if when.start >= drug.end else (when.start, drug.start)
    if any(a <= o.start < b for o in found if o is not drug):
        return False
    return bool(_STARTED_SAID.search(r.low[a:b])) and _told_when(r, when)


def _since(d: DateSpan) -> str:
    """A date as the start of what holds since ("since 2026-09-22", "since August 2026")."""
    return "since " + re.sub(r"^(?:on|in|at|from|since) ", "", d.phrase)


#: a dose changed from one said with its unit to a number said without it ("up from five
#: milligrams to ten": 10 mg), not to a number of days or tablets
#: what may follow a number that makes it no dose: a period, a count of forms, a percent
_NO_DOSE_AFTER = r"days?|weeks?|months?|years?|hours?|tablets?|puffs?|times|x\b|%"
_UNIT_SAID_ONCE = re.compile(
    r"\bfrom\s+\d+(?:[.,]\d+)?\s?(?P<unit>mg|mcg|milligrams?|micrograms?|units?|g|grams?)\s+"
    rf"to\s+(?P<to>\d+(?:[.,]\d+)?)\b(?!\s*(?:{_NO_DOSE_AFTER}))",
    re.I,
)

#: what a record holds, read out ("Levothyroxine -- we have 100 micrograms on file", "your
#: list says ..."): not the patient's word until they confirm it
_ON_RECORD = re.compile(
    r"\b(?:on (?:file|(?:your|the|our) (?:records?|notes|list|system|file))|"
    r"(?:records?|notes|list|system|file) (?:says?|shows?|has))\b"
)

#: a dose changed to a number said without a unit, right after the drug or the pronoun that
#: names it ("The doctor put it up to 125 in May", "metformin went up to 1000")
_TO_BARE = re.compile(
    r"(?:\s+(?:up|down|dose))?\s+(?:has\s+)?(?:gone\s+|went\s+|go\s+)?(?:up\s+|down\s+)?"
    r"(?:from\s+\d+(?:[.,]\d+)?\s+)?to\s+"  # "up from 50 to 100": to the second
    rf"(?P<to>\d+(?:[.,]\d+)?)\b(?![.,]\d|\s*(?:{_NO_DOSE_AFTER}|/|per\b|a day|a week))",
    re.I,
)


#: a drug's own details (dose, form, frequency) and then its change, said after it with no
#: subject of its own ("The alendronic acid 70 milligrams, once a week, started on the 25th")
_DETAIL = (
    r"\d+(?:[.,]\d+)?|mg|mcg|milligrams?|micrograms?|grams?|g|ml|units?|tablets?|capsules?|"
    r"puffs?|sachets?|drops?|injections?|patch(?:es)?|once|twice|three|four|one|two|times?|a|an|"
    r"the|at|in|every|each|per|day|daily|week|weekly|month|monthly|night|nightly|morning|"
    r"evening|bedtime|od|bd|bid|tds|tid|qds|qid|nocte|mane|prn"
)
#: a stop told after the drug, of a pronoun for it ("the aspirin you used to take, they've
#: stopped that", "Citalopram -- the hospital stopped it")
_STOPPED_AFTER = re.compile(
    r"\b(?:they|he|she|we|i|the (?:hospital|doctors?|team|gp|consultant|ward))(?:'ve| have| had)?"
    r"\s+(?:stopped|discontinued)\s+(?:it|that|them|this|those)\b"
)
#: a start or stop told after the drug and its details, in the past, the perfect or with
#: "'s" ("X 70 mg, once a week, started", "the amlodipine's stopped", "the doxazosin has been
#: stopped"); not in the present ("is stopped for two days before the op": a hold)
_CHANGE_AFTER = re.compile(
    rf"^(?:[\s,]*\b(?:{_DETAIL})\b)*[\s,]*(?:(?:was|were|has|have|had|'s|’s)\s+(?:been\s+)?)?"
    r"(?P<verb>started|commenced|stopped|discontinued)\b"
)


#: what may stand between two drugs one verb governs ("started you on apixaban and
#: bisoprolol", "stopped the ramipril 5 mg, and the amlodipine"): their details, a conjunction
_COORDINATED = re.compile(
    rf"^(?:[\s,]*\b(?:{_DETAIL})\b)*[\s,]*(?:and|&|or|plus|as well as)\s+"
    r"(?:(?:the|your|his|her|my|their|also)\s+)*$"
)


#: a change word's own object, when it is not the drug or its dose ("raise the risk of a bleed",
#: "it lowers the level in your blood")
_DETERMINER = r"(?:the|your|his|her|its|their|a|an|any)"
#: words that name a drug's dose, or a dose counted
_DOSE_WORDS = r"dose|doses|amount|strength|tablets?|pills?|capsules?|puffs?|units?|one"
_OWN_OBJECT = re.compile(
    rf"\s+{_DETERMINER}\s+(?!(?:{_DOSE_WORDS}|other|last|next|same|following|previous|first|"
    r"day|days|week|weeks|weekend|month|months|year|time|morning|evening|night|fortnight)\b)"
    r"[a-z]+"
)  # not a time: "the ramipril went up the other week"
#: what a drug's stop may govern instead of the drug ("stop the apixaban working properly")
_WORKING = re.compile(r"\s+(?:from\s+)?(?:working|work|being absorbed|absorbing)\b")


def _of_the_drug(change: re.Pattern[str], rest: str, reach: int) -> bool:
    """Whether a change word said after a drug (in ``rest``, the words after it; one that begins
    within ``reach``) may be said of the drug: not where it has an object of its own ("Ibuprofen
    with apixaban really does raise the risk of a bleed": no change of the apixaban). A change
    word before the drug governs it ("reduced the evening furosemide")."""
    for m in change.finditer(rest, 0, reach):
        if _EFFECT_BEFORE.search(rest, 0, m.start()) and not _DOSE_AHEAD.match(rest, m.end()):
            continue  # "..., it can raise blood pressure": what the drug does
        obj = _OWN_OBJECT.match(rest, m.end())
        if obj is None or _DOSE_AHEAD.match(rest, obj.start()):
            return True  # "... and raise the evening dose": the drug's dose
        if not (m.group(0).endswith("s") or _GENERIC_BEFORE.search(rest, 0, m.start())):
            return True  # "... was reduced the ...": what was done to it
    return False


#: what makes a change word after a drug a claim about what the drug does ("does raise",
#: "can lower", "to reduce"), as "raises" and "lowers" are
_GENERIC_BEFORE = re.compile(r"\b(?:can|could|may|might|will|would|does|do|to)\s+(?:\w+\s+)?$")


#: a change word said of what the drug does, with the drug as its subject ("it can raise
#: blood pressure", "they may lower your sodium"), whatever follows it
_EFFECT_BEFORE = re.compile(
    r"\b(?:it|they|this|that|which|these|both)\s+(?:\w+\s+)?(?:can|could|may|might|does|do|"
    r"tends? to)\s+(?:\w+\s+)?$"
)
#: an object that is the drug's dose after all ("the evening dose", "the total daily amount")
_DOSE_AHEAD = re.compile(rf"\s+{_DETERMINER}(?:\s+[a-z]+){{1,2}}?\s+(?:{_DOSE_WORDS})\b")


class MedicationRules:
    """The rules of medications."""

    def _medication(
        self,
        s: Sentence,
        r: Named,
        found: list[Drug],
        st: State,
        extra_dates: Sequence[DateSpan],
        adverse: list[Item],
        confirmed: bool = False,
    ) -> Iterator[Item]:
        low = s.low
        if not found or _MED_NEG.search(low) or _hedged(s, found):
            return
        conf = 0.9 if s.speaker == "clinician" else 0.85
        # after a doubt of the cause, the evidence is the change made because of it
        hedge = _HEDGE.search(low)
        so = _done_so(low, hedge.end()) if hedge else None
        span = (s.start + (so or 0), s.end)
        pair = _replaced(low, found)
        if pair is not None:
            # "on apixaban instead of the warfarin", "swapped my simvastatin for atorvastatin"
            old, new = pair
            text = f"Patient switched from {old.phrase} to {new.phrase}"
            dose, freq = dose_after(s.text, new.end), freq_after(r, new.end)
            text += "".join(f" {x}" for x in (dose, freq) if x)
            when = date_for(r, new.start, new.end, extra_dates)
            text += f" {when.phrase}" if when else ""
            yield "medication", text, conf, when.at if when else None, *span
            return
        if _SWITCH.search(low) and len(found) >= 2 and not found[0].implicit:
            # from one or more drugs to the one after "to" ("from the Clenil and the salbutamol
            # to Symbicort")
            to = re.search(r"\bto\b", low[found[0].end :])
            targets = [d for d in found[1:] if to and d.start >= found[0].end + to.end()]
            b = targets[0] if targets else found[1]
            before = [d for d in found if d.end <= b.start]
            text = f"Patient switched from {' and '.join(d.phrase for d in before)} to {b.phrase}"
            dose = dose_after(s.text, b.end)
            freq = freq_after(r, b.end)
            text += "".join(f" {x}" for x in (dose, freq) if x)
            when = date_for(r, b.start, b.end, extra_dates)
            text += f" {when.phrase}" if when else ""
            yield "medication", text, conf, when.at if when else None, *span
            return
        answered_take = bool(
            st.question is not None
            and s.speaker != "clinician"
            and _TAKE_QUESTION.search(st.question[0].low)
        )
        done: set[str] = set()
        prev: tuple[Drug, str] | None = None  # the drug before, and the words that governed it
        for d in found:
            if d.name in done:
                continue
            if _PARTNER.search(low, max(0, d.start - _PARTNER_REACH), d.start):
                continue  # "not to mix it with sertraline": what another is not taken with
            window = _window(low, d.start)
            if prev is not None and _COORDINATED.match(low[prev[0].end : d.start]):
                window = prev[1]  # "started you on apixaban and bisoprolol": started too
            prev = (d, window)
            after = low[d.end : d.end + 30]
            later = low[d.end : d.end + 60]  # "the metoprolol ..., so my GP cut it down to 25 mg"
            nxt = min((o.start for o in found if o.start > d.start), default=len(low))
            # a dose or frequency said after another drug is that drug's ("instead of
            # propranolol, let's start amitriptyline 10 mg at night"; not after the same drug's
            # other name: "vitamin D, colecalciferol, 800 units")
            other = min((o.start for o in found if _another(o, d, low)), default=len(low))
            dose = dose_after(s.text, d.end, min(DOSE_REACH, other - d.end))
            freq = freq_after(r, d.end, min(FREQ_REACH, other - d.end))
            details = "".join(f" {x}" for x in (dose, freq) if x)
            when = date_for(r, d.start, d.end, extra_dates)
            on = f" {when.phrase}" if when else ""
            at = when.at if when else None
            since = when if when is not None and when.since else None
            if _NOT_NOW.search(window):
                continue  # a decision not to act on it now
            if _WHEN_STARTING.search(low, 0, d.start):
                window = ""  # "a blood test two weeks after starting the ramipril": when
            said_after = _CHANGE_AFTER.match(low[d.end : nxt])
            if said_after and not (_STOP.search(window) or _START.search(window)):
                window = f"{window} {said_after.group('verb')}"  # "X 70 mg, once a week, started"
            moved = _PARTICLE.match(after) if _MOVED.search(window) else None
            rest = low[d.end :]
            retimed = _retimed(low, d.end, nxt)
            up = bool(_UP.search(window)) or _of_the_drug(_UP, rest, len(after))
            up = up or bool(moved and moved[1] == "up")
            down = bool(_DOWN.search(window)) or _of_the_drug(_DOWN, rest, len(later))
            down = down or bool(moved and moved[1] == "down")
            # "St John's wort can stop the apixaban working": the drug's working, not the drug
            stop = _STOP.search(window)
            generic = stop is not None and _GENERIC_BEFORE.search(window, 0, stop.start())
            stopped = bool(stop) and not (generic and _WORKING.match(low, d.end))
            # "the clopidogrel you used to take, they've stopped that": told after the drug
            stopped = stopped or _STOPPED_AFTER.search(low, d.end, nxt) is not None
            changed = stopped or up or down or _SWITCH_TO.search(window)
            ahead = _planned(r, d, when) if changed or _START.search(window) else None
            if ahead is not None and not confirmed:
                # "Next Monday I stop the aspirin", "On Monday, reduce the prednisolone to 20
                # mg": a change for a later day -- a plan made today, not a change made
                done.add(d.name)
                verb = _planned_verb(window, up, down)
                said = f"{verb} {d.phrase}{' to' if (up or down) and dose else ''}{details}"
                when_said = re.sub(r"^(?:On|In|Next|This|Tomorrow|Coming|A)\b", _lower, ahead)
                yield "care_plan", f"Plan: {said} {when_said}", conf, None, *span
                continue
            if stopped:
                text = f"Patient stopped {d.phrase}{on}"
                why = reason_after(r, d.end)
                if why:
                    # a reason is a few words (unpunctuated speech runs on to the turn's end)
                    reason = " ".join(_clean(why.group("why")).split()[:MAX_REASON_WORDS])
                    text += f" because {'of ' if why.group('of') else ''}{_third_person(reason)}"
                elif adverse:
                    text += " because of " + adverse[0][1].split(" reports ", 1)[1].split(" on ")[0]
                done.add(d.name)
                yield "medication", text, conf, at, *span
            elif up or down:
                to = re.search(
                    r"\bto\s+(\d+(?:[.,]\d+)?\s?(?:mg|mcg|units?|g|ml|milligrams?|micrograms?|"
                    r"grams?)\b)",
                    s.text[d.end :],
                    re.I,
                )
                verb = "increased" if up else "decreased"
                text = f"Patient's {d.phrase} dose {verb}"
                once = None if to else _UNIT_SAID_ONCE.search(s.text, d.end)
                if to:
                    target = dose_after(s.text, d.end + to.start(1))
                    text += f" to {target}"
                    f2 = freq_after(r, d.end + to.end())
                    text += f" {f2}" if f2 else ""
                elif once:  # "up from five milligrams to ten": the unit said once, for both
                    unit = once.group("unit").lower()
                    text += f" to {once.group('to')} {DOSE_UNIT_SPELLINGS.get(unit, unit)}"
                elif bare := _TO_BARE.match(s.text, d.end):
                    text += f" to {bare.group('to')}"  # "put it up to 125 in May": as said
                elif dose and _UP.search(window):  # "you go up to the Ozempic 0.5 mg dose"
                    text += f" to {dose}{' ' + freq if freq else ''}"
                if retimed is not None:  # "... from bedtime to the morning and lower it to 22"
                    text += f", {retimed[0]}{_moved_from(retimed[1])}"
                done.add(d.name)
                yield "medication", text, conf, at, *span
            elif retimed is not None:
                # "Donepezil moves to the morning", "from bedtime to 6 pm": taken, at its new time
                done.add(d.name)
                amount = f" {dose}" if dose else ""
                text = f"Patient takes {d.phrase}{amount} {retimed[0]}{_moved_from(retimed[1])}"
                yield "medication", text, conf, at, *span
            elif _SWITCH_TO.search(window):
                done.add(d.name)
                if _later_for(low, d) and not confirmed:
                    continue  # a switch planned for later: not what the patient takes now
                yield "medication", f"Patient switched to {d.phrase}{details}{on}", conf, at, *span
            elif _GAVE.search(window) and not _later_for(low, d):
                # "I gave her Nurofen for children at about three": what the patient was given
                done.add(d.name)
                yield "medication", f"Patient was given {d.phrase}{details}{on}", conf, at, *span
            elif _START.search(window):
                done.add(d.name)
                if _later_for(low, d) and not confirmed and not _done_on(when, window):
                    continue  # deferred: not a medicine the patient takes
                yield "medication", f"Patient started {d.phrase}{details}{on}", conf, at, *span
            elif (
                (
                    _TAKE.search(window)
                    or re.match(r"\s*(stays|remains|continues) at", after)
                    or answered_take
                    or (confirmed and (dose or freq))  # "the letter says X 5 mg" -- "Yes."
                    or (
                        (dose or freq)
                        and len(_window(low, d.start, 60).split()) <= 3
                        and len(re.split(r"[,;]", low[d.end :], maxsplit=1)[0].split()) <= 12
                        and not _ON_RECORD.search(low)
                    )  # a list read out: "Atorvastatin, 80 mg now"; "So: donepezil 10 mg in the
                    # mornings, doxazosin down to 2 mg, ...": its item up to the next comma --
                    # not what a record holds ("we have 100 micrograms on file"): that is the
                    # patient's to confirm
                )
                and (
                    dose
                    or freq
                    or (confirmed and _TAKE.search(window))
                    or (
                        d.implicit and since is not None and window
                    )  # "been on it since ... the 4th"
                )
            ):
                course = _course(low, d.end, nxt)  # a course is no standing order
                text = (
                    f"Patient's course of {d.phrase}{details} {course}"
                    if course
                    else (
                        f"Patient takes {d.phrase}{details}"
                        + (f" ({since.phrase})" if since else "")
                    )
                )
                done.add(d.name)
                at, dated_by = (since.at if since else None), None
                told = st.drug_dates.get(d.name)
                if since is None and when is not None and _start_told(r, d, when, found):
                    at = when.at  # "..., first dose was on the 22nd of September"
                    text += f" ({_since(when)})"
                elif since is None and told is not None and s.turn - told[1] <= _DRUG_DATE_TURNS:
                    # "she put his levetiracetam up on the 5th of October" -- "Levetiracetam
                    # 750 mg twice a day": taken since the start or change told just before
                    text += f" ({_since(told[0])})"
                    at, dated_by = told[0].at, (told[2], told[3])
                yield "medication", text, conf - 0.05, at, *span, dated_by
