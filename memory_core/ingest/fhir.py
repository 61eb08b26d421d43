"""FHIR R4 import: a Bundle (or, in :mod:`.fhir_bulk`, a Bulk Data export) as memories of one
patient, through the engine's public API. What each resource becomes: :mod:`.fhir_map`.

- Validation: the bundle's envelope, then every resource of a kind that is imported, each with
  its ``fhir.resources`` model (R4B, which validates the R4 content used here); resources of
  other kinds (claims, encounters, ...) are only counted. An invalid resource writes nothing;
  the error names the entry, the resource (``Type/id``) and the field.
- One patient per import: every resource must be about the bundle's one Patient (its
  ``subject`` / ``patient`` reference, or an identifier of that Patient: the same value, and
  the same system when both give one), or about the Patient the caller names. A resource that
  names no patient (no reference, no identifier) is skipped and counted, never filed to the
  bundle's Patient. A bundle with
  several Patients, or with resources about another subject, is refused whole with a
  :class:`~memory_core.errors.PatientMismatchError` naming them -- unless the caller names which
  Patient to take (``fhir_patient``, or a ``patient_id`` that is one of the bundle's Patients);
  then the others are skipped and counted.
- Provenance: ``source = "fhir:<ResourceType>/<id>"``. A resource whose memory exists with the
  same statement is *unchanged*; a changed resource gets a new memory, and the normal
  supersession path (the policy's threshold, adjudicator and review modes) decides what it
  supersedes. Re-importing a bundle therefore creates nothing.
- Every memory carries the record's ``facts`` (codes, status, value, date).
- ``dry_run=True`` (the default) runs the very same ``add_memories`` call with nothing written,
  so the preview reports exactly what the import would do (the same memories and the same
  supersessions, among the new memories as well as against stored ones).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .. import validation as v
from ..errors import PatientMismatchError, ValidationError
from .fhir_map import (
    MAPPED_TYPES,
    READ_TYPES,
    FhirItem,
    Resolver,
    map_resource,
    partial_date,
    subject_identifier,
    subject_of,
)

if TYPE_CHECKING:
    from ..engine import MemoryEngine
    from ..values import AddResult, Memory

__all__ = [
    "BUNDLE_TYPES",
    "FhirImportReport",
    "FhirItem",
    "FhirSupersession",
    "bundle_patients",
    "import_fhir",
    "partial_date",
    "validate_bundle",
]

BUNDLE_TYPES = frozenset({"document", "transaction", "collection", "searchset"})
#: Resources named in a refusal (the rest are counted).
SHOWN = 10


@dataclass(frozen=True)
class FhirSupersession:
    """A memory the import supersedes (or would, in a dry run): ``state`` is ``auto`` or
    ``pending`` either way -- the dry run's decision is the write's."""

    source: str
    old_id: str
    old_content: str
    new_content: str
    similarity: float
    state: str  # auto | pending: the same for the preview (dry run) and the import
    rule: str = ""  # the decision table's rule that took it
    evidence: str = ""  # why, in plain words
    new_id: str = ""  # the memory that replaces it (an imported one, or one already stored)


@dataclass
class FhirImportReport:
    patient_id: str
    dry_run: bool
    bundle_type: str
    created: list[FhirItem] = field(default_factory=list)
    unchanged: list[FhirItem] = field(default_factory=list)
    skipped: list[FhirItem] = field(default_factory=list)
    superseded: list[FhirSupersession] = field(default_factory=list)
    resources: int = 0  # resources read (entries of the bundle, lines of the export)
    other_patients: list[str] = field(default_factory=list)  # left out: the caller chose

    def skipped_counts(self) -> list[tuple[str, str, str, int]]:
        """What was skipped, counted by kind, reason and code: ``(resource type, reason,
        code, count)``, most frequent first."""
        c = Counter((i.resource_type, i.reason, i.code) for i in self.skipped)
        return [(t, r, code, n) for (t, r, code), n in c.most_common()]

    def created_counts(self) -> list[tuple[str, int]]:
        """Memories created (or that would be) per memory type, most first."""
        c = Counter(i.memory_type or "" for i in self.created)
        return c.most_common()

    def summary(self) -> str:
        verb = "would create" if self.dry_run else "created"
        return (
            f"{self.patient_id}: {verb} {len(self.created)}, unchanged {len(self.unchanged)}, "
            f"skipped {len(self.skipped)}, superseded {len(self.superseded)}"
            + (
                f", other patients left out {len(self.other_patients)}"
                if self.other_patients
                else ""
            )
            + (" (dry run: nothing written)" if self.dry_run else "")
        )


# --- validation --------------------------------------------------------------------------------
_MODELS: dict[str, Any] = {}


def _model(rtype: str) -> Any:
    """The fhir.resources R4B model of a resource type (imported on first use)."""
    if rtype not in _MODELS:
        from fhir.resources.R4B import get_fhir_model_class

        _MODELS[rtype] = get_fhir_model_class(rtype)
    return _MODELS[rtype]


def validate_resource(res: Mapping[str, Any], where: str) -> None:
    """One resource through its ``fhir.resources`` model; the error names ``where`` (the
    entry or line and ``Type/id``) and the field."""
    import pydantic

    try:
        _model(str(res.get("resourceType"))).model_validate(res)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        rest = ".".join(str(x) for x in err["loc"]) or "(resource)"
        raise ValidationError(
            f"{where}.{rest}", f"{err['msg']} (input {err.get('input')!r})"[:300]
        ) from exc


def validate_bundle(data: Mapping[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """The bundle's envelope, and every resource of a kind that is read, through
    ``fhir.resources`` (R4B); the first error names the entry, the resource and the field.
    Returns the entries as ``(fullUrl, resource)``."""
    if data.get("resourceType") != "Bundle":
        raise ValidationError(
            "bundle.resourceType", f"must be 'Bundle', got {data.get('resourceType')!r}"
        )
    if data.get("type") not in BUNDLE_TYPES:
        raise ValidationError(
            "bundle.type",
            f"must be one of {', '.join(sorted(BUNDLE_TYPES))}, got {data.get('type')!r}",
        )
    raw = data.get("entry") or []
    if not isinstance(raw, list):
        raise ValidationError("bundle.entry", "must be a list")
    entries: list[tuple[str | None, dict[str, Any]]] = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise ValidationError(f"bundle.entry[{i}]", "must be an object")
        res = e.get("resource")
        if res is None:
            continue
        if not isinstance(res, dict) or not isinstance(res.get("resourceType"), str):
            raise ValidationError(f"entry[{i}].resource", "must be a resource with a resourceType")
        url = e.get("fullUrl")
        if url is not None and not isinstance(url, str):
            raise ValidationError(f"entry[{i}].fullUrl", "must be a string")
        if res["resourceType"] in READ_TYPES:
            validate_resource(res, f"entry[{i}] {res['resourceType']}/{res.get('id', '?')}")
        entries.append((url, res))
    return entries


# --- whose record ------------------------------------------------------------------------------
@dataclass
class Subject:
    """The patient an import is about: the references that name it, and its Patient's
    identifiers (``(system, value)``)."""

    refs: set[str]
    fhir_id: str | None
    chosen: bool  # the caller named it (others are then skipped, not refused)
    identifiers: set[tuple[str, str]] = field(default_factory=set)

    def owns(self, ref: str | None) -> bool:
        """Whether the reference ``ref`` names this patient."""
        if ref is None:
            return False
        if ref in self.refs:
            return True
        return "/".join(ref.rstrip("/").split("/")[-2:]) in self.refs

    def owns_identifier(self, ident: tuple[str, str]) -> bool:
        """Whether the identifier names this patient: the same value, and the same system
        when both give one."""
        system, value = ident
        return any(value == v and (not system or not s or system == s) for s, v in self.identifiers)

    def about(self, res: Mapping[str, Any]) -> tuple[bool | None, str]:
        """Whether ``res`` is about this patient (None: it names no patient), and whom it
        names: by reference, else by identifier."""
        ref = subject_of(res)
        if ref is not None:
            return self.owns(ref), ref
        ident = subject_identifier(res)
        if ident is not None:
            name = f"identifier {ident[0]}|{ident[1]}" if ident[0] else f"identifier {ident[1]}"
            return self.owns_identifier(ident), name
        return None, ""


def identifiers_of(patient: Mapping[str, Any]) -> set[tuple[str, str]]:
    """A Patient's identifiers as ``(system, value)`` (system ``""`` when absent)."""
    out: set[tuple[str, str]] = set()
    for ident in patient.get("identifier") or []:
        if isinstance(ident, Mapping) and ident.get("value"):
            out.add((str(ident.get("system") or ""), str(ident["value"])))
    return out


