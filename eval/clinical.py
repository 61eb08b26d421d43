"""The labelled clinical pair set (``memory_core/data/clinical_pairs.jsonl``) through the
engine: each pair a patient of its own, the older statement added 30 days before the newer
one with ``add_memory``. What is measured is what a clinician cares about:

- a **compatible** pair (two facts both still true) whose older fact is superseded *at once*
  (applied on an automatic type, no reviewer): the older fact hidden from the agent wrongly;
- a compatible pair sent to **review** (pending): a reviewer's time;
- a **replacing** pair (updates, contradicts, duplicate) **found**: superseded at once or
  sent to review.

Per rule of the decision table (memory_core.facts.rules) the dev half's decisions are counted
with their precision (superseding decisions on pairs that should supersede)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta

from memory_core.calibration import PAIR_TYPES, SPLITS, Pair, load_pairs
from memory_core.importance import SAFETY_TYPES

from .runner import Context, Section, progress, table

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
#: The issue's held-out measure on main 9ee89da (compatible superseded at once, compatible
#: sent to review, replacing found) and its targets, for the report.
BEFORE = {"auto": "11 / 141 (7.8 %)", "review": "3 / 141", "found": "104 / 144 (0.72)"}
TARGET = {"auto": "≤ 0.5 %", "review": "≤ 5 %", "found": "≥ 0.90"}


def _through_engine(ctx: Context, pairs: tuple[Pair, ...]) -> list[tuple[str, str]]:
    """``(outcome, rule)`` per pair: outcome "auto", "pending" or "none" for the newer
    memory's supersession of the older; the rule that took it ("" when none)."""
    out: list[tuple[str, str]] = []
    with ctx.engine(T0 + timedelta(days=60)) as eng:
        for p in pairs:
            pid = f"pair-{p.id}"
            old = eng.add_memory(pid, p.older, p.memory_type, created_at=T0, by="eval").memory
            res = eng.add_memory(
                pid, p.newer, p.memory_type, created_at=T0 + timedelta(days=30), by="eval"
            )
            mine = [s for s in res.supersessions if s.old_id == old.id]
            if not mine:
                out.append(("none", ""))
            elif any(s.state.value == "auto" for s in mine):
                out.append(("auto", mine[0].rule))
            else:
                out.append(("pending", mine[0].rule))
    return out


def _pct(n: int, d: int) -> str:
    return f"{n} / {d} ({100 * n / d:.1f} %)" if d else "0 / 0"


def measures(pairs: tuple[Pair, ...], got: list[tuple[str, str]]) -> dict[str, int]:
    """The counts behind the report's rows."""
    c = Counter()
    for p, (outcome, _rule) in zip(pairs, got, strict=True):
        if p.supersede:
            c["replacing"] += 1
            c["found"] += outcome != "none"
            c["found_auto"] += outcome == "auto"
        else:
            c["compatible"] += 1
            c["auto"] += outcome == "auto"
            c["review"] += outcome == "pending"
            c["safety_auto"] += outcome == "auto" and p.memory_type in SAFETY_TYPES
    return dict(c)


