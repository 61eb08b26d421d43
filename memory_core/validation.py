"""One validation layer for the API, the CLI import and the dashboard forms.

Every check raises :class:`ValidationError` naming the field; callers validate everything
before writing anything.

Timestamp rule: timestamps must be timezone-aware (a ``datetime`` with tzinfo, or an ISO-8601
string with an offset such as ``Z`` or ``+01:00``); naive ones are refused, never guessed.
They are stored in UTC and may not lie in the future (more than ``CLOCK_SKEW`` after now).
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from .context import sanitize_line
from .errors import ValidationError
from .values import MemoryType, Tier

if TYPE_CHECKING:
    from .facts import ClinicalFacts

MAX_CONTENT_CHARS = 2000
MAX_QUERY_CHARS = 8000
CLOCK_SKEW = timedelta(seconds=5)
_PATIENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_RECORD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}")  # the patient-id characters
_ACTOR = re.compile(r"[^\x00-\x1f\x7f]{1,120}")
_PLAIN = re.compile(r"[^<*_\u26a0\ufe0e\ufe0f]*")  # what the sanitiser leaves as it is


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


def record_id(value: Any, field: str = "id") -> str:
    """A memory or supersession id: the patient-id characters, 1-80 of them."""
    if not isinstance(value, str) or not _RECORD_ID.fullmatch(value):
        raise ValidationError(
            field,
            "must be 1-80 characters of letters, digits, '_', '.', ':' or '-' "
            "(no spaces, path separators, control or bidi characters)",
        )
    return value


def _no_surrogates(value: str, field: str) -> None:
    """Lone surrogates (``"\\ud800"`` in JSON) are not text: no store can encode them."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(
            field, f"contains a lone surrogate (U+{ord(value[exc.start]):04X}), not valid text"
        ) from exc


#: control characters a statement may hold: tab and line breaks, NEL included (the section
#: makes them spaces)
_ALLOWED_CONTROLS = frozenset("\t\n\r\x85")
_CONTROL_NAMES = {"\x00": "NUL", "\x1b": "ESC", "\x07": "BEL", "\x08": "BS", "\x7f": "DEL"}


def _no_controls(value: str, field: str) -> None:
    """Terminal and C1 control characters (NUL, ESC, BEL, DEL ...) are refused, not stored: an
    escape sequence in a stored statement would drive the terminal of whoever lists it."""
    for i, ch in enumerate(value):
        if ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) == "Cc":
            name = _CONTROL_NAMES.get(ch, "a control character")
            raise ValidationError(
                field,
                f"contains U+{ord(ch):04X} ({name}) at position {i}; control characters other "
                "than tab and line breaks are not stored",
            )


def content(value: Any, field: str = "content") -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValidationError(field, "must not be empty or whitespace only")
    if len(value) > MAX_CONTENT_CHARS:
        raise ValidationError(
            field, f"is {len(value)} characters; the limit is {MAX_CONTENT_CHARS}"
        )
    printable = value.isprintable()
    if not printable:
        _no_surrogates(value, field)
        _no_controls(value, field)
    # fast path: printable text without markup, emphasis or ⚠ has something to show;
    # otherwise ask the sanitiser
    if (not printable or not _PLAIN.fullmatch(value)) and not sanitize_line(value):
        raise ValidationError(
            field, "has no printable text (only control/format characters, markup or emphasis)"
        )
    return value.strip()


_TYPES = frozenset(t.value for t in MemoryType)


def memory_type(value: Any, field: str = "memory_type") -> str:
    """One of the memory types (:class:`~memory_core.values.MemoryType`); an unknown one is
    refused with the list, and the types it is a close misspelling of."""
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if value in _TYPES:
        return value
    names = [t.value for t in MemoryType]
    near = difflib.get_close_matches(value.strip().lower(), names, n=2, cutoff=0.6)
    guess = f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""
    raise ValidationError(
        field, f"unknown memory type {value[:60]!r}{guess}; one of: {', '.join(names)}"
    )


def importance(value: Any, field: str = "importance") -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValidationError(field, f"must be a number from 1 to 10, got {value!r}")
    try:
        v = float(value)
    except OverflowError as exc:  # an integer of hundreds of digits
        raise ValidationError(
            field, "must be between 1 and 10, got an integer too large for a float"
        ) from exc
    if not math.isfinite(v):
        raise ValidationError(field, f"must be a finite number from 1 to 10, got {value!r}")
    if not 1.0 <= v <= 10.0:
        raise ValidationError(field, f"must be between 1 and 10, got {value!r}")
    return v


def timestamp(value: Any, field: str, now: datetime | None = None) -> datetime:
    """An aware datetime (or ISO string with offset) converted to UTC; not in the future."""
    # the common case first (a bulk add holds tens of thousands): already in UTC
    out = value if type(value) is datetime and value.tzinfo is UTC else _in_utc(value, field)
    if now is not None and out > now + CLOCK_SKEW:
        raise ValidationError(
            field, f"{out.isoformat()} is in the future (now is {now.isoformat()})"
        )
    return out


