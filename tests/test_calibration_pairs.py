"""The labelled clinical pair set shipped as package data, and its calibration report."""

from __future__ import annotations

import json
import re
from collections import Counter
from importlib.resources import files

import pytest

from memory_core.calibration import (
    PAIR_SET,
    PAIR_TYPES,
    PAIRS,
    SPLITS,
    VERDICTS,
    load_pairs,
    report_set,
)
from memory_core.cli import main
from memory_core.embedding import HashingEmbedder
from memory_core.facts import decide_texts, share_key

FIELDS = {"id", "memory_type", "older", "newer", "verdict", "supersede", "kind", "split"}


def raw_rows() -> list[dict[str, object]]:
    text = files("memory_core").joinpath(PAIR_SET).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_set_is_large_and_covers_every_type_in_both_halves() -> None:
    pairs = load_pairs()
    assert len(pairs) >= 300
    halves = Counter((p.memory_type, p.split) for p in pairs)
    for t in PAIR_TYPES:
        for split in SPLITS:
            assert halves[(t, split)] >= 10, (t, split)
        # deterministic, balanced split per type
        assert abs(halves[(t, "dev")] - halves[(t, "test")]) <= 1, t
    assert {p.memory_type for p in pairs} == set(PAIR_TYPES)
    assert len(load_pairs("dev")) + len(load_pairs("test")) == len(pairs)


def test_every_row_is_well_formed() -> None:
    rows = raw_rows()
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids)
    seen = set()
    for r in rows:
        assert set(r) == FIELDS, r["id"]
        assert r["verdict"] in VERDICTS, r["id"]
        assert r["split"] in SPLITS, r["id"]
        assert r["supersede"] is (r["verdict"] != "compatible"), r["id"]
        assert isinstance(r["older"], str) and isinstance(r["newer"], str)
        assert r["older"].strip() and r["newer"].strip() and r["older"] != r["newer"]
        key = (r["memory_type"], r["older"], r["newer"])
        assert key not in seen, r["id"]
        seen.add(key)


def test_every_verdict_appears_and_safety_types_have_compatible_pairs() -> None:
    pairs = load_pairs()
    assert {p.verdict for p in pairs} == VERDICTS
    for split in SPLITS:
        half = [p for p in pairs if p.split == split]
        assert {p.verdict for p in half} == VERDICTS, split
        for t in ("allergy", "adverse_reaction"):
            assert any(p.memory_type == t and not p.supersede for p in half)
            assert any(p.memory_type == t and p.supersede for p in half)


def test_the_calibration_pairs_are_in_the_dev_half() -> None:
    dev = {(p.memory_type, p.older, p.newer, p.supersede) for p in load_pairs("dev")}
    assert all((p.memory_type, p.older, p.newer, p.supersede) in dev for p in PAIRS)


def test_issue_cases_are_labelled_as_asked() -> None:
    by_text = {(p.older, p.newer): p for p in load_pairs()}
    penicillin_sulfa = by_text[
        ("Penicillin allergy - hives as a child", "Allergic to sulfa drugs (Bactrim) - rash")
    ]
    assert penicillin_sulfa.verdict == "compatible"
    phone = by_text[
        ("Dislikes phone calls and reads email daily", "Likes reminders by text message")
    ]
    assert phone.verdict == "compatible" and phone.memory_type == "preference"
    kinds = {p.kind for p in load_pairs()}
    for kind in ("brand-generic", "dose-change", "lab-series", "lab-same", "no-longer",
                 "resolved", "negated", "near-miss"):  # fmt: skip
        assert kind in kinds


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:\.\d+)?", text))


def test_lab_series_are_updates_and_same_values_are_duplicates() -> None:
    labs = [p for p in load_pairs() if p.memory_type == "lab_result"]
    for p in labs:
        if p.kind == "lab-series":  # two different values of one analyte: an update
            assert p.verdict == "updates" and _numbers(p.older) != _numbers(p.newer)
        if p.verdict == "duplicate":  # the same value (and date), maybe in another unit
            assert p.kind == "lab-same"
            older = re.sub(r"\bLOINC \d+-\d\b", "", p.older)  # a code is no value
            first_value = re.search(r"\d+(?:\.\d+)?", older)
            assert first_value is not None
            assert first_value.group(0) in _numbers(p.newer) or _same_in_other_units(
                float(first_value.group(0)), p.newer
            ), p.id


#: Conversions written out here, apart from the lexicon (g/L -> g/dL, mmol/L -> mg/dL of LDL
#: cholesterol and of glucose, mg/dL -> umol/L of creatinine): a duplicate in other units names
#: the same value.
_FACTORS = (10.0, 0.1, 38.67, 1 / 38.67, 18.016, 1 / 18.016, 88.4, 1 / 88.4)


def _same_in_other_units(value: float, text: str) -> bool:
    if any(abs(value - float(n) * f) <= 0.015 * value for n in _numbers(text) for f in _FACTORS):
        return True
    # HbA1c: IFCC mmol/mol = (DCCT % - 2.15) x 10.929, either way round
    return any(
        abs(value - (float(n) - 2.15) * 10.929) <= 1.0
        or abs(float(n) - (value - 2.15) * 10.929) <= 1.0
        for n in _numbers(text)
    )


def test_report_set_counts_per_type() -> None:
    pairs = load_pairs("test")
    rep = report_set(HashingEmbedder(), pairs, "test")
    assert rep.split == "test" and rep.pairs == len(pairs)
    assert [t.memory_type for t in rep.per_type] == list(PAIR_TYPES)
    for t in rep.per_type:
        assert 0.0 <= t.precision <= 1.0 and 0.0 <= t.recall <= 1.0
        labelled = sum(p.supersede for p in pairs if p.memory_type == t.memory_type)
        assert t.true_pos + t.false_neg == labelled
    wrong = len(rep.wrong)
    assert rep.accuracy == pytest.approx(1 - wrong / len(pairs))
    assert all(pred != p.supersede for p, _, pred in rep.wrong)
    assert rep.safety_false_supersessions == sum(
        1 for p, _, pred in rep.wrong if pred and p.memory_type in ("allergy", "adverse_reaction")
    )
    # a cut above every cosine flags only the pairs about a key both statements share that the
    # decision table supersedes ("NKDA" / an allergy; "Lantus" / "insulin glargine"), whatever
    # their cosine
    none = report_set(HashingEmbedder(), pairs, "test", threshold=1.01, type_thresholds={})
    keyed = [
        p
        for p in pairs
        if share_key(p.older, p.newer, p.memory_type)
        and decide_texts(p.older, p.newer, p.memory_type).supersedes
    ]
    assert keyed and "allergy" in {p.memory_type for p in keyed}
    for t in none.per_type:
        flagged = t.true_pos + t.false_pos
        assert flagged == (sum(p.memory_type == t.memory_type for p in keyed)), t


def test_calibrate_command_reports_both_halves(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--embedder", "hashing", "calibrate"]) == 0
    out = capsys.readouterr().out
    assert "threshold" in out and f"({len(PAIRS)} pairs," in out
    for split in SPLITS:
        n = len(load_pairs(split))
        assert f"clinical pairs {split}: {n} pairs" in out
    for t in PAIR_TYPES:
        assert out.count(f"  {t} ") == 2
