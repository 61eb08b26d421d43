"""Azure Cosmos DB for NoSQL store (the ``azure-cosmos`` SDK): the SQLite store's semantics on a
partitioned document database, for deployments that outgrow one machine.

Configuration
-------------
A store URL::

    cosmos://<host[:port]>/<database>/<container>[?option=value&...]

``host`` is the account host (``myaccount.documents.azure.com``; port 443 unless given) or a
local Cosmos-protocol server (``127.0.0.1:8081``); the endpoint is ``https://<host>:<port>/``.
Options:

``vector_search=server|client``
    ``server`` (default on a real account) lets Cosmos rank a patient's memories with
    ``VectorDistance`` (:meth:`CosmosStore.vector_candidates`); ``client`` (default on a
    loopback host, whose emulators have no vector search) returns ``None`` there, so the
    engine scores the patient's embeddings in numpy.
``vector_index=quantizedFlat|diskANN|flat``
    the container's vector index (``quantizedFlat`` by default), used when the container is
    created; ``flat`` allows at most 505 dimensions.
``verify=true|false``
    TLS certificate verification; default ``true``, except ``false`` on a loopback host
    (local emulators serve a self-signed certificate).
``batch=auto|on|off``
    use transactional batches (``execute_item_batch``) for single-partition writes; ``auto``
    (default) probes once whether the server really applies a batch all-or-nothing.

Secrets never go in the URL: ``COSMOS_KEY`` (an account key) when set, else the public,
well-known emulator key for a loopback host, else Entra ID through ``azure-identity``'s
``DefaultAzureCredential`` (managed identity, ``az login``, environment credentials...).

Environment: with ``COSMOS_ENDPOINT`` (``https://myaccount.documents.azure.com:443/``) set and
``MEMORY_CORE_STORE`` unset, :func:`memory_core.store.default_store_url` builds the URL from
``COSMOS_ENDPOINT``, ``COSMOS_DATABASE`` (default ``memory_core``), ``COSMOS_CONTAINER``
(default ``memories``) and optional ``COSMOS_VECTOR_SEARCH``, ``COSMOS_VECTOR_INDEX``,
``COSMOS_VERIFY``.

Provisioning
------------
The vector policy needs the embedder's dimensions and is fixed at creation, so the container is
created lazily by :meth:`CosmosStore.bind_embedding_model` (the engine's first call) or up front
by ``python -m memory_core cosmos-init``: partition key ``/patient_id``; a
``vectorEmbeddingPolicy`` on ``/embedding`` (float32, the embedder's dimensions, cosine) with a
vector index; ``/embedding/*`` (and the bulky audit/injection bodies) excluded from the range
index; ``default_ttl=-1`` (item ``ttl`` works, nothing expires by default). Creating databases
and containers needs key auth (or the control plane): Entra-ID *data-plane* roles such as
"Cosmos DB Built-in Data Contributor" can read and write items but cannot create containers.
An existing container's vector policy is compared with the embedder (EmbeddingMismatchError on
a mismatch); because emulators may not keep or return vector policies, the model id and
dimensions are also stored in a meta document and checked there.

Document layout (one container, a ``doc_type`` field)
-----------------------------------------------------
Everything lives in one container so that one patient's records share one logical partition
(single-partition queries, transactional batches across memory, supersession, audit and
counter):

- ``memory``: id = memory id, every Memory field, timestamps as ISO strings and integer
  microseconds (``*_us``, for ordering), the embedding as a list of floats, ``version`` (the
  engine's optimistic-concurrency counter) and ``seq`` (insertion order);
- ``supersession``: id = supersession id, every field, ``version``;
- ``audit``: id ``aud_<seq>_<random>``, append-only (only ever created, never replaced or
  deleted); ``seq`` orders the log; entries without a patient live in ``__system__``;
- ``usage``: the access events ``[[memory id, at_us], ...]`` and session moments of one
  ``record_access`` call (or one import);
- ``injection``: what an agent was told;
- ``counter`` (id ``__versions__``): the patient's content and usage versions;
- ``policy`` (partition ``__system__``, ordered by ``seq``) and ``meta`` (partition
  ``__system__``, id ``__embedding_model__``).

Partition ``__system__`` is reserved (refused as a patient id). Every point read passes
``partition_key=``; queries use ``@name`` parameters and stay in one patient's partition, except
the few cross-patient reads, which pass ``enable_cross_partition_query=True``:
``list_patients``, ``count_memories``, ``list_audit``/``list_supersessions`` without a patient,
and lookups of a memory or supersession by id alone when this process has not seen its patient
yet (an id -> patient cache makes the later ones point reads).

Writes and atomicity
--------------------
- ``record_access``: ``patch_item`` with ``incr`` on ``/access_count`` and ``set`` on
  ``/last_accessed_us`` guarded by ``filter_predicate`` (only when newer, so last_accessed =
  max(stored, at)); concurrent agents never lose a count. Promotion is a patch guarded by
  ``tier = 'short_term'`` so exactly one agent promotes and audits. Per memory it is atomic;
  the call as a whole is not (see below).
- ``apply``: every update or delete is a read-modify-write with the stored ``_etag`` and
  ``match_condition=IfNotModified``; the engine's expected ``version`` is checked first
  (ConflictError, nothing written). A 412 (someone patched the document meanwhile, e.g. an
  access) is retried once after re-reading if the version still matches, else ConflictError.
- When the server really supports transactional batches and a change set touches one partition
  with at most 100 operations (the usual case: one patient), it is applied with
  ``execute_item_batch``: all or nothing.
- Otherwise (several patients, more than 100 operations, or a server without transactional
  batch, such as ``@vercel/cosmosdb-server``) the writes go in an order that a crash cannot
  turn into a lie: supersession records first, then memory inserts, updates and deletes, then
  usage, policy and audit documents, and the version counters last. A ConflictError in the data
  writes undoes the writes already made (best effort). Readers treat a memory as superseded
  only if a supersession record in effect (auto/confirmed) holds it, and an active memory held
  by such a record as superseded, so a crash between "record" and "demotion" is invisible and
  the next write of that memory (or a rerun) stores the repaired status. Caches of other
  processes refresh at the next version bump. The audit entries of a change set written this
  way can be lost by a crash after its data writes (never the reverse).
"""

