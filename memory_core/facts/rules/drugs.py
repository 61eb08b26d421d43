"""The rows about drugs (medication, care plan, preference): a combination and its part, a
drug refuted, stopped, started again, two orders, a new dose, frequency or formulation, a change
word without a changed value, the same drug restated. Pure."""

from __future__ import annotations

from .. import units
from ..lexicon import lexicon
from ..model import Decision, Fact, KeyKind, State, Strength, Verdict
from ..reader import dose_in_doubt
from ..text import parse
from ..values import parts, times
from .base import (
    STRONG,
    WEAK,
    Pair,
    _changed,
    _compatible,
    _d,
    _ingredient,
    _negated,
    evidence,
    words_said,
)


# --- drugs ----------------------------------------------------------------------------------------
def _drugs(p: Pair) -> list[tuple[Fact, Fact]]:
    return p.of_kind(KeyKind.DRUG, KeyKind.RXNORM)


def _orders(p: Pair) -> Decision | None:
    """A combination and one of its ingredients on a medication list are two orders
    ("buprenorphine/naloxone" and a naloxone kit)."""
    drugs = _drugs(p)
    combos = any("/" in f.name for f in (*p.older.facts, *p.newer.facts) if f.kind is KeyKind.DRUG)
    parts_only = combos and drugs and all(_ingredient(a, b) for a, b in drugs)
    if p.memory_type == "medication" and parts_only and not any(_changed(b) for _a, b in drugs):
        a, b = drugs[0]
        return _compatible("drug.combination-and-part", evidence(a, b, "two products"), a.key)
    return None


def _strong_for(p: Pair, ok: bool = True) -> Strength:
    """Drug evidence is strong on a medication list only: in a plan, "hold warfarin" and
    "resume warfarin after surgery" are two steps, for a reviewer to join."""
    return STRONG if ok and p.memory_type == "medication" else WEAK


def _drug_stop(p: Pair) -> Decision | None:
    for a, b in _drugs(p):
        if b.state is State.STOPPED and a.state is not State.STOPPED:
            held = _held(p.newer_text)
            strength = _strong_for(p, _same_order(a, b) and not held)
            why = "" if strength is STRONG else "the stop names another dose: maybe another order"
            if held:
                why = "held for a while: the order may go on after it"
            return _d(Verdict.UPDATES, "drug.stop", strength, evidence(a, b, why), a.key)
    return None


def _held(text: str) -> bool:
    """The newer says a stop for a while ("metformin held for 48 h after contrast", "on hold":
    states.json's ``hold`` words)."""
    t = parse(text)
    return any(m.value.hold for m in lexicon().states.find(t.tokens, t.raw))


def _same_order(a: Fact, b: Fact) -> bool:
    """The stop is of the order the older names: no dose or form on the newer side, or the
    same ones."""
    pa, pb = parts(a.value), parts(b.value)
    return all(not pb.get(k) or not pa.get(k) or pa[k] == pb[k] for k in ("dose", "form"))


def _drug_refuted(p: Pair) -> Decision | None:
    """The newer says the drug was never taken or was charted in error: a correction, for a
    reviewer."""
    for a, b in _drugs(p):
        if (b.state is State.REFUTED or _negated(b)) and not (
            a.state is State.REFUTED or _negated(a)
        ):
            return _d(Verdict.CONTRADICTS, "drug.refuted", WEAK, evidence(a, b), a.key)
    return None


def _drug_restart(p: Pair) -> Decision | None:
    for a, b in _drugs(p):
        if a.state is State.STOPPED and b.state in (State.STARTED, State.ACTIVE, State.CHANGED):
            return _d(Verdict.UPDATES, "drug.restart", _strong_for(p), evidence(a, b), a.key)
    return None


#: A formulation that releases the drug slowly: a scheduled order of it and an as-needed order
#: that is not are the background and the breakthrough doses of one treatment.
_SLOW = "extended release"


