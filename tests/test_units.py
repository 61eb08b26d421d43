"""Quantities through a kept units library (issue 30): every factor of the product's unit table
(``memory_core/data/lexicon/units.json``) and every conversion between an analyte's units is
pint's own -- the reader uses the table (pint takes about 2 s to load), this test holds the
table to pint; the analytes' molar-mass conversions also agree with labunits, an independent
LOINC-keyed table. And the issue's examples: a value keeps the unit it was written in, a unit
the test is not written in gives no value, a bare number is compared in the one unit that makes
it possible and never shown with it."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pint
import pytest
from labunits import converters as labunits

from memory_core.facts import read
from memory_core.facts import units as U
from memory_core.facts.lexicon import lexicon
from memory_core.facts.values import parts


@pytest.fixture(scope="module")
def ureg() -> pint.UnitRegistry:
    reg = pint.UnitRegistry()
    reg.define("IU = [arbitrary_activity]")  # an enzyme unit: pint has no definition
    reg.define("U = IU")
    return reg


def _units_json() -> list[dict[str, Any]]:
    raw = resources.files("memory_core").joinpath("data", "lexicon", "units.json").read_text()
    units: list[dict[str, Any]] = json.loads(raw)["units"]
    return units


def test_every_unit_factor_is_pints(ureg: pint.UnitRegistry) -> None:
    """Within a dimension, two units' factors (and offsets) relate them exactly as pint
    does: 1 mg/dL is 0.01 g/L, 1 st is 6.35 kg, 0 °F is -17.78 °C."""
    by_dim: dict[str, list[dict[str, Any]]] = {}
    for e in _units_json():
        if e.get("pint"):
            by_dim.setdefault(e["dimension"], []).append(e)
    checked = 0
    for dim, members in by_dim.items():
        ref = members[0]
        for e in members[1:]:
            one = ureg.Quantity(1.0, e["pint"]).to(ref["pint"]).magnitude
            zero = ureg.Quantity(0.0, e["pint"]).to(ref["pint"]).magnitude
            # ours: base = x * factor + offset; in ref's units: (base - ref.offset) / ref.factor
            ours_one = (e["factor"] + e.get("offset", 0) - ref.get("offset", 0)) / ref["factor"]
            ours_zero = (e.get("offset", 0) - ref.get("offset", 0)) / ref["factor"]
            assert ours_one == pytest.approx(one, rel=1e-9, abs=1e-12), (dim, e["unit"])
            assert ours_zero == pytest.approx(zero, rel=1e-9, abs=1e-9), (dim, e["unit"])
            checked += 1
    assert checked >= 25  # every unit that has a sibling in its dimension


def _molar(ureg: pint.UnitRegistry, x: float, frm: str, to: str, mw: float) -> float:
    with ureg.context("chemistry", mw=mw * ureg("g/mol")):
        return float(ureg.Quantity(x, frm).to(to).magnitude)


def test_every_molar_mass_conversion_is_pints(ureg: pint.UnitRegistry) -> None:
    """An analyte written in mass and in substance concentrations converts by its molar mass
    as pint's chemistry context does (glucose 99 mg/dL = 5.495 mmol/L)."""
    lex = lexicon()
    pint_of = {e["unit"]: e.get("pint", "") for e in _units_json()}
    checked = 0
    for a in lex.analytes.values():
        if not a.mw:
            continue
        canon = U.unit_named(lex, a.unit)
        assert canon is not None
        for code in a.units:
            unit = U.unit_named(lex, code)
            assert unit is not None
            if unit.dimension != "substance/volume" or canon.dimension != "mass/volume":
                continue
            ours = U.to_canonical(lex, a, 1.0, unit)
            theirs = _molar(ureg, 1.0, pint_of[code], pint_of[a.unit], a.mw)
            assert ours == pytest.approx(theirs, rel=1e-9), (a.id, code)
            checked += 1
    assert checked >= 12


@pytest.mark.parametrize(
    ("analyte", "loinc", "mass", "substance"),
    [
        ("glucose", "2345-7", "mg/dL", "mmol/L"),
        ("creatinine", "2160-0", "mg/dL", "umol/L"),
        ("triglycerides", "2571-8", "mg/dL", "mmol/L"),
        ("urea nitrogen", "3094-0", "mg/dL", "mmol/L"),
    ],
)
def test_molar_masses_agree_with_labunits(
    analyte: str, loinc: str, mass: str, substance: str
) -> None:
    """An independent table (labunits, keyed by LOINC) gives the same factor to 1 %."""
    lex = lexicon()
    a = lex.analytes[analyte]
    unit = U.unit_named(lex, substance)
    assert unit is not None
    per_mass_unit = 1 / U.to_canonical(lex, a, 1.0, unit)  # 1 mg/dL in the substance unit
    assert per_mass_unit == pytest.approx(labunits.conversion_factor(loinc), rel=0.01)


@pytest.mark.parametrize(
    ("analyte", "a", "b", "same"),
    [
        ("hba1c", "64 mmol/mol", "8 %", True),  # IFCC 64 = NGSP 8.0 (master equation)
        ("hba1c", "53 mmol/mol", "7 %", True),
        ("hba1c", "69", "8.5 %", True),  # a bare 69 can only be mmol/mol
        ("glucose", "5.5 mmol/L", "99 mg/dL", True),
        ("glucose", "5.5 mmol/L", "5.5 mg/dL", False),  # no restatement: another value
        ("free t4", "15 pmol/L", "1.17 ng/dL", True),
        ("body weight", "12 st", "76.2 kg", True),
        ("body weight", "178 lb", "80.7 kg", True),
        ("body temperature", "101.3 °F", "38.5 °C", True),
        ("creatinine", "106 umol/L", "1.2 mg/dL", True),
        ("creatinine", "124 umol/L", "1.2 mg/dL", False),
    ],
)
def test_values_compare_in_whatever_unit_they_were_written(
    analyte: str, a: str, b: str, same: bool | None
) -> None:
    lex = lexicon()
    assert U.same_value(lex, lex.analytes[analyte], a, b) is same


