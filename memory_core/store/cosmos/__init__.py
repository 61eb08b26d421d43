"""Azure Cosmos DB for NoSQL store (the ``azure-cosmos`` SDK): the SQLite store's semantics on a
partitioned document database. Configuration, provisioning, document layout, write ordering and
schema versions are described in docs/cosmos.md. Modules: :mod:`.config` (URL, environment,
credential, container policies), :mod:`.documents` (documents <-> values), :mod:`.emulator`
(local-server workarounds), :mod:`.connection` (client, reads, queries), :mod:`.writes` (the
write planner, accesses, promotions) and :mod:`.store` (:class:`CosmosStore`)."""

from __future__ import annotations

from .config import (
    DEFAULT_CONTAINER,
    DEFAULT_DATABASE,
    EMULATOR_KEY,
    ENTRA_CANNOT_CREATE,
    VECTOR_INDEX_TYPES,
    CosmosSettings,
    cosmos_url_from_env,
    credential_from_env,
    parse_cosmos_url,
)
from .documents import (
    COUNTER_ID,
    META_ID,
    SCHEMA_VERSION,
    SYSTEM_PARTITION,
    memory_doc,
    memory_from_doc,
    supersession_doc,
    supersession_from_doc,
)
from .store import CosmosStore, cosmos_init
from .writes import MAX_BATCH_OPERATIONS

__all__ = [
    "COUNTER_ID",
    "DEFAULT_CONTAINER",
    "DEFAULT_DATABASE",
    "EMULATOR_KEY",
    "ENTRA_CANNOT_CREATE",
    "MAX_BATCH_OPERATIONS",
    "META_ID",
    "SCHEMA_VERSION",
    "SYSTEM_PARTITION",
    "VECTOR_INDEX_TYPES",
    "CosmosSettings",
    "CosmosStore",
    "cosmos_init",
    "cosmos_url_from_env",
    "credential_from_env",
    "memory_doc",
    "memory_from_doc",
    "parse_cosmos_url",
    "supersession_doc",
    "supersession_from_doc",
]