from __future__ import annotations

import ipaddress
import re
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import numpy.typing as npt

from ..errors import (
    ConfigurationError,
    ConflictError,
    EmbeddingMismatchError,
    NotFoundError,
    ValidationError,
)
from ..values import (
    IN_EFFECT,
    AuditEntry,
    InjectionRecord,
    Memory,
    Status,
    Supersession,
    SupersessionState,
    Tier,
)
from .base import F32, AuditQuery, ChangeSet, MemoryStore, Usage
from .sqlite import from_us, to_us

#: The Cosmos DB emulator's published key (not a secret): local Cosmos-protocol servers accept it.
EMULATOR_KEY = (
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)
SYSTEM_PARTITION = "__system__"
COUNTER_ID = "__versions__"
META_ID = "__embedding_model__"
DEFAULT_DATABASE = "memory_core"
DEFAULT_CONTAINER = "memories"
VECTOR_INDEX_TYPES = {"quantizedflat": "quantizedFlat", "diskann": "diskANN", "flat": "flat"}
MAX_BATCH_OPERATIONS = 100
ENTRA_CANNOT_CREATE = (
    "Entra-ID data-plane roles (e.g. 'Cosmos DB Built-in Data Contributor') can read and write "
    "items but cannot create databases or containers: run `python -m memory_core cosmos-init` "
    "with an account key (COSMOS_KEY), or create them through the control plane (portal, "
    "az cosmosdb sql container create, Bicep) with the vector policy documented in "
    "memory_core/store/cosmos.py"
)
_NAME = re.compile(r"[^/\\?#\s]{1,255}")
_SYSTEM_FIELDS = ("_rid", "_self", "_etag", "_attachments", "_ts", "_lsn")
_EVENTS_PER_DOC = 2000

_MEM_ENGINE_FIELDS = (
    "memory_type",
    "content",
    "importance",
    "pinned",
    "tier",
    "status",
    "superseded_by",
    "archived_at",
    "archived_us",
    "source",
    "version",
)
_SUP_ENGINE_FIELDS = (
    "state",
    "effective_at",
    "effective_us",
    "ended_at",
    "ended_us",
    "decided_by",
    "decided_at",
    "decided_us",
    "version",
)


# --- configuration ------------------------------------------------------------------------------


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _flag(value: str, name: str) -> bool:
    v = value.strip().lower()
    if v in {"1", "true", "yes", "on"}:
        return True
    if v in {"0", "false", "no", "off"}:
        return False
    raise ConfigurationError(f"cosmos option {name}={value!r}: use true or false")


@dataclass(frozen=True)
class CosmosSettings:
    """Where and how to reach the container (everything but the credential)."""

    host: str
    port: int
    database: str
    container: str
    vector_search: Literal["server", "client"]
    vector_index: str = "quantizedFlat"
    verify: bool = True
    batch: Literal["auto", "on", "off"] = "auto"

    @property
    def endpoint(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}/"

    @property
    def loopback(self) -> bool:
        return _is_loopback(self.host)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (
            f"cosmos://{host}:{self.port}/{self.database}/{self.container}"
            f"?vector_search={self.vector_search}&vector_index={self.vector_index}"
            f"&verify={str(self.verify).lower()}&batch={self.batch}"
        )


def parse_cosmos_url(url: str) -> CosmosSettings:
    """``cosmos://host[:port]/database/container?options`` -> settings (ConfigurationError on
    anything malformed)."""
    usage = "cosmos://<host[:port]>/<database>/<container>[?vector_search=server|client&...]"
    parts = urlsplit(url)
    if parts.scheme != "cosmos":
        raise ConfigurationError(f"not a cosmos store URL: {url!r}; use {usage}")
    if parts.username or parts.password:
        raise ConfigurationError(
            "put no credentials in a cosmos URL: set COSMOS_KEY, or use Entra ID"
        )
    try:
        host = parts.hostname
        port = parts.port or 443
    except ValueError as exc:
        raise ConfigurationError(f"bad host or port in cosmos URL {url!r}: {exc}") from exc
    if not host:
        raise ConfigurationError(f"cosmos URL {url!r} has no host; use {usage}")
    names = [p for p in parts.path.split("/") if p]
    if len(names) != 2 or not all(_NAME.fullmatch(n) for n in names):
        raise ConfigurationError(
            f"cosmos URL {url!r} needs exactly a database and a container name; use {usage}"
        )
    loopback = _is_loopback(host)
    opts: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in opts:
            raise ConfigurationError(f"cosmos option {key!r} given twice")
        opts[key] = value
    unknown = set(opts) - {"vector_search", "vector_index", "verify", "batch"}
    if unknown:
        raise ConfigurationError(
            f"unknown cosmos option(s) {sorted(unknown)}: "
            "use vector_search, vector_index, verify, batch"
        )
    search = opts.get("vector_search", "client" if loopback else "server").strip().lower()
    if search not in {"server", "client"}:
        raise ConfigurationError(f"vector_search={search!r}: use server or client")
    index = VECTOR_INDEX_TYPES.get(opts.get("vector_index", "quantizedFlat").strip().lower())
    if index is None:
        raise ConfigurationError(
            f"vector_index={opts['vector_index']!r}: use quantizedFlat, diskANN or flat"
        )
    batch = opts.get("batch", "auto").strip().lower()
    if batch not in {"auto", "on", "off"}:
        raise ConfigurationError(f"batch={batch!r}: use auto, on or off")
    verify = _flag(opts["verify"], "verify") if "verify" in opts else not loopback
    return CosmosSettings(
        host=host,
        port=port,
        database=names[0],
        container=names[1],
        vector_search="server" if search == "server" else "client",
        vector_index=index,
        verify=verify,
        batch="on" if batch == "on" else "off" if batch == "off" else "auto",
    )


