"""Labelled same-type pairs used to measure an embedder's contradiction threshold.

``supersede=True``: the newer statement replaces the older one (an update, a contradiction or
a paraphrase of the same fact). ``False``: two facts of the same type that are both true.
All content is synthetic. Run ``python -m memory_core calibrate`` to measure a model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from itertools import pairwise

import numpy as np

from .embedding.base import Embedder
from .facts import decide_texts, share_key
from .importance import CLINICAL_TYPES, RECORD_TYPES, SAFETY_TYPES
from .ranking import unit_rows


@dataclass(frozen=True)
class Pair:
    memory_type: str
    older: str
    newer: str
    supersede: bool
    verdict: str = ""  # updates | contradicts | duplicate | compatible ("" when unlabelled)
    split: str = ""  # "dev" | "test" in the labelled set
    kind: str = ""  # what the pair exercises (brand-generic, lab-series, negated, ...)
    id: str = ""


# the clinical memory types the labelled set covers, each with both halves (the record types
# are decided by their codes and values)
PAIR_TYPES: tuple[str, ...] = tuple(t for t in CLINICAL_TYPES if t not in RECORD_TYPES)
VERDICTS = frozenset({"updates", "contradicts", "duplicate", "compatible"})
SPLITS = ("dev", "test")
PAIR_SET = "data/clinical_pairs.jsonl"


PAIRS: tuple[Pair, ...] = (
    # --- updates / contradictions / paraphrases (should supersede) ---
    Pair(
        "preference",
        "Patient prefers morning appointments",
        "Patient now prefers afternoon appointments",
        True,
    ),
    Pair(
        "medication",
        "Patient tolerates metformin 500mg well",
        "Patient reports persistent GI distress on metformin; switched to extended-release "
        "formulation",
        True,
    ),
    Pair(
        "lab_result",
        "Patient's HbA1c was 8.2% in January",
        "Patient's HbA1c improved to 7.1% in March",
        True,
    ),
    Pair(
        "preference",
        "Patient prefers morning appointments",
        "Patient likes to be seen early in the day",
        True,
    ),
    Pair(
        "medication",
        "Patient takes lisinopril 10mg daily",
        "Lisinopril increased to 20mg daily for blood pressure",
        True,
    ),
    Pair(
        "medication",
        "Patient on insulin glargine 20 units at bedtime",
        "Insulin glargine dose raised to 26 units at bedtime",
        True,
    ),
    Pair(
        "preference",
        "Patient wants reminders by text message",
        "Patient now prefers reminders by phone call instead of text",
        True,
    ),
    Pair("social", "Patient lives alone", "Patient's daughter has moved in with the patient", True),
    Pair(
        "social",
        "Patient works night shifts at a warehouse",
        "Patient changed to day shifts at the warehouse",
        True,
    ),
    Pair(
        "lab_result", "Patient's eGFR was 72 in February", "Patient's eGFR was 65 in August", True
    ),
    Pair(
        "lab_result",
        "LDL cholesterol 142 mg/dL in April",
        "LDL cholesterol down to 98 mg/dL in October",
        True,
    ),
    Pair(
        "care_plan",
        "Plan: recheck HbA1c in three months",
        "Plan changed: recheck HbA1c in six months",
        True,
    ),
    Pair(
        "condition",
        "Patient has stage 2 chronic kidney disease",
        "Chronic kidney disease progressed to stage 3a",
        True,
    ),
    Pair(
        "preference",
        "Patient prefers written instructions",
        "Patient asks for instructions in writing rather than verbally",
        True,
    ),
    Pair(
        "treatment_response",
        "Fasting glucose well controlled on current regimen",
        "Fasting glucose no longer controlled on current regimen",
        True,
    ),
    Pair(
        "medication",
        "Patient takes atorvastatin 20mg nightly",
        "Atorvastatin stopped due to muscle aches",
        True,
    ),
    Pair(
        "observation",
        "Patient reports walking 20 minutes a day",
        "Patient now walks 45 minutes every day",
        True,
    ),
    Pair(
        "preference",
        "Patient prefers to speak Spanish during visits",
        "Patient prefers Spanish-language visits with an interpreter",
        True,
    ),
    # --- different facts of the same type (both stay) ---
    Pair(
        "allergy",
        "Patient has documented penicillin allergy with anaphylactic reaction",
        "Patient has a sulfa drug allergy causing rash",
        False,
    ),
    Pair(
        "medication",
        "Patient takes metformin 1000mg twice daily",
        "Patient takes lisinopril 10mg daily",
        False,
    ),
    Pair(
        "medication",
        "Patient takes atorvastatin 20mg nightly",
        "Patient uses insulin glargine 20 units at bedtime",
        False,
    ),
    Pair(
        "medication",
        "Patient takes metformin extended-release 500mg",
        "Patient takes metoprolol 25mg twice daily",
        False,
    ),
    Pair(
        "preference",
        "Patient prefers morning appointments",
        "Patient prefers written instructions",
        False,
    ),
    Pair(
        "preference",
        "Patient wants reminders by text message",
        "Patient prefers to speak Spanish during visits",
        False,
    ),
    Pair("social", "Patient lives alone", "Patient works night shifts at a warehouse", False),
    Pair(
        "social",
        "Patient's daughter is the main caregiver",
        "Patient has no car and relies on the bus",
        False,
    ),
    Pair(
        "lab_result",
        "Patient's HbA1c was 8.2% in January",
        "Patient's eGFR was 72 in February",
        False,
    ),
    Pair(
        "lab_result",
        "LDL cholesterol 142 mg/dL in April",
        "Urine albumin-to-creatinine ratio 45 mg/g in April",
        False,
    ),
    Pair("condition", "Patient has type 2 diabetes", "Patient has hypertension", False),
    Pair(
        "condition",
        "Patient has peripheral neuropathy in both feet",
        "Patient has stage 2 chronic kidney disease",
        False,
    ),
    Pair(
        "allergy",
        "Patient is allergic to latex",
        "Patient has a codeine allergy causing hives",
        False,
    ),
    Pair(
        "allergy",
        "Patient reacts to iodine contrast with hives",
        "Patient has documented penicillin allergy with anaphylactic reaction",
        False,
    ),
    Pair(
        "care_plan", "Plan: recheck HbA1c in three months", "Plan: annual dilated eye exam", False
    ),
    Pair(
        "care_plan",
        "Refer to podiatry for foot care",
        "Enrol patient in the diabetes education class",
        False,
    ),
    Pair(
        "observation",
        "Patient reports walking 20 minutes a day",
        "Patient reports occasional dizziness when standing",
        False,
    ),
    Pair(
        "treatment_response",
        "Fasting glucose well controlled on current regimen",
        "Blood pressure responded well to lisinopril",
        False,
    ),
    Pair(
        "adverse_reaction",
        "Patient had GI upset on metformin immediate-release",
        "Patient developed a dry cough on lisinopril",
        False,
    ),
    Pair(
        "observation",
        "Patient lost 3 kg since last visit",
        "Patient reports tingling in the toes at night",
        False,
    ),
    # pairs seen in the demo data (same topic, both true)
    Pair("observation", "Patient skips breakfast on work days",
         "Patient ate out most evenings this week", False),
    Pair("observation", "Patient felt shaky during a long afternoon meeting",
         "Patient described dizziness when standing up quickly", False),
    Pair("care_plan", "Patient needs a urine albumin test once a year",
         "Patient to repeat kidney function tests in three months", False),
    Pair("care_plan", "Patient should check fasting glucose each morning and log it",
         "Patient started a continuous glucose monitor with weekly data review", False),
    Pair("social", "Patient is the daily caregiver for a spouse with dementia",
         "Patient's daughter is the main caregiver and drives to visit", False),
    Pair("lab_result", "Patient's LDL cholesterol was 131 mg/dL in October",
         "Patient's triglycerides was 153 mg/dL in February", False),
    Pair("observation", "Patient weighed 107.8 kg at this session",
         "Patient weighed 107.5 kg at this session", True),
)  # fmt: skip


@dataclass(frozen=True)
class Calibration:
    model_id: str
    threshold: float  # the chosen cut (midpoint of the best separating gap)
    accuracy: float  # at the chosen threshold
    false_supersessions: int  # compatible pairs at or above the threshold
    missed: int  # superseding pairs below the threshold
    similarities: tuple[float, ...]  # one per pair, in PAIRS order


def measure(
    embedder: Embedder,
    pairs: Sequence[Pair] = PAIRS,
    type_thresholds: Mapping[str, float] | None = None,
    threshold: float | None = None,
) -> Calibration:
    """Cosine of every pair; a pair is flagged when its cosine reaches the cut and the default
    rule (different drugs or lab analytes are compatible) agrees; types with their own
    threshold use it. The global threshold is the cut with the highest accuracy, ties broken
    toward fewer false supersessions (a wrongly demoted fact is worse than a missed update),
    then toward the widest margin, placed midway between the neighbouring similarities."""
    texts = [t for p in pairs for t in (p.older, p.newer)]
    vecs = embedder.embed_batch(texts)
    sims = np.einsum("ij,ij->i", unit_rows(vecs[0::2]), unit_rows(vecs[1::2])).astype(float)
    labels = np.array([p.supersede for p in pairs])
    rule = np.array([decide_texts(p.older, p.newer, p.memory_type).supersedes for p in pairs])
    # pairs of a type with its own threshold are decided by it, whatever the global cut
    own = dict(embedder.default_type_thresholds if type_thresholds is None else type_thresholds)
    fixed = np.array([p.memory_type in own for p in pairs])
    fixed_pred = np.array([sims[i] >= own.get(p.memory_type, 2.0) for i, p in enumerate(pairs)])

    def outcome(cut: float) -> tuple[float, int, int]:
        pred = np.where(fixed, fixed_pred, sims >= cut) & rule
        acc = float((pred == labels).mean())
        return acc, int((pred & ~labels).sum()), int((~pred & labels).sum())

    if threshold is not None:  # evaluate a given threshold instead of choosing one
        acc, false_pos, missed = outcome(threshold)
        return Calibration(embedder.model_id, threshold, acc, false_pos, missed, _round(sims))
    # candidate cuts: midway between consecutive similarities of the pairs the global cut
    # decides (no type threshold of their own, not ruled compatible)
    decided = np.unique(np.round(sims[~fixed & rule], 6))
    edges = np.concatenate([[decided[0] - 0.02], decided, [decided[-1] + 0.02]])
    best: tuple[float, int, float, float] | None = None  # (acc, -false_pos, gap, cut)
    for lo, hi in pairwise(edges):
        cut = float((lo + hi) / 2)
        acc, false_pos, _ = outcome(cut)
        key = (acc, -false_pos, float(hi - lo), cut)
        if best is None or key > best:
            best = key
    assert best is not None
    cut = round(best[3], 3)
    acc, false_pos, missed = outcome(cut)
    return Calibration(embedder.model_id, cut, acc, false_pos, missed, _round(sims))


def _round(sims: np.ndarray) -> tuple[float, ...]:
    return tuple(round(float(s), 4) for s in sims)


# --- the labelled clinical pair set (memory_core/data/clinical_pairs.jsonl) -------------------


def load_pairs(split: str | None = None) -> tuple[Pair, ...]:
    """The labelled same-type pair set shipped as package data (``split``: "dev", "test" or
    None for both). The 45 :data:`PAIRS` are part of its dev half."""
    text = files("memory_core").joinpath(PAIR_SET).read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if split is None or r["split"] == split:
            out.append(
                Pair(
                    r["memory_type"],
                    r["older"],
                    r["newer"],
                    bool(r["supersede"]),
                    verdict=r["verdict"],
                    split=r["split"],
                    kind=r.get("kind", ""),
                    id=r["id"],
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class TypeScore:
    """Supersession on one memory type: precision and recall of "the newer replaces the
    older" (1.0 when there is nothing to get wrong)."""

    memory_type: str
    pairs: int
    true_pos: int
    false_pos: int
    false_neg: int

    @property
    def precision(self) -> float:
        flagged = self.true_pos + self.false_pos
        return self.true_pos / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_pos + self.false_neg
        return self.true_pos / wanted if wanted else 1.0


