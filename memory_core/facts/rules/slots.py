"""The rows about chart slots (social history, preferences, plans, observations): two kinds
of one slot, an addition, a slot denied, a single-valued slot's new value or amount, a habit's
or plan item's state changed, the same plan item restated. Pure."""

from __future__ import annotations

from ..lexicon import lexicon
from ..model import PLAN_SLOTS, Context, Decision, Fact, KeyKind, State, Verdict
from ..values import parts
from .base import (
    _LIST,
    STRONG,
    WEAK,
    Pair,
    _additions,
    _changed,
    _compatible,
    _d,
    _negated,
    _words_apart,
    evidence,
    one_occasion,
)


# --- chart slots ----------------------------------------------------------------------------------
def _slots(p: Pair) -> list[tuple[Fact, Fact]]:
    return [(a, b) for a, b in p.of_kind(KeyKind.SLOT) if a.key != _LIST]


def _slot_kinds(p: Pair) -> Decision | None:
    """Two kinds of one slot are two facts (cigars / cigarettes, cannabis / cocaine)."""
    for a, b in _slots(p):
        ka, kb = _set(parts(a.value).get("kind")), _set(parts(b.value).get("kind"))
        if ka and kb and not ka & kb:
            return _compatible("slot.two-kinds", evidence(a, b, "two kinds"), a.key)
    return None


def _set(v: str | None) -> frozenset[str]:
    return frozenset(x for x in (v or "").split("+") if x)


def _slot_addition(p: Pair) -> Decision | None:
    for a, b in _slots(p):
        if _additions(p.newer_text) and not _changed(b):
            return _compatible("slot.addition", evidence(a, b, "an addition"), a.key)
    return None


def _plan(a: Fact) -> bool:
    return a.name.startswith(PLAN_SLOTS)


def _slot_presence(p: Pair) -> Decision | None:
    """One statement denies what the other admits ("denies alcohol use" / "admits a pint of
    vodka daily"): a correction, for a reviewer."""
    for a, b in _slots(p):
        if _negated(a) != _negated(b) and a.text.lower() == b.text.lower():
            verdict = Verdict.CONTRADICTS if _negated(a) else Verdict.UPDATES
            return _d(verdict, "slot.presence", WEAK, evidence(a, b), a.key)
    return None


def _slot_admitted(p: Pair) -> Decision | None:
    """The older denies the slot by its value none ("denies alcohol use", "does not drink
    soda") and the newer, in other words the value rows could not compare, says the patient
    does it now ("admits a pint of vodka daily", "two cans of cola a day"): a correction or a
    change, for a reviewer."""
    for a, b in _slots(p):
        now = b.state in (None, State.ACTIVE, State.STARTED)
        if _denied(a) and not _denied(b) and now and Context.HISTORICAL not in b.contexts:
            return _d(Verdict.CONTRADICTS, "slot.admitted", WEAK, evidence(a, b), a.key)
    return None


def _denied(f: Fact) -> bool:
    """The slot denied: its words negated, or its value none."""
    return _negated(f) or "none" in _set(parts(f.value).get("value"))


def _slot_state(p: Pair) -> Decision | None:
    """A plan item or a habit whose state changed (referred -> attended; smokes -> quit)."""
    lex = lexicon()
    for a, b in _slots(p):
        if b.state in (None, State.ACTIVE) or b.state == a.state:
            continue
        if b.state is State.PLANNED and not _plan(a):
            continue  # "on a waiting list for a flat" plans a change of housing, makes none
        slot = lex.slots.get(a.name)
        several = not _plan(a) and not (slot is not None and slot.single_valued)
        if b.state is State.DONE and slot is not None and slot.measure and not _plan(a):
            continue  # "had 2 pints at the weekend": an occasion of a habit, no change of it
        if several and b.state in (State.STARTED, State.DONE):
            # "started swimming" beside "walks 5,000 steps": another value; "had my first yoga
            # class" beside "goes out for a walk": an event, no change of the habit
            continue
        single = not several
        once = _plan(a) and b.state is State.CANCELLED and one_occasion(p.newer_text)
        # a recurring item said planned ("annual eye screening" / "next due in spring") may be
        # the same item restated
        standing = (
            b.state is State.PLANNED
            and a.state in (None, State.ACTIVE)
            and bool(parts(a.value).get("timing"))
        )
        strong = single and Context.HISTORICAL not in b.contexts and not once and not standing
        strength = STRONG if strong else WEAK
        return _d(Verdict.UPDATES, "slot.state-change", strength, evidence(a, b), a.key)
    return None


