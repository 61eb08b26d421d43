"""The held-out clinician questions about the demo patients (issue 23):
``eval/demo_questions.json``, written before the section's selection changed and never tuned
to (37 / 40 answered on main a9c5b85). Since main's demo was regenerated (issue 26), 7 have
no answer in the demo (retired, not counted) and 4 name the regenerated demo's memories. At the
default settings, as of the demo's moment, at least 95 % are answered by the memories that
reach the section (their own line or a line they share), and every active allergy is in every
section. Also NW-1001's documented anaphylaxis under every token budget."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import memory_core as mc
from eval.section import ANAPHYLAXIS, analyte_of, answers, budget_sweep, load_questions
from tests.conftest import DEMO_NOW

TARGET = 0.95


@pytest.fixture(scope="module")
def demo(demo_db: str, tmp_path_factory: pytest.TempPathFactory) -> mc.MemoryEngine:
    copy = Path(tmp_path_factory.mktemp("heldout")) / "demo.db"
    shutil.copyfile(demo_db, copy)
    return mc.open_engine(f"sqlite:///{copy}", "minilm", clock=lambda: DEMO_NOW)


def test_the_set_is_large_and_names_real_memories(demo: mc.MemoryEngine) -> None:
    cases = load_questions()
    assert len(cases) >= 30
    retired = load_questions(retired=True)
    assert len(cases) + len(retired) == 40 and all(c["retired"] for c in retired)
    assert len({(c["patient"], c["question"]) for c in cases + retired}) == 40
    for c in cases:
        active = demo.list_memories(c["patient"], include_inactive=False)
        for want in c.get("all", c.get("any", ())):
            if want.startswith("lab:"):
                assert any(analyte_of(m) == want[4:] for m in active), (c, want)
            else:
                assert any(want.lower() in m.content.lower() for m in active), (c, want)


def test_held_out_questions_are_answered_in_the_default_section(
    demo: mc.MemoryEngine, eval_report: Callable[[str], None]
) -> None:
    cases = load_questions()
    rows, hits = [], 0
    for c in cases:
        res = demo.build_context(c["patient"], c["question"], record_access=False)
        allergies = {
            m.id
            for m in demo.list_memories(c["patient"], include_inactive=False)
            if m.memory_type == "allergy"
        }
        assert allergies <= {i.scored.memory.id for i in res.included}, c
        ok = answers(c, (i.scored.memory for i in res.included))
        hits += ok
        rows.append(f"{'ok  ' if ok else 'MISS'} {c['patient']} {c['question']}")
    eval_report(
        f"\nheld-out demo questions: {hits}/{len(cases)} answered\n"
        + "\n".join("  " + r for r in rows)
    )
    assert hits / len(cases) >= TARGET


@pytest.mark.parametrize(
    "query",
    [
        "Can the patient take amoxicillin?",
        "How is the patient doing?",
        "Patient asks whether the new diabetes medication could upset their stomach again.",
    ],
)
def test_nw1001_keeps_the_documented_anaphylaxis_under_every_budget(
    demo: mc.MemoryEngine, query: str
) -> None:
    """Issue 23: at a budget of 80 the section kept the unconfirmed re-test and left out the
    documented anaphylaxis. Now every section that holds a line holds it."""
    nonempty, kept, missed = budget_sweep(demo, query)
    assert nonempty > 60 and kept == nonempty, missed
    res = demo.build_context("NW-1001", query, max_tokens=80, record_access=False)
    assert any(ANAPHYLAXIS in i.scored.memory.content for i in res.included)
    assert not any(
        i.scored.memory.content.startswith("Patient's penicillin allergy re-tested")
        and i.part_of == ""
        for i in res.included
    )  # the re-test is never a line of its own beside the documented allergy
