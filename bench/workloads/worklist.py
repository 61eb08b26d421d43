"""The reviewer's worklist (issue 16) on a store of many patients: ``engine.worklist()`` and the
Worklist page (AppTest, a rerun after the first) with ``patients`` patients, ``pending`` of
them with a pending allergy review and ``demoted`` with an adverse reaction archived this week.
The data is written through the engine (explicit embeddings, so no model is needed): the
query reads supersessions and the audit log, never every patient's memories."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any

from ..harness import measure
from .common import REPO, Row, Setup, Target, environ, log

QUERY_TARGET = Target("≤ 500 ms", max_s=0.5)
PAGE_TARGET = Target("≤ 2 s", max_s=2.0)

#: (patients, with a pending review, with a safety fact archived this week) per configuration
SIZES = {"full": (100_000, 1_000, 100), "tiny": (2_000, 20, 4)}
OLDER = "Allergy to penicillin"
NEWER = "Allergy to penicillin, hives"


def build(url: str, patients: int, pending: int, demoted: int, now: Any) -> None:
    """The store: each patient one social-history memory; every ``patients // pending``-th
    patient an allergy pair the adjudicator sends to review; a few an archived adverse
    reaction."""
    import numpy as np

    import memory_core as mc
    from memory_core.embedding import HashingEmbedder

    eng = mc.open_engine(url, HashingEmbedder(), clock=lambda: now)
    dims = eng.embedder.dimensions

    def unit(k: int) -> list[float]:
        v = np.zeros(dims, dtype=np.float32)
        v[k % dims] = 1.0
        return [float(x) for x in v]

    base = unit(0)
    eng.add_memories(
        (
            {
                "patient_id": f"WL-{i:06d}",
                "content": "Patient lives alone",
                "memory_type": "social",
                "created_at": now - timedelta(days=60),
                "embedding": base,
            }
            for i in range(patients)
        ),
        detect=False,
        batch_size=20_000,
    )
    step = max(1, patients // max(pending, 1))
    busy = [f"WL-{i:06d}" for i in range(0, patients, step)][:pending]
    allergy = unit(1)
    for text, days in ((OLDER, 40), (NEWER, 5)):
        eng.add_memories(
            [
                {
                    "patient_id": pid,
                    "content": text,
                    "memory_type": "allergy",
                    "created_at": now - timedelta(days=days),
                    "embedding": allergy,
                }
                for pid in busy
            ],
            batch_size=5_000,
        )
    for pid in busy[:demoted]:
        added = eng.add_memory(
            pid,
            "Patient developed a dry cough on lisinopril",
            "adverse_reaction",
            created_at=now - timedelta(days=20),
        )
        eng.archive(added.memory.id, "bench")
    found = len(eng.store.list_supersessions(state="pending"))
    if found != len(busy):
        raise RuntimeError(f"worklist bench: {found} pending reviews, expected {len(busy)}")
    eng.store.close()


def run(bench: Setup) -> None:
    cfg = bench.cfg
    patients, pending, demoted = SIZES.get(cfg.name, SIZES["tiny"])
    path = os.path.join(bench.workdir, f"worklist-{patients}.db")
    url = f"sqlite:///{path}"
    if not os.path.exists(path):
        log(f"worklist: writing {patients:,} patients, {pending:,} with a pending review")
        t = time.perf_counter()
        build(url, patients, pending, demoted, bench.now)
        log(f"worklist: store written in {time.perf_counter() - t:.1f} s")

    import memory_core as mc
    from memory_core.embedding import HashingEmbedder

    eng = mc.open_engine(url, HashingEmbedder(), clock=lambda: bench.now)
    items = eng.worklist()
    # the check next to the target: every pending review is counted, safety first
    if items.totals["review"] != pending or items.totals["safety_change"] != demoted:
        raise RuntimeError(f"worklist bench: unexpected totals {items.totals}")
    if items[0].kind != "review" or not items[0].safety:
        raise RuntimeError("worklist bench: the first item is not a safety review")
    query = measure(eng.worklist, cfg.repeat, warmup=1)
    eng.store.close()
    size = f"{patients:,} patients · {pending:,} pending"
    bench.res.rows.append(
        Row(
            "worklist",
            "worklist across patients (engine.worklist)",
            size,
            "engine",
            query,
            target=QUERY_TARGET,
            passed=QUERY_TARGET.met(query),
            note="reads supersessions and audit only; cleanup counted for 20 listed patients",
        )
    )

    import logging

    from streamlit.testing.v1 import AppTest

    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR
    )
    with environ({"MEMORY_CORE_STORE": url, "MEMORY_CORE_EMBEDDER": "hashing"}):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
        at.session_state["reviewer"] = "bench"
        at.run()  # the first page is the Worklist
        if at.exception or not at.dataframe:
            raise RuntimeError(f"worklist page: {at.exception[0].value if at.exception else ''}")
        page = measure(at.run, max(cfg.app_reruns, 3), warmup=0)
    bench.res.rows.append(
        Row(
            "worklist_page",
            "Worklist page rerun (AppTest), picker included",
            size,
            "views/worklist.py",
            page,
            target=PAGE_TARGET,
            passed=PAGE_TARGET.met(page),
            note="no cache: the list is read on every run",
        )
    )
