"""The drug dictionary: drug names in free text resolved to canonical generic names.

Backed by the dictionary of ``drug-named-entity-recognition`` (it ships in the wheel; nothing
is downloaded), read lazily once per process under a lock into a compact exact-match map, plus
:func:`supplement`, a small list of our own (the lexicon's ``drugs.json``) for the drug classes
and non-drug allergens that allergy records name and the dictionary lacks (sulfa, NSAIDs,
opioids, contrast, latex, ...) and combination brands (Augmentin, co-codamol). Pure: text in,
mentions out.

Tokens are the whitespace-separated words of the text with surrounding punctuation stripped
("metformin;" -> "metformin"); a mention's ``start``/``end`` are character offsets into the
text given, so callers can highlight or cut the span.
"""

from __future__ import annotations

import bz2
import importlib.metadata
import importlib.util
import pickle
import re
import sys
import threading
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import kept
from .errors import ConfigurationError


def _lex() -> dict[str, Any]:
    """The drug section of the clinical lexicon (``memory_core/data/lexicon/drugs.json``): the
    supplement of spellings the dictionary lacks, non-drug allergens, words that name no drug
    alone, aliases, rescue medicines and the allergy classes."""
    from .facts.lexicon import lexicon

    drugs: dict[str, Any] = dict(lexicon().drugs)
    return drugs


def supplement() -> dict[str, str]:
    """Spellings (lower case, of one word or several) the dictionary does not resolve, or resolves
    otherwise, -> the canonical name used here: drug classes an allergy names (sulfa, NSAIDs),
    combination brands (Augmentin, co-codamol), chart abbreviations (PCN, HCTZ) and non-drug
    allergens (peanut, latex). Named as our own supplement, not the dictionary's data."""
    sup: dict[str, str] = _lex()["supplement"]
    return sup


def non_drug_allergens() -> dict[str, str]:
    """Canonical names of the supplement that are not drugs, with their kind (food,
    environment, venom): an allergy to them is no drug allergy."""
    kinds: dict[str, str] = _lex()["non_drug_allergens"]
    return kinds


def rescue_medicines() -> frozenset[str]:
    """What treats a reaction rather than causes it ("anaphylaxis, carries EpiPen")."""
    rescue: frozenset[str] = _lex()["rescue"]
    return rescue


_STRIP = "\"'`.,;:!?()[]{}<>*_~/\\|“”‘’—–-"
_WORD = re.compile(r"\S+")
#: what joins the parts of a combination written as one word ("losartan/HCTZ")
_JOINED = re.compile(r"[/-]")


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
_names: dict[str, str] | None = None
_mesh: dict[str, tuple[str, ...]] = {}  # canonical name -> MeSH tree numbers, filled by _load
#: Canonical names of the medicines MedlinePlus writes a drug page for (the dictionary's
#: ``medline_plus_id``): what a patient may take, the only names a misspelling is matched to.
_medicines: set[str] = set()
#: One drug's second name -> the name used for both (:func:`_one_moiety`), filled by _load
_moiety: dict[str, str] = {}

#: The package whose dictionary file is read, and the file's name inside it.
_PACKAGE = "drug_named_entity_recognition"
_FILE = "drug_ner_dictionary.pkl.bz2"


def _load() -> dict[str, str]:
    """Spelling (lower case, one or more words) -> canonical display name, read once per
    process from the dictionary file the package ships. The package's own module is not
    imported: it builds a fuzzy-matching n-gram index of every spelling (about 370 MiB resident
    and 1.5-4 s) and imports an HTTP client, where exact lookups need only this map (about
    55 MiB, 0.5 s). Lookups match the package's ``find_drugs`` without fuzzy matching."""
    global _names
    if _names is None:
        with _lock:
            if _names is None:
                _names = _read_dictionary()
    return _names


def _read_dictionary() -> dict[str, str]:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfigurationError(
            f"the drug dictionary needs the package {_PACKAGE!r} (pip install "
            "drug-named-entity-recognition==2.0.9)"
        )
    path = Path(spec.origin).parent / _FILE
    raw = kept.kept("drugs", path, _version(), lambda: _derive(path), _is_raw)
    out, trees, medicines = raw
    _moiety.update(_one_moiety({n.lower() for n in out.values()}, set(medicines)))
    for name, tree in trees:
        c = _canonical(name)
        _mesh[c] = tuple(dict.fromkeys((*_mesh.get(c, ()), *tree)))
    _medicines.update(_canonical(name) for name in medicines)
    return out


