"""The outputs of a run: the console table, ``docs/benchmarks.md``, the scaling chart (plotly
HTML) and the raw numbers as JSON."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_core.embedding.minilm import BIG_BATCH
from memory_core.engine import SCAN_SPLIT_ROWS

from .harness import Sample, sample_threads
from .workloads import Results, Row

COSMOS = """\
The Cosmos DB store (`memory_core/store/cosmos/`) has two vector-search modes; the ranking is
the same in both (similarities are always the exact cosines from the engine's snapshot of the
patient), only who picks the vector candidate list differs. Per `build_context` call, from the
code (not measured here: no Cosmos account is reachable from this machine, and the local
Cosmos-protocol test server has no vector search):

- **`client`** (the default on a loopback emulator): the engine scores the patient's embeddings
  in numpy. The patient's memory and supersession documents (every field, the 384-float
  embedding as a JSON list, ~8 KB each) are read **once per change of the patient's content
  version** and kept in the engine's snapshot, with the keyword (BM25) index built from the same
  documents. A query then costs **one point read** of the patient's version counter (~1 RU)
  and no document reads. An agent call with `record_access=True` moves the
  usage version, so the next call re-reads the patient's usage: an in-partition query over **all
  N memory documents** (projected to `id, access_count, last_accessed_us`) plus **every usage
  document** of the patient -- one is written per agent call, so this read grows with the
  patient's history as well as with N.
- **`server`** (the default on a real account): each call additionally runs
  `SELECT TOP 50 c.id, VectorDistance(...) ... ORDER BY VectorDistance(c.embedding, @q)` inside
  the patient's partition. Its RU charge is set by the vector index: `quantizedFlat` (the
  default) compares the query with the compressed vector of every memory in the partition and
  re-ranks the best with full vectors, so it grows with N. It does **not** replace the snapshot
  read: decay, supersession status and the safety rules need every active memory's fields, so the
  N documents are still read per content version in both modes.

