"""One FHIR R4 resource as one or more memories (pure: a resource in, items out).

Each item carries the statement in the product's style ("Patient's body weight was 82.3 kg on
2020-01-03"), its memory type, its clinical time, and the record's own ``facts``: the codes it
carries (``snomed:``, ``rxnorm:``, ``loinc:``, ``cvx:``; other systems left out), its status as
given, its value with the unit as read, and the date of its clinical time. A coded memory takes
its keys and value from these, not from its words.

What becomes a memory:

- AllergyIntolerance, Condition, MedicationStatement, MedicationRequest: by their statuses
  (entered-in-error and refuted ones are skipped; resolved ones are history).
- Observation: every coded one with a value -- a quantity, a coded or text value, or a panel of
  components (blood pressure 85354-9 is one memory "132/84 mmHg" carrying the panel's and both
  components' codes). A LOINC code the lexicon knows gives the analyte's name and whether it is a
  lab result, a vital sign or a questionnaire's score (an observation: PHQ-9, MoCA); any other
  code is named from its coding's text or display and filed by the Observation's category
  (vital-signs, laboratory, social-history, else observation).
- Immunization (``immunization``) and Procedure (``procedure``): history, dated.
- CarePlan: one ``care_plan`` memory per activity (the plan itself when it lists none).

Names are read as a clinician writes them (:mod:`.names`). Each item also names the text its
embedding is computed from (``embed_text``): the statement without its value and date for a
measurement ("Patient's body weight"), without its date otherwise -- every weighing of a
patient shares one embedding, computed once per import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..errors import ValidationError
from ..facts.coded import CODE, STATUSES
from ..facts.lexicon import Analyte, lexicon, tokenize
from ..facts.units import outside_physiology
from . import names

#: Code systems kept in a record's facts, by the namespace of their keys.
SYSTEMS: dict[str, str] = {
    "http://snomed.info/sct": "snomed",
    "http://www.nlm.nih.gov/research/umls/rxnorm": "rxnorm",
    "http://loinc.org": "loinc",
    "http://hl7.org/fhir/sid/cvx": "cvx",
}
LOINC = "http://loinc.org"
#: Resource types that become memories (Patient is the subject; Medication is read through
#: references).
MAPPED_TYPES = frozenset(
    {
        "AllergyIntolerance",
        "Condition",
        "MedicationStatement",
        "MedicationRequest",
        "Observation",
        "Immunization",
        "Procedure",
        "CarePlan",
    }
)
READ_TYPES = MAPPED_TYPES | {"Patient", "Medication"}
RESOLVED_ALLERGY_IMPORTANCE = 6.0  # a resolved allergy is history: below the warning marker
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
# an Observation's category (observation-category codes) -> the memory type of a code the
# lexicon does not know
_CATEGORY_TYPES = {
    "vital-signs": "vital_sign",
    "laboratory": "lab_result",
    "social-history": "social",
}
_STATE_WORDS = {
    "in-progress": "in progress",
    "not-started": "not started",
    "on-hold": "on hold",
    "entered-in-error": "entered in error",
}

Resolver = Callable[[str | None], Mapping[str, Any] | None]


@dataclass(frozen=True)
class FhirItem:
    """One resource (or one activity of a care plan) and what the import does with it."""

    source: str  # fhir:<ResourceType>/<id>[/activity/<n>]
    resource_type: str
    memory_type: str | None = None
    content: str | None = None
    created_at: datetime | None = None
    importance: float | None = None
    pinned: bool | None = None
    reason: str = ""  # why skipped; or what it replaces
    memory_id: str | None = None  # the memory written (or the existing one when unchanged)
    code: str = ""  # the resource's first code, namespaced ("loinc:29463-7"); "" when none
    facts: Mapping[str, Any] | None = None  # codes, status, value, date (the record's own)
    embed_text: str = ""  # what the embedding is computed from ("" : the content)


@dataclass(frozen=True)
class When:
    """A clinical time: the start of its period in UTC, the phrase for the sentence and the
    date as the record gives it (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``)."""

    at: datetime
    phrase: str
    date: str

    @property
    def since(self) -> str:
        """ "2015", "October 2016", "2016-10-05": the phrase without its preposition."""
        return self.phrase.split(" ", 1)[1]


def partial_date(value: Any, field_name: str) -> tuple[datetime, str]:
    """A FHIR date or dateTime as (start of its period in UTC, the phrase for the sentence):
    ``"2015"`` -> 2015-01-01 "in 2015"; ``"2016-10"`` -> 2016-10-01 "in October 2016";
    ``"2016-10-05"`` or a dateTime -> that day "on 2016-10-05"."""
    w = when(value, field_name)
    return w.at, w.phrase


def when(value: Any, field_name: str) -> When:
    if isinstance(value, datetime):
        d = value if value.tzinfo else value.replace(tzinfo=UTC)
        d = d.astimezone(UTC)
        return When(d, f"on {d:%Y-%m-%d}", f"{d:%Y-%m-%d}")
    text = str(value).strip()
    try:
        if len(text) == 4:
            return When(datetime(int(text), 1, 1, tzinfo=UTC), f"in {text}", text)
        if len(text) == 7:
            year, month = int(text[:4]), int(text[5:7])
            d = datetime(year, month, 1, tzinfo=UTC)
            return When(d, f"in {_MONTH_NAMES[month - 1]} {year}", text)
        if len(text) == 10:
            d = datetime.fromisoformat(text).replace(tzinfo=UTC)
            return When(d, f"on {text}", text)
        d = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, IndexError) as exc:
        raise ValidationError(field_name, f"is not a FHIR date: {text!r}") from exc
    if d.tzinfo is None:  # FHIR requires a zone with a time; a bare one is read as UTC
        d = d.replace(tzinfo=UTC)
    d = d.astimezone(UTC)
    return When(d, f"on {d:%Y-%m-%d}", f"{d:%Y-%m-%d}")


# --- reading parts of a resource ---------------------------------------------------------------
def codes_of(*concepts: Any) -> list[str]:
    """The namespaced codes of CodeableConcepts (known systems only), in order, once each."""
    out: list[str] = []
    for cc in concepts:
        if not isinstance(cc, Mapping):
            continue
        for coding in cc.get("coding") or []:
            if not isinstance(coding, Mapping):
                continue
            ns = SYSTEMS.get(str(coding.get("system") or ""))
            if ns and coding.get("code"):
                key = f"{ns}:{str(coding['code']).strip()}"
                if key not in out and CODE.match(key):  # a malformed code keys nothing
                    out.append(key)
    return out


def status_code(cc: Any) -> str | None:
    """A status CodeableConcept's code (lower case)."""
    if not isinstance(cc, Mapping):
        return None
    for coding in cc.get("coding") or []:
        if isinstance(coding, Mapping) and coding.get("code"):
            return str(coding["code"]).lower()
    return str(cc["text"]).lower() if cc.get("text") else None


