"""FHIR R4 import: a Bundle's AllergyIntolerance, MedicationStatement, MedicationRequest,
Condition and Observation resources as memories, through the engine's public API.

- Validation: the whole bundle with ``fhir.resources`` (R4B models, which validate the R4
  content used here) before anything else; an invalid bundle writes nothing and the error
  names the entry, the resource (``Type/id``) and the field.
- Provenance: ``source = "fhir:<ResourceType>/<id>"``. A resource whose memory exists with the
  same statement is *unchanged*; a changed resource gets a new memory, and the normal
  supersession path (the policy's threshold, adjudicator and review modes) decides what it
  supersedes. Re-importing a bundle therefore creates nothing.
- Partial dates (``"2015"``, ``"2016-10"``) are the start of their period in UTC; the sentence
  keeps the precision the record had ("in 2015", "in October 2016", "on 2016-10-05").
- ``dry_run=True`` (the default) reports what would happen and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import validation as v
from ..errors import ValidationError

if TYPE_CHECKING:
    from ..engine import MemoryEngine
    from ..values import Memory

BUNDLE_TYPES = frozenset({"document", "transaction", "collection", "searchset"})
LOINC = "http://loinc.org"
# LOINC code -> (label in the sentence, default unit)
LOINC_ANALYTES: dict[str, tuple[str, str]] = {
    "4548-4": ("HbA1c", "%"),
    "33914-3": ("eGFR", "mL/min/1.73m2"),
    "62238-1": ("eGFR", "mL/min/1.73m2"),
    "98979-8": ("eGFR", "mL/min/1.73m2"),
    "18262-6": ("LDL cholesterol", "mg/dL"),
    "13457-7": ("LDL cholesterol", "mg/dL"),
    "1558-6": ("fasting glucose", "mg/dL"),
    "2823-3": ("potassium", "mmol/L"),
    "9318-7": ("urine albumin/creatinine ratio", "mg/g"),
}
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
RESOLVED_ALLERGY_IMPORTANCE = 6.0  # a resolved allergy is history: below the warning marker


@dataclass(frozen=True)
class FhirItem:
    """One resource of the bundle and what the import does (or would do) with it."""

    source: str  # fhir:<ResourceType>/<id> (or the entry's fullUrl when it has no id)
    resource_type: str
    memory_type: str | None = None
    content: str | None = None
    created_at: datetime | None = None
    importance: float | None = None
    pinned: bool | None = None
    reason: str = ""  # why skipped; or what it replaces
    memory_id: str | None = None  # the memory written (or the existing one when unchanged)


@dataclass(frozen=True)
class FhirSupersession:
    """A memory the import supersedes (or would: ``state`` is the preview's mode then)."""

    source: str
    old_id: str
    old_content: str
    new_content: str
    similarity: float
    state: str  # auto | pending (written) / auto | review (dry run)
    rule: str = ""  # the decision table's rule that took it
    evidence: str = ""  # why, in plain words


@dataclass
class FhirImportReport:
    patient_id: str
    dry_run: bool
    bundle_type: str
    created: list[FhirItem] = field(default_factory=list)
    unchanged: list[FhirItem] = field(default_factory=list)
    skipped: list[FhirItem] = field(default_factory=list)
    superseded: list[FhirSupersession] = field(default_factory=list)

    def summary(self) -> str:
        verb = "would create" if self.dry_run else "created"
        return (
            f"{self.patient_id}: {verb} {len(self.created)}, unchanged {len(self.unchanged)}, "
            f"skipped {len(self.skipped)}, superseded {len(self.superseded)}"
            + (" (dry run: nothing written)" if self.dry_run else "")
        )


# --- parsing helpers ---------------------------------------------------------------------------
def partial_date(value: Any, field_name: str) -> tuple[datetime, str]:
    """A FHIR date or dateTime as (start of its period in UTC, the phrase for the sentence):
    ``"2015"`` -> 2015-01-01 "in 2015"; ``"2016-10"`` -> 2016-10-01 "in October 2016";
    ``"2016-10-05"`` or a dateTime -> that day "on 2016-10-05"."""
    if isinstance(value, datetime):
        d = value if value.tzinfo else value.replace(tzinfo=UTC)
        d = d.astimezone(UTC)
        return d, f"on {d:%Y-%m-%d}"
    text = str(value).strip()
    try:
        if len(text) == 4:
            return datetime(int(text), 1, 1, tzinfo=UTC), f"in {text}"
        if len(text) == 7:
            year, month = int(text[:4]), int(text[5:7])
            return datetime(year, month, 1, tzinfo=UTC), f"in {_MONTH_NAMES[month - 1]} {year}"
        if len(text) == 10:
            d = datetime.fromisoformat(text).replace(tzinfo=UTC)
            return d, f"on {text}"
        d = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, IndexError) as exc:
        raise ValidationError(field_name, f"is not a FHIR date: {text!r}") from exc
    if d.tzinfo is None:  # FHIR requires a zone with a time; a bare one is read as UTC
        d = d.replace(tzinfo=UTC)
    d = d.astimezone(UTC)
    return d, f"on {d:%Y-%m-%d}"


