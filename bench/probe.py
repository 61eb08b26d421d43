"""Measurements that need a fresh interpreter: ``python -m bench.probe COMMAND ...``.

- ``cold-load``: import the MiniLM embedder, build it (SHA-256 check, onnxruntime session) and
  embed one sentence; prints the seconds.
- ``rss-build DB N PATIENTS``: write N synthetic memories (random 384-d unit vectors, contents
  from ``scale_dataset``) for PATIENTS patients into a SQLite file; prints the raw size.
- ``rss-measure DB``: open an engine on DB, read VmRSS, make the engine hold every patient
  (one retrieval each loads its snapshot), read VmRSS again; prints the growth and where the
  bytes are.
- ``scale-...``: the hospital-scale probes of :mod:`bench.workloads.hospital`.
- ``section-...``: the chat-scale section path of :mod:`bench.workloads.section`.
- ``caches-...``: the caches' bound under sections, :mod:`bench.workloads.caches`.
- ``liveness-...``, ``cleanup-...``: concurrent writers and the whole-store cleanup,
  :mod:`bench.workloads.liveness`.
- ``fhir-...``: the FHIR import probes of :mod:`bench.workloads.fhir`.

The last line printed is JSON (read by :func:`bench.workloads.probe`).
"""

from __future__ import annotations

import gc
import json
import sys
import time
from datetime import UTC, datetime
from typing import Any


