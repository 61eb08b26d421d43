"""The reviewer's worklist across patients (issue 16) and the undo that reopens a review:
engine level, on the fast hashing engine with explicit embeddings (cosine 1 within a pair)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.policy import ContradictionPolicy, EnginePolicy
from memory_core.worklist import SAFETY_WINDOW, WorkItem, build
from tests.conftest import NOW, Clock


def _vec(dims: int, k: int) -> list[float]:
    v = np.zeros(dims, dtype=np.float32)
    v[k % dims] = 1.0
    return [float(x) for x in v]


def _pair(
    eng: mc.MemoryEngine,
    pid: str,
    k: int,
    mtype: str,
    older: str,
    newer: str,
    older_days: float,
    newer_days: float,
) -> None:
    dims = eng.embedder.dimensions
    recs: list[dict[str, Any]] = [
        {
            "patient_id": pid,
            "content": text,
            "memory_type": mtype,
            "created_at": NOW - timedelta(days=days),
            "embedding": _vec(dims, k),
        }
        for text, days in ((older, older_days), (newer, newer_days))
    ]
    for r in recs:  # one at a time, so detection on insert records the pair when it is seen
        eng.add_memories([r])


@pytest.fixture
def review_engine(clock: Clock) -> Any:
    """Medication reviewed too (so there are non-safety reviews); clock at NOW."""
    pol = EnginePolicy(
        contradiction=ContradictionPolicy(
            modes={"allergy": "review", "adverse_reaction": "review", "medication": "review"}
        )
    )
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), policy=pol, clock=clock)
    yield eng
    eng.store.close()


PEN = ("Allergy to penicillin", "Allergy to penicillin, hives")
MET = ("Patient takes metformin 500mg", "Patient takes metformin 1000mg")


def test_empty_store_has_an_empty_worklist(engine: mc.MemoryEngine) -> None:
    items = engine.worklist()
    assert list(items) == [] and items.total == 0 and items.patients == 0


def test_reviews_across_patients_safety_first_then_oldest_waiting(
    review_engine: mc.MemoryEngine, clock: Clock
) -> None:
    e = review_engine
    # a review waits from its newer memory's created_at in the record (issue 23: one clock),
    # whenever it was detected: the newer ones are written 14, 13, 12 and 11 days ago and
    # detected later, each on its own day
    order = [("P-3", MET, 1), ("P-1", PEN, 2), ("P-2", MET, 3), ("P-4", PEN, 4)]
    for n, (pid, (old, new), k) in enumerate(order):
        clock.now = NOW - timedelta(days=10 - n)
        mtype = "allergy" if old.startswith("Allergy") else "medication"
        _pair(e, pid, k, mtype, old, new, 40, 14 - n)
    clock.now = NOW
    pending = e.supersessions(state="pending")
    assert len(pending) == 4
    items = e.worklist()
    reviews = [w for w in items if w.kind == "review"]
    assert [w.patient_id for w in reviews] == ["P-1", "P-4", "P-3", "P-2"]
    assert [w.safety for w in reviews] == [True, True, False, False]
    assert all(w.ref in {s.id for s in pending} for w in reviews)
    first = reviews[0]
    assert first.title.startswith("Allergy:") and "hives" in first.title
    assert first.link == "?patient=P-1"
    assert first.since == NOW - timedelta(days=13)  # the newer memory's created_at
    assert first.since < next(s.detected_at for s in pending if s.patient_id == "P-1")
    assert items.totals["review"] == 4 and items.patients == 4
    # the limit keeps the most urgent; the totals still count everything
    two = e.worklist(limit=2)
    assert [w.patient_id for w in two] == ["P-1", "P-4"] and two.totals["review"] == 4
    with pytest.raises(mc.ValidationError):
        e.worklist(limit=-1)


def test_worklist_reads_no_patient_memories_list(
    review_engine: mc.MemoryEngine, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reviews and safety changes come from supersessions and audit; list_memories is
    used only by the cleanup preview of the first patients (none here: cleanup_patients=0)."""
    _pair(review_engine, "P-1", 1, "allergy", *PEN, 30, 1)
    store = review_engine.store

    def refuse(patient_id: str) -> list[mc.Memory]:
        raise AssertionError(f"read every memory of {patient_id}")

    monkeypatch.setattr(store, "list_memories", refuse)
    monkeypatch.setattr(store, "list_patients", lambda: pytest.fail("listed every patient"))
    items = review_engine.worklist(cleanup_patients=0)
    assert [w.kind for w in items] == ["review"]


