"""FHIR Bulk Data import: the NDJSON files of a ``$export`` (one resource per line, many
patients, a file per resource type) as memories, one patient at a time.

How it stays within bounded memory: a first pass reads every line once and keeps, for each
resource of a kind that is imported, only where it is (file, byte offset) and whose it is (an
index of 14 bytes a resource: 350,000 resources are ~5 MB); Medications are indexed by id. The
second pass takes the patients one by one, reads just their lines, validates and maps them
(:mod:`.fhir_map`) and writes them in one ``add_memories`` call -- one transaction per
patient, its supersessions decided against the patient's stored memories as for a bundle.
Embeddings are computed in batches and shared: the name a coded measurement is embedded by
("Patient's body weight") is embedded once per import, not once per patient. What a patient
holds is released before the next one is read.

The patient's id in the product is the FHIR Patient's id. A resource whose subject has no
Patient line in the export, or that names no subject, is counted, not imported.

Progress and resumption: ``progress(done, total)`` after each patient; with ``report_path``
each finished patient appends one JSON line there (counts, skipped kinds, or the error that
refused it), flushed at once; the header line says when the import started. Run again with the
same files and report, patients already reported are skipped (``resumed``): the file is first
written again with its whole lines only, one per patient (a line cut by a crash and a refused
patient's line go: those patients run again), so nothing is appended onto a cut line or
repeated. A patient that runs again in a resumed import is counted from the store -- the
memories from FHIR this import added to it since it started, and the supersessions they made
-- so a patient whose commit landed and whose line was lost counts as created, not unchanged,
and the totals are the store's.
"""

from __future__ import annotations

import contextlib
import json
import os
from array import array
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .. import validation as v
from ..errors import ValidationError
from .fhir import (
    Embeddings,
    FhirImportReport,
    Subject,
    map_patient,
    validate_resource,
    write_items,
)
from .fhir_map import MAPPED_TYPES, subject_of

if TYPE_CHECKING:
    from ..engine import MemoryEngine

#: Medications kept parsed at once (read again by offset when evicted).
MEDICATION_CACHE = 2_048


@dataclass
class PatientResult:
    """One patient's import, as the resumable report keeps it."""

    fhir_id: str
    patient_id: str
    resources: int = 0
    created: int = 0
    unchanged: int = 0
    superseded: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # "Type: reason [code]" -> count
    error: str = ""

    def to_json(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False, sort_keys=True)


@dataclass
class BulkImportReport:
    """The import of an export: totals, each patient's result, and what was not imported."""

    files: list[str]
    dry_run: bool
    resources: int = 0  # lines read
    patients: list[PatientResult] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)  # patients already in the report file
    unassigned: Counter[str] = field(default_factory=Counter)  # what is nobody's, by kind

    @property
    def created(self) -> int:
        return sum(p.created for p in self.patients)

    @property
    def failed(self) -> list[PatientResult]:
        return [p for p in self.patients if p.error]

    def skipped_counts(self) -> list[tuple[str, int]]:
        """Skipped resources over all patients, by kind, reason and code, most first."""
        c: Counter[str] = Counter()
        for p in self.patients:
            c.update(p.skipped)
        c.update(self.unassigned)
        return c.most_common()

    def summary(self) -> str:
        verb = "would create" if self.dry_run else "created"
        sup = sum(p.superseded for p in self.patients)
        unchanged = sum(p.unchanged for p in self.patients)
        skipped = sum(n for _k, n in self.skipped_counts())
        return (
            f"{len(self.patients)} patients ({len(self.resumed)} resumed, {len(self.failed)} "
            f"refused), {self.resources:,} resources: {verb} {self.created:,}, unchanged "
            f"{unchanged:,}, skipped {skipped:,}, superseded {sup:,}"
            + (" (dry run: nothing written)" if self.dry_run else "")
        )


