"""The audit entries of inserted memories, written by the store from the memories themselves
(one ``add`` row each, the change set's actor and moment, no before-state, the public state
after) on both stores; the after-state text the SQLite store writes straight from the memory is
the generic encoding."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from memory_core.embedding import HashingEmbedder
from memory_core.errors import ValidationError
from memory_core.store import open_store
from memory_core.store.base import AuditQuery, ChangeSet, MemoryStore
from memory_core.store.codec import memory_state_json
from memory_core.store.sqlite import SQLiteStore
from memory_core.values import AuditEntry, Memory, Status, Tier
from tests.conftest import NOW
from tests.cosmos_server import CosmosServer

EMBEDDER = HashingEmbedder()


def memory(patient: str, text: str, **kw: object) -> Memory:
    base = Memory(
        id=f"mem_{uuid.uuid4().hex}",
        patient_id=patient,
        memory_type="observation",
        content=text,
        importance=5.0,
        created_at=NOW - timedelta(days=3, microseconds=17),
        last_accessed=NOW - timedelta(days=1),
        embedding=EMBEDDER.embed(text),
        embedding_model=EMBEDDER.model_id,
    )
    return replace(base, **kw)


PLUS_5 = timezone(timedelta(hours=5, minutes=30))
ONE_MOMENT = NOW - timedelta(hours=2, microseconds=5)

VARIANTS: list[dict[str, object]] = [
    {},
    {"content": 'quotes " and \\ backslash, tab\t, é, ✓, 😀 and \u2028'},
    {"source": 'note ✓ "x"', "pinned": True, "access_count": 7, "version": 4},
    {"tier": Tier.SHORT_TERM, "importance": 9.25, "memory_type": "allergy"},
    {"status": Status.SUPERSEDED, "superseded_by": "mem_other"},
    {"status": Status.ARCHIVED, "archived_at": NOW.astimezone(PLUS_5)},
    {"created_at": NOW.replace(microsecond=0), "last_accessed": NOW.replace(microsecond=0)},
    {"created_at": NOW.astimezone(PLUS_5) - timedelta(hours=1)},
    {"importance": 1.0000000000000002},
    {"created_at": NOW - timedelta(days=9), "access_count": 0},  # last accessed later
    {"created_at": ONE_MOMENT, "last_accessed": ONE_MOMENT},  # one object for both
    # types the template does not write itself: encoded the generic way
    {"importance": 7},
    {"importance": np.float64(6.5)},
    {"access_count": True},
]


@pytest.mark.parametrize("variant", VARIANTS, ids=[str(sorted(v)) for v in VARIANTS])
def test_memory_state_json_is_the_generic_encoding(variant: dict[str, object]) -> None:
    m = memory("P-1", "Takes metformin 500 mg twice daily", **variant)
    assert memory_state_json(m) == json.dumps(m.to_public_dict(), sort_keys=True)


@pytest.fixture(params=["sqlite", "cosmos"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "sqlite":
        s: MemoryStore = SQLiteStore(str(tmp_path / "audit.db"))
    else:
        server: CosmosServer = request.getfixturevalue("cosmos_server")
        s = open_store(server.url("bulkaudit", f"t{uuid.uuid4().hex[:12]}"))
    s.bind_embedding_model(EMBEDDER.model_id, EMBEDDER.dimensions)
    yield s
    s.close()


def stored(s: MemoryStore, patient: str) -> list[AuditEntry]:
    """The patient's audit entries, oldest first, without their sequence numbers."""
    rows = s.list_audit(AuditQuery(patient_id=patient, limit=1000))
    return [replace(a, seq=None) for a in reversed(rows)]


def test_inserted_memories_are_audited_as_added(store: MemoryStore) -> None:
    variants = [v for v in VARIANTS if "status" not in v]  # a memory is added active
    mems = [memory("P-1", f"Walked {i} km today", **variants[i % 7]) for i in range(9)]
    at = NOW + timedelta(minutes=5)
    store.apply(ChangeSet(insert_memories=mems, actor="dr. ✓", at=at))
    expected = [
        AuditEntry(at, "dr. ✓", "add", "memory", m.id, "P-1", None, m.to_public_dict())
        for m in mems
    ]
    assert stored(store, "P-1") == expected
    assert {m.id for m in store.list_memories("P-1")} == {m.id for m in mems}


def test_inserts_need_an_actor_and_are_added_active(store: MemoryStore) -> None:
    m = memory("P-1", "Allergic to penicillin")
    with pytest.raises(ValidationError) as err:
        store.apply(ChangeSet(insert_memories=[m]))
    assert err.value.field == "actor"
    archived = memory("P-1", "Takes aspirin", status=Status.ARCHIVED, archived_at=NOW)
    with pytest.raises(ValidationError) as err:  # an archive is an action of its own
        store.apply(ChangeSet(insert_memories=[archived], actor="x", at=NOW))
    assert err.value.field == "insert_memories"
    assert store.list_memories("P-1") == [] and store.list_audit(AuditQuery()) == []
