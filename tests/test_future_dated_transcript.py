"""Issue 34, finding 7 (dates): a transcript dated in the future ("Date: 2031-05-02") that says
"yesterday" was dated the day before today without a word. A relative date ("yesterday",
"last week", "two weeks ago", "in June") in a document dated after today cannot be placed in
time: the proposal carrying it is refused with the reason; what the transcript says without a
relative date is still proposed, and a transcript dated today is read as before."""

from __future__ import annotations

from datetime import UTC, datetime

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.ingest.dates import dates_in, future_session_date

TODAY = datetime(2026, 6, 1, 12, tzinfo=UTC)

BODY = """Clinician: How have you been?
Patient: I started taking metformin 500 mg yesterday.
Clinician: Any allergies?
Patient: I'm allergic to penicillin, it gives me hives.
Patient: My weight was 82 kg last week.
"""


def _engine() -> mc.MemoryEngine:
    return mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=lambda: TODAY)


def test_relative_dates_in_a_future_dated_transcript_are_refused_with_the_reason() -> None:
    proposals = _engine().extract_memories("NW-1", "Date: 2031-05-02\n" + BODY)
    assert [(p.memory_type, p.content) for p in proposals] == [
        ("allergy", "Patient has a penicillin allergy causing hives")
    ]  # before: "Patient started metformin 500mg on 2026-05-31", weight "in the week of ..."
    reasons = [r.reason for r in proposals.rejected]
    assert len(reasons) == 2
    for phrase, reason in zip(("yesterday", "last week"), reasons, strict=True):
        assert "2031-05-02" in reason and "after today (2026-06-01)" in reason
        assert f"'{phrase}'" in reason


def test_a_transcript_dated_today_or_before_reads_relative_dates_as_before() -> None:
    for header in ("Date: 2026-06-01\n", "Date: 2026-05-20\n", ""):
        proposals = _engine().extract_memories("NW-1", header + BODY)
        assert len(proposals) == 3 and proposals.rejected == []


def test_which_dates_are_relative_and_which_header_is_in_the_future() -> None:
    said = "on 2026-05-02, yesterday, 12 October 2025, in June, two weeks ago, on Friday"
    relative = {d.phrase: d.relative for d in dates_in(said, TODAY)}
    assert [r for r in relative.values()] == [False, True, False, True, True, True]
    assert future_session_date("Date: 2031-05-02", TODAY) == datetime(2031, 5, 2, tzinfo=UTC)
    assert future_session_date("Date: 2 May 2031", TODAY) == datetime(2031, 5, 2, tzinfo=UTC)
    assert future_session_date("Date: 2026-06-02", TODAY) is None  # a time zone's tomorrow
    assert future_session_date("Date: 2026-05-02", TODAY) is None
    assert future_session_date("Date: yesterday", TODAY) is None
