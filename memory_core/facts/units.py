"""Quantities (issue 30): a number is a result of a test only with a unit written beside it
that is valid for the test, converted by data -- never relabelled with the test's default
unit. Pure; the units are ``memory_core/data/lexicon/units.json`` (each factor checked against
pint's definitions in ``tests/test_units.py``), the tests' units, molar masses, bounds and own
conversions ``labs.json``.

* :func:`unit_after` reads the unit written right after a number ("124 umol/L", "7,9 %",
  "82kg", "38.4°C", "12 st"), or None;
* :func:`to_canonical` converts a number in one of an analyte's units to the analyte's
  canonical unit: by the units' factors within a dimension, by the analyte's molar mass
  between mass and substance (glucose mg/dL <-> mmol/L), by its valence between equivalents
  and substance, or by the analyte's own conversions where no dimension relates them (HbA1c
  mmol/mol -> %, the IFCC-NGSP master equation); None for a unit the analyte is not written in;
* :func:`plausible` says whether a value in the canonical unit lies in the analyte's
  physiological bounds ("weight 70 g" is no adult's weight; an HbA1c of 1e308 % is none);
* :func:`bare_unit` is the one unit a number written without one can be in: the analyte's
  only unit whose conversion of it is plausible ("HbA1c 69" is mmol/mol, "HbA1c 7.1" %,
  "glucose 6.1" mmol/L; "glucose 30" could be either: none). The unit is used to compare
  values, never shown: the value keeps no unit it was not written with;
* :func:`same_value` compares two values of one analyte in whatever units they were written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..normalize import fold

if TYPE_CHECKING:
    from .lexicon import Analyte, Lexicon

#: How far apart two converted values may be and still be one value (rounding of a converted
#: unit: 106 umol/L is 1.199 mg/dL, written "1.2").
SAME_VALUE_TOLERANCE = 0.015


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of measure: its written form (``code``), its dimension, and ``base = number x
    factor + offset`` in the dimension's base unit."""

    code: str
    dimension: str
    factor: float
    offset: float = 0.0
    pint: str = ""

    def to_base(self, x: float) -> float:
        return x * self.factor + self.offset

    def from_base(self, x: float) -> float:
        return (x - self.offset) / self.factor


#: Dimensions related through an analyte's molar mass (g/mol): base g/L = base mol/L x mw.
_MASS, _SUBSTANCE, _EQUIVALENTS = "mass/volume", "substance/volume", "equivalents/volume"


@lru_cache(maxsize=4096)
def key(spelling: str) -> str:
    """A unit's spelling as compared: through the text normaliser ("µ" as "u", "²" as "2",
    "×10⁹/L" as "x109/L"), lower case, no spaces."""
    return re.sub(r"\s+", "", fold(spelling).lower())


def compile_units(data: Mapping[str, Any]) -> tuple[dict[str, Unit], re.Pattern[str]]:
    """``units.json`` as ``{spelling key: Unit}`` and the pattern that reads the longest
    spelling at a position (any spacing inside it, followed by no letter or digit)."""
    by_key: dict[str, Unit] = {}
    spellings: list[str] = []
    for e in data["units"]:
        u = Unit(
            code=str(e["unit"]),
            dimension=str(e["dimension"]),
            factor=float(e["factor"]),
            offset=float(e.get("offset", 0.0)),
            pint=str(e.get("pint", "")),
        )
        for sp in (u.code, *e["spellings"]):
            k = key(sp)
            if k in by_key and by_key[k] != u:
                raise ValueError(f"{sp!r} spells both {by_key[k].code} and {u.code}")
            by_key[k] = u
            spellings.append(sp)
    alternatives = sorted({_flexible(sp) for sp in spellings}, key=len, reverse=True)
    pattern = re.compile(r"\s?(?:" + "|".join(alternatives) + r")(?![A-Za-z0-9])", re.IGNORECASE)
    return by_key, pattern


def _flexible(spelling: str) -> str:
    """A spelling as a pattern: any spaces around its slashes and between its words."""
    parts = [re.escape(p) for p in key(spelling).replace("/", " / ").split()]
    out = []
    for p in parts:
        out.append(p if p != "/" else r"\s*/\s*")
    joined = ""
    for i, p in enumerate(out):
        if i and out[i - 1] != r"\s*/\s*" and p != r"\s*/\s*":
            joined += r"\s*"
        joined += p
    return joined


def unit_after(lex: Lexicon, text: str, pos: int) -> tuple[Unit, int] | None:
    """The unit written at ``text[pos:]`` (after a number; one space allowed), with where it
    ends; None when none is."""
    m = lex.unit_pattern.match(text, pos)
    if m is None:
        return None
    unit = lex.units.get(key(m.group(0)))
    return (unit, m.end()) if unit is not None else None


def tests_named_by_unit(lex: Lexicon) -> dict[str, Analyte]:
    """The test each unit of labs.json's ``named_by`` names by itself (by the unit's key):
    "kg" a body weight, "°F" a body temperature."""
    got = _NAMED_BY.get(lex.version)
    if got is None:
        got = {key(u): a for a in lex.analytes.values() for u in a.named_by}
        _NAMED_BY.clear()
        _NAMED_BY[lex.version] = got
    return got


_NAMED_BY: dict[str, dict[str, Analyte]] = {}


def unit_named(lex: Lexicon, spelling: str) -> Unit | None:
    """A unit by any of its spellings (a FHIR record's UCUM code, "mg/dl", "µmol/L")."""
    return lex.units.get(key(spelling)) if spelling else None