def _concept_text(cc: Any) -> str | None:
    """A CodeableConcept's text, else its first coding's display, else its code."""
    if not isinstance(cc, Mapping):
        return None
    if cc.get("text"):
        return str(cc["text"])
    for coding in cc.get("coding") or []:
        if coding.get("display"):
            return str(coding["display"])
    for coding in cc.get("coding") or []:
        if coding.get("code"):
            return str(coding["code"])
    return None


def _code(cc: Any) -> str | None:
    if not isinstance(cc, Mapping):
        return None
    for coding in cc.get("coding") or []:
        if coding.get("code"):
            return str(coding["code"]).lower()
    return str(cc["text"]).lower() if cc.get("text") else None


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


def _dose(dosages: Any) -> str:
    """``dosage`` / ``dosageInstruction``: its text, else dose quantity and frequency."""
    if not isinstance(dosages, list) or not dosages:
        return ""
    d = dosages[0]
    if d.get("text"):
        return str(d["text"])
    parts: list[str] = []
    for dr in d.get("doseAndRate") or []:
        q = dr.get("doseQuantity")
        if q and q.get("value") is not None:
            unit = q.get("unit") or q.get("code") or ""
            parts.append(f"{_num(q['value'])}{'' if unit in ('mg', 'g', 'mcg') else ' '}{unit}")
            break
    rep = (d.get("timing") or {}).get("repeat") or {}
    freq, period, unit = rep.get("frequency"), rep.get("period"), rep.get("periodUnit")
    if freq and unit:
        units = {"d": "day", "wk": "week", "mo": "month", "h": "hour"}
        every = units.get(unit, unit)
        if period not in (None, 1):
            every = f"{_num(period)} {every}s"
        words = {1: "once", 2: "twice"}.get(int(freq), f"{_num(freq)} times")
        parts.append("once daily" if (freq, every) == (1, "day") else f"{words} per {every}")
    return " ".join(p.strip() for p in parts if p.strip())


def _num(x: Any) -> str:
    f = float(x)
    return str(int(f)) if f.is_integer() else f"{f:g}"


def _ref_id(ref: Any) -> str | None:
    return str(ref["reference"]) if isinstance(ref, Mapping) and ref.get("reference") else None


# --- the mapping -------------------------------------------------------------------------------
class _Bundle:
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.entries: list[tuple[str | None, dict[str, Any]]] = [
            (e.get("fullUrl"), e["resource"]) for e in data.get("entry") or [] if e.get("resource")
        ]
        self.by_ref: dict[str, dict[str, Any]] = {}
        for full_url, res in self.entries:
            if full_url:
                self.by_ref[full_url] = res
            if res.get("id"):
                self.by_ref[f"{res['resourceType']}/{res['id']}"] = res

    def resolve(self, ref: str | None) -> dict[str, Any] | None:
        if ref is None:
            return None
        if ref in self.by_ref:
            return self.by_ref[ref]
        tail = "/".join(ref.rstrip("/").split("/")[-2:])  # an absolute URL of Type/id
        return self.by_ref.get(tail)


def _medication_name(res: Mapping[str, Any], bundle: _Bundle) -> tuple[str | None, str]:
    if res.get("medicationCodeableConcept"):
        return _concept_text(res["medicationCodeableConcept"]), ""
    ref = _ref_id(res.get("medicationReference"))
    med = bundle.resolve(ref)
    if med is None or med.get("resourceType") != "Medication":
        return None, f"medicationReference {ref!r} is not a Medication in the bundle"
    return _concept_text(med.get("code")), ""


