"""Tests for the synthetic demo-data generator (memory_core.demo)."""

from __future__ import annotations

import ast
from collections import defaultdict
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory_core import demo
from memory_core.demo import (
    DEMO_EPOCH,
    MEMORY_TYPES,
    DemoDataset,
    DemoMemory,
    northwind_demo,
    scale_dataset,
)

NOW = datetime(2025, 6, 15, 12, 0, tzinfo=UTC)


WORKED_ORDER = (
    ("medication", "Patient tolerates metformin 500mg well"),
    (
        "medication",
        "Patient reports persistent GI distress on metformin; "
        "switched to extended-release formulation",
    ),
    ("preference", "Patient prefers morning appointments"),
    ("preference", "Patient now prefers afternoon appointments"),
    ("allergy", "Patient has documented penicillin allergy with anaphylactic reaction"),
    ("allergy", "Patient has a sulfa drug allergy causing rash"),
    ("lab_result", "Patient's HbA1c was 8.2%"),
    ("lab_result", "Patient's HbA1c improved to 7.1%"),
)


@pytest.fixture(scope="module")
def data() -> DemoDataset:
    return northwind_demo(NOW)


def by_patient(ds: DemoDataset) -> dict[str, list[DemoMemory]]:
    out: dict[str, list[DemoMemory]] = defaultdict(list)
    for m in ds.memories:
        out[m.patient_id].append(m)
    return out


def find(mems: list[DemoMemory], content: str) -> DemoMemory:
    hits = [m for m in mems if m.content == content]
    assert len(hits) == 1, content
    return hits[0]


def check_invariants(ds: DemoDataset, now: datetime) -> None:
    ids = {p.patient_id for p in ds.patients}
    visits = {p.patient_id: p.visits for p in ds.patients}
    created = [m.created_at for m in ds.memories]
    assert created == sorted(created)
    for p in ds.patients:
        assert list(p.visits) == sorted(p.visits)
        for v in p.visits:
            assert v.tzinfo is not None and v.utcoffset() == timedelta(0)
            assert v <= now
    for m in ds.memories:
        assert m.patient_id in ids
        assert m.memory_type in MEMORY_TYPES
        assert m.tier in ("long_term", "short_term")
        assert m.source == "demo"
        assert m.created_at.tzinfo is not None and m.created_at.utcoffset() == timedelta(0)
        assert m.created_at < now
        assert list(m.access_times) == sorted(m.access_times)
        for t in m.access_times:
            assert t.tzinfo is not None and t.utcoffset() == timedelta(0)
            assert m.created_at < t <= now
            assert t in visits[m.patient_id]  # retrievals happen in agent sessions


# --- northwind_demo ------------------------------------------------------------------------


def test_deterministic(data: DemoDataset) -> None:
    assert northwind_demo(NOW) == data


def test_same_instant_in_another_zone_gives_same_data(data: DemoDataset) -> None:
    elsewhere = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert northwind_demo(elsewhere) == data


def test_eight_synthetic_patients(data: DemoDataset) -> None:
    assert [p.patient_id for p in data.patients] == [f"NW-{1001 + i}" for i in range(8)]
    for p in data.patients:
        assert p.label.startswith(f"Synthetic patient {p.patient_id} (")
        assert "T2 diabetes" in p.label


def test_counts_per_patient(data: DemoDataset) -> None:
    counts = {pid: len(ms) for pid, ms in by_patient(data).items()}
    assert set(counts) == {p.patient_id for p in data.patients}
    assert all(30 <= c <= 150 for c in counts.values()), counts
    assert len(set(counts.values())) >= 6, counts  # sizes vary
    assert 450 <= len(data.memories) <= 700  # 498 since issue 35 made each patient one person
    assert sum(counts.values()) == len(data.memories)


def test_history_span_and_visit_cadence(data: DemoDataset) -> None:
    mems = by_patient(data)
    for p in data.patients:
        start = p.visits[0]
        assert all(m.created_at >= start for m in mems[p.patient_id])
        assert 365 <= (NOW - start).days <= 731, p.patient_id
        gaps = [(b - a).days for a, b in zip(p.visits, p.visits[1:], strict=False)]
        assert gaps and all(13 <= g <= 43 for g in gaps), (p.patient_id, gaps)
        assert (NOW - p.visits[-1]).days <= 43


