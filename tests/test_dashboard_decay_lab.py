"""Decay lab page (AppTest on the demo store): tuning changes the numbers shown, the as-of
slider hides later memories, and only the Save button writes the policy (audited)."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import memory_core as mc

PAGE = "views/decay_lab.py"
PID = "NW-1001"
METFORMIN = (
    "Patient reports persistent GI distress on metformin; switched to extended-release formulation"
)
#: a statement of NW-1001 written late in the demo (June of the demo's second year), still active
LATE = "Patient's dry cough on lisinopril resolved after switching to losartan"


@pytest.fixture
def eng(demo_store: str) -> Iterator[mc.MemoryEngine]:
    """The same store, opened by the test to compare numbers."""
    e = mc.open_engine(demo_store)
    yield e
    e.store.close()


def table(at: Any) -> pd.DataFrame:
    """The lab table (st.dataframe key "lab_table": display frames have no element id in
    AppTest, so it is found by its columns)."""
    for df in at.dataframe:
        if "current (tuned)" in df.value.columns:
            return df.value
    raise AssertionError("lab table not shown")


def chart_values(at: Any, content: str) -> np.ndarray:
    """The y values of a memory's curve in the decay chart."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    label = content if len(content) <= 48 else content[:47] + "…"
    trace = next(t for t in spec["data"] if t.get("name") == label)
    y = trace["y"]
    if isinstance(y, dict):  # plotly's typed-array encoding
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=np.dtype(y["dtype"]))
    return np.array([np.nan if v is None else v for v in y], dtype=np.float64)


def memory_id(eng: mc.MemoryEngine, content: str) -> str:
    return next(m.id for m in eng.list_memories(PID) if m.content == content)


def importance_in_table(at: Any, content: str) -> float:
    t = table(at)
    return float(t.loc[t["content"] == content, "current (tuned)"].iloc[0])


