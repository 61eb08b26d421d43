"""The seeded demo's injection history is the engine's own (issue 23, item 5): every past
injection was made by ``build_context`` as of its session, so none gave the agent a memory
that was superseded (or archived) at that time, and each holds every allergy active then.
Before the replay was the engine's (hand-written injection records), 79 of the 145 seeded
injections held a superseded memory and 64 left out an active allergy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import memory_core as mc
from tests.conftest import DEMO_NOW


@pytest.fixture
def eng(demo_store: str) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(demo_store, "minilm", clock=lambda: DEMO_NOW)
    yield e
    e.store.close()


def test_every_seeded_injection_is_what_build_context_gave_at_its_time(
    eng: mc.MemoryEngine,
) -> None:
    checked = 0
    allergies_seen = 0
    for pid in eng.list_patients():
        injections = eng.injections(pid, limit=10_000)
        assert injections, pid
        events = {t for times in eng.access_times(pid).values() for t in times}
        assert {i.at for i in injections} == events  # every access came with its injection
        for inj in injections:
            view = eng.view(pid, now=inj.at)
            status = {m.id: s for m, s in zip(view.memories, view.status, strict=True)}
            given = [mid for mid, _ in inj.items]
            for mid in given:
                assert status.get(mid) is mc.Status.ACTIVE, (pid, inj.at, mid, status.get(mid))
            allergies = {
                m.id
                for m, s in zip(view.memories, view.status, strict=True)
                if s is mc.Status.ACTIVE and m.memory_type == "allergy"
            }
            assert allergies <= set(given), (pid, inj.at)
            allergies_seen += len(allergies)
            checked += 1
    # 1,190 when each statement was its own question; a session asks each clinician question
    # once (issue 35: one "What medicines is the patient taking now?" for all its medications)
    assert checked >= 900 and allergies_seen > 0


def test_seeded_sessions_ask_clinician_questions_each_at_its_own_moment(
    eng: mc.MemoryEngine,
) -> None:
    """Issue 35, item B: the Overview's "Recent agent injections" showed one minute and
    statements as queries ("query: Patient's triglyceride level was 254 mg/dL"). Each replayed
    injection now has its own moment -- a session's questions two minutes apart, the last at
    the session's moment -- and its query is a clinician's question, never a memory's text."""
    from memory_core.demo import northwind_demo
    from memory_core.seed import QUESTION_GAP

    visits = {p.patient_id: set(p.visits) for p in northwind_demo(DEMO_NOW).patients}
    for pid in eng.list_patients():
        injections = eng.injections(pid, limit=10_000)
        times = [i.at for i in injections]
        assert len(set(times)) == len(times), pid  # no two at one moment
        recent = sorted(times)[-5:]  # what the Overview lists
        assert recent[-1] - recent[0] >= 4 * QUESTION_GAP, (pid, recent)
        # each session's last question is at one of the patient's visits
        assert any(t in visits[pid] for t in times), pid
        contents = {m.content.casefold() for m in eng.list_memories(pid)}
        for inj in injections:
            assert inj.query.casefold() not in contents, (pid, inj.query)
            assert inj.query.endswith("?"), (pid, inj.query)


def test_a_clinician_question_names_what_the_memory_is_about(eng: mc.MemoryEngine) -> None:
    """The question is the memory type's, by what it is about in the order the type lists the
    kinds (data: memory_core/data/demo_session_questions.json)."""
    from memory_core.seed import question_about

    by_content = {m.content: m for pid in eng.list_patients() for m in eng.list_memories(pid)}
    asked = {
        "Patient's HbA1c was 8.2%": "What was the most recent HbA1c result?",
        # a medication or a condition: the list a clinician asks for (one line, every current one)
        "Patient's blood pressure medicine is lisinopril 10mg daily": (
            "What medicines is the patient taking now?"
        ),
        "Patient has chronic kidney disease stage 2": "What are the patient's active problems?",
        # a reaction is asked about by its drug before its condition (the file's order)
        "Patient developed a dry cough on lisinopril": (
            "Has the patient had side effects from lisinopril?"
        ),
        "Patient has a sulfa drug allergy causing rash": "Is the patient allergic to sulfonamides?",
        # a chart slot: its own question (a slot's name is no phrase a clinician asks with)
        "Patient prefers morning appointments": "When does the patient prefer appointments?",
    }
    for content, question in asked.items():
        assert question_about(by_content[content]) == question, content


def test_a_memory_about_a_chart_slot_is_asked_its_slots_own_question(
    eng: mc.MemoryEngine,
) -> None:
    """No question is built from a slot's name ("What does the patient prefer about contact
    channel?"): a memory about a slot is asked that slot's own question, else its type's
    general one."""
    from memory_core.demo.questions import questions_for
    from memory_core.facts import Role
    from memory_core.seed import question_about

    slotted = 0
    for pid in eng.list_patients():
        for m in eng.list_memories(pid):
            facts = m.facts.facts if m.facts is not None else ()
            slots = [f.key for f in facts if f.role is Role.SUBJECT and f.key.startswith("slot:")]
            if not slots:
                continue
            asked = questions_for(m.memory_type)
            own = {q for k, q in asked.items() if k in slots}
            q = question_about(m)
            assert q in own | {asked[""]} or (not own and "{name}" not in q), (m.content, q)
            slotted += bool(own)
    assert slotted >= 60  # the demo's social history, preferences, plans and observations
