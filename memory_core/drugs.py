"""The drug dictionary: drug names in free text resolved to canonical generic names.

Backed by ``drug-named-entity-recognition`` (its dictionary ships in the wheel; nothing is
downloaded), loaded lazily once per process under a lock, plus :data:`CLASS_SUPPLEMENT`, a small
list of our own for the drug classes and non-drug allergens that allergy records name and the
dictionary lacks (sulfa, NSAIDs, opioids, contrast, latex, ...). Pure: text in, mentions out.

Tokens are the whitespace-separated words of the text with surrounding punctuation stripped
("metformin;" -> "metformin"); a mention's ``start``/``end`` are character offsets into the
text given, so callers can highlight or cut the span.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# Drug classes and allergens the dictionary does not resolve, by their lower-case spellings
# (one or two words) -> the canonical name used here. Named as our own supplement, not the
# dictionary's data.
CLASS_SUPPLEMENT: dict[str, str] = {
    "sulfa": "sulfonamides",
    "sulpha": "sulfonamides",
    "sulfa drugs": "sulfonamides",
    "sulfonamide": "sulfonamides",
    "sulfonamides": "sulfonamides",
    "sulphonamides": "sulfonamides",
    "nsaid": "nsaids",
    "nsaids": "nsaids",
    "anti-inflammatories": "nsaids",
    "opioid": "opioids",
    "opioids": "opioids",
    "opiates": "opioids",
    "opiate": "opioids",
    "contrast": "iodinated contrast",
    "contrast dye": "iodinated contrast",
    "iodinated contrast": "iodinated contrast",
    "iodine contrast": "iodinated contrast",
    "latex": "latex",
    "penicillin": "penicillins",
    "penicillins": "penicillins",
    "cephalosporin": "cephalosporins",
    "cephalosporins": "cephalosporins",
    "ace inhibitor": "ace inhibitors",
    "ace inhibitors": "ace inhibitors",
    "statin": "statins",
    "statins": "statins",
    "sglt2 inhibitor": "sglt2 inhibitors",
    "sglt2 inhibitors": "sglt2 inhibitors",
}

# Common words the dictionary maps to a drug that, alone, name none in a clinical sentence.
# Lab analytes are listed too: "LDL cholesterol" is a dictionary entry, but in a sentence it is
# a test result.
NOT_DRUGS = frozenset(
    {
        "vitamin",
        "iron",
        "water",
        "oxygen",
        "salt",
        "sugar",
        "alcohol",
        "glucose",
        "cholesterol",
        "ldl cholesterol",
        "hdl cholesterol",
        "potassium",
        "sodium",
        "calcium",
        "creatinine",
        "albumin",
    }
)

_STRIP = "\"'`.,;:!?()[]{}<>*_~/\\|“”‘’—–-"
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class DrugMention:
    """One drug named in a text: ``name`` is the canonical (generic) name, lower case;
    ``text`` the words as written, at ``text[start:end]`` of the text given; ``origin`` is
    ``"dictionary"`` or ``"supplement"``."""

    name: str
    start: int
    end: int
    text: str
    origin: str


_lock = threading.Lock()
_finder: Callable[..., list[tuple[dict[str, Any], int, int]]] | None = None


def _load() -> Callable[..., list[tuple[dict[str, Any], int, int]]]:
    """The dictionary's ``find_drugs``, imported (about 2 s, once per process) on first use."""
    global _finder
    if _finder is None:
        with _lock:
            if _finder is None:
                from drug_named_entity_recognition import find_drugs

                _finder = find_drugs
    return _finder


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Words with surrounding punctuation stripped, and their character spans."""
    out: list[tuple[str, int, int]] = []
    for m in _WORD.finditer(text):
        raw = m.group(0)
        core = raw.strip(_STRIP)
        if not core:
            continue
        lead = len(raw) - len(raw.lstrip(_STRIP))
        start = m.start() + lead
        out.append((core, start, start + len(core)))
    return out


def resolve(text: str) -> list[DrugMention]:
    """Every drug named in ``text``, in order of appearance (the supplement first where both
    would claim a word)."""
    return list(_resolve(text))


@lru_cache(maxsize=8192)
def _resolve(text: str) -> tuple[DrugMention, ...]:
    toks = _tokens(text)
    if not toks:
        return ()
    found: list[DrugMention] = []
    taken: set[int] = set()
    lowered = [t[0].lower() for t in toks]
    i = 0
    while i < len(toks):  # the supplement: two-word spellings before one-word ones
        for n in (2, 1):
            key = " ".join(lowered[i : i + n])
            if i + n <= len(toks) and key in CLASS_SUPPLEMENT:
                start, end = toks[i][1], toks[i + n - 1][2]
                found.append(
                    DrugMention(CLASS_SUPPLEMENT[key], start, end, text[start:end], "supplement")
                )
                taken.update(range(i, i + n))
                i += n
                break
        else:
            i += 1
    words = [t[0] for t in toks]
    for info, first, last in _load()(words, is_ignore_case=True):
        span = range(first, last)
        if taken.intersection(span) or " ".join(lowered[first:last]) in NOT_DRUGS:
            continue
        name = str(info.get("name") or words[first]).lower()
        start, end = toks[first][1], toks[last - 1][2]
        found.append(DrugMention(name, start, end, text[start:end], "dictionary"))
        taken.update(span)
    found.sort(key=lambda d: d.start)
    return tuple(found)


def canonical_names(text: str) -> frozenset[str]:
    """The canonical names of the drugs in ``text``."""
    return frozenset(d.name for d in _resolve(text))


def warm_up() -> None:
    """Load the dictionary now (e.g. at server start) instead of on the first lookup."""
    _load()
