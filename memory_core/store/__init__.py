"""Stores: ``sqlite:///path.db`` (default), ``sqlite:///:memory:`` and
``cosmos://<host[:port]>/<database>/<container>?...`` (Azure Cosmos DB for NoSQL, see
:mod:`memory_core.store.cosmos`)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigurationError
from .base import AuditQuery, ChangeSet, MemoryStore

__all__ = ["AuditQuery", "ChangeSet", "MemoryStore", "default_store_url", "open_store"]

REPO_ROOT = Path(__file__).resolve().parents[2]


def default_store_url() -> str:
    """``MEMORY_CORE_STORE`` if set; else Cosmos DB when ``COSMOS_ENDPOINT`` is set (with
    ``COSMOS_DATABASE``, ``COSMOS_CONTAINER``; credentials from ``COSMOS_KEY`` or Entra ID);
    else the SQLite file ``MEMORY_CORE_DB`` (default ``data/memory.db`` in the repository,
    git-ignored)."""
    url = os.environ.get("MEMORY_CORE_STORE")
    if url:
        return url
    if os.environ.get("COSMOS_ENDPOINT", "").strip():
        from .cosmos import cosmos_url_from_env

        cosmos = cosmos_url_from_env(os.environ)
        if cosmos:
            return cosmos
    path = os.environ.get("MEMORY_CORE_DB", str(REPO_ROOT / "data" / "memory.db"))
    return f"sqlite:///{path}"


def open_store(url: str | MemoryStore | None = None) -> MemoryStore:
    if isinstance(url, MemoryStore):
        return url
    url = url or default_store_url()
    if not isinstance(url, str):
        raise ConfigurationError(f"store must be a URL string, got {type(url).__name__}")
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
        if not path:
            raise ConfigurationError("sqlite store URL needs a path: sqlite:///path/to/file.db")
        from .sqlite import SQLiteStore

        return SQLiteStore(path)
    if url.startswith("cosmos://"):
        from .cosmos import CosmosStore, parse_cosmos_url

        return CosmosStore(parse_cosmos_url(url))
    raise ConfigurationError(
        f"unknown store URL {url!r}: use sqlite:///path.db, sqlite:///:memory: or "
        "cosmos://<host[:port]>/<database>/<container>"
    )
