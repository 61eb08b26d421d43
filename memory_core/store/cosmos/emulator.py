"""Workarounds for local Cosmos-protocol servers (``@vercel/cosmosdb-server``, the emulators):
what they answer differently from a real account, detected at run time, never assumed."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from .documents import SYSTEM_PARTITION


def missing_item(exc: Any) -> bool:
    """``@vercel/cosmosdb-server`` answers a point read of a missing item with a 500 from a
    JavaScript TypeError instead of a 404 (after the SDK's retries of a 500); nothing else
    answers so."""
    return bool(exc.status_code == 500 and "Cannot read properties of undefined" in str(exc))


#: Endpoints seen answering a missing point read with that 500: point reads there become
#: single-partition queries by id (still with ``partition_key=``), which answer "not found"
#: at once instead of after the SDK's retries.
READ_BY_QUERY: set[str] = set()


def batch_is_atomic(container: Any, read: Callable[[str, str], dict[str, Any] | None]) -> bool:
    """Whether the server applies a transactional batch all-or-nothing, probed with [create a
    probe, read a missing item]: a real account rejects the whole batch; a server without
    transactional batch keeps the probe (or refuses batches). ``read`` is the store's point
    read; the probe is deleted again."""
    from azure.cosmos.exceptions import CosmosBatchOperationError, CosmosHttpResponseError

    probe = f"__batch_probe_{uuid.uuid4().hex}"
    rejected_whole = False
    try:
        container.execute_item_batch(
            [
                ("create", ({"id": probe, "patient_id": SYSTEM_PARTITION, "doc_type": "probe"},)),
                ("read", (f"__missing_{uuid.uuid4().hex}",)),
            ],
            partition_key=SYSTEM_PARTITION,
        )
    except CosmosBatchOperationError:
        rejected_whole = True
    except CosmosHttpResponseError:
        rejected_whole = False
    kept = read(probe, SYSTEM_PARTITION) is not None
    if kept:
        container.delete_item(item=probe, partition_key=SYSTEM_PARTITION)
    return rejected_whole and not kept
