"""What the injected section tells the agent about the patient's current state (issue 23).

**Synthea** (public R4 bundles, git-ignored: ``<data>/synthea/<id>-bundle.json``; the first 20
sorted bundles whose id ends in an odd digit -- even ids are kept back). Each bundle is imported
with ``import_fhir(dry_run=False)`` into a fresh SQLite store (the run's embedder, the clock fixed
at :data:`NOW`, after every record's last date), then ``build_context(..., record_access=False)``
with the defaults answers:

- "What medications is the patient currently taking?" -- the bundle's active MedicationRequests
  whose memory reaches the section (its own line, or a line it shares); a stopped one *presented
  as current* is a stopped request's memory on a "current" list line;
- "What are the patient's active medical problems?" -- the bundle's active Conditions, likewise;
- "What is the patient's latest <analyte>?" for each analyte the patient has an active lab
  result of -- the newest such result in the section;
- in every one of these sections, every active allergy.

Median section tokens over every question asked. **Demo**: the held-out clinician questions of
``eval/demo_questions.json`` answered in the default section, and NW-1001's documented
anaphylaxis in the section at every token budget from 30 to 400 that holds any line.

:data:`BEFORE` is the same measure on main cee0266 (the last main merged, before this branch's
selection work), per patient; the measure uses the public API only, so it ran there unchanged.
``python -m eval --only section`` puts it in the report.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memory_core as mc
from memory_core.facts.lexicon import lexicon

from .floor import bundles, record_status
from .runner import Context, Section, progress, table

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
DEMO_NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)  # the demo's moment (tests/conftest.py)
N_PATIENTS = 20
MED_Q = "What medications is the patient currently taking?"
COND_Q = "What are the patient's active medical problems?"
LAB_Q = "What is the patient's latest {}?"
QUESTIONS_FILE = Path(__file__).with_name("demo_questions.json")
#: Per patient (first 8 characters of the id) on main cee0266 (issue 24's importer, issue 23a's
#: confirmations; before this branch's selection work): active medications in the answer,
#: active medications, stopped presented as current, active conditions in the answer, active
#: conditions, latest lab present, labs asked, allergies held, allergies asked, median tokens.
#: Filled from a run of this module there (it uses the public API only).
BEFORE: dict[str, tuple[int, ...]] = {
    "7534846b": (0, 0, 0, 0, 0, 4, 4, 0, 0, 130),
    "601d8eb4": (4, 6, 0, 5, 22, 27, 28, 0, 0, 263),
    "9921222a": (0, 0, 0, 0, 1, 8, 8, 0, 0, 176),
    "aa0cab0c": (0, 0, 0, 0, 1, 4, 4, 0, 0, 140),
    "696147f7": (3, 6, 0, 5, 17, 27, 27, 0, 0, 260),
    "861c8657": (3, 4, 0, 0, 6, 23, 23, 0, 0, 255),
    "ad467aa5": (0, 2, 0, 0, 2, 4, 4, 24, 24, 288),
    "943bddea": (1, 1, 0, 0, 5, 22, 22, 0, 0, 258),
    "27b64fb7": (0, 2, 0, 0, 1, 4, 4, 42, 42, 346),
    "ee6558ba": (1, 1, 0, 1, 1, 4, 4, 0, 0, 138),
    "5904c9be": (0, 1, 0, 0, 2, 8, 8, 0, 0, 182),
    "81b04602": (0, 0, 0, 0, 4, 8, 8, 0, 0, 177),
    "d0f66ff1": (2, 2, 0, 0, 5, 4, 4, 0, 0, 164),
    "d412dcd4": (0, 0, 0, 0, 0, 4, 4, 0, 0, 168),
    "99e9ede3": (0, 0, 0, 0, 0, 4, 4, 0, 0, 145),
    "d13a45e3": (1, 1, 0, 1, 4, 17, 17, 0, 0, 255),
    "465bac83": (0, 0, 0, 0, 5, 4, 4, 0, 0, 141),
    "1e20c60b": (1, 6, 0, 0, 4, 29, 29, 31, 31, 293),
    "36eedc10": (4, 7, 0, 0, 14, 27, 28, 0, 0, 293),
    "fdad5378": (3, 6, 0, 0, 2, 26, 26, 0, 0, 184),
}
BEFORE_TOTALS: dict[str, Any] = {
    "meds": (23, 45),
    "stopped": 0,
    "conds": (12, 96),
    "labs": (258, 260),
    "allergies": (97, 97),
    "tokens": 246.5,
}
#: The demo on main cee0266: held-out questions answered; NW-1001's budgets (30-400, every 5)
#: whose section holds a line but not the documented anaphylaxis.
BEFORE_DEMO = {"questions": "30 / 33", "anaphylaxis missing at": "40, 45, 50, 55, 60"}
#: The same measure on main a9c5b85, with its older importer (fewer lab results and allergies).
A9C5B85 = {
    "meds": "33 / 45",
    "conds": "22 / 96",
    "labs": "29 / 29",
    "allergies": "28 / 28",
    "tokens": "181",
    "questions": "37 / 40 (the demo before issue 26 regenerated it)",
}
LAST_ROWS: list[Row] = []  # the last run's rows (``python -m eval.section`` prints them)
#: The issue's own figures on main 9ee89da (another importer then; for the record).
ISSUE = {
    "meds": "63 / 118",
    "conds": "28 / 140",
    "labs": "50 / 50",
    "allergies": "660 / 660",
    "tokens": "268",
}


@dataclass
class Row:
    patient: str
    meds_in: int = 0
    meds: int = 0
    stopped_as_current: int = 0
    conds_in: int = 0
    conds: int = 0
    labs_in: int = 0
    labs: int = 0
    allergies_in: int = 0
    allergies: int = 0
    tokens: list[int] = field(default_factory=list)

    def cells(self) -> tuple[int, ...]:
        med = int(statistics.median(self.tokens)) if self.tokens else 0
        return (
            self.meds_in, self.meds, self.stopped_as_current, self.conds_in, self.conds,
            self.labs_in, self.labs, self.allergies_in, self.allergies, med,
        )  # fmt: skip


def _resources(bundle: dict[str, Any], rtype: str, status: str) -> list[str]:
    return [
        f"fhir:{rtype}/{e['resource']['id']}"
        for e in bundle.get("entry") or []
        if e.get("resource", {}).get("resourceType") == rtype
        and record_status(e["resource"]) == status
    ]


def _shared_current(item: mc.ContextItem) -> bool:
    """The item reaches the section on a line listing current facts (issue 23's kind lines;
    main has none)."""
    return getattr(item, "part_of", "") == "list"


def analyte_of(m: mc.Memory) -> str | None:
    """The lab result's analyte (labs.json id), from its keys."""
    lex = lexicon()
    for f in m.facts.facts if m.facts else ():
        if f.key.startswith("loinc:"):
            a = lex.analyte_for_code(f.name)
            if a is not None:
                return a.id
    return None


