"""Regenerate ``memory_core/data/clinical_pairs.jsonl`` from the calibration pairs,
:mod:`eval.clinical_pairs_source` and the later authors' files ``eval/clinical_pairs_second``,
``_third`` ... ``_ninth.jsonl`` (``python -m eval.build_pairs``). Deterministic.

The later files are 200 pairs each, written by seven more authors, each without reading the
sets before theirs (20 per type, their own dev / test split, 10 each; the third in the voices of
triage notes, portal messages, pharmacist and home-health notes, with a relative's fact,
corrections and changes without a change word; the fourth as specialists, ED and inpatient
notes and terse problem-list and med-list entries; the fifth as primary-care nurses,
telehealth, portal messages, home-health aides and medication reconciliation, with patients'
own words and misspellings; the sixth as long-term care, rehabilitation, therapists,
dietitians, palliative care, obstetrics, dermatology and ophthalmology clinics and an AI
assistant's session summaries, in first and third person; the seventh as anticoagulation,
pharmacy, diabetes, mental-health, addiction, transplant and sleep clinics, in structured
"Key: value" entries; the eighth as urgent care, paediatrics (a parent reporting), school
nurses, obstetrics, travel and sexual health, and patients' own app entries). A ninth
author's 160 weigh the safety types (40 allergy and 40 adverse-reaction pairs, 10 of each other
type, halves of 20 and 5): second reactions, delabelling after a challenge, cross-reactivity
notes, one reaction charted by a nurse, a pharmacist and the patient. A tenth author's 320 (32
per type: about 14 compatible, 14 updates or contradictions and 4 duplicates each, halves of 16;
five word-for-word repeats of earlier authors' pairs dropped, leaving 315) were written for the
clinical-facts redesign (issue 22) without reading the code or the earlier sets, in clinicians',
nurses', pharmacists' and patients' styles with FHIR-like display strings, conditional plans, a
relative's facts and changes without a change word; measured before any rule saw them (9 % of
compatible pairs hidden at once, 0.73 of replacing pairs found over the whole file). An
eleventh author's 320 (32 per type: 14 compatible and 18 replacing, 5 of them duplicates;
halves of 16), written the same way with more British usage (NBM, F/U OPD 6/12, units of
alcohol), were measured before any rule saw them: 4 of 140 compatible pairs hidden at once,
10 sent to review, 119 of 180 replacing pairs found; one word-for-word repeat of an earlier
author's pair dropped, leaving 319. A twelfth author's 240 (40 each of the six types the test
half still sent most compatible pairs of to review, by count and rule, no text read:
treatment_response, preference, adverse_reaction, condition, care_plan, social; 18 compatible
pairs per type that share their thing -- two outcomes of one treatment, two reactions to one
drug, a preference for one purpose beside another, a plan's second item -- 17 replacing and 5
duplicates), split per type and verdict in the order of the SHA-256 of the id (alternately dev
and test: halves of 20), none repeating an earlier pair; measured before any rule saw them
(main a179076, MiniLM): test half 0 of 54 compatible pairs hidden at once, 9 sent to review, 41
of 66 replacing pairs found; dev half 1 of 54 at once, 12 to review, 41 of 66 found.
They are appended to the
halves they name, with ids ``<type>-bNNN`` ... ``-iNNN``, so each half holds pairs of all nine
authors. Eleven pairs of the fifth to eighth files that repeated an earlier
author's pair word for word (writers picking Januvia / Jardiance as a near miss) were dropped
from those files (two more of the ninth's: Apixaban / Eliquis, cardiology / nephrology
referrals), and one care-plan pair of the eighth moved from its test half to its dev
half to keep the type's halves within one. A lab result duplicate of a later author is of kind
``lab-same`` whatever the author called it ("paraphrase-same-value", "unit-conversion"): the
set's one name for it."""

from __future__ import annotations

import json
from pathlib import Path

from memory_core.calibration import PAIR_TYPES, PAIRS

from .clinical_pairs_source import SOURCE

OUT = Path(__file__).resolve().parent.parent / "memory_core" / "data" / "clinical_pairs.jsonl"
AUTHORS = (
    ("b", Path(__file__).resolve().parent / "clinical_pairs_second.jsonl"),
    ("c", Path(__file__).resolve().parent / "clinical_pairs_third.jsonl"),
    ("d", Path(__file__).resolve().parent / "clinical_pairs_fourth.jsonl"),
    ("e", Path(__file__).resolve().parent / "clinical_pairs_fifth.jsonl"),
    ("f", Path(__file__).resolve().parent / "clinical_pairs_sixth.jsonl"),
    ("g", Path(__file__).resolve().parent / "clinical_pairs_seventh.jsonl"),
    ("h", Path(__file__).resolve().parent / "clinical_pairs_eighth.jsonl"),
    ("i", Path(__file__).resolve().parent / "clinical_pairs_ninth.jsonl"),
    ("j", Path(__file__).resolve().parent / "clinical_pairs_tenth.jsonl"),
    ("k", Path(__file__).resolve().parent / "clinical_pairs_eleventh.jsonl"),
    ("l", Path(__file__).resolve().parent / "clinical_pairs_twelfth.jsonl"),
)
FIELDS = ("memory_type", "older", "newer", "verdict", "supersede", "kind", "split")

# verdicts of the 45 calibration pairs, in PAIRS order (supersede=True ones only; the others
# are compatible)
LEGACY_VERDICTS = {
    ("Patient prefers morning appointments", "Patient likes to be seen early in the day"):
        "duplicate",
    ("Patient prefers written instructions",
     "Patient asks for instructions in writing rather than verbally"): "duplicate",
}  # fmt: skip


def rows() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for t in PAIR_TYPES:
        legacy = [p for p in PAIRS if p.memory_type == t]
        new = SOURCE[t]
        n = len(legacy) + len(new)
        dev_target = max((n + 1) // 2, len(legacy))
        need_dev, need_test = dev_target - len(legacy), n - dev_target
        typed: list[dict[str, object]] = []
        for p in legacy:
            verdict = (
                LEGACY_VERDICTS.get((p.older, p.newer), "updates") if p.supersede else "compatible"
            )
            typed.append(
                {"memory_type": t, "older": p.older, "newer": p.newer, "verdict": verdict,
                 "supersede": p.supersede, "kind": "calibration", "split": "dev"}
            )  # fmt: skip
        # stratified by verdict: interleave the halves in proportion to their quotas
        ordered = sorted(enumerate(new), key=lambda x: (x[1][1], x[0]))
        dev = test = 0
        for _, (kind, verdict, older, newer) in ordered:
            to_test = need_test > 0 and (need_dev == 0 or test * need_dev <= dev * need_test)
            if to_test:
                test += 1
            else:
                dev += 1
            typed.append(
                {"memory_type": t, "older": older, "newer": newer, "verdict": verdict,
                 "supersede": verdict != "compatible", "kind": kind,
                 "split": "test" if to_test else "dev"}
            )  # fmt: skip
        for i, r in enumerate(typed, 1):
            out.append({"id": f"{t}-{i:03d}", **r})
        for tag, path in AUTHORS:
            for i, r in enumerate(authored(path, t), 1):
                out.append({"id": f"{t}-{tag}{i:03d}", **r})
    return out


def authored(path: Path, memory_type: str) -> list[dict[str, object]]:
    """One later author's pairs of one type, in file order."""
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    out = [{k: r[k] for k in FIELDS} for r in rows if r["memory_type"] == memory_type]
    for r in out:
        if r["memory_type"] == "lab_result" and r["verdict"] == "duplicate":
            r["kind"] = "lab-same"
    return out


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for r in rows():
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
