"""A small clinical vocabulary for the keyword half of retrieval: the words a clinician asks
with, mapped to the words a record is written with.

A clinician asks "is the kidney function getting worse?" and means the eGFR, creatinine and
albumin-to-creatinine results; asks about "the diabetes medication" and means metformin, an
insulin, an SGLT2 inhibitor or a GLP-1 agonist. BM25 sees literal words only, so a query's
*concept* words (:data:`CONCEPTS`) add the terms a record uses for them to the keyword query,
each concept as one extra query term at :data:`EXPANSION_WEIGHT` of a literal word (a memory
matches a concept through its best-scoring term, never once per term). A brand name in the
query (Ozempic, Glucophage) adds its generic name through :mod:`memory_core.drugs` at
:data:`SYNONYM_WEIGHT`. Expansion only adds: the query's own words are searched as before, so
a memory with the exact word beats one that matches through an expansion.

The groups are data in the clinical lexicon (``memory_core/data/lexicon/questions.json``, one
place with every other phrase the product reads) and name their source (a drug class as the WHO
ATC classification and the BNF group it; a body system by the laboratory tests of its standard
panel), not the demo's sentences. Limits: the words are matched as tokens (no stemming, so
plural spellings are listed), only the query is expanded (a record that writes a brand name is
not found by its generic name), and the lists cover cardiometabolic primary care, not all of
medicine.

Pure: text in, terms out (the drug dictionary is read lazily by :mod:`memory_core.drugs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from . import drugs
from .lexical import query_terms, stopwords, tokens

#: A concept's weight in the keyword query, as a share of one literal query word.
EXPANSION_WEIGHT = 0.5
#: A brand name's generic name (the same drug): a literal word's weight.
SYNONYM_WEIGHT = 1.0
#: The longest concept phrase, in words.
MAX_PHRASE_WORDS = 3


@dataclass(frozen=True, slots=True)
class Concept:
    """``name``: how an explanation names it; ``phrases``: how a query says it (lexical
    tokens, space-separated); ``terms``: the words a record uses for it (lexical tokens)."""

    name: str
    phrases: tuple[str, ...]
    terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Expansion:
    """One concept (or brand name) found in a query: ``via`` the query's words as tokens,
    ``concept`` what they mean, ``terms`` the words searched for it (none of the query's own
    searched words), ``weight`` its share of a literal word."""

    via: str
    concept: str
    terms: tuple[str, ...]
    weight: float

    def label(self, term: str) -> str:
        """How an explanation says a memory matched: "kidney function → egfr"."""
        return f"{self.via} → {term}"


def concepts() -> tuple[Concept, ...]:
    """The query concepts of the clinical lexicon (``memory_core/data/lexicon/questions.json``):
    drug classes (a qualifier with every medication head -- "diabetes medication", "blood
    pressure pills" -- and the class's own names; its member drugs as terms), then body systems
    (the tests of their standard panels), then contact. Read from the lexicon on first use."""
    return _concepts()


@lru_cache(maxsize=1)
def _concepts() -> tuple[Concept, ...]:
    from .facts.lexicon import lexicon

    data = lexicon().questions
    heads = tuple(data["medication_heads"])
    out = [
        Concept(
            c["name"],
            (*(f"{q} {h}" for q in c["qualifiers"] for h in heads), *c["names"]),
            tuple(c["members"]),
        )
        for c in data["drug_classes"]
    ]
    for group in ("body_systems", "contact"):
        out += [Concept(c["name"], tuple(c["phrases"]), tuple(c["terms"])) for c in data[group]]
    return tuple(out)


def _phrase_index(concepts: Sequence[Concept]) -> dict[tuple[str, ...], Concept]:
    """Phrase (as tokens) -> its concept. A phrase names one concept; the first listed wins
    (drug classes come first: "sugar pills" is a medication)."""
    out: dict[tuple[str, ...], Concept] = {}
    for c in concepts:
        for p in c.phrases:
            key = tuple(tokens(p))
            if not 0 < len(key) <= MAX_PHRASE_WORDS:
                raise ValueError(f"phrase {p!r} of {c.name!r}: 1 to {MAX_PHRASE_WORDS} words")
            out.setdefault(key, c)
    return out


@lru_cache(maxsize=1)
def _phrases() -> dict[tuple[str, ...], Concept]:
    return _phrase_index(concepts())


def find_concepts(query: str) -> list[tuple[str, Concept]]:
    """The concepts a query names, in order, as (the query's words, concept): the longest
    phrase first at each position, each word in at most one phrase, each concept once."""
    phrases = _phrases()
    toks = tokens(query)
    found: list[tuple[str, Concept]] = []
    seen: set[str] = set()
    i = 0
    while i < len(toks):
        for n in range(min(MAX_PHRASE_WORDS, len(toks) - i), 0, -1):
            c = phrases.get(tuple(toks[i : i + n]))
            if c is not None:
                if c.name not in seen:
                    seen.add(c.name)
                    found.append((" ".join(toks[i : i + n]), c))
                i += n
                break
        else:
            i += 1
    return found


def _brand_generics(query: str, literal: frozenset[str]) -> list[Expansion]:
    """Brand names in the query resolved to their generic names by the drug dictionary."""
    out: list[Expansion] = []
    for m in drugs.resolve(query):
        if m.origin != "dictionary":
            continue
        terms = tuple(t for t in dict.fromkeys(tokens(m.name)) if t not in literal)
        if not terms or set(tokens(m.name)) <= literal:
            continue  # the generic name itself is in the query
        out.append(Expansion(" ".join(tokens(m.text)), m.name, terms, SYNONYM_WEIGHT))
    return out


@lru_cache(maxsize=4096)
def expand(query: str) -> tuple[Expansion, ...]:
    """What the query's concept words and brand names add to its keyword query; the query's
    own searched words (:func:`lexical.query_terms`) are never among the added terms."""
    literal = frozenset(query_terms(query))
    stop = stopwords()
    out: list[Expansion] = []
    for via, c in find_concepts(query):
        terms = tuple(t for t in dict.fromkeys(c.terms) if t not in literal and t not in stop)
        # half the weight of the query's words that name the concept ("kidney function": 2)
        words = sum(1 for t in via.split() if t in literal)
        if terms and words:
            out.append(Expansion(via, c.name, terms, EXPANSION_WEIGHT * words))
    out.extend(_brand_generics(query, literal))
    return tuple(out)


def weighted_terms(
    query: str, expansions: Sequence[Expansion] | None = None
) -> tuple[tuple[float, tuple[str, ...]], ...]:
    """The keyword query as (weight, terms) groups: each searched word of the query alone at
    weight 1, then each expansion (a memory matches a group through its best term).
    ``expansions``: the query's :func:`expand`, if the caller has it already."""
    literal = tuple((1.0, (t,)) for t in query_terms(query))
    found = expand(query) if expansions is None else expansions
    return literal + tuple((e.weight, e.terms) for e in found)


def matched(expansions: Sequence[Expansion], content: str) -> tuple[str, ...]:
    """How ``content`` matches the expansions: "kidney function → egfr", one per expansion
    (its first term the content uses)."""
    if not expansions:
        return ()
    words = set(tokens(content))
    out: list[str] = []
    for e in expansions:
        term = next((t for t in e.terms if t in words), None)
        if term is not None:
            out.append(e.label(term))
    return tuple(out)
