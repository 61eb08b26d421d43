"""Numbers said in words, as a transcript of speech writes them ("ninety-four kilos", "seven
point nine", "one forty-eight over eighty-six"), read as digits -- in place, so that every
offset into the transcript still points at the words as said (the evidence shown is the
original; the reader reads "94 kilos"). Pure; the number words are words.json's
``number_words``.

What is turned into digits: a number of more than one word, or a tens word ("sixty-four",
"a hundred and twelve", "six point eight", "sixty"), or a word below twenty with a unit of mass
or a percent after it ("ten milligrams", "nine stone") or said after "from five milligrams to"
("... to ten"). Otherwise a number word below twenty alone stays a
word ("two tablets four times a day", "the blue one", "nine is low": the readers know these
words already, and a count said so is no reading), as do "half", "once", "twice" and a part of
an ordinal ("the twenty-fifth": the dates reader's). A number "and a half" is the number
and .5 ("eighty-seven and a half kilos": 87.5). Blood pressure said as it is spoken --
"one forty-eight over eighty-six" -- is 148 over 86 (a hundreds digit, then a tens number,
before "over")."""

from __future__ import annotations

import re
from functools import cache

from .lexicon import lexicon


@cache
def _words() -> tuple[dict[str, int], dict[str, int], re.Pattern[str]]:
    """The unit words (zero to nineteen), the tens words and the pattern of a number said. A
    "one" right after "hundred" is the thing ("the fifteen hundred one": the 1,500 tablet), not
    a units digit; "a hundred and one" is 101."""
    said = lexicon().number_words
    units = {w: int(v) for w, v in said.items() if " " not in w and v == int(v) and v < 20}
    units = {w: v for w, v in units.items() if w not in ("once", "twice")}
    tens = {w: int(v) for w, v in said.items() if v == int(v) and 20 <= v < 100 and v % 10 == 0}
    u = "|".join(sorted(units, key=len, reverse=True))
    t = "|".join(tens)
    tens_part = rf"(?:{t})(?:[- ](?:{u}))?"
    below_100 = rf"(?:{tens_part}|{u})"
    pattern = re.compile(
        rf"\b(?P<bp>(?:{u})[ ](?:{tens_part})(?=\s+over\b))"
        rf"|\b(?P<n>(?:(?:a|{u})[- ]hundred(?:[ ](?:and[ ]{below_100}|(?!one\b){below_100}))?"
        rf"|{below_100})"
        rf"(?:[ ](?:point|comma)(?:[ ](?:{u}))+)?)\b(?![-'’]\w)",  # "twenty-fifth": an ordinal
        re.IGNORECASE,
    )
    return units, tens, pattern


def _value(words: str) -> str | None:
    """The digits of a number said in words, or None where it stays words."""
    units, tens, _p = _words()
    # "eight comma four": a decimal comma said aloud, as a point
    whole, _, frac = (
        words.lower().replace("-", " ").replace(" comma ", " point ").partition(" point ")
    )
    parts = whole.split()
    if len(parts) == 1 and not frac and parts[0] not in tens:
        return None  # a word alone ("two tablets", "the blue one"): said as words
    current = 0
    for w in parts:
        if w == "a":
            current = 1
        elif w == "hundred":
            current = (current or 1) * 100
        elif w != "and":
            current += tens.get(w, units.get(w, 0))
    if frac:
        digits = "".join(str(units[w]) for w in frac.split() if units.get(w, 10) < 10)
        return f"{current}.{digits}" if digits else None
    return str(current)


def _bp(words: str) -> str | None:
    """ "one forty-eight" before "over": 148."""
    units, _tens, _p = _words()
    head, _, rest = words.lower().replace("-", " ").partition(" ")
    rest_value = _value(rest)
    if not 1 <= units.get(head, 0) <= 2 or rest_value is None:
        return None
    return str(units[head] * 100 + int(rest_value))