def vm(field: str = "VmRSS") -> int:
    """A /proc/self/status field in bytes (falls back to getrusage's peak for VmHWM)."""
    try:
        with open("/proc/self/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def cold_load() -> dict[str, Any]:
    t0 = time.perf_counter()
    from memory_core.embedding.minilm import MiniLMEmbedder

    t1 = time.perf_counter()
    emb = MiniLMEmbedder()
    t2 = time.perf_counter()
    emb.embed("Patient prefers morning appointments")
    t3 = time.perf_counter()
    return {"seconds": t3 - t0, "import": t1 - t0, "construct": t2 - t1, "first_embed": t3 - t2}


NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def rss_build(db: str, n: int, patients: int) -> dict[str, Any]:
    import numpy as np

    import memory_core as mc
    from memory_core.demo import scale_dataset
    from memory_core.embedding import HashingEmbedder

    per = n // patients
    eng = mc.MemoryEngine(mc.open_store(f"sqlite:///{db}"), HashingEmbedder(384), clock=lambda: NOW)
    rng = np.random.default_rng(5)
    content_bytes = 0
    count = 0
    t = time.perf_counter()
    step = max(1, 20_000 // max(per, 1))
    for first in range(0, patients, step):
        k = min(step, patients - first)
        data = scale_dataset(k, per, NOW, seed=100 + first)
        vecs = rng.standard_normal((len(data.memories), 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        records = []
        for i, m in enumerate(data.memories):
            content_bytes += len(m.content.encode("utf-8"))
            records.append(
                {
                    "patient_id": f"RSS-{first + int(m.patient_id.split('-')[1]):05d}",
                    "content": m.content,
                    "memory_type": m.memory_type,
                    "created_at": m.created_at,
                    "access_times": list(m.access_times),
                    "tier": m.tier,
                    "embedding": vecs[i],
                }
            )
        eng.add_memories(records, now=NOW, by="bench", detect=False)
        count += len(records)
    eng.store.close()
    return {
        "memories": count,
        "content_bytes": content_bytes,
        "embedding_bytes": count * 384 * 4,
        "raw_bytes": count * 384 * 4 + content_bytes,
        "build_seconds": time.perf_counter() - t,
    }


def _size(obj: Any, seen: set[int]) -> int:
    if obj is None or id(obj) in seen:
        return 0
    seen.add(id(obj))
    return sys.getsizeof(obj)


def _array_bytes(arr: Any, seen: set[int]) -> int:
    """Bytes owned by the array's root (a view counts nothing; a ``frombuffer`` array counts
    the bytes object it keeps alive), each root once."""
    import numpy as np

    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    if id(root) in seen:
        return 0
    seen.add(id(root))
    if root.base is not None:  # e.g. the SQLite blob behind np.frombuffer
        return _size(root.base, seen) + sys.getsizeof(root)
    return int(root.nbytes)


def _values(obj: Any) -> list[Any]:
    import dataclasses

    if dataclasses.is_dataclass(obj):
        return [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    return list(vars(obj).values()) if hasattr(obj, "__dict__") else []


def breakdown(engine: Any) -> dict[str, int]:
    """Bytes held by the engine's cached snapshots, by kind. Generic over the snapshot's fields
    (the engine's internals change): arrays are counted once per underlying buffer, objects
    shared between memories (enum members, interned strings) once."""
    import numpy as np

    arrays = "snapshot arrays (embedding matrix incl. growth room, columns)"
    embeds = "Memory.embedding not backed by a snapshot array (blob copies)"
    objects = "Memory objects (instance + attributes)"
    strings = "strings (ids, contents, types, model ids)"
    times = "datetimes"
    other = "index dicts, tuples, usage arrays"
    out = dict.fromkeys((arrays, embeds, objects, strings, times, other), 0)
    seen: set[int] = set()
    snaps = list(engine._core.snapshots.cache.values())
    for snap in snaps:  # arrays first, so embeddings that are views of them count nothing
        for value in _values(snap):
            if isinstance(value, np.ndarray):
                out[arrays] += _array_bytes(value, seen)
            elif isinstance(value, dict | tuple | list | set):
                out[other] += _size(value, seen)
    for snap in snaps:
        for m in getattr(snap, "memories", ()):
            if isinstance(m.embedding, np.ndarray):
                out[embeds] += _array_bytes(m.embedding, seen)
            out[objects] += _size(m, seen) + _size(getattr(m, "__dict__", None), seen)
            out[objects] += _size(m.importance, seen)
            for text in (m.id, m.patient_id, m.memory_type, m.content, m.embedding_model, m.source):
                out[strings] += _size(text, seen)
            for d in (m.created_at, m.last_accessed, m.archived_at):
                out[times] += _size(d, seen)
    for use in engine._core.snapshots.usage.values():
        for value in _values(use):
            if isinstance(value, np.ndarray):
                out[other] += _array_bytes(value, seen)
    return out


def rss_measure(db: str) -> dict[str, Any]:
    import numpy as np

    import memory_core as mc
    from memory_core.embedding import HashingEmbedder

    eng = mc.MemoryEngine(mc.open_store(f"sqlite:///{db}"), HashingEmbedder(384), clock=lambda: NOW)
    patients = eng.list_patients()
    q = np.ones(384, dtype=np.float32) / np.sqrt(384.0)
    eng.retrieve(patients[0], "", query_vector=q, record_access=False)  # warm imports/caches
    eng._core.snapshots.clear()  # the caches and their size accounting
    gc.collect()
    before = vm()
    t = time.perf_counter()
    held = 0
    for pid in patients:
        eng.retrieve(pid, "", query_vector=q, record_access=False)
        held += len(eng._core.snapshots.cache[pid].memories)
    seconds = time.perf_counter() - t
    gc.collect()
    after = vm()
    try:
        parts = breakdown(eng)
    except Exception as exc:  # the accounting must not cost the measurement
        parts = {f"breakdown failed: {type(exc).__name__}: {exc}": 0}
    return {
        "rss_before_bytes": before,
        "rss_after_bytes": after,
        "delta_bytes": after - before,
        "peak_bytes": vm("VmHWM"),
        "held_memories": held,
        "load_seconds": seconds,
        "breakdown": parts,
    }


def main(argv: list[str]) -> None:
    cmd = argv[0]
    if cmd == "cold-load":
        out = cold_load()
    elif cmd == "rss-build":
        out = rss_build(argv[1], int(argv[2]), int(argv[3]))
    elif cmd == "rss-measure":
        out = rss_measure(argv[1])
    elif cmd.startswith("scale-"):
        from bench.workloads import hospital

        out = hospital.probe_main(cmd, argv[1:])
    elif cmd.startswith("section-"):
        from bench.workloads import section

        out = section.probe_main(cmd, argv[1:])
    elif cmd.startswith("caches-"):
        from bench.workloads import caches

        out = caches.probe_main(cmd, argv[1:])
    elif cmd.startswith(("liveness-", "cleanup-")):
        from bench.workloads import liveness

        out = liveness.probe_main(cmd, argv[1:])
    elif cmd.startswith("fhir-"):
        from bench.workloads import fhir

        out = fhir.probe_main(cmd, argv[1:])
    else:
        raise SystemExit(f"unknown probe {cmd!r}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
