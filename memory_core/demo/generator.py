"""The synthetic demo generator: builds the patients, their sessions and memories from
the templates in :mod:`memory_core.demo.templates`. Pure: no clock, no global random state.

The Northwind demo is the same demo whatever the day it is seeded: it is built once as of
:data:`DEMO_EPOCH`, and seeding at ``now`` moves every date by ``now - DEMO_EPOCH``. The
statements, types, ages and access patterns relative to ``now`` never change, so the README's
walkthrough and the screenshots hold on every day. (Statements therefore name no calendar
month: a lab result's date is the memory's own date.)
"""

import math
import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from .templates import (
    ACCESS_RATE,
    ALLERGIES,
    BY_KEY,
    CONDITION_LABELS,
    EARLY_TYPES,
    LAB_SHARE,
    LABS,
    LATE_TYPES,
    MAX_ACCESSES,
    NORTHWIND,
    OBS_SERIES,
    POOLS,
    SCALE_CONDITIONS,
    SCALE_MEDS,
    SHORT_TERM_MAX_ACCESSES,
    SHORT_TERM_SHARE,
    TYPE_WEIGHTS,
    WORKED,
    WORKED_EXCLUDED,
    WORKED_HBA1C_AFTER,
    WORKED_HBA1C_BEFORE,
    WORKED_HBA1C_TEXTS,
    PatientSpec,
    Series,
    Template,
)


@dataclass(frozen=True)
class DemoMemory:
    """One synthetic memory, as it would have been written by the agent at ``created_at``."""

    patient_id: str
    content: str
    memory_type: str
    created_at: datetime
    access_times: tuple[datetime, ...]
    tier: str = "long_term"
    importance: float | None = None
    pinned: bool | None = None
    source: str = "demo"


@dataclass(frozen=True)
class DemoPatient:
    """A synthetic patient: an id, an invented label and the agent session times."""

    patient_id: str
    label: str
    visits: tuple[datetime, ...]


@dataclass(frozen=True)
class DemoDataset:
    """Patients plus all their memories, sorted by ``created_at`` across patients."""

    patients: tuple[DemoPatient, ...]
    memories: tuple[DemoMemory, ...]


def _ri(rng: random.Random, lo: int, hi: int) -> int:
    """Uniform integer in [lo, hi]; cheaper than ``randint`` on the hot paths."""
    return lo + int(rng.random() * (hi - lo + 1))


def _require_aware(now: datetime) -> datetime:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime (e.g. datetime.now(UTC))")
    return now.astimezone(UTC)


def _label(spec: PatientSpec) -> str:
    parts = [CONDITION_LABELS[c] for c in spec.conditions if c in CONDITION_LABELS]
    return f"Synthetic patient {spec.patient_id} ({', '.join(parts)}, {spec.age})"


