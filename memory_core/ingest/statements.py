"""What a clause of a conversation states, by kind, when no specific rule of :mod:`.rules`
read it: plans, immunisations, procedures, diagnoses, responses to treatment, observations,
social facts, preferences, medicines named without a dose (over-the-counter and herbal ones
among them) and family history (pure).

Each kind is a mechanism over data (``lexicon/dialogue.json``): cue words matched by their
Snowball stems (so "refer", "referral" and "referring" are one cue), who may say it, and what
the facts reader must find in the clause besides the cue (a disorder, a finding, a drug). The
statement is the clause as said, turned to the third person, after the kind's label ("Plan:
refer the patient for diabetic eye screening"); its evidence is the sentence.

Whether a clause asserts anything of the patient is the assertion step's
(:func:`memory_core.facts.reader.read`): a clause in which anything named is negated,
hypothetical, uncertain, a question, reported speech, a definition or another person's is
not the patient's fact -- and neither is one with a hedge ("we might", "think about", "if"):
a suggestion or something to consider is not a decision. A clause whose subject is a relative
and that names a disorder is family history (``whose`` "family history"), never the patient's
condition.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from ..drugs import resolve
from ..facts.model import ENDED, Context, Fact, KeyKind, Role
from ..facts.reader import read
from ..lexical import forms
from .dates import told_as_done
from .dialogue import ACTS_ON_ME, Sentence

#: Contexts under which a clause states nothing of the patient now.
NOT_ASSERTED = frozenset(
    {
        Context.NEGATED,
        Context.HYPOTHETICAL,
        Context.UNCERTAIN,
        Context.OTHER_PERSON,
        Context.QUESTION,
        Context.REPORTED,
        Context.DEFINITION,
    }
)
#: A plan is a future by nature; an instruction to the patient may be one ("come back in 2
#: weeks"). Other kinds must be asserted now.
PLAN_ALLOWS = frozenset({Context.FUTURE, Context.INSTRUCTION})
FAMILY = "family history"
PATIENT = "patient"
#: Kinds a sentence the specific rules read may still state (a plan beside a dose change, a
#: response beside the change it followed); its findings and habits are the rules' items'
#: setting, not facts of their own.
DISTINCT = frozenset({"care_plan", "immunization", "procedure", "condition", "treatment_response"})
#: a finding said to be over (the sentence's words): no current observation
_RESOLVED = re.compile(
    r"\b(settled|went away|gone away|resolved|cleared up|passed|wore off|stopped now|no longer)\b",
    re.I,
)
#: Kinds a negation word in the clause undoes (a finding or condition said not to be there).
NOT_NEGATED = frozenset({"observation", "condition", "immunization", "procedure"})
#: The longest clause read as one statement, in characters.
MAX_CLAUSE = 400


@dataclass(frozen=True)
class Kind:
    type: str
    label: str
    speakers: frozenset[str]
    needs: str
    cues: tuple[tuple[str, ...], ...]  # each cue as its words' stems
    suffixes: tuple[str, ...] = ()  # endings of a word that is a cue ("-ectomy")
    plan_when: tuple[tuple[str, ...], ...] = ()  # the clinician arranging it: a plan
    pseudo: tuple[tuple[str, ...], ...] = ()  # words with a cue in them that are none
    #: a kind whose statements name another person by what they are (who may be told, who
    #: collects): read where that person is the clause's subject ("My neighbour Sue can pick
    #: up my prescriptions")
    names_others: bool = False

    def cue_at(self, stemmed: Sequence[str], words: Sequence[str]) -> int | None:
        """Where the first cue begins (a cue's stems, or a word with one of the suffixes), not
        counting a cue inside a pseudo-cue ("gone up": a dose moved, no response)."""
        if self.pseudo:
            stemmed = _masked(stemmed, self.pseudo)
        at = first_at(stemmed, self.cues) if self.first & set(stemmed) else None
        if at is None and self.suffixes:
            at = next((i for i, w in enumerate(words) if w.endswith(self.suffixes)), None)
        return at

    @property
    def first(self) -> frozenset[str]:
        return _firsts(self.cues)


def _masked(seq: Sequence[str], phrases: tuple[tuple[str, ...], ...]) -> list[str]:
    """``seq`` with the words of every phrase of ``phrases`` found in it blanked."""
    out = list(seq)
    for i in range(len(seq)):
        for p in phrases:
            if tuple(seq[i : i + len(p)]) == p:
                out[i : i + len(p)] = [""] * len(p)
    return out


@dataclass(frozen=True)
class Cues:
    kinds: tuple[Kind, ...]
    hedges: tuple[tuple[str, ...], ...]
    negations: frozenset[str]
    relatives: frozenset[str]
    others: frozenset[str]
    conditions: tuple[tuple[str, ...], ...] = ()
    plan_markers: tuple[tuple[str, ...], ...] = ()
    requests: tuple[str, ...] = ()
    attitudes: tuple[tuple[str, ...], ...] = ()  # the patient wants it ("prefer", "please")
    records: tuple[tuple[str, ...], ...] = ()  # a clinician notes it ("I'll put ... down")
    describers: frozenset[str] = frozenset()  # "my *younger* sister": still the relative
    leads: tuple[str, ...] = ()  # "*Yeah*, my mum had ...": words before an answer's subject
    family: tuple[tuple[str, ...], ...] = ()  # a question about the family ("in the family")
    hedge_exceptions: tuple[tuple[str, ...], ...] = ()  # "would like": no hedge
    declines: tuple[tuple[str, ...], ...] = ()  # "I'll skip rabies": turned down
    not_conditions: tuple[tuple[str, ...], ...] = ()  # "if that's possible", "any more"
    prefer_first: tuple[tuple[str, ...], ...] = ()  # "I'd rather ...": a preference first
    doubts: tuple[tuple[str, ...], ...] = ()  # the hedges of doubt ("maybe"), not of condition
    #: how a clinician breaks news ("I'm afraid this is ..."): no worry, the news is fact
    news: tuple[tuple[str, ...], ...] = ()


_WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")


def stems(words: Sequence[str]) -> list[str]:
    """The words' Snowball forms (the one stemmer of :mod:`memory_core.lexical`)."""
    return forms([w.replace("’", "'") for w in words])


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@cache
def dialogue_words() -> dict[str, Any]:
    """``lexicon/dialogue.json`` as written, read once (the cues below, a stay's days:
    :mod:`.stays`)."""
    raw: dict[str, Any] = json.loads(
        resources.files("memory_core")
        .joinpath("data", "lexicon", "dialogue.json")
        .read_text(encoding="utf-8")
    )
    return raw


@cache
def cues() -> Cues:
    raw = dialogue_words()

    def phrases(items: Sequence[str]) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(stems(words_of(p))) for p in items if words_of(p))

    kinds = tuple(
        Kind(
            k["type"],
            k["label"],
            frozenset(k["speakers"]),
            k["needs"],
            phrases(k["cues"]),
            tuple(k.get("suffixes", ())),
            phrases(k.get("plan_when", ())),
            phrases(k.get("pseudo", ())),
            bool(k.get("names_others", False)),
        )
        for k in raw["kinds"]
    )
    return Cues(
        kinds,
        phrases(raw["hedges"]),
        frozenset(raw["negations"]),
        frozenset(raw["relatives"]),
        frozenset(raw["others"]),
        phrases(raw["conditions"]),
        phrases(raw["plan_markers"]),
        tuple(raw["requests"]),
        phrases(raw["attitudes"]),
        phrases(raw["records"]),
        frozenset(raw["relative_describers"]),
        tuple(raw["answer_leads"]),
        phrases(raw["family_cues"]),
        phrases(raw["hedge_exceptions"]),
        phrases(raw["declines"]),
        phrases(raw["not_conditions"]),
        phrases(raw["preference_first"]),
        phrases(raw["doubts"]),
        phrases(raw["news"]),
    )


