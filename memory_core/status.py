"""The one status rule: which memories are active, superseded or archived at a moment.

A memory is archived from its ``archived_at`` on; otherwise it is superseded while a
supersession in effect holds it (the newest such record names what replaced it); otherwise it
is active. The engine's as-of views, undo, restore and the Cosmos store's read repair all ask
this module; none of them writes the rule again. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from .values import IN_EFFECT, Memory, Status, Supersession


def holders(
    supersessions: Iterable[Supersession], at: datetime | None = None
) -> dict[str, list[str]]:
    """Older memory id -> the ids of the newer memories whose supersessions hold it, in
    detection order (detected_at, then id).

    ``at=None`` asks for the stored state (every supersession whose state is in effect);
    a moment asks which were in effect then (an undone one was, between taking effect and
    being undone; a confirmed one from its confirmation on)."""
    out: dict[str, list[str]] = {}
    for s in sorted(supersessions, key=lambda s: (s.detected_at, s.id)):
        held = s.state in IN_EFFECT if at is None else s.in_effect(at)
        if held:
            out.setdefault(s.old_id, []).append(s.new_id)
    return out


def status_at(
    memory: Memory, held_by: Mapping[str, Sequence[str]], at: datetime | None = None
) -> tuple[Status, str | None]:
    """``(status, superseded_by)`` of ``memory`` given ``held_by`` from :func:`holders` for the
    same moment. ``at=None`` reads the stored archive state; a moment reads it as of then."""
    archived = (
        memory.status is Status.ARCHIVED
        if at is None
        else memory.archived_at is not None and memory.archived_at <= at
    )
    if archived:
        return Status.ARCHIVED, memory.superseded_by
    newer = held_by.get(memory.id)
    if newer:
        return Status.SUPERSEDED, newer[-1]
    return Status.ACTIVE, None
