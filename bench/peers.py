"""The peers, side by side with the engine: Mem0 (open-source ``Memory``, FAISS or Qdrant) and
LangGraph's ``InMemoryStore`` with a vector index, all offline and on the engine's embedder.

Everything here is imported lazily: the app's virtualenv has none of these packages, and the
harness reports a peer it cannot build as "not measured" with the reason. The packages are
pinned in ``bench/requirements.txt`` and installed only into ``.venv-bench``.

Offline rules: Mem0's telemetry is switched off (``MEM0_TELEMETRY=False``) before it is
imported; its LLM client gets a dummy key and a closed loopback ``base_url`` (no LLM call is
made with ``infer=False``); the harness installs :func:`bench.harness.guard_network` first, so
any connection or name lookup beyond loopback raises instead of leaving the machine.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from .harness import guard_network

DIMS = 384
CLOSED_LOOPBACK = "http://127.0.0.1:9/v1"  # discard port: nothing listens, nothing leaves


@dataclass(frozen=True)
class PeerMemory:
    content: str
    vector: np.ndarray
    created_at: datetime


def peer_versions() -> dict[str, str]:
    """Installed versions of the peer packages ('' when missing)."""
    from importlib import metadata

    out = {}
    for name in ("mem0ai", "faiss-cpu", "qdrant-client", "langchain-core", "langgraph"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = ""
    return out


def missing_reason() -> str | None:
    """Why the peers cannot run here (None when they can)."""
    missing = [k for k, v in peer_versions().items() if not v]
    if missing:
        return (
            f"not installed in this environment: {', '.join(missing)} (see bench/requirements.txt)"
        )
    return None


def lc_embeddings(embedder: Any, primed: dict[str, np.ndarray] | None = None) -> Any:
    """The engine's embedder as a LangChain ``Embeddings``. Texts found in ``primed`` (bulk
    loading only) are not embedded again; everything else, queries included, is embedded live."""
    from langchain_core.embeddings import Embeddings

    cache = primed if primed is not None else {}

    class EngineEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            todo = [t for t in texts if t not in cache]
            fresh = dict(zip(todo, embedder.embed_batch(todo), strict=True)) if todo else {}
            return [(cache[t] if t in cache else fresh[t]).tolist() for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed(text).tolist()  # type: ignore[no-any-return]

    return EngineEmbeddings()


class Mem0Peer:
    """Mem0's open-source ``Memory`` with the engine's embedder and a local vector store."""

    def __init__(self, store: str, embedder: Any, workdir: str | None = None) -> None:
        guard_network()
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-home-"))
        for name in ("mem0", "mem0.memory.main", "mem0.utils.spacy_models", "mem0.vector_stores"):
            logging.getLogger(name).setLevel(logging.ERROR)
        from mem0 import Memory

        self.store = store
        self.workdir = workdir or tempfile.mkdtemp(prefix=f"mem0-{store}-")
        if store == "faiss":
            vs: dict[str, Any] = {
                "provider": "faiss",
                "config": {
                    "collection_name": "bench",
                    "path": os.path.join(self.workdir, "faiss"),
                    "distance_strategy": "cosine",
                    "embedding_model_dims": DIMS,
                },
            }
        elif store == "qdrant":
            vs = {
                "provider": "qdrant",
                "config": {
                    "collection_name": "bench",
                    "path": ":memory:",
                    "embedding_model_dims": DIMS,
                    "on_disk": False,
                },
            }
        else:
            raise ValueError(f"unknown Mem0 store {store!r}")
        self.memory = Memory.from_config(
            {
                "embedder": {
                    "provider": "langchain",
                    "config": {"model": lc_embeddings(embedder), "embedding_dims": DIMS},
                },
                "vector_store": vs,
                "llm": {
                    "provider": "openai",
                    "config": {
                        "api_key": "sk-bench-dummy-not-a-key",
                        "openai_base_url": CLOSED_LOOPBACK,
                        "model": "gpt-4o-mini",
                    },
                },
                "history_db_path": os.path.join(self.workdir, "history.db"),
            }
        )
        if store == "faiss":
            _faiss_threads(1)

    @property
    def label(self) -> str:
        return f"Mem0 + {'FAISS' if self.store == 'faiss' else 'Qdrant'}"

    def load(self, user_id: str, memories: Sequence[PeerMemory], chunk: int = 2_000) -> None:
        """Bulk-load pre-embedded memories straight into Mem0's vector store, with the payload
        ``Memory.add(..., infer=False)`` writes (its own ``add`` re-saves the FAISS index on
        every call, far too slow to load thousands)."""
        for start in range(0, len(memories), chunk):
            part = memories[start : start + chunk]
            payloads = []
            for m in part:
                created = m.created_at.isoformat()
                payloads.append(
                    {
                        "user_id": user_id,
                        "role": "user",
                        "data": m.content,
                        "hash": hashlib.md5(m.content.encode()).hexdigest(),
                        "created_at": created,
                        "updated_at": created,
                        "text_lemmatized": m.content,
                    }
                )
            self.memory.vector_store.insert(
                vectors=[m.vector.tolist() for m in part],
                payloads=payloads,
                ids=[_uuid(user_id, start + i) for i in range(len(part))],
            )

    def search(self, user_id: str, query: str) -> list[str]:
        found = self.memory.search(query, filters={"user_id": user_id}, top_k=5)
        return [r["memory"] for r in found["results"]]

    def add(self, user_id: str, content: str) -> None:
        self.memory.add(content, user_id=user_id, infer=False)


class LangGraphPeer:
    """LangGraph's ``InMemoryStore`` with a vector index on the engine's embedder."""

    label = "LangGraph InMemoryStore"

    def __init__(self, embedder: Any, primed: dict[str, np.ndarray] | None = None) -> None:
        guard_network()
        from langgraph.store.memory import InMemoryStore

        self.store = InMemoryStore(
            index={"dims": DIMS, "embed": lc_embeddings(embedder, primed), "fields": ["text"]}
        )

    def load(self, user_id: str, memories: Sequence[PeerMemory]) -> None:
        """``batch`` of puts; a text repeated within one batch trips InMemoryStore (one
        embedding per distinct text, one index entry per put), so repeats go in later rounds."""
        from langgraph.store.base import PutOp

        rounds: list[list[PutOp]] = []
        seen: dict[str, int] = {}
        for i, m in enumerate(memories):
            r = seen.get(m.content, 0)
            seen[m.content] = r + 1
            if r == len(rounds):
                rounds.append([])
            rounds[r].append(
                PutOp(
                    ("memories", user_id),
                    f"m{i}",
                    {"text": m.content, "created_at": m.created_at.isoformat()},
                )
            )
        for ops in rounds:
            self.store.batch(ops)

    def search(self, user_id: str, query: str) -> list[str]:
        return [
            it.value["text"]
            for it in self.store.search(("memories", user_id), query=query, limit=5)
        ]


def _uuid(user_id: str, i: int) -> str:
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{user_id}/{i}/{time.monotonic_ns()}"))


def _faiss_threads(n: int) -> None:
    try:
        import faiss

        faiss.omp_set_num_threads(n)
    except Exception:  # pragma: no cover - faiss without OpenMP controls
        pass


def faiss_threads() -> int | None:
    try:
        import faiss

        return int(faiss.omp_get_max_threads())
    except Exception:
        return None
