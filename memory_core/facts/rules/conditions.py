"""The rows about conditions (condition, observation): a precursor progressed to its diagnosis;
ended, denied or asserted, a new stage or spread, another episode, restated; two episodes of
history dated apart. Pure."""

from __future__ import annotations

from ..lexicon import lexicon
from ..model import ENDED, Decision, Fact, KeyKind, Role, State, Verdict
from ..values import parts
from .base import (
    STRONG,
    WEAK,
    Pair,
    _additions,
    _compatible,
    _d,
    _negated,
    _spread,
    evidence,
    qualifier_dimensions,
)


# --- conditions -----------------------------------------------------------------------------------
def _conditions(p: Pair) -> list[tuple[Fact, Fact]]:
    return p.of_kind(KeyKind.CONDITION, KeyKind.SNOMED)


def _current(facts: tuple[Fact, ...]) -> list[Fact]:
    return [
        f
        for f in facts
        if f.kind is KeyKind.CONDITION
        and f.role is Role.SUBJECT
        and f.asserted
        and f.state not in ENDED
        and not _negated(f)
    ]


def _condition_progressed(p: Pair) -> Decision | None:
    """The newer asserts a diagnosis the older's condition progresses to (conditions.json's
    ``follows``: "HbA1c 52 and 50 on two samples, confirming type 2 diabetes" after
    "prediabetes"): the precursor is history -- an update, for a reviewer (two keys, and a
    diagnosis may be written beside its precursor on purpose)."""
    newer = _current(p.newer.facts)
    if not newer:  # most pairs: the older's conditions are not read
        return None
    concepts = lexicon().concepts
    older = _current(p.older.facts)
    for b in newer:
        concept = concepts.get(b.name)
        for a in older:
            if concept is not None and a.name in concept.follows:
                why = f"{a.name} → {b.name}, the diagnosis it progresses to"
                return _d(Verdict.UPDATES, "condition.progressed", WEAK, why, a.key)
    return None


def _condition_ended(p: Pair) -> Decision | None:
    for a, b in _conditions(p):
        if b.state is State.REFUTED and a.state is not State.REFUTED:
            return _d(Verdict.CONTRADICTS, "condition.refuted", STRONG, evidence(a, b), a.key)
        if b.state is State.RESOLVED and a.state not in ENDED:
            return _d(Verdict.UPDATES, "condition.resolved", STRONG, evidence(a, b), a.key)
    return None


def _condition_presence(p: Pair) -> Decision | None:
    """One statement says the condition is there, the other that it is not ("denies chest
    pain" / "chest pain on exertion"; "HTN" / "no hypertension")."""
    for a, b in _conditions(p):
        if _negated(a) != _negated(b):
            verdict = Verdict.UPDATES if _negated(a) else Verdict.CONTRADICTS
            return _d(verdict, "condition.presence", WEAK, evidence(a, b), a.key)
        if a.state in ENDED and b.state not in ENDED:
            return _d(Verdict.UPDATES, "condition.recurred", WEAK, evidence(a, b), a.key)
    return None


def _condition_stage(p: Pair) -> Decision | None:
    for a, b in _conditions(p):
        if _spread(p.newer_text):
            return _d(Verdict.UPDATES, "condition.spread", STRONG, evidence(a, b), a.key)
        pa, pb = parts(a.value), parts(b.value)
        common = [k for k in pa if k in pb and pa[k] != pb[k] and k not in qualifier_dimensions()]
        if common:
            return _d(Verdict.UPDATES, "condition.new-stage", STRONG, evidence(a, b), a.key)
        if b.state is State.CHANGED:
            return _d(Verdict.UPDATES, "condition.changed", WEAK, evidence(a, b), a.key)
    return None


def _condition_episode(p: Pair) -> Decision | None:
    """The newer names another episode or another one of the condition ("new DVT", "a second
    UTI"), or an episode of the condition the older names ("asthma attack", "COPD
    exacerbation" after "asthma", "COPD"): two facts."""
    for a, b in _conditions(p):
        episode = "episode" in parts(b.value) and "episode" not in parts(a.value)
        if (
            (episode or _additions(p.newer_text))
            and b.state not in ENDED
            and b.state is not State.CHANGED
        ):
            return _compatible("condition.another", evidence(a, b, "another one"), a.key)
    return None


#: States that close an episode of something (a course stopped, an illness resolved, a plan item
#: done): two statements of one, each on its own date, are two episodes.
EPISODE_ENDS = ENDED | {State.DONE}


def _dated_episodes(p: Pair) -> Decision | None:
    """The same thing ended in both statements, each on a date of its own ("acute bronchitis,
    resolved 2015-06-04" / "..., resolved 2016-03-29"; two antenatal blood tests done): two
    episodes, both true history -- neither replaces the other, nothing for a reviewer."""
    for a, b in p.about():
        if a.state is b.state and a.state in EPISODE_ENDS and "" != a.date != b.date != "":
            return _compatible(
                "episode.dated-apart", evidence(a, b, "two episodes, dated apart"), a.key
            )
    return None


def _condition_restated(p: Pair) -> Decision | None:
    for a, b in _conditions(p):
        if a.state == b.state:
            return _d(Verdict.DUPLICATE, "condition.restated", WEAK, evidence(a, b), a.key)
    return None
