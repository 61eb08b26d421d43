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
- lab results: the same analyte (:mod:`memory_core.labs`), values compared (across units once
  converted): a different value ``updates``; the same value and date ``duplicate``; the same
  value on another date ``updates`` (a new measurement); a target range is no result.
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
  a relative's fact is not the patient's; two body sites or sides are two findings (unless the
  newer says the finding spread); two readings at two times or places are two; "entered
  in error" contradicts; an empty allergy list ("NKDA") and an allergy it covers is an update
  (:func:`standing_candidate`: adjudicated whatever the cosine). An allergy or a reaction that
  names no agent on either side is never demoted on wording alone.

Anything else is ``compatible``: both stay active. ``duplicate`` only when the two say the same
thing (never for two different values). The word lists are in :mod:`.verdict_words`, the
words of one statement (label, subject words, drugs, slots) are read by :mod:`.statement`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import labs, subjects
from . import statement as st
from .allergy_lists import list_scope, lists_cover, no_allergies
from .importance import EVENT_TYPES, MEASUREMENT_TYPES, SAFETY_TYPES
from .verdict_words import (
    ADDITIONS,
    ADMISSIONS,
    AS_NEEDED,
    CHANGE_WORDS,
    CORRECTIONS,
    DENIALS,
    DOSE_CHANGES,
    DOSE_FORMS,
    FILLERS,
    FORMULATIONS,
    GENERIC,
    HABIT_SLOTS,
    NEGATIONS,
    NEW_FACTS,
    NOW_WORDS,
    PLAN_STATES,
    PREDICATES,
    QUALITATIVE,
    REACTION_WORDS,
    RESOLUTIONS,
    SPREAD,
    STOPWORDS,
    THERAPY_CHANGES,
    VALUE_CLASSES,
)

DRUG_TYPES = frozenset({"medication", "adverse_reaction", "allergy"})
#: Types whose statements a negation of the other's subject contradicts ("denies chest pain").
NEGATABLE_TYPES = frozenset({"condition", "observation"})
FREE_TEXT_TYPES = frozenset({"observation", "care_plan", "social"})


REACTION_STEMS = REACTION_WORDS | frozenset(st.stem(w) for w in REACTION_WORDS)
#: How a drug was given is no part of the reaction ("thrush" / "hoarse voice", both "after
#: inhaled fluticasone", are two reactions).
ROUTE_STEMS = DOSE_FORMS | frozenset(st.stem(w) for w in DOSE_FORMS)


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


def _alike(small: frozenset[str], large: frozenset[str], head: int) -> int:
    """How many words of ``small`` are in ``large``, a word counting when the other has it or
    a word of at least ``head`` letters beginning with the same ``head`` letters."""
    prefixes = {w[:head] for w in large if len(w) >= head}
    return sum(1 for w in small if w in large or (len(w) >= head and w[:head] in prefixes))