def _make_visits(rng: random.Random, now: datetime, history_days: int) -> list[datetime]:
    """Session starts every 2-6 weeks from ``history_days`` ago; the last is >= 2 h before now."""
    base = (now - timedelta(days=history_days)).replace(hour=0, minute=0, second=0, microsecond=0)
    latest = int((now - base).total_seconds() // 60) - 120
    rand = rng.random
    minutes: list[int] = []
    day = 0
    while True:
        m = day * 1440 + 480 + 15 * int(rand() * 40)  # 08:00-17:45 UTC
        if m > latest:
            break
        minutes.append(m)
        day += 14 + int(rand() * 29)
    if not minutes:  # only reachable for absurdly short histories
        minutes.append(latest - 60)
    return [base + timedelta(minutes=m) for m in minutes]


def _fmt(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}" if decimals else str(round(value))


class _PatientBuilder:
    """Builds one patient's memories; ``strict`` forbids duplicate contents."""

    def __init__(self, rng: random.Random, spec: PatientSpec, now: datetime, strict: bool) -> None:
        self.rng = rng
        self.spec = spec
        self.now = now
        self.strict = strict
        self.visits = _make_visits(rng, now, spec.history_days)
        self.memories: list[DemoMemory] = []
        self.seen: set[str] = set()
        # Conditions named in labels come only from the profile, so labels stay complete.
        self.used_gids: set[str] = {f"condition:{key}" for key in CONDITION_LABELS}
        if spec.worked:
            self.used_gids |= WORKED_EXCLUDED
        self.facts: set[str] = set()
        self.tries = 40 if strict else 3  # attempts at a content not yet used by the patient

    # -- primitives -------------------------------------------------------------------

    @property
    def room(self) -> int:
        return self.spec.n_memories - len(self.memories)

    def _accesses(self, first: int, mtype: str, cap: int) -> tuple[datetime, ...]:
        visits = self.visits
        n = len(visits)
        if first >= n:
            return ()
        p = ACCESS_RATE[mtype]
        if n - first <= 3:  # recent memories are what the agent is still talking about
            p = max(p, 0.45)
        rand = self.rng.random
        chosen = [visits[i] for i in range(first, n) if rand() < p]
        if len(chosen) > cap:
            chosen = sorted(self.rng.sample(chosen, cap))
        return tuple(chosen)

    def _emit(
        self,
        mtype: str,
        text: str,
        created: datetime,
        first_access: int,
        *,
        short_term: bool = False,
        importance: float | None = None,
        pinned: bool | None = None,
    ) -> None:
        cap = SHORT_TERM_MAX_ACCESSES if short_term else MAX_ACCESSES
        self.seen.add(text)
        self.memories.append(
            DemoMemory(
                self.spec.patient_id,
                text,
                mtype,
                created,
                self._accesses(first_access, mtype, cap),
                "short_term" if short_term else "long_term",
                importance,
                pinned,
            )
        )

    def _pick_visit(self, mtype: str) -> int:
        r = self.rng.random()
        if mtype in EARLY_TYPES:
            r *= r
        elif mtype in LATE_TYPES:
            r = 0.25 + 0.75 * r
        return min(len(self.visits) - 1, int(r * len(self.visits)))

    def _emit_at_visit(
        self,
        mtype: str,
        text: str,
        idx: int,
        *,
        short_term: bool = False,
        importance: float | None = None,
        pinned: bool | None = None,
    ) -> None:
        created = self.visits[idx] + timedelta(seconds=_ri(self.rng, 240, 3300))
        self._emit(
            mtype,
            text,
            created,
            idx + 1,
            short_term=short_term,
            importance=importance,
            pinned=pinned,
        )

    def _first_visit_after(self, t: datetime) -> int:
        for i, v in enumerate(self.visits):
            if v > t:
                return i
        return len(self.visits)

    def _render(self, tpl: Template) -> str:
        return tpl.text.format(v=self.rng.choice(tpl.values)) if tpl.values else tpl.text

    def _use(self, mtype: str, tpl: Template, idx: int) -> None:
        self.used_gids.add(tpl.gid)
        self.facts.add(tpl.key)
        short = mtype == "observation" and self.rng.random() < SHORT_TERM_SHARE
        self._emit_at_visit(
            mtype,
            self._render(tpl),
            idx,
            short_term=short,
            importance=tpl.importance,
            pinned=tpl.pinned,
        )

    # -- phases -----------------------------------------------------------------------

    def build(self) -> tuple[DemoPatient, list[DemoMemory]]:
        anchors: list[tuple[datetime, float]] = []
        if self.spec.worked:
            anchors = self._worked_examples()
        self._fixed_facts()
        if self.room > 0:
            self._free_facts(anchors)
        patient = DemoPatient(self.spec.patient_id, _label(self.spec), tuple(self.visits))
        return patient, self.memories

    def _worked_examples(self) -> list[tuple[datetime, float]]:
        last = len(self.visits) - 1
        for mtype, text, frac in WORKED:
            if self.room > 0:
                self._emit_at_visit(mtype, text, round(frac * last))
        self.facts.update({"metformin", "metformin_er"})
        # HbA1c anchors (8.2 % then 7.1 %): the most recent January and March before `now`.
        now = self.now
        year = now.year if (now.month, now.day) >= (3, 8) else now.year - 1
        jan_lo = min(now.day + 1, 28) if (year < now.year and now.month == 1) else 3
        if year < now.year and now.month > 1:
            jan_lo = 20  # February / early March: keep January as recent as possible
        jan_day = self.rng.randint(jan_lo, max(jan_lo, 28))
        mar_hi = min(25, now.day - 2) if (year == now.year and now.month == 3) else 25
        mar_day = self.rng.randint(2, mar_hi)
        anchors: list[tuple[datetime, float]] = []
        for month, day, value, text in (
            (1, jan_day, 8.2, WORKED_HBA1C_TEXTS[0]),
            (3, mar_day, 7.1, WORKED_HBA1C_TEXTS[1]),
        ):
            created = datetime(
                year, month, day, self.rng.randint(7, 10), self.rng.randint(0, 59), tzinfo=UTC
            )
            if self.room > 0:
                self._emit("lab_result", text, created, self._first_visit_after(created))
            anchors.append((created, value))
        return anchors

    def _fixed_facts(self) -> None:
        spec = self.spec
        for text in spec.allergies:
            if self.room > 0 and text not in self.seen:
                self._emit_at_visit("allergy", text, 0)
        for mtype, keys, spread in (
            ("condition", spec.conditions, 2),
            ("medication", spec.medications, 3),
        ):
            for key in keys:
                tpl = BY_KEY[mtype][key]
                # label conditions are pre-reserved in used_gids; medications share groups
                if self.room > 0 and (mtype == "condition" or tpl.gid not in self.used_gids):
                    self._use(mtype, tpl, min(_ri(self.rng, 0, spread - 1), len(self.visits) - 1))

    def _free_facts(self, anchors: list[tuple[datetime, float]]) -> None:
        rng = self.rng
        remaining = self.room
        jittered = [(mtype, w * rng.uniform(0.75, 1.25)) for mtype, w in TYPE_WEIGHTS]
        for mtype, w in jittered:
            quota = math.floor(remaining * w)
            if quota <= 0 or self.room <= 0:
                continue
            avail = [
                t
                for t in POOLS[mtype]
                if t.gid not in self.used_gids and (not t.requires or t.requires in self.facts)
            ]
            rng.shuffle(avail)
            for tpl in avail:
                if quota <= 0 or self.room <= 0:
                    break
                if tpl.gid in self.used_gids:
                    continue
                self._use(mtype, tpl, self._pick_visit(mtype))
                quota -= 1
        left = self.room
        n_labs = round(left * LAB_SHARE)
        self._labs(n_labs, anchors)
        self._home_readings(self.room)

    def _next_value(self, series: Series, last: float | None, lo: float, hi: float) -> float:
        if last is None:
            value = self.rng.uniform(max(series.lo, lo), min(series.hi, hi))
        else:
            value = last + self.rng.uniform(-series.jitter, series.jitter)
        value = min(max(value, lo), hi)
        return round(value, series.decimals)

    def _labs(self, count: int, anchors: list[tuple[datetime, float]]) -> None:
        if count <= 0:
            return
        rng = self.rng
        n_visits = len(self.visits)
        candidates = list(range(1, n_visits)) or [0]
        total_w = sum(s.weight for s in LABS)
        counts = [math.floor(count * s.weight / total_w) for s in LABS]
        for i in range(count - sum(counts)):
            counts[i % len(counts)] += 1
        window = timedelta(days=75)
        for series, c in zip(LABS, counts, strict=True):
            if c <= 0:
                continue
            cands = candidates
            use_anchors = series.key == "hba1c" and bool(anchors)
            if use_anchors:
                cands = [
                    i
                    for i in candidates
                    if all(abs(self.visits[i] - a) >= window for a, _ in anchors)
                ] or candidates
            points: list[tuple[datetime, int]] = []
            for j in range(c):
                idx = cands[min(len(cands) - 1, int((j + rng.random()) / c * len(cands)))]
                visit = self.visits[idx]
                if idx == 0:
                    created = visit + timedelta(days=_ri(rng, 2, 6))
                    first = 1
                else:
                    created = visit - timedelta(days=_ri(rng, 2, 6))
                    first = idx
                created = created.replace(hour=_ri(rng, 6, 10), minute=_ri(rng, 0, 59))
                if created >= self.now:  # only possible for a degenerate one-visit history
                    created = self.now - timedelta(minutes=rng.randint(1, 59))
                points.append((created, first))
            points.sort()
            self._lab_series(series, points, anchors if use_anchors else [])

    def _lab_series(
        self,
        series: Series,
        points: list[tuple[datetime, int]],
        anchors: list[tuple[datetime, float]],
    ) -> None:
        last: float | None = None
        anchor_iter = iter(sorted(anchors))
        pending = next(anchor_iter, None)
        for created, first in points:
            while pending is not None and pending[0] <= created:
                last = pending[1]
                pending = next(anchor_iter, None)
            lo, hi = series.floor, series.ceil
            if anchors:
                lo, hi = WORKED_HBA1C_BEFORE if created < anchors[0][0] else WORKED_HBA1C_AFTER
                if last is not None and not lo <= last <= hi:
                    last = None
            text = ""
            value = 0.0
            for _ in range(self.tries):
                value = self._next_value(series, last, lo, hi)
                if last is None:
                    verb = "was"
                else:
                    delta = value - last
                    if abs(delta) < series.jitter * 0.2 or series.better == 0:
                        verb = "was steady at" if series.better else "was"
                    elif delta * series.better > 0:
                        verb = "improved to"
                    else:
                        verb = "rose to" if delta > 0 else "fell to"
                text = series.text.format(verb=verb, v=_fmt(value, series.decimals))
                if text not in self.seen:
                    break
            else:
                if self.strict:
                    raise RuntimeError(f"could not make a unique {series.key} lab text")
            last = value
            self._emit("lab_result", text, created, first)

    def _home_readings(self, count: int) -> None:
        rng = self.rng
        last: dict[str, float] = {}
        for _ in range(count):
            text = ""
            series = OBS_SERIES[0]
            value = 0.0
            for _ in range(self.tries):
                series = rng.choice(OBS_SERIES)
                value = self._next_value(series, last.get(series.key), series.floor, series.ceil)
                text = series.text.format(v=_fmt(value, series.decimals))
                if text not in self.seen:
                    break
            else:
                if self.strict:
                    raise RuntimeError("could not make a unique home-reading text")
            last[series.key] = value
            self._emit_at_visit(
                "observation",
                text,
                self._pick_visit("observation"),
                short_term=rng.random() < SHORT_TERM_SHARE,
            )


def _dataset(patients: list[DemoPatient], memories: list[DemoMemory]) -> DemoDataset:
    memories.sort(key=lambda m: m.created_at)
    return DemoDataset(tuple(patients), tuple(memories))


#: The moment the Northwind demo is built as of. Seeding at another moment moves every date by
#: the difference, never a statement.
DEMO_EPOCH = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
_BUILT: dict[int, DemoDataset] = {}  # seed -> the demo as of DEMO_EPOCH (built once)


def _build_northwind(seed: int) -> DemoDataset:
    if seed not in _BUILT:
        rng = random.Random(seed)
        patients: list[DemoPatient] = []
        memories: list[DemoMemory] = []
        for spec in NORTHWIND:
            patient, mems = _PatientBuilder(rng, spec, DEMO_EPOCH, strict=True).build()
            patients.append(patient)
            memories.extend(mems)
        _BUILT[seed] = _dataset(patients, memories)
    return _BUILT[seed]


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


def northwind_demo(now: datetime, seed: int = 7) -> DemoDataset:
    """The Northwind Health demo: 8 synthetic patients ``NW-1001`` ... ``NW-1008``.

    Each has 12-24 months of sessions before ``now`` and 34-147 memories (633 in all).
    NW-1001 carries the worked examples of the domain reference. ``now`` must be
    timezone-aware; all returned datetimes are UTC and every ``created_at`` is before it.
    The statements are the same for every ``now``: the demo built as of :data:`DEMO_EPOCH`,
    every date moved by ``now - DEMO_EPOCH``.
    """
    now = _require_aware(now)
    return _shift(_build_northwind(seed), now - DEMO_EPOCH)


def demo_labels() -> dict[str, str]:
    """The invented label of each Northwind demo patient (id -> label), without building the
    dataset: what the dashboard's patient search matches besides the id."""
    return {spec.patient_id: _label(spec) for spec in NORTHWIND}


def scale_dataset(
    n_patients: int, memories_per_patient: int, now: datetime, seed: int = 11
) -> DemoDataset:
    """The same generator at scale: patients ``SC-000001`` ... with exactly
    ``memories_per_patient`` memories each. Contents may repeat within a patient when the
    count is far beyond what the template pools can vary (thousands per patient)."""
    now = _require_aware(now)
    if n_patients < 0:
        raise ValueError("n_patients must be >= 0")
    if memories_per_patient < 0:
        raise ValueError("memories_per_patient must be >= 0")
    rng = random.Random(seed)
    patients: list[DemoPatient] = []
    memories: list[DemoMemory] = []
    for i in range(1, n_patients + 1):
        conditions = ("t2d", *rng.sample(SCALE_CONDITIONS, rng.randint(0, 2)))
        meds = (
            rng.choice(("metformin", "metformin_er")),
            *rng.sample(SCALE_MEDS, rng.randint(0, 3)),
        )
        allergies = (rng.choice(ALLERGIES),) if rng.random() < 0.25 else ()
        spec = PatientSpec(
            f"SC-{i:06d}",
            rng.randint(30, 85),
            rng.randint(372, 720),
            memories_per_patient,
            conditions,
            meds,
            allergies,
        )
        patient, mems = _PatientBuilder(rng, spec, now, strict=False).build()
        patients.append(patient)
        memories.extend(mems)
    return _dataset(patients, memories)
