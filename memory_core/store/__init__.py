"""Stores: ``sqlite:///path.db[?busy_timeout=SECONDS]`` (default), ``sqlite:///:memory:`` and
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


def _control_characters(url: str) -> None:
    """Refuse a URL holding a control character (C0, DEL, C1) or a bidi/line separator."""
    for i, ch in enumerate(url):
        o = ord(ch)
        if o < 0x20 or 0x7F <= o < 0xA0 or ch in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e":
            raise ConfigurationError(
                f"store URL {url!r} holds a control character (U+{o:04X} at {i}); refused"
            )


def _sqlite(url: str, create: bool = True) -> MemoryStore:
    """``sqlite:///path[?busy_timeout=SECONDS]``."""
    from urllib.parse import parse_qs

    from .sqlite import DEFAULT_BUSY_TIMEOUT, SQLiteStore

    path, _, query = url[len("sqlite:///") :].partition("?")
    if not path:
        raise ConfigurationError("sqlite store URL needs a path: sqlite:///path/to/file.db")
    busy = DEFAULT_BUSY_TIMEOUT
    params = parse_qs(query, keep_blank_values=True) if query else {}
    for key, values in params.items():
        if key != "busy_timeout":
            raise ConfigurationError(
                f"store URL {url!r}: unknown parameter {key!r} (sqlite takes busy_timeout)"
            )
        try:
            busy = float(values[-1])
        except ValueError:
            busy = -1.0
        if not (0.0 <= busy <= 3600.0):
            raise ConfigurationError(
                f"store URL {url!r}: busy_timeout must be seconds from 0 to 3600, "
                f"got {values[-1]!r}"
            )
    return SQLiteStore(path, busy_timeout=busy, create=create)


def open_store(url: str | MemoryStore | None = None, *, create: bool = True) -> MemoryStore:
    """The store at ``url`` (default: :func:`default_store_url`). ``create=False``: an
    existing store only -- a missing one is a :class:`~memory_core.errors.StoreNotFoundError`
    and nothing is created (what a read asks for). A Cosmos DB container is never created
    here (``cosmos-init`` does)."""
    if isinstance(url, MemoryStore):
        return url
    url = url or default_store_url()
    if not isinstance(url, str):
        raise ConfigurationError(f"store must be a URL string, got {type(url).__name__}")
    _control_characters(url)
    if url.startswith("sqlite:///"):
        return _sqlite(url, create)
    if url.startswith("cosmos://"):
        from .cosmos import CosmosStore, parse_cosmos_url

        return CosmosStore(parse_cosmos_url(url))
    raise ConfigurationError(
        f"unknown store URL {url!r}: use sqlite:///path.db, sqlite:///:memory: or "
        "cosmos://<host[:port]>/<database>/<container>"
    )
