"""The rows about results (lab results, vital signs, observations, social measures) and a
plan's items: another measure, a target, a new value in whatever unit (:mod:`..units`), a
qualitative result flipped, a first value; a plan's test done, cancelled or retimed. Pure."""

from __future__ import annotations

import re

from .. import units
from ..lexicon import lexicon
from ..model import Decision, Fact, KeyKind, State, Verdict
from ..values import parts
from .base import (
    _LIST,
    STRONG,
    WEAK,
    Pair,
    _compatible,
    _d,
    _ingredient,
    evidence,
    name_of,
    one_occasion,
    qualifier_dimensions,
    said,
    words_said,
)


# --- lab results and vitals -----------------------------------------------------------------------
def _labs(p: Pair) -> list[tuple[Fact, Fact]]:
    return [(a, b) for a, b in p.of_kind(KeyKind.LOINC) if not _ingredient(a, b)]


def _lab_other_measure(p: Pair) -> Decision | None:
    """A test and a broader one it belongs to (a fasting glucose and a glucose, an OGTT's
    glucose) are two measurements."""
    labs = p.shared()
    labs = [(a, b) for a, b in labs if a.kind is KeyKind.LOINC]
    if labs and all(_ingredient(a, b) for a, b in labs) and not _labs_exact(p):
        a, b = labs[0]
        return _compatible("lab.other-measure", evidence(a, b, "two measurements"), a.key)
    return None


def _labs_exact(p: Pair) -> list[tuple[Fact, Fact]]:
    return [(a, b) for a, b in _labs(p) if not _ingredient(a, b)]


def _lab_target(p: Pair) -> Decision | None:
    """A target is no result; two targets of one test: a new one updates, the same one is a
    duplicate."""
    for a, b in _labs(p):
        ta, tb = parts(a.value).get("target"), parts(b.value).get("target")
        if bool(ta) != bool(tb):
            return _compatible("lab.target", evidence(a, b, "a target is no result"), a.key)
        if ta and tb:
            if _same_number(ta, tb):
                return _d(Verdict.DUPLICATE, "lab.same-target", STRONG, evidence(a, b), a.key)
            return _d(Verdict.UPDATES, "lab.new-target", STRONG, evidence(a, b), a.key)
    return None


def _lab_value(p: Pair) -> Decision | None:
    """A new value of the same test updates, whatever units the two were written in (strong
    where both convert to the test's unit, or are written alike, and say the same of where and
    when); the same value on another date is a new measurement; the same value and date a
    duplicate. A value the newer says was in error ("Hb 84 filed in error") is no new value
    (whether it refutes the older is the corrections' reading, for a reviewer)."""
    for a, b in _labs(p):
        pa, pb = parts(a.value), parts(b.value)
        if pa.get("value") and pb.get("value") and b.state is not State.REFUTED:
            same = _same_value(a, pa["value"], pb["value"])
            if not same:
                spoilt = words_said(lexicon().spoilt_samples, p.newer_text, _EARLIER)
                ok = same is not None and _same_places(pa, pb) and not spoilt
                why = "" if same is not None else "the two values' units cannot be compared"
                if spoilt:
                    why = f"the sample is said to be {spoilt}: the value may be the sample's"
                strength = STRONG if ok else WEAK
                return _d(Verdict.UPDATES, "lab.new-value", strength, evidence(a, b, why), a.key)
            if a.date and b.date and not _one_time(a.date, b.date):
                return _d(Verdict.UPDATES, "lab.new-date", STRONG, _dated(a, b), a.key)
            return _d(Verdict.DUPLICATE, "lab.same-value", STRONG, evidence(a, b), a.key)
    return None


#: Words that make a spoilt sample an earlier one's ("prior 6.4 was a hemolyzed specimen",
#: "the earlier 5.9 was a haemolysed sample"): the newer value is sound.
_EARLIER = frozenset({"prior", "earlier", "previous", "last", "first", "old", "original"})


def _one_time(x: str, y: str) -> bool:
    """Two dates a reading's may be at once: the same, or one holds the other ("2026-01"
    holds the 5th of January; "--01", a January of a year not said, any January)."""
    if x.startswith("--") or y.startswith("--"):
        month = [d[2:4] if d.startswith("--") else d[5:7] for d in (x, y)]
        return "" in month or month[0] == month[1]
    return x.startswith(y) or y.startswith(x)


def _same_places(pa: dict[str, str], pb: dict[str, str]) -> bool:
    """Both readings say the same of where and when (or neither says): one said "after her
    run" and the other nothing may be two readings."""
    return all(pa.get(d) == pb.get(d) for d in qualifier_dimensions())


def _same_value(f: Fact, x: str, y: str) -> bool | None:
    """Whether two values of ``f``'s test are one (:func:`.units.same_value`: converted to the
    test's unit, within rounding); None when their units cannot be compared."""
    lex = lexicon()
    analyte = lex.analyte_for_code(f.name) if f.kind is KeyKind.LOINC else None
    return units.same_value(lex, analyte, x, y)


def _same_number(x: str, y: str) -> bool:
    """Two targets are one number (a target's unit is its test's)."""
    try:
        return float(x.split(" ")[0]) == float(y.split(" ")[0])
    except ValueError:
        return x == y


