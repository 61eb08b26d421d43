"""The words of a medicine taken or changed -- taken, given, started, stopped, switched, up or
down, moved to another time of day -- and whether a change is hedged, decided against, or
planned for a later day."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..dates import DateSpan, said_ahead, told_as_done
from ..dialogue import Sentence
from ..sentence import CLOCK_TIME, Drug, Named
from ..statements import JOINED, cues, stems
from .base import _window

_HEDGE = re.compile(
    r"\b(consider\w*|might|maybe|perhaps|could|would you|should we|should i|thinking about|"
    r"if you|if it|if my|if the|if your|in case|unless|"
    r"(?:when|once|as soon as) you (?:start|stop|finish|take|get|have|run|begin|go)|"
    r"not sure|before (?:stopping|starting|"
    r"taking|changing))\b"
)
#: the words that forbid what follows ("don't", "mustn't", "never")
_FORBID = r"(?:don't|do not|never|mustn't|must not|shouldn't|should not)"
_MED_NEG = re.compile(
    r"\b(not taking|never took|never taken|didn't start|did not start|not on|"
    rf"{_FORBID} (?:take|give|use|have))\b"
)  # "Never give him ibuprofen 400 mg with the warfarin": an instruction, not what he takes
#: a decision not to act on the drug, said before it in its clause ("I'm not going to start a
#: statin yet", "we'll hold off on the ramipril", "No, I wouldn't stop it", "I never told you to
#: stop the simvastatin", "don't start the turmeric", "no reason to start alendronic acid")
_NOT_NOW = re.compile(
    r"\b(not going to|won't|will not|wouldn't|would not|hold off|holding off|no need|(?:don't|do "
    r"not|doesn't|does not) need|decided against|against starting|not starting|not start|"
    r"(?:never|nobody|no one) (?:told|asked|said)|"
    rf"(?:{_FORBID}|no (?:reason|point|benefit) (?:in|to)) (?:start|begin|add|try|restart)\w*)\b"
)
#: a start deferred to a later time: a plan, not a medicine taken ("Next month we'll start you
#: on bisoprolol")
_LATER = re.compile(
    r"\b(next (?:week|month|time|visit|appointment|review|year)|in (?:a|one|two|three|four|six|"
    r"\d+) (?:weeks?|months?)(?! time ago)|at (?:the|your) (?:next )?(?:review|appointment|visit)|"
    r"after (?:the|your)|once (?:the|your|you)|later on|in the future|down the line)\b"
)


def _done_on(when: DateSpan | None, window: str) -> bool:
    """A start said in the past tense on a day said of it ("... and started the Entresto on
    the 20th, after the gap": done, whatever "after the" says)."""
    return when is not None and when.precision == "day" and _STARTED.search(window) is not None


_STARTED = re.compile(r"\b(started|began|restarted|resumed|initiated|went back on)\b")


def _later(low: str) -> bool:
    """Whether a sentence puts what it says at a later time ("next month we'll start ...", "I
    stop the aspirin next Monday")."""
    return _LATER.search(low) is not None or said_ahead(low) is not None


def _later_for(low: str, drug: Drug) -> bool:
    """Whether a sentence puts a change of ``drug`` at a later time: said before it or in its
    clause, not in a clause joined after it ("I'll start you on citalopram 10 mg, and I'll see
    you again in 6 weeks": the six weeks are the follow-up's)."""
    joined = JOINED.search(low, drug.end)
    return _later(low[: joined.start()] if joined else low)


_STOP = re.compile(
    r"\b(stopped|stopping|stop taking|discontinued|discontinuing|quit|came off|come off|"
    r"finished|completed|"
    r"taken off|stopped taking|took (?:you |me |him |her |them )?off|take (?:you |me |him |her )?"
    r"off|(?<!don't )(?<!do not )(?<!never )stop(?: the| your| his| her| all)?)\b"
)
_START = re.compile(
    r"\b(started|starting|start|restart\w*|resum\w+|(?:went|gone|go|going) back on|begin|began|"
    r"initiat\w+|put (?:you |him |her |me |them )?on|"
    r"prescrib\w+|(?<!repeat )prescription for|adding|add|"
    r"(?:took|taken|had) (?:the |my |his |her |their )?first(?: (?:dose|tablet|one|injection)s?"
    r"(?: of)?)?(?: (?:the|my|his|her|their))?)\b"
)
_SWITCH = re.compile(
    r"\b(switch\w*|chang\w+|mov\w+)\b[^.]*?\bfrom\b"
    r"|\bstop\w*\b[^.]*?\band (?:switch|change|move)\w* (?:you |him |her |them )?(?:over )?to\b"
    # "I'm changing your ramipril to losartan", "switch his amlodipine over to lercanidipine"
    r"|\b(?:switch\w*|chang\w+|swap\w*) (?:(?:you|him|her|them|me) )?(?:your|his|her|my|their|the)"
    r" [a-z][\w/-]*(?: [a-z][\w/-]*)? (?:over |across )?(?:on)?to\b"
)
#: a switch that names only the drug switched to ("we switched you to Symbicort", "change him
#: over to apixaban"): the words before the drug in its clause
_SWITCH_TO = re.compile(
    r"\b(?:switch\w*|chang\w*|mov\w*) (?:(?:you|him|her|them|me|us) )?(?:over |across )?"
    r"(?:(?:my|your|his|her|their|the) (?:inhaler|tablets?|pills?|medicine|medication|patch"
    r"|injection|pen|puffer|capsules?) )?(?:on)?to (?:the |a |your |his |her |their )?$"
)  # "changed my inhaler to Trelegy": the form named, the drug after "to"


_UP = re.compile(
    r"\b(increas\w+|rais\w+|upp\w+|titrat\w+ up|bump\w* up|went up|go(?:es|ing|ne)? up|"
    r"doubl\w+|tripl\w+)\b"
    r"|^\W*up\s+from\b"  # "we put your sertraline up from 50 to 100 milligrams"
)
_DOWN = re.compile(
    r"\b(decreas\w+|reduc\w+|lower\w*|cut\w* (?:it |them |that )?(?:back|down)|went down|"
    r"go(?:es|ing|ne)? down|"
    r"halv\w+|drop\w*)\b"
)
#: a verb of moving with the drug as its object, "up" or "down" after the drug ("put my
#: sertraline up to 100 mg", "brought his bisoprolol down"): the words before the drug ...
_MOVED = re.compile(
    r"\b(?:put|puts|putting|brought|bring|brings|bringing|push\w*|knock\w*|nudg\w*|mov\w*|cut)\s+"
    r"(?:(?:my|your|his|her|their|the|him|me|them|us)\s+)?$"
)
#: ... and the particle after it
_PARTICLE = re.compile(r"^\W*(?:dose\s+)?(up|down)\b")
#: a time of day a dose is taken at ("the morning", "bedtime", "6 pm", "breakfast")
_A_TIME = (
    r"(?:the\s+)?(?:morning|afternoon|evening|night(?:[- ]?time)?|bedtime|lunchtime|teatime|"
    rf"breakfast|lunch|dinner|supper)s?\b|{CLOCK_TIME}"
)
#: a dose moved to another time of day: the new time after "to" ("move it to the morning",
#: "from bedtime to 6 pm"), or before "instead of" / "rather than" the old
_NEW_TIME = re.compile(
    rf"\b(?:to|until)\s+(?:at\s+)?(?P<to>{_A_TIME})"
    rf"|\b(?:in|at|with)\s+(?P<new>{_A_TIME})\s+(?:instead of|rather than)\b"
)
_OLD_TIME = re.compile(
    rf"\b(?:from|instead of|rather than)\s+(?:at\s+|in\s+|with\s+)?(?P<old>{_A_TIME})"
)
_MOVE_WORD = re.compile(r"\b(?:mov\w*|switch\w*|chang\w*|shift\w*|instead of|rather than)\b")


def _retimed(low: str, start: int, stop: int) -> tuple[str, str] | None:
    """The time of day a dose is moved to, and the one it is moved from ("move your quetiapine
    from night-time to 6 pm": ("at 6 pm", "night-time"); "take it in the evening instead of the
    morning": ("in the evening", "the morning")), read after the drug up to ``stop``; None where
    the sentence moves nothing."""
    if not _MOVE_WORD.search(low):
        return None
    new = _NEW_TIME.search(low, start, stop)
    if new is None:
        return None
    old = _OLD_TIME.search(low, start, stop)
    return _at_time(new.group("to") or new.group("new")), old.group("old") if old else ""


def _moved_from(old: str) -> str:
    return f" (moved from {old})" if old else " (time of day moved)"


def _at_time(time: str) -> str:
    """A time of day as a dose is said to be taken at it ("in the morning", "at bedtime")."""
    bare = time.removeprefix("the ").strip()
    if bare in ("morning", "afternoon", "evening"):
        return f"in the {bare}"
    if bare in ("breakfast", "lunch", "dinner", "supper"):
        return f"with {bare}"
    return f"at {bare}"


#: the drug given to someone, the words before it ("I gave her", "they gave me", "was given")
_GAVE = re.compile(
    r"\b(?:gave|given|giving)\s+(?:(?:him|her|me|them|you|us)\s+)?(?:(?:some|the|a|an)\s+)?$"
)
_TAKE = re.compile(
    r"\b(take|takes|taking|took|on|stays? at|continu\w+|remain\w* on|using|use|uses|"
    r"carry on with|carrying on with|keep taking|keep using|"
    r"inject\w*|(?<!n't )(?<!not )(?<!never )(?:give|gives|giving))\b"  # a carer's "I give him
    # his donepezil at night" -- not "don't give her the aspirin", "never give him ibuprofen"
)
_TAKE_QUESTION = re.compile(r"\b(tak\w+|medicines?|medications?|tablets?|on)\b")
#: a drug's start said ("started", "first dose", "a new one"), and a question about what
#: followed a start without naming the drug ("Any side effects since you started?")
_STARTED_SAID = re.compile(r"\b(?:started|starting|first dose|new (?:one|tablet|medicine))\b")
_SINCE_STARTED = re.compile(r"\bsince (?:you|he|she|they) (?:started|began|have started)\b")


def _told_when(r: Named, when: DateSpan) -> bool:
    """Whether ``when`` dates a start or change told in ``r``: not after the sentence's moment,
    and told as done ("we started the allopurinol on the 22nd"), said with its year or against
    the session ("two weeks ago"), or a first dose ("first dose on the 22nd of September")."""
    if when.at > r.session or (_later(r.low) and not told_as_done(r.text)):
        return False  # a day ahead; "after your clinic" in a sentence told as done is past
    return not when.guessed_past or told_as_done(r.text) or bool(_STARTED_SAID.search(r.low))


def _planned(r: Named, drug: Drug, when: DateSpan | None) -> str | None:
    """The words that put a change of ``drug`` at a later day, where they do: its clause names a
    day ahead ("next Monday I stop the aspirin", "tomorrow"), or its date was said with no
    direction in a sentence that tells nothing done ("On Monday, reduce the prednisolone to 20
    mg", "I'm due to start the insulin on Monday", "We'll stop the alendronic acid in March"):
    the next such day, not the last. None for a change made, or made now to begin tomorrow
    ("reduce the amlodipine to 5 mg from tomorrow": the prescription changes today)."""
    a = max(0, drug.start - 60)
    clause = r.low[a : drug.end] + re.split(r"[,;]|\.(?!\d)", r.low[drug.end :], maxsplit=1)[0]
    ahead = said_ahead(clause)
    if ahead is not None and not _FROM_TOMORROW.search(clause):
        return r.text[a + ahead[0] : a + ahead[1]]
    if when is not None and when.guessed_past and not told_as_done(r.text):
        return r.text[when.start : when.end]
    return None


def _hedged(s: Sentence, found: Sequence[Drug]) -> bool:
    """Whether a hedge governs the drugs of a sentence. A doubt the patient's side says after
    the last drug, in a clause of its own, is of how much or how often, not of whether they
    take it ("I use the gel on my wrist, maybe three times a week"); any other hedge -- a
    condition, the clinician's "maybe", a doubt before the drug -- governs the drugs."""
    last = max(d.end for d in found)
    for m in _HEDGE.finditer(s.low):
        doubt = tuple(stems(m.group(1).split())) in cues().doubts
        later = s.speaker != "clinician" and doubt and m.start() > last
        if later and re.search(r"[,;]", s.low[last : m.start()]):
            continue
        if m.group(1) == "in case" and m.start() > last:
            continue  # "a GTN spray, in case chest pain comes on": what it is for
        if _done_so(s.low, m.end()) is None:
            return True
    return False


def _done_so(low: str, after: int) -> int | None:
    """Where a consequence said after a hedge begins, when it is a change made: a clause opened
    by ", so" after the hedge, itself unhedged, with a verb of changing ("They thought the
    citalopram might be causing that, so they stopped it on the 20th": the doubt is of the
    cause, the stop is done)."""
    so = _SO_CLAUSE.search(low, after)
    if so is None:
        return None
    tail = low[so.end() :]
    changed = any(v.search(tail) for v in (_STOP, _START, _UP, _DOWN, _SWITCH))
    return so.end() if changed and _HEDGE.search(tail) is None else None


#: a clause of consequence (", so they stopped it", "; and so I came off it")
_SO_CLAUSE = re.compile(r"[,;]\s*(?:and\s+)?so\s+(?=\w)")


#: a change decided now that begins tomorrow or tonight ("reduce it to 5 mg from tomorrow"): the
#: order as it now stands, not a plan for a later day
_FROM_TOMORROW = re.compile(r"\b(?:from|starting|as of|beginning)\s+(?:tomorrow|tonight)\b")


def _lower(m: re.Match[str]) -> str:
    return m.group(0).lower()


def _planned_verb(window: str, up: bool, down: bool) -> str:
    """The change a plan makes, as its verb."""
    if _STOP.search(window):
        return "stop"
    if up or down:
        return "increase" if up else "decrease"
    return "switch to" if _SWITCH_TO.search(window) else "start"


def _taken(low: str, start: int) -> bool:
    """Whether the words before a drug say the patient took or takes it, not that they cannot
    -- in its clause, or before a name it is another name of ("I take Cardicor, bisoprolol,
    for my heart rate": the clause before the comma)."""
    window = _window(low, start)
    if not window.strip() and (named := _APPOSED.search(low, 0, start)):
        window = _window(low, named.start())  # "Cardicor, bisoprolol": Cardicor's clause
    return bool(_TAKE.search(window) or re.search(r"\btaken\b", window)) and not _CANNOT.search(
        window
    )


#: one word and a comma right before a drug: a name of it the dictionary may not know
_APPOSED = re.compile(r"\b[\w-]+,\s*$")


_CANNOT = re.compile(r"\b(?:can't|cannot|can not|couldn't|don't|mustn't|not|never|no)\b")
