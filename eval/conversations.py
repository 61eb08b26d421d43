"""The held-out conversations of issue 31 (``eval/conversations/a`` and ``b``: forty synthetic
clinic transcripts by two authors who had not read the reader, with answer keys; frozen before
the reader changed; split dev / test) and the project's own twenty (``eval/dialogue``, dev).

Per transcript, a fresh store: the patient's ``prior`` memories are added with their created
dates, the transcript is extracted with the session's date (``extract_memories``), and every
proposal is accepted through the public API (``accept_proposals``), as a reviewer who accepts
everything would. Measured:

- **facts found**: an expected fact is found when a proposal of its type contains every
  ``has`` word (case-insensitive, spaces removed, a decimal comma read as a point), is about
  the right person (a family-history fact only by a family-history proposal, a patient's fact
  only by the patient's) and, where the key gives a date, is dated within it (a day, a month or
  a year; a proposal with no date of its own is the session's); where the key gives none, any
  date is right (the issue's measure). A plan the key dates after the session (the day a test
  is booked for) is dated by that day written in the proposal's words ("Kidney bloods on
  Monday (2026-05-11)"): a record's date may not lie in the future, so a plan is dated the day
  it was made and says the day it is for (since the twenty-third session; before, no plan
  could meet such a date). The project's own twenty keep their harness's stricter rule (no
  date, or the session's, where the key gives none: ``eval/dialogue.py``);
- **wrong dates**: an expected fact matched by type, words and person whose proposals all have
  another date;
- **forbidden**: a proposal stated as the patient's own fact that contains every word of a
  ``never`` entry (family-history proposals are exempt, as the key says);
- **superseded**: of the prior memories the key says a fact ``supersedes``, those the accepted
  proposals superseded (at once or sent to a reviewer).

``python -m eval.conversations [--split dev|test|all] [--set a|b|dialogue] [--show]`` prints
the tables (``--show`` lists the dev half's misses and forbidden proposals; the test half's
texts and keys are never printed). ``python -m eval --only conversations`` puts it in the
evaluation report; ``tests/test_conversations.py`` holds the test half's floor.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import memory_core as mc

HERE = Path(__file__).resolve().parent
#: A portal message's send stamp ("[2026-10-12 08:47] Patient: ...").
_STAMP = re.compile(r"^\[(\d{4}-\d{2}-\d{2})[ T]\d", re.MULTILINE)
#: ... a message's stamp with its date in words: "[Mon 9 Mar 2026 08:14] Patient:" (set s)
_STAMP_WORDS = re.compile(r"^\[(?:[A-Za-z]{3},? )?(\d{1,2} [A-Za-z]{3} \d{4})\b", re.MULTILINE)
SETS = ("a", "b")
#: Transcripts written later by a third author (issue 31's "ten fresh transcripts"), a fourth
#: (twelve in new settings), a fifth (twelve more), a sixth (eight, a check of the whole), a
#: seventh (twelve), an eighth and a ninth (eight each, checks of the whole), a tenth (ten
#: fresh, measured once at the end of the session they were written in) and an eleventh (ten,
#: measured once as they came), and so on to a fifteenth (set o), each frozen before the reader
#: changed again and reported apart from a + b.
FRESH = (*"cdefghijklmnopqrstuvwxyz", "aa", "ab", "ac")  # one or two letters a set
#: The issue's check on main dfd818e (six held-out transcripts, then six more), for the report.
BEFORE = {
    "first six": "19 / 53 (36 %), 3 wrong dates, 8 forbidden, 5 / 15 superseded",
    "second six": "12 / 60 (20 %), 3 wrong dates, 5 forbidden, 4 / 16 superseded",
}
#: The issue's targets.
TARGETS = {"found": 0.75, "forbidden": 0, "wrong_dates": 0, "superseded": 0.80}
FAMILY = "family history"
#: Words one author's prompt offered where the store has others (set n was offered one
#: "response" type for side effects and responses to treatment alike, and "family_history" as
#: a type and as whose): the memory types a proposal may have for each (a prior memory is
#: added as the first), and the relative's word; set o's prompt offered "family" as whose, set
#: p's "social_history" as a type. The answer keys stay as written.
AS_WRITTEN_TYPES = {
    "response": ("treatment_response", "adverse_reaction"),
    "family_history": ("condition",),
    "social_history": ("social",),
}
AS_WRITTEN_WHOSE = {"family_history": FAMILY, "family": FAMILY}


@dataclass(frozen=True)
class Conversation:
    set: str  # "a" | "b" | "dialogue"
    file: str
    patient: str
    setting: str
    date: str  # the session's, YYYY-MM-DD
    split: str
    prior: tuple[dict[str, Any], ...]
    facts: tuple[dict[str, Any], ...]
    never: tuple[dict[str, Any], ...]

    @property
    def path(self) -> Path:
        return HERE / ("dialogue" if self.set == "dialogue" else f"conversations/{self.set}")

    @property
    def text(self) -> str:
        return (self.path / self.file).read_text(encoding="utf-8")

    @property
    def now(self) -> datetime:
        """The extraction's moment: the evening of the session or of its last message, whichever
        is later (a portal thread whose header gives the day it began is read once it ends)."""
        worded = [
            datetime.strptime(d, "%d %b %Y").date().isoformat()
            for d in _STAMP_WORDS.findall(self.text)
        ]
        days = [self.date, *_STAMP.findall(self.text), *worded]
        return datetime.fromisoformat(max(days)).replace(hour=18, tzinfo=UTC)


@dataclass(frozen=True)
class Proposed:
    memory_type: str
    content: str
    date: datetime | None  # its own date; None when it is the session's
    family: bool  # stated as a relative's fact (family history), not the patient's


@dataclass
class Outcome:
    conv: Conversation
    proposed: list[Proposed]
    found: list[dict[str, Any]] = field(default_factory=list)
    missed: list[dict[str, Any]] = field(default_factory=list)
    wrong_date: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    forbidden: list[tuple[str, str]] = field(default_factory=list)  # (proposal, why)
    links: int = 0
    superseded: int = 0
    unsuperseded: list[str] = field(default_factory=list)  # prior ids left current
    rejected: list[str] = field(default_factory=list)


def load(sets: Iterable[str] = SETS, split: str = "all") -> list[Conversation]:
    out = []
    for s in sets:
        if s == "dialogue":
            out += _dialogue()
            continue
        spec = json.loads((HERE / "conversations" / s / "expected.json").read_text("utf-8"))
        for t in spec["transcripts"]:
            if split in ("all", t["split"]):
                out.append(
                    Conversation(
                        s, t["file"], t["patient"], t["setting"], t["date"], t["split"],
                        tuple(t.get("prior", ())), tuple(t["facts"]), tuple(t.get("never", ())),
                    )
                )  # fmt: skip
    return out


def _dialogue() -> list[Conversation]:
    """The project's own twenty in this harness's terms (dev data: no prior memories; their
    ``never`` words are single strings)."""
    spec = json.loads((HERE / "dialogue" / "expected.json").read_text("utf-8"))
    out = []
    for t in spec["transcripts"]:
        text = (HERE / "dialogue" / t["file"]).read_text(encoding="utf-8")
        date = next(
            line.split(":", 1)[1].strip()
            for line in text.splitlines()
            if line.lower().startswith("date:")
        )
        facts = tuple(
            {**f, "whose": f.get("whose", "patient"), "date": _dialogue_date(f.get("date"))}
            for f in t["facts"]
        )
        never = tuple({"has": [w], "why": "the key's never word"} for w in t.get("never", ()))
        out.append(
            Conversation(
                "dialogue", t["file"], t["patient"], t["style"], date[:10], "dev", (), facts, never
            )
        )
    return out


def _dialogue_date(want: str | None) -> str | None:
    return want  # ranges "FIRST..LAST" are read by _date_ok


def _start_of(date: str) -> datetime:
    """A created date as the key gives it (a day, a month or a year), at its first noon."""
    parts = [int(x) for x in date.split("-")] + [1, 1]
    return datetime(parts[0], parts[1], parts[2], 12, tzinfo=UTC)


def norm(text: str) -> str:
    """Lower case, no spaces, a decimal comma as a point ("7,9 %" -> "7.9%")."""
    out = "".join(text.lower().split())
    return "".join(
        "." if ch == "," and 0 < i < len(out) - 1 and out[i - 1].isdigit() and out[i + 1].isdigit()
        else ch
        for i, ch in enumerate(out)
    )  # fmt: skip


def _date_ok(want: str | None, got: datetime | None, session: str, strict: bool) -> bool:
    g = (got.date().isoformat() if got is not None else session)[:10]
    if want is None:
        return not strict or g == session
    if ".." in want:
        lo, hi = want.split("..")
        return lo <= g <= hi
    return g.startswith(want)


def is_family(content: str, whose: str = "patient") -> bool:
    """Whether a proposal is stated as a relative's fact (family history)."""
    return whose != "patient" or norm(content).startswith(("familyhistory", "family history"))


