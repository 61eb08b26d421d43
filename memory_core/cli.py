"""``python -m memory_core``: seed, inspect and maintain a store from the shell."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from . import open_engine
from .engine import MemoryEngine
from .engine.ingest import RECORD_FIELDS, unknown_field
from .errors import MemoryCoreError, NotFoundError, StoreNotFoundError, ValidationError
from .ingest.fhir import FhirImportReport, FhirSupersession
from .labels import evidence_words, rule_words, status_word, type_label
from .validation import memory_type, now_value, positive_int, record_id
from .values import Memory, MemoryType


class ProgressBar:
    """A plain-text progress bar on stderr (a line per update when stderr is not a TTY)."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self._last = -1.0

    def __call__(self, done: int, total: int) -> None:
        frac = done / total if total else 1.0
        tty = self.stream.isatty()
        if not tty and frac < 1.0 and frac - self._last < 0.25:
            return
        self._last = frac
        bar = "#" * int(frac * 30)
        rate = done / max(time.monotonic() - self.started, 1e-9)
        line = f"{self.label} [{bar:<30}] {done}/{total} ({rate:,.0f}/s)"
        self.stream.write(("\r" if tty else "") + line + ("" if tty and frac < 1 else "\n"))
        self.stream.flush()


def _shown(text: str) -> str:
    """Stored text for the terminal: control, format (bidi) and separator characters as escapes
    (``\\x1b``, ``\\u202e``), so no stored statement can drive the terminal it is listed on."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _engine(args: argparse.Namespace, *, create: bool = True) -> MemoryEngine:
    """The engine on the store of ``--store``; ``create=False`` for a read: a missing store is
    a StoreNotFoundError and nothing is created."""
    return open_engine(args.store, args.embedder, create=create)


def _previewer(args: argparse.Namespace) -> MemoryEngine:
    """The engine of a command that writes only with --apply: without it, an existing store
    (never created); when there is none yet, an empty one in memory, said on stderr."""
    if args.apply:
        return _engine(args)
    try:
        return _engine(args, create=False)
    except StoreNotFoundError as exc:  # said after the preview (main), not before an error
        args.preview_note = f"{exc}: this was a preview against an empty store (--apply creates it)"
        return open_engine("sqlite:///:memory:", args.embedder)


def _reader(args: argparse.Namespace, patient: str | None = None) -> MemoryEngine:
    """The engine for a read command: an existing store only, and ``patient`` (when named) one
    it holds -- else a NotFoundError (exit code 3), nothing created or written."""
    engine = _engine(args, create=False)
    if patient is not None and patient not in engine.list_patients():
        raise NotFoundError("patient", patient)
    return engine


def _when(value: str | None) -> datetime | None:
    return None if value is None else now_value(value, "--now")


def cmd_seed_demo(args: argparse.Namespace) -> int:
    from .seed import seed_demo

    engine = _engine(args)
    if args.if_empty and engine.store.count_memories() > 0:
        print(f"store {engine.store.url} already has memories; not seeding")
        return 0
    summary = seed_demo(engine, now=_when(args.now), progress=ProgressBar("seeding"))
    print(json.dumps(summary, indent=2))
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    memory_type(args.type, "--type")  # before the store is opened: a bad type creates nothing
    created_at = None if args.created_at is None else now_value(args.created_at, "--created-at")
    engine = _engine(args)
    res = engine.add_memory(
        args.patient,
        args.content,
        args.type,
        importance=args.importance,
        created_at=created_at,
        pinned=args.pinned,
        source="cli",
        by=args.by,
    )
    print(f"added {res.memory.id} (importance {res.memory.importance:g})")
    for s in res.supersessions:
        print(
            f"  supersession {s.id}: {s.old_id} -> {s.new_id} "
            f"sim={s.similarity:.3f} {s.state.value}"
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    now = _when(args.now)  # the options first: a bad one opens nothing
    engine = _reader(args, args.patient)
    view = engine.view(args.patient, now=now)
    # newest first: the date a statement was made (its creation), the latest at the top
    order = sorted(
        range(len(view.memories)), key=lambda i: view.memories[i].created_at, reverse=True
    )
    print(f"{'date':<10} {'status':<11} {'type':<18} {'base':>4} {'now':>5} {'uses':>4}  statement")
    for i in order:
        m = view.memories[i]
        print(  # the words of labels.py, as the dashboard shows them
            f"{m.created_at.date().isoformat():<10} "
            f"{status_word(view.status[i].value):<11} {type_label(m.memory_type):<18} "
            f"{m.importance:>4g} "
            f"{view.current_importance[i]:>5.2f} {int(view.access_count[i]):>4}  "
            f"{_shown(m.content)}"
        )
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    now = _when(args.now)
    engine = _reader(args, args.patient)
    res = engine.build_context(
        args.patient,
        args.query,
        now=now,
        max_memories=args.max_memories,
        max_tokens=args.max_tokens,
        record_access=args.record,
    )
    omitted = res.safety_omitted
    if omitted:  # at the top: a safety fact the agent will not see is the first thing to know;
        # on stderr, so stdout stays the exact section (what a script pipes to an agent)
        k = len(omitted)
        because = "; ".join(dict.fromkeys(_left_out_because(i.rule) for i in omitted))
        print(
            f"WARNING: {k} safety {'memory' if k == 1 else 'memories'} (allergy / adverse "
            f"reaction) left out of the section would NOT reach the agent ({because}):",
            file=sys.stderr,
        )
        for item in omitted:
            print(f"  not injected: {_shown(item.line)}", file=sys.stderr)
        print(file=sys.stderr, flush=True)
    sys.stderr.flush()
    print(res.text or "(no memories for this patient)")
    print(f"\n-- {res.tokens} tokens ({res.encoding}); candidates:", file=sys.stderr)
    for item in res.items:
        s = item.scored
        print(
            f"   sim={s.similarity:.3f} imp={s.current_importance:.2f} score={s.score:.3f} "
            f"{item.rule}: {_shown(s.memory.content[:60])}",
            file=sys.stderr,
        )
    return 0


def _left_out_because(rule: str) -> str:
    """Why a safety memory was left out, from its rule ("not in the section: the token budget
    (80) would be exceeded ...; safety-critical ..."): raise the budget or the places."""
    if "token budget" in rule:
        return "the token budget is too small: raise --max-tokens"
    if "limit" in rule or "places" in rule:
        return "the places are taken: raise --max-memories"
    return rule.removeprefix("not in the section: ").split(";")[0]


def cmd_scan(args: argparse.Namespace) -> int:
    engine = _reader(args, args.patient)
    found = engine.scan_contradictions(args.patient, by=args.by, progress=ProgressBar("scanning"))
    for s in found:
        print(f"{s.patient_id} {s.state.value:<8} sim={s.similarity:.3f} {s.old_id} -> {s.new_id}")
    print(f"{len(found)} new supersession(s)")
    return 0


def cmd_cleanup(args: argparse.Namespace) -> int:
    engine = _reader(args, args.patient)
    res = engine.cleanup(
        threshold=args.threshold, dry_run=not args.apply, patient_id=args.patient, by=args.by
    )
    verb = "would archive" if res.dry_run else "archived"
    for m in res.archived:
        print(
            f"{verb} {m.id} ({m.patient_id}, strength {res.strengths[m.id]:.3f}): "
            f"{_shown(m.content)}"
        )
    print(f"{len(res.archived)} memories {verb} (threshold {res.threshold})")
    if res.skipped:
        print(
            f"skipped {len(res.skipped)} patient(s) whose memories another writer kept changing "
            f"(left as they were; run cleanup again for them): {', '.join(res.skipped)}"
        )
    if res.dry_run and res.archived:
        print("dry run: nothing changed; add --apply to archive them")
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    engine = _reader(args, args.patient)
    gone = engine.purge(
        older_than_days=args.older_than_days,
        dry_run=not args.apply,
        patient_id=args.patient,
        by=args.by,
    )
    verb = "would delete" if not args.apply else "deleted"
    for m in gone:
        print(
            f"{verb} {m.id} ({m.patient_id}, archived {m.archived_at:%Y-%m-%d}): "
            f"{_shown(m.content)}"
        )
    print(f"{len(gone)} archived memories {verb} (archived more than {args.older_than_days} days)")
    if not args.apply and gone:
        print("dry run: nothing deleted; add --apply to delete them (each is audited)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """JSON Lines to stdout, or to ``--out``: written to a temporary file beside it and renamed
    when complete; an existing path only with ``--force``; never the store's own files nor
    any SQLite database."""
    engine = _reader(args, args.patient)
    if not args.out:
        n = _export(engine, sys.stdout, args.patient, args.embeddings)
    else:
        target = _export_target(engine, args.out, args.force)
        n = _write_replacing(
            target, args.force, lambda out: _export(engine, out, args.patient, args.embeddings)
        )
    print(f"exported {n} memories", file=sys.stderr)
    return 0


#: files SQLite keeps beside a database
_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def _export_target(engine: MemoryEngine, out: str, force: bool) -> Path:
    """``out`` checked: not the store's own file (by any name) or its side files, not an
    SQLite database, and not an existing file unless ``force``."""
    target = Path(out)
    store_path = getattr(engine.store, "path", None)
    if store_path and store_path != ":memory:":
        own = [Path(f"{store_path}{side}") for side in _SIDE_FILES]
        resolved = target.resolve()
        if any(resolved == p.resolve() for p in own) or any(
            target.exists() and p.exists() and os.path.samefile(target, p) for p in own
        ):
            raise ValidationError(
                "--out",
                f"{out} is the store's own file ({engine.store.url}); an export never "
                "replaces the store it reads",
            )
    if target.is_dir():
        raise ValidationError("--out", f"{out} is a directory; name a file")
    if target.exists():
        with open(target, "rb") as fh:
            if fh.read(16) == b"SQLite format 3\x00":
                raise ValidationError(
                    "--out",
                    f"{out} is an SQLite database (a store?); an export never replaces a "
                    "database -- name another file",
                )
        if not force:
            raise ValidationError(
                "--out", f"{out} exists; add --force to replace it, or name another file"
            )
    return target


def _write_replacing(target: Path, replace: bool, write: Callable[[TextIO], int]) -> int:
    """``write`` into a temporary file in ``target``'s folder, flushed to disk, then renamed to
    ``target`` (over it only when ``replace``; otherwise a file that appeared meanwhile is
    kept). A failure part-way leaves ``target`` as it was and no temporary file behind."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            n = write(out)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)  # never over a file that appeared since the check
            except FileExistsError as exc:
                raise ValidationError(
                    "--out", f"{target} exists; add --force to replace it, or name another file"
                ) from exc
            os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return n


def _export(engine: MemoryEngine, out: TextIO, patient: str | None, embeddings: bool) -> int:
    n = 0
    patients = [patient] if patient else engine.list_patients()
    for pid in patients:
        times = engine.access_times(pid)
        for m in engine.list_memories(pid):
            out.write(_export_row(m, times.get(m.id, []), embeddings))
            n += 1
    return n


def _export_row(m: Memory, times: list[datetime], embeddings: bool) -> str:
    """One memory as an export line (its state, and its access times)."""
    row: dict[str, Any] = m.to_public_dict(include_embedding=embeddings)
    row["access_times"] = [t.isoformat() for t in times]
    return json.dumps(row, ensure_ascii=False) + "\n"


#: the fields an import line may set: the engine's record fields (an export's latest
#: confirmation comes back as ``confirmed_at``; the full list, "confirmations", is export-only)
IMPORT_FIELDS = RECORD_FIELDS


#: what an export line holds beyond the imported fields (the stored state: derived again on
#: import, so read and ignored); any other key is refused, naming it
EXPORT_ONLY = frozenset(f.name for f in dataclasses.fields(Memory)) - {"embedding"}
_IMPORT_KNOWN = frozenset(IMPORT_FIELDS) | EXPORT_ONLY


def cmd_import(args: argparse.Namespace) -> int:
    """Every line is parsed and validated before anything is written. Then one transaction, or
    with --batch-size one per batch, each reported when committed."""
    if args.batch_size is not None:
        positive_int(args.batch_size, "--batch-size")
    records: list[dict[str, Any]] = []
    for lineno, line in enumerate(_read_utf8_lines(args.file), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MemoryCoreError(f"line {lineno}: not valid JSON ({exc.msg})") from exc
        except RecursionError as exc:
            raise MemoryCoreError(f"line {lineno}: not valid JSON (nested too deeply)") from exc
        except ValueError as exc:  # e.g. an integer beyond Python's 4,300-digit limit
            why = str(exc).split(";")[0]
            raise MemoryCoreError(f"line {lineno}: not valid JSON ({why})") from exc
        if not isinstance(row, dict):
            raise MemoryCoreError(f"line {lineno}: expected a JSON object")
        if not row.keys() <= _IMPORT_KNOWN:
            try:
                unknown_field(row.keys(), _IMPORT_KNOWN)
            except ValidationError as exc:
                raise MemoryCoreError(f"line {lineno}: {exc} -- nothing was imported") from exc
        row["_line"] = lineno
        records.append(row)
    clean = [{k: r.get(k) for k in IMPORT_FIELDS if k in r} for r in records]
    engine = _engine(args)
    batches = 0

    def committed(index: int, first: int, end: int) -> None:
        nonlocal batches
        batches += 1
        lines = f"{records[first]['_line']}-{records[end - 1]['_line']}"
        print(f"committed batch {index + 1}: lines {lines} ({end - first} memories)", flush=True)

    try:
        for i, r in enumerate(clean):
            if r.get("id") is not None:
                record_id(r["id"], f"records[{i}].id")
        results = engine.add_memories(
            clean,
            by=args.by,
            progress=ProgressBar("importing"),
            batch_size=args.batch_size,
            on_batch=committed if args.batch_size else None,
        )
    except MemoryCoreError as exc:
        msg = str(exc)
        if msg.startswith("records["):
            idx = int(msg[len("records[") : msg.index("]")])
            msg = f"line {records[idx]['_line']}: {msg}"
        note = "see the committed batches" if batches else "nothing was imported"
        raise MemoryCoreError(f"{msg} -- {note}") from exc
    sups = sum(len(r.supersessions) for r in results)
    print(f"imported {len(results)} memories ({sups} supersessions)")
    return 0


def _read_utf8_lines(path: str) -> list[str]:
    """The file's lines, decoded as UTF-8 (a UTF-8 byte-order mark is allowed); UTF-16 and
    other encodings are refused, naming the line."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data:
        raise MemoryCoreError(
            f"{path}: looks like UTF-16 (byte-order mark or NUL bytes); save it as UTF-8"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        lineno = data[:start].count(b"\n") + 1
        raise MemoryCoreError(
            f"line {lineno}: not UTF-8 text ({exc.reason} at byte {start}); save the file as UTF-8"
        ) from exc
    return io.StringIO(text, newline=None).readlines()  # the line ends open() would split on


def cmd_patients(args: argparse.Namespace) -> int:
    engine = _reader(args)
    for pid in engine.list_patients():
        mems = engine.list_memories(pid)
        active = sum(m.status.value == "active" for m in mems)
        print(f"{pid}  {len(mems)} memories, {active} active")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from .calibration import PAIRS, SPLITS, load_pairs, measure, report_set
    from .embedding import make_embedder

    embedder = make_embedder(args.embedder)
    cal = measure(embedder)
    for p, s in sorted(zip(PAIRS, cal.similarities, strict=True), key=lambda x: -x[1]):
        print(
            f"{s:.3f} {'supersede' if p.supersede else 'both stay':<9} {p.memory_type:<18} "
            f"{p.older[:40]} | {p.newer[:40]}"
        )
    print(
        f"{cal.model_id}: threshold {cal.threshold} accuracy {cal.accuracy:.3f} "
        f"({len(PAIRS)} pairs, {cal.false_supersessions} false supersessions, "
        f"{cal.missed} missed)"
    )
    for split in SPLITS:  # the labelled clinical pair set, at the embedder's own thresholds
        rep = report_set(embedder, load_pairs(split), split)
        print(
            f"clinical pairs {split}: {rep.pairs} pairs, threshold {rep.threshold}, "
            f"accuracy {rep.accuracy:.3f}, allergy/adverse-reaction false supersessions "
            f"{rep.safety_false_supersessions}"
        )
        for t in rep.per_type:
            print(
                f"  {t.memory_type:<18} {t.pairs:>3} pairs  precision {t.precision:.2f}  "
                f"recall {t.recall:.2f}  ({t.false_pos} false, {t.false_neg} missed)"
            )
    return 0


def _extractor(spec: str) -> Any:
    """``rule`` (offline) or ``openai:<model>`` (the configured OpenAI / Azure endpoint)."""
    from .ingest import LLMExtractor, RuleExtractor

    if spec == "rule":
        return RuleExtractor()
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return LLMExtractor(spec.split(":", 1)[1])
    raise MemoryCoreError(f"--extractor must be 'rule' or 'openai:<model>', got {spec!r}")


def cmd_extract(args: argparse.Namespace) -> int:
    """Proposals from a transcript; written only with --apply."""

    path = Path(args.transcript)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryCoreError(f"{path}: not UTF-8 text") from exc
    engine = _previewer(args)
    proposals = engine.extract_memories(
        args.patient, text, extractor=_extractor(args.extractor), name=path.name
    )
    for i, p in enumerate(proposals, start=1):
        print(
            f"{i:>2}. [{p.memory_type}] {_shown(p.content)} (importance {p.importance:g}, "
            f"confidence {p.confidence:.2f})"
        )
        print(f"    evidence {p.start}-{p.end}: {_shown(p.evidence[:100])}")
        for s in p.supersedes:
            print(
                f"    would supersede ({s.mode}, sim {s.similarity:.2f}): {_shown(s.content[:80])}"
            )
    for r in proposals.rejected:
        print(f"rejected item {r.index}: {r.reason}", file=sys.stderr)
    if not args.apply:
        print(f"{len(proposals)} proposal(s); dry run: nothing written (add --apply to save all)")
        return 0
    results = engine.accept_proposals(args.patient, list(proposals), by=args.by)
    sups = sum(len(r.supersessions) for r in results)
    print(f"saved {len(results)} memories ({sups} supersessions)")
    return 0


#: Lines listed one by one up to this many; beyond, counts by type and kind (--verbose lists all).
LISTED = 200


def cmd_import_fhir(args: argparse.Namespace) -> int:
    """A FHIR R4 Bundle, or the NDJSON files of a Bulk Data export, in; written only with
    --apply."""
    from .ingest.fhir_bulk import is_ndjson

    engine = _previewer(args)
    if any(is_ndjson(p) for p in args.bundle):
        return _import_bulk(engine, args)
    if len(args.bundle) != 1:
        raise MemoryCoreError("import-fhir takes one Bundle, or NDJSON files / a folder of them")
    report = engine.import_fhir(
        args.bundle[0],
        patient_id=args.patient,
        fhir_patient=args.fhir_patient,
        by=args.by,
        dry_run=not args.apply,
    )
    verb = "would create" if report.dry_run else "created"
    every = args.verbose or len(report.created) + len(report.skipped) <= LISTED
    if every:
        for it in report.created:
            note = f" -- {it.reason}" if it.reason else ""
            print(f"{verb} [{it.memory_type}] {_shown(it.content or '')} ({it.source}){note}")
        for it in report.unchanged:
            print(f"unchanged {it.source}")
        for it in report.skipped:
            print(f"skipped {it.source}: {_shown(it.reason)}")
    else:
        for mtype, n in report.created_counts():
            print(f"{verb} {n:>6} [{mtype}]")
        print(f"unchanged {len(report.unchanged):>6}")
        for rtype, reason, code, n in report.skipped_counts():
            print(f"skipped {n:>6} {rtype}{f' {code}' if code else ''}: {_shown(reason)}")
    for s in report.superseded if every else report.superseded[:20]:
        print(_supersession_sentence(s, report))
    if not every and len(report.superseded) > 20:
        print(f"... and {len(report.superseded) - 20} more supersessions (--verbose lists all)")
    print(report.summary())
    if report.dry_run and report.created:
        print("add --apply to write them")
    return 0


def _supersession_sentence(s: FhirSupersession, report: FhirImportReport) -> str:
    """One supersession of a FHIR import in a full sentence: what replaces what (the imported
    statement or the stored one: an import older than what the store says is the one replaced),
    at once or after review, by which rule and why."""
    source = {it.memory_id: it.source for it in report.created if it.memory_id}
    would = "would replace" if report.dry_run else "replaces"

    def side(mid: str, text: str) -> str:
        where = f" ({source[mid]})" if mid in source else ""
        return f'the {"imported" if mid in source else "stored"} statement "{_shown(text)}"{where}'

    how = (
        "at once (the older one is kept, at the lowest importance, and can be undone)"
        if s.state == "auto"
        else "once a reviewer confirms it (it waits in the review queue)"
    )
    rule = f"by the rule '{rule_words(s.rule)}'" if s.rule else "by similarity"
    why = evidence_words(s.evidence) if s.evidence else "the two statements are alike"
    new = side(s.new_id, s.new_content)
    return (
        f"{new[0].upper()}{new[1:]} {would} {side(s.old_id, s.old_content)} {how}, {rule}, "
        f"because {why} (similarity {s.similarity:.2f})."
    )


def _import_bulk(engine: MemoryEngine, args: argparse.Namespace) -> int:
    if args.patient or args.fhir_patient:
        raise MemoryCoreError(
            "--patient and --fhir-patient name one patient of a Bundle; an export imports each "
            "of its patients under its own id"
        )
    report = engine.import_fhir_bulk(
        args.bundle,
        by=args.by,
        dry_run=not args.apply,
        report_path=args.report,
        progress=ProgressBar("patients"),
    )
    for p in report.failed:
        print(f"refused Patient/{p.fhir_id}: {p.error}")
    for kind, n in report.skipped_counts()[:30]:
        print(f"skipped {n:>7} {kind}")
    print(report.summary())
    if args.report:
        print(f"report: {args.report} (run again with it to resume)")
    if report.dry_run and report.created:
        print("add --apply to write them")
    return 2 if report.failed else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m memory_core", description=__doc__)
    p.add_argument(
        "--store",
        default=None,
        help="store URL (default: MEMORY_CORE_STORE, else Cosmos DB from COSMOS_ENDPOINT, "
        "else the SQLite file data/memory.db)",
    )
    p.add_argument(
        "--embedder",
        default=os.environ.get("MEMORY_CORE_EMBEDDER", "minilm"),
        help="minilm | hashing | openai:<model> (default: MEMORY_CORE_EMBEDDER, else minilm)",
    )
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("seed-demo", help="load the Northwind Health synthetic patients")
    s.add_argument("--if-empty", action="store_true", help="only when the store has no memories")
    s.add_argument("--now", help="pretend it is this moment (ISO-8601 with offset)")
    s.set_defaults(func=cmd_seed_demo)

    s = sub.add_parser("add", help="add one memory")
    s.add_argument("patient")
    s.add_argument("content")
    s.add_argument(
        "--type",
        required=True,
        help=f"the memory type, one of: {', '.join(MemoryType)}",
    )
    s.add_argument("--importance", type=float)
    s.add_argument("--created-at")
    s.add_argument("--pinned", action=argparse.BooleanOptionalAction, default=None)
    s.add_argument("--by", default="cli")
    s.set_defaults(func=cmd_add)

    s = sub.add_parser("show", help="a patient's memories with current importance")
    s.add_argument("patient")
    s.add_argument("--now")
    s.set_defaults(func=cmd_show)

    s = sub.add_parser("context", help="the injected context for a query (a preview by default)")
    s.add_argument("patient")
    s.add_argument("query")
    s.add_argument("--now")
    s.add_argument("--max-memories", type=int, default=5)
    s.add_argument("--max-tokens", type=int)
    s.add_argument("--record", action="store_true", help="count it as an agent retrieval")
    s.set_defaults(func=cmd_context)

    s = sub.add_parser("scan-contradictions", help="back-scan same-type pairs")
    s.add_argument("--patient")
    s.add_argument("--by", default="cli")
    s.set_defaults(func=cmd_scan)

    s = sub.add_parser("cleanup", help="archive weak memories (dry run unless --apply)")
    s.add_argument("--apply", action="store_true")
    s.add_argument("--threshold", type=float)
    s.add_argument("--patient")
    s.add_argument("--by", default="cli")
    s.set_defaults(func=cmd_cleanup)

    s = sub.add_parser("purge", help="delete long-archived memories (dry run unless --apply)")
    s.add_argument("--older-than-days", type=float, required=True, help="retention age")
    s.add_argument("--apply", action="store_true")
    s.add_argument("--patient")
    s.add_argument("--by", default="cli")
    s.set_defaults(func=cmd_purge)

    s = sub.add_parser("export", help="memories as JSON Lines")
    s.add_argument(
        "--out",
        help="a file (written whole, then renamed into place; never the store's own files or "
        "an SQLite database)",
    )
    s.add_argument("--force", action="store_true", help="replace an existing --out file")
    s.add_argument("--patient")
    s.add_argument("--embeddings", action="store_true", help="include the vectors")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("import", help="JSON Lines in: validated whole, then written")
    s.add_argument("file")
    s.add_argument(
        "--batch-size", type=int, help="commit every N memories (default: one transaction)"
    )
    s.add_argument("--by", default="cli")
    s.set_defaults(func=cmd_import)

    s = sub.add_parser("patients", help="list patients")
    s.set_defaults(func=cmd_patients)

    s = sub.add_parser("calibrate", help="measure the embedder's contradiction threshold")
    s.set_defaults(func=cmd_calibrate)

    s = sub.add_parser("extract", help="propose memories from a session transcript (dry run)")
    s.add_argument("patient")
    s.add_argument("transcript", help="a UTF-8 text file")
    s.add_argument("--extractor", default="rule", help="rule | openai:<model>")
    s.add_argument("--apply", action="store_true", help="save every proposal")
    s.add_argument("--by", default="cli")
    s.set_defaults(func=cmd_extract)

    s = sub.add_parser(
        "import-fhir",
        help="memories from a FHIR R4 Bundle, or a Bulk Data export's NDJSON files (dry run)",
    )
    s.add_argument(
        "bundle",
        nargs="+",
        help="a Bundle as JSON; or NDJSON files of a $export, or a folder of them",
    )
    s.add_argument("--patient", help="the product's patient id (default: the bundle's Patient)")
    s.add_argument(
        "--fhir-patient",
        help="the Patient of the bundle to import when it holds several (others are skipped)",
    )
    s.add_argument("--apply", action="store_true", help="write them")
    s.add_argument(
        "--report", help="an export's report file (JSON lines): written as it goes, resumed"
    )
    s.add_argument("--verbose", action="store_true", help="list every resource")
    s.add_argument("--by", default="cli")
    s.set_defaults(func=cmd_import_fhir)

    s = sub.add_parser(
        "mcp",
        help="an MCP server for one agent, over stdio (or Streamable HTTP with --http PORT)",
    )
    _agent_arguments(s)
    s.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on PORT")
    s.set_defaults(func=cmd_mcp)

    s = sub.add_parser("serve", help="the HTTP API for one agent (/v1/patients/{id}/...)")
    _agent_arguments(s)
    s.add_argument("--port", type=int, default=8766)
    s.set_defaults(func=cmd_serve)

    s = sub.add_parser("token", help="make a bearer token granting patients (printed once)")
    s.add_argument("--tokens", required=True, help="the token file (created when missing)")
    s.add_argument("--patient", action="append", required=True, help="a patient it grants")
    s.add_argument("--label", help="a note for the operator (e.g. ward 3 launch)")
    s.set_defaults(func=cmd_token)

    s = sub.add_parser(
        "cosmos-init",
        help="create the Cosmos DB database and container (needs COSMOS_KEY: Entra-ID "
        "data-plane roles cannot create containers)",
    )
    s.set_defaults(func=cmd_cosmos_init)
    return p


def _door(args: argparse.Namespace) -> Any:
    """The agent principal the servers act as, over the store (issue 33)."""
    from .server.door import Door

    return Door(_engine(args), args.agent, args.patient)


def cmd_mcp(args: argparse.Namespace) -> int:
    from .server import grants, mcpserver

    if args.http is None:
        mcpserver.run_stdio(_door(args))  # stdout is the protocol's: nothing else is printed
        return 0
    tokens = grants.resolve(args.tokens)  # before the store is opened: no default token
    door = _door(args)
    where = f"http://{args.host}:{args.http}/mcp"
    print(f"MCP (Streamable HTTP) on {where} as {door.actor}", file=sys.stderr)
    mcpserver.run_http(door, tokens, host=args.host, port=args.http)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .server import grants, httpapi

    tokens = grants.resolve(args.tokens)
    door = _door(args)
    print(f"HTTP API on http://{args.host}:{args.port}/v1 as {door.actor}", file=sys.stderr)
    httpapi.run(door, tokens, host=args.host, port=args.port)
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from .server.grants import add_token

    token = add_token(args.tokens, args.patient, args.label or "")
    print(token)
    print(
        f"added to {args.tokens}: it grants {', '.join(sorted(set(args.patient)))} "
        "(shown once; the file keeps only its SHA-256)",
        file=sys.stderr,
    )
    return 0


def _agent_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--agent", required=True, help="the agent's name (audited as agent:NAME)")
    s.add_argument(
        "--patient",
        action="append",
        help="a patient the agent may reach (repeat; default: every patient its token allows)",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    s.add_argument(
        "--tokens",
        help="the bearer-token file over HTTP (default: MEMORY_CORE_TOKENS; there is no "
        "default token)",
    )


def cmd_cosmos_init(args: argparse.Namespace) -> int:
    from .embedding import make_embedder
    from .store.cosmos import cosmos_init

    embedder = make_embedder(args.embedder)
    print(cosmos_init(args.store, embedder.model_id, embedder.dimensions))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rc: int = args.func(args)
        if getattr(args, "preview_note", None):
            print(args.preview_note, file=sys.stderr)
        return rc
    except NotFoundError as exc:  # an unknown patient, no store at the URL
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except MemoryCoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
