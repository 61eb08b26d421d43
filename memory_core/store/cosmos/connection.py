"""The Cosmos DB client of one store: connection, point reads and parameterised queries, the
audit sequence and the id -> partition cache (shared by the store's reads and writes)."""

from __future__ import annotations

import re
import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...errors import ConfigurationError, ValidationError
from . import emulator
from .config import CosmosSettings, credential_from_env, parse_cosmos_url
from .documents import SYSTEM_PARTITION


class CosmosConnection:
    """One container of one account; base of :class:`~.store.CosmosStore`."""

    url: str

    def __init__(
        self,
        settings: CosmosSettings | str,
        *,
        credential: Any = None,
        client: Any = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        import os

        from azure.core.exceptions import AzureError
        from azure.cosmos import CosmosClient

        self.settings = parse_cosmos_url(settings) if isinstance(settings, str) else settings
        self.url = self.settings.url
        self._owns_client = client is None
        if credential is None and client is None:
            credential = credential_from_env(self.settings, os.environ if env is None else env)
        self.key_auth = isinstance(credential, str) if client is None else True
        if not self.settings.verify:
            # the user turned verification off for this host; do not warn on every request
            warnings.filterwarnings(
                "ignore",
                message="Unverified HTTPS request is being made to host "
                f"'{re.escape(self.settings.host)}'",
            )
        if client is None:
            try:
                client = CosmosClient(
                    self.settings.endpoint,
                    credential=credential,
                    connection_verify=self.settings.verify,
                )
            except AzureError as exc:
                raise ConfigurationError(
                    f"cannot connect to Cosmos DB at {self.settings.endpoint}: {exc}"
                ) from exc
        self._client = client
        self._db = client.get_database_client(self.settings.database)
        self._c = self._db.get_container_client(self.settings.container)
        self._seq_lock = threading.Lock()
        self._last_seq = 0
        self._pk_of: dict[str, str] = {}  # memory / supersession id -> patient (partition)
        self._atomic_batch: bool | None = {"on": True, "off": False}.get(self.settings.batch)
        self._distinct = True  # SELECT DISTINCT supported (real accounts; not every emulator)

    def _next_seq(self) -> int:
        """Monotonic in this process, close to the wall clock in microseconds across
        processes (the audit log's order)."""
        with self._seq_lock:
            self._last_seq = max(self._last_seq + 1, time.time_ns() // 1000)
            return self._last_seq

    def _remember(self, docs: Iterable[Mapping[str, Any]]) -> None:
        if len(self._pk_of) > 200_000:
            self._pk_of.clear()
        for d in docs:
            self._pk_of[str(d["id"])] = str(d["patient_id"])

    def _read(self, doc_id: str, pk: str) -> dict[str, Any] | None:
        from azure.cosmos.exceptions import CosmosHttpResponseError

        if self.settings.endpoint in emulator.READ_BY_QUERY:
            rows = self._query(
                "SELECT * FROM c WHERE c.id = @id AND c.patient_id = @pid",
                [("@id", doc_id), ("@pid", pk)],
                pk=pk,
            )
            return dict(rows[0]) if rows else None
        try:
            doc: dict[str, Any] = self._c.read_item(item=doc_id, partition_key=pk)
        except CosmosHttpResponseError as exc:
            if exc.status_code == 404:
                return None
            if emulator.missing_item(exc):
                emulator.READ_BY_QUERY.add(self.settings.endpoint)
                return None
            raise
        return doc

    def _query(
        self,
        sql: str,
        params: Sequence[tuple[str, Any]] = (),
        pk: str | None = None,
        vector: bool = False,
    ) -> list[Any]:
        """A parameterised query inside partition ``pk``, or across partitions when None."""
        from azure.cosmos.exceptions import CosmosHttpResponseError

        parameters: list[dict[str, Any]] = [{"name": n, "value": v} for n, v in params]
        try:
            if pk is None:
                it = self._c.query_items(
                    query=sql, parameters=parameters, enable_cross_partition_query=True
                )
            else:
                it = self._c.query_items(query=sql, parameters=parameters, partition_key=pk)
            return list(it)
        except CosmosHttpResponseError as exc:
            if exc.status_code == 404:  # no container yet: nothing stored
                return []
            if vector and exc.status_code == 400:
                raise ConfigurationError(
                    f"server-side vector search failed at {self.settings.endpoint}: "
                    f"{exc.message.splitlines()[0] if exc.message else exc}. The account needs "
                    "vector search (EnableNoSQLVectorSearch) and the container a vector policy;"
                    " local emulators have none: use vector_search=client"
                ) from exc
            raise

    @staticmethod
    def _check_patient(patient_id: str | None) -> None:
        if patient_id == SYSTEM_PARTITION:
            raise ValidationError(
                "patient_id", f"{SYSTEM_PARTITION!r} is reserved by the Cosmos DB store"
            )

    def close(self) -> None:
        if self._owns_client:
            self._client.close()
