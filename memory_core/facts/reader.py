"""The offline reader: one statement's text read into :class:`~.model.ClinicalFacts` -- what
it is about (keys), each thing's value and state, and the ConText around it. Pure and cached
per (text, memory type); every phrase it knows comes from the lexicon.

What it knows: drugs through the drug dictionary (brands, generics, combinations as one key
per ingredient, allergy classes by MeSH), lab analytes and vitals by LOINC, conditions,
symptoms and findings, the chart slots of social history, preferences and plans; doses,
frequencies and formulations, results with units (converted), conditions' stages and severity,
slot values and clock times; states from the words around a thing (stopped, started, changed,
resolved, refuted, planned, done, cancelled; a switch from one thing to another); negation,
uncertainty, hypothetical and conditional plans, history and other people by ConText. What it
cannot know: a paraphrase that names none of these, a drug or condition the lexicon and the
dictionary lack, a relation between two things beyond the words that link them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from .. import drugs
from . import assertion, values
from .context import contexts as context_of
from .lexicon import Lexicon, StateRule, lexicon
from .model import (
    PLAN_SLOTS,
    ClinicalFacts,
    Context,
    Fact,
    KeyKind,
    Origin,
    Role,
    State,
    merge,
    subject_kinds,
)
from .text import Span, Text, parse, things

#: A state word reaches the nearest thing at most this many tokens away in its direction.
STATE_REACH = 6
#: What a state word means for a condition ("cough stopped" is resolved).
_FOR_CONDITION = {State.STOPPED: State.RESOLVED}
#: The slot every allergy is an entry of (an empty list, "NKDA", fills it with nothing).
ALLERGY_LIST = "slot:allergy list"


@lru_cache(maxsize=65_536)
def read(text: str, memory_type: str = "") -> ClinicalFacts:
    """The clinical facts of ``text`` (a statement of type ``memory_type``)."""
    lex = lexicon()
    t = parse(text)
    spans = things(t, memory_type)
    if not spans:
        return ClinicalFacts(origin=Origin.TEXT, lexicon=lex.version)
    anchors = [s for s in spans if s.how not in ("ingredient", "class")]
    roles = _roles(t, anchors, lex)
    states, said_at = _states(t, anchors, roles, subject_kinds(memory_type), lex)
    said = [_value(t, span, anchors, lex, memory_type) for span in anchors]
    numbers = [_number_of(t, s, v, lex, anchors) for s, v in zip(anchors, said, strict=True)]
    ctx, states = _asserted(t, anchors, states, said_at, numbers, memory_type)
    date = values.statement_date(t)
    facts: list[Fact] = []
    for k, span in enumerate(anchors):
        outcome = memory_type == "treatment_response"
        value = said[k]
        if _in_passing(span, value, lex):
            continue
        span = _specific(span, value, lex)
        for key, role in _keys(span, spans, roles[k], lex, outcome):
            facts.append(
                Fact(
                    key=key,
                    value=value,
                    state=_state_for(span, states[k]),
                    contexts=_contexts_for(span, ctx[k], value),
                    role=role,
                    text=t.words(span.start, span.end),
                    date=date,
                )
            )
    if memory_type == "allergy":
        facts += _list_entry(facts, lex)
    return ClinicalFacts(facts=merge(facts), origin=Origin.TEXT, lexicon=lex.version)


@lru_cache(maxsize=65_536)
def dose_in_doubt(text: str, memory_type: str, key: str) -> bool:
    """Whether ``text`` (a statement of ``memory_type``) says the dose of the drug ``key`` with
    a number after it that may make it one form's strength or a range
    (:func:`.values.dose_in_doubt`)."""
    t = parse(text)
    anchors = [s for s in things(t, memory_type) if s.how not in ("ingredient", "class")]
    return any(values.dose_in_doubt(t, s, anchors) for s in anchors if s.key == key)


def _number_of(t: Text, span: Span, value: str, lex: Lexicon, spans: Sequence[Span]) -> int:
    """The token of the number a thing's dose (or a habit's amount, or a result's value as
    written) is said with, after its name: in its sentence, or for a result in the window its
    value is read from (:func:`.values.window`: "Obesity is BMI 30 or more; a lower cut off
    of 27.5 applies ...") -- the clause that says the number governs it (-1: none)."""
    if KeyKind.of(span.key) is KeyKind.SLOT:
        return values.amount_at(t, span, lex) if values.parts(value).get("amount") else -1
    given = values.parts(value)
    number = (given.get("dose") or given.get("value", "")).partition(" ")[0]
    try:
        target = float(number)
    except ValueError:
        return -1
    result = KeyKind.of(span.key) is KeyKind.LOINC and "dose" not in given
    end = values.window(t, span, [s for s in spans if s.how == "lab"])[1] if result else None
    for i in range(span.end, len(t.tokens)):
        if (t.sentence[i] != t.sentence[span.start]) if end is None else i >= end:
            break
        try:
            if float(t.tokens[i]) == target:
                return i
        except ValueError:
            continue
    return -1


def _asserted(
    t: Text,
    anchors: Sequence[Span],
    states: Sequence[State | None],
    said_at: Sequence[int],
    numbers: Sequence[int],
    memory_type: str,
) -> tuple[list[frozenset[Context]], list[State | None]]:
    """The contexts of each thing -- ConText's and the assertion step's on the thing, and
    those of the change word that gave it its state, or else of the number of its value at
    ``numbers`` (:mod:`.assertion`), but for what a
    statement of ``memory_type`` asserts by its nature -- and its state: a change said not
    to have happened ("not ready to quit") is none."""
    own = context_of(t, anchors)
    shape = assertion.thing_contexts(t, anchors)
    change = assertion.change_contexts(t, anchors, said_at, numbers)
    contexts, out = [], []
    stops = _negated_stops(t) if any(s is State.STOPPED for s in states) else frozenset()
    for anchor, a, b, c, state, at in zip(
        anchors, own, shape, change, states, said_at, strict=True
    ):
        if state is State.STOPPED and at in stops and Context.NEGATED in a:
            # "doesn't smoke anymore", "isn't on warfarin any more": the negation of the thing
            # is the stop's own ("type 2 diabetes now, not pre anymore": not the diabetes's)
            a, b, c = (x - {Context.NEGATED} for x in (a, b, c))
        negated = Context.NEGATED in c and state in _UNDONE_BY_NEGATION
        if Context.NEGATED in c and state is State.DONE and memory_type in _TO_DO_TYPES:
            state = State.PLANNED  # "not given", "not (yet) done": still to do
        # what a type asserts by its nature is asserted of its things, not of a change for
        # later: a care plan is a plan, a plan's item "to be reduced at the next review" is not
        # (a value's number, where no change word was, is of the thing: its type's nature holds)
        said = assertion.own(memory_type, c) if at < 0 else c - {Context.NEGATED}
        got = assertion.own(memory_type, a | b) | said
        if memory_type in assertion.REQUESTED_TYPES and anchor.key.startswith("slot:"):
            got -= assertion.standing_request(t, anchor.start)  # "could you ... from now on"
        contexts.append(got)
        out.append(State.ACTIVE if negated else state)
    return contexts, out


def _negated_stops(t: Text) -> frozenset[int]:
    """Where a stop said with a negation begins ("not ... anymore", "any longer": states.json's
    ``negated`` words)."""
    return frozenset(m.start for m in lexicon().states.find(t.tokens, t.raw) if m.value.negated)


#: Changes a negation says did not happen ("hasn't stopped", "not ready to quit", "no dose
#: change"): the thing stays as it was. (A negated start -- "never started insulin" -- says
#: the thing is not taken: the negation stays the thing's.)
_UNDONE_BY_NEGATION = frozenset({State.STOPPED, State.CHANGED, State.RESOLVED})
#: The types whose things are done or still to do: a vaccine, a procedure, a plan's item "not
#: given" or "not (yet) done" is still to do (a habit "hasn't had a drink" is no plan).
_TO_DO_TYPES = frozenset({"immunization", "procedure", "care_plan"})


def _in_passing(span: Span, value: str, lex: Lexicon) -> bool:
    """A slot keyed only by its values, named without one: the statement is about something
    else ("written instructions handed over after every visit" says nothing of the visit
    time; "prefers afternoon appointments" does)."""
    if KeyKind.of(span.key) is not KeyKind.SLOT:
        return False
    slot = lex.slots.get(span.key.partition(":")[2])
    return slot is not None and slot.by_value and not values.parts(value).get("value")


def _specific(span: Span, value: str, lex: Lexicon) -> Span:
    """A reading of an analyte qualified as one of its children is one ("Glucose, fasting:
    126" is a fasting glucose, keyed as the child and, through it, the parent)."""
    if KeyKind.of(span.key) is not KeyKind.LOINC:
        return span
    analyte = lex.analyte_for_code(span.key.partition(":")[2])
    if analyte is None:
        return span
    given = values.parts(value)
    for child in lex.analytes.values():
        same = child.parent == analyte.id and child.when
        if same and all(given.get(dim) == v for dim, v in child.when):
            return Span(child.key, span.start, span.end, span.how)
    return span


def _keys(
    span: Span, spans: Sequence[Span], role: Role, lex: Lexicon, outcome: bool = False
) -> list[tuple[str, Role]]:
    """The keys of one thing: its own; for a combination its ingredients' and for a condition
    or an analyte the broader ones it is a kind of (diabetic retinopathy is a retinopathy, a
    fasting glucose a glucose), as parts of what it is about -- and, where the statement is a
    treatment's outcome, the analytes that measure the condition (hypertension: blood
    pressure); for an allergen the classes it belongs to (in passing)."""
    out = [(span.key, role)]
    for s in spans:
        if (s.start, s.end) == (span.start, span.end) and s.how in ("ingredient", "class"):
            out.append((s.key, Role.INGREDIENT if s.how == "ingredient" else Role.MENTION))
    part = Role.MENTION if role is Role.MENTION else Role.INGREDIENT
    kind, _, name = span.key.partition(":")
    if kind == "condition" and name in lex.concepts:
        out += [(f"condition:{w}", part) for w in lex.concepts[name].within]
        if outcome:
            measured = lex.concepts[name].measured_by
            out += [(lex.analytes[a].key, part) for a in measured]
    elif kind == "loinc":
        analyte = lex.analyte_for_code(name)
        if analyte is not None and analyte.parent:
            out.append((lex.analytes[analyte.parent].key, part))
    elif kind == "drug" and " " in name and "/" not in name:
        family = name.split(" ")[0]
        if drugs.canonical_names(family) == {family}:
            out.append((f"drug:{family}", part))  # insulin glargine is an insulin
    return out


#: Types whose statements say where or when of the drugs they name (a reaction "at the
#: patch site", a response "in the right shoulder"): their drug facts carry the qualifiers.
_SITED_DRUG_TYPES = frozenset({"adverse_reaction", "treatment_response", "observation"})
#: Where a medication is given, on a side (the right eye, the left knee), makes two orders of
#: one drug two things ("timolol right eye" / "timolol left eye"); a route alone ("by mouth")
#: and when it is taken are its regimen, which a newer order changes.
_ORDER_PLACES = frozenset({"side", "site"})


def _value(t: Text, span: Span, spans: Sequence[Span], lex: Lexicon, memory_type: str) -> str:
    kind = KeyKind.of(span.key)
    if kind in (KeyKind.DRUG, KeyKind.ALLERGEN) and span.how != "allergen":
        value = values.drug_value(t, span, spans)
        if memory_type in _SITED_DRUG_TYPES:
            value = values.join([*values.parts(value).items(), *values.qualifiers(t, span, spans)])
        elif memory_type == "medication":
            places = [q for q in values.qualifiers(t, span, spans) if q[0] in _ORDER_PLACES]
            if any(dim == "side" for dim, _v in places):
                value = values.join([*values.parts(value).items(), *places])
        return value
    if kind is KeyKind.LOINC:
        code = span.key.partition(":")[2]
        plan = memory_type == "care_plan"
        return values.lab_value(t, span, spans, lex.analyte_for_code(code), plan)
    if kind is KeyKind.CONDITION:
        return values.condition_value(t, span, spans)
    if kind is KeyKind.QUESTION:
        answer = t.text[t.ends[span.end - 1] :].strip(" ?")
        return values.join([("answer", " ".join(answer.lower().split()))])
    if kind is KeyKind.SLOT:
        value = values.slot_value(t, span, spans, lex)
        if _heading(t, span):
            entry = [("entry", "chart"), ("text", values.entry_text(t, span, lex))]
            value = values.join([*values.parts(value).items(), *entry])
        if span.key.startswith(("slot:procedure", "slot:referral")):
            value = values.join([*values.parts(value).items(), *values.qualifiers(t, span, spans)])
        return value
    return ""


def _heading(t: Text, span: Span) -> bool:
    """The slot heads a chart entry ("Insurance: Medicaid", "Preferred contact: mobile"): its
    trigger opens the statement (after at most two words) and a colon follows it."""
    if span.start > 2 or span.end >= len(t.tokens):
        return False
    if ":" in t.text[: t.ends[span.end - 1]]:
        return False
    return t.text[t.ends[span.end - 1] : t.starts[span.end]].strip().startswith(":")


def _state_for(span: Span, state: State | None) -> State | None:
    """A thing's state; a plan word on a slot that is no plan item ("scripts sent to the CVS")
    states nothing of it."""
    if state is None:
        return State.ACTIVE
    plan = span.key.startswith(("slot:referral", "slot:procedure", "slot:follow up"))
    if state is State.PLANNED and span.key.startswith("slot:") and not plan:
        return State.ACTIVE
    if KeyKind.of(span.key) is KeyKind.CONDITION:
        return _FOR_CONDITION.get(state, state)
    return state


def _contexts_for(span: Span, found: frozenset[Context], value: str) -> frozenset[Context]:
    """A slot whose value was read carries its negation in the value ("denies alcohol" is the
    value none; "no car" a way of getting about), not as a negation of the slot."""
    if span.key.startswith("slot:") and values.parts(value).get("value"):
        return found - {Context.NEGATED}
    return found


def _list_entry(facts: Sequence[Fact], lex: Lexicon) -> list[Fact]:
    """An allergy statement is an entry of the allergy list: a fact of the list's slot, named
    in passing, whose value is the entry's scope (a drug, or a food or the environment)."""
    if any(f.key == ALLERGY_LIST for f in facts):
        return []
    kinds = lex.drugs["non_drug_allergens"]
    agents = [
        f for f in facts if f.kind is KeyKind.ALLERGEN and f.role is Role.SUBJECT and f.asserted
    ]
    if not agents:
        return []
    scopes = sorted({kinds.get(f.name, "drug") for f in agents})
    return [Fact(ALLERGY_LIST, f"entry={'+'.join(scopes)}", State.ACTIVE, role=Role.MENTION)]


# --- states ------------------------------------------------------------------------------------
def _states(
    t: Text,
    spans: Sequence[Span],
    roles: Sequence[Role],
    prefer: frozenset[KeyKind],
    lex: Lexicon,
) -> tuple[list[State | None], list[int]]:
    """The state each thing is given, and the token of the word that gave it (-1: none): by
    a switch first (the thing switched from is stopped, the one switched to started), then by
    the nearest state word in its direction -- a thing of the kinds the statement's type is
    about first ("lisinopril stopped due to cough": the drug stopped, not the cough). A thing
    named in passing keeps no state word's state, and a state word inside a passing phrase
    ("added to metformin") gives none."""
    out: list[State | None] = [None] * len(spans)
    at = [-1] * len(spans)
    switched = _switches(t, spans, lex)
    passing = lex.mentions.find(t.tokens, t.raw)
    eligible = [k for k, r in enumerate(roles) if r is not Role.MENTION and k not in switched]
    best: dict[int, tuple[int, State, int]] = {}
    restarted: dict[int, int] = {}  # a drug started again, and where that is said
    for m in lex.states.find(t.tokens, t.raw):
        inside = any(s.start <= m.start < s.end for s in spans)
        if inside or any(p.start <= m.start < p.end for p in passing):
            continue
        found = _nearest(t, spans, eligible, (m.start, m.end), m.value, prefer)
        if found is None:
            continue
        k, gap = found
        state = State(m.value.state)
        denied = bool(set(t.tokens[max(0, m.start - 2) : m.start]) & _NOT_AGAIN)
        if state is State.STARTED and KeyKind.of(spans[k].key) is KeyKind.DRUG and not denied:
            restarted.setdefault(k, m.start)
        if state is State.STARTED and t.tokens[m.start].startswith(_AGAIN) and not denied:
            for j in _stopped_before(t, spans, m.start):
                restarted.setdefault(j, m.start)  # "held for the scan and resumed": that drug
        rank = (state is State.ACTIVE, gap, _STATE_RANK[state])  # a change before "on", "takes"
        if k not in best or rank < (
            best[k][1] is State.ACTIVE,
            best[k][0],
            _STATE_RANK[best[k][1]],
        ):
            best[k] = (gap, state, m.start)
    for k, (_gap, state, start) in best.items():
        if state is State.RESOLVED and _episode(t, spans[k]):
            continue  # "asthma attack ... settled": the attack is over, not the asthma
        if state is State.STOPPED and k in restarted:
            # "Metformin stopped on admission, restarted on discharge", "held for the scan and
            # resumed two days later": stopped and started again -- taken again ("now back on
            # it", with a pronoun, is not read so)
            state, start = State.STARTED, restarted[k]
        out[k], at[k] = state, start
    for k, (state, start) in switched.items():
        out[k], at[k] = state, start
    return out, at


#: a start word that says "again" ("restarted", "resumed"): of the drug stopped before it
_AGAIN = ("restart", "resum")
#: words before a start that say it did not happen ("not restarted", "haven't restarted it")
_NOT_AGAIN = frozenset(
    {"not", "never", "no", "without", "havent", "hasnt", "hadnt", "didnt", "wasnt", "werent"}
)


def _stopped_before(t: Text, spans: Sequence[Span], at: int) -> list[int]:
    """The drugs named before token ``at`` in its sentence, where no drug follows it there (the
    drug a "resumed" with no object of its own starts again)."""
    here = t.sentence[at]
    drugs = [
        k
        for k, s in enumerate(spans)
        if KeyKind.of(s.key) is KeyKind.DRUG and t.sentence[s.start] == here
    ]
    if any(spans[k].start > at for k in drugs):
        return []
    return [k for k in drugs if spans[k].end <= at]


def _episode(t: Text, s: Span) -> bool:
    """A condition named with an episode word ("asthma attack", "an exacerbation of COPD"):
    an episode of it (:func:`.values.episode_of`)."""
    return KeyKind.of(s.key) is KeyKind.CONDITION and bool(values.episode_of(t, s))


def _outranks(state: State, gap: int, other_gap: int, other: State) -> bool:
    """Of two state words for one thing: a refutation first ("never actually started"), any
    change before a plain "on" / "takes", then the nearer, then the one that says more."""

    def key(s: State, g: int) -> tuple[bool, bool, int, int]:
        return (s is State.ACTIVE, s is not State.REFUTED, g, _STATE_RANK[s])

    return key(state, gap) < key(other, other_gap)


#: Of two state words equally near a thing, the one that says more ("continue" says least).
_STATE_RANK = {
    State.REFUTED: 0,
    State.STOPPED: 1,
    State.RESOLVED: 1,
    State.CANCELLED: 1,
    State.DONE: 2,
    State.STARTED: 3,
    State.CHANGED: 3,
    State.PLANNED: 4,
    State.ACTIVE: 5,
}


def _nearest(
    t: Text,
    spans: Sequence[Span],
    eligible: Sequence[int],
    at: tuple[int, int],
    rule: StateRule,
    prefer: frozenset[KeyKind],
) -> tuple[int, int] | None:
    """The thing a state word at tokens ``at`` gives its state to: the nearest in its
    direction in its sentence (preferred kinds first); with none there, the nearest preferred
    thing before it in an earlier sentence ("on metformin; switched to extended-release")."""
    start, end = at
    best: tuple[int, int, int] | None = None
    for k in eligible:
        s = spans[k]
        kind = KeyKind.of(s.key)
        if (rule.kinds and kind.value not in rule.kinds) or start <= s.start < end:
            continue
        ahead = s.start >= end
        if (rule.direction == "FORWARD" and not ahead) or (rule.direction == "BACKWARD" and ahead):
            continue
        gap = s.start - end if ahead else start - s.end
        same = t.sentence[s.start] == t.sentence[start]
        if ahead and _another_act(t, end, s.start):
            continue  # "stopped crushing the metformin": the act stopped, not the drug
        if same and gap <= STATE_REACH:
            rank = (0 if kind in prefer else 1, gap, k)
            best = rank if best is None or rank < best else best
    if best is not None:
        return best[2], best[1]
    if rule.direction == "FORWARD" and start > 0 and t.tokens[start - 1] == "to":
        # a change said as an infinitive with no thing after it ("ramipril 10 mg - to start
        # after the holiday"): the thing named before it in its sentence
        before = [
            k
            for k in eligible
            if spans[k].end <= start - 1
            and t.sentence[spans[k].start] == t.sentence[start]
            and not (rule.kinds and KeyKind.of(spans[k].key).value not in rule.kinds)
        ]
        if before and not any(
            spans[k].start >= end and t.sentence[spans[k].start] == t.sentence[start]
            for k in range(len(spans))
        ):
            k = before[-1]
            return k, start - spans[k].end
    earlier = [
        k
        for k in eligible
        if spans[k].end <= start
        and KeyKind.of(spans[k].key) in prefer
        and not (rule.kinds and KeyKind.of(spans[k].key).value not in rule.kinds)
    ]
    if (
        rule.direction != "FORWARD"
        and earlier
        and not _sentence_names_any(t, spans, start)
        and _no_subject_of_its_own(t, start, end)
    ):
        return earlier[-1], STATE_REACH + 1
    return None


#: Words that point back to a thing named before ("it was stopped", "stopped them").
_POINTERS = frozenset({"it", "its", "them", "this", "that", "these", "those", "both"})


def _no_subject_of_its_own(t: Text, start: int, end: int) -> bool:
    """The sentence of a state word at ``start``..``end`` says nothing of its own before it
    ("Stopped last week.", "Now switched to the XR form.", "It was stopped.") or points back
    right after it ("stopped it"): it continues the thing named before. "Her oxygen was
    stopped yesterday." names its own subject, which the lexicon may not key."""
    lo = start
    while lo > 0 and t.sentence[lo - 1] == t.sentence[start]:
        lo -= 1
    before = t.tokens[lo:start]
    after = t.tokens[end] if end < len(t.tokens) and t.sentence[end] == t.sentence[start] else ""
    stop = lexicon().stopwords
    return after in _POINTERS or all(w in stop or not w.isalpha() for w in before)


def _another_act(t: Text, a: int, b: int) -> bool:
    """A verb of another act right after a change word, before the thing ("stopped crushing
    the tablets", "stopped eating foods ...", "quit buying ..."): a word ending in -ing that is
    not a way of taking the thing (assertion.json's ``take_verbs``: "stopped taking it")."""
    verbs = lexicon().take_verbs
    w = t.tokens[a] if a < b else ""  # the word right after the change word
    return w.endswith("ing") and len(w) > 4 and w not in verbs


def _sentence_names_any(t: Text, spans: Sequence[Span], i: int) -> bool:
    return any(t.sentence[s.start] == t.sentence[i] for s in spans)


def _switches(t: Text, spans: Sequence[Span], lex: Lexicon) -> dict[int, tuple[State, int]]:
    """A switch from one thing to another ("switched from X to Y", "X changed to Y", "X -> Y"):
    X stopped, Y started (each with the switch's first token)."""
    out: dict[int, tuple[State, int]] = {}
    for m in lex.switch_phrases.find(t.tokens, t.raw):
        pair = _switch_pair(t, spans, m.start, m.end)
        if pair is None:
            continue
        a, b = pair
        if spans[a].key == spans[b].key or KeyKind.of(spans[a].key) != KeyKind.of(spans[b].key):
            continue
        out[a], out[b] = (State.STOPPED, m.start), (State.STARTED, m.start)
    return out


_LINKS = frozenset({"to", "with", "for", "by", "->", "=>", "→"})


def _switch_pair(t: Text, spans: Sequence[Span], start: int, end: int) -> tuple[int, int] | None:
    """The two things of a switch at tokens ``start``..``end``: the thing after it and the one
    after the next link word ("switched from X to Y"), or the thing before it and the one after
    it ("X changed to Y", "X -> Y")."""
    same = [k for k, s in enumerate(spans) if t.sentence[s.start] == t.sentence[start]]
    after = [k for k in same if spans[k].start >= end]
    before = [k for k in same if spans[k].end <= start]
    if len(after) >= 2:
        first, second = after[0], after[1]
        gap = t.tokens[spans[first].end : spans[second].start]
        if any(w in _LINKS for w in gap) and spans[first].start - end <= 2:
            return first, second
    if before and after:
        linked = t.tokens[end : spans[after[0]].start]
        if (t.tokens[start] in _LINKS or any(w in _LINKS for w in linked)) and len(linked) <= 3:
            return before[-1], after[0]
    return None


# --- roles -------------------------------------------------------------------------------------
def _before_derived(t: Text, span: Span, spans: Sequence[Span], lex: Lexicon) -> bool:
    """An analyte named just before a derived measure's word, or before another analyte that
    is ("free/total PSA ratio", "cholesterol/HDL ratio"): a part of the measure's name."""
    end = span.end
    while True:
        if end < len(t.tokens) and t.tokens[end] in lex.derived_words:
            return True
        nxt = next(
            (
                s
                for s in spans
                if s.start == end and s.end > end and KeyKind.of(s.key) is KeyKind.LOINC
            ),
            None,
        )  # (a value named by its unit is a name of no words: no next one)
        if nxt is None:
            return False
        end = nxt.end


#: Kinds of things whose name may qualify a noun (a drug, a condition, a chart slot's habit:
#: "warfarin clinic", "the coeliac support group", "stop smoking advice"): a thing named before
#: a modified head is named in passing.
_QUALIFY_HEADS = frozenset({KeyKind.DRUG, KeyKind.CONDITION, KeyKind.SLOT})


def _after_mentions(t: Text, spans: Sequence[Span], lex: Lexicon) -> set[int]:
    """The places in ``spans`` of the things named after a mention phrase (within two words,
    in its clause), each thing of the phrase so named ("despite sulfa antibiotic allergy":
    both)."""
    out: set[int] = set()
    for m in lex.mentions.find(t.tokens, t.raw):
        reach = m.end + 2
        for k, s in enumerate(spans):
            if s.start >= m.end and t.clause[s.start] == t.clause[m.start]:
                if s.start > reach:
                    break
                out.add(k)
                reach = s.end
    return out


def _cause(t: Text, spans: Sequence[Span], start: int, end: int) -> int | None:
    """The condition named as the cause of another (within two words after a cause phrase at
    tokens ``start``..``end``, another condition before it in its clause: "neuropathy
    secondary to diabetes"), by its place in ``spans``; None when there is none."""
    clause = t.clause[start]
    conditions = [k for k, s in enumerate(spans) if KeyKind.of(s.key) is KeyKind.CONDITION]
    if not any(spans[k].end <= start and t.clause[spans[k].start] == clause for k in conditions):
        return None
    after = [k for k in conditions if end <= spans[k].start <= end + 2]
    return after[0] if after and t.clause[spans[after[0]].start] == clause else None


def _of_another(t: Text, s: Span, spans: Sequence[Span]) -> bool:
    """A condition named after "of" right after another condition is what the first is of
    ("anaemia of CKD", "exacerbation of COPD"): named in passing."""
    if KeyKind.of(s.key) is not KeyKind.CONDITION or s.start < 2 or t.tokens[s.start - 1] != "of":
        return False
    return any(
        KeyKind.of(o.key) is KeyKind.CONDITION and o.end == s.start - 1 and o.key != s.key
        for o in spans
    )


def _roles(t: Text, spans: Sequence[Span], lex: Lexicon) -> list[Role]:
    """A thing named after a mention phrase ("added to metformin", "while on furosemide",
    "carries an EpiPen", "foods that interact with warfarin") is named in passing; so is a
    drug or a condition qualifying a noun ("not on methotrexate day", "warfarin clinic", "the
    coeliac support group", "aspirin-containing remedies"), an analyte said after another
    specimen ("urine sodium") and a rescue medicine beside an allergy's agent."""
    out = [Role.SUBJECT] * len(spans)
    for k, s in enumerate(spans):
        kind = KeyKind.of(s.key)
        if s.end < len(t.tokens) and kind in _QUALIFY_HEADS:
            head = lex.modified_heads.at(t.tokens, t.raw, s.end)
            plan = kind is KeyKind.SLOT and s.key.partition(":")[2].startswith(PLAN_SLOTS)
            if head is not None and head.value in ("any", kind.value) and not plan:
                out[k] = Role.MENTION
        elif KeyKind.of(s.key) is KeyKind.LOINC and (
            _before_derived(t, s, spans, lex) or values.other_specimen(t, s)
        ):
            out[k] = Role.MENTION
    for k in _after_mentions(t, spans, lex):
        out[k] = Role.MENTION
    for m in lex.causes.find(t.tokens, t.raw):
        cause = _cause(t, spans, m.start, m.end)
        if cause is not None:
            out[cause] = Role.MENTION
    for k, s in enumerate(spans):
        if _of_another(t, s, spans):
            out[k] = Role.MENTION
    rescue = lex.drugs["rescue"]
    agents = [k for k, s in enumerate(spans) if s.key.partition(":")[2] not in rescue]
    if any(KeyKind.of(spans[k].key) in (KeyKind.DRUG, KeyKind.ALLERGEN) for k in agents):
        for k, s in enumerate(spans):
            if s.key.partition(":")[2] in rescue:
                out[k] = Role.MENTION
    return out
