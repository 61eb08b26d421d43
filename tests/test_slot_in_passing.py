"""A chart slot is keyed only when the statement is about it (issue 35): NW-1005's "Patient
prefers afternoon appointments" was a pending review of "Patient wants written instructions
handed over after every visit" (slot.single-valued on the visit time: a visit named in passing),
and that one a review of "Patient needs large-print handouts because of poor eyesight"
(slot.same-value: large print read as the same written format). A clinician pairs neither."""

from __future__ import annotations

import pytest

from memory_core.facts import decide_texts, keys_of

VISIT_TIME = "slot:visit time"


@pytest.mark.parametrize(
    "text",
    [
        "Patient wants written instructions handed over after every visit",
        "Patient is asked to bring the glucose meter to every visit",
        "Patient likes short visits with one clear goal",
    ],
)
def test_a_visit_named_in_passing_is_no_visit_time(text: str) -> None:
    assert VISIT_TIME not in keys_of(text, "preference")


@pytest.mark.parametrize(
    "text",
    [
        "Patient prefers afternoon appointments",
        "Patient now prefers morning visits",
        "Patient can only come in after work",
        "Patient prefers appointments at 3pm",
    ],
)
def test_a_preferred_time_still_keys_the_visit_time(text: str) -> None:
    assert VISIT_TIME in keys_of(text, "preference")


def test_the_time_of_day_still_replaces_the_older_time() -> None:
    d = decide_texts(
        "Patient prefers morning appointments",
        "Patient now prefers afternoon appointments",
        "preference",
    )
    assert d.supersedes and d.rule == "slot.single-valued"


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Patient wants written instructions handed over after every visit",
            "Patient prefers afternoon appointments",
        ),
        (
            "Patient needs large-print handouts because of poor eyesight",
            "Patient wants written instructions handed over after every visit",
        ),
    ],
)
def test_nw1005s_preferences_are_no_review(older: str, newer: str) -> None:
    assert not decide_texts(older, newer, "preference").supersedes