def test_datetimes_and_access_times(data: DemoDataset) -> None:
    check_invariants(data, NOW)


def test_access_pattern_is_plausible(data: DemoDataset) -> None:
    counts = [len(m.access_times) for m in data.memories]
    assert max(counts) <= 8
    assert sum(c == 0 for c in counts) > 0
    assert sum(c >= 3 for c in counts) > len(counts) // 5
    allergies = [len(m.access_times) for m in data.memories if m.memory_type == "allergy"]
    observations = [len(m.access_times) for m in data.memories if m.memory_type == "observation"]
    assert sum(allergies) / len(allergies) > sum(observations) / len(observations)


def test_tiers_and_overrides_are_rare(data: DemoDataset) -> None:
    short = [m for m in data.memories if m.tier == "short_term"]
    observations = [m for m in data.memories if m.memory_type == "observation"]
    assert short and all(m.memory_type == "observation" for m in short)
    assert 0.03 <= len(short) / len(observations) <= 0.2
    assert all(len(m.access_times) < 3 for m in short)  # not yet promoted
    explicit = [m for m in data.memories if m.importance is not None or m.pinned is not None]
    assert len(explicit) <= len(data.memories) // 20


def test_no_duplicate_content_within_a_patient(data: DemoDataset) -> None:
    for pid, mems in by_patient(data).items():
        contents = [m.content for m in mems]
        assert len(contents) == len(set(contents)), pid


def test_content_shape(data: DemoDataset) -> None:
    for m in data.memories:
        assert m.content.startswith("Patient"), m.content
        assert 3 <= len(m.content.split()) <= 20, m.content


def test_lab_results_name_no_month(data: DemoDataset) -> None:
    """A statement never names a calendar month: the demo's dates move with the seeding day
    and a month in the text would then contradict the memory's own date."""
    months = ("January", "February", "March", "April", "May", "June", "July", "August")
    months += ("September", "October", "November", "December")
    labs = [m for m in data.memories if m.memory_type == "lab_result"]
    assert labs
    assert not [m.content for m in data.memories if any(w in m.content for w in months)]
    hba1c_patients = {m.patient_id for m in labs if "HbA1c" in m.content}
    assert len(hba1c_patients) == 8


def test_worked_examples_for_nw1001(data: DemoDataset) -> None:
    mems = by_patient(data)["NW-1001"]
    for mtype, content in WORKED_ORDER:
        assert find(mems, content).memory_type == mtype
    assert find(mems, "Patient lives alone").memory_type == "social"
    for i in range(0, len(WORKED_ORDER), 2):
        older = find(mems, WORKED_ORDER[i][1])
        newer = find(mems, WORKED_ORDER[i + 1][1])
        assert older.created_at < newer.created_at
        if older.memory_type != "lab_result":
            assert newer.created_at - older.created_at >= timedelta(days=60)  # months apart


def test_worked_hba1c_in_last_twelve_months(data: DemoDataset) -> None:
    mems = by_patient(data)["NW-1001"]
    jan = find(mems, "Patient's HbA1c was 8.2%")
    mar = find(mems, "Patient's HbA1c improved to 7.1%")
    assert NOW - timedelta(days=365) <= jan.created_at < mar.created_at < NOW
    assert timedelta(days=30) <= mar.created_at - jan.created_at <= timedelta(days=90)


