"""What every rule module shares: the item a rule yields, and how a statement's words are
written (a clause's words before a drug, "a" or "an", the third person, a phrase's bare words)."""

from __future__ import annotations

import re
from typing import Any

from ..dialogue import Sentence

_CLAUSE = re.compile(r"[,;]|\b(?:and|but|so|then|when|while|after|because|as)\b")
_FIRST_TO_THIRD = (
    (r"\bme\b", "them"),
    (r"\bmy\b", "their"),
    (r"\bour\b", "their"),
    (r"\bi\b", "they"),
    (r"\bmine\b", "theirs"),
)


def _words_besides(s: Sentence, start: int, end: int) -> set[str]:
    """The words of ``s`` outside characters ``start``..``end`` (a date, a drug), lower case."""
    return set(re.findall(r"[a-z0-9']+", (s.text[:start] + " " + s.text[end:]).lower()))


def _window(low: str, start: int, size: int = 40) -> str:
    """The words before ``start`` in its clause ("they stopped it, and I'm on X": "I'm on")."""
    w = low[max(0, start - size) : start]
    cuts = list(_CLAUSE.finditer(w))
    return w[cuts[-1].end() :] if cuts else w


def _a(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def _third_person(text: str) -> str:
    for pat, rep in _FIRST_TO_THIRD:
        text = re.sub(pat, rep, text, flags=re.I)
    return text


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,;:-—")
    return re.sub(r"^(the|my|your|his|her|their|a|an|some)\s+", "", text, flags=re.I)


#: type, content, confidence, date, evidence span (and, where the date is said elsewhere, the
#: span of the words that say it)
Item = tuple[Any, ...]
