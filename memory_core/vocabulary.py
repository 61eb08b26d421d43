"""The clinical vocabulary of questions: the words a clinician asks with, mapped to the words
and keys a record is written with.

A clinician asks "is the kidney function getting worse?" and means the eGFR, creatinine and
albumin-to-creatinine results; asks about "the diabetes medication" and means metformin, an
insulin, an SGLT2 inhibitor or a GLP-1 agonist; asks "who does she live with?" and means the
household line of the social history. A question's **concepts** (:data:`GROUPS`) say so:

- **drug classes**: a qualifier with every medication head ("diabetes medication", "blood
  pressure pills") and the class's own names ("blood thinner", "water pill", "basal insulin");
  its members are the drugs it lists (INN names, as the WHO ATC classification and the BNF
  group them) and the drugs the drug dictionary files under the MeSH classes it names
  (``mesh``: "Insulin, Long-Acting" -> insulin glargine, insulin detemir);
- **body systems**: the tests of their standard panels and their analytes (labs.json ids: a
  question about kidney function is about the memories keyed by eGFR, creatinine, ACR);
- **slots** of the social history and of the patient's preferences (job and working hours,
  household, travel, religious fasting, transport, caregiver, language, ...): the facts
  reader's chart slot (slots.json ``slot:<id>``), when it has one, and the words a record
  uses for it.

Each concept adds its terms to the keyword query, as one extra query term at
:data:`EXPANSION_WEIGHT` of a literal word per word that names it (a memory matches a concept
through its best-scoring term, never once per term); a brand name's generic name is added at
:data:`SYNONYM_WEIGHT`. Expansion only adds: the question's own words are searched as before,
so a memory with the exact word beats one that matches through an expansion. A concept's keys
(a body system's analytes, a class's drugs, a slot) are matched against each memory's keys.

A question may also ask for a whole **kind** of fact ("what medications", "active problems",
"allergies", "latest labs": the lexicon's ``kinds``), which the section answers with every
current one (:mod:`memory_core.engine.section`).

Phrases are matched on word forms (:func:`memory_core.lexical.form`: "lives with", "living
with" and "live with" are one phrase), the longest first, up to :data:`MAX_PHRASE_WORDS`
words; a kind's phrases on the words as written (its lists are exact: "what medications" must
not fire on "what medical problems", whose first words share a stem). Everything is data in
the clinical lexicon (``memory_core/data/lexicon/questions.json``); the question itself is read
once by :mod:`memory_core.question`. Pure: words in, concepts out (the drug dictionary is read
lazily by :mod:`memory_core.drugs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from . import drugs
from .errors import ConfigurationError
from .lexical import form, forms, stopwords, tokens

#: A concept's weight in the keyword query, as a share of one literal query word.
EXPANSION_WEIGHT = 0.5
#: A brand name's generic name (the same drug): a literal word's weight.
SYNONYM_WEIGHT = 1.0
#: The longest phrase, in words.
MAX_PHRASE_WORDS = 4
#: The lexicon's concept groups, in the order a phrase is claimed (a drug class first: "sugar
#: pills" is a medication, not the body system of its qualifier).
GROUPS = ("drug_classes", "body_systems", "slots")


@dataclass(frozen=True, slots=True)
class Concept:
    """``name``: how an explanation names it; ``phrases``: how a question says it;
    ``terms``: the words a record uses for it (lexical tokens) and ``forms`` their word forms;
    ``keys``: the clinical keys it is about (a body system's analytes, ``loinc:<code>``; a drug
    class's drugs, ``drug:<name>``; a slot, ``slot:<id>``); ``members``: a drug class's drugs
    (canonical names and the words listed); ``group``: the lexicon's group."""

    name: str
    phrases: tuple[str, ...]
    terms: tuple[str, ...]
    keys: frozenset[str] = frozenset()
    group: str = "drug_classes"
    members: frozenset[str] = frozenset()
    forms: tuple[str, ...] = ()

    def shown(self, term_form: str) -> str:
        """The record word of one of its term forms (for an explanation)."""
        for t, f in zip(self.terms, self.forms, strict=True):
            if f == term_form:
                return t
        return term_form


@dataclass(frozen=True, slots=True)
class Expansion:
    """One concept (or brand name) found in a question: ``via`` the question's words,
    ``concept`` what they mean, ``terms`` the word forms searched for it (none of the question's
    own searched forms), ``weight`` its share of a literal word; ``shown``: the record word of
    each term, for an explanation."""

    via: str
    concept: str
    terms: tuple[str, ...]
    weight: float
    shown: tuple[str, ...] = ()

    def label(self, term: str) -> str:
        """How an explanation says a memory matched: "kidney function → egfr"."""
        word = dict(zip(self.terms, self.shown, strict=False)).get(term, term)
        return f"{self.via} → {word}"


def concepts() -> tuple[Concept, ...]:
    """The question concepts of the clinical lexicon, group by group (:data:`GROUPS`)."""
    return _concepts()


@lru_cache(maxsize=1)
def _concepts() -> tuple[Concept, ...]:
    from .facts.lexicon import lexicon

    lex = lexicon()
    data = lex.questions
    heads = tuple(data["medication_heads"])
    out = [_drug_class(c, heads, i) for i, c in enumerate(data["drug_classes"])]
    for i, c in enumerate(data["body_systems"]):
        keys = frozenset(
            _analyte_key(lex.analytes, a, f"body_systems[{i}].analytes")
            for a in c.get("analytes", ())
        )
        out.append(_concept(c["name"], c["phrases"], c["terms"], keys, "body_systems"))
    for i, c in enumerate(data.get("slots", ())):
        keys = frozenset(_slot_key(lex.slots, s, f"slots[{i}].slots") for s in c.get("slots", ()))
        out.append(_concept(c["name"], c["phrases"], c["terms"], keys, "slots"))
    return tuple(out)


def _concept(
    name: str,
    phrases: Sequence[str],
    terms: Sequence[str],
    keys: frozenset[str],
    group: str,
    members: frozenset[str] = frozenset(),
) -> Concept:
    stop = stopwords()
    kept = tuple(dict.fromkeys(t for t in terms if t not in stop))
    return Concept(name, tuple(phrases), kept, keys, group, members, tuple(forms(kept)))


def _drug_class(entry: Mapping[str, Any], heads: Sequence[str], i: int) -> Concept:
    """A drug class: its phrases (qualifier x head, its names), its members (listed, each
    resolved to the dictionary's canonical names where it can be; and the drugs the dictionary
    files under its MeSH classes) and its terms (the listed members, and each MeSH member's
    words that name it alone in the dictionary: "detemir" for insulin detemir)."""
    phrases = (*(f"{q} {h}" for q in entry["qualifiers"] for h in heads), *entry["names"])
    listed = [str(m).lower() for m in entry["members"]]
    canonical: set[str] = set()
    for m in listed:
        canonical |= drugs.canonical_names(m)
    terms = list(listed)
    for j, cls in enumerate(entry.get("mesh", ())):
        found = drugs.mesh_members(cls)
        if not found:
            raise ConfigurationError(
                f"lexicon questions.json, drug_classes[{i}].mesh[{j}]: the drug dictionary files "
                f"no drug under {cls!r}"
            )
        canonical |= found
        for name in sorted(found):
            terms += [w for w in tokens(name) if name in drugs.canonical_names(w)]
    own = {w for p in phrases for w in tokens(p)}
    terms = [t for t in terms if len(tokens(t)) == 1 and t not in own]
    keys = frozenset(f"drug:{n}" for n in canonical)
    return _concept(
        entry["name"], phrases, terms, keys, "drug_classes", frozenset(listed) | canonical
    )


def _analyte_key(analytes: Mapping[str, Any], aid: str, where: str) -> str:
    """``loinc:<code>`` of a labs.json analyte named by id in questions.json."""
    found = analytes.get(aid)
    if found is None:
        raise ConfigurationError(
            f"lexicon questions.json, {where}: {aid!r} is no analyte of labs.json"
        )
    key: str = found.key
    return key


def _slot_key(slots: Mapping[str, Any], sid: str, where: str) -> str:
    """``slot:<id>`` of a slots.json slot named by id in questions.json."""
    found = slots.get(sid)
    if found is None:
        raise ConfigurationError(
            f"lexicon questions.json, {where}: {sid!r} is no slot of slots.json"
        )
    key: str = found.key
    return key


def phrase_key(phrase: str) -> tuple[str, ...]:
    """A phrase as the question index matches it: its words' forms."""
    return tuple(forms(tokens(phrase)))


def _phrase_index(found: Sequence[Concept]) -> dict[tuple[str, ...], Concept]:
    """Phrase (as word forms) -> its concept. A phrase names one concept; the first listed wins
    (drug classes come first: "sugar pills" is a medication)."""
    out: dict[tuple[str, ...], Concept] = {}
    for c in found:
        for p in c.phrases:
            key = phrase_key(p)
            if not 0 < len(key) <= MAX_PHRASE_WORDS:
                raise ConfigurationError(
                    f"lexicon questions.json: phrase {p!r} of {c.name!r}: 1 to "
                    f"{MAX_PHRASE_WORDS} words"
                )
            out.setdefault(key, c)
    return out


@lru_cache(maxsize=1)
def _phrases() -> dict[tuple[str, ...], Concept]:
    return _phrase_index(concepts())


def concepts_in(words: Sequence[str], word_forms: Sequence[str]) -> list[tuple[str, Concept]]:
    """The concepts these words (tokens, and their forms) name, in order, as (the words,
    concept): the longest phrase first at each position, each word in at most one phrase, each
    concept once."""
    phrases = _phrases()
    found: list[tuple[str, Concept]] = []
    seen: set[str] = set()
    i, n_words = 0, len(word_forms)
    while i < n_words:
        for n in range(min(MAX_PHRASE_WORDS, n_words - i), 0, -1):
            c = phrases.get(tuple(word_forms[i : i + n]))
            if c is not None:
                if c.name not in seen:
                    seen.add(c.name)
                    found.append((" ".join(words[i : i + n]), c))
                i += n
                break
        else:
            i += 1
    return found


def find_concepts(text: str) -> list[tuple[str, Concept]]:
    """:func:`concepts_in` of a text."""
    words = tokens(text)
    return concepts_in(words, forms(words))


def expansions(found: Sequence[tuple[str, Concept]], literal: frozenset[str]) -> list[Expansion]:
    """What the concepts found add to a keyword query whose own searched forms are
    ``literal``: each concept's term forms less those, at half the weight of the question's
    searched words that name it ("kidney function": 2 words, weight 1)."""
    stop = stopwords()
    out: list[Expansion] = []
    for via, c in found:
        pairs = [(f, t) for f, t in zip(c.forms, c.terms, strict=True) if f not in literal]
        pairs = list(dict.fromkeys(pairs))
        terms = tuple(dict.fromkeys(f for f, _ in pairs))
        shown = tuple(next(t for f2, t in pairs if f2 == f) for f in terms)
        words = sum(1 for w in via.split() if w not in stop and len(w) > 1 and form(w) in literal)
        if terms and words:
            out.append(Expansion(via, c.name, terms, EXPANSION_WEIGHT * words, shown))
    return out


def brand_generics(mentions: Sequence[tuple[str, str]], literal: frozenset[str]) -> list[Expansion]:
    """Brand names resolved to their generic names: ``mentions`` are (the words as written,
    the canonical name) of the drugs a question names; a generic name already searched adds
    nothing."""
    out: list[Expansion] = []
    for text, name in mentions:
        words = tokens(name)
        if not words or set(forms(words)) <= literal:
            continue  # the generic name itself is in the question
        pairs = [(f, w) for f, w in zip(forms(words), words, strict=True) if f not in literal]
        terms = tuple(dict.fromkeys(f for f, _ in pairs))
        shown = tuple(next(w for f2, w in pairs if f2 == f) for f in terms)
        out.append(Expansion(" ".join(tokens(text)), name, terms, SYNONYM_WEIGHT, shown))
    return out


# --- kinds of fact ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Kind:
    """A question asking for a whole kind of fact ("what medications", "active problems",
    "allergies", "latest labs"): ``types`` are the memory types that answer it; ``ended``: the
    question asks for what ended too ("past medications", "medical history")."""

    name: str
    types: tuple[str, ...]
    phrases: tuple[str, ...]
    ended: bool = False


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


def kinds_in(words: Sequence[str]) -> tuple[Kind, ...]:
    """The kinds these words (tokens, as written) ask for, in order of first mention (phrases
    may overlap: "what medications were stopped" asks for the current list and what ended)."""
    index = _kinds()[1]
    found: dict[str, Kind] = {}
    for i in range(len(words)):
        for n in range(1, MAX_PHRASE_WORDS + 1):
            for k in index.get(tuple(words[i : i + n]), ()):
                found.setdefault(k.name, k)
    return tuple(found.values())


def find_kinds(text: str) -> tuple[Kind, ...]:
    """:func:`kinds_in` of a text."""
    return kinds_in(tokens(text))


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
