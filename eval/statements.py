"""The held-out statements of issue 30 (``eval/statements/``, written by authors who had not
read the reader, frozen before it changed): whether a newer statement that asserts no change of
the patient's own fact leaves the older fact current, whether one that does replaces it, and
whether a result is read with the unit it was written in (or none).

Each pair is a patient of its own: the older statement is added, then the newer 30 days later,
through ``add_memory`` (candidates by cosine or a shared key; the decision table). Outcomes:
``auto`` (the older superseded at once), ``pending`` (sent to a reviewer), ``none``.

``python -m eval.statements [--split dev|test|all] [--embedder hashing|minilm] [--show]``
prints the table (``--show`` lists the dev half's misses; the test half's texts are never
printed). ``python -m eval --only statements`` puts it in the evaluation report."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import memory_core as mc
from memory_core.facts import read
from memory_core.facts.lexicon import lexicon
from memory_core.facts.values import parts
from memory_core.normalize import fold

from .runner import Context, Section, table

HERE = Path(__file__).resolve().parent / "statements"
PAIR_FILES = (
    *(f"set_{c}" for c in "abcdefghijklmnopqrstuvwxyz"),
    "set_aa",
    "set_ab",
    "set_ac",
    "set_ad",
    "set_ae",
    "set_af",
    "set_ag",
    "set_ah",
    "set_ai",
    "set_aj",
    "set_ak",
    "set_al",
    "set_am",
    "set_an",
    "set_ao",
    "set_ap",
    "set_aq",
    "set_ar",
    "set_as",
)
#: a memory type as one author's prompt named it (sets ad and af were asked for "response", set
#: af for "social_history"), the store's name for it; the file stays as written
AS_WRITTEN = {"response": "treatment_response", "social_history": "social"}
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
#: The issue's independent check on main dfd818e and its targets, for the report.
BEFORE = {"heldout": "9 / 30 read safely (21 superseded the true fact at once)"}


@dataclass(frozen=True)
class Case:
    id: str
    memory_type: str
    older: str
    newer: str
    expected: str  # "keep" | "replace"
    category: str
    split: str
    author: str


def load_pairs(split: str = "all", files: tuple[str, ...] = PAIR_FILES) -> list[Case]:
    out = []
    for name in files:
        for line in (HERE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if split in ("all", r["split"]):
                out.append(
                    Case(
                        r["id"], AS_WRITTEN.get(r["memory_type"], r["memory_type"]), r["older"],
                        r["newer"], r["expected"], r["category"], r["split"], name,
                    )
                )  # fmt: skip
    return out


def load_values(split: str = "all") -> list[dict[str, Any]]:
    rows = [
        json.loads(line)
        for line in (HERE / "values.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [r for r in rows if split in ("all", r["split"])]


def outcomes(engine: mc.MemoryEngine, cases: Iterable[Case]) -> Iterator[tuple[str, str]]:
    """``(outcome, rule)`` of the newer statement on the older, per case: outcome ``auto``,
    ``auto-restated`` (superseded at once as the same fact said again -- a duplicate: the
    newer memory carries the fact), ``pending`` or ``none``."""
    for c in cases:
        pid = f"st-{c.id}"
        old = engine.add_memory(pid, c.older, c.memory_type, created_at=T0, by="eval").memory
        res = engine.add_memory(
            pid, c.newer, c.memory_type, created_at=T0 + timedelta(days=30), by="eval"
        )
        mine = [s for s in res.supersessions if s.old_id == old.id]
        if not mine:
            yield "none", ""
        elif any(s.state.value == "auto" for s in mine):
            restated = all(s.verdict == "duplicate" for s in mine)
            yield ("auto-restated" if restated else "auto"), mine[0].rule
        else:
            yield "pending", mine[0].rule


def measures(cases: list[Case], got: list[tuple[str, str]]) -> dict[str, int]:
    c: Counter[str] = Counter()
    for case, (outcome, _rule) in zip(cases, got, strict=True):
        if case.expected == "keep":
            c["keep"] += 1
            c["keep_auto"] += outcome == "auto"
            c["keep_restated"] += outcome == "auto-restated"
            c["keep_review"] += outcome == "pending"
        else:
            c["replace"] += 1
            c["replace_found"] += outcome != "none"
            c["replace_auto"] += outcome.startswith("auto")
    return dict(c)


# --- values ---------------------------------------------------------------------------------------
#: The tests as the authors named them -> the lexicon's analyte ids (the harness's own table).
TEST_ANALYTES = {
    "ALT": "alt", "BMI": "bmi", "GAD-7": "gad 7", "HbA1c": "hba1c", "INR": "inr",
    "LDL cholesterol": "ldl", "MMSE": "mmse", "MoCA": "moca", "PHQ-9": "phq 9", "PSA": "psa",
    "SpO2": "oxygen saturation", "TSH": "tsh", "blood pressure": "blood pressure",
    "creatinine": "creatinine", "eGFR": "egfr", "fasting glucose": "fasting glucose",
    "ferritin": "ferritin", "free T4": "free t4", "glucose": "glucose",
    "haemoglobin": "hemoglobin", "heart rate": "heart rate", "height": "body height",
    "pH": "ph", "potassium": "potassium", "sodium": "sodium", "temperature": "body temperature",
    "total cholesterol": "total cholesterol", "urine ACR": "uacr", "vitamin D": "vitamin d",
    "weight": "body weight",
}  # fmt: skip
#: Unit spellings the authors used that name the same unit as the reader's spelling.
_SAME_UNIT = {
    "cel": "°c",
    "[degf]": "°f",
    "{score}": "",
    "{inr}": "",
    "/min": "/min",
    "[ph]": "",
    "umol/l": "umol/l",
    "µmol/l": "umol/l",
    "mg/dl": "mg/dl",
    "%": "%",
}


def _unit_key(unit: str) -> str:
    u = unit.strip().lower().replace("µ", "u").replace(" ", "")
    return _SAME_UNIT.get(u, u)


def value_read(case: dict[str, Any]) -> tuple[str, str] | None:
    """``(number, unit)`` the reader gives the case's analyte, or None (no value)."""
    analyte = lexicon().analytes.get(TEST_ANALYTES[case["test"]])
    if analyte is None:
        return None
    fact = read(case["text"], case["memory_type"]).get(analyte.key)
    if fact is None or not fact.asserted:
        return None  # no value of the patient's own, now
    v = parts(fact.value).get("value", "")
    if not v:
        return None
    number, _, unit = v.partition(" ")
    return number, unit


