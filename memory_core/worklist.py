"""The reviewer's worklist across patients (issue 16): what is waiting for a person, most
urgent first. Pure ordering and shaping of records the engine has already read (it reads only
supersessions, the audit log and the few memories they name; see
:meth:`memory_core.engine.facade.MemoryEngine.worklist`). No I/O, no clock.

Order: reviews of safety-critical types (allergy, adverse reaction), then safety-critical
memories demoted or archived in the last days, then "possibly stale" flags, then the other
reviews, then the cleanup previews; within a group, oldest first (the longest waiting), and on
equal waits allergies first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from .importance import SAFETY_TYPES
from .labels import type_label, verdict_label
from .values import AuditAction, AuditEntry, Memory, Status, Supersession

WorkKind = Literal["review", "safety_change", "stale_flag", "cleanup"]

KIND_LABELS: dict[str, str] = {
    "review": "Waiting for review",
    "safety_change": "Safety fact demoted or archived",
    "stale_flag": "Possibly out of date",
    "cleanup": "Next cleanup would archive",
}

#: How far back a demoted or archived safety-critical memory stays on the worklist.
SAFETY_WINDOW = timedelta(days=7)

#: Audit actions that take a memory out of (or down in) the agent's context.
DEMOTING_ACTIONS: tuple[AuditAction, ...] = (
    AuditAction.SUPERSEDE,
    AuditAction.ARCHIVE,
    AuditAction.CLEANUP_ARCHIVE,
    AuditAction.EDIT_IMPORTANCE,
)


@dataclass(frozen=True)
class WorkItem:
    """One thing a reviewer should look at: which patient, what, and since when."""

    kind: WorkKind
    patient_id: str
    title: str  # in clinician words, one line
    since: datetime  # waiting since / happened at
    memory_type: str | None = None
    safety: bool = False  # about an allergy or adverse reaction
    ref: str | None = None  # the supersession id (review) or memory id (others)
    detail: str = ""  # technical detail for an expander
    count: int | None = None  # cleanup: how many memories

    @property
    def kind_label(self) -> str:
        return KIND_LABELS[self.kind]

    @property
    def link(self) -> str:
        """The query string that opens the patient in the dashboard."""
        return f"?patient={self.patient_id}"

    @property
    def rank(self) -> tuple[int, float, int, str, str]:
        if self.kind == "review":
            group = 0 if self.safety else 3
        else:
            group = {"safety_change": 1, "stale_flag": 2, "cleanup": 4}[self.kind]
        # equal waits (e.g. detected by one scan): allergies before adverse reactions
        first = 0 if self.memory_type == "allergy" else 1
        return (group, self.since.timestamp(), first, self.patient_id, self.ref or "")


class WorkList(list[WorkItem]):
    """The items shown (at most ``limit``), plus what the counts on top need: the number of
    items of each kind before the limit and the number of patients concerned."""

    def __init__(self, items: Iterable[WorkItem], totals: Mapping[str, int], patients: int):
        super().__init__(items)
        self.totals: dict[str, int] = {k: int(totals.get(k, 0)) for k in KIND_LABELS}
        self.patients = patients

    @property
    def total(self) -> int:
        return sum(self.totals.values())


def shorten(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def review_items(pending: Sequence[Supersession], memories: Mapping[str, Memory]) -> list[WorkItem]:
    """One item per pending supersession. ``memories`` holds the older memories (for the
    type and the statement) and, where known, the newer ones. A review waits since its newer
    memory's created_at -- the moment it was raised in the patient's record, as the section's
    "pending review" note counts it -- or, that memory unknown, since it was detected."""
    out: list[WorkItem] = []
    for s in pending:
        old = memories.get(s.old_id)
        new = memories.get(s.new_id)
        mtype = old.memory_type if old else (new.memory_type if new else None)
        label = type_label(mtype) if mtype else "Memory"
        if old is not None and new is not None:
            title = (
                f"{label}: does “{shorten(new.content, 70)}” replace “{shorten(old.content, 70)}”?"
            )
        elif old is not None:
            title = f"{label}: a newer statement may replace “{shorten(old.content, 90)}”"
        else:
            title = f"{label}: a possible replacement is waiting for review"
        detail = (
            f"Supersession {s.id} · newer {verdict_label(s.verdict)} older · "
            f"similarity {s.similarity:.2f} · method {s.method}"
        )
        out.append(
            WorkItem(
                kind="review",
                patient_id=s.patient_id,
                title=title,
                since=s.detected_at if new is None else new.created_at,
                memory_type=mtype,
                safety=mtype in SAFETY_TYPES,
                ref=s.id,
                detail=detail,
            )
        )
    return out


def _demotion(entry: AuditEntry) -> str | None:
    """What the entry did to the memory, in words, or None when it did not demote it."""
    before, after = entry.before or {}, entry.after or {}
    if entry.action == AuditAction.SUPERSEDE:
        return "replaced by a newer memory"
    if entry.action == AuditAction.ARCHIVE:
        return "archived by a reviewer"
    if entry.action == AuditAction.CLEANUP_ARCHIVE:
        return "archived by cleanup"
    if entry.action == AuditAction.EDIT_IMPORTANCE:
        b, a = before.get("importance"), after.get("importance")
        if isinstance(b, int | float) and isinstance(a, int | float) and a < b:
            return f"importance lowered from {b:g} to {a:g}"
    return None


def safety_change_items(
    entries: Iterable[AuditEntry], current: Mapping[str, Memory], now: datetime
) -> list[WorkItem]:
    """Safety-critical memories demoted or archived within :data:`SAFETY_WINDOW` before
    ``now``, newest entry per memory, skipping those that have since been put back
    (``current`` holds the memories as stored now; one missing was purged and stays listed)."""
    since = now - SAFETY_WINDOW
    latest: dict[str, tuple[AuditEntry, str]] = {}
    for e in entries:
        if e.entity != "memory" or e.patient_id is None or not (since <= e.at <= now):
            continue
        mtype = (e.before or {}).get("memory_type")
        if mtype not in SAFETY_TYPES:
            continue
        what = _demotion(e)
        if what is None:
            continue
        known = latest.get(e.entity_id)
        if known is None or known[0].at < e.at:
            latest[e.entity_id] = (e, what)
    out: list[WorkItem] = []
    for mid, (e, what) in latest.items():
        mem = current.get(mid)
        if mem is not None:
            if e.action == AuditAction.EDIT_IMPORTANCE:
                if mem.importance >= float((e.before or {}).get("importance", 0.0)):
                    continue  # raised again since
            elif mem.status is Status.ACTIVE:
                continue  # restored or the supersession undone since
        mtype = str((e.before or {}).get("memory_type"))
        content = str((e.before or {}).get("content", ""))
        out.append(
            WorkItem(
                kind="safety_change",
                patient_id=e.patient_id or "",
                title=f"{type_label(mtype)} {what}: “{shorten(content)}”",
                since=e.at,
                memory_type=mtype,
                safety=True,
                ref=mid,
                detail=f"Memory {mid} · audit action {e.action} by {e.actor}",
            )
        )
    return out


def stale_flag_item(
    patient_id: str,
    memory_id: str,
    content: str,
    reason: str,
    since: datetime,
    memory_type: str | None = None,
) -> WorkItem:
    """A "possibly stale" flag (issue 14) as a worklist item: ``reason`` in words, e.g.
    "metformin changed on 3 Oct 2026"."""
    return WorkItem(
        kind="stale_flag",
        patient_id=patient_id,
        title=f"May be out of date ({reason}): “{shorten(content)}”",
        since=since,
        memory_type=memory_type,
        safety=memory_type in SAFETY_TYPES if memory_type else False,
        ref=memory_id,
        detail=f"Memory {memory_id}",
    )


def cleanup_item(
    patient_id: str, would_archive: Sequence[Memory], threshold: float
) -> WorkItem | None:
    """The patient's cleanup preview as an item (None when cleanup would archive nothing);
    "since" is the oldest last use among the memories it would archive."""
    if not would_archive:
        return None
    n = len(would_archive)
    oldest = min(m.last_accessed for m in would_archive)
    noun = "memory" if n == 1 else "memories"
    return WorkItem(
        kind="cleanup",
        patient_id=patient_id,
        title=f"The next cleanup would archive {n} faded {noun}",
        since=oldest,
        ref=None,
        detail=f"strength below {threshold:g}: " + ", ".join(m.id for m in would_archive[:10]),
        count=n,
    )


def build(items: Iterable[WorkItem], limit: int) -> WorkList:
    """Order every item and keep the first ``limit``; the totals count them all."""
    ordered = sorted(items, key=lambda w: w.rank)
    totals: dict[str, int] = {}
    for w in ordered:
        totals[w.kind] = totals.get(w.kind, 0) + 1
    patients = len({w.patient_id for w in ordered})
    return WorkList(ordered[: max(0, limit)], totals, patients)


def newest_decisions_first(
    decisions: Iterable[Supersession], memories: Mapping[str, Memory]
) -> list[Supersession]:
    """Decisions for a History list: the newest decision first. Decisions made at one moment (a
    bulk import or the demo's seeding decides them all at once) follow the statements they are
    about, the newest newer statement first (when it is not in ``memories``, the moment the
    decision took effect), then the record's id, so the order is the same on every read."""

    def key(s: Supersession) -> tuple[datetime, datetime, str]:
        newer = memories.get(s.new_id)
        about = newer.created_at if newer is not None else (s.effective_at or s.detected_at)
        return (s.decided_at or s.detected_at, about, s.id)

    return sorted(decisions, key=key, reverse=True)


def first_patients(items: Sequence[WorkItem], n: int) -> list[str]:
    """The first ``n`` distinct patients in worklist order."""
    out: list[str] = []
    for w in sorted(items, key=lambda w: w.rank):
        if w.patient_id not in out:
            out.append(w.patient_id)
            if len(out) >= n:
                break
    return out