def _one_moiety(names: set[str], medicines: set[str]) -> dict[str, str]:
    """The dictionary's two names of one drug by their endings (``drugs.json``'s
    ``same_moiety``: "alendronic acid" and "alendronate") -> the one MedlinePlus names (a page
    for exactly one of them): the medicine's name."""
    out: dict[str, str] = {}
    for ending, other in _lex()["same_moiety"]:
        for name in names:
            if not name.endswith(ending):
                continue
            twin = name[: -len(ending)] + other
            if twin in names and (twin in medicines) != (name in medicines):
                keep, drop = (twin, name) if twin in medicines else (name, twin)
                out[drop] = keep
    return out


#: What :func:`_derive` reads from the package's file: spelling -> display name; the lower-case
#: name and MeSH tree numbers of each entry that has them, in the file's order; the lower-case
#: names with a MedlinePlus page (before this module's own canonical names, which the
#: lexicon's aliases decide).
_Raw = tuple[dict[str, str], list[tuple[str, tuple[str, ...]]], list[str]]


def _derive(path: Path) -> _Raw:
    """The maps this module needs, read from the package's file (bz2 of a pickle: 1-2 s)."""
    # The file is the package's own data (installed with it from the package index), read
    # with pickle as the package itself reads it.
    with bz2.open(path, "rb") as f:
        data = pickle.load(f)
    variants: dict[str, list[str]] = data["drug_variant_to_canonical"]
    canonical: dict[str, dict[str, Any]] = data["drug_canonical_to_data"]
    variant_data: dict[str, dict[str, Any]] = data["drug_variant_to_variant_data"]
    trees: list[tuple[str, tuple[str, ...]]] = []
    medicines: list[str] = []
    for info in canonical.values():
        tree, name = info.get("mesh_tree"), info.get("name")
        if tree and name:
            trees.append((str(name).lower(), tuple(str(t) for t in tree)))
        if name and info.get("medline_plus_id"):
            medicines.append(str(name).lower())
    out: dict[str, str] = {}
    for spelling, names in variants.items():
        if names:
            first = names[0]
            info = dict(canonical.get(first, {})) | variant_data.get(spelling, {})
            # interned: marshal keeps them so, and each display name is stored once
            out[sys.intern(str(spelling))] = sys.intern(str(info.get("name") or first))
    return out, trees, medicines


def _version() -> str:
    try:
        return importlib.metadata.version(_PACKAGE.replace("_", "-"))
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _is_raw(got: Any) -> bool:
    """A kept value has :data:`_Raw`'s shape."""
    return (
        isinstance(got, tuple)
        and len(got) == 3
        and isinstance(got[0], dict)
        and isinstance(got[1], list)
        and isinstance(got[2], list)
    )


def _find(words: list[str]) -> list[tuple[str, int, int]]:
    """``(canonical name, first word, past the last word)`` of every dictionary spelling among
    ``words``, as the package's ``find_drugs(words, is_ignore_case=True)`` finds them: two-word
    spellings first, then single words not already part of one."""
    names = _load()
    low = [w.lower() for w in words]
    found: list[tuple[str, int, int]] = []
    used: set[int] = set()
    for i in range(len(low) - 1):
        name = names.get(f"{low[i]} {low[i + 1]}") or names.get(f"{low[i]} {_singular(low[i + 1])}")
        if name is not None:
            found.append((name, i, i + 2))
            used.update((i, i + 1))
    for i, w in enumerate(low):
        if i not in used:
            name = names.get(w)
            if name is not None:
                found.append((name, i, i + 1))
    return found


