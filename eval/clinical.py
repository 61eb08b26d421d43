"""The labelled clinical pair set (``memory_core/data/clinical_pairs.jsonl``) through the
engine: each pair a patient of its own, the older statement added 30 days before the newer
one with ``add_memory``; a pair counts as superseded when the newer memory produced a
supersession of the older one (applied automatically or pending review)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta

from memory_core.calibration import (
    PAIR_TYPES,
    SPLITS,
    Pair,
    TypeScore,
    load_pairs,
    report_set,
)
from memory_core.importance import SAFETY_TYPES

from .runner import Context, Section, progress, table

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _through_engine(ctx: Context, pairs: tuple[Pair, ...]) -> tuple[list[bool], list[bool]]:
    """(any supersession, applied automatically) per pair."""
    proposed: list[bool] = []
    auto: list[bool] = []
    with ctx.engine(T0 + timedelta(days=60)) as eng:
        for p in pairs:
            pid = f"pair-{p.id}"
            old = eng.add_memory(pid, p.older, p.memory_type, created_at=T0, by="eval").memory
            res = eng.add_memory(
                pid, p.newer, p.memory_type, created_at=T0 + timedelta(days=30), by="eval"
            )
            mine = [s for s in res.supersessions if s.old_id == old.id]
            proposed.append(bool(mine))
            auto.append(any(s.state.value == "auto" for s in mine))
    return proposed, auto


def _scores(pairs: tuple[Pair, ...], pred: list[bool]) -> list[TypeScore]:
    out = []
    for t in PAIR_TYPES:
        idx = [i for i, p in enumerate(pairs) if p.memory_type == t]
        tp = sum(pred[i] and pairs[i].supersede for i in idx)
        fp = sum(pred[i] and not pairs[i].supersede for i in idx)
        fn = sum(not pred[i] and pairs[i].supersede for i in idx)
        out.append(TypeScore(t, len(idx), tp, fp, fn))
    return out


def run(ctx: Context) -> Section:
    sec = Section("Clinical pair set (test half; dev half for reference)")
    sec.add(
        "The labelled synthetic pairs in `memory_core/data/clinical_pairs.jsonl` (see "
        "`python -m memory_core calibrate`). Through the engine: every pair is a patient of "
        "its own; the older statement is added, then the newer one 30 days later, with "
        "`add_memory` and the shipped policy (allergy and adverse_reaction go to review). "
        "Superseded = the newer memory produced a supersession of the older one, applied or "
        "pending; precision and recall are of that decision against the label.",
        "",
    )
    summary = []
    by_author: dict[str, dict[str, str]] = {}
    for split in ("test", "dev"):
        pairs = load_pairs(split)
        proposed, auto = _through_engine(ctx, pairs)
        scores = _scores(pairs, proposed)
        right = sum(pr == p.supersede for pr, p in zip(proposed, pairs, strict=True))
        safety_fp = sum(
            pr and not p.supersede and p.memory_type in SAFETY_TYPES
            for pr, p in zip(proposed, pairs, strict=True)
        )
        auto_fp = sum(a and not p.supersede for a, p in zip(auto, pairs, strict=True))
        acc = right / len(pairs)
        sec.numbers[f"{split} accuracy"] = acc
        sec.numbers[f"{split} safety false supersessions"] = safety_fp
        rule = report_set(ctx.embedder, pairs, split)
        summary.append(
            [split, len(pairs), f"{acc:.3f}", safety_fp, auto_fp, f"{rule.accuracy:.3f}",
             rule.safety_false_supersessions]
        )  # fmt: skip
        sec.add(
            f"### {split} half: {len(pairs)} pairs",
            "",
            *table(
                ["type", "pairs", "should supersede", "precision", "recall", "false", "missed"],
                [
                    [
                        t.memory_type,
                        t.pairs,
                        t.true_pos + t.false_neg,
                        f"{t.precision:.2f}",
                        f"{t.recall:.2f}",
                        t.false_pos,
                        t.false_neg,
                    ]
                    for t in scores
                ],
            ),
            "",
        )
        for author, idx in _authors(pairs).items():
            ok = sum(proposed[i] == pairs[i].supersede for i in idx)
            by_author.setdefault(author, {})[split] = f"{ok / len(idx):.3f} ({len(idx)})"
        wrong = [(p, pr) for p, pr in zip(pairs, proposed, strict=True) if pr != p.supersede]
        kinds = Counter(p.kind for p, _ in wrong)
        tail = "." if split == "test" else ". Examples (dev half; the test half is not read):"
        sec.add(
            "Wrong decisions by kind of pair: "
            + ", ".join(f"{k} {v}" for k, v in kinds.most_common())
            + tail,
            "",
        )
        if split == "dev":
            for p, pr in wrong[:: max(1, len(wrong) // 10)][:10]:
                what = "superseded, should not" if pr else "missed"
                sec.add(
                    f"- {p.memory_type}, {p.verdict} ({p.kind}), {what}: “{p.older}” → “{p.newer}”"
                )
        sec.add("")
        progress(f"clinical: {split} half done ({len(pairs)} pairs)")
    sec.add(
        "Summary (engine = through `add_memory`; rule = the calibration rule at the embedder's "
        "thresholds, `report_set`; safety = allergy/adverse-reaction pairs wrongly flagged; "
        "applied = wrongly demoted at once):",
        "",
        *table(
            [
                "half",
                "pairs",
                "engine accuracy",
                "engine safety false",
                "engine applied false",
                "rule accuracy",
                "rule safety false",
            ],
            summary,
        ),
    )
    sec.add(
        "",
        "By author (the set's nine authors, each with a dev and a test half of their own; "
        "ids `<type>-NNN` are the first, `-bNNN` ... `-iNNN` the second to ninth):",
        "",
        *table(
            ["author", "dev accuracy (pairs)", "test accuracy (pairs)"],
            [[a, h.get("dev", "-"), h.get("test", "-")] for a, h in by_author.items()],
        ),
    )
    assert set(SPLITS) == {"dev", "test"}
    return sec


_ORDINALS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"
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
