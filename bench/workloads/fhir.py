"""FHIR import at scale (issue 24, item 3): Synthea bundles one by one, and a Bulk Data export
of many patients, each imported with ``--apply`` into a fresh SQLite store with the product's
embedder (MiniLM) in a fresh interpreter (``python -m bench.probe fhir-...``).

- ``fhir-bundle``: the first ``fhir_bundles`` Synthea R4 bundles (sorted by file name) from
  ``data/eval/synthea`` (git-ignored public data; ``MEMORY_CORE_SYNTHEA`` names another
  folder), imported one after the other; the figure is the process's CPU time (user + system,
  every thread) per resource read, over the import calls only.
- ``fhir-bulk``: those bundles copied ``fhir_copies`` times under new ids (every resource id
  gets a ``-c<k>`` suffix, every reference follows it) and written as the NDJSON files of a
  ``$export`` (a file per resource type), then imported through ``import_fhir_bulk``; the
  figures are the rate (resources and patients per second) beside the per-bundle rate, and
  the resident memory after each patient: flat past the engine's configured caches.

Without the Synthea folder, the tiny run uses the demo bundle (the code path is checked on
every ``make test``) and the full run reports the rows as not measured.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..harness import Sample
from .common import REPO, Row, Setup, Target, log, probe

MIB = 2**20
CPU_PER_RESOURCE = Target("≤ 1 ms CPU per resource", max_s=1e-3)
RSS_FLAT = Target(
    "RSS growth after the first {warm:,.0f} patients ≤ cache bound + {allowance_mib:,.0f} MiB",
    max_ratio=1.0,
)
ALLOWANCE = 64 * MIB
#: the engine's snapshot cache during the bulk run (bounded; the default is 512 MiB)
BULK_CACHE = 64 * MIB
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def synthea_dir() -> Path | None:
    path = Path(os.environ.get("MEMORY_CORE_SYNTHEA") or REPO / "data" / "eval" / "synthea")
    return path if path.is_dir() and any(path.glob("*.json")) else None


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss() -> int:
    from ..probe import vm

    return vm()


def _engine(db: str, cache_bytes: int | None = None) -> Any:
    import memory_core as mc
    from memory_core.embedding.minilm import MiniLMEmbedder

    kw = {} if cache_bytes is None else {"cache_bytes": cache_bytes}
    eng = mc.MemoryEngine(
        mc.open_store(f"sqlite:///{db}"), MiniLMEmbedder(), clock=lambda: NOW, **kw
    )
    eng.embedder.embed_batch(["warm up the embedder", "and its batch session"] * 8)
    return eng


def bundle_paths(source: str, n: int) -> list[Path]:
    """The first ``n`` bundles of ``source`` (a folder), or the demo bundle (``demo``)."""
    if source == "demo":
        return [Path(str(files("memory_core").joinpath("data/demo/fhir_nw1001_bundle.json")))]
    return sorted(Path(source).glob("*.json"))[:n]


# --- the probes (python -m bench.probe fhir-...) -----------------------------------------------
def run_bundles(source: str, n: int, db: str) -> dict[str, Any]:
    eng = _engine(db)
    resources = created = skipped = superseded = 0
    cpu = wall = 0.0
    for path in bundle_paths(source, n):
        data = json.loads(path.read_text(encoding="utf-8"))
        resources += len(data.get("entry") or [])
        c0, t0 = _cpu(), time.perf_counter()
        rep = eng.import_fhir(data, by="bench", dry_run=False, now=NOW)
        cpu += _cpu() - c0
        wall += time.perf_counter() - t0
        created += len(rep.created)
        skipped += len(rep.skipped)
        superseded += len(rep.superseded)
        del data, rep
    eng.store.close()
    return {
        "bundles": len(bundle_paths(source, n)),
        "resources": resources,
        "created": created,
        "skipped": skipped,
        "superseded": superseded,
        "cpu_seconds": cpu,
        "wall_seconds": wall,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def _rewrite(node: Any, ids: dict[str, str]) -> Any:
    """References of a bundle's resources rewritten to ``Type/<new id>``."""
    if isinstance(node, dict):
        out = {k: _rewrite(v, ids) for k, v in node.items()}
        ref = node.get("reference")
        if isinstance(ref, str) and ref in ids:
            out["reference"] = ids[ref]
        return out
    if isinstance(node, list):
        return [_rewrite(v, ids) for v in node]
    return node


def _copies(paths: list[Path], copies: int) -> Iterator[dict[str, Any]]:
    """Every resource of every bundle, once per copy, under new ids."""
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        for k in range(copies):
            ids: dict[str, str] = {}
            for e in data.get("entry") or []:
                res = e["resource"]
                new = f"{res['resourceType']}/{res['id']}-c{k}"
                ids[f"{res['resourceType']}/{res['id']}"] = new
                if e.get("fullUrl"):
                    ids[e["fullUrl"]] = new
            for e in data.get("entry") or []:
                res = _rewrite(e["resource"], ids)
                res["id"] = f"{res['id']}-c{k}"
                yield res