def _share_most(a: frozenset[str], b: frozenset[str]) -> bool:
    """At least half the words of the shorter set are in the other, alike by six letters
    (anaphylaxis / anaphylactic): "ankle edema" / "peripheral edema" share the reaction, "felt
    faint at school" / "sore arm at school" only where it happened."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return 2 * _alike(small, large, 6) >= len(small)


def _value_clash(a: str, b: str) -> bool:
    """Both statements name a choice of the same kind, and not the same ones."""
    wa = {st.singular(w) for w in st.norm_words(a)}
    wb = {st.singular(w) for w in st.norm_words(b)}
    for cls in VALUE_CLASSES:
        va, vb = wa & cls, wb & cls
        if va and vb and va != vb:
            return True
    return False


def _negation_flip(older: str, newer: str) -> bool:
    """A negation in one statement and not the other ("allergic" / "not allergic")."""
    return st.words_of(older, NEGATIONS) != st.words_of(newer, NEGATIONS)


def _gained(older: str, newer: str, vocab: frozenset[str]) -> frozenset[str]:
    """The words of ``vocab`` the newer statement uses and the older one does not."""
    return st.words_of(newer, vocab) - st.words_of(older, vocab)


def _change_word(older: str, newer: str) -> bool:
    """The newer statement uses a change word the older one does not ("now", "stopped")."""
    return bool(_gained(older, newer, CHANGE_WORDS))


def _change(older: str, newer: str) -> str | None:
    """``contradicts`` (a negation flipped), ``updates`` (a change word in the newer one, a
    changed number, formulation or as-needed use) or None."""
    if _negation_flip(older, newer):
        # "gout flare resolved, no pain now" is a change of state; "not allergic" a correction
        return "updates" if st.words_of(newer, RESOLUTIONS) else "contradicts"
    if _change_word(older, newer):
        return "updates"
    if set(labs.numbers(older)) != set(labs.numbers(newer)):
        return "updates"
    if st.words_of(older, FORMULATIONS) != st.words_of(newer, FORMULATIONS):
        return "updates"
    if st.words_of(older, AS_NEEDED) != st.words_of(newer, AS_NEEDED):
        return "updates"  # "q6h" -> "q6h PRN"
    return None


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _cover(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / max(len(a), len(b)) if a and b else 0.0


def same_statement(older: str, newer: str) -> bool:
    """The two say the same thing: the same words once stop words and word forms are set
    aside, and the same numbers."""
    return (
        st.topic(older) == st.topic(newer)
        and labs.numbers(older) == labs.numbers(newer)
        and (
            st.words_of(older, NEGATIONS | CHANGE_WORDS)
            == st.words_of(newer, NEGATIONS | CHANGE_WORDS)
        )
    )


def same_words(older: str, newer: str) -> bool:
    """Word for word the same statement (the same speaker or label; fillers, case and word
    forms aside): the test for a duplicate of free text."""
    a, b = st.stems(older), st.stems(newer)
    return st.split_label(older)[0] == st.split_label(newer)[0] and bool(a) and a == b


_RAW = re.compile(r"[A-Za-z0-9]+(?:[.'][A-Za-z0-9]+)*")


def _has_value(words: list[str], first: bool) -> bool:
    """A value among ``words`` (as written): a number, a name (a capitalised word that does not
    start the sentence) or a choice of a known kind."""
    for i, w in enumerate(words):
        if any(c.isdigit() for c in w):
            return True
        if w[:1].isupper() and not (first and i == 0) and w.lower() not in STOPWORDS:
            return True
        if any(st.singular(w.lower()) in cls for cls in VALUE_CLASSES):
            return True
    return False


def value_span_change(older: str, newer: str) -> bool:
    """The same sentence but for one short span (the value): the common start and end cover
    most of both, and the spans that differ are short ("weighed 107.8 kg" -> "107.4 kg"; "who
    won ...? Florida State" -> "who won ...? UCLA")."""
    (la, ba), (lb, bb) = st.split_label(older), st.split_label(newer)
    if la != lb:
        return False
    if "?" in ba and "?" in bb:
        # a question and its answer: the same question with another answer, or not at all
        qa, _, aa = ba.partition("?")
        qb, _, ab = bb.partition("?")
        if st.norm_words(qa) != st.norm_words(qb):
            return False
        subject = {w for w in st.norm_words(qa) if w not in STOPWORDS and w not in FILLERS}
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
        if w not in STOPWORDS and w not in FILLERS and w not in PREDICATES and not st.NUM.match(w)
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
    found = st.all_slots(text)
    if kind == "plan":
        return frozenset(s for s in found if subjects.plan_slot(s))
    if kind == "state":
        return frozenset(s for s in found if s not in subjects.MEASURE_SLOTS)
    return frozenset(s for s in found if s in subjects.MEASURE_SLOTS or s in HABIT_SLOTS)


def _slot_change(older: str, newer: str, kind: str) -> str | None:
    """The change between two statements on one slot: a negation counts only when the two share
    what it negates ("no car" says nothing about "depends on the bus"); a measurement needs a
    changed number or a "now" word (the same numbers and no change word: a ``duplicate``). A
    denial and an admission on one slot contradict ("denies drug use" / "admits to cannabis")."""
    if bool(st.words_of(older, DENIALS)) != bool(st.words_of(newer, DENIALS)):
        other = older if st.words_of(newer, DENIALS) else newer
        if st.words_of(other, ADMISSIONS):
            return "contradicts"
    if _negation_flip(older, newer) and not st.topic(older) & st.topic(newer):
        worded = st.words_of(newer, CHANGE_WORDS - NEGATIONS) - st.words_of(older, CHANGE_WORDS)
        return "updates" if kind != "measure" and worded else None
    if kind != "measure":
        change = _change(older, newer)
        return change or ("updates" if _value_clash(older, newer) else None)
    if _negation_flip(older, newer):
        return "updates" if st.words_of(newer, RESOLUTIONS) else "contradicts"
    na, nb = labs.numbers(older), labs.numbers(newer)
    if na and nb and set(na) != set(nb):
        return "updates"
    if na and set(na) == set(nb) and not _change_word(older, newer):
        return "duplicate"  # "weight 82 kg" / "weighed 82.0 kg on the ward scales"
    return "updates" if _gained(older, newer, NOW_WORDS) else None


def _speaker(text: str) -> bool:
    """The statement is a transcript turn: it starts with a speaker's name (:func:`label_kind`)."""
    return st.label_kind(text) == "speaker"


def _slot_verdict(older: str, newer: str, kind: str) -> str | None:
    """Two statements filling the same slots of the history for the same person: a change
    between them ``updates`` (the newest value wins), the same statement is a ``duplicate``;
    None when they share no slot (the word tests decide). Transcript turns (a speaker's label)
    are left to the word tests: chat mentions these topics in passing. Whose fact each is was
    decided before (:func:`_other_person`)."""
    if _speaker(older) or _speaker(newer):
        return None
    if "?" in st.split_label(older)[1] or "?" in st.split_label(newer)[1]:
        return None  # a question and its answer: the same question decides
    sa, sb = _slots_of(older, kind), _slots_of(newer, kind)
    shared = sa & sb
    if not shared:
        return None
    added = _gained(older, newer, ADDITIONS)
    # "also works weekend shifts"; "mail-order pharmacy for Eliquis" beside the usual one
    scoped = "pharmacy" in shared and bool(st.drug_names(older)) != bool(st.drug_names(newer))
    if (added or scoped) and not _change_word(older, newer):
        return "compatible"
    change = _slot_change(older, newer, kind)
    if sa != sb:
        return change  # other slots besides: a change is still evidence, its absence is not
    if change:
        return change
    if _cover(st.topic(older), st.topic(newer)) >= 0.5:
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
        verdicts.append("duplicate" if labs.same_value(x, y) and not redated else "updates")
    if not verdicts:
        return None
    return "updates" if "updates" in verdicts else "duplicate"


def _rescue_and_maintenance(older: str, newer: str) -> bool:
    """One order as needed, the other scheduled, in two dose forms or routes: two orders of
    one drug ("nitroglycerin 0.4 mg SL PRN" / "nitroglycerin patch"), not a change from
    regular to as-needed use ("paracetamol 1 g QDS" -> "1 g PRN")."""
    if st.words_of(older, AS_NEEDED) == st.words_of(newer, AS_NEEDED):
        return False
    fa, fb = st.words_of(older, DOSE_FORMS), st.words_of(newer, DOSE_FORMS)
    return bool(fa and fb and fa != fb)


def _two_orders(a: frozenset[str], b: frozenset[str]) -> bool:
    """A combination product and one of its components are two medicines on a med list
    ("buprenorphine/naloxone" and a naloxone kit); an allergy to one is an allergy to both."""
    return not a & b and any(("/" in x) != ("/" in y) for x in a for y in b)


_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)\s*(kg|kgs|kilos|lb|lbs|ms|%|mmhg|bpm|cm|mm)\b")


