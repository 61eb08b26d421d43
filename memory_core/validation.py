"""One validation layer for the API, the CLI import and the dashboard forms.

Every check raises :class:`ValidationError` naming the field; callers validate everything
before writing anything.

Timestamp rule: timestamps must be timezone-aware (a ``datetime`` with tzinfo, or an ISO-8601
string with an offset such as ``Z`` or ``+01:00``); naive ones are refused, never guessed.
They are stored in UTC and may not lie in the future (more than ``CLOCK_SKEW`` after now).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from .context import sanitize_line
from .errors import ValidationError
from .values import Tier

MAX_CONTENT_CHARS = 2000
MAX_QUERY_CHARS = 8000
CLOCK_SKEW = timedelta(seconds=5)
_PATIENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_TYPE = re.compile(r"[a-z][a-z0-9_]{0,39}")
_ACTOR = re.compile(r"[^\x00-\x1f\x7f]{1,120}")


@functools.lru_cache(maxsize=4096)
def _patient_ok(value: str) -> bool:
    """The pattern check, remembered for recent ids (every agent call validates one)."""
    return _PATIENT.fullmatch(value) is not None


def patient_id(value: Any, field: str = "patient_id") -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if len(value) > 64 or not _patient_ok(value):  # longer: invalid, and never cached
        raise ValidationError(
            field,
            "must be 1-64 characters of letters, digits, '_', '.', ':' or '-' "
            f"(no spaces, path separators or control characters), got {value!r}",
        )
    return value


def content(value: Any, field: str = "content") -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValidationError(field, "must not be empty or whitespace only")
    if len(value) > MAX_CONTENT_CHARS:
        raise ValidationError(
            field, f"is {len(value)} characters; the limit is {MAX_CONTENT_CHARS}"
        )
    # fast path: printable text has something to show; otherwise ask the sanitiser
    if not value.isprintable() and not sanitize_line(value):
        raise ValidationError(field, "has no printable text (only control/format characters)")
    return value.strip()


def memory_type(value: Any, field: str = "memory_type") -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if not _TYPE.fullmatch(value):
        raise ValidationError(
            field, f"must be a lower-case snake_case name (e.g. 'allergy'), got {value!r}"
        )
    return value


def importance(value: Any, field: str = "importance") -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValidationError(field, f"must be a number from 1 to 10, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValidationError(field, f"must be a finite number from 1 to 10, got {value!r}")
    if not 1.0 <= v <= 10.0:
        raise ValidationError(field, f"must be between 1 and 10, got {value!r}")
    return v


def timestamp(value: Any, field: str, now: datetime | None = None) -> datetime:
    """An aware datetime (or ISO string with offset) converted to UTC; not in the future."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValidationError(field, f"is not an ISO-8601 timestamp: {value!r}") from exc
        value = parsed
    if not isinstance(value, datetime):
        raise ValidationError(field, f"must be a timezone-aware datetime, got {value!r}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValidationError(
            field,
            f"is naive ({value.isoformat()}); give a timezone, e.g. "
            f"{value.isoformat()}+00:00 for UTC",
        )
    out = value.astimezone(UTC)
    if now is not None and out > now + CLOCK_SKEW:
        raise ValidationError(
            field, f"{out.isoformat()} is in the future (now is {now.isoformat()})"
        )
    return out


def now_value(value: Any, field: str = "now") -> datetime:
    return timestamp(value, field, None)


def boolean(value: Any, field: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValidationError(field, f"must be true or false, got {value!r}")
    return bool(value)


def tier(value: Any, field: str = "tier") -> Tier:
    try:
        return Tier(value)
    except ValueError as exc:
        raise ValidationError(field, f"must be 'short_term' or 'long_term', got {value!r}") from exc


def source(value: Any, field: str = "source") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 200 or not _ACTOR.fullmatch(value):
        raise ValidationError(field, "must be a short single-line string (<= 200 characters)")
    return value


def actor(value: Any, field: str = "by") -> str:
    if not isinstance(value, str) or not value.strip() or not _ACTOR.fullmatch(value):
        raise ValidationError(field, "must name who made the change (1-120 printable characters)")
    return value.strip()


def query(value: Any, field: str = "query") -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise ValidationError(field, f"is {len(value)} characters; the limit is {MAX_QUERY_CHARS}")
    return value


def positive_int(value: Any, field: str, minimum: int = 1) -> int:
    if type(value) is int and value >= minimum:
        return value
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValidationError(field, f"must be an integer >= {minimum}, got {value!r}")
    return int(value)


def embedding(value: Any, dimensions: int, field: str = "embedding") -> np.ndarray:
    if type(value) is np.ndarray and value.dtype == np.float32:
        arr = value  # why: a bulk import's pre-computed vectors skip the conversion
    else:
        try:
            arr = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ValidationError(field, "must be a list of numbers") from exc
    if arr.ndim != 1 or arr.shape[0] != dimensions:
        raise ValidationError(
            field, f"has shape {arr.shape}; this store's embedder has {dimensions} dimensions"
        )
    if not np.isfinite(arr).all():
        raise ValidationError(field, "contains NaN or infinite values")
    return arr


def access_times(
    value: Any, created_at: datetime, now: datetime, field: str = "access_times"
) -> list[datetime]:
    if value is None:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValidationError(field, "must be a list of timestamps")
    out = [timestamp(v, f"{field}[{i}]", now) for i, v in enumerate(value)]
    for i, t in enumerate(out):
        if t < created_at:
            raise ValidationError(f"{field}[{i}]", "is before the memory's created_at")
    return sorted(out)


def utc_now() -> datetime:
    return datetime.now(UTC)
