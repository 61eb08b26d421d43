"""The assertion step (issue 30): before any rule sees a fact, what the statement does with
the thing it names and with the change it says of it. Pure; rules as data
(``memory_core/data/lexicon/assertion.json`` beside ConText's ``context.json``).

A fact can be strong evidence only when the statement **asserts** it: the patient's own thing,
their state now, said as a fact. Otherwise its contexts say what the statement does instead --
ConText's (negated, uncertain, hypothetical or conditional, historical, another person) and
the assertion step's: a **question** ("asked whether to stop metformin", a sentence that ends
with "?"), an **instruction** or rule ("sick day rules: stop metformin when vomiting", "hold
apixaban 48 h before the operation"), a **definition**, threshold or reference range ("an HbA1c
of 48 or more is diagnostic"), a **future** plan ("will reduce it next month"), **reported**
speech ("read that sertraline can be stopped", "was told ..."). :mod:`.model` lists which never
supersede (``NEVER_SUPERSEDES``).

Two things make this more than ConText on the things named:

* a modifier's scope covers the **change words** in it, not only the things: "stop" in
  "Reduce rivaroxaban to 15 mg if CrCl falls below 50" or in "Metformin 500 mg bd. Will stop
  it next month" gives its thing a change that is hypothetical or future, not asserted
  (:func:`change_contexts`);
* structure the phrase rules cannot see: a sentence that ends with a question mark is a
  question; "when" opening a condition ("when vomiting", "when your sugars are high") is one,
  "when" opening a time in the past ("when I was in hospital") is not; a change timed before an
  event ("before the hip replacement", "prior to surgery") is a plan (:func:`structural`).

What a change applies to -- the thing itself, or something that only names it ("foods that
interact with warfarin", "the coeliac support group", "aspirin-containing remedies") -- is the
reader's role ``mention`` (states.json's ``mentions`` and ``modified_heads``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

from .context import Scope, measured, opens_sentence, reaches_kind, scopes, writers_own
from .lexicon import ContextRule, lexicon
from .model import NEVER_SUPERSEDES, ClinicalFacts, Context
from .text import Span, Text, clause_bounds, sentence_bounds, things

#: What a change word's scope can make of the change: never asserted (a change that is only
#: history is no current change either).
NOT_ASSERTED = NEVER_SUPERSEDES | {Context.HISTORICAL}
_OF_CHANGES = NOT_ASSERTED | {Context.NEGATED}
#: What a statement of a type asserts by its nature: a care plan is a plan for later.
ASSERTED_BY_TYPE: dict[str, frozenset[Context]] = {"care_plan": frozenset({Context.FUTURE})}
#: How far after "before" an event may be named ("before her planned hip replacement").
EVENT_REACH = 3
#: How far after "when" a past form marks a time in the past ("when she was admitted").
WHEN_REACH = 3
_STRUCTURE = ContextRule("STRUCTURE", "SENTENCE")
#: a structural rule of drug changes only ("stop aspirin on Monday"; a preference "from
#: Monday" is said now)
_DRUGS_ONLY = ContextRule("STRUCTURE", "SENTENCE", frozenset({"drug"}))


#: What a request says ("could you ...?", "can I have ...?"), which a preference's statement
#: asserts where the request is said to last ("... from now on": :func:`standing_request`).
ASKED = frozenset({Context.QUESTION, Context.HYPOTHETICAL})
#: The memory types whose statements a lasting request asserts.
REQUESTED_TYPES = frozenset({"preference"})


def standing_request(t: Text, i: int) -> frozenset[Context]:
    """What the sentence of token ``i`` asks that it states instead, where it says its request
    lasts ("could you book me in face to face from now on": assertion.json's
    ``standing_requests``): a request's question and supposition, and the doubt of a question
    mark that ends it (ConText's "?"). Empty where it says no such thing."""
    lo, hi = sentence_bounds(t, i)
    if not lexicon().standing_requests.find(t.tokens[lo:hi], t.raw[lo:hi]):
        return frozenset()
    return ASKED | {Context.UNCERTAIN} if t.tokens[hi - 1] == "?" else ASKED


def own(memory_type: str, contexts: frozenset[Context]) -> frozenset[Context]:
    """``contexts`` without those a statement of ``memory_type`` asserts by its nature."""
    return contexts - ASSERTED_BY_TYPE.get(memory_type, frozenset())


def change_contexts(
    t: Text, spans: Sequence[Span], at: Sequence[int], numbers: Sequence[int] = ()
) -> list[frozenset[Context]]:
    """The contexts of the change word that gave each thing of ``spans`` its state, at tokens
    ``at`` (aligned; -1 for none): those that keep a change from being asserted
    (:data:`NOT_ASSERTED`), and negation (a change said not to have happened: "not ready to
    quit", "didn't stop it"). A rule limited to some kinds of things reaches the change of a
    thing of those kinds only ("former" is a habit's value, not the history of its change).
    Where no change word gave a thing its state, the contexts over the number its new value is
    said with, at ``numbers`` (aligned, when given): a new dose said under a hypothetical, a
    plan or an instruction ("ramipril could go up to 10 mg", "ramipril 10 mg proposed",
    "please increase ramipril to 10 mg") is not asserted either."""
    found = [*scopes(t, spans), *structural(t)]
    events = conditions(t)
    timed = _timed_ahead(t)
    out: list[frozenset[Context]] = []
    for k, (s, i) in enumerate(zip(spans, at, strict=True)):
        if i < 0:
            n = numbers[k] if numbers else -1
            if n < 0:
                out.append(frozenset())
                continue
            # a drug's new dose said with a time still ahead: "bisoprolol 5 mg in 2 weeks"
            drug = s.key.startswith("drug:")
            ahead = {sc.category for sc in timed if drug and sc.lo <= n < sc.hi}
            # a habit's amount said as the past ("previously drank 60 units a week"): history,
            # though the words that make a habit's value former leave its slot out
            past = (
                _reaching(t, found, s, n, _PAST, any_kind=True)
                if measured(s.key) and not _said_now(t, n)
                else frozenset()
            )
            out.append(_reaching(t, found, s, n, NOT_ASSERTED) | ahead | past)
            continue
        got = set(_reaching(t, found, s, i, _OF_CHANGES))
        if not _made(t, i):
            got |= {
                sc.category for sc in events if sc.lo <= i < sc.hi and reaches_kind(sc.rule, s.key)
            }
        if _infinitive(t, i):
            got.add(Context.FUTURE)
        out.append(frozenset(got))
    return out


def _reaching(
    t: Text,
    found: Sequence[Scope],
    s: Span,
    i: int,
    categories: frozenset[Context],
    any_kind: bool = False,
) -> frozenset[Context]:
    """The categories (of ``categories``) of the scopes that reach token ``i`` said of the thing
    ``s``, but for the trigger's own words and (unless ``any_kind``) rules limited to other
    kinds of things."""
    return frozenset(
        sc.category
        for sc in found
        if sc.category in categories
        and sc.lo <= i < sc.hi
        and not sc.start <= i < sc.end
        and (any_kind or reaches_kind(sc.rule, s.key))
        and not (sc.category is Context.OTHER_PERSON and writers_own(t, sc, s))
    )


_PAST = frozenset({Context.HISTORICAL})


def _said_now(t: Text, n: int) -> bool:
    """The number at token ``n`` follows a word of now in its clause ("..., now 10", "down to
    10 now"): the current amount, whatever past was said before it."""
    clause = t.clause[n]
    return any(
        n - 1 <= m.end <= n and t.clause[m.start] == clause
        for m in lexicon().now_words.find(t.tokens, t.raw)
    )


#: A change word that ends a phrasal verb ("taper off", "cut down"): its verb comes before it.
_PARTICLES = frozenset({"off", "down", "up", "out"})


def _infinitive(t: Text, i: int) -> bool:
    """A change said as an infinitive -- "plan to stop", "needs to reduce", "to be increased"
    -- is not made yet, nor one a note opens with ("To taper off omeprazole over 4 weeks");
    one a past verb leads ("had to stop", "decided to reduce") was."""
    j = i - 1
    if t.tokens[i] in _PARTICLES and j >= 1:
        j -= 1  # the verb of "to taper off", "to come off", "to cut down"
    if j >= 1 and t.tokens[j] == "be" and t.tokens[j - 1] == "to":
        j -= 1
    if j < 0 or t.tokens[j] != "to":
        return False
    return j == 0 or not past_tense(t.tokens[j - 1])


#: Words before an -ed change word that make it a present passive, a rule rather than a
#: change made ("metformin is stopped when eGFR is below 30").
_PRESENT_PASSIVE = frozenset({"is", "are", "be", "gets", "get"})


#: an object pronoun between a phrasal verb and its particle ("took me off")
_OBJECT_PRONOUNS = frozenset({"me", "him", "her", "them", "it", "us", "you"})


def _made(t: Text, i: int) -> bool:
    """The change word at ``i`` says a change made: in the past tense (not a present passive:
    "is stopped when ..."), or the particle of a phrasal verb that is ("stepped down", "cut
    back", "took me off": the verb before it, or before its object pronoun)."""
    if past_tense(t.tokens[i]):
        return not (i >= 1 and t.tokens[i - 1] in _PRESENT_PASSIVE)
    if t.tokens[i] not in _PARTICLES or i < 1:
        return False
    # the verb just before, or before its object pronoun ("took me off", "put her on")
    verb = i - 2 if i >= 2 and t.tokens[i - 1] in _OBJECT_PRONOUNS else i - 1
    return past_tense(t.tokens[verb])


def past_tense(word: str) -> bool:
    """A word in the past tense ("held", "stopped", "saw", "brought"): of a change word, a change
    made, which a condition or an event does not make a rule ("Eliquis held for 3 days prior to
    colonoscopy"). Irregular forms from lemminflect's lexicon (a verb's past or participle that
    is not its base: "brought", "kept", "found"); the lexicon's ``past_forms`` add those that are
    ("put", "cut")."""
    return word.endswith("ed") or word in lexicon().past_forms or _irregular_past(word)


@lru_cache(maxsize=8192)
def _irregular_past(word: str) -> bool:
    from lemminflect import getAllInflections, getAllLemmas

    for lemma in getAllLemmas(word).get("VERB", ()):
        if lemma == "be":
            continue  # "been": "I've been taking it" says how things are
        forms = getAllInflections(lemma, upos="VERB")
        if word != lemma and word in forms.get("VBD", ()) + forms.get("VBN", ()):
            return True
    return False


def hedges(facts: ClinicalFacts) -> frozenset[Context]:
    """What a statement says of any thing it names that keeps it from being asserted (a
    question, a condition, a plan, reported speech, another person ...): the caution on an
    automatic change -- where a statement hedges what it says of anything, a change read from
    it waits for a reviewer rather than being applied at once."""
    out: frozenset[Context] = frozenset()
    for f in facts.facts:
        out |= f.contexts
    return out & NOT_ASSERTED


def thing_contexts(t: Text, spans: Sequence[Span]) -> list[frozenset[Context]]:
    """The structural contexts (:func:`structural`) of each thing of ``spans`` (aligned);
    ConText's and the phrase rules' come from :func:`.context.contexts`."""
    found = structural(t)
    return [
        frozenset(sc.category for sc in found if sc.covers(s) and s.how != "question")
        for s in spans
    ]


@lru_cache(maxsize=65_536)
def structural(t: Text) -> tuple[Scope, ...]:
    """The scopes read from a statement's structure rather than a trigger phrase, of things
    and changes alike: a sentence that ends with "?"; "her own" after a relative; a sentence
    that opens with a hedge of the whole statement; a sentence that opens with the pronoun of
    a relative the patient's possessive named ("his wife ... Her potassium ..."); a relative's
    name said again ("daughter Priya ... Priya's own GP ...")."""
    return (
        *_questions(t),
        *_their_own(t),
        *_hedged_statement(t),
        *_relatives_pronoun(t),
        *_relatives_name(t),
    )


@lru_cache(maxsize=65_536)
def conditions(t: Text) -> tuple[Scope, ...]:
    """The scopes of changes only: a change made "when" something happens, or timed before an
    event, is a rule or a plan ("stop metformin when vomiting"); a finding "when" something
    happens is still a finding ("vivid dreams when donepezil is taken at night")."""
    return (
        *_when_conditions(t),
        *_before_events(t),
        *_will_contractions(t),
        *_timed_ahead(t),
        *_on_a_day(t),
        *_thresholds(t),
        *_if_then(t),
    )


#: the arrows a note writes between a condition and what to do ("eGFR <30 → stop metformin")
_ARROWS = "→|->|=>"
#: A threshold that opens a sentence, then a colon or an arrow: "eGFR <30 → stop metformin",
#: "HR < 50: reduce bisoprolol", "INR above 4 -> omit warfarin" (a result said before a colon,
#: "eGFR 28: metformin stopped", has no comparison).
_THRESHOLD = re.compile(
    r"(?:^|[.;!?]\s+)[^\W\d][^.;:!?\n]{0,40}?"
    r"(?:<=|>=|<|>|≤|≥|\b(?:below|above|under|over|less than|more than|greater than)\b)"
    rf"\s*\d+(?:[.,]\d+)?[^\s:.;]*\s*(?::|{_ARROWS})",
    re.IGNORECASE,
)


def _thresholds(t: Text) -> list[Scope]:
    """A change said after a threshold and a colon or an arrow is what to do if the value
    crosses it: from there to the end of the sentence, a condition."""
    out = []
    for m in _THRESHOLD.finditer(t.text):
        i = t.token_at(m.end() - 1)
        if i >= len(t.tokens):
            continue
        _lo, hi = sentence_bounds(t, i)
        out.append(Scope(i, i + 1, _STRUCTURE, Context.HYPOTHETICAL, i, hi))
    return out


#: an arrow, or "=" between words: what follows is what to do if what comes before holds
_IF_THEN = re.compile(rf"\s(?:{_ARROWS}|=)\s")


def _if_then(t: Text) -> list[Scope]:
    """A change word in its base form right after an arrow or "=" that follows the words
    opening its sentence is what to do if they hold ("Heartburn or trouble swallowing = stop
    alendronic acid", "Pregnant → increase levothyroxine by 25 mcg"): a rule, from there to the
    sentence's end. Said as done ("BP 168/95 → amlodipine increased") it is not."""
    changes = {m.start for m in lexicon().states.find(t.tokens, t.raw)}
    out = []
    for m in _IF_THEN.finditer(t.text):
        i = t.token_at(m.end() - 1)
        if i >= len(t.tokens) or i not in changes or past_tense(t.tokens[i]):
            continue
        lo, hi = sentence_bounds(t, i)
        if lo < i:  # words before the sign in its sentence: the condition
            out.append(Scope(i, i + 1, _STRUCTURE, Context.HYPOTHETICAL, i, hi))
    return out


_WILL = re.compile(r"\b\w+['’]ll\b", re.IGNORECASE)


def _will_contractions(t: Text) -> list[Scope]:
    """ "I'll", "we'll", "she'll" (read as one word without the apostrophe: "ill", "well"): a
    change from there to the end of the sentence is for later."""
    out = []
    for m in _WILL.finditer(t.text):
        i = t.token_at(m.start())
        _lo, hi = sentence_bounds(t, i)
        out.append(Scope(i, i + 1, _STRUCTURE, Context.FUTURE, i, hi))
    return out


#: A time still ahead said after a change in its clause: "after 8 weeks", "in 2 weeks", "over
#: the next month", "within a fortnight" (the words before a number, and the units after it).
_AHEAD_WORDS = frozenset({"after", "in", "over", "within"})
_AHEAD_LEADS = frozenset({"the", "next", "another", "a", "an", "few", "couple", "of"})
_AHEAD_UNITS = frozenset(
    {"day", "days", "week", "weeks", "wk", "wks", "fortnight", "fortnights", "month", "months",
     "mth", "mths", "year", "years"}
)  # fmt: skip


#: Words after such a time that make it one gone by: "after 3 months on the statin", "after 6
#: weeks of treatment".
_ELAPSED = frozenset({"on", "of", "with", "taking", "using", "since", "treatment"})


@lru_cache(maxsize=65_536)
def _timed_ahead(t: Text) -> tuple[Scope, ...]:
    """A change said with a time still ahead in its clause ("stop omeprazole after 8 weeks",
    "increase ramipril to 10 mg in 2 weeks", "titrate up over 8 weeks") is planned: its
    clause, for a change word not in the past tense (:func:`_made`: "stopped after 8 weeks"
    was)."""
    numbers = lexicon().number_words
    n = len(t.tokens)
    out: list[Scope] = []
    for i, w in enumerate(t.tokens):
        if w not in _AHEAD_WORDS:
            continue
        j = i + 1
        while j < n and j < i + 4 and t.tokens[j] in _AHEAD_LEADS:
            j += 1
        if j < n and (t.tokens[j][:1].isdigit() or t.tokens[j] in numbers):
            j += 1
        elapsed = j + 1 < n and t.tokens[j + 1] in _ELAPSED  # "after 3 months on the statin"
        if j > i + 1 and j < n and t.tokens[j] in _AHEAD_UNITS and not elapsed:
            lo, hi = clause_bounds(t, i)
            out.append(Scope(i, j + 1, _STRUCTURE, Context.FUTURE, lo, hi))
    return tuple(out)


#: The words before a day said with no direction ("on Monday", "from Friday", "on the 20th",
#: "in March")
_DAY_LEADS = frozenset({"on", "from", "by"})
_MONTH_LEADS = frozenset({"in", "by", "from"})
#: words that put a clause's day behind it ("since the admission in June", "a week ago")
_BACK = frozenset({"since", "ago", "last"})


@lru_cache(maxsize=65_536)
def _on_a_day(t: Text) -> tuple[Scope, ...]:
    """A change said with a day that has no direction and no year in its clause ("Plan: stop
    aspirin on Monday", "increase ramipril to 10 mg on the 20th", "stop alendronic acid in
    March") is for the next such day, a plan -- for a change word not in the past tense
    (:func:`_made`: "aspirin stopped on Monday" was)."""
    lex = lexicon()
    toks = t.tokens
    out: list[Scope] = []
    for i, w in enumerate(toks[:-1]):
        nxt = toks[i + 1]
        day = w in _DAY_LEADS and (
            nxt in lex.weekdays
            or (
                nxt == "the"
                and i + 2 < len(toks)
                and toks[i + 2].isdigit()
                and len(toks[i + 2]) <= 2
            )
        )
        month = w in _MONTH_LEADS and nxt in lex.months and nxt != "may"
        if month and i + 2 < len(toks) and toks[i + 2].isdigit():
            continue  # "in March 2027": a month with its year says where it is
        if not (day or month):
            continue
        lo, hi = clause_bounds(t, i)
        if any(past_tense(x) or x in _BACK for x in toks[lo:hi]):
            continue  # "her husband died in March and she now lives alone": told as done
        out.append(Scope(i, i + 2, _DRUGS_ONLY, Context.FUTURE, lo, hi))
    return tuple(out)


def _questions(t: Text) -> list[Scope]:
    """A sentence whose last token is followed by a question mark asks; it asserts nothing."""
    out = []
    i = 0
    while i < len(t.tokens):
        lo, hi = sentence_bounds(t, i)
        tail = t.text[t.ends[hi - 1] : t.starts[hi] if hi < len(t.tokens) else len(t.text)]
        if "?" in tail or (t.tokens[hi - 1] == "?" and hi - 1 > lo):
            out.append(Scope(lo, lo, _STRUCTURE, Context.QUESTION, lo, hi))
        i = hi
    return out


def _hedged_statement(t: Text) -> list[Scope]:
    """A sentence or clause that opens with a statement hedge ("Neighbour says pt has moved into
    a care home. Not confirmed with family."; "... amlodipine stopped - not confirmed with the
    patient") makes everything the statement says uncertain."""
    lex = lexicon()
    out = []
    for m in lex.statement_hedges.find(t.tokens, t.raw):
        lo, _hi = sentence_bounds(t, m.start)
        if m.start in (lo, clause_bounds(t, m.start)[0]):  # "... stopped - not confirmed"
            out.append(Scope(m.start, m.end, _STRUCTURE, Context.UNCERTAIN, 0, len(t.tokens)))
    return out


@lru_cache(maxsize=65_536)
def disputed(t: Text) -> bool:
    """A change said and then disputed in its own sentence (assertion.json's ``disputes``: a
    contrast word after a change word, then a pointer back and a word of it continuing --
    "someone stopped his digoxin, but the letter lists it as continued"; "digoxin stopped by
    cardiology but the GP list still shows it"): which is true is for a reviewer. A contrast
    that names another thing ("stopped metformin but still on gliclazide") has no pointer
    back, and disputes nothing."""
    lex = lexicon()
    words = lex.disputes
    contrast, pointers, going = (
        words.get(k, frozenset()) for k in ("contrast", "pointers", "continued")
    )
    changes = [m.start for m in lex.states.find(t.tokens, t.raw) if m.value.state != "active"]
    for c, w in enumerate(t.tokens):
        if w not in contrast:
            continue
        lo, hi = sentence_bounds(t, c)
        after = set(t.tokens[c + 1 : hi])
        if any(lo <= i < c for i in changes) and after & pointers and after & going:
            return True
    return False


@lru_cache(maxsize=65_536)
def for_the_writers(t: Text) -> str:
    """The person a change is said to be for, as the writer's own ("reduced to 50 mg for my
    daughter"), or the person a message's heading is about ("Re: son. Ramipril increased to
    10 mg"), or "": a parent may write for a child who is the patient, or of their own child
    -- whose change it is, only a reader of the record can say."""
    for m in lexicon().context.find(t.tokens, t.raw):
        if m.value.category != "FAMILY":
            continue
        lead = t.tokens[max(0, m.start - 2) : m.start]
        if lead == _FOR_MY:
            return " ".join(t.tokens[m.start - 2 : m.end])
        heading = t.tokens[: m.start]
        if heading[:1] == ("re",) and set(heading[1:]) <= _WHOSE_HEADING:
            return " ".join(t.tokens[: m.end])  # "Re: son.", "RE: my husband"
    return ""


_FOR_MY = ("for", "my")
#: the words that may stand between a heading's "Re:" and the relative ("Re: my husband")
_WHOSE_HEADING = frozenset({"my", "his", "her", "their", "our"})

#: a person named by title and surname with where they lie on a ward ("Mr Adeyemi in bay 3",
#: "Mrs Khan, bed 12", "Mr Patel (bed 7)"), or one the patient shares a bay or room with
_INPATIENT = re.compile(
    r"\b(?:Mr|Mrs|Ms|Miss|Mx)\.?\s+[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?,?\s*\(?\s*"
    r"(?:(?:in|at|from|on)\s+)?"
    r"(?:the\s+)?(?:bay|bed|room|side room|cubicle)\s*\d+"
    r"|\b(?i:shar(?:es|ed|ing|e)\s+(?:a|the|his|her)\s+(?:bay|room|ward)\s+with)\s+"
    r"(?:Mr|Mrs|Ms|Miss|Mx)\b"
)


def inpatient_named(text: str) -> str:
    """A person a note names with where they lie on a ward ("retinal screening cancelled for
    Mr Adeyemi in bay 3"), or one the patient shares a bay with ("Shares a bay with Mr Doyle,
    whose eGFR ..."), or "": it may be another patient of the ward -- whose fact it is, only a
    reader of the record can say."""
    m = _INPATIENT.search(text)
    return m.group(0) if m else ""


@lru_cache(maxsize=65_536)
def reporter_pronoun(t: Text) -> str:
    """A relative who reports, then "she" or "he" as the subject of what is reported
    ("Daughter says she stopped taking omeprazole", "Son reports that he has stopped ..."), or
    a relative named in an earlier sentence by no word that rules them out as the patient,
    then a sentence that opens with "she" or "he", or with "her" or "his" ("Daughter attended
    with pt. She has been started on ...", "His son came with him. He ...", "Spoke to
    daughter. Her ramipril is now 10 mg"); else "": the pronoun may be the
    relative as well as the patient -- whose change it is, only a reader of the record can
    say. ("His wife ... She ..." and "my aunt ... her ..." are the relative's:
    :func:`_relatives_pronoun`.)"""
    toks, lex = t.tokens, lexicon()
    for m in lex.context.find(toks, t.raw):
        if m.value.category != "FAMILY":
            continue
        others = {g for g, words in lex.relatives_by_pronoun.items() if toks[m.end - 1] in words}
        k = m.end
        if k < len(toks) and toks[k] in _REPORTS:
            k += 2 if k + 1 < len(toks) and toks[k + 1] == "that" else 1
            pronoun = _PRONOUNS.get(toks[k], "") if k < len(toks) else ""
            if pronoun and (not others or pronoun in others):  # "Wife says he ...": the patient
                return " ".join(toks[m.start : k + 1])
        owner = toks[m.start - 1] if m.start else ""
        if owner == "my" or _PATIENTS_POSSESSIVE.get(owner, "") not in ("", *others):
            continue  # "my aunt", "his wife": the relative is not the patient
        for _lo, _hi, j in _later_sentences(t, m.start):
            # "She has been started on ...", or her possessive: "Her ramipril is now 10 mg"
            pronoun = _PRONOUNS.get(toks[j], "") or _PATIENTS_POSSESSIVE.get(toks[j], "")
            if pronoun and (not others or pronoun in others):
                return f"{' '.join(toks[m.start : m.end])} ... {t.raw[j]}"
    return ""


def _later_sentences(t: Text, i: int) -> Iterator[tuple[int, int, int]]:
    """Each sentence after the one of token ``i``: its bounds and its first word after the
    words that may lead it ("And", "So", "Apparently": :data:`_OPENING_LEADS`)."""
    k = sentence_bounds(t, i)[1]
    while k < len(t.tokens):
        lo, k = sentence_bounds(t, k)
        j = lo
        while j < k - 1 and t.tokens[j] in _OPENING_LEADS:
            j += 1
        yield lo, k, j


#: verbs a relative reports with, and the pronouns that may then be the relative or the patient
_REPORTS = frozenset(
    {"says", "said", "reports", "reported", "tells", "told", "states", "stated", "mentions"}
)
_PRONOUNS = {"she": "she", "shes": "she", "he": "he", "hes": "he"}


@lru_cache(maxsize=65_536)
def mood_unclear(t: Text) -> str:
    """The verb a sentence opens with whose imperative and past tense are one word ("Cut down
    to 14 units a week": advice, or what was done? assertion.json's ``either_mood``), or ""."""
    words = lexicon().either_mood
    return next((w for i, w in enumerate(t.tokens) if w in words and opens_sentence(t, i)), "")


def _their_own(t: Text) -> list[Scope]:
    """ "Mum says her own asthma has gone": a relative named in the sentence -- even one who
    only reports -- and "her own", "his own", "their own" after it make what follows that
    person's."""
    lex = lexicon()
    family = [m.start for m in lex.context.find(t.tokens, t.raw) if m.value.category == "FAMILY"]
    out = []
    for i in range(1, len(t.tokens)):
        if t.tokens[i] != "own" or t.tokens[i - 1] not in ("her", "his", "their"):
            continue
        lo, hi = sentence_bounds(t, i)
        if any(lo <= f < i for f in family):
            out.append(Scope(i, i + 1, _STRUCTURE, Context.OTHER_PERSON, i, hi))
    return out


#: the patient's possessive that can name a relative ("his wife", "her husband") and the
#: pronoun it makes the patient
_PATIENTS_POSSESSIVE = {"his": "he", "her": "she"}
#: a third person's pronouns as the tokeniser writes them ("he's": "hes"), and the subject
#: pronoun each stands for (the transcript reader reads a clinician's answer with them too)
PERSON_PRONOUNS = {"he": "he", "hes": "he", "his": "he", "him": "he",
                   "she": "she", "shes": "she", "her": "she", "hers": "she"}  # fmt: skip
_OPENING_LEADS = frozenset({"and", "but", "so", "also", "now", "then", "apparently"})


#: the words by which a writer is "I" (the tokeniser drops apostrophes: "I'm" is "im")
FIRST_PERSON = frozenset({"i", "im", "ive", "id", "ill", "me", "my", "mine", "myself"})


def _relatives_pronoun(t: Text) -> list[Scope]:
    """A relative named with a possessive that rules them out as the patient -- the patient's
    of the other pronoun ("his wife", "her husband": the patient is "he", the relative "she"),
    or the writer's own ("my aunt": the writer is "I") -- then a later sentence where the
    relative's pronoun opens it ("Spoke to his wife today. Her potassium came back 6.0 ...") or,
    as "her" or "his", stands before what its clause says ("I visited my aunt. They've reduced
    her prednisolone ..."): that is the relative's. A later sentence where the writer says "I"
    or "my" is the writer's; where the patient and the relative share a pronoun ("his son ...
    He ...") nothing is said: it may be either."""
    lex = lexicon()
    out = []
    for m in lex.context.find(t.tokens, t.raw):
        if m.value.category != "FAMILY" or m.start == 0:
            continue
        owner = t.tokens[m.start - 1]
        patient = "i" if owner == "my" else _PATIENTS_POSSESSIVE.get(owner)
        relation = t.tokens[m.end - 1]
        theirs = next((p for p, kin in lex.relatives_by_pronoun.items() if relation in kin), "")
        if not patient or not theirs or patient == theirs:
            continue
        for lo, hi, j in _later_sentences(t, m.start):
            if patient == "i" and FIRST_PERSON & set(t.tokens[lo:hi]):
                continue  # "... My levothyroxine was reduced": the writer's
            if PERSON_PRONOUNS.get(t.tokens[j]) == theirs:
                out.append(Scope(j, j + 1, _STRUCTURE, Context.OTHER_PERSON, lo, hi))
                continue
            for k in range(j, hi - 1):
                if t.tokens[k] in _PATIENTS_POSSESSIVE and PERSON_PRONOUNS[t.tokens[k]] == theirs:
                    out.append(
                        Scope(k, k + 1, _STRUCTURE, Context.OTHER_PERSON, k, clause_bounds(t, k)[1])
                    )
    return out


def _relatives_name(t: Text) -> list[Scope]:
    """A relative given a name right after the word that says who they are ("daughter Priya",
    "her sister Joan", in one sentence), then that name again: what its clause says from the
    name on is that person's ("... Priya's own GP has increased her amlodipine to 10 mg")."""
    lex = lexicon()
    named: dict[str, int] = {}  # the name, and where it was given
    for m in lex.context.find(t.tokens, t.raw):
        k = m.end
        if m.value.category != "FAMILY" or k >= len(t.tokens):
            continue
        if _a_name(t.raw[k]) and sentence_bounds(t, k) == sentence_bounds(t, m.end - 1):
            named.setdefault(t.tokens[k], k)
    out = []
    for i, tok in enumerate(t.tokens):
        if named.get(tok, i) < i:
            out.append(Scope(i, i + 1, _STRUCTURE, Context.OTHER_PERSON, i, clause_bounds(t, i)[1]))
    return out


def _a_name(raw: str) -> bool:
    """A word written as a given name: a capital, then small letters ("Priya", "Joan's")."""
    word = raw.removesuffix("'s").removesuffix("’s")
    return len(word) > 1 and word[0].isupper() and word[1:].isalpha() and word[1:].islower()


def _when_conditions(t: Text) -> list[Scope]:
    """ "When" (or "whenever") opening a condition -- nothing in the past tense after it --
    makes its clause to the end of the sentence a condition ("stop metformin when vomiting")."""
    lex = lexicon()
    out = []
    for i, tok in enumerate(t.tokens):
        if tok not in ("when", "whenever"):
            continue
        after = t.tokens[i + 1 : i + 1 + WHEN_REACH]
        if any(w in lex.past_forms or (w.endswith("ed") and len(w) > 4) for w in after):
            continue
        lo, _ = clause_bounds(t, i)
        _s_lo, s_hi = sentence_bounds(t, i)
        out.append(Scope(i, i + 1, _STRUCTURE, Context.HYPOTHETICAL, lo, s_hi))
    return out


@lru_cache(maxsize=65_536)
def proviso(t: Text, memory_type: str) -> str:
    """The words that make a change hold only on a condition (assertion.json's ``provisos``:
    "subject to", "provided", "depending on", "on days with", "in hot weather"), or of a "when"
    of a condition (:func:`_when_conditions`) whose own clause names a clinical thing ("when
    fasting sugars are under 4", "when wheezy"); "" where there are none. A change said beside
    them may be a dose for when that holds -- a second order, or the as-needed order itself --:
    for a reviewer. Only the decision reads them, and they make nothing hypothetical: in a
    conversation they often go with a fact ("I take paracetamol, two tablets, depending on how
    bad the pain is"; "when we recheck the ferritin" is a time)."""
    found = lexicon().provisos.find(t.tokens, t.raw)
    pseudo = [m for m in found if m.value != "proviso"]  # "provided by the pharmacy"
    for m in found:
        if m.value == "proviso" and not any(n.start <= m.start < n.end for n in pseudo):
            return " ".join(t.tokens[m.start : m.end])
    conditions = _when_conditions(t)
    spans = things(t, memory_type) if conditions else []
    for sc in conditions:
        end = clause_bounds(t, sc.start)[1]
        if any(sc.end <= s.start and s.end <= end for s in spans):
            return " ".join(t.tokens[sc.start : min(end, sc.start + WHEN_WORDS)])
    return ""


#: How many words of a "when" clause a decision's reason quotes.
WHEN_WORDS = 6


def _before_events(t: Text) -> list[Scope]:
    """A change timed before an event ("hold apixaban for 48 h before the hip replacement",
    "stop empagliflozin 3 days prior to surgery") is an instruction for then: its sentence."""
    lex = lexicon()
    out = []
    for m in lex.before_events.find(t.tokens, t.raw):
        after = t.tokens[m.end : m.end + EVENT_REACH]
        if any(w in lex.events for w in after):
            lo, hi = sentence_bounds(t, m.start)
            out.append(Scope(m.start, m.end, _STRUCTURE, Context.INSTRUCTION, lo, hi))
    return out


__all__ = [
    "ASSERTED_BY_TYPE",
    "NOT_ASSERTED",
    "change_contexts",
    "conditions",
    "hedges",
    "own",
    "past_tense",
    "proviso",
    "structural",
    "thing_contexts",
]
