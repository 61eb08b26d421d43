"""How many of a record's active conditions and active medications sit at the importance floor
(issue 23, item 1: decay counts from the last confirmation, not from the onset).

Synthea R4 bundles (public, git-ignored: ``<data>/synthea/<id>-bundle.json``; the first 20 by
file name whose id ends in an odd digit -- even ids are kept back). Each bundle is imported with
``import_fhir(dry_run=False)`` into a fresh SQLite store, the clock fixed at :data:`NOW` (after
every record's last date); then, as of :data:`NOW` under the default policy, each active
Condition's and active MedicationRequest's memory that is active is counted, and those whose
current importance is the policy's floor. Public API only, so it runs unchanged on any version
of the engine: ``python -m eval.floor [--data DIR] [--embedder minilm|hashing]``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memory_core as mc

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
N_PATIENTS = 20
ROOT = Path(__file__).resolve().parents[1]
KINDS = (("Condition", "active conditions"), ("MedicationRequest", "active medications"))


@dataclass
class Row:
    patient: str
    conds: int = 0  # active conditions with an active memory
    conds_floor: int = 0
    meds: int = 0
    meds_floor: int = 0


def bundles(folder: Path, n: int = N_PATIENTS) -> list[Path]:
    """The first ``n`` bundles by file name whose id ends in an odd digit."""
    odd = [p for p in sorted(folder.glob("*-bundle.json")) if p.name.split("-")[0][-1:] in "13579"]
    return odd[:n]


def record_status(res: dict[str, Any]) -> str:
    """A Condition's clinical status, another resource's status."""
    if res["resourceType"] == "Condition":
        codings = (res.get("clinicalStatus") or {}).get("coding") or [{}]
        return str(codings[0].get("code") or "")
    return str(res.get("status") or "")


def active_sources(bundle: dict[str, Any], rtype: str) -> set[str]:
    """``fhir:<type>/<id>`` of the bundle's resources of ``rtype`` that are active."""
    return {
        f"fhir:{rtype}/{e['resource']['id']}"
        for e in bundle.get("entry") or []
        if e.get("resource", {}).get("resourceType") == rtype
        and record_status(e["resource"]) == "active"
    }


def measure(path: Path, embedder: str, tmp: Path) -> Row:
    bundle = json.loads(path.read_text(encoding="utf-8"))
    pid = path.name.split("-")[0][:8]
    url = f"sqlite:///{tmp / (pid + '.db')}"
    eng = mc.open_engine(url, embedder, clock=lambda: NOW)
    try:
        eng.import_fhir(path, patient_id=pid, by="eval", dry_run=False)
        view = eng.view(pid, now=NOW)
        floor = eng.policy.decay.floor
        row = Row(pid)
        for rtype, _label in KINDS:
            active = active_sources(bundle, rtype)
            n = at_floor = 0
            for i, m in enumerate(view.memories):
                if m.source in active and view.status[i] is mc.Status.ACTIVE:
                    n += 1
                    at_floor += bool(view.current_importance[i] <= floor + 1e-9)
            if rtype == "Condition":
                row.conds, row.conds_floor = n, at_floor
            else:
                row.meds, row.meds_floor = n, at_floor
        return row
    finally:
        eng.store.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.floor", description=__doc__)
    p.add_argument("--data", default=os.environ.get("EVAL_DATA", str(ROOT / "data" / "eval")))
    p.add_argument("--embedder", default="minilm")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memory-core-floor-") as tmp:
        for path in bundles(Path(args.data) / "synthea"):
            rows.append(measure(path, args.embedder, Path(tmp)))
            r = rows[-1]
            print(
                f"{r.patient}  conditions {r.conds_floor:>3} / {r.conds:<3} at the floor  "
                f"medications {r.meds_floor:>3} / {r.meds:<3} at the floor",
                flush=True,
            )
    c, cf = sum(r.conds for r in rows), sum(r.conds_floor for r in rows)
    m, mf = sum(r.meds for r in rows), sum(r.meds_floor for r in rows)
    print(f"total     conditions {cf:>3} / {c:<3} at the floor  medications {mf:>3} / {m:<3}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
