"""Where and how to reach the Cosmos DB container: the store URL, the environment variables,
the credential, and the container's provisioning policies (see docs/cosmos.md)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from ...errors import ConfigurationError

#: The Cosmos DB emulator's published key (not a secret): local Cosmos-protocol servers accept it.
EMULATOR_KEY = (
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)
DEFAULT_DATABASE = "memory_core"
DEFAULT_CONTAINER = "memories"
VECTOR_INDEX_TYPES = {"quantizedflat": "quantizedFlat", "diskann": "diskANN", "flat": "flat"}
ENTRA_CANNOT_CREATE = (
    "Entra-ID data-plane roles (e.g. 'Cosmos DB Built-in Data Contributor') can read and write "
    "items but cannot create databases or containers: run `python -m memory_core cosmos-init` "
    "with an account key (COSMOS_KEY), or create them through the control plane (portal, "
    "az cosmosdb sql container create, Bicep) with the vector policy documented in "
    "docs/cosmos.md"
)
_NAME = re.compile(r"[^/\\?#\s]{1,255}")
_OPTIONS = ("vector_search", "vector_index", "verify", "batch")
#: URL option -> environment variable read by :func:`cosmos_url_from_env`
_ENV_OPTIONS = (
    ("vector_search", "COSMOS_VECTOR_SEARCH"),
    ("vector_index", "COSMOS_VECTOR_INDEX"),
    ("verify", "COSMOS_VERIFY"),
)


def is_loopback(host: str) -> bool:
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


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


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
        return f"https://{_bracketed(self.host)}:{self.port}/"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def url(self) -> str:
        return (
            f"cosmos://{_bracketed(self.host)}:{self.port}/{self.database}/{self.container}"
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
    loopback = is_loopback(host)
    opts: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in opts:
            raise ConfigurationError(f"cosmos option {key!r} given twice")
        opts[key] = value
    unknown = set(opts) - set(_OPTIONS)
    if unknown:
        raise ConfigurationError(
            f"unknown cosmos option(s) {sorted(unknown)}: use {', '.join(_OPTIONS)}"
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
    database = env.get("COSMOS_DATABASE", "").strip() or DEFAULT_DATABASE
    container = env.get("COSMOS_CONTAINER", "").strip() or DEFAULT_CONTAINER
    opts = [f"{name}={env[var].strip()}" for name, var in _ENV_OPTIONS if env.get(var, "").strip()]
    query = f"?{'&'.join(opts)}" if opts else ""
    url = f"cosmos://{_bracketed(parts.hostname)}:{port}/{database}/{container}{query}"
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


# --- provisioning -----------------------------------------------------------------------------


def vector_policy(dimensions: int) -> dict[str, Any]:
    """The container's vector embedding policy: cosine over float32 ``/embedding``."""
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


def indexing_policy(vector_index: str) -> dict[str, Any]:
    """Range index on everything but the vectors and the bulky bodies; the vector index."""
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
        "vectorIndexes": [{"path": "/embedding", "type": vector_index}],
    }


def check_dimensions(vector_index: str, dimensions: int) -> None:
    """ConfigurationError when the vector index cannot hold ``dimensions``."""
    if vector_index == "flat" and dimensions > 505:
        raise ConfigurationError(
            f"vector_index=flat allows at most 505 dimensions, the embedder has {dimensions}:"
            " use quantizedFlat or diskANN"
        )
    if dimensions > 4096:
        raise ConfigurationError("Cosmos DB vector indexes allow 4096 dimensions at most")