#: "'s" after a word: a contracted "is" or "has", or a possessive
_CONTRACTED = frozenset({"'s", "\u2019s"})


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
    _load()  # the dictionary's names of one drug before any name is made canonical
    toks = _tokens(text)
    if not toks:
        return ()
    found: list[DrugMention] = []
    taken: set[int] = set()
    # "the furosemide's gone up": a name with a contracted "is" or "has", or a possessive (its
    # last word: "St John's wort" keeps its own)
    words = [w[:-2] if len(w) > 4 and w[-2:].lower() in _CONTRACTED else w for w, _s, _e in toks]
    lowered = [t[0].lower() for t in toks]
    lex = _lex()
    extra = lex["supplement"]
    longest = _longest_spelling()
    i = 0
    while i < len(toks):  # the supplement: its longest spellings first
        for n in range(min(longest, len(toks) - i), 0, -1):
            last = i + n - 1
            head, end = lowered[i:last], toks[last][2]
            key = " ".join(lowered[i : i + n])
            if key not in extra and words[last] != toks[last][0]:  # "cod liver oil's fine"
                key, end = " ".join([*head, words[last].lower()]), toks[last][1] + len(words[last])
            if n > 1 and key not in extra:  # a spelling's plural ("nicotine lozenges")
                key = " ".join([*head, _singular(words[last].lower())])
            if key in extra:
                start = toks[i][1]
                found.append(
                    DrugMention(_canonical(extra[key]), start, end, text[start:end], "supplement")
                )
                taken.update(range(i, i + n))
                i += n
                break
        else:
            i += 1
    found_as_written = _find(words)
    named_at = {i for _c, first, last in found_as_written for i in range(first, last)}
    us = _american(words, lex["uk_spellings"])
    also = [f for f in _find(us) if not named_at.intersection(range(f[1], f[2]))] if us else []
    for canonical, first, last in [*found_as_written, *also]:
        span = range(first, last)
        named = " ".join(w.lower() for w in words[first:last])
        if taken.intersection(span) or named in lex["not_drugs"] or _phrase_of_english(named):
            continue
        name = _canonical(canonical.lower())
        start = toks[first][1]
        end = toks[last - 1][2] - (len(toks[last - 1][0]) - len(words[last - 1]))
        found.append(DrugMention(name, start, end, text[start:end], "dictionary"))
        taken.update(span)
    for i, (word, start, end) in enumerate(toks):
        # a combination written with a slash or a hyphen the dictionary does not list
        # ("sulfamethoxazole/trimethoprim", "losartan/HCTZ", "amoxicillin-clavulanate"): its
        # components, as one name ("lisinopril-induced" is no combination: "induced" is no drug)
        if i in taken or not _JOINED.search(word):
            continue
        parts = [_resolve(w) for w in _JOINED.split(word)]  # one word each: one mention
        if len(parts) > 1 and all(parts):
            name = _canonical("/".join(p[0].name for p in parts))
            found.append(DrugMention(name, start, end, text[start:end], "dictionary"))
        elif len(parts) > 1 and any(parts):
            # a drug joined to a word that is none ("lisinopril-induced"): the drug alone
            offset = start
            for piece, got in zip(_JOINED.split(word), parts, strict=True):
                if got:
                    s0 = offset + got[0].start
                    found.append(
                        DrugMention(
                            got[0].name, s0, s0 + len(got[0].text), got[0].text, got[0].origin
                        )
                    )
                offset += len(piece) + 1
    found += _misspelt(text, toks, taken)  # a joined word ("losartan/HCTZ") is no candidate
    found += _split(text, toks, taken | {i for i, t in enumerate(toks) if _JOINED.search(t[0])})
    found.sort(key=lambda d: d.start)
    return tuple(found)


def _american(words: list[str], spellings: dict[str, str]) -> list[str] | None:
    """``words`` with British spellings' letters in American ones ("sulphate" -> "sulfate",
    "oestrogen" -> "estrogen"; drugs.json's ``uk_spellings``), or None where none has one."""
    out = []
    for w in words:
        low = w.lower()
        for uk, us in spellings.items():
            low = low.replace(uk, us)
        out.append(low if low != w.lower() else w)
    return out if out != words else None


#: A misspelt drug name is matched only in words this long or longer (four- and five-letter
#: words sit within one edit of too many others).
MISSPELT_MIN = 6
#: How many edits (insertion, deletion, substitution, two letters swapped) a misspelling may be
#: from a dictionary spelling.
MISSPELT_EDITS = 1


