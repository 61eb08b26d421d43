"""Ingestion: records validated (every record before anything is written), embedded, checked
for supersession and written in one transaction per batch."""

from __future__ import annotations

import difflib
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .. import validation as v
from ..errors import ConflictError, NotFoundError, StaleSnapshotError, ValidationError
from ..facts import index_keys
from ..importance import default_importance, default_pinned
from ..store.base import ChangeSet, MemoryUpdate
from ..values import AddResult, Confirmation, ConfirmationKind, Memory, Supersession
from .core import Core, Progress, new_id
from .snapshot import PatientPool
from .supersession import detect_batch

F32 = npt.NDArray[np.float32]

_NO_VECTOR: F32 = np.zeros(0, dtype=np.float32)  # a record's embedding until it is embedded
_NO_VECTOR.flags.writeable = False


@dataclass(slots=True)
class Prepared:
    """Validated records as parallel lists (no tuple per record): the memories, their access
    times, their given vectors (None: to be embedded) and the positions of records that named
    their id."""

    memories: list[Memory] = field(default_factory=list)
    accesses: list[Sequence[datetime]] = field(default_factory=list)
    vectors: list[F32 | None] = field(default_factory=list)
    given_ids: list[int] = field(default_factory=list)


def field_of(record: Mapping[str, Any] | Any, key: str) -> Any:
    """A record's field, whether the record is a mapping or an object."""
    if isinstance(record, Mapping):
        return record.get(key)
    return getattr(record, key, None)


@dataclass(frozen=True, slots=True)
class BatchContext:
    """What every record of one batch is validated against (read once per batch)."""

    now: datetime
    dimensions: int
    model_id: str
    importance_rules: Literal["clinical", "general"]


def batch_context(core: Core, now: datetime) -> BatchContext:
    return BatchContext(
        now, core.embedder.dimensions, core.embedder.model_id, core.policy.importance_rules
    )


def prepare(ctx: BatchContext, record: Mapping[str, Any] | Any, index: int, out: Prepared) -> None:
    """One record validated by the validators of :mod:`memory_core.validation`, field by field
    in a fixed order (a bad record names its first bad field, prefixed with the record's place,
    ``records[3].content``), and appended to ``out`` (nothing is appended when it is bad). The
    memory carries the given embedding (else an empty one)."""
    try:  # why: the record's place goes into the field's name only when it is bad
        _prepare(ctx, record, out)
    except ValidationError as exc:
        raise ValidationError(f"records[{index}].{exc.field}", exc.message) from exc


#: the fields a record may name (``add_memory``'s arguments and the import extras)
RECORD_FIELDS = frozenset(
    (
        "patient_id",
        "content",
        "memory_type",
        "importance",
        "created_at",
        "pinned",
        "tier",
        "source",
        "access_times",
        "embedding",
        "embedding_model",
        "id",
        "facts",
        "confirmed_at",
    )
)


def unknown_field(keys: Iterable[Any], known: frozenset[str] = RECORD_FIELDS) -> None:
    """ValidationError naming the first key that is not a record field (with the field it was
    probably meant to be): a misspelled ``importnace`` must not be dropped silently."""
    for key in keys:
        if key in known:
            continue
        if not isinstance(key, str):
            raise ValidationError(str(key), f"is not a field name ({type(key).__name__})")
        near = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.6)
        if not near:  # createdAt -> created_at
            near = [k for k in known if k.replace("_", "") == key.lower().replace("_", "")]
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ValidationError(
            key, f"is not a field of a memory record (fields: {', '.join(sorted(known))}){hint}"
        )