def _slot_value(p: Pair) -> Decision | None:
    """A single-valued slot restated with another value updates (the newest value wins); a
    slot of several values needs a change word; the same values are a duplicate."""
    lex = lexicon()
    for a, b in _slots(p):
        va, vb = _set(parts(a.value).get("value")), _set(parts(b.value).get("value"))
        amount = _amounts_differ(a, b)
        slot = lex.slots.get(a.name)
        single = _plan(a) or (slot is not None and slot.single_valued)
        if single and bool(va) != bool(vb) and vb and _words_apart(p):
            return _d(Verdict.UPDATES, "slot.single-valued", WEAK, evidence(a, b), a.key)
        if amount and Context.HISTORICAL in b.contexts and Context.HISTORICAL not in a.contexts:
            # "used to drink 40 units a week" beside "alcohol 6 units/week": a past amount
            # says nothing of the current one (the same amount said as past would)
            return _compatible("slot.past-amount", evidence(a, b, "a past amount"), a.key)
        if (va and vb and va != vb) or amount:
            if single and _one_sided_kind(a, b) and not amount and not (va | vb) & _GIVEN_UP:
                # "likes reminders by text" beside "prefers phone calls": a scoped preference
                return _compatible("slot.scoped-value", evidence(a, b, "for another purpose"))
            exclusive = slot is not None and slot.excludes(frozenset(va), frozenset(vb))
            if single or amount or b.state is State.CHANGED or exclusive:
                # a new amount is an explicit new value, as a new lab value is; another value
                # of a single-valued slot needs the newer to say it changed
                explicit = amount or _said_changed(p, b) or _entries(a, b)
                strength = STRONG if (single or amount or exclusive) and explicit else WEAK
                if Context.HISTORICAL in b.contexts or _one_sided_kind(a, b):
                    strength = WEAK
                one_day = amount and _one_days_amount(a, b, p.newer_text)
                if one_day:
                    strength = WEAK  # "Had 5 cigarettes today" beside "20 a day"
                why = "an amount on one day, not a day's" if one_day else ""
                rule = "slot.new-amount" if amount else "slot.single-valued"
                return _d(Verdict.UPDATES, rule, strength, evidence(a, b, why), a.key)
            return _compatible("slot.another-value", evidence(a, b, "another value"), a.key)
        if single and _entries(a, b) and _entry_changed(a, b) and not (va and vb and va != vb):
            if _plan(a) and _words_apart(p):
                continue  # two items under one plan's heading (the plan rows: slot.two-items)
            # a chart field restated with other words ("Address: 14 Elm Road" / "Address:
            # Flat 3, 22 Birch Court") may replace it; free words are no value: a reviewer
            return _d(Verdict.UPDATES, "slot.new-entry", WEAK, evidence(a, b), a.key)
        if va and va == vb and a.state == b.state:
            # a slot's values are coarse (medicare, housed): the details said beside them may
            # differ ("Medicare Part A" / "Part D"), so a restated value is for a reviewer --
            # but a name is the value itself ("Preferred name: Margaret" said again)
            strength = STRONG if slot is not None and slot.named else WEAK
            return _d(Verdict.DUPLICATE, "slot.same-value", strength, evidence(a, b), a.key)
        if _same_amount(a, b):
            return _d(Verdict.DUPLICATE, "slot.same-amount", WEAK, evidence(a, b), a.key)
    return None