def ref_of(ref: Any) -> str | None:
    return str(ref["reference"]) if isinstance(ref, Mapping) and ref.get("reference") else None


def subject_of(res: Mapping[str, Any]) -> str | None:
    """The reference naming whom a resource is about (``patient`` or ``subject``)."""
    return ref_of(res.get("patient")) or ref_of(res.get("subject"))


def subject_identifier(res: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(system, value)`` of the identifier a resource names its patient by when it gives no
    reference (``{"identifier": {"system": ..., "value": ...}}``; system ``""`` when absent)."""
    for key in ("patient", "subject"):
        who = res.get(key)
        ident = who.get("identifier") if isinstance(who, Mapping) else None
        if isinstance(ident, Mapping) and ident.get("value"):
            return str(ident.get("system") or ""), str(ident["value"])
    return None


def num(x: Any) -> str:
    f = float(x)
    return str(int(f)) if f.is_integer() else f"{f:g}"


def _first_date(res: Mapping[str, Any], *keys: str) -> tuple[str, Any] | None:
    for key in keys:
        if "." in key:
            outer, inner = key.split(".", 1)
            val = (res.get(outer) or {}).get(inner)
        else:
            val = res.get(key)
        if val:
            return key, val
    return None


def _dose_beyond_name(dose: str, name: str) -> str:
    """The dose as the statement shows it after the medication's name: a strength the name
    already says ("lisinopril 20 mg tablet") is not said again ("... 20mg once daily" ->
    "... once daily"); the facts keep the whole dose."""
    m = re.match(r"(\d+(?:\.\d+)?)\s?([a-zA-Zµ]+)\b\s*", dose)
    if m is None:
        return dose
    said = re.search(
        rf"(?<![\d.]){re.escape(m.group(1))}\s?{re.escape(m.group(2))}\b", name, re.IGNORECASE
    )
    return dose[m.end() :] if said else dose


def _dose(dosages: Any) -> str:
    """``dosage`` / ``dosageInstruction``: dose quantity and frequency, else the first
    sentence of its text in parentheses ("(take as needed)")."""
    if not isinstance(dosages, list) or not dosages or not isinstance(dosages[0], Mapping):
        return ""
    d = dosages[0]
    parts: list[str] = []
    for dr in d.get("doseAndRate") or []:
        q = dr.get("doseQuantity")
        if q and q.get("value") is not None:
            unit = q.get("unit") or q.get("code") or ""
            parts.append(f"{num(q['value'])}{'' if unit in ('mg', 'g', 'mcg') else ' '}{unit}")
            break
    rep = (d.get("timing") or {}).get("repeat") or {}
    freq, period, unit = rep.get("frequency"), rep.get("period"), rep.get("periodUnit")
    if freq and unit:
        units = {"d": "day", "wk": "week", "mo": "month", "h": "hour"}
        every = units.get(unit, unit)
        if period not in (None, 1):
            every = f"{num(period)} {every}s"
        words = {1: "once", 2: "twice"}.get(int(freq), f"{num(freq)} times")
        parts.append("once daily" if (freq, every) == (1, "day") else f"{words} per {every}")
    if d.get("asNeededBoolean") is True:
        parts.append("as needed")
    dose = " ".join(p.strip() for p in parts if p.strip())
    if dose or not isinstance(d.get("text"), str):
        return dose
    first = re.split(r"(?<=[.;])\s", d["text"].strip(), maxsplit=1)[0].rstrip(" .;")
    return f"({first[0].lower()}{first[1:]})" if first else ""


@dataclass
class _Value:
    """A value as written in the statement and as kept in the facts."""

    shown: str
    fact: str
    codes: list[str] = field(default_factory=list)


def _quantity(q: Any) -> _Value | None:
    if not isinstance(q, Mapping) or q.get("value") is None:
        return None
    unit = names.unit(q.get("unit") or q.get("code"))
    value = num(q["value"])
    comparator = str(q.get("comparator") or "")
    return _Value(comparator + names.quantity(value, unit), f"{comparator}{value} {unit}".strip())


def _value(holder: Mapping[str, Any]) -> _Value | None:
    """An Observation's (or a component's) value[x]."""
    if (q := _quantity(holder.get("valueQuantity"))) is not None:
        return q
    if isinstance(holder.get("valueCodeableConcept"), Mapping):
        cc = holder["valueCodeableConcept"]
        text = names.concept_text(cc)
        if text:
            text = names.sentence_case(text)
            return _Value(text, text.lower(), codes_of(cc))
    if isinstance(holder.get("valueString"), str) and holder["valueString"].strip():
        text = holder["valueString"].strip()
        return _Value(text, text)
    if isinstance(holder.get("valueBoolean"), bool):
        word = "yes" if holder["valueBoolean"] else "no"
        return _Value(word, word)
    if holder.get("valueInteger") is not None:
        return _Value(num(holder["valueInteger"]), num(holder["valueInteger"]))
    return None


def _analyte(codes: list[str], name: str | None = None) -> Analyte | None:
    """The lexicon's analyte of a LOINC code; else, for a record coded otherwise, the analyte
    its whole name is a spelling of ("HbA1c" coded in a local system)."""
    lex = lexicon()
    for c in codes:
        if c.startswith("loinc:") and (a := lex.analyte_for_code(c[6:])) is not None:
            return a
    if name and not any(c.startswith("loinc:") for c in codes):
        toks = tokenize(name)
        words = [t for t, _s, _e in toks]
        m = lex.analyte_phrases.at(words, [name[s:e] for _t, s, e in toks], 0) if words else None
        if m is not None and m.end == len(words):
            return lex.analytes[m.value]
    return None


def _category(res: Mapping[str, Any]) -> str:
    for cc in res.get("category") or []:
        if isinstance(cc, Mapping):
            for coding in cc.get("coding") or []:
                if isinstance(coding, Mapping) and coding.get("code") in _CATEGORY_TYPES:
                    return str(coding["code"])
    return ""


def _by_slot(name: str) -> str:
    """The type of an Observation the lexicon has no analyte for: ``social`` when its name
    fills a chart slot of the social history (tobacco, alcohol, housing, ...), else
    ``observation``."""
    lex = lexicon()
    toks = tokenize(name)
    words = [t for t, _s, _e in toks]
    raw = [name[s:e] for _t, s, e in toks]
    for m in lex.slot_triggers.find(words, raw):
        slot = lex.slots[m.value]
        if "social" in slot.types:
            return "social"
    return "observation"


def _obs_name(cc: Any, analyte: Analyte | None) -> str | None:
    if analyte is not None:
        return analyte.display
    text = names.concept_text(cc)
    if not text:
        return None
    loinc = any(isinstance(c, Mapping) and c.get("system") == LOINC for c in cc.get("coding") or [])
    return names.loinc_name(text) if loinc else names.sentence_case(text)


def _panel(res: Mapping[str, Any], panel: Analyte | None) -> _Value | None:
    """A panel's components as one value: the same unit throughout and every component an
    analyte of the panel -> "132/84 mmHg" (in the lexicon's order: systolic, diastolic);
    otherwise each named: "systolic 132 mmHg, diastolic 84 mmHg"."""
    lex = lexicon()
    order = {aid: i for i, aid in enumerate(lex.analytes)}
    parts: list[tuple[int, str, _Value, Analyte | None]] = []
    codes: list[str] = []
    for i, comp in enumerate(res.get("component") or []):
        if not isinstance(comp, Mapping):
            continue
        val = _value(comp)
        if val is None:
            continue
        ccodes = codes_of(comp.get("code"))
        codes += [c for c in ccodes + val.codes if c not in codes]
        analyte = _analyte(ccodes)
        name = _obs_name(comp.get("code"), analyte) or f"component {i + 1}"
        rank = order[analyte.id] if analyte is not None else len(order) + i
        parts.append((rank, name, val, analyte))
    if not parts:
        return None
    units = {p[2].fact.partition(" ")[2] for p in parts}
    ratio = (
        panel is not None
        and len(units) == 1
        and all(a is not None and a.parent == panel.id for _r, _n, _v, a in parts)
        and all(" " in p[2].fact for p in parts)
    )
    if ratio:
        parts.sort(key=lambda p: p[0])
        (unit,) = units
        joined = "/".join(p[2].fact.partition(" ")[0] for p in parts)
        shown_unit = parts[0][2].shown.partition(" ")[2] if " " in parts[0][2].shown else unit
        return _Value(names.quantity(joined, shown_unit), f"{joined} {unit}", codes)
    shown = ", ".join(f"{n} {v.shown}" for _r, n, v, _a in parts)
    fact = ", ".join(f"{n} {v.fact}" for _r, n, v, _a in parts)
    return _Value(shown, fact, codes)


def vaccine(name: str) -> str:
    """A CVX name as a vaccine: "Influenza, seasonal, injectable" -> "influenza vaccine
    (seasonal, injectable)"; "zoster" -> "zoster vaccine"."""
    text = names.sentence_case(names.strip_tag(name), least=5)  # "Tdap" stays
    if "vaccin" in text.lower():
        return text
    head, _, rest = text.partition(",")
    return f"{head.strip()} vaccine ({rest.strip()})" if rest.strip() else f"{text} vaccine"


def _plan_name(res: Mapping[str, Any]) -> str | None:
    """A care plan's name: the first category that says more than "care plan"."""
    for cc in res.get("category") or []:
        text = names.concept_text(cc)
        if text and text.lower() not in ("care plan", "assess-plan", "assessment and plan"):
            return names.sentence_case(text)
    return names.concept_text(res.get("title")) if isinstance(res.get("title"), Mapping) else None


# --- the mapping -------------------------------------------------------------------------------
def facts_of(
    codes: list[str], status: str, value: str = "", date: str = ""
) -> dict[str, Any] | None:
    """A record's ``facts``: codes, status (as given; "" for one the coded table does not
    know, e.g. ``not-taken``), and value and date when it has them; None for a record with no
    code of a known system (its facts are then read from its statement)."""
    if not codes:
        return None
    out: dict[str, Any] = {"codes": list(codes), "status": status if status in STATUSES else ""}
    if value:
        out["value"] = value[:200]
    if date:
        out["date"] = date
    return out


def map_resource(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    """The items one resource becomes (one skipped item, with its reason, when none)."""
    rtype = str(res.get("resourceType"))
    fn = _MAPPERS.get(rtype)
    if fn is None:
        return [FhirItem(source, rtype, reason=f"{rtype} is not imported as a memory")]
    return fn(res, source, resolve)


class _Ctx:
    """What every mapper needs about the resource it maps."""

    def __init__(self, res: Mapping[str, Any], source: str) -> None:
        self.res = res
        self.source = source
        self.rtype = str(res.get("resourceType"))

    def skip(self, reason: str, code: str = "") -> list[FhirItem]:
        return [FhirItem(self.source, self.rtype, reason=reason, code=code)]

    def dated(self, *keys: str) -> When | None:
        found = _first_date(self.res, *keys)
        return None if found is None else when(found[1], f"{self.source}.{found[0]}")

    def item(
        self,
        mtype: str,
        content: str,
        at: When | None,
        facts: dict[str, Any] | None,
        *,
        embed: str = "",
        source: str | None = None,
        importance: float | None = None,
        pinned: bool | None = None,
    ) -> FhirItem:
        codes = (facts or {}).get("codes") or []
        return FhirItem(
            source or self.source,
            self.rtype,
            mtype,
            content,
            at.at if at else None,
            importance,
            pinned,
            code=codes[0] if codes else "",
            facts=facts,
            embed_text=embed,
        )


def _allergy(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    x = _Ctx(res, source)
    codes = codes_of(res.get("code"))
    verification = status_code(res.get("verificationStatus"))
    if verification in ("entered-in-error", "refuted"):
        return x.skip(f"verificationStatus is {verification}", codes[0] if codes else "")
    named = names.concept_text(res.get("code"))
    if not named:
        return x.skip("no substance (code has no text, display or code)")
    substance = names.allergen(named)
    reactions: list[str] = []
    severities: list[str] = []
    for r in res.get("reaction") or []:
        for m in r.get("manifestation") or []:
            if (t := names.concept_text(m)) and t.lower() not in reactions:
                reactions.append(t.lower())
        if r.get("severity"):
            severities.append(str(r["severity"]))
    at = x.dated("onsetDateTime", "recordedDate")
    clinical = status_code(res.get("clinicalStatus"))
    status = clinical or verification or "active"
    detail = []
    if reactions:
        detail.append(f"reaction: {', '.join(reactions)}")
    if severities:
        detail.append(f"severity {severities[0]}")
    if res.get("criticality"):
        detail.append(f"criticality {res['criticality']}")
    if verification == "unconfirmed":
        detail.append("unconfirmed")
    tail = f" ({'; '.join(detail)})" if detail else ""
    since = f", recorded {at.phrase}" if at else ""
    value = ", ".join(reactions + severities[:1])
    facts = facts_of(codes, status, value, at.date if at else "")
    if clinical in ("inactive", "resolved"):
        head = f"Patient's {substance} allergy is recorded as {clinical}, not current"
        return [
            x.item(
                "allergy",
                head + tail + since,
                at,
                facts,
                embed=head + tail,
                importance=RESOLVED_ALLERGY_IMPORTANCE,
                pinned=False,
            )
        ]
    head = f"Patient has a documented {substance} allergy{tail}"
    return [x.item("allergy", head + since, at, facts, embed=head)]


def _medication_name(res: Mapping[str, Any], resolve: Resolver) -> tuple[Any, str]:
    """(the medication's CodeableConcept, a problem)."""
    if res.get("medicationCodeableConcept"):
        return res["medicationCodeableConcept"], ""
    ref = ref_of(res.get("medicationReference"))
    med = resolve(ref)
    if med is None or med.get("resourceType") != "Medication":
        return None, f"medicationReference {ref!r} is not a Medication in the bundle"
    return med.get("code"), ""


def _medication(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    x = _Ctx(res, source)
    rtype = x.rtype
    status = str(res.get("status") or "unknown").lower()
    if status == "entered-in-error":
        return x.skip("status is entered-in-error")
    if rtype == "MedicationRequest" and status == "draft":
        return x.skip("status is draft (not yet prescribed)")
    if status == "unknown":
        return x.skip("status is unknown")
    cc, problem = _medication_name(res, resolve)
    if problem:
        return x.skip(problem)
    named = names.concept_text(cc)
    if not named:
        return x.skip("medication has no text, display or code")
    name = names.drug(named)
    codes = codes_of(cc)
    dose = _dose(
        res.get("dosage") if rtype == "MedicationStatement" else res.get("dosageInstruction")
    )
    shown = _dose_beyond_name(dose, name)
    dose_s = f" {shown}" if shown else ""
    if rtype == "MedicationStatement":
        at = x.dated("effectiveDateTime", "effectivePeriod.start", "dateAsserted")
    else:
        at = x.dated("authoredOn")
    since = f" (since {at.since})" if at else ""
    if status in ("stopped", "completed", "cancelled", "not-taken"):
        verb = {
            "stopped": "stopped",
            "completed": "completed a course of",
            "cancelled": "had a cancelled prescription for",
            "not-taken": "is not taking",
        }[status]
        ended = x.dated("effectivePeriod.end") if rtype == "MedicationStatement" else None
        why = next((t for r in res.get("statusReason") or [] if (t := names.concept_text(r))), None)
        text = f"Patient {verb} {name}{dose_s}"
        core = text + (f" because of {why}" if why else "") + "; not a current medication"
        text += f" {ended.phrase}" if ended else ""
        text += f" because of {why}" if why else ""
        done = ended or at
        facts = facts_of(codes, status, dose, done.date if done else "")
        return [x.item("medication", f"{text}; not a current medication", done, facts, embed=core)]
    facts = facts_of(codes, status, dose, at.date if at else "")
    if status == "on-hold":
        head = f"Patient's {name}{dose_s} is on hold"
        return [x.item("medication", head + since, at, facts, embed=head)]
    if status == "intended":
        return [x.item("medication", f"Patient intends to take {name}{dose_s}", at, facts)]
    verb = "is prescribed" if rtype == "MedicationRequest" else "takes"
    head = f"Patient {verb} {name}{dose_s}"
    return [x.item("medication", head + since, at, facts, embed=head)]


def _condition(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    x = _Ctx(res, source)
    codes = codes_of(res.get("code"))
    verification = status_code(res.get("verificationStatus"))
    if verification in ("entered-in-error", "refuted"):
        return x.skip(f"verificationStatus is {verification}", codes[0] if codes else "")
    named = names.concept_text(res.get("code"))
    if not named:
        return x.skip("no condition name (code has no text, display or code)")
    name = names.sentence_case(named)
    clinical = status_code(res.get("clinicalStatus"))
    status = clinical or verification or "active"
    at = x.dated("onsetDateTime", "onsetPeriod.start", "recordedDate")
    since = f" (since {at.since})" if at else ""
    if clinical in ("inactive", "resolved", "remission"):
        word = "in remission" if clinical == "remission" else clinical
        head = f"Patient's {name} is {word}, not a current condition"
        abated = x.dated("abatementDateTime", "abatementPeriod.start")
        text = head + (f" ({abated.phrase})" if abated else "")
        done = abated or at
        facts = facts_of(codes, status, "", done.date if done else "")
        return [x.item("condition", text, done, facts, embed=head)]
    prefix = "Patient has"
    if clinical in ("recurrence", "relapse"):
        prefix = "Patient has a recurrence of"
    elif verification in ("unconfirmed", "provisional"):
        prefix = "Patient may have"
    head = f"{prefix} {name}"
    facts = facts_of(codes, status, "", at.date if at else "")
    return [x.item("condition", head + since, at, facts, embed=head)]


def _observation(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    x = _Ctx(res, source)
    status = str(res.get("status") or "").lower()
    codes = codes_of(res.get("code"))
    first = codes[0] if codes else ""
    if status in ("entered-in-error", "cancelled"):
        return x.skip(f"status is {status}", first)
    if status == "registered":
        return x.skip("status is registered (no result yet)", first)
    if not codes and not (isinstance(res.get("code"), Mapping) and res["code"].get("coding")):
        return x.skip("no code")
    analyte = _analyte(codes, names.concept_text(res.get("code")))
    name = _obs_name(res.get("code"), analyte)
    if not name:
        return x.skip("code has no text, display or code", first)
    value = _value(res)
    if value is None and res.get("component"):
        value = _panel(res, analyte)
    if value is None:
        reason = "no value"
        if res.get("dataAbsentReason"):
            reason += f" ({names.concept_text(res['dataAbsentReason']) or 'data absent'})"
        return x.skip(reason, first)
    if analyte is not None:
        mtype = analyte.memory_type
        implausible = outside_physiology(lexicon(), analyte, value.fact)
        if implausible:  # "weight -70 kg", "HbA1c 1e308 %": skipped and counted, never kept
            return x.skip(implausible, first)
    else:
        mtype = _CATEGORY_TYPES.get(_category(res)) or _by_slot(name)
    at = x.dated("effectiveDateTime", "effectivePeriod.start", "effectiveInstant", "issued")
    head = f"Patient's {name}"
    text = f"{head} was {value.shown}" + (f" {at.phrase}" if at else "")
    if status == "preliminary":
        text += " (preliminary)"
    all_codes = codes + [c for c in value.codes if c not in codes]
    facts = facts_of(all_codes, status or "final", value.fact, at.date if at else "")
    return [x.item(mtype, text, at, facts, embed=head)]


def _immunization(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    x = _Ctx(res, source)
    status = str(res.get("status") or "").lower()
    codes = codes_of(res.get("vaccineCode"))
    if status == "entered-in-error":
        return x.skip("status is entered-in-error", codes[0] if codes else "")
    named = names.concept_text(res.get("vaccineCode"))
    if not named:
        return x.skip("no vaccine (vaccineCode has no text, display or code)")
    name = vaccine(named)
    at = x.dated("occurrenceDateTime", "recorded")
    on = f" {at.phrase}" if at else ""
    facts = facts_of(codes, status or "completed", "", at.date if at else "")
    if status == "not-done":
        why = names.concept_text(res.get("statusReason"))
        head = f"Patient did not receive the {name}" + (f" because of {why}" if why else "")
        return [x.item("immunization", head + on, at, facts, embed=head)]
    head = f"Patient received the {name}"
    return [x.item("immunization", head + on, at, facts, embed=head)]


_PROCEDURE_VERBS = {
    "completed": "Patient had {name}",
    "in-progress": "Patient is having {name}",
    "preparation": "Patient is scheduled for {name}",
    "not-done": "Patient did not have {name}",
    "stopped": "Patient's {name} was stopped",
    "on-hold": "Patient's {name} is on hold",
}


def _procedure(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    x = _Ctx(res, source)
    status = str(res.get("status") or "").lower()
    codes = codes_of(res.get("code"))
    if status not in _PROCEDURE_VERBS:
        return x.skip(f"status is {status or 'missing'}", codes[0] if codes else "")
    named = names.concept_text(res.get("code"))
    if not named:
        return x.skip("no procedure name (code has no text, display or code)")
    head = _PROCEDURE_VERBS[status].format(name=names.sentence_case(named))
    at = x.dated("performedDateTime", "performedPeriod.start")
    facts = facts_of(codes, status, "", at.date if at else "")
    return [x.item("procedure", head + (f" {at.phrase}" if at else ""), at, facts, embed=head)]


def _care_plan(res: Mapping[str, Any], source: str, resolve: Resolver) -> list[FhirItem]:
    x = _Ctx(res, source)
    status = str(res.get("status") or "").lower()
    if status in ("entered-in-error", "draft", "revoked"):
        return x.skip(f"status is {status}")
    plan = _plan_name(res)
    at = x.dated("period.start", "created")
    since = f" since {at.since}" if at else ""
    plan_codes = [c for cc in res.get("category") or [] for c in codes_of(cc)]
    items: list[FhirItem] = []
    for i, act in enumerate(res.get("activity") or []):
        detail = act.get("detail") if isinstance(act, Mapping) else None
        if not isinstance(detail, Mapping):
            continue
        named = names.concept_text(detail.get("code"))
        if not named:
            continue
        state = str(detail.get("status") or status or "unknown").lower()
        if status in ("completed", "revoked") and state in ("in-progress", "not-started"):
            state = status  # the plan ended: so did its open activities
        if state == "entered-in-error":
            continue
        words = _STATE_WORDS.get(state, state)
        started = ""
        if at is not None:
            started = since if state in ("in-progress", "active") else f", started {at.since}"
        head = f"Patient's care plan{f' ({plan})' if plan else ''}: {names.sentence_case(named)}"
        # an activity is keyed by its own code: the plan's categories are shared by every
        # activity of the plan (they are in its words), and would make "rest, ice" and
        # "stretching exercises" one thing restated
        codes = codes_of(detail.get("code")) or plan_codes
        facts = facts_of(list(dict.fromkeys(codes)), state, "", at.date if at else "")
        items.append(
            x.item(
                "care_plan",
                f"{head} ({words}{started})",
                at,
                facts,
                embed=f"{head} ({words})",
                source=f"{source}/activity/{i}"[:200],
            )
        )
    if items:
        return items
    if not plan:
        return x.skip("no activity and no plan name")
    head = f"Patient has a care plan: {plan}"
    words = _STATE_WORDS.get(status, status or "active")
    facts = facts_of(plan_codes, status or "active", "", at.date if at else "")
    return [x.item("care_plan", f"{head} ({words}{since})", at, facts, embed=head)]


_MAPPERS: dict[str, Callable[[Mapping[str, Any], str, Resolver], list[FhirItem]]] = {
    "AllergyIntolerance": _allergy,
    "MedicationStatement": _medication,
    "MedicationRequest": _medication,
    "Condition": _condition,
    "Observation": _observation,
    "Immunization": _immunization,
    "Procedure": _procedure,
    "CarePlan": _care_plan,
}
assert frozenset(_MAPPERS) == MAPPED_TYPES