def _in_utc(value: Any, field: str) -> datetime:
    """``value`` (an aware datetime or ISO string with offset) in UTC, or ValidationError."""
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
    try:
        out = value.astimezone(UTC)
    except OverflowError as exc:
        raise ValidationError(
            field,
            f"{value.isoformat()} is out of range: in UTC it falls outside years 1-9999",
        ) from exc
    return out


def now_value(value: Any, field: str = "now") -> datetime:
    return timestamp(value, field, None)


def boolean(value: Any, field: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValidationError(field, f"must be true or false, got {value!r}")
    return bool(value)


def tier(value: Any, field: str = "tier") -> Tier:
    if type(value) is Tier:
        return value
    try:
        return Tier(value)
    except ValueError as exc:
        raise ValidationError(field, f"must be 'short_term' or 'long_term', got {value!r}") from exc


def source(value: Any, field: str = "source") -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or len(value) > 200
        or not _ACTOR.fullmatch(value)
        or not value.isprintable()
    ):
        raise ValidationError(
            field,
            "must be a short single-line string (<= 200 printable characters: no control, "
            "bidi, zero-width or separator characters)",
        )
    return value


def actor(value: Any, field: str = "by") -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or not _ACTOR.fullmatch(value)
        or not value.isprintable()
    ):
        raise ValidationError(
            field,
            "must name who made the change (1-120 printable characters: no control, bidi, "
            "zero-width or separator characters)",
        )
    return value.strip()


def query(value: Any, field: str = "query") -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise ValidationError(field, f"is {len(value)} characters; the limit is {MAX_QUERY_CHARS}")
    if not value.isprintable():
        _no_surrogates(value, field)
    return value


def session_query(session_context: str) -> str:
    """The query a session context stands for when none is given: its first
    :data:`MAX_QUERY_CHARS` characters, lone surrogates left out (the session text itself is
    shown cut at its own cap)."""
    q = session_context[:MAX_QUERY_CHARS]
    return q if q.isprintable() else q.encode("utf-8", "ignore").decode("utf-8")


def positive_int(value: Any, field: str, minimum: int = 1) -> int:
    if type(value) is int and value >= minimum:
        return value
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValidationError(field, f"must be an integer >= {minimum}, got {value!r}")
    return int(value)


def embedding(value: Any, dimensions: int, field: str = "embedding") -> np.ndarray:
    """A vector of ``dimensions`` finite numbers, not all zero (a zero vector has no direction:
    its cosine with anything is undefined). Strings and booleans are not numbers."""
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        raw = value  # why: pre-computed vectors need no conversion (nor the checks for one)
    else:
        try:
            raw = value if isinstance(value, np.ndarray) else np.asarray(value)
            if raw.dtype == object and all(
                isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
                for x in raw.flat
            ):
                raw = raw.astype(np.float64)  # integers beyond int64
        except OverflowError as exc:
            raise ValidationError(field, "contains a number too large for a float") from exc
        except (TypeError, ValueError) as exc:
            raise ValidationError(field, "must be a list of numbers") from exc
        if raw.dtype.kind not in "iuf":
            got = {"U": "strings", "S": "strings", "b": "booleans"}.get(
                raw.dtype.kind, "non-numbers"
            )
            raise ValidationError(field, f"must be a list of numbers, got {got}")
    if raw.ndim != 1 or raw.shape[0] != dimensions:
        raise ValidationError(
            field, f"has shape {raw.shape}; this store's embedder has {dimensions} dimensions"
        )
    if raw.dtype == np.float32:
        arr = raw
    else:
        with np.errstate(over="ignore"):  # beyond float32's range: inf, refused below
            arr = np.asarray(raw, dtype=np.float32)
    # one sum for both checks: the float64 sum of squares is NaN if any value is NaN, inf if any
    # is infinite and 0 only if every value is 0 (the square of a finite float32 neither
    # overflows float64 nor underflows to 0 in it; one dot product, no temporary of magnitudes)
    wide = arr.astype(np.float64)
    magnitude = float(wide.dot(wide))
    if not math.isfinite(magnitude):
        raise ValidationError(field, "contains NaN or infinite values")
    if magnitude == 0.0:
        raise ValidationError(field, "is all zeros (no direction: cosine similarity undefined)")
    return arr


def timestamps(value: Any, field: str, now: datetime) -> list[datetime]:
    """A list (or tuple) of timestamps, each as :func:`timestamp` has it (a bad one named by its
    position, ``times[2]``)."""
    if not isinstance(value, list | tuple):
        raise ValidationError(field, f"must be a list of timestamps, got {type(value).__name__}")
    return [timestamp(t, f"{field}[{i}]", now) for i, t in enumerate(value)]