def _value(text: str, key: str, mtype: str = "lab_result") -> str:
    f = read(text, mtype).get(key)
    return "" if f is None else parts(f.value).get("value", "")


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        # issue 30: a unit the analyte does not know was relabelled with its default
        ("free T4 15 pmol/L", "loinc:3024-7", "15 pmol/L"),  # not "15 ng/dl"
        ("Weight 70 g", "loinc:29463-7", ""),  # no adult's weight, never 70 kg
        ("Urine creatinine 8 mmol/L", "loinc:2160-0", ""),  # not 8 mg/dl
        ("Fasting glucose 6.1", "loinc:1558-6", "6.1"),  # no unit written: none shown
        ("Creatinine clearance 60 mL/min", "loinc:2160-0", ""),  # another measure
        ("Glucose 6.1 %", "loinc:2345-7", ""),
        ("TSH 1.8 pmol/L", "loinc:3016-3", ""),
        ("HbA1c 1e308 %", "loinc:4548-4", ""),
        ("HbA1c 64 mmol/mol", "loinc:4548-4", "64 mmol/mol"),
        ("Creatinine 124 umol/L", "loinc:2160-0", "124 umol/L"),
        ("Creat 98 \u00b5mol/l", "loinc:2160-0", "98 umol/l"),  # as written (µ read as u)
        ("K+ 5.9 (H) mmol/L", "loinc:2823-3", "5.9"),  # a flag between: the unit not read
        ("Weight 82kg", "loinc:29463-7", "82 kg"),
        ("Weight 12 st 6 lb", "loinc:29463-7", "174 lb"),
        ("T 38.4\u00b0C", "loinc:8310-5", "38.4 °C"),
        ("MoCA 21/30 today", "loinc:72172-0", "21"),
        ("BP 142/88 mmHg", "loinc:85354-9", "142/88 mmHg"),
        ("HbA1c of 48 mmol/mol or more is diagnostic", "loinc:4548-4", ""),  # a threshold
        ("My sugars have been 6-8 on my meter", "loinc:2345-7", ""),  # a range
        ("eGFR between 45 and 59 is stage 3a", "loinc:33914-3", ""),  # a range in words
        # a stage's label is no number ("3b"): a range then labels only
        ("CKD stage 3a = eGFR 45-59, stage 3b = 30-44.", "loinc:33914-3", ""),
        ("eGFR 60 mL/min/1.73m2", "loinc:33914-3", "60 mL/min/1.73m2"),
        # a day's ordinal is a date's, no result (set ag's dev half: "3rd" had been read as 3)
        ("Fasting sugar on 3rd March = 99 mg/dL.", "loinc:1558-6", "99 mg/dL"),
        ("Sodium on the 21st was 131 mmol/L", "loinc:2951-2", "131 mmol/L"),
        ("HbA1c 2nd check 61 mmol/mol", "loinc:4548-4", "61 mmol/mol"),
        ("Weight 13st 2lb", "loinc:29463-7", "184 lb"),  # thirteen stone, not the 13th
        ("eGFR 58 (March 2025)", "loinc:33914-3", "58"),  # beside a month, 58 is no day
    ],
)
def test_a_value_keeps_the_unit_it_was_written_in(text: str, key: str, value: str) -> None:
    assert _value(text, key) == value


def test_a_bare_number_is_read_in_the_one_possible_unit_only_to_compare() -> None:
    """'HbA1c 69, eGFR 88, urine ACR 4.1' (a UK record): 69 is shown as written and compared
    as mmol/mol; 'glucose 30' could be mg/dL or mmol/L: no value at all."""
    lex = lexicon()
    assert U.bare_unit(lex.analytes["hba1c"], 69) == "mmol/mol"
    assert U.bare_unit(lex.analytes["hba1c"], 7.1) == "%"
    assert U.bare_unit(lex.analytes["glucose"], 6.1) == "mmol/L"
    assert U.bare_unit(lex.analytes["glucose"], 30) == ""
    assert _value("HbA1c 69, eGFR 88, urine ACR 4.1", "loinc:4548-4") == "69"
    assert _value("Glucose 30 this morning", "loinc:2345-7") == ""


@pytest.mark.parametrize(
    "text",
    ["Normal eGFR is above 90.", "A normal HbA1c is below 42 mmol/mol", "Normal TSH 0.4-4.0"],
)
def test_what_normal_is_gives_no_result(text: str) -> None:
    """ "Normal eGFR is above 90": a word of a result before the test, and a bound or a range
    after it, say what a normal result is -- the patient's result is not normal."""
    (f,) = [f for f in read(text, "lab_result").facts if f.key.startswith("loinc:")]
    assert "result" not in parts(f.value) and "value" not in parts(f.value), f.value


def test_a_result_said_normal_is_still_read() -> None:
    f = read("TSH normal", "lab_result").facts[0]
    assert parts(f.value).get("result") == "negative", f.value


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("The patient scored 19 out of 30 on the MoCA memory test", "loinc:72172-0", "19"),
        ("She scored 24/30 on the MMSE today", "loinc:72107-6", "24"),
    ],
)
def test_a_score_said_before_its_test_is_its_result(text: str, key: str, value: str) -> None:
    """ "Scored 19 out of 30 on the MoCA": the score comes before the test's name."""
    assert _value(text, key, "observation") == value
