"""Every "Why" line the dashboard shows on the seeded demo is in a clinician's words (issue 35,
"the dashboard's edges"): no rule id ("drug.dose-change", "(rule reaction.changed)"), no bare
arrow between two codes ("named → mild, negated"), no analyte or unit in its code's lower case
("hba1c", "egfr", "mg/dl", "ml/min/1.73m2").

Only the engine's explanations are checked: a statement a person typed (quoted “…”, or the
newer statement a "pending review" note repeats) is theirs, whatever its words. The pages are
rendered with AppTest for every demo patient: the Contradictions page's review queue, history
and possibly-out-of-date flags, the Worklist's card of each review, the Prompt preview's lists
(what each candidate matched, the rule that put it in or left it out) and its flags, the
Memories page's check of a new statement, and the Overview's captions."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import memory_core as mc

#: a rule id of the decision table ("drug.dose-change", "words.same-subject")
RULE_ID = re.compile(r"\b[a-z]+\.[a-z][a-z-]+\b")
#: an analyte's id or a unit's code in lower case, where a clinician writes "HbA1c", "mg/dL"
CODE_NAMES = re.compile(
    r"(?<![\w/])(hba1c|egfr|ldl|hdl|uacr|tsh|mg/dl|ml/min/1\.73m2|ml/min|mmol/l|umol/l)(?![\w/])"
)
#: a raw state or context code of a clinical fact ("named → mild, negated")
STATE_CODES = re.compile(r"\b(named|negated|other_person|other person)\b")

QUESTIONS = (
    "Patient asks whether the new diabetes medication could upset their stomach again.",
    "What were the last HbA1c and eGFR, and is the kidney function stable?",
)


def offences(line: str) -> list[str]:
    """What is wrong with one explanation line (empty: it is in words)."""
    found = []
    if m := RULE_ID.search(line):
        found.append(f"rule id {m.group()!r}")
    if "(rule " in line:
        found.append("'(rule '")
    if "→" in line or "->" in line:
        found.append("bare arrow")
    if m := CODE_NAMES.search(line):
        found.append(f"code name {m.group()!r}")
    if m := STATE_CODES.search(line):
        found.append(f"state code {m.group()!r}")
    return found


def _explanation(text: str, contents: Iterable[str]) -> str:
    """``text`` without what a person typed: quoted statements, memory contents (whole, or
    shortened with "…" by a "pending review" note), markdown escapes and colour markers."""
    text = re.sub(r"\\(.)", r"\1", text)  # markdown escapes: "drug\.stop" is "drug.stop"
    text = re.sub(r":(?:gray|blue|red|green|orange|violet)\[", "", text)
    for c in sorted(contents, key=len, reverse=True):
        text = text.replace(" ".join(c.split()), "")
    text = re.sub(r"\(pending review: [^\n]*?…\)", "", text)
    return re.sub(r"“[^”]*”", "“”", text)


class Tally:
    """Offending explanation lines by page."""

    def __init__(self) -> None:
        self.bad: dict[str, list[str]] = defaultdict(list)
        self.seen: dict[str, int] = defaultdict(int)

    def check(self, page: str, lines: Iterable[str], contents: Iterable[str]) -> None:
        contents = list(contents)
        for raw in lines:
            for line in raw.split("\n"):
                line = _explanation(line, contents).strip()
                if not line:
                    continue
                self.seen[page] += 1
                why = offences(line)
                if why:
                    self.bad[page].append(f"{'; '.join(why)}: {line}")

    def report(self) -> str:
        out = [f"{page}: {len(lines)} of {self.seen[page]}" for page, lines in self.bad.items()]
        for page, lines in self.bad.items():
            out += [f"  [{page}] {x}" for x in list(dict.fromkeys(lines))[:25]]
        return "\n".join(out)


def _why_captions(at: Any) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith(("Why", "It names", "Rule "))]


def test_the_offenders_are_found() -> None:
    """The checks themselves (the seeded pages are below)."""
    assert offences("Why: same drug gabapentin: 100 mg → 600 mg (rule drug.dose-change)")
    assert offences("same condition anaphylaxis: named → mild, negated")
    assert offences("same test egfr (LOINC 33914-3): 95 ml/min/1.73m2")
    assert offences("Matched through: kidney function → egfr")
    assert not offences(
        "Why: a new value of the same test — HbA1c (LOINC 4548-4): the older note says "
        "8.3 %; the newer note says 7.6 %"
    )
    typed = "- **Line 1** · Allergy · “Patient is allergic (named → x)”"
    assert not offences(_explanation(typed, []))


def test_every_rule_has_words_and_evidence_is_said_in_words() -> None:
    """No decision falls back to its rule id's own words; the demo's evidence in sentences."""
    from memory_core.facts.rules import rule_ids
    from memory_core.labels import RULE_WORDS, decision_words

    assert [r for r in rule_ids() if r not in RULE_WORDS] == []
    assert decision_words(
        "reaction.changed", "same condition anaphylaxis: named → mild, negated"
    ) == (
        "Why: the same reaction described differently — same condition anaphylaxis: the older "
        "note names it; the newer note says mild and rules it out"
    )
    # an older store's evidence names the analyte by its id: said as a clinician writes it
    assert decision_words(
        "lab.new-value", "same test egfr (LOINC 33914-3): 95 mL/min → 90 mL/min"
    ) == (
        "Why: a new value of the same test — same test eGFR (LOINC 33914-3): the older note says "
        "95 mL/min; the newer note says 90 mL/min"
    )
    assert not offences(decision_words("drug.stop", "same drug lisinopril: 10 mg → stopped"))


def test_every_why_line_on_the_seeded_demo_is_in_words(
    app: Callable[..., Any], demo_store: str
) -> None:
    eng = mc.open_engine(demo_store, "minilm")
    patients = eng.list_patients()
    contents = {p: [m.content for m in eng.list_memories(p)] for p in patients}
    every = [c for p in patients for c in contents[p]]
    tally = Tally()

    # Contradictions: the queue, the possibly-out-of-date flags and the whole history
    for pid in patients:
        at = app("views/contradictions.py", patient=pid, history_limit=500)
        assert not at.exception, at.exception
        tally.check("Contradictions", _why_captions(at), contents[pid])

    # Worklist: the card of each review row
    at = app("views/worklist.py")
    rows = at.dataframe[0].value
    for row in [i for i in range(len(rows)) if rows.iloc[i]["what"] == "Review"]:
        at.session_state["worklist_table"] = {
            "selection": {"rows": [row], "columns": [], "cells": []}
        }
        at.run()
        assert not at.exception, at.exception
        tally.check("Worklist", _why_captions(at), every)

    # Prompt preview: how the question was read, each candidate's why, the annotations, flags
    for pid in patients:
        for question in QUESTIONS:
            at = app("views/prompt_preview.py", patient=pid, session_context=question)
            assert not at.exception, at.exception
            lists = [
                m.value
                for m in at.markdown
                if m.value.startswith(("- **", "**How the question was read"))
            ]
            assert lists, pid
            tally.check("Prompt preview", lists + _why_captions(at), contents[pid])

    # Memories: the check of a new statement that would replace an older one
    at = app("views/memories.py", patient="NW-1001")
    at.session_state["new_type"] = "medication"
    at.text_area(key="new_content").input("Patient takes lisinopril 40 mg once daily").run()
    at.button(key="preview_add").click().run()
    assert not at.exception, at.exception
    shown = [t.value for t in at.text if t.value.startswith("Why")]
    assert shown, "the check shows why it would replace the older lisinopril memory"
    outcome = [c.value for c in at.caption if " · similarity " in c.value]
    tally.check("Memories", shown + outcome, contents["NW-1001"])

    # Overview: nothing there explains a decision, and nothing may read like a code
    for pid in patients:
        at = app(None, patient=pid)
        assert not at.exception, at.exception
        tally.check("Overview", [c.value for c in at.caption], contents[pid])

    assert tally.seen["Contradictions"] and tally.seen["Worklist"] and tally.seen["Prompt preview"]
    assert not tally.bad, "explanations not in words:\n" + tally.report()
