"""Who may change what: the roles of the dashboard's users and the rule that gives a signed-in
identity its role. Pure: no I/O. The guard that applies it to every write is
:class:`memory_core.engine.acting.Acting` (``engine.acting_as(actor, role)``).

Two roles. A **reviewer** may make every change the dashboard offers (decide reviews, pin,
archive, edit importance, add memories, import, save the policy, load the demo). A **viewer**
may look at everything and preview (a preview writes nothing) but change nothing.

Without an access list (a dashboard bound to this machine, no sign-in) whoever uses it is a
reviewer; with one, only the identities on it are reviewers and everyone else is a viewer."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Role(enum.StrEnum):
    REVIEWER = "reviewer"
    VIEWER = "viewer"


ROLE_LABELS: dict[Role, str] = {
    Role.REVIEWER: "reviewer",
    Role.VIEWER: "viewer (read-only)",
}


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
