"""The inverse rate conversions of memory_core.policy (rate -> "lose X % per period", λ ->
half-life) against domain.md's forms and worked examples, and round trips with the forward
conversions."""

from __future__ import annotations

import math

import pytest

from memory_core.errors import ValidationError
from memory_core.policy import (
    DecayModel,
    half_life_hours,
    hourly_lambda_from_half_life,
    hourly_lambda_from_loss,
    loss_from_hourly_lambda,
    loss_from_monthly_rate,
    monthly_rate_from_loss,
)


@pytest.mark.parametrize("model", ["exponential", "linear"])
def test_twenty_percent_per_six_months_round_trips(model: DecayModel) -> None:
    """domain.md: importance 9, 180 days, "20 % per 6 months" -> 7.2 in both monthly models."""
    rate = monthly_rate_from_loss(model, 0.2, 6)
    loss = loss_from_monthly_rate(model, rate, 6)
    assert loss == pytest.approx(0.2, abs=1e-12)
    assert 9 * (1 - loss) == pytest.approx(7.2)


def test_monthly_golden_values() -> None:
    # exponential r = 0.02: 9 x 0.98**6 = 7.97258... after 6 months (domain.md)
    assert 9 * (1 - loss_from_monthly_rate("exponential", 0.02, 6)) == pytest.approx(
        7.97258, abs=1e-5
    )
    assert loss_from_monthly_rate("linear", 0.02, 6) == pytest.approx(0.12)
    # a half-life is a loss of one half
    assert loss_from_monthly_rate("exponential", 1 - 0.5 ** (1 / 9), 9) == pytest.approx(0.5)
    assert loss_from_monthly_rate("linear", 0.5 / 4, 4) == pytest.approx(0.5)


def test_hourly_golden_values() -> None:
    # domain.md: λ = 0.01/h keeps e^-0.24 = 0.7866 after a day, λ = 0.1/h e^-2.4 = 0.0907
    assert 1 - loss_from_hourly_lambda(0.01, 24) == pytest.approx(0.7866, abs=1e-4)
    assert 1 - loss_from_hourly_lambda(0.1, 24) == pytest.approx(0.0907, abs=1e-4)
    assert loss_from_hourly_lambda(hourly_lambda_from_loss(0.3, 10), 10) == pytest.approx(0.3)
    assert half_life_hours(0.01) == pytest.approx(69.3147, abs=1e-4)  # ln 2 / 0.01
    assert half_life_hours(hourly_lambda_from_half_life(48)) == pytest.approx(48)


def test_edges() -> None:
    assert loss_from_monthly_rate("exponential", 0.0, 6) == 0.0
    assert loss_from_monthly_rate("linear", 0.0, 6) == 0.0
    assert loss_from_hourly_lambda(0.0, 24) == 0.0
    assert half_life_hours(0.0) == math.inf
    # nothing loses more than all of its importance
    assert loss_from_monthly_rate("linear", 0.3, 6) == 1.0
    assert loss_from_monthly_rate("exponential", 1.0, 6) == 1.0
    with pytest.raises(ValidationError):
        loss_from_monthly_rate("strength", 0.02, 6)
    with pytest.raises(ValidationError):
        loss_from_monthly_rate("exponential", -0.1, 6)
    with pytest.raises(ValidationError):
        loss_from_monthly_rate("linear", 0.02, 0)
    with pytest.raises(ValidationError):
        loss_from_hourly_lambda(math.nan, 24)
    with pytest.raises(ValidationError):
        half_life_hours(-1.0)
