"""Golden values of domain.md's decay models, pinned exactly, plus clocks and tiers."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_core import decay
from memory_core.errors import ValidationError
from memory_core.policy import (
    DecayPolicy,
    half_life_months,
    hourly_lambda_from_half_life,
    hourly_lambda_from_loss,
    monthly_rate_from_half_life,
    monthly_rate_from_loss,
)
from memory_core.values import Memory, Tier

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def mem(
    importance: float,
    *,
    age_days: float = 0.0,
    hours_since_access: float | None = None,
    accesses: int = 0,
    pinned: bool = False,
    tier: Tier = Tier.LONG_TERM,
) -> tuple[Memory, datetime]:
    now = T0 + timedelta(days=age_days)
    last = now - timedelta(hours=hours_since_access) if hours_since_access is not None else T0
    return (
        Memory(
            id="m",
            patient_id="p",
            memory_type="observation",
            content="x",
            importance=importance,
            created_at=T0 if hours_since_access is None else min(T0, last),
            last_accessed=last,
            embedding=np.zeros(3, dtype=np.float32),
            embedding_model="test",
            access_count=accesses,
            pinned=pinned,
            tier=tier,
        ),
        now,
    )


def cur(policy: DecayPolicy, **kw: object) -> float:
    m, now = mem(**kw)  # type: ignore[arg-type]
    return decay.current_importance_of(m, policy, now)


def test_exponential_default_rate_180_days() -> None:
    assert cur(DecayPolicy(), importance=9, age_days=180) == pytest.approx(9 * 0.98**6)
    assert cur(DecayPolicy(), importance=9, age_days=180) == pytest.approx(7.97258, abs=1e-5)


def test_exponential_twenty_percent_per_six_months() -> None:
    p = DecayPolicy().with_loss(0.20, 6)
    assert cur(p, importance=9, age_days=180) == pytest.approx(7.2)


def test_linear_twenty_percent_per_six_months() -> None:
    p = DecayPolicy(model="linear").with_loss(0.20, 6)
    assert p.rate == pytest.approx(0.2 / 6)
    assert cur(p, importance=9, age_days=180) == pytest.approx(7.2)


def test_access_boost_adds_before_ceiling() -> None:
    value = cur(DecayPolicy(), importance=9, age_days=180, accesses=4)
    assert value == pytest.approx(min(9 * 0.98**6 + 2.0, 10))
    assert value == pytest.approx(9.97258, abs=1e-5)


def test_floor_after_three_years() -> None:
    assert cur(DecayPolicy(), importance=2, age_days=3 * 365) == pytest.approx(1.0)


def test_boost_cap() -> None:
    assert cur(DecayPolicy(), importance=6, age_days=0, accesses=10) == pytest.approx(9.0)


def test_strength_model_day_old() -> None:
    m, now = mem(5, hours_since_access=24)
    inputs = decay.DecayInputs.from_memories([m])
    s = decay.strength(inputs, DecayPolicy(model="strength", lam=0.01), now.timestamp())
    assert float(s[0]) == pytest.approx(math.exp(-0.24) * 0.75)
    assert float(s[0]) == pytest.approx(0.58997, abs=1e-5)


@pytest.mark.parametrize(("lam", "expected"), [(0.01, 0.7866), (0.1, 0.0907)])
def test_strength_time_factor_alone(lam: float, expected: float) -> None:
    # b = 1.0 gives min(b * 1.5, 1) = 1: the time factor alone
    m, now = mem(10, hours_since_access=24)
    s = decay.strength(
        decay.DecayInputs.from_memories([m]),
        DecayPolicy(model="strength", lam=lam),
        now.timestamp(),
    )
    assert float(s[0]) == pytest.approx(expected, abs=5e-5)


def test_strength_pinned_is_one() -> None:
    m, now = mem(3, hours_since_access=24 * 400, pinned=True)
    s = decay.strength(
        decay.DecayInputs.from_memories([m]), DecayPolicy(model="strength"), now.timestamp()
    )
    assert float(s[0]) == 1.0


def test_pinned_never_decays_in_monthly_models() -> None:
    for model in ("exponential", "linear"):
        p = DecayPolicy(model=model)  # type: ignore[arg-type]
        assert cur(p, importance=7, age_days=2000, pinned=True) == pytest.approx(7.0)


def test_rate_forms_convert_exactly() -> None:
    r = monthly_rate_from_loss("exponential", 0.2, 6)
    assert (1 - r) ** 6 == pytest.approx(0.8)
    h = monthly_rate_from_half_life("exponential", 9)
    assert (1 - h) ** 9 == pytest.approx(0.5)
    assert half_life_months("exponential", h) == pytest.approx(9)
    assert monthly_rate_from_loss("linear", 0.2, 6) == pytest.approx(0.2 / 6)
    assert half_life_months("linear", monthly_rate_from_half_life("linear", 4)) == pytest.approx(4)
    lam = hourly_lambda_from_half_life(24)
    assert math.exp(-lam * 24) == pytest.approx(0.5)
    assert math.exp(-hourly_lambda_from_loss(0.3, 10) * 10) == pytest.approx(0.7)
    p = DecayPolicy(model="strength").with_half_life(48)
    assert p.lam == pytest.approx(math.log(2) / 48)


@pytest.mark.parametrize(
    ("field", "value"),
    [("rate", -0.1), ("rate", float("nan")), ("floor", 11.0), ("boost", -1.0), ("model", "cubic")],
)
def test_bad_policy_values_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as err:
        DecayPolicy(**{field: value})  # type: ignore[arg-type]
    assert err.value.field == field


def test_bad_loss_fraction() -> None:
    with pytest.raises(ValidationError, match="loss"):
        monthly_rate_from_loss("exponential", 1.5, 6)


def test_vectorised_matches_one_by_one() -> None:
    rng = np.random.default_rng(3)
    n = 500
    now = T0 + timedelta(days=800)
    inputs = decay.DecayInputs(
        importance=rng.uniform(1, 10, n),
        created_s=now.timestamp() - rng.uniform(0, 800, n) * 86400,
        last_access_s=now.timestamp() - rng.uniform(0, 100, n) * 86400,
        access_count=rng.integers(0, 12, n).astype(float),
        pinned=rng.random(n) < 0.1,
        short_term=rng.random(n) < 0.2,
    )
    for model in ("exponential", "linear", "strength"):
        p = DecayPolicy(model=model)  # type: ignore[arg-type]
        vec = decay.current_importance(inputs, p, now.timestamp())
        for i in range(0, n, 37):
            one = decay.DecayInputs(
                *(
                    np.asarray(getattr(inputs, f))[i : i + 1]
                    for f in (
                        "importance",
                        "created_s",
                        "last_access_s",
                        "access_count",
                        "pinned",
                        "short_term",
                    )
                )
            )
            assert vec[i] == pytest.approx(decay.current_importance(one, p, now.timestamp())[0])
        assert np.all(vec >= p.floor) and np.all(vec <= p.ceiling)


def test_interactions_clock_ignores_time_away() -> None:
    m, now = mem(8, age_days=365)
    wall = decay.current_importance_of(m, DecayPolicy(), now, sessions_since_access=0)
    inter = decay.current_importance_of(
        m, DecayPolicy(clock="interactions"), now, sessions_since_access=0
    )
    assert inter == pytest.approx(8.0)  # a year away, no sessions missed: no decay
    assert wall == pytest.approx(8 * 0.98 ** (365 / 30))
    # 6 sessions of 14 days = 84 days of decay
    six = decay.current_importance_of(
        m, DecayPolicy(clock="interactions"), now, sessions_since_access=6
    )
    assert six == pytest.approx(8 * 0.98 ** (84 / 30))


def test_hybrid_clock_takes_the_smaller_age() -> None:
    m, now = mem(8, age_days=30)
    hybrid = DecayPolicy(clock="hybrid")
    # 10 sessions = 140 days > 30 days of wall time: wall wins
    assert decay.current_importance_of(m, hybrid, now, 10) == pytest.approx(8 * 0.98**1)
    # 1 session = 14 days < 30 days: interactions win
    assert decay.current_importance_of(m, hybrid, now, 1) == pytest.approx(8 * 0.98 ** (14 / 30))


def test_short_term_tier_decays_faster() -> None:
    p = DecayPolicy(model="strength")
    long_m, now = mem(8, hours_since_access=24)
    short_m, _ = mem(8, hours_since_access=24, tier=Tier.SHORT_TERM)
    inputs = decay.DecayInputs.from_memories([long_m, short_m])
    s = decay.strength(inputs, p, now.timestamp())
    assert s[0] == pytest.approx(min(math.exp(-0.01 * 24), 1) * 1.0)
    assert s[1] == pytest.approx(math.exp(-0.05 * 24))


def test_cleanup_strength_ignores_the_floor() -> None:
    m, now = mem(2, age_days=3 * 365)
    inputs = decay.DecayInputs.from_memories([m])
    p = DecayPolicy()
    assert decay.current_importance(inputs, p, now.timestamp())[0] == pytest.approx(1.0)
    expected = 2 * 0.98 ** (3 * 365 / 30) / 10
    assert decay.cleanup_strength(inputs, p, now.timestamp())[0] == pytest.approx(expected)
    assert expected < 0.1


def test_curve_counts_only_accesses_so_far() -> None:
    m, _ = mem(6)
    times = [T0, T0 + timedelta(days=30), T0 + timedelta(days=60)]
    acc = [T0 + timedelta(days=45)]
    c = decay.curve(m, DecayPolicy(), times, acc)
    assert c[0] == pytest.approx(6.0)
    assert c[1] == pytest.approx(6 * 0.98)
    assert c[2] == pytest.approx(6 * 0.98**2 + 0.5)
