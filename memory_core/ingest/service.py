"""Ingest through the engine's public API only: propose (nothing written), then accept (one
``add_memories`` call: one transaction, audited)."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .. import validation as v
from ..errors import ConflictError, ValidationError
from ..importance import default_importance
from ..values import AddResult
from .dates import (
    TOLD_REACH,
    DateSpan,
    dates_in,
    day,
    day_alone,
    future_session_date,
    session_date,
)
from .dialogue import PATIENT_ID, moment, split
from .fhir import FhirImportReport
from .fhir import import_fhir as _import_fhir
from .fhir_bulk import BulkImportReport
from .fhir_bulk import import_fhir_bulk as _import_fhir_bulk
from .proposals import Candidate, Extraction, Proposal, Proposals, Rejected, Supersedes
from .rules import RuleExtractor

if TYPE_CHECKING:
    from ..engine import MemoryEngine
    from ..values import Supersession

MAX_TRANSCRIPT_CHARS = 100_000
#: Types whose statement must name something the lexicon or the drug dictionary keys (a drug,
#: an allergen, an analyte or vital, a condition): a proposal that names nothing known cannot
#: be compared with what the patient's record holds.
KEYED_TYPES = frozenset(
    {"allergy", "medication", "adverse_reaction", "lab_result", "vital_sign", "condition"}
)


class Extractor(Protocol):
    method: str

    def extract(self, patient_id: str, transcript: str, *, now: datetime) -> Extraction: ...


def transcript_label(transcript: str, name: str | None = None) -> str:
    """How a transcript is named in ``source``: the given name (a file's base name), else
    ``sha256:<first 12 hex digits>`` of its text."""
    if name:
        return re.sub(r"[^A-Za-z0-9_.:-]", "_", Path(name).name)[:80]
    return "sha256:" + hashlib.sha256(transcript.encode("utf-8")).hexdigest()[:12]


def _check(
    engine: MemoryEngine,
    patient_id: str,
    transcript: str,
    c: Candidate,
    now: datetime,
    session: datetime,
    anchors: Sequence[datetime] = (),
) -> tuple[str, str, float, datetime]:
    """The candidate through the record validators and the checks every extractor's items
    pass (the evidence is in the transcript and about this patient, a date is one the evidence
    says -- read against the session's date, or against the send date of the message the
    evidence begins in --, a clinical statement names something known); raises
    ValidationError naming the field."""
    anchors = (session, *anchors)
    if c.patient_id is not None and c.patient_id != patient_id:
        raise ValidationError(
            "patient_id", f"is {c.patient_id!r}; this transcript is for {patient_id!r}"
        )
    content = v.content(c.content)
    others = {m for m in PATIENT_ID.findall(content) if m != patient_id}
    if others:
        raise ValidationError("content", f"names another patient ({', '.join(sorted(others))})")
    mtype = v.memory_type(c.memory_type)
    v.facts(None, content, mtype)  # a result outside physiology ("weight 0 kg") is refused
    imp = v.importance(c.importance)
    if imp is None:
        imp = default_importance(mtype, content, engine.policy.importance_rules)
    if not (0 <= c.start < c.end <= len(transcript)):
        raise ValidationError("evidence", f"span {c.start}-{c.end} is outside the transcript")
    evidence = transcript[c.start : c.end]
    about = {m for m in PATIENT_ID.findall(evidence) if m != patient_id}
    if about:
        raise ValidationError(
            "evidence", f"is about another patient ({', '.join(sorted(about))}), not {patient_id}"
        )
    if isinstance(c.confidence, bool) or not isinstance(c.confidence, int | float):
        raise ValidationError("confidence", f"must be a number from 0 to 1, got {c.confidence!r}")
    if not 0.0 <= float(c.confidence) <= 1.0:
        raise ValidationError("confidence", f"must be between 0 and 1, got {c.confidence!r}")
    created = now if c.created_at is None else v.timestamp(c.created_at, "created_at", now)
    spans = [d for at in dict.fromkeys(anchors) for d in dates_in(evidence, at)]
    said = [d.at for d in spans]
    said += [day(at) for at in anchors[1:]]  # the send date of the message it is said in
    if c.dated_by is not None and 0 <= c.dated_by[0] < c.dated_by[1] <= len(transcript):
        dating = transcript[c.dated_by[0] : c.dated_by[1]]
        said += [d.at for at in dict.fromkeys(anchors) for d in dates_in(dating, at)]
    if (
        c.created_at is not None
        and created not in said
        and not _day_alone(evidence, spans, created, now)
    ):
        raise ValidationError(
            "created_at", f"{created:%Y-%m-%d} is no date the evidence says ({evidence[:80]!r})"
        )
    if mtype in KEYED_TYPES and not _keyed(content, mtype):
        raise ValidationError(
            "content",
            f"names no drug, allergen, analyte or condition the lexicon knows: {content!r}",
        )
    implausible = _outside_physiology(content, mtype)
    if implausible:
        raise ValidationError("content", f"{implausible} -- not proposed")
    return content, mtype, imp, created


def _day_alone(evidence: str, spans: Sequence[DateSpan], created: datetime, now: datetime) -> bool:
    """A day the evidence says alone ("home on the 4th": of ``spans``, the dates read from it),
    dated in the month the conversation had named (:func:`.dates.dates_in`'s ``told``): the day
    is the evidence's, not after the extraction, within the reach of a month named earlier."""
    reach = TOLD_REACH + timedelta(days=31)
    days = {day_alone(evidence, d) for d in spans}
    return created.day in days and now - reach <= created <= now


def _outside_physiology(content: str, mtype: str) -> str:
    """Why a result the statement gives cannot be its analyte's ("body weight was 0 kg"), ""
    when it can (the bounds of ``labs.json``, converted from the unit said)."""
    if mtype not in ("lab_result", "vital_sign", "observation"):
        return ""
    from ..facts.lexicon import lexicon
    from ..facts.model import KeyKind
    from ..facts.reader import read
    from ..facts.units import outside_physiology
    from ..facts.values import parts

    lex = lexicon()
    low = content.lower()
    for f in read(content, mtype).facts:
        if f.kind is not KeyKind.LOINC:
            continue
        analyte = lex.analyte_for_code(f.name)
        if analyte is None:
            continue
        # the value as the statement writes it (the reader drops one outside physiology)
        at = low.find(f.text.lower()) if f.text else -1
        m = _VALUE.search(content, at + len(f.text)) if at >= 0 else None
        value = f"{m.group(1)} {m.group(2) or ''}".strip() if m else ""
        value = value or parts(f.value).get("value", "")
        if not value:
            continue
        number, _, written = value.partition(" ")
        if not written and _bare_possible(lex, analyte, number):
            continue  # "haemoglobin was 98": g/L, written without its unit
        why = outside_physiology(lex, analyte, value)
        if why:
            return f"{analyte.display}: {why}"
    return ""


def _bare_possible(lex: Any, analyte: Any, number: str) -> bool:
    """Whether a number written without a unit is within physiology in any unit the analyte
    is written in."""
    from ..facts.units import plausible, to_canonical, unit_named

    try:
        xs = [float(x) for x in number.split("/")]
    except ValueError:
        return False
    for code in analyte.units or (analyte.unit,):
        unit = unit_named(lex, code)
        if unit is None:
            continue
        cs = [to_canonical(lex, analyte, x, unit) for x in xs]
        if all(c is not None and plausible(analyte, c) for c in cs):
            return True
    return False


#: a number (or a pair), and the unit written after it, as a statement gives a result
_VALUE = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?(?:/\d+)?)\s*([A-Za-z%°µ/][\w/%°µ.\[\]{}]*)?")


def _relative_date(transcript: str, c: Candidate, now: datetime) -> str | None:
    """The first date the candidate's evidence says relative to the session ("yesterday",
    "last week", "in June"), as said; None when it says none."""
    if not (0 <= c.start < c.end <= len(transcript)):
        return None
    evidence = transcript[c.start : c.end]
    return next((evidence[d.start : d.end] for d in dates_in(evidence, now) if d.relative), None)


def _keyed(content: str, mtype: str) -> bool:
    """Whether the statement names a thing of its type's kinds (the facts reader's keys)."""
    from ..facts.model import Role, subject_kinds
    from ..facts.reader import read

    kinds = subject_kinds(mtype)
    return any(f.kind in kinds and f.role is Role.SUBJECT for f in read(content, mtype).facts)


def extract_memories(
    engine: MemoryEngine,
    patient_id: str,
    transcript: str,
    *,
    now: datetime | None = None,
    extractor: Extractor | None = None,
    name: str | None = None,
) -> Proposals:
    """Proposals from a session transcript (the offline :class:`RuleExtractor` by default).
    Writes nothing. Each proposal carries what saving them all would supersede (the save's own
    ``add_memories`` run with ``dry_run``: against the store and each other); items that fail
    the record validators are listed in ``.rejected`` with their reason, the rest kept."""
    pid = v.patient_id(patient_id)
    if not isinstance(transcript, str):
        raise ValidationError("transcript", f"must be a string, got {type(transcript).__name__}")
    if not transcript.strip():
        raise ValidationError("transcript", "is empty")
    if len(transcript) > MAX_TRANSCRIPT_CHARS:
        raise ValidationError(
            "transcript", f"is {len(transcript)} characters; the limit is {MAX_TRANSCRIPT_CHARS}"
        )
    at = v.now_value(now) if now is not None else engine.clock()
    header, sents = split(transcript)
    session = session_date(header, at) or at
    future = future_session_date(header, at)
    ext: Extractor = extractor if extractor is not None else RuleExtractor()
    result = ext.extract(pid, transcript, now=at)
    label = transcript_label(transcript, name)
    out = Proposals(rejected=result.rejected, batch_id=uuid.uuid4().hex)
    checked: list[tuple[Candidate, str, str, float, datetime]] = []
    for i, c in enumerate(result.candidates):
        said = _relative_date(transcript, c, at) if future is not None else None
        if future is not None and said is not None:
            out.rejected.append(
                Rejected(
                    i,
                    f"the transcript is dated {future:%Y-%m-%d}, after today ({at:%Y-%m-%d}): "
                    f"{said!r} cannot be placed in time -- not proposed",
                    c.content[:200],
                )
            )
            continue
        try:
            # the send dates of the messages the evidence is in, and the words that date it
            by = c.dated_by[0] if c.dated_by is not None else -1
            sent = [
                moment(x, session, at)
                for x in sents
                if x.start <= c.start < x.end
                or (c.start < x.start and x.end <= c.end)
                or x.start <= by < x.end
            ]
            content, mtype, imp, created = _check(engine, pid, transcript, c, at, session, sent)
        except ValidationError as exc:
            out.rejected.append(Rejected(i, str(exc), c.content[:200]))
            continue
        checked.append((c, content, mtype, imp, created))
    # what saving them all would supersede: the save's own add_memories, run without writing
    # (against the store and each other), so the table says what Save then does
    dry = (
        engine.add_memories(
            [
                {
                    "patient_id": pid,
                    "content": content,
                    "memory_type": mtype,
                    "importance": imp,
                    "created_at": created,
                }
                for _, content, mtype, imp, created in checked
            ],
            now=at,
            dry_run=True,
        )
        if checked
        else []
    )
    named = {s.old_id for r in dry for s in r.supersessions}
    contents = {r.memory.id: r.memory.content for r in dry}
    contents |= {m.id: m.content for m in engine.store.get_memories(sorted(named - set(contents)))}
    for (c, content, mtype, imp, created), res in zip(checked, dry, strict=True):
        out.append(
            Proposal(
                patient_id=pid,
                content=content,
                memory_type=mtype,
                importance=imp,
                start=c.start,
                end=c.end,
                evidence=transcript[c.start : c.end],
                confidence=float(c.confidence),
                source=f"transcript:{label}@{c.start}-{c.end}",
                created_at=created,
                supersedes=tuple(
                    Supersedes(
                        s.old_id,
                        contents.get(s.old_id, ""),
                        s.similarity,
                        "auto" if s.state.value == "auto" else "review",
                        s.rule,
                        s.evidence,
                    )
                    for s in res.supersessions
                    if s.new_id == res.memory.id
                ),
                extractor=result.method,
                batch_id=out.batch_id,
                number=len(out) + 1,
                whose=c.whose,
                dated_by=(
                    transcript[c.dated_by[0] : c.dated_by[1]]
                    if c.dated_by is not None and c.created_at is not None
                    else ""
                ),
            )
        )
    return out


def proposal_memory_id(batch_id: str, number: int) -> str:
    """The memory id of proposal ``number`` of batch ``batch_id``: the same for every save of
    the batch, so the batch is written once whatever the clicks."""
    return "mem_" + uuid.uuid5(_PROPOSALS, f"{batch_id}:{number}").hex


_PROPOSALS = uuid.UUID("6f1c2a57-0b7e-4f4a-9a57-3f2de6c1b0a1")  # the namespace of those ids


def accept_proposals(
    engine: MemoryEngine,
    patient_id: str,
    proposals: Sequence[Proposal | Mapping[str, Any]],
    *,
    by: str,
    now: datetime | None = None,
) -> list[AddResult]:
    """Write the accepted proposals (as a reviewer may have edited them) through
    ``engine.add_memories``: one call, one transaction, every memory audited, ``source``
    naming the transcript and span. A proposal for another patient is refused (nothing
    written). A proposal of a batch (``batch_id``, ``number``) is saved under the memory id
    derived from both: saving the batch again -- a double click, or a save racing another --
    writes nothing and returns what the first save wrote; one saved already with other
    content is a ConflictError (nothing written)."""
    pid = v.patient_id(patient_id)
    by = v.actor(by)
    records: list[dict[str, Any]] = []
    for i, p in enumerate(proposals):
        get = p.get if isinstance(p, Mapping) else (lambda k, _p=p: getattr(_p, k, None))
        if get("patient_id") != pid:
            raise ValidationError(
                f"proposals[{i}].patient_id",
                f"is {get('patient_id')!r}; accepting for {pid!r} -- nothing was written",
            )
        record = {
            "patient_id": pid,
            "content": get("content"),
            "memory_type": get("memory_type"),
            "importance": get("importance"),
            "created_at": get("created_at"),
            "source": get("source"),
        }
        batch, number = get("batch_id"), get("number")
        if isinstance(batch, str) and batch and isinstance(number, int) and number > 0:
            record["id"] = proposal_memory_id(batch, number)
        records.append(record)
    if not records:
        return []
    saved = _saved(engine, records)
    todo = [r for r in records if r.get("id") not in saved]
    written: dict[str, AddResult] = {}
    if todo:
        try:
            results = engine.add_memories(todo, by=by, now=now)
        except (ConflictError, ValidationError) as exc:
            # another save of the batch won the race: what it wrote is the answer
            saved = _saved(engine, records, exc)
            if any(r.get("id") not in saved for r in records):
                raise
        else:
            written = {r.memory.id: r for r in results}
            if not any("id" in r for r in todo):
                return results
    return [written.get(str(r.get("id"))) or saved[str(r["id"])] for r in records]


def _saved(
    engine: MemoryEngine, records: Sequence[Mapping[str, Any]], cause: Exception | None = None
) -> dict[str, AddResult]:
    """The records already stored under their batch ids, as the save that wrote them returned
    them (each memory and the supersessions it made); a record whose stored memory says
    something else is a ConflictError."""
    ids = [str(r["id"]) for r in records if r.get("id")]
    stored = {m.id: m for m in engine.store.get_memories(ids)} if ids else {}
    if not stored:
        return {}
    for r in records:
        m = stored.get(str(r.get("id")))
        if m is not None and (m.content, m.memory_type) != (r["content"], r["memory_type"]):
            raise ConflictError(
                f"proposal {m.id} was saved already with other content ({m.content[:80]!r}); "
                "propose again to save an edited statement -- nothing was written"
            ) from cause
    pid = next(iter(stored.values())).patient_id
    made: dict[str, list[Supersession]] = {}
    for s in engine.supersessions(patient_id=pid):
        if s.new_id in stored:
            made.setdefault(s.new_id, []).append(s)
    return {
        mid: AddResult(memory=m, supersessions=tuple(made.get(mid, ())))
        for mid, m in stored.items()
    }


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
    """See :func:`memory_core.ingest.fhir.import_fhir`."""
    return _import_fhir(
        engine,
        bundle,
        patient_id=patient_id,
        fhir_patient=fhir_patient,
        by=by,
        dry_run=dry_run,
        now=now,
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
    """See :func:`memory_core.ingest.fhir_bulk.import_fhir_bulk`."""
    return _import_fhir_bulk(
        engine,
        paths,
        by=by,
        dry_run=dry_run,
        now=now,
        report_path=report_path,
        progress=progress,
    )
