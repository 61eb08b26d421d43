"""The caches' bound under sections (issue 25, finding 7): one engine, with the default
``cache_bytes``, builds one section (``build_context`` with a query, as an agent's preview) for
each of ``caches_patients`` patients of 3 memories; the process's RSS growth must stay within
the bound plus an allowance (the SQLite page cache, the allocator's free lists, the
interpreter's and the process-wide word caches' growth). Unlike the ``touch-rss`` row of the
hospital probes (a bare retrieval, no keyword query), a section builds each patient's keyword
index, flags' index and memoized arrays after the patient is cached -- what main sized before
they existed (RSS +1,274 MiB under a 512 MiB bound at 60,000 patients).

Runs in a fresh interpreter (``python -m bench.probe caches-...``).
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from .common import Row, Setup, Target, log, probe

MIB = 2**20
ALLOWANCE = 128 * MIB
RSS = Target("≤ cache bound + {allowance_mib:,.0f} MiB ({limit_mib:,.0f} MiB)", max_ratio=1.0)
QUERY = "How does the patient sleep and walk?"


# --- the subprocess side (python -m bench.probe caches-...) ------------------------------------
def touch(db: str) -> dict[str, Any]:
    import numpy as np

    from ..probe import vm
    from .hospital import DIMS, _engine

    eng = _engine(db)
    snaps = eng._core.snapshots
    patients = eng.list_patients()
    rng = np.random.default_rng(4)
    q = rng.standard_normal(DIMS).astype(np.float32)
    eng.build_context(patients[0], QUERY, query_vector=q, record_access=False)  # warm imports
    snaps.clear()
    gc.collect()
    before = vm()
    trace: list[tuple[int, int]] = []
    step = max(len(patients) // 12, 1)
    t = time.perf_counter()
    for k, pid in enumerate(patients, start=1):
        eng.build_context(pid, QUERY, query_vector=q, record_access=False)
        if k % step == 0:
            trace.append((k, vm() - before))
    secs = time.perf_counter() - t
    gc.collect()
    after = vm()
    snaps.settle()
    out = {
        "patients": len(patients),
        "rss_before_bytes": before,
        "rss_after_bytes": after,
        "delta_bytes": after - before,
        "trace": trace,
        "seconds": secs,
        "cache_bound_bytes": snaps.max_bytes,
        "cache_estimate_bytes": snaps.bytes,
        "cached_patients": len(snaps.cache),
        "evictions": snaps.evictions,
    }
    eng.store.close()
    return out


def probe_main(cmd: str, args: list[str]) -> dict[str, Any]:
    if cmd == "caches-touch":
        return touch(args[0])
    raise SystemExit(f"unknown probe {cmd!r}")


# --- the bench side ----------------------------------------------------------------------------
def run(bench: Setup) -> None:
    n = bench.cfg.caches_patients
    log(f"resident memory after one section for each of {n:,} patients of 3 (subprocess)")
    db = os.path.join(bench.workdir, f"caches-{n}.db")
    probe("scale-build-many", db, str(n), "3", timeout=3600)
    out = probe("caches-touch", db, timeout=3600)
    bench.res.hospital["caches"] = out
    limit = out["cache_bound_bytes"] + ALLOWANCE
    trace = ", ".join(f"{k:,}: {b / MIB:,.0f}" for k, b in out["trace"])
    bench.res.rows.append(
        Row(
            "caches-rss",
            "resident memory after one build_context per patient (RSS growth)",
            f"{out['patients']:,} patients × 3 memories",
            "engine",
            value=out["delta_bytes"] / MIB,
            unit="MiB",
            target=RSS,
            target_facts={"allowance_mib": ALLOWANCE / MIB, "limit_mib": limit / MIB},
            passed=RSS.met(value=out["delta_bytes"], baseline=limit),
            note=f"cache bound {out['cache_bound_bytes'] / MIB:,.0f} MiB, estimate "
            f"{out['cache_estimate_bytes'] / MIB:,.0f} MiB; {out['cached_patients']:,} patients "
            f"cached, {out['evictions']:,} evicted; {out['seconds']:.0f} s; RSS growth (MiB) "
            f"after patients {trace}; main before the fix: +1,274 MiB",
        )
    )
