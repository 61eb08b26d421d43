"""The eight Northwind demo patients are people (issue 35): each one person with one story, not
an assembly of shared sentences. On main dfd818e 59 statements were written word for word into
three or more of them, NW-1006 had "retired from teaching last year" beside "stress from a
recent job change", NW-1003 drove a long-haul truck and looked after two grandchildren after
school, and NW-1001's cough "resolved after switching to losartan" while lisinopril stayed
current, unflagged, with no losartan anywhere. docs/demo-patients.md tells each story."""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.demo import DEMO_EPOCH, DemoMemory, northwind_demo
from memory_core.facts import State, read
from tests.conftest import DEMO_NOW

ROOT = Path(__file__).resolve().parents[1]
STORIES = ROOT / "docs" / "demo-patients.md"

#: Facts one person cannot hold together (each side a phrase of a statement, case aside).
PERSONA_CONFLICTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("retired from", ("job change", "on work days", "at work", "shifts", "near work", "meeting")),
    ("long-haul truck", ("grandchildren after school", "walks a large dog", "poor eyesight")),
    ("lives alone", ("lives with", "shares an apartment", "whole family", "main caregiver")),
    ("drives to visits", ("depends on the bus",)),
    ("fasts during ramadan", ("beers",)),
    ("anxious about starting insulin", ("injects insulin", "insulin lispro", "insulin pen")),
)


@pytest.fixture(scope="module")
def people() -> dict[str, list[DemoMemory]]:
    out: dict[str, list[DemoMemory]] = defaultdict(list)
    for m in northwind_demo(DEMO_EPOCH).memories:
        out[m.patient_id].append(m)
    return out


def test_no_statement_is_written_into_three_patients(
    people: dict[str, list[DemoMemory]],
) -> None:
    """59 on main dfd818e ("Patient asked for help reading nutrition labels" in 6)."""
    holders: dict[str, set[str]] = defaultdict(set)
    for pid, mems in people.items():
        for m in mems:
            holders[m.content].add(pid)
    assert {c: sorted(p) for c, p in holders.items() if len(p) > 2} == {}


def test_no_patient_holds_two_facts_one_person_cannot(
    people: dict[str, list[DemoMemory]],
) -> None:
    """2 on main (NW-1006 retired and changing jobs; NW-1003 on the road and at the school
    gate), plus what a clinician reading the rest would stop at."""
    found = []
    for pid, mems in people.items():
        text = " | ".join(m.content.lower() for m in mems)
        for one, others in PERSONA_CONFLICTS:
            found += [(pid, one, o) for o in others if one in text and o in text]
    assert found == []


def test_a_reaction_or_response_names_a_drug_the_patient_was_given(
    people: dict[str, list[DemoMemory]],
) -> None:
    """ "Patient lost track of insulin pen expiry dates" was NW-1003's, who takes no insulin."""
    for pid, mems in people.items():
        given = {
            f.key
            for m in mems
            if m.memory_type == "medication"
            for f in read(m.content, "medication").facts
            if f.key.startswith("drug:")
        }
        for m in mems:
            if m.memory_type in ("adverse_reaction", "treatment_response"):
                named = {f.key for f in read(m.content, m.memory_type).facts}
                assert {k for k in named if k.startswith("drug:")} <= given, (pid, m.content)


def test_one_result_of_a_test_per_draw(people: dict[str, list[DemoMemory]]) -> None:
    """Two HbA1c results four days apart, two weekly home averages in one session: gone."""
    series = re.compile(r"^(Patient's [A-Za-z -]+?|Patient weighed|Patient averaged) ?[a-z ]*\d")
    for pid, mems in people.items():
        last: dict[str, object] = {}
        for m in mems:
            match = series.match(m.content)
            if not match or m.memory_type not in ("lab_result", "observation"):
                continue
            name = match.group(1)
            before = last.get(name)
            gap = 60 if "HbA1c" in name else 7
            if before is not None:
                days = (m.created_at - before).days  # type: ignore[operator]
                assert days >= gap, (pid, m.content, days)
            last[name] = m.created_at