def judge(conv: Conversation, proposed: Sequence[Proposed]) -> Outcome:
    res = Outcome(conv, list(proposed))
    for fact in conv.facts:
        words = [norm(w) for w in fact["has"]]
        whose = fact.get("whose", "patient")
        family = AS_WRITTEN_WHOSE.get(whose, whose) == FAMILY
        types = AS_WRITTEN_TYPES.get(fact["type"], (fact["type"],))
        hits = [
            p
            for p in proposed
            if p.memory_type in types
            and p.family == family
            and all(w in norm(p.content) for w in words)
        ]
        strict = conv.set == "dialogue"  # that harness's own rule (eval/dialogue.py)
        want = fact.get("date")
        ahead = want is not None and fact["type"] == "care_plan" and want[:10] > conv.date
        if any(
            _date_ok(want, p.date, conv.date, strict) or bool(ahead and want in p.content)
            for p in hits
        ):
            res.found.append(fact)
        else:
            res.missed.append(fact)
            for p in hits:
                shown = p.date.date().isoformat() if p.date else "session"
                res.wrong_date.append((fact, f"{p.content} [{shown}]"))
    for p in proposed:
        if p.family:
            continue
        for nv in conv.never:
            words = [nv["has"]] if isinstance(nv["has"], str) else nv["has"]  # set c: one word
            if all(norm(w) in norm(p.content) for w in words):
                res.forbidden.append((f"[{p.memory_type}] {p.content}", nv.get("why", "")))
                break
    return res


