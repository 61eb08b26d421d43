"""The dashboard's edges a reviewer meets in the first hour (issue 35, item 3): a limit out of
range refused with a message, the reviewer's name kept for the browser session (a reload
starts a new Streamlit session: the name rides in the URL, as the patient does), no red
"Enter your name" on the first paint, the FHIR Import button disabled until it can work, and
a safety memory left out by the places' limit reported as one left out by the token budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import memory_core as mc
from tests.conftest import APP

PROMPT = "views/prompt_preview.py"
INGEST = "views/ingest.py"


def test_max_memories_out_of_range_is_refused_with_a_message(app: Callable[..., Any]) -> None:
    at = app(PROMPT)
    for bad in (0, -2, 51):
        at.number_input(key="max_memories").set_value(bad).run()
        errors = " ".join(e.value for e in at.error)
        assert "from 1 to 50" in errors, (bad, errors)
        assert not at.code, "no section previewed for a refused limit"
    at.number_input(key="max_memories").set_value(5).run()
    assert not [e for e in at.error if "from 1 to 50" in e.value]
    assert at.code


def test_no_red_name_error_on_the_first_paint(app: Callable[..., Any]) -> None:
    at = app(reviewer="")
    assert not at.sidebar.error
    assert any("your name" in c.value.lower() for c in at.sidebar.caption)
    # once the reviewer clears a name they typed, the error is shown
    at.sidebar.text_input(key="reviewer").input("Dr. Rivera").run()
    at.sidebar.text_input(key="reviewer").input("").run()
    assert any("Enter your name" in e.value for e in at.sidebar.error)


def test_the_reviewers_name_is_kept_for_the_browser_session(
    app: Callable[..., Any], demo_store: str
) -> None:
    from streamlit.testing.v1 import AppTest

    at = app(reviewer="")
    at.sidebar.text_input(key="reviewer").input("Dr. Rivera").run()
    assert at.query_params["reviewer"] == "Dr. Rivera"
    # a reload is a new session with the same URL
    again = AppTest.from_file(str(APP), default_timeout=60)
    again.query_params["reviewer"] = "Dr. Rivera"
    again.run()
    assert again.sidebar.text_input(key="reviewer").value == "Dr. Rivera"
    assert not again.sidebar.error
    # a name that is no name is never taken from the URL
    bad = AppTest.from_file(str(APP), default_timeout=60)
    bad.query_params["reviewer"] = "<b>x</b>"
    bad.run()
    assert bad.sidebar.text_input(key="reviewer").value == ""


def test_fhir_import_is_disabled_until_it_can_work(app: Callable[..., Any]) -> None:
    at = app(INGEST, reviewer="")
    at.button(key="fhir_preview").click().run()
    assert at.button(key="fhir_apply").disabled
    assert any("your name" in c.value.lower() for c in at.caption)
    at.sidebar.text_input(key="reviewer").input("Dr. Rivera").run()
    at.button(key="fhir_preview").click().run()
    assert not at.button(key="fhir_apply").disabled


def test_a_safety_memory_left_out_by_the_places_is_reported(demo_store: str) -> None:
    eng = mc.open_engine(demo_store, "minilm")
    res = eng.build_context(
        "NW-1001", "How is the patient's blood sugar?", max_memories=1, record_access=False
    )
    left = [
        i
        for i in res.items
        if not i.included
        and i.scored.safety
        and not i.rule.startswith("not in the section: the same statement")
    ]
    assert left, "the demo patient has an adverse reaction the single place leaves out"
    assert set(res.safety_omitted) == set(left)
    assert all("reported to the reviewer" in i.rule for i in left)
