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

**Questions by meaning** (:func:`question`): besides words, a question names clinical keys --
what the facts reader (:mod:`memory_core.facts`) reads in it ("HbA1c" is ``loinc:4548-4``,
co-codamol ``drug:acetaminophen/codeine`` and its ingredients) and the analytes of its body
systems ("blood sugar control": HbA1c, glucose, fasting glucose, time in range; "kidney
function": eGFR, creatinine, ACR; "weight": body weight, BMI -- ``analytes`` in the lexicon, by
labs.json id). Retrieval matches those keys against each memory's keys, so a result is found by
its code whatever words it is written with. A question may also ask for a whole **kind** of
fact ("what medications", "active problems", "allergies", "latest labs": the lexicon's
``kinds``), which the section answers with every current one (:mod:`memory_core.context`).

Pure: text in, terms out (the drug dictionary is read lazily by :mod:`memory_core.drugs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from . import drugs
from .errors import ConfigurationError
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
    tokens, space-separated); ``terms``: the words a record uses for it (lexical tokens);
    ``keys``: the clinical keys it is about (a body system's analytes, ``loinc:<code>``)."""

    name: str
    phrases: tuple[str, ...]
    terms: tuple[str, ...]
    keys: frozenset[str] = frozenset()
    group: str = "drug_classes"  # the lexicon's group: drug_classes, body_systems, contact


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

    lex = lexicon()
    data = lex.questions
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
        for i, c in enumerate(data[group]):
            keys = frozenset(
                _analyte_key(lex.analytes, a, f"{group}[{i}].analytes")
                for a in c.get("analytes", ())
            )
            out.append(Concept(c["name"], tuple(c["phrases"]), tuple(c["terms"]), keys, group))
    return tuple(out)


def _analyte_key(analytes: Mapping[str, Any], aid: str, where: str) -> str:
    """``loinc:<code>`` of a labs.json analyte named by id in questions.json."""
    found = analytes.get(aid)
    if found is None:
        raise ConfigurationError(
            f"lexicon questions.json, {where}: {aid!r} is no analyte of labs.json"
        )
    key: str = found.key
    return key


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


# --- kinds of fact and what a question names --------------------------------------------------
@dataclass(frozen=True, slots=True)
class Kind:
    """A question asking for a whole kind of fact ("what medications", "active problems",
    "allergies", "latest labs"): ``types`` are the memory types that answer it; ``ended``: the
    question asks for what ended too ("past medications", "medical history")."""

    name: str
    types: tuple[str, ...]
    phrases: tuple[str, ...]
    ended: bool = False


@dataclass(frozen=True, slots=True)
class Question:
    """What a question is about beyond its words: ``keys`` it names (read by the facts reader
    from its words, plus its concepts' keys), ``kinds`` of fact it asks for, and ``drugs``: the
    drugs it names with every ingredient and allergy class of each (co-codamol: acetaminophen,
    codeine, and codeine's class), to find the reactions that concern them; ``members``: the
    drugs of the drug classes it names ("the diabetes medication")."""

    keys: frozenset[str] = frozenset()
    kinds: tuple[Kind, ...] = ()
    drugs: frozenset[str] = frozenset()
    members: frozenset[str] = frozenset()  # the drugs of the drug classes it names

    def about_drug(self, name: str) -> bool:
        """The question names this drug (a canonical name) or a class it belongs to, by the
        lexicon's drug classes ("the diabetes medication": metformin, insulin glargine)."""
        return bool(self.members) and (
            name in self.members or any(w in self.members for w in name.split())
        )

    def asks_for(self, memory_type: str) -> Kind | None:
        """The first kind the question asks for that ``memory_type`` answers."""
        return next((k for k in self.kinds if memory_type in k.types), None)

    def asks_for_ended(self, memory_type: str) -> bool:
        return any(k.ended and memory_type in k.types for k in self.kinds)


#: The memory types a kind may name (validated when the lexicon's questions are read).
KIND_TYPES = frozenset(
    {"medication", "condition", "allergy", "adverse_reaction", "lab_result", "vital_sign",
     "care_plan", "immunization", "procedure"}
)  # fmt: skip


def kinds() -> tuple[Kind, ...]:
    """The kinds of fact a question can ask for (the lexicon's ``questions.json`` kinds)."""
    return _kinds()[0]


@lru_cache(maxsize=1)
def _kinds() -> tuple[tuple[Kind, ...], dict[tuple[str, ...], tuple[Kind, ...]]]:
    from .facts.lexicon import lexicon

    out: list[Kind] = []
    index: dict[tuple[str, ...], list[Kind]] = {}
    for i, e in enumerate(lexicon().questions.get("kinds", ())):
        where = f"lexicon questions.json, kinds[{i}]"
        types = tuple(e.get("types") or ())
        if not types or not set(types) <= KIND_TYPES:
            raise ConfigurationError(f"{where}.types: memory types of {sorted(KIND_TYPES)}")
        kind = Kind(str(e["name"]), types, tuple(e["phrases"]), bool(e.get("ended", False)))
        for p in kind.phrases:
            key = tuple(tokens(p))
            if not 0 < len(key) <= MAX_PHRASE_WORDS:
                raise ConfigurationError(f"{where}.phrases: {p!r}: 1 to {MAX_PHRASE_WORDS} words")
            index.setdefault(key, []).append(kind)
        out.append(kind)
    return tuple(out), {k: tuple(v) for k, v in index.items()}


def find_kinds(query: str) -> tuple[Kind, ...]:
    """The kinds a question asks for, in order of first mention (phrases may overlap: "what
    medications were stopped" asks for the current list and for what ended)."""
    index = _kinds()[1]
    toks = tokens(query)
    found: dict[str, Kind] = {}
    for i in range(len(toks)):
        for n in range(1, MAX_PHRASE_WORDS + 1):
            for k in index.get(tuple(toks[i : i + n]), ()):
                found.setdefault(k.name, k)
    return tuple(found.values())


def line_title(memory_type: str, which: str) -> str:
    """The lexicon's title of a type's ``current`` list line or of its ``ended`` line ("" when
    it names none: no list line for the type)."""
    from .facts.lexicon import lexicon

    lines: Mapping[str, Mapping[str, str]] = lexicon().questions.get("lines", {})
    return str(lines.get(memory_type, {}).get(which, ""))


def drug_family(names: Sequence[str]) -> frozenset[str]:
    """Each drug name with its ingredients and the allergy classes of each (the drug
    dictionary's MeSH classes): what a reaction to any of them concerns."""
    out: set[str] = set()
    for name in names:
        for part in (name, *drugs.ingredients(name)):
            out.add(part)
            out |= drugs.classes(part)
    return frozenset(out)


@lru_cache(maxsize=4096)
def question(query: str) -> Question:
    """What ``query`` names and asks for (see the module docstring)."""
    from .facts import read
    from .facts.model import KeyKind

    facts = read(query)
    keys = set(facts.keys)
    members: set[str] = set()
    for _via, c in find_concepts(query):
        keys |= c.keys
        if c.group == "drug_classes":
            members.update(c.terms)
    names = [f.name for f in facts.facts if f.kind is KeyKind.DRUG]
    return Question(frozenset(keys), find_kinds(query), drug_family(names), frozenset(members))