@dataclass(frozen=True)
class SetReport:
    """The current rule (candidates by the embedder's threshold per type or a shared key, then
    the decision table) on one half of the labelled set."""

    split: str
    threshold: float
    per_type: tuple[TypeScore, ...]
    accuracy: float  # supersede / not, over every pair
    safety_false_supersessions: int  # allergy and adverse_reaction pairs wrongly flagged
    wrong: tuple[tuple[Pair, float, bool], ...]  # (pair, cosine, predicted) where wrong

    @property
    def pairs(self) -> int:
        return sum(t.pairs for t in self.per_type)


def report_set(
    embedder: Embedder,
    pairs: Sequence[Pair],
    split: str,
    threshold: float | None = None,
    type_thresholds: Mapping[str, float] | None = None,
) -> SetReport:
    """Per-type precision and recall of supersession on ``pairs`` under the product's rule
    (default: the embedder's own threshold and per-type thresholds)."""
    cut = embedder.default_contradiction_threshold if threshold is None else threshold
    own = dict(embedder.default_type_thresholds if type_thresholds is None else type_thresholds)
    texts = [t for p in pairs for t in (p.older, p.newer)]
    vecs = embedder.embed_batch(texts)
    sims = np.einsum("ij,ij->i", vecs[0::2], vecs[1::2]).astype(float)
    pred = [
        bool(s >= own.get(p.memory_type, cut) or share_key(p.older, p.newer, p.memory_type))
        and decide_texts(p.older, p.newer, p.memory_type).supersedes
        for p, s in zip(pairs, sims, strict=True)
    ]
    per_type = []
    for t in sorted({p.memory_type for p in pairs}, key=_type_order):
        idx = [i for i, p in enumerate(pairs) if p.memory_type == t]
        tp = sum(pred[i] and pairs[i].supersede for i in idx)
        fp = sum(pred[i] and not pairs[i].supersede for i in idx)
        fn = sum(not pred[i] and pairs[i].supersede for i in idx)
        per_type.append(TypeScore(t, len(idx), tp, fp, fn))
    right = [pr == p.supersede for pr, p in zip(pred, pairs, strict=True)]
    safety_fp = sum(
        pr and not p.supersede and p.memory_type in SAFETY_TYPES
        for pr, p in zip(pred, pairs, strict=True)
    )
    wrong = tuple(
        (p, round(float(s), 4), pr)
        for p, s, pr, ok in zip(pairs, sims, pred, right, strict=True)
        if not ok
    )
    acc = sum(right) / len(right) if right else 1.0
    return SetReport(split, cut, tuple(per_type), acc, safety_fp, wrong)


def _type_order(t: str) -> tuple[int, str]:
    return (PAIR_TYPES.index(t) if t in PAIR_TYPES else len(PAIR_TYPES), t)
