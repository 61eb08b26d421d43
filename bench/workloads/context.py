"""``build_context`` with the query already embedded (all memories active, and a patient
loaded with supersession detection), the agreement check it rests on (same top-5 ids,
identical section text, current importances within 1e-9), the agent call that records
its accesses (no target), and the analysis of a question read for the first time (issue 32:
``memory_core.question.analyse`` with every cache it reads through emptied)."""

from __future__ import annotations

from typing import Any

from .. import reference as ref
from ..harness import interleaved, measure
from .common import (
    F32,
    QUERIES,
    Mismatch,
    Row,
    Setup,
    Target,
    engine_and_reference,
    line_leads,
    log,
    plain_policy,
    query_at,
)

TARGET = Target("≤ 10 ms; ≥ 20× ref", max_s=0.010, min_speedup=20)
#: A question read for the first time: words, word forms, the facts reader's keys, concepts,
#: kinds, slots and targets (issue 32).
QUESTION = Target("≤ 0.3 ms", max_s=0.0003)


def check(bench: Setup, n: int, qv: dict[str, F32], detected: bool = False) -> None:
    pid = bench.pid(n, detected)
    recs, sups = bench.state(pid)
    plain = plain_policy(bench.eng.policy)
    for q, v in qv.items():
        got = bench.eng.build_context(pid, q, query_vector=v, record_access=False, policy=plain)
        text, lines = bench.ref_context(pid, recs, sups, q, v)
        inc = line_leads(got)
        ids = [i.scored.memory.id for i in inc]
        if ids != [ln.memory_id for ln in lines]:
            raise Mismatch(f"{pid} {q!r}: engine top {ids} != reference {lines}")
        if got.text != text:
            raise Mismatch(f"{pid} {q!r}: section text differs\n{got.text}\n---\n{text}")
        for item, line in zip(inc, lines, strict=True):
            if abs(item.scored.current_importance - line.current_importance) > 1e-9:
                raise Mismatch(f"{pid} {q!r}: current importance of {line.memory_id} differs")
    bench.res.checks.append(
        f"build_context, {pid} ({n:,} memories{', with supersessions' if detected else ''}), "
        f"{len(qv)} queries: same top-5 ids, identical section text, current importances "
        "within 1e-9"
    )


def run(bench: Setup, qv: dict[str, F32]) -> None:
    n = bench.cfg.context_n
    log(f"build_context, {n:,} memories, query embedded")
    for detected in (False, True):
        pid = bench.pid(n, detected)
        recs, sups = bench.state(pid)
        active = len(ref.active_records(recs, sups, bench.now.timestamp()))

        def engine_call(i: int, pid: str = pid) -> Any:
            q = query_at(i)
            return bench.eng.build_context(pid, q, query_vector=qv[q], record_access=False)

        def ref_call(i: int, pid: str = pid, recs: Any = recs, sups: Any = sups) -> Any:
            q = query_at(i)
            return bench.ref_context(pid, recs, sups, q, qv[q])

        eng = interleaved({"e": engine_call}, bench.cfg.repeat)["e"]
        refs = interleaved({"r": ref_call}, bench.cfg.ref_repeat)["r"]
        key = "context-D" if detected else "context"
        label = "build_context, query embedded, SQLite"
        size = f"{n:,} memories ({active:,} active)"
        if detected:
            bench.res.rows += [
                Row(
                    key,
                    label,
                    size,
                    "engine",
                    eng,
                    reference=refs,
                    note="loaded with supersession detection, as real use leaves it",
                ),
                Row(key, label, size, "reference", refs, reference=refs),
            ]
            continue
        bench.res.rows += engine_and_reference(
            key, label, size, eng, refs, TARGET, TARGET.met(eng, refs)
        )
        bench.res.profile_calls[key] = lambda f=engine_call: [f(i) for i in range(len(QUERIES))]


def run_agent(bench: Setup, qv: dict[str, F32]) -> None:
    """build_context as an agent calls it: the included memories' accesses and an
    injection record are written (and applied to the engine's cached usage in memory)."""
    n = bench.cfg.context_n
    pid = bench.pid(n)

    def call(i: int) -> Any:
        q = query_at(i)
        return bench.eng.build_context(pid, q, query_vector=qv[q], record_access=True)

    s = interleaved({"e": call}, bench.cfg.repeat)["e"]
    ref_row = next(r for r in bench.res.rows if r.key == "context" and r.contender == "engine")
    bench.res.rows.append(
        Row(
            "agent",
            "build_context with record_access=True (writes accesses + injection)",
            f"{n:,} memories",
            "engine",
            s,
            reference=ref_row.reference,
            note="no target; shows what an agent turn costs with its writes",
        )
    )


def run_question(bench: Setup) -> None:
    """The analysis of a question never seen before: the analysed-question, facts-reader and
    drug-name caches are emptied before each call (untimed), over the rotation of queries."""
    from memory_core import drugs
    from memory_core.facts import read
    from memory_core.question import analyse

    at = [0]

    def fresh() -> None:
        analyse.cache_clear()
        read.cache_clear()
        drugs._resolve.cache_clear()
        at[0] += 1

    sample = measure(lambda: analyse(query_at(at[0])), bench.cfg.repeat * 20, setup=fresh)
    bench.res.rows.append(
        Row(
            "question",
            "question analysis (memory_core.question.analyse), first reading",
            f"{len(QUERIES)} questions in rotation",
            "engine",
            sample,
            target=QUESTION,
            passed=QUESTION.met(sample),
            note="words, word forms, the facts reader's keys, concepts, kinds, slots, targets",
        )
    )
