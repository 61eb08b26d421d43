"""The Cosmos DB store: the container and its embedding model, and the reads (the writes are
:mod:`.writes`; configuration :mod:`.config`; documents :mod:`.documents`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import ConfigurationError, EmbeddingMismatchError, NotFoundError
from ...values import AuditEntry, InjectionRecord, Memory, Supersession
from ..base import F32, AuditQuery, MemoryStore, Usage
from ..codec import check_embedding_binding, seconds
from .config import (
    ENTRA_CANNOT_CREATE,
    check_dimensions,
    cosmos_url_from_env,
    indexing_policy,
    vector_policy,
)
from .documents import (
    COUNTER_ID,
    META_ID,
    SYSTEM_PARTITION,
    audit_from_doc,
    injection_from_doc,
    memories_as_read,
    meta_doc,
    supersession_from_doc,
    supersession_order,
)
from .writes import CosmosWrites


class CosmosStore(CosmosWrites, MemoryStore):
    """Memories, supersessions, usage, audit and policy in one Cosmos DB container."""

    # --- container and embedding model -------------------------------------------------------
    def _container_properties(self) -> dict[str, Any] | None:
        from azure.cosmos.exceptions import CosmosHttpResponseError

        try:
            props: dict[str, Any] = self._c.read()
        except CosmosHttpResponseError as exc:
            if exc.status_code == 404:
                return None
            raise
        return props

    def ensure_container(self, dimensions: int) -> bool:
        """Create the database and the container (vector policy for ``dimensions``) if missing;
        True when the container was created. Needs key auth (see ENTRA_CANNOT_CREATE)."""
        from azure.cosmos import PartitionKey
        from azure.cosmos.exceptions import CosmosHttpResponseError

        check_dimensions(self.settings.vector_index, dimensions)
        if self._container_properties() is not None:
            return False
        try:
            db = self._client.create_database_if_not_exists(id=self.settings.database)
            db.create_container_if_not_exists(
                id=self.settings.container,
                partition_key=PartitionKey(path="/patient_id"),
                indexing_policy=indexing_policy(self.settings.vector_index),
                vector_embedding_policy=vector_policy(dimensions),
                default_ttl=-1,
            )
        except CosmosHttpResponseError as exc:
            if exc.status_code in (401, 403):
                raise ConfigurationError(
                    f"cannot create {self.settings.database}/{self.settings.container}: "
                    f"{ENTRA_CANNOT_CREATE} ({exc.status_code})"
                ) from exc
            raise
        return True

    def _check_vector_policy(self, props: Mapping[str, Any], model_id: str, dims: int) -> None:
        policy = props.get("vectorEmbeddingPolicy") or {}
        for entry in policy.get("vectorEmbeddings") or []:
            if entry.get("path") != "/embedding":
                continue
            have = int(entry.get("dimensions", dims))
            func = str(entry.get("distanceFunction", "cosine")).lower()
            if have != dims or func != "cosine":
                raise EmbeddingMismatchError(
                    f"container {self.settings.container} has a vector policy on /embedding of "
                    f"{have} dimensions ({func}); the engine's embedder is {model_id} ({dims} "
                    "dimensions, cosine). Vector policies cannot change: use the same embedder "
                    "or a new container."
                )

    def embedding_model(self) -> tuple[str, int] | None:
        doc = self._read(META_ID, SYSTEM_PARTITION)
        if doc is None:
            return None
        return str(doc["model_id"]), int(doc["dimensions"])

    def bind_embedding_model(self, model_id: str, dimensions: int) -> None:
        from azure.cosmos.exceptions import CosmosHttpResponseError

        self.ensure_container(dimensions)
        props = self._container_properties()
        if props is not None:
            self._check_vector_policy(props, model_id, dimensions)
        doc = self._read(META_ID, SYSTEM_PARTITION)
        if doc is None:
            try:
                self._c.create_item(meta_doc(model_id, dimensions))
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code != 409:
                    raise
                doc = self._read(META_ID, SYSTEM_PARTITION)
        if doc is not None:
            check_embedding_binding(
                self.url, (str(doc["model_id"]), int(doc["dimensions"])), model_id, dimensions
            )

    def initialize(self, model_id: str, dimensions: int) -> str:
        """``cosmos-init``: create database and container and record the embedding model."""
        if not self.key_auth:
            raise ConfigurationError(
                f"cosmos-init needs key auth (COSMOS_KEY). {ENTRA_CANNOT_CREATE}"
            )
        created = self.ensure_container(dimensions)
        self.bind_embedding_model(model_id, dimensions)
        what = "created" if created else "already existed; checked"
        return (
            f"container {self.settings.database}/{self.settings.container} at "
            f"{self.settings.endpoint} {what} (partition key /patient_id, {dimensions}-dimension "
            f"cosine vector policy on /embedding, {self.settings.vector_index} index, "
            f"embedding model {model_id})"
        )

    # --- reads -------------------------------------------------------------------------------
    def _find(self, doc_type: str, doc_id: str) -> dict[str, Any] | None:
        pk = self._pk_of.get(doc_id)
        if pk is not None:
            doc = self._read(doc_id, pk)
            if doc is not None and doc.get("doc_type") == doc_type:
                return doc
        rows = self._query(
            "SELECT * FROM c WHERE c.id = @id AND c.doc_type = @t",
            [("@id", doc_id), ("@t", doc_type)],
        )
        return rows[0] if rows else None

    def get_memory(self, memory_id: str) -> Memory:
        doc = self._find("memory", memory_id)
        if doc is None:
            raise NotFoundError("memory", memory_id)
        return self._memories_from([doc])[0]

    def get_memories(self, memory_ids: Sequence[str]) -> list[Memory]:
        if not memory_ids:
            return []
        wanted = list(dict.fromkeys(memory_ids))
        known: dict[str, list[str]] = {}
        unknown: list[str] = []
        for mid in wanted:
            pk = self._pk_of.get(mid)
            if pk is None:
                unknown.append(mid)
            else:
                known.setdefault(pk, []).append(mid)
        docs: list[dict[str, Any]] = []
        sql = "SELECT * FROM c WHERE c.doc_type = 'memory' AND ARRAY_CONTAINS(@ids, c.id)"
        for pk, ids in known.items():
            found = self._query(
                sql + " AND c.patient_id = @pid", [("@ids", ids), ("@pid", pk)], pk=pk
            )
            docs += found
            unknown += sorted(set(ids) - {str(d["id"]) for d in found})
        for k in range(0, len(unknown), 500):
            docs += self._query(sql, [("@ids", unknown[k : k + 500])])
        by_id = {m.id: m for m in self._memories_from(docs)}
        return [by_id[i] for i in memory_ids if i in by_id]

    def _by_type(self, patient_id: str, fields: str, *types: str) -> dict[str, list[Any]]:
        """The patient's documents of ``types`` (projected to ``fields``), by doc_type."""
        rows = self._query(
            f"SELECT {fields} FROM c WHERE c.patient_id = @pid AND ARRAY_CONTAINS(@types, "
            "c.doc_type)",
            [("@pid", patient_id), ("@types", list(types))],
            pk=patient_id,
        )
        out: dict[str, list[Any]] = {t: [] for t in types}
        for r in rows:
            out[str(r["doc_type"])].append(r)
        return out

    def list_memories(self, patient_id: str) -> list[Memory]:
        docs = self._by_type(patient_id, "*", "memory", "supersession")
        mems = docs["memory"]
        self._remember(mems + docs["supersession"])
        mems.sort(key=lambda d: (int(d["created_us"]), int(d.get("seq", 0)), str(d["id"])))
        return memories_as_read(mems, docs["supersession"])

    def list_patients(self) -> list[str]:
        from azure.cosmos.exceptions import CosmosHttpResponseError

        if self._distinct:
            try:
                rows = self._query(
                    "SELECT DISTINCT VALUE c.patient_id FROM c WHERE c.doc_type = 'memory'"
                )
                return sorted({str(r) for r in rows})
            except CosmosHttpResponseError as exc:
                if exc.status_code != 400:
                    raise
                self._distinct = False  # an emulator without DISTINCT: project and dedupe
        rows = self._query("SELECT VALUE c.patient_id FROM c WHERE c.doc_type = 'memory'")
        return sorted({str(r) for r in rows})

    def versions(self, patient_id: str) -> tuple[int, int]:
        doc = self._read(COUNTER_ID, patient_id)
        return (int(doc["content"]), int(doc["usage"])) if doc else (0, 0)

    def usage(self, patient_id: str) -> Usage:
        docs = self._by_type(
            patient_id,
            "c.id, c.doc_type, c.access_count, c.last_accessed_us, c.sessions",
            "memory",
            "usage",
        )
        mems = docs["memory"]
        sessions = sorted(int(t) for r in docs["usage"] for t in r.get("sessions") or [])
        return Usage(
            ids=[str(r["id"]) for r in mems],
            access_count=np.array([r["access_count"] for r in mems], dtype=np.float64),
            last_accessed_s=seconds([r["last_accessed_us"] for r in mems]),
            sessions_s=seconds(sessions),
        )

    def _events(self, patient_id: str) -> dict[str, list[int]]:
        rows = self._query(
            "SELECT c.events FROM c WHERE c.patient_id = @pid AND c.doc_type = 'usage'",
            [("@pid", patient_id)],
            pk=patient_id,
        )
        out: dict[str, list[int]] = {}
        for r in rows:
            for mid, at in r.get("events") or []:
                out.setdefault(str(mid), []).append(int(at))
        for v in out.values():
            v.sort()
        return out

    def access_events(self, patient_id: str) -> dict[str, npt.NDArray[np.float64]]:
        return {k: seconds(v) for k, v in self._events(patient_id).items()}

    def vector_candidates(
        self, patient_id: str, query: F32, k: int
    ) -> list[tuple[str, float]] | None:
        """``vector_search=server``: the ``k`` active memories nearest to ``query`` by Cosmos
        ``VectorDistance`` (cosine similarity, higher = more similar), inside the patient's
        partition. ``client``: None (the engine scores in numpy)."""
        if self.settings.vector_search != "server":
            return None
        rows = self._query(
            "SELECT TOP @k c.id, VectorDistance(c.embedding, @q) AS similarity FROM c "
            "WHERE c.patient_id = @pid AND c.doc_type = 'memory' AND c.status = 'active' "
            "ORDER BY VectorDistance(c.embedding, @q)",
            [
                ("@k", int(k)),
                ("@q", np.asarray(query, dtype=np.float32).tolist()),
                ("@pid", patient_id),
            ],
            pk=patient_id,
            vector=True,
        )
        return [(str(r["id"]), float(r["similarity"])) for r in rows]

    def get_supersession(self, supersession_id: str) -> Supersession:
        doc = self._find("supersession", supersession_id)
        if doc is None:
            raise NotFoundError("supersession", supersession_id)
        self._remember([doc])
        return supersession_from_doc(doc)

    def list_supersessions(
        self, patient_id: str | None = None, state: str | None = None
    ) -> list[Supersession]:
        sql = "SELECT * FROM c WHERE c.doc_type = 'supersession'"
        params: list[tuple[str, Any]] = []
        if patient_id is not None:
            sql += " AND c.patient_id = @pid"
            params.append(("@pid", patient_id))
        if state is not None:
            sql += " AND c.state = @state"
            params.append(("@state", state))
        rows = self._query(sql, params, pk=patient_id)
        self._remember(rows)
        return [supersession_from_doc(d) for d in sorted(rows, key=supersession_order)]

    def list_injections(self, patient_id: str, limit: int = 100) -> list[InjectionRecord]:
        if limit <= 0:
            return []
        rows = self._query(
            "SELECT TOP @n * FROM c WHERE c.patient_id = @pid AND c.doc_type = 'injection' "
            "ORDER BY c.at_us DESC",
            [("@n", int(limit)), ("@pid", patient_id)],
            pk=patient_id,
        )
        return [injection_from_doc(r) for r in rows]

    def list_audit(self, query: AuditQuery) -> list[AuditEntry]:
        if query.limit <= 0:
            return []
        sql = "SELECT TOP @n * FROM c WHERE c.doc_type = 'audit'"
        params: list[tuple[str, Any]] = [("@n", int(query.limit))]
        if query.patient_id is not None:
            sql += " AND c.patient_id = @pid"
            params.append(("@pid", query.patient_id))
        for name, value in (
            ("actor", query.actor),
            ("action", query.action),
            ("entity_id", query.entity_id),
        ):
            if value is not None:
                sql += f" AND c.{name} = @{name}"
                params.append((f"@{name}", value))
        sql += " ORDER BY c.seq DESC"
        rows = self._query(sql, params, pk=query.patient_id)
        rows.sort(key=lambda r: -int(r["seq"]))  # cross-partition pages merge out of order
        return [audit_from_doc(r) for r in rows[: query.limit]]

    def load_policy(self) -> dict[str, Any] | None:
        return self._saved_policy()

    def policy_version(self) -> int:
        rows = self._query(
            "SELECT TOP 1 c.seq FROM c WHERE c.patient_id = @pid AND c.doc_type = 'policy' "
            "ORDER BY c.seq DESC",
            [("@pid", SYSTEM_PARTITION)],
            pk=SYSTEM_PARTITION,
        )
        return int(rows[0]["seq"]) if rows else 0

    def count_memories(self) -> int:
        rows = self._query("SELECT VALUE COUNT(1) FROM c WHERE c.doc_type = 'memory'")
        return int(sum(int(r) for r in rows))


def cosmos_init(url: str | None, model_id: str, dimensions: int) -> str:
    """Create the database and container for ``url`` (default: the environment's); returns
    what was done. Used by ``python -m memory_core cosmos-init``."""
    import os

    url = url or cosmos_url_from_env(os.environ)
    if not url or not url.startswith("cosmos://"):
        raise ConfigurationError(
            "cosmos-init needs a cosmos:// store URL (--store) or COSMOS_ENDPOINT"
        )
    store = CosmosStore(url)
    try:
        return store.initialize(model_id, dimensions)
    finally:
        store.close()
