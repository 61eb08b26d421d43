"""The words of one statement, as the offline verdict (:mod:`memory_core.adjudicate`) reads
them: its label (a heading, a speaker or its subject), its normalised words and their stems, its
subject words, the drugs it names, whose fact it is, the slots and body sites it names. Pure and
cached per text: each statement of a candidate pair is read once, whatever it is paired with."""

from __future__ import annotations

import re
from functools import lru_cache

from . import drugs, labs, subjects
from .verdict_words import (
    CHANGE_WORDS,
    CONTEXT_DRUG,
    FILLERS,
    FORMULATIONS,
    NEGATIONS,
    PHRASES,
    PREDICATES,
    RESCUE_DRUGS,
    STOPWORDS,
    TIME_WORDS,
    vocab,
)

NUM = re.compile(r"^\d+(?:\.\d+)?$")

_LABEL = re.compile(r"^\s*([A-Za-z][\w .'-]{0,30}):\s+")

#: Who speaks in a transcript besides people's names.
_ROLES = vocab("user assistant agent bot patient doctor dr nurse caregiver speaker")

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def split_label(text: str) -> tuple[str, str]:
    """A leading ``Label:`` (a speaker in a transcript, "Plan:", "Allergy:") and the rest."""
    m = _LABEL.match(text)
    return (m.group(1).strip().lower(), text[m.end() :]) if m else ("", text)


@lru_cache(maxsize=65_536)
def label_kind(text: str) -> str:
    """What a leading ``Label:`` is: ``""`` (none), ``"heading"`` ("Plan:", "Allergy:"),
    ``"subject"`` (what the statement is about: "Statin myalgia:", "Nominated pharmacy:",
    "Tamsulosin:") or ``"speaker"`` (a transcript turn: "Emi:", "elise:", "User:"). A label is
    a speaker's name when it is one word or each of its words is capitalised or a role, and it
    names no drug, analyte, body site or slot of the history."""
    m = _LABEL.match(text)
    if not m:
        return ""
    raw = m.group(1).strip()
    low = raw.lower()
    if subjects.is_heading(low):
        return "heading"
    words = raw.replace(".", " ").split()
    if len(words) > 1 and not all(w[:1].isupper() or w.lower() in _ROLES for w in words):
        return "subject"  # "Statin myalgia", "Nominated pharmacy" (a one-word "elise" is a name)
    if drugs.resolve(raw) or labs.analytes(raw):
        return "subject"
    norm = norm_words(raw)
    if subjects.slots(norm) or frozenset(norm) & subjects.BODY_SITES:
        return "subject"
    return "speaker"


@lru_cache(maxsize=65_536)
def content(text: str) -> str:
    """The words a statement's subject is read from: its body, and its label too when the
    label names the subject ("Tamsulosin: two falls this week")."""
    m = _LABEL.match(text)
    if m is None:
        return text
    return f"{m.group(1)} {text[m.end() :]}" if label_kind(text) == "subject" else text[m.end() :]


def stem(w: str) -> str:
    """A crude stem: enough to match smoker / smoking, appointment / appointments."""
    w = w.removesuffix("'s")
    for suf in ("ings", "ing", "ers", "er", "ed", "es", "s"):
        if len(w) - len(suf) >= 4 and w.endswith(suf) and not w.endswith("ss"):
            return w[: -len(suf)]
    return w


@lru_cache(maxsize=65_536)
def norm_words(text: str) -> tuple[str, ...]:
    low = text.lower()
    for rx, rep in PHRASES:
        low = rx.sub(rep, low)
    low = subjects.normalise(low)
    low = re.sub(r"(\d)([a-z%])", r"\1 \2", low)  # 500mg -> 500 mg
    return tuple(_WORD.findall(low.replace("-", " ").replace("/", " ")))


@lru_cache(maxsize=65_536)
def topic(text: str) -> frozenset[str]:
    """Subject words: content words (stemmed) without change words, negations, numbers."""
    out = set()
    for w in norm_words(content(text)):
        if w in STOPWORDS or w in FILLERS or w in CHANGE_WORDS or w in NEGATIONS:
            continue
        if w in TIME_WORDS:
            continue
        if w in PREDICATES:
            continue
        if NUM.match(w) or w in labs.MONTHS:
            continue
        if w in FORMULATIONS or len(w) < 2:
            continue
        out.add(stem(w))
    return frozenset(out)


def words_of(text: str, vocab: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in norm_words(text) if w in vocab)


@lru_cache(maxsize=65_536)
def drug_names(text: str) -> frozenset[str]:
    """Canonical names of the drugs a statement is about, hyphenated words read both whole and
    split ("Lisinopril-induced"). A drug named as the setting of another ("while on
    furosemide") is left out when another remains."""
    mentions = [*drugs.resolve(text)]
    if "-" in text:
        spaced = text.replace("-", " ")
        mentions += [d for d in drugs.resolve(spaced) if d.name not in {m.name for m in mentions}]
    subject = {d.name for d in mentions if not CONTEXT_DRUG.search(text[: d.start].lower())}
    return frozenset(subject) if subject else frozenset(d.name for d in mentions)


def agents(names: frozenset[str]) -> frozenset[str]:
    """What an allergy or a reaction is to: its drugs without the rescue medicines named with
    it, unless those are all it names."""
    rest = frozenset(n for n in names if n not in RESCUE_DRUGS)
    return rest or names


def drug_words(text: str) -> frozenset[str]:
    """The stemmed words of the drug mentions in ``text`` (left out of the subject of a
    reaction or a response)."""
    out: set[str] = set()
    for d in (*drugs.resolve(text), *drugs.resolve(text.replace("-", " "))):
        out.update(stem(w) for w in _WORD.findall(d.text.lower()))
        out.update(stem(w) for w in _WORD.findall(d.name))
    return frozenset(out)


def singular(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


@lru_cache(maxsize=65_536)
def stems(text: str) -> tuple[str, ...]:
    """The stemmed words of a statement, its label aside."""
    return tuple(stem(w) for w in body(text))


@lru_cache(maxsize=65_536)
def body(text: str) -> tuple[str, ...]:
    return norm_words(content(text))


@lru_cache(maxsize=65_536)
def whose(text: str) -> str:
    return subjects.whose(body(text))


@lru_cache(maxsize=65_536)
def all_slots(text: str) -> frozenset[str]:
    """The slots a statement names, its heading's too ("Smoking status: former", "Housing:
    shelter"; the heading's words are no subject words of their own)."""
    label, _ = split_label(text)
    heading = norm_words(label) if label_kind(text) == "heading" else ()
    return subjects.slots(body(text) + heading)


@lru_cache(maxsize=65_536)
def sites(text: str) -> frozenset[str]:
    return frozenset(singular(w) for w in body(text)) & subjects.BODY_SITES
