"""Adding memories to a patient of ``add_existing`` memories loaded with detection: one at a
time (embedding + contradiction check + write) and in batches, against the reference's embed,
loop and INSERT, and Mem0's ``add(infer=False)``."""

from __future__ import annotations

import itertools
import os
from typing import Any

from memory_core.demo import DemoMemory
from memory_core.facts import judgement, keys_of

from .. import reference as ref
from ..harness import measure
from .common import (
    Row,
    Setup,
    Target,
    log,
)

ADD_ONE = Target("≥ 100/s", min_per_s=100)
ADD_BATCH = Target("≥ 250/s", min_per_s=250)


def run(bench: Setup) -> None:
    n = bench.cfg.add_existing
    pid = bench.pid(n, True)  # as real use leaves a patient: detection was on
    peer_pid = bench.pid(n)
    cfg = bench.cfg
    bench.build_peers()
    log(f"adding memories at {n:,} existing")
    pool = iter(bench.fresh)

    def take(k: int) -> list[DemoMemory]:
        return [next(pool) for _ in range(k)]

    singles = take(cfg.add_single + 1)
    one = measure(lambda: _add_one(bench, pid, singles.pop()), cfg.add_single, warmup=1)
    batches = [take(cfg.add_batch) for _ in range(cfg.add_batches + 1)]
    many = measure(
        lambda: bench.eng.add_memories(
            [
                {"patient_id": pid, "content": m.content, "memory_type": m.memory_type}
                for m in batches.pop()
            ],
            by="bench",
        ),
        cfg.add_batches,
        warmup=1,
        per=cfg.add_batch,
    )
    # the reference: embed, compare with every older memory in a loop, one INSERT + COMMIT
    recs, sups = bench.state(pid)
    db = ref.open_db(os.path.join(bench.workdir, "reference-adds.db"))
    ref_items = take(max(3, cfg.ref_repeat) + 1)
    counter = iter(range(10**6))

    def ref_add() -> None:
        m = ref_items.pop()
        vec = bench.embedder.embed(m.content)
        ref.contradiction_hits(
            recs,
            sups,
            m.content,
            vec,
            m.memory_type,
            bench.now,
            bench.now,
            bench.eng.threshold_for(m.memory_type),
            judgement,
            keys_of,
        )
        rec = {
            "id": f"ref-{next(counter)}",
            "patient_id": pid,
            "memory_type": m.memory_type,
            "content": m.content,
            "importance": 5.0,
            "created_at": bench.now.isoformat(),
            "last_accessed": bench.now.isoformat(),
            "access_count": 0,
            "pinned": False,
            "tier": "long_term",
            "embedding": vec,
        }
        ref.insert(db, rec)
        recs.append(rec)

    refs = measure(ref_add, max(3, cfg.ref_repeat), warmup=1)
    db.close()
    size = f"{n:,} existing"
    bench.res.rows += [
        Row(
            "add_one",
            "add_memory one at a time (embedding + check + write)",
            size,
            "engine",
            one,
            rate=True,
            reference=refs,
            target=ADD_ONE,
            passed=ADD_ONE.met(one),
        ),
        Row(
            "add_one",
            "add_memory one at a time (embedding + check + write)",
            size,
            "reference",
            refs,
            rate=True,
            reference=refs,
        ),
        Row(
            "add_batch",
            f"add_memories in batches of {cfg.add_batch}",
            size,
            "engine",
            many,
            rate=True,
            reference=refs,
            target=ADD_BATCH,
            passed=ADD_BATCH.met(many),
            note="reference adds one at a time",
        ),
    ]
    for label, by_size in bench.peers.items():
        if not label.startswith("Mem0"):
            continue
        peer = by_size[n]
        items = take(cfg.peer_adds + 1)
        s = measure(lambda p=peer, it=items: p.add(peer_pid, it.pop().content), cfg.peer_adds)
        bench.res.rows.append(
            Row(
                "add_one",
                "add_memory one at a time (embedding + check + write)",
                size,
                f"{label} add(infer=False)",
                s,
                rate=True,
                reference=refs,
            )
        )
    for label in ("Mem0 + FAISS", "Mem0 + Qdrant"):
        if label not in bench.peers:
            bench.res.rows.append(
                Row(
                    "add_one",
                    "add_memory one at a time (embedding + check + write)",
                    size,
                    f"{label} add(infer=False)",
                    note=f"not measured: {bench.peer_note(label)}",
                )
            )
    # a profile repeats a call up to 200 times, past the fresh memories the rows used: the
    # profiles draw from them again, in turn (the bench stopped with StopIteration)
    again = itertools.cycle(bench.fresh)

    def take_again(k: int) -> list[DemoMemory]:
        return [next(again) for _ in range(k)]

    bench.res.profile_calls["add_one"] = lambda: _add_one(bench, pid, take_again(1)[0])
    bench.res.profile_calls["add_batch"] = lambda: bench.eng.add_memories(
        [
            {"patient_id": pid, "content": m.content, "memory_type": m.memory_type}
            for m in take_again(cfg.add_batch)
        ],
        by="bench",
    )


def _add_one(bench: Setup, pid: str, m: DemoMemory) -> Any:
    return bench.eng.add_memory(pid, m.content, m.memory_type, by="bench")