def _map(res: dict[str, Any], bundle: _Bundle, source: str) -> FhirItem:
    rtype = str(res.get("resourceType"))

    def skip(reason: str) -> FhirItem:
        return FhirItem(source, rtype, reason=reason)

    def item(mtype: str, content: str, when: tuple[datetime, str] | None, **kw: Any) -> FhirItem:
        return FhirItem(
            source, rtype, mtype, content, when[0] if when else None, kw.get("imp"), kw.get("pin")
        )

    def dated(*keys: str) -> tuple[datetime, str] | None:
        found = _first_date(res, *keys)
        return None if found is None else partial_date(found[1], f"{source}.{found[0]}")

    if rtype == "AllergyIntolerance":
        verification = _code(res.get("verificationStatus"))
        if verification in ("entered-in-error", "refuted"):
            return skip(f"verificationStatus is {verification}")
        substance = _concept_text(res.get("code"))
        if not substance:
            return skip("no substance (code has no text, display or code)")
        reactions: list[str] = []
        severities: list[str] = []
        for r in res.get("reaction") or []:
            for m in r.get("manifestation") or []:
                if (t := _concept_text(m)) and t not in reactions:
                    reactions.append(t.lower())
            if r.get("severity"):
                severities.append(str(r["severity"]))
        when = dated("onsetDateTime", "recordedDate")
        status = _code(res.get("clinicalStatus")) or "active"
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
        since = f", recorded {when[1]}" if when else ""
        if status in ("inactive", "resolved"):
            text = f"Patient's {substance} allergy is recorded as {status}, not current{tail}"
            return item("allergy", text + since, when, imp=RESOLVED_ALLERGY_IMPORTANCE, pin=False)
        return item("allergy", f"Patient has a documented {substance} allergy{tail}{since}", when)

    if rtype in ("MedicationStatement", "MedicationRequest"):
        status = str(res.get("status") or "unknown")
        if status == "entered-in-error":
            return skip("status is entered-in-error")
        if rtype == "MedicationRequest" and status == "draft":
            return skip("status is draft (not yet prescribed)")
        if status == "unknown":
            return skip("status is unknown")
        name, problem = _medication_name(res, bundle)
        if problem:
            return skip(problem)
        if not name:
            return skip("medication has no text, display or code")
        dose = _dose(
            res.get("dosage") if rtype == "MedicationStatement" else res.get("dosageInstruction")
        )
        dose_s = f" {dose}" if dose else ""
        if rtype == "MedicationStatement":
            when = dated("effectiveDateTime", "effectivePeriod.start", "dateAsserted")
        else:
            when = dated("authoredOn")
        since = f" (since {when[1].split(' ', 1)[1]})" if when else ""
        if status in ("stopped", "completed", "cancelled", "not-taken"):
            verb = {
                "stopped": "stopped",
                "completed": "completed a course of",
                "cancelled": "had a cancelled prescription for",
                "not-taken": "is not taking",
            }[status]
            ended = dated("effectivePeriod.end") if rtype == "MedicationStatement" else None
            why = next((t for r in res.get("statusReason") or [] if (t := _concept_text(r))), None)
            text = f"Patient {verb} {name}{dose_s}"
            text += f" {ended[1]}" if ended else ""
            text += f" because of {why}" if why else ""
            return item("medication", f"{text}; not a current medication", ended or when)
        if status == "on-hold":
            return item("medication", f"Patient's {name}{dose_s} is on hold{since}", when)
        if status == "intended":
            return item("medication", f"Patient intends to take {name}{dose_s}", when)
        verb = "is prescribed" if rtype == "MedicationRequest" else "takes"
        return item("medication", f"Patient {verb} {name}{dose_s}{since}", when)

    if rtype == "Condition":
        verification = _code(res.get("verificationStatus"))
        if verification in ("entered-in-error", "refuted"):
            return skip(f"verificationStatus is {verification}")
        name = _concept_text(res.get("code"))
        if not name:
            return skip("no condition name (code has no text, display or code)")
        status = _code(res.get("clinicalStatus")) or "active"
        when = dated("onsetDateTime", "onsetPeriod.start", "recordedDate")
        since = f" (since {when[1].split(' ', 1)[1]})" if when else ""
        if status in ("inactive", "resolved", "remission"):
            word = "in remission" if status == "remission" else status
            text = f"Patient's {name} is {word}, not a current condition"
            abated = dated("abatementDateTime")
            text += f" ({abated[1]})" if abated else ""
            return item("condition", text, abated or when)
        prefix = (
            "Patient has a recurrence of" if status in ("recurrence", "relapse") else "Patient has"
        )
        return item("condition", f"{prefix} {name}{since}", when)

    if rtype == "Observation":
        status = str(res.get("status") or "")
        if status in ("entered-in-error", "cancelled"):
            return skip(f"status is {status}")
        if status in ("registered",):
            return skip("status is registered (no result yet)")
        codes = [
            str(c.get("code"))
            for c in (res.get("code") or {}).get("coding") or []
            if c.get("system") == LOINC
        ]
        known = [c for c in codes if c in LOINC_ANALYTES]
        if not codes:
            return skip("no LOINC code")
        if not known:
            return skip(f"LOINC {', '.join(codes)} is not an analyte the product knows")
        label, default_unit = LOINC_ANALYTES[known[0]]
        q = res.get("valueQuantity")
        if not q or q.get("value") is None:
            return skip("no valueQuantity")
        unit = str(q.get("unit") or q.get("code") or default_unit)
        value = _num(q["value"])
        shown = f"{value}%" if unit == "%" else f"{value} {unit}"
        when = dated("effectiveDateTime", "effectivePeriod.start", "issued")
        text = f"Patient's {label} was {shown}" + (f" {when[1]}" if when else "")
        if status == "preliminary":
            text += " (preliminary)"
        return item("lab_result", text, when)

    return skip(f"{rtype} is not imported as a memory")


