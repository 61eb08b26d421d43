"""Hardening, round two (issue 15, items 3, 4, 5 and 8): memory that stays bounded at hospital
scale (the scans work in strips, the caches evict), agent calls that keep the usage incremental,
and no access recorded in the future. Bounds are shown by counting and limiting (allocation
peaks under tracemalloc, evictions, store reads), never by timing."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

import memory_core as mc
from memory_core import contradictions as cx
from memory_core.embedding import HashingEmbedder
from memory_core.engine import snapshot as snapshots
from memory_core.engine import supersession
from memory_core.values import Memory
from tests import test_store_contract as contract
from tests.conftest import NOW, Clock

DIMS = 64
# both stores (SQLite and the local Cosmos-protocol server), as the store contract runs them
backend = contract.backend


def _vectors(n: int, seed: int = 3, dims: int = DIMS) -> np.ndarray:
    """Clustered random vectors (so a cut of 0.5 has hits), float32."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(n // 40, 1), dims))
    picks = rng.integers(0, centres.shape[0], size=n)
    return (centres[picks] + 0.6 * rng.normal(size=(n, dims))).astype(np.float32)


def _naive_pairs(matrix: np.ndarray, cut: float) -> dict[tuple[int, int], float]:
    """Every pair i < j with cosine >= cut, from the full float64 product (the reference)."""
    unit = matrix.astype(np.float64)
    unit /= np.linalg.norm(unit, axis=1)[:, None]
    full = unit @ unit.T
    ia, ja = np.nonzero(np.triu(full >= cut, k=1))
    return {(int(i), int(j)): float(full[i, j]) for i, j in zip(ia, ja, strict=True)}


