"""Bearer tokens over HTTP and what each grants: a configuration file, never a default.

The file (``--tokens PATH`` or the ``MEMORY_CORE_TOKENS`` environment variable) is JSON::

    {"tokens": [{"sha256": "<hex digest of the token>", "patients": ["NW-1001"],
                 "label": "ward 3 launch"}]}

Only the SHA-256 digest of a token is stored: the file can be read without giving the token
away. ``python -m memory_core token --tokens PATH --patient ID`` makes a token, adds its digest
to the file and prints the token once. Each token grants its ``patients`` -- the shape of a
SMART-on-FHIR launch context: the patient an agent may reach comes from the token it was
launched with, never from what the model asks for. A request about any other patient is
refused (403) with nothing read, written or recorded."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import validation as v
from ..errors import ConfigurationError, ValidationError

TOKENS_ENV = "MEMORY_CORE_TOKENS"
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Grant:
    """What one bearer token grants: its patients (the launch context) and a label for the
    operator (never the token)."""

    patients: frozenset[str]
    label: str = ""


def digest(token: str) -> str:
    """The SHA-256 hex digest a token file stores for ``token``."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh random bearer token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


class Grants:
    """The tokens of a configuration file, looked up by digest."""

    def __init__(self, by_digest: Mapping[str, Grant], where: str = "the token file") -> None:
        self._by_digest = dict(by_digest)
        self.where = where

    def __len__(self) -> int:
        return len(self._by_digest)

    def verify(self, token: str | None) -> Grant | None:
        """The grant of ``token``, or None for a missing or unknown token."""
        if not token:
            return None
        return self._by_digest.get(digest(token))

    @classmethod
    def from_document(cls, doc: Any, where: str = "the token file") -> Grants:
        """Read a parsed token file; ConfigurationError naming the entry and field otherwise."""
        if not isinstance(doc, Mapping) or not isinstance(doc.get("tokens"), list):
            raise ConfigurationError(f'{where}: must be a JSON object {{"tokens": [...]}}')
        out: dict[str, Grant] = {}
        for i, entry in enumerate(doc["tokens"]):
            try:
                d, grant = _entry(entry)
            except ValidationError as exc:
                what = f"{where}: tokens[{i}].{exc.field}: {exc.message}"
                raise ConfigurationError(what) from exc
            out[d] = grant
        if not out:
            raise ConfigurationError(f"{where}: lists no token; nothing could reach the server")
        return cls(out, where)

    @classmethod
    def load(cls, path: str | Path) -> Grants:
        p = Path(path)
        try:
            doc = json.loads(p.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigurationError(f"cannot read the token file {p}: {exc}") from exc
        return cls.from_document(doc, str(p))


def _entry(entry: Any) -> tuple[str, Grant]:
    if not isinstance(entry, Mapping):
        raise ValidationError("entry", "must be an object with sha256 and patients")
    d = entry.get("sha256")
    if not isinstance(d, str) or len(d) != 64 or not set(d) <= _HEX:
        raise ValidationError("sha256", "must be the 64 lower-case hex digits of a SHA-256")
    patients = entry.get("patients")
    if not isinstance(patients, list) or not patients:
        raise ValidationError("patients", "must list the patient ids the token grants")
    ids = frozenset(v.patient_id(p, "patients") for p in patients)
    label = entry.get("label", "")
    if not isinstance(label, str):
        raise ValidationError("label", "must be a string")
    return d, Grant(ids, label)


def resolve(path: str | None) -> Grants:
    """The grants of ``path`` or of the file ``MEMORY_CORE_TOKENS`` names: a server reached
    over HTTP has no default token (ConfigurationError saying how to make one)."""
    where = path or os.environ.get(TOKENS_ENV)
    if not where:
        raise ConfigurationError(
            "over HTTP a bearer token is required and there is no default: give --tokens FILE "
            f"or set {TOKENS_ENV} (python -m memory_core token --tokens FILE --patient ID makes "
            "one)"
        )
    return Grants.load(where)


def add_token(path: str | Path, patients: Iterable[str], label: str = "") -> str:
    """Make a token granting ``patients``, add its digest to the file at ``path`` (created,
    readable by its owner only, when missing) and return the token (shown once)."""
    ids = sorted({v.patient_id(p, "patient") for p in patients})
    if not ids:
        raise ValidationError("patient", "name at least one patient the token grants")
    p = Path(path)
    doc: dict[str, Any] = {"tokens": []}
    if p.exists():
        doc = json.loads(p.read_text("utf-8"))
        Grants.from_document(doc, str(p))  # refuse to extend a broken file
    token = new_token()
    doc["tokens"].append({"sha256": digest(token), "patients": ids, "label": label})
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return token
