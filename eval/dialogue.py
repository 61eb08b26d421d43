"""Facts proposed from twenty synthetic transcripts (``eval/dialogue/``, issue 24): the share
of the expected facts proposed with the right type, value and date, proposals about another
person, and wrong dates. ``python -m eval.dialogue`` prints the table; ``tests/test_dialogue.py``
holds the targets (>= 90 %, none for another person, no wrong date).

A proposal matches an expected fact when its type is the fact's and its statement contains
every word the fact lists (lower case, spaces removed); its date is right when it falls in the
fact's date (a day, a month, a year or a week FIRST..LAST), or, for a fact with no date, when
it has none or the session's own. A matching proposal with another date is a wrong date.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "dialogue"


@dataclass(frozen=True)
class Case:
    file: str
    patient: str
    style: str
    text: str
    facts: tuple[dict[str, Any], ...]
    never: tuple[str, ...]

    @property
    def session(self) -> datetime:
        for line in self.text.splitlines():
            if line.lower().startswith("date:"):
                d = datetime.fromisoformat(line.split(":", 1)[1].strip())
                return d.replace(hour=18, tzinfo=UTC)
        raise ValueError(f"{self.file} has no Date: line")


@dataclass
class Result:
    case: Case
    proposed: list[tuple[str, str, datetime | None]]  # (type, content, created_at)
    correct: list[dict[str, Any]] = field(default_factory=list)
    missed: list[dict[str, Any]] = field(default_factory=list)
    wrong_date: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    other_person: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)


def cases() -> list[Case]:
    spec = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
    return [
        Case(
            t["file"],
            t["patient"],
            t["style"],
            (HERE / t["file"]).read_text(encoding="utf-8"),
            tuple(t["facts"]),
            tuple(t.get("never", ())),
        )
        for t in spec["transcripts"]
    ]


def _norm(text: str) -> str:
    return "".join(text.lower().split())


def _date_ok(want: str | None, got: datetime | None, session: datetime) -> bool:
    if want is None:
        return got is None or got.date() == session.date()
    if got is None:
        return False
    g = got.date()
    if ".." in want:
        lo, hi = (datetime.fromisoformat(x).date() for x in want.split(".."))
        return lo <= g <= hi
    if len(want) == 4:
        return g.year == int(want)
    if len(want) == 7:
        return f"{g:%Y-%m}" == want
    return g.isoformat() == want


def judge(case: Case, proposed: Sequence[tuple[str, str, datetime | None]]) -> Result:
    res = Result(case, list(proposed))
    used: set[int] = set()
    for fact in case.facts:
        words = [_norm(w) for w in fact["has"]]
        hits = [
            i
            for i, (t, c, _d) in enumerate(proposed)
            if t == fact["type"] and all(w in _norm(c) for w in words)
        ]
        good = [i for i in hits if _date_ok(fact.get("date"), proposed[i][2], case.session)]
        if good:
            res.correct.append(fact)
            used.update(good)
        else:
            res.missed.append(fact)
            for i in hits:
                res.wrong_date.append((fact, f"{proposed[i][1]} [{proposed[i][2]}]"))
                used.add(i)
    for t, c, _d in proposed:
        if any(_norm(w) in _norm(c) for w in case.never):
            res.other_person.append(f"[{t}] {c}")
    res.extra = [f"[{t}] {c}" for i, (t, c, _d) in enumerate(proposed) if i not in used]
    return res


def run_all(
    extract: Callable[[Case], Sequence[tuple[str, str, datetime | None]]],
) -> list[Result]:
    return [judge(c, extract(c)) for c in cases()]


def rule_proposals(case: Case) -> list[tuple[str, str, datetime | None]]:
    """The offline extractor's proposals through the public API (checks included)."""
    import memory_core as mc
    from memory_core.embedding import HashingEmbedder

    now = case.session + timedelta(days=1)
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=lambda: now)
    try:
        props = eng.extract_memories(case.patient, case.text, now=now, name=case.file)
    finally:
        eng.store.close()
    return [(p.memory_type, p.content, _own_date(p.created_at, now)) for p in props]


def _own_date(created: datetime, now: datetime) -> datetime | None:
    """A proposal dated at the extraction's moment carries no date of its own."""
    return None if created == now else created


def summary(results: Sequence[Result]) -> dict[str, float]:
    total = sum(len(r.case.facts) for r in results)
    correct = sum(len(r.correct) for r in results)
    return {
        "facts": total,
        "correct": correct,
        "share": correct / total if total else 0.0,
        "other_person": sum(len(r.other_person) for r in results),
        "wrong_date": sum(len(r.wrong_date) for r in results),
        "extra": sum(len(r.extra) for r in results),
    }


def run(ctx: Any) -> Any:
    """The section of ``python -m eval --only dialogue`` (the runner's Section)."""
    from .runner import Section, pct, table

    sec = Section("Facts proposed from twenty synthetic transcripts (offline extractor)")
    results = run_all(rule_proposals)
    rows = [
        [r.case.file, r.case.style, f"{len(r.correct)} / {len(r.case.facts)}",
         len(r.wrong_date), len(r.other_person), len(r.extra)]
        for r in results
    ]  # fmt: skip
    sec.add(*table(["transcript", "style", "right", "wrong date", "other person", "more"], rows))
    s = summary(results)
    sec.add(
        "",
        f"{s['correct']:.0f} of {s['facts']:.0f} expected facts proposed with the right type, "
        f"value and date ({pct(s['share'])}); {s['other_person']:.0f} about another person or "
        f"negated; {s['wrong_date']:.0f} with a wrong date; {s['extra']:.0f} further proposals.",
    )
    sec.numbers.update(s)
    return sec


def main(argv: Sequence[str] | None = None) -> int:
    verbose = "-v" in (argv if argv is not None else sys.argv[1:])
    results = run_all(rule_proposals)
    for r in results:
        print(f"{r.case.file}: {len(r.correct)}/{len(r.case.facts)} ({r.case.style})")
        if verbose:
            for f in r.missed:
                print(f"   missed {f}")
            for f, got in r.wrong_date:
                print(f"   WRONG DATE {f['has']} {f.get('date')}: {got}")
            for x in r.other_person:
                print(f"   OTHER PERSON / NEVER: {x}")
            for x in r.extra:
                print(f"   extra {x}")
    s = summary(results)
    print(
        f"{s['correct']:.0f} of {s['facts']:.0f} facts proposed correctly "
        f"({100 * s['share']:.1f} %); "
        f"{s['other_person']:.0f} about another person or negated, {s['wrong_date']:.0f} with a "
        f"wrong date, {s['extra']:.0f} proposals beyond the expected facts"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
