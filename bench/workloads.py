"""The workloads of issue 5, each measured against the reference (and the peers) in one run.

Order of a run: build the data (one synthetic patient from ``scale_dataset``, subsets of it
for each size, embedded once), check that the reference and the engine agree on every
workload (same top-5 ids, identical section text, current importances within 1e-9, same
contradiction hits), then time. Any disagreement raises :class:`Mismatch` before a single
number is reported.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import memory_core as mc
from memory_core import decay
from memory_core.contradictions import verdict_by_rule
from memory_core.demo import DemoMemory, scale_dataset
from memory_core.embedding.base import Embedder

from . import reference as ref
from .harness import Sample, interleaved, measure

REPO = Path(__file__).resolve().parents[1]
F32 = npt.NDArray[np.float32]

QUERIES: tuple[str, ...] = (
    "How has the patient's HbA1c changed recently?",
    "Any side effects from the diabetes medication?",
    "When does the patient prefer appointments?",
    "What were the latest home blood glucose readings?",
    "Does the patient have any drug allergies?",
)


def query_at(i: int) -> str:
    """The i-th query of a rotation over :data:`QUERIES` (negative i: warm-up calls)."""
    return QUERIES[i % len(QUERIES)]


PAGES = (
    "pages/overview.py",
    "pages/memories.py",
    "pages/decay_lab.py",
    "pages/contradictions.py",
    "pages/prompt_preview.py",
    "pages/settings.py",
)


TWO_THREADS_ENGINE = "engine, 2 onnxruntime threads"
TWO_THREADS_FLOOR = "floor, 2 onnxruntime threads"

BENCH_NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
# how far the engine-vs-Mem0 end-to-end gap moved between `--only e2e` runs of the same code
# (2026-11-30, bench/plans.py): a margin inside it is reported as such, met or missed
E2E_GAP_NOISE_S = 0.3e-3


def fmt_gap(s: float) -> str:
    return f"{s * 1e6:.0f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


class Mismatch(AssertionError):
    """The engine and the reference disagree: nothing is timed."""


@dataclass(frozen=True)
class Config:
    name: str = "full"
    decay_n: int = 1_000_000
    context_n: int = 2_000
    e2e_sizes: tuple[int, ...] = (100, 1_000, 2_000, 10_000)
    scaling_sizes: tuple[int, ...] = (100, 300, 1_000, 2_000, 5_000, 10_000, 20_000)
    add_existing: int = 10_000
    add_single: int = 30
    add_batch: int = 100
    add_batches: int = 3
    peer_adds: int = 15
    check_n: int = 2_000
    backscan_n: int = 5_000
    bulk_n: int = 20_000
    bulk_patients: int = 10
    embed_sentences: int = 256
    cold_loads: int = 5
    app_n: int = 2_000
    app_pages: tuple[str, ...] = PAGES
    app_reruns: int = 5
    rss_n: int = 200_000
    rss_patients: int = 100
    repeat: int = 15
    e2e_repeat: int = 30  # the closest comparison (engine vs Mem0 + FAISS): more rounds
    ref_repeat: int = 7
    slow_repeat: int = 3
    scaling_repeat: int = 9
    peers: bool = True
    profile: bool = True
    seed: int = 11

    @property
    def sizes(self) -> list[int]:
        """Every patient size a workload needs (each is a subset of one synthetic patient)."""
        return sorted(
            {
                self.context_n,
                *self.e2e_sizes,
                *self.scaling_sizes,
                self.add_existing,
                self.check_n,
                self.backscan_n,
                self.app_n,
            }
        )


FULL = Config()
TINY = Config(
    name="tiny",
    decay_n=2_000,
    context_n=60,
    e2e_sizes=(20, 60),
    scaling_sizes=(20, 60),
    add_existing=60,
    add_single=3,
    add_batch=5,
    add_batches=2,
    peer_adds=2,
    check_n=60,
    backscan_n=60,
    bulk_n=200,
    bulk_patients=2,
    embed_sentences=16,
    cold_loads=1,
    app_n=60,
    app_pages=("pages/overview.py",),
    app_reruns=1,
    rss_n=2_000,
    rss_patients=4,
    repeat=3,
    e2e_repeat=3,
    ref_repeat=2,
    slow_repeat=1,
    scaling_repeat=2,
    peers=True,
    profile=False,
)


@dataclass
class Row:
    """One line of the table: a contender's figure for a workload."""

    key: str  # workload id, e.g. "e2e@2000"
    workload: str
    size: str
    contender: str
    sample: Sample | None = None
    rate: bool = False  # report per-second rates (operations/s) instead of times
    reference: Sample | None = None  # the reference measured in the same run
    target: str = ""
    passed: bool | None = None  # None: no target on this row (or not measured)
    note: str = ""
    value: float | None = None  # a non-timing figure (MB)
    unit: str = ""

    @property
    def ratio(self) -> float | None:
        """Speed-up over the reference (reference time ÷ this time); > 1 = faster."""
        if self.sample is None or self.reference is None or not self.sample.n:
            return None
        return self.reference.median / self.sample.median


@dataclass
class Results:
    config: Config
    machine: dict[str, str] = field(default_factory=dict)
    threads: dict[str, Any] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    scaling: dict[str, dict[int, Sample]] = field(default_factory=dict)
    scaling_peers: dict[str, dict[int, Sample]] = field(default_factory=dict)
    pages: list[dict[str, Any]] = field(default_factory=list)
    rss: dict[str, Any] = field(default_factory=dict)
    peers: dict[str, Any] = field(default_factory=dict)
    setup: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, str] = field(default_factory=dict)
    profile_calls: dict[str, Callable[[], Any]] = field(default_factory=dict)
    thread_profile_calls: dict[str, Callable[[], Any]] = field(default_factory=dict)
    load: list[str] = field(default_factory=list)
    code: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: str = ""
    seconds: float = 0.0


_T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - _T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


# --- embedders -------------------------------------------------------------------------------