def value_right(case: dict[str, Any], got: tuple[str, str] | None) -> bool:
    want = case["value"]
    if want is None:
        return got is None
    if got is None:
        return False
    number, unit = got
    if isinstance(want, str):  # a blood pressure "142/88"
        same = number == want
    else:
        try:
            same = abs(float(number) - float(want)) <= 1e-6 * max(1.0, abs(float(want)))
        except ValueError:
            same = False
    return same and (not unit or _same_unit(unit, case["unit"] or ""))


def _same_unit(ours: str, theirs: str) -> bool:
    """One unit, however spelt ("micromol/L" and "umol/L"; "°C" and UCUM's "Cel")."""
    from memory_core.facts.units import unit_named

    a, b = unit_named(lexicon(), ours), unit_named(lexicon(), theirs)
    if a is not None and b is not None:
        return a == b
    return _unit_key(ours) == _unit_key(theirs)


# --- the report -----------------------------------------------------------------------------------
def run(ctx: Context) -> Section:
    sec = Section("Held-out statements (issue 30): asserted changes only")
    n_pairs = len(load_pairs("dev")) + len(load_pairs("test"))
    n_values = len(load_values("dev")) + len(load_values("test"))
    sec.add(
        f"{n_pairs} pairs and {n_values} value statements written by {len(PAIR_FILES)} authors "
        "who had not read the reader, frozen in `eval/statements/` before it changed (see its "
        "README). Each pair a patient of its own: the older added, the newer 30 days later "
        "with `add_memory`. "
        "`keep`: the newer asserts no change of the patient's own fact (a question, an "
        "instruction, a conditional, a definition or threshold, a plan, reported speech, "
        "history, another person, something that only names the thing, a unit that differs); "
        "`replace`: it asserts one. The dev half was read while the reader was built; the test "
        "half was not.",
        "",
    )
    rows = []
    for split in ("dev", "test"):
        cases = load_pairs(split)
        with ctx.engine(T0 + timedelta(days=60)) as eng:
            got = list(outcomes(eng, cases))
        for author in PAIR_FILES:
            mine = [(c, g) for c, g in zip(cases, got, strict=True) if c.author == author]
            if mine:
                m = measures([c for c, _g in mine], [g for _c, g in mine])
                rows.append(_row(f"{split}, {author}", m))
        m = measures(cases, got)
        sec.numbers[f"{split}_keep_auto"] = m.get("keep_auto", 0)
        rows.append(_row(f"**{split}, all**", m))
        if split == "test":
            sec.add(*_by_category(cases, got), "")
    sec.add(
        *table(
            ["half", "keep pairs", "superseded at once", "restated at once", "sent to review",
             "replace pairs", "found", "at once"],
            rows,
        ),
        "",
        "_Superseded at once_: a kept fact hidden by a statement that is not the same fact "
        "again (the safety target: 0 on the test half). _Restated at once_: the older replaced "
        "by the same fact said again (a duplicate, often in another unit: 12 st 10 lb and "
        "80.7 kg) -- the newer memory carries the fact, nothing true is hidden.",
        "",
    )  # fmt: skip
    vrows = []
    for split in ("dev", "test"):
        vals = load_values(split)
        right = sum(value_right(v, value_read(v)) for v in vals)
        wrong_unit = sum(unit_invented(v, value_read(v)) for v in vals)
        vrows.append([split, len(vals), right, wrong_unit])
    sec.add(
        "Values: the number and unit the reader gives the statement's test (or none), against "
        "the author's. A unit not written in the statement is never shown: a bare number keeps "
        "no unit.",
        "",
        *table(["half", "statements", "read as the author reads them", "unit not written"], vrows),
    )
    return sec


