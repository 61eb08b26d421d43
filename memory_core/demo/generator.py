"""The synthetic scale generator: builds patients, their sessions and memories from the
templates in :mod:`memory_core.demo.templates` for benchmarks and load tests
(:func:`scale_dataset`). Pure: no clock, no global random state. Its patients are assembled
from shared sentences, so two of them may say the same thing: the Northwind demo patients are
written out as people instead (:mod:`memory_core.demo.northwind`).
"""

import math
import random
from dataclasses import dataclass
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
    OBS_SERIES,
    POOLS,
    SCALE_CONDITIONS,
    SCALE_MEDS,
    SHORT_TERM_MAX_ACCESSES,
    SHORT_TERM_SHARE,
    TYPE_WEIGHTS,
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


def require_aware(now: datetime) -> datetime:
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
    """Builds one patient's memories (a content may repeat when the pools run out)."""

    def __init__(self, rng: random.Random, spec: PatientSpec, now: datetime) -> None:
        self.rng = rng
        self.spec = spec
        self.now = now
        self.visits = _make_visits(rng, now, spec.history_days)
        self.memories: list[DemoMemory] = []
        self.seen: set[str] = set()
        # Conditions named in labels come only from the profile, so labels stay complete.
        self.used_gids: set[str] = {f"condition:{key}" for key in CONDITION_LABELS}
        self.facts: set[str] = set()
        self.tries = 3  # attempts at a content not yet used by the patient

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
        self._fixed_facts()
        if self.room > 0:
            self._free_facts()
        patient = DemoPatient(self.spec.patient_id, _label(self.spec), tuple(self.visits))
        return patient, self.memories

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

    def _free_facts(self) -> None:
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
        self._labs(n_labs)
        self._home_readings(self.room)

    def _next_value(self, series: Series, last: float | None, lo: float, hi: float) -> float:
        if last is None:
            value = self.rng.uniform(max(series.lo, lo), min(series.hi, hi))
        else:
            value = last + self.rng.uniform(-series.jitter, series.jitter)
        value = min(max(value, lo), hi)
        return round(value, series.decimals)

    def _labs(self, count: int) -> None:
        if count <= 0:
            return
        rng = self.rng
        n_visits = len(self.visits)
        candidates = list(range(1, n_visits)) or [0]
        total_w = sum(s.weight for s in LABS)
        counts = [math.floor(count * s.weight / total_w) for s in LABS]
        for i in range(count - sum(counts)):
            counts[i % len(counts)] += 1
        for series, c in zip(LABS, counts, strict=True):
            if c <= 0:
                continue
            cands = candidates
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
            self._lab_series(series, points)

    def _lab_series(self, series: Series, points: list[tuple[datetime, int]]) -> None:
        last: float | None = None
        lo, hi = series.floor, series.ceil
        for created, first in points:
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


def scale_dataset(
    n_patients: int, memories_per_patient: int, now: datetime, seed: int = 11
) -> DemoDataset:
    """The same generator at scale: patients ``SC-000001`` ... with exactly
    ``memories_per_patient`` memories each. Contents may repeat within a patient when the
    count is far beyond what the template pools can vary (thousands per patient)."""
    now = require_aware(now)
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
        patient, mems = _PatientBuilder(rng, spec, now).build()
        patients.append(patient)
        memories.extend(mems)
    return _dataset(patients, memories)
