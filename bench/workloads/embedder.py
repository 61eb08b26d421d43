"""The MiniLM embedder: batch throughput on short clinical sentences (one and two onnxruntime
threads, against one sentence per call) and its cold load in a fresh process."""

from __future__ import annotations

import numpy as np

from ..harness import Sample, measure
from .common import (
    Row,
    Setup,
    Target,
    log,
    probe,
)

THROUGHPUT = Target("≥ 200/s", min_per_s=200)
COLD_LOAD = Target("≤ 2 s", max_s=2.0)


def run(bench: Setup) -> None:
    cfg = bench.cfg
    log("embedder throughput and cold load")
    used = set(bench.primed.primed)
    sentences = [m.content for m in bench.fresh if m.content not in used][: cfg.embed_sentences]
    k = len(sentences)
    batch = measure(lambda: bench.embedder.embed_batch(sentences), 5 if k > 50 else 2, per=k)
    two = measure(lambda: bench.embedder2.embed_batch(sentences), 3 if k > 50 else 1, per=k)
    single = measure(
        lambda: [bench.embedder.embed(s) for s in sentences], 2 if k > 50 else 1, per=k
    )
    cold = Sample()
    for _ in range(cfg.cold_loads):
        out = probe("cold-load")
        cold.times.append(out["seconds"])
    label = "MiniLM embedder throughput, short clinical sentences"
    size = f"{k} sentences (median {int(np.median([len(s) for s in sentences]))} chars)"
    bench.res.rows += [
        Row(
            "embed",
            label,
            size,
            "engine (embed_batch, 1 onnxruntime thread)",
            batch,
            rate=True,
            reference=single,
            target=THROUGHPUT,
            passed=THROUGHPUT.met(batch),
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
            "embedder cold load (fresh process: import, SHA-256 check, session, first embedding)",
            "",
            "engine",
            cold,
            target=COLD_LOAD,
            passed=COLD_LOAD.met(cold),
        ),
    ]