def _misspelt(text: str, toks: list[tuple[str, int, int]], taken: set[int]) -> list[DrugMention]:
    """Words no dictionary spelling names that are one edit from exactly one drug's one-word
    spelling ("rampiril": ramipril; "metformen": metformin) and are no English word
    (lemminflect's lexicon knows "aspiring", so it never becomes aspirin). Written in lower case
    (a capitalised word may be a person's or a place's name) -- or capitalised where it opens a
    sentence and a dose follows it in its clause, as on a chart's medication line ("Fuorsemide
    changed to 40mg IV BD")."""
    out = []
    for i, (word, start, end) in enumerate(toks):
        if i in taken or len(word) < MISSPELT_MIN or not word.isalpha():
            continue
        if not word.islower() and not _a_medication_line(text, word, start, end):
            continue
        name = _misspelling_of(word.lower())
        if name is not None:
            out.append(DrugMention(name, start, end, text[start:end], "misspelt"))
    return out


def _a_medication_line(text: str, word: str, start: int, end: int) -> bool:
    """``word`` is capitalised only where it opens a sentence, and a dose follows it in its
    clause ("Metfromin 500 mg", "Fuorsemide changed to 40mg")."""
    if not (word[:1].isupper() and word[1:].islower()):
        return False
    return bool(_OPENS_SENTENCE.search(text, 0, start)) and bool(_DOSE_IN_CLAUSE.match(text, end))


#: What may stand before a word that opens a sentence: the text's start, a sentence's end, a
#: colon or a line break, then spaces.
_OPENS_SENTENCE = re.compile(r"(?:^|[.!?:;\n])\s*$")
#: A dose after a name, in its clause: no sentence or clause end before the number and its unit.
_DOSE_IN_CLAUSE = re.compile(
    r"[^.!?;\n,]{0,30}?\b\d+(?:\.\d+)?\s*(?:mg|mcg|micrograms?|g|units?|ml|iu)\b", re.I
)


#: How many words a medicine's name may be split into by dictation ("sertra line": sertraline;
#: "met for men": metformin), and how long the joined name must be.
SPLIT_WORDS = 3
SPLIT_MIN = 8


def _split(text: str, toks: list[tuple[str, int, int]], taken: set[int]) -> list[DrugMention]:
    """A generic name a speech recogniser wrote as two or three lower-case words: joined, it is
    the name ("sertra line"), or -- where one of the words is no English word ("met formin") --
    one edit from exactly one name and no English word itself (:func:`_misspelling_of`)."""
    out: list[DrugMention] = []
    used: set[int] = set(taken)
    for i in range(len(toks)):
        for n in range(SPLIT_WORDS, 1, -1):
            span = range(i, i + n)
            if i + n > len(toks) or used.intersection(span):
                continue
            words = [toks[k][0] for k in span]
            if not all(w.isalpha() and w.islower() for w in words):
                continue
            joined = "".join(words)
            if len(joined) < SPLIT_MIN:
                continue
            exact = joined in _one_word_spellings().get((joined[0], len(joined)), ())
            if exact:
                name: str | None = _canonical(_load()[joined].lower())
            elif all(english(w) or w in _function_words() for w in words):
                continue  # words of English one edit from a name ("me that one"): no name
            else:
                name = _misspelling_of(joined)
            if name is not None:
                start, end = toks[i][1], toks[i + n - 1][2]
                out.append(DrugMention(name, start, end, text[start:end], "misspelt"))
                used.update(span)
                break
    return out


@lru_cache(maxsize=65_536)
def _misspelling_of(word: str) -> str | None:
    names = _load()
    lex = _lex()
    if word in names or word in lex["supplement"] or word in _clinical_words():
        return None
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    near = [
        w
        for n in range(len(word) - MISSPELT_EDITS, len(word) + MISSPELT_EDITS + 1)
        for w in _one_word_spellings().get((word[0], n), ())
    ]
    hits = process.extract(word, near, scorer=OSA.distance, score_cutoff=MISSPELT_EDITS, limit=8)
    found = {_canonical(names[h[0]].lower()) for h in hits} - set(lex["not_drugs"])
    # the English lexicon is read last: only a word near one medicine loads it
    return found.pop() if len(found) == 1 and not english(word) else None