def run_one(conv: Conversation, embedder: mc.Embedder | str, workdir: Path) -> Outcome:
    """One transcript on a fresh SQLite store: priors, extraction, acceptance of all."""
    now = conv.now
    path = workdir / f"conv-{conv.set}-{conv.file}.db"
    # the engine's clock and the store's wall clock: each prior's day while it is written (a
    # store takes no action dated before a write it holds), then the session's; the store
    # refuses a write dated after its wall clock, and a session dated after the day this runs
    # (a14 is 2026-12-10) is read as of its own evening, so the store's clock is that too
    clock = [now, max(now, datetime.now(UTC))]
    eng = mc.open_engine(f"sqlite:///{path}", embedder, clock=lambda: clock[0])
    wall = patch("memory_core.store.sqlite._wall", lambda: clock[1])
    wall.start()
    try:
        ids: dict[str, str] = {}
        # in the order they were made (a store takes no write dated before one it holds; an
        # answer key may list its priors in another order)
        for p in sorted(conv.prior, key=lambda p: p["created"]):
            created = _start_of(p["created"])
            clock[:] = [created, created]  # a prior is written when it was made
            mtype = AS_WRITTEN_TYPES.get(p["type"], (p["type"],))[0]
            m = eng.add_memory(
                conv.patient, p["content"], mtype, created_at=created, by="eval", now=created
            ).memory
            ids[p["id"]] = m.id
        clock[:] = [now, max(now, datetime.now(UTC))]
        props = eng.extract_memories(conv.patient, conv.text, now=now, name=conv.file)
        if props:
            eng.accept_proposals(conv.patient, props, by="eval", now=now)
        proposed = [
            Proposed(
                p.memory_type,
                p.content,
                None if p.created_at == now else p.created_at,
                is_family(p.content, getattr(p, "whose", "patient")),
            )
            for p in props
        ]
        res = judge(conv, proposed)
        res.rejected = [f"{r.item} -- {r.reason}" for r in props.rejected]
        replaced = {
            s.old_id
            for s in eng.supersessions(patient_id=conv.patient)
            if s.state.value in ("auto", "pending", "confirmed")
        }
        for fact in conv.facts:
            for pid in fact.get("supersedes", ()):
                res.links += 1
                if ids.get(pid) in replaced:
                    res.superseded += 1
                else:
                    res.unsuperseded.append(pid)
    finally:
        wall.stop()
        eng.store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return res


