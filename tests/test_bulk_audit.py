"""The audit entries of inserted memories written by the store (``ChangeSet.insert_audit``, what
a bulk add uses): the same stored entries as listing them one by one, on both stores, and the
after-state text the SQLite store writes straight from the memory is the generic encoding."""

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
from memory_core.store.base import AuditQuery, ChangeSet, InsertAudit, MemoryStore
from memory_core.store.codec import memory_state_json
from memory_core.store.sqlite import SQLiteStore
from memory_core.values import AuditEntry, Memory, Status, Tier
from tests.conftest import NOW
from tests.cosmos_server import CosmosServer

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
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


def test_insert_audit_stores_the_entries_it_stands_for(store: MemoryStore) -> None:
    mems = [memory("P-1", f"Walked {i} km today", **VARIANTS[i % 7]) for i in range(9)]
    at = NOW - timedelta(minutes=5)
    first = AuditEntry(at, "dr. a", "note", "memory", mems[0].id, "P-1", None, {"n": 1})
    changes = ChangeSet(
        insert_memories=mems, audit=[first], insert_audit=InsertAudit(at, "dr. ✓", "add")
    )
    expected = [first] + [
        AuditEntry(at, "dr. ✓", "add", "memory", m.id, "P-1", None, m.to_public_dict())
        for m in mems
    ]
    assert changes.audit_entries() == expected
    store.apply(changes)
    assert stored(store, "P-1") == expected
    assert {m.id for m in store.list_memories("P-1")} == {m.id for m in mems}


def test_insert_audit_reads_back_like_listed_entries(store: MemoryStore) -> None:
    """One batch audited by insert_audit, a copy of it (other patient) by listed entries: the
    stored entries read back the same."""
    at = NOW - timedelta(minutes=1)
    mems = [memory("P-1", f"Slept {i} hours", **v) for i, v in enumerate(VARIANTS[:9])]
    twins = [replace(m, id=f"mem_{uuid.uuid4().hex}", patient_id="P-2") for m in mems]
    store.apply(ChangeSet(insert_memories=mems, insert_audit=InsertAudit(at, "bench", "add")))
    listed = [
        AuditEntry(at, "bench", "add", "memory", m.id, "P-2", None, m.to_public_dict())
        for m in twins
    ]
    store.apply(ChangeSet(insert_memories=twins, audit=listed))

    def without_ids(entries: list[AuditEntry]) -> list[object]:
        out: list[object] = []
        for a in entries:
            after = dict(a.after or {})
            after.pop("id")
            after.pop("patient_id")
            out.append((a.at, a.actor, a.action, a.entity, a.before, after))
        return out

    assert without_ids(stored(store, "P-1")) == without_ids(stored(store, "P-2"))


def test_inserts_without_their_audit_are_refused(store: MemoryStore) -> None:
    m = memory("P-1", "Allergic to penicillin")
    with pytest.raises(ValidationError) as err:
        store.apply(ChangeSet(insert_memories=[m]))
    assert err.value.field == "audit" and m.id in err.value.message
    assert store.list_memories("P-1") == []
    # insert_audit audits the inserts only: an update beside them still needs its entry
    store.apply(ChangeSet(insert_memories=[m], insert_audit=InsertAudit(NOW, "x", "add")))
    other = memory("P-1", "Takes aspirin")
    with pytest.raises(ValidationError):
        store.apply(
            ChangeSet(
                insert_memories=[other],
                update_memories=[(replace(m, importance=8.0), 1)],
                insert_audit=InsertAudit(NOW, "x", "add"),
            )
        )
    assert [x.id for x in store.list_memories("P-1")] == [m.id]
