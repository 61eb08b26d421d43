"""The workloads of issue 5, each measured against the reference (and the peers) in one run;
one module per workload, each declaring its target (:class:`Target`) next to the code that
measures it. Shared set-up (configuration, data set, engines, rows) is in :mod:`.common`,
timing in :mod:`bench.harness`.

Order of a run: build the data (one synthetic patient from ``scale_dataset``, subsets of it
for each size, embedded once), check that the reference and the engine agree on every
workload (same top-5 ids, identical section text, current importances within 1e-9, same
contradiction hits), then time. Any disagreement raises :class:`Mismatch` before a single
number is reported.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from . import (
    backscan,
    bulk,
    caches,
    context,
    contradictions,
    dashboard,
    decay,
    e2e,
    embedder,
    extract,
    fhir,
    hospital,
    liveness,
    memory,
    scaling,
    section,
    server,
    worklist,
    writes,
)
from .common import (
    FULL,
    REPO,
    TINY,
    Config,
    Mismatch,
    Results,
    Row,
    Setup,
    Target,
    log,
    probe,
    workdir,
)


class Bench(Setup):
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
        "worklist",
        "rss",
        "scale",
        "section",
        "caches",
        "liveness",
        "cleanup",
        "fhir",
        "extract",
        "server",
    )
    #: steps that build their own data in subprocesses: a run of only these skips the shared
    #: data set (embedding and loading every size) and the agreement checks on it; each checks
    #: the engine against the reference on its own data where it has a reference
    OWN_DATA = frozenset({"scale", "section", "caches", "liveness", "cleanup", "server"})

    def run(self) -> Results:
        t0 = time.perf_counter()
        self.res.started = datetime.now(UTC).isoformat(timespec="seconds")
        shared = not (self.only and self.only <= self.OWN_DATA)
        qv: dict[str, Any] = {}
        if shared:
            self.setup()
            qv = self.query_vectors()
            log("checking the engine against the reference")
            for n in sorted({self.cfg.context_n, *self.cfg.e2e_sizes, *self.cfg.scaling_sizes}):
                context.check(self, n, qv)
            for n in sorted({self.cfg.context_n, self.cfg.add_existing}):
                context.check(self, n, qv, detected=True)
            for n in sorted({self.cfg.check_n, *self.cfg.scaling_sizes}):
                contradictions.check(self, n)
        else:
            log(f"only {', '.join(sorted(self.only or ()))}: the shared data set is not built")
        steps: dict[str, Callable[[], None]] = {
            "decay": lambda: decay.run(self),
            "context": lambda: (context.run(self, qv), context.run_question(self))[-1],
            "e2e": lambda: (self.build_peers(), e2e.run(self))[-1],
            "scaling": lambda: scaling.run(self),
            "check": lambda: contradictions.run(self),
            "backscan": lambda: backscan.run(self),
            "agent": lambda: context.run_agent(self, qv),
            "adds": lambda: writes.run(self),
            "bulk": lambda: bulk.run(self),
            "embed": lambda: embedder.run(self),
            "app": lambda: dashboard.run(self),
            "worklist": lambda: worklist.run(self),
            "rss": lambda: memory.run(self),
            "scale": lambda: (
                hospital.run_scan(self),
                hospital.run_tuner(self),
                hospital.run_agent(self),
                hospital.run_touch(self),
            )[-1],
            "section": lambda: section.run(self),
            "caches": lambda: caches.run(self),
            "liveness": lambda: liveness.run(self),
            "cleanup": lambda: liveness.run_cleanup(self),
            "fhir": lambda: fhir.run(self),
            "extract": lambda: extract.run(self),
            "server": lambda: server.run(self),
        }
        assert tuple(steps) == self.STEPS
        for name, step in steps.items():
            if self.only and name not in self.only:
                continue
            step()
            if name == "adds":
                self.peers = {}  # release the peers' stores before the memory-hungry steps
                gc.collect()
        self.res.seconds = time.perf_counter() - t0
        return self.res


__all__ = [
    "FULL",
    "REPO",
    "TINY",
    "Bench",
    "Config",
    "Mismatch",
    "Results",
    "Row",
    "Target",
    "log",
    "probe",
    "workdir",
]