def _peak(fn: Any, *args: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return out, peak


# --- item 3: the back-scan and the tuner in strips of bounded memory ---------------------------
def test_the_back_scan_works_in_strips_of_bounded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 memories of one type: the whole cosine matrix is 36 MB (and its mask 9 MB more);
    with strips of 1 MiB the scan's allocations peak far below that, and it finds exactly the
    pairs the full float64 product finds."""
    n = 3000
    matrix = _vectors(n)
    want = _naive_pairs(matrix, 0.5)
    assert 1000 < len(want) < 200_000  # a real workload: hits, not all pairs
    monkeypatch.setattr(cx, "BLOCK_BYTES", 2**20)
    got, peak = _peak(
        lambda: list(cx.same_type_pair_arrays(["observation"] * n, matrix, {"observation": 0.5}))
    )
    full_matrix = n * n * 4
    assert peak < full_matrix / 4, peak
    ((t, a, b, vals),) = got
    assert t == "observation"
    pairs = list(zip(a.tolist(), b.tolist(), strict=True))
    assert pairs == sorted(pairs)  # row-major, as one block product gave them
    near = {k for k, s in want.items() if abs(s - 0.5) < 1e-5}  # float32 vs float64 at the cut
    assert set(pairs) - near == set(want) - near
    got_sims = dict(zip(pairs, vals.tolist(), strict=True))
    assert all(abs(got_sims[k] - want[k]) < 1e-5 for k in set(pairs) & set(want))


def test_a_strip_never_exceeds_the_bound() -> None:
    for n in (2, 100, 2896, 2897, 50_000):
        rows = cx.strip_rows(n)
        assert rows >= 1
        assert rows * n * 4 <= cx.BLOCK_BYTES or rows == 1
    assert cx.strip_rows(50_000) * 50_000 * 4 <= 128 * 2**20


def _scan_engine(clock: Clock, n: int) -> mc.MemoryEngine:
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(DIMS), clock=clock)
    matrix = _vectors(n, seed=11)
    matrix[[5, 9, n // 2, n // 2 + 1]] = matrix[5]  # identical copies: ties across strips
    recs = [
        {
            "patient_id": "NW-3",
            "content": f"Home systolic reading {100 + k % 200} mmHg",
            "memory_type": "observation",
            "created_at": NOW - timedelta(hours=n - k),
            "embedding": matrix[k].tolist(),
            "id": f"o-{k:04d}",
        }
        for k in range(n)
    ]
    eng.add_memories(recs, detect=False)
    return eng


def test_the_back_scan_gives_the_same_records_in_strips_as_in_one_block(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same pairs, same winners (within 1e-6 the earliest newer memory), same order."""
    eng_one = _scan_engine(clock, 600)
    eng_strips = _scan_engine(clock, 600)
    pol = mc.EnginePolicy(contradiction=mc.ContradictionPolicy(threshold=0.6))
    eng_one.save_policy(pol, "dr-test")
    eng_strips.save_policy(pol, "dr-test")
    one = eng_one.scan_contradictions("NW-3")
    monkeypatch.setattr(cx, "BLOCK_BYTES", 4 * 600 * 7)  # 7 rows a strip
    assert cx.strip_rows(600) == 7
    strips = eng_strips.scan_contradictions("NW-3")
    assert len(one) > 20
    key = [(s.old_id, s.new_id, s.verdict, s.state) for s in one]
    assert [(s.old_id, s.new_id, s.verdict, s.state) for s in strips] == key
    assert all(abs(a.similarity - b.similarity) < 1e-6 for a, b in zip(one, strips, strict=True))
    assert ("o-0005", "o-0009") in {(s.old_id, s.new_id) for s in strips}


def test_the_tuner_samples_above_its_bound_and_says_how(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = _scan_engine(clock, 400)
    exact = eng.similarity_values("NW-3")
    assert isinstance(exact, cx.SimilarityValues) and not exact.sampled
    assert exact["observation"].size == 400 * 399 // 2 == exact.total_pairs
    monkeypatch.setattr(cx, "MAX_SIMILARITY_VALUES", 5_000)
    sample = eng.similarity_values("NW-3")
    again = eng.similarity_values("NW-3")
    assert sample.sampled and sample.pairs == {"observation": 400 * 399 // 2}
    # a quarter of the memories (sqrt(5,000 / 79,800) = 0.25): the 4,950 pairs among 100
    assert sample.memories == {"observation": 100}
    assert sample["observation"].size == 100 * 99 // 2 <= 5_000
    np.testing.assert_array_equal(sample["observation"], again["observation"])  # seeded
    text = sample.describe()
    assert "sample" in text and "4,950 pairs among 100 memories" in text and "79,800" in text
    # the same distribution: the deciles to the 80th within 0.02 of the whole's (above, the
    # pairs within one of the data's 10 clusters, which a sample of 100 memories holds
    # unevenly)
    whole = exact["observation"].astype(np.float64)
    qs = np.linspace(0.1, 0.8, 8)
    diff = np.abs(np.quantile(sample["observation"], qs) - np.quantile(whole, qs))
    assert diff.max() < 0.02, diff
    # every sampled value is one of the exact cosines
    ref = np.sort(whole)
    pos = np.clip(np.searchsorted(ref, sample["observation"]), 1, ref.size - 1)
    gap = np.minimum(
        np.abs(ref[pos] - sample["observation"]), np.abs(ref[pos - 1] - sample["observation"])
    )
    assert gap.max() < 1e-5


def test_the_flagged_pair_list_keeps_the_most_similar_within_its_limit(clock: Clock) -> None:
    eng = _scan_engine(clock, 300)
    every = eng.similarity_pairs("NW-3", min_similarity=-1.0)
    assert len(every) == 300 * 299 // 2
    core = eng._core
    top = supersession.similarity_pairs(core, "NW-3", None, -1.0, limit=500)
    assert len(top) == 500
    assert [s for _, _, s in top] == [s for _, _, s in every[:500]]
    assert all(a.created_at <= b.created_at for a, b, _ in top)


# --- item 4: bounded caches ------------------------------------------------------------------
@pytest.fixture
def many(clock: Clock) -> Iterator[mc.MemoryEngine]:
    """One store with 200 patients of 3 memories each, and an engine bounded at 90 KiB (room for
    about seven of them, with what a section builds after a patient is cached -- keyword index,
    flag index, memoized arrays -- counted since issue 25: 60 KiB held five)."""
    eng = mc.open_engine(
        "sqlite:///:memory:", HashingEmbedder(DIMS), clock=clock, cache_bytes=90 * 1024
    )
    recs = [
        {
            "patient_id": f"P-{p:03d}",
            "content": f"Patient {p} note {k}",
            "memory_type": "observation",
            "created_at": NOW - timedelta(days=3 - k),
        }
        for p in range(200)
        for k in range(3)
    ]
    eng.add_memories(recs, detect=False)
    yield eng
    eng.store.close()


def test_the_snapshot_cache_evicts_the_least_recently_used_beyond_its_bound(
    many: mc.MemoryEngine,
) -> None:
    snaps: snapshots.Snapshots = many._core.snapshots
    snaps.clear()
    for p in range(200):
        many.build_context(f"P-{p:03d}", "note", record_access=False)
        assert snaps.bytes <= snaps.max_bytes
    assert snaps.bytes == sum(snaps.sizes.values())
    held = list(snaps.cache)
    assert 5 < len(held) < 200 and snaps.evictions == 200 - len(held)
    assert held == [f"P-{p:03d}" for p in range(200 - len(held), 200)]  # the most recent
    # using an old one again makes it the most recent; the least recent goes
    many.view("P-000")
    assert list(snaps.cache)[-1] == "P-000" and held[0] not in snaps.cache
    assert set(snaps.usage) == set(snaps.cache)


def test_a_patient_larger_than_the_bound_is_still_cached_alone(clock: Clock) -> None:
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(DIMS), clock=clock, cache_bytes=0)
    eng.add_memory("NW-1", "Walks daily", "observation")
    eng.add_memory("NW-2", "Takes metformin", "medication")
    eng.build_context("NW-1", "walks", record_access=False)
    eng.build_context("NW-2", "metformin", record_access=False)
    assert list(eng._core.snapshots.cache) == ["NW-2"]


def test_the_cache_bound_is_configurable_and_checked() -> None:
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(DIMS))
    assert eng._core.snapshots.max_bytes == 512 * 2**20  # the documented default
    with pytest.raises(mc.ValidationError) as err:
        mc.open_engine("sqlite:///:memory:", HashingEmbedder(DIMS), cache_bytes=-1)
    assert err.value.field == "cache_bytes"


def test_the_size_estimate_covers_what_a_snapshot_allocates() -> None:
    """tracemalloc's count of a snapshot built from memories (their strings made for it) is
    not above the estimate the cache bounds."""

    def build() -> Any:
        at = datetime(2026, 1, 1, tzinfo=UTC)
        mems = [
            Memory(
                id=f"mem_{k:032x}",
                patient_id=f"NW-{7:d}",
                memory_type="".join(["obser", "vation"]),
                content=f"Home systolic reading {k} mmHg after breakfast",
                importance=5.0,
                created_at=at + timedelta(seconds=k),
                last_accessed=at + timedelta(seconds=k),
                embedding=np.ones(DIMS, dtype=np.float32),
                embedding_model="".join(["hashing-", "64"]),
            )
            for k in range(2000)
        ]
        return snapshots.make_snapshot(1, mems, (), DIMS)

    snap, peak = _peak(build)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    snap = build()
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert held <= snapshots.snapshot_bytes(snap) <= 3 * held, (
        held,
        snapshots.snapshot_bytes(snap),
    )
    assert peak >= held


def test_a_small_patient_holds_little_growth_room(clock: Clock) -> None:
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(DIMS), clock=clock)
    for k in range(3):
        eng.add_memory("NW-1", f"note {k}", "observation")
    eng._core.snapshots.clear()
    snap = eng._core.snapshots.snapshot("NW-1")
    assert snap.buffer.shape[0] <= 4  # not 3 + 16 rows
    eng.add_memory("NW-1", "note 4", "observation")  # growth still works
    assert len(eng._core.snapshots.snapshot("NW-1").memories) == 4