class PrimedEmbedder(Embedder):
    """The engine's embedder with a table of texts embedded beforehand: data loading and the
    contradiction check "excluding the new memory's embedding" use it. Texts not in the table
    are embedded live by the wrapped model."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.default_contradiction_threshold = inner.default_contradiction_threshold
        self.default_type_thresholds = inner.default_type_thresholds
        self.primed: dict[str, F32] = {}

    def embed_batch(self, texts: Sequence[str]) -> F32:
        todo = [t for t in texts if t not in self.primed]
        if todo:
            for t, v in zip(todo, self.inner.embed_batch(todo), strict=True):
                self.primed[t] = v
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = self.primed[t]
        return out


def make_embedder(threads: int | None = None) -> Embedder:
    from memory_core.embedding.minilm import MiniLMEmbedder

    return MiniLMEmbedder(threads=threads)


def embed_all(embedder: Embedder, texts: Sequence[str], cache: Path | None) -> dict[str, F32]:
    """Vectors of ``texts``, read from / added to an ``.npz`` cache keyed by model id (only
    set-up time depends on it: the timed workloads embed live)."""
    table: dict[str, F32] = {}
    if cache is not None and cache.exists():
        with np.load(cache, allow_pickle=False) as z:
            if str(z["model"]) == embedder.model_id:
                table = dict(zip(z["texts"].tolist(), z["vectors"], strict=True))
    todo = sorted({t for t in texts if t not in table})
    if todo:
        table.update(zip(todo, embedder.embed_batch(todo), strict=True))
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            keys = sorted(table)
            np.savez(
                cache,
                model=np.array(embedder.model_id),
                texts=np.array(keys),
                vectors=np.stack([table[k] for k in keys]),
            )
    return {t: table[t] for t in texts}


# --- records for the reference ---------------------------------------------------------------


def records_of(memories: Sequence[mc.Memory]) -> list[ref.Record]:
    out = []
    for m in memories:
        r = m.to_public_dict()
        r["embedding"] = m.embedding
        out.append(r)
    return out


def sups_of(sups: Sequence[mc.Supersession]) -> list[ref.Record]:
    return [s.to_public_dict() for s in sups]


# --- the run ---------------------------------------------------------------------------------


class Bench:
    """One benchmark run: data, engines, peers, then the workloads in order."""

    STEPS = (
        "decay",
        "context",
        "e2e",
        "scaling",
        "check",
        "backscan",
        "agent",
        "adds",
        "bulk",
        "embed",
        "app",
        "rss",
    )

    def __init__(
        self,
        config: Config,
        workdir: str,
        cache: Path | None = None,
        only: set[str] | None = None,
    ) -> None:
        self.only = only
        self.cfg = config
        self.workdir = workdir
        self.cache = cache
        self.res = Results(config)
        # a fixed clock: the synthetic data's dates are drawn back from it, so every run
        # measures (and cross-checks) the same data set; the wall clock changed it every hour
        self.now = BENCH_NOW
        self.peers: dict[str, dict[int, Any]] = {}
        self.peer_reason: str | None = None
        self.peer_failures: dict[str, str] = {}
        self.peers_built = False
        self.kw_cache: dict[tuple[str, str], list[str]] = {}

    # --- set-up ------------------------------------------------------------------------------
    def setup(self) -> None:
        cfg = self.cfg
        log(f"config {cfg.name}: patients of {', '.join(f'{n:,}' for n in cfg.sizes)} memories")
        t = time.perf_counter()
        self.embedder = make_embedder()  # MEMORY_CORE_ORT_THREADS (set by the harness)
        self.res.setup["embedder load (s)"] = time.perf_counter() - t
        self.embedder2 = make_embedder(threads=2)
        self.primed = PrimedEmbedder(self.embedder2)
        top = max(cfg.sizes)
        data = scale_dataset(1, top, self.now, seed=cfg.seed)
        self.master: list[DemoMemory] = list(data.memories)
        extra = scale_dataset(1, 3_000 if cfg.name == "full" else 400, self.now, seed=cfg.seed + 88)
        seen = {m.content for m in self.master}
        fresh: list[DemoMemory] = []
        for m in extra.memories:
            if m.content not in seen:
                seen.add(m.content)
                fresh.append(m)
        self.fresh = fresh  # statements no patient has: live-embedded adds and sentences
        self.subsets = {
            n: sorted(random.Random(n).sample(range(top), n)) if n < top else list(range(top))
            for n in cfg.sizes
        }
        needed = {self.master[i].content for idx in self.subsets.values() for i in idx}
        t = time.perf_counter()
        self.vectors = embed_all(self.embedder2, sorted(needed), self.cache)
        self.primed.primed.update(self.vectors)
        self.res.setup["pre-embedding (s)"] = time.perf_counter() - t
        self.res.setup["unique contents"] = len(needed)
        log(f"embedded {len(needed):,} unique contents in {time.perf_counter() - t:.1f}s")

        self.db_path = os.path.join(self.workdir, "bench.db")
        self.store = mc.open_store(f"sqlite:///{self.db_path}")
        self.eng = mc.MemoryEngine(self.store, self.embedder, clock=lambda: self.now)
        self.eng_pre = mc.MemoryEngine(self.store, self.primed, clock=lambda: self.now)
        self.eng2 = mc.MemoryEngine(self.store, self.embedder2, clock=lambda: self.now)
        t = time.perf_counter()
        for n in cfg.sizes:
            self.load(n, self.pid(n), detect=False)
        for n in sorted({cfg.context_n, cfg.add_existing}):
            self.load(n, self.pid(n, True), detect=True)
        self.res.setup["loading (s)"] = time.perf_counter() - t
        self.res.setup["memories in the engine store"] = self.store.count_memories()

    def load(self, n: int, pid: str, detect: bool) -> None:
        t = time.perf_counter()
        results = self.eng_pre.add_memories(
            self.records(n, pid), now=self.now, by="bench", detect=detect
        )
        dt = time.perf_counter() - t
        if detect:
            sups = sum(len(r.supersessions) for r in results)
            active = sum(s is mc.Status.ACTIVE for s in self.eng_pre.view(pid).status)
            self.res.load.append(
                f"{pid}: {n:,} memories loaded with supersession detection "
                f"({n / dt:,.0f}/s): {sups:,} supersessions, {active:,} memories stay active"
            )
        else:
            self.res.load.append(f"{pid}: {n:,} memories, all active ({n / dt:,.0f}/s)")
        log(self.res.load[-1])

    def pid(self, n: int, detected: bool = False) -> str:
        """All memories active (loaded without detection: the worst case for ranking and
        checking), or ``detected``: loaded with supersession detection, as real use leaves a
        patient (the generator's lab and observation series supersede each other)."""
        return f"BENCH-{n:06d}{'-D' if detected else ''}"

    def records(self, n: int, pid: str, with_vectors: bool = True) -> list[dict[str, Any]]:
        out = []
        for i in self.subsets[n]:
            m = self.master[i]
            rec: dict[str, Any] = {
                "patient_id": pid,
                "content": m.content,
                "memory_type": m.memory_type,
                "created_at": m.created_at,
                "access_times": list(m.access_times),
                "tier": m.tier,
                "importance": m.importance,
                "pinned": m.pinned,
                "source": m.source,
            }
            if with_vectors:
                rec["embedding"] = self.vectors[m.content]
            out.append(rec)
        return out

    def query_vectors(self) -> dict[str, F32]:
        return {q: self.embedder.embed(q) for q in QUERIES}

    def keyword_ids(self, pid: str, query: str) -> list[str]:
        """The engine's keyword hits for a query, as its ranking asks for them: an input of the
        reference (fetched once, before any clock starts), not part of its timed work."""
        key = (pid, query)  # read paths only: the patient's content does not change meanwhile
        if key not in self.kw_cache:
            rp = self.eng.policy.ranking
            limit = max(rp.candidate_pool * 4, 50)
            hits = self.eng.keyword_search(pid, query, limit=limit, now=self.now)
            self.kw_cache[key] = [m.id for m, _ in hits]
        return self.kw_cache[key]

    def warm_keywords(self, pid: str) -> None:
        for q in QUERIES:
            self.keyword_ids(pid, q)

    def params(self) -> ref.DecayParams:
        return ref.DecayParams.from_policy(self.eng.policy.decay)

    def ref_context(
        self, pid: str, recs: list[ref.Record], sups: list[ref.Record], q: str, v: F32
    ) -> tuple[str, list[ref.ContextLine]]:
        rp = self.eng.policy.ranking
        return ref.build_context(
            recs,
            sups,
            v,
            self.now,
            self.params(),
            keyword_ids=self.keyword_ids(pid, q),
            pool=rp.candidate_pool,
            rrf_k=rp.rrf_k,
            always_types=rp.always_include_types,
        )

    def state(self, pid: str) -> tuple[list[ref.Record], list[ref.Record]]:
        """The patient as the reference sees it (plain records), and its keyword hits warmed."""
        self.warm_keywords(pid)
        return records_of(self.eng.list_memories(pid)), sups_of(self.eng.supersessions(pid))

    # --- checks ------------------------------------------------------------------------------
    def check_context(self, n: int, qv: dict[str, F32], detected: bool = False) -> None:
        pid = self.pid(n, detected)
        recs, sups = self.state(pid)
        for q, v in qv.items():
            got = self.eng.build_context(pid, q, query_vector=v, record_access=False)
            text, lines = self.ref_context(pid, recs, sups, q, v)
            inc = sorted(got.included, key=lambda i: i.position or 0)
            ids = [i.scored.memory.id for i in inc]
            if ids != [ln.memory_id for ln in lines]:
                raise Mismatch(f"{pid} {q!r}: engine top {ids} != reference {lines}")
            if got.text != text:
                raise Mismatch(f"{pid} {q!r}: section text differs\n{got.text}\n---\n{text}")
            for item, line in zip(inc, lines, strict=True):
                if abs(item.scored.current_importance - line.current_importance) > 1e-9:
                    raise Mismatch(f"{pid} {q!r}: current importance of {line.memory_id} differs")
        self.res.checks.append(
            f"build_context, {pid} ({n:,} memories{', with supersessions' if detected else ''}), "
            f"{len(qv)} queries: same top-5 ids, identical section text, current importances "
            "within 1e-9"
        )

    def check_inputs(self, n: int) -> list[tuple[str, str, datetime, F32]]:
        """New statements for the contradiction check: the patient's most common type (the
        worst case: the most rows to compare and the most hits) and a preference."""
        pid = self.pid(n)
        types = [m.memory_type for m in self.eng.list_memories(pid)]
        common = max(set(types), key=types.count)
        picks = []
        for wanted in (common, "preference"):
            m = next((m for m in reversed(self.fresh) if m.memory_type == wanted), None)
            if m is not None:
                picks.append((m.content, m.memory_type, self.now, self.vector_of(m.content)))
        return picks

    def vector_of(self, text: str) -> F32:
        if text not in self.primed.primed:
            self.primed.primed[text] = self.embedder.embed(text)
        return self.primed.primed[text]

    def ref_hits(
        self, recs: list[ref.Record], sups: list[ref.Record], pick: tuple[str, str, datetime, F32]
    ) -> list[tuple[str, float]]:
        content, mtype, created, vec = pick
        return ref.contradiction_hits(
            recs,
            sups,
            content,
            vec,
            mtype,
            created,
            self.now,
            self.eng.threshold_for(mtype),
            verdict_by_rule,
        )

    def check_contradictions(self, n: int) -> None:
        pid = self.pid(n)
        recs, sups = self.state(pid)
        for pick in self.check_inputs(n):
            content, mtype, created, _ = pick
            got = self.eng_pre.preview_supersessions(pid, content, mtype, created_at=created)
            want = dict(self.ref_hits(recs, sups, pick))
            ids = [m.id for m, _, _ in got]
            if sorted(ids) != sorted(want) or len(set(ids)) != len(ids):
                raise Mismatch(f"{pid} {mtype}: engine hits {len(got)} != reference {len(want)}")
            if any(abs(sim - want[m.id]) > 1e-5 for m, sim, _ in got):
                raise Mismatch(f"{pid} {mtype}: similarities differ by more than 1e-5")
            # most similar first; float32 (engine) and float64 (reference) may order near-ties
            # differently, nothing else
            sims = [want[i] for i in ids]
            if any(b > a + 1e-6 for a, b in itertools.pairwise(sims)):
                raise Mismatch(f"{pid} {mtype}: hits are not ordered by similarity")
            self.res.checks.append(
                f"contradiction check, {n:,} memories, new {mtype}: the same {len(want)} hit(s), "
                "similarities within 1e-5, most similar first"
            )

    # --- workloads ---------------------------------------------------------------------------
    def run_decay(self) -> None:
        n = self.cfg.decay_n
        log(f"current importance of {n:,} memories")
        rng = np.random.default_rng(7)
        now_us = int(self.now.timestamp() * 1e6)
        created_us = now_us - rng.integers(0, 730 * 86_400 * 10**6, n)
        last_us = created_us + (rng.random(n) * (now_us - created_us)).astype(np.int64)
        importance = rng.choice([2.0, 4.0, 5.0, 6.0, 7.0, 9.0, 10.0], n)
        count = rng.integers(0, 9, n).astype(np.float64)
        pinned = rng.random(n) < 0.02
        short = rng.random(n) < 0.1
        created_iso = np.datetime_as_string(created_us.astype("datetime64[us]"), timezone="UTC")
        last_iso = np.datetime_as_string(last_us.astype("datetime64[us]"), timezone="UTC")
        records = [
            {
                "importance": float(importance[i]),
                "created_at": str(created_iso[i]),
                "last_accessed": str(last_iso[i]),
                "access_count": int(count[i]),
                "pinned": bool(pinned[i]),
                "tier": "short_term" if short[i] else "long_term",
            }
            for i in range(n)
        ]
        inputs = decay.DecayInputs(
            importance=importance,
            created_s=created_us / 1e6,
            last_access_s=last_us / 1e6,
            access_count=count,
            pinned=pinned,
            short_term=short,
        )
        now_s = self.now.timestamp()
        policy = self.eng.policy.decay
        # agreement first: the default policy on every memory, the other models on a slice
        got = decay.current_importance(inputs, policy, now_s)
        want = np.array(ref.current_importances(records, self.params(), now_s))
        if float(np.max(np.abs(got - want))) > 1e-9:
            raise Mismatch("current importance: engine and reference differ by more than 1e-9")
        k = min(n, 20_000)
        part = decay.DecayInputs(
            importance[:k],
            inputs.created_s[:k],
            inputs.last_access_s[:k],
            count[:k],
            pinned[:k],
            short[:k],
        )
        for model in ("linear", "strength"):
            pol = replace(policy, model=model)
            p = ref.DecayParams.from_policy(pol)
            a = decay.current_importance(part, pol, now_s)
            b = np.array(ref.current_importances(records[:k], p, now_s))
            if float(np.max(np.abs(a - b))) > 1e-9:
                raise Mismatch(f"current importance ({model}): engine and reference differ")
        self.res.checks.append(
            f"current importance: {n:,} memories (exponential) and {k:,} (linear, strength) "
            "within 1e-9 of the reference"
        )
        eng = measure(lambda: decay.current_importance(inputs, policy, now_s), self.cfg.repeat)
        params = self.params()
        refs = measure(
            lambda: ref.current_importances(records, params, now_s), self.cfg.slow_repeat
        )
        key = "decay"
        label = "current importance (vectorised)"
        size = f"{n:,} memories"
        self.res.rows += [
            Row(
                key,
                label,
                size,
                "engine",
                eng,
                reference=refs,
                target="≥ 50× ref; ≤ 100 ms",
                passed=eng.median <= 0.100 and refs.median / eng.median >= 50,
            ),
            Row(key, label, size, "reference", refs, reference=refs),
        ]
        self.res.profile_calls[key] = lambda: decay.current_importance(inputs, policy, now_s)

    def run_context(self, qv: dict[str, F32]) -> None:
        n = self.cfg.context_n
        log(f"build_context, {n:,} memories, query embedded")
        for detected in (False, True):
            pid = self.pid(n, detected)
            recs, sups = self.state(pid)
            active = len(ref.active_records(recs, sups, self.now.timestamp()))

            def engine_call(i: int, pid: str = pid) -> Any:
                q = query_at(i)
                return self.eng.build_context(pid, q, query_vector=qv[q], record_access=False)

            def ref_call(i: int, pid: str = pid, recs: Any = recs, sups: Any = sups) -> Any:
                q = query_at(i)
                return self.ref_context(pid, recs, sups, q, qv[q])

            eng = interleaved({"e": engine_call}, self.cfg.repeat)["e"]
            refs = interleaved({"r": ref_call}, self.cfg.ref_repeat)["r"]
            key = "context-D" if detected else "context"
            label = "build_context, query embedded, SQLite"
            size = f"{n:,} memories ({active:,} active)"
            if detected:
                self.res.rows += [
                    Row(
                        key,
                        label,
                        size,
                        "engine",
                        eng,
                        reference=refs,
                        note="loaded with supersession detection, as real use leaves it",
                    ),
                    Row(key, label, size, "reference", refs, reference=refs),
                ]
                continue
            self.res.rows += [
                Row(
                    key,
                    label,
                    size,
                    "engine",
                    eng,
                    reference=refs,
                    target="≤ 10 ms; ≥ 20× ref",
                    passed=eng.median <= 0.010 and refs.median / eng.median >= 20,
                ),
                Row(key, label, size, "reference", refs, reference=refs),
            ]
            self.res.profile_calls[key] = lambda f=engine_call: [f(i) for i in range(len(QUERIES))]

    def run_agent_call(self, qv: dict[str, F32]) -> None:
        """build_context as an agent calls it: the included memories' accesses and an
        injection record are written, so the next call re-reads the patient's usage."""
        n = self.cfg.context_n
        pid = self.pid(n)

        def call(i: int) -> Any:
            q = query_at(i)
            return self.eng.build_context(pid, q, query_vector=qv[q], record_access=True)

        s = interleaved({"e": call}, self.cfg.repeat)["e"]
        ref_row = next(r for r in self.res.rows if r.key == "context" and r.contender == "engine")
        self.res.rows.append(
            Row(
                "agent",
                "build_context with record_access=True (writes accesses + injection)",
                f"{n:,} memories",
                "engine",
                s,
                reference=ref_row.reference,
                note="no target; shows what an agent turn costs with its writes",
            )
        )

    def build_peers(self) -> None:
        if self.peers_built:
            return
        self.peers_built = True
        self.peers = {}
        self.peer_failures = {}
        if not self.cfg.peers:
            self.peer_reason = "peers switched off for this run"
            return
        from . import peers

        self.peer_reason = peers.missing_reason()
        self.res.peers["versions"] = peers.peer_versions()
        if self.peer_reason:
            log(f"peers not measured: {self.peer_reason}")
            return
        sizes = sorted(set(self.cfg.e2e_sizes) | {self.cfg.add_existing})
        makers: dict[str, Callable[[], Any]] = {
            "Mem0 + FAISS": lambda: peers.Mem0Peer("faiss", self.embedder),
            "Mem0 + Qdrant": lambda: peers.Mem0Peer("qdrant", self.embedder),
            "LangGraph InMemoryStore": lambda: peers.LangGraphPeer(self.embedder, self.vectors),
        }
        for label, make in makers.items():
            built = {}
            try:
                for n in sizes:
                    t = time.perf_counter()
                    peer = make()
                    mems = [
                        peers.PeerMemory(m.content, self.vectors[m.content], m.created_at)
                        for m in (self.master[i] for i in self.subsets[n])
                    ]
                    peer.load(self.pid(n), mems)
                    built[n] = peer
                    log(f"{label}: loaded {n:,} in {time.perf_counter() - t:.1f}s")
            except Exception as exc:  # a peer that cannot run offline is reported, not fatal
                self.peer_failures[label] = f"{type(exc).__name__}: {exc}"
                log(f"{label} not measured: {self.peer_failures[label]}")
                continue
            self.peers[label] = built
        self.res.peers["failures"] = dict(self.peer_failures)
        self.res.peers["faiss OpenMP threads"] = peers.faiss_threads()

    def peer_note(self, label: str) -> str:
        return self.peer_failures.get(label) or self.peer_reason or "not built"

    def run_e2e(self) -> None:
        for n in self.cfg.e2e_sizes:
            pid = self.pid(n)
            log(f"build_context end to end, {n:,} memories")
            recs, sups = self.state(pid)
            mat = np.stack([r["embedding"] for r in recs]).astype(np.float32)
            mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)

            def engine_call(i: int, pid: str = pid) -> Any:
                return self.eng.build_context(pid, query_at(i), record_access=False)

            def floor_call(i: int, mat: F32 = mat) -> Any:
                v = self.embedder.embed(query_at(i))
                sims = mat @ v
                k = min(5, len(sims) - 1)
                top = np.argpartition(-sims, k)[:5]
                return top[np.argsort(-sims[top])]

            def ref_call(i: int, pid: str = pid, recs: Any = recs, sups: Any = sups) -> Any:
                q = query_at(i)
                return self.ref_context(pid, recs, sups, q, self.embedder.embed(q))

            contenders: dict[str, Callable[[int], Any]] = {
                "engine": engine_call,
                "floor (embed + numpy cosine)": floor_call,
                "reference": ref_call,
            }
            for label, by_size in self.peers.items():
                peer = by_size[n]
                contenders[f"{label} search"] = lambda i, p=peer, pid=pid: p.search(
                    pid, query_at(i)
                )

            def engine2_call(i: int, pid: str = pid) -> Any:
                return self.eng2.build_context(pid, query_at(i), record_access=False)

            def floor2_call(i: int, mat: F32 = mat) -> Any:
                v = self.embedder2.embed(query_at(i))
                sims = mat @ v
                k = min(5, len(sims) - 1)
                return np.argpartition(-sims, k)[:5]

            s = interleaved(contenders, self.cfg.e2e_repeat)
            # the two-thread variants in a round of their own: after a call, onnxruntime's
            # second intra-op thread spins for a while and would slow whichever contender runs
            # next (measured: the engine after a two-thread call, +0.3-0.6 ms at 10,000)
            s.update(
                interleaved(
                    {TWO_THREADS_ENGINE: engine2_call, TWO_THREADS_FLOOR: floor2_call},
                    self.cfg.e2e_repeat,
                )
            )
            refs = s["reference"]
            eng = s["engine"]
            floor = s["floor (embed + numpy cosine)"]
            mem0 = [v for k, v in s.items() if k.startswith("Mem0")]
            ok_floor = eng.median <= 1.3 * floor.median
            ok_peers = all(eng.median < m.median for m in mem0) if mem0 else None
            note = "" if len(mem0) == 2 else "Mem0 not measured with both stores"
            if mem0:
                peer = min((k for k in s if k.startswith("Mem0")), key=lambda k: s[k].median)
                gap = s[peer].median - eng.median
                if abs(gap) < E2E_GAP_NOISE_S:
                    close = (
                        f"{fmt_gap(abs(gap))} {'ahead of' if gap > 0 else 'behind'} "
                        f"{peer.removesuffix(' search')}: inside the ±0.3 ms this gap moves "
                        "between runs of the same code"
                    )
                    note = f"{note}; {close}" if note else close
            key = f"e2e@{n}"
            label = "build_context end to end (query embedding included)"
            size = f"{n:,} memories"
            self.res.rows.append(
                Row(
                    key,
                    label,
                    size,
                    "engine",
                    eng,
                    reference=refs,
                    target="< Mem0 search (both stores); ≤ 1.3× floor",
                    passed=ok_floor and ok_peers is not False,
                    note=note,
                )
            )
            for name, smp in s.items():
                if name != "engine":
                    info = name in (TWO_THREADS_ENGINE, TWO_THREADS_FLOOR)
                    self.res.rows.append(
                        Row(
                            key,
                            label,
                            size,
                            name,
                            smp,
                            reference=refs,
                            note="for comparison: the run's setting is 1 thread" if info else "",
                        )
                    )
            for name in ("Mem0 + FAISS", "Mem0 + Qdrant", "LangGraph InMemoryStore"):
                if name not in self.peers:
                    self.res.rows.append(
                        Row(
                            key,
                            label,
                            size,
                            f"{name} search",
                            note=f"not measured: {self.peer_note(name)}",
                        )
                    )
            for name, smp in s.items():
                self.res.scaling_peers.setdefault(name, {})[n] = smp
            self.res.profile_calls[key] = lambda f=engine_call: [f(i) for i in range(5)]

    def run_scaling(self) -> None:
        cfg = self.cfg
        qv = self.query_vectors()
        curves: dict[str, dict[int, Sample]] = {
            "build_context (engine)": {},
            "build_context (reference)": {},
            "contradiction check (engine)": {},
            "contradiction check (reference)": {},
        }
        for n in cfg.scaling_sizes:
            pid = self.pid(n)
            log(f"scaling: {n:,} memories")
            recs, sups = self.state(pid)
            picks = self.check_inputs(n)
            pick = picks[0]

            def eng_ctx(i: int, pid: str = pid) -> Any:
                q = query_at(i)
                return self.eng.build_context(pid, q, query_vector=qv[q], record_access=False)

            def ref_ctx(i: int, pid: str = pid, recs: Any = recs, sups: Any = sups) -> Any:
                q = query_at(i)
                return self.ref_context(pid, recs, sups, q, qv[q])

            def eng_chk(i: int, pid: str = pid, pick: Any = pick) -> Any:
                return self.eng_pre.preview_supersessions(pid, pick[0], pick[1], created_at=pick[2])

            def ref_chk(i: int, recs: Any = recs, sups: Any = sups, pick: Any = pick) -> Any:
                return self.ref_hits(recs, sups, pick)

            ref_rep = cfg.slow_repeat if n >= 10_000 else min(cfg.ref_repeat, cfg.scaling_repeat)
            a = interleaved({"e": eng_ctx, "c": eng_chk}, cfg.scaling_repeat)
            b = interleaved({"r": ref_ctx, "k": ref_chk}, ref_rep)
            curves["build_context (engine)"][n] = a["e"]
            curves["contradiction check (engine)"][n] = a["c"]
            curves["build_context (reference)"][n] = b["r"]
            curves["contradiction check (reference)"][n] = b["k"]
        self.res.scaling = curves

    def run_check_2000(self) -> None:
        n = self.cfg.check_n
        pid = self.pid(n)
        log(f"contradiction check, {n:,} memories")
        recs, sups = self.state(pid)
        for pick in self.check_inputs(n):
            hits = len(self.ref_hits(recs, sups, pick))

            def eng_chk(i: int, pick: Any = pick) -> Any:
                return self.eng_pre.preview_supersessions(pid, pick[0], pick[1], created_at=pick[2])

            def ref_chk(i: int, pick: Any = pick) -> Any:
                return self.ref_hits(recs, sups, pick)

            eng = interleaved({"e": eng_chk}, self.cfg.repeat)["e"]
            refs = interleaved({"r": ref_chk}, self.cfg.ref_repeat)["r"]
            rows_same = sum(r["memory_type"] == pick[1] for r in recs)
            key = f"check:{pick[1]}"
            label = f"contradiction check, new {pick[1]} (embedding excluded)"
            size = f"{n:,} memories ({rows_same:,} same type, {hits} hits)"
            self.res.rows += [
                Row(
                    key,
                    label,
                    size,
                    "engine",
                    eng,
                    reference=refs,
                    target="≤ 5 ms",
                    passed=eng.median <= 0.005,
                ),
                Row(key, label, size, "reference", refs, reference=refs),
            ]
            self.res.profile_calls[key] = lambda f=eng_chk: [f(i) for i in range(5)]

    def run_backscan(self) -> None:
        n = self.cfg.backscan_n
        pid = self.pid(n)
        log(f"contradiction back-scan, {n:,} memories (imported without detection)")
        base = os.path.join(self.workdir, "scan-base.db")
        eng = mc.MemoryEngine(
            mc.open_store(f"sqlite:///{base}"), self.primed, clock=lambda: self.now
        )
        eng.add_memories(self.records(n, pid), now=self.now, by="bench", detect=False)
        recs = records_of(eng.list_memories(pid))
        eng.store.close()
        state: dict[str, Any] = {}
        copies = iter(range(10**6))

        def fresh() -> None:
            if "eng" in state:
                state["eng"].store.close()
            path = os.path.join(self.workdir, f"scan-{next(copies)}.db")
            shutil.copyfile(base, path)
            e = mc.MemoryEngine(
                mc.open_store(f"sqlite:///{path}"), self.primed, clock=lambda: self.now
            )
            e.view(pid)  # the patient's snapshot is loaded before the clock starts
            state["eng"] = e

        def scan() -> None:
            state["found"] = state["eng"].scan_contradictions(pid, by="bench")

        fresh()
        scan()
        got = [(s.old_id, s.new_id) for s in state["found"]]
        pol = eng.policy.contradiction
        want = ref.back_scan(
            recs,
            [],
            self.now,
            eng.threshold_for,
            verdict_by_rule,
            lambda t: pol.mode_for(t) == "auto",
        )
        # the same pairs; their order may differ where two similarities tie in float32
        if sorted(got) != sorted(want) or len(set(got)) != len(got):
            extra, missing = set(got) - set(want), set(want) - set(got)
            raise Mismatch(
                f"back-scan: engine recorded {len(got)}, reference {len(want)} "
                f"({len(extra)} only in the engine, {len(missing)} only in the reference)"
            )
        self.res.checks.append(
            f"back-scan, {n:,} memories imported without detection: the same {len(want):,} "
            "supersessions (older, newer)"
        )
        smp = measure(scan, self.cfg.slow_repeat, warmup=0, setup=fresh)
        refs = measure(
            lambda: ref.back_scan(
                recs,
                [],
                self.now,
                eng.threshold_for,
                verdict_by_rule,
                lambda t: pol.mode_for(t) == "auto",
            ),
            1 if self.cfg.name == "full" else self.cfg.slow_repeat,
            warmup=0,
        )
        pairs = sum(
            c * (c - 1) // 2
            for c in (
                sum(r["memory_type"] == t for r in recs) for t in {r["memory_type"] for r in recs}
            )
        )
        label = "contradiction back-scan (all same-type pairs, writes included)"
        size = f"{n:,} memories ({pairs:,} pairs, {len(want):,} found)"
        self.res.rows += [
            Row(
                "backscan",
                label,
                size,
                "engine",
                smp,
                reference=refs,
                target="≤ 1 s",
                passed=smp.median <= 1.0,
            ),
            Row("backscan", label, size, "reference", refs, reference=refs),
        ]

        def profile() -> None:
            fresh()
            scan()

        self.res.profile_calls["backscan"] = profile

    def run_adds(self) -> None:
        n = self.cfg.add_existing
        pid = self.pid(n, True)  # as real use leaves a patient: detection was on
        peer_pid = self.pid(n)
        cfg = self.cfg
        self.build_peers()
        log(f"adding memories at {n:,} existing")
        pool = iter(self.fresh)

        def take(k: int) -> list[DemoMemory]:
            return [next(pool) for _ in range(k)]

        singles = take(cfg.add_single + 1)
        one = measure(lambda: self._add_one(pid, singles.pop()), cfg.add_single, warmup=1)
        batches = [take(cfg.add_batch) for _ in range(cfg.add_batches + 1)]
        many = measure(
            lambda: self.eng.add_memories(
                [
                    {"patient_id": pid, "content": m.content, "memory_type": m.memory_type}
                    for m in batches.pop()
                ],
                by="bench",
            ),
            cfg.add_batches,
            warmup=1,
            per=cfg.add_batch,
        )
        # the reference: embed, compare with every older memory in a loop, one INSERT + COMMIT
        recs, sups = self.state(pid)
        db = ref.open_db(os.path.join(self.workdir, "reference-adds.db"))
        ref_items = take(max(3, cfg.ref_repeat) + 1)
        counter = iter(range(10**6))

        def ref_add() -> None:
            m = ref_items.pop()
            vec = self.embedder.embed(m.content)
            ref.contradiction_hits(
                recs,
                sups,
                m.content,
                vec,
                m.memory_type,
                self.now,
                self.now,
                self.eng.threshold_for(m.memory_type),
                verdict_by_rule,
            )
            rec = {
                "id": f"ref-{next(counter)}",
                "patient_id": pid,
                "memory_type": m.memory_type,
                "content": m.content,
                "importance": 5.0,
                "created_at": self.now.isoformat(),
                "last_accessed": self.now.isoformat(),
                "access_count": 0,
                "pinned": False,
                "tier": "long_term",
                "embedding": vec,
            }
            ref.insert(db, rec)
            recs.append(rec)

        refs = measure(ref_add, max(3, cfg.ref_repeat), warmup=1)
        db.close()
        size = f"{n:,} existing"
        self.res.rows += [
            Row(
                "add_one",
                "add_memory one at a time (embedding + check + write)",
                size,
                "engine",
                one,
                rate=True,
                reference=refs,
                target="≥ 100/s",
                passed=1 / one.median >= 100,
            ),
            Row(
                "add_one",
                "add_memory one at a time (embedding + check + write)",
                size,
                "reference",
                refs,
                rate=True,
                reference=refs,
            ),
            Row(
                "add_batch",
                f"add_memories in batches of {cfg.add_batch}",
                size,
                "engine",
                many,
                rate=True,
                reference=refs,
                target="≥ 250/s",
                passed=1 / many.median >= 250,
                note="reference adds one at a time",
            ),
        ]
        for label, by_size in self.peers.items():
            if not label.startswith("Mem0"):
                continue
            peer = by_size[n]
            items = take(cfg.peer_adds + 1)
            s = measure(lambda p=peer, it=items: p.add(peer_pid, it.pop().content), cfg.peer_adds)
            self.res.rows.append(
                Row(
                    "add_one",
                    "add_memory one at a time (embedding + check + write)",
                    size,
                    f"{label} add(infer=False)",
                    s,
                    rate=True,
                    reference=refs,
                )
            )
        for label in ("Mem0 + FAISS", "Mem0 + Qdrant"):
            if label not in self.peers:
                self.res.rows.append(
                    Row(
                        "add_one",
                        "add_memory one at a time (embedding + check + write)",
                        size,
                        f"{label} add(infer=False)",
                        note=f"not measured: {self.peer_note(label)}",
                    )
                )
        self.res.profile_calls["add_one"] = lambda: self._add_one(pid, take(1)[0])
        self.res.profile_calls["add_batch"] = lambda: self.eng.add_memories(
            [
                {"patient_id": pid, "content": m.content, "memory_type": m.memory_type}
                for m in take(cfg.add_batch)
            ],
            by="bench",
        )

    def _add_one(self, pid: str, m: DemoMemory) -> Any:
        return self.eng.add_memory(pid, m.content, m.memory_type, by="bench")

    def run_bulk(self) -> None:
        cfg = self.cfg
        n = cfg.bulk_n
        log(f"bulk insert of {n:,} pre-embedded memories")
        top = len(self.master)
        idx = list(range(n)) if n <= top else [i % top for i in range(n)]
        records = []
        for j, i in enumerate(idx):
            m = self.master[i]
            records.append(
                {
                    "patient_id": f"BULK-{j % cfg.bulk_patients:03d}",
                    "content": m.content,
                    "memory_type": m.memory_type,
                    "created_at": m.created_at,
                    "access_times": list(m.access_times),
                    "tier": m.tier,
                    "importance": m.importance,
                    "pinned": m.pinned,
                    "embedding": self.vector_of(m.content),
                }
            )
        state: dict[str, Any] = {}
        copies = iter(range(10**6))

        def fresh() -> None:
            if "eng" in state:
                state["eng"].store.close()
            path = os.path.join(self.workdir, f"bulk-{next(copies)}.db")
            state["eng"] = mc.MemoryEngine(
                mc.open_store(f"sqlite:///{path}"), self.primed, clock=lambda: self.now
            )

        def bulk(detect: bool) -> None:
            state["eng"].add_memories(records, now=self.now, by="bench", detect=detect)

        plain = measure(lambda: bulk(False), cfg.slow_repeat, warmup=1, setup=fresh, per=n)
        detected = measure(lambda: bulk(True), 1, warmup=0, setup=fresh, per=n)
        state["eng"].store.close()
        refrecs = [
            {
                "id": f"r{j}",
                "patient_id": r["patient_id"],
                "memory_type": r["memory_type"],
                "content": r["content"],
                "importance": r["importance"] or 5.0,
                "created_at": r["created_at"].isoformat(),
                "last_accessed": r["created_at"].isoformat(),
                "access_count": len(r["access_times"]),
                "pinned": bool(r["pinned"]),
                "tier": r["tier"],
                "embedding": r["embedding"],
            }
            for j, r in enumerate(records)
        ]

        def ref_bulk() -> None:
            db = ref.open_db(os.path.join(self.workdir, f"bulk-ref-{next(copies)}.db"))
            for r in refrecs:
                ref.insert(db, r)
            db.close()

        refs = measure(ref_bulk, max(1, cfg.slow_repeat - 1), warmup=0, per=n)
        label = "bulk insert of pre-embedded memories into SQLite"
        size = f"{n:,} memories, {cfg.bulk_patients} patients"
        self.res.rows += [
            Row(
                "bulk",
                label,
                size,
                "engine (add_memories, detect=False)",
                plain,
                rate=True,
                reference=refs,
                target="≥ 20,000/s",
                passed=1 / plain.median >= 20_000,
            ),
            Row(
                "bulk",
                label,
                size,
                "engine (add_memories, detect=True)",
                detected,
                rate=True,
                reference=refs,
                note="one run; supersession detection included",
            ),
            Row(
                "bulk",
                label,
                size,
                "reference (one INSERT + COMMIT each)",
                refs,
                rate=True,
                reference=refs,
            ),
        ]

        def profile() -> None:
            fresh()
            bulk(False)

        self.res.profile_calls["bulk"] = profile

    def run_embedder(self) -> None:
        cfg = self.cfg
        log("embedder throughput and cold load")
        used = set(self.primed.primed)
        sentences = [m.content for m in self.fresh if m.content not in used][: cfg.embed_sentences]
        k = len(sentences)
        batch = measure(lambda: self.embedder.embed_batch(sentences), 5 if k > 50 else 2, per=k)
        two = measure(lambda: self.embedder2.embed_batch(sentences), 3 if k > 50 else 1, per=k)
        single = measure(
            lambda: [self.embedder.embed(s) for s in sentences], 2 if k > 50 else 1, per=k
        )
        cold = Sample()
        for _ in range(cfg.cold_loads):
            out = probe("cold-load")
            cold.times.append(out["seconds"])
        label = "MiniLM embedder throughput, short clinical sentences"
        size = f"{k} sentences (median {int(np.median([len(s) for s in sentences]))} chars)"
        self.res.rows += [
            Row(
                "embed",
                label,
                size,
                "engine (embed_batch, 1 onnxruntime thread)",
                batch,
                rate=True,
                reference=single,
                target="≥ 200/s",
                passed=1 / batch.median >= 200,
            ),
            Row(
                "embed",
                label,
                size,
                "embed_batch, 2 onnxruntime threads",
                two,
                rate=True,
                reference=single,
                note="for comparison; the run uses 1",
            ),
            Row(
                "embed",
                label,
                size,
                "reference (one sentence per call)",
                single,
                rate=True,
                reference=single,
            ),
            Row(
                "cold",
                "embedder cold load (fresh process: import, SHA-256 check, session, "
                "first embedding)",
                "",
                "engine",
                cold,
                target="≤ 2 s",
                passed=cold.median <= 2.0,
            ),
        ]

    def run_apptest(self) -> None:
        cfg = self.cfg
        n = cfg.app_n
        pid = self.pid(n)
        log(f"dashboard pages (AppTest) for a patient with {n:,} memories")
        env = {
            "MEMORY_CORE_STORE": f"sqlite:///{self.db_path}",
            "MEMORY_CORE_EMBEDDER": "minilm",
        }
        with _environ(env):
            import logging

            from streamlit.testing.v1 import AppTest

            # page scripts touched from this thread (caches, profiling) warn that there is no
            # ScriptRunContext; harmless in bare mode
            quiet = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
            quiet.setLevel(logging.ERROR)

            app = str(REPO / "app.py")
            worst: Sample | None = None
            worst_page = ""
            worst_at: Any = None
            for k, page in enumerate(cfg.app_pages):
                at = AppTest.from_file(app, default_timeout=180)
                at.session_state["patient"] = pid
                t = time.perf_counter()
                at.run()  # the default page (overview); the first one also builds the engine
                start = time.perf_counter() - t
                t = time.perf_counter()
                at.switch_page(page).run()
                first = start if k == 0 and page == "pages/overview.py" else time.perf_counter() - t
                if at.exception:
                    raise RuntimeError(f"{page}: {at.exception[0].value}")
                reruns = measure(at.run, cfg.app_reruns, warmup=0)
                if at.exception:
                    raise RuntimeError(f"{page} rerun: {at.exception[0].value}")
                self.res.pages.append({"page": page, "first": first, "reruns": reruns})
                if worst is None or reruns.median > worst.median:
                    worst, worst_page, worst_at = reruns, page, at

            def rerun_worst(at: Any = worst_at) -> None:
                with _environ(env):
                    at.run()
                    at.run()

            self.res.thread_profile_calls["app"] = rerun_worst
        assert worst is not None
        self.res.rows.append(
            Row(
                "app",
                "dashboard page rerun after the first (AppTest), slowest page",
                f"{n:,} memories",
                worst_page.removeprefix("pages/"),
                worst,
                target="≤ 500 ms",
                passed=worst.median <= 0.5,
                note="every page in the dashboard section",
            )
        )

    def run_rss(self) -> None:
        cfg = self.cfg
        log(f"resident memory of an engine holding {cfg.rss_n:,} memories (subprocesses)")
        db = os.path.join(self.workdir, "rss.db")
        built = probe("rss-build", db, str(cfg.rss_n), str(cfg.rss_patients), timeout=900)
        out = probe("rss-measure", db, timeout=900)
        raw = built["raw_bytes"]
        self.res.rss = {**built, **out}
        ratio = out["delta_bytes"] / raw
        self.res.rows.append(
            Row(
                "rss",
                "resident memory of an engine holding the memories (RSS growth)",
                f"{cfg.rss_n:,} × 384 dims, {cfg.rss_patients} patients",
                "engine",
                value=out["delta_bytes"] / 2**20,
                unit="MiB",
                target=f"≤ 2× raw ({2 * raw / 2**20:,.0f} MiB)",
                passed=ratio <= 2.0,
                note=f"{ratio:.2f}× the raw float32 embeddings + content ({raw / 2**20:,.0f} MiB)",
            )
        )

    # --- the whole run -----------------------------------------------------------------------
    def run(self) -> Results:
        t0 = time.perf_counter()
        self.res.started = datetime.now(UTC).isoformat(timespec="seconds")
        self.setup()
        qv = self.query_vectors()
        log("checking the engine against the reference")
        for n in sorted({self.cfg.context_n, *self.cfg.e2e_sizes, *self.cfg.scaling_sizes}):
            self.check_context(n, qv)
        for n in sorted({self.cfg.context_n, self.cfg.add_existing}):
            self.check_context(n, qv, detected=True)
        for n in sorted({self.cfg.check_n, *self.cfg.scaling_sizes}):
            self.check_contradictions(n)
        steps: list[tuple[str, Callable[[], None]]] = [
            ("decay", self.run_decay),
            ("context", lambda: self.run_context(qv)),
            ("e2e", lambda: (self.build_peers(), self.run_e2e())[-1]),
            ("scaling", self.run_scaling),
            ("check", self.run_check_2000),
            ("backscan", self.run_backscan),
            ("agent", lambda: self.run_agent_call(qv)),
            ("adds", self.run_adds),
            ("bulk", self.run_bulk),
            ("embed", self.run_embedder),
            ("app", self.run_apptest),
            ("rss", self.run_rss),
        ]
        for name, step in steps:
            if self.only and name not in self.only:
                continue
            step()
            if name == "adds":
                self.peers = {}  # release the peers' stores before the memory-hungry steps
                gc.collect()
        self.res.seconds = time.perf_counter() - t0
        return self.res


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def probe(*args: str, timeout: float = 300) -> dict[str, Any]:
    """Run ``python -m bench.probe ARGS`` in a fresh interpreter; its last stdout line is JSON."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.probe", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bench.probe {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def workdir() -> str:
    return tempfile.mkdtemp(prefix="memory-core-bench-")


__all__ = ["FULL", "TINY", "Bench", "Config", "Mismatch", "Results", "Row"]