def run_all(
    convs: Sequence[Conversation], embedder: mc.Embedder | str = "hashing"
) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="memory-core-conv-") as tmp:
        return [run_one(c, embedder, Path(tmp)) for c in convs]


def summary(outs: Sequence[Outcome]) -> dict[str, float]:
    facts = sum(len(o.conv.facts) for o in outs)
    found = sum(len(o.found) for o in outs)
    links = sum(o.links for o in outs)
    sup = sum(o.superseded for o in outs)
    return {
        "transcripts": len(outs),
        "facts": facts,
        "found": found,
        "found_share": found / facts if facts else 0.0,
        "wrong_dates": sum(len(o.wrong_date) for o in outs),
        "forbidden": sum(len(o.forbidden) for o in outs),
        "links": links,
        "superseded": sup,
        "superseded_share": sup / links if links else 1.0,
        "proposals": sum(len(o.proposed) for o in outs),
    }


def row(name: str, s: dict[str, float]) -> list[str]:
    sup = f"{s['superseded']:.0f} / {s['links']:.0f} ({100 * s['superseded_share']:.0f} %)"
    return [
        name,
        f"{s['transcripts']:.0f}",
        f"{s['found']:.0f} / {s['facts']:.0f} ({100 * s['found_share']:.0f} %)",
        f"{s['wrong_dates']:.0f}",
        f"{s['forbidden']:.0f}",
        sup if s["links"] else "—",
        f"{s['proposals']:.0f}",
    ]


HEADER = [
    "set",
    "transcripts",
    "facts found",
    "wrong dates",
    "forbidden",
    "prior memories superseded",
    "proposals",
]


def tables(outs: Sequence[Outcome]) -> list[list[str]]:
    """Rows: each set's dev and test halves, then each setting of the held-out sets."""
    rows = []
    for s in (*SETS, *FRESH, "dialogue"):
        for split in ("dev", "test"):
            mine = [o for o in outs if o.conv.set == s and o.conv.split == split]
            if mine:
                rows.append(row(f"{s} {split}", summary(mine)))
    for split in ("dev", "test"):
        mine = [o for o in outs if o.conv.set in SETS and o.conv.split == split]
        if mine:
            rows.append(row(f"**a + b {split}**", summary(mine)))
    return rows


def by_setting(outs: Sequence[Outcome], split: str, sets: Sequence[str] = SETS) -> list[list[str]]:
    mine_sets = [o for o in outs if o.conv.set in sets]
    settings = dict.fromkeys(o.conv.setting for o in mine_sets)
    return [
        row(f"{st} ({split})", summary(mine))
        for st in settings
        if (mine := [o for o in mine_sets if o.conv.setting == st and o.conv.split == split])
    ]


