"""Confirmations: a memory's fact asserted again, so its age restarts (domain.md, "Age counts
from the last confirmation").

A memory is confirmed when a newer memory is decided a duplicate of it (at the newer one's
``created_at``: :mod:`.supersession`), when a reviewer rejects a supersession of it (at the
review) or keeps it against a possibly-stale flag (at the keep: :mod:`.flagging`), and when
its system of record asserts it at a date -- an added record's ``confirmed_at``
(:mod:`.ingest`), or :func:`confirm_memories` for memories already stored (a re-import that
finds its resource still active). Each confirmation is kept on the memory
(:attr:`Memory.confirmations`, via :meth:`Memory.with_confirmation`, so an as-of view counts
only those taken effect by then). The engine writes the memory; the store audits each
confirmation it adds (``confirm_memory``, naming what confirmed it: derived from the change by
:mod:`memory_core.store.audit`, which also refuses a confirmation dated in the future or before
the memory was created).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .. import validation as v
from ..errors import ConflictError, NotFoundError, ValidationError
from ..store.base import ChangeSet, MemoryUpdate
from ..values import Confirmation, ConfirmationKind, Memory
from .core import Core

#: a batch of confirmations refused by a concurrent write is read again and retried this often
ATTEMPTS = 8


def record_confirmation(
    at: Any, created_at: datetime, now: datetime, field: str = "confirmed_at"
) -> datetime:
    """A system of record's confirmation moment: an aware timestamp, not in the future of
    ``now`` and not before the memory's ``created_at`` (ValidationError naming ``field``)."""
    out = v.confirmed_at(at, created_at, now, field)
    assert out is not None
    return out


def confirm_memories(
    core: Core, items: Iterable[Mapping[str, Any]], by: str, now: datetime | None
) -> list[Memory]:
    """Stored memories whose facts their system of record asserts again: each item names a
    ``memory_id``, the ``confirmed_at`` moment (default: now) and the ``source`` that asserts
    it (default: the memory's own source, else ``by``). Every item is checked before anything
    is written (a bad one names ``items[i].<field>``: an unknown memory, a moment in the future
    or before the memory was created); then one change set. A confirmation already recorded is
    not recorded twice. The memories come back as stored, in the order given (a memory named
    twice, once per mention). A superseded or archived memory is confirmed too (its age
    restarts) but stays as it is: only a reviewer's undo or restore brings it back."""
    by = v.actor(by)
    now = core.action_time(now)  # an action: no later than the clock (ValidationError on now)
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise ValidationError(
            "items", f"must be a list of mappings with memory_id, got {type(items).__name__}"
        )
    rows = list(items)
    for attempt in range(ATTEMPTS):
        try:
            return _confirm_once(core, rows, by, now)
        except ConflictError:  # another writer changed one of them: read them again
            if attempt == ATTEMPTS - 1:
                raise
            time.sleep(0.005 * 2**attempt)
    raise AssertionError("unreachable")


def _confirm_once(
    core: Core, rows: list[Mapping[str, Any]], by: str, now: datetime
) -> list[Memory]:
    ids: list[str] = []
    for i, item in enumerate(rows):
        if not isinstance(item, Mapping):
            raise ValidationError(f"items[{i}]", "must be a mapping with memory_id")
        ids.append(v.record_id(item.get("memory_id"), f"items[{i}].memory_id"))
    stored = {m.id: m for m in core.store.get_memories(sorted(set(ids)))}
    current: dict[str, Memory] = {}
    planned: list[tuple[int, Confirmation]] = []
    for i, (item, mid) in enumerate(zip(rows, ids, strict=True)):
        m = stored.get(mid)
        if m is None:
            raise NotFoundError("memory", mid)
        raw = item.get("confirmed_at")
        at = record_confirmation(
            now if raw is None else raw, m.created_at, now, f"items[{i}].confirmed_at"
        )
        src = v.source(item.get("source"), f"items[{i}].source") or m.source or by
        planned.append((i, Confirmation(at, ConfirmationKind.RECORD, src)))
    changes = ChangeSet()
    for i, conf in planned:
        mid = ids[i]
        current[mid] = current.get(mid, stored[mid]).with_confirmation(conf)
    changes.update_memories.extend(
        MemoryUpdate(m, stored[mid].version) for mid, m in current.items() if m is not stored[mid]
    )
    if changes.update_memories:
        core.apply(changes, by)
    fresh = {m.id: m for m in core.store.get_memories(sorted(current))}
    return [fresh[mid] for mid in ids]