def _prepare(ctx: BatchContext, record: Mapping[str, Any] | Any, out: Prepared) -> None:
    if isinstance(record, Mapping):
        if not record.keys() <= RECORD_FIELDS:
            unknown_field(record.keys())
    elif record is None or isinstance(record, str | bytes | int | float | list | tuple):
        raise ValidationError("record", f"must be a mapping of fields, got {type(record).__name__}")
    get: Callable[[str], Any] = (
        record.get if type(record) is dict else lambda key: field_of(record, key)
    )
    now = ctx.now
    pid = v.patient_id(get("patient_id"))
    text = v.content(get("content"))
    mtype = v.memory_type(get("memory_type"))
    imp = v.importance(get("importance"))
    created_raw = get("created_at")
    created = now if created_raw is None else v.timestamp(created_raw, "created_at", now)
    pinned_raw = get("pinned")
    pinned = default_pinned(mtype) if pinned_raw is None else v.boolean(pinned_raw, "pinned")
    tier = v.tier(get("tier") or "long_term")
    src = v.source(get("source"))
    accesses = v.access_times(get("access_times"), created, now)
    confirmed = v.confirmed_at(get("confirmed_at"), created, now)
    vec_raw = get("embedding")
    vec = None if vec_raw is None else v.embedding(vec_raw, ctx.dimensions)
    model = get("embedding_model")
    if vec is not None and model not in (None, ctx.model_id):
        raise ValidationError(
            "embedding_model",
            f"vectors from {model!r} cannot be mixed with {ctx.model_id!r}",
        )
    mid = get("id")
    if mid is not None:
        mid = v.record_id(mid)
    if imp is None:
        imp = default_importance(mtype, text, ctx.importance_rules)
    facts = v.facts(get("facts"), text, mtype)
    memory = Memory(
        id=mid or new_id("mem"),
        patient_id=pid,
        memory_type=mtype,
        content=text,
        importance=imp,
        created_at=created,
        last_accessed=accesses[-1] if accesses else created,
        embedding=_NO_VECTOR if vec is None else vec,
        embedding_model=ctx.model_id,
        access_count=len(accesses),
        pinned=pinned,
        tier=tier,
        source=src,
        facts=facts,
        # its system of record asserts the fact at this date (a FHIR resource active in a
        # record of that date): its age counts from then (engine.confirmation)
        confirmations=()
        if confirmed is None
        else (Confirmation(confirmed, ConfirmationKind.RECORD, src or "record"),),
    )
    if mid is not None:
        out.given_ids.append(len(out.memories))
    out.memories.append(memory)
    out.accesses.append(accesses)
    out.vectors.append(vec)


def _check_ids(core: Core, prepared: Prepared) -> None:
    """No id twice in the batch, and no given id already stored or purged (purged ids are
    tombstoned: never reused)."""
    ids = [m.id for m in prepared.memories]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for i, mid in enumerate(ids):
            if mid in seen:
                raise ValidationError(f"records[{i}].id", f"duplicate id {mid!r} in the batch")
            seen.add(mid)
    given = prepared.given_ids
    for k in range(0, len(given), 500):
        chunk = given[k : k + 500]
        found = {m.id for m in core.store.get_memories([ids[i] for i in chunk])}
        purged = core.store.purged_ids([ids[i] for i in chunk])
        for i in chunk:
            if ids[i] in found:
                raise ValidationError(f"records[{i}].id", f"memory id {ids[i]!r} exists")
            if ids[i] in purged:
                raise ValidationError(
                    f"records[{i}].id",
                    f"memory id {ids[i]!r} belonged to a purged memory; purged ids are never "
                    "reused",
                )


def add_memories(
    core: Core,
    records: Iterable[Mapping[str, Any] | Any],
    by: str,
    now: datetime | None,
    progress: Progress | None = None,
    detect: bool = True,
    batch_size: int | None = None,
    on_batch: Callable[[int, int, int], None] | None = None,
    dry_run: bool = False,
) -> list[AddResult]:
    """``dry_run``: everything up to the write (validation, embedding, detection against the
    store and within the batch) and the results it would give, but nothing is written -- a
    preview by the same code path as the write."""
    by = v.actor(by)
    given = now is not None
    now = core.action_time(now)
    if isinstance(records, str | bytes | Mapping) or not isinstance(records, Iterable):
        raise ValidationError(
            "records", f"must be a list of records (mappings), got {type(records).__name__}"
        )
    items = list(records)
    if batch_size is not None:
        batch_size = v.positive_int(batch_size, "batch_size")
    if dry_run:
        # what the write would do, decided by the same code: one batch (later batches of a
        # write compare against the earlier ones, as the one pool here does), nothing applied
        batch_size, on_batch = None, None
    prepared = Prepared()
    ctx = batch_context(core, now)
    for i, r in enumerate(items):
        prepare(ctx, r, i, prepared)
    _check_ids(core, prepared)
    total = len(prepared.memories)
    step = batch_size or max(total, 1)
    need_total = sum(vec is None for vec in prepared.vectors)
    embedded_so_far = 0
    results: list[AddResult] = []
    for b, first in enumerate(range(0, total, step)):
        end = min(first + step, total)
        memories: list[Memory] = []
        for k in range(first, end, 256):
            group = prepared.memories[k : min(k + 256, end)]
            vectors = prepared.vectors[k : min(k + 256, end)]
            todo = [m.content for m, vec in zip(group, vectors, strict=True) if vec is None]
            if todo:
                rows = iter(core.embedder.embed_batch(todo))
                memories += [
                    m if vec is not None else replace(m, embedding=next(rows))
                    for m, vec in zip(group, vectors, strict=True)
                ]
            else:
                memories += group
            embedded_so_far += len(todo)
            if progress is not None and todo:
                progress(embedded_so_far, need_total)
        memories = _model_read(core, memories)
        results += write_batch(
            core, memories, prepared.accesses[first:end], by, now, detect, dry_run, given
        )
        if on_batch is not None:
            on_batch(b, first, end)
    return results


