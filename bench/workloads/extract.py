"""Transcript extraction time (issue 24, item 4): the offline extractor on one long patient
turn -- the demo's follow-up transcript's sentences repeated to ``extract_chars`` characters,
once with its punctuation and once without (speech-to-text without sentence ends is one very
long sentence). Main before issue 24 took 2.0 s at 12,500 characters and 59 s at 99,000
(quadratic: a regex search per drug over the text before it); the target is linear time, 2 s
at 99,000 characters.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from importlib.resources import files

from ..harness import measure
from .common import Row, Setup, Target, log

TARGET = Target("≤ 2 s", max_s=2.0)
NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)


def long_turn(chars: int, punctuation: bool = True) -> str:
    """One patient turn of ``chars`` characters."""
    base = files("memory_core").joinpath("data/demo/transcript_nw1001_followup.txt")
    lines = base.read_text(encoding="utf-8").splitlines()[3:]
    said = " ".join(re.sub(r"^\w+:\s*", "", line) for line in lines if line.strip())
    if not punctuation:
        said = re.sub(r"[.?!,;]", "", said)
    text = (said + " ") * (chars // len(said) + 1)
    return "Patient: " + text[:chars]


def run(bench: Setup) -> None:
    from memory_core.ingest.rules import RuleExtractor

    chars = bench.cfg.extract_chars
    ext = RuleExtractor()
    ext.extract("NW-1001", long_turn(2_000), now=NOW)  # the lexicon and dictionary loaded
    for key, punct in (("extract-long", True), ("extract-unpunctuated", False)):
        text = long_turn(chars, punct)
        log(f"extraction of one {chars:,}-character patient turn ({key})")
        smp = measure(lambda t=text: ext.extract("NW-1001", t, now=NOW), bench.cfg.slow_repeat)
        bench.res.rows.append(
            Row(
                key,
                "offline extraction of one long patient turn"
                + ("" if punct else " without punctuation"),
                f"{chars:,} characters",
                "engine",
                smp,
                target=TARGET,
                passed=TARGET.met(smp),
                note="main before issue 24: 59 s at 99,000 characters (quadratic)",
            )
        )
