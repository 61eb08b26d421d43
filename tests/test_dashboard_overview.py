"""AppTest of the Overview page (views/overview.py) on the seeded demo store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core.labels import status_label
from memory_core.values import Status

PID = "NW-1001"


def _metrics(at: Any) -> dict[str, int]:
    return {m.label: int(m.value) for m in at.metric}


def _expected(eng: mc.MemoryEngine, pid: str) -> dict[str, int]:
    view = eng.view(pid)
    return {
        "Memories": len(view.memories),
        "Active": sum(s is Status.ACTIVE for s in view.status),
        "Replaced": sum(s is Status.SUPERSEDED for s in view.status),
        "Archived": sum(s is Status.ARCHIVED for s in view.status),
        "Pending reviews": len(eng.supersessions(pid, state="pending")),
        "At risk of cleanup": len(eng.cleanup(dry_run=True, patient_id=pid).archived),
    }


@pytest.fixture
def eng(demo_store: str) -> Any:
    e = mc.open_engine(demo_store)
    yield e
    e.store.close()


def test_kpis_equal_the_engine_counts(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app("views/overview.py")
    assert not at.exception
    assert at.title[0].value == "Overview"
    assert any(PID in c.value for c in at.caption)
    shown = _metrics(at)
    assert shown == _expected(eng, PID)
    # the penicillin re-test and the lisinopril cough said to have resolved (issue 35: the
    # lisinopril order itself is replaced by the switch to losartan when it is written, so no
    # review is raised on it by the cough note)
    assert shown["Pending reviews"] == 2
    assert shown["Memories"] == shown["Active"] + shown["Replaced"] + shown["Archived"]
    # the cleanup KPI is a dry run: nothing was archived or audited by rendering
    assert eng.audit_log(action="cleanup_archive") == []


def test_at_risk_is_the_cleanup_rule(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    """At risk = active, not pinned, not review-gated, strength below the cleanup threshold."""
    pid = "NW-1004"
    at = app("views/overview.py", patient=pid)
    view = eng.view(pid)
    pol = eng.policy
    by_rule = [
        m.id
        for i, m in enumerate(view.memories)
        if view.status[i] is Status.ACTIVE
        and not m.pinned
        and m.memory_type not in pol.review_gated_types
        and view.strength[i] < pol.decay.cleanup_threshold
    ]
    assert by_rule  # the demo has a faded memory for this patient
    assert _metrics(at)["At risk of cleanup"] == len(by_rule)


def test_timeline_has_a_marker_for_every_visible_memory(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app("views/overview.py")
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    view = eng.view(PID)
    traces = {t["name"]: t for t in fig["data"]}
    assert sum(len(t["x"]) for t in fig["data"]) == len(view.memories)
    for status in ("active", "superseded"):
        name = status_label(status)  # the legend in words (issue 16)
        assert len(traces[name]["x"]) == sum(s.value == status for s in view.status)
        assert traces[name]["mode"] == "markers"
    hover = {c[0] for t in fig["data"] for c in t["customdata"]}
    assert hover == {m.content for m in view.memories}
    assert fig["layout"]["xaxis"]["title"]["text"] and fig["layout"]["yaxis"]["title"]["text"]


def test_patient_picker_changes_kpis_and_query_param(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app("views/overview.py")
    before = _metrics(at)
    at.sidebar.selectbox(key="patient_select").select("NW-1005").run()
    assert not at.exception
    after = _metrics(at)
    assert after == _expected(eng, "NW-1005")
    assert after != before
    assert at.query_params["patient"] in ("NW-1005", ["NW-1005"])
    assert any("NW-1005" in c.value for c in at.caption)
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert sum(len(t["x"]) for t in fig["data"]) == after["Memories"]


def test_recent_injections_are_listed(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app("views/overview.py")
    # issue 16: the demo's accesses come with the injection records that produced them
    assert not any("No agent has been given" in i.value for i in at.info)
    used = {e for times in eng.access_times(PID).values() for e in times}
    given = eng.injections(PID, limit=10_000)
    assert given and {i.at for i in given} == used
    counts: dict[str, int] = {}
    for inj in given:
        for mid, _ in inj.items:
            counts[mid] = counts.get(mid, 0) + 1
    assert counts == {m.id: m.access_count for m in eng.list_memories(PID) if m.access_count}
    query = "What appointment times suit the patient?"
    res = eng.build_context(PID, query, record_access=True)  # an agent-side call
    assert res.injection_id
    at = app("views/overview.py")
    texts = [t.value for t in at.text]
    assert any(query in t for t in texts)
    assert any(res.text.splitlines()[0] in c.value for c in at.code)


def test_empty_store_offers_the_demo_data(
    app: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_CORE_STORE", f"sqlite:///{tmp_path / 'empty.db'}")
    at = app("views/overview.py")
    assert not at.exception
    assert at.button(key="seed_demo").label == "Load demo data"
    assert not at.metric
    assert not at.get("plotly_chart")


def test_a_superseded_memory_says_what_replaced_it(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app("views/overview.py")
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    sup = next(t for t in fig["data"] if t["name"] == "Replaced by a newer memory")
    old = next(m for m in eng.list_memories(PID) if m.status is mc.Status.SUPERSEDED)
    newer = eng.get(str(old.superseded_by))
    row = next(c for c in sup["customdata"] if c[0] == old.content)
    assert "replaced by: " in row[6] and newer.content[:40] in row[6]
    assert not any("_" in y for t in fig["data"] for y in t["y"])  # types in words
