"""Resident memory of an engine holding ``rss_n`` memories (fresh subprocesses, see
:mod:`bench.probe`): RSS growth against the raw size of the embeddings and contents."""

from __future__ import annotations

import os

from .common import (
    Row,
    Setup,
    Target,
    log,
    probe,
)

RAW_FACTOR = 2.0
TARGET = Target("≤ {max_ratio:g}× raw ({limit_mib:,.0f} MiB)", max_ratio=RAW_FACTOR)


def run(bench: Setup) -> None:
    cfg = bench.cfg
    log(f"resident memory of an engine holding {cfg.rss_n:,} memories (subprocesses)")
    db = os.path.join(bench.workdir, "rss.db")
    built = probe("rss-build", db, str(cfg.rss_n), str(cfg.rss_patients), timeout=900)
    out = probe("rss-measure", db, timeout=900)
    raw = built["raw_bytes"]
    bench.res.rss = {**built, **out}
    ratio = out["delta_bytes"] / raw
    bench.res.rows.append(
        Row(
            "rss",
            "resident memory of an engine holding the memories (RSS growth)",
            f"{cfg.rss_n:,} × 384 dims, {cfg.rss_patients} patients",
            "engine",
            value=out["delta_bytes"] / 2**20,
            unit="MiB",
            target=TARGET,
            target_facts={"limit_mib": RAW_FACTOR * raw / 2**20},
            passed=TARGET.met(value=out["delta_bytes"], baseline=raw),
            note=f"{ratio:.2f}× the raw float32 embeddings + content ({raw / 2**20:,.0f} MiB)",
        )
    )
