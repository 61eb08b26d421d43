"""Load the synthetic Northwind Health demo data into an engine (through the public API, so
supersessions, audit, accesses and injections are produced exactly as in real use)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from .demo import DemoDataset, DemoMemory, DemoPatient, northwind_demo
from .demo.questions import questions_for
from .engine import MemoryEngine
from .facts import KeyKind, Role
from .question import key_label
from .validation import timestamp
from .values import AddResult, Memory

DEMO_ACTOR = "demo-seed"
#: A session's questions are asked this far apart, the last at the session's moment: the
#: clinician reads the record before the visit, so nothing written during the visit (a few
#: minutes after its start) is in any of its sections, and each injection has its own time.
QUESTION_GAP = timedelta(minutes=2)


def question_about(memory: Memory) -> str:
    """The question a clinician would ask the care assistant that this memory answers -- "What
    was the most recent eGFR result?", "Is the patient still taking losartan, and at what
    dose?", "Is the patient allergic to latex?" -- by its type and what it is about, the kinds
    in the order its type lists them (``memory_core/data/demo_session_questions.json``), else
    the type's general question. Never the statement itself."""
    asked = questions_for(memory.memory_type)
    facts = memory.facts.facts if memory.facts is not None else ()
    subjects = [f.key for f in facts if f.role is Role.SUBJECT]
    for kind, template in asked.items():  # the file's order is the order of preference
        if ":" in kind:  # one particular subject ("slot:household"): its own question
            if kind in subjects:
                return template
            continue
        key = next((k for k in subjects if kind and KeyKind.of(k).value == kind), None)
        if key is not None:
            return template.format(name=key_label(key))
    return asked[""]


def seed_demo(
    engine: MemoryEngine,
    *,
    now: datetime | None = None,
    dataset: DemoDataset | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Add the demo patients' memories, then replay their history as an agent would have
    produced it: at each past session, for each statement the demo says the session used, the
    clinician asked the question that statement answers (:func:`question_about`; each question
    once a session, :data:`QUESTION_GAP` apart, the last at the session's moment) and the agent
    was given the engine's own ``build_context`` section as of that moment, one place -- what
    was active then (a superseded statement's place goes to what replaced it), every allergy
    active then, the reviews pending then -- with the accesses and the injection the engine
    records. So the injection history never shows a superseded fact or a missing allergy. The
    sessions without any use are recorded as sessions. Returns counts."""
    clock = engine.clock()
    # checked before anything is written: a moment past the clock is refused (nothing seeded)
    now = clock if now is None else timestamp(now, "now", clock)
    data = dataset or northwind_demo(now)
    records = [
        {
            "patient_id": m.patient_id,
            "content": m.content,
            "memory_type": m.memory_type,
            "created_at": m.created_at,
            "tier": m.tier,
            "importance": m.importance,
            "pinned": m.pinned,
            "source": m.source,
        }
        for m in data.memories
    ]
    results = engine.add_memories(records, by=DEMO_ACTOR, now=now, progress=progress)
    injections = sum(_replay(engine, p, data.memories, results) for p in data.patients)
    sups = [s for r in results for s in r.supersessions]
    return {
        "patients": len(data.patients),
        "memories": len(results),
        "injections": injections,
        "supersessions_auto": sum(s.state.value == "auto" for s in sups),
        "supersessions_pending": sum(s.state.value == "pending" for s in sups),
    }


def _replay(
    engine: MemoryEngine,
    patient: DemoPatient,
    memories: Sequence[DemoMemory],
    results: Sequence[AddResult],
) -> int:
    """One patient's past sessions, oldest first; returns the injections recorded."""
    asked: dict[datetime, dict[str, None]] = {}  # session -> its questions, in order, once
    for m, res in zip(memories, results, strict=True):
        if m.patient_id == patient.patient_id:
            for t in m.access_times:
                asked.setdefault(t, {})[question_about(res.memory)] = None
    quiet = [t for t in patient.visits if t not in asked]
    if quiet:  # first, so every replayed section counts the sessions before it
        engine.record_sessions(patient.patient_id, quiet, by=DEMO_ACTOR)
    done = 0
    for at in sorted(asked):
        questions = list(asked[at])
        for k, question in enumerate(questions):
            section = engine.build_context(
                patient.patient_id,
                question,
                now=at - (len(questions) - 1 - k) * QUESTION_GAP,
                max_memories=1,
                record_access=True,
            )
            done += section.injection_id is not None
    return done
