"""A clinician's examination findings and the patient's symptoms said in a consultation are
observations (issue 31): the diabetic foot check (monofilament, sensation, foot pulses), joint
crepitus, thirst, sleeping propped on pillows. Sentences written for these tests, not taken from
any held-out transcript."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_core.ingest.rules import RuleExtractor


def _observations(lines: list[str]) -> list[str]:
    now = datetime(2026, 4, 14, 18, tzinfo=UTC)
    ext = RuleExtractor().extract("NW-1006", "Date: 2026-04-14\n" + "\n".join(lines), now=now)
    return [c.content.lower() for c in ext.candidates if c.memory_type == "observation"]


def test_the_foot_check_and_other_findings_are_observations() -> None:
    got = _observations(
        [
            "Dr Shah: There is reduced sensation to the monofilament at the right heel.",
            "Dr Shah: Both foot pulses are easy to feel.",
            "Dr Shah: The knee has some crepitus on bending.",
            "Patient: I've been really thirsty this week.",
            "Patient: I sleep on four pillows now.",
        ]
    )
    for word in ("monofilament", "pulses", "crepitus", "thirsty", "pillows"):
        assert any(word in c for c in got), (word, got)


def test_a_finding_asked_about_or_denied_is_no_observation() -> None:
    got = _observations(["Nurse: Any thirst?", "Patient: No, no thirst at all."])
    assert got == [], got