def choose_subject(
    patients: Sequence[tuple[str | None, Mapping[str, Any]]],
    patient_id: str | None,
    fhir_patient: str | None,
) -> Subject:
    """Which Patient the import is about (see the module docstring)."""

    def refs(url: str | None, res: Mapping[str, Any]) -> set[str]:
        out = {f"Patient/{res.get('id')}"} if res.get("id") else set()
        return out | ({url} if url else set())

    def subject(url: str | None, res: Mapping[str, Any], fhir_id: str, chosen: bool) -> Subject:
        return Subject(refs(url, res), fhir_id, chosen, identifiers_of(res))

    if fhir_patient is not None:
        want = str(fhir_patient).strip()
        for url, res in patients:
            if want in refs(url, res) | {str(res.get("id"))}:
                return subject(url, res, str(res.get("id")), True)
        if patients:
            listed = ", ".join(sorted(f"Patient/{r.get('id')}" for _u, r in patients))
            raise ValidationError("fhir_patient", f"{want!r} is none of the bundle's ({listed})")
        bare = want.split("/")[-1]
        return Subject({want, f"Patient/{bare}"}, bare, True)
    if len(patients) == 1:
        url, res = patients[0]
        return subject(url, res, str(res.get("id")), False)
    if len(patients) > 1:
        for url, res in patients:
            if patient_id is not None and str(res.get("id")) == patient_id:
                return subject(url, res, patient_id, True)
        names = tuple(sorted(f"Patient/{r.get('id')}" for _u, r in patients))
        raise PatientMismatchError(
            "bundle",
            f"holds {len(patients)} patients ({', '.join(names[:SHOWN])}); an import is about "
            "one patient: name the Patient to take (fhir_patient; --fhir-patient) -- nothing "
            "was written",
            names,
        )
    if patient_id is None:
        raise ValidationError(
            "patient_id", "the bundle has 0 Patient resources; name the patient to import for"
        )
    return Subject({f"Patient/{patient_id}"}, patient_id, False)


