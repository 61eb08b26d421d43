"""Load the synthetic Northwind Health demo data into an engine (through the public API, so
supersessions, audit, accesses and injections are produced exactly as in real use)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from .demo import DemoDataset, DemoMemory, DemoPatient, northwind_demo
from .engine import MemoryEngine
from .validation import timestamp
from .values import AddResult

DEMO_ACTOR = "demo-seed"


def seed_demo(
    engine: MemoryEngine,
    *,
    now: datetime | None = None,
    dataset: DemoDataset | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Add the demo patients' memories, then replay their history as an agent would have
    produced it: at each past session, for each statement the generator says the session used,
    the agent asked about it (the statement is the question) and was given the engine's own
    ``build_context`` section as of that session, one place -- what was active then (a
    superseded statement's place goes to what replaced it), every allergy active then, the
    reviews pending then -- with the accesses and the injection the engine records. So the
    injection history never shows a superseded fact or a missing allergy. The sessions without
    any use are recorded as sessions. Returns counts."""
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
    used: dict[datetime, list[str]] = {}
    for m, res in zip(memories, results, strict=True):
        if m.patient_id == patient.patient_id:
            for t in m.access_times:
                used.setdefault(t, []).append(res.memory.content)
    quiet = [t for t in patient.visits if t not in used]
    if quiet:  # first, so every replayed section counts the sessions before it
        engine.record_sessions(patient.patient_id, quiet, by=DEMO_ACTOR)
    done = 0
    for at in sorted(used):
        for topic in used[at]:
            section = engine.build_context(
                patient.patient_id, topic, now=at, max_memories=1, record_access=True
            )
            done += section.injection_id is not None
    return done