def access_times(
    value: Any, created_at: datetime, now: datetime, field: str = "access_times"
) -> tuple[datetime, ...]:
    """The timestamps, oldest first, as a tuple (which the garbage collector stops tracking: a
    bulk add holds one per record); none before ``created_at`` (a bad one is named by its
    position: ``access_times[2]``)."""
    if value is None:
        return ()
    if type(value) is not list and (not isinstance(value, Sequence) or isinstance(value, str)):
        raise ValidationError(field, "must be a list of timestamps")
    if not value:
        return ()
    out: list[datetime] = []
    for i, raw in enumerate(value):
        try:  # why: the position goes into the field's name only when it is bad
            out.append(timestamp(raw, field, now))
        except ValidationError as exc:
            raise ValidationError(f"{field}[{i}]", exc.message) from exc
    if min(out) < created_at:  # then name the first one before it
        first = next(i for i, t in enumerate(out) if t < created_at)
        raise ValidationError(f"{field}[{first}]", "is before the memory's created_at")
    out.sort()
    return tuple(out)


def confirmed_at(
    value: Any, created_at: datetime, now: datetime, field: str = "confirmed_at"
) -> datetime | None:
    """When a record's system of record last asserted its fact (None: not said): an aware
    timestamp, not in the future of ``now`` and not before the memory's ``created_at`` (a fact
    cannot be confirmed before it was recorded)."""
    if value is None:
        return None
    out = timestamp(value, field, now)
    if out < created_at:
        raise ValidationError(
            field,
            f"{out.isoformat()} is before the memory's created_at ({created_at.isoformat()})",
        )
    return out


def utc_now() -> datetime:
    return datetime.now(UTC)


#: The fields of a coded record's facts (``add_memories`` records' ``facts``).
_FACT_FIELDS = frozenset({"codes", "status", "value", "date"})
_DATE = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$")


#: Types whose statements write results: a result outside physiology is refused.
_RESULT_TYPES = frozenset({"lab_result", "vital_sign", "observation"})


def _plausible(text: str, mtype: str) -> None:
    """A statement of a result type that writes a value with its unit outside physiology
    ("body weight was 0 kg", "HbA1c 1e308 %") is refused, naming the value (issue 34)."""
    if mtype not in _RESULT_TYPES:
        return
    why = _implausible(text, mtype)
    if why:
        raise ValidationError("content", why)


@functools.lru_cache(maxsize=65_536)
def _implausible(text: str, mtype: str) -> str:
    """Why the statement's result is outside physiology ("" when it is not), read once per
    text and type like its facts (:func:`memory_core.facts.read`): a bulk import restating
    the same readings read each one again (a third of ``add_memories``' time at 20,000)."""
    from .facts.text import parse, things
    from .facts.values import implausible

    t = parse(text)
    return implausible(t, things(t, mtype))


def facts(value: Any, text: str, mtype: str, field: str = "facts") -> ClinicalFacts:
    """A memory's clinical facts: read from its text when ``value`` is None; a coded record's
    ``{"codes": [...], "status": ..., "value": ..., "date": ...}`` (codes ``snomed:<id>``,
    ``rxnorm:<id>``, ``loinc:<code>``, ``cvx:<code>``); or facts already read
    (:class:`~memory_core.facts.ClinicalFacts`, e.g. by a configured model)."""
    from .facts import STATUSES, ClinicalFacts, read, read_coded
    from .facts.coded import CODE

    if value is None:
        _plausible(text, mtype)
        return read(text, mtype)
    if isinstance(value, ClinicalFacts):
        return value
    if not isinstance(value, dict):
        raise ValidationError(field, "must be a mapping with codes and status, or None")
    unknown = set(value) - _FACT_FIELDS
    if unknown:
        raise ValidationError(f"{field}.{sorted(unknown)[0]}", "is no field of a record's facts")
    codes = value.get("codes")
    if not isinstance(codes, list | tuple) or not codes:
        raise ValidationError(f"{field}.codes", "must be a non-empty list of codes")
    for i, code in enumerate(codes):
        if not isinstance(code, str) or not CODE.match(code):
            raise ValidationError(
                f"{field}.codes[{i}]",
                f"must be snomed:<id>, rxnorm:<id>, loinc:<code> or cvx:<code>, got {code!r}",
            )
    status = value.get("status", "")
    if status not in STATUSES and status != "":
        raise ValidationError(f"{field}.status", f"unknown status {status!r}")
    val = value.get("value", "")
    if not isinstance(val, str) or len(val) > 200:
        raise ValidationError(f"{field}.value", "must be text of at most 200 characters")
    date = value.get("date", "")
    if not isinstance(date, str) or (date and not _DATE.match(date)):
        raise ValidationError(f"{field}.date", "must be YYYY, YYYY-MM or YYYY-MM-DD")
    return read_coded(text, mtype, list(codes), status, val, date)