def _foreign(resources: Sequence[str], subject: Subject) -> PatientMismatchError:
    return PatientMismatchError(
        "bundle",
        f"{len(resources)} resource(s) are about another subject than "
        f"{sorted(subject.refs)[0]}: {', '.join(resources[:SHOWN])}"
        + (f" and {len(resources) - SHOWN} more" if len(resources) > SHOWN else "")
        + "; name the Patient to take (fhir_patient; --fhir-patient) to skip them -- nothing was "
        "written",
        tuple(resources),
    )


# --- mapping a patient's resources -------------------------------------------------------------
def source_of(res: Mapping[str, Any], fallback: str) -> str:
    rtype = str(res.get("resourceType"))
    rid = res.get("id")
    return (f"fhir:{rtype}/{rid}" if rid else f"fhir:{fallback}")[:200]


def map_patient(
    resources: Iterable[tuple[str, Mapping[str, Any]]],
    subject: Subject,
    resolve: Resolver,
    report: FhirImportReport,
) -> list[FhirItem]:
    """The items of one patient's resources (``(fallback name, resource)``): skipped ones go
    to ``report.skipped``; a resource about another subject is skipped when the caller chose
    the subject, else the import is refused naming every such resource."""
    seen: dict[str, tuple[str, Mapping[str, Any]]] = {}  # source -> the entry imported
    items: list[FhirItem] = []
    foreign: list[str] = []
    for fallback, res in resources:
        rtype = str(res.get("resourceType"))
        source = source_of(res, fallback)
        if rtype == "Patient":
            if not subject.owns(f"Patient/{res.get('id')}"):
                report.other_patients.append(f"Patient/{res.get('id')}")
                report.skipped.append(FhirItem(source, rtype, reason="another patient"))
            continue
        if rtype == "Medication":
            continue  # read through references
        if rtype in MAPPED_TYPES:
            ours, whom = subject.about(res)
            if ours is None:  # filed to nobody rather than to a patient it may not be about
                report.skipped.append(
                    FhirItem(source, rtype, reason="names no patient (no reference or identifier)")
                )
                continue
            if not ours:
                if not subject.chosen:
                    foreign.append(f"{rtype}/{res.get('id', '?')} (about {whom})")
                    continue
                if whom.startswith("identifier ") and whom not in report.other_patients:
                    report.other_patients.append(whom)
                report.skipped.append(
                    FhirItem(source, rtype, reason="about another patient of the bundle")
                )
                continue
        if not res.get("id"):
            report.skipped.append(FhirItem(source, rtype, reason="resource has no id"))
            continue
        if source in seen:
            first_name, first = seen[source]
            why = (
                "duplicate entry (the same resource again)"
                if first == res
                else "duplicate entry id with different content (the first entry, "
                f"{first_name}, was imported)"
            )
            report.skipped.append(FhirItem(source, rtype, reason=why))
            continue
        seen[source] = (fallback, res)
        for it in map_resource(res, source, resolve):
            (items if it.content is not None else report.skipped).append(it)
    if foreign:
        raise _foreign(foreign, subject)
    return items