def run(ctx: Any) -> Any:
    """The section of ``python -m eval --only conversations`` (the runner's Section)."""
    from .runner import Section, table

    sec = Section("Held-out conversations (issue 31): facts proposed for the right person")
    outs = run_all(load((*SETS, *FRESH, "dialogue")), ctx.embedder)
    sec.add(
        "Sixty-two transcripts by four authors who had not read the reader "
        "(`eval/conversations/` a-d, frozen, split dev / test by a fixed rule; the test halves "
        "were never read while the reader was built; c and d are also tabled by setting) and "
        "the project's own twenty (`eval/dialogue/`, dev). Per "
        "transcript a fresh store: prior memories, extraction at the session's date, every "
        "proposal accepted. Before (the issue, main dfd818e): "
        + "; ".join(f"{k}: {v}" for k, v in BEFORE.items())
        + ".",
        "",
        *table(HEADER, tables(outs)),
        "",
        *table(HEADER, by_setting(outs, "test")),
        "",
        *table(HEADER, by_setting(outs, "test", FRESH)),
    )
    test = summary([o for o in outs if o.conv.set in SETS and o.conv.split == "test"])
    sec.numbers.update({f"test_{k}": v for k, v in test.items()})
    for name in FRESH:
        fresh = summary([o for o in outs if o.conv.set == name and o.conv.split == "test"])
        sec.numbers.update({f"{name}_test_{k}": v for k, v in fresh.items()})
    return sec


def show(outs: Sequence[Outcome]) -> None:
    """The dev half's misses, wrong dates, forbidden proposals and priors left current."""
    for o in outs:
        if o.conv.split != "dev":
            continue
        print(f"== {o.conv.set}/{o.conv.file} ({o.conv.setting}): {len(o.found)}/"
              f"{len(o.conv.facts)}")  # fmt: skip
        for f in o.missed:
            print(f"   missed [{f['type']}] {f['has']} {f.get('whose')} {f.get('date') or ''}")
        for f, got in o.wrong_date:
            print(f"   WRONG DATE {f['has']} {f.get('date')}: {got}")
        for p, why in o.forbidden:
            print(f"   FORBIDDEN {p} ({why})")
        for pid in o.unsuperseded:
            print(f"   not superseded {pid}")
        for p in o.proposed:
            print(f"   . [{p.memory_type}]{' FH' if p.family else ''} {p.content}"
                  f"{' @' + p.date.date().isoformat() if p.date else ''}")  # fmt: skip
        for r in o.rejected:
            print(f"   rejected {r}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--split", default="all", choices=["dev", "test", "all"])
    ap.add_argument("--set", action="append", choices=[*SETS, *FRESH, "dialogue"], default=None)
    ap.add_argument("--embedder", default="hashing", help="hashing (the default) | minilm")
    ap.add_argument("--show", action="store_true", help="list the dev half's misses")
    ap.add_argument("--json", action="store_true", help="print the summaries as JSON")
    args = ap.parse_args(argv)
    sets = args.set or [*SETS, *FRESH, "dialogue"]
    convs = [c for c in load(sets) if args.split in ("all", c.split)]
    outs = run_all(convs, args.embedder)
    from .runner import table

    print("\n".join(table(HEADER, tables(outs))))
    print()
    for split in ("dev", "test"):
        rows = by_setting(outs, split) + by_setting(outs, split, FRESH)
        if rows:
            print("\n".join(table(HEADER, rows)))
            print()
    if args.json:
        for split in ("dev", "test"):
            mine = [o for o in outs if o.conv.set in SETS and o.conv.split == split]
            if mine:
                print(split, json.dumps(summary(mine)))
    if args.show:
        show(outs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
