"""Load the synthetic Northwind Health demo data into an engine (through the public API, so
supersessions, audit and access logs are produced exactly as in real use)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .context import render_section, sanitize_line
from .demo import DemoDataset, northwind_demo
from .engine import MemoryEngine
from .tokens import count_tokens
from .validation import timestamp
from .values import InjectionRecord

DEMO_ACTOR = "demo-seed"
#: what the demo's agent asked at the start of each past session
SESSION_QUERY = "start of session: what should I know about this patient?"
WARN_AT = 8.0  # the ⚠️ marker's threshold (domain.md), by base importance at the time


def seed_demo(
    engine: MemoryEngine,
    *,
    now: datetime | None = None,
    dataset: DemoDataset | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Add the demo patients' memories, then replay their history as an agent would have
    produced it: at each past session where memories were used, one access per memory and one
    injection record (what the agent was given, in the injected-context format), so accesses
    and injections agree; the sessions without any use are recorded as sessions. Returns
    counts."""
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
    injections = 0
    for p in data.patients:
        used: dict[datetime, list[int]] = {}
        for i, m in enumerate(data.memories):
            if m.patient_id == p.patient_id:
                for t in m.access_times:
                    used.setdefault(t, []).append(i)
        for at in sorted(used):
            # allergies lead the section, then by importance (the injected-context rule)
            mems = sorted(
                (results[i].memory for i in used[at]),
                key=lambda m: (m.memory_type != "allergy", -m.importance),
            )
            text = render_section(
                [(sanitize_line(m.content), m.importance >= WARN_AT) for m in mems]
            )
            record = InjectionRecord(
                id=f"inj_{uuid.uuid4().hex}",
                at=at,
                patient_id=p.patient_id,
                query=SESSION_QUERY,
                items=tuple((m.id, 0.0) for m in mems),
                tokens=count_tokens(text, engine.encoding),
                text=text,
            )
            engine.store.record_access(p.patient_id, [m.id for m in mems], at, record)
            injections += 1
        quiet = [t for t in p.visits if t not in used]
        if quiet:
            engine.record_sessions(p.patient_id, quiet, by=DEMO_ACTOR)
    sups = [s for r in results for s in r.supersessions]
    return {
        "patients": len(data.patients),
        "memories": len(results),
        "injections": injections,
        "supersessions_auto": sum(s.state.value == "auto" for s in sups),
        "supersessions_pending": sum(s.state.value == "pending" for s in sups),
    }
