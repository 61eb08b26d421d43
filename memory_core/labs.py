"""Lab analytes named in free text, with the result's value and date (pure: text in, facts out).

A small LOINC-style dictionary of our own: each analyte has a canonical name and the spellings
clinicians and patients use for it ("HbA1c", "A1c", "glycated haemoglobin" -> ``hba1c``;
"urine ACR", "albumin-to-creatinine ratio" -> ``uacr``). Longer spellings win over shorter ones
inside them ("urine albumin-to-creatinine ratio" is one analyte, not albumin plus creatinine;
"fasting glucose" is not plain glucose).

The value of a result is the first number after the analyte's name that is not part of a date;
the date is an ISO date, a day-month-year or month-day-year, or a month name (with its year
when one is given).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

# canonical name -> spellings (lower case; words separated by single spaces; hyphens and
# slashes are read as spaces, so "albumin-to-creatinine" is "albumin to creatinine")
ANALYTES: dict[str, tuple[str, ...]] = {
    "hba1c": (
        "hba1c",
        "hb a1c",
        "a1c",
        "hemoglobin a1c",
        "haemoglobin a1c",
        "glycated hemoglobin",
        "glycated haemoglobin",
        "glycosylated hemoglobin",
        "glycosylated haemoglobin",
    ),
    "egfr": ("egfr", "estimated gfr", "gfr", "kidney function"),
    "ldl": ("ldl", "ldl c", "ldl cholesterol", "bad cholesterol"),
    "hdl": ("hdl", "hdl c", "hdl cholesterol", "good cholesterol"),
    "total cholesterol": ("total cholesterol", "cholesterol"),
    "triglycerides": ("triglycerides", "triglyceride", "trigs"),
    "potassium": ("potassium", "k+", "serum potassium"),
    "sodium": ("sodium", "na+", "serum sodium"),
    "fasting glucose": (
        "fasting glucose",
        "fasting blood glucose",
        "fasting plasma glucose",
        "fasting sugar",
        "fasting sugars",
        "fasting blood sugar",
        "fbg",
        "fpg",
    ),
    "glucose": ("glucose", "blood glucose", "blood sugar", "sugar", "sugars"),
    "uacr": (
        "uacr",
        "urine acr",
        "acr",
        "albumin to creatinine ratio",
        "urine albumin to creatinine ratio",
        "urine albumin creatinine ratio",
        "albumin creatinine ratio",
        "microalbumin",
        "urine microalbumin creatinine ratio",
        "microalbumin creatinine ratio",
        "microalbumin to creatinine ratio",
        "urine microalbumin",
    ),
    "albumin": ("albumin", "serum albumin", "urine albumin"),
    "creatinine": ("creatinine", "serum creatinine", "creat"),
    "tsh": ("tsh", "thyroid stimulating hormone"),
    "free t4": ("free t4", "ft4", "t4"),
    "hemoglobin": ("hemoglobin", "haemoglobin", "hgb", "hb"),
    "vitamin d": ("vitamin d", "25 oh vitamin d", "25 hydroxyvitamin d"),
    "vitamin b12": ("vitamin b12", "b12"),
    "alt": ("alt",),
    "ast": ("ast",),
    "bmi": ("bmi", "body mass index"),
    "blood pressure": ("blood pressure", "bp", "systolic pressure", "diastolic pressure"),
    "psa": ("psa",),
    "inr": ("inr",),
}

_SPELLINGS: dict[tuple[str, ...], str] = {
    tuple(s.split()): name for name, spellings in ANALYTES.items() for s in spellings
}
# first word of a spelling -> the lengths of the spellings it starts, longest first
_LENGTHS: dict[str, tuple[int, ...]] = {}
for _k in _SPELLINGS:
    _LENGTHS[_k[0]] = tuple(sorted({*_LENGTHS.get(_k[0], ()), len(_k)}, reverse=True))
_TOKEN = re.compile(r"[a-z0-9]+\+?")
# a number not glued to letters before it ("b12", "t4"); units may follow ("500mg", "7.1%")
_NUMBER = re.compile(r"(?<![a-z0-9.])\d+(?:\.\d+)?")

MONTHS = {
    m: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for m in names
}
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DMY = re.compile(rf"\b(\d{{1,2}})\s+({_MONTH_RE})\.?,?\s+(\d{{4}})\b")
_MDY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}}),?\s+(\d{{4}})\b")
_MY = re.compile(rf"\b({_MONTH_RE})\b\.?(?:\s+(\d{{4}}))?")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")


@dataclass(frozen=True, slots=True)
class LabFact:
    """One analyte named in a text: its canonical name, the value reported after it (None
    when there is none) and the date (``(year, month, day)`` with 0 for an unknown part; None
    when the text gives no date)."""

    analyte: str
    value: float | None
    date: tuple[int, int, int] | None
    converted: bool = False  # the value was reported in another unit and converted


#: Units a result may be reported in other than the analyte's usual one, with the conversion
#: to it ("Hb 98 g/L" is 9.8 g/dL; "glucose 7.0 mmol/L" is 126 mg/dL; "A1c 53 mmol/mol" is
#: 7.0 %).
CONVERSIONS: dict[tuple[str, str], Callable[[float], float]] = {
    ("hemoglobin", "g/l"): lambda v: v / 10,
    ("glucose", "mmol/l"): lambda v: v * 18.016,
    ("fasting glucose", "mmol/l"): lambda v: v * 18.016,
    ("creatinine", "umol/l"): lambda v: v / 88.42,
    ("hba1c", "mmol/mol"): lambda v: v / 10.929 + 2.15,
    ("ldl", "mmol/l"): lambda v: v * 38.67,
    ("hdl", "mmol/l"): lambda v: v * 38.67,
    ("total cholesterol", "mmol/l"): lambda v: v * 38.67,
    ("triglycerides", "mmol/l"): lambda v: v * 88.57,
}
_UNIT = re.compile(r"\s*(g/l|mmol/l|mmol/mol|umol/l|µmol/l|micromol/l)\b")
#: How far apart two results may be and still be one value once one was converted (reports
#: round: 106 umol/L is 1.199 mg/dL).
CONVERSION_TOLERANCE = 0.015


def same_value(a: LabFact, b: LabFact) -> bool:
    """The two results report one value: equal, or within :data:`CONVERSION_TOLERANCE` when
    either was converted from another unit."""
    if a.value is None or b.value is None:
        return False
    if not (a.converted or b.converted):
        return a.value == b.value
    return abs(a.value - b.value) <= CONVERSION_TOLERANCE * max(abs(a.value), abs(b.value))


def _words(text: str) -> list[tuple[str, int, int]]:
    low = text.lower().replace("-", " ").replace("/", " ")
    return [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(low)]


#: Chemical symbols that name an analyte only when a value follows ("K 5.6"; "vitamin K" is
#: not a potassium result).
SYMBOLS = {"k": "potassium", "na": "sodium", "cr": "creatinine"}


@lru_cache(maxsize=65_536)
def analyte_spans(text: str) -> tuple[tuple[str, int, int], ...]:
    """``(canonical analyte, start, end)`` character spans in ``text``, longest spelling first,
    in order of appearance."""
    words = _words(text)
    plain = [w for w, _s, _e in words]
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(words):
        for n in _LENGTHS.get(plain[i], ()):  # longest spelling first
            key = tuple(plain[i : i + n])
            if len(key) == n and key in _SPELLINGS:
                out.append((_SPELLINGS[key], words[i][1], words[i + n - 1][2]))
                i += n
                break
        else:
            nxt = plain[i + 1] if i + 1 < len(plain) else ""
            if plain[i] in SYMBOLS and nxt[:1].isdigit():  # "K 5.6": the symbol with a value
                out.append((SYMBOLS[plain[i]], words[i][1], words[i][2]))
            i += 1
    return tuple(out)


# a more specific analyte is also its parent ("fasting glucose" is a glucose result)
PARENTS: dict[str, str] = {"fasting glucose": "glucose"}


def analytes(text: str) -> frozenset[str]:
    """The canonical names of the analytes named in ``text`` (with their parents)."""
    names = {a for a, _s, _e in analyte_spans(text)}
    return frozenset(names | {PARENTS[a] for a in names if a in PARENTS})


def date_of(text: str) -> tuple[int, int, int] | None:
    """The first date in ``text`` as ``(year, month, day)`` (0 for a part not given)."""
    low = text.lower()
    if m := _ISO.search(low):
        return int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m := _DMY.search(low):
        return int(m.group(3)), MONTHS[m.group(2)], int(m.group(1))
    if m := _MDY.search(low):
        return int(m.group(3)), MONTHS[m.group(1)], int(m.group(2))
    if m := _MY.search(low):
        return int(m.group(2) or 0), MONTHS[m.group(1)], 0
    if m := _YEAR.search(low):
        return int(m.group(1)), 0, 0
    return None


def _date_spans(low: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for rx in (_ISO, _DMY, _MDY, _MY, _YEAR):
        spans.extend(m.span() for m in rx.finditer(low))
    return spans


@lru_cache(maxsize=65_536)
def lab_facts(text: str) -> tuple[LabFact, ...]:
    """Every analyte in ``text`` with the value that follows it (before the next analyte) and
    the text's date."""
    low = text.lower()
    spans = analyte_spans(text)
    dates = _date_spans(low)
    when = date_of(text)
    out = []
    for k, (name, _start, end) in enumerate(spans):
        stop = spans[k + 1][1] if k + 1 < len(spans) else len(low)
        value, converted = None, False
        for m in _NUMBER.finditer(low, end, stop):
            if not any(a <= m.start() < b for a, b in dates):
                value = float(m.group(0))
                unit = _UNIT.match(low, m.end())
                convert = unit and CONVERSIONS.get((name, _unit_name(unit.group(1))))
                if convert:
                    value, converted = convert(value), True
                break
        out.append(LabFact(name, value, when, converted))
    return tuple(out)


_TARGET = re.compile(r"\b(?:target|targets|goal|goals|range|aim)\b")


def is_target(text: str) -> bool:
    """The statement gives a target or a range, not a result: a target word comes before the
    first number ("INR target range 2.0-3.0"; not "INR 1.8, goal 2-3")."""
    low = text.lower()
    m, n = _TARGET.search(low), _NUMBER.search(low)
    return m is not None and n is not None and m.start() < n.start()


def _unit_name(unit: str) -> str:
    return "umol/l" if unit in {"µmol/l", "micromol/l"} else unit


@lru_cache(maxsize=65_536)
def numbers(text: str) -> tuple[float, ...]:
    """The numbers in ``text`` that are not part of a date, in order."""
    low = text.lower()
    dates = _date_spans(low)
    return tuple(
        float(m.group(0))
        for m in _NUMBER.finditer(low)
        if not any(a <= m.start() < b for a, b in dates)
    )