def _row(split: str, m: dict[str, int]) -> list[object]:
    return [
        split, m.get("keep", 0), m.get("keep_auto", 0), m.get("keep_restated", 0),
        m.get("keep_review", 0), m.get("replace", 0), m.get("replace_found", 0),
        m.get("replace_auto", 0),
    ]  # fmt: skip


def _by_category(cases: list[Case], got: list[tuple[str, str]]) -> list[str]:
    by: dict[str, Counter[str]] = {}
    for c, (outcome, _r) in zip(cases, got, strict=True):
        by.setdefault(c.category, Counter())[outcome] += 1
    rows = [
        [cat, sum(n.values()), n["auto"], n["auto-restated"], n["pending"], n["none"]]
        for cat, n in sorted(by.items())
    ]
    return [
        "Test half by category (outcome of the newer statement on the older):",
        "",
        *table(["category", "pairs", "at once", "restated at once", "review", "none"], rows),
    ]


def unit_invented(case: dict[str, Any], got: tuple[str, str] | None) -> bool:
    """The reader gave a unit the statement does not write."""
    if got is None or not got[1]:
        return False
    folded = fold(case["text"]).lower().replace(" ", "")  # "m²" is "m2", "µ" is "u"
    unit = got[1].lower().replace(" ", "")
    return unit not in folded and not (unit == "umol/l" and "micromol" in folded)


def _show(
    cases: list[Case],
    got: list[tuple[str, str]],
    vals: list[dict[str, Any]],
    read_vals: list[tuple[str, str] | None],
) -> None:
    """The dev half's misses: a kept fact superseded at once, a change not found, a value
    read otherwise than its author reads it."""
    for c, (o, r) in zip(cases, got, strict=True):
        if (c.expected == "keep" and o.startswith("auto")) or (
            c.expected == "replace" and o == "none"
        ):
            print(f"{c.id} [{c.category}] {c.expected} got {o} {r}")
            print(f"  O: {c.older}\n  N: {c.newer}")
    for v, g in zip(vals, read_vals, strict=True):
        if not value_right(v, g):
            print(f"{v['id']} {v['test']}: want {v['value']} {v['unit']} got {g}\n  {v['text']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--show", action="store_true", help="list the dev half's misses")
    args = ap.parse_args(argv)
    cases = load_pairs(args.split)
    with tempfile.TemporaryDirectory() as tmp:
        eng = mc.open_engine(
            f"sqlite:///{tmp}/st.db", args.embedder, clock=lambda: T0 + timedelta(days=60)
        )
        got = list(outcomes(eng, cases))
        eng.store.close()
    m = measures(cases, got)
    print(json.dumps(m))
    vals = load_values(args.split)
    read_vals = [value_read(v) for v in vals]
    print(
        "values right:",
        sum(value_right(v, g) for v, g in zip(vals, read_vals, strict=True)),
        "/",
        len(vals),
        "unit not written:",
        sum(unit_invented(v, g) for v, g in zip(vals, read_vals, strict=True)),
    )
    if args.show and args.split == "dev":
        _show(cases, got, vals, read_vals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