def _amount_changed(older: str, newer: str) -> bool:
    """Both give an amount in one unit, and the amounts differ: one measured reaction grew or
    shrank ("3 kg" -> "7 kg")."""
    a = dict((u, v) for v, u in _AMOUNT.findall(older.lower()))
    b = dict((u, v) for v, u in _AMOUNT.findall(newer.lower()))
    return any(a[u] != b[u] for u in a.keys() & b.keys())


def _drug_verdict(memory_type: str, older: str, newer: str) -> str:
    """Both name a drug in common."""
    change = _change(older, newer)
    if memory_type in SAFETY_TYPES:
        # a second reaction to the same drug is a second fact, unless one negates or
        # changes the other: a duplicate needs the reactions to mostly agree
        rest_a = st.topic(older) - st.drug_words(older) - REACTION_STEMS - ROUTE_STEMS
        rest_b = st.topic(newer) - st.drug_words(newer) - REACTION_STEMS - ROUTE_STEMS
        # a "new" or "also" names another reaction ("cough on lisinopril" / "new rash on
        # lisinopril"), not a change of the first
        added = _gained(older, newer, NEW_FACTS)
        # ... and a dose change beside it is no change of the first reaction either
        stated = _gained(older, newer, CHANGE_WORDS - DOSE_CHANGES)
        flipped = _negation_flip(older, newer)
        amount = _amount_changed(older, newer)  # "weight gain ... 3 kg" -> "up 7 kg"
        worded = flipped or amount or (bool(stated) and not added)
        if not worded and rest_a and rest_b and not _share_most(rest_a, rest_b):
            return "compatible"  # a second reaction (a lab value in one is not a change)
        if (
            memory_type == "adverse_reaction"
            and rest_a
            and rest_b
            and not _alike(rest_a, rest_b, 4)  # by four letters: "dizziness" / "dizzy"
            and not (flipped or amount or _gained(older, newer, RESOLUTIONS - THERAPY_CHANGES))
        ):
            # no reaction word in common: "now", "better" or "stopped" tell of the newer
            # reaction, not a change of the older ("cough on lisinopril" / "lisinopril
            # stopped: angioedema"); "resolved", "settled" end the older one
            return "compatible"
        if change == "updates" and not worded and not _change_word(older, newer):
            # only a number differs (a date, a dose, a count): another episode of the
            # reaction, not evidence the first one changed; both stay
            return "compatible"
    if change is None and st.words_of(older, CHANGE_WORDS) != st.words_of(newer, CHANGE_WORDS):
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
    ta, tb = st.topic(older) - st.drug_words(older), st.topic(newer) - st.drug_words(newer)
    an_a, an_b = labs.analytes(older), labs.analytes(newer)
    changed = _gained(older, newer, THERAPY_CHANGES)
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
        return "updates" if st.words_of(newer, RESOLUTIONS) else "contradicts"
    same_treatment = (bool(da) and bool(db) and _same_drug(da, db)) or (
        not da and not db and _overlap(ta, tb) >= 0.5
    )
    if not same_treatment:
        return "compatible"
    change = _change(older, newer)
    if change:
        return change
    return "duplicate" if outcomes or _cover(ta, tb) >= 0.5 else "compatible"


