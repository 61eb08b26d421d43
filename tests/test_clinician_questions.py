"""Questions a clinician asks about the demo patients (issue 14; in issue 26 retargeted to the
demo whose statements no longer change with the seeding day): at the default settings the
memory that answers each one (or, for a lab question, a line of its series) is in the section
for at least 90 % of them, and every active allergy is in every section.

The cases are data (:data:`CASES`); the test prints a summary of each outcome. Measured on the
Northwind demo (real MiniLM) as of the demo's moment; the README reports the figure.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import memory_core as mc
from memory_core import flags
from memory_core.flags import analyte_mentions
from tests.conftest import DEMO_NOW

TARGET = 0.90


@dataclass(frozen=True)
class Case:
    """``expect``: any of these is the answer -- a phrase of the memory's content, or
    ``lab:<analyte>`` for any active lab result of that analyte (the line carries its series)."""

    patient: str
    question: str
    expect: tuple[str, ...]


def case(patient: str, question: str, *expect: str) -> Case:
    return Case(f"NW-{patient}", question, expect)


CASES: tuple[Case, ...] = (
    case("1001", "Any problems with the new diabetes medication?", "GI distress on metformin"),
    case("1001", "What are they allergic to?", "penicillin allergy"),
    case("1001", "Is the blood pressure controlled?", "blood pressure goal", "high blood pressure"),
    case("1001", "What's the latest HbA1c?", "lab:hba1c"),
    case("1001", "Did the lisinopril cough settle?", "resolved after switching to losartan"),
    case("1001", "What time of day should we book the appointment?", "afternoon appointments"),
    case("1001", "Anything going on with the liver?", "fatty liver"),
    case("1001", "How do they like things explained?", "plain words", "large-print"),
    case("1002", "How is the kidney function?", "chronic kidney disease", "lab:egfr"),
    case("1002", "Any contrast allergy before the CT scan?", "iodine contrast allergy"),
    case("1002", "Why do they feel full so quickly after eating?", "gastroparesis"),
    case("1002", "What insulin are they on?", "insulin glargine"),
    case("1002", "Who does the cooking at home?", "spouse who cooks"),
    case("1002", "Any overnight hypos lately?", "fewer overnight lows"),
    case("1003", "Is the gabapentin causing side effects?", "too drowsy to drive"),
    case("1003", "Any joint pain from the diabetes tablets?", "joint pain that began"),
    case("1003", "Which language do they prefer?", "Portuguese"),
    case("1003", "How do they get to the clinic?", "bus to reach the clinic"),
    case("1003", "Do they smoke?", "smokes half a pack"),
    case("1003", "How are the cholesterol numbers?", "lab:ldl", "lab:triglycerides"),
    case("1003", "What are they taking for reflux?", "omeprazole"),
    case("1004", "Is the patient's kidney function getting worse?", "chronic kidney disease"),
    case("1004", "What was the last eGFR?", "lab:egfr"),
    case("1004", "What are they allergic to?", "codeine"),
    case("1004", "How should we contact them?", "text message", "call about lab results"),
    case("1004", "Do they work nights?", "night shifts"),
    case("1007", "Any problems with the metoprolol?", "metoprolol was doubled"),
    case("1008", "How should we contact them?", "dislikes phone calls"),
    case("1005", "Who helps with care at home?", "daughter is the main caregiver"),
    case("1006", "Is the semaglutide working?", "lost 8 kg"),
    case("1005", "Has the heel ulcer healed?", "heel ulcer closed"),
    case("1007", "Any problems with the diabetes medication?", "loose stools"),
    case("1005", "Are they on anything for kidney protection?", "empagliflozin"),
    case("1005", "What is the kidney function now?", "lab:egfr"),
    case("1004", "Any trouble at the injection sites?", "red itchy bumps"),
    case("1006", "Any heart problems?", "coronary artery disease"),
    case("1006", "Do they have sleep apnoea?", "obstructive sleep apnea"),
    case("1006", "Any dietary restrictions?", "vegetarian"),
    case("1007", "Any eye problems from the diabetes?", "retinopathy"),
    case("1007", "Where do they pick up prescriptions?", "pharmacy near work"),
    case("1005", "Any side effects from the empagliflozin?", "yeast infection"),
    case("1008", "What is their weight like?", "BMI of 37"),
    case("1008", "Can they manage stairs at home?", "third floor without an elevator"),
)


def answered(case: Case, res: mc.ContextResult) -> bool:
    inc = [i.scored.memory for i in res.included]
    for want in case.expect:
        if want.startswith("lab:"):
            analyte = want.removeprefix("lab:")
            if any(
                m.memory_type == "lab_result" and analyte in analyte_mentions(m.content)
                for m in inc
            ):
                return True
        elif any(want.lower() in m.content.lower() for m in inc):
            return True
    return False


@pytest.fixture(scope="module")
def demo_engine(demo_db: str, tmp_path_factory: pytest.TempPathFactory) -> mc.MemoryEngine:
    copy = Path(tmp_path_factory.mktemp("questions")) / "demo.db"
    shutil.copyfile(demo_db, copy)
    return mc.open_engine(f"sqlite:///{copy}", "minilm", clock=lambda: DEMO_NOW)


def test_the_cases_are_many_and_name_real_memories(demo_engine: mc.MemoryEngine) -> None:
    assert len(CASES) >= 30
    for c in CASES:  # every expected phrase names an active memory of that patient
        active = demo_engine.list_memories(c.patient, include_inactive=False)
        assert any(
            (w.startswith("lab:") and any(w[4:] in analyte_mentions(m.content) for m in active))
            or any(w.lower() in m.content.lower() for m in active)
            for w in c.expect
        ), c


def test_clinician_questions_at_default_settings(
    demo_engine: mc.MemoryEngine, eval_report: Callable[[str], None]
) -> None:
    hits = 0
    rows = []
    for c in CASES:
        res = demo_engine.build_context(c.patient, c.question, record_access=False)
        allergies = {
            m.id
            for m in demo_engine.list_memories(c.patient, include_inactive=False)
            if m.memory_type == "allergy"
        }
        included = {i.scored.memory.id for i in res.included}
        assert allergies <= included, (c, "an allergy is missing from the section")
        lines = res.text.splitlines()[2 : 2 + len(allergies)]
        assert all(
            i.position is not None and i.position <= len(allergies)
            for i in res.included
            if i.scored.memory.id in allergies
        ), lines
        ok = answered(c, res)
        hits += ok
        rows.append(
            f"{'ok  ' if ok else 'MISS'} {c.patient} {c.question} -> {' | '.join(c.expect)}"
        )
    rate = hits / len(CASES)
    eval_report(
        f"\nclinician questions: {hits}/{len(CASES)} answered ({rate:.0%})\n"
        + "\n".join("  " + r for r in rows)
    )
    assert rate >= TARGET


# --- the issue's own cases (issue 14, "Measured on the demo data"), at default settings ---------
KIDNEY = "Is the patient's kidney function getting worse?"
STOMACH = "Patient asks whether the new diabetes medication could upset their stomach again."


def _included(res: mc.ContextResult) -> list[mc.ContextItem]:
    return sorted(res.included, key=lambda i: i.position or 0)


def test_nw1004_kidney_question_has_the_ckd_line(demo_engine: mc.MemoryEngine) -> None:
    res = demo_engine.build_context("NW-1004", KIDNEY, record_access=False)
    contents = [i.scored.memory.content for i in _included(res)]
    assert "Patient has chronic kidney disease stage 2" in contents
    # importance 8 after use is a marker, not a tier: no condition is safety-critical
    assert not any(
        i.scored.safety
        for i in res.items
        if i.scored.memory.memory_type != "allergy"
        and i.scored.memory.memory_type != "adverse_reaction"
    )
    ckd = next(i for i in res.items if i.scored.memory.content.endswith("disease stage 2"))
    assert ckd.rule.startswith("in the section")


def test_nw1004_kidney_question_has_an_egfr_line_with_its_history(
    demo_engine: mc.MemoryEngine,
) -> None:
    res = demo_engine.build_context("NW-1004", KIDNEY, record_access=False)
    egfr = [
        i
        for i in _included(res)
        if i.scored.memory.memory_type == "lab_result"
        and "egfr" in analyte_mentions(i.scored.memory.content)
    ]
    assert len(egfr) == 1
    (note,) = [a for a in egfr[0].annotations if a.startswith("(was ")]
    assert note.count(" in ") == 3  # three earlier values, dated
    assert egfr[0].line.endswith(note)


def test_nw1004_egfr_history_is_its_superseded_series(demo_engine: mc.MemoryEngine) -> None:
    """The active eGFR line carries the values it superseded, newest first, at most three."""
    res = demo_engine.build_context("NW-1004", "What was the last eGFR?", record_access=False)
    (egfr,) = [i for i in _included(res) if "egfr" in analyte_mentions(i.scored.memory.content)]
    sups = {
        s.new_id: s.old_id for s in demo_engine.supersessions("NW-1004") if s.in_effect(DEMO_NOW)
    }
    chain, at = [], egfr.scored.memory.id
    while at in sups and len(chain) < 3:
        at = sups[at]
        chain.append(demo_engine.get(at))
    assert len(chain) == 3
    parts = [f"{flags.lab_value(m.content)} in {m.created_at.strftime('%B %Y')}" for m in chain]
    assert egfr.annotations == (f"(was {', '.join(parts)})",)


def test_nw1001_at_the_page_defaults(demo_engine: mc.MemoryEngine) -> None:
    res = demo_engine.build_context("NW-1001", STOMACH, max_tokens=400, record_access=False)
    # issue 35: a safety memory the places leave out is reported as one the budget leaves out
    # (the dry cough on lisinopril); every allergy is in, and nothing else is reported
    assert all(
        i.scored.memory.memory_type == "adverse_reaction" and "(limit 5)" in i.rule
        for i in res.safety_omitted
    )
    walking = [i for i in res.items if "walk 30 minutes" in i.scored.memory.content]
    assert walking and not walking[0].scored.safety  # a care plan is never safety-critical
    allergies = [i for i in _included(res) if i.scored.memory.memory_type == "allergy"]
    # three allergies on the first two lines: the re-test pending review against the documented
    # anaphylaxis shares its line (issue 23: one line saying both, the newer one unconfirmed)
    assert sorted(i.position for i in allergies) in ([1, 1, 2], [1, 2, 2])
    pair = [i for i in allergies if "penicillin" in i.scored.memory.content]
    assert len(pair) == 2 and {i.part_of for i in pair} == {"pair"}
    assert pair[0].position == pair[1].position


def test_nw1001_stomach_question_has_the_metformin_switch(demo_engine: mc.MemoryEngine) -> None:
    res = demo_engine.build_context("NW-1001", STOMACH, record_access=False)
    assert any("GI distress on metformin" in i.scored.memory.content for i in res.included)


def test_nw1001_stopping_metformin_replaces_the_switch(demo_db: str, tmp_path: Path) -> None:
    copy = tmp_path / "demo.db"
    shutil.copyfile(demo_db, copy)
    eng = mc.open_engine(f"sqlite:///{copy}", "minilm", clock=lambda: DEMO_NOW)
    new = eng.add_memory(
        "NW-1001", "Patient stopped metformin ER because of persistent diarrhoea", "medication"
    )
    assert any("GI distress on metformin" in eng.get(s.old_id).content for s in new.supersessions)
    res = eng.build_context("NW-1001", STOMACH, record_access=False)
    contents = [i.scored.memory.content for i in res.included]
    assert new.memory.content in contents
    assert not any("switched to extended-release" in c for c in contents)
