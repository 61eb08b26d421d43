"""A hospital stay's days said once and referred to after (issue 31: dates relative to the
conversation): "you went home on Monday the 4th" ... "by the day you went home it was 5.1"."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_core.ingest.rules import RuleExtractor

PID = "NW-1004"


def _got(lines: list[str], session: str) -> list[tuple[str, str, str | None]]:
    now = datetime.fromisoformat(session).replace(hour=18, tzinfo=UTC)
    ext = RuleExtractor().extract(PID, f"Date: {session}\n" + "\n".join(lines), now=now)
    return [
        (c.memory_type, c.content, c.created_at.date().isoformat() if c.created_at else None)
        for c in ext.candidates
    ]


def test_a_result_said_of_the_day_of_discharge_takes_the_day_said_before() -> None:
    """ "... and you went home Monday the 4th" -- "By the day you went home it had come down
    to 5.1": the 5.1 is of the 4th (it had been given the call's date)."""
    got = _got(
        [
            "Nurse: So you came in on Tuesday the 28th with the fluid on your lungs, and you "
            "went home Monday the 4th. How are you feeling?",
            "Patient: Much better.",
            "Nurse: The potassium went up to 5.9 while you were in. By the day you went home it "
            "had come down to 5.1.",
        ],
        "2026-05-06",
    )
    labs = {c: d for m, c, d in got if m == "lab_result" and "5.1" in c}
    assert list(labs.values()) == ["2026-05-04"], got


def test_a_change_made_on_the_day_of_discharge_takes_the_day_said_before() -> None:
    """ "you ... came home last Friday" -- "they lowered it on the day you went home": the new
    dose is of that Friday."""
    got = _got(
        [
            "Pharmacist: So you were in from Monday the 9th and came home last Friday, is that "
            "right?",
            "Patient: Yes.",
            "Pharmacist: Your amlodipine has been reduced from 10 milligrams to 5 milligrams. "
            "They lowered it on the day you went home.",
        ],
        "2026-03-18",
    )
    meds = [(c, d) for m, c, d in got if m == "medication" and "amlodipine" in c.lower()]
    assert meds and all(d == "2026-03-13" for _c, d in meds), got


def test_since_or_before_the_stay_and_a_stay_never_dated_say_nothing() -> None:
    """ "since he got home", "before you came in": a period, not the day; "when I came home"
    where no stay was dated is no stay's day."""
    got = _got(
        [
            "Nurse: You went home on Thursday the 10th.",
            "Nurse: Your weight before you came in was 82 kilos.",
            "Son: He's been more breathless since he got home.",
        ],
        "2026-09-14",
    )
    assert all(d is None for m, c, d in got if m in ("vital_sign", "observation")), got
    got = _got(["Patient: I took my apixaban late when I came home, about eleven."], "2026-10-06")
    assert all(d is None for _m, _c, d in got), got