def _subject(res: Mapping[str, Any]) -> str | None:
    return _ref_id(res.get("patient")) or _ref_id(res.get("subject"))


def _load(bundle: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    if isinstance(bundle, Mapping):
        return dict(bundle)
    if not isinstance(bundle, str | Path):
        raise ValidationError(
            "bundle",
            f"must be a FHIR Bundle (a mapping) or the path of its JSON file, got "
            f"{type(bundle).__name__}",
        )
    path = Path(bundle)
    try:
        raw = path.read_bytes()
    except (OSError, ValueError) as exc:  # missing, a directory, unreadable, a NUL in the name
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValidationError("bundle", f"cannot read {str(path)!r}: {why}") from exc
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ValidationError(
            "bundle", f"{path.name} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from exc
    except json.JSONDecodeError as exc:
        raise ValidationError("bundle", f"{path.name} is not valid JSON ({exc.msg})") from exc
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number; nesting too deep
        why = str(exc).split(";")[0] if isinstance(exc, ValueError) else "nested too deeply"
        raise ValidationError("bundle", f"{path.name} is not valid JSON ({why})") from exc
    if not isinstance(data, dict):
        raise ValidationError("bundle", "must be a JSON object (a FHIR Bundle)")
    return data


def validate_bundle(data: Mapping[str, Any]) -> None:
    """The whole bundle through ``fhir.resources`` (R4B); the first error names the entry,
    the resource and the field."""
    import pydantic
    from fhir.resources.R4B.bundle import Bundle

    if data.get("resourceType") != "Bundle":
        raise ValidationError(
            "bundle.resourceType", f"must be 'Bundle', got {data.get('resourceType')!r}"
        )
    if data.get("type") not in BUNDLE_TYPES:
        raise ValidationError(
            "bundle.type",
            f"must be one of {', '.join(sorted(BUNDLE_TYPES))}, got {data.get('type')!r}",
        )
    try:
        Bundle.model_validate(data)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        where = "bundle"
        if len(loc) >= 3 and loc[0] == "entry" and isinstance(loc[1], int) and loc[2] == "resource":
            entries = data.get("entry") or []
            res = entries[loc[1]].get("resource", {}) if loc[1] < len(entries) else {}
            rid = f"{res.get('resourceType')}/{res.get('id', '?')}"
            rest = ".".join(str(x) for x in loc[3:]) or "(resource)"
            where = f"entry[{loc[1]}] {rid}.{rest}"
        elif loc:
            where = "bundle." + ".".join(str(x) for x in loc)
        raise ValidationError(where, f"{err['msg']} (input {err.get('input')!r})"[:300]) from exc


def import_fhir(
    engine: MemoryEngine,
    bundle: Mapping[str, Any] | str | Path,
    *,
    patient_id: str | None = None,
    by: str,
    dry_run: bool = True,
    now: datetime | None = None,
) -> FhirImportReport:
    """Import a FHIR R4 Bundle (a dict or a path to its JSON) as memories of one patient:
    ``patient_id`` if given, else the bundle's one Patient resource's id. Resources about
    another patient are skipped with a reason."""
    by = v.actor(by)
    dry_run = v.boolean(dry_run, "dry_run")
    at = v.now_value(now) if now is not None else engine.clock()
    if patient_id is not None:
        v.patient_id(patient_id)
    data = _load(bundle)
    validate_bundle(data)
    parsed = _Bundle(data)
    patients = [(u, r) for u, r in parsed.entries if r.get("resourceType") == "Patient"]
    if patient_id is None:
        if len(patients) != 1:
            raise ValidationError(
                "patient_id",
                f"the bundle has {len(patients)} Patient resources; name the patient to import for",
            )
        patient_id = str(patients[0][1].get("id"))
    pid = v.patient_id(patient_id)
    own_refs: set[str] = set()
    if len(patients) == 1:
        url, pres = patients[0]
        own_refs = {f"Patient/{pres.get('id')}"} | ({url} if url else set())
    report = FhirImportReport(pid, dry_run, str(data.get("type")))
    existing: dict[str, list[Memory]] = {}
    for m in engine.list_memories(pid, include_inactive=True):
        if m.source and m.source.startswith("fhir:"):
            existing.setdefault(m.source, []).append(m)
    seen: set[str] = set()
    todo: list[FhirItem] = []
    for i, (full_url, res) in enumerate(parsed.entries):
        rtype = str(res.get("resourceType"))
        if rtype in ("Patient", "Medication"):
            continue  # the subject itself; medications are read through references
        source = (
            f"fhir:{rtype}/{res['id']}" if res.get("id") else f"fhir:{full_url or f'entry[{i}]'}"
        )
        source = source[:200]
        if not res.get("id"):
            report.skipped.append(FhirItem(source, rtype, reason="resource has no id"))
            continue
        if source in seen:
            report.skipped.append(FhirItem(source, rtype, reason="duplicate entry in the bundle"))
            continue
        seen.add(source)
        subject = _subject(res)
        if own_refs and subject is not None and subject not in own_refs:
            tail = "/".join(subject.split("/")[-2:])
            if tail not in own_refs:
                report.skipped.append(
                    FhirItem(source, rtype, reason=f"about {subject}, not the imported patient")
                )
                continue
        mapped = _map(res, parsed, source)
        if mapped.content is None:
            report.skipped.append(mapped)
            continue
        if mapped.created_at is not None and mapped.created_at > at:
            report.skipped.append(
                FhirItem(source, rtype, reason=f"dated {mapped.created_at:%Y-%m-%d}, in the future")
            )
            continue
        v.content(mapped.content, f"{source}.content")
        previous = existing.get(source, [])
        same = next((m for m in previous if m.content == mapped.content), None)
        if same is not None:
            report.unchanged.append(
                FhirItem(
                    source,
                    rtype,
                    same.memory_type,
                    same.content,
                    same.created_at,
                    memory_id=same.id,
                )
            )
            continue
        if previous:
            mapped = FhirItem(
                mapped.source,
                rtype,
                mapped.memory_type,
                mapped.content,
                mapped.created_at,
                mapped.importance,
                mapped.pinned,
                reason="changed since the last import (was: " + previous[-1].content[:80] + ")",
            )
        todo.append(mapped)
    if dry_run:
        for it in todo:
            assert it.content is not None and it.memory_type is not None
            report.created.append(it)
            hits = engine.preview_supersessions(
                pid, it.content, it.memory_type, created_at=it.created_at or at, now=at
            )
            report.superseded += [
                FhirSupersession(
                    it.source, h.memory.id, h.memory.content, it.content, h.similarity, h.mode,
                    h.rule, h.evidence,
                )
                for h in hits
            ]  # fmt: skip
        return report
    records = [
        {
            "patient_id": pid,
            "content": it.content,
            "memory_type": it.memory_type,
            "importance": it.importance,
            "pinned": it.pinned,
            "created_at": it.created_at,
            "source": it.source,
        }
        for it in todo
    ]
    results = engine.add_memories(records, by=by, now=at) if records else []
    by_id: dict[str, FhirItem] = {}
    for it, res_ in zip(todo, results, strict=True):
        report.created.append(
            FhirItem(
                it.source,
                it.resource_type,
                it.memory_type,
                it.content,
                it.created_at,
                it.importance,
                it.pinned,
                it.reason,
                res_.memory.id,
            )
        )
        by_id[res_.memory.id] = it
    old_ids = [s.old_id for r in results for s in r.supersessions]
    olds = {m.id: m for m in engine.list_memories(pid, include_inactive=True) if m.id in old_ids}
    for r in results:
        for s in r.supersessions:
            old = olds.get(s.old_id)
            report.superseded.append(
                FhirSupersession(
                    by_id[r.memory.id].source if r.memory.id in by_id else "",
                    s.old_id,
                    old.content if old else "",
                    r.memory.content,
                    s.similarity,
                    s.state.value,
                    s.rule,
                    s.evidence,
                )
            )
    return report