def ndjson_files(paths: Iterable[str | Path]) -> list[Path]:
    """The NDJSON files named: files as given, directories for their ``*.ndjson``."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out += sorted(path.glob("*.ndjson"))
        elif path.is_file():
            out.append(path)
        else:
            raise ValidationError("files", f"{path} does not exist")
    if not out:
        raise ValidationError("files", "no NDJSON files given")
    return out


def is_ndjson(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() or p.suffix.lower() in (".ndjson", ".jsonl")


class _Index:
    """Where each patient's resources are: parallel compact arrays of (subject, file,
    offset), plus the Medications by id and the Patients in the order first seen."""

    def __init__(self) -> None:
        self.subject_ids: dict[str, int] = {}
        self.subjects: list[str] = []
        self.subject = array("i")
        self.file = array("h")
        self.offset = array("q")
        self.patients: dict[str, tuple[int, int]] = {}  # Patient id -> (file, offset)
        self.medications: dict[str, tuple[int, int]] = {}
        self.unassigned: Counter[str] = Counter()
        self.other_kinds: dict[str, Counter[str]] = {}  # subject -> kind -> count
        self.lines = 0

    def add(self, subject: str, file: int, offset: int) -> None:
        sid = self.subject_ids.get(subject)
        if sid is None:
            sid = self.subject_ids[subject] = len(self.subjects)
            self.subjects.append(subject)
        self.subject.append(sid)
        self.file.append(file)
        self.offset.append(offset)

    def by_subject(self) -> dict[int, list[int]]:
        """Positions in the arrays per subject, in file order."""
        out: dict[int, list[int]] = {}
        for pos, sid in enumerate(self.subject):
            out.setdefault(sid, []).append(pos)
        return out


def _patient_key(ref: str | None) -> str | None:
    """``Patient/<id>`` of a subject reference (relative, absolute or ``urn:uuid:``)."""
    if not ref:
        return None
    tail = ref.rstrip("/").split("/")
    if len(tail) >= 2 and tail[-2] == "Patient":
        return tail[-1]
    if ref.startswith("urn:uuid:"):
        return ref[len("urn:uuid:") :]
    return None


def _lines(fh: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    offset = 0
    for raw in fh:
        yield offset, raw
        offset += len(raw)


def _parse(raw: bytes, where: str) -> dict[str, Any]:
    try:
        res = json.loads(raw)
    except ValueError as exc:
        raise ValidationError(where, f"is not a JSON resource ({exc})") from exc
    if not isinstance(res, dict) or not isinstance(res.get("resourceType"), str):
        raise ValidationError(where, "is not a FHIR resource (no resourceType)")
    return res


def build_index(files: Sequence[Path]) -> _Index:
    """The first pass: every line parsed once, only positions and subjects kept."""
    idx = _Index()
    for fi, path in enumerate(files):
        with path.open("rb") as fh:
            for offset, raw in _lines(fh):
                if not raw.strip():
                    continue
                idx.lines += 1
                res = _parse(raw, f"{path.name}:{offset}")
                rtype = res["resourceType"]
                if rtype == "Patient":
                    if isinstance(res.get("id"), str):
                        idx.patients.setdefault(res["id"], (fi, offset))
                    continue
                if rtype == "Medication":
                    if isinstance(res.get("id"), str):
                        idx.medications[res["id"]] = (fi, offset)
                    continue
                who = _patient_key(subject_of(res))
                if rtype in MAPPED_TYPES:
                    if who is None:
                        idx.unassigned[f"{rtype}: names no patient as its subject"] += 1
                    else:
                        idx.add(who, fi, offset)
                elif who is not None:
                    idx.other_kinds.setdefault(who, Counter())[rtype] += 1
                else:
                    idx.unassigned[f"{rtype}: {rtype} is not imported as a memory"] += 1
    return idx


class _Reader:
    """Reads lines back by (file, offset); keeps the files open for one import."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.files = files
        self._fhs = [p.open("rb") for p in files]

    def read(self, fi: int, offset: int) -> dict[str, Any]:
        fh = self._fhs[fi]
        fh.seek(offset)
        return _parse(fh.readline(), f"{self.files[fi].name}:{offset}")

    def close(self) -> None:
        for fh in self._fhs:
            fh.close()