def _dated(a: Fact, b: Fact) -> str:
    return f"same test {name_of(a)}: {said(a)} on {a.date} → {said(b)} on {b.date}"


def _lab_result(p: Pair) -> Decision | None:
    for a, b in _labs(p):
        ra, rb = parts(a.value).get("result"), parts(b.value).get("result")
        if ra and rb:
            if ra != rb:
                return _d(Verdict.UPDATES, "lab.result-flip", STRONG, evidence(a, b), a.key)
            return _d(Verdict.DUPLICATE, "lab.same-result", STRONG, evidence(a, b), a.key)
    return None


def _lab_newer_value(p: Pair) -> Decision | None:
    for a, b in _labs(p):
        pa, pb = parts(a.value), parts(b.value)
        if (pb.get("value") or pb.get("result")) and not (pa.get("value") or pa.get("result")):
            return _d(Verdict.UPDATES, "lab.first-value", WEAK, evidence(a, b), a.key)
        if p.memory_type == "care_plan" and a.state == b.state and not (pa or pb):
            return _d(Verdict.DUPLICATE, "plan.restated", WEAK, evidence(a, b), a.key)
    return None


#: A plan item that recurs ("every year", "annual", "twice a week", "every 3 months").
_RECURS = re.compile(
    r"\b(?:every|each)\s+(?:\d+\s+|other\s+)?(?:day|week|fortnight|month|year)s?\b"
    r"|\b(?:annual(?:ly)?|yearly|monthly|weekly|fortnightly|quarterly|daily)\b"
    r"|\b(?:once|twice)\s+(?:a|per)\s+(?:week|month|year)\b",
    re.IGNORECASE,
)


def _recurs(text: str) -> bool:
    return _RECURS.search(text) is not None


#: The states of a vaccine or procedure still to do: due, booked, declined, not given.
_TO_DO = frozenset({State.PLANNED, State.CANCELLED})
#: ... and of one given or done: said done, or recorded by a note of its type.
_GIVEN = frozenset({State.DONE, State.ACTIVE, None})


def _later_dose(p: Pair, a: Fact, b: Fact) -> bool:
    """A later dose of one vaccine, given to the patient ("Tetanus: last booster 2010" /
    "Tetanus booster given today"): the last dose now, for a reviewer (a dose given stays a
    fact of the history; a course may want every dose kept)."""
    # a dose given or recorded ("Had my covid booster on Saturday") is a later one unless it
    # is dated no later than the older's ("Flu jab done Oct 2024": the same dose restated)
    later = b.state in (State.DONE, State.ACTIVE) and not (a.date and b.date and b.date <= a.date)
    return (
        p.memory_type == "immunization"
        and (a.state in _GIVEN or a.state is State.STOPPED)  # "2 of 3 doses completed"
        and later
        and b.asserted
        and a.key == b.key
    )


def _removed(a: Fact, b: Fact) -> bool:
    """A procedure's device in place (a catheter, a line: slots.json's procedures) said removed,
    as the patient's own fact now."""
    return (
        a.kind is KeyKind.SLOT
        and a.state is State.ACTIVE
        and b.state is State.STOPPED
        and b.asserted
    )


def _plan_item(p: Pair) -> Decision | None:
    """A plan's test, procedure or follow-up: done or cancelled, due at another time, or the
    same item restated. A vaccine or a procedure due, booked, declined or not given that is
    then given or done: done (a dose given says nothing of the next one due)."""
    for a, b in p.of_kind(KeyKind.LOINC, KeyKind.SLOT, KeyKind.DRUG):
        if a.key == _LIST:
            continue
        if p.memory_type != "care_plan":
            # a vaccine or procedure the note of its type records ("Got my flu shot at CVS")
            if b.state in _GIVEN and a.state in _TO_DO and b.asserted:
                return _d(Verdict.UPDATES, "plan.done-or-cancelled", STRONG, evidence(a, b), a.key)
            if _removed(a, b):  # "urinary catheter in situ" / "catheter removed today"
                why = "what was in place is removed"
                return _d(
                    Verdict.UPDATES, "plan.done-or-cancelled", STRONG, evidence(a, b, why), a.key
                )
            if _later_dose(p, a, b):
                why = "a later dose: the older one stays in the history"
                return _d(Verdict.UPDATES, "plan.later-dose", WEAK, evidence(a, b, why), a.key)
            continue
        ta, tb = parts(a.value).get("timing"), parts(b.value).get("timing")
        if b.state in (State.DONE, State.CANCELLED, State.REFUTED) and b.state != a.state:
            once = b.state is State.CANCELLED and one_occasion(p.newer_text)
            # a recurring item ("eye screening every year") done: this time, or for good?
            recurring = b.state is State.DONE and (bool(ta) or _recurs(p.older_text))
            strength = WEAK if once or recurring else STRONG  # "physio cancelled this week"
            return _d(Verdict.UPDATES, "plan.done-or-cancelled", strength, evidence(a, b), a.key)
        if ta and tb and ta != tb:
            strength = STRONG if b.state is State.CHANGED else WEAK
            return _d(Verdict.UPDATES, "plan.new-timing", strength, evidence(a, b), a.key)
    return None