def _phrase_of_english(named: str) -> bool:
    """A dictionary spelling made only of function words and numbers ("at 10", the brand AT-10
    as free text writes a time or a dose: "stays at 10 milligrams"): no drug's name there."""
    return all(w in _function_words() or _FIGURES.fullmatch(w) for w in named.split())


_FIGURES = re.compile(r"[\d.,/-]+")


@lru_cache(maxsize=1)
def _function_words() -> frozenset[str]:
    """The lexicon's function words ("for", "the"), which lemminflect has no lemma of."""
    from .facts.lexicon import lexicon

    return lexicon().function_words


@lru_cache(maxsize=1)
def _clinical_words() -> frozenset[str]:
    """Every word of the clinical lexicon's analytes, conditions and chart slots, and the words
    that name no drug ("creatinine" is a test, never a misspelt drug)."""
    from .facts.lexicon import lexicon

    lex = lexicon()
    out = {w for p in _lex()["not_drugs"] for w in p.split()}
    for matcher in (lex.analyte_phrases, lex.condition_phrases, lex.slot_triggers):
        out |= matcher.words()
    return frozenset(out)


@lru_cache(maxsize=1)
def _one_word_spellings() -> dict[tuple[str, int], tuple[str, ...]]:
    """The dictionary's one-word generic names of medicines (MedlinePlus pages) long enough to
    be matched with an edit, by first letter and length (a misspelling keeps its first letter:
    "rampiril", "metformen"); brands are left out (one edit from a brand is too often another
    word: "pylori")."""
    names = _load()
    out: dict[tuple[str, int], list[str]] = {}
    for w in sorted(_medicines):  # no chemical class ("mucins", "sulfates")
        generic = names.get(w, "").lower() == w  # a brand's spelling is no generic name
        if generic and " " not in w and len(w) >= MISSPELT_MIN - MISSPELT_EDITS:
            out.setdefault((w[0], len(w)), []).append(w)
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=65_536)
def english(word: str) -> bool:
    """A word of English (lemminflect's lexicon of lemmas and their forms). Kept per word:
    lemminflect copies its entry on every look-up, and a dictated name's split words are asked
    about once for each span that holds them."""
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(word))


@lru_cache(maxsize=1)
def _longest_spelling() -> int:
    """How many words the supplement's longest spelling has ("cod liver oil": 3)."""
    return max((k.count(" ") + 1 for k in _lex()["supplement"]), default=1)


@lru_cache(maxsize=65_536)
def _singular(word: str) -> str:
    """A noun's singular ("patches" -> "patch", "lozenges" -> "lozenge"), for the last word of
    a spelling of several; the word itself when it is no plural (lemminflect)."""
    if not word.endswith("s") or len(word) < 4:
        return word
    from lemminflect import getLemma

    lemma: str = getLemma(word, upos="NOUN")[0]
    return lemma


#: The four-letter suffix of a biologic's name (erenumab-aooe is erenumab).
_BIOLOGIC_SUFFIX = re.compile(r"-[a-z]{4}$")


def _canonical(name: str) -> str:
    """One name per drug: a biologic without its suffix, a combination's components in
    alphabetical order and joined by "/" (the dictionary files Bactrim as
    "trimethoprim/sulfamethoxazole" and Advair as "fluticasone and salmeterol"; a chart writes
    "sulfamethoxazole/trimethoprim", "fluticasone/salmeterol")."""
    if "/" in name or " and " in name:  # the dictionary writes some as "x and y"
        parts = re.split(r"/| and ", name)
        return "/".join(sorted(_canonical(p.strip()) for p in parts))
    name = _BIOLOGIC_SUFFIX.sub("", name)
    aliases: dict[str, str] = _lex()["aliases"]
    name = aliases.get(name, name)
    return _moiety.get(name, name)


def ingredients(name: str) -> tuple[str, ...]:
    """The ingredients of a canonical name: a combination's components ("acetaminophen/codeine"
    is acetaminophen and codeine), else the name itself."""
    return tuple(name.split("/"))