@dataclass
class _Resume:
    """What a report file of the same export already says: the patients done (their last whole
    line, refused ones left out: they run again) and when its import started (None: a new
    file, or a dry run's)."""

    done: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: datetime | None = None


def _resume(report_path: Path | None, header: dict[str, Any]) -> _Resume:
    """The report file of the same export, read for resuming and written again whole (through a
    temporary file and a rename): its header and one line per patient done. A line cut short
    by an interruption, a refused patient's line (it runs again) and older duplicate lines are
    dropped, so what this run appends never lands on a cut line or repeats a patient."""
    if report_path is None or not report_path.exists():
        return _Resume()
    lines = report_path.read_text(encoding="utf-8", errors="replace").splitlines()
    try:
        first = json.loads(lines[0]) if lines else None
    except ValueError as exc:
        raise ValidationError("report", f"{report_path} is not an import report") from exc
    if not isinstance(first, dict) or first.get("export") != header["export"]:
        raise ValidationError(
            "report", f"{report_path} is the report of another export; use a new file"
        )
    if first.get("dry_run") != header["dry_run"]:
        run = "dry run" if first.get("dry_run") else "written import"
        raise ValidationError("report", f"{report_path} is a {run}'s report; use a new file")
    done: dict[str, dict[str, Any]] = {}
    for line in lines[1:]:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # cut short by an interruption: that patient runs again
        if isinstance(row, dict) and row.get("fhir_id"):  # the last line of a patient counts
            if row.get("error"):
                done.pop(str(row["fhir_id"]), None)
            else:
                done[str(row["fhir_id"])] = row
    started = None
    if isinstance(first.get("started"), str):
        with contextlib.suppress(ValueError):
            started = datetime.fromisoformat(first["started"])
    tmp = report_path.with_name(f".{report_path.name}.tmp")
    tmp.write_text(
        "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in [first])
        + "".join(PatientResult(**_known(r)).to_json() + "\n" for r in done.values()),
        encoding="utf-8",
    )
    os.replace(tmp, report_path)
    return _Resume(done, started)


def _from_store(engine: MemoryEngine, result: PatientResult, by: str, started: datetime) -> None:
    """A resumed patient's counts from the store: the memories from FHIR this import (``by``,
    since ``started``) added to it, and the supersessions they made -- a patient whose line
    was lost after its commit finds its memories unchanged, yet this import created them."""
    added = {
        a.entity_id
        for a in engine.audit_log(
            patient_id=result.patient_id, actor=by, action="add", limit=1_000_000
        )
        if a.at >= started and str((a.after or {}).get("source") or "").startswith("fhir:")
    }
    seen = result.created + result.unchanged
    result.created = len(added)
    result.unchanged = max(seen - len(added), 0)
    result.superseded = sum(
        1 for s in engine.supersessions(patient_id=result.patient_id) if s.new_id in added
    )