def to_canonical(lex: Lexicon, analyte: Analyte, x: float, unit: Unit) -> float | None:
    """``x`` in ``unit`` as a number in ``analyte``'s canonical unit; None when the analyte is
    not written in that unit (or nothing relates it to the canonical one)."""
    canon = lex.units.get(key(analyte.unit))
    if canon is None or unit.code not in analyte.units:
        return None
    if unit == canon:
        return x
    for code, scale, offset in analyte.conversions:
        if key(code) == key(unit.code):
            return x * scale + offset
    base = unit.to_base(x)
    if unit.dimension == canon.dimension:
        return canon.from_base(base)
    mol = _as_substance(analyte, unit.dimension, base)
    if mol is None:
        return None
    target = _from_substance(analyte, canon.dimension, mol)
    return None if target is None else canon.from_base(target)


def _as_substance(analyte: Analyte, dimension: str, base: float) -> float | None:
    if dimension == _SUBSTANCE:
        return base
    if dimension == _MASS and analyte.mw:
        return base / analyte.mw
    if dimension == _EQUIVALENTS:
        return base / analyte.valence
    return None


def _from_substance(analyte: Analyte, dimension: str, mol: float) -> float | None:
    if dimension == _SUBSTANCE:
        return mol
    if dimension == _MASS and analyte.mw:
        return mol * analyte.mw
    if dimension == _EQUIVALENTS:
        return mol * analyte.valence
    return None


def plausible(analyte: Analyte, canonical: float) -> bool:
    """A value (in the canonical unit) within the analyte's physiological bounds (any value
    where the analyte gives none)."""
    if not analyte.bounds:
        return True
    lo, hi = analyte.bounds
    return lo <= canonical <= hi


@lru_cache(maxsize=65_536)
def _bare(analyte: Analyte, x: float) -> str:
    from .lexicon import lexicon

    lex = lexicon()
    fits: dict[float, str] = {}
    for code in analyte.units:
        unit = lex.units.get(key(code))
        if unit is None:
            continue
        c = to_canonical(lex, analyte, x, unit)
        if c is not None and plausible(analyte, c):
            fits.setdefault(round(c, 9), code)  # two units of one magnitude (mIU/L, uIU/mL)
    return next(iter(fits.values())) if len(fits) == 1 else ""


def bare_unit(analyte: Analyte, x: float) -> str:
    """The one unit of ``analyte`` a number written without one can be in ("" when none or
    several are physiologically possible, or the analyte has no bounds to tell)."""
    if not analyte.bounds and len(analyte.units) != 1:
        return ""
    return _bare(analyte, x)


def canonical(lex: Lexicon, analyte: Analyte, value: str) -> float | None:
    """A fact's value (``"64 mmol/mol"``, ``"7.1 %"``, ``"69"``) in the analyte's canonical
    unit: by its written unit, or by the one unit a bare number can be in; None when it cannot
    be told."""
    number, _, written = value.strip().partition(" ")
    try:
        x = float(number)
    except ValueError:
        return None
    code = written or bare_unit(analyte, x)
    unit = unit_named(lex, code)
    return None if unit is None else to_canonical(lex, analyte, x, unit)


def outside_physiology(lex: Lexicon, analyte: Analyte, value: str) -> str:
    """Why a record's value (``"82.3 kg"``, ``"132/84 mmHg"``, ``"-70 kg"``) cannot be the
    analyte's -- "" when it can, or when its unit is not one the product knows (the record's
    own unit is then written as given, never another)."""
    number, _, written = value.strip().partition(" ")
    numbers = number.split("/")
    try:
        xs = [float(x) for x in numbers]
    except ValueError:
        return ""
    if any(x != x or x in (float("inf"), float("-inf")) for x in xs):
        return f"{value} is not a number"
    if not analyte.bounds:
        return ""
    unit = unit_named(lex, written) if written else None
    if written and unit is None:
        return ""
    for x in xs:
        c = to_canonical(lex, analyte, x, unit) if unit is not None else x
        if c is not None and not plausible(analyte, c):
            lo, hi = analyte.bounds
            return f"{value} is outside physiology ({lo:g}-{hi:g} {analyte.unit})"
    return ""


def same_value(lex: Lexicon, analyte: Analyte | None, a: str, b: str) -> bool | None:
    """Whether two values of ``analyte`` are one value: equal as written in the same unit, or
    within :data:`SAME_VALUE_TOLERANCE` once converted to the canonical unit; None when they
    cannot be compared (a unit that is not the analyte's, a bare number of two possible
    units)."""
    if a.strip() == b.strip():
        return True
    na, _, ua = a.strip().partition(" ")
    nb, _, ub = b.strip().partition(" ")
    if "/" in na or "/" in nb:  # a blood pressure: both numbers as written
        return None if key(ua) != key(ub) and ua and ub else na == nb
    if key(ua) == key(ub) and ua:
        try:
            return float(na) == float(nb)
        except ValueError:
            return None
    if analyte is None:
        return None
    ca, cb = canonical(lex, analyte, a), canonical(lex, analyte, b)
    if ca is None or cb is None:
        return None
    return abs(ca - cb) <= SAME_VALUE_TOLERANCE * max(abs(ca), abs(cb))


__all__ = [
    "SAME_VALUE_TOLERANCE",
    "Unit",
    "bare_unit",
    "canonical",
    "compile_units",
    "key",
    "outside_physiology",
    "plausible",
    "same_value",
    "to_canonical",
    "unit_after",
    "unit_named",
]
