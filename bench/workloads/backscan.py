"""The contradiction back-scan of a patient imported without detection (every same-type pair,
the supersessions' writes included), checked against the reference's pairs first."""

from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np

import memory_core as mc
from memory_core.facts import judgement, keys_of

from .. import reference as ref
from ..harness import measure
from .common import (
    Mismatch,
    Row,
    Setup,
    Target,
    log,
    records_of,
)

TARGET = Target("≤ 1 s", max_s=1.0)


def run(bench: Setup) -> None:
    n = bench.cfg.backscan_n
    pid = bench.pid(n)
    log(f"contradiction back-scan, {n:,} memories (imported without detection)")
    base = os.path.join(bench.workdir, "scan-base.db")
    eng = mc.MemoryEngine(mc.open_store(f"sqlite:///{base}"), bench.primed, clock=lambda: bench.now)
    eng.add_memories(bench.records(n, pid), now=bench.now, by="bench", detect=False)
    recs = records_of(eng.list_memories(pid))
    pol = eng.policy.contradiction
    cuts = {t: eng.threshold_for(t) for t in {r["memory_type"] for r in recs}}
    eng.store.close()  # before the copies: closing checkpoints the WAL into the file
    state: dict[str, Any] = {}
    copies = iter(range(10**6))

    def fresh() -> None:
        if "eng" in state:
            state["eng"].store.close()
        path = os.path.join(bench.workdir, f"scan-{next(copies)}.db")
        shutil.copyfile(base, path)
        e = mc.MemoryEngine(
            mc.open_store(f"sqlite:///{path}"), bench.primed, clock=lambda: bench.now
        )
        e.view(pid)  # the patient's snapshot is loaded before the clock starts
        state["eng"] = e

    def scan() -> None:
        state["found"] = state["eng"].scan_contradictions(pid, by="bench")

    fresh()
    scan()
    got = [(s.old_id, s.new_id) for s in state["found"]]
    want = ref.back_scan(
        recs,
        [],
        bench.now,
        cuts.__getitem__,
        judgement,
        lambda t: pol.mode_for(t) == "auto",
        keys_of,
    )
    # the same pairs; their order may differ where two similarities tie in float32
    extra, missing = set(got) - set(want), set(want) - set(got)
    emb = {r["id"]: np.asarray(r["embedding"], dtype=np.float64) for r in recs}

    def sim(pair: tuple[str, str]) -> float:
        a, b = emb[pair[0]], emb[pair[1]]
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    # an older memory superseded by another of two newer ones within float32 rounding of
    # each other (0.9987305 vs 0.9987320): the engine ranks float32 cosines, the reference
    # float64 ones, and each takes its best
    tied = {(e, m) for e in extra for m in missing if e[0] == m[0] and abs(sim(e) - sim(m)) < 1e-5}
    extra -= {e for e, _m in tied}
    missing -= {m for _e, m in tied}
    if extra or missing or len(set(got)) != len(got):
        raise Mismatch(
            f"back-scan: engine recorded {len(got)}, reference {len(want)} "
            f"({len(extra)} only in the engine, {len(missing)} only in the reference)"
        )
    bench.res.checks.append(
        f"back-scan, {n:,} memories imported without detection: the same {len(want):,} "
        "supersessions (older, newer)"
    )
    smp = measure(scan, bench.cfg.slow_repeat, warmup=0, setup=fresh)
    refs = measure(
        lambda: ref.back_scan(
            recs,
            [],
            bench.now,
            cuts.__getitem__,
            judgement,
            lambda t: pol.mode_for(t) == "auto",
            keys_of,
        ),
        1 if bench.cfg.name == "full" else bench.cfg.slow_repeat,
        warmup=0,
    )
    pairs = sum(
        c * (c - 1) // 2
        for c in (
            sum(r["memory_type"] == t for r in recs) for t in {r["memory_type"] for r in recs}
        )
    )
    label = "contradiction back-scan (all same-type pairs, writes included)"
    size = f"{n:,} memories ({pairs:,} pairs, {len(want):,} found)"
    bench.res.rows += [
        Row(
            "backscan",
            label,
            size,
            "engine",
            smp,
            reference=refs,
            target=TARGET,
            passed=TARGET.met(smp),
        ),
        Row("backscan", label, size, "reference", refs, reference=refs),
    ]

    def profile() -> None:
        fresh()
        scan()

    bench.res.profile_calls["backscan"] = profile