def import_fhir_bulk(
    engine: MemoryEngine,
    paths: Iterable[str | Path],
    *,
    by: str,
    dry_run: bool = True,
    now: datetime | None = None,
    report_path: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BulkImportReport:
    """Import the NDJSON files of a FHIR Bulk Data export (see the module docstring)."""
    by = v.actor(by)
    at = v.now_value(now) if now is not None else engine.clock()
    files = ndjson_files(paths)
    header = {
        "export": [[p.name, p.stat().st_size, int(p.stat().st_mtime)] for p in files],
        "dry_run": dry_run,
    }
    rpath = Path(report_path) if report_path is not None else None
    resume = _resume(rpath, header)
    done = resume.done
    if not dry_run:  # when this import started (kept by a resumed report)
        header["started"] = (resume.started or at).isoformat()
    idx = build_index(files)
    report = BulkImportReport([str(p) for p in files], dry_run, resources=idx.lines)
    report.unassigned = idx.unassigned
    for sid, pos in idx.by_subject().items():
        if idx.subjects[sid] not in idx.patients:
            report.unassigned["about a subject with no Patient in the export"] += len(pos)
    reader = _Reader(files)
    meds: OrderedDict[str, Mapping[str, Any] | None] = OrderedDict()

    def resolve(ref: str | None) -> Mapping[str, Any] | None:
        if not ref:
            return None
        mid = ref.rstrip("/").split("/")[-1]
        if mid in meds:
            meds.move_to_end(mid)
            return meds[mid]
        where = idx.medications.get(mid)
        res = reader.read(*where) if where else None
        meds[mid] = res
        if len(meds) > MEDICATION_CACHE:
            meds.popitem(last=False)
        return res

    embeddings = Embeddings.of_engine(engine)
    positions = idx.by_subject()
    order = list(idx.patients)
    out: IO[str] | None = None
    try:
        if rpath is not None:
            fresh = not rpath.exists()
            out = rpath.open("a", encoding="utf-8")
            if fresh:
                out.write(json.dumps(header) + "\n")
                out.flush()
        for n, fhir_id in enumerate(order, start=1):
            if fhir_id in done:
                report.resumed.append(fhir_id)
                report.patients.append(PatientResult(**_known(done[fhir_id])))
            else:
                sid = idx.subject_ids.get(fhir_id, -1)
                where = [(idx.file[p], idx.offset[p]) for p in positions.get(sid, [])]
                result = _one_patient(
                    engine, fhir_id, idx.patients[fhir_id], where, reader, resolve,
                    embeddings, idx.other_kinds.get(fhir_id, Counter()), by, at, dry_run,
                )  # fmt: skip
                if resume.started is not None and not result.error:
                    _from_store(engine, result, by, resume.started)
                report.patients.append(result)
                if out is not None:  # after the patient's commit: a crash between the two
                    out.write(result.to_json() + "\n")  # re-runs it, to find it unchanged
                    out.flush()
            if progress is not None:
                progress(n, len(order))
    finally:
        reader.close()
        if out is not None:
            out.close()
    return report


def _known(row: Mapping[str, Any]) -> dict[str, Any]:
    keys = PatientResult.__dataclass_fields__
    return {k: row[k] for k in keys if k in row}


def _one_patient(
    engine: MemoryEngine,
    fhir_id: str,
    patient_at: tuple[int, int],
    where: list[tuple[int, int]],
    reader: _Reader,
    resolve: Callable[[str | None], Mapping[str, Any] | None],
    embeddings: Embeddings,
    other_kinds: Counter[str],
    by: str,
    at: datetime,
    dry_run: bool,
) -> PatientResult:
    result = PatientResult(fhir_id, fhir_id, resources=len(where) + 1 + sum(other_kinds.values()))
    try:
        pid = v.patient_id(fhir_id, f"Patient/{fhir_id}.id")
        resources: list[tuple[str, Mapping[str, Any]]] = []
        for fi, offset in sorted(where):
            res = reader.read(fi, offset)
            name = f"{reader.files[fi].name}:{offset}"
            validate_resource(res, f"{name} {res['resourceType']}/{res.get('id', '?')}")
            resources.append((name, res))
        patient = reader.read(*patient_at)
        validate_resource(patient, f"Patient/{fhir_id}")
        report = FhirImportReport(pid, dry_run, "bulk", resources=result.resources)
        subject = Subject({f"Patient/{fhir_id}", f"urn:uuid:{fhir_id}"}, fhir_id, True)
        items = map_patient(resources, subject, resolve, report)
        del resources
        write_items(
            engine, pid, items, report, by=by, at=at, dry_run=dry_run, embeddings=embeddings
        )
    except ValidationError as exc:
        result.error = str(exc)
        return result
    result.created = len(report.created)
    result.unchanged = len(report.unchanged)
    result.superseded = len(report.superseded)
    skipped: Counter[str] = Counter(
        {f"{t}: {r}" + (f" [{c}]" if c else ""): n for t, r, c, n in report.skipped_counts()}
    )
    skipped.update({f"{k}: {k} is not imported as a memory": n for k, n in other_kinds.items()})
    result.skipped = dict(skipped.most_common())
    return result