def _model_read(core: Core, memories: list[Memory]) -> list[Memory]:
    """With a chat model configured (``adjudicator.reader``), the statements the offline
    reader could not key are read by the model (its answer checked against the lexicon and the
    text; an unusable answer leaves the offline facts). Coded records keep their codes."""
    reader = getattr(core.adjudicator, "reader", None)
    if reader is None:
        return memories
    out = []
    for m in memories:
        facts = m.facts
        if facts is not None and not facts.coded and not index_keys(facts, m.memory_type):
            read = reader.read(m.content, m.memory_type)
            if read is not None:
                m = replace(m, facts=read)
        out.append(m)
    return out


#: how long a batch keeps trying when its patients' memories move under it (another process's
#: write between detection and commit): each attempt reads the patients again and detects again.
#: A time budget, not a count: under several writers on one patient each attempt is a race
#: another writer may win, and a fixed count of 8 lost 4.2 % of adds to 4 writers (issue 25)
WRITE_BUDGET_S = 60.0
#: ... but at least this many attempts, however slow each one is
WRITE_ATTEMPTS = 8
#: Races lost before a batch detects and writes holding the store's write lock
#: (:meth:`MemoryStore.write_lock`): a writer whose snapshot must be read afresh each time
#: (another process wrote) lost every race to one whose snapshot stayed current -- three of
#: four writers starved for the whole 60 s of make bench's liveness run, 58 attempts each.
LOCK_AFTER = 3


def backoff(attempt: int) -> float:
    """Seconds to wait before attempt ``attempt + 1``: "full jitter" (uniform from 0 to a
    ceiling doubling from 5 ms, capped at 100 ms), so writers that collided spread out instead
    of colliding again, and a writer that lost many times does not wait ever longer."""
    return random.uniform(0.0, min(0.1, 0.005 * 2**attempt))


def write_batch(
    core: Core,
    memories: list[Memory],
    accesses: Sequence[Sequence[datetime]],
    by: str,
    now: datetime,
    detect: bool,
    dry_run: bool = False,
    given: bool = True,
) -> list[AddResult]:
    """Detect supersessions for embedded new memories and write them in one transaction. The
    change set carries the content version of each patient it compared against: when another
    writer moved it meanwhile the store refuses (StaleSnapshotError) and the batch is detected
    again against the fresh state, until it lands or :data:`WRITE_BUDGET_S` is spent (then the
    StaleSnapshotError is raised; nothing was written); after :data:`LOCK_AFTER` lost races it
    holds the store's write lock while it detects and writes. ``given``: the caller chose ``now``;
    otherwise each attempt detects at the clock's moment then (a detection dated when the first
    attempt began would be before the other writers' writes it lost to, which the store
    refuses: 1 of 1,630 adds under 4 writers)."""
    start = time.monotonic()
    attempt = 0
    while True:
        try:
            if attempt < LOCK_AFTER or dry_run:
                return _write_once(core, memories, accesses, by, now, detect, dry_run, given)
            return _write_locked(core, memories, accesses, by, now, detect, given)
        except StaleSnapshotError:
            attempt += 1
            if attempt >= WRITE_ATTEMPTS and time.monotonic() - start >= WRITE_BUDGET_S:
                raise
            time.sleep(backoff(attempt))
            if not given:
                now = max(now, core.action_time(None))


