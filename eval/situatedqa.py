"""SituatedQA temporal (github mikejqzhang/SituatedQA, ``data/raw_data/temp.dev.jsonl`` only;
its test split is kept for an independent check and never read): each timeline's previous
and current answer stored as ``"<question>? <answer>"`` ``observation`` memories at their
start years, 25 questions per patient; does the current answer supersede the previous one,
does an answer supersede another question's, and which ranks first a year after the change."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memory_core import Memory

from .runner import Context, Section, progress, table

PER_PATIENT = 25
FILE = "temp.dev.jsonl"


@dataclass(frozen=True)
class Timeline:
    question: str
    prev: str
    prev_year: int
    cur: str
    cur_year: int


def _year(d: Any) -> int | None:
    y = (d or {}).get("year") if isinstance(d, dict) else None
    return int(y) if isinstance(y, int) else None


def _norm(answers: list[str]) -> set[str]:
    return {a.strip().lower() for a in answers}


def load(text: str) -> tuple[list[Timeline], Counter[str]]:
    """One timeline per question: its first annotated timeline with a previous and a current
    answer, both start years, the previous strictly earlier, and no answer in common."""
    out: list[Timeline] = []
    why: Counter[str] = Counter()
    for line in text.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        tls = row.get("timelines") or []
        if not tls:
            why["no timeline"] += 1
            continue
        for t in tls:
            py, cy = _year(t.get("prev_start")), _year(t.get("cur_start"))
            prev, cur = t.get("prev_answers") or [], t.get("cur_answers") or []
            if not prev or not cur or py is None or cy is None:
                continue
            if py >= cy or _norm(prev) & _norm(cur):
                continue
            q = str(row["question"]).strip().rstrip("?")
            out.append(Timeline(q, str(prev[0]).strip(), py, str(cur[0]).strip(), cy))
            why["used"] += 1
            break
        else:
            why["no usable timeline"] += 1
    return out, why


def _cos(mems: dict[str, Memory], a: str, b: str) -> float:
    va = np.asarray(mems[a].embedding, dtype=np.float64)
    vb = np.asarray(mems[b].embedding, dtype=np.float64)
    return float(va @ vb)


def _jan1(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def run(ctx: Context) -> Section:
    sec = Section("Updates: SituatedQA temporal (dev split)")
    path = ctx.data / "situatedqa" / FILE
    if not path.exists():
        sec.add(f"Not run: `{path}` is missing (see docs/running-the-evaluation.md).")
        return sec
    timelines, why = load(path.read_text(encoding="utf-8"))
    groups = [timelines[i : i + PER_PATIENT] for i in range(0, len(timelines), PER_PATIENT)]
    now = _jan1(max(t.cur_year for t in timelines) + 2)
    n_mem = updated = updated_auto = above = first = same_answer = missed_taken = 0
    false_sup: list[tuple[float, str, str]] = []
    missed: list[tuple[float, str, str]] = []
    right_verdicts: Counter[str] = Counter()
    states: Counter[str] = Counter()
    with ctx.engine(now) as eng:
        for gi, group in enumerate(groups, 1):
            pid = f"situatedqa-{gi:02d}"
            records: list[dict[str, Any]] = []
            owner: dict[str, int] = {}
            answer: dict[str, str] = {}
            for ti, t in enumerate(group):
                for role, answer_text, year in (
                    ("prev", t.prev, t.prev_year),
                    ("cur", t.cur, t.cur_year),
                ):
                    mid = f"{pid}-{ti:02d}-{role}"
                    owner[mid] = ti
                    answer[mid] = answer_text.strip().lower()
                    records.append(
                        {
                            "id": mid,
                            "patient_id": pid,
                            "content": f"{t.question}? {answer_text}",
                            "memory_type": "observation",
                            "created_at": _jan1(year),
                        }
                    )
            records.sort(key=lambda r: r["created_at"])
            eng.add_memories(records, by="eval")
            n_mem += len(records)
            mems = {m.id: m for m in eng.list_memories(pid)}

            found: dict[int, str] = {}
            taken: set[str] = set()  # superseded by another question's answer
            for s in eng.supersessions(pid):
                states[s.state.value] += 1
                if owner[s.old_id] != owner[s.new_id]:
                    false_sup.append((s.similarity, mems[s.old_id].content, mems[s.new_id].content))
                    same_answer += answer[s.old_id] == answer[s.new_id]
                    taken.add(s.old_id)
                elif s.old_id.endswith("-prev") and s.new_id.endswith("-cur"):
                    found[owner[s.old_id]] = s.state.value
                    right_verdicts[s.verdict] += 1
            for ti, t in enumerate(group):
                prev_id, cur_id = f"{pid}-{ti:02d}-prev", f"{pid}-{ti:02d}-cur"
                if ti in found:
                    updated += 1
                    updated_auto += found[ti] == "auto"
                else:
                    missed.append((_cos(mems, prev_id, cur_id), mems[prev_id].content, t.cur))
                    missed_taken += prev_id in taken
                got = eng.retrieve(
                    pid, t.question, k=len(records), now=_jan1(t.cur_year + 1),
                    record_access=False,
                )  # fmt: skip
                order = [s.memory.id for s in got]
                if cur_id in order:
                    first += order[0] == cur_id
                    above += prev_id not in order or order.index(cur_id) < order.index(prev_id)
            progress(f"situatedqa: patient {gi}/{len(groups)} ({len(group)} timelines)")
    n = len(timelines)
    sec.numbers.update(
        {
            "timelines": n,
            "update recall": updated / n,
            "false supersessions per 100": 100 * len(false_sup) / n_mem,
            "false supersessions per 100, different answers": (
                100 * (len(false_sup) - same_answer) / n_mem
            ),
            "current above previous": above / n,
            "current first": first / n,
        }
    )
    sec.add(
        f"{n} timelines ({', '.join(f'{k}: {v}' for k, v in sorted(why.items()))} of "
        f"{sum(why.values())} questions): one per question, its first annotated timeline with "
        "a previous and a current answer, both start years, the previous strictly earlier and "
        f"no answer in common. {len(groups)} patients of {PER_PATIENT} questions, "
        f"{n_mem} memories (`observation`, created 1 January of the start year, loaded with "
        "`add_memories`, detection on). Ranking: `retrieve(question, now=1 January of the "
        "year after the change)` over all the patient's memories visible then.",
        "",
        *table(
            ["measure", "value"],
            [
                ["update recall (current supersedes previous, any state)", f"{updated / n:.3f}"],
                ["  of which applied automatically", f"{updated_auto / n:.3f}"],
                [
                    "false supersessions per 100 memories (another question's answer)",
                    f"{100 * len(false_sup) / n_mem:.2f} ({len(false_sup)})",
                ],
                [
                    "  of which between two questions with the same answer (paraphrased "
                    "questions: arguably true duplicates)",
                    str(same_answer),
                ],
                [
                    "  false supersessions per 100 memories, different answers only",
                    f"{100 * (len(false_sup) - same_answer) / n_mem:.2f}",
                ],
                ["current answer ranked above the previous one a year later", f"{above / n:.3f}"],
                ["current answer ranked first a year later", f"{first / n:.3f}"],
            ],
        ),
        "",
        "Supersession records by state: "
        + ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
        + "; verdicts on the right pairs: "
        + ", ".join(f"{k} {v}" for k, v in sorted(right_verdicts.items()))
        + ".",
        "",
        "### What the current verdicts get wrong (examples)",
        "",
        f"False supersessions ({len(false_sup)}; highest cosine first) — one question's answer "
        "demoting another question's:",
        "",
    )
    for sim, old, new in sorted(false_sup, reverse=True)[:6]:
        sec.add(f"- {sim:.3f}: “{old}” → superseded by “{new}”")
    if not false_sup:
        sec.add("- none")
    sec.add(
        "",
        f"Missed updates ({len(missed)}; the cosine of the two answers, highest first — "
        "below the `observation` threshold, or judged compatible):",
        "",
    )
    for sim, old, new in sorted(missed, reverse=True)[:6]:
        sec.add(f"- {sim:.3f}: “{old}” → “… {new}”")
    if missed:
        sims = np.array([m[0] for m in missed])
        sec.add(
            "",
            f"Missed pairs' cosine: median {np.median(sims):.3f}, max {sims.max():.3f} "
            f"({int((sims >= 0.70).sum())} at or above 0.70); {missed_taken} of the missed "
            "previous answers had already been superseded by another question's answer.",
        )
    return sec
