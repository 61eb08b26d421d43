"""The rows about treatment responses: the treatment never taken or changed, two
treatments, the outcome's sense flipped, two outcomes, an addition, restated -- all for a
reviewer. Pure."""

from __future__ import annotations

from functools import lru_cache

from ..model import ENDED, ClinicalFacts, Decision, KeyKind, Role, State, Verdict
from ..values import parts
from .base import (
    WEAK,
    Pair,
    _additions,
    _compatible,
    _d,
    _negated,
    _states_said,
    _words_apart,
    evidence,
)


# --- treatment responses --------------------------------------------------------------------------
def _response(p: Pair) -> Decision | None:
    """A response: its outcome (a condition or a result) under a treatment. The treatment said
    never taken, or changed; the same outcome's state flipped; two outcomes or two treatments
    are two facts; the same treatment and outcome restated. Read from words: weak."""
    for rule in (
        _response_refuted,
        _response_treatment,
        _response_by_words,
        _response_outcome,
        _response_two,
    ):
        d = rule(p)
        if d is not None:
            return d
    return None


def _response_refuted(p: Pair) -> Decision | None:
    for a, b in p.of_kind(KeyKind.DRUG):
        if (b.state in (State.REFUTED, State.STOPPED) or _negated(b)) and a.state not in ENDED:
            return _d(Verdict.CONTRADICTS, "response.refuted", WEAK, evidence(a, b), a.key)
    return None


def _response_treatment(p: Pair) -> Decision | None:
    for a, b in p.of_kind(KeyKind.DRUG):
        dose = parts(b.value).get("dose")
        if dose and dose == parts(a.value).get("dose"):
            continue  # changed to the dose the older already said ("since it went up to 10mg")
        if b.state is State.CHANGED and a.state is not State.CHANGED:
            return _d(Verdict.UPDATES, "response.treatment-changed", WEAK, evidence(a, b), a.key)
    return None


def _response_by_words(p: Pair) -> Decision | None:
    """Two treatments the lexicon cannot name ("group diabetes classes", "the glucose sensor")
    told apart by their words: two treatments' effects, two facts."""
    drugs = [f for f in (*p.older.facts, *p.newer.facts) if f.kind is KeyKind.DRUG]
    if not drugs and _words_apart(p):
        return _compatible("response.two-treatments", "two treatments, by their words")
    return None


def _response_outcome(p: Pair) -> Decision | None:
    for a, b in p.of_kind(KeyKind.CONDITION, KeyKind.LOINC):
        if _negated(a) != _negated(b) or _flipped(p):
            return _d(Verdict.UPDATES, "response.outcome-changed", WEAK, evidence(a, b), a.key)
    return None


def _flipped(p: Pair) -> bool:
    """One statement says the treatment works and the other that it does not (the outcome
    words of :data:`RESPONSE_WORDS`)."""
    return _response_sense(p.older_text) * _response_sense(p.newer_text) < 0


def _response_sense(text: str) -> int:
    from ..text import parse

    words = set(parse(text).tokens)
    if words & _BAD:
        return -1
    return 1 if words & _GOOD else 0


_GOOD = frozenset({"helping", "helped", "helps", "working", "works", "controlled", "improved",
                   "improving", "better", "responded", "response", "remission", "effective",
                   "goal", "well", "resolved", "down", "reduced", "relief"})  # fmt: skip
_BAD = frozenset({"not", "no", "failed", "failure", "worse", "unchanged", "despite", "still",
                  "persistent", "ongoing", "isnt", "stopped", "without", "partial"})  # fmt: skip


def _response_two(p: Pair) -> Decision | None:
    drugs_a = {f.key for f in p.older.facts if f.kind is KeyKind.DRUG and f.role is Role.SUBJECT}
    drugs_b = {f.key for f in p.newer.facts if f.kind is KeyKind.DRUG and f.role is Role.SUBJECT}
    if drugs_a and drugs_b and not drugs_a & drugs_b:
        return _compatible("response.two-treatments", "two treatments' effects: two facts")
    outcomes = p.of_kind(KeyKind.CONDITION, KeyKind.LOINC)
    if _outcomes(p.older) and _outcomes(p.newer) and not outcomes:
        return _compatible("response.two-outcomes", "two outcomes of a treatment: two facts")
    if _additions(p.newer_text):
        return _compatible("response.added", "a further response said to be another")
    if not outcomes and _words_apart(p, _sense_stems(), not _states_said(p.newer_text)):
        # how the treatment did ("helping", "not helped") is no outcome: "helping mood" /
        # "hasn't helped her sleep" are two outcomes
        return _compatible("response.two-outcomes", "two outcomes, by their words")
    pairs = outcomes or p.of_kind(KeyKind.DRUG)
    if not pairs:
        return None
    a, b = pairs[0]
    return _d(Verdict.DUPLICATE, "response.restated", WEAK, evidence(a, b), a.key)


@lru_cache(maxsize=1)
def _sense_stems() -> frozenset[str]:
    from ..text import stem

    return frozenset(stem(w) for w in _GOOD | _BAD)


def _outcomes(f: ClinicalFacts) -> frozenset[str]:
    return frozenset(
        x.key for x in f.facts if x.kind in (KeyKind.CONDITION, KeyKind.LOINC) and x.asserted
    )
