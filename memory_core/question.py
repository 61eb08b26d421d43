"""One analysed question, read once like a statement: every stage of retrieval and of the
section reads this object, never the question's text again.

:func:`analyse` reads a question into a :class:`Question`:

- its **words** (lexical tokens) and their **word forms** (:func:`memory_core.lexical.form`,
  the Snowball stems the keyword index holds for every memory): "Who does the patient live
  with?" searches ``live``, which "Patient lives with a spouse" holds too;
- its **clinical keys**, read by the facts reader (:func:`memory_core.facts.read`: "HbA1c" is
  ``loinc:4548-4``, co-codamol ``drug:acetaminophen/codeine`` and its ingredients), plus the keys
  of its concepts;
- its **concepts** (:mod:`memory_core.vocabulary`: a drug class, a body system, a chart slot
  of the social history) and what they add to the keyword query (**expansions**, with a brand
  name's generic name);
- the **kinds** of fact it asks for ("what medications": a list line), the **drugs** it names
  with their ingredients and allergy classes, the **slots** it names;
- its **targets**: each thing it names -- a slot, a drug or a result it names, a body system, a
  drug class -- whose best memory gets a place in the section (:mod:`memory_core.engine.section`).

Pure: text in, a frozen value out, kept per text (:func:`analyse` is cached).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from . import vocabulary
from .facts.model import Fact, KeyKind
from .lexical import MAX_QUERY_TERMS, as_written, forms, stopwords, tokens

#: How many analysed questions are kept (an agent asks many; a question is a few hundred bytes).
CACHE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Target:
    """A thing the question names, whose best memory gets a place: ``name`` (for an
    explanation); a memory answers it when it is about one of ``keys``, is about a drug of
    ``members`` (a drug class), or -- for a slot the facts reader does not key -- holds one of
    the word ``forms`` the concept's records use."""

    name: str
    keys: frozenset[str] = frozenset()
    members: frozenset[str] = frozenset()
    forms: frozenset[str] = frozenset()

    def about_drug(self, name: str) -> bool:
        return _about(self.members, name)


def _about(members: frozenset[str], name: str) -> bool:
    return bool(members) and (name in members or any(w in members for w in name.split()))


@dataclass(frozen=True, slots=True)
class Question:
    """What a question says and names (see the module docstring). ``terms``: the word forms
    searched for its own words (at most 32, function words left out); ``groups``: the keyword
    query (each searched form alone at weight 1, then each expansion); ``members``: the drugs
    of the drug classes it names."""

    text: str = ""
    words: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    concepts: tuple[vocabulary.Concept, ...] = ()
    expansions: tuple[vocabulary.Expansion, ...] = ()
    keys: frozenset[str] = frozenset()
    kinds: tuple[vocabulary.Kind, ...] = ()
    drugs: frozenset[str] = frozenset()
    members: frozenset[str] = frozenset()
    slots: frozenset[str] = frozenset()
    targets: tuple[Target, ...] = ()
    groups: tuple[tuple[float, tuple[str, ...]], ...] = field(default=(), repr=False)

    def about_drug(self, name: str) -> bool:
        """The question names this drug (a canonical name) or a class it belongs to, by the
        lexicon's drug classes ("the diabetes medication": metformin, insulin glargine)."""
        return _about(self.members, name)

    def asks_for(self, memory_type: str) -> vocabulary.Kind | None:
        """The first kind the question asks for that ``memory_type`` answers."""
        return next((k for k in self.kinds if memory_type in k.types), None)

    def asks_for_ended(self, memory_type: str) -> bool:
        return any(k.ended and memory_type in k.types for k in self.kinds)

    def words_in(
        self, content: str, analysed: tuple[Sequence[str], Sequence[str]] | None = None
    ) -> tuple[str, ...]:
        """How ``content`` matches the question's own words: "live → lives" (the question's
        word, then the record's where they differ only in form), one per searched form.
        ``analysed``: the content's tokens and word forms, when the caller has them."""
        if not self.terms:
            return ()
        asked = {f: w for w, f in zip(self.words, self.forms, strict=True) if f in self.terms}
        out: dict[str, str] = {}
        words, word_forms = analysed or _analysed(content)
        for w, f in zip(words, word_forms, strict=True):
            q = asked.get(f)
            if q is not None and f not in out:
                out[f] = q if q == w else f"{q} → {w}"
        return tuple(out[f] for f in self.terms if f in out)

    def via(self, content: str, held: frozenset[str] | None = None) -> tuple[str, ...]:
        """How ``content`` matches the expansions: "kidney function → egfr", one per expansion
        (its first term the content holds). ``held``: the content's word forms, when the caller
        has them."""
        if not self.expansions:
            return ()
        if held is None:
            held = frozenset(_analysed(content)[1])
        out: list[str] = []
        for e in self.expansions:
            term = next((t for t in e.terms if t in held), None)
            if term is not None:
                out.append(e.label(term))
        return tuple(out)