def _other_person(older: str, newer: str) -> bool:
    """One statement is a relative's fact, the other the patient's (or another relative's),
    unless they fill a slot whose value names people (household, caregiving, marital)."""
    if st.whose(older) == st.whose(newer):
        return False
    return not (st.all_slots(older) & st.all_slots(newer) & subjects.SHARED_SLOTS)


def _site_clash(older: str, newer: str) -> bool:
    """Both name a body site and none in common, or the same site on the other side ("left
    knee" / "right knee"): two findings."""
    la = frozenset(st.body(older)) & subjects.SIDES
    lb = frozenset(st.body(newer)) & subjects.SIDES
    if la and lb and not la & lb and (la | lb) <= subjects.PLAIN_SIDES:
        return True  # "R antecubital fossa" / "L antecubital fossa", "RE IOP" / "LE IOP"
    sa, sb = st.sites(older), st.sites(newer)
    if not (sa and sb):
        return False
    if not sa & sb:
        return True
    return bool(la and lb and not la & lb)


def _spread(older: str, newer: str) -> bool:
    """The newer says the older's finding spread to other sites (it names a spread word and
    shares the finding's words)."""
    return bool(
        _gained(older, newer, SPREAD) and (st.topic(older) - st.sites(older)) & st.topic(newer)
    )


def _plan_state_change(older: str, newer: str) -> bool:
    """The newer gives a plan item a state the older did not have (booked, attended, done,
    cancelled)."""
    return bool(_gained(older, newer, PLAN_STATES))


def _result_flip(older: str, newer: str) -> bool:
    """A qualitative result of the same test changed ("positive" -> "negative"): what one
    names besides the result is inside what the other names ("strep swab" / "repeat strep
    swab"; not "Hep B surface antibody" / "... antigen", two tests)."""
    ra, rb = st.words_of(older, QUALITATIVE), st.words_of(newer, QUALITATIVE)
    if not (ra and rb) or ra == rb:
        return False
    ta, tb = st.topic(older) - QUALITATIVE, st.topic(newer) - QUALITATIVE
    return bool(ta and tb) and (ta <= tb or tb <= ta)


