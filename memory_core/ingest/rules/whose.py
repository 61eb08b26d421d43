"""Whom a sentence is of: the relative a clinician names or turns to, a name said to open a
sentence, the patient's own said outright, a sentence that goes on about the person before, a
relative's age."""

from __future__ import annotations

import re
from functools import cache

from ...facts.lexicon import lexicon
from ..statements import cues

#: a name the clinician opens a sentence with: whom they speak to
_VOCATIVE = re.compile(r"^(?:(?:and|so|now|right|okay|ok),?\s+)?([A-Z][a-z]{2,}),\s")
#: the patient's own, said outright ("I'm on it too", "you're also on", "I take")
_OWN_SAID = re.compile(
    r"\b(i'm on|i am on|i take|i've been taking|i use|you're on|you are on|you take|you're "
    r"taking|(?:i'm|you're) also on|too|as well)\b"
)
#: a clinician turning to the relative who came with the patient, about their own health
_TO_RELATIVE = re.compile(
    r"\b(your own|you yourself|and how are you|how about you|what about you|and you,|"
    r"for yourself)\b"
)


#: a sentence that opens with its verb, no subject ("Smoked sixty a day.", "Died at 70."): it
#: goes on about whoever the sentence before was about
_SUBJECTLESS = re.compile(
    r"^\W*(?:(?:and|but|also|then)\s+)?(?:smoked|drank|died|passed|had|was|took|used|worked|"
    r"lived|never|always|still)\b",
    re.I,
)
#: a relative's age said after their illness ("He was fifty-two.", "She was only 60")
_AGE_SAID = re.compile(
    r"^\W*(?:he|she)\s+(?:was|'d been|had been)\s+(?:only\s+|just\s+)?(?:aged?\s+)?"
    r"(\d{1,3}|[a-z]+(?:[- ][a-z]+)?)(?:\s+years?\s+old)?\W*$",
    re.I,
)


def _relatives_age(text: str) -> int | None:
    """The age a sentence that says only a relative's age gives ("He was fifty-two."), in
    figures; None for any other sentence."""
    m = _AGE_SAID.match(text)
    if m is None:
        return None
    said = m.group(1).lower()
    if said.isdigit():
        return int(said)
    words = lexicon().number_words
    parts = re.split(r"[- ]", said)
    if not all(p in words for p in parts):
        return None
    age = int(sum(words[p] for p in parts))
    return age if 1 <= age <= 120 else None


#: a third person, as the subject or object of a question ("Is she on a blood thinner too?")
_THIRD = re.compile(r"\b(?:she|he|her|him|they|them)\b")


@cache
def _your_relative() -> re.Pattern[str]:
    """A relative of the patient's a clinician's question names ("your mum's", "your husband"),
    of ``dialogue.json``'s relatives."""
    people = "|".join(sorted(map(re.escape, cues().relatives), key=len, reverse=True))
    return re.compile(rf"\byour ({people})\b", re.I)