def write_export(source: str, n: int, copies: int, out: str) -> dict[str, Any]:
    """The NDJSON files of an export of ``n`` bundles × ``copies`` patients in ``out``."""
    os.makedirs(out, exist_ok=True)
    handles: dict[str, Any] = {}
    count = 0
    try:
        for res in _copies(bundle_paths(source, n), copies):
            rtype = res["resourceType"]
            if rtype not in handles:
                handles[rtype] = open(os.path.join(out, f"{rtype}.ndjson"), "w", encoding="utf-8")  # noqa: SIM115
            handles[rtype].write(json.dumps(res, separators=(",", ":")) + "\n")
            count += 1
    finally:
        for fh in handles.values():
            fh.close()
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    return {"resources": count, "files": len(handles), "bytes": size}


def run_bulk(export: str, db: str) -> dict[str, Any]:
    eng = _engine(db, cache_bytes=BULK_CACHE)
    rss: list[int] = []

    def progress(done: int, total: int) -> None:
        rss.append(_rss())

    c0, t0 = _cpu(), time.perf_counter()
    rep = eng.import_fhir_bulk([export], by="bench", dry_run=False, now=NOW, progress=progress)
    cpu, wall = _cpu() - c0, time.perf_counter() - t0
    eng.store.close()
    return {
        "patients": len(rep.patients),
        "failed": len(rep.failed),
        "resources": rep.resources,
        "created": rep.created,
        "cpu_seconds": cpu,
        "wall_seconds": wall,
        "rss_bytes": rss,
        "cache_bound_bytes": BULK_CACHE,
    }


def probe_main(cmd: str, args: list[str]) -> dict[str, Any]:
    if cmd == "fhir-bundles":
        return run_bundles(args[0], int(args[1]), args[2])
    if cmd == "fhir-export":
        return write_export(args[0], int(args[1]), int(args[2]), args[3])
    if cmd == "fhir-bulk":
        return run_bulk(args[0], args[1])
    raise SystemExit(f"unknown probe {cmd!r}")


# --- the bench side ----------------------------------------------------------------------------
def run(bench: Setup) -> None:
    cfg = bench.cfg
    found = synthea_dir()
    source = str(found) if found is not None else ("demo" if cfg.name == "tiny" else "")
    if cfg.name == "tiny":
        source = "demo" if found is None else source
    if not source:
        note = "not measured: no Synthea bundles in data/eval/synthea (see docs/ingest.md)"
        bench.res.rows += [
            Row("fhir-bundle", "FHIR bundle import", "-", "engine", note=note),
            Row("fhir-bulk", "FHIR Bulk Data import", "-", "engine", note=note),
        ]
        return
    n, copies = cfg.fhir_bundles, cfg.fhir_copies
    what = "the demo bundle" if source == "demo" else f"{n} Synthea bundles"
    log(f"FHIR import of {what} (subprocess)")
    one = probe(
        "fhir-bundles", source, str(n), os.path.join(bench.workdir, "fhir.db"), timeout=3600
    )
    per = one["cpu_seconds"] / max(one["resources"], 1)
    smp = Sample([per])
    bench.res.hospital["fhir_bundles"] = one
    size = f"{one['bundles']} bundles, {one['resources']:,} resources"
    bench.res.rows.append(
        Row(
            "fhir-bundle",
            "FHIR R4 bundles imported (--apply, MiniLM): CPU per resource",
            size,
            "engine",
            smp,
            target=CPU_PER_RESOURCE,
            passed=CPU_PER_RESOURCE.met(smp),
            note=f"one run; {one['created']:,} memories, {one['superseded']:,} superseded; "
            f"{one['resources'] / one['wall_seconds']:,.0f} resources/s wall, "
            f"{one['bundles'] / one['wall_seconds']:.2f} bundles/s",
        )
    )
    export = os.path.join(bench.workdir, "export")
    made = probe("fhir-export", source, str(n), str(copies), export, timeout=3600)
    log(f"FHIR Bulk import of {one['bundles'] * copies} patients, {made['resources']:,} resources")
    out = probe("fhir-bulk", export, os.path.join(bench.workdir, "bulk.db"), timeout=7200)
    bench.res.hospital["fhir_bulk"] = {k: v for k, v in out.items() if k != "rss_bytes"}
    rss = out["rss_bytes"]
    warm = max(1, len(rss) // 3)
    growth = max(rss[warm:]) - rss[warm - 1] if len(rss) > warm else 0
    limit = out["cache_bound_bytes"] + ALLOWANCE
    rate = out["resources"] / out["wall_seconds"]
    bench.res.rows.append(
        Row(
            "fhir-bulk",
            "FHIR Bulk Data export imported (NDJSON, --apply, MiniLM): resident memory",
            f"{out['patients']} patients, {out['resources']:,} resources",
            "engine",
            value=growth / MIB,
            unit="MiB",
            target=RSS_FLAT,
            target_facts={"warm": warm, "allowance_mib": ALLOWANCE / MIB},
            passed=RSS_FLAT.met(value=growth, baseline=limit) and out["failed"] == 0,
            note=f"{rate:,.0f} resources/s, {out['patients'] / out['wall_seconds']:.2f} "
            f"patients/s (bundles one by one: {one['resources'] / one['wall_seconds']:,.0f} "
            f"resources/s); CPU {out['cpu_seconds'] / out['resources'] * 1e3:.2f} ms per "
            f"resource; RSS {rss[0] / MIB:,.0f} → {rss[-1] / MIB:,.0f} MiB, cache bound "
            f"{out['cache_bound_bytes'] / MIB:,.0f} MiB; {out['failed']} patients refused",
        )
    )
