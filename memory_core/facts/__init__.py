"""Clinical facts with keys: each statement read once into what it is about, and a decision
table that says what a newer statement does to an older one -- the product's judgement of
supersession (domain.md, "Clinical facts and keys"; docs/verdicts.md).

- :mod:`.lexicon`: the one clinical vocabulary, as data files, loaded and validated on first
  use;
- :mod:`.reader` (text), :mod:`.coded` (a coded record's codes and status): a statement's
  :class:`~.model.ClinicalFacts`;
- :mod:`.rules`: the ordered table of named rules (:func:`decide`).

Pure: no I/O beyond reading the package's own data files, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .coded import STATUSES, read_coded
from .lexicon import lexicon as _lexicon
from .model import (
    SUPERSEDING,
    ClinicalFacts,
    Context,
    Decision,
    Fact,
    KeyKind,
    Origin,
    Role,
    State,
    Strength,
    Verdict,
)
from .reader import read
from .rules import decide, index_keys, reach_keys, table_rows
from .text import mentioned

__all__ = [
    "STATUSES",
    "SUPERSEDING",
    "ClinicalFacts",
    "Context",
    "Decision",
    "Fact",
    "KeyKind",
    "Origin",
    "Role",
    "State",
    "Strength",
    "Verdict",
    "current",
    "decide",
    "decide_texts",
    "from_json",
    "index_keys",
    "judgement",
    "keys_of",
    "mentioned",
    "reach_keys",
    "read",
    "read_coded",
    "share_key",
    "table_rows",
    "to_json",
]


def to_json(facts: ClinicalFacts) -> str:
    """The stored form of a memory's facts (compact JSON, sorted keys)."""
    return json.dumps(facts.to_dict(), sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=65_536)
def from_json(stored: str) -> ClinicalFacts:
    return ClinicalFacts.from_dict(json.loads(stored))


def current(
    stored: str | Mapping[str, Any] | None, content: str, memory_type: str
) -> ClinicalFacts:
    """A memory's facts as of this lexicon: the stored ones when they were read with it; else
    read again -- from the text, or for a coded record from its codes and status (the value and
    date its code facts carry are kept); a model's reading is kept as the model gave it. A
    memory stored before facts existed (None) is read from its text."""
    if stored is None or stored == "":
        return read(content, memory_type)
    facts = from_json(stored) if isinstance(stored, str) else ClinicalFacts.from_dict(stored)
    if facts.lexicon == _lexicon().version or facts.origin is Origin.MODEL:
        return facts
    if facts.origin is Origin.CODED:
        first = next((f for f in facts.facts if f.key in facts.codes), None)
        value = _value_of(first)
        return read_coded(
            content,
            memory_type,
            facts.codes,
            facts.status,
            value,
            first.date if first else "",
        )
    return read(content, memory_type)


def _value_of(f: Fact | None) -> str:
    if f is None or not f.value:
        return ""
    name, _eq, value = f.value.partition("=")
    return value if name in ("value", "result") else ""


def decide_texts(older: str, newer: str, memory_type: str) -> Decision:
    """The decision on two statements read from their texts (the offline reader)."""
    return decide(read(older, memory_type), read(newer, memory_type), memory_type, older, newer)


def share_key(older: str, newer: str, memory_type: str) -> bool:
    """The two statements are about a key in common (a candidate pair whatever their cosine)."""
    a = index_keys(read(older, memory_type), memory_type)
    return bool(a & index_keys(read(newer, memory_type), memory_type))


def judgement(older: str, newer: str, memory_type: str) -> tuple[bool, bool]:
    """``(supersedes, strong)`` of the decision on two statements read from their texts: the
    engine's judgement as a plain function (the benchmark's reference borrows it)."""
    d = decide_texts(older, newer, memory_type)
    return d.supersedes, d.strong


def keys_of(content: str, memory_type: str) -> frozenset[str]:
    """The keys a statement is found by as a candidate (read from its text)."""
    return index_keys(read(content, memory_type), memory_type)