def _label(m: mc.Memory) -> str:
    """How the question names an analyte: as the result's statement writes it."""
    for f in m.facts.facts if m.facts else ():
        if f.key.startswith("loinc:") and f.text:
            return f.text
    return analyte_of(m) or "lab result"


def measure_patient(eng: mc.MemoryEngine, bundle: dict[str, Any], pid: str) -> Row:
    row = Row(pid[:8])
    active = eng.list_memories(pid, include_inactive=False)
    by_source = {m.source: m for m in active if m.source}
    allergies = {m.id for m in active if m.memory_type == "allergy"}

    def ask(q: str) -> dict[str, mc.ContextItem]:
        res = eng.build_context(pid, q, record_access=False)
        row.tokens.append(res.tokens)
        inc = {i.scored.memory.id: i for i in res.included}
        row.allergies += len(allergies)
        row.allergies_in += len(allergies & inc.keys())
        return inc

    def held(sources: Iterable[str], inc: dict[str, mc.ContextItem]) -> int:
        return sum(1 for s in sources if (m := by_source.get(s)) is not None and m.id in inc)

    inc = ask(MED_Q)
    meds = _resources(bundle, "MedicationRequest", "active")
    row.meds, row.meds_in = len(meds), held(meds, inc)
    stopped = _resources(bundle, "MedicationRequest", "stopped")
    row.stopped_as_current = sum(
        1
        for s in stopped
        if (m := by_source.get(s)) is not None and m.id in inc and _shared_current(inc[m.id])
    )
    inc = ask(COND_Q)
    conds = _resources(bundle, "Condition", "active")
    row.conds, row.conds_in = len(conds), held(conds, inc)
    latest: dict[str, mc.Memory] = {}
    for m in active:
        a = analyte_of(m) if m.memory_type == "lab_result" else None
        if a is not None and (a not in latest or m.created_at > latest[a].created_at):
            latest[a] = m
    for m in latest.values():
        row.labs += 1
        row.labs_in += m.id in ask(LAB_Q.format(_label(m)))
    return row