@pytest.fixture(scope="module")
def seeded(demo_db: str, tmp_path_factory: pytest.TempPathFactory) -> mc.MemoryEngine:
    copy = Path(tmp_path_factory.mktemp("people")) / "demo.db"
    shutil.copyfile(demo_db, copy)
    return mc.open_engine(f"sqlite:///{copy}", "minilm", clock=lambda: DEMO_NOW)


#: a switch and what follows its "to" (the drug switched to, or a new form of the same drug)
SWITCH = re.compile(r"\bswitch(?:ed|ing)\b.*?\bto\b(?P<to>.*)$", re.IGNORECASE)


STOPPED = State.STOPPED


def switched_from(memory: mc.Memory) -> set[str]:
    """The drugs a switch statement switches away from: those it names, but the one named
    after its "to" ("... resolved after switching to losartan": lisinopril; "GI distress on
    metformin; switched to extended-release formulation": metformin)."""
    found = SWITCH.search(memory.content)
    if found is None or memory.facts is None:
        return set()
    to = found.group("to").lower()
    drugs = [f for f in memory.facts.facts if f.key.startswith("drug:")]
    return {f.key for f in drugs if f.text.lower() not in to}


def test_a_drug_switched_away_from_is_not_current_unflagged(seeded: mc.MemoryEngine) -> None:
    """Every drug a switch statement names ("resolved after switching to losartan",
    "switched to extended-release formulation"): each older medication memory of it is
    replaced, waiting for a review, or flagged possibly out of date -- never current and
    silent. (On main: "lisinopril 10mg daily" stayed current beside the switch to losartan.)"""
    switches = 0
    for pid in seeded.list_patients():
        mems = seeded.list_memories(pid)
        pending = {s.old_id for s in seeded.supersessions(patient_id=pid, state="pending")}
        flagged = {f.memory_id for f in seeded.stale_flags(pid)}
        for s in mems:
            drugs = switched_from(s)
            switches += bool(drugs)
            for m in mems:
                if m.memory_type != "medication" or m.created_at >= s.created_at or m is s:
                    continue
                taken = {f.key for f in (m.facts.facts if m.facts else ()) if f.state != STOPPED}
                if not drugs & taken:  # names none of them, or as stopped ("switched from")
                    continue
                silent = m.status is mc.Status.ACTIVE and m.id not in pending | flagged
                assert not silent, (pid, m.content, "beside", s.content)
    assert switches == 3  # NW-1001's metformin ER, the losartan switch and its cough


def test_the_story_table_tells_every_patient_with_their_own_statements(
    seeded: mc.MemoryEngine,
) -> None:
    """docs/demo-patients.md: one row per patient, its story in one sentence, and the
    statements it quotes are that patient's active memories (the table stays true)."""
    rows = [ln for ln in STORIES.read_text(encoding="utf-8").splitlines() if ln.startswith("| NW-")]
    assert [r.split("|")[1].strip() for r in rows] == [f"NW-{1001 + i}" for i in range(8)]
    for row in rows:
        pid = row.split("|")[1].strip()
        active = {m.content for m in seeded.list_memories(pid, include_inactive=False)}
        quoted = re.findall(r"“([^”]+)”", row)
        assert len(quoted) >= 2, row
        for q in quoted:
            assert any(q in c for c in active), (pid, q)


def test_the_question_files_record_what_issue_35_changed() -> None:
    """A fact a frozen question asked about that had to change is retargeted or retired in
    the question file, with the reason -- never silently."""
    first = json.loads((ROOT / "eval" / "demo_questions.json").read_text(encoding="utf-8"))
    third = json.loads((ROOT / "eval" / "demo_questions_third.json").read_text(encoding="utf-8"))
    marked = [
        q
        for q in first["questions"] + third["questions"]
        if str(q.get("retargeted", q.get("retired", ""))).startswith("issue 35")
    ]
    assert len(marked) == 3
