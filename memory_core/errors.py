"""Typed errors of memory_core. Every error the engine raises on purpose derives from
:class:`MemoryCoreError` (deliberately not named ``MemoryError``, which is a Python builtin)."""

from __future__ import annotations

import enum


class MemoryCoreError(Exception):
    """Base class of every error raised by memory_core on purpose. ``retryable``: whether the
    same call may succeed when simply made again (e.g. :class:`StoreBusyError`)."""

    retryable: bool = False


class ValidationError(MemoryCoreError, ValueError):
    """Bad input. ``field`` names the offending field; nothing was written."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class PatientMismatchError(ValidationError):
    """An import holds more than one patient (several Patient resources, or resources about
    another subject than the patient imported for) and the caller did not name which one to
    take. ``resources`` names them (``Type/id``, with whom each is about); nothing was
    written."""

    def __init__(self, field: str, message: str, resources: tuple[str, ...]) -> None:
        self.resources = resources
        super().__init__(field, message)


class NotFoundError(MemoryCoreError, KeyError):
    """A memory, supersession or patient that does not exist -- or, when ``patient_id`` is
    set, that is not that patient's (an id-based call scoped to a patient never reaches
    another patient's record, and does not say whether the id exists elsewhere)."""

    def __init__(self, what: str, key: str, patient_id: str | None = None) -> None:
        self.what = what
        self.key = key
        self.patient_id = patient_id
        super().__init__(str(self))

    def __str__(self) -> str:  # KeyError would quote the whole message
        where = "" if self.patient_id is None else f" for patient {self.patient_id!r}"
        return f"{self.what} {self.key!r} not found{where}"


class ConflictError(MemoryCoreError):
    """Optimistic-concurrency conflict: the record changed since it was read."""


class StaleSnapshotError(ConflictError):
    """The patient's memories changed between reading them and writing a change computed from
    them (e.g. supersession detection against another process's concurrent add); the engine
    reads again, re-detects and retries."""

    retryable = True


class StateError(MemoryCoreError):
    """An operation that is not allowed in the record's current state
    (e.g. confirming a supersession that was already rejected)."""


class EmbeddingMismatchError(MemoryCoreError):
    """A vector of the wrong dimension, or from another embedding model than the store's."""


class ConfigurationError(MemoryCoreError):
    """Unknown store URL, unknown embedder, missing endpoint settings."""


class StoreProblem(enum.StrEnum):
    """Why a store cannot serve a request (:attr:`StoreError.cause`)."""

    MISSING = "missing"  # no store at the URL (a read never creates one)
    READ_ONLY_FILE = "read-only file"
    READ_ONLY_FOLDER = "read-only folder"  # SQLite writes its -wal and -shm files beside it
    LOCKED = "locked"  # another process held the write lock past the busy timeout
    CORRUPT = "corrupt"
    NOT_A_STORE = "not a store"  # a directory, a text file, another application's database
    CANNOT_OPEN = "cannot open"
    DISK_FULL = "disk full"
    IO = "I/O error"


class StoreError(MemoryCoreError):
    """The store itself cannot serve the request (not a bad record). ``store`` names it (its
    URL), ``cause`` says why (:class:`StoreProblem`); see the subclasses."""

    default_cause: StoreProblem | None = None

    def __init__(
        self, message: str = "", *, store: str = "", cause: StoreProblem | None = None
    ) -> None:
        self.store = store
        self.cause = cause if cause is not None else self.default_cause
        super().__init__(message)


class NotAStoreError(StoreError, ConfigurationError):
    """The store URL names something that is not a memory_core store: a file that is not a
    database, a directory, or another application's SQLite file. Nothing was written."""

    default_cause = StoreProblem.NOT_A_STORE


class StoreNotFoundError(StoreError, NotFoundError):
    """No store at the URL, and the call may not create one (a read: ``open_engine(...,
    create=False)``, the CLI's read commands). Nothing was created."""

    def __init__(self, store: str, message: str = "") -> None:
        self.message = message or f"store {store!r} not found"
        NotFoundError.__init__(self, "store", store)
        self.store = store
        self.cause = StoreProblem.MISSING

    def __str__(self) -> str:
        return self.message


class StoreReadOnlyError(StoreError):
    """The store cannot be written: its file is read-only, or its folder is (SQLite creates
    its ``-wal`` and ``-shm`` files beside the database, even to read it). Nothing was
    written."""


class StoreCorruptError(StoreError):
    """The store's file is damaged (SQLite: the database disk image is malformed). Nothing was
    written; restore it from a backup or an export."""

    default_cause = StoreProblem.CORRUPT


class StoreBusyError(StoreError):
    """Another process held the store's write lock for longer than the busy timeout. Nothing
    was written; the same call can be retried (``retryable`` is True)."""

    retryable = True
    default_cause = StoreProblem.LOCKED


class PermissionDeniedError(MemoryCoreError):
    """The acting user's role may not make this change (a viewer asked for a write). Nothing
    was written. ``action`` names the refused operation, ``actor`` who asked."""

    def __init__(self, action: str, actor: str, role: str) -> None:
        self.action = action
        self.actor = actor
        self.role = role
        only = (
            "an agent may only read, search, propose and add memories; a reviewer decides"
            if role == "agent"
            else "only reviewers change memories"
        )
        super().__init__(
            f"{actor or 'this user'} is {'an' if role[:1] in 'aeiou' else 'a'} {role} and may "
            f"not {action.replace('_', ' ')}: {only}"
        )


class OutOfScopeError(PermissionDeniedError):
    """A principal held to some patients (an agent started with ``--patient``, a bearer
    token's launch context) asked about another one. Nothing was read, written or recorded.
    ``patient_id`` names the patient asked for, ``allowed`` the ones the principal may reach."""

    def __init__(self, actor: str, patient_id: str, allowed: list[str]) -> None:
        self.action = "reach_patient"
        self.actor = actor
        self.role = "agent"
        self.patient_id = patient_id
        self.allowed = allowed
        where = ", ".join(allowed) if allowed else "no patient"
        who = actor or "this principal"
        what = (
            f"patient {patient_id!r} is outside the scope of {who}"
            if patient_id
            else f"a call by {who} must name its patient"
        )
        MemoryCoreError.__init__(
            self, f"{what} (it may reach {where}); nothing was read or written"
        )
