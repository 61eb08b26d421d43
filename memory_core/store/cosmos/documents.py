"""Cosmos DB documents <-> values: one container, a ``doc_type`` per record (see
docs/cosmos.md for the layout), the schema version of memory and supersession documents, and
the read repair of memory statuses (the rule itself is :mod:`memory_core.status`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from ...errors import StateError
from ...status import holders, status_at
from ...values import AuditEntry, InjectionRecord, Memory, Supersession
from ..codec import (
    MEMORY_FIELDS,
    MEMORY_UPDATABLE,
    SUPERSESSION_FIELDS,
    SUPERSESSION_UPDATABLE,
    audit_from_record,
    from_us,
    injection_from_record,
    injection_items,
    memory_from_row,
    memory_record,
    row_of,
    supersession_from_row,
    supersession_record,
    to_us,
)

SYSTEM_PARTITION = "__system__"
COUNTER_ID = "__versions__"
META_ID = "__embedding_model__"
#: The layout of memory and supersession documents; a document without ``schema`` is 1. A bump
#: adds a step to :func:`upgraded` (see docs/cosmos.md, "Schema versions"). 2: a memory's
#: ``facts`` (JSON text; read from its content when absent) and a supersession's ``rule`` and
#: ``evidence`` (empty when absent). 3: a memory's ``confirmations`` (JSON text; none when
#: absent).
SCHEMA_VERSION = 3
SYSTEM_FIELDS = ("_rid", "_self", "_etag", "_attachments", "_ts", "_lsn")
EVENTS_PER_DOC = 2000

#: Integer-microsecond fields and the ISO-8601 companion each document also carries (for people
#: reading the documents; readers use the integers).
_ISO = {
    "created_us": "created_at",
    "last_accessed_us": "last_accessed",
    "archived_us": "archived_at",
    "detected_us": "detected_at",
    "effective_us": "effective_at",
    "ended_us": "ended_at",
    "decided_us": "decided_at",
}


def _with_iso(fields: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(fields)
    for us, iso in _ISO.items():
        if us in fields:
            out[iso] = None if fields[us] is None else from_us(fields[us]).isoformat()
    return out


def _fields_of(names: Sequence[str]) -> tuple[str, ...]:
    """The document fields an engine update writes (and an undo puts back)."""
    return (*names, *(_ISO[n] for n in names if n in _ISO), "version")


MEMORY_ENGINE_FIELDS = _fields_of(MEMORY_UPDATABLE)
SUPERSESSION_ENGINE_FIELDS = _fields_of(SUPERSESSION_UPDATABLE)


def strip(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the server's system properties."""
    return {k: v for k, v in doc.items() if k not in SYSTEM_FIELDS}


