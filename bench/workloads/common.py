"""What every workload shares: the configuration (full and tiny sizes), the rows and results
of a run, the target record each workload declares next to its measurement, the data set
(one synthetic patient from ``scale_dataset``, subsets of it for each size, embedded once)
with the engines and the reference's view of it (:class:`Setup`), the peers, and the
subprocess probe. Timing itself is in :mod:`bench.harness`."""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import memory_core as mc
from memory_core.demo import DemoMemory, scale_dataset
from memory_core.embedding.base import Embedder
from memory_core.facts import judgement, keys_of

from .. import reference as ref
from ..harness import Sample

REPO = Path(__file__).resolve().parents[2]
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
    "views/overview.py",
    "views/memories.py",
    "views/decay_lab.py",
    "views/contradictions.py",
    "views/prompt_preview.py",
    "views/settings.py",
)

BENCH_NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def line_leads(result: Any) -> list[Any]:
    """The first included item of each line of a ``ContextResult``, in section order: the
    memory that stands for the line (a line several memories state word for word names them
    all, issue 25; the plain reference writes the first)."""
    first: dict[int, Any] = {}
    for i in sorted(result.included, key=lambda i: i.position or 0):
        first.setdefault(i.position or 0, i)
    return list(first.values())


def plain_policy(policy: Any) -> Any:
    """``policy`` as the reference reads it: no annotations (pending review, possibly stale, lab
    history, the date a medication was last confirmed: issue 35), one line per memory (no
    lists, history lines or allergy pairs; issue 23), no place held for what the question names
    (issue 32) and keyword matches by words only (no clinical keys)."""
    from dataclasses import replace

    from memory_core.policy import ContextPolicy

    return replace(
        policy,
        context=ContextPolicy(False, False, False, lists=False, history_last=False,
                              allergy_pairs=False, answer_places=False, dated_types=()),
        ranking=replace(policy.ranking, key_matches=False),
    )  # fmt: skip


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
    scan_n: int = 50_000  # hospital scale (issue 15): one patient, one type
    tuner_n: int = 20_000
    touch_patients: int = 100_000
    agent_n: int = 50_000
    section_n: int = 50_000  # issue 25: one chat-derived patient, the section path
    caches_patients: int = 60_000  # issue 25: one section each, default cache bound
    cleanup_patients: int = 20_000  # issue 25: a whole-store cleanup, applied
    liveness_s: float = 60.0  # issue 25: writer processes on one patient, and cleanups
    liveness_prefill: int = 2_000  # ... the shared patient's memories before they start
    fhir_bundles: int = 20  # FHIR import (issue 24): Synthea bundles, copies in the export
    fhir_copies: int = 15
    extract_chars: int = 99_000  # one patient turn (issue 24)
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
    app_pages=("views/overview.py",),
    app_reruns=1,
    rss_n=2_000,
    rss_patients=4,
    scan_n=400,
    tuner_n=300,
    touch_patients=300,
    agent_n=400,
    section_n=600,
    caches_patients=300,
    cleanup_patients=200,
    liveness_s=3.0,
    liveness_prefill=100,
    fhir_bundles=1,
    fhir_copies=3,
    extract_chars=3_000,
    repeat=3,
    e2e_repeat=3,
    ref_repeat=2,
    slow_repeat=1,
    scaling_repeat=2,
    peers=True,
    profile=False,
)


@dataclass(frozen=True)
class Target:
    """A workload's target, declared in the workload's module next to the code that measures
    it: the text of the report's Target column and the bounds :meth:`met` checks. ``text`` may
    name facts of the run in braces (``max_ratio`` and whatever the row's ``target_facts``
    give), filled in by :meth:`label`."""

    text: str
    max_s: float | None = None  # median seconds per operation at most
    min_per_s: float | None = None  # operations per second at least (1 / median)
    min_speedup: float | None = None  # reference median / this median at least
    max_ratio: float | None = None  # at most this multiple of a baseline the workload measures
    max_value: float | None = None  # a counted value (e.g. failures) at most this

    def met(
        self,
        sample: Sample | None = None,
        reference: Sample | None = None,
        *,
        value: float | None = None,
        baseline: float | None = None,
    ) -> bool:
        """Whether every bound of the target holds (``value``/``baseline`` for ``max_ratio``:
        the sample's median unless ``value`` is given)."""
        ok = True
        if self.max_s is not None:
            ok = ok and _median(sample) <= self.max_s
        if self.min_per_s is not None:
            ok = ok and 1 / _median(sample) >= self.min_per_s
        if self.min_speedup is not None:
            ok = ok and _median(reference) / _median(sample) >= self.min_speedup
        if self.max_value is not None:
            if value is None:
                raise ValueError(f"target {self.text!r} needs a value")
            ok = ok and value <= self.max_value
        if self.max_ratio is not None:
            if baseline is None:
                raise ValueError(f"target {self.text!r} needs a baseline")
            measured = _median(sample) if value is None else value
            ok = ok and measured / baseline <= self.max_ratio
        return ok

    def label(self, **facts: float) -> str:
        return self.text.format(max_ratio=self.max_ratio, **facts)


