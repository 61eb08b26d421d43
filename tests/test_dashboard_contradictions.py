"""Contradictions page (AppTest on the demo store): review actions change the store and the
cards, and the threshold tuner flags more pairs as the threshold drops."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import memory_core as mc
from memory_core.labels import decision_words, type_label

PAGE = "views/contradictions.py"
PID = "NW-1001"


@pytest.fixture
def eng(demo_store: str) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(demo_store)
    yield e
    e.store.close()


def button_keys(at: Any, prefix: str) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.startswith(prefix)]


def flagged(at: Any) -> pd.DataFrame:
    """The flagged-pairs table (key "flagged_pairs"; found by its columns)."""
    for df in at.dataframe:
        if {"older", "newer", "similarity"} <= set(df.value.columns):
            return df.value
    raise AssertionError("flagged pairs table not shown")


def test_queue_shows_every_pending_supersession(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app(PAGE)
    assert not at.exception
    pending = eng.supersessions(PID, state="pending")
    assert pending  # the demo data has an allergy re-test and lisinopril cough reactions
    assert sorted(button_keys(at, "confirm_")) == sorted(f"confirm_{s.id}" for s in pending)
    assert sorted(button_keys(at, "reject_")) == sorted(f"reject_{s.id}" for s in pending)
    # content is shown as plain text, never markdown
    texts = {t.value for t in at.text}
    for s in pending:
        assert eng.get(s.old_id).content in texts
        assert eng.get(s.new_id).content in texts


def test_confirm_moves_a_card_from_queue_to_history(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app(PAGE)
    at.text_input(key="reviewer").input("dr.okafor").run()
    queue = button_keys(at, "confirm_")
    sid = queue[0].removeprefix("confirm_")

    at.button(key=f"confirm_{sid}").click().run()
    assert not at.exception
    assert len(button_keys(at, "confirm_")) == len(queue) - 1
    assert f"confirm_{sid}" not in button_keys(at, "confirm_")
    assert f"undo_{sid}" in button_keys(at, "undo_")  # now in the history, undoable
    sup = eng.store.get_supersession(sid)
    assert sup.state is mc.SupersessionState.CONFIRMED
    assert sup.decided_by == "dr.okafor"
    assert eng.get(sup.old_id).status is mc.Status.SUPERSEDED


def test_reject_keeps_both_memories_active(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app(PAGE)
    sid = button_keys(at, "reject_")[0].removeprefix("reject_")
    at.button(key=f"reject_{sid}").click().run()
    assert not at.exception
    sup = eng.store.get_supersession(sid)
    assert sup.state is mc.SupersessionState.REJECTED
    assert eng.get(sup.old_id).status is mc.Status.ACTIVE
    assert f"reject_{sid}" not in button_keys(at, "reject_")


def test_undo_on_an_auto_supersession_restores_the_older_memory(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app(PAGE)
    shown = {k.removeprefix("undo_") for k in button_keys(at, "undo_")}
    sups = eng.supersessions(PID)
    held = [s.old_id for s in sups if s.state.value in ("auto", "confirmed")]
    sup = next(
        s for s in sups if s.id in shown and s.state.value == "auto" and held.count(s.old_id) == 1
    )
    assert eng.get(sup.old_id).status is mc.Status.SUPERSEDED

    at.button(key=f"undo_{sup.id}").click().run()
    assert not at.exception
    assert eng.get(sup.old_id).status is mc.Status.ACTIVE
    assert eng.store.get_supersession(sup.id).state is mc.SupersessionState.UNDONE
    assert f"undo_{sup.id}" not in button_keys(at, "undo_")


def test_lower_threshold_flags_more_pairs(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app(PAGE)
    slider = at.slider(key="contra_threshold")  # the engine's default (0.20 for MiniLM)
    assert slider.value == pytest.approx(round(eng.contradiction_threshold, 2))
    before = flagged(at)

    at.slider(key="contra_threshold").set_value(0.10).run()
    assert not at.exception
    after = flagged(at)
    assert len(after) > len(before)
    assert (after["similarity"] >= 0.10).all()
    expected = [p for p in eng.similarity_pairs(PID) if p[2] >= 0.10]
    assert len(after) == len(expected)
    # the histogram counts every pair and moves its threshold line with the slider
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [shape["x0"] for shape in spec["layout"]["shapes"]] == [0.10]
    y = spec["data"][0]["y"]
    counts = y if isinstance(y, list) else np.frombuffer(base64.b64decode(y["bdata"]), y["dtype"])
    assert sum(int(c) for c in counts) == len(eng.similarity_pairs(PID))  # int8 bins overflow


def test_scan_reports_what_it_found(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app(PAGE)
    n_before = len(eng.supersessions(PID))
    at.button(key="scan").click().run()
    assert not at.exception
    found = len(eng.supersessions(PID)) - n_before
    messages = [s.value for s in at.success]
    assert any(
        (f"found {found} new" in m) if found else ("no new candidate pairs" in m) for m in messages
    )
    # the queue reflects the store
    assert len(button_keys(at, "confirm_")) == len(eng.supersessions(PID, state="pending"))


def test_signed_in_viewer_cannot_review(demo_store: str, eng: mc.MemoryEngine) -> None:
    """With [auth] configured, an account not on the reviewer list sees the queue and history
    but every review action disabled."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback"}
    at.secrets["access"] = {"reviewers": ["reviewer@northwind.example"]}
    at.user = {"is_logged_in": True, "email": "viewer@northwind.example", "name": "Viewer"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    keys = button_keys(at, "confirm_") + button_keys(at, "reject_") + button_keys(at, "undo_")
    assert keys and all(at.button(key=k).disabled for k in keys)
    assert at.button(key="scan").disabled
    assert any("Read-only" in c.value for c in at.caption)
    assert not [i for i in at.text_input if i.key == "reviewer"]  # actor = signed-in identity


def _same(caption: Any, mem: mc.Memory, at: Any) -> bool:
    """The caption under ``mem``'s text on a card (the text element right before it)."""
    texts = [t.value for t in at.text]
    return (
        mem.content in texts
        and f"written {mem.created_at:%d %b %Y}" in caption.value
        and caption.value.startswith(type_label(mem.memory_type))
    )


def test_undo_of_a_confirmed_review_reopens_it(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """Issue 16: Confirm then Undo of the penicillin re-test puts the pair back in the queue
    (4 again, not 3); the card and every view read the store's data version, so the older
    memory reads superseded right after the confirmation and active after the undo."""
    at = app(PAGE)
    pending = eng.supersessions(PID, state="pending")
    sup = next(s for s in pending if "penicillin" in eng.get(s.old_id).content)
    old = eng.get(sup.old_id)

    def card_text(at: Any) -> str:
        return " ".join(c.value for c in at.caption)

    at.button(key=f"confirm_{sup.id}").click().run()
    assert not at.exception
    assert len(button_keys(at, "confirm_")) == len(pending) - 1
    assert eng.get(old.id).status is mc.Status.SUPERSEDED
    # the confirmed card's older side reads superseded at once (no stale "active" from a
    # cache keyed on the minute)
    side = next(c.value for c in at.caption if "written" in c.value and _same(c, old, at))
    assert side.endswith("Replaced by a newer memory"), side
    at.button(key=f"undo_{sup.id}").click().run()
    assert not at.exception
    assert any("back in the review queue" in s.value for s in at.success)
    assert eng.store.get_supersession(sup.id).state is mc.SupersessionState.PENDING
    assert sorted(button_keys(at, "confirm_")) == sorted(f"confirm_{s.id}" for s in pending)
    assert eng.get(old.id).status is mc.Status.ACTIVE
    assert "again: reviewer undid the earlier decision on" in card_text(at)
    # the worklist counts it again
    at.switch_page("views/worklist.py").run()
    assert {m.label: m.value for m in at.metric}["Review"] == str(
        len(eng.supersessions(state="pending"))
    )  # every patient's reviews


@pytest.mark.parametrize("bad", [0, -1, 501])
def test_history_limit_outside_its_range_says_so(app: Callable[..., Any], bad: float) -> None:
    at = app(PAGE)
    at.number_input(key="history_limit").set_value(bad).run()
    assert not at.exception
    assert any("Enter a" in e.value for e in at.error)


# --- issue 26: undo where the decision was taken; flags decided where the worklist opens ---------
def _tab_default(at: Any) -> int:
    """The index of the tab the page opens on."""

    def walk(node: Any) -> int | None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "WhichOneof"):
            try:
                if proto.WhichOneof("type") == "tab_container":
                    return int(proto.tab_container.default_tab_index)
            except ValueError:
                pass
        kids = getattr(node, "children", None)
        for child in kids.values() if isinstance(kids, dict) else []:
            found = walk(child)
            if found is not None:
                return found
        return None

    found = walk(at._tree)
    assert found is not None
    return found


def test_keep_both_can_be_undone_from_history(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """Issue 26: a rejected ("Keep both") card had no Undo. Now its History card has one, and
    it puts the pair back in the review queue (audited under the reviewer); nothing else
    changes."""
    at = app(PAGE)
    pending = eng.supersessions(PID, state="pending")
    sup = next(s for s in pending if "penicillin" in eng.get(s.old_id).content)
    at.button(key=f"reject_{sup.id}").click().run()
    assert not at.exception
    assert eng.store.get_supersession(sup.id).state is mc.SupersessionState.REJECTED
    assert f"confirm_{sup.id}" not in button_keys(at, "confirm_")
    undo = at.button(key=f"undo_{sup.id}")
    assert "Reopen the review" in (undo.help or "") and not undo.disabled
    undo.click().run()
    assert not at.exception
    assert any("review is open again" in s.value for s in at.success)
    again = eng.store.get_supersession(sup.id)
    assert (again.state, again.decided_by) == (mc.SupersessionState.PENDING, "reviewer")
    assert eng.get(sup.old_id).status is mc.Status.ACTIVE
    assert sorted(button_keys(at, "confirm_")) == sorted(f"confirm_{s.id}" for s in pending)
    assert any("again: reviewer undid the earlier decision" in c.value for c in at.caption)
    (row,) = eng.audit_log(entity_id=sup.id, action="undo_supersession")
    assert row.actor == "reviewer" and (row.before or {}).get("state") == "rejected"


def test_every_history_decision_has_its_undo(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app(PAGE)
    at.number_input(key="history_limit").set_value(500).run()
    history = [s for s in eng.supersessions(PID) if s.state.value in ("auto", "confirmed")]
    assert history
    assert set(button_keys(at, "undo_")) == {f"undo_{s.id}" for s in history}


def test_flags_are_decided_on_their_tab_and_the_link_opens_it(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """The worklist's link for a possibly-out-of-date memory (``?review=flags``) opens this
    page on the flags tab, where each flag is a card: Keep it (flag cleared) or Out of date
    (archived; Restore undoes it), both audited under the reviewer."""
    from tests.test_dashboard_prompt import flagged_memories

    ids = flagged_memories(eng)
    at = app(PAGE)
    assert _tab_default(at) == 0
    at.query_params["review"] = "flags"
    at.run()
    assert not at.exception
    assert _tab_default(at) == 1
    assert [t.label for t in at.tabs][1].endswith(f"Possibly out of date ({len(ids)})")
    texts = [t.value for t in at.text]
    for mid in ids:
        assert eng.get(mid).content in texts
    assert any("It names metformin" in c.value and "500mg" in c.value for c in at.caption)
    keep = sorted(button_keys(at, "keep_flagged_"))
    assert len(keep) == 2
    at.button(key=keep[0]).click().run()
    assert not at.exception
    left = {f.memory_id for f in eng.stale_flags(PID)}
    assert len(left) == 1 and left < set(ids)
    (kept,) = eng.audit_log(action="keep_flagged")
    assert kept.actor == "reviewer" and kept.entity_id not in left
    (gone,) = left
    (archive,) = button_keys(at, "confirm_flagged_")
    at.button(key=archive).click().run()
    assert not at.exception
    assert eng.stale_flags(PID) == []
    assert eng.get(gone).status is mc.Status.ARCHIVED
    assert [a.actor for a in eng.audit_log(action="confirm_flagged")] == ["reviewer"]


def test_each_card_says_why_in_plain_words(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    """The decision's rule and evidence in words (labels.decision_words) on every card."""
    at = app(PAGE)
    captions = [c.value for c in at.caption]
    pending = eng.supersessions(PID, state="pending")
    with_words = [s for s in pending if getattr(s, "evidence", "")]
    assert with_words
    for s in with_words:
        assert decision_words(getattr(s, "rule", ""), s.evidence) in captions