def _two_readings(older: str, newer: str) -> bool:
    """Two measurements, not one measurement's new value: both name what they measure and
    share none of it, or they share it but were taken in different contexts
    (:func:`_contexts_clash`)."""
    ma = st.all_slots(older) & subjects.MEASURE_SLOTS.keys()
    mb = st.all_slots(newer) & subjects.MEASURE_SLOTS.keys()
    if not (ma and mb):
        return False
    if not ma & mb:
        return True
    return _contexts_clash(older, newer)


def _contexts_clash(older: str, newer: str) -> bool:
    """Both say when or where (:data:`subjects.MEASURE_CONTEXTS`: the time of day, at rest or
    on exertion, before or after, at home or in clinic), and not the same, and the newer names
    no change."""
    wa, wb = frozenset(st.body(older)), frozenset(st.body(newer))
    clash = any(
        (wa & ctx) and (wb & ctx) and not (wa & wb & ctx) for ctx in subjects.MEASURE_CONTEXTS
    )
    return clash and not _change_word(older, newer)


def _resolved(older: str, newer: str) -> bool:
    """The newer says the older's subject is over: "<subject> resolved / gone / healed"
    ("cough resolved, no sputum" after "productive cough x 5 days")."""
    words, stems, topic = st.body(newer), st.stems(newer), st.topic(older)
    return any(
        w in RESOLUTIONS and i > 0 and words[i - 1] not in GENERIC and stems[i - 1] in topic
        for i, w in enumerate(words)
    )


def _negated_subject(older: str, newer: str) -> bool:
    """One statement negates what the other names: "denies chest pain" / "admits to exertional
    chest pressure", "not AF" / "new-onset atrial fibrillation" (the word after the negation is
    in the other's subject)."""
    for a, b in ((older, newer), (newer, older)):
        words, stems, topic = st.body(a), st.stems(a), st.topic(b)
        if any(
            w in NEGATIONS and i + 1 < len(words) and words[i + 1] not in GENERIC
            and stems[i + 1] in topic
            for i, w in enumerate(words)
        ):  # fmt: skip
            return True
    return False


def _corrected(older: str, newer: str) -> bool:
    """The newer says the older was entered in error, and they share their subject; or it is
    headed as a correction and negates a subject the two share ("Correction per aide: pt did
    not fall" after "aide reports pt fell")."""
    if "enteredinerror" in st.body(older):
        return False
    if "enteredinerror" in st.body(newer):
        return len(st.topic(older) & st.topic(newer)) >= 2
    label = st.split_label(newer)[0]
    headed = "correction" in label.split() or st.body(newer)[:1] == ("correction",)
    if not headed or not _gained(older, newer, NEGATIONS):
        return False
    return bool(st.topic(older) & st.topic(newer) or st.all_slots(older) & st.all_slots(newer))


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
        return list_scope(older) == list_scope(newer)  # the same empty list, restated
    return ea != eb and lists_cover(older, newer)


def _lab_pair(older: str, newer: str, an_a: frozenset[str], an_b: frozenset[str]) -> str | None:
    """The verdict on two statements naming lab analytes, when their values decide it."""
    if an_a and an_b and not (an_a & an_b):
        return "compatible"  # two different tests
    if labs.is_target(older) != labs.is_target(newer):
        return "compatible"  # a result and a target range ("INR 2.6" / "INR target 2-3")
    return _lab_verdict(older, newer)


def _measured(older: str, newer: str, an_a: frozenset[str], an_b: frozenset[str]) -> str:
    """The verdict on two lab results or vital signs."""
    lab = _lab_pair(older, newer, an_a, an_b)
    if lab is not None:
        return lab
    if _result_flip(older, newer):
        return "updates"  # "chlamydia NAAT positive" -> "test of cure: ... negative"
    return "duplicate" if same_statement(older, newer) else "compatible"


def verdict_by_rule(older: str, newer: str, similarity: float, memory_type: str = "") -> str:
    """The offline verdict on a candidate pair (``similarity``: the cosine that made it one,
    not evidence by itself): ``updates``, ``contradicts``, ``duplicate`` or ``compatible``."""
    return _verdict(older, newer, memory_type)


