"""The contradiction check of a new memory (its embedding excluded) at ``check_n`` memories,
for the patient's most common type and a preference, and the agreement check it rests on
(the same hits as the reference, similarities within 1e-5, most similar first)."""

from __future__ import annotations

import itertools
from typing import Any

from ..harness import interleaved
from .common import (
    Mismatch,
    Setup,
    Target,
    engine_and_reference,
    log,
)

TARGET = Target("≤ 5 ms", max_s=0.005)


def check(bench: Setup, n: int) -> None:
    pid = bench.pid(n)
    recs, sups = bench.state(pid)
    for pick in bench.check_inputs(n):
        content, mtype, created, _ = pick
        got = bench.eng_pre.preview_supersessions(pid, content, mtype, created_at=created)
        want = dict(bench.ref_hits(recs, sups, pick))
        ids = [h.memory.id for h in got]
        if sorted(ids) != sorted(want) or len(set(ids)) != len(ids):
            raise Mismatch(f"{pid} {mtype}: engine hits {len(got)} != reference {len(want)}")
        if any(abs(h.similarity - want[h.memory.id]) > 1e-5 for h in got):
            raise Mismatch(f"{pid} {mtype}: similarities differ by more than 1e-5")
        # most similar first; float32 (engine) and float64 (reference) may order near-ties
        # differently, nothing else
        sims = [want[i] for i in ids]
        if any(b > a + 1e-6 for a, b in itertools.pairwise(sims)):
            raise Mismatch(f"{pid} {mtype}: hits are not ordered by similarity")
        bench.res.checks.append(
            f"contradiction check, {n:,} memories, new {mtype}: the same {len(want)} hit(s), "
            "similarities within 1e-5, most similar first"
        )


def run(bench: Setup) -> None:
    n = bench.cfg.check_n
    pid = bench.pid(n)
    log(f"contradiction check, {n:,} memories")
    recs, sups = bench.state(pid)
    for pick in bench.check_inputs(n):
        hits = len(bench.ref_hits(recs, sups, pick))

        def eng_chk(i: int, pick: Any = pick) -> Any:
            return bench.eng_pre.preview_supersessions(pid, pick[0], pick[1], created_at=pick[2])

        def ref_chk(i: int, pick: Any = pick) -> Any:
            return bench.ref_hits(recs, sups, pick)

        eng = interleaved({"e": eng_chk}, bench.cfg.repeat)["e"]
        refs = interleaved({"r": ref_chk}, bench.cfg.ref_repeat)["r"]
        rows_same = sum(r["memory_type"] == pick[1] for r in recs)
        key = f"check:{pick[1]}"
        label = f"contradiction check, new {pick[1]} (embedding excluded)"
        size = f"{n:,} memories ({rows_same:,} same type, {hits} hits)"
        bench.res.rows += engine_and_reference(key, label, size, eng, refs, TARGET, TARGET.met(eng))
        bench.res.profile_calls[key] = lambda f=eng_chk: [f(i) for i in range(5)]
