"""``python -m bench``: run every benchmark of issue 5, print the table and write
``docs/benchmarks.md``, ``docs/bench_scaling.html`` and ``docs/bench_results.json``.

Options: ``--tiny`` (every workload at a tiny size: what ``tests/test_bench.py`` runs),
``--out DIR``, ``--no-peers``, ``--no-profile``, ``--no-cache`` (embed the data afresh instead
of reusing ``data/bench-cache``).
"""

from __future__ import annotations

import os

# Before numpy is imported anywhere: one OpenBLAS thread unless the caller chose otherwise
# (threadpoolctl, when installed, enforces and reports the limit at run time too).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from .harness import guard_network, limit_threads, load_average, machine_info, source_state
from .plans import PLANS
from .report import console_table, profile_misses, write
from .workloads import FULL, REPO, TINY, Bench, Results, log, workdir


def run(argv: list[str] | None = None, *, guard: bool = True) -> Results:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--tiny", action="store_true", help="every workload at a tiny size")
    ap.add_argument(
        "--out",
        default=None,
        help="where the report is written (default docs/; data/bench-partial/ with --only or "
        "--tiny, so a partial run never overwrites the full report)",
    )
    ap.add_argument("--no-peers", action="store_true", help="skip Mem0 and LangGraph")
    ap.add_argument("--no-profile", action="store_true", help="skip profiling missed targets")
    ap.add_argument("--no-cache", action="store_true", help="do not reuse cached embeddings")
    ap.add_argument(
        "--only",
        default="",
        help=f"comma-separated steps to run (of {', '.join(Bench.STEPS)}); the agreement "
        "checks always run. The report then holds only those rows.",
    )
    args = ap.parse_args(argv)
    if args.out is None:
        partial = args.only or args.tiny
        args.out = str(REPO / "data" / "bench-partial") if partial else str(REPO / "docs")
    if guard:
        guard_network()
    threads = limit_threads(blas=1, ort=1)
    code_start = source_state(REPO)
    threads["load_start"] = load_average()
    cfg = TINY if args.tiny else FULL
    cfg = replace(
        cfg, peers=cfg.peers and not args.no_peers, profile=cfg.profile and not args.no_profile
    )
    cache = None if args.no_cache else REPO / "data" / "bench-cache" / f"embeddings-{cfg.name}.npz"
    tmp = workdir()
    try:
        only = {x.strip() for x in args.only.split(",") if x.strip()} or None
        if only and not only <= set(Bench.STEPS):
            ap.error(f"unknown step(s): {', '.join(sorted(only - set(Bench.STEPS)))}")
        bench = Bench(cfg, tmp, cache, only)
        res = bench.run()
        res.machine = machine_info()
        threads["load_end"] = load_average()
        from .harness import threadpools

        threads["blas_at_end"] = threadpools()
        res.threads = threads
        if cfg.profile:
            log("profiling missed targets")
            profile_misses(res)
        res.code = {"start": code_start, "end": source_state(REPO)}
        if res.code["start"]["digest"] != res.code["end"]["digest"]:
            log("WARNING: memory_core/, views/ or app.py changed during the run")
        written = write(res, Path(args.out), PLANS)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(console_table(res))
    for p in written:
        log(f"wrote {p}")
    return res


def main() -> None:
    res = run(sys.argv[1:])
    missed = [r for r in res.rows if r.passed is False]
    log(f"done in {res.seconds:,.0f}s: {len(missed)} target(s) missed")


if __name__ == "__main__":
    main()