def upgraded(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """A memory or supersession document in the current layout (StateError when it was written
    by newer code). Readers and rewrites both pass through here."""
    schema = int(doc.get("schema", 1))
    if schema > SCHEMA_VERSION:
        raise StateError(
            f"document {doc.get('id')!r} has schema {schema}, newer than this code "
            f"({SCHEMA_VERSION}); upgrade"
        )
    memory = doc.get("doc_type") == "memory"
    if schema < 2:  # 1 -> 2: facts read from the content on read; no rule recorded
        extra = {"facts": None} if memory else {"rule": "", "evidence": ""}
        doc = {**extra, **doc}
    if schema < 3 and memory:  # 2 -> 3: a memory written before confirmations: none
        doc = {"confirmations": None, **doc}
    return doc


# --- memories and supersessions ---------------------------------------------------------------


def memory_doc(m: Memory, seq: int) -> dict[str, Any]:
    """The stored document of a memory."""
    return {
        **_with_iso(memory_record(m)),
        "doc_type": "memory",
        "schema": SCHEMA_VERSION,
        "embedding": np.asarray(m.embedding, dtype=np.float32).tolist(),
        "seq": seq,
    }


def memory_from_doc(d: Mapping[str, Any]) -> Memory:
    d = upgraded(d)
    return memory_from_row(row_of(d, MEMORY_FIELDS), np.asarray(d["embedding"], dtype=np.float32))


def memory_update(d: Mapping[str, Any], m: Memory, expected: int) -> dict[str, Any]:
    """The stored document ``d`` with the engine's update of ``m`` (computed at ``expected``)."""
    rec = memory_record(m)
    fields = _with_iso({k: rec[k] for k in MEMORY_UPDATABLE})
    return {**strip(upgraded(d)), **fields, "schema": SCHEMA_VERSION, "version": expected + 1}


def supersession_doc(s: Supersession) -> dict[str, Any]:
    return {
        **_with_iso(supersession_record(s)),
        "doc_type": "supersession",
        "schema": SCHEMA_VERSION,
    }


def supersession_from_doc(d: Mapping[str, Any]) -> Supersession:
    return supersession_from_row(row_of(upgraded(d), SUPERSESSION_FIELDS))


def supersession_update(d: Mapping[str, Any], s: Supersession, expected: int) -> dict[str, Any]:
    rec = supersession_record(s)
    fields = _with_iso({k: rec[k] for k in SUPERSESSION_UPDATABLE})
    return {**strip(upgraded(d)), **fields, "schema": SCHEMA_VERSION, "version": expected + 1}


def supersession_order(d: Mapping[str, Any]) -> tuple[int, str]:
    return int(d["detected_us"]), str(d["id"])


def memories_as_read(
    memory_docs: Iterable[Mapping[str, Any]], supersession_docs: Iterable[Mapping[str, Any]]
) -> list[Memory]:
    """Memory documents as readers see them: the stored status repaired by the one status rule
    (:mod:`memory_core.status`) over the stored supersessions, so a crash between writing a
    supersession record and the memory's demotion (or restore) is invisible."""
    held = holders(supersession_from_doc(d) for d in supersession_docs)
    out = []
    for d in memory_docs:
        m = memory_from_doc(d)
        status, by = status_at(m, held)
        out.append(
            m
            if (status, by) == (m.status, m.superseded_by)
            else replace(m, status=status, superseded_by=by)
        )
    return out


# --- append-only documents --------------------------------------------------------------------


def audit_doc(a: AuditEntry, seq: int) -> dict[str, Any]:
    return {
        "id": f"aud_{seq}_{uuid.uuid4().hex[:8]}",
        "patient_id": a.patient_id or SYSTEM_PARTITION,
        "doc_type": "audit",
        "seq": seq,
        "at": a.at.isoformat(),
        "at_us": to_us(a.at),
        "actor": a.actor,
        "action": a.action,
        "entity": a.entity,
        "entity_id": a.entity_id,
        "patient": a.patient_id,
        "before": a.before,
        "after": a.after,
    }


def audit_from_doc(d: Mapping[str, Any]) -> AuditEntry:
    return audit_from_record({**d, "patient_id": d.get("patient")})


def usage_docs(
    patient_id: str,
    events: Sequence[tuple[str, int]],
    sessions: Sequence[int],
    next_seq: Callable[[], int],
) -> list[dict[str, Any]]:
    """Access events ``(memory id, at_us)`` and session moments, at most
    :data:`EVENTS_PER_DOC` of each per document (at least one document)."""
    out: list[dict[str, Any]] = []
    ev = [[m, t] for m, t in events]
    ss = list(sessions)
    while ev or ss or not out:
        chunk_e, ev = ev[:EVENTS_PER_DOC], ev[EVENTS_PER_DOC:]
        chunk_s, ss = ss[:EVENTS_PER_DOC], ss[EVENTS_PER_DOC:]
        out.append(
            {
                "id": f"use_{uuid.uuid4().hex}",
                "patient_id": patient_id,
                "doc_type": "usage",
                "seq": next_seq(),
                "events": chunk_e,
                "sessions": chunk_s,
            }
        )
    return out


def injection_doc(inj: InjectionRecord, at: datetime) -> dict[str, Any]:
    return {
        "id": inj.id,
        "patient_id": inj.patient_id,
        "doc_type": "injection",
        "at": at.isoformat(),
        "at_us": to_us(at),
        "query": inj.query,
        "items": injection_items(inj),
        "tokens": int(inj.tokens),
        "text": inj.text,
        "agent": inj.agent,  # absent on documents written before issue 33: read as None
    }


def injection_from_doc(d: Mapping[str, Any]) -> InjectionRecord:
    return injection_from_record(d)


def policy_doc(body: dict[str, Any], seq: int, at_us: int) -> dict[str, Any]:
    return {
        "id": f"pol_{seq}_{uuid.uuid4().hex[:8]}",
        "patient_id": SYSTEM_PARTITION,
        "doc_type": "policy",
        "seq": seq,
        "at_us": at_us,
        "body": body,
    }


def counter_doc(pk: str, doc: Mapping[str, Any] | None, content: bool) -> dict[str, Any]:
    """The patient's version counter after one more write (content and usage, or usage only)."""
    c = int(doc["content"]) if doc else 0
    u = int(doc["usage"]) if doc else 0
    return {
        "id": COUNTER_ID,
        "patient_id": pk,
        "doc_type": "counter",
        "content": c + 1 if content else c,
        "usage": u + 1,
    }


def tombstone_doc(m: Memory, at_us: int) -> dict[str, Any]:
    """What is left of a purged memory in its partition: its id, never reusable."""
    return {
        "id": f"__purged__{m.id}",
        "patient_id": m.patient_id,
        "doc_type": "tombstone",
        "memory_id": m.id,
        "purged_us": at_us,
    }


def meta_doc(model_id: str, dimensions: int) -> dict[str, Any]:
    return {
        "id": META_ID,
        "patient_id": SYSTEM_PARTITION,
        "doc_type": "meta",
        "model_id": model_id,
        "dimensions": int(dimensions),
    }