def cosmos_url_from_env(env: Mapping[str, str]) -> str | None:
    """The cosmos URL described by ``COSMOS_ENDPOINT`` and friends, or None without it."""
    endpoint = env.get("COSMOS_ENDPOINT", "").strip()
    if not endpoint:
        return None
    parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
    if parts.scheme != "https" or not parts.hostname:
        raise ConfigurationError(
            f"COSMOS_ENDPOINT={endpoint!r}: use https://<account>.documents.azure.com:443/"
        )
    try:
        port = parts.port or 443
    except ValueError as exc:
        raise ConfigurationError(f"COSMOS_ENDPOINT={endpoint!r}: {exc}") from exc
    host = parts.hostname
    host = f"[{host}]" if ":" in host else host
    database = env.get("COSMOS_DATABASE", "").strip() or DEFAULT_DATABASE
    container = env.get("COSMOS_CONTAINER", "").strip() or DEFAULT_CONTAINER
    opts = [
        f"{name}={env[var].strip()}"
        for name, var in (
            ("vector_search", "COSMOS_VECTOR_SEARCH"),
            ("vector_index", "COSMOS_VECTOR_INDEX"),
            ("verify", "COSMOS_VERIFY"),
        )
        if env.get(var, "").strip()
    ]
    query = f"?{'&'.join(opts)}" if opts else ""
    url = f"cosmos://{host}:{port}/{database}/{container}{query}"
    parse_cosmos_url(url)  # fail early and clearly
    return url


def credential_from_env(settings: CosmosSettings, env: Mapping[str, str]) -> Any:
    """``COSMOS_KEY``, else the emulator key on loopback, else DefaultAzureCredential."""
    key = env.get("COSMOS_KEY", "").strip()
    if key:
        return key
    if settings.loopback:
        return EMULATOR_KEY
    try:
        from azure.identity import DefaultAzureCredential
    except ImportError as exc:  # pragma: no cover - a pinned requirement
        raise ConfigurationError(
            "no COSMOS_KEY and azure-identity is not installed for Entra ID"
        ) from exc
    return DefaultAzureCredential()


# --- documents <-> values -----------------------------------------------------------------------


def _iso(d: datetime | None) -> str | None:
    return None if d is None else d.isoformat()


def _opt_us(d: datetime | None) -> int | None:
    return None if d is None else to_us(d)


def _opt_dt(us: Any) -> datetime | None:
    return None if us is None else from_us(int(us))


def _strip(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in _SYSTEM_FIELDS}


def _mem_fields(m: Memory) -> dict[str, Any]:
    return {
        "memory_type": m.memory_type,
        "content": m.content,
        "importance": float(m.importance),
        "pinned": bool(m.pinned),
        "tier": m.tier.value,
        "status": m.status.value,
        "superseded_by": m.superseded_by,
        "archived_at": _iso(m.archived_at),
        "archived_us": _opt_us(m.archived_at),
        "source": m.source,
    }


def memory_doc(m: Memory, seq: int) -> dict[str, Any]:
    """The stored document of a memory."""
    return {
        "id": m.id,
        "patient_id": m.patient_id,
        "doc_type": "memory",
        **_mem_fields(m),
        "created_at": m.created_at.isoformat(),
        "created_us": to_us(m.created_at),
        "last_accessed": m.last_accessed.isoformat(),
        "last_accessed_us": to_us(m.last_accessed),
        "access_count": int(m.access_count),
        "embedding": np.asarray(m.embedding, dtype=np.float32).tolist(),
        "embedding_model": m.embedding_model,
        "version": int(m.version),
        "seq": seq,
    }


def memory_from_doc(d: Mapping[str, Any]) -> Memory:
    return Memory(
        id=str(d["id"]),
        patient_id=str(d["patient_id"]),
        memory_type=str(d["memory_type"]),
        content=str(d["content"]),
        importance=float(d["importance"]),
        created_at=from_us(int(d["created_us"])),
        last_accessed=from_us(int(d["last_accessed_us"])),
        embedding=np.asarray(d["embedding"], dtype=np.float32),
        embedding_model=str(d["embedding_model"]),
        access_count=int(d["access_count"]),
        pinned=bool(d["pinned"]),
        tier=Tier(d["tier"]),
        status=Status(d["status"]),
        superseded_by=d.get("superseded_by"),
        archived_at=_opt_dt(d.get("archived_us")),
        source=d.get("source"),
        version=int(d["version"]),
    )


def _sup_fields(s: Supersession) -> dict[str, Any]:
    return {
        "state": s.state.value,
        "effective_at": _iso(s.effective_at),
        "effective_us": _opt_us(s.effective_at),
        "ended_at": _iso(s.ended_at),
        "ended_us": _opt_us(s.ended_at),
        "decided_by": s.decided_by,
        "decided_at": _iso(s.decided_at),
        "decided_us": _opt_us(s.decided_at),
    }


def supersession_doc(s: Supersession) -> dict[str, Any]:
    return {
        "id": s.id,
        "patient_id": s.patient_id,
        "doc_type": "supersession",
        "old_id": s.old_id,
        "new_id": s.new_id,
        "similarity": float(s.similarity),
        "method": s.method,
        "verdict": s.verdict,
        "detected_at": s.detected_at.isoformat(),
        "detected_us": to_us(s.detected_at),
        **_sup_fields(s),
        "version": int(s.version),
    }


