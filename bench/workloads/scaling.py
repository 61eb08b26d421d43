"""Cost against size (no target): ``build_context`` with the query embedded and the
contradiction check, engine and reference, at every scaling size (the report's scaling table
and chart)."""

from __future__ import annotations

from typing import Any

from ..harness import Sample, interleaved
from .common import (
    Setup,
    log,
    query_at,
)


def run(bench: Setup) -> None:
    cfg = bench.cfg
    qv = bench.query_vectors()
    curves: dict[str, dict[int, Sample]] = {
        "build_context (engine)": {},
        "build_context (reference)": {},
        "contradiction check (engine)": {},
        "contradiction check (reference)": {},
    }
    for n in cfg.scaling_sizes:
        pid = bench.pid(n)
        log(f"scaling: {n:,} memories")
        recs, sups = bench.state(pid)
        picks = bench.check_inputs(n)
        pick = picks[0]

        def eng_ctx(i: int, pid: str = pid) -> Any:
            q = query_at(i)
            return bench.eng.build_context(pid, q, query_vector=qv[q], record_access=False)

        def ref_ctx(i: int, pid: str = pid, recs: Any = recs, sups: Any = sups) -> Any:
            q = query_at(i)
            return bench.ref_context(pid, recs, sups, q, qv[q])

        def eng_chk(i: int, pid: str = pid, pick: Any = pick) -> Any:
            return bench.eng_pre.preview_supersessions(pid, pick[0], pick[1], created_at=pick[2])

        def ref_chk(i: int, recs: Any = recs, sups: Any = sups, pick: Any = pick) -> Any:
            return bench.ref_hits(recs, sups, pick)

        ref_rep = cfg.slow_repeat if n >= 10_000 else min(cfg.ref_repeat, cfg.scaling_repeat)
        a = interleaved({"e": eng_ctx, "c": eng_chk}, cfg.scaling_repeat)
        b = interleaved({"r": ref_ctx, "k": ref_chk}, ref_rep)
        curves["build_context (engine)"][n] = a["e"]
        curves["contradiction check (engine)"][n] = a["c"]
        curves["build_context (reference)"][n] = b["r"]
        curves["contradiction check (reference)"][n] = b["k"]
    bench.res.scaling = curves
