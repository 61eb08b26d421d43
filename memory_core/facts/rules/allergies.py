"""The rows about allergies and adverse reactions (always for a reviewer): an empty list and
an allergy it covers, the same agent refuted or reinstated, another reaction, a reaction
changed or resolved, the same agent restated. Pure."""

from __future__ import annotations

import re
from functools import lru_cache

from ..model import ENDED, ClinicalFacts, Context, Decision, Fact, KeyKind, Role, State, Verdict
from ..values import parts
from .base import (
    _LIST,
    STRONG,
    WEAK,
    Pair,
    _additions,
    _changed,
    _compatible,
    _d,
    _negated,
    _states_said,
    _words_apart,
    evidence,
    name_of,
    qualifier_dimensions,
    said,
)


def _allergy_list(p: Pair) -> Decision | None:
    """An empty allergy list ("NKDA") and an allergy it covers: the list changed, or the
    allergy is said not to be there."""
    a, b = p.older.get(_LIST), p.newer.get(_LIST)
    if a is None or b is None or Role.MENTION not in (a.role, b.role) or a.role == b.role:
        return None
    empty, entry = (a, b) if a.role is Role.SUBJECT else (b, a)
    scope = set(parts(empty.value).get("value", "").split("+")) or {"drug"}
    covered = set(parts(entry.value).get("entry", "drug").split("+"))
    if not (covered & (scope - {""}) or scope == {""}):
        return _compatible("allergy.list-scope", "the empty list does not cover this allergy")
    verdict = Verdict.UPDATES if empty is a else Verdict.CONTRADICTS
    words = "no known allergies → an allergy" if empty is a else "an allergy → no known allergies"
    return _d(verdict, "allergy.empty-list", STRONG, f"allergy list: {words}", _LIST)


def _allergy_lists_same(p: Pair) -> Decision | None:
    a, b = p.older.get(_LIST), p.newer.get(_LIST)
    if a is None or b is None or a.role is not Role.SUBJECT or b.role is not Role.SUBJECT:
        return None
    if parts(a.value).get("value") == parts(b.value).get("value"):
        return _d(Verdict.DUPLICATE, "allergy.list-restated", STRONG, evidence(a, b), _LIST)
    return _compatible("allergy.list-scope", "two empty lists of different scope")


def _agents(p: Pair) -> list[tuple[Fact, Fact]]:
    return p.of_kind(KeyKind.ALLERGEN, KeyKind.DRUG, KeyKind.RXNORM, KeyKind.SNOMED)


def _allergy_refuted(p: Pair) -> Decision | None:
    for a, b in _agents(p):
        if b.state is State.REFUTED or (_negated(b) and not _negated(a)):
            return _d(Verdict.CONTRADICTS, "allergy.refuted", STRONG, evidence(a, b), a.key)
        if a.state is State.REFUTED:
            return _d(Verdict.UPDATES, "allergy.reinstated", WEAK, evidence(a, b), a.key)
    return None


def _reactions(f: ClinicalFacts) -> dict[str, Fact]:
    return {x.key: x for x in f.facts if x.kind is KeyKind.CONDITION and x.role is Role.SUBJECT}


def _second_reaction(p: Pair) -> Decision | None:
    """The same agent with reactions that share none, or a newer one said to be another ("also",
    "new"): two facts."""
    agents = _agents(p)
    if not agents:
        return None
    ra, rb = _reactions(p.older), _reactions(p.newer)
    a, b = agents[0]
    if p.memory_type == "allergy" and not _additions(p.newer_text):
        return None  # an allergy is its agent's: another reaction restates or changes it
    none = _said_none(a) or _TOLERATED.search(p.older_text) is not None
    if not ra and rb and p.memory_type == "adverse_reaction" and none:
        # "denies any side effects from sertraline" / "admits reduced libido on sertraline": the
        # older said the agent caused nothing, the newer names a reaction to it
        why = evidence(a, b, "a reaction where the older said none")
        return _d(Verdict.UPDATES, "reaction.first", WEAK, why, a.key)
    if ra and rb and not ra.keys() & rb.keys():
        return _compatible("reaction.another", evidence(a, b, "a second reaction"), a.key)
    if not ra.keys() & rb.keys() and _words_apart(p, outcomes=not _states_said(p.newer_text)):
        return _compatible("reaction.another", evidence(a, b, "another reaction, by its words"))
    if rb.keys() - ra.keys() and _additions(p.newer_text) and not _changed(b):
        return _compatible("reaction.added", evidence(a, b, "a reaction added"), a.key)
    return None