def _median(s: Sample | None) -> float:
    if s is None or not s.n:
        raise ValueError("a target is checked against a measured sample")
    return s.median


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
    target: Target | None = None  # the workload's target record (None: no target)
    passed: bool | None = None  # None: no target on this row (or not measured)
    note: str = ""
    value: float | None = None  # a non-timing figure (MB)
    unit: str = ""
    target_facts: dict[str, float] = field(default_factory=dict)  # for the target's text

    @property
    def target_text(self) -> str:
        """The Target column: the target's text with the run's facts filled in."""
        return "" if self.target is None else self.target.label(**self.target_facts)

    @property
    def ratio(self) -> float | None:
        """Speed-up over the reference (reference time ÷ this time); > 1 = faster."""
        if self.sample is None or self.reference is None or not self.sample.n:
            return None
        return self.reference.median / self.sample.median


def engine_and_reference(
    key: str, label: str, size: str, eng: Sample, refs: Sample, target: Target, passed: bool
) -> list[Row]:
    """The two rows of a workload checked against the reference measured in the same run: the
    engine's (with its target and verdict) and the reference's."""
    return [
        Row(key, label, size, "engine", eng, reference=refs, target=target, passed=passed),
        Row(key, label, size, "reference", refs, reference=refs),
    ]


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
    hospital: dict[str, Any] = field(default_factory=dict)  # the hospital-scale probes' figures
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


# --- the data set, the engines and the reference's view of them ----------------------------


class Setup:
    """The state every workload runs on: the synthetic data set, the SQLite store holding its
    patients, the engines (live, pre-embedded, two onnxruntime threads), the reference's
    inputs and the peers. :class:`bench.workloads.Bench` adds the order of a run."""

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
        self.kw_cache: dict[tuple[str, str], list[tuple[str, float]]] = {}

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

    def keyword_hits(self, pid: str, query: str) -> list[tuple[str, float]]:
        """The engine's keyword hits (ids and BM25) for a query, as its ranking asks for them: an
        input of the reference (fetched once, before any clock starts), not part of its timed
        work."""
        key = (pid, query)  # read paths only: the patient's content does not change meanwhile
        if key not in self.kw_cache:
            rp = self.eng.policy.ranking
            limit = max(rp.candidate_pool * 4, 50)
            hits = self.eng.keyword_search(pid, query, limit=limit, now=self.now)
            self.kw_cache[key] = [(m.id, b) for m, b in hits]
        return self.kw_cache[key]

    def warm_keywords(self, pid: str) -> None:
        for q in QUERIES:
            self.keyword_hits(pid, q)

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
            keyword_hits=self.keyword_hits(pid, q),
            pool=rp.candidate_pool,
            rrf_k=rp.rrf_k,
            always_types=rp.always_include_types,
            mode=rp.mode,
            keyword_weight=rp.keyword_weight,
        )

    def state(self, pid: str) -> tuple[list[ref.Record], list[ref.Record]]:
        """The patient as the reference sees it (plain records), and its keyword hits warmed."""
        self.warm_keywords(pid)
        return records_of(self.eng.list_memories(pid)), sups_of(self.eng.supersessions(pid))

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
            judgement,
            keys_of,
        )

    # --- peers ------------------------------------------------------------------------------
    def build_peers(self) -> None:
        if self.peers_built:
            return
        self.peers_built = True
        self.peers = {}
        self.peer_failures = {}
        if not self.cfg.peers:
            self.peer_reason = "peers switched off for this run"
            return
        from .. import peers

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


@contextlib.contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
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