def supersession_from_doc(d: Mapping[str, Any]) -> Supersession:
    return Supersession(
        id=str(d["id"]),
        patient_id=str(d["patient_id"]),
        old_id=str(d["old_id"]),
        new_id=str(d["new_id"]),
        similarity=float(d["similarity"]),
        method=str(d["method"]),
        verdict=str(d["verdict"]),
        state=SupersessionState(d["state"]),
        detected_at=from_us(int(d["detected_us"])),
        effective_at=_opt_dt(d.get("effective_us")),
        ended_at=_opt_dt(d.get("ended_us")),
        decided_by=d.get("decided_by"),
        decided_at=_opt_dt(d.get("decided_us")),
        version=int(d["version"]),
    )


def _sup_order(d: Mapping[str, Any]) -> tuple[int, str]:
    return int(d["detected_us"]), str(d["id"])


def _normalize(m: Memory, holders: Mapping[str, list[str]]) -> Memory:
    """A memory as readers see it: superseded only while a record in effect holds it (see the
    module docstring: the repair of a crash between a supersession record and its demotion)."""
    held = holders.get(m.id)
    if m.status is Status.SUPERSEDED and not held:
        return replace(m, status=Status.ACTIVE, superseded_by=None)
    if m.status is Status.ACTIVE and held:
        return replace(m, status=Status.SUPERSEDED, superseded_by=held[-1])
    return m