def _two_orders(p: Pair) -> Decision | None:
    """An as-needed order beside a scheduled one in another form ("nitroglycerin SL PRN" and a
    nitroglycerin patch; "morphine MR 30 mg BD" and "Oramorph 5 mg PRN", the as-needed one not
    modified-release) are two orders of one drug."""
    for a, b in _drugs(p):
        pa, pb = parts(a.value), parts(b.value)
        prn = _as_needed_one_side(pa, pb)
        forms = _other_form(pa, pb)
        scheduled, as_needed = (pb, pa) if pa.get("freq") == _PRN else (pa, pb)
        slow = scheduled.get("form") == _SLOW and as_needed.get("form") != _SLOW
        if prn and (forms or slow) and not _changed(b):
            return _compatible("drug.two-orders", evidence(a, b, "two orders"), a.key)
    return None


def _drug_regimen(p: Pair) -> Decision | None:
    """A new dose, frequency or formulation of the same drug."""
    for a, b in _drugs(p):
        pa, pb = parts(a.value), parts(b.value)
        for part, rule in (
            ("dose", "drug.dose-change"),
            ("freq", "drug.frequency-change"),
            ("day", "drug.frequency-change"),  # a weekly dose moved to another day
        ):
            if pa.get(part) and pb.get(part) and pa[part] != pb[part]:
                if part == "dose" and _same_dose(pa[part], pb[part]):
                    continue  # 0.1 mg and 100 mcg: one dose, written two ways
                if part == "freq" and _same_frequency(pa[part], pb[part]):
                    continue  # "once daily" and "in the morning": one dose a day
                comparable = (
                    _unit_of(pa[part]) == _unit_of(pb[part])
                    if part == "dose"
                    else not {pa[part], pb[part]} & lexicon().uncounted_timings
                )  # 50 mg / 2 tabs; "with meals" / "three times daily": no count to compare
                why = _not_the_order(p, pa, pb, part, _changed(b))
                ok = (
                    comparable
                    and not why
                    and not (part == "dose" and dose_in_doubt(p.newer_text, p.memory_type, b.key))
                    and not _ingredient(a, b)
                    and b.state is not State.PLANNED  # "increase to 10 mg pending bloods"
                    and _said_to_change(p, b)
                )
                return _d(Verdict.UPDATES, rule, _strong_for(p, ok), evidence(a, b, why), a.key)
        if pb.get("form") and pa.get("form") != pb["form"] and (pa.get("form") or _changed(b)):
            strength = _strong_for(p, _changed(b) and not _ingredient(a, b))
            return _d(Verdict.UPDATES, "drug.formulation-change", strength, evidence(a, b), a.key)
    return None


#: A chart line: the drug named among its first words, and few words in all ("Lisinopril 20 mg
#: daily", "Patient takes metformin 1 g BID"): an order as it stands now.
CHART_LINE_WORDS = 10


def _said_to_change(p: Pair, b: Fact) -> bool:
    """The newer statement asserts the new regimen as the one now: it says the drug changed
    (a change word), says now ("now", "currently", "down to"), or is a chart line -- not a
    sentence that only mentions another dose (an earlier course, a second order, a plan)."""
    if _changed(b):
        return True
    t = parse(p.newer_text)
    if lexicon().now_words.find(t.tokens, t.raw):
        return True
    first = next((i for i, w in enumerate(t.tokens) if w in b.text.lower().split()), 99)
    return len(t.tokens) <= CHART_LINE_WORDS and first <= 2


def _same_dose(a: str, b: str, *, one_unit: bool = False) -> bool:
    """Two doses of one mass in two units ("0.1 mg" / "100 mcg"); a dose in another unit than
    its number says (50 mg / 50 mcg) is another dose -- for a reviewer, never a restatement.
    ``one_unit``: two doses in one unit count too ("2 g" / "2 g")."""
    lex = lexicon()
    (na, _, ua), (nb, _, ub) = a.partition(" "), b.partition(" ")
    x, y = units.unit_named(lex, ua), units.unit_named(lex, ub)
    if x is None or y is None or x.dimension != y.dimension or (x == y and not one_unit):
        return False
    try:
        fa, fb = x.to_base(float(na)), y.to_base(float(nb))
    except ValueError:
        return False
    return abs(fa - fb) <= units.SAME_VALUE_TOLERANCE * max(abs(fa), abs(fb))


