"""Who may change what: the roles of the dashboard's users and the rule that gives a signed-in
identity its role. Pure: no I/O. The guard that applies it to every write is
:class:`memory_core.engine.acting.Acting` (``engine.acting_as(actor, role)``).

Three roles. A **reviewer** may make every change the dashboard offers (decide reviews, pin,
archive, edit importance, add memories, import, save the policy, load the demo). A **viewer**
may look at everything and preview (a preview writes nothing) but change nothing. An **agent**
(an AI care assistant reaching the engine through :mod:`memory_core.server`) may be given a
patient's memories (the ledger records it), search them, read proposals, reviews and
histories, and add a memory -- never confirm, reject or undo a review, archive, restore, pin,
purge, import or change the policy (:data:`AGENT_ACTIONS`).

Without an access list (a dashboard bound to this machine, no sign-in) whoever uses it is a
reviewer; with one, only the identities on it are reviewers and everyone else is a viewer.

A principal may also be held to some patients (:class:`PatientScope`: an agent started with
``--patient``, a bearer token's launch context): a call about any other patient is refused
with :class:`~memory_core.errors.OutOfScopeError` before anything is read or written."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import OutOfScopeError, ValidationError


class Role(enum.StrEnum):
    REVIEWER = "reviewer"
    VIEWER = "viewer"
    AGENT = "agent"


ROLE_LABELS: dict[Role, str] = {
    Role.REVIEWER: "reviewer",
    Role.VIEWER: "viewer (read-only)",
    Role.AGENT: "agent (reads, proposes and adds; decides nothing)",
}

#: What an agent may do beyond reading (the names of :class:`memory_core.engine.acting.Acting`'s
#: guarded operations): be given a patient's context section or search results (each recorded
#: in the injection ledger under its name) and add a memory. Everything else that writes --
#: deciding a review, pin, archive, restore, importance, import, policy, demo -- is refused.
AGENT_ACTIONS: frozenset[str] = frozenset({"get_context", "search", "add_memory"})


def permits(role: Role, action: str) -> bool:
    """Whether ``role`` may make the guarded operation ``action``: a reviewer every one, a
    viewer none, an agent those of :data:`AGENT_ACTIONS`."""
    if role is Role.REVIEWER:
        return True
    return role is Role.AGENT and action in AGENT_ACTIONS


#: An agent principal's actor name is ``agent:<name>``: the audit log, the injection ledger and
#: the memories it wrote (their ``source``) name it so.
AGENT_PREFIX = "agent:"
_AGENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def agent_principal(name: object) -> str:
    """``"ward-assistant"`` -> ``"agent:ward-assistant"``; a name is 1-64 letters, digits,
    '.', '_' or '-' (starting with a letter or digit), else ValidationError on ``agent``."""
    if not isinstance(name, str) or not _AGENT_NAME.fullmatch(name):
        raise ValidationError(
            "agent",
            "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit "
            f"(e.g. ward-assistant), got {name!r}",
        )
    return AGENT_PREFIX + name


def agent_name(actor: str | None) -> str | None:
    """The agent's name when ``actor`` is an agent principal (``agent:<name>``), else None."""
    if actor and actor.startswith(AGENT_PREFIX) and _AGENT_NAME.fullmatch(actor[6:]):
        return actor[len(AGENT_PREFIX) :]
    return None


@dataclass(frozen=True)
class PatientScope:
    """The patients a principal may reach: ``None`` every patient (the dashboard, an agent
    started without ``--patient``), else exactly those."""

    patients: frozenset[str] | None = None

    @classmethod
    def of(cls, patients: Iterable[str] | None) -> PatientScope:
        return cls(None if patients is None else frozenset(patients))

    @property
    def limited(self) -> bool:
        return self.patients is not None

    def allows(self, patient_id: str) -> bool:
        return self.patients is None or patient_id in self.patients

    def check(self, patient_id: object, actor: str) -> None:
        """OutOfScopeError unless ``patient_id`` is one of the scope's patients (checked before
        the id itself: a principal held to some patients learns nothing of any other)."""
        if self.patients is not None and patient_id not in self.patients:
            asked = "" if patient_id is None else str(patient_id)
            raise OutOfScopeError(actor, asked, sorted(self.patients))

    def narrowed(self, patients: Iterable[str] | None) -> PatientScope:
        """The patients both this scope and ``patients`` allow (a token's grant inside a
        server's ``--patient`` list)."""
        if patients is None:
            return self
        other = frozenset(patients)
        return PatientScope(other if self.patients is None else self.patients & other)


@dataclass(frozen=True)
class AccessRule:
    """``reviewers``: the identities (e-mail addresses, compared without case or surrounding
    spaces) that may change things; ``None`` means no access list is configured, and then every
    user is a reviewer (the local, single-user dashboard)."""

    reviewers: frozenset[str] | None = None

    @classmethod
    def from_list(cls, reviewers: Iterable[object] | None) -> AccessRule:
        if reviewers is None:
            return cls(None)
        return cls(frozenset(str(r).strip().lower() for r in reviewers if str(r).strip()))

    def role_of(self, identity: str | None) -> Role:
        if self.reviewers is None:
            return Role.REVIEWER
        if identity and identity.strip().lower() in self.reviewers:
            return Role.REVIEWER
        return Role.VIEWER
