"""The validators' quick paths for a bulk add (a UTC datetime taken as it is, the embedding's
float64 sum of squares) decide as the full checks do, and a bad access time is named as before:
the first one that is no valid timestamp, else the first one before ``created_at``."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from memory_core import validation as v
from memory_core.errors import ValidationError

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
CREATED = NOW - timedelta(days=10)


def test_a_utc_datetime_is_taken_as_it_is_and_others_are_converted() -> None:
    t = NOW - timedelta(hours=1)
    assert v.timestamp(t, "at", NOW) is t
    east = t.astimezone(timezone(timedelta(hours=5, minutes=30)))
    out = v.timestamp(east, "at", NOW)
    assert out == t and out.tzinfo is UTC
    assert v.timestamp("2026-11-30T11:00:00Z", "at", NOW) == t


@pytest.mark.parametrize(
    "value",
    [NOW + timedelta(seconds=6), (NOW + timedelta(minutes=1)).astimezone(timezone.max)],
)
def test_a_future_timestamp_is_refused_either_way(value: datetime) -> None:
    with pytest.raises(ValidationError, match="in the future") as err:
        v.timestamp(value, "created_at", NOW)
    assert err.value.field == "created_at"


def test_access_times_name_the_first_bad_timestamp_before_any_early_one() -> None:
    early = CREATED - timedelta(days=1)
    ok = CREATED + timedelta(days=1)
    with pytest.raises(ValidationError) as err:
        v.access_times([early, ok, "not a time"], CREATED, NOW)
    assert err.value.field == "access_times[2]"
    with pytest.raises(ValidationError, match="before the memory's created_at") as err:
        v.access_times([ok, early, early], CREATED, NOW)
    assert err.value.field == "access_times[1]"
    with pytest.raises(ValidationError) as err:
        v.access_times([ok, datetime(2026, 1, 1)], CREATED, NOW)  # naive
    assert err.value.field == "access_times[1]"


def test_access_times_are_sorted_tuples_and_sequences_only() -> None:
    a, b = CREATED + timedelta(days=2), CREATED + timedelta(days=1)
    assert v.access_times([a, b], CREATED, NOW) == (b, a)
    assert v.access_times((a,), CREATED, NOW) == (a,)
    assert v.access_times([], CREATED, NOW) == ()
    assert v.access_times(None, CREATED, NOW) == ()
    for bad in ("2026-11-01T00:00:00Z", {a}, 5):
        with pytest.raises(ValidationError) as err:
            v.access_times(bad, CREATED, NOW)
        assert err.value.field == "access_times"


F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).smallest_subnormal)


@pytest.mark.parametrize(
    "values",
    [[F32_MAX, F32_MAX, -F32_MAX], [F32_TINY, 0.0, 0.0], [1e20, 1e-20, 0.0], [0.1, 0.2, 0.3]],
)
def test_finite_vectors_with_a_non_zero_value_are_accepted(values: list[float]) -> None:
    arr = np.array(values, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / underflow warning on the way
        out = v.embedding(arr, 3)
    assert out is arr


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([np.nan, 1.0, 1.0], "NaN or infinite"),
        ([np.inf, 1.0, 1.0], "NaN or infinite"),
        ([-np.inf, np.inf, 0.0], "NaN or infinite"),
        ([np.nan, np.inf, 0.0], "NaN or infinite"),
        ([0.0, -0.0, 0.0], "all zeros"),
    ],
)
def test_nan_infinite_and_zero_vectors_are_refused(values: list[float], message: str) -> None:
    for arr in (np.array(values, dtype=np.float32), values):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValidationError, match=message) as err:
                v.embedding(arr, 3)
        assert err.value.field == "embedding"


def test_a_list_beyond_float32_range_is_refused_as_infinite() -> None:
    with pytest.raises(ValidationError, match="NaN or infinite"):
        v.embedding([1e300, 1.0, 1.0], 3)