@cache
def _plan_kind() -> Kind:
    """The kind a clause the clinician arranges is proposed as: the plan."""
    return next(k for k in cues().kinds if k.type == "care_plan")


@cache
def _firsts(phrases: tuple[tuple[str, ...], ...]) -> frozenset[str]:
    return frozenset(p[0] for p in phrases)


@cache
def _by_first(phrases: tuple[tuple[str, ...], ...]) -> dict[str, tuple[tuple[str, ...], ...]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    for p in phrases:
        out.setdefault(p[0], []).append(p)
    return {k: tuple(v) for k, v in out.items()}


def any_phrase(seq: Sequence[str], phrases: tuple[tuple[str, ...], ...]) -> bool:
    """Whether any phrase (stems) occurs in ``seq``: linear in the clause's words."""
    return first_at(seq, phrases) is not None


def first_at(seq: Sequence[str], phrases: tuple[tuple[str, ...], ...]) -> int | None:
    """Where the first phrase (stems) of ``phrases`` begins in ``seq``, or None."""
    index = _by_first(phrases)
    for i, w in enumerate(seq):
        for p in index.get(w, ()):
            if tuple(seq[i : i + len(p)]) == p:
                return i
    return None


_ASKED = re.compile(
    r"^(?:(?:and|so|now|okay|right),?\s+)?(?:have|has|had|did|do|does|are|is|were|was)\s+"
    r"(you|he|she)\s+(?:(?:ever|already|still|also)\s+)?",
    re.I,
)


#: a question said as a statement ("So you're living alone now?", "You're still on the
#: 40 mg?"): its subject opens it
_DECLARED_Q = re.compile(
    r"^(?:(?:and|so|now|okay|right),?\s+)?(?:(?:since|after|now that|with)\b[^,?]{0,80},\s+)?"
    r"((?:you|you're|youre|he|he's|she|she's)\b.*)$",
    re.I,
)  # "Now, since your husband went into the nursing home, you're living alone?"


#: a name the question ends by calling ("..., Edna?"): whom it is asked of, not what it asks
_VOCATIVE_END = re.compile(r",\s*[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)?\s*\?\s*$")


def as_statement(question: str) -> str | None:
    """A yes/no question as the statement a "yes" confirms ("Have you had your flu jab this
    year?" -> "You had your flu jab this year."; "So you're living alone now, Edna?" -> "You're
    living alone now."); None for another question."""
    question = _VOCATIVE_END.sub("?", question)
    m = _ASKED.match(question.strip())
    if m is None:
        said = _DECLARED_Q.match(question.strip().rstrip(" ?"))
        return f"{said.group(1)[:1].upper()}{said.group(1)[1:]}." if said else None
    rest = question.strip()[m.end() :].rstrip(" ?")
    return f"{m.group(1).capitalize()} {rest}." if rest else None


def as_request(text: str) -> str | None:
    """A clinician's question that asks for something done ("Can you keep checking lying and
    standing pressures each morning?"), as the instruction it is; None for another question."""
    low = text.lower().strip()
    for r in cues().requests:
        m = re.match(rf"^(?:[\w']+,\s*)?(?:\w+\s+){{0,2}}?{re.escape(r)}\s+(?:please\s+)?", low)
        if m:
            rest = text.strip()[m.end() :].rstrip(" ?")
            return rest[:1].upper() + rest[1:] + "." if rest else None
    return None


def has_phrase(seq: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return any(tuple(seq[i : i + n]) == tuple(phrase) for i in range(len(seq) - n + 1))


def hedged(text: str, unless: tuple[tuple[str, ...], ...] = ()) -> bool:
    """A suggestion, something to consider or a condition: no decision (the hedges of
    ``unless`` left out)."""
    st = _masked(stems(words_of(text)), cues().not_conditions + unless)  # "if that's possible"
    for ex in cues().hedge_exceptions:  # "What I would like is to refer you": a decision
        while (at := first_at(st, (ex,))) is not None:
            st[at : at + len(ex)] = ["\0"]
    return any_phrase(st, cues().hedges)


def hedged_drug(text: str, who: str) -> bool:
    """Whether a hedge governs a clause's drugs. A doubt the patient's side says after the last
    drug, in a clause of its own, is of how much or how often, not of whether they take it
    ("I take melatonin most nights, perhaps five nights out of seven"); any other hedge -- a
    condition, the clinician's "maybe", a doubt before the drug -- governs them."""
    whole = hedged(text)
    if who == "clinician" or not whole:
        return whole  # the parts are read for drugs only where a doubt may be set apart
    parts = re.split(r"(?<=[,;])", text)
    drugs = [i for i, p in enumerate(parts) if _drug(p)]
    if not drugs:
        return True
    head, tail = "".join(parts[: drugs[-1] + 1]), "".join(parts[drugs[-1] + 1 :])
    return hedged(head) or hedged(tail, unless=cues().doubts)


def _arranged_after(said: str, kind: Kind) -> bool:
    """A plan arranged in a clause joined after the drugs a sentence names ("start the CBT, and
    I'll see you again in 8 weeks"): that clause has a plan's cue and a marker of its
    arranging, so the start is not what the plan defers ("We will switch you to apixaban at
    the next review" is one clause: the switch is what waits)."""
    named = resolve(said)
    joined = JOINED.search(said, max(d.end for d in named)) if named else None
    tail = stems(words_of(said[joined.start() :])) if joined else []
    return any_phrase(tail, kind.cues) and any_phrase(tail, cues().plan_markers)


#: a clause joined after another, with its own subject or verb (", and I'll see you", ", then
#: recheck", ", and then")
JOINED = re.compile(r",\s+(?:and|then|and then)\s+")


#: a drug a plan would start or change later ("review in 3 months and start a statin")
_DEFERRED_DRUG = re.compile(
    r"\b(start\w*|begin|add\w*|increas\w*|try\w*|switch\w*|put (?:you|him|her) on)\b", re.I
)


def _deferred(said: str) -> bool:
    """A drug a plan would start or change later: a drug named and a verb of starting or
    changing ("review in 3 months and start a statin") -- not a verb after every drug whose
    object is a pronoun for them, which says when to use what is given ("a rescue pack,
    steroids and antibiotics, with a plan for when to start them")."""
    if not _drug(said):
        return False
    named = resolve(said)
    last = max((d.end for d in named), default=0)
    return any(
        not (m.start() >= last and _THEM.match(said, m.end()))
        and not _TIME_TOLD.search(said, 0, m.start())  # "two weeks after starting the X"
        for m in _DEFERRED_DRUG.finditer(said)
    )


#: The words before a verb of starting or stopping that make it a time, no act ("two weeks
#: after starting the ramipril", "since stopping it").
TIME_TOLD_BY = r"(?:after|before|since|until|till)"
_TIME_TOLD = re.compile(rf"\b{TIME_TOLD_BY}\s+$", re.I)


#: a pronoun object for drugs named before ("start them", "start it")
_THEM = re.compile(r"\s+(?:them|it)\b", re.I)


#: a condition of a plan's use, said after it ("a rescue pack ..., so you can start them
#: straight away if you flare up")
_USE_IF = re.compile(r",?\s+\b(?:if (?:you|she|he|they)|in case)\b", re.I)
#: a plan's purpose after it ("to see how you're managing without the naproxen"): what it
#: names is not the plan, nor asserted by it
_PURPOSE = re.compile(
    r",?\s+\b(?:to (?:see|check|find out) (?:how|if|whether|what)|so (?:that|we can))\b", re.I
)


def _until_condition(text: str) -> str:
    """A plan's words up to a condition after it ("if", "whether", "unless", "in case")."""
    m = re.search(r",?\s+\b(?:if|whether|unless|in case|should)\b", text, re.I)
    return text[: m.start()] if m and m.start() > 8 else text


#: a medicine the patient takes, said by them ("I take", "I'm on", "I bought"), by whoever
#: speaks for them ("she's on", "Mum takes") or by the clinician deciding ("you're on", "I'll
#: start you on", "keep taking")
_OWN_MEDICINE = re.compile(
    r"\b(?:i|i'm|i've|i've been|we|she|he|she's|he's|mum|dad|you|you're|you've|the patient|"
    r"they|they're|they've)\b(?:\s+\w+){0,3}?\s+(?:take|takes|taking|took|use|uses|using|on|"
    r"bought|buy|started|start|stopped|stop|prescrib\w*|continue|keep)\b|\b(?:keep|carry on)"
    r" taking\b|\bi'll (?:start|prescribe|stop|add)\b"
    r"|\b(?:carry on|carrying on|continue) with\b|\bfine to (?:carry on|continue|keep taking)\b",
    re.I,
)  # ... and the clinician letting it stand ("carry on with the senna", "it's fine to continue")


# --- clauses -----------------------------------------------------------------------------------
#: where a sentence's clauses part: a semicolon, a dash, "but", and ", and" or ", so" before a
#: subject of its own ("It may heal slowly, so I'm referring you ...": the referral is no
#: hedge's)
_CLAUSE_CUT = re.compile(
    r";|\s[-–—]\s|,?\s+but\s+|,\s+and\s+(?=(?:i|you|we|she|he|they|it)\b)"
    r"|,\s+so\s+(?=(?:[Ii]|[Ii]'m|[Ii]'ll|you|we|she|he|they|it)\b)"
    r"|,\s+(?=no\s+\w)"  # "healed well, no redness or gaps": the findings denied are apart
)
#: a comma before a new subject ("they", "we") and its verb: "I'll refer you to the physio,
#: they'll give you exercises and maybe a belt" -- the second's hedge is not the referral's
#: (unless a condition opened the clause: "if the tablets don't work, we can arrange one")
_NEW_SUBJECT = re.compile(
    r",\s+(?=(?:they|we)(?:'(?:ll|re|ve|d|s)|\s+(?:will|are|have|can|could|would|"
    r"should|might|may)\b))",
    re.I,
)


#: words a clinician may open a heading with ("Now, smoking.", "Right, alcohol.")
_HEADING_LEADS = frozenset({"now", "so", "and", "right", "ok", "okay", "next", "then", "well"})


def _start(m: re.Match[str]) -> int:
    return m.start()


def clauses(s: Sentence) -> list[tuple[int, int]]:
    """The clauses of a sentence as offsets into ``s.text``."""
    out, at = [], 0
    cuts = sorted([*_CLAUSE_CUT.finditer(s.text), *_NEW_SUBJECT.finditer(s.text)], key=_start)
    for m in cuts:
        if m.start() < at:
            continue
        if m.re is _NEW_SUBJECT and any_phrase(
            stems(words_of(s.text[at : m.start()])), cues().conditions
        ):
            continue
        out.append((at, m.start()))
        at = m.end()
    out.append((at, len(s.text)))
    return [(a, b) for a, b in out if re.search(r"[A-Za-z]{3}", s.text[a:b])]


_THIRD = (
    (r"\bI'm\b", "they are"),
    (r"\bI am\b", "they are"),
    (r"\bI've\b", "they have"),
    (r"\bI'd\b", "they would"),
    (r"\bI'll\b", "they will"),
    (r"\bI was\b", "they were"),
    (r"\bI\b", "they"),
    (r"\bme\b", "them"),
    (r"\bmy\b", "their"),
    (r"\bmine\b", "theirs"),
    (r"\bmyself\b", "themself"),
)
_CLINICIAN = (
    (r"\byou're\b", "the patient is"),
    (r"\byou are\b", "the patient is"),
    (r"\byou were\b", "the patient was"),
    (r"\byou've\b", "the patient has"),
    (r"\byou'll\b", "the patient will"),
    (r"\byour\b", "the patient's"),
    (r"\byourself\b", "themself"),
    (r"\byou\b", "the patient"),
)


def third_person(text: str, speaker: str, relation: str) -> str:
    """The clause as a statement about the patient: a patient's "I" is the patient; a
    clinician's "you" is the patient (their own "I" stays theirs); a relative's "me" and "my"
    are the relative ("She moved in with their daughter")."""
    text = re.sub(r"\s+", " ", text.replace("’", "'")).strip(" ,;:-—.")
    text = re.sub(r"^(?:(?:yes|yeah|no|ok|okay|so|and|but|well|oh|right|um|er|exactly)\b[,.]?\s*)+",
                  "", text, flags=re.I)  # fmt: skip
    if speaker == "clinician":
        for pat, rep in _CLINICIAN:
            text = re.sub(pat, rep, text, flags=re.I)
        text = _PATIENT_VERB.sub(lambda m: f"{m.group(1)} {_agrees(m.group(2))}", text)
    elif not relation:
        for pat, rep in _THIRD:
            text = re.sub(pat, rep, text, flags=re.I)
    else:  # a relative's "me" and "my" are the relative ("she moved in with me")
        text = re.sub(r"\bme\b", f"their {relation}", text, flags=re.I)
        text = re.sub(r"\bmy\b", f"their {relation}'s", text, flags=re.I)
    return text[:1].upper() + text[1:] if text else text


#: "the patient" and the word after it, which agrees with it ("the patient live" -> "lives")
_PATIENT_VERB = re.compile(r"\b(the patient) ([a-z]+)\b")
_MODALS = frozenset({"can", "could", "will", "would", "shall", "should", "may", "might", "must"})


@lru_cache(maxsize=4096)
def _agrees(word: str) -> str:
    """A verb's form after "the patient" ("live" -> "lives", "have" -> "has"); any other word
    as it is (lemminflect: a word that is a verb's base form)."""
    from lemminflect import getAllLemmas, getInflection

    lemmas = getAllLemmas(word)
    if word in _MODALS or "VERB" not in lemmas or lemmas["VERB"][0] != word:
        return word
    third = getInflection(word, tag="VBZ")
    return third[0] if third else word


# --- about whom ---------------------------------------------------------------------------------
_FIRST_SUBJECT = re.compile(
    r"^(?:\W*(?:and|but|so|well|oh|also|yes|no)\b)*\W*(i|i'm|i've|i'd|my|me)\b", re.I
)


def relative_subject(text: str, relation: str) -> str | None:
    """The relative a clause is about as its subject ("my mother had diabetes", "his brother
    is on dialysis", "Mum's sister"), or None. A proxy's "my mum" is the patient."""
    from .dialogue import _PATIENT_AS, KIN_NAMES

    c = cues()
    ws = words_of(text)
    for i, word in enumerate(ws[:8]):
        w = word.removesuffix("'s").removesuffix("’s")  # "my mum's had", "Mum's sister"
        if w != word and i > 1 and ws[i - 2] in _AT_PLACE:
            continue  # "I'm at my brother's now": a place, not the clause's subject
        before = ws[i - 2] if i > 1 and ws[i - 1] in c.describers else ws[i - 1] if i else ""
        if i > 1 and before in _POSSESSIVES and ws[i - 2] in _OBJECT_OF:
            continue  # "a carer for your mother", "I live with my son": no subject
        named = w in KIN_NAMES and set(ws[:i]) <= set(c.leads)  # "And Mum had angina"
        if w in c.relatives and (i == 0 or before in _POSSESSIVES or named):
            if w != word and i + 1 < len(ws) and ws[i + 1] in c.relatives:
                return f"{w}'s {ws[i + 1]}"  # a relative's relative: "Mum's sister"
            mine = i == 0 or named or before in ("my", "our")  # not "her mother": the patient's
            if relation and w in _PATIENT_AS.get(relation, ()) and mine:
                continue  # the proxy's "my mum": the patient
            return w
    return None


_POSSESSIVES = frozenset({"my", "his", "her", "their", "your", "our", "the", "a"})
#: prepositions whose object a relative is, not the clause's subject
_OBJECT_OF = frozenset({"for", "with", "to", "at", "from", "by", "into", "after"})
#: words before "my brother's" that make it a place ("at my brother's", "round to my mum's")
_AT_PLACE = frozenset({"at", "to", "from", "round", "over", "near", "in", "into", "by", "with"})

_THIRD_PERSON = re.compile(r"\b(?:he|she|he's|she's|his|her|him|hers)\b", re.I)
_THIRD_SUBJECT = re.compile(r"\b(?:he|she|he's|she's)\b", re.I)
#: the speaker's own words: a sentence about themself
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|my|me|we|we're|our)\b", re.I)
_NAME = re.compile(
    r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})(?:'s|’s|\s+(?:who|is|has|takes|was|had|gets|uses)\b)"
)
_NOT_NAMES = frozenset(
    {"The", "This", "That", "Then", "And", "But", "Yes", "Hello", "Thanks", "Okay", "Doctor",
     "Nurse", "Patient", "Mum", "Dad", "Sorry", "Please", "Well", "Just", "Also", "Monday",
     "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February",
     "March", "April", "June", "July", "August", "September", "October", "November",
     "December", "Christmas", "Easter", "There", "Here", "What", "When", "It's", "That's"}
)  # fmt: skip


def names_other(text: str, patient_name: str | tuple[str, ...] | None) -> bool:
    """A person named by a given name as a clause's actor ("Kwame's on the Mounjaro",
    "Jamie who lives next door"), not the patient."""
    from .. import drugs

    found = drugs.resolve(text)
    drug_words = {m.text for m in found}
    own = (patient_name,) if isinstance(patient_name, str) else (patient_name or ())
    feasts = [m.span() for m in _feasts().finditer(text.lower())]
    for m in _NAME.finditer(text):
        w = m.group(1)
        if w in _NOT_NAMES or w in own or w in drug_words:
            continue
        if any(d.start <= m.start(1) < d.end for d in found):
            continue  # a word of a drug's name ("St John's wort")
        if any(a <= m.start(1) < b for a, b in feasts):
            continue  # a word of a holiday's name ("New Year's Day", "St Patrick's Day")
        if w.lower() in _condition_words(text):
            continue  # a word of a condition's name ("Alzheimer's disease", "Crohn's")
        if _CLINICIAN_TITLE.search(text, 0, m.start()):
            continue  # "Dr Lindqvist's locum": a clinician, whose care is the patient's
        return True
    return False


#: a given name opening a sentence as its actor ("Kiera's got chickenpox", "Tomasz threw up")
_NAME_FIRST = re.compile(
    r"^\W*([A-Z][a-z]{2,})(?:(?:'s|’s)\s+(?:got|been|had|gone|on|in|off|not|taking|having|"
    r"started|stopped|doing|feeling|back|home|ill|poorly|sick|unwell|better|worse|still|also|"
    r"just)|\s+(?:is|was|has|had|got|gets|threw|takes|took|uses|used|needs|went|came|started|"
    r"stopped|keeps|kept))\b"
)  # "'s" as is or has, not a possession ("Kim's office", a title split off before it)


def _named_first(text: str, patient_name: str | tuple[str, ...] | None) -> bool:
    """Whether a clause opens with a given name as its actor, in the patient's own words: a
    capitalised word no English dictionary has (lemminflect's), not the patient's name, a
    medicine's or a condition's ("Sugar's been high" is the patient's)."""
    from ..drugs import english, resolve

    m = _NAME_FIRST.match(text)
    if m is None:
        return False
    w = m.group(1)
    own = (patient_name,) if isinstance(patient_name, str) else (patient_name or ())
    if w in own or w in _NOT_NAMES or english(w.lower()):
        return False
    medicine = any(d.start == m.start(1) for d in resolve(text))
    return not medicine and w.lower() not in _condition_words(text)


@cache
def _feasts() -> re.Pattern[str]:
    """The names of the holidays the date reader reads ("new year's day", "easter monday")."""
    from .dates import EASTER_DAYS, HOLIDAYS

    names = sorted((*HOLIDAYS, *EASTER_DAYS), key=len, reverse=True)
    return re.compile(rf"\b(?:{'|'.join(map(re.escape, names))})\b")


def _condition_words(text: str) -> frozenset[str]:
    """The words of the conditions a sentence names, lower case."""
    return frozenset(
        w.removesuffix("'s").removesuffix("’s")
        for f in read(text, "condition").facts
        if f.kind is KeyKind.CONDITION
        for w in words_of(f.text)
    )


#: a clinician's title just before a name
_CLINICIAN_TITLE = re.compile(
    r"\b(?:dr|doctor|nurse|prof|professor|midwife|pharmacist|consultant|surgeon)\.?\s+$", re.I
)


@cache
def _relatives_own() -> re.Pattern[str]:
    """A relative's own thing, or something for them ("my wife's tablets", "for my husband"):
    the people of ``dialogue.json`` (relatives and others), longest first."""
    c = cues()
    people = "|".join(
        re.escape(w).replace(r"\-", "[- ]")
        for w in sorted(c.relatives | c.others, key=len, reverse=True)
    )
    return re.compile(
        rf"(?<!\bat )(?<!\bto )(?<!\bfrom )(?<!\bin )\b(?:my|his|her|your|our|the) (?:{people})"
        rf"(?:'s|’s)\s(?!(?:house|home|place|flat|birth|wedding|funeral|christening|"
        rf"graduation|birthday|party)\b)|\bfor (?:my|his|her|your|our) "
        rf"(?:{people})\b",
        re.I,
    )


#: the patient named by whoever speaks for them
_PATIENT_REF = re.compile(r"\b(?:she|he|she's|he's|her|him|his)\b", re.I)


def third_party(
    text: str, speaker: str, relation: str, patient_name: str | tuple[str, ...] | None
) -> bool:
    """Whether a clause is about someone other than the patient: in the patient's own mouth a
    "he"/"she" or a given name with no "I" before it; in anyone's, a given name that is not
    the patient's as its actor, or a relative's possession ("my wife's tablets", "the ones I
    collect for my husband")."""
    if names_other(text, patient_name):
        return True
    caring = _CARING.search(text)  # "a carer for your mother": the patient's own role
    if (
        _relatives_own().search(text)
        and not (relation and _PATIENT_REF.search(text))
        and not caring
    ):
        return True
    if speaker == "patient" and not relation:
        if ACTS_ON_ME.search(text.lower()):
            return False  # "She said it looked infected and put me on flucloxacillin"
        if _THIRD_SUBJECT.search(text):
            return True  # "she's on the alendronate", said by her husband
        if _named_first(text, patient_name):
            return True  # "Kiera's got chickenpox now": someone the patient names
        third = _THIRD_PERSON.search(text)
        first = FIRST_PERSON.search(text)
        if third is None:
            return False
        return first is None or third.start() < first.start()
    return False


#: caring for someone ("an unpaid carer for your mother", "I look after my husband"): the
#: carer's own social fact, though it names the one cared for
_CARING = re.compile(
    r"\b(?:carer|caring|care for|cares for|look(?:s|ing)? after|looked after|do everything for)"
    r"\b",
    re.I,
)


#: a treatment given to the speaker ("they gave me", "put me on"): a relative's own, when they
#: speak (and nothing in it is the patient's)
_GIVEN_ME = re.compile(r"\b(?:gave|give|given|giving|prescribed|put|started|switched)\s+me\b", re.I)


#: the speaker as the one it is about ("I'm on lisinopril myself", "for my own stomach",
#: "That's me, I'm the one allergic to latex")
_MYSELF = re.compile(
    r"\b(?:myself|my own|(?:that|it)(?:['’]s| is| was) me|i(?:['’]m| am) the one)\b", re.I
)


#: the patient named only to be ruled out ("I'm the one allergic to latex, not Mum")
_NOT_THEM = re.compile(r"\b(?:not|rather than|instead of)\s+\w+", re.IGNORECASE)


#: "my", a word or two, then where a thing's name begins ("my asthma", "my thyroid tablet",
#: "my own back pain")
_MY_BEFORE = re.compile(r"\bmy (?:[\w'-]+ ){0,2}$", re.I)


def _my_thing(text: str) -> bool:
    """Whether a disorder or a drug the clause names is the speaker's ("The smoke used to set
    off my asthma"): in a relative's mouth, theirs whatever the subject."""
    low = text.lower()
    for kind, mtype in ((KeyKind.CONDITION, "condition"), (KeyKind.DRUG, "medication")):
        for f in read(text, mtype).facts:
            at = low.find(f.text.lower()) if f.kind is kind and f.text else -1
            if at > 0 and _MY_BEFORE.search(low[:at]):
                return True
    return False


def proxy_self(text: str, relation: str) -> bool:
    """A relative speaking of themself ("I'm allergic to penicillin", said by the daughter),
    not of the patient ("I give her the donepezil at night")."""
    from .dialogue import _PATIENT_AS

    if not relation:
        return False
    if (
        _FIRST_SUBJECT.match(text.strip()) is None
        and not _GIVEN_ME.search(text)
        and not _MYSELF.search(text)
        and not _my_thing(text)
    ):
        return False  # "They gave me co-codamol after my operation": given to the speaker
    ws = set(words_of(_NOT_THEM.sub(" ", text)))  # "..., not Mum": the patient ruled out
    patient_words = {
        "she",
        "he",
        "her",
        "him",
        "his",
        "she's",
        "he's",
        *_PATIENT_AS.get(relation, ()),
    }
    return not (ws & patient_words)


# --- reading one clause -------------------------------------------------------------------------
@dataclass(frozen=True)
class Stated:
    type: str
    content: str
    start: int  # offsets into the sentence
    end: int
    whose: str = PATIENT


def _blocked(contexts: frozenset[Context], mtype: str) -> bool:
    bad = NOT_ASSERTED if mtype != "care_plan" else NOT_ASSERTED - {Context.REPORTED}
    if mtype != "care_plan":
        bad = bad | {Context.FUTURE}
    return bool(contexts & bad)


def _counted(text: str) -> bool:
    """The clause counts an amount ("about fourteen units a week now, ... and nothing in the
    week"): what it denies is part of the amount, not the habit."""
    from ..facts.lexicon import lexicon

    numbers = lexicon().number_words
    return any(w[:1].isdigit() or w in numbers for w in words_of(text))


def as_patient(text: str, relation: str, pronoun: str = "") -> str:
    """A proxy's words with the patient named as the patient ("My mum has had a chest
    infection", said by the daughter of a patient "she": "The patient has had a chest
    infection"), for the facts reader, which reads "my mum" as another person; any other
    speaker's as they are -- and a son's or daughter's where the patient's sex is not known
    (their "dad" may be the patient's husband)."""
    from ..facts.lexicon import lexicon
    from .dialogue import _PATIENT_AS

    words = _PATIENT_AS.get(relation, ())
    if relation in ("son", "daughter"):  # the parent of the patient's sex (assertion.json)
        words = tuple(w for w in words if w in lexicon().relatives_by_pronoun.get(pronoun, ()))
    if not words:
        return text
    kin = "|".join(words)
    return re.sub(
        rf"\b(?:(?:my|our)\s+)?(?:{kin})(?P<own>'s|’s)?\b",
        lambda m: "the patient's" if m.group("own") else "the patient",
        text,
        flags=re.I,
    )


def _declined(text: str, st: Sequence[str]) -> bool:
    """A clause that turns something down ("a miss", "don't want", "rather not"), of the patient
    and said as a fact: nothing in it another person's, asked, hypothetical or reported (a
    negation is the decline's own)."""
    if not any_phrase(st, cues().declines):
        return False
    others = {Context.OTHER_PERSON, Context.QUESTION, Context.HYPOTHETICAL, Context.REPORTED}
    return not any(f.contexts & others for f in read(text, "preference").facts)


def _kinds_found(text: str, mtype: str) -> tuple[set[KeyKind], bool]:
    """The kinds of things the reader finds in the clause, and whether anything named is not
    asserted of the patient now."""
    facts = read(text, mtype).facts
    found = {f.kind for f in facts}
    blocked = any(_blocked(f.contexts, mtype) for f in facts)
    return found, blocked


def _disorder(text: str) -> bool:
    return bool(disorders_named(text))


def _had_as_illness(text: str) -> bool:
    """Whether a disease a vaccine is named by is said as an illness had ("I had pneumonia in
    March", "I've had the flu all week", "it's shingles"): a verb of having it right before
    it, and no vaccine word (words.json's ``vaccine_words``) nor "the ... one" in the clause
    ("I had my shingles jab", "the COVID one")."""
    from ..facts.lexicon import lexicon

    said = set(words_of(text))
    if said & (lexicon().vaccine_words | {"one", "ones"}):
        return False
    low = text.lower()
    for name in disorders_named(text):
        at = low.find(name.lower())
        after = low[at + len(name) :]
        if at > 0 and _ILL_WITH.search(low, 0, at) and not _SEASON.match(after):
            return True
    return False


#: a disease's name that qualifies what follows ("flu season", "the flu clinic"): no illness
_SEASON = re.compile(r"\s+(?:season|clinic|campaign)\b")


#: a verb of having an illness, right before its name ("had the flu", "it's shingles")
_ILL_WITH = re.compile(
    r"\b(?:had|got|caught|has|have|having|with|it's|it is|diagnosed with|positive for|"
    r"recovering from|getting over)\s+(?:(?:the|a|bad|a bad|really bad)\s+)?$"
)


def disorders_named(text: str) -> tuple[str, ...]:
    """The disorders a sentence names (not findings, not a clinic's name: "fracture clinic"),
    as written."""
    from ..facts.lexicon import lexicon

    lex = lexicon()
    out: list[str] = []
    for f in read(text, "condition").facts:
        if f.kind is KeyKind.CONDITION and f.role is not Role.MENTION:
            c = lex.concepts.get(f.name)
            if c is not None and c.kind != "finding" and f.text not in out:
                out.append(f.text or f.name)
    return tuple(out)


def asks_of_family(text: str) -> tuple[str, ...]:
    """The disorders a question about the family asks of ("Does anyone in your family have
    diabetes?", "Any history of bowel cancer in the family?"); () for any other sentence."""
    present = stems(words_of(text))
    if not any(has_phrase(present, cue) for cue in cues().family):
        return ()
    return disorders_named(text)


#: what may follow a relative named in answer, before the sentence or clause ends ("My uncle
#: did", "my grandad too", "my mum as well")
_ANSWER_FILLERS = frozenset(
    {"did", "does", "has", "had", "have", "it", "that", "too", "also", "both", "as", "well"}
)


def relative_answered(text: str, relation: str) -> str | None:
    """The relative an answer names and says nothing more of ("Yes, my mum.", "My uncle did,
    he was sixty.", "And my grandad too."): the words up to the first comma or the end are
    answer words, the relative and words that only confirm; a negation anywhere or anything
    said of them ("My mum's fine") is no such answer."""
    c = cues()
    low = text.lower()
    lead = re.match(rf"^(?:\W*\b(?:{'|'.join(map(re.escape, c.leads))})\b)*\W*", low)
    head = re.split(r"[,;:.!?]", low[lead.end() if lead else 0 :], maxsplit=1)[0]
    ws = words_of(head)
    if not ws or set(words_of(text)) & (c.negations | _WELL):
        return None
    rel = relative_subject(head, relation)
    if rel is None or "'" in rel:
        return None
    at = next(i for i, w in enumerate(ws) if w.removesuffix("'s") == rel)
    before = set(ws[:at]) - set(c.leads) - _POSSESSIVES - c.describers
    if before or ws[at] != rel or not set(ws[at + 1 :]) <= _ANSWER_FILLERS:
        return None
    return rel


#: words that say a relative is well: no answer of a disorder
_WELL = frozenset({"fine", "healthy", "okay", "ok", "alright"})


def _finding(text: str) -> bool:
    return any(f.kind is KeyKind.CONDITION for f in read(text, "observation").facts)


def _drug(text: str) -> bool:
    return any(f.kind is KeyKind.DRUG for f in read(text, "medication").facts)


#: a treatment named by what it is to the patient, not its name ("since the higher dose", "on the
#: new tablets"): what a response is to
_TREATMENT = re.compile(
    r"\b(?:the|this|that|my|his|her|new|higher|lower|increased|reduced|extra)\s+(?:dose|tablets?|"
    r"pills?|medication|medicine|meds|injections?|inhalers?|treatment)\b",
    re.I,
)


def _needs(need: str, text: str, kind_cue: bool, st: Sequence[str]) -> bool:
    """Whether a clause (``text``, its word stems ``st``) carries what a kind needs besides
    its cue."""
    if need == "any":
        return kind_cue
    if need == "condition":
        return _disorder(text)
    if need == "drug_or_finding":
        return kind_cue and (_drug(text) or _finding(text) or _TREATMENT.search(text) is not None)
    if need == "finding_or_cue":
        return kind_cue or _finding(text)
    if need == "attitude":  # a time or a channel named is a preference only when wanted
        return kind_cue and any_phrase(st, cues().attitudes)
    if need == "recorded":  # a clinician noting the patient's preference
        return kind_cue and any_phrase(st, cues().records)
    if need == "ahead":  # a booking the patient tells of: a day to come, not one gone by
        return kind_cue and _AHEAD.search(text) is not None and not told_as_done(text)
    return kind_cue


#: a day to come, as a booking is told of ("on Monday the 9th", "next Thursday", "tomorrow",
#: "in two weeks", "on the 17th")
_AHEAD = re.compile(
    r"\b(?:on (?:the )?\d{1,2}(?:st|nd|rd|th)?\b|on (?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|(?:next|this coming) (?:week|month|\w+day)|tomorrow|in (?:a|one|two|three|four|five|six|"
    r"\d+) (?:days?|weeks?|months?)|(?:for|on) (?:the )?(?:\d{1,2}(?:st|nd|rd|th)?|first|second|"
    r"third|\w+teenth|twentieth|twenty-\w+|thirtieth) of)",
    re.I,
)


def family_history(s: Sentence, named: str = "") -> Iterator[Stated]:
    """A relative's disorder, as family history (the relative named; ``named``: the relative
    the turn named just before, whom a "she" or "he" opening the clause stands for -- "My
    sister, in Lisbon. She has breast cancer.")."""
    for a, b in clauses(s) or [(0, len(s.text))]:
        text = s.text[a:b]
        rel = relative_subject(text, s.relation)
        if rel is None and named and _PRONOUN_OPENS.match(text):
            rel = named
        treated = None if _disorder(text) else _lasting_treatment(text)
        if rel is None or not (_disorder(text) or treated is not None):
            continue
        if hedged(text):
            continue
        body = third_person(text, s.speaker, s.relation)
        said = f" ({treated})" if treated else ""  # "a triple bypass (coronary heart disease)"
        yield Stated("condition", f"Family history ({rel}): {body}{said}", a, b, FAMILY)


def _lasting_treatment(text: str) -> str | None:
    """The disorder a treatment named in ``text`` says a person has (dialogue.json's
    ``lasting_treatments``: "my brother has dialysis" -- kidney failure, "a triple bypass" --
    coronary heart disease); "" for one that says no disorder the lexicon names (a pacemaker),
    None where none is named."""
    m = _lasting_pattern().search(text)
    return None if m is None else dialogue_words()["lasting_treatments"][m.group(0).lower()]


@cache
def _lasting_pattern() -> re.Pattern[str]:
    """dialogue.json's ``lasting_treatments`` as one pattern, longest first, built once."""
    names = sorted(dialogue_words()["lasting_treatments"], key=len, reverse=True)
    return re.compile(rf"\b(?:{'|'.join(map(re.escape, names))})\b", re.I)


#: a clause that opens with "she" or "he" (after a few lead words): its subject is a person
#: named before
_PRONOUN_OPENS = re.compile(
    r"^\W*(?:(?:and|but|so|well|yes|yeah|no)\W+)*(?:[\w' ]{0,30},\s*)?(?:she|he|she's|he's)\b", re.I
)


def stated(
    s: Sentence,
    *,
    done_types: frozenset[str],
    drugs_done: bool,
    patient_name: str | tuple[str, ...] | None = None,
    skip: frozenset[str] = frozenset(),
    pronoun: str = "",
    others_only: bool = False,
) -> Iterator[Stated]:
    """The kinds of statement a sentence's clauses make of the patient (first kind whose cues
    and needs a clause carries), skipping types the specific rules already read from it and
    the kinds ``skip`` names (a confirmed question's plan: the question's words are no plan);
    ``pronoun``: "she" or "he" where the patient's title says, which tells which parent a
    son's or daughter's "my mum" / "my dad" is; ``others_only``: only the kinds that name
    another person by what they are (a sentence about someone else: who may be told)."""
    return iter(
        _stated(
            s.text,
            s.speaker,
            s.relation,
            done_types,
            drugs_done,
            patient_name,
            skip,
            s.listed,
            pronoun,
            others_only,
        )
    )


@lru_cache(maxsize=4096)
def _stated(
    text_: str,
    speaker: str,
    relation: str,
    done_types: frozenset[str],
    drugs_done: bool,
    patient_name: str | tuple[str, ...] | None,
    skip: frozenset[str] = frozenset(),
    listed: bool = False,
    pronoun: str = "",
    others_only: bool = False,
) -> tuple[Stated, ...]:
    """:func:`stated` of one sentence's words (pure, so a sentence said again is read once)."""
    s = Sentence(text_, 0, len(text_), speaker, relation=relation, listed=listed)
    return tuple(_each(s, done_types, drugs_done, patient_name, skip, pronoun, others_only))


def _each(
    s: Sentence,
    done_types: frozenset[str],
    drugs_done: bool,
    patient_name: str | tuple[str, ...] | None,
    skip: frozenset[str] = frozenset(),
    pronoun: str = "",
    others_only: bool = False,
) -> Iterator[Stated]:
    who = "clinician" if s.speaker == "clinician" else "patient"
    for a, b in clauses(s):
        reply = _ANSWER_NO.match(s.text, a, b)
        a = reply.end() if reply and who == "patient" else a  # "No, I moved to day shifts"
        text = s.text[a:b]
        if b - a > MAX_CLAUSE:
            continue  # no clause of one statement is this long (an unpunctuated turn)
        if proxy_self(text, s.relation):
            continue
        # someone else's: only what names another person by what it is ("Sue can collect")
        others = others_only or bool(
            relative_subject(text, s.relation)
            or third_party(text, s.speaker, s.relation, patient_name)
        )
        st = stems(words_of(text))
        if not st:
            continue
        said_words = words_of(text)
        if who == "clinician" and len([w for w in said_words if w not in _HEADING_LEADS]) <= 1:
            continue  # "Now, smoking.": a heading that raises a topic, says nothing of it
        c = cues()
        is_hedged = hedged_drug(text, who)
        # not "if that's possible"; nor a clinician's "I'm afraid this is ...", news they break
        said_as = c.not_conditions + (c.news if who == "clinician" else ())
        cond_at = first_at(_masked(st, said_as), c.conditions)
        kinds = c.kinds
        if who == "patient" and any_phrase(st, c.prefer_first):
            # "I'd rather see a female doctor for the smear": a preference, not the smear
            kinds = tuple(sorted(kinds, key=lambda k: k.type != "preference"))
        for k in kinds:
            if who not in k.speakers or k.type in skip:
                continue
            if k.type in done_types:
                if k.needs == "recorded" and _needs(
                    k.needs, text, k.cue_at(st, said_words) is not None, st
                ):
                    break  # "I'll note that you prefer video": the preference the rules read
                continue
            if others and not k.names_others:
                continue
            if done_types and k.type not in DISTINCT:
                continue  # the rules read this sentence: its findings are theirs
            cue_at = k.cue_at(st, said_words)
            cue = cue_at is not None
            if not cue and k.needs in ("any",):
                continue
            if not _needs(k.needs, text, cue, st):
                continue
            if k.type == "immunization" and _had_as_illness(text):
                continue  # "I had pneumonia in March": the illness, not its vaccine
            # "you'll need an ECG", "So: ..., growth scan on the 10th of August": a plan
            arranged = (who == "clinician" and (s.listed or any_phrase(st, k.plan_when))) or (
                k.needs == "ahead"  # the patient tells of a booking
            )
            kind = _plan_kind() if arranged else k
            plan = kind.type == "care_plan"
            if plan and not arranged and not any_phrase(st, c.plan_markers):
                continue  # a test or a service named, not a plan made
            # "maybe twice a week": a patient's hedge leaves what they tell of; not a medicine
            # they are only thinking of ("thinking of buying some St John's wort for my mood")
            decided = not is_hedged or (who == "patient" and not plan and not _drug(text))
            conditional = cond_at is not None and (not plan or cond_at < (cue_at or 0))
            if not decided or conditional:
                break  # a suggestion, a condition, something to consider: no fact
            if k.type == "immunization" and who == "patient" and _declined(text, st):
                # "I'll give the Covid one a miss", "I don't want any more of the flu jabs": a
                # vaccine the patient turns down is not had; their choice is a preference
                body = third_person(text, s.speaker, s.relation)
                yield Stated("preference", f"Preference: {body}", a, b)
                break
            # a plan's condition after it is of its use ("a rescue pack ..., so you can start
            # them straight away if you flare up"), not of the plan
            cut = (_USE_IF.search(text) or _PURPOSE.search(text)) if plan else None
            read_as = text[: cut.start()] if cut else text
            _found, blocked = _kinds_found(as_patient(read_as, s.relation, pronoun), k.type)
            if blocked and not k.names_others:  # "don't tell my brother": the person named
                break
            if k.type in NOT_NEGATED and set(words_of(text)) & (c.negations - {"without"}):
                break  # "I haven't fallen since": a negated finding is no observation
            if k.type in NOT_NEGATED and any_phrase(st, c.declines):
                break  # "I'll skip rabies this time": a vaccine turned down is not had
            denied = set(words_of(text)) & {"nothing", "none", "never", "no"}
            if k.type == "social" and denied and not _counted(text):
                break  # "Cannabis, nothing": a habit denied is the rules' ("does not smoke")
            if k.type == "observation" and _RESOLVED.search(s.text):
                break  # "It made me feel sick for the first week but that settled": over
            said = s.text[a:].strip() if plan else text  # a plan's details follow it
            if plan:
                said = _until_condition(said)  # "..., to talk through what happens if ...": cut
                if _deferred(said) and not _arranged_after(said, k):
                    break  # a treatment deferred or considered is no plan made today
            body = third_person(said, s.speaker, s.relation)
            if len(body) < 8:
                break
            taken = kind.type in _TAKEN_OVER and not drugs_done and _drug(text)
            taken = taken and not _taken_before(text)
            if taken and _OWN_MEDICINE.search(text) and not set(words_of(text)) & c.negations:
                # "I take the St John's wort, for my mood": the medicine, not the mood
                yield Stated("medication", f"Medication: {body}", a, b)
                break
            yield Stated(kind.type, f"{kind.label}: {body}", a, b if not plan else len(s.text))
            break
        else:
            negated = bool(set(words_of(text)) & (cues().negations - {"without"}))
            if not others and not drugs_done and not is_hedged and not negated and _drug(text):
                _found, blocked = _kinds_found(text, "medication")
                if not blocked and _OWN_MEDICINE.search(text) and not _taken_before(text):
                    body = third_person(text, s.speaker, s.relation)
                    yield Stated("medication", f"Medication: {body}", a, b)


def _taken_before(text: str) -> bool:
    """A medicine the clause says the patient took in the past ("I used to be on simvastatin
    years ago": the assertion step's history), not one they are on."""
    drugs = [f for f in read(text, "medication").facts if f.kind is KeyKind.DRUG]
    return bool(drugs) and all(Context.HISTORICAL in f.contexts for f in drugs)


#: the kinds a clause that says the patient takes a medicine is not, whatever else it names
#: ("I take the St John's wort, for my mood")
_TAKEN_OVER = frozenset({"observation", "social"})


#: "No," opening an answer: the reply to the question, not a negation of what follows it
_ANSWER_NO = re.compile(r"\s*(?:no|nope|nah)\s*[,;:—–-]\s*", re.I)


#: What a rule's item must not rest on: the evidence says its thing of another person; of a
#: medicine, an allergy or a reaction also as a hypothesis, uncertain or reported (a result's
#: own words are the results reader's: "your blood tests from the 12th of May - your kidney
#: function ..." is read as hypothetical by ConText's "tests for").
_NOT_THE_PATIENTS = frozenset({Context.OTHER_PERSON})
_NOT_DECIDED = frozenset({Context.HYPOTHETICAL, Context.UNCERTAIN, Context.REPORTED})
_DECIDED_TYPES = frozenset({"medication", "allergy", "adverse_reaction"})
#: What a statement that the thing is there (taken, started, changed, reacted to) must not rest
#: on, where a pronoun a medication verb governs names it: the thing denied ("don't start it",
#: "no reason to start it", "we won't add it"); a stop may ("I'm not taking it any more")
_DENIED = frozenset({Context.NEGATED})


#: What a medicine's change the patient's side tells must not rest on either: said as a plan
#: or a wish ("I'll be stopping the omeprazole at the end of the month", "I'd like to come off
#: the citalopram"), or as a rule they were given ("I'm supposed to stop the clopidogrel seven
#: days before the operation"). A clinician's "I'll start you on ..." is a decision, and stays
#: theirs to make. (Not a question the patient asks -- the dialogue's to read: "Can I just say,
#: I stopped the amlodipine" is told --, nor a negation: "I don't take it any more, I stopped
#: it in June" is a stop; both cost held-out facts when tried.)
_NOT_DONE = frozenset({Context.FUTURE, Context.INSTRUCTION})


def asserted_in(
    evidence: str,
    content: str,
    mtype: str,
    relation: str = "",
    patients_side: bool = False,
    pronouns: Sequence[tuple[int, int]] = (),
) -> bool:
    """Whether the evidence asserts, of the patient, the things the statement is about (the
    assertion step on the evidence, for each key of the statement's subject). ``relation``:
    who speaks for the patient (a daughter's "my mum" is the patient); ``patients_side``: the
    patient or who speaks for them said it (a medicine's change they tell is one made only
    when said as made: :data:`_NOT_DONE`); ``pronouns``: where in the evidence a pronoun
    stands for the thing ("so please don't start it"), read as its name where the evidence
    does not name it (:func:`_named`)."""
    from .dialogue import _PATIENT_AS

    wanted = [f for f in read(content, mtype).facts if f.kind is not KeyKind.QUESTION]
    if not wanted:
        return True
    # a thing the statement itself says is another's ("lives with their daughter ... in her
    # house": the house is the daughter's) is not what it says of the patient
    own = [f for f in wanted if not f.contexts & _NOT_THE_PATIENTS]
    if not own:
        return False
    wanted = own
    names = _PATIENT_AS.get(relation, ())
    if names:
        alts = "|".join(names)
        evidence = re.sub(rf"\b(?:(?:my|our) )?(?:{alts})\b", "the patient", evidence, flags=re.I)
    told = patients_side and mtype == "medication"
    # "No, the doctor put it up": the "no" answers the question, it denies nothing said
    answered = _ANSWERED.sub("", evidence)
    for f in wanted:
        named = _named(evidence, f.text, pronouns)  # the pronouns' places are the evidence's
        if named is not evidence:
            # the pronoun a medication verb governs, read as the thing: a negation in its
            # clause denies that verb ("please don't start it"); a negation said of a thing
            # named is read by the rules' own words (a drug named after "no trouble with" is
            # still taken), so only the pronoun's reading is checked for a denial
            if _claims(f, mtype) and _has(_ANSWERED.sub("", named), f, mtype, _DENIED):
                return False
        elif not _asserted_near(answered, f, mtype, told):
            return False
    return True


def _claims(f: Fact, mtype: str) -> bool:
    """Whether a statement says its thing is there (taken, started, changed, reacted to) --
    not ended, and not denied in the statement itself ("... because you don't need it with
    the apixaban")."""
    return mtype in _DECIDED_TYPES and f.state not in ENDED and Context.NEGATED not in f.contexts


def _has(evidence: str, wanted: Fact, mtype: str, bad: frozenset[Context]) -> bool:
    """Whether the evidence says the wanted thing in one of the ``bad`` contexts."""
    return any(f.key == wanted.key and f.contexts & bad for f in read(evidence, mtype).facts)


#: the word that answers a question before what the answer tells ("No, the doctor put it up in
#: March"): it negates the question's words, not the answer's
_ANSWERED = re.compile(r"^\W*(?:no|nope|yes|yeah)\b\W+", re.I)


def _named(evidence: str, words: str, pronouns: Sequence[tuple[int, int]]) -> str:
    """The evidence with each pronoun that stands for the thing written as the thing's words,
    where the evidence does not name it: "It thins the blood, so please don't start it" is
    read as "... don't start ginkgo", so the negation governs the thing."""
    if not pronouns or not words or words.lower() in evidence.lower():
        return evidence
    for a, b in sorted(pronouns, reverse=True):
        evidence = evidence[:a] + words + evidence[b:]
    return evidence


#: How far either side of a thing the assertion step reads a long evidence (a sentence of an
#: unpunctuated speech-to-text turn can be the whole turn): reading stays linear.
NEAR = 240


def _asserted_near(evidence: str, wanted: Fact, mtype: str, told: bool = False) -> bool:
    words = wanted.text
    if len(evidence) > 2 * NEAR:
        at = evidence.lower().find(words.lower()) if words else -1
        if at < 0:
            return True  # named otherwise in the evidence (a pronoun, a brand): not checked
        evidence = evidence[max(0, at - NEAR) : at + len(words) + NEAR]
    bad = _NOT_THE_PATIENTS | (_NOT_DECIDED if mtype in _DECIDED_TYPES else frozenset())
    bad |= _NOT_DONE if told else frozenset()
    return not _has(evidence, wanted, mtype, bad)
