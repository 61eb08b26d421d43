"""What the injected section says about uncertainty, derived (never stored) from a patient's
memories and supersessions as of a moment: "possibly stale" flags, pending supersessions and a
lab result's history.

Derived, so an as-of query sees the flags as they stood then and undoing a supersession
clears the flags it raised; only a reviewer's "keep" decision is recorded (an audit entry,
read back by the engine and passed here as ``kept``). Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache

from .context import sanitize_line
from .drugs import canonical_names
from .labs import analytes as analyte_mentions
from .status import holders, status_at
from .values import Memory, StaleFlag, Status, Supersession, SupersessionState

# verdicts that change a fact's state (a duplicate says the same thing: nothing is stale)
CHANGING_VERDICTS = frozenset({"updates", "contradicts"})
PENDING_CHARS = 80  # the newer statement of a pending supersession, shortened to this

# Conditions named in free text -> one canonical name (a small list of our own, covering the
# chronic conditions of diabetes care; a condition outside it raises no flag).
CONDITION_TERMS: dict[str, str] = {
    "type 2 diabetes": "type 2 diabetes",
    "diabetes": "type 2 diabetes",
    "neuropathy": "neuropathy",
    "high blood pressure": "hypertension",
    "hypertension": "hypertension",
    "chronic kidney disease": "chronic kidney disease",
    "kidney disease": "chronic kidney disease",
    "ckd": "chronic kidney disease",
    "depression": "depression",
    "low mood": "depression",
    "underactive thyroid": "hypothyroidism",
    "hypothyroidism": "hypothyroidism",
    "osteoarthritis": "osteoarthritis",
    "foot ulcer": "foot ulcer",
    "ulcer": "foot ulcer",
    "sleep apnea": "sleep apnea",
    "sleep apnoea": "sleep apnea",
    "obesity": "obesity",
    "retinopathy": "retinopathy",
    "heart failure": "heart failure",
    "atrial fibrillation": "atrial fibrillation",
    "asthma": "asthma",
    "copd": "copd",
    "gout": "gout",
    "cough": "cough",
    "fatty liver": "fatty liver",
    "gastroparesis": "gastroparesis",
}
_CONDITION_RE = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, CONDITION_TERMS), key=len, reverse=True)) + r")\b"
)
_VALUE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?%?)")


@lru_cache(maxsize=65_536)
def condition_mentions(text: str) -> frozenset[str]:
    """The conditions of :data:`CONDITION_TERMS` named in ``text`` (canonical names)."""
    return frozenset(CONDITION_TERMS[m] for m in _CONDITION_RE.findall(text.lower()))


@lru_cache(maxsize=65_536)
def drug_names(text: str) -> frozenset[str]:
    """The drugs ``text`` names (canonical names from :mod:`memory_core.drugs`, the same
    dictionary the verdict rule uses); a bare "insulin" next to a named insulin is dropped, so
    that a glargine change does not flag lispro."""
    found = canonical_names(text)
    return found - {"insulin"} if len(found) > 1 else found


def mentions(memory: Memory, kind: str) -> frozenset[str]:
    """The conditions (``kind == "condition"``) or else the drugs ``memory`` names."""
    if kind == "condition":
        return condition_mentions(memory.content)
    return drug_names(memory.content)


def active_at(
    memories: Sequence[Memory], supersessions: Iterable[Supersession], now: datetime
) -> list[Memory]:
    """The memories active at ``now`` (created by then, not archived, not held by a
    supersession in effect)."""
    held = holders(supersessions, now)
    return [
        m for m in memories if m.created_at <= now and status_at(m, held, now)[0] is Status.ACTIVE
    ]


def stale_flags(
    memories: Sequence[Memory],
    supersessions: Sequence[Supersession],
    now: datetime,
    kept: Mapping[tuple[str, str], datetime] | None = None,
    *,
    active: Sequence[Memory] | None = None,
) -> list[StaleFlag]:
    """The "possibly stale" flags at ``now``: for every supersession in effect that changed a
    medication (or a condition), each active memory of another type, created before the change
    took effect, naming the same drug (or condition). ``kept``: (memory id, change id) -> when a
    reviewer kept the memory; the flag is cleared from then on. ``active``: the memories
    active at ``now`` when the caller knows them already. Ordered by ``since``, newest
    first, then memory id."""
    by_id = {m.id: m for m in memories}
    changes = [
        s
        for s in supersessions
        if s.verdict in CHANGING_VERDICTS
        and s.in_effect(now)
        and s.effective_at is not None
        and s.old_id in by_id
        and by_id[s.old_id].memory_type in ("medication", "condition")
    ]
    if not changes:
        return []
    if active is None:
        active = active_at(memories, supersessions, now)
    kept = kept or {}
    out: list[StaleFlag] = []
    for s in changes:
        old = by_id[s.old_id]
        kind = old.memory_type
        names = mentions(old, kind)
        if not names or s.effective_at is None:
            continue
        for m in active:
            if m.memory_type == kind or m.id == s.new_id or m.created_at >= s.effective_at:
                continue
            common = names & mentions(m, kind)
            if not common:
                continue
            at = kept.get((m.id, s.id))
            if at is not None and at <= now:
                continue
            out.append(
                StaleFlag(
                    memory_id=m.id,
                    patient_id=m.patient_id,
                    change_id=s.id,
                    changed_id=old.id,
                    new_id=s.new_id,
                    subject=sorted(common)[0],
                    kind=kind,
                    since=s.effective_at,
                )
            )
    out.sort(key=lambda f: (-f.since.timestamp(), f.memory_id, f.change_id))
    return out


def pending_annotation(
    memory: Memory,
    supersessions: Iterable[Supersession],
    by_id: Mapping[str, Memory],
    now: datetime,
) -> str | None:
    """``(pending review: <newer statement, shortened>)`` when a supersession of ``memory``
    waits for a reviewer at ``now`` (the newest such one)."""
    newest: Memory | None = None
    for s in supersessions:
        if s.old_id != memory.id or s.state is not SupersessionState.PENDING:
            continue
        if s.detected_at > now:
            continue
        newer = by_id.get(s.new_id)
        if newer is None or newer.created_at > now:
            continue
        if newest is None or newer.created_at > newest.created_at:
            newest = newer
    if newest is None:
        return None
    return f"(pending review: {sanitize_line(newest.content, PENDING_CHARS)})"


def lab_value(text: str) -> str | None:
    """The first number of a lab statement (with its ``%``), e.g. ``85`` or ``9.6%``."""
    m = _VALUE.search(text)
    return m.group(1) if m else None


def lab_history(
    memory: Memory,
    supersessions: Iterable[Supersession],
    by_id: Mapping[str, Memory],
    now: datetime,
    limit: int = 3,
) -> str | None:
    """``(was 85 in July 2026, 90 in February 2026, 89 in October 2025)``: the values of the
    same analyte that ``memory`` (a lab result) superseded, directly or along a chain of
    supersessions in effect at ``now``, newest first, at most ``limit``."""
    if memory.memory_type != "lab_result":
        return None
    analytes = analyte_mentions(memory.content)
    if not analytes:
        return None
    older: dict[str, list[str]] = {}
    for s in supersessions:
        if s.in_effect(now):
            older.setdefault(s.new_id, []).append(s.old_id)
    seen = {memory.id}
    frontier = [memory.id]
    found: list[Memory] = []
    while frontier:
        nxt: list[str] = []
        for mid in frontier:
            for oid in older.get(mid, ()):
                o = by_id.get(oid)
                if oid in seen or o is None or o.memory_type != "lab_result":
                    continue
                seen.add(oid)
                if analyte_mentions(o.content) & analytes and o.created_at <= now:
                    found.append(o)
                    nxt.append(oid)
        frontier = nxt
    shown: list[tuple[str, datetime]] = []
    for o in sorted(found, key=lambda m: m.created_at, reverse=True):
        value = lab_value(o.content)
        if value is None:
            continue
        shown.append((value, o.created_at))
        if len(shown) >= limit:
            break
    # a month named twice says nothing about which came first: then each reading's day
    months = [f"{d:%Y-%m}" for _v, d in shown]
    by_day = len(set(months)) < len(months) or any(
        f"{d:%Y-%m}" == f"{memory.created_at:%Y-%m}" for _v, d in shown
    )
    parts = [f"{v} on {d:%Y-%m-%d}" if by_day else f"{v} in {d:%B %Y}" for v, d in shown]
    return f"(was {', '.join(parts)})" if parts else None
