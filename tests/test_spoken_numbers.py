"""Numbers said in words in a transcript ("ninety-four kilos", "one forty-eight over
eighty-six") are read as digits, in place: every offset still points at the words as said."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core.facts.spoken import spoken_numbers
from memory_core.ingest.dates import dates_in
from memory_core.ingest.rules import RuleExtractor


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("Weight today is ninety-four kilos.", "94 kilos"),
        ("about one forty-eight over eighty-six", "148 over         86"),
        ("TSH six point eight", "6.8"),
        ("a hundred and twelve", "112"),
        ("seventy nine point five kilos", "79.5 kilos"),
        # "one" after "hundred" is "the ... one" (the pack or tablet), not a units digit
        ("I take glucosamine, the fifteen hundred one, for my knees", "1500 one,"),
        ("the five hundred one twice a day", "500 one twice"),
    ],
)
def test_a_number_said_in_words_is_read_as_its_digits(said: str, read: str) -> None:
    got = spoken_numbers(said)
    assert len(got) == len(said)  # in place: every offset kept
    assert read in got


@pytest.mark.parametrize(
    "said",
    [
        "I take the blue one, one puff at night.",  # "one" alone stays a word
        "No one told me.",
        "on the twenty-fifth of September",  # an ordinal: the dates reader's
        "half a tablet once a day, twice on Sundays",
        "two tablets four times a day",  # a word below twenty alone: said as words
    ],
)
def test_what_is_no_number_said_stays_as_said(said: str) -> None:
    assert spoken_numbers(said) == said


def test_a_value_said_in_words_is_proposed_with_the_words_as_its_evidence() -> None:
    transcript = (
        "Date: 2026-03-17\nDr Lee: Hello Mr Ward.\n"
        "Dr Lee: Let's weigh you. Weight today is ninety-four kilos.\n"
        "Dr Lee: And your blood pressure is one forty-eight over eighty-six.\n"
    )
    ext = RuleExtractor().extract("NW-9", transcript, now=datetime(2026, 3, 17, 18, tzinfo=UTC))
    got = {c.content: transcript[c.start : c.end] for c in ext.candidates}
    weight = next(c for c in got if "weight" in c and "94 kg" in c)
    assert "ninety-four kilos" in got[weight]  # the words as said
    assert any("148/86" in c for c in got), got


def test_a_statement_with_a_number_said_in_words_is_read_with_its_digits() -> None:
    """A note dictated or typed as said ("seventy-nine point five kilos", "twenty
    milligrams") is read as one with digits: a weight's value, the same dose restated."""
    from memory_core.facts import Verdict, decide_texts, read, values

    fact = read("Weighed in at seventy-nine point five kilos this morning.", "vital_sign").facts[0]
    assert values.parts(fact.value)["value"].startswith("79.5")
    d = decide_texts(
        "Fluoxetine 20 mg once daily",
        "Continues on fluoxetine twenty milligrams each morning.",
        "medication",
    )
    assert d.verdict is Verdict.DUPLICATE, d


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("add empagliflozin, ten milligrams once a day", "10 milligrams"),
        ("put the amlodipine up from five milligrams to ten.", "from    5 milligrams to  10."),
        ("from fifty micrograms to seventy-five", "50 micrograms to           75"),
        ("HbA1c is eight percent", "8 percent"),
        ("she weighs nine stone", "9 stone"),
        # a decimal comma said aloud, as Europe writes it ("8,4"): a point
        ("HbA1c eight comma four percent", "8.4 percent"),
        ("the cholesterol there was five comma two?", "5.2?"),
    ],
)
def test_a_number_word_said_with_its_unit_is_read_as_digits(said: str, read: str) -> None:
    """A number word below twenty stays a word alone, but not with a unit of mass or a percent
    after it ("ten milligrams"), nor after "from five milligrams to" (the unit said once)."""
    got = spoken_numbers(said)
    assert len(got) == len(said)
    assert read in got, got


@pytest.mark.parametrize(
    "said",
    [
        "one in the morning",
        "two tablets twice a day",
        "from two tablets to one",
        "nine is low",
        "metformin 500 mg comma twice daily",  # dictation's "comma" after no number word
    ],
)
def test_a_number_word_without_a_unit_of_measure_stays_a_word(said: str) -> None:
    assert spoken_numbers(said) == said


def test_a_results_value_said_as_one_word_after_is_or_was_is_read() -> None:
    """ "Your ferritin is nine, which is low", "the ACR, was eight.": a value said as one
    number word after "is" or "was" and before a pause is the result's (it was left a word);
    "one of the best" is no value."""
    now = datetime(2026, 7, 8, 18, tzinfo=UTC)
    t = (
        "Date: 2026-07-08\n"
        "Nurse: Your ferritin is nine, which is low. And the urine protein test, the ACR, "
        "was eight.\nNurse: Your HbA1c was one of the better ones this year."
    )
    got = [c.content for c in RuleExtractor().extract("P", t, now=now).candidates]
    assert "Patient's ferritin was 9" in got, got
    assert any(c.startswith("Patient's urine albumin/creatinine ratio was 8") for c in got), got
    assert not any("HbA1c was 1" in c for c in got), got


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("eighty-seven and a half kilos", "87.5 kilos"),
        ("fluids to one and a half litres a day", "fluids to 1.5 litres a day"),
        ("87 and a half kg", "87.5 kg"),
        ("take a half", "take a half"),
    ],
)
def test_a_number_and_a_half_is_the_number_and_point_five(said: str, read: str) -> None:
    """'Let's weigh you... eighty-seven and a half kilos': 87.5 kg (it had been read as 87,
    no unit); 'one and a half litres' is 1.5 (set o, dev half). In place: every offset kept;
    "2.5 years ago" is no "5 years ago"."""
    got = spoken_numbers(said)
    assert len(got) == len(said) and " ".join(got.split()) == read
    assert dates_in("2.5 years ago", datetime(2026, 5, 14, tzinfo=UTC)) == []
