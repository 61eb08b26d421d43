"""The one text normaliser (memory_core.normalize, issue 30): what every reader sees of a text
-- invisible characters removed, compatibility and look-alike forms folded -- while the
original text is what is stored and shown."""

from __future__ import annotations

import pytest

import memory_core as mc
from memory_core.facts import read
from memory_core.normalize import fold, fold_with_map, source_span


@pytest.mark.parametrize(
    ("text", "read_as"),
    [
        ("co\u00addeine", "codeine"),  # soft hyphen
        ("code\u200bine", "codeine"),  # zero-width space
        ("met\u200dfor\u2060min\ufeff", "metformin"),  # joiner, word joiner, BOM
        ("\u202eenicillin\u202c", "enicillin"),  # bidi override and pop
        ("\u0405ystem:", "System:"),  # Cyrillic capital dze
        ("\u0430ll\u0435rgy", "allergy"),  # Cyrillic a and e
        ("\uff33\uff39\uff33\uff34\uff25\uff2d\uff1a", "SYSTEM:"),  # fullwidth
        ("\U0001d412\U0001d418\U0001d412\U0001d413\U0001d404\U0001d40c:", "SYSTEM:"),  # math bold
        ("1\uff0e Patient", "1. Patient"),  # fullwidth full stop
        ("5 \u00b5g, 80 \u00b5mol/L", "5 ug, 80 umol/L"),  # micro sign
        ("M\u00e9ni\u00e8re", "Meniere"),  # accents
        ("\u22125 kg", "-5 kg"),  # minus sign
        ("1\u00bd tablets, \u00bd tablet", "1.5 tablets, 0.5 tablet"),  # vulgar fractions
        ("eGFR 60 mL/min/1.73m\u00b2", "eGFR 60 mL/min/1.73m2"),
        ("\u03b2-blocker", "\u03b2-blocker"),  # a Greek letter used as itself stays
        ("plain ASCII stays as it is", "plain ASCII stays as it is"),
    ],
)
def test_what_a_reader_sees(text: str, read_as: str) -> None:
    assert fold(text) == read_as


def test_every_folded_character_points_back_to_the_character_it_was_read_from() -> None:
    text = "Allergic to co\u00addeine \u3392 1\u00bd"  # ㎒ folds to two letters, ½ to ".5"
    folded, origin = fold_with_map(text)
    assert len(origin) == len(folded) + 1 and origin[-1] == len(text)
    start = folded.index("codeine")
    a, b = source_span(origin, start, start + len("codeine"))
    assert text[a:b] == "co\u00addeine"
    start = folded.index("MHz")
    assert text[slice(*source_span(origin, start, start + 3))] == "\u3392"


def test_the_reader_reads_through_the_normaliser() -> None:
    """'I'm allergic to co\\u00addeine (or code\\u200bine), it gives me hives' is a codeine
    allergy (issue 30: invisible characters)."""
    facts = read("I'm allergic to co\u00addeine (or code\u200bine), it gives me hives", "allergy")
    assert "allergen:codeine" in facts.keys


def test_a_memory_with_invisible_characters_keeps_its_text_and_is_keyed(
    engine: mc.MemoryEngine,
) -> None:
    text = "I'm allergic to co\u00addeine (or code\u200bine), it gives me hives"
    res = engine.add_memory("NW-1", text, "allergy")
    assert res.memory.content == text  # stored as written
    assert "allergen:codeine" in res.memory.facts.keys
    # and a later statement about codeine finds it by its key
    later = "Codeine allergy delabelled after challenge"
    preview = engine.preview_supersessions("NW-1", later, "allergy")
    assert [p.memory.id for p in preview] == [res.memory.id]
