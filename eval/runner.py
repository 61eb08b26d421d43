"""The shared runner: data folder, engines on temporary SQLite files with the real MiniLM
embedder and a fixed clock, progress on stderr, the report."""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

import memory_core as mc

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "docs" / "evaluation.md"


@dataclass
class Section:
    """One data set's part of the report."""

    title: str
    lines: list[str] = field(default_factory=list)
    numbers: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)


@dataclass
class Context:
    data: Path
    embedder: mc.Embedder
    workdir: Path
    cache: Path | None = None  # embeddings of the data's texts, keyed by model and text
    embedded: int = 0  # texts embedded in this run
    reused: int = 0  # texts whose vectors came from the cache
    _n: int = 0

    def embed(self, texts: Sequence[str], name: str) -> npt.NDArray[np.float32]:
        """``embedder.embed_batch(texts)``, kept in ``cache/<name>-<hash>.npy`` so a rerun
        skips re-embedding the same texts with the same model."""
        if self.cache is None:
            self.embedded += len(texts)
            return self.embedder.embed_batch(list(texts))
        h = hashlib.sha256(self.embedder.model_id.encode())
        for t in texts:
            h.update(t.encode("utf-8"))
            h.update(b"\0")
        path = self.cache / f"{name}-{h.hexdigest()[:16]}.npy"
        if path.exists():
            self.reused += len(texts)
            return np.asarray(np.load(path), dtype=np.float32)
        self.embedded += len(texts)
        vecs = self.embedder.embed_batch(list(texts))
        self.cache.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
        return vecs

    @contextmanager
    def engine(self, now: datetime) -> Iterator[mc.MemoryEngine]:
        """A fresh engine on its own temporary SQLite file, its clock fixed at ``now``."""
        self._n += 1
        path = self.workdir / f"eval-{self._n}.db"
        eng = mc.open_engine(f"sqlite:///{path}", self.embedder, clock=lambda: now)
        try:
            yield eng
        finally:
            eng.store.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)


def progress(msg: str) -> None:
    print(f"[eval] {msg}", file=sys.stderr, flush=True)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def ranks_desc(
    values: npt.NDArray[np.float64], tiebreak: npt.NDArray[np.float64]
) -> npt.NDArray[np.int64]:
    """1-based rank of every entry, highest value first, ties to the larger ``tiebreak``
    (newer first)."""
    order = np.lexsort((-tiebreak, -values))
    r = np.empty(len(values), dtype=np.int64)
    r[order] = np.arange(1, len(values) + 1)
    return r


def top_k(
    values: npt.NDArray[np.float64], tiebreak: npt.NDArray[np.float64], k: int
) -> npt.NDArray[np.int64]:
    return np.lexsort((-tiebreak, -values))[:k]


Runner = Callable[[Context], Section]


def main(argv: Sequence[str] | None = None) -> int:
    from . import (
        clinical,
        conversations,
        dialogue,
        realtalk,
        section,
        situatedqa,
        statements,
        synthea,
    )

    p = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    p.add_argument(
        "--data",
        default=os.environ.get("EVAL_DATA", str(ROOT / "data" / "eval")),
        help="folder with realtalk/Chat_*.json and situatedqa/temp.dev.jsonl (EVAL_DATA)",
    )
    p.add_argument("--out", default=str(DEFAULT_OUT), help="the Markdown report to write")
    p.add_argument(
        "--only",
        action="append",
        choices=[
            "realtalk",
            "situatedqa",
            "clinical",
            "statements",
            "synthea",
            "dialogue",
            "conversations",
            "section",
        ],
        default=None,
    )
    p.add_argument("--embedder", default="minilm", help="minilm (the default) | hashing")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="do not keep the data's embeddings in <data>/.cache between runs",
    )
    args = p.parse_args(argv)
    data = Path(args.data)
    runners: dict[str, Runner] = {
        "realtalk": realtalk.run,
        "situatedqa": situatedqa.run,
        "clinical": clinical.run,
        "statements": statements.run,
        "synthea": synthea.run,
        "dialogue": dialogue.run,
        "conversations": conversations.run,
        "section": section.run,
    }
    chosen = args.only or list(runners)
    t0 = time.perf_counter()
    from memory_core.embedding import make_embedder

    embedder = make_embedder(args.embedder)
    sections: list[Section] = []
    with tempfile.TemporaryDirectory(prefix="memory-core-eval-") as tmp:
        cache = None if args.no_cache else data / ".cache"
        ctx = Context(data, embedder, Path(tmp), cache)
        for name in chosen:
            start = time.perf_counter()
            progress(f"{name}: starting")
            sec = runners[name](ctx)
            sec.seconds = time.perf_counter() - start
            progress(f"{name}: done in {sec.seconds:.0f} s")
            sections.append(sec)
        note = f"{ctx.embedded:,} data texts embedded, {ctx.reused:,} reused from the cache"
    total = time.perf_counter() - t0
    Path(args.out).write_text(render(sections, embedder.model_id, total, note), encoding="utf-8")
    progress(f"wrote {args.out} ({total:.0f} s)")
    return 0


def render(sections: Sequence[Section], model: str, seconds: float, note: str) -> str:
    lines = [
        "# Evaluation on public data",
        "",
        "Written by `make eval` (`python -m eval`); do not edit by hand. Embedder: "
        f"`{model}`; every engine on its own temporary SQLite file with a fixed clock; the "
        "engine is measured through its public API only. Run time "
        f"{seconds:.0f} s on this machine ({note}; a first run embeds every REALTALK turn "
        "and took 3.5-5.5 minutes on the shared 2-core machine).",
        "",
    ]
    for s in sections:
        lines += [f"## {s.title}", "", *s.lines, "", f"_({s.seconds:.0f} s)_", ""]
    return "\n".join(lines).rstrip() + "\n"