def test_safety_fact_archived_recently_is_listed_until_restored(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    m = engine.add_memory("P-9", "Adverse reaction: cough on lisinopril", "adverse_reaction")
    engine.add_memory("P-9", "Patient lives alone", "social")
    clock.advance(days=1)
    engine.archive(m.memory.id, "dr-a")
    items = engine.worklist(cleanup_patients=0)
    (item,) = [w for w in items if w.kind == "safety_change"]
    assert item.patient_id == "P-9" and item.ref == m.memory.id and item.safety
    assert item.title.startswith("Adverse reaction archived by a reviewer")
    assert item.since == clock.now
    # older than the window: gone
    assert not [
        w
        for w in engine.worklist(now=clock.now + SAFETY_WINDOW + timedelta(hours=1))
        if w.kind == "safety_change"
    ]
    engine.restore(m.memory.id, "dr-a")
    assert not [w for w in engine.worklist() if w.kind == "safety_change"]


def test_cleanup_count_for_patients_on_the_list(
    review_engine: mc.MemoryEngine, clock: Clock
) -> None:
    e = review_engine
    _pair(e, "P-1", 1, "allergy", *PEN, 30, 1)
    e.add_memory(
        "P-1",
        "Patient mentioned a trip",
        "observation",
        created_at=NOW - timedelta(days=2000),
        importance=1,
    )
    e.add_memory(
        "P-2",
        "Patient mentioned a hike",
        "observation",
        created_at=NOW - timedelta(1999),
        importance=1,
    )
    expected = e.cleanup(dry_run=True, patient_id="P-1").archived
    assert expected  # the old observation has faded below the threshold
    items = e.worklist()
    (item,) = [w for w in items if w.kind == "cleanup"]
    assert item.patient_id == "P-1" and item.count == len(expected)
    assert "P-2" not in {w.patient_id for w in items}  # not on the list: computed on demand


def test_build_orders_kinds_and_counts() -> None:
    t = NOW
    items = [
        WorkItem("cleanup", "A", "c", t - timedelta(days=9), count=2),
        WorkItem("review", "B", "r", t - timedelta(days=1)),
        WorkItem("stale_flag", "C", "s", t - timedelta(days=5)),
        WorkItem("safety_change", "D", "d", t, safety=True),
        WorkItem("review", "E", "r", t, safety=True),
    ]
    out = build(items, limit=10)
    assert [w.patient_id for w in out] == ["E", "D", "C", "B", "A"]
    assert out.totals == {"review": 2, "safety_change": 1, "stale_flag": 1, "cleanup": 1}


def test_undo_of_a_confirmed_review_reopens_it_and_as_of_views_stay_right(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    e = engine
    dims = e.embedder.dimensions
    for text, days in ((PEN[0], 30), (PEN[1], 1)):
        e.add_memories(
            [
                {
                    "patient_id": "P-1",
                    "content": text,
                    "memory_type": "allergy",
                    "created_at": NOW - timedelta(days=days),
                    "embedding": _vec(dims, 3),
                }
            ]
        )
    (sup,) = e.supersessions("P-1", state="pending")
    confirmed_at = clock.advance(hours=1)
    e.confirm_supersession(sup.id, "dr-a")
    assert e.get(sup.old_id).status is mc.Status.SUPERSEDED
    undone_at = clock.advance(hours=2)
    back = e.undo_supersession(sup.id, "dr-b")
    assert back.state is mc.SupersessionState.PENDING  # the review is open again
    assert back.ended_at == undone_at and back.effective_at == confirmed_at
    assert e.get(sup.old_id).status is mc.Status.ACTIVE
    assert [s.id for s in e.supersessions("P-1", state="pending")] == [sup.id]
    assert [w.ref for w in e.worklist() if w.kind == "review"] == [sup.id]

    # as of a moment while it was confirmed, the older memory was superseded; before and
    # after that window it is active
    def status(at: Any) -> mc.Status:
        view = e.view("P-1", now=at)
        return view.status[[m.id for m in view.memories].index(sup.old_id)]

    assert status(confirmed_at + timedelta(minutes=30)) is mc.Status.SUPERSEDED
    assert status(confirmed_at - timedelta(minutes=1)) is mc.Status.ACTIVE
    assert status(undone_at + timedelta(minutes=1)) is mc.Status.ACTIVE
    # audited: the undo entry's after shows the reopened state
    entry = e.audit_log(entity_id=sup.id, action="undo_supersession")[0]
    assert entry.actor == "dr-b" and (entry.after or {})["state"] == "pending"
    # decided again: confirmed from now
    again = e.confirm_supersession(sup.id, "dr-a")
    assert again.state is mc.SupersessionState.CONFIRMED
    assert e.get(sup.old_id).status is mc.Status.SUPERSEDED
    # an automatic supersession still ends as "undone"
    e.add_memory(
        "P-2",
        "Patient prefers morning appointments",
        "preference",
        created_at=NOW - timedelta(days=3),
    )
    auto = e.add_memory("P-2", "Patient prefers morning appointments now", "preference")
    if auto.supersessions:
        (a,) = auto.supersessions
        assert e.undo_supersession(a.id, "dr-b").state is mc.SupersessionState.UNDONE


# --- the Worklist page (AppTest) ----------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]


def _at(**state: Any) -> Any:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    state.setdefault("reviewer", "reviewer")
    for k, val in state.items():
        at.session_state[k] = val
    return at


def _metrics(at: Any) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_worklist_is_the_first_page_and_matches_the_engine(
    app: Callable[..., Any], demo_store: str
) -> None:
    at = app()
    assert not at.exception
    assert [t.value for t in at.title] == ["Worklist"]
    store = mc.open_store(demo_store)
    try:
        pending = store.list_supersessions(state="pending")
    finally:
        store.close()
    assert _metrics(at)["Review"] == str(len(pending)) != "0"
    df = at.dataframe[0].value
    reviews = df[df["kind"] == "Waiting for review"]
    assert len(reviews) == len(pending)
    pids = {s.patient_id for s in pending}
    assert set(reviews["patient"]) == {f"/contradictions?patient={p}" for p in pids}
    # words, not codes: types as words, no snake_case
    assert set(reviews["type"]) <= {"Allergy", "Adverse reaction", "Medication", "Preference"}
    assert not reviews["item"].str.contains("_").any()
    # safety types first, and the badge on the picker counts the patient's reviews
    assert reviews["type"].iloc[0] in {"Allergy", "Adverse reaction"}
    options = at.sidebar.selectbox(key="patient_select").options
    first = next(p for p in pids)
    n = sum(s.patient_id == first for s in pending)
    # the id and the badge first: a narrow closed picker cuts the description, not the count
    assert any(o.startswith(f"{first} · {n} to review") for o in options)
    assert len(options) == len(set(options))  # issue 26: NW-1001 was listed twice after a rerun
    at.run()
    options = at.sidebar.selectbox(key="patient_select").options
    assert len(options) == len(set(options))


def test_selecting_a_row_opens_the_patients_review(app: Callable[..., Any]) -> None:
    at = app()
    df = at.dataframe[0].value
    # the last review row (a review opens the Contradictions page)
    row = max(i for i in range(len(df)) if df.iloc[i]["what"] == "Review")
    assert str(df.iloc[row]["patient"]).startswith("/contradictions?patient=")
    want = df.iloc[row]["patient"].split("patient=")[1]
    at.session_state["worklist_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    at.button(key="worklist_open").click().run()
    assert not at.exception
    assert any("Contradictions" in t.value for t in at.title)
    assert at.session_state["patient"] == want
    assert at.query_params["patient"] in (want, [want])


def test_worklist_on_an_empty_store_offers_the_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_CORE_STORE", f"sqlite:///{tmp_path / 'empty.db'}")
    monkeypatch.setenv("MEMORY_CORE_EMBEDDER", "hashing")
    at = _at()
    at.run()
    assert not at.exception
    assert at.button(key="seed_demo")
    assert not at.dataframe and not at.error


@pytest.fixture(scope="module")
def many_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """1,200 patients (one memory each), 60 of them with a pending allergy review."""
    url = f"sqlite:///{tmp_path_factory.mktemp('many') / 'many.db'}"
    eng = mc.open_engine(url, "hashing", clock=lambda: NOW)
    dims = eng.embedder.dimensions
    recs: list[dict[str, Any]] = []
    for i in range(1200):
        recs.append(
            {
                "patient_id": f"SC-{i:06d}",
                "content": "Patient lives alone",
                "memory_type": "social",
                "created_at": NOW - timedelta(days=50),
                "embedding": _vec(dims, 0),
            }
        )
    eng.add_memories(recs, detect=False)
    for i in range(0, 1200, 20):
        for text, days in ((PEN[0], 40), (PEN[1], 10)):
            eng.add_memories(
                [
                    {
                        "patient_id": f"SC-{i:06d}",
                        "content": text,
                        "memory_type": "allergy",
                        "created_at": NOW - timedelta(days=days),
                        "embedding": _vec(dims, 5),
                    }
                ]
            )
    assert len(eng.supersessions(state="pending")) == 60
    eng.store.close()
    return url


def test_worklist_with_many_patients_and_a_picker_that_scales(
    many_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_CORE_STORE", many_store)
    monkeypatch.setenv("MEMORY_CORE_EMBEDDER", "hashing")
    at = _at()
    at.run()
    assert not at.exception
    m = _metrics(at)
    assert m["Review"] == "60" and m["Patients"] == "60"
    df = at.dataframe[0].value
    assert len(df) == 60 and set(df["type"]) == {"Allergy"}
    # the picker never lists every id: recent and busy patients first, a bounded list
    box = at.sidebar.selectbox(key="patient_select")
    assert len(box.options) <= 31
    assert "1,200 patients" in " ".join(c.value for c in at.sidebar.caption)
    assert sum(o.endswith("· 1 to review") for o in box.options) >= 29
    # search by id: only matches
    at.sidebar.text_input(key="patient_search").input("SC-00114").run()
    box = at.sidebar.selectbox(key="patient_select")
    current = box.value  # the patient open now stays selectable while searching
    assert all(o.startswith(("SC-00114", current)) for o in box.options)
    assert any(o.startswith("SC-001140") for o in box.options)
    box.select("SC-001149").run()
    assert at.session_state["patient"] == "SC-001149"
    # recent patients come first without a search
    at.sidebar.text_input(key="patient_search").input("").run()
    assert at.sidebar.selectbox(key="patient_select").options[0] == "SC-001149"
    at.sidebar.text_input(key="patient_search").input("no-such-patient").run()
    assert any("No patient id or label" in w.value for w in at.sidebar.warning)


def test_a_viewer_sees_the_worklist_read_only(demo_store: str) -> None:
    at = _at()
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback"}
    at.secrets["access"] = {"reviewers": ["reviewer@northwind.example"]}
    at.user = {"is_logged_in": True, "email": "nurse@northwind.example", "name": "Nurse"}
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Worklist"]
    assert any("Read-only" in c.value for c in at.caption)
    assert at.dataframe and _metrics(at)["Review"] != "0"
    # opening the review from the worklist: the viewer cannot confirm or reject there
    at.session_state["worklist_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="worklist_open").click().run()
    assert not at.exception
    acts = [b for b in at.button if b.key and b.key.startswith(("confirm_", "reject_"))]
    assert acts and all(b.disabled for b in acts)


def test_equal_waits_put_allergies_before_adverse_reactions() -> None:
    items = [
        WorkItem("review", "A", "ar", NOW, memory_type="adverse_reaction", safety=True, ref="a"),
        WorkItem("review", "B", "al", NOW, memory_type="allergy", safety=True, ref="b"),
    ]
    assert [w.memory_type for w in build(items, 10)] == ["allergy", "adverse_reaction"]


def test_the_reviewer_name_survives_opening_a_patient_from_the_worklist(
    app: Callable[..., Any],
) -> None:
    """Found walking the demo: a widget's value is dropped on a page switch, so the name typed
    on the Worklist was gone on Contradictions and Confirm refused."""
    at = app(reviewer="")
    at.sidebar.text_input(key="reviewer").input("Dr. Rivera").run()
    at.session_state["worklist_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="worklist_open").click().run()
    assert any("Contradictions" in t.value for t in at.title)
    assert at.sidebar.text_input(key="reviewer").value == "Dr. Rivera"
    assert not at.sidebar.error


def test_a_flags_link_opens_the_place_where_it_is_decided(
    app: Callable[..., Any], demo_store: str
) -> None:
    """Issue 26: the worklist's link for a possibly-out-of-date memory opened the Memories page,
    which has no flag controls. Now it opens Contradictions on its flags tab."""
    from tests.test_dashboard_prompt import flagged_memories

    eng = mc.open_engine(demo_store)
    ids = flagged_memories(eng)
    eng.store.close()
    at = app()
    df = at.dataframe[0].value
    # NW-1001's two, and not the demo's gabapentin response of NW-1003: the dose change it was
    # said before waits for a reviewer (the assertion model held it), so nothing is out of date
    flags = df[df["kind"] == "Possibly out of date"]
    mine = flags[flags["patient"] == "/contradictions?patient=NW-1001&review=flags"]
    assert len(mine) == len(ids)
    assert set(flags["patient"]) == {"/contradictions?patient=NW-1001&review=flags"}
    row = int(mine.index[0])
    at.session_state["worklist_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    button = at.button(key="worklist_open")
    assert button.label == "Open NW-1001 on Contradictions (possibly out of date)"
    button.click().run()
    assert not at.exception
    assert any("Contradictions" in t.value for t in at.title)
    assert at.query_params["review"] in ("flags", ["flags"])
    assert sorted(b.key for b in at.button if (b.key or "").startswith("keep_flagged_"))
