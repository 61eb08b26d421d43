"""AppTest of the Memories page (views/memories.py) on the seeded demo store."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core.store import AuditQuery
from memory_core.values import Status

PAGE = "views/memories.py"
PID = "NW-1001"
AFTERNOON = "Patient now prefers afternoon appointments"
EVENING = "Patient now prefers evening appointments"


@pytest.fixture
def store(demo_store: str) -> Iterator[mc.MemoryStore]:
    """The same store the dashboard uses, read directly (no embedder needed)."""
    s = mc.open_store(demo_store)
    yield s
    s.close()


def _by_content(store: mc.MemoryStore, content: str) -> mc.Memory:
    return next(m for m in store.list_memories(PID) if m.content == content)


def _table(at: Any) -> Any:
    return at.dataframe[0].value


def test_table_shows_every_memory_with_its_numbers(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    at = app(PAGE)
    assert not at.exception
    df = _table(at)
    mems = store.list_memories(PID)
    assert len(df) == len(mems)
    assert set(df["id"]) == {m.id for m in mems}
    for col in ("content", "type", "status", "tier", "base importance", "current importance"):
        assert col in df.columns
    row = df.set_index("id").loc[_by_content(store, AFTERNOON).id]
    assert row["status"] == "Active" and row["type"] == "Preference"  # words, not codes
    assert row["base importance"] == _by_content(store, AFTERNOON).importance
    assert 1.0 <= row["current importance"] <= 10.0
    replaced = df["status"] == "Replaced by a newer memory"
    assert replaced.any() and (df.loc[replaced, "current importance"] == 1.0).all()  # floor


def test_type_filter_leaves_only_that_type(app: Callable[..., Any], store: mc.MemoryStore) -> None:
    at = app(PAGE)
    at.multiselect(key="filter_type").select("allergy").run()
    df = _table(at)
    assert len(df) == sum(m.memory_type == "allergy" for m in store.list_memories(PID)) > 0
    assert set(df["type"]) == {"Allergy"}
    # the action picker follows the filter
    assert all("· Allergy" in o for o in at.selectbox(key="action_memory").options)
    at.multiselect(key="filter_status").select("active").run()
    df = _table(at)
    assert set(df["type"]) == {"Allergy"} and set(df["status"]) == {"Active"}
    at.multiselect(key="filter_tier").select("short_term").run()
    assert not at.dataframe  # no short-term allergy: the empty state says what to do
    assert any("No memory matches" in i.value for i in at.info)


def test_search_narrows_rows(app: Callable[..., Any]) -> None:
    at = app(PAGE)
    total = len(_table(at))
    at.text_input(key="search").input("APPOINTMENT").run()
    df = _table(at)
    assert 0 < len(df) < total
    assert df["content"].str.lower().str.contains("appointment").all()
    assert {"Patient prefers morning appointments", AFTERNOON} <= set(df["content"])
    at.text_input(key="search").input("no memory says this").run()
    assert not at.dataframe
    assert any("No memory matches" in i.value for i in at.info)


def test_pin_toggle_flips_pinned_and_audits_the_reviewer(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    mem = _by_content(store, AFTERNOON)
    assert not mem.pinned
    at = app(PAGE)
    at.sidebar.text_input(key="reviewer").input("Dr. Rivera").run()
    at.selectbox(key="action_memory").set_value(mem.id).run()
    assert at.button(key="pin_toggle").label == "Pin"
    at.button(key="pin_toggle").click().run()
    assert not at.exception and not at.error
    assert store.get_memory(mem.id).pinned is True
    audit = store.list_audit(AuditQuery(entity_id=mem.id, action="pin"))
    assert [(a.actor, a.after["pinned"]) for a in audit] == [("Dr. Rivera", True)]
    assert at.button(key="pin_toggle").label == "Unpin"
    assert _table(at).set_index("id").loc[mem.id, "pinned"]
    at.button(key="pin_toggle").click().run()
    assert store.get_memory(mem.id).pinned is False


def test_archive_and_restore(app: Callable[..., Any], store: mc.MemoryStore) -> None:
    mem = _by_content(store, AFTERNOON)
    at = app(PAGE)
    at.selectbox(key="action_memory").set_value(mem.id).run()
    at.button(key="archive_toggle").click().run()
    assert store.get_memory(mem.id).status is Status.ARCHIVED
    assert _table(at).set_index("id").loc[mem.id, "status"] == "Archived"
    assert at.button(key="archive_toggle").label == "Restore"
    at.button(key="archive_toggle").click().run()
    assert store.get_memory(mem.id).status is Status.ACTIVE


def test_stale_importance_edit_shows_a_conflict(
    app: Callable[..., Any], store: mc.MemoryStore, demo_store: str
) -> None:
    mem = _by_content(store, AFTERNOON)
    at = app(PAGE)
    at.selectbox(key="action_memory").set_value(mem.id).run()
    assert at.number_input(key="edit_importance").value == mem.importance
    # someone else changes the memory after the page rendered
    other = mc.open_engine(demo_store)
    other.set_importance(mem.id, 3.0, by="someone-else")
    at.number_input(key="edit_importance").set_value(8.0)
    at.button(key="save_importance").click().run()
    assert not at.exception
    assert any("Someone else changed it" in e.value for e in at.error)
    assert store.get_memory(mem.id).importance == 3.0  # the other edit was not overwritten
    # after the re-render the page holds the new version: the same save now succeeds
    at.sidebar.text_input(key="reviewer").input("Dr. Okafor").run()
    at.number_input(key="edit_importance").set_value(8.0)
    at.button(key="save_importance").click().run()
    assert not at.error
    assert store.get_memory(mem.id).importance == 8.0
    last = other.audit_log(entity_id=mem.id, action="edit_importance")[0]
    assert (last.actor, last.before["importance"], last.after["importance"]) == (
        "Dr. Okafor",
        3.0,
        8.0,
    )
    other.store.close()


def test_add_form_previews_supersessions_then_saves(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    afternoon = _by_content(store, AFTERNOON)
    n_before = len(store.list_memories(PID))
    at = app(PAGE)
    at.sidebar.text_input(key="reviewer").input("Dr. Chen").run()
    at.text_area(key="new_content").input(EVENING)
    at.selectbox(key="new_type").select("preference")
    at.button(key="preview_add").click().run()
    assert not at.exception and not at.error
    texts = [t.value for t in at.text]
    assert AFTERNOON in texts  # the ACTIVE appointment preference would be superseded
    assert "Patient prefers morning appointments" not in texts  # already superseded
    assert any("would be replaced at once" in c.value for c in at.caption)
    assert len(store.list_memories(PID)) == n_before  # the preview wrote nothing

    at.button(key="save_new").click().run()
    assert not at.exception and not at.error
    new = _by_content(store, EVENING)
    assert (new.memory_type, new.source, new.importance) == ("preference", "dashboard", 6.0)
    assert store.get_memory(afternoon.id).status is Status.SUPERSEDED
    assert any("It concerns 1 older memory" in s.value for s in at.success)
    assert any(AFTERNOON in t.value and "replaced by it now" in t.value for t in at.text)
    add = store.list_audit(AuditQuery(entity_id=new.id, action="add"))
    assert [a.actor for a in add] == ["Dr. Chen"]
    assert at.text_area(key="new_content").value == ""  # ready for the next one
    assert EVENING in set(_table(at)["content"])


def test_add_preview_matches_what_saving_does_for_compatible_allergies(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    """A different drug's allergy is similar to the penicillin allergies but compatible: the
    preview promises no supersession, and saving agrees."""
    new_text = "Patient is allergic to amoxicillin, causing hives"
    at = app(PAGE)
    at.text_area(key="new_content").input(new_text)
    at.selectbox(key="new_type").select("allergy")
    at.button(key="preview_add").click().run()
    assert not at.exception
    assert not [c.value for c in at.caption if "· similarity" in c.value]  # no older one shown
    assert any("would be replaced" in c.value and "No older" in c.value for c in at.caption)
    at.button(key="save_new").click().run()
    new = _by_content(store, new_text)
    assert new.pinned  # allergies are pinned by default
    assert [s for s in store.list_supersessions(PID) if s.new_id == new.id] == []
    assert any("It replaced nothing" in s.value for s in at.success)


def test_empty_content_shows_the_validation_error(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    n_before = len(store.list_memories(PID))
    at = app(PAGE)
    at.button(key="save_new").click().run()
    assert not at.exception
    # in words, next to the field (issue 16), not a class name
    assert any("content is empty" in e.value for e in at.error)
    assert not at.success
    assert len(store.list_memories(PID)) == n_before


def test_signed_in_viewer_cannot_change_memories(demo_store: str, store: mc.MemoryStore) -> None:
    """With [auth] configured, an account not on the reviewer list sees every action disabled
    (the callbacks check again before writing)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback"}
    at.secrets["access"] = {"reviewers": ["reviewer@northwind.example"]}
    at.user = {"is_logged_in": True, "email": "viewer@northwind.example", "name": "Viewer"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    # the actor is the signed-in identity, not a typed name (the sidebar's only text field is
    # the patient search)
    assert [i.key for i in at.sidebar.text_input] == ["patient_search"]
    assert any("Read-only" in c.value for c in at.caption)
    for key in ("pin_toggle", "archive_toggle", "save_importance", "save_new"):
        assert at.button(key=key).disabled
    assert at.number_input(key="edit_importance").disabled
    # the table and filters still work for a viewer
    at.multiselect(key="filter_type").select("allergy").run()
    assert set(at.dataframe[0].value["type"]) == {"Allergy"}


# --- issue 16: forms validate before they act, in words next to the field -----------------------
@pytest.mark.parametrize("bad", [0.0, 11.0, -1.0])
def test_save_importance_refuses_a_value_outside_1_to_10(
    app: Callable[..., Any], store: mc.MemoryStore, bad: float
) -> None:
    mem = _by_content(store, AFTERNOON)
    at = app(PAGE)
    at.selectbox(key="action_memory").set_value(mem.id).run()
    at.number_input(key="edit_importance").set_value(bad).run()
    assert not at.exception
    assert any("from 1 to 10" in e.value and f"{bad:g}" in e.value for e in at.error)
    assert at.button(key="save_importance").disabled  # cannot act on a bad value
    assert not at.success  # nothing says "saved"
    assert store.get_memory(mem.id).importance == mem.importance
    assert store.list_audit(AuditQuery(entity_id=mem.id, action="edit_importance")) == []
    # a good value clears the message and saves, and the message names the stored value
    at.number_input(key="edit_importance").set_value(8.5).run()
    assert not at.error
    at.button(key="save_importance").click().run()
    assert store.get_memory(mem.id).importance == 8.5
    assert any("Base importance saved: 8.5" in s.value for s in at.success)


@pytest.mark.parametrize("bad", [0.0, 11.0])
def test_add_memory_with_a_bad_importance_says_so_and_writes_nothing(
    app: Callable[..., Any], store: mc.MemoryStore, bad: float
) -> None:
    n_before = len(store.list_memories(PID))
    at = app(PAGE)
    at.text_area(key="new_content").input(EVENING)
    at.selectbox(key="new_type").select("preference")
    at.number_input(key="new_importance").set_value(bad).run()
    assert any("from 1 to 10" in e.value for e in at.error)
    at.button(key="preview_add").click().run()
    assert not at.exception
    assert any("Nothing was checked" in e.value for e in at.error)
    at.button(key="save_new").click().run()
    assert any("Nothing was saved" in e.value for e in at.error)
    assert not at.success
    assert len(store.list_memories(PID)) == n_before
    # fixed: the message goes, and the memory is saved with that importance
    at.number_input(key="new_importance").set_value(6.5).run()
    assert not at.error
    at.button(key="save_new").click().run()
    assert _by_content(store, EVENING).importance == 6.5


def test_content_has_a_character_counter_and_a_limit(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    """Issue 26: a paste over 2,000 characters left the field empty at "0 / 2,000" and Save
    then said "content is empty". Now the text is kept whole, refused with a message saying
    so at once, and Save writes nothing and says why."""
    at = app(PAGE)
    at.text_area(key="new_content").input("Patient lives alone").run()
    assert any(c.value == "19 / 2,000 characters" for c in at.caption)
    long = "Patient walks every morning. " * 80  # 2,320 characters
    n_before = len(store.list_memories(PID))
    at.text_area(key="new_content").input(long).run()
    assert at.text_area(key="new_content").value == long  # not emptied, not cut
    assert any("Too long" in e.value and "2,320" in e.value for e in at.error)
    at.button(key="save_new").click().run()
    assert any("Too long" in e.value for e in at.error)
    assert any(e.value == "Nothing was saved: see the fields above." for e in at.error)
    assert not any("empty" in e.value for e in at.error)
    assert len(store.list_memories(PID)) == n_before


def test_an_empty_reviewer_name_is_an_error_not_reviewer(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    mem = _by_content(store, AFTERNOON)
    at = app(PAGE, reviewer="")
    at.selectbox(key="action_memory").set_value(mem.id).run()
    # the first paint says what the name is for, in grey (issue 35: no red on every page)
    assert not at.sidebar.error
    assert any("your name" in c.value.lower() for c in at.sidebar.caption)
    at.button(key="pin_toggle").click().run()
    assert any("enter your name" in e.value for e in at.error)
    assert store.get_memory(mem.id).pinned is False  # nothing written as "reviewer"
    for bad, words in (
        ("<b>Dr</b>", "markup"),
        ("x" * 121, "at most 120"),
        ("Dr\u202e Evil", "ordinary punctuation"),
    ):
        at.sidebar.text_input(key="reviewer").input(bad).run()
        assert any(words in e.value for e in at.sidebar.error), bad
        at.button(key="pin_toggle").click().run()
        assert store.get_memory(mem.id).pinned is False
    at.sidebar.text_input(key="reviewer").input("Dr. Rivera").run()
    assert not at.sidebar.error
    at.button(key="pin_toggle").click().run()
    assert store.get_memory(mem.id).pinned is True


def test_selecting_a_table_row_selects_the_memory_to_act_on(
    app: Callable[..., Any], store: mc.MemoryStore
) -> None:
    at = app(PAGE)
    df = _table(at)
    row = int(df.index[df["content"] == AFTERNOON][0])
    at.session_state["memories_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert at.selectbox(key="action_memory").value == df.iloc[row]["id"]
    assert AFTERNOON in [t.value for t in at.text]
    # the picker can still be changed while the row stays selected
    other = str(df.iloc[0 if row else 1]["id"])
    at.selectbox(key="action_memory").set_value(other).run()
    assert at.selectbox(key="action_memory").value == other


def test_type_lists_hide_general_assistant_types_in_a_clinical_store(
    app: Callable[..., Any],
) -> None:
    at = app(PAGE)
    options = at.selectbox(key="new_type").options
    assert "Adverse reaction" in options and "Allergy" in options
    for general in ("Intermediate step", "User preference", "Explicit instruction", "Task result"):
        assert general not in options


def test_save_that_would_replace_several_asks_for_each_first(
    app: Callable[..., Any], demo_store: str
) -> None:
    """Issue 26: "Save" of a new preference replaced two older preferences at once, with no way
    to keep one. Now the first Save writes nothing and lists each older memory with a choice;
    the second saves with those choices: the one kept stays active (its automatic replacement
    taken back at once, audited under the reviewer), the other is replaced."""
    pid, new_text = "NW-9001", "Patient now prefers afternoon appointments"
    eng = mc.open_engine(demo_store)
    now = eng.clock()
    morning, early = eng.add_memories(
        [
            {
                "patient_id": pid,
                "content": text,
                "memory_type": "preference",
                "created_at": now - timedelta(days=days),
            }
            for text, days in (
                ("Patient prefers morning appointments", 40),
                ("Patient prefers early morning appointments before 9", 20),
            )
        ],
        detect=False,  # two active memories the new one would both replace
    )
    hits = eng.preview_supersessions(pid, new_text, "preference")
    assert {h.memory.id for h in hits} == {morning.memory.id, early.memory.id}
    n_before = len(eng.list_memories(pid))
    at = app(PAGE, patient=pid)
    at.sidebar.text_input(key="reviewer").input("Dr. Chen").run()
    at.text_area(key="new_content").input(new_text)
    at.selectbox(key="new_type").select("preference")
    at.button(key="save_new").click().run()
    assert not at.exception
    assert len(eng.list_memories(pid)) == n_before  # nothing saved yet
    assert any("would replace 2 older ones" in e.value for e in at.error)
    choices = {r.key: r for r in at.radio if r.key and r.key.startswith("choice_")}
    assert set(choices) == {f"choice_{morning.memory.id}", f"choice_{early.memory.id}"}
    assert all(r.value == "replace" for r in choices.values())
    choices[f"choice_{early.memory.id}"].set_value("keep").run()
    at.button(key="save_new").click().run()
    assert not at.exception and not at.error
    new = next(m for m in eng.list_memories(pid) if m.content == new_text)
    assert eng.get(morning.memory.id).status is Status.SUPERSEDED
    assert eng.get(early.memory.id).status is Status.ACTIVE  # kept, as chosen
    texts = [t.value for t in at.text]
    assert any(t.startswith("“Patient prefers early morning") and "kept" in t for t in texts)
    undo = eng.audit_log(action="undo_supersession", patient_id=pid)
    assert [(a.actor, (a.before or {}).get("old_id")) for a in undo] == [
        ("Dr. Chen", early.memory.id)
    ]
    states = {s.old_id: s.state.value for s in eng.supersessions(pid) if s.new_id == new.id}
    assert states == {morning.memory.id: "auto", early.memory.id: "undone"}
    eng.store.close()