@lru_cache(maxsize=65_536)
def _verdict(older: str, newer: str, memory_type: str) -> str:
    if memory_type in EVENT_TYPES:
        # the flu shot of 2021 and of 2022 are two events; only the same words repeat one
        return (
            "duplicate"
            if " ".join(older.lower().split()) == " ".join(newer.lower().split())
            else "compatible"
        )
    if memory_type == "allergy" and no_allergies(older) and no_allergies(newer):
        return "duplicate" if list_scope(older) == list_scope(newer) else "compatible"
    if memory_type == "allergy" and no_allergies(older) != no_allergies(newer):
        # "NKDA" and an allergy it covers: the list changed ("updates"), or an allergy is said
        # not to be there ("contradicts": a review decides, never the rule alone for a safety
        # type); "NKDA" and a latex allergy are two facts
        if not lists_cover(older, newer) or _other_person(older, newer):
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
        if _spread(older, newer):
            return "updates"  # "rash on chest" -> "the rash has spread to both arms"
        return "compatible"  # "basal cell carcinoma, nose" / "..., L shoulder": two lesions
    if _corrected(older, newer):
        return "contradicts"  # "home O2 order entered in error"
    if memory_type == "treatment_response" and _contexts_clash(older, newer):
        return "compatible"  # "helping with daytime wheeze" / "not helping at night"
    if memory_type == "observation" and _two_readings(older, newer):
        return "compatible"  # "home BP 132/84" / "home HR 58"; "... mornings" / "... evenings"
    an_a, an_b = labs.analytes(older), labs.analytes(newer)
    if memory_type in MEASUREMENT_TYPES:
        return _measured(older, newer, an_a, an_b)  # the drugs it names are no evidence
    da, db = st.drug_names(older), st.drug_names(newer)
    if memory_type in SAFETY_TYPES:
        da, db = st.agents(da), st.agents(db)
    if memory_type in DRUG_TYPES and da and db and not _same_drug(da, db):
        return "compatible"  # two drugs, whatever lab value each names ("K 5.9 on ...")
    if an_a and an_b and memory_type != "treatment_response":
        lab = _lab_pair(older, newer, an_a, an_b)
        if lab is not None:
            return lab
    if memory_type != "treatment_response":
        if da and db:
            if not _same_drug(da, db) or (memory_type == "medication" and _two_orders(da, db)):
                return "compatible"  # two different drugs
            if memory_type == "medication" and _rescue_and_maintenance(older, newer):
                return "compatible"  # "nitroglycerin SL PRN" beside a scheduled patch
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
    if value_span_change(older, newer) and (
        memory_type != "condition" or labs.numbers(older) != labs.numbers(newer)
    ):
        return "updates"  # a condition's other name is another condition ("cataract" / "AMD")
    if memory_type in SLOT_TYPES:
        slot = _slot_verdict(older, newer, SLOT_TYPES[memory_type])
        if slot is not None:
            return slot
    ta, tb = st.topic(older), st.topic(newer)
    if memory_type == "treatment_response":
        return _response_verdict(older, newer, an_a & an_b, da, db)
    if _resolved(older, newer):
        return "updates"
    if memory_type in NEGATABLE_TYPES and _negated_subject(older, newer):
        return "updates" if st.words_of(newer, RESOLUTIONS) else "contradicts"
    if memory_type in FREE_TEXT_TYPES:
        qa, qb = st.split_label(older)[1].partition("?"), st.split_label(newer)[1].partition("?")
        if qa[1] and qb[1] and st.norm_words(qa[0]) != st.norm_words(qb[0]):
            return "compatible"  # answers to two different questions
        # a drug is a plan's item ("start insulin" / "insulin not needed"), but no shared
        # subject of two notes ("lost track of insulin pens" / "anxious about starting insulin")
        same = (_cover(ta, tb) >= 0.4 and len(ta & tb) >= 2) or (
            memory_type == "care_plan" and bool(da) and bool(db) and _same_drug(da, db)
        )
        if memory_type == "care_plan" and len(ta & tb) >= 2 and _plan_state_change(older, newer):
            return "updates"  # "referral to memory clinic sent" -> "attended memory clinic"
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
    # a duplicate: one subject inside the other, or nearly every word shared -- two subjects
    # each with a word the other lacks are two things said alike ("generalized" / "social
    # anxiety disorder"; "prefers to shower" / "to take tablets in the morning")
    nested = ta <= tb or tb <= ta or _cover(ta, tb) >= 0.8
    if same and nested and _cover(ta, tb) >= (0.8 if memory_type in FREE_TEXT_TYPES else 0.5):
        return "duplicate"
    return "compatible"
