"""The Northwind Health demo: eight synthetic patients, each one person with one story over
12-24 months, written out in ``memory_core/data/demo_northwind.jsonl`` (the stories in one
sentence each: docs/demo-patients.md).

The file holds the demo as of :data:`DEMO_EPOCH`, in UTC: per patient one line with the
invented label and the agent's session times, then one line per memory -- when it was written,
its type and statement, and the sessions (by their index) whose agent retrieved it. Seeding at
``now`` moves every date by ``now - DEMO_EPOCH``; the statements never change, so the README's
walkthrough and the screenshots hold on every day. (A statement therefore names no calendar
month: a lab result's date is the memory's own date.)

Everything in it is invented; no real person is named or described. The file is read once,
when the demo is first asked for (never at import).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from typing import Any

from .generator import DemoDataset, DemoMemory, DemoPatient, require_aware

#: The moment the Northwind demo is written as of. Seeding at another moment moves every date
#: by the difference, never a statement.
DEMO_EPOCH = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DATA_FILE = "data/demo_northwind.jsonl"


@dataclass(frozen=True)
class _Loaded:
    dataset: DemoDataset
    labels: dict[str, str]


_CACHE: list[_Loaded] = []


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _memory(rec: dict[str, Any], sessions: tuple[datetime, ...]) -> DemoMemory:
    return DemoMemory(
        patient_id=str(rec["patient"]),
        content=str(rec["content"]),
        memory_type=str(rec["type"]),
        created_at=_at(rec["at"]),
        access_times=tuple(sessions[i] for i in rec.get("used", ())),
        tier=str(rec.get("tier", "long_term")),
        importance=rec.get("importance"),
        pinned=rec.get("pinned"),
    )


def _parse(text: str) -> _Loaded:
    patients: list[DemoPatient] = []
    memories: list[DemoMemory] = []
    labels: dict[str, str] = {}
    sessions: dict[str, tuple[datetime, ...]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        pid = str(rec["patient"])
        if "sessions" in rec:
            sessions[pid] = tuple(_at(s) for s in rec["sessions"])
            labels[pid] = str(rec["label"])
            patients.append(DemoPatient(pid, labels[pid], sessions[pid]))
        elif pid in sessions:
            memories.append(_memory(rec, sessions[pid]))
        else:
            raise ValueError(f"{DATA_FILE} line {n}: a memory of {pid} before its patient line")
    memories.sort(key=lambda m: m.created_at)  # stable: one patient's file order among ties
    return _Loaded(DemoDataset(tuple(patients), tuple(memories)), labels)


def _loaded() -> _Loaded:
    if not _CACHE:
        _CACHE.append(_parse(files("memory_core").joinpath(DATA_FILE).read_text("utf-8")))
    return _CACHE[0]


def _shift(data: DemoDataset, delta: timedelta) -> DemoDataset:
    """The same dataset with every moment moved by ``delta``."""
    return DemoDataset(
        tuple(replace(p, visits=tuple(v + delta for v in p.visits)) for p in data.patients),
        tuple(
            replace(
                m,
                created_at=m.created_at + delta,
                access_times=tuple(t + delta for t in m.access_times),
            )
            for m in data.memories
        ),
    )


def northwind_demo(now: datetime) -> DemoDataset:
    """The Northwind Health demo: 8 synthetic patients ``NW-1001`` ... ``NW-1008``, each with
    12-24 months of sessions before ``now``. NW-1001 carries the worked examples of the domain
    reference. ``now`` must be timezone-aware; all returned datetimes are UTC and every
    ``created_at`` is before it. The statements are the same for every ``now``: the demo as of
    :data:`DEMO_EPOCH`, every date moved by ``now - DEMO_EPOCH``."""
    now = require_aware(now)
    return _shift(_loaded().dataset, now - DEMO_EPOCH)


def demo_labels() -> dict[str, str]:
    """The invented label of each Northwind demo patient (id -> label): what the dashboard's
    patient search matches besides the id."""
    return dict(_loaded().labels)