# --- item 5: agent calls keep the usage incremental --------------------------------------------
def _count_usage_reads(eng: mc.MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = eng.store.usage

    def counted(pid: str) -> Any:
        reads.append(pid)
        return real(pid)

    monkeypatch.setattr(eng.store, "usage", counted)
    return reads


def test_an_agent_call_does_not_reload_the_patients_usage(
    engine: mc.MemoryEngine, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k in range(30):
        engine.add_memory("NW-1", f"Home systolic reading {k}", "observation")
    reads = _count_usage_reads(engine, monkeypatch)
    for _ in range(5):
        clock.advance(minutes=1)
        engine.build_context("NW-1", "systolic")
    engine.retrieve("NW-1", "systolic", k=3)
    assert reads == []  # the adds kept it current, and each call applies its own accesses
    # the usage kept in memory is the store's: a fresh engine on the same store agrees
    fresh = mc.MemoryEngine(engine.store, engine.embedder, clock=clock)
    mine, theirs = engine.view("NW-1"), fresh.view("NW-1")
    assert [m.id for m in mine.memories] == [m.id for m in theirs.memories]
    np.testing.assert_array_equal(mine.access_count, theirs.access_count)
    assert [m.last_accessed for m in mine.memories] == [m.last_accessed for m in theirs.memories]
    np.testing.assert_array_equal(mine.sessions_since_access, theirs.sessions_since_access)
    assert mine.access_count.sum() > 0
    # and as of the past (access events) too
    then = clock.now - timedelta(minutes=3)
    np.testing.assert_array_equal(
        engine.view("NW-1", now=then).access_count, fresh.view("NW-1", now=then).access_count
    )


def test_another_writers_access_makes_the_engine_reload_the_usage(
    backend: contract.Backend, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On both stores: our own accesses are applied in memory; another process's access (the
    usage version moved by more than our write) makes the next call reload, once."""
    engine = mc.MemoryEngine(backend.store(), HashingEmbedder(), clock=clock)
    other = mc.MemoryEngine(backend.store(), HashingEmbedder(), clock=clock)
    for k in range(10):
        engine.add_memory("NW-1", f"Home systolic reading {k}", "observation")
    engine.build_context("NW-1", "systolic")
    reads = _count_usage_reads(engine, monkeypatch)
    engine.build_context("NW-1", "systolic")
    assert reads == []
    other.build_context("NW-1", "systolic")  # the other writer, between two of our calls
    engine.build_context("NW-1", "systolic")
    assert reads == ["NW-1"]  # the reload that the other writer's access needs, only
    engine.build_context("NW-1", "systolic")
    assert reads == ["NW-1"]
    fresh = mc.MemoryEngine(backend.store(), HashingEmbedder(), clock=clock)
    mine, theirs = engine.view("NW-1"), fresh.view("NW-1")
    np.testing.assert_array_equal(mine.access_count, theirs.access_count)
    assert [m.last_accessed for m in mine.memories] == [m.last_accessed for m in theirs.memories]
    assert mine.access_count.max() == 5  # ours, ours, theirs, ours, ours


# --- item 8: no access recorded in the future -------------------------------------------------
FAR = datetime(9999, 12, 31, tzinfo=UTC)


def test_an_agent_call_in_the_future_is_refused_and_records_nothing(
    engine: mc.MemoryEngine,
) -> None:
    engine.add_memory("NW-1", "Walks daily", "observation")
    for call in (
        lambda: engine.build_context("NW-1", "walks", now=FAR),
        lambda: engine.retrieve("NW-1", "walks", now=FAR),
        lambda: engine.build_system_prompt("NW-1", "walks", now=FAR),
    ):
        with pytest.raises(mc.ValidationError) as err:
            call()
        assert err.value.field == "now" and "future" in err.value.message
    assert engine.access_times("NW-1") == {}
    assert engine.injections("NW-1") == []
    assert engine.view("NW-1").access_count.tolist() == [0]


def test_previews_may_look_at_the_future_and_a_small_skew_is_allowed(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    engine.add_memory("NW-1", "Walks daily", "observation")
    later = clock.now + timedelta(days=365)
    assert (
        "Walks daily" in engine.build_context("NW-1", "walks", now=later, record_access=False).text
    )
    engine.build_context("NW-1", "walks", now=clock.now + timedelta(seconds=3))  # skew
    assert engine.view("NW-1", now=clock.now + timedelta(seconds=3)).access_count.tolist() == [1]
