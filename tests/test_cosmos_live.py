"""Against a real Azure Cosmos DB for NoSQL account: runs only when ``COSMOS_ENDPOINT`` is set
(and ``COSMOS_KEY``, to create and drop a scratch container), skipped otherwise.

Covers what the local Cosmos-protocol server cannot: server-side vector search order
(``VectorDistance`` inside one patient's partition), the transactional-batch path and the
vector policy the service keeps. The account needs vector search enabled
(``EnableNoSQLVectorSearch``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.store.base import AuditQuery
from memory_core.store.cosmos import CosmosStore, cosmos_url_from_env
from tests.conftest import NOW, Clock

pytestmark = [
    pytest.mark.skipif(
        not os.environ.get("COSMOS_ENDPOINT"),
        reason="COSMOS_ENDPOINT is not set: no real Cosmos DB account to test against",
    ),
    pytest.mark.skipif(
        bool(os.environ.get("COSMOS_ENDPOINT")) and not os.environ.get("COSMOS_KEY"),
        reason="COSMOS_KEY is not set: creating the scratch container needs key auth",
    ),
]


@pytest.fixture
def live_store() -> Iterator[CosmosStore]:
    env = {
        **os.environ,
        "COSMOS_CONTAINER": f"memcore_live_{uuid.uuid4().hex[:10]}",
        "COSMOS_VECTOR_SEARCH": "server",
    }
    url = cosmos_url_from_env(env)
    assert url is not None
    store = CosmosStore(url)
    try:
        yield store
    finally:
        try:
            store._db.delete_container(store.settings.container)
        finally:
            store.close()


def test_server_side_vector_search_order(live_store: CosmosStore) -> None:
    embedder = HashingEmbedder()
    engine = mc.MemoryEngine(live_store, embedder, clock=Clock())
    texts = [
        "Patient takes metformin 500 mg twice daily",
        "Patient walks every morning before breakfast",
        "Patient is allergic to latex gloves",
        "Patient prefers written discharge instructions",
        "Metformin was raised to 1000 mg in the evening",
    ]
    ids = [engine.add_memory("P-live", t, "observation").memory.id for t in texts]
    engine.add_memory("P-other", texts[0], "observation")  # another partition: never returned
    archived = engine.add_memory("P-live", "Metformin twice daily, old note", "observation")
    engine.archive(archived.memory.id, "dr-a")
    q = embedder.embed("metformin twice daily")
    got = live_store.vector_candidates("P-live", q, 3)
    assert got is not None and len(got) == 3
    cos = {i: float(np.dot(q, embedder.embed(t))) for i, t in zip(ids, texts, strict=True)}
    expected = sorted(ids, key=lambda i: -cos[i])[:3]
    assert [i for i, _ in got] == expected
    for mid, sim in got:
        assert sim == pytest.approx(cos[mid], abs=2e-3)  # cosine: higher = more similar
    props = live_store._c.read()
    entry = props["vectorEmbeddingPolicy"]["vectorEmbeddings"][0]
    assert (entry["path"], entry["dimensions"]) == ("/embedding", embedder.dimensions)


def test_transactional_batch_and_atomic_counters(live_store: CosmosStore) -> None:
    engine = mc.MemoryEngine(live_store, HashingEmbedder(), clock=Clock())
    assert live_store._batch_is_atomic() is True
    m = engine.add_memory("P-live", "Patient checks glucose daily", "observation").memory
    live_store.record_access("P-live", [m.id], NOW + timedelta(hours=1))
    engine.pin(m.id, "dr-a")
    got = engine.get(m.id)
    assert (got.pinned, got.version, got.access_count) == (True, 2, 1)
    with pytest.raises(mc.ConflictError):
        engine.set_importance(m.id, 9, "dr-b", expected_version=1)
    assert [a.action for a in live_store.list_audit(AuditQuery(patient_id="P-live"))] == [
        "pin",
        "add",
    ]
