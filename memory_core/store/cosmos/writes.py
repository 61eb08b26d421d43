"""Cosmos DB writes: a change set is planned against the stored documents (every expected
version checked first), then applied as one transactional batch when the server has real ones
and the set fits one partition, else as ordered, guarded single-document writes that a crash
cannot turn into a lie (the order and its guarantees: docs/cosmos.md). Accesses and promotions
are atomic patches."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal, TypeVar

from ...errors import ConflictError, NotFoundError, StaleSnapshotError, ValidationError
from ...values import AuditEntry, InjectionRecord, Memory, Supersession, Tier
from ..audit import Key, add_entry, derive, promotion_entries, touched
from ..base import AccessCount, ChangeSet
from ..codec import from_us, to_us
from . import emulator
from .connection import CosmosConnection
from .documents import (
    COUNTER_ID,
    MEMORY_ENGINE_FIELDS,
    SUPERSESSION_ENGINE_FIELDS,
    SYSTEM_PARTITION,
    audit_doc,
    counter_doc,
    injection_doc,
    memories_as_read,
    memory_doc,
    memory_update,
    policy_doc,
    strip,
    supersession_doc,
    supersession_from_doc,
    supersession_update,
    tombstone_doc,
    usage_docs,
)

MAX_BATCH_OPERATIONS = 100
#: how long a guarded ordered write holds the patient's counter lease (a crashed writer's
#: lease expires after this)
LEASE_S = 30.0


@dataclass
class _Write:
    """One guarded data write of a change set."""

    kind: Literal["create", "replace", "delete"]
    entity: str  # memory | supersession | tombstone
    pk: str
    id: str
    body: dict[str, Any] | None = None  # create / replace
    etag: str | None = None  # replace / delete: of the document the change was computed from
    before: dict[str, Any] | None = None  # the stored document (replace / delete)
    expected: int | None = None  # replace / delete: the engine's expected version
    rebuild: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # replace on a fresh read
    restore: tuple[str, ...] = ()  # replace: fields an undo puts back


@dataclass
class _Plan:
    writes: list[_Write] = field(default_factory=list)
    docs: list[dict[str, Any]] = field(default_factory=list)  # append-only documents
    bumps: list[str] = field(default_factory=list)  # patients whose versions change
    guards: dict[str, int] = field(default_factory=dict)  # patient -> expected content version

    def partitions(self) -> set[str]:
        return {w.pk for w in self.writes} | {d["patient_id"] for d in self.docs} | set(self.bumps)

    def size(self) -> int:
        return len(self.writes) + len(self.docs) + len(self.bumps)


_T = TypeVar("_T")
_PARALLEL_WRITES = 8


def _phases(writes: Sequence[_Write]) -> list[list[_Write]]:
    """Consecutive writes of the same kind and entity (the plan's order is by step), split so
    that no document appears twice in one step."""
    out: list[list[_Write]] = []
    for w in writes:
        last = out[-1] if out else None
        if (
            last is not None
            and (last[0].kind, last[0].entity) == (w.kind, w.entity)
            and all(x.id != w.id for x in last)
        ):
            last.append(w)
        else:
            out.append([w])
    return out


def _each(fn: Callable[[_T], object], items: Sequence[_T]) -> tuple[list[_T], Exception | None]:
    """``fn`` over ``items`` (concurrently when there are several): the items done and the
    first error. A few items run in order and stop at the first error."""
    if len(items) < 4:
        done: list[_T] = []
        for x in items:
            try:
                fn(x)
            except Exception as exc:
                return done, exc
            done.append(x)
        return done, None
    from concurrent.futures import ThreadPoolExecutor

    ok: list[_T] = []
    first: Exception | None = None
    with ThreadPoolExecutor(max_workers=min(_PARALLEL_WRITES, len(items))) as pool:
        futures = [(x, pool.submit(fn, x)) for x in items]
        for x, f in futures:
            error = f.exception()
            if error is None:
                ok.append(x)
            elif first is None:
                first = error if isinstance(error, Exception) else RuntimeError(str(error))
    return ok, first


def _replace(
    entity: Literal["memory", "supersession"],
    value: Memory | Supersession,
    doc: dict[str, Any],
    expected: int,
    rebuild: Callable[[dict[str, Any]], dict[str, Any]],
) -> _Write:
    """The guarded replace of ``doc`` (read at ``expected``) with the engine's ``value``;
    ``rebuild`` redoes the body on a fresh read, an undo restores the engine's fields."""
    return _Write(
        "replace",
        entity,
        value.patient_id,
        value.id,
        body=rebuild(doc),
        etag=doc["_etag"],
        before=doc,
        expected=expected,
        rebuild=rebuild,
        restore=MEMORY_ENGINE_FIELDS if entity == "memory" else SUPERSESSION_ENGINE_FIELDS,
    )


class _Retry(Exception):
    """A transactional batch lost an etag race: plan again (once)."""


def _now_us() -> int:
    return time.time_ns() // 1000


def _wall() -> datetime:
    """The store's clock (of this process): an audit row dated after it is refused."""
    return datetime.now(UTC)


def _check_counter(pid: str, counter: dict[str, Any] | None, expected: int) -> None:
    """StaleSnapshotError unless the patient's counter is at ``expected`` with no live lease."""
    have = int(counter["content"]) if counter else 0
    if have != expected:
        raise StaleSnapshotError(
            f"patient {pid}'s memories changed since this change was computed (content "
            f"version {expected}, now {have}); read again and retry"
        )
    if counter is not None and int(counter.get("lease_us") or 0) > _now_us():
        raise StaleSnapshotError(
            f"another write to patient {pid}'s memories is in progress; read again and retry"
        )


class CosmosWrites(CosmosConnection):
    """The writing half of :class:`~.store.CosmosStore`."""

    # --- append-only documents -----------------------------------------------------------------
    def _audit_doc(self, a: AuditEntry) -> dict[str, Any]:
        return audit_doc(a, self._next_seq())

    def _usage_docs(
        self, patient_id: str, events: Sequence[tuple[str, int]], sessions: Sequence[int]
    ) -> list[dict[str, Any]]:
        return usage_docs(patient_id, events, sessions, self._next_seq)

    def _memories_from(self, docs: Sequence[Mapping[str, Any]]) -> list[Memory]:
        """Memory documents of any patients -> Memory values as readers see them (one
        supersession query per patient)."""
        self._remember(docs)
        by_pid: dict[str, list[str]] = {}
        for d in docs:
            by_pid.setdefault(str(d["patient_id"]), []).append(str(d["id"]))
        sups: list[Any] = []
        for pid, ids in by_pid.items():
            sups += self._query(
                "SELECT * FROM c WHERE c.patient_id = @pid AND c.doc_type = 'supersession' "
                "AND ARRAY_CONTAINS(@ids, c.old_id)",
                [("@pid", pid), ("@ids", ids)],
                pk=pid,
            )
        return memories_as_read(docs, sups)

    # --- apply: plan, then a batch or ordered writes --------------------------------------------
    def _plan(self, changes: ChangeSet) -> _Plan:
        """Check every expected version against the stored documents and lay out the writes.
        ConflictError here means nothing was written."""
        plan = _Plan()
        mem_docs: list[dict[str, Any]] = []
        stored_sups: dict[str, Supersession] = {}
        for pid, expected in sorted(changes.expected_patient_versions.items()):
            _check_counter(pid, self._read(COUNTER_ID, pid), expected)
            plan.guards[pid] = expected
        if changes.insert_memories:
            reused = self.purged_ids([m.id for m in changes.insert_memories])
            if reused:
                raise ValidationError(
                    "id",
                    f"memory id {sorted(reused)[0]!r} belonged to a purged memory; ids are never "
                    "reused",
                )
        for s in changes.insert_supersessions:
            plan.writes.append(
                _Write("create", "supersession", s.patient_id, s.id, body=supersession_doc(s))
            )
        for s, expected in changes.update_supersessions:
            doc = self._read(s.id, s.patient_id)
            if doc is None or int(doc["version"]) != expected:
                raise ConflictError(
                    f"supersession {s.id} was changed by someone else; reload and try again"
                )
            rebuild = partial(supersession_update, s=s, expected=expected)
            plan.writes.append(_replace("supersession", s, doc, expected, rebuild))
            stored_sups[s.id] = supersession_from_doc(doc)
        for m in changes.insert_memories:
            plan.writes.append(
                _Write("create", "memory", m.patient_id, m.id, body=memory_doc(m, self._next_seq()))
            )
        for m, expected in changes.update_memories:
            doc = self._read(m.id, m.patient_id)
            if doc is None or int(doc["version"]) != expected:
                raise ConflictError(
                    f"memory {m.id} was changed by someone else (expected version {expected}); "
                    "reload and try again"
                )
            rebuild = partial(memory_update, m=m, expected=expected)
            plan.writes.append(_replace("memory", m, doc, expected, rebuild))
            mem_docs.append(doc)
        deletes: list[_Write] = []
        for m, expected in changes.delete_memories:
            doc = self._read(m.id, m.patient_id)
            if doc is None or int(doc["version"]) != expected or doc["status"] != "archived":
                raise ConflictError(f"memory {m.id} changed since the purge was planned")
            mem_docs.append(doc)
            tomb = tombstone_doc(m, _now_us())  # before the deletes: a crash never frees an id
            plan.writes.append(_Write("create", "tombstone", m.patient_id, tomb["id"], body=tomb))
            deletes.append(
                _Write(
                    "delete",
                    "memory",
                    m.patient_id,
                    m.id,
                    etag=doc["_etag"],
                    before=doc,
                    expected=expected,
                )
            )
        plan.writes += deletes
        events: dict[str, list[tuple[str, int]]] = {}
        sessions: dict[str, list[int]] = {}
        for mid, pid, at in changes.accesses:
            events.setdefault(pid, []).append((mid, to_us(at)))
        for pid, at in changes.sessions:
            sessions.setdefault(pid, []).append(to_us(at))
        for pid in sorted(set(events) | set(sessions)):
            plan.docs += self._usage_docs(pid, events.get(pid, []), sessions.get(pid, []))
        if changes.policy is not None:
            seq = self._next_seq()
            plan.docs.append(policy_doc(changes.policy, seq, time.time_ns() // 1000))
        for k in changes.flag_keeps:
            mdoc = self._read(k.memory_id, k.patient_id)
            if mdoc is not None and mdoc.get("doc_type") == "memory":
                mem_docs.append(mdoc)
            sdoc = self._read(k.change_id, k.patient_id)
            if sdoc is not None and sdoc.get("doc_type") == "supersession":
                stored_sups.setdefault(k.change_id, supersession_from_doc(sdoc))
        # as readers see them (the status repaired over the stored supersessions): the state
        # the audit row's before shows, and the one an update was computed from
        stored_mems = {m.id: m for m in self._memories_from(mem_docs)} if mem_docs else {}
        derived = derive(
            changes,
            stored_mems,
            stored_sups,
            self._last_written(touched(changes)),
            _wall(),
            self._saved_policy,
        )
        plan.docs += [
            self._audit_doc(add_entry(m, derived.at, derived.actor))
            for m in changes.insert_memories
        ]
        plan.docs += [self._audit_doc(a) for a in derived.entries]
        plan.bumps = sorted(changes.patients())
        return plan

    def _saved_policy(self) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT TOP 1 c.body FROM c WHERE c.patient_id = @pid AND c.doc_type = 'policy' "
            "ORDER BY c.seq DESC",
            [("@pid", SYSTEM_PARTITION)],
            pk=SYSTEM_PARTITION,
        )
        body: dict[str, Any] | None = rows[0]["body"] if rows else None
        return body

    def _last_written(self, keys: dict[Key, str]) -> dict[Key, datetime]:
        """The latest audited moment of each record, read from its patient's audit documents."""
        by_patient: dict[str, list[str]] = {}
        for (_, rid), pid in keys.items():
            by_patient.setdefault(pid, []).append(rid)
        out: dict[Key, datetime] = {}
        for pid, ids in by_patient.items():
            ids = list(dict.fromkeys(ids))
            for k in range(0, len(ids), 500):
                rows = self._query(
                    "SELECT c.entity, c.entity_id, c.at_us FROM c WHERE c.doc_type = 'audit' "
                    "AND c.patient_id = @pid AND ARRAY_CONTAINS(@ids, c.entity_id)",
                    [("@pid", pid), ("@ids", ids[k : k + 500])],
                    pk=pid,
                )
                for r in rows:
                    key = (str(r["entity"]), str(r["entity_id"]))
                    if key in keys:
                        at = from_us(int(r["at_us"]))
                        if key not in out or at > out[key]:
                            out[key] = at
        return out

    def last_written(
        self, patient_id: str, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], datetime]:
        return self._last_written(dict.fromkeys(keys, patient_id))

    def purged_ids(self, memory_ids: Sequence[str]) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        out: set[str] = set()
        for k in range(0, len(ids), 500):
            rows = self._query(
                "SELECT VALUE c.memory_id FROM c WHERE c.doc_type = 'tombstone' AND "
                "ARRAY_CONTAINS(@ids, c.memory_id)",
                [("@ids", ids[k : k + 500])],
            )
            out |= {str(r) for r in rows}
        return out

    def apply(self, changes: ChangeSet) -> None:
        if changes.is_empty():
            return
        for pid in changes.patients():
            self._check_patient(pid)
        for attempt in (0, 1):
            plan = self._plan(changes)
            if not plan.writes and not plan.docs and not plan.bumps:
                return
            parts = plan.partitions()
            if len(parts) == 1 and plan.size() <= MAX_BATCH_OPERATIONS and self._batch_is_atomic():
                try:
                    self._run_batch(next(iter(parts)), plan)
                except _Retry as exc:
                    if attempt:
                        raise ConflictError(str(exc)) from exc
                    continue
            else:
                self._run_ordered(plan)
            self._remember(w.body for w in plan.writes if w.body is not None)
            return

    def _batch_is_atomic(self) -> bool:
        """Whether the server applies a transactional batch all-or-nothing (probed once)."""
        if self._atomic_batch is None:
            self._atomic_batch = emulator.batch_is_atomic(self._c, self._read)
        return self._atomic_batch

    def _run_batch(self, pk: str, plan: _Plan) -> None:
        from azure.cosmos.exceptions import CosmosBatchOperationError

        ops: list[Any] = []
        for w in plan.writes:
            if w.kind == "create":
                ops.append(("create", (w.body,)))
            elif w.kind == "replace":
                ops.append(("replace", (w.id, w.body), {"if_match_etag": w.etag}))
            else:
                ops.append(("delete", (w.id,), {"if_match_etag": w.etag}))
        ops += [("create", (d,)) for d in plan.docs]
        if plan.bumps:
            counter = self._read(COUNTER_ID, pk)
            if pk in plan.guards:  # the etag below makes the check and the batch one step
                _check_counter(pk, counter, plan.guards[pk])
            body = counter_doc(pk, counter, content=True)
            if counter is None:
                ops.append(("create", (body,)))
            else:
                ops.append(("replace", (COUNTER_ID, body), {"if_match_etag": counter["_etag"]}))
        try:
            self._c.execute_item_batch(ops, partition_key=pk)
        except CosmosBatchOperationError as exc:
            i = exc.error_index
            status = 0
            if 0 <= i < len(exc.operation_responses):
                status = int(exc.operation_responses[i].get("statusCode", 0))
            bad = plan.writes[i] if 0 <= i < len(plan.writes) else None
            if bad is not None and bad.kind == "create" and status == 409:
                raise ConflictError(f"{bad.entity} {bad.id} already exists") from exc
            if status in (404, 409, 412):
                what = f"{bad.entity} {bad.id}" if bad is not None else "the version counter"
                raise _Retry(f"{what} was changed by someone else; reload and try again") from exc
            raise

    def _run_ordered(self, plan: _Plan) -> None:
        """Without an atomic batch: data writes in the documented order (undone on a conflict),
        then the append-only documents, then the version counters. Each step's independent
        writes (e.g. the memories of an import) go out concurrently; the steps stay in order.
        A change set with expected patient versions first takes each such patient's counter
        lease (guarded by the counter's etag), so two of them cannot both pass the check; the
        last step releases it (a crashed writer's lease expires after LEASE_S)."""
        held: list[str] = []
        try:
            for pid in sorted(plan.guards):
                self._lease(pid, plan.guards[pid])
                held.append(pid)
        except BaseException:
            for pid in held:
                self._bump(pid, content=True, release=True)
            raise
        done: list[_Write] = []
        for phase in _phases(plan.writes):
            ok, error = _each(self._write, phase)
            done += ok
            if error is not None:
                if isinstance(error, ConflictError):
                    self._undo(done)
                for pid in held:
                    self._bump(pid, content=True, release=True)
                raise error
        _, error = _each(self._c.create_item, plan.docs)
        if error is not None:
            raise error
        _, error = _each(
            lambda pid: self._bump(pid, content=True, release=pid in plan.guards), plan.bumps
        )
        if error is not None:
            raise error

    def _lease(self, pid: str, expected: int) -> None:
        """Take the patient's counter lease if its content version is still ``expected``
        (StaleSnapshotError otherwise); the counter's etag makes check and take one step."""
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import CosmosHttpResponseError

        counter = self._read(COUNTER_ID, pid)
        _check_counter(pid, counter, expected)
        lease = _now_us() + int(LEASE_S * 1e6)
        try:
            if counter is None:
                body = counter_doc(pid, None, content=False)
                self._c.create_item({**body, "content": 0, "usage": 0, "lease_us": lease})
            else:
                self._c.replace_item(
                    item=COUNTER_ID,
                    body={**strip(counter), "lease_us": lease},
                    etag=counter["_etag"],
                    match_condition=MatchConditions.IfNotModified,
                )
        except CosmosHttpResponseError as exc:
            if exc.status_code in (409, 412):
                raise StaleSnapshotError(
                    f"patient {pid}'s memories are being changed by another writer; read again "
                    "and retry"
                ) from exc
            raise

    def _write(self, w: _Write) -> None:
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import CosmosHttpResponseError

        if w.kind == "create":
            try:
                self._c.create_item(w.body)
            except CosmosHttpResponseError as exc:
                if exc.status_code == 409:
                    raise ConflictError(f"{w.entity} {w.id} already exists") from exc
                raise
            return
        body, etag = w.body, w.etag
        for attempt in (0, 1):
            try:
                if w.kind == "replace":
                    self._c.replace_item(
                        item=w.id,
                        body=body,
                        etag=etag,
                        match_condition=MatchConditions.IfNotModified,
                    )
                else:
                    self._c.delete_item(
                        item=w.id,
                        partition_key=w.pk,
                        etag=etag,
                        match_condition=MatchConditions.IfNotModified,
                    )
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code not in (404, 412):
                    raise
                if exc.status_code == 404 or attempt:
                    raise ConflictError(
                        f"{w.entity} {w.id} was changed by someone else; reload and try again"
                    ) from exc
            # 412: patched meanwhile (e.g. an access); retry once if the version still matches
            fresh = self._read(w.id, w.pk)
            if (
                fresh is None
                or int(fresh["version"]) != w.expected
                or (w.kind == "delete" and fresh["status"] != "archived")
            ):
                raise ConflictError(
                    f"{w.entity} {w.id} was changed by someone else (expected version "
                    f"{w.expected}); reload and try again"
                )
            etag = fresh["_etag"]
            if w.rebuild is not None:
                body = w.rebuild(fresh)
            w.before = fresh

    def _undo(self, done: Sequence[_Write]) -> None:
        """Best effort: put back what a refused change set already wrote."""
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import CosmosHttpResponseError

        for w in reversed(done):
            try:
                if w.kind == "create":
                    self._c.delete_item(item=w.id, partition_key=w.pk)
                elif w.kind == "delete" and w.before is not None:
                    self._c.create_item(strip(w.before))
                elif w.kind == "replace" and w.before is not None:
                    for _ in range(3):
                        fresh = self._read(w.id, w.pk)
                        if fresh is None:
                            break
                        body = {**strip(fresh), **{f: w.before.get(f) for f in w.restore}}
                        try:
                            self._c.replace_item(
                                item=w.id,
                                body=body,
                                etag=fresh["_etag"],
                                match_condition=MatchConditions.IfNotModified,
                            )
                            break
                        except CosmosHttpResponseError as exc:
                            if exc.status_code != 412:
                                raise
            except CosmosHttpResponseError:
                continue

    def _bump(
        self, patient_id: str, content: bool, usage: bool = True, release: bool = False
    ) -> None:
        """Content and/or usage version + 1: atomic patches (the counter created at need);
        ``release`` also ends the patient's counter lease."""
        from azure.cosmos.exceptions import CosmosHttpResponseError

        ops: list[dict[str, Any]] = []
        if usage:
            ops.append({"op": "incr", "path": "/usage", "value": 1})
        if content:
            ops.append({"op": "incr", "path": "/content", "value": 1})
        if release:
            ops.append({"op": "set", "path": "/lease_us", "value": 0})
        for _ in range(3):
            try:
                self._c.patch_item(item=COUNTER_ID, partition_key=patient_id, patch_operations=ops)
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code != 404:
                    raise
            body = counter_doc(patient_id, None, content)
            if not usage:
                body["usage"] = 0
            try:
                self._c.create_item(body)
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code != 409:  # created concurrently: patch it
                    raise
        raise ConflictError(f"could not bump the versions of patient {patient_id}")

    # --- accesses and promotions ----------------------------------------------------------------
    def _patch(
        self, patient_id: str, memory_id: str, ops: list[dict[str, Any]], where: str | None = None
    ) -> dict[str, Any]:
        """One atomic patch of a memory (412 when ``where`` does not hold, NotFoundError)."""
        from azure.cosmos.exceptions import CosmosHttpResponseError

        try:
            doc: dict[str, Any] = self._c.patch_item(
                item=memory_id,
                partition_key=patient_id,
                patch_operations=ops,
                filter_predicate=where,
            )
        except CosmosHttpResponseError as exc:
            if exc.status_code == 404:
                raise NotFoundError("memory", memory_id) from exc
            raise
        return doc

    def record_access(
        self,
        patient_id: str,
        memory_ids: Sequence[str],
        at: datetime,
        injection: InjectionRecord | None = None,
    ) -> list[AccessCount]:
        """Per memory an atomic patch: ``incr`` on the count and, guarded by a filter (only when
        newer), ``set`` on the last access, so concurrent agents never lose a count. The call as
        a whole is not atomic (docs/cosmos.md)."""
        from azure.cosmos.exceptions import CosmosHttpResponseError

        self._check_patient(patient_id)
        at_us = to_us(at)
        count = {"op": "incr", "path": "/access_count", "value": 1}
        out: list[AccessCount] = []
        for mid in memory_ids:
            try:
                doc = self._patch(
                    patient_id,
                    mid,
                    [
                        count,
                        {"op": "set", "path": "/last_accessed_us", "value": at_us},
                        {"op": "set", "path": "/last_accessed", "value": at.isoformat()},
                    ],
                    f"FROM c WHERE c.last_accessed_us < {at_us}",
                )
            except CosmosHttpResponseError as exc:
                if exc.status_code != 412:
                    raise
                # stored last access is at or after `at`: count only
                doc = self._patch(patient_id, mid, [count])
            out.append(AccessCount(mid, int(doc["access_count"]), Tier(doc["tier"])))
        docs = self._usage_docs(patient_id, [(mid, at_us) for mid in memory_ids], [at_us])
        if injection is not None:
            docs.append(injection_doc(injection, at))
        for d in docs:
            self._c.create_item(d)
        self._bump(patient_id, content=False)
        return out

    def promote(
        self, patient_id: str, memory_ids: Sequence[str], actor: str, at: datetime
    ) -> list[str]:
        """A patch guarded by ``tier = 'short_term'`` per memory: only one concurrent caller
        wins a memory's promotion, and only the winner writes the audit entry."""
        from azure.cosmos.exceptions import CosmosHttpResponseError

        self._check_patient(patient_id)
        entries = promotion_entries(patient_id, memory_ids, actor, at, _wall())
        promoted: list[str] = []
        audit: list[dict[str, Any]] = []
        for entry in entries:
            try:
                self._patch(
                    patient_id,
                    entry.entity_id,
                    [
                        {"op": "set", "path": "/tier", "value": Tier.LONG_TERM.value},
                        {"op": "incr", "path": "/version", "value": 1},
                    ],
                    f"FROM c WHERE c.tier = '{Tier.SHORT_TERM.value}'",
                )
            except (CosmosHttpResponseError, NotFoundError) as exc:
                if isinstance(exc, CosmosHttpResponseError) and exc.status_code != 412:
                    raise
                continue
            promoted.append(entry.entity_id)
            audit.append(self._audit_doc(entry))
        for d in audit:
            self._c.create_item(d)
        if promoted:
            self._bump(patient_id, content=True, usage=False)
        return promoted
