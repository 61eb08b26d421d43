"""Policies: the values a reviewer tunes. Pure data plus exact rate conversions."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from .errors import ValidationError

DecayModel = Literal["exponential", "linear", "strength"]
Clock = Literal["wall", "interactions", "hybrid"]
RankingMode = Literal["hybrid", "similarity", "weighted"]
RANKING_MODES: tuple[RankingMode, ...] = ("hybrid", "similarity", "weighted")
#: Ranking-mode names of older saved policies, and what they load as (see :class:`RankingPolicy`).
LEGACY_RANKING_MODES: dict[str, RankingMode] = {"score": "hybrid", "default": "hybrid"}
SupersedeMode = Literal["auto", "review"]

DAYS_PER_MONTH = 30.0

# --- rate conversions (domain.md: "the forms must convert exactly") -----------------------


def monthly_rate_from_loss(model: DecayModel, loss: float, period_months: float) -> float:
    """Monthly rate r such that a memory loses ``loss`` (0-1) of its importance in
    ``period_months``: exponential ``(1 - r) ** P = 1 - X``; linear ``r = X / P``."""
    _check_fraction("loss", loss)
    _check_positive("period_months", period_months)
    if model == "exponential":
        return float(1.0 - (1.0 - loss) ** (1.0 / period_months))
    if model == "linear":
        return loss / period_months
    raise ValidationError("model", f"monthly rates apply to exponential/linear, not {model!r}")


def monthly_rate_from_half_life(model: DecayModel, half_life_months: float) -> float:
    """Monthly rate that halves importance in ``half_life_months``."""
    return monthly_rate_from_loss(model, 0.5, half_life_months)


def hourly_lambda_from_loss(loss: float, period_hours: float) -> float:
    """λ per hour of the strength model such that ``exp(-λ P) = 1 - X``."""
    _check_fraction("loss", loss)
    _check_positive("period_hours", period_hours)
    return -math.log(1.0 - loss) / period_hours


def hourly_lambda_from_half_life(half_life_hours: float) -> float:
    _check_positive("half_life_hours", half_life_hours)
    return math.log(2.0) / half_life_hours


def half_life_months(model: DecayModel, monthly_rate: float) -> float:
    """Inverse of :func:`monthly_rate_from_half_life` (inf for a zero rate)."""
    if monthly_rate <= 0:
        return math.inf
    if model == "linear":
        return 0.5 / monthly_rate
    return math.log(0.5) / math.log(1.0 - monthly_rate)


def loss_from_monthly_rate(model: DecayModel, monthly_rate: float, period_months: float) -> float:
    """Inverse of :func:`monthly_rate_from_loss`: the fraction (0-1) of its importance a memory
    loses in ``period_months`` at ``monthly_rate``: exponential ``X = 1 - (1 - r) ** P``;
    linear ``X = r * P``. At most 1 (all of it): a linear rate times a long period, or an
    exponential rate of 1 or more, loses everything."""
    _check_rate("monthly_rate", monthly_rate)
    _check_positive("period_months", period_months)
    if model == "exponential":
        return float(1.0 - (1.0 - min(monthly_rate, 1.0)) ** period_months)
    if model == "linear":
        return min(monthly_rate * period_months, 1.0)
    raise ValidationError("model", f"monthly rates apply to exponential/linear, not {model!r}")


def loss_from_hourly_lambda(lam: float, period_hours: float) -> float:
    """Inverse of :func:`hourly_lambda_from_loss`: the fraction the strength model's time
    factor loses in ``period_hours``, ``X = 1 - exp(-λ P)``."""
    _check_rate("lam", lam)
    _check_positive("period_hours", period_hours)
    return 1.0 - math.exp(-lam * period_hours)


def half_life_hours(lam: float) -> float:
    """Inverse of :func:`hourly_lambda_from_half_life` (inf for a zero λ)."""
    _check_rate("lam", lam)
    return math.log(2.0) / lam if lam > 0 else math.inf


def _check_rate(name: str, value: float) -> None:
    if not _finite(value) or value < 0:
        raise ValidationError(name, f"must be a finite rate >= 0, got {value!r}")


def _check_fraction(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and 0.0 < value < 1.0):
        raise ValidationError(name, f"must be a fraction strictly between 0 and 1, got {value!r}")


def _check_positive(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValidationError(name, f"must be a positive number, got {value!r}")


# --- the policies ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DecayPolicy:
    """How current importance is computed from base importance, age and use.

    ``rate`` (per month) drives the exponential/linear models and ``lam`` (per hour) the
    strength model; both are the *long-term* tier's rates. ``short_term_rate`` and
    ``short_term_lam`` apply to short-term memories.
    """

    model: DecayModel = "exponential"
    rate: float = 0.02
    lam: float = 0.01
    boost: float = 0.5
    boost_cap: float = 3.0
    floor: float = 1.0
    ceiling: float = 10.0
    strength_boost: float = 0.05
    strength_boost_cap: float = 0.3
    clock: Clock = "wall"
    session_length_days: float = 14.0  # one session counts as this much time (interactions)
    short_term_rate: float = 0.30
    short_term_lam: float = 0.05
    promote_after: int = 3  # short-term accesses before promotion to long-term
    cleanup_threshold: float = 0.05
    warn_threshold: float = 8.0  # current importance that earns the ⚠️ marker

    def __post_init__(self) -> None:
        if self.model not in ("exponential", "linear", "strength"):
            raise ValidationError("model", f"unknown decay model {self.model!r}")
        if self.clock not in ("wall", "interactions", "hybrid"):
            raise ValidationError("clock", f"unknown clock {self.clock!r}")
        for name in ("rate", "short_term_rate"):
            v = getattr(self, name)
            if not (_finite(v) and v >= 0 and (self.model == "linear" or v < 1.0)):
                raise ValidationError(name, f"must be a finite rate in [0, 1), got {v!r}")
        for name in (
            "lam",
            "short_term_lam",
            "boost",
            "boost_cap",
            "strength_boost",
            "strength_boost_cap",
        ):
            v = getattr(self, name)
            if not (_finite(v) and v >= 0):
                raise ValidationError(name, f"must be a finite number >= 0, got {v!r}")
        if not (_finite(self.floor) and _finite(self.ceiling) and 0 <= self.floor <= self.ceiling):
            raise ValidationError(
                "floor", "floor and ceiling must be finite, 0 <= floor <= ceiling"
            )
        if not (_finite(self.session_length_days) and self.session_length_days > 0):
            raise ValidationError("session_length_days", "must be a positive number")
        if not (isinstance(self.promote_after, int) and self.promote_after >= 1):
            raise ValidationError("promote_after", "must be an integer >= 1")
        if not (_finite(self.cleanup_threshold) and 0 <= self.cleanup_threshold <= 1):
            raise ValidationError("cleanup_threshold", "must be a strength between 0 and 1")

    def with_loss(self, loss: float, period: float, *, tier: str = "long_term") -> DecayPolicy:
        """Set the rate of ``tier`` as "lose ``loss`` per ``period``" (months for the monthly
        models, hours for the strength model)."""
        if self.model == "strength":
            return self._set_rate(tier, hourly_lambda_from_loss(loss, period))
        return self._set_rate(tier, monthly_rate_from_loss(self.model, loss, period))

    def with_half_life(self, half_life: float, *, tier: str = "long_term") -> DecayPolicy:
        """Set the rate of ``tier`` from a half-life (months, or hours for strength)."""
        if self.model == "strength":
            return self._set_rate(tier, hourly_lambda_from_half_life(half_life))
        return self._set_rate(tier, monthly_rate_from_half_life(self.model, half_life))

    def _set_rate(self, tier: str, value: float) -> DecayPolicy:
        short = tier == "short_term"
        if self.model == "strength":
            return replace(self, short_term_lam=value) if short else replace(self, lam=value)
        return replace(self, short_term_rate=value) if short else replace(self, rate=value)


@dataclass(frozen=True)
class ContradictionPolicy:
    """When a newer memory supersedes an older one of the same type."""

    threshold: float | None = None  # None: the embedder's measured default
    # per-type cosine thresholds; types not named use `threshold` (or the embedder's own
    # per-type defaults, then its global default)
    type_thresholds: dict[str, float] = field(default_factory=dict)
    modes: dict[str, SupersedeMode] = field(
        default_factory=lambda: {"allergy": "review", "adverse_reaction": "review"}
    )
    default_mode: SupersedeMode = "auto"
    # types never compared (every value of a series is its own fact): none by default
    exempt_types: tuple[str, ...] = ()

    def mode_for(self, memory_type: str) -> SupersedeMode:
        return self.modes.get(memory_type, self.default_mode)


@dataclass(frozen=True)
class RankingPolicy:
    """How candidates are found and ordered.

    Modes: ``hybrid`` (the default): score = relevance × current importance / 10, where
    relevance (``ranking.hybrid_relevance``) combines the cosine and the BM25 evidence with
    ``keyword_weight`` on the keyword half, and the candidate pool is the best
    ``candidate_pool`` by that relevance; ``similarity`` (the seed's rule): score = cosine ×
    current importance / 10 over the pool picked by reciprocal-rank fusion (``rrf_k``);
    ``weighted``: α·fused + β·importance + γ·recency, min-max normalised, over the RRF pool.

    Older saved policies named the default mode ``score`` (cosine × importance, which was
    then domain.md's default score). It loads as ``hybrid``: every saved policy carries the
    mode whether or not anyone chose it (``to_dict`` writes every field) and no screen ever
    offered another, so a saved ``score`` is the untouched default, and the default score is
    now the hybrid one. The seed's rule stays one word away: ``mode="similarity"``.
    """

    mode: RankingMode = "hybrid"
    alpha: float = 1.0  # weighted mode: relevance
    beta: float = 1.0  # weighted mode: importance
    gamma: float = 1.0  # weighted mode: recency
    recency_half_life_days: float = 30.0
    rrf_k: int = 60
    candidate_pool: int = 50
    always_include_types: tuple[str, ...] = ("allergy",)
    keyword_weight: float = 0.4  # hybrid mode: the BM25 half's share of the relevance
    # a memory about a clinical key the question names (its own words read by the facts
    # reader, its body systems' analytes) is a keyword match as good as the best word match
    key_matches: bool = True

    def __post_init__(self) -> None:
        if self.mode not in RANKING_MODES:
            raise ValidationError(
                "mode", f"unknown ranking mode {self.mode!r} (one of {', '.join(RANKING_MODES)})"
            )
        if not (_finite(self.keyword_weight) and 0.0 <= self.keyword_weight <= 1.0):
            raise ValidationError("keyword_weight", "must be a number between 0 and 1")
        if not isinstance(self.key_matches, bool):
            raise ValidationError("key_matches", f"must be true or false, got {self.key_matches!r}")
        for name in ("rrf_k", "candidate_pool"):
            v = getattr(self, name)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                raise ValidationError(name, f"must be an integer >= 1, got {v!r}")
        for name in ("alpha", "beta", "gamma"):
            if not _finite(getattr(self, name)):
                raise ValidationError(name, "must be a finite number")
        if not (_finite(self.recency_half_life_days) and self.recency_half_life_days > 0):
            raise ValidationError("recency_half_life_days", "must be a positive number")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankingPolicy:
        """A saved ranking policy; an older mode name loads as its successor
        (:data:`LEGACY_RANKING_MODES`)."""
        r = dict(data)
        if "always_include_types" in r:
            r["always_include_types"] = tuple(r["always_include_types"])
        mode = r.get("mode")
        if isinstance(mode, str) and mode in LEGACY_RANKING_MODES:
            r["mode"] = LEGACY_RANKING_MODES[mode]
        return cls(**r)


@dataclass(frozen=True)
class ContextPolicy:
    """The annotations written on a memory's own line of the injected section (each counted in
    the token budget): a pending supersession, a possibly-stale flag, a lab result's history;
    and the lines the section shares (issue 23, docs/section.md): ``lists`` -- a question asking
    for a kind ("what medications") gets every current one on one line; ``history_last`` --
    what ended goes after the current memories of its type (two or more on one line);
    ``allergy_pairs`` -- an allergy and the newer statement pending review against it are one
    line; ``answer_places`` -- the best memory about each thing the question names (a slot, a
    key, a drug class; issue 32) holds a place. Switching the last four off gives the seed's
    line-per-memory section.

    ``dated_types`` (issue 35, "Say when last confirmed"): the memory types whose lines carry
    the date their fact was last asserted -- "(recorded 3 Mar 2026)", or "(last confirmed 14
    May 2026)" when a confirmation after it is in effect (docs/section.md); on a memory's own
    line and on a list's entries, counted in the token budget. Medications only by default:
    "glargine 12 units at bedtime" is a different answer a year on."""

    annotate_pending: bool = True
    annotate_stale: bool = True
    annotate_lab_history: bool = True
    lab_history_max: int = 3  # superseded values shown, newest first
    lists: bool = True
    history_last: bool = True
    allergy_pairs: bool = True
    answer_places: bool = True
    dated_types: tuple[str, ...] = ("medication",)

    def __post_init__(self) -> None:
        # a saved policy gives a list back (JSON): the same types, kept as a tuple
        object.__setattr__(self, "dated_types", _type_names("dated_types", self.dated_types))
        for name in (
            "annotate_pending",
            "annotate_stale",
            "annotate_lab_history",
            "lists",
            "history_last",
            "allergy_pairs",
            "answer_places",
        ):
            if not isinstance(getattr(self, name), bool):
                raise ValidationError(name, f"must be true or false, got {getattr(self, name)!r}")
        n = self.lab_history_max
        if not (isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 10):
            raise ValidationError("lab_history_max", f"must be an integer from 1 to 10, got {n!r}")


@dataclass(frozen=True)
class EnginePolicy:
    decay: DecayPolicy = field(default_factory=DecayPolicy)
    contradiction: ContradictionPolicy = field(default_factory=ContradictionPolicy)
    ranking: RankingPolicy = field(default_factory=RankingPolicy)
    importance_rules: Literal["clinical", "general"] = "clinical"
    review_gated_types: tuple[str, ...] = ("allergy", "adverse_reaction")
    context: ContextPolicy = field(default_factory=ContextPolicy)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EnginePolicy:
        try:
            decay = DecayPolicy(**data.get("decay", {}))
            c = dict(data.get("contradiction", {}))
            if "exempt_types" in c:
                c["exempt_types"] = tuple(c["exempt_types"])
            contradiction = ContradictionPolicy(**c)
            ranking = RankingPolicy.from_dict(data.get("ranking", {}))
            context = ContextPolicy(**data.get("context", {}))
        except TypeError as exc:
            raise ValidationError("policy", f"unknown policy field: {exc}") from exc
        rules = data.get("importance_rules", "clinical")
        if rules not in ("clinical", "general"):
            raise ValidationError("importance_rules", f"unknown rule set {rules!r}")
        gated = tuple(data.get("review_gated_types", ("allergy", "adverse_reaction")))
        return cls(decay, contradiction, ranking, rules, gated, context)


def _type_names(name: str, value: Any) -> tuple[str, ...]:
    """A sequence of memory type names as a tuple (a bare string is one name spelt out letter
    by letter, so it is refused, as is anything but non-empty strings)."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValidationError(name, f"must be a list of memory types, got {value!r}")
    for t in value:
        if not (isinstance(t, str) and t.strip()):
            raise ValidationError(name, f"must name memory types, got {t!r}")
    return tuple(dict.fromkeys(value))


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
