"""Encoding shared by every store: time as integer microseconds since the epoch (UTC), JSON,
the embedding-model binding check, and the storage record of each value (a flat mapping of
column / document field -> stored value). SQLite rows and Cosmos documents are both read and
written through these records, so a field is mapped in one place. No I/O."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import EmbeddingMismatchError
from ..facts import ClinicalFacts, current, to_json
from ..values import (
    AuditEntry,
    Confirmation,
    ConfirmationKind,
    InjectionRecord,
    Memory,
    Status,
    Supersession,
    SupersessionState,
    Tier,
)

# --- time <-> integer microseconds since the epoch (UTC) --------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_us(d: datetime) -> int:
    delta = d - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(us))


def opt_us(d: datetime | None) -> int | None:
    return None if d is None else to_us(d)


def opt_dt(us: Any) -> datetime | None:
    return None if us is None else from_us(int(us))


def from_seconds(s: float) -> datetime:
    """Epoch seconds as the stores report them (microseconds / 1e6) -> the exact moment."""
    return from_us(round(s * 1e6))


def seconds(us: Sequence[int]) -> npt.NDArray[np.float64]:
    """Integer microseconds -> epoch seconds (float64), as the engine's usage arrays hold them."""
    return np.array(us, dtype=np.float64) / 1e6


# --- JSON --------------------------------------------------------------------------------------


#: one encoder for every stored document (json.dumps with sort_keys builds one per call)
_ENCODER = json.JSONEncoder(sort_keys=True)


def dumps(doc: Any) -> str:
    """Stored JSON: sorted keys, ASCII (audit bodies, policies, injection items); the same text
    as ``json.dumps(doc, sort_keys=True)``."""
    return _ENCODER.encode(doc)


_string = json.encoder.encode_basestring_ascii  # a JSON string literal, as the encoder writes it

#: ``dumps(memory.to_public_dict())`` laid out: its keys in sorted order, a slot per value
_MEMORY_STATE = (
    '{"access_count": %d, "archived_at": %s, %s"content": %s, "created_at": %s, '
    '"embedding_model": %s, "id": %s, "importance": %s, "last_accessed": %s, '
    '"memory_type": %s, "patient_id": %s, "pinned": %s, "source": %s, "status": %s, '
    '"superseded_by": %s, "tier": %s, "version": %d}'
)
#: ... with the two confirmation keys of a memory never confirmed (they sort before "content")
_UNCONFIRMED = '"confirmations": [], "confirmed_at": null, '


def memory_state_json(m: Memory) -> str:
    """The text of ``dumps(m.to_public_dict())`` (the audit after-state of an added memory),
    written straight from the memory's fields instead of through a dict and the generic
    encoder: a bulk add audits tens of thousands of memories. A field of an unexpected type
    (an integer importance, a bool count ...) goes the generic way, which encodes it as JSON
    would."""
    imp, count, version, pinned = m.importance, m.access_count, m.version, m.pinned
    if (
        type(imp) is not float
        or not math.isfinite(imp)
        or type(count) is not int
        or type(version) is not int
        or type(pinned) is not bool
        or m.confirmations  # a confirmed one (an import's record date): the generic way
    ):
        return dumps(m.to_public_dict())
    sup, src, archived = m.superseded_by, m.source, m.archived_at
    created, last = m.created_at, m.last_accessed
    try:
        created_iso = _string(created.isoformat())
        # a memory never accessed has one moment for both (an add passes the same object)
        last_iso = created_iso if last is created else _string(last.isoformat())
        return _MEMORY_STATE % (
            count,
            "null" if archived is None else _string(archived.isoformat()),
            _UNCONFIRMED,
            _string(m.content),
            created_iso,
            _string(m.embedding_model),
            _string(m.id),
            float.__repr__(imp),
            last_iso,
            _string(m.memory_type),
            _string(m.patient_id),
            "true" if pinned else "false",
            "null" if src is None else _string(src),
            _string(m.status.value),
            "null" if sup is None else _string(sup),
            _string(m.tier.value),
            version,
        )
    except TypeError:  # a text field that is no string: as the generic encoder has it
        return dumps(m.to_public_dict())


# --- the embedding model a store is bound to ----------------------------------------------------


