"""A medicine named by its class, not its name ("PPI stopped - deprescribed", "steroids down to
10 mg a day", "the water tablet was stopped on Monday", "blood thinner reduced to 2.5 mg"):
what such a statement asserts about the patient's drugs of that class (pure).

The classes and their members are the question vocabulary's (``questions.json``
``drug_classes``, :mod:`memory_core.vocabulary`): one vocabulary for asking about a class and for
reading a change said of it. What the statement does with the class is read by the reader
itself: the class's words are read as one of its members (the stand-in), so every step that
reads a named drug -- the assertion step (a question, a plan, another person, a condition), the
change words, a dose -- reads the class the same way. A change read so is never more than weak
evidence: the statement does not say which drug, and a reviewer decides
(``drug.class-named``, :mod:`memory_core.facts.rules`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import drugs, vocabulary
from .model import Fact, KeyKind, Role, State
from .reader import read

#: The changes of a class that may make an order of one of its drugs out of date (a class
#: started names no order that ended).
CHANGES = frozenset({State.STOPPED, State.CHANGED})


@dataclass(frozen=True, slots=True)
class ClassChange:
    """A change a statement asserts of a drug class: ``words`` as the statement writes them
    ("PPI"), the class's ``name``, the ``keys`` of its drugs (``drug:<name>``) and the
    stand-in's ``fact`` (its state and value as the reader read them)."""

    words: str
    name: str
    keys: frozenset[str]
    fact: Fact
    #: the words are a clipped name ("levo"), not a class's (:func:`clipped_changes`)
    clipped: bool = False

    @property
    def state(self) -> State | None:
        return self.fact.state


@lru_cache(maxsize=65_536)
def class_changes(text: str, memory_type: str) -> tuple[ClassChange, ...]:
    """The asserted stops and changes ``text`` says of a drug class it names without naming
    one of its drugs ("PPI stopped", not "PPI (omeprazole) stopped": the drug itself is read as
    usual)."""
    named = {f.key for f in read(text, memory_type).facts if f.kind is KeyKind.DRUG}
    out = []
    for words, concept in vocabulary.find_concepts(text):
        if concept.group != "drug_classes" or not concept.keys or concept.keys & named:
            continue
        got = _read_as_member(text, memory_type, words, concept.keys)
        if got is not None:
            out.append(ClassChange(got[0], concept.name, concept.keys, got[1]))
    return tuple(out)


#: A word as a clipped drug name may write it, and what may stand before a word that opens a
#: sentence (a capitalised word inside one may be a name: "Levon").
_WORD = re.compile(r"[A-Za-z]+")
_OPENS = re.compile(r"(?:^|[.!?:;\n(\-]|[\-–—]\s)\s*$")


@lru_cache(maxsize=65_536)
def clipped_changes(text: str, memory_type: str) -> tuple[ClassChange, ...]:
    """The asserted stops, changes and doses ``text`` says of a drug it names by the first
    letters of its name ("levo increased to 0.125 mg", "Pred weaned down to 15 mg", "amlo now 5
    mg"): the clip may begin several medicines' names (:func:`memory_core.drugs.clipped`), so
    it is read as a class of them -- the first by length read in its place, as a class's
    stand-in is -- and the patient's own list says which: the table decides each of the
    patient's orders of them with the clip read as that drug's name (``drug.clipped-name``,
    weak). A clip of a drug the statement also names in full is that drug, read as usual."""
    named = {f.key for f in read(text, memory_type).facts if f.kind is KeyKind.DRUG}
    out = []
    for m in _WORD.finditer(text):
        word = m.group(0)
        if not word.islower() and not (word[1:].islower() and _OPENS.search(text[: m.start()])):
            continue  # "Levon" inside a sentence: a name
        keys = frozenset(f"drug:{n}" for n in drugs.clipped(word))
        if not keys or keys & named:
            continue
        stand_in = min(keys, key=lambda k: (len(k), k))
        got = _read_as_member(text, memory_type, word, keys, stand_in, dose_said=True)
        if got is not None:
            what = f'the drugs whose names begin "{word.lower()}"'
            out.append(ClassChange(got[0], what, keys, got[1], clipped=True))
    return tuple(out)


def _read_as_member(
    text: str,
    memory_type: str,
    words: str,
    keys: frozenset[str],
    stand_in: str = "",
    dose_said: bool = False,
) -> tuple[str, Fact] | None:
    """The class's words read as its first member (by name), or as ``stand_in``: the words as
    written and that member's fact, when the statement asserts it stopped or changed, of the
    patient, as its subject -- or, with ``dose_said``, asserts a dose or a timing of it ("amlo
    now 5 mg", "levo incr to 100mcg": a clip names one drug, whose older order the table
    compares it with)."""
    found = _words_pattern(words).search(text)
    if found is None:
        return None
    stand_in = stand_in or min(keys)
    swapped = text[: found.start()] + stand_in.partition(":")[2] + text[found.end() :]
    fact = read(swapped, memory_type).get(stand_in)
    if fact is None or fact.role is not Role.SUBJECT or not fact.asserted:
        return None
    said = fact.state in CHANGES or (dose_said and fact.state is State.ACTIVE and bool(fact.value))
    return (found.group(0), fact) if said else None


@lru_cache(maxsize=1024)
def _words_pattern(words: str) -> re.Pattern[str]:
    """The class's words as the text may write them: any case, any run of spaces or hyphens
    between them, a plural 's' after the last ("steroids", "water-tablets")."""
    body = r"[\s\-]+".join(re.escape(w) for w in words.split())
    return re.compile(rf"\b{body}(?:e?s)?\b", re.IGNORECASE)
