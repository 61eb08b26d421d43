"""A learned second opinion on the assertion step: does a statement read like one that asserts
a change of the patient's own state, or like a question, a rule, a plan, history, reported
speech, another person's fact or a thing only named? (pure)

The assertion step (:mod:`.assertion`) reads what a statement does from phrase rules with
scope; what no rule names (a new way to ask, to advise, to speak of a husband) it reads as
asserted. This model is the caution beside it: a logistic regression over the statement's
words and word pairs (numbers folded to one token), fitted on the dev halves of the held-out
statement sets (``eval/statements``, written by authors who had read no code) -- every newer
statement labelled *not asserted* where its pair keeps the older fact for one of those
reasons, *asserted* otherwise. It can only make the engine more careful: a change the table
would apply at once waits for a reviewer when the model leans to *not asserted* above its
threshold (:func:`..rules._capped`); it never makes a change, nor hides one.

Its weights are data (``memory_core/data/assertion_model.json``), written by ``python -m
eval.assertion_model``, which also chooses the threshold by leaving each author out in turn:
the score that at most 5 % of the held-out asserted changes exceed.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import numpy as np

from ..normalize import fold

#: The data file of the fitted model, in the package.
FILE = ("data", "assertion_model.json")

#: A feature in more than this share of the statements explains nothing (:meth:`reasons`).
COMMON = 0.15

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_WORD = re.compile(r"[a-z0]+|\?|:")


def features(text: str) -> frozenset[str]:
    """The statement's features: its words and adjacent word pairs (folded, lower case, every
    number one token ``0``), a question mark and a colon as words, and ``<endq>`` where the
    statement ends with a question mark."""
    t = _NUMBER.sub(" 0 ", fold(text).lower())
    w = _WORD.findall(t)
    out = set(w) | {f"{a}_{b}" for a, b in itertools.pairwise(w)}
    if text.rstrip().endswith("?"):
        out.add("<endq>")
    return frozenset(out)


@dataclass(frozen=True)
class AssertionModel:
    """Weights per feature, a bias and the threshold above which a statement is read as not
    asserting (see the module's docstring); ``trained_on`` is a digest of the statements it
    was fitted on, ``measured`` what leaving each author out gave, ``common`` the features of
    more than :data:`COMMON` of the statements it was fitted on ("the", "to"): they weigh,
    but say nothing a reviewer can use, so :meth:`reasons` leaves them out."""

    weights: Mapping[str, float]
    bias: float
    threshold: float
    trained_on: str = ""
    measured: Mapping[str, float] = field(default_factory=dict)
    common: frozenset[str] = frozenset()

    def score(self, text: str) -> float:
        """The probability the model gives that ``text`` does not assert (0-1)."""
        s = self.bias + sum(self.weights.get(f, 0.0) for f in features(text))
        return 1.0 / (1.0 + math.exp(-s))

    def leans_not_asserted(self, text: str) -> bool:
        return self.score(text) > self.threshold

    def reasons(self, text: str, n: int = 3) -> tuple[str, ...]:
        """The ``n`` features of ``text`` that weigh most toward *not asserted*, as words
        ("if", "my husband", "his"; a number as ``#``), strongest first."""
        mine = [
            (w, f)
            for f in features(text)
            if (w := self.weights.get(f, 0.0)) > 0 and f not in self.common
        ]
        top = sorted(mine, reverse=True)[:n]
        return tuple(" ".join("#" if p == "0" else p for p in f.split("_")) for _, f in top)

    def to_dict(self) -> dict[str, object]:
        return {
            "threshold": self.threshold,
            "bias": round(self.bias, 5),
            "trained_on": self.trained_on,
            "measured": dict(self.measured),
            "common": sorted(self.common),
            "weights": {f: round(w, 5) for f, w in sorted(self.weights.items())},
        }


def fit(
    texts: Sequence[str],
    not_asserted: Sequence[bool],
    *,
    threshold: float = 0.5,
    l2: float = 1.0,
    min_count: int = 2,
    steps: int = 300,
) -> AssertionModel:
    """A model fitted by ``steps`` of gradient descent on the mean log loss with an L2 penalty
    (``l2`` per statement), over the features seen in at least ``min_count`` statements -- not
    run to the minimum (the number of steps is part of the fit). Deterministic: the same
    statements give the same weights."""
    if len(texts) != len(not_asserted) or not texts:
        raise ValueError("fit needs one label per text, and at least one text")
    feats = [features(t) for t in texts]
    seen = Counter(f for fs in feats for f in fs)
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in seen.items() if n >= min_count))}
    x = np.zeros((len(texts), len(vocab)), np.float64)
    for row, fs in enumerate(feats):
        for f in fs:
            if f in vocab:
                x[row, vocab[f]] = 1.0
    y = np.asarray(not_asserted, np.float64)
    w = np.zeros(len(vocab))
    b = 0.0
    rate = 2.5  # the loss still falls after 300 steps: an early stop, measured as it is
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        w -= rate * (x.T @ (p - y) + l2 * w) / len(y)
        b -= rate * float((p - y).mean())
    weights = {f: float(w[i]) for f, i in vocab.items() if abs(w[i]) >= 1e-4}
    common = frozenset(f for f, n in seen.items() if n > COMMON * len(texts))
    return AssertionModel(weights, b, threshold, common=common)


def from_dict(doc: Mapping[str, object]) -> AssertionModel:
    weights = doc["weights"]
    measured = doc.get("measured", {})
    common = doc.get("common", [])
    if not isinstance(weights, dict) or not isinstance(measured, dict):
        raise ValueError("assertion model: weights and measured must be objects")
    if not isinstance(common, list):
        raise ValueError("assertion model: common must be a list")
    return AssertionModel(
        {str(k): float(v) for k, v in weights.items()},
        float(str(doc["bias"])),
        float(str(doc["threshold"])),
        str(doc.get("trained_on", "")),
        {str(k): float(v) for k, v in measured.items()},
        frozenset(str(f) for f in common),
    )


@lru_cache(maxsize=1)
def model() -> AssertionModel:
    """The package's fitted model (read once, on first use)."""
    path = resources.files("memory_core").joinpath(*FILE)
    return from_dict(json.loads(path.read_text(encoding="utf-8")))


@lru_cache(maxsize=65_536)
def reasons_not_asserted(text: str) -> tuple[str, ...]:
    """Where the package's model reads ``text`` as not asserting: the words that weigh most
    toward it (never empty then); otherwise ``()``."""
    m = model()
    if not m.leans_not_asserted(text):
        return ()
    return m.reasons(text) or ("its wording",)