def synthea_rows(ctx: Context) -> list[Row] | None:
    folder = ctx.data / "synthea"
    paths = bundles(folder)
    if not paths:
        return None
    rows = []
    for path in paths:
        bundle = json.loads(path.read_text(encoding="utf-8"))
        pid = next(
            e["resource"]["id"]
            for e in bundle["entry"]
            if e["resource"]["resourceType"] == "Patient"
        )
        with ctx.engine(NOW) as eng:
            eng.import_fhir(bundle, by="eval", dry_run=False, now=NOW)
            rows.append(measure_patient(eng, bundle, pid))
        progress(f"section: {path.name} done")
    return rows


# --- the demo ----------------------------------------------------------------------------------
def load_questions(path: Path = QUESTIONS_FILE, retired: bool = False) -> list[dict[str, Any]]:
    """The held-out cases still answerable in the demo (``retired=True``: those that are not,
    each saying why)."""
    questions: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["questions"]
    return [c for c in questions if ("retired" in c) == retired]


def answers(case: dict[str, Any], memories: Iterable[mc.Memory]) -> bool:
    """The memories (those that reached the section) answer the case."""
    mems = list(memories)

    def has(want: str) -> bool:
        if want.startswith("lab:"):
            return any(m.memory_type == "lab_result" and analyte_of(m) == want[4:] for m in mems)
        return any(want.lower() in m.content.lower() for m in mems)

    if "all" in case:
        return all(has(w) for w in case["all"])
    return any(has(w) for w in case["any"])


def demo_questions(eng: mc.MemoryEngine) -> tuple[int, int, list[str]]:
    hits, rows = 0, []
    cases = load_questions()
    for c in cases:
        res = eng.build_context(c["patient"], c["question"], record_access=False)
        ok = answers(c, (i.scored.memory for i in res.included))
        hits += ok
        rows.append(f"{'ok' if ok else 'MISS'}: {c['patient']} {c['question']}")
    return hits, len(cases), rows


ANAPHYLAXIS = "documented penicillin allergy with anaphylactic reaction"


def budget_sweep(eng: mc.MemoryEngine, query: str) -> tuple[int, int, list[int]]:
    """NW-1001 at token budgets 30..400: sections holding any line, of them those holding the
    documented anaphylaxis, and the budgets that miss it."""
    nonempty = kept = 0
    missed = []
    for budget in range(30, 401, 5):
        res = eng.build_context("NW-1001", query, max_tokens=budget, record_access=False)
        if not res.text:
            continue
        nonempty += 1
        if any(ANAPHYLAXIS in i.scored.memory.content for i in res.included):
            kept += 1
        else:
            missed.append(budget)
    return nonempty, kept, missed


def demo_part(ctx: Context, sec: Section) -> None:
    from memory_core.seed import seed_demo

    with ctx.engine(DEMO_NOW) as eng:
        seed_demo(eng, now=DEMO_NOW)
        hits, n, rows = demo_questions(eng)
        sec.numbers["demo questions answered"] = hits / n
        sec.add(
            f"**Demo, held-out clinician questions** (`eval/demo_questions.json`, written before "
            f"the change and not tuned to): {hits} / {n} answered in the default section "
            f"({100 * hits / n:.0f} %); {len(load_questions(retired=True))} more are retired "
            "(the regenerated demo holds no memory that answers them).",
            "",
            *[f"- {r}" for r in rows if r.startswith("MISS")],
            "",
        )
        for query in ("Can the patient take amoxicillin?", "How is the patient doing?"):
            nonempty, kept, missed = budget_sweep(eng, query)
            sec.add(
                f"**Demo, NW-1001 at budgets 30-400** ({query!r}): the documented anaphylaxis "
                f"is in {kept} of the {nonempty} sections that hold any line"
                + (f" (missing at {missed})" if missed else "")
                + ".",
                "",
            )