def test_renders_with_the_saved_policy(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app(PAGE)
    assert not at.exception
    assert at.radio(key="lab_model").value == eng.policy.decay.model
    t = table(at)
    view = eng.view(PID)
    active = [m for m, s in zip(view.memories, view.status, strict=True) if s.value == "active"]
    assert len(t) == len(active)
    # untouched controls: tuned == saved, nothing to compare, nothing to save
    assert (t["current (tuned)"] - t["current (saved)"]).abs().max() == 0
    assert at.button(key="lab_save").disabled
    # the chart's default memories: the top ones by current importance plus every allergy
    chosen = set(at.multiselect(key="lab_memories").value)
    allergies = {m.id for m in active if m.memory_type == "allergy"}
    assert allergies <= chosen and len(chosen) >= 6


def test_raising_the_loss_lowers_importance_in_table_and_chart(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app(PAGE)
    at.multiselect(key="lab_memories").set_value([memory_id(eng, METFORMIN)]).run()
    before_table = importance_in_table(at, METFORMIN)
    before_curve = chart_values(at, METFORMIN)

    at.radio(key="lab_rate_form").set_value("% per period").run()
    at.slider(key="lab_loss_pct").set_value(60.0).run()
    assert not at.exception
    after_table = importance_in_table(at, METFORMIN)
    after_curve = chart_values(at, METFORMIN)

    assert after_table < before_table - 0.5
    # the expected number, from the engine with the same policy
    tuned = mc.DecayPolicy().with_loss(0.60, 6.0)
    view = eng.view(PID, policy=tuned)
    i = next(k for k, m in enumerate(view.memories) if m.content == METFORMIN)
    assert after_table == pytest.approx(float(view.current_importance[i]), abs=0.01)
    # the curve: same shape in time, lower after creation (NaN before it)
    assert before_curve.shape == after_curve.shape
    ok = ~np.isnan(before_curve)
    assert np.all(after_curve[ok] <= before_curve[ok] + 1e-9)
    assert after_curve[ok][-1] < before_curve[ok][-1] - 0.5
    # the comparison reacts: the tuned policy changes ranks
    assert sum(int(m.value) for m in at.metric[1:]) > 0


def test_as_of_earlier_hides_later_memories(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    late = next(m for m in eng.list_memories(PID) if m.content == LATE)
    day = (late.created_at - timedelta(days=2)).date()
    at = app(PAGE)
    assert LATE in set(table(at)["content"])

    at.slider(key="lab_as_of").set_value(day).run()
    assert not at.exception
    t = table(at)
    assert LATE not in set(t["content"])
    assert t["created (UTC)"].max() <= f"{day:%Y-%m-%d} 23:59"
    view = eng.view(PID, now=datetime.combine(day, time(23, 59), tzinfo=UTC))
    assert len(t) == sum(s.value == "active" for s in view.status)
    # the chart only offers memories that existed then
    assert late.id not in at.multiselect(key="lab_memories").options


def test_save_is_explicit_and_audited(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app(PAGE)
    at.text_input(key="reviewer").input("dr.okafor").run()
    at.slider(key="lab_loss_pct").set_value(30.0).run()
    at.slider(key="lab_floor").set_value(2.0).run()
    assert not at.exception
    assert not at.button(key="lab_save").disabled
    assert eng.audit_log(action="policy_change") == []  # tuning alone saves nothing

    at.button(key="lab_save").click().run()
    assert not at.exception
    assert any("Saved the tuned decay policy" in s.value for s in at.success)
    entries = eng.audit_log(action="policy_change")
    assert len(entries) == 1
    entry = entries[0]
    assert entry.actor == "dr.okafor"
    expected = mc.DecayPolicy().with_loss(0.30, 6.0)
    assert entry.after is not None and entry.before is not None
    assert entry.after["decay"]["rate"] == pytest.approx(expected.rate)
    assert entry.after["decay"]["floor"] == 2.0
    assert entry.before["decay"]["rate"] == pytest.approx(0.02)
    # the store now holds it, and the page compares against it: nothing left to save
    reopened = mc.EnginePolicy.from_dict(eng.store.load_policy() or {})
    assert reopened.decay.rate == pytest.approx(expected.rate)
    assert at.button(key="lab_save").disabled


def test_signed_in_viewer_cannot_save(demo_store: str, eng: mc.MemoryEngine) -> None:
    """With [auth] configured, a viewer can tune and compare but not save."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback"}
    at.secrets["access"] = {"reviewers": ["reviewer@northwind.example"]}
    at.user = {"is_logged_in": True, "email": "viewer@northwind.example", "name": "Viewer"}
    at.run()
    at.switch_page(PAGE).run()
    at.slider(key="lab_loss_pct").set_value(40.0).run()
    assert not at.exception
    assert at.button(key="lab_save").disabled
    assert any("Read-only" in c.value for c in at.caption)
    assert eng.audit_log(action="policy_change") == []


def test_rate_controls_express_the_saved_rate_in_each_model(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """The loss form's defaults are the saved rates converted by the policy's inverse
    conversions (domain.md's forms): r = 0.02/month is 1 - 0.98**6 = 11.4 % per 6 months
    exponential, 0.02 x 6 = 12 % linear; λ = 0.01/h keeps e^-0.24 = 78.7 % after a day."""
    assert (eng.policy.decay.model, eng.policy.decay.rate, eng.policy.decay.lam) == (
        "exponential",
        0.02,
        0.01,
    )
    at = app(PAGE)
    assert at.slider(key="lab_loss_pct").value == pytest.approx(11.4)
    assert at.number_input(key="lab_period").value == pytest.approx(6.0)
    # switching the model family (months <-> hours) resets the form to the saved rates
    at.radio(key="lab_model").set_value("strength").run()
    assert at.slider(key="lab_loss_pct").value == pytest.approx(21.3)
    assert at.number_input(key="lab_period").value == pytest.approx(24.0)
    at.radio(key="lab_rate_form").set_value("half-life").run()
    assert at.number_input(key="lab_half_life").value == pytest.approx(69.3)  # ln 2 / 0.01
    at.radio(key="lab_rate_form").set_value("% per period").run()
    at.radio(key="lab_model").set_value("linear").run()
    assert at.slider(key="lab_loss_pct").value == pytest.approx(12.0)
    assert at.number_input(key="lab_period").value == pytest.approx(6.0)


def test_chart_default_follows_the_policys_always_included_types(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """The chart's default memories add every memory of a type the context always includes,
    as the ranking policy defines them (not a type named by the page)."""
    policy = eng.policy
    # observations: many, of low importance, so the top memories alone would not cover them
    types = ("allergy", "observation")
    ranking = dataclasses.replace(policy.ranking, always_include_types=types)
    eng.save_policy(dataclasses.replace(policy, ranking=ranking), by="Dr. Rivera")
    at = app(PAGE)
    assert not at.exception
    chosen = set(at.multiselect(key="lab_memories").value)
    view = eng.view(PID)
    active = [m for m, s in zip(view.memories, view.status, strict=True) if s.value == "active"]
    always = {m.id for m in active if m.memory_type in types}
    assert sum(m.memory_type == "observation" for m in active) > 6
    assert always <= chosen


# --- issue 16: a bad value is explained next to its field and nothing stale is computed --------
@pytest.mark.parametrize(
    ("key", "bad", "words"),
    [
        ("lab_period", 0.0, "Period"),
        ("lab_boost", 99.0, "Boost per use"),
        ("lab_boost_cap", -1.0, "Boost cap"),
        ("lab_short_rate", 1.5, "Short-term memories"),
    ],
)
def test_a_bad_control_value_says_what_is_wrong_and_computes_nothing(
    app: Callable[..., Any], key: str, bad: float, words: str
) -> None:
    at = app(PAGE)
    at.radio(key="lab_rate_form").set_value("% per period").run()
    at.number_input(key=key).set_value(bad).run()
    assert not at.exception
    assert any(words in e.value and f"{bad:g} is not" in e.value for e in at.error)
    assert any("Nothing below is computed" in w.value for w in at.warning)
    # no stale comparison with the old value ("gives the same ranking") and nothing to save
    assert not at.dataframe
    assert not [i for i in at.info if "same ranking" in i.value]
    assert not [b for b in at.button if b.key == "lab_save"]


def test_saved_vs_tuned_labels_the_few_that_moved_most_and_the_as_of_line(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """Issue 26: the chart drew 37 unlabelled lines. Now it draws the 8 memories that move most
    (entering or leaving the top first), each on its own labelled row with its saved and tuned
    rank; the rest on request (a toggle), and all of them in the table."""
    at = app(PAGE)
    at.radio(key="lab_rate_form").set_value("% per period").run()
    at.slider(key="lab_loss_pct").set_value(60.0).run()
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    moves = next(f for f in figs if "Rank under" in f["layout"]["title"]["text"])
    rows = [d for d in moves["data"] if d.get("y") and d["y"][0] is not None]
    compare = next(d.value for d in at.dataframe if "importance (saved)" in d.value.columns)
    assert len(compare) > 8 and len(rows) == 8  # the few, not every line
    labels = [d["y"][0] for d in rows]
    assert len(set(labels)) == 8 and all(lab.strip("\u200b") for lab in labels)  # labelled
    ranks = compare[["content", "rank (saved)", "rank (tuned)"]].values
    by_content = {c[:45]: (a, b) for c, a, b in ranks}
    for d in rows:
        assert tuple(d["x"]) == by_content[d["y"][0].rstrip("\u200b").removesuffix("…")[:45]]
    firsts = [r for r in compare.to_dict("records") if r["change"] in ("enters top", "leaves top")]
    assert len(firsts) <= 8
    shown = {d["y"][0].rstrip("\u200b").removesuffix("…")[:45] for d in rows}
    assert {r["content"][:45] for r in firsts} <= shown  # what matters most is drawn
    at.toggle(key="lab_moves_all").set_value(True).run()
    moves = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "Rank under" in json.loads(c.proto.spec)["layout"]["title"]["text"]
    )
    assert len([d for d in moves["data"] if d.get("y") and d["y"][0] is not None]) == len(compare)
    late = next(m for m in eng.list_memories(PID) if m.content == LATE)
    at.slider(key="lab_as_of").set_value((late.created_at + timedelta(days=3)).date()).run()
    curves = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "over time" in json.loads(c.proto.spec)["layout"]["title"]["text"]
    )
    texts = [a.get("text", "") for a in curves["layout"].get("annotations", [])]
    assert any(t.startswith("as of ") for t in texts) and "now" not in texts


def test_as_of_keeps_its_value_across_edits(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    """Issue 26: after the As-of slider was moved and the loss period typed wrong (0) and then
    right (6) again, the slider jumped to another date and the next click recomputed as of
    it (active 46 -> 6). Now the date stays, and every number below is as of it."""
    late = next(m for m in eng.list_memories(PID) if m.content == LATE)
    day = (late.created_at - timedelta(days=2)).date()
    at = app(PAGE)
    at.radio(key="lab_rate_form").set_value("% per period").run()
    at.slider(key="lab_as_of").set_value(day).run()
    active_then = len(table(at))
    at.number_input(key="lab_period").set_value(0.0).run()  # wrong: nothing below is computed
    assert any("Nothing below is computed" in w.value for w in at.warning)
    assert at.slider(key="lab_as_of").value == day  # the control is still there, unmoved
    at.number_input(key="lab_period").set_value(6.0).run()
    assert at.slider(key="lab_as_of").value == day
    assert len(table(at)) == active_then
    at.slider(key="lab_loss_pct").set_value(30.0).run()  # the next edit, as of the same day
    assert at.slider(key="lab_as_of").value == day
    assert len(table(at)) == active_then
    assert any(f"As of {day:%Y-%m-%d} 23:59" in c.value for c in at.caption)
    # and after visiting another page and coming back
    at.switch_page("views/overview.py").run()
    at.switch_page(PAGE).run()
    assert at.slider(key="lab_as_of").value == day