def _class_said_none(p: Pair) -> Decision | None:
    """The older says a class of drugs caused nothing ("No adverse reactions to statins"); the
    newer names a reaction to one of its drugs ("Myalgia on simvastatin, stopped"): the older
    may no longer hold -- two keys, one fact, for a reviewer."""
    said_none = [a for a in p.older.facts if a.kind is KeyKind.DRUG and _said_none(a)]
    told = [r for r in _reactions(p.newer).values() if r.asserted and not _negated(r)]
    if not said_none or not told:
        return None
    for a in said_none:
        members = class_members(a.name)
        for b in p.newer.facts:
            if b.key in members and b.role is Role.SUBJECT and b.asserted and not _said_none(b):
                why = f"{name_of(a)}: {said(a)} → a reaction to {name_of(b)}, one of them"
                return _d(Verdict.UPDATES, "reaction.class-member", WEAK, why, a.key)
    return None


@lru_cache(maxsize=4096)
def class_members(words: str) -> frozenset[str]:
    """The keys of the drugs of the class ``words`` names in full ("statins": atorvastatin,
    simvastatin, ...; questions.json's drug classes); empty when it names none."""
    from ... import vocabulary

    found = vocabulary.find_concepts(words)
    return frozenset(
        k
        for w, c in found
        if c.group == "drug_classes" and w.lower() == words.lower()
        for k in c.keys
    )


def class_keys(drug_key: str) -> frozenset[str]:
    """The keys a drug's classes are read under ("drug:simvastatin": "drug:statin",
    "drug:statins"): where a newer reaction to the drug looks for an older word of its class."""
    return _classes_by_member().get(drug_key, frozenset())


@lru_cache(maxsize=1)
def _classes_by_member() -> dict[str, frozenset[str]]:
    from ... import vocabulary

    out: dict[str, set[str]] = {}
    for c in vocabulary.concepts():
        if c.group == "drug_classes":
            for k in c.keys:
                out.setdefault(k, set()).update(f"{KeyKind.DRUG.value}:{p}" for p in c.phrases)
    return {k: frozenset(v) for k, v in out.items()}


#: An older note that says a drug is tolerated ("Tolerating ramipril without side effects",
#: "tolerates sertraline well", "no problems with metformin"): it caused nothing.
_TOLERATED = re.compile(
    r"\b(?:tolerat\w*|without (?:any )?(?:side effects?|problems?|issues?)|"
    r"no (?:side effects?|problems?|issues?))\b",
    re.IGNORECASE,
)


def _said_none(a: Fact) -> bool:
    """The older statement says its agent caused nothing: the agent negated ("no side effects
    from", "denies any side effects from") or refuted."""
    return Context.NEGATED in a.contexts or a.state is State.REFUTED


def _own_parts(f: Fact) -> dict[str, str]:
    """A fact's value without where and when (a severity, a stage)."""
    return {k: v for k, v in parts(f.value).items() if k not in qualifier_dimensions()}


def _reaction_change(p: Pair) -> Decision | None:
    agents = _agents(p)
    if not agents:
        return None
    ra, rb = _reactions(p.older), _reactions(p.newer)
    for key in ra.keys() & rb.keys():
        x, y = ra[key], rb[key]
        if y.state in ENDED and x.state not in ENDED:
            return _d(Verdict.UPDATES, "reaction.resolved", STRONG, evidence(x, y), key)
        if x.state in ENDED and y.state not in ENDED:
            return _d(Verdict.UPDATES, "reaction.recurred", WEAK, evidence(x, y), key)
        if _own_parts(x) != _own_parts(y) or y.state is State.CHANGED:
            return _d(Verdict.UPDATES, "reaction.changed", WEAK, evidence(x, y), key)
    return None


def _same_agent(p: Pair) -> Decision | None:
    ra, rb = _reactions(p.older), _reactions(p.newer)
    for a, b in _agents(p):
        if p.memory_type == "allergy" and ra.keys() != rb.keys() and rb:
            return _d(Verdict.UPDATES, "allergy.reaction-change", WEAK, evidence(a, b), a.key)
        return _d(Verdict.DUPLICATE, "allergy.same-agent", WEAK, evidence(a, b), a.key)
    return None