Trade-off: `client` reads each memory document once per content change and then ~1 RU per
query, with latency independent of the database (numpy over the cached matrix: the end-to-end
rows above); `server` adds one vector query per call whose charge and latency scale with the
patient's memory count, and would only pay off if the engine stopped loading the whole patient
(ranking the TOP-k documents returned plus a small always-included set) -- which it does not
do today. For patients of up to tens of thousands of memories `client` is the cheaper mode per
query; the usage re-read after every agent call is the cost to watch in both.
"""


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1.0:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def fmt_rate(per_s: float) -> str:
    return f"{per_s:,.0f}/s" if per_s >= 10 else f"{per_s:.1f}/s"


def median_text(r: Row) -> str:
    if r.value is not None:
        return f"{r.value:,.0f} {r.unit}"
    if r.sample is None or not r.sample.n:
        return "not measured"
    return fmt_rate(1 / r.sample.median) if r.rate else fmt_time(r.sample.median)


def spread_text(r: Row) -> str:
    if r.sample is None or not r.sample.n:
        return ""
    s = r.sample
    if r.rate:
        return f"{fmt_rate(1 / s.hi)} – {fmt_rate(1 / s.lo)}"
    return f"{fmt_time(s.lo)} – {fmt_time(s.hi)}"


def ratio_text(r: Row) -> str:
    x = r.ratio
    if x is None:
        return "—"
    return f"{x:,.1f}×" if x >= 10 else f"{x:.2f}×"


def result_text(r: Row) -> str:
    if r.passed is None:
        return ""
    return "✅ met" if r.passed else "❌ missed"


COLUMNS = (
    "Workload",
    "Size",
    "Contender",
    "Median",
    "Spread (min – max)",
    "n",
    "vs reference",
    "Target",
    "Result",
    "Note",
)


def table_rows(res: Results) -> list[list[str]]:
    out = []
    last = None
    for r in res.rows:
        same = last is not None and (last.key, last.workload, last.size) == (
            r.key,
            r.workload,
            r.size,
        )
        out.append(
            [
                "" if same else r.workload,
                "" if same else r.size,
                r.contender,
                median_text(r),
                spread_text(r),
                str(r.sample.n) if r.sample is not None and r.sample.n else "",
                ratio_text(r),
                r.target_text,
                result_text(r),
                r.note,
            ]
        )
        last = r
    return out


def console_table(res: Results) -> str:
    rows = [list(COLUMNS[:-1])] + [r[:-1] for r in table_rows(res)]
    widths = [min(48, max(len(row[i]) for row in rows)) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell[:48].ljust(w) for cell, w in zip(row, widths, strict=True)))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _targets(res: Results) -> tuple[list[Row], list[Row]]:
    with_target = [r for r in res.rows if r.passed is not None]
    return [r for r in with_target if r.passed], [r for r in with_target if not r.passed]


def scaling_rows(res: Results) -> list[list[str]]:
    curves = res.scaling
    sizes = sorted({n for c in curves.values() for n in c})
    rows = []
    for n in sizes:
        row = [f"{n:,}"]
        for eng, refk in (
            ("build_context (engine)", "build_context (reference)"),
            ("contradiction check (engine)", "contradiction check (reference)"),
        ):
            e, r = curves[eng].get(n), curves[refk].get(n)
            if e is None or r is None:
                row += ["", "", ""]
                continue
            row += [
                f"{fmt_time(e.median)} ({fmt_time(e.lo)}–{fmt_time(e.hi)})",
                fmt_time(r.median),
                f"{r.median / e.median:,.1f}×",
            ]
        rows.append(row)
    return rows


def peer_matrix(res: Results) -> tuple[list[str], list[list[str]]]:
    sizes = sorted({n for c in res.scaling_peers.values() for n in c})
    header = ["Contender"] + [f"{n:,}" for n in sizes]
    rows = []
    floor = res.scaling_peers.get("floor (embed + numpy cosine)", {})
    for name, by in res.scaling_peers.items():
        cells = [name]
        for n in sizes:
            s = by.get(n)
            if s is None:
                cells.append("")
                continue
            extra = f" ({s.median / floor[n].median:.2f}× floor)" if n in floor else ""
            cells.append(fmt_time(s.median) + extra)
        rows.append(cells)
    return header, rows


def chart(res: Results, path: Path) -> bool:
    """Cost vs size, log-log, as a plotly HTML page (plotly.js written once beside it)."""
    try:
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots
    except ImportError:  # pragma: no cover - plotly is an app dependency
        return False
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            "Query already embedded: engine vs reference",
            "End to end (query embedding included) vs peers",
        ),
    )

    colours = {
        "build_context (engine)": ("#1f77b4", None),
        "build_context (reference)": ("#d62728", "dot"),
        "contradiction check (engine)": ("#2ca02c", None),
        "contradiction check (reference)": ("#2ca02c", "dot"),
        "engine": ("#1f77b4", None),
        "reference": ("#d62728", "dot"),
        "floor (embed + numpy cosine)": ("#555555", None),
        "engine, 2 onnxruntime threads": ("#1f77b4", "dash"),
        "floor, 2 onnxruntime threads": ("#555555", "dash"),
        "Mem0 + FAISS search": ("#ff7f0e", None),
        "Mem0 + Qdrant search": ("#9467bd", None),
        "LangGraph InMemoryStore search": ("#8c564b", None),
    }

    def add(name: str, by: dict[int, Sample], col: int, label: str) -> None:
        xs = sorted(by)
        ys = [by[n].median * 1e3 for n in xs]
        colour, dash = colours.get(name, (None, None))
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                name=label,
                legendgroup=str(col),
                legendgrouptitle_text="query embedded" if col == 1 else "end to end",
                mode="lines+markers",
                line={"color": colour, "dash": dash},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [by[n].hi * 1e3 - y for n, y in zip(xs, ys, strict=True)],
                    "arrayminus": [y - by[n].lo * 1e3 for n, y in zip(xs, ys, strict=True)],
                },
                hovertemplate=f"{label}<br>%{{x:,}} memories: %{{y:.3g}} ms<extra></extra>",
            ),
            row=1,
            col=col,
        )

    for name, by in res.scaling.items():
        add(name, by, 1, name)
    for name, by in res.scaling_peers.items():
        add(name, by, 2, name)
    for col in (1, 2):
        fig.update_xaxes(type="log", title_text="memories per patient", row=1, col=col)
        fig.update_yaxes(type="log", title_text="median time per call (ms)", row=1, col=col)
    fig.update_layout(
        title="memory_core benchmarks: cost vs memories per patient (whiskers: min–max)",
        height=600,
        template="plotly_white",
        legend={"groupclick": "toggleitem"},
    )
    # plotly.js from its CDN when the page is opened (a 4.8 MB copy is not worth committing);
    # the numbers are also in benchmarks.md and bench_results.json
    fig.write_html(str(path), include_plotlyjs="cdn", full_html=True)
    return True


def to_json(res: Results) -> dict[str, Any]:
    def sample(s: Sample | None) -> dict[str, Any] | None:
        if s is None:
            return None
        return {"median_s": s.median, "min_s": s.lo, "max_s": s.hi, "n": s.n, "times_s": s.times}

    return {
        "code": res.code,
        "started": res.started,
        "seconds": res.seconds,
        "config": res.config.name,
        "machine": res.machine,
        "threads": res.threads,
        "rows": [
            {
                "key": r.key,
                "workload": r.workload,
                "size": r.size,
                "contender": r.contender,
                "rate": r.rate,
                "sample": sample(r.sample),
                "reference": sample(r.reference),
                "ratio_to_reference": r.ratio,
                "value": r.value,
                "unit": r.unit,
                "target": r.target_text,
                "passed": r.passed,
                "note": r.note,
            }
            for r in res.rows
        ],
        "scaling": {k: {n: sample(s) for n, s in v.items()} for k, v in res.scaling.items()},
        "end_to_end": {
            k: {n: sample(s) for n, s in v.items()} for k, v in res.scaling_peers.items()
        },
        "pages": [
            {"page": p["page"], "first_s": p["first"], "reruns": sample(p["reruns"])}
            for p in res.pages
        ],
        "rss": res.rss,
        "hospital": res.hospital,
        "checks": res.checks,
        "setup": res.setup,
    }


def code_line(res: Results) -> str:
    start, end = res.code.get("start", {}), res.code.get("end", {})
    if not start:
        return "- Engine measured: unknown"
    line = (
        f"- Engine measured: commit {start['commit']}"
        + (" with uncommitted changes" if start["dirty"] else "")
        + f" (memory_core/, views/, app.py digest {start['digest']})"
    )
    if end and end.get("digest") != start.get("digest"):
        line += (
            f". **Warning: that code changed during the run (digest {end['digest']} at the end, "
            f"commit {end['commit']}): steps that started fresh processes (cold load, resident "
            "memory) or imported modules late may have measured the newer code; rerun.**"
        )
    return line


def markdown(res: Results, chart_name: str | None, plans: dict[str, str]) -> str:
    met, missed = _targets(res)
    m = res.machine
    t = res.threads
    parts = [
        "# Benchmarks",
        "",
        f"Generated by `make bench` (`python -m bench`, configuration `{res.config.name}`) on "
        f"{res.started} UTC; the whole run took {res.seconds:,.0f} s. Do not edit by hand: "
        "rerun `make bench`. Every figure is a median over repeated runs after a warm-up, with "
        "its spread (min – max) and the number of timed runs (n); **vs reference** is the plain "
        "per-memory Python reference (`bench/reference.py`) measured in the same run divided "
        "by the figure (above 1× = faster than the reference).",
        "",
        f"**Targets: {len(met)} met, {len(missed)} missed.**"
        + (
            " Missed: "
            + "; ".join(f"{r.workload} ({r.size}): {median_text(r)}" for r in missed)
            + ". Profiles and plans are under [Missed targets](#missed-targets-profiles-and-plans)."
            if missed
            else ""
        ),
        "",
        "## Machine and settings",
        "",
        code_line(res),
        f"- {m.get('cores')} cores, {m.get('cpu')}, {m.get('memory')} RAM, {m.get('os')}",
        f"- Python {m.get('python')}, numpy {m.get('numpy')}, onnxruntime {m.get('onnxruntime')}",
        f"- BLAS: {t.get('blas')} (requested {t.get('blas_requested')}; "
        f"OPENBLAS_NUM_THREADS={t.get('OPENBLAS_NUM_THREADS')}, "
        f"OMP_NUM_THREADS={t.get('OMP_NUM_THREADS')})",
        "- onnxruntime intra-op threads: "
        f"MEMORY_CORE_ORT_THREADS={t.get('MEMORY_CORE_ORT_THREADS')} for single texts and "
        f"batches under {BIG_BATCH} (inter-op 1); batches of {BIG_BATCH} or more (add_memories, "
        "imports) run on a second session with "
        f"MEMORY_CORE_ORT_BATCH_THREADS={t.get('MEMORY_CORE_ORT_BATCH_THREADS')} and spinning "
        "off. An embedder with 2 threads for everything is used only to pre-embed the data and "
        "for the comparison rows",
        f"- The engine's helper thread: a cosine scan over {SCAN_SPLIT_ROWS:,} rows or more is "
        "split in two halves, one on it",
        f"- FAISS OpenMP threads: {res.peers.get('faiss OpenMP threads', 'n/a')}",
        f"- Load average (1/5/15 min) at start: {t.get('load_start', 'n/a')}; at the end: "
        f"{t.get('load_end', 'n/a')}. The machine is shared: another job (e.g. the test suite) "
        "running at the same time inflates medians and widens spreads.",
        "",
        "## Results",
        "",
        markdown_table(list(COLUMNS), table_rows(res)),
        "",
    ]
    if res.scaling:
        sizes = sorted({n for c in res.scaling.values() for n in c})
        parts += [
            f"## Scaling from {min(sizes):,} to {max(sizes):,} memories per patient",
            "",
            "Query already embedded; contradiction check = a new memory of the patient's "
            "most common type (lab results: the most rows and the most hits), embedding "
            "excluded. Engine median (min–max), reference median, speed-up."
            + (f" Chart: [{chart_name}]({chart_name})." if chart_name else ""),
            "",
            markdown_table(
                [
                    "Memories",
                    "build_context (engine)",
                    "reference",
                    "speed-up",
                    "contradiction check (engine)",
                    "reference",
                    "speed-up",
                ],
                scaling_rows(res),
            ),
            "",
        ]
    if res.scaling_peers:
        header, rows = peer_matrix(res)
        parts += [
            "### End to end vs the peers (median per call, query embedding included)",
            "",
            markdown_table(header, rows),
            "",
        ]
    parts += ["## Peers", ""]
    versions = res.peers.get("versions", {})
    if versions:
        parts.append(
            "Installed (bench/requirements.txt, in `.venv-bench` only): "
            + ", ".join(f"{k} {v or 'missing'}" for k, v in versions.items())
            + "."
        )
    parts += [
        "",
        "Offline set-up: Mem0's open-source `Memory` with the engine's MiniLM embedder wrapped as "
        "a LangChain `Embeddings` (embedder provider `langchain`), vector store FAISS (files in a "
        'temporary directory, cosine) or Qdrant (`path=":memory:"`), a dummy OpenAI key with '
        "base URL `http://127.0.0.1:9/v1` (nothing listens; no LLM call happens with "
        "`infer=False`), telemetry off (`MEM0_TELEMETRY=False`) and a socket guard that refuses "
        "any connection or name lookup beyond loopback. Timed: `Memory.search(q, "
        'filters={"user_id": pid}, top_k=5)` and `Memory.add(text, user_id=pid, '
        "infer=False)`. Mem0 stores are bulk-loaded through their vector store's `insert` with "
        "the payload `add` writes (its own `add` re-saves the FAISS index on every call). "
        'LangGraph: `InMemoryStore(index={dims: 384, embed: <same wrapper>, fields: ["text"]})`, '
        "`search(namespace, query=q, limit=5)`. Without spaCy/fastembed Mem0 runs its bare "
        "semantic search (no BM25 or entity boosts). Each peer store holds only the measured "
        "user's memories (the most favourable case for the peers); the engine's SQLite store "
        f"holds every benchmark patient ({res.setup.get('memories in the engine store', 0):,} "
        "memories), as a deployment would.",
        "",
    ]
    if res.pages:
        parts += [
            "## Dashboard pages (AppTest)",
            "",
            markdown_table(
                ["Page", "First run", "Rerun median", "Rerun min – max", "n"],
                [
                    [
                        p["page"],
                        fmt_time(p["first"]),
                        fmt_time(p["reruns"].median),
                        f"{fmt_time(p['reruns'].lo)} – {fmt_time(p['reruns'].hi)}",
                        str(p["reruns"].n),
                    ]
                    for p in res.pages
                ],
            ),
            "",
        ]
    if res.rss:
        r = res.rss
        parts += [
            "## Resident memory",
            "",
            f"A fresh process opens an engine on a SQLite store holding {r['memories']:,} "
            f"memories (384-d float32), reads VmRSS ({r['rss_before_bytes'] / 2**20:,.0f} MiB), "
            f"makes the engine hold every patient (one retrieval each; {r['load_seconds']:.1f} s) "
            f"and reads VmRSS again ({r['rss_after_bytes'] / 2**20:,.0f} MiB; peak "
            f"{r['peak_bytes'] / 2**20:,.0f} MiB). Growth: **{r['delta_bytes'] / 2**20:,.0f} MiB** "
            f"= {r['delta_bytes'] / r['raw_bytes']:.2f}× the raw size "
            f"({r['embedding_bytes'] / 2**20:,.0f} MiB of embeddings + "
            f"{r['content_bytes'] / 2**20:,.1f} MiB of content). Where the bytes are "
            "(sys.getsizeof accounting of the cached snapshots):",
            "",
            markdown_table(
                ["Part", "MiB"],
                [[k, f"{v / 2**20:,.1f}"] for k, v in r.get("breakdown", {}).items()],
            ),
            "",
        ]
    parts += ["## Cosmos DB: `client` vs `server` vector search", "", COSMOS, ""]
    parts += ["## Method", ""]
    parts += [
        "- Data: one synthetic patient from `memory_core.demo.scale_dataset` with as many "
        "memories as the largest size; each size is a fixed random subset of it loaded as its "
        "own patient through `add_memories` (access history included).",
        "- Before anything is timed the reference and the engine are run on the same inputs and "
        "must agree:",
        *[f"  - {c}" for c in res.checks],
        "- Contenders that run in a loop are timed in rounds (each once, then again), each "
        "round in a new seeded random order, so a noisy moment, the caches a heavy contender "
        "leaves cold and any contender's leftover threads hit them alike; queries rotate "
        "over five agent-style questions. The two-onnxruntime-"
        "thread rows are timed in a round of their own after it: onnxruntime's idle worker "
        "thread spins after each call and would slow whichever contender came next.",
        "- The floor is the query embedding plus a numpy brute-force cosine over the patient's "
        "whole (pre-normalised) matrix and a top-5 partial sort.",
        "- The reference (`bench/reference.py`) works on plain records (ISO timestamps, one "
        "vector each) and loops over every memory per call: parse, decay and boost, cosine, "
        "then sort and format. It has no keyword search of its own (as in the issue): it is "
        "handed the ids the engine's BM25 keyword search returns for the query, fetched before the "
        "clock starts like the query vector, only so that it picks the same candidate pool as "
        "the engine and the results can be compared. The engine's timings include its keyword "
        "search. The contradiction verdict (the adjudicator rule) is shared.",
        "- Patients: `BENCH-nnnnnn` hold all their memories active (loaded without detection: "
        "the worst case for ranking and checking, and what the peers, which keep everything "
        "searchable, are compared on); `BENCH-nnnnnn-D` were loaded with supersession "
        "detection on, as real use leaves a patient (the generator's lab and observation series "
        "supersede each other, so few stay active); the add workloads use the latter.",
        "- Chat scale and liveness (issue 25; `bench/workloads/section.py`, `caches.py`, "
        "`liveness.py`, each in fresh interpreters with the hashing embedder; design notes in "
        "[performance.md](performance.md)): `section-*` is one chat-derived patient (the same "
        "facts restated hundreds of times, readings and lab values, doses that change every few "
        "days; imported in bulk, its medications and conditions detected), timed warm and as the "
        "first call after one `add_memory`, paired with the reference on the same patient after "
        "both agree on every query's lines and text; `caches-rss` is the RSS growth after one "
        "section for each of many 3-memory patients under the default cache bound; "
        "`liveness-*` counts the adds that gave up and the cleanups refused while four writer "
        "processes add to one patient and a reviewer process runs three whole-store cleanups; "
        "`cleanup-store` times one whole-store cleanup of every 3-memory patient.",
        "- Run it: `make bench` (creates `.venv-bench` with the app's requirements and "
        "`bench/requirements.txt`), or `.venv-bench/bin/python -m bench [--only e2e,adds] "
        "[--tiny] [--no-peers] [--out DIR]`; `tests/test_bench.py` runs every workload at tiny "
        "size in the app's venv.",
        "- Set-up (not timed): "
        + ", ".join(
            f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in res.setup.items()
        )
        + ".",
        *[f"  - {line}" for line in res.load],
        "",
    ]
    if missed:
        parts += ["## Missed targets: profiles and plans", ""]
        shown: dict[str, str] = {}
        for r in missed:
            parts += [f"### {r.workload} — {r.size}", ""]
            parts += [f"Measured {median_text(r)} against {r.target_text}."]
            plan = plans.get(r.key) or plans.get(r.key.split("@")[0])
            if plan and plan in shown:
                parts += ["", f"Plan: as for {shown[plan]} above (same causes)."]
            elif plan:
                shown[plan] = f"{r.workload}, {r.size}"
                parts += ["", plan]
            prof = res.profiles.get(r.key)
            if prof:
                parts += ["", "Profile:", "", "```", prof.rstrip(), "```"]
            parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def profile_misses(res: Results, top: int = 45) -> None:
    """Profiles of the engine calls behind missed targets: pyinstrument (when installed) for
    calls on this thread, a stack sampler for page scripts (AppTest runs them in a thread)."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        Profiler = None
    _, missed = _targets(res)
    for r in missed:
        threaded = res.thread_profile_calls.get(r.key)
        if threaded is not None:
            threaded()  # warm: a rerun in the same minute hits the page's caches
            res.profiles[r.key] = "stack samples (AppTest runs the page in its own thread)\n"
            res.profiles[r.key] += sample_threads(threaded)
            continue
        call: Callable[[], Any] | None = res.profile_calls.get(r.key)
        if call is None or Profiler is None:
            continue
        t = time.perf_counter()
        call()
        once = max(time.perf_counter() - t, 1e-4)
        reps = max(1, min(200, int(2.0 / once)))
        prof = Profiler(interval=0.0005)
        prof.start()
        for _ in range(reps):
            call()
        prof.stop()
        text = prof.output_text(unicode=True, color=False, show_all=False)
        lines = [ln for ln in text.splitlines() if ln.strip()]
        res.profiles[r.key] = f"pyinstrument, {reps} call(s)\n" + "\n".join(lines[:top])


def write(res: Results, out: Path, plans: dict[str, str]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    chart_path = out / "bench_scaling.html"
    chart_name = chart_path.name if chart(res, chart_path) else None
    if chart_name:
        written.append(chart_path)
    md = out / "benchmarks.md"
    md.write_text(markdown(res, chart_name, plans), encoding="utf-8")
    written.append(md)
    js = out / "bench_results.json"
    js.write_text(json.dumps(to_json(res), indent=1, default=str) + "\n", encoding="utf-8")
    written.append(js)
    return written
