"""A drug name misspelt by one edit ("rampiril", "metformen") is read as the drug (issue 31,
item 2: misspellings matched against the dictionary with rapidfuzz), but never an English word
("aspiring" is no aspirin), a word the clinical lexicon knows ("creatinine"), a chemical that is
no medicine ("mucins"), a brand, or a capitalised word (a name)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import memory_core as mc
from memory_core import drugs
from memory_core.facts import decide_texts


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("dr put my rampiril up to 5mg last wk", "ramipril"),  # two letters swapped
        ("still on metformen 500 twice a day", "metformin"),  # one letter changed
        ("taking amlodipin every morning", "amlodipine"),  # one letter missing
        ("the lisinoprill is making me cough", "lisinopril"),  # one letter extra
    ],
)
def test_a_drug_misspelt_by_one_edit_is_the_drug(text: str, name: str) -> None:
    assert [(d.name, d.origin) for d in drugs.resolve(text)] == [(name, "misspelt")]


@pytest.mark.parametrize(
    "text",
    [
        "I am aspiring to walk a mile a day",  # English: never aspirin
        "creatinine was fine",  # a lab test the lexicon knows
        "her mucins were raised",  # a chemical class, no medicine
        "Rampiril said hello",  # capitalised: may be a name
        "ramapryl",  # two edits from ramipril
    ],
)
def test_what_is_no_misspelt_drug(text: str) -> None:
    assert not [d for d in drugs.resolve(text) if d.origin == "misspelt"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Fuorsemide changed to 40mg IV BD - fluid overloaded", "furosemide"),
        ("Plan: Metfromin 500 mg twice daily", "metformin"),
        ("BP high. Amlodopine 10mg OD started", "amlodipine"),
    ],
)
def test_a_capitalised_misspelling_that_opens_a_sentence_with_its_dose_is_the_drug(
    text: str, name: str
) -> None:
    """A capital at a sentence's start says nothing of a name where a dose follows in its
    clause, as it does on a chart's medication line."""
    assert [(d.name, d.origin) for d in drugs.resolve(text)] == [(name, "misspelt")]


@pytest.mark.parametrize(
    "text",
    [
        "Rampiril said hello",  # no dose: may be a name
        "Saw Rampiril, 5 mg tablets discussed",  # inside a sentence: a name
        "Rampiril. 5 mg",  # the dose in another sentence
    ],
)
def test_a_capitalised_word_without_its_dose_is_no_misspelt_drug(text: str) -> None:
    assert not [d for d in drugs.resolve(text) if d.origin == "misspelt"]


def test_a_misspelt_drug_changes_the_patients_order() -> None:
    d = decide_texts("Ramipril 2.5 mg once daily", "dr put my rampiril up to 5mg", "medication")
    assert d.supersedes and d.rule == "drug.dose-change"


def test_a_transcripts_misspelt_drug_is_proposed_keyed_to_the_drug() -> None:
    """The proposal keeps the patient's spelling; its fact is the drug's."""
    now = datetime(2026, 11, 20, 18, tzinfo=UTC)
    eng = mc.open_engine("sqlite:///:memory:", "hashing", clock=lambda: now)
    try:
        got = eng.extract_memories(
            "P1", "Date: 2026-11-20\nPatient: im still on metformen 500 twice a day", now=now
        )
    finally:
        eng.store.close()
    (p,) = [p for p in got if p.memory_type == "medication"]
    assert "drug:metformin" in {f.key for f in mc.facts.read(p.content, "medication").facts}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("stopped the sertra line myself a fortnight ago", "sertraline"),  # split, joined exact
        ("the war farin is 5 mg now", "warfarin"),
        ("on met formin 1000 twice a day", "metformin"),  # split and one letter changed
        ("the amlo dipine makes my ankles swell", "amlodipine"),
    ],
)
def test_a_name_dictation_split_into_words_is_the_drug(text: str, name: str) -> None:
    assert [d.name for d in drugs.resolve(text)] == [name]


@pytest.mark.parametrize(
    "text",
    [
        "can you give me that one please",  # English words one edit from methadone
        "I met for dinner with the men from work",  # English words one edit from metformin
    ],
)
def test_english_words_that_join_near_a_name_are_no_drug(text: str) -> None:
    assert not drugs.resolve(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Thyroxine 100 mcg daily", "levothyroxine"),
        ("GTN spray as needed for chest pain", "glyceryl trinitrate"),
        ("Movicol one sachet daily", "macrogol"),
        ("OxyNorm 5 mg for breakthrough pain", "oxycodone"),
        ("adrenaline auto-injector prescribed", "epinephrine"),
    ],
)
def test_uk_names_the_dictionary_lacks_are_read(text: str, name: str) -> None:
    assert name in [d.name for d in drugs.resolve(text)]