def _not_the_order(
    p: Pair, pa: dict[str, str], pb: dict[str, str], part: str, changed: bool
) -> str:
    """Why the newer's new dose or frequency may not be a new standing order -- the same amount
    a day said another way, a course ("30 mg x 7 days"), one dose given ("80 mg IV stat"), an
    as-needed order beside a scheduled one where no change word says the one became the other
    (``changed``) --, in words; "" where none is said."""
    course = pb.get("course") if not pa.get("course") else ""
    single = words_said(lexicon().single_doses, p.newer_text)
    reasons = (
        (part == "dose" and _same_day_total(pa, pb), "the same amount a day: maybe restated"),
        (bool(course), f"a course of {course}: the standing order may go on beside or after it"),
        (bool(single), f"one dose given ({single!r}), not the order changed"),
        (
            not changed and _beside(pa, pb),
            "an as-needed order beside a scheduled one: maybe a second order",
        ),
        (
            not changed and _other_form(pa, pb),
            f"another form ({pa.get('form')} / {pb.get('form')}): maybe a second order",
        ),
    )
    return next((why for said, why in reasons if said), "")


def _other_form(pa: dict[str, str], pb: dict[str, str]) -> bool:
    """Each side names a form and they differ ("fluticasone inhaler" / "fluticasone nasal
    spray", "diclofenac gel" / "diclofenac tablets"): often two orders of one ingredient."""
    return bool(pa.get("form") and pb.get("form")) and pa["form"] != pb["form"]


def _beside(pa: dict[str, str], pb: dict[str, str]) -> bool:
    """One side taken as needed, the other on a schedule ("lorazepam 0.5 mg at night" /
    "lorazepam 0.5 mg PRN for agitation"; a correction dose of a mealtime insulin): the
    as-needed order is often a second order beside the scheduled one, not its change."""
    return bool(pa.get("freq") and pb.get("freq")) and _as_needed_one_side(pa, pb)


#: The frequency of an order taken as needed.
_PRN = "as needed"


def _as_needed_one_side(pa: dict[str, str], pb: dict[str, str]) -> bool:
    """Exactly one of two regimens is taken as needed."""
    return (pa.get("freq") == _PRN) != (pb.get("freq") == _PRN)


def _same_day_total(pa: dict[str, str], pb: dict[str, str]) -> bool:
    """The same amount a day in two ways ("1 g four times daily" / "4 g per day", which reads
    as one dose a day; "500 mg twice daily" / "1000 mg a day"): maybe one order restated, for
    a reviewer (words.json's ``doses_a_day``)."""
    per_day = lexicon().doses_a_day
    fa, fb = pa.get("freq", ""), pb.get("freq", "")
    if fa not in per_day or fb not in per_day or per_day[fa] == per_day[fb]:
        return False
    return _same_dose(times(pa["dose"], per_day[fa]), times(pb["dose"], per_day[fb]), one_unit=True)


def _same_frequency(a: str, b: str) -> bool:
    """One dose a day said plainly and said with when it is taken ("once daily" / "in the
    morning": words.json's ``once_daily_timings``); two timings ("in the morning" / "at
    bedtime") are a change."""
    timings = lexicon().once_daily_timings
    return "once daily" in (a, b) and bool({a, b} & timings)


def _unit_of(dose: str) -> str:
    """A dose's unit ("500 mg" -> "mg"; "2 tabs" -> "tabs"): a strength and a count of tablets
    are no two values of one thing."""
    return dose.partition(" ")[2]


def _drug_change_word(p: Pair) -> Decision | None:
    """The newer says the drug changed (started, increased, switched) with no changed value."""
    for a, b in _drugs(p):
        if _changed(b) and b.state != a.state:
            return _d(Verdict.UPDATES, "drug.change-word", WEAK, evidence(a, b), a.key)
    return None


def _drug_same(p: Pair) -> Decision | None:
    for a, b in _drugs(p):
        if a.state == b.state:
            explicit = bool(parts(a.value).get("dose")) and a.value == b.value
            strength = _strong_for(p, explicit and not _ingredient(a, b))
            return _d(Verdict.DUPLICATE, "drug.same", strength, evidence(a, b), a.key)
    return None