HEADER = [
    "patient", "active meds in answer", "stopped as current", "active conditions in answer",
    "latest lab present", "allergies held", "median tokens",
]  # fmt: skip


def _cells(c: tuple[int, ...]) -> list[str]:
    return [
        f"{c[0]} / {c[1]}", str(c[2]), f"{c[3]} / {c[4]}", f"{c[5]} / {c[6]}",
        f"{c[7]} / {c[8]}", str(c[9]),
    ]  # fmt: skip


def totals(rows: list[Row]) -> dict[str, Any]:
    s = [sum(r.cells()[k] for r in rows) for k in range(9)]
    tokens = [t for r in rows for t in r.tokens]
    return {
        "meds": (s[0], s[1]),
        "stopped": s[2],
        "conds": (s[3], s[4]),
        "labs": (s[5], s[6]),
        "allergies": (s[7], s[8]),
        "tokens": statistics.median(tokens) if tokens else 0,
    }


def _total_cells(t: dict[str, Any]) -> list[str]:
    def frac(p: tuple[int, int]) -> str:
        return f"{p[0]} / {p[1]} ({100 * p[0] / p[1]:.0f} %)" if p[1] else "0 / 0"

    return [
        frac(t["meds"]), str(t["stopped"]), frac(t["conds"]), frac(t["labs"]),
        frac(t["allergies"]), f"{t['tokens']:g}",
    ]  # fmt: skip


def run(ctx: Context) -> Section:
    sec = Section("The section's current state: lists, history, safety (issue 23)")
    sec.add(__doc__.split("\n\n", 1)[1].split("``python -m eval")[0].strip(), "")
    rows = synthea_rows(ctx)
    LAST_ROWS[:] = rows or []
    if rows is None:
        sec.add(f"No Synthea bundles in `{ctx.data / 'synthea'}`: the Synthea part is skipped.", "")
    else:
        t = totals(rows)
        sec.numbers["active meds in answer"] = t["meds"][0] / max(t["meds"][1], 1)
        sec.numbers["active conditions in answer"] = t["conds"][0] / max(t["conds"][1], 1)
        sec.numbers["stopped as current"] = t["stopped"]
        sec.numbers["median tokens"] = float(t["tokens"])
        body = []
        for r in rows:
            before = BEFORE.get(r.patient)
            body.append([r.patient, *(_cells(before) if before else ["-"] * 6)])
            body.append(["", *_cells(r.cells())])
        sec.add(
            "Per patient: the first row of each is main cee0266 (before), the second this run.",
            "",
            *table(HEADER, body),
            "",
            *table(
                ["", *HEADER[1:]],
                [
                    [
                        "before (cee0266)",
                        *(_total_cells(BEFORE_TOTALS) if BEFORE_TOTALS else ["-"] * 6),
                    ],
                    ["this run", *_total_cells(t)],
                ],
            ),
            "",
            f"The issue's figures on main 9ee89da (an older importer): active medications "
            f"{ISSUE['meds']}, active conditions {ISSUE['conds']}, latest lab {ISSUE['labs']}, "
            f"allergies {ISSUE['allergies']}, median tokens {ISSUE['tokens']}. On main a9c5b85 "
            f"(the importer before issue 24): active medications {A9C5B85['meds']}, active "
            f"conditions {A9C5B85['conds']}, latest lab {A9C5B85['labs']}, allergies "
            f"{A9C5B85['allergies']}, median tokens {A9C5B85['tokens']}.",
            "",
        )
    demo_part(ctx, sec)
    return sec


def main() -> None:  # pragma: no cover - a developer's shortcut
    """``python -m eval.section``: the table on stdout, without the other data sets."""
    import os
    import tempfile

    from memory_core.embedding import make_embedder

    from .runner import ROOT

    data = Path(os.environ.get("EVAL_DATA", str(ROOT / "data" / "eval")))
    with tempfile.TemporaryDirectory() as tmp:
        sec = run(Context(data, make_embedder("minilm"), Path(tmp)))
    print("\n".join(sec.lines))
    print("BEFORE = " + repr({r.patient: r.cells() for r in LAST_ROWS}))
    print("BEFORE_TOTALS = " + repr(totals(LAST_ROWS)))


if __name__ == "__main__":
    main()
