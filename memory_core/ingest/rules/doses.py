"""What a sentence said alone adds to the drug before it: a dose ("Furosemide. I'm on 80 mg
now.", "That's right, 80 milligrams each morning") amends the drug just proposed; a drug named
alone after one taken is taken too."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from ..dialogue import Sentence
from ..proposals import Extraction
from ..sentence import Named, dose_after, freq_after
from .base import _words_besides

#: what may stand beside a drug said alone ("And cod liver oil capsules.", "Also the
#: vitamin D tablets, too.")
_ALONE_WITH = frozenset({
    "and", "also", "plus", "oh", "the", "some", "a", "an", "my", "too", "as", "well", "capsule",
    "capsules", "tablet", "tablets", "tabs", "caps", "tea", "drops", "spray", "cream",
})  # fmt: skip


def _drug_alone(s: Sentence, r: Named) -> bool:
    """A sentence that names one drug and nothing else ("And cod liver oil capsules.")."""
    if len(r.drugs) != 1 or s.question:
        return False
    d = r.drugs[0]
    return _words_besides(s, d.start, d.end) <= _ALONE_WITH


#: a sentence that gives a dose of something said just before ("It's 5 milligrams at night",
#: "We'll start at 18 units once a day", "That's two puffs twice a day")
_DOSE_ONLY = re.compile(
    r"^\W*(?:(?:and|so|ok|okay|right),?\s+)?(?:it's|it is|that's|that is|we'll start at|we will "
    r"start at|start at|starting at|the dose is|dose is|at)\b",
    re.I,
)


#: what follows a bare number that is no dose: a percentage, a result's unit, a time, a count
_NOT_A_DOSE = (
    r"(?!\s*(?:%|percent|mmol|kg|kilos?|years?|days?|weeks?|months?|hours?|times|am|pm|"
    r"o'clock|a day|a week|[./]\d))"
)
#: a bare number said as what a drug is now ("It's 1000 now", "I'm on 80 now")
_BARE_NOW = re.compile(
    rf"\W*(?:it's|it is|i'm on|i am on|he's on|she's on)\s+(\d+(?:[.,]\d+)?)\b{_NOT_A_DOSE}",
    re.I,
)
#: a confirmation that gives a dose ("That's right, 80 milligrams each morning", "Yes, 5 mg")
_AFFIRMED_DOSE = re.compile(
    r"^\W*(?:yes|yeah|yep|correct|that's right|that is right|exactly|right)\b[,.!]?\s+"
    r"(?:it's\s+|that's\s+|it is\s+)?(?=\d|(?:one|two|three|four|five|half)\b)",
    re.I,
)
#: what lies between the end of a turn's last sentence and the next turn's first words
_NEXT_TURN = re.compile(r"[.!?\s]*\n[^\n.!?]{1,40}:\s*")


#: how a proposal says a drug's dose changed ("Patient's sertraline dose increased", "...
#: dose decreased to 5 mg"), after the drug named after the possessive
_DOSE_CHANGED = re.compile(r" dose (?:increased|decreased)")
_PATIENTS = "Patient's "


def _amend_dose(
    out: Extraction,
    last_med: list[tuple[int, str]],
    s: Sentence,
    r: Named,
    transcript: str,
    units: Mapping[str, str] | None = None,
) -> bool:
    """A sentence that only gives a dose, said by whoever just proposed a drug with none, right
    after it in the same turn, is that drug's dose: the proposal is amended and its evidence
    runs on to the sentence's end. Whether it was."""
    affirmed = _AFFIRMED_DOSE.match(s.text)
    bare = _BARE_NOW.match(s.text)  # "It's 1000 now": the dose a change just told went to
    if not last_med or not (_DOSE_ONLY.match(s.text) or affirmed or bare):
        return False
    ((k, speaker),) = last_med
    c = out.candidates[k]
    between = transcript[c.end : s.start]
    if affirmed and speaker != s.speaker:
        # "... the furosemide's gone up." -- "That's right, 80 milligrams each morning.": the
        # next turn's first sentence, confirming the drug its turn ended on
        if not _NEXT_TURN.fullmatch(between):
            return False
    elif speaker != s.speaker or "\n" in between or re.search(r"[.!?].*[.!?]", between):
        return False  # another turn, or a sentence between
    dose = dose_after(s.text, 0, len(s.text))
    changed = _DOSE_CHANGED.search(c.content)
    if not dose and bare and changed:
        drug = c.content[len(_PATIENTS) : changed.start()]
        unit = next((u for name, u in (units or {}).items() if name in drug.lower()), "")
        dose = f"{bare.group(1).replace(',', '.')}{' ' + unit if unit else ''}"
    if not dose or dose_after(c.content, 0, len(c.content)):
        return False  # no dose said, or the drug has one
    if changed and not c.content.endswith(changed.group(0)):
        # "Patient's metformin dose increased in March 2026" + "It's 1000": to 1000 in March
        at = changed.end()
        out.candidates[k] = replace(
            c, content=f"{c.content[:at]} to {dose}{c.content[at:]}", end=s.end
        )
        return True
    freq = freq_after(r, 0, len(s.text))
    to = " to" if c.content.endswith((" dose increased", " dose decreased")) else ""
    said = Named(replace(s, text=c.content), r.session).freqs
    if said:  # "Patient takes furosemide in the morning": the dose before how often
        at = said[0][0]
        content = f"{c.content[:at]}{dose} {c.content[at:]}"
    else:
        content = f"{c.content}{to} {dose}{' ' + freq if freq else ''}"
    out.candidates[k] = replace(c, content=content, end=s.end)
    return True


def _date_the_dose(
    out: Extraction,
    transcript: str,
    undated: list[int],
    k: int,
    content: str,
    said: tuple[int, int],
    created: datetime,
    dated_by: tuple[int, int] | None,
) -> None:
    """A dated change of a drug's dose said without the dose ("The doctor upped it, since the
    1st of June"), right after the same speaker's undated dose of that drug in the same turn
    ("I'm on the sertraline 100."), dates that dose: it is the dose since the change."""
    changed = _DOSE_CHANGED.search(content)  # said without the dose: it ends the proposal
    if changed is None or changed.end() != len(content) or k not in undated:
        return
    drug = content[len(_PATIENTS) : changed.start()] if content.startswith(_PATIENTS) else ""
    c = out.candidates[k]
    between = transcript[c.end : said[0]]
    if c.memory_type != "medication" or "\n" in between or not drug or drug not in c.content:
        return
    out.candidates[k] = replace(c, created_at=created, dated_by=dated_by or said)
    undated.remove(k)