def check_embedding_binding(
    url: str, stored: tuple[str, int], model_id: str, dimensions: int
) -> None:
    """EmbeddingMismatchError unless the store's recorded model is ``model_id``/``dimensions``."""
    if stored[0] != model_id or int(stored[1]) != dimensions:
        raise EmbeddingMismatchError(
            f"store {url} holds vectors of {stored[0]} ({stored[1]} dimensions); the engine's "
            f"embedder is {model_id} ({dimensions} dimensions). Use the same embedder or a new "
            "store."
        )


# --- value <-> storage record ---------------------------------------------------------------------

#: A memory's stored fields (the embedding is stored per store: a blob or a list of floats).
MEMORY_FIELDS = (
    "id",
    "patient_id",
    "memory_type",
    "content",
    "importance",
    "created_us",
    "last_accessed_us",
    "access_count",
    "pinned",
    "tier",
    "status",
    "superseded_by",
    "archived_us",
    "source",
    "embedding_model",
    "version",
    "facts",
    "confirmations",
)
#: The fields an engine update may change (the access fields only change by record_access; the
#: version is bumped by the store).
MEMORY_UPDATABLE = (
    "memory_type",
    "content",
    "importance",
    "pinned",
    "tier",
    "status",
    "superseded_by",
    "archived_us",
    "source",
    "facts",
    "confirmations",
)
SUPERSESSION_FIELDS = (
    "id",
    "patient_id",
    "old_id",
    "new_id",
    "similarity",
    "method",
    "verdict",
    "state",
    "detected_us",
    "effective_us",
    "ended_us",
    "decided_by",
    "decided_us",
    "version",
    "rule",
    "evidence",
)
SUPERSESSION_UPDATABLE = ("state", "effective_us", "ended_us", "decided_by", "decided_us")


def memory_row(m: Memory) -> tuple[Any, ...]:
    """The memory's stored fields as a tuple in :data:`MEMORY_FIELDS` order (a SQLite row)."""
    return (
        m.id,
        m.patient_id,
        m.memory_type,
        m.content,
        float(m.importance),
        to_us(m.created_at),
        to_us(m.last_accessed),
        int(m.access_count),
        bool(m.pinned),
        m.tier.value,
        m.status.value,
        m.superseded_by,
        opt_us(m.archived_at),
        m.source,
        m.embedding_model,
        int(m.version),
        None if m.facts is None else facts_json(m.facts),
        confirmations_json(m.confirmations),
    )


#: The stored JSON of the facts objects written lately, by the object's id (with the object, so
#: an id is never taken for another's): the facts reader keeps one ClinicalFacts per text and
#: type, so the memories of a batch share them (20,000 records of 7,096 texts in the bench's bulk
#: add) and each is encoded once. Bounded: emptied when full.
_FACTS_JSON: dict[int, tuple[ClinicalFacts, str]] = {}
FACTS_JSON_MAX = 65_536


def facts_json(facts: ClinicalFacts) -> str:
    """:func:`memory_core.facts.to_json` of ``facts``, encoded once per facts object."""
    held = _FACTS_JSON.get(id(facts))
    if held is not None and held[0] is facts:
        return held[1]
    text = to_json(facts)
    if len(_FACTS_JSON) >= FACTS_JSON_MAX:
        _FACTS_JSON.clear()
    _FACTS_JSON[id(facts)] = (facts, text)
    return text


def memory_record(m: Memory) -> dict[str, Any]:
    """The memory's stored fields (:data:`MEMORY_FIELDS`) by name."""
    return dict(zip(MEMORY_FIELDS, memory_row(m), strict=True))


def memory_from_row(row: Sequence[Any], embedding: npt.NDArray[np.float32]) -> Memory:
    """A memory from its stored fields in :data:`MEMORY_FIELDS` order (a SQLite row as read;
    :func:`row_of` for a document). Its facts are as of this lexicon: read again when they were
    stored under another (or before facts were stored)."""
    return Memory(
        id=row[0],
        patient_id=row[1],
        memory_type=row[2],
        content=row[3],
        importance=float(row[4]),
        created_at=from_us(row[5]),
        last_accessed=from_us(row[6]),
        access_count=int(row[7]),
        pinned=bool(row[8]),
        tier=Tier(row[9]),
        status=Status(row[10]),
        superseded_by=row[11],
        archived_at=opt_dt(row[12]),
        source=row[13],
        embedding=embedding,
        embedding_model=row[14],
        version=int(row[15]),
        facts=current(row[16], row[3], row[2]),
        confirmations=confirmations_from(row[17]),
    )