@pytest.mark.parametrize(
    "now",
    [
        datetime(2026, 1, 2, 9, tzinfo=UTC),
        datetime(2026, 2, 15, tzinfo=UTC),
        datetime(2026, 3, 8, 0, 30, tzinfo=UTC),
        datetime(2026, 12, 9, 3, 0, tzinfo=UTC),
        datetime(2024, 2, 29, 12, tzinfo=UTC),
        datetime(2025, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_same_statements_whatever_the_day(now: datetime) -> None:
    """Issue 26: seeding on 2026-12-01 and on 2026-12-09 gave 318 different statements of 633.
    Now every statement, type and order is the same on every day, and every date (creation,
    accesses, sessions) keeps its distance from the seeding moment."""
    ds = northwind_demo(now)
    at_epoch = northwind_demo(DEMO_EPOCH)
    check_invariants(ds, now)
    assert [(m.patient_id, m.memory_type, m.content) for m in ds.memories] == [
        (m.patient_id, m.memory_type, m.content) for m in at_epoch.memories
    ]
    assert [DEMO_EPOCH - m.created_at for m in at_epoch.memories] == [
        now - m.created_at for m in ds.memories
    ]
    assert [[now - t for t in m.access_times] for m in ds.memories] == [
        [DEMO_EPOCH - t for t in m.access_times] for m in at_epoch.memories
    ]
    assert [[now - v for v in p.visits] for p in ds.patients] == [
        [DEMO_EPOCH - v for v in p.visits] for p in at_epoch.patients
    ]
    for pid, ms in by_patient(ds).items():
        assert len({m.content for m in ms}) == len(ms), pid


def test_other_patients_have_a_few_allergies(data: DemoDataset) -> None:
    allergies: dict[str, int] = defaultdict(int)
    for m in data.memories:
        if m.memory_type == "allergy":
            allergies[m.patient_id] += 1
    assert allergies["NW-1001"] == 3  # penicillin, sulfa, and the penicillin re-test
    others = {pid: n for pid, n in allergies.items() if pid != "NW-1001"}
    assert len(others) >= 3
    assert all(1 <= n <= 2 for n in others.values())


def test_every_type_is_represented(data: DemoDataset) -> None:
    assert {m.memory_type for m in data.memories} == set(MEMORY_TYPES)


def test_naive_now_rejected() -> None:
    with pytest.raises(ValueError, match="now"):
        northwind_demo(datetime(2025, 6, 15, 12))
    with pytest.raises(ValueError, match="now"):
        scale_dataset(2, 3, datetime(2025, 6, 15, 12))


def test_only_standard_library_imports() -> None:
    """Every module of the package imports the standard library and, relatively, only its
    own sibling modules (templates, generator, northwind): nothing else of memory_core."""
    package = Path(demo.__file__).parent
    modules = sorted(package.glob("*.py"))
    siblings = {f.stem for f in modules} - {"__init__"}
    assert siblings
    imported: set[str] = set()
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    assert node.level == 1 and node.module in siblings, (path.name, node.module)
                    continue
                imported.add((node.module or "").split(".")[0])
    assert imported <= {"datetime", "random", "dataclasses", "math", "__future__"} | {
        "json",
        "importlib",
        "typing",
    }


# --- scale_dataset -------------------------------------------------------------------------


@pytest.mark.parametrize(("n_patients", "per_patient"), [(0, 5), (1, 1), (3, 17), (7, 250)])
def test_scale_sizes_exact(n_patients: int, per_patient: int) -> None:
    ds = scale_dataset(n_patients, per_patient, NOW)
    assert [p.patient_id for p in ds.patients] == [f"SC-{i:06d}" for i in range(1, n_patients + 1)]
    assert len(ds.memories) == n_patients * per_patient
    counts: dict[str, int] = defaultdict(int)
    for m in ds.memories:
        counts[m.patient_id] += 1
    assert all(counts[p.patient_id] == per_patient for p in ds.patients)
    check_invariants(ds, NOW)


def test_scale_deterministic_and_varied() -> None:
    ds = scale_dataset(20, 100, NOW)
    assert ds == scale_dataset(20, 100, NOW)
    assert ds != scale_dataset(20, 100, NOW, seed=12)
    contents = [m.content for m in ds.memories]
    assert len(set(contents)) > len(contents) // 4
    assert {m.memory_type for m in ds.memories} == set(MEMORY_TYPES)


def test_scale_rejects_negative_sizes() -> None:
    with pytest.raises(ValueError):
        scale_dataset(-1, 5, NOW)
    with pytest.raises(ValueError):
        scale_dataset(5, -1, NOW)
