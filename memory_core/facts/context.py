"""ConText over one statement: which things a negation, an uncertainty, a hypothetical, a
historical or another person's modifier applies to (the algorithm of Harkema et al.'s ConText,
as medspaCy implements it: a modifier's scope runs from its trigger in its direction to the end
of the sentence or the first terminator, and applies to every thing inside it; a pseudo-trigger
is a phrase that contains a trigger word but is none). The rules are data
(``memory_core/data/lexicon/context.json``). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .lexicon import MEASURED, ContextRule, Lexicon, Match, lexicon
from .model import Context
from .text import Span, Text, clause_bounds, sentence_bounds

CATEGORY = {
    "NEGATED_EXISTENCE": Context.NEGATED,
    "POSSIBLE_EXISTENCE": Context.UNCERTAIN,
    "HYPOTHETICAL": Context.HYPOTHETICAL,
    "HISTORICAL": Context.HISTORICAL,
    "FAMILY": Context.OTHER_PERSON,
    "QUESTION": Context.QUESTION,
    "INSTRUCTION": Context.INSTRUCTION,
    "DEFINITION": Context.DEFINITION,
    "FUTURE": Context.FUTURE,
    "REPORTED": Context.REPORTED,
}
#: How far a negation reaches forward, in tokens, when nothing ends it sooner ("no fever,
#: chills or rash" reaches three things; "no car, depends on the bus" stops at the comma).
NEGATION_REACH = 8
#: Words between listed things that keep a negation's scope open across a comma.
_LIST_WORDS = frozenset({"or", "and", "nor", "any", "other"})


@dataclass(frozen=True, slots=True)
class Scope:
    """One modifier of a statement: its trigger (tokens ``start``..``end``), its rule and
    category, and the tokens ``lo``..``hi`` it applies to."""

    start: int
    end: int
    rule: ContextRule
    category: Context
    lo: int
    hi: int
    #: a relative who is the subject of the sentence ("her mum lives alone"), not one named in it
    subject: bool = False

    def covers(self, s: Span) -> bool:
        return self.lo <= s.start and s.end <= self.hi and not (self.start <= s.start < self.end)


def contexts(t: Text, spans: Sequence[Span]) -> list[frozenset[Context]]:
    """The contexts of each span of ``spans`` (aligned)."""
    lex = lexicon()
    out: list[set[Context]] = [set() for _ in spans]
    for sc in scopes(t, spans):
        for k, s in enumerate(spans):
            if sc.covers(s) and _applies(sc, s, lex, t):
                out[k].add(sc.category)
    return [frozenset(c) for c in out]


def scopes(t: Text, spans: Sequence[Span]) -> list[Scope]:
    """Every modifier of ``t`` with the tokens it applies to (``spans``: the things named,
    whose names hold no trigger and reach a negation across a list)."""
    lex = lexicon()
    matches = lex.context.find(t.tokens, t.raw)
    pseudo = [m for m in matches if m.value.direction == "PSEUDO"]
    stops = {m.start for m in matches if m.value.direction == "TERMINATE"}
    out: list[Scope] = []
    patient = _writers_words(t, matches, lex)
    for m in matches:
        if m.value.direction in ("PSEUDO", "TERMINATE") or _inside(m, pseudo):
            continue
        if any(s.start <= m.start < s.end for s in spans) and not _imperative(m):
            continue  # a trigger word inside a thing's own name ("heart failure with reduced ...")
        if _after_number(t, m.start):
            continue  # part of a compound with the number before it ("25-OH vitamin D")
        category = CATEGORY[m.value.category]
        if category is Context.OTHER_PERSON and (
            (_reports(t, m, lex.reporting) and not _their_own_report(t, m))
            or _acts_on_patient(t, m, lex.measuring)
            or " ".join(t.tokens[m.start : m.end]) in patient
            or (_introduced(t, m.start) and not _FIRST_PERSON & set(t.tokens[m.end :]))
        ):
            continue  # (the writer introduced as the patient's relative: "hi its Sarah (her
            # daughter) - mum stopped ..." -- unless they go on of themself: "I've ...")
        subject = _is_subject(t, m)
        if m.value.direction == "SUBJECT" and not subject:
            continue
        lo, hi = _scope(t, m, stops, spans)
        inner = _bracket(t, m.start, m.end) if m.value.direction in _WHOLE else None
        if inner is not None and category is not Context.OTHER_PERSON:
            lo, hi = inner  # "ALT 92 (>2x ULN)": the sentence of a bracket's word is the bracket
        if category is Context.OTHER_PERSON and subject:
            lo, hi = sentence_bounds(t, m.start)
        elif category is Context.OTHER_PERSON and _a_label(t, m, lex.labels):
            lo, hi = sentence_bounds(t, m.start)  # "Ramipril increased to 10 mg - husband"
        elif category is Context.OTHER_PERSON and _in_whom(t, m, lex.labels):
            lo = _annotated(t, clause_bounds(t, m.start)[0])  # "... in her sister"
        out.append(Scope(m.start, m.end, m.value, category, lo, hi, subject))
    return out


def _after_number(t: Text, i: int) -> bool:
    """Token ``i`` is joined by a hyphen to a number before it ("25-OH", "3-day"): a part of
    one word, not a word of its own."""
    return (
        i > 0
        and t.tokens[i - 1][:1].isdigit()
        and t.text[t.ends[i - 1] : t.starts[i]] in ("-", "‑", "–")
    )


def _applies(sc: Scope, s: Span, lex: Lexicon, t: Text) -> bool:
    """A rule limited to some kinds of things applies to those only (a past habit's words to a
    slot without a value for it too: :func:`_past_only`). A relative named in a slot
    whose value names people is the slot's value ("lives with her daughter", "daughter has moved
    in with her"), not whose fact it is -- unless the relative is the sentence's subject and the
    sentence does not place the patient beside them ("her mum lives alone now", "her mum lives
    with her sister"): then it is the relative's."""
    kind, _, name = s.key.partition(":")
    if sc.category is Context.OTHER_PERSON and writers_own(t, sc, s):
        return False
    if MEASURED in sc.rule.kinds and measured(s.key):
        return True  # advice on a habit with an amount ("Reduce to 14 units a week")
    if sc.rule.kinds and kind not in sc.rule.kinds:
        return (
            sc.category is Context.HISTORICAL
            and sc.rule.direction == "FORWARD"  # "used to drink 50 units", not "had previously"
            and kind == "slot"
            and _past_only(lex, name)
        )
    if sc.category is Context.OTHER_PERSON and kind == "slot":
        slot = lex.slots.get(name)
        if slot is not None and slot.people:
            return sc.subject and not _joins_patient(t, sc.end, lex.stopwords)
    return True


def writers_own(t: Text, sc: Scope, s: Span) -> bool:
    """ "My daughter came with me and the consultant cut my levothyroxine": the thing said
    with "my" is the writer's, and "my daughter" rules out the daughter as the writer."""
    return (
        s.start > 0
        and sc.start > 0
        and t.tokens[s.start - 1] == "my"
        and t.tokens[sc.start - 1] == "my"
    )


#: The value a chart slot gives a habit given up ("former": an ex-smoker).
PAST_VALUE = "former"


def _past_only(lex: Lexicon, slot: str) -> bool:
    """ "used to", "formerly" (a forward past-habit trigger) of a slot with no value for a habit
    given up ("used to drink 50 units a week"): the habit and its amount are history. Of one
    with such a value ("used to smoke") they are that value now -- the rule's ``kinds`` leave
    slots out."""
    values = lex.slot_values.get(slot)
    return values is not None and PAST_VALUE not in values.values()


#: The words that name the patient as the one a relative lives with, drives or cares for.
_PATIENT_OBJECTS_AFTER = frozenset({"me", "us", "him", "her", "them", "pt", "patient"})


def _joins_patient(t: Text, rel: int, function: frozenset[str]) -> bool:
    """The relative's own clause places the patient beside them: the patient as an object
    ("moved in with her", "drives her to appointments", "staying with me"; "her" not a
    possessive -- nothing, or a function word, after it), or a move in said of nobody else
    ("her daughter has moved in")."""
    words = t.tokens[rel : clause_bounds(t, rel)[1]]
    for i, w in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        if w in _PATIENT_OBJECTS_AFTER and (w != "her" or not after.isalpha() or after in function):
            return True
        if w.startswith("mov") and after == "in" and "with" not in words[i + 2 : i + 3]:
            return True
    return False


#: Words that may come before the subject of a sentence ("pt's husband", "my wife", "the
#: other lady").
_LEAD = frozenset(
    {"pt", "pts", "patient", "patients", "my", "his", "her", "their", "the", "our", "other",
     "another", "a", "an", "this", "that",
     # adverbs an imperative opens with ("Gradually build up to 30 minutes ...")
     "gradually", "slowly", "please", "then", "first", "just", "also"}
)  # fmt: skip


def reaches_kind(rule: ContextRule, key: str) -> bool:
    """A rule limited to some kinds of things reaches a thing of those kinds (``measure``: a
    chart slot with an amount -- alcohol, tobacco, exercise, sleep)."""
    if not rule.kinds or key.partition(":")[0] in rule.kinds:
        return True
    return MEASURED in rule.kinds and measured(key)


def measured(key: str) -> bool:
    """The thing ``key`` is a chart slot with an amount (alcohol, tobacco, exercise, sleep)."""
    kind, _, name = key.partition(":")
    slot = lexicon().slots.get(name) if kind == "slot" else None
    return slot is not None and slot.measure


def _imperative(m: Match[ContextRule]) -> bool:
    """An instruction that opens its sentence: its verb may be the habit's own name ("Walk 30
    minutes a day", "Sleep 7-9 hours a night") -- the bare form is the advice, the note says
    "walks", "sleeps"."""
    return m.value.direction == "SUBJECT" and CATEGORY[m.value.category] is Context.INSTRUCTION


def _is_subject(t: Text, m: Match[ContextRule]) -> bool:
    """The relative is the sentence's subject (only lead words before it in its sentence: "Son:
    Mum has moved" is the writer's word for the patient), or an imperative opens its sentence
    or the words after a heading ("Advice: reduce ...")."""
    return opens_sentence(t, m.start, heading=CATEGORY[m.value.category] is Context.INSTRUCTION)


def opens_sentence(t: Text, i: int, heading: bool = True) -> bool:
    """Only lead words come before token ``i`` in its sentence (after a heading: "Plan: cut
    down ...", unless ``heading`` is false)."""
    lo, _hi = sentence_bounds(t, i)
    if heading:
        lo = next((k for k in range(i, lo, -1) if ":" in _gap(t, k)), lo)
    return all(w in _LEAD for w in t.tokens[lo:i])


def _gap(t: Text, k: int) -> str:
    """The characters between token ``k - 1`` and token ``k``."""
    return t.text[t.ends[k - 1] : t.starts[k]]


def _inside(m: Match[ContextRule], pseudo: Sequence[Match[ContextRule]]) -> bool:
    return any(p.start <= m.start and m.end <= p.end for p in pseudo)


def _reports(t: Text, m: Match[ContextRule], reporting: frozenset[str]) -> bool:
    """A relative who reports ("wife says he stopped metformin", "per daughter", "message from
    patient's wife"), not the person the fact is about."""
    after = t.tokens[m.end : m.end + 2]
    before = t.tokens[max(0, m.start - 3) : m.start]
    return (
        any(w in reporting for w in after)
        or any(w in ("per", "by") for w in before[-2:])
        or ("from" in before and any(w in reporting for w in before))
    )


def _in_whom(t: Text, m: Match[ContextRule], labels: Mapping[str, frozenset[str]]) -> bool:
    """A person named after "in her", "in his", "in my", "in their" ("diabetes in his father",
    "ruled out hypertension in her sister"), or "for her", "for his", "for" ("colonoscopy done
    for her husband", "increased to 10 mg for husband"): what comes before in the clause is
    theirs."""
    if m.start >= 1 and t.tokens[m.start - 1] == "for":
        # a bare relative ends its clause, but for a label's tail words ("for husband, not
        # patient", "for Dad as well"; "Nurofen for children at three" is a product's name)
        _lo, c_hi = clause_bounds(t, m.start)
        return all(w in labels.get("tail", ()) for w in t.tokens[m.end : c_hi])
    if m.start < 2 or t.tokens[m.start - 1] not in _WHOSE:
        return False
    return t.tokens[m.start - 2] == "in" or (
        t.tokens[m.start - 2] == "for" and t.tokens[m.start - 1] in _THEIRS
    )


_WHOSE = frozenset({"her", "his", "my", "their", "the", "a"})


def _a_label(t: Text, m: Match[ContextRule], labels: Mapping[str, frozenset[str]]) -> bool:
    """A relative named as a label after what is theirs: in a clause after the sentence's first
    (a dash, a bracket or a comma before it), with only assertion.json's ``labels.lead`` words
    before the person in that clause and only ``labels.tail`` words, numbers or their name in a
    bracket after them to the sentence's end ("Ramipril increased to 10 mg - husband, not
    patient", "HbA1c 64 mmol/mol (husband)", "amlodipine 10 mg, daughter's meds", "- husband
    (Tom)"). A relative who is told, present or acts ("- husband informed", "(daughter
    present)", ", son to collect") is no label."""
    s_lo, s_hi = sentence_bounds(t, m.start)
    c_lo, _c_hi = clause_bounds(t, m.start)
    if c_lo == s_lo:
        return False
    lead, tail = labels.get("lead", frozenset()), labels.get("tail", frozenset())
    return all(w in lead for w in t.tokens[c_lo : m.start]) and all(
        t.tokens[i] in tail or t.tokens[i][:1].isdigit() or _their_name(t, i, m.end)
        for i in range(m.end, s_hi)
    )


def _their_name(t: Text, i: int, after: int) -> bool:
    """Token ``i`` is the name of the person just labelled, in a bracket right after them
    ("- husband (Tom)")."""
    return i == after and t.raw[i][:1].isupper() and _brackets_before(t, i).endswith("(")


#: The directions of a modifier that covers the sentence it is in, whatever the words' order.
_WHOLE = frozenset({"SENTENCE", "SUBJECT", "CLAUSE", "STATEMENT"})


def _bracket(t: Text, start: int, end: int) -> tuple[int, int] | None:
    """The tokens inside the round bracket that holds tokens ``start``..``end`` and words of its
    own besides them ("(>2x ULN)", "(stop if cough)"); None outside a bracket, or where the
    bracket holds those tokens alone ("(?)", "(historical)": a note on what comes before)."""
    lo = start
    while lo > 0 and not _brackets_before(t, lo):
        lo -= 1
    if not _brackets_before(t, lo).endswith("("):
        return None
    hi = end
    while hi < len(t.tokens) and not _brackets_before(t, hi):
        hi += 1
    if not _brackets_before(t, hi).startswith(")") or (lo, hi) == (start, end):
        return None
    return lo, hi


def _brackets_before(t: Text, i: int) -> str:
    """The round brackets written between token ``i - 1`` and token ``i`` (before the first
    token where ``i`` is 0, after the last where it is the end), in order."""
    before = t.ends[i - 1] if i > 0 else 0
    after = t.starts[i] if i < len(t.tokens) else len(t.text)
    return "".join(ch for ch in t.text[before:after] if ch in "()")


def _annotated(t: Text, lo: int) -> int:
    """The start of the clause a bracket opening at token ``lo`` annotates ("ramipril
    increased to 10 mg (for husband, not patient)"): the clause before it; ``lo`` itself
    where no bracket opens there."""
    if lo == 0 or "(" not in t.text[t.ends[lo - 1] : t.starts[lo]]:
        return lo
    return clause_bounds(t, lo - 1)[0]


#: Third person possessives: after "my neighbour said", whose thing it is.
_THEIRS = frozenset({"her", "his", "their"})


def _their_own_report(t: Text, m: Match[ContextRule]) -> bool:
    """A person the patient introduces who reports on "her" or "his" thing ("my neighbour said
    her amlodipine was stopped", "my daughter says her INR was high"): the patient would say
    "my"; the thing is the reporter's."""
    if m.start == 0 or t.tokens[m.start - 1] != "my":
        return False
    _lo, hi = sentence_bounds(t, m.start)
    return any(w in _THEIRS for w in t.tokens[m.end : hi])


def _writers_words(t: Text, matches: Sequence[Match[ContextRule]], lex: Lexicon) -> frozenset[str]:
    """The words the statement's writer names the patient by, where the writer is a relative
    who opens it ("Daughter phoned: Mum's INR ...", "Son's email: Dad's kidney function ...",
    "Message from patient's wife: ... John's sertraline"): the relation the other way round
    (assertion.json's ``writer_kin``). None where the patient introduces the relative ("my
    daughter says ...": the patient writes) or the relative is not the opening's reporter."""
    first = next((m for m in matches if m.value.category == "FAMILY"), None)
    if first is None or t.sentence[first.start] != t.sentence[0]:
        return frozenset()
    lead = t.tokens[: first.start]
    introduced = _introduced(t, first.start)
    if "my" in lead or not (introduced or _reports(t, first, lex.reporting)):
        return frozenset()
    if not all(_opening_word(t, i, introduced, lex) for i in range(len(lead))):
        return frozenset()
    return lex.writer_kin.get(" ".join(t.tokens[first.start : first.end]), frozenset())


def _opening_word(t: Text, i: int, introduced: bool, lex: Lexicon) -> bool:
    """Token ``i`` may stand before the writer's relative in an opening: a lead word, a
    reporting word, "from" -- or, where the writer introduces themself, a greeting or a name
    ("hi its Sarah (her daughter)")."""
    w = t.tokens[i]
    if w in _LEAD or w in lex.reporting or w == "from":
        return True
    return introduced and (w in _INTRO or (i > 0 and t.raw[i][:1].isupper()))


#: the words a writer says of themself
_FIRST_PERSON = frozenset({"i", "im", "ive", "id", "ill", "me", "my", "mine", "myself"})
#: the words a writer introduces themself with ("hi, it's his daughter", "this is her son")
_INTRO = frozenset({"hi", "hello", "hey", "it", "its", "this", "is", "here"})


def _introduced(t: Text, at: int) -> bool:
    """The relative at token ``at`` is the writer, introduced as the patient's ("hi it's his
    daughter typing", "hi its Sarah (her daughter)", "this is her son"): after "his", "her" or
    "their", in an opening that says who is writing."""
    return at >= 2 and t.tokens[at - 1] in _THEIRS and bool(set(t.tokens[: at - 1]) & _INTRO)


#: Who a measuring verb is done to when it is the patient ("weighed him", "checked her sugar").
_PATIENT_OBJECTS = frozenset({"him", "her", "them", "mum", "dad", "mom"})


def _acts_on_patient(t: Text, m: Match[ContextRule], measuring: frozenset[str]) -> bool:
    """A relative or carer who measures the patient ("carer weighed him: 12 st 7 lb", "daughter
    checked her sugar"), not the person the reading is about ("her baby weighed 3.4 kg")."""
    after = t.tokens[m.end : m.end + 2]
    return len(after) == 2 and after[0] in measuring and after[1] in _PATIENT_OBJECTS


def _scope(
    t: Text, m: Match[ContextRule], stops: set[int], spans: Sequence[Span]
) -> tuple[int, int]:
    """The token range a modifier applies to."""
    s_lo, s_hi = sentence_bounds(t, m.start)
    direction = m.value.direction
    if direction in ("SENTENCE", "SUBJECT"):
        return s_lo, s_hi
    if direction == "STATEMENT":
        return m.start, len(t.tokens)
    if direction == "CLAUSE":  # "reduce X if Y" and "if Y, reduce X": the clause to the end
        return clause_bounds(t, m.start)[0], s_hi
    if m.value.category == "POSSIBLE_EXISTENCE" and t.tokens[m.start] == "?":
        # "?gout" reaches forward; "lip swelling after ibuprofen?" back to the clause start;
        # a "?" written onto the word after it and apart from the one before is that word's
        # query, whether the lexicon knows the word or not ("increased for ?ADHF")
        forward = _thing_at(spans, m.end) or _query_of_next(t, m.start)
        direction = "FORWARD" if forward else "BACKWARD"
    lo, hi = m.start, m.end
    if direction in ("FORWARD", "BIDIRECTIONAL"):
        hi = _forward_end(t, m, stops, spans, s_hi)
    if direction in ("BACKWARD", "BIDIRECTIONAL"):
        lo = max([s for s in stops if s_lo <= s < m.start], default=s_lo)
        if t.tokens[m.start] == "?" or m.value.kinds == _READINGS:
            # "Cr 1.8 today - AKI?": AKI only; "HbA1c 52 now, 64 before the dose increase":
            # a reading's own clause
            lo = max(lo, clause_bounds(t, m.start)[0])
    return lo, hi


def _query_of_next(t: Text, i: int) -> bool:
    """The "?" at token ``i`` touches the next token and not the one before ("for ?ADHF")."""
    touches_next = i + 1 < len(t.tokens) and t.starts[i + 1] == t.ends[i]
    return touches_next and (i == 0 or t.ends[i - 1] < t.starts[i])


#: A rule for readings only (``kinds`` loinc): "before the dose increase" is the history of
#: the value in its own clause.
_READINGS = frozenset({"loinc"})


def _forward_end(
    t: Text, m: Match[ContextRule], stops: set[int], spans: Sequence[Span], s_hi: int
) -> int:
    end = min([s for s in stops if m.end <= s < s_hi], default=s_hi)
    if m.value.category != "NEGATED_EXISTENCE":
        return end
    end = min(end, m.end + NEGATION_REACH + _longest(spans))
    for i in range(m.end + 1, end):
        if t.clause[i] != t.clause[i - 1] and not (
            _thing_at(spans, i) or t.tokens[i] in _LIST_WORDS
        ):
            return i
    return end


def _thing_at(spans: Sequence[Span], i: int) -> bool:
    return any(s.start == i for s in spans)


def _longest(spans: Sequence[Span]) -> int:
    return max((s.end - s.start for s in spans), default=0)
