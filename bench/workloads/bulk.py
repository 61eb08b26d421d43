"""Bulk insert of pre-embedded memories into SQLite (``add_memories``, with and without
detection) against the reference's one INSERT + COMMIT per memory."""

from __future__ import annotations

import os
from typing import Any

import memory_core as mc

from .. import reference as ref
from ..harness import measure
from .common import (
    Row,
    Setup,
    Target,
    log,
)

TARGET = Target("≥ 20,000/s", min_per_s=20_000)


def run(bench: Setup) -> None:
    cfg = bench.cfg
    n = cfg.bulk_n
    log(f"bulk insert of {n:,} pre-embedded memories")
    top = len(bench.master)
    idx = list(range(n)) if n <= top else [i % top for i in range(n)]
    records = []
    for j, i in enumerate(idx):
        m = bench.master[i]
        records.append(
            {
                "patient_id": f"BULK-{j % cfg.bulk_patients:03d}",
                "content": m.content,
                "memory_type": m.memory_type,
                "created_at": m.created_at,
                "access_times": list(m.access_times),
                "tier": m.tier,
                "importance": m.importance,
                "pinned": m.pinned,
                "embedding": bench.vector_of(m.content),
            }
        )
    state: dict[str, Any] = {}
    copies = iter(range(10**6))

    def fresh() -> None:
        if "eng" in state:
            state["eng"].store.close()
        path = os.path.join(bench.workdir, f"bulk-{next(copies)}.db")
        state["eng"] = mc.MemoryEngine(
            mc.open_store(f"sqlite:///{path}"), bench.primed, clock=lambda: bench.now
        )

    def bulk(detect: bool) -> None:
        state["eng"].add_memories(records, now=bench.now, by="bench", detect=detect)

    plain = measure(lambda: bulk(False), cfg.slow_repeat, warmup=1, setup=fresh, per=n)
    detected = measure(lambda: bulk(True), 1, warmup=0, setup=fresh, per=n)
    state["eng"].store.close()
    refrecs = [
        {
            "id": f"r{j}",
            "patient_id": r["patient_id"],
            "memory_type": r["memory_type"],
            "content": r["content"],
            "importance": r["importance"] or 5.0,
            "created_at": r["created_at"].isoformat(),
            "last_accessed": r["created_at"].isoformat(),
            "access_count": len(r["access_times"]),
            "pinned": bool(r["pinned"]),
            "tier": r["tier"],
            "embedding": r["embedding"],
        }
        for j, r in enumerate(records)
    ]

    def ref_bulk() -> None:
        db = ref.open_db(os.path.join(bench.workdir, f"bulk-ref-{next(copies)}.db"))
        for r in refrecs:
            ref.insert(db, r)
        db.close()

    refs = measure(ref_bulk, max(1, cfg.slow_repeat - 1), warmup=0, per=n)
    label = "bulk insert of pre-embedded memories into SQLite"
    size = f"{n:,} memories, {cfg.bulk_patients} patients"
    bench.res.rows += [
        Row(
            "bulk",
            label,
            size,
            "engine (add_memories, detect=False)",
            plain,
            rate=True,
            reference=refs,
            target=TARGET,
            passed=TARGET.met(plain),
        ),
        Row(
            "bulk",
            label,
            size,
            "engine (add_memories, detect=True)",
            detected,
            rate=True,
            reference=refs,
            note="one run; supersession detection included",
        ),
        Row(
            "bulk",
            label,
            size,
            "reference (one INSERT + COMMIT each)",
            refs,
            rate=True,
            reference=refs,
        ),
    ]

    def profile() -> None:
        fresh()
        bulk(False)

    bench.res.profile_calls["bulk"] = profile