def _said_changed(p: Pair, b: Fact) -> bool:
    """The newer says its value is a change: a change state, or a word of now ("now prefers
    afternoons", "currently", "moved in")."""
    from ..text import parse

    if b.state in (State.CHANGED, State.STARTED, State.STOPPED, State.DONE):
        return True
    t = parse(p.newer_text)
    return bool(lexicon().now_words.find(t.tokens, t.raw))


def _entries(a: Fact, b: Fact) -> bool:
    """Both are chart entries headed by the slot ("Insurance: ..."): the newer entry replaces
    the older, as on a single-valued slot."""
    return parts(a.value).get("entry") == parts(b.value).get("entry") == "chart"


def _entry_changed(a: Fact, b: Fact) -> bool:
    """Two chart entries of a slot whose words differ (the heading set aside)."""
    x, y = parts(a.value).get("text", ""), parts(b.value).get("text", "")
    return bool(x and y and x != y)


#: Values of a habit given up or never had: a newer one of a kind the older did not name
#: ("not had a cigarette since the quit date" after "smokes 20 a day") still covers the older.
_GIVEN_UP = frozenset({"none", "former", "never"})


def _one_sided_kind(a: Fact, b: Fact) -> bool:
    """The newer scopes the slot where the older did not ("phone calls for results", "mail
    order for Eliquis"): maybe a second fact beside it, for a reviewer. (A newer statement of
    the whole slot -- "quit smoking" after "smokes 10 cigarettes" -- covers the older's.)"""
    return bool(parts(b.value).get("kind")) and not parts(a.value).get("kind")


def _amounts_differ(a: Fact, b: Fact) -> bool:
    x, y = _amounts(a, b)
    return x is not None and y is not None and x[0] == y[0] and x[1] != y[1]


def _same_amount(a: Fact, b: Fact) -> bool:
    x, y = _amounts(a, b)
    return x is not None and x == y


def _amounts(a: Fact, b: Fact) -> tuple[tuple[str, float] | None, tuple[str, float] | None]:
    """The two amounts to compare: a day's where both say their period; as written where one
    does not ("14 units/week" beside "... a week, about 14 units": 14 and 14)."""
    per_day = _period_said(a) == _period_said(b)
    return _amount(a, per_day), _amount(b, per_day)


def _period_said(f: Fact) -> bool:
    """The habit's amount says its period ("20 cigarettes/day"; not "5 cigarettes")."""
    return "/" in parts(f.value).get("amount", "")


def _one_days_amount(a: Fact, b: Fact, text: str) -> bool:
    """The newer's amount is one day's ("Had 5 cigarettes today", "smoked 3 at the party on
    Saturday"), the older's an amount a day or a week: a day named, no period said."""
    if not _period_said(a) or _period_said(b):
        return False
    from ..text import parse

    t = parse(text)
    days = {*lexicon().weekdays, "yesterday", "tonight", "weekend"}
    return one_occasion(text) or bool(days.intersection(t.tokens))


def _amount(f: Fact, per_day: bool = True) -> tuple[str, float] | None:
    """A habit's amount as ``(unit, number)``, the number a day where the amount says its
    period ("140 cigarettes/week": 20 a day) and ``per_day``; as said where not."""
    said = parts(f.value).get("amount", "")
    number, _, unit = said.partition(" ")
    unit, _, period = unit.partition("/")
    try:
        n = float(number) / (lexicon().periods.get(period, 1.0) if period and per_day else 1.0)
    except ValueError:
        return None
    return unit, round(n, 6)


def _slot_plan_restated(p: Pair) -> Decision | None:
    for a, b in _slots(p):
        if _plan(a) and _words_apart(p):
            return _compatible("slot.two-items", evidence(a, b, "two items, by their words"))
        if _plan(a) and a.state == b.state:
            return _d(Verdict.DUPLICATE, "slot.plan-restated", WEAK, evidence(a, b), a.key)
    return None