def confirmations_json(confirmations: Sequence[Confirmation]) -> str | None:
    """A memory's confirmations as stored: JSON, a list of ``[at_us, kind, ref]`` oldest first
    (None when there are none)."""
    if not confirmations:
        return None
    return dumps([[to_us(c.at), c.kind.value, c.ref] for c in confirmations])


def confirmations_from(stored: Any) -> tuple[Confirmation, ...]:
    """A memory's confirmations from their stored JSON (None: none; a record written before
    confirmations were stored reads so), in time order."""
    if stored is None or stored == "":
        return ()
    rows = json.loads(stored) if isinstance(stored, str) else stored
    out = [
        Confirmation(from_us(int(at)), ConfirmationKind(kind), str(ref)) for at, kind, ref in rows
    ]
    out.sort(key=lambda c: c.at)
    return tuple(out)


def supersession_row(s: Supersession) -> tuple[Any, ...]:
    """The supersession's stored fields as a tuple in :data:`SUPERSESSION_FIELDS` order."""
    return (
        s.id,
        s.patient_id,
        s.old_id,
        s.new_id,
        float(s.similarity),
        s.method,
        s.verdict,
        s.state.value,
        to_us(s.detected_at),
        opt_us(s.effective_at),
        opt_us(s.ended_at),
        s.decided_by,
        opt_us(s.decided_at),
        int(s.version),
        s.rule,
        s.evidence,
    )


def supersession_record(s: Supersession) -> dict[str, Any]:
    """The supersession's stored fields (:data:`SUPERSESSION_FIELDS`) by name."""
    return dict(zip(SUPERSESSION_FIELDS, supersession_row(s), strict=True))


def supersession_from_row(row: Sequence[Any]) -> Supersession:
    """A supersession from its stored fields in :data:`SUPERSESSION_FIELDS` order."""
    return Supersession(
        id=row[0],
        patient_id=row[1],
        old_id=row[2],
        new_id=row[3],
        similarity=float(row[4]),
        method=row[5],
        verdict=row[6],
        state=SupersessionState(row[7]),
        detected_at=from_us(row[8]),
        effective_at=opt_dt(row[9]),
        ended_at=opt_dt(row[10]),
        decided_by=row[11],
        decided_at=opt_dt(row[12]),
        version=int(row[13]),
        rule=row[14] or "",
        evidence=row[15] or "",
    )


def row_of(record: Mapping[str, Any], fields: Sequence[str]) -> list[Any]:
    """A stored record's ``fields`` in order (a missing optional field is None)."""
    return [record.get(f) for f in fields]


def injection_items(inj: InjectionRecord) -> list[list[Any]]:
    """The injected ``(memory id, score)`` pairs as stored (JSON arrays)."""
    return [[mid, float(score)] for mid, score in inj.items]


def injection_from_record(r: Mapping[str, Any]) -> InjectionRecord:
    """``r``: id, at_us, patient_id, query, items (decoded), tokens, text, agent (optional)."""
    return InjectionRecord(
        id=str(r["id"]),
        at=from_us(r["at_us"]),
        patient_id=str(r["patient_id"]),
        query=str(r["query"]),
        items=tuple((str(a), float(b)) for a, b in r["items"]),
        tokens=int(r["tokens"]),
        text=str(r["text"]),
        agent=None if r.get("agent") is None else str(r["agent"]),
    )


def audit_from_record(r: Mapping[str, Any]) -> AuditEntry:
    """``r``: seq, at_us, actor, action, entity, entity_id, patient_id, before and after
    (decoded)."""
    return AuditEntry(
        seq=int(r["seq"]),
        at=from_us(r["at_us"]),
        actor=str(r["actor"]),
        action=str(r["action"]),
        entity=str(r["entity"]),
        entity_id=str(r["entity_id"]),
        patient_id=r.get("patient_id"),
        before=r.get("before"),
        after=r.get("after"),
    )