def run(ctx: Context) -> Section:
    sec = Section("Clinical pair set: supersession by the decision table")
    sec.add(
        "The labelled synthetic pairs in `memory_core/data/clinical_pairs.jsonl` (twelve "
        "authors; "
        "see `eval/build_pairs.py`). Through the engine: every pair is a patient of its own; the "
        "older statement is added, then the newer one 30 days later, with `add_memory` and the "
        "shipped policy (candidates by cosine or a shared key; strong evidence applied at once "
        "on automatic types, weak evidence and the safety types pending review). The dev halves "
        "were read while the rules were written; the test halves were not (their per-rule "
        "counts were looked at, never their texts) -- until reader version 3, when the five "
        "compatible test pairs superseded at once were read and three reader mechanisms "
        "followed (a count of months is no result, a target's setting, a medication's side): "
        "the test half's 'compatible at once' is no longer blind to those. The twelfth "
        "author's texts (both halves) were seen once, in a listing of a session's changes, "
        "after that session's last rule change (b6d1616): its figures here are of rules fixed "
        "before.",
        "",
    )
    summary = []
    by_author: dict[str, dict[str, str]] = {}
    for split in ("test", "dev"):
        pairs = load_pairs(split)
        got = _through_engine(ctx, pairs)
        m = measures(pairs, got)
        c, r = m.get("compatible", 0), m.get("replacing", 0)
        sec.numbers[f"{split} compatible hidden at once"] = m.get("auto", 0) / c
        sec.numbers[f"{split} compatible sent to review"] = m.get("review", 0) / c
        sec.numbers[f"{split} replacing found"] = m.get("found", 0) / r
        sec.numbers[f"{split} safety hidden at once"] = m.get("safety_auto", 0)
        summary.append(
            [split, len(pairs), _pct(m.get("auto", 0), c), _pct(m.get("review", 0), c),
             f"{m.get('found', 0)} / {r} ({m.get('found', 0) / r:.3f})",
             m.get("found_auto", 0), m.get("safety_auto", 0)]
        )  # fmt: skip
        sec.add(f"### {split} half: {len(pairs)} pairs", "")
        sec.add(*_per_type(pairs, got), "")
        for author, idx in _authors(pairs).items():
            sub = tuple(pairs[i] for i in idx)
            mm = measures(sub, [got[i] for i in idx])
            cc, rr = mm.get("compatible", 0), mm.get("replacing", 0)
            by_author.setdefault(author, {})[split] = (
                f"{mm.get('auto', 0)}/{cc} at once, {mm.get('review', 0)}/{cc} review, "
                f"{mm.get('found', 0)}/{rr} found"
            )
        if split == "dev":
            sec.add(*_per_rule(pairs, got), "")
        progress(f"clinical: {split} half done ({len(pairs)} pairs)")
    sec.add(
        "Summary (compatible = two facts both still true; at once = superseded with no "
        "reviewer; review = sent to a reviewer; found = a replacing pair superseded at once or "
        "sent to review):",
        "",
        *table(
            [
                "half",
                "pairs",
                "compatible hidden at once",
                "compatible sent to review",
                "replacing found",
                "of them at once",
                "allergy / reaction hidden at once",
            ],
            summary,
        ),
        "",
        "The issue's held-out pairs on main 9ee89da (320 pairs written outside the project): "
        f"compatible hidden at once {BEFORE['auto']} (target {TARGET['auto']}), sent to review "
        f"{BEFORE['review']} (target {TARGET['review']}), replacing found {BEFORE['found']} "
        f"(target {TARGET['found']}).",
        "",
        "By author (ids `<type>-NNN` are the first, `-bNNN` ... `-lNNN` the second to twelfth):",
        "",
        *table(
            ["author", "dev", "test"],
            [[a, h.get("dev", "-"), h.get("test", "-")] for a, h in by_author.items()],
        ),
    )
    assert set(SPLITS) == {"dev", "test"}
    return sec


def _per_type(pairs: tuple[Pair, ...], got: list[tuple[str, str]]) -> list[str]:
    rows = []
    for t in PAIR_TYPES:
        idx = [i for i, p in enumerate(pairs) if p.memory_type == t]
        m = measures(tuple(pairs[i] for i in idx), [got[i] for i in idx])
        c, r = m.get("compatible", 0), m.get("replacing", 0)
        rows.append([t, len(idx), m.get("auto", 0), m.get("review", 0), c, m.get("found", 0), r])
    return table(
        ["type", "pairs", "compatible at once", "compatible to review", "compatible",
         "replacing found", "replacing"],
        rows,
    )  # fmt: skip


def _per_rule(pairs: tuple[Pair, ...], got: list[tuple[str, str]]) -> list[str]:
    """Each rule's superseding decisions on the dev half: how many, at once or to review, and
    their precision (the share on pairs that should supersede)."""
    by: dict[str, Counter[str]] = {}
    for p, (outcome, rule) in zip(pairs, got, strict=True):
        if outcome == "none":
            continue
        c = by.setdefault(rule, Counter())
        c[outcome] += 1
        c["right"] += p.supersede
    rows = [
        [f"`{rule}`", c["auto"] + c["pending"], c["auto"], c["pending"],
         f"{c['right'] / (c['auto'] + c['pending']):.2f}"]
        for rule, c in sorted(by.items(), key=lambda kv: -(kv[1]["auto"] + kv[1]["pending"]))
    ]  # fmt: skip
    return [
        "Per rule (dev half): superseding decisions and their precision",
        "",
        *table(["rule", "decisions", "at once", "to review", "precision"], rows),
    ]


_ORDINALS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth",
)  # fmt: skip


def _authors(pairs: tuple[Pair, ...]) -> dict[str, list[int]]:
    """Pair indices by author, in authoring order, from the id's letter (none: the first)."""
    by_k: dict[int, list[int]] = {}
    for i, p in enumerate(pairs):
        m = re.search(r"-([a-z]?)\d{3}$", p.id)
        by_k.setdefault(ord(m.group(1)) - ord("a") if m and m.group(1) else 0, []).append(i)
    return {
        _ORDINALS[k] if k < len(_ORDINALS) else f"author {k + 1}": idx
        for k, idx in sorted(by_k.items())
    }
