"""Load the synthetic Northwind Health demo data into an engine (through the public API, so
supersessions, audit and access logs are produced exactly as in real use)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from .demo import DemoDataset, northwind_demo
from .engine import MemoryEngine

DEMO_ACTOR = "demo-seed"


def seed_demo(
    engine: MemoryEngine,
    *,
    now: datetime | None = None,
    dataset: DemoDataset | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Add the demo patients' memories (with their access history) and visits; returns counts."""
    now = engine.clock() if now is None else now
    data = dataset or northwind_demo(now)
    records = [
        {
            "patient_id": m.patient_id,
            "content": m.content,
            "memory_type": m.memory_type,
            "created_at": m.created_at,
            "access_times": list(m.access_times),
            "tier": m.tier,
            "importance": m.importance,
            "pinned": m.pinned,
            "source": m.source,
        }
        for m in data.memories
    ]
    results = engine.add_memories(records, by=DEMO_ACTOR, now=now, progress=progress)
    for p in data.patients:
        engine.record_sessions(p.patient_id, list(p.visits), by=DEMO_ACTOR)
    sups = [s for r in results for s in r.supersessions]
    return {
        "patients": len(data.patients),
        "memories": len(results),
        "supersessions_auto": sum(s.state.value == "auto" for s in sups),
        "supersessions_pending": sum(s.state.value == "pending" for s in sups),
    }
