"""Synthea R4 patients imported from FHIR (issue 24, item 1): how many coded Observations with a
value are still skipped, and whether the agent's section answers "What is the patient's
current body weight?" and "What was the latest blood pressure?" with the latest reading.

Data: the first ``N`` bundles (by file name) of ``<data>/synthea/*.json`` (public Synthea
bundles, git-ignored; see docs/ingest.md). Each is imported with ``--apply`` into a fresh
store with the run's embedder; the latest reading is the Observation with the latest
``effectiveDateTime`` of LOINC 29463-7 (body weight) and 85354-9 (the blood-pressure panel).
``python -m eval.synthea [--n 20]`` prints the table; ``python -m eval --only synthea`` puts it
in the evaluation report.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .runner import Context, Section, table

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
QUESTIONS = {
    "29463-7": "What is the patient's current body weight?",
    "85354-9": "What was the patient's latest blood pressure?",
}
LOINC = "http://loinc.org"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{float(x):g}"


def latest_reading(bundle: dict[str, Any], code: str) -> str | None:
    """The latest value of ``code`` as the statement writes it ("82.3 kg", "132/84")."""
    best: tuple[str, str] | None = None
    for e in bundle.get("entry") or []:
        r = e["resource"]
        if r.get("resourceType") != "Observation":
            continue
        codes = {c.get("code") for c in (r.get("code") or {}).get("coding") or []}
        if code not in codes or not r.get("effectiveDateTime"):
            continue
        if r.get("valueQuantity"):
            shown = f"{_num(r['valueQuantity']['value'])} {r['valueQuantity'].get('unit', '')}"
        else:
            parts = {
                (c.get("code") or {}).get("coding", [{}])[0].get("code"): c.get("valueQuantity")
                for c in r.get("component") or []
            }
            sys_, dia = parts.get("8480-6"), parts.get("8462-4")
            if not sys_ or not dia:
                continue
            shown = f"{_num(sys_['value'])}/{_num(dia['value'])}"
        when = r["effectiveDateTime"]
        if best is None or when > best[0]:
            best = (when, shown.strip())
    return best[1] if best else None


def skipped_with_value(report: Any) -> Counter[str]:
    """Skipped Observations that had a code and a value (none should be)."""
    return Counter(
        i.code
        for i in report.skipped
        if i.resource_type == "Observation" and i.reason not in ("no value", "no code")
        and not i.reason.startswith(("status is", "no value"))
    )  # fmt: skip


def evaluate(ctx: Context, n: int) -> dict[str, Any]:
    folder = ctx.data / "synthea"
    paths = sorted(folder.glob("*.json"))[:n]
    out: dict[str, Any] = {
        "bundles": len(paths),
        "resources": 0,
        "observations": 0,
        "created": 0,
        "skipped_with_value": Counter(),
        "skipped_by_reason": Counter(),
        "answered": Counter(),
        "asked": Counter(),
        "misses": [],
    }
    for path in paths:
        bundle = json.loads(path.read_text(encoding="utf-8"))
        out["resources"] += len(bundle.get("entry") or [])
        out["observations"] += sum(
            1 for e in bundle.get("entry") or [] if e["resource"]["resourceType"] == "Observation"
        )
        with ctx.engine(NOW) as eng:
            rep = eng.import_fhir(bundle, by="eval", dry_run=False, now=NOW)
            out["created"] += len(rep.created)
            out["skipped_with_value"] += skipped_with_value(rep)
            for it in rep.skipped:
                if it.resource_type == "Observation":
                    out["skipped_by_reason"][it.reason] += 1
            for code, question in QUESTIONS.items():
                want = latest_reading(bundle, code)
                if want is None:
                    continue
                out["asked"][code] += 1
                text = eng.build_context(rep.patient_id, question, now=NOW).text
                if f" was {want}" in text.replace(f"{want}/", f"{want} /"):
                    out["answered"][code] += 1
                else:
                    out["misses"].append((path.name, code, want, text[:400]))
    return out


def run(ctx: Context, n: int = 20) -> Section:
    sec = Section(f"Synthea FHIR import ({n} patients)")
    if not (ctx.data / "synthea").is_dir():
        sec.add(f"No bundles in `{ctx.data / 'synthea'}`: not measured.")
        return sec
    r = evaluate(ctx, n)
    rows = [
        ["bundles / resources / Observations", f"{r['bundles']} / {r['resources']:,} / "
         f"{r['observations']:,}"],
        ["memories created", f"{r['created']:,}"],
        ["coded Observations with a value skipped", str(sum(r["skipped_with_value"].values()))],
        ["Observations skipped (no value, no code, status)",
         ", ".join(f"{k} ×{v}" for k, v in r["skipped_by_reason"].most_common()) or "none"],
    ]  # fmt: skip
    for code, q in QUESTIONS.items():
        rows.append([f"“{q}” answered with the latest reading", f"{r['answered'][code]} / "
                     f"{r['asked'][code]}"])  # fmt: skip
    sec.add(*table(["measure", "value"], rows))
    for name, code, want, text in r["misses"][:5]:
        sec.add("", f"- {name}: {code} latest {want!r} not in the section: {text[:200]!r}")
    sec.numbers.update(
        {
            "skipped_with_value": float(sum(r["skipped_with_value"].values())),
            "weight_answered": float(r["answered"]["29463-7"]),
            "bp_answered": float(r["answered"]["85354-9"]),
        }
    )
    return sec


def main() -> int:
    import tempfile

    from memory_core.embedding import make_embedder

    ap = argparse.ArgumentParser(prog="python -m eval.synthea", description=__doc__)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent / "data/eval"))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(Path(args.data), make_embedder(args.embedder), Path(tmp))
        sec = run(ctx, args.n)
    print(f"## {sec.title}\n")
    print("\n".join(sec.lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