@lru_cache(maxsize=65_536)
def classes(name: str) -> frozenset[str]:
    """The allergy classes a drug belongs to: by the dictionary's MeSH tree numbers for the
    lexicon's ``drugs.classes`` (amoxicillin is filed under Penicillins, cephalexin under
    Cephalosporins), and for a class MeSH files by action rather than structure (NSAIDs,
    opioids, statins), by the members the query vocabulary lists for it (``questions.json``
    ``drug_classes``, whose names resolve to the class: "nsaid" -> nsaids). Lower-case class
    names; empty for a drug in none."""
    roots = _class_roots()
    own = _mesh.get(name, ())
    by_tree = {
        cls for cls, tops in roots.items()
        if any(t == r or t.startswith(r + ".") for t in own for r in tops)
    }  # fmt: skip
    return frozenset(by_tree) | _listed_classes().get(name, frozenset())


@lru_cache(maxsize=1)
def _listed_classes() -> dict[str, frozenset[str]]:
    """Member -> the allergy classes whose query-vocabulary entry lists it."""
    from .facts.lexicon import lexicon

    sup = supplement()
    out: dict[str, set[str]] = {}
    for entry in lexicon().questions["drug_classes"]:
        names = [str(n).lower() for n in (entry["name"], *entry.get("names", ()))]
        targets = {sup[n] for n in names if n in sup and "/" not in sup[n]}
        for member in entry["members"]:
            for cls in targets:
                out.setdefault(str(member).lower(), set()).add(cls)
    return {m: frozenset(c) for m, c in out.items()}


@lru_cache(maxsize=1)
def _class_roots() -> dict[str, tuple[str, ...]]:
    """The MeSH tree numbers of the lexicon's allergy classes, as the dictionary files them."""
    _load()
    wanted = (c.lower() for c in _lex()["classes"])
    return {c: _mesh[c] for c in wanted if c in _mesh}


@lru_cache(maxsize=256)
def mesh_members(mesh_class: str) -> frozenset[str]:
    """The canonical names the dictionary files under a MeSH class by its tree numbers ("Insulin,
    Long-Acting": insulin glargine, insulin detemir, ...); empty when the dictionary has no
    such class or files none under it (a class MeSH groups by action, such as anticoagulants,
    has no structural members)."""
    cls = mesh_class.lower()
    trees, names = _mesh_sorted()
    out: set[str] = set()
    for r in _mesh.get(cls, ()):
        # the tree numbers that extend r ("r.…") sort together: from "r." up to "r/"
        out.update(names[bisect_left(trees, r + ".") : bisect_left(trees, r + "/")])
    return frozenset(out - {cls})


@lru_cache(maxsize=1)
def _mesh_sorted() -> tuple[list[str], list[str]]:
    """Every (MeSH tree number, canonical name) of the dictionary, sorted by tree number (the
    names filed below a tree number are then one run), built once."""
    _load()
    pairs = sorted((t, name) for name, tree in _mesh.items() for t in tree)
    return [t for t, _ in pairs], [n for _, n in pairs]


#: A clipped name ("levo", "pred", "doxy") has at least this many letters, and leaves at least
#: :data:`CLIP_CUT` letters of the name unsaid.
CLIP_MIN = 4
CLIP_CUT = 2


@lru_cache(maxsize=65_536)
def clipped(word: str) -> frozenset[str]:
    """The medicines (the dictionary's one-word generic names of MedlinePlus medicines) whose
    names ``word`` begins as a clipped name ("levo": levothyroxine, levodopa, levofloxacin ...;
    "pred": prednisolone, prednisone); empty for a word shorter than :data:`CLIP_MIN`, a word
    of English ("temp", "ramp"), a word the clinical lexicon knows ("creat"), or a drug's own
    spelling. Which of them a statement means, only the patient's own list can say."""
    word = word.lower()
    if len(word) < CLIP_MIN or not word.isalpha():
        return frozenset()
    names = _load()
    if word in names or word in _lex()["supplement"] or word in _clinical_words():
        return frozenset()
    found = frozenset(
        _canonical(w)
        for w in _medicines
        if w.startswith(word) and len(w) >= len(word) + CLIP_CUT and w.isalpha()
    )
    # the English lexicon is read last: only a word that begins a medicine's name loads it
    return found if found and not english(word) else frozenset()


def canonical_names(text: str) -> frozenset[str]:
    """The canonical names of the drugs in ``text``."""
    return frozenset(d.name for d in _resolve(text))


def warm_up() -> None:
    """Load the dictionary now (e.g. at server start) instead of on the first lookup."""
    _load()
