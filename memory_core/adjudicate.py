"""The offline verdict on a candidate pair: evidence that two statements are about the same
thing and that its state changed (pure: two texts and a memory type in, a verdict out).

Similarity only finds candidates (domain.md "Contradiction detection"); the verdict here needs
evidence:

- drugs (medication, adverse_reaction, allergy): the same drug, resolved through the drug
  dictionary (:mod:`memory_core.drugs`: Glucophage -> metformin); different drugs are
  ``compatible``; the same drug with a change (dose, stop / start / switch, formulation, "no
  longer", a negation) ``updates`` or ``contradicts``; the same drug and the same statement
  ``duplicate``. A reaction or allergy to the same drug with a different reaction is
  ``compatible`` (two facts).
- lab results: the same analyte (:mod:`memory_core.labs`), values compared: a different value
  ``updates``; the same value and date ``duplicate``; the same value on another date
  ``updates`` (a new measurement).
- treatment responses: the same outcome (analyte or words of the response) with a changed state.
- conditions and preferences: the statements share their subject and differ in the value (a
  changed number, a changed choice of the same kind -- morning / afternoon, text / phone) or a
  change or negation word ("now", "no longer", "stopped", "resolved", "not").
- free-text types (observation, care_plan, social) need the same evidence, stricter: the two
  are the same sentence but for a short value span, or they share most of their subject and
  the newer states a change; a duplicate is the same statement.
- slots of the history (:mod:`memory_core.subjects`; social, preference, observation,
  care_plan): two statements filling the same slot for the same person are one subject; on a
  single-valued slot a different statement updates, otherwise a change is needed.
- before all of these: a transcript turn (a speaker's ``Name:``) is judged by its words only;
  a relative's fact is not the patient's; two body sites or sides are two findings; "entered
  in error" contradicts; an empty allergy list ("NKDA") and an allergy it covers is an update
  (:func:`standing_candidate`: adjudicated whatever the cosine). An allergy or a reaction that
  names no agent on either side is never demoted on wording alone.

Anything else is ``compatible``: both stay active. ``duplicate`` only when the two say the same
thing (never for two different values). The word lists are in :mod:`.verdict_words`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import drugs, labs, subjects
from .verdict_words import (
    CHANGE_WORDS,
    CONTEXT_DRUG,
    CORRECTIONS,
    FILLERS,
    FOOD_ALLERGENS,
    FORMULATIONS,
    GENERIC,
    HABIT_SLOTS,
    LIST_SCOPES,
    NEGATIONS,
    NO_ALLERGIES,
    NOW_WORDS,
    PHRASES,
    PREDICATES,
    REACTION_WORDS,
    RESCUE_DRUGS,
    RESOLUTIONS,
    STOPWORDS,
    THERAPY_CHANGES,
    TIME_WORDS,
    VALUE_CLASSES,
)

DRUG_TYPES = frozenset({"medication", "adverse_reaction", "allergy"})
#: Types whose statements a negation of the other's subject contradicts ("denies chest pain").
NEGATABLE_TYPES = frozenset({"condition", "observation"})
SAFETY_TYPES = frozenset({"allergy", "adverse_reaction"})
FREE_TEXT_TYPES = frozenset({"observation", "care_plan", "social"})

_LABEL = re.compile(r"^\s*([A-Za-z][\w .'-]{0,30}):\s+")


def split_label(text: str) -> tuple[str, str]:
    """A leading ``Label:`` (a speaker in a transcript, "Plan:", "Allergy:") and the rest."""
    m = _LABEL.match(text)
    return (m.group(1).strip().lower(), text[m.end() :]) if m else ("", text)


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUM = re.compile(r"^\d+(?:\.\d+)?$")


def _stem(w: str) -> str:
    """A crude stem: enough to match smoker / smoking, appointment / appointments."""
    w = w.removesuffix("'s")
    for suf in ("ings", "ing", "ers", "er", "ed", "es", "s"):
        if len(w) - len(suf) >= 4 and w.endswith(suf) and not w.endswith("ss"):
            return w[: -len(suf)]
    return w


REACTION_STEMS = REACTION_WORDS | frozenset(_stem(w) for w in REACTION_WORDS)


@lru_cache(maxsize=65_536)
def _norm_words(text: str) -> tuple[str, ...]:
    low = text.lower()
    for rx, rep in PHRASES:
        low = rx.sub(rep, low)
    low = subjects.normalise(low)
    low = re.sub(r"(\d)([a-z%])", r"\1 \2", low)  # 500mg -> 500 mg
    return tuple(_WORD.findall(low.replace("-", " ").replace("/", " ")))


@lru_cache(maxsize=65_536)
def _topic(text: str) -> frozenset[str]:
    """Subject words: content words (stemmed) without change words, negations, numbers."""
    out = set()
    for w in _norm_words(split_label(text)[1]):
        if w in STOPWORDS or w in FILLERS or w in CHANGE_WORDS or w in NEGATIONS:
            continue
        if w in TIME_WORDS:
            continue
        if w in PREDICATES:
            continue
        if _NUM.match(w) or w in labs.MONTHS:
            continue
        if w in FORMULATIONS or len(w) < 2:
            continue
        out.add(_stem(w))
    return frozenset(out)


def _words_of(text: str, vocab: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in _norm_words(text) if w in vocab)


@lru_cache(maxsize=65_536)
def _drug_names(text: str) -> frozenset[str]:
    """Canonical names of the drugs a statement is about, hyphenated words read both whole and
    split ("Lisinopril-induced"). A drug named as the setting of another ("while on
    furosemide") is left out when another remains."""
    mentions = [*drugs.resolve(text)]
    if "-" in text:
        spaced = text.replace("-", " ")
        mentions += [d for d in drugs.resolve(spaced) if d.name not in {m.name for m in mentions}]
    subject = {d.name for d in mentions if not CONTEXT_DRUG.search(text[: d.start].lower())}
    return frozenset(subject) if subject else frozenset(d.name for d in mentions)


def _agents(names: frozenset[str]) -> frozenset[str]:
    """What an allergy or a reaction is to: its drugs without the rescue medicines named with
    it, unless those are all it names."""
    rest = frozenset(n for n in names if n not in RESCUE_DRUGS)
    return rest or names


def _name_words(name: str) -> frozenset[str]:
    return frozenset(w for w in re.split(r"[ /,-]+", name) if w)


def _same_drug(a: frozenset[str], b: frozenset[str]) -> bool:
    """A drug in common, or a bare name and a specific one of it ("insulin" and "insulin
    glargine"); two specific members ("insulin glargine", "insulin lispro") are two drugs."""
    if a & b:
        return True
    return any(
        _name_words(x) < _name_words(y) or _name_words(y) < _name_words(x) for x in a for y in b
    )


def _drug_words(text: str) -> frozenset[str]:
    """The stemmed words of the drug mentions in ``text`` (left out of the subject of a
    reaction or a response)."""
    out: set[str] = set()
    for d in (*drugs.resolve(text), *drugs.resolve(text.replace("-", " "))):
        out.update(_stem(w) for w in _WORD.findall(d.text.lower()))
        out.update(_stem(w) for w in _WORD.findall(d.name))
    return frozenset(out)


def _singular(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _fuzzy_share(a: frozenset[str], b: frozenset[str]) -> bool:
    """Any word in common, or two words with the same first six letters (anaphylaxis /
    anaphylactic)."""
    if a & b:
        return True
    pa = {w[:6] for w in a if len(w) >= 6}
    return any(w[:6] in pa for w in b if len(w) >= 6)


def _value_clash(a: str, b: str) -> bool:
    """Both statements name a choice of the same kind, and not the same ones."""
    wa = {_singular(w) for w in _norm_words(a)}
    wb = {_singular(w) for w in _norm_words(b)}
    for cls in VALUE_CLASSES:
        va, vb = wa & cls, wb & cls
        if va and vb and va != vb:
            return True
    return False


def _negation_flip(older: str, newer: str) -> bool:
    """A negation in one statement and not the other ("allergic" / "not allergic")."""
    return _words_of(older, NEGATIONS) != _words_of(newer, NEGATIONS)


def _change_word(older: str, newer: str) -> bool:
    """The newer statement uses a change word the older one does not ("now", "stopped")."""
    return bool(_words_of(newer, CHANGE_WORDS) - _words_of(older, CHANGE_WORDS))


def _change(older: str, newer: str) -> str | None:
    """``contradicts`` (a negation flipped), ``updates`` (a change word in the newer one, a
    changed number or formulation) or None."""
    if _negation_flip(older, newer):
        # "gout flare resolved, no pain now" is a change of state; "not allergic" a correction
        return "updates" if _words_of(newer, RESOLUTIONS) else "contradicts"
    if _change_word(older, newer):
        return "updates"
    if set(labs.numbers(older)) != set(labs.numbers(newer)):
        return "updates"
    if _words_of(older, FORMULATIONS) != _words_of(newer, FORMULATIONS):
        return "updates"
    return None


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _cover(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / max(len(a), len(b)) if a and b else 0.0


def same_statement(older: str, newer: str) -> bool:
    """The two say the same thing: the same words once stop words and word forms are set
    aside, and the same numbers."""
    return (
        _topic(older) == _topic(newer)
        and labs.numbers(older) == labs.numbers(newer)
        and (
            _words_of(older, NEGATIONS | CHANGE_WORDS) == _words_of(newer, NEGATIONS | CHANGE_WORDS)
        )
    )


def same_words(older: str, newer: str) -> bool:
    """Word for word the same statement (the same speaker or label; fillers, case and word
    forms aside): the test for a duplicate of free text."""
    a, b = _stems(older), _stems(newer)
    return split_label(older)[0] == split_label(newer)[0] and bool(a) and a == b


@lru_cache(maxsize=65_536)
def _stems(text: str) -> tuple[str, ...]:
    """The stemmed words of a statement, its label aside."""
    return tuple(_stem(w) for w in _body(text))


_RAW = re.compile(r"[A-Za-z0-9]+(?:[.'][A-Za-z0-9]+)*")


def _has_value(words: list[str], first: bool) -> bool:
    """A value among ``words`` (as written): a number, a name (a capitalised word that does not
    start the sentence) or a choice of a known kind."""
    for i, w in enumerate(words):
        if any(c.isdigit() for c in w):
            return True
        if w[:1].isupper() and not (first and i == 0) and w.lower() not in STOPWORDS:
            return True
        if any(_singular(w.lower()) in cls for cls in VALUE_CLASSES):
            return True
    return False


def value_span_change(older: str, newer: str) -> bool:
    """The same sentence but for one short span (the value): the common start and end cover
    most of both, and the spans that differ are short ("weighed 107.8 kg" -> "107.4 kg"; "who
    won ...? Florida State" -> "who won ...? UCLA")."""
    (la, ba), (lb, bb) = split_label(older), split_label(newer)
    if la != lb:
        return False
    if "?" in ba and "?" in bb:
        # a question and its answer: the same question with another answer, or not at all
        qa, _, aa = ba.partition("?")
        qb, _, ab = bb.partition("?")
        if _norm_words(qa) != _norm_words(qb):
            return False
        subject = {w for w in _norm_words(qa) if w not in STOPWORDS and w not in FILLERS}
        wa, wb = _RAW.findall(aa), _RAW.findall(ab)
        return (
            len(subject) >= 2
            and [w.lower() for w in wa] != [w.lower() for w in wb]
            and (_has_value(wa, False) or _has_value(wb, False))
        )
    ra, rb = _RAW.findall(ba), _RAW.findall(bb)
    a, b = [w.lower() for w in ra], [w.lower() for w in rb]
    if a == b or not a or not b:
        return False
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    da, db = len(a) - p - s, len(b) - p - s
    common = a[:p] + (a[len(a) - s :] if s else [])
    subject = {
        w
        for w in common
        if w not in STOPWORDS and w not in FILLERS and w not in PREDICATES and not _NUM.match(w)
    }
    if len(subject) < 2 or not (da and db):
        return False
    if not (_has_value(ra[p : len(a) - s], p == 0) or _has_value(rb[p : len(b) - s], p == 0)):
        return False
    short = da <= max(3, len(a) // 3) and db <= max(3, len(b) // 3)
    return short and p + s >= 0.6 * min(len(a), len(b))


#: The slots each type's statements are compared by (:mod:`memory_core.subjects`); care plans
#: by a referral's specialty and the follow-up only (two plan items on one measurement are two
#: items).
SLOT_TYPES: dict[str, str] = {
    "social": "state",
    "preference": "state",
    "observation": "measure",
    "care_plan": "plan",
}


def _slots_of(text: str, kind: str) -> frozenset[str]:
    """The slots a statement fills, of those its type is compared by (``kind``)."""
    found = _all_slots(text)
    if kind == "plan":
        return frozenset(s for s in found if subjects.plan_slot(s))
    if kind == "state":
        return frozenset(s for s in found if s not in subjects.MEASURE_SLOTS)
    return frozenset(s for s in found if s in subjects.MEASURE_SLOTS or s in HABIT_SLOTS)


def _slot_change(older: str, newer: str, kind: str) -> str | None:
    """The change between two statements on one slot: a negation counts only when the two share
    what it negates ("no car" says nothing about "depends on the bus"); a measurement needs a
    changed number or a "now" word."""
    if _negation_flip(older, newer) and not _topic(older) & _topic(newer):
        worded = _words_of(newer, CHANGE_WORDS - NEGATIONS) - _words_of(older, CHANGE_WORDS)
        return "updates" if kind != "measure" and worded else None
    if kind != "measure":
        change = _change(older, newer)
        return change or ("updates" if _value_clash(older, newer) else None)
    if _negation_flip(older, newer):
        return "updates" if _words_of(newer, RESOLUTIONS) else "contradicts"
    na, nb = labs.numbers(older), labs.numbers(newer)
    if na and nb and set(na) != set(nb):
        return "updates"
    return "updates" if _words_of(newer, NOW_WORDS) - _words_of(older, NOW_WORDS) else None


def _speaker(text: str) -> bool:
    """The statement is a transcript turn: it starts with a speaker's name, not a heading."""
    label = split_label(text)[0]
    return bool(label) and not subjects.is_heading(label)


def _slot_verdict(older: str, newer: str, kind: str) -> str | None:
    """Two statements filling the same slots of the history for the same person: a change
    between them ``updates`` (the newest value wins), the same statement is a ``duplicate``;
    None when they share no slot (the word tests decide). Transcript turns (a speaker's label)
    are left to the word tests: chat mentions these topics in passing. Whose fact each is was
    decided before (:func:`_other_person`)."""
    if _speaker(older) or _speaker(newer):
        return None
    if "?" in split_label(older)[1] or "?" in split_label(newer)[1]:
        return None  # a question and its answer: the same question decides
    sa, sb = _slots_of(older, kind), _slots_of(newer, kind)
    shared = sa & sb
    if not shared:
        return None
    change = _slot_change(older, newer, kind)
    if sa != sb:
        return change  # other slots besides: a change is still evidence, its absence is not
    if change:
        return change
    if _cover(_topic(older), _topic(newer)) >= 0.5:
        return "duplicate"
    state = any(s in subjects.SINGLE_VALUED or subjects.plan_slot(s) for s in shared)
    return "updates" if state else "compatible"


def _lab_verdict(older: str, newer: str) -> str | None:
    """Same analyte: values compared; None when the two name no analyte in common."""
    fa = {f.analyte: f for f in labs.lab_facts(older)}
    fb = {f.analyte: f for f in labs.lab_facts(newer)}
    shared = [k for k in fa if k in fb]
    if not shared:
        return None
    verdicts = []
    for k in shared:
        x, y = fa[k], fb[k]
        if x.value is None or y.value is None:
            continue
        redated = x.date is not None and y.date is not None and x.date != y.date
        verdicts.append("updates" if x.value != y.value or redated else "duplicate")
    if not verdicts:
        return None
    return "updates" if "updates" in verdicts else "duplicate"


def _drug_verdict(memory_type: str, older: str, newer: str) -> str:
    """Both name a drug in common."""
    change = _change(older, newer)
    if memory_type == "adverse_reaction":
        # a second reaction to the same drug is a second fact, unless one negates or
        # changes the other (an allergy is to the substance: a new reaction updates it)
        rest_a = _topic(older) - _drug_words(older) - REACTION_STEMS
        rest_b = _topic(newer) - _drug_words(newer) - REACTION_STEMS
        worded = _negation_flip(older, newer) or _change_word(older, newer)
        if not worded and rest_a and rest_b and not _fuzzy_share(rest_a, rest_b):
            return "compatible"  # a second reaction (a lab value in one is not a change)
    if change is None and _words_of(older, CHANGE_WORDS) != _words_of(newer, CHANGE_WORDS):
        change = "updates"  # states differ ("cough resolved" / "cough")
    return change or "duplicate"


def _response_verdict(
    older: str, newer: str, outcomes: frozenset[str], da: frozenset[str], db: frozenset[str]
) -> str:
    """A treatment response: its subject is the outcome (an analyte or the words of the
    response, drug names aside) under a treatment. Two treatments' effects on one outcome are
    two facts ("time in range rose once the sensor was started", "little change from diet
    counselling alone"), unless the outcome's state flips ("A1c not at goal on metformin" ->
    "A1c at goal after adding semaglutide")."""
    ta, tb = _topic(older) - _drug_words(older), _topic(newer) - _drug_words(newer)
    an_a, an_b = labs.analytes(older), labs.analytes(newer)
    changed = _words_of(newer, THERAPY_CHANGES) - _words_of(older, THERAPY_CHANGES)
    if da and db and _same_drug(da, db) and changed:
        # the same treatment, and the newer says it changed ("no GI upset on metformin" ->
        # "ongoing diarrhoea on metformin, changed to ER"): the response is updated, or
        # corrected ("correction: had not been taking Lasix")
        return "contradicts" if changed & CORRECTIONS else "updates"
    if an_a and an_b and not outcomes:
        return "compatible"  # two outcomes
    if not (outcomes or _overlap(ta, tb) >= 0.5):
        return "compatible"
    if _negation_flip(older, newer):
        return "updates" if _words_of(newer, RESOLUTIONS) else "contradicts"
    same_treatment = (bool(da) and bool(db) and _same_drug(da, db)) or (
        not da and not db and _overlap(ta, tb) >= 0.5
    )
    if not same_treatment:
        return "compatible"
    change = _change(older, newer)
    if change:
        return change
    return "duplicate" if outcomes or _cover(ta, tb) >= 0.5 else "compatible"


@lru_cache(maxsize=65_536)
def _body(text: str) -> tuple[str, ...]:
    return _norm_words(split_label(text)[1])


@lru_cache(maxsize=65_536)
def _whose(text: str) -> str:
    return subjects.whose(_body(text))


@lru_cache(maxsize=65_536)
def _all_slots(text: str) -> frozenset[str]:
    return subjects.slots(_body(text))


def _other_person(older: str, newer: str) -> bool:
    """One statement is a relative's fact, the other the patient's (or another relative's),
    unless they fill a slot whose value names people (household, caregiving, marital)."""
    if _whose(older) == _whose(newer):
        return False
    return not (_all_slots(older) & _all_slots(newer) & subjects.SHARED_SLOTS)


@lru_cache(maxsize=65_536)
def _sites(text: str) -> frozenset[str]:
    return frozenset(_singular(w) for w in _body(text)) & subjects.BODY_SITES


def _site_clash(older: str, newer: str) -> bool:
    """Both name a body site and none in common, or the same site on the other side ("left
    knee" / "right knee"): two findings."""
    sa, sb = _sites(older), _sites(newer)
    if not (sa and sb):
        return False
    if not sa & sb:
        return True
    la = frozenset(_body(older)) & subjects.SIDES
    lb = frozenset(_body(newer)) & subjects.SIDES
    return bool(la and lb and not la & lb)


def _resolved(older: str, newer: str) -> bool:
    """The newer says the older's subject is over: "<subject> resolved / gone / healed"
    ("cough resolved, no sputum" after "productive cough x 5 days")."""
    words, stems, topic = _body(newer), _stems(newer), _topic(older)
    return any(
        w in RESOLUTIONS and i > 0 and words[i - 1] not in GENERIC and stems[i - 1] in topic
        for i, w in enumerate(words)
    )


def _negated_subject(older: str, newer: str) -> bool:
    """One statement negates what the other names: "denies chest pain" / "admits to exertional
    chest pressure", "not AF" / "new-onset atrial fibrillation" (the word after the negation is
    in the other's subject)."""
    for a, b in ((older, newer), (newer, older)):
        words, stems, topic = _body(a), _stems(a), _topic(b)
        if any(
            w in NEGATIONS and i + 1 < len(words) and words[i + 1] not in GENERIC
            and stems[i + 1] in topic
            for i, w in enumerate(words)
        ):  # fmt: skip
            return True
    return False


def _corrected(older: str, newer: str) -> bool:
    """The newer says the older was entered in error, and they share their subject."""
    if "enteredinerror" not in _body(newer) or "enteredinerror" in _body(older):
        return False
    return len(_topic(older) & _topic(newer)) >= 2


@lru_cache(maxsize=65_536)
def no_allergies(text: str) -> bool:
    """The statement is an empty allergy list ("NKDA", "No known drug allergies", "Allergies:
    none", "Allergies reviewed at triage: NKDA"), its last clause whole (not "no known allergy
    to latex")."""
    return bool(NO_ALLERGIES.search(text.strip()))


def _list_scope(text: str) -> str:
    """ "drug", "food" or "all": what an empty allergy list says there is none of."""
    return next((scope for rx, scope in LIST_SCOPES if rx.search(text)), "all")


def _allergy_scope(text: str) -> str:
    """ "drug", "food" or "other" (latex, dander, venom, nickel): what an allergy is to."""
    names = _agents(_drug_names(text))
    if not names:
        return "other"
    if names <= FOOD_ALLERGENS:
        return "food"
    return "drug" if names - drugs.NON_DRUG_ALLERGENS else "other"


def _lists_cover(older: str, newer: str) -> bool:
    """The empty list of one of the two covers the allergy of the other ("NKDA" covers a
    codeine allergy, not a latex or a peanut one)."""
    empty, allergy = (older, newer) if no_allergies(older) else (newer, older)
    scope = _list_scope(empty)
    return scope == "all" or scope == _allergy_scope(allergy)


#: The types with pairs adjudicated whatever their cosine (:func:`standing_candidate`).
STANDING_TYPES = frozenset({"allergy"})


def standing_candidate(older: str, newer: str, memory_type: str) -> bool:
    """A pair adjudicated whatever its cosine: an empty allergy list and an allergy it covers
    ("NKDA" / "allergic to codeine" are 0.03 apart in MiniLM, yet the one contradicts the
    other), or the same empty list restated ("NKDA" / "no known drug allergies", -0.02)."""
    if memory_type not in STANDING_TYPES or _other_person(older, newer):
        return False
    ea, eb = no_allergies(older), no_allergies(newer)
    if ea and eb:
        return _list_scope(older) == _list_scope(newer)  # the same empty list, restated
    return ea != eb and _lists_cover(older, newer)


def verdict_by_rule(older: str, newer: str, similarity: float, memory_type: str = "") -> str:
    """The offline verdict on a candidate pair (``similarity``: the cosine that made it one,
    not evidence by itself): ``updates``, ``contradicts``, ``duplicate`` or ``compatible``."""
    return _verdict(older, newer, memory_type)


@lru_cache(maxsize=65_536)
def _verdict(older: str, newer: str, memory_type: str) -> str:
    if memory_type == "allergy" and no_allergies(older) and no_allergies(newer):
        return "duplicate" if _list_scope(older) == _list_scope(newer) else "compatible"
    if memory_type == "allergy" and no_allergies(older) != no_allergies(newer):
        # "NKDA" and an allergy it covers: the list changed ("updates"), or an allergy is said
        # not to be there ("contradicts": a review decides, never the rule alone for a safety
        # type); "NKDA" and a latex allergy are two facts
        if not _lists_cover(older, newer) or _other_person(older, newer):
            return "compatible"
        return "updates" if no_allergies(older) else "contradicts"
    if memory_type in FREE_TEXT_TYPES and (_speaker(older) or _speaker(newer)):
        # a transcript turn: only the same words or a changed value span are evidence (chat
        # shares topics and says "now", "new" and "sugar" in passing)
        if same_words(older, newer):
            return "duplicate"
        return "updates" if value_span_change(older, newer) else "compatible"
    if _other_person(older, newer):
        return "compatible"  # "pt's mother had to stop her Synthroid": the mother's fact
    if _site_clash(older, newer):
        return "compatible"  # "basal cell carcinoma, nose" / "..., L shoulder": two lesions
    if _corrected(older, newer):
        return "contradicts"  # "home O2 order entered in error"
    an_a, an_b = labs.analytes(older), labs.analytes(newer)
    if memory_type == "lab_result" or (an_a and an_b and memory_type != "treatment_response"):
        if an_a and an_b and not (an_a & an_b):
            return "compatible"  # two different tests
        lab = _lab_verdict(older, newer)
        if lab is not None:
            return lab
        if memory_type == "lab_result":
            return "duplicate" if same_statement(older, newer) else "compatible"
    da, db = _drug_names(older), _drug_names(newer)
    if memory_type in SAFETY_TYPES:
        da, db = _agents(da), _agents(db)
    if memory_type != "treatment_response":
        if da and db:
            if not _same_drug(da, db):
                return "compatible"  # two different drugs
            if memory_type in DRUG_TYPES or memory_type == "":
                return _drug_verdict(memory_type, older, newer)
        elif (da or db) and memory_type in DRUG_TYPES:
            return "compatible"  # a drug on one side only: no evidence of one subject
        elif memory_type in SAFETY_TYPES:
            # no agent named on either side: an allergy or a reaction is never demoted on
            # wording alone (a missed update leaves both in the prompt; a wrong one hides one)
            return "compatible"
    if memory_type in FREE_TEXT_TYPES:
        if same_words(older, newer):
            return "duplicate"
    elif same_statement(older, newer):
        return "duplicate"
    if value_span_change(older, newer):
        return "updates"
    if memory_type in SLOT_TYPES:
        slot = _slot_verdict(older, newer, SLOT_TYPES[memory_type])
        if slot is not None:
            return slot
    ta, tb = _topic(older), _topic(newer)
    if memory_type == "treatment_response":
        return _response_verdict(older, newer, an_a & an_b, da, db)
    if _resolved(older, newer):
        return "updates"
    if memory_type in NEGATABLE_TYPES and _negated_subject(older, newer):
        return "updates" if _words_of(newer, RESOLUTIONS) else "contradicts"
    if memory_type in FREE_TEXT_TYPES:
        qa, qb = split_label(older)[1].partition("?"), split_label(newer)[1].partition("?")
        if qa[1] and qb[1] and _norm_words(qa[0]) != _norm_words(qb[0]):
            return "compatible"  # answers to two different questions
        # a drug is a plan's item ("start insulin" / "insulin not needed"), but no shared
        # subject of two notes ("lost track of insulin pens" / "anxious about starting insulin")
        same = (_cover(ta, tb) >= 0.4 and len(ta & tb) >= 2) or (
            memory_type == "care_plan" and bool(da) and bool(db) and _same_drug(da, db)
        )
    else:
        same = _overlap(ta, tb) >= 0.5 or (bool(da) and _same_drug(da, db))
    change = _change(older, newer)
    strong = (_overlap(ta, tb) >= 0.75 and len(ta & tb) >= 3) or bool(da and db)
    if memory_type in FREE_TEXT_TYPES and change == "contradicts" and not strong:
        # a "no" or "not" in chat is no evidence: free text needs most of its subject shared
        change = "updates" if _change_word(older, newer) else None
    if same and change:
        return change
    if same and _value_clash(older, newer):
        return "updates"
    if (
        memory_type not in FREE_TEXT_TYPES
        and _change_word(older, newer)
        and _value_clash(older, newer)
    ):
        return "updates"  # "prefers capsules" -> "now asks for liquid forms"
    if same and _cover(ta, tb) >= (0.8 if memory_type in FREE_TEXT_TYPES else 0.5):
        return "duplicate"
    return "compatible"