def _holders(sup_docs: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """old id -> new ids of the supersessions in effect, in list_supersessions order."""
    out: dict[str, list[str]] = {}
    effect = {s.value for s in IN_EFFECT}
    for d in sorted(sup_docs, key=_sup_order):
        if d.get("state") in effect:
            out.setdefault(str(d["old_id"]), []).append(str(d["new_id"]))
    return out


def _emulator_missing_item(exc: Any) -> bool:
    """``@vercel/cosmosdb-server`` answers a point read of a missing item with a 500 from a
    JavaScript TypeError instead of a 404 (after the SDK's retries of a 500); nothing else
    answers so."""
    return exc.status_code == 500 and "Cannot read properties of undefined" in str(exc)


#: Endpoints seen answering a missing point read with that 500: point reads there become
#: single-partition queries by id (still with ``partition_key=``), which answer "not found"
#: at once instead of after the SDK's retries.
_READ_BY_QUERY: set[str] = set()


# --- write plans --------------------------------------------------------------------------------


@dataclass
class _Write:
    """One guarded data write of a change set."""

    kind: Literal["create", "replace", "delete"]
    entity: str  # memory | supersession
    pk: str
    id: str
    body: dict[str, Any] | None = None  # create / replace
    etag: str | None = None  # replace / delete: of the document the change was computed from
    before: dict[str, Any] | None = None  # the stored document (replace / delete)
    expected: int | None = None  # replace / delete: the engine's expected version
    rebuild: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # replace on a fresh read
    restore: tuple[str, ...] = ()  # replace: fields an undo puts back


@dataclass
class _Plan:
    writes: list[_Write] = field(default_factory=list)
    docs: list[dict[str, Any]] = field(default_factory=list)  # append-only documents
    bumps: list[str] = field(default_factory=list)  # patients whose versions change

    def partitions(self) -> set[str]:
        return {w.pk for w in self.writes} | {d["patient_id"] for d in self.docs} | set(self.bumps)

    def size(self) -> int:
        return len(self.writes) + len(self.docs) + len(self.bumps)


_T = TypeVar("_T")
_PARALLEL_WRITES = 8


def _phases(writes: Sequence[_Write]) -> list[list[_Write]]:
    """Consecutive writes of the same kind and entity (the plan's order is by step), split so
    that no document appears twice in one step."""
    out: list[list[_Write]] = []
    for w in writes:
        last = out[-1] if out else None
        if (
            last is not None
            and (last[0].kind, last[0].entity) == (w.kind, w.entity)
            and all(x.id != w.id for x in last)
        ):
            last.append(w)
        else:
            out.append([w])
    return out


def _each(fn: Callable[[_T], object], items: Sequence[_T]) -> tuple[list[_T], Exception | None]:
    """``fn`` over ``items`` (concurrently when there are several): the items done and the
    first error. A few items run in order and stop at the first error."""
    if len(items) < 4:
        done: list[_T] = []
        for x in items:
            try:
                fn(x)
            except Exception as exc:
                return done, exc
            done.append(x)
        return done, None
    from concurrent.futures import ThreadPoolExecutor

    ok: list[_T] = []
    first: Exception | None = None
    with ThreadPoolExecutor(max_workers=min(_PARALLEL_WRITES, len(items))) as pool:
        futures = [(x, pool.submit(fn, x)) for x in items]
        for x, f in futures:
            error = f.exception()
            if error is None:
                ok.append(x)
            elif first is None:
                first = error if isinstance(error, Exception) else RuntimeError(str(error))
    return ok, first


class _Retry(Exception):
    """A transactional batch lost an etag race: plan again (once)."""


# --- the store ----------------------------------------------------------------------------------


class CosmosStore(MemoryStore):
    """Memories, supersessions, usage, audit and policy in one Cosmos DB container."""

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

    # --- small helpers ----------------------------------------------------------------------
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

        if self.settings.endpoint in _READ_BY_QUERY:
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
            if _emulator_missing_item(exc):
                _READ_BY_QUERY.add(self.settings.endpoint)
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

    # --- container and embedding model -------------------------------------------------------
    def _vector_policy(self, dimensions: int) -> dict[str, Any]:
        return {
            "vectorEmbeddings": [
                {
                    "path": "/embedding",
                    "dataType": "float32",
                    "dimensions": int(dimensions),
                    "distanceFunction": "cosine",
                }
            ]
        }

    def _indexing_policy(self) -> dict[str, Any]:
        return {
            "indexingMode": "consistent",
            "automatic": True,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [
                {"path": '/"_etag"/?'},
                {"path": "/embedding/*"},
                {"path": "/before/*"},
                {"path": "/after/*"},
                {"path": "/events/*"},
                {"path": "/text/?"},
                {"path": "/items/*"},
                {"path": "/body/*"},
            ],
            "vectorIndexes": [{"path": "/embedding", "type": self.settings.vector_index}],
        }

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

        if self.settings.vector_index == "flat" and dimensions > 505:
            raise ConfigurationError(
                f"vector_index=flat allows at most 505 dimensions, the embedder has {dimensions}:"
                " use quantizedFlat or diskANN"
            )
        if dimensions > 4096:
            raise ConfigurationError("Cosmos DB vector indexes allow 4096 dimensions at most")
        if self._container_properties() is not None:
            return False
        try:
            db = self._client.create_database_if_not_exists(id=self.settings.database)
            db.create_container_if_not_exists(
                id=self.settings.container,
                partition_key=PartitionKey(path="/patient_id"),
                indexing_policy=self._indexing_policy(),
                vector_embedding_policy=self._vector_policy(dimensions),
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
                self._c.create_item(
                    {
                        "id": META_ID,
                        "patient_id": SYSTEM_PARTITION,
                        "doc_type": "meta",
                        "model_id": model_id,
                        "dimensions": int(dimensions),
                    }
                )
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code != 409:
                    raise
                doc = self._read(META_ID, SYSTEM_PARTITION)
        if doc is not None and (
            doc["model_id"] != model_id or int(doc["dimensions"]) != dimensions
        ):
            raise EmbeddingMismatchError(
                f"store {self.url} holds vectors of {doc['model_id']} "
                f"({doc['dimensions']} dimensions); the engine's embedder is {model_id} "
                f"({dimensions} dimensions). Use the same embedder or a new store."
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
    def _holders_in(self, pid: str, ids: Sequence[str]) -> dict[str, list[str]]:
        rows = self._query(
            "SELECT c.id, c.old_id, c.new_id, c.state, c.detected_us FROM c "
            "WHERE c.patient_id = @pid AND c.doc_type = 'supersession' "
            "AND ARRAY_CONTAINS(@ids, c.old_id)",
            [("@pid", pid), ("@ids", list(ids))],
            pk=pid,
        )
        return _holders(rows)

    def _memories_from(self, docs: Sequence[Mapping[str, Any]]) -> list[Memory]:
        """Memory documents of any patients -> normalized Memory values (one supersession
        query per patient)."""
        self._remember(docs)
        by_pid: dict[str, list[str]] = {}
        for d in docs:
            by_pid.setdefault(str(d["patient_id"]), []).append(str(d["id"]))
        holders: dict[str, list[str]] = {}
        for pid, ids in by_pid.items():
            holders.update(self._holders_in(pid, ids))
        return [_normalize(memory_from_doc(d), holders) for d in docs]

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

    def list_memories(self, patient_id: str) -> list[Memory]:
        rows = self._query(
            "SELECT * FROM c WHERE c.patient_id = @pid "
            "AND (c.doc_type = 'memory' OR c.doc_type = 'supersession')",
            [("@pid", patient_id)],
            pk=patient_id,
        )
        mems = [d for d in rows if d.get("doc_type") == "memory"]
        self._remember(rows)
        holders = _holders(d for d in rows if d.get("doc_type") == "supersession")
        mems.sort(key=lambda d: (int(d["created_us"]), int(d.get("seq", 0)), str(d["id"])))
        return [_normalize(memory_from_doc(d), holders) for d in mems]

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

    def patient_version(self, patient_id: str) -> int:
        return self.versions(patient_id)[0]

    def versions(self, patient_id: str) -> tuple[int, int]:
        doc = self._read(COUNTER_ID, patient_id)
        return (int(doc["content"]), int(doc["usage"])) if doc else (0, 0)

    def usage(self, patient_id: str) -> Usage:
        rows = self._query(
            "SELECT c.id, c.doc_type, c.access_count, c.last_accessed_us, c.sessions FROM c "
            "WHERE c.patient_id = @pid AND (c.doc_type = 'memory' OR c.doc_type = 'usage')",
            [("@pid", patient_id)],
            pk=patient_id,
        )
        mems = [r for r in rows if r.get("doc_type") == "memory"]
        sessions = sorted(
            int(t) for r in rows if r.get("doc_type") == "usage" for t in r.get("sessions") or []
        )
        return Usage(
            ids=[str(r["id"]) for r in mems],
            access_count=np.array([r["access_count"] for r in mems], dtype=np.float64),
            last_accessed_s=np.array([r["last_accessed_us"] for r in mems], dtype=np.float64) / 1e6,
            sessions_s=np.array(sessions, dtype=np.float64) / 1e6,
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
        return {k: np.array(v, dtype=np.float64) / 1e6 for k, v in self._events(patient_id).items()}

    def access_times(self, patient_id: str) -> dict[str, list[datetime]]:
        return {k: [from_us(t) for t in v] for k, v in self._events(patient_id).items()}

    def session_times(self, patient_id: str) -> list[datetime]:
        rows = self._query(
            "SELECT c.sessions FROM c WHERE c.patient_id = @pid AND c.doc_type = 'usage'",
            [("@pid", patient_id)],
            pk=patient_id,
        )
        return [from_us(t) for t in sorted(int(t) for r in rows for t in r.get("sessions") or [])]

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
        return [supersession_from_doc(d) for d in sorted(rows, key=_sup_order)]

    def list_injections(self, patient_id: str, limit: int = 100) -> list[InjectionRecord]:
        if limit <= 0:
            return []
        rows = self._query(
            "SELECT TOP @n * FROM c WHERE c.patient_id = @pid AND c.doc_type = 'injection' "
            "ORDER BY c.at_us DESC",
            [("@n", int(limit)), ("@pid", patient_id)],
            pk=patient_id,
        )
        return [
            InjectionRecord(
                id=str(r["id"]),
                at=from_us(int(r["at_us"])),
                patient_id=str(r["patient_id"]),
                query=str(r["query"]),
                items=tuple((str(a), float(b)) for a, b in r["items"]),
                tokens=int(r["tokens"]),
                text=str(r["text"]),
            )
            for r in rows
        ]

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
        return [
            AuditEntry(
                seq=int(r["seq"]),
                at=from_us(int(r["at_us"])),
                actor=str(r["actor"]),
                action=str(r["action"]),
                entity=str(r["entity"]),
                entity_id=str(r["entity_id"]),
                patient_id=r.get("patient"),
                before=r.get("before"),
                after=r.get("after"),
            )
            for r in rows[: query.limit]
        ]

    def load_policy(self) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT TOP 1 c.body FROM c WHERE c.patient_id = @pid AND c.doc_type = 'policy' "
            "ORDER BY c.seq DESC",
            [("@pid", SYSTEM_PARTITION)],
            pk=SYSTEM_PARTITION,
        )
        if not rows:
            return None
        body: dict[str, Any] = rows[0]["body"]
        return body

    def count_memories(self) -> int:
        rows = self._query("SELECT VALUE COUNT(1) FROM c WHERE c.doc_type = 'memory'")
        return int(sum(int(r) for r in rows))

    # --- append-only documents -----------------------------------------------------------------
    def _audit_doc(self, a: AuditEntry) -> dict[str, Any]:
        seq = self._next_seq()
        return {
            "id": f"aud_{seq}_{uuid.uuid4().hex[:8]}",
            "patient_id": a.patient_id or SYSTEM_PARTITION,
            "doc_type": "audit",
            "seq": seq,
            "at": a.at.isoformat(),
            "at_us": to_us(a.at),
            "actor": a.actor,
            "action": a.action,
            "entity": a.entity,
            "entity_id": a.entity_id,
            "patient": a.patient_id,
            "before": a.before,
            "after": a.after,
        }

    def _usage_docs(
        self, patient_id: str, events: Sequence[tuple[str, int]], sessions: Sequence[int]
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        ev = [[m, t] for m, t in events]
        ss = list(sessions)
        while ev or ss or not out:
            chunk_e, ev = ev[:_EVENTS_PER_DOC], ev[_EVENTS_PER_DOC:]
            chunk_s, ss = ss[:_EVENTS_PER_DOC], ss[_EVENTS_PER_DOC:]
            out.append(
                {
                    "id": f"use_{uuid.uuid4().hex}",
                    "patient_id": patient_id,
                    "doc_type": "usage",
                    "seq": self._next_seq(),
                    "events": chunk_e,
                    "sessions": chunk_s,
                }
            )
        return out

    # --- apply: plan, then a batch or ordered writes --------------------------------------------
    def _plan(self, changes: ChangeSet) -> _Plan:
        """Check every expected version against the stored documents and lay out the writes.
        ConflictError here means nothing was written."""
        plan = _Plan()
        for s in changes.insert_supersessions:
            plan.writes.append(
                _Write("create", "supersession", s.patient_id, s.id, body=supersession_doc(s))
            )
        for s, expected in changes.update_supersessions:
            doc = self._read(s.id, s.patient_id)
            if doc is None or int(doc["version"]) != expected:
                raise ConflictError(
                    f"supersession {s.id} was changed by someone else; reload and try again"
                )

            def sup_body(
                d: dict[str, Any], s: Supersession = s, v: int = expected
            ) -> dict[str, Any]:
                return {**_strip(d), **_sup_fields(s), "version": v + 1}

            plan.writes.append(
                _Write(
                    "replace",
                    "supersession",
                    s.patient_id,
                    s.id,
                    body=sup_body(doc),
                    etag=doc["_etag"],
                    before=doc,
                    expected=expected,
                    rebuild=sup_body,
                    restore=_SUP_ENGINE_FIELDS,
                )
            )
        for m in changes.insert_memories:
            plan.writes.append(
                _Write("create", "memory", m.patient_id, m.id, body=memory_doc(m, self._next_seq()))
            )
        for m, expected in changes.update_memories:
            doc = self._read(m.id, m.patient_id)
            if doc is None or int(doc["version"]) != expected:
                raise ConflictError(
                    f"memory {m.id} was changed by someone else (expected version {expected}); "
                    "reload and try again"
                )

            def mem_body(d: dict[str, Any], m: Memory = m, v: int = expected) -> dict[str, Any]:
                return {**_strip(d), **_mem_fields(m), "version": v + 1}

            plan.writes.append(
                _Write(
                    "replace",
                    "memory",
                    m.patient_id,
                    m.id,
                    body=mem_body(doc),
                    etag=doc["_etag"],
                    before=doc,
                    expected=expected,
                    rebuild=mem_body,
                    restore=_MEM_ENGINE_FIELDS,
                )
            )
        for m, expected in changes.delete_memories:
            doc = self._read(m.id, m.patient_id)
            if doc is None or int(doc["version"]) != expected or doc["status"] != "archived":
                raise ConflictError(f"memory {m.id} changed since the purge was planned")
            plan.writes.append(
                _Write(
                    "delete",
                    "memory",
                    m.patient_id,
                    m.id,
                    etag=doc["_etag"],
                    before=doc,
                    expected=expected,
                )
            )
        events: dict[str, list[tuple[str, int]]] = {}
        sessions: dict[str, list[int]] = {}
        for mid, pid, at in changes.accesses:
            events.setdefault(pid, []).append((mid, to_us(at)))
        for pid, at in changes.sessions:
            sessions.setdefault(pid, []).append(to_us(at))
        for pid in sorted(set(events) | set(sessions)):
            plan.docs += self._usage_docs(pid, events.get(pid, []), sessions.get(pid, []))
        if changes.policy is not None:
            seq = self._next_seq()
            plan.docs.append(
                {
                    "id": f"pol_{seq}_{uuid.uuid4().hex[:8]}",
                    "patient_id": SYSTEM_PARTITION,
                    "doc_type": "policy",
                    "seq": seq,
                    "at_us": time.time_ns() // 1000,
                    "body": changes.policy,
                }
            )
        plan.docs += [self._audit_doc(a) for a in changes.audit]
        plan.bumps = sorted(changes.patients())
        return plan

    def apply(self, changes: ChangeSet) -> None:
        for pid in changes.patients():
            self._check_patient(pid)
        for attempt in (0, 1):
            plan = self._plan(changes)
            if not plan.writes and not plan.docs and not plan.bumps:
                return
            parts = plan.partitions()
            if len(parts) == 1 and plan.size() <= MAX_BATCH_OPERATIONS and self._batch_is_atomic():
                try:
                    self._run_batch(next(iter(parts)), plan)
                except _Retry as exc:
                    if attempt:
                        raise ConflictError(str(exc)) from exc
                    continue
            else:
                self._run_ordered(plan)
            self._remember(w.body for w in plan.writes if w.body is not None)
            return

    def _batch_is_atomic(self) -> bool:
        """Whether the server applies a transactional batch all-or-nothing: probed once with
        [create a probe, read a missing item]; a real account rejects the whole batch, a server
        without transactional batch keeps the probe (or refuses batches)."""
        if self._atomic_batch is not None:
            return self._atomic_batch
        from azure.cosmos.exceptions import CosmosBatchOperationError, CosmosHttpResponseError

        probe = f"__batch_probe_{uuid.uuid4().hex}"
        rejected_whole = False
        try:
            self._c.execute_item_batch(
                [
                    (
                        "create",
                        ({"id": probe, "patient_id": SYSTEM_PARTITION, "doc_type": "probe"},),
                    ),
                    ("read", (f"__missing_{uuid.uuid4().hex}",)),
                ],
                partition_key=SYSTEM_PARTITION,
            )
        except CosmosBatchOperationError:
            rejected_whole = True
        except CosmosHttpResponseError:
            rejected_whole = False
        kept = self._read(probe, SYSTEM_PARTITION) is not None
        if kept:
            self._c.delete_item(item=probe, partition_key=SYSTEM_PARTITION)
        self._atomic_batch = rejected_whole and not kept
        return self._atomic_batch

    def _counter_body(
        self, pk: str, doc: Mapping[str, Any] | None, content: bool
    ) -> dict[str, Any]:
        c = int(doc["content"]) if doc else 0
        u = int(doc["usage"]) if doc else 0
        return {
            "id": COUNTER_ID,
            "patient_id": pk,
            "doc_type": "counter",
            "content": c + 1 if content else c,
            "usage": u + 1,
        }

    def _run_batch(self, pk: str, plan: _Plan) -> None:
        from azure.cosmos.exceptions import CosmosBatchOperationError

        ops: list[Any] = []
        for w in plan.writes:
            if w.kind == "create":
                ops.append(("create", (w.body,)))
            elif w.kind == "replace":
                ops.append(("replace", (w.id, w.body), {"if_match_etag": w.etag}))
            else:
                ops.append(("delete", (w.id,), {"if_match_etag": w.etag}))
        ops += [("create", (d,)) for d in plan.docs]
        if plan.bumps:
            counter = self._read(COUNTER_ID, pk)
            body = self._counter_body(pk, counter, content=True)
            if counter is None:
                ops.append(("create", (body,)))
            else:
                ops.append(("replace", (COUNTER_ID, body), {"if_match_etag": counter["_etag"]}))
        try:
            self._c.execute_item_batch(ops, partition_key=pk)
        except CosmosBatchOperationError as exc:
            i = exc.error_index
            status = 0
            if 0 <= i < len(exc.operation_responses):
                status = int(exc.operation_responses[i].get("statusCode", 0))
            bad = plan.writes[i] if 0 <= i < len(plan.writes) else None
            if bad is not None and bad.kind == "create" and status == 409:
                raise ConflictError(f"{bad.entity} {bad.id} already exists") from exc
            if status in (404, 409, 412):
                what = f"{bad.entity} {bad.id}" if bad is not None else "the version counter"
                raise _Retry(f"{what} was changed by someone else; reload and try again") from exc
            raise

    def _run_ordered(self, plan: _Plan) -> None:
        """Without an atomic batch: data writes in the documented order (undone on a conflict),
        then the append-only documents, then the version counters. Each step's independent
        writes (e.g. the memories of an import) go out concurrently; the steps stay in order."""
        done: list[_Write] = []
        for phase in _phases(plan.writes):
            ok, error = _each(self._write, phase)
            done += ok
            if error is not None:
                if isinstance(error, ConflictError):
                    self._undo(done)
                raise error
        _, error = _each(self._c.create_item, plan.docs)
        if error is not None:
            raise error
        _, error = _each(lambda pid: self._bump(pid, content=True), plan.bumps)
        if error is not None:
            raise error

    def _write(self, w: _Write) -> None:
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import CosmosHttpResponseError

        if w.kind == "create":
            try:
                self._c.create_item(w.body)
            except CosmosHttpResponseError as exc:
                if exc.status_code == 409:
                    raise ConflictError(f"{w.entity} {w.id} already exists") from exc
                raise
            return
        body, etag = w.body, w.etag
        for attempt in (0, 1):
            try:
                if w.kind == "replace":
                    self._c.replace_item(
                        item=w.id,
                        body=body,
                        etag=etag,
                        match_condition=MatchConditions.IfNotModified,
                    )
                else:
                    self._c.delete_item(
                        item=w.id,
                        partition_key=w.pk,
                        etag=etag,
                        match_condition=MatchConditions.IfNotModified,
                    )
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code not in (404, 412):
                    raise
                if exc.status_code == 404 or attempt:
                    raise ConflictError(
                        f"{w.entity} {w.id} was changed by someone else; reload and try again"
                    ) from exc
            # 412: patched meanwhile (e.g. an access); retry once if the version still matches
            fresh = self._read(w.id, w.pk)
            if (
                fresh is None
                or int(fresh["version"]) != w.expected
                or (w.kind == "delete" and fresh["status"] != "archived")
            ):
                raise ConflictError(
                    f"{w.entity} {w.id} was changed by someone else (expected version "
                    f"{w.expected}); reload and try again"
                )
            etag = fresh["_etag"]
            if w.rebuild is not None:
                body = w.rebuild(fresh)
            w.before = fresh

    def _undo(self, done: Sequence[_Write]) -> None:
        """Best effort: put back what a refused change set already wrote."""
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import CosmosHttpResponseError

        for w in reversed(done):
            try:
                if w.kind == "create":
                    self._c.delete_item(item=w.id, partition_key=w.pk)
                elif w.kind == "delete" and w.before is not None:
                    self._c.create_item(_strip(w.before))
                elif w.kind == "replace" and w.before is not None:
                    for _ in range(3):
                        fresh = self._read(w.id, w.pk)
                        if fresh is None:
                            break
                        body = {**_strip(fresh), **{f: w.before.get(f) for f in w.restore}}
                        try:
                            self._c.replace_item(
                                item=w.id,
                                body=body,
                                etag=fresh["_etag"],
                                match_condition=MatchConditions.IfNotModified,
                            )
                            break
                        except CosmosHttpResponseError as exc:
                            if exc.status_code != 412:
                                raise
            except CosmosHttpResponseError:
                continue

    def _bump(self, patient_id: str, content: bool) -> None:
        """Content and usage versions (+1 each), or the usage version only: atomic patches."""
        from azure.cosmos.exceptions import CosmosHttpResponseError

        ops: list[dict[str, Any]] = [{"op": "incr", "path": "/usage", "value": 1}]
        if content:
            ops.append({"op": "incr", "path": "/content", "value": 1})
        for _ in range(3):
            try:
                self._c.patch_item(item=COUNTER_ID, partition_key=patient_id, patch_operations=ops)
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code != 404:
                    raise
            try:
                self._c.create_item(self._counter_body(patient_id, None, content))
                return
            except CosmosHttpResponseError as exc:
                if exc.status_code != 409:  # created concurrently: patch it
                    raise
        raise ConflictError(f"could not bump the versions of patient {patient_id}")

    # --- record_access -------------------------------------------------------------------------
    def record_access(
        self,
        patient_id: str,
        memory_ids: Sequence[str],
        at: datetime,
        promote_after: int,
        injection: InjectionRecord | None,
        actor: str,
    ) -> list[str]:
        from azure.cosmos.exceptions import CosmosHttpResponseError

        self._check_patient(patient_id)
        at_us = to_us(at)
        candidates: list[str] = []
        for mid in memory_ids:
            try:
                try:
                    doc = self._c.patch_item(
                        item=mid,
                        partition_key=patient_id,
                        patch_operations=[
                            {"op": "incr", "path": "/access_count", "value": 1},
                            {"op": "set", "path": "/last_accessed_us", "value": at_us},
                            {"op": "set", "path": "/last_accessed", "value": at.isoformat()},
                        ],
                        filter_predicate=f"FROM c WHERE c.last_accessed_us < {at_us}",
                    )
                except CosmosHttpResponseError as exc:
                    if exc.status_code != 412:
                        raise
                    # stored last access is at or after `at`: count only
                    doc = self._c.patch_item(
                        item=mid,
                        partition_key=patient_id,
                        patch_operations=[{"op": "incr", "path": "/access_count", "value": 1}],
                    )
            except CosmosHttpResponseError as exc:
                if exc.status_code == 404:
                    raise NotFoundError("memory", mid) from exc
                raise
            if (
                doc.get("tier") == Tier.SHORT_TERM.value
                and int(doc["access_count"]) >= promote_after
            ):
                candidates.append(mid)
        promoted: list[str] = []
        for mid in candidates:
            try:  # only one concurrent caller wins the promotion (and audits it)
                self._c.patch_item(
                    item=mid,
                    partition_key=patient_id,
                    patch_operations=[
                        {"op": "set", "path": "/tier", "value": Tier.LONG_TERM.value},
                        {"op": "incr", "path": "/version", "value": 1},
                    ],
                    filter_predicate="FROM c WHERE c.tier = 'short_term'",
                )
                promoted.append(mid)
            except CosmosHttpResponseError as exc:
                if exc.status_code != 412:
                    raise
        docs = self._usage_docs(patient_id, [(mid, at_us) for mid in memory_ids], [at_us])
        if injection is not None:
            docs.append(
                {
                    "id": injection.id,
                    "patient_id": injection.patient_id,
                    "doc_type": "injection",
                    "at": at.isoformat(),
                    "at_us": at_us,
                    "query": injection.query,
                    "items": [[a, float(b)] for a, b in injection.items],
                    "tokens": int(injection.tokens),
                    "text": injection.text,
                }
            )
        docs += [
            self._audit_doc(
                AuditEntry(
                    at=at,
                    actor=actor,
                    action="promote",
                    entity="memory",
                    entity_id=mid,
                    patient_id=patient_id,
                    before={"tier": "short_term"},
                    after={"tier": "long_term"},
                )
            )
            for mid in promoted
        ]
        for d in docs:
            self._c.create_item(d)
        self._bump(patient_id, content=bool(promoted))
        return promoted

    def close(self) -> None:
        if self._owns_client:
            self._client.close()


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