EMPTY = Question()


def _analysed(content: str) -> tuple[list[str], list[str]]:
    words = tokens(content)
    return words, forms(words)


@lru_cache(maxsize=CACHE_SIZE)
def analyse(text: str) -> Question:
    """The analysed question (see the module docstring); read once per text."""
    from .facts import read

    words = tuple(tokens(text))
    word_forms = tuple(forms(words))
    stop = stopwords()
    kept = [f for w, f in zip(words, word_forms, strict=True) if len(w) > 1 and w not in stop]
    terms = tuple(dict.fromkeys(kept))[:MAX_QUERY_TERMS]
    literal = frozenset(terms)
    found = vocabulary.concepts_in(words, word_forms)
    facts = read(text)
    drug_facts = [f for f in facts.facts if f.kind is KeyKind.DRUG]
    mentions = [(f.text, f.name) for f in drug_facts if f.text]
    expansions = (
        *vocabulary.expansions(found, literal),
        *vocabulary.brand_generics(_brands(mentions), literal),
    )
    keys = set(facts.keys)
    members: set[str] = set()
    for _via, c in found:
        keys |= c.keys
        members |= c.members
    return Question(
        text=text,
        words=words,
        forms=word_forms,
        terms=terms,
        concepts=tuple(c for _, c in found),
        expansions=expansions,
        keys=frozenset(keys),
        kinds=vocabulary.kinds_in(words),
        drugs=vocabulary.drug_family([f.name for f in drug_facts]),
        members=frozenset(members),
        slots=frozenset(k for k in keys if KeyKind.of(k) is KeyKind.SLOT),
        targets=_targets(found, facts.facts),
        groups=tuple((1.0, (t,)) for t in terms) + tuple((e.weight, e.terms) for e in expansions),
    )


def _brands(mentions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The drug mentions written otherwise than their generic name (a brand: "Ozempic")."""
    out: list[tuple[str, str]] = []
    for text, name in mentions:
        if "/" in name or name in [m[1] for m in out]:
            continue
        if set(forms(tokens(text))) != set(forms(tokens(name))):
            out.append((text, name))
    return out


def _targets(
    found: Sequence[tuple[str, vocabulary.Concept]], facts: Sequence[Fact]
) -> tuple[Target, ...]:
    """What the question names, in order: each concept (a slot, a body system, a drug class),
    then each thing the facts reader reads in it that no concept's words already cover (a drug,
    a result, a condition, by its words as written)."""
    out: list[Target] = []
    covered: set[str] = set()
    for via, c in found:
        covered.update(via.split())
        slot_forms = frozenset(c.forms) if c.group == "slots" else frozenset()
        out.append(Target(c.name, c.keys, c.members, slot_forms))
    by_text: dict[str, set[str]] = {}
    for f in facts:
        if not f.text or set(tokens(f.text)) <= covered:
            continue
        by_text.setdefault(f.text, set()).add(f.key)
    out.extend(Target(text, frozenset(keys)) for text, keys in by_text.items())
    return tuple(out)


# --- how a question and a match are said ------------------------------------------------------
#: How an explanation names a concept's group.
GROUP_NAMES = {
    "drug_classes": "drug class",
    "body_systems": "body system",
    "slots": "social history and preferences",
}


def key_label(key: str) -> str:
    """A clinical key as a reader says it: a result by its analyte's name ("HbA1c"), a drug, a
    condition, an allergen or a slot by its name ("metformin", "household")."""
    from .facts.lexicon import lexicon

    kind, _, name = key.partition(":")
    if kind == "loinc":
        analyte = lexicon().analyte_for_code(name)
        return analyte.display if analyte is not None else key
    return name if name else key


def described(q: Question) -> tuple[tuple[str, str], ...]:
    """How the question was read, as (what, said) pairs for a page: the words searched (their
    word forms), the concepts it names, the clinical keys, the kinds it asks for."""
    out: list[tuple[str, str]] = []
    if q.terms:
        shown = {f: w for w, f in zip(q.words, q.forms, strict=True) if f in q.terms}
        out.append(("words", ", ".join(as_written(shown.get(t, t), q.text) for t in q.terms)))
    if q.concepts:
        named = (f"{c.name} ({GROUP_NAMES.get(c.group, c.group)})" for c in q.concepts)
        out.append(("concepts", "; ".join(named)))
    own = {k for c in q.concepts for k in c.keys}
    read = sorted({key_label(k) for k in q.keys - own})
    if read:
        out.append(("clinical keys", ", ".join(read)))
    if q.kinds:
        out.append(("asks for", ", ".join(k.name for k in q.kinds)))
    return tuple(out)