def _write_locked(
    core: Core,
    memories: list[Memory],
    accesses: Sequence[Sequence[datetime]],
    by: str,
    now: datetime,
    detect: bool,
    given: bool = True,
) -> list[AddResult]:
    """:func:`_write_once` holding the store's write lock (lost too often: no other writer
    moves the patient now). The lock's transaction commits when the block ends, after the
    snapshot cache has followed the write: if that commit fails (rolled back), the cache is
    dropped rather than left ahead of the store."""
    written = False
    try:
        with core.store.write_lock():
            out = _write_once(core, memories, accesses, by, now, detect, given=given)
            written = True
    except BaseException:
        if written:
            core.snapshots.clear()
        raise
    return out


def moved(core: Core, changes: ChangeSet) -> bool:
    """Whether a patient ``changes`` was computed against, or a memory or supersession it
    updates, has moved past the version the change was computed from (or is gone): the store's
    ConflictError was then a race with another writer, which a fresh detection resolves -- not
    a bad request."""
    for pid, expected in changes.expected_patient_versions.items():
        if core.store.versions(pid)[0] != expected:
            return True
    want = {m.id: expected for m, expected in changes.update_memories}
    if want:
        have = {m.id: m.version for m in core.store.get_memories(list(want))}
        if any(have.get(mid) != expected for mid, expected in want.items()):
            return True
    for s, expected in changes.update_supersessions:
        try:
            if core.store.get_supersession(s.id).version != expected:
                return True
        except NotFoundError:
            return True
    return False


def _write_once(
    core: Core,
    memories: list[Memory],
    accesses: Sequence[Sequence[datetime]],
    by: str,
    now: datetime,
    detect: bool,
    dry_run: bool = False,
    given: bool = True,
) -> list[AddResult]:
    """Detect and write one batch (``apply=False``: detect only; the results are what the
    write would return, nothing is written). Where the caller gave no ``now`` (``given``), the
    detection is dated at the clock's moment once the patients' snapshots are read: a snapshot
    may hold another writer's memory written while this attempt began (a loaded machine: 5.5 s
    in one run), and a detection dated before it is refused by the store."""
    changes = ChangeSet()
    sups_by_new: dict[str, list[Supersession]]
    pools: list[PatientPool]
    if detect:
        # the versions first: detection below reads snapshots at these versions or later, so a
        # write in between makes the store refuse rather than commit an unseen contradiction
        for pid in dict.fromkeys(m.patient_id for m in memories):
            changes.expected_patient_versions[pid] = core.snapshots.snapshot(pid).version
        if not given:
            now = max(now, core.action_time(None))
        sups_by_new, pools, added = detect_batch(core, memories, by, now, changes)
    else:  # nothing to compare: the patients' snapshots are not even loaded
        sups_by_new, pools, added = {}, [], memories
    changes.insert_memories.extend(added)
    changes.accesses.extend(
        [(m.id, m.patient_id, t) for m, times in zip(added, accesses, strict=True) for t in times]
    )
    # each added memory is audited as added (its public state after) by the store, and each
    # supersession and demotion as what it is (memory_core.store.audit)
    for pool in pools:
        changes.update_memories.extend(
            MemoryUpdate(m, pool.versions(m.id)) for m in pool.replaced.values()
        )
    if dry_run:  # a preview of this write: everything above, nothing written
        return [AddResult(memory=m, supersessions=tuple(sups_by_new.get(m.id, ()))) for m in added]
    try:
        core.apply(changes, by)
    except StaleSnapshotError:
        raise
    except ConflictError as exc:
        # a store that writes a memory before its patient's version (Cosmos DB's ordered
        # writes, or a batch that lost its version counter's etag twice) reports a race with
        # another writer as a conflict: the same race as a moved patient
        if moved(core, changes):
            raise StaleSnapshotError(f"{exc}; the batch is detected again") from exc
        raise
    return [AddResult(memory=m, supersessions=tuple(sups_by_new.get(m.id, ()))) for m in added]
