"""The benchmark harness at tiny size, through the same code path as ``make bench``, so it
cannot rot: every workload runs, the engine agrees with the plain reference implementation
(checked inside the run, before anything is timed), and the report is written. Runs in the
app's virtualenv, where the peers (Mem0, LangGraph) are not installed: they are reported as
"not measured" with the reason."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from bench import reference as ref
from bench.__main__ import run
from bench.workloads import Results

WORKLOADS = {
    "decay",
    "context",
    "context-D",
    "question",
    "e2e@20",
    "e2e@60",
    "backscan",
    "agent",
    "add_one",
    "add_batch",
    "bulk",
    "embed",
    "cold",
    "app",
    "worklist",
    "worklist_page",
    "rss",
    "scan-time",
    "scan-memory",
    "tuner-time",
    "tuner-memory",
    "touch-rss",
    "agent-scale",
    "section-warm",
    "section-add",
    "caches-rss",
    "liveness-adds",
    "liveness-cleanup",
    "cleanup-store",
    "fhir-bundle",
    "fhir-bulk",
    "extract-long",
    "extract-unpunctuated",
    "server",
    "server-mcp",
    "server-http",
    "server-start-mcp",
    "server-start-http",
}
# the hospital-scale rows (issue 15) measure memory or time against a target, not against the
# reference implementation (agent-scale's reference column is the engine's own preview)
NO_REFERENCE = ("cold", "rss", "app", "scan-time", "scan-memory", "tuner-time", "tuner-memory")
NO_REFERENCE += ("touch-rss", "worklist", "worklist_page")
# issue 25's RSS, liveness and cleanup rows count or measure against a target
NO_REFERENCE += ("caches-rss", "liveness-adds", "liveness-cleanup", "cleanup-store")
NO_REFERENCE += ("fhir-bundle", "fhir-bulk", "extract-long", "extract-unpunctuated")
# issue 33's server rows measure against build_context in the same run, or a start time
NO_REFERENCE += ("server-mcp", "server-http", "server-start-mcp", "server-start-http")
# issue 32: the analysis of a question has a target of its own, no reference
NO_REFERENCE += ("question",)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Results, Path]:
    out = tmp_path_factory.mktemp("bench-out")
    res = run(["--tiny", "--no-cache", "--out", str(out)], guard=False)
    return res, out


def test_every_workload_runs_and_is_timed(tiny: tuple[Results, Path]) -> None:
    res, _ = tiny
    keys = {r.key for r in res.rows}
    assert keys >= WORKLOADS, WORKLOADS - keys
    assert any(k.startswith("check:") for k in keys)  # the contradiction check, per new type
    for r in res.rows:
        if r.note.startswith("not measured"):
            continue
        assert (r.sample is not None and r.sample.n > 0) or r.value is not None, r
        if r.sample is not None:
            assert all(t > 0 for t in r.sample.times)
    # every target row has a verdict; every timed engine row has its reference ratio
    for r in res.rows:
        if r.target:
            assert r.passed is not None, r
        if r.contender == "engine" and r.key not in NO_REFERENCE:
            assert r.ratio is not None and r.ratio > 0, r


def test_engine_agrees_with_the_reference(tiny: tuple[Results, Path]) -> None:
    res, _ = tiny
    text = "\n".join(res.checks)
    assert "current importance" in text
    assert text.count("build_context") >= 3  # every size, and a patient with supersessions
    assert "contradiction check" in text
    assert "back-scan" in text


def test_peers_absent_here_are_reported_not_fatal(tiny: tuple[Results, Path]) -> None:
    res, _ = tiny
    peers = [r for r in res.rows if "Mem0" in r.contender or "LangGraph" in r.contender]
    assert peers
    for r in peers:
        assert r.sample is not None or r.note.startswith("not measured:"), r


def test_report_files(tiny: tuple[Results, Path]) -> None:
    res, out = tiny
    md = (out / "benchmarks.md").read_text(encoding="utf-8")
    for needle in (
        "## Machine and settings",
        "| Workload |",
        "cores",
        "numpy",
        "BLAS",
        "MEMORY_CORE_ORT_THREADS",
        "## Scaling",
        "`client` vs `server`",
        "## Resident memory",
    ):
        assert needle in md, needle
    html = (out / "bench_scaling.html").read_text(encoding="utf-8")
    assert "plotly" in html.lower()
    data = json.loads((out / "bench_results.json").read_text(encoding="utf-8"))
    assert len(data["rows"]) == len(res.rows)
    assert res.rss["delta_bytes"] > 0 and res.rss["raw_bytes"] > 0


def test_reference_decay_matches_the_domain_examples() -> None:
    """The reference itself reproduces domain.md's worked examples (so agreeing with it means
    something)."""
    now = datetime(2026, 6, 1, tzinfo=UTC)

    def rec(importance: float, days: float, count: int = 0, **kw: object) -> ref.Record:
        t = (now - timedelta(days=days)).isoformat()
        return {
            "importance": importance,
            "created_at": t,
            "last_accessed": t,
            "access_count": count,
            "pinned": False,
            "tier": "long_term",
            **kw,
        }

    p = ref.DecayParams()
    s = now.timestamp()
    assert ref.current_importance(rec(9, 180), p, s) == pytest.approx(9 * 0.98**6)
    assert ref.current_importance(rec(9, 180, 4), p, s) == pytest.approx(9 * 0.98**6 + 2)
    assert ref.current_importance(rec(2, 3 * 365), p, s) == 1.0
    assert ref.current_importance(rec(6, 0, 10), p, s) == 9.0
    strength = ref.DecayParams(model="strength")
    assert ref.current_importance(rec(5, 1), strength, s) == pytest.approx(
        10 * np.exp(-0.24) * 0.75
    )
    assert ref.cosine(np.ones(3, np.float32), np.zeros(3, np.float32)) == 0.0


def test_the_hospital_scale_probes_report_their_figures(tiny: tuple[Results, Path]) -> None:
    """The back-scan, the tuner, the agent call and the touched patients ran in their own
    interpreters and reported what the README's rows quote."""
    res, out = tiny
    h = res.hospital
    assert h["scan"]["memories"] == res.config.scan_n and h["scan"]["found"] > 0
    assert h["scan"]["extra_bytes"] >= 0 and h["scan"]["seconds"] > 0
    assert h["tuner"]["pairs"] == res.config.tuner_n * (res.config.tuner_n - 1) // 2
    assert h["touch"]["patients"] == res.config.touch_patients
    assert h["touch"]["cached_patients"] <= res.config.touch_patients
    assert h["touch"]["cache_estimate_bytes"] <= h["touch"]["cache_bound_bytes"]
    assert h["agent"]["agent_median_s"] > 0 and h["agent"]["preview_median_s"] > 0
    data = json.loads((out / "bench_results.json").read_text(encoding="utf-8"))
    assert data["hospital"]["touch"]["patients"] == res.config.touch_patients