#: what a number word below twenty is an amount of when a unit of these follows it ("ten
#: milligrams", "eight percent", "nine stone"): never a count of tablets, nor "one in" (inches)
MEASURED = frozenset({"mass", "fraction"})
#: the words of :data:`MEASURED` units a text must hold for a number word alone to be read
_MEASURE_WORDS = ("gram", "kilo", "percent", "stone", "mg", "mcg", "kg", "%")
#: a unit said once for two numbers: "from five milligrams to ten"
_FROM_UNIT_TO = re.compile(r"\bfrom\s+[\w.]+\s+([a-z%]+)\s+to\s+$", re.IGNORECASE)


def _measured_at(text: str, pos: int) -> bool:
    """A unit of :data:`MEASURED` is written at ``text[pos:]``."""
    from .units import unit_after  # the units table needs the lexicon; read only when asked

    found = unit_after(lexicon(), text, pos)
    return found is not None and found[0].dimension in MEASURED


def spoken_numbers(text: str) -> str:
    """``text`` with its numbers said in words written as digits, each right-aligned in the
    place of its words (padded before with spaces): the same length, every offset kept."""
    units, tens, pattern = _words()
    low = text.lower()
    if not any(w in low for w in (*tens, "hundred", "point", "comma")) and not (
        any(w in low for w in units) and any(w in low for w in _MEASURE_WORDS)
    ):
        # every number it reads has a tens word, "hundred", "point" or a unit
        return _and_a_half(text) if " a half" in low else text

    def sub(m: re.Match[str]) -> str:
        said = m.group(0)
        got = _bp(said) if m.group("bp") else _value(said)
        after_point = text[max(0, m.start() - 6) : m.start()].lower().rstrip().endswith("point")
        if got is None and said.lower() in units and not after_point:  # "ten milligrams"
            before = _FROM_UNIT_TO.search(text, max(0, m.start() - 40), m.start())
            with_unit = _measured_at(text, m.end()) or (
                before is not None and _measured_at(f" {before.group(1)}", 0)
            )
            got = str(units[said.lower()]) if with_unit else None
        if got is None or len(got) > len(said):
            return said
        return got.rjust(len(said))

    out = pattern.sub(sub, text)
    return _and_a_half(out) if " a half" in low else out


@cache
def _half_pattern() -> re.Pattern[str]:
    units, _tens, _p = _words()
    u = "|".join(sorted(units, key=len, reverse=True))
    return re.compile(rf"\b(?:(\d+)|({u}))\s+and\s+a\s+half\b", re.IGNORECASE)


def _and_a_half(text: str) -> str:
    """ "87 and a half kilos", "one and a half litres": the number and a half, as digits in the
    place of the words ("87.5", "1.5")."""
    units, _tens, _p = _words()

    def sub(m: re.Match[str]) -> str:
        whole = int(m.group(1)) if m.group(1) else units[m.group(2).lower()]
        return f"{whole}.5".rjust(len(m.group(0)))

    return _half_pattern().sub(sub, text)


@cache
def _alone() -> re.Pattern[str]:
    units, _tens, _p = _words()
    u = "|".join(sorted(units, key=len, reverse=True))
    return re.compile(
        rf"\b(?:is|was|were|are|came back at|came back as)\s+(?P<w>{u})"
        r"(?=\s*(?:[,.;:!?)]|\s[-\u2013\u2014]|$|which\b|so\b|and\b|but\b))",
        re.IGNORECASE,
    )


def values_said_alone(text: str) -> str:
    """``text`` with a number word below twenty said as a value -- after "is" or "was", before
    a pause ("your free T4 is eleven, which ...", "the ACR, was eight.") -- written as digits,
    in place. For a reader of results beside what they measure: alone, "she was nine." is an
    age as much as a value."""
    units, _tens, _p = _words()

    def sub(m: re.Match[str]) -> str:
        word = m.group("w")
        digits = str(units[word.lower()]).rjust(len(word))
        return m.group(0)[: m.start("w") - m.start()] + digits

    return _alone().sub(sub, text)