# --- writing -----------------------------------------------------------------------------------
class Embeddings:
    """Embeddings of the texts items are embedded by, computed in batches and kept (LRU,
    ``limit`` texts, ~1.5 KB each) across imports with one embedder: a code's name is embedded
    once per process, not once per patient (:meth:`of_engine`)."""

    _shared: ClassVar[weakref.WeakKeyDictionary[Any, Embeddings]] = weakref.WeakKeyDictionary()
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, engine: MemoryEngine, limit: int = 20_000) -> None:
        self.engine = engine
        self.limit = limit
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    @classmethod
    def of_engine(cls, engine: MemoryEngine) -> Embeddings:
        """The cache of the engine's embedder (one per embedder object)."""
        with cls._lock:
            found = cls._shared.get(engine.embedder)
            if found is None:
                found = cls._shared[engine.embedder] = cls(engine)
            return found

    def of(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        want = list(dict.fromkeys(texts))
        with self._lock:
            todo = [t for t in want if t not in self._cache]
        vecs: Any = self.engine.embedder.embed_batch(todo) if todo else []
        with self._lock:
            for t, vec in zip(todo, vecs, strict=True):
                vec = np.array(vec, dtype=np.float32)
                vec.flags.writeable = False
                self._cache[t] = vec
            out = {}
            for t in want:
                self._cache.move_to_end(t)
                out[t] = self._cache[t]
            while len(self._cache) > self.limit:
                self._cache.popitem(last=False)
        return out


def write_items(
    engine: MemoryEngine,
    pid: str,
    items: list[FhirItem],
    report: FhirImportReport,
    *,
    by: str,
    at: datetime,
    dry_run: bool,
    embeddings: Embeddings,
    existing: Mapping[str, list[Memory]] | None = None,
) -> None:
    """Compare the items with the patient's stored memories from FHIR (unchanged ones are
    reported, not written), then one ``add_memories`` call -- written, or in a dry run the
    same call deciding the same things with nothing written -- and its results into
    ``report``."""
    if existing is None:
        stored: dict[str, list[Memory]] = {}
        for m in engine.list_memories(pid, include_inactive=True):
            if m.source and m.source.startswith("fhir:"):
                stored.setdefault(m.source, []).append(m)
        existing = stored
    todo: list[FhirItem] = []
    for it in items:
        assert it.content is not None
        if it.created_at is not None and it.created_at > at:
            report.skipped.append(
                FhirItem(
                    it.source,
                    it.resource_type,
                    reason=f"dated {it.created_at:%Y-%m-%d}, in the future",
                    code=it.code,
                )
            )
            continue
        v.content(it.content, f"{it.source}.content")
        previous = existing.get(it.source, [])
        same = next((m for m in previous if m.content == it.content), None)
        if same is not None:
            report.unchanged.append(
                replace(it, memory_type=same.memory_type, content=same.content, memory_id=same.id)
            )
            continue
        if previous:
            it = replace(
                it,
                reason="changed since the last import (was: " + previous[-1].content[:80] + ")",
            )
        todo.append(it)
    if not todo:
        return
    vectors = embeddings.of(it.embed_text or it.content or "" for it in todo)
    records = [
        {
            "patient_id": pid,
            "content": it.content,
            "memory_type": it.memory_type,
            "importance": it.importance,
            "pinned": it.pinned,
            "created_at": it.created_at,
            "source": it.source,
            "facts": it.facts,
            "embedding": vectors[it.embed_text or it.content or ""],
        }
        for it in todo
    ]
    results = engine.add_memories(records, by=by, now=at, dry_run=dry_run)
    _report_results(engine, pid, todo, results, report)


def _report_results(
    engine: MemoryEngine,
    pid: str,
    todo: list[FhirItem],
    results: list[AddResult],
    report: FhirImportReport,
) -> None:
    by_id: dict[str, tuple[FhirItem, Memory]] = {}
    for it, res in zip(todo, results, strict=True):
        report.created.append(replace(it, memory_id=res.memory.id))
        by_id[res.memory.id] = (it, res.memory)
    stored_ids = {i for r in results for s in r.supersessions for i in (s.old_id, s.new_id)}
    stored_ids -= set(by_id)
    stored: dict[str, str] = {}
    if stored_ids:
        stored = {m.id: m.content for m in engine.store.get_memories(sorted(stored_ids))}

    def content(mid: str) -> str:
        return by_id[mid][1].content if mid in by_id else stored.get(mid, "")

    for r in results:
        for s in r.supersessions:
            report.superseded.append(
                FhirSupersession(
                    by_id[s.new_id][0].source if s.new_id in by_id else "",
                    s.old_id,
                    content(s.old_id),
                    content(s.new_id),
                    s.similarity,
                    s.state.value,
                    s.rule,
                    s.evidence,
                    s.new_id,
                )
            )


# --- the bundle --------------------------------------------------------------------------------
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


def _resolver(entries: Sequence[tuple[str | None, Mapping[str, Any]]]) -> Resolver:
    by_ref: dict[str, Mapping[str, Any]] = {}
    for url, res in entries:
        if url:
            by_ref[url] = res
        if res.get("id"):
            by_ref[f"{res['resourceType']}/{res['id']}"] = res

    def resolve(ref: str | None) -> Mapping[str, Any] | None:
        if ref is None:
            return None
        if ref in by_ref:
            return by_ref[ref]
        return by_ref.get("/".join(ref.rstrip("/").split("/")[-2:]))

    return resolve


def bundle_patients(bundle: Mapping[str, Any]) -> list[str]:
    """The ids of a bundle's Patient resources (what ``fhir_patient`` may name)."""
    out = []
    for e in bundle.get("entry") or []:
        res = e.get("resource") if isinstance(e, Mapping) else None
        if isinstance(res, Mapping) and res.get("resourceType") == "Patient" and res.get("id"):
            out.append(str(res["id"]))
    return out


def import_fhir(
    engine: MemoryEngine,
    bundle: Mapping[str, Any] | str | Path,
    *,
    patient_id: str | None = None,
    fhir_patient: str | None = None,
    by: str,
    dry_run: bool = True,
    now: datetime | None = None,
) -> FhirImportReport:
    """Import a FHIR R4 Bundle (a dict or a path to its JSON) as memories of one patient:
    ``patient_id`` if given, else the chosen Patient resource's id (see the module docstring
    for which Patient is chosen and when the bundle is refused)."""
    by = v.actor(by)
    dry_run = v.boolean(dry_run, "dry_run")
    at = v.now_value(now) if now is not None else engine.clock()
    if patient_id is not None:
        v.patient_id(patient_id)
    data = _load(bundle)
    entries = validate_bundle(data)
    patients = [(u, r) for u, r in entries if r.get("resourceType") == "Patient"]
    pid_given = None if patient_id is None else v.patient_id(patient_id)
    subject = choose_subject(patients, pid_given, fhir_patient)
    pid = pid_given or v.patient_id(subject.fhir_id, "patient_id")
    report = FhirImportReport(pid, dry_run, str(data.get("type")), resources=len(entries))
    named = [(u or f"entry[{i}]", r) for i, (u, r) in enumerate(entries)]
    items = map_patient(named, subject, _resolver(entries), report)
    write_items(
        engine,
        pid,
        items,
        report,
        by=by,
        at=at,
        dry_run=dry_run,
        embeddings=Embeddings.of_engine(engine),
    )
    return report
