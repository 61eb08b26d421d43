"""A newer note that corrects the record (issue 30): "Interpreter flag entered in error",
"Correction: post-vaccine temp was 37.9 C, not 39", "Diagnosis corrected: type 2 diabetes",
"previous entry incorrect". Pure.

Such a note says that an earlier statement of its type was wrong, often without naming the
thing the earlier one keyed (a flag, a note, an entry) or while naming another (the corrected
diagnosis). The table's rows read things and their states, so they find two statements that
share no key, or two values of a slot, and answer compatible: the wrong statement would stay in
the agent's context beside its correction. After the table, :func:`correction` makes such a
pair weak evidence of an update -- always for a reviewer, never at once: which older statement
a correction corrects is a person's call.

A correction is read from the words states.json marks ``record`` (the lexicon's one vocabulary
of them): a refutation of the record ("in error", "incorrect", "was wrong", "never actually")
anywhere in the statement; "corrected" or "correction" only in its heading (before its first
colon, a few words at most), since elsewhere they name a change of a thing ("correction scale",
"corrected calcium"). It does not count where the newer statement

- asks, supposes, instructs or defines (a question, a condition, a rule, a threshold: the
  assertion step's contexts);
- is one of two chat turns, each labelled with its speaker's name ("Vanessa: Opinions are not
  correct though"): a conversation says "wrong" and "incorrect" of anything, and corrects no
  record (REALTALK: 16 more reviews over 8,944 turns before this exception; a single heading
  such as "Clarified:" is no conversation);
- refutes a thing of its own the older does not name ("tolerated cefazolin" after "allergic to
  penicillin" is a fact about cefazolin; a refutation word with ``kinds`` is about a thing and
  never marks a correction of the record);
- is one of two coded records with different codes, or of two chat speakers (the table's rows
  that decide two things are two).
"""

from __future__ import annotations

from functools import lru_cache

from ..lexicon import lexicon
from ..model import Context, Decision, State, Verdict
from ..text import parse
from .base import WEAK, Pair
from .gates import chat_label

RULE = "statement.corrects"
DOC = "a newer note that says an earlier record of its type was wrong: for a reviewer"

#: The rows whose compatible answer a correction never reopens: two coded records with
#: different codes, a statement that does not assert, two chat speakers.
KEEPS = frozenset({"code.different", "context.not-asserted", "speaker.another"})

#: What keeps a statement from correcting anything: it asks, supposes, instructs or defines.
_NOT_SAID = frozenset(
    {
        Context.QUESTION,
        Context.HYPOTHETICAL,
        Context.UNCERTAIN,
        Context.INSTRUCTION,
        Context.DEFINITION,
        Context.FUTURE,
    }
)
#: A heading is at most this many words before the statement's first colon.
HEADING_WORDS = 4


@lru_cache(maxsize=65_536)
def record_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` that say an earlier record was wrong (states.json's ``record``
    entries; a correction word only in the heading), as written, in order."""
    t = parse(text)
    colon = t.text.find(":")  # in the folded text the token offsets are of
    heading_end = -1
    if colon > 0:
        before = [i for i, s in enumerate(t.starts) if s < colon]
        if len(before) <= HEADING_WORDS:
            heading_end = len(before)
    out = []
    for m in lexicon().states.find(t.tokens, t.raw):
        rule = m.value
        if not rule.record or rule.kinds:
            continue
        if rule.state == State.REFUTED.value or m.end <= heading_end:
            out.append(" ".join(t.raw[m.start : m.end]))
    return tuple(out)


def correction(p: Pair, row: str) -> Decision | None:
    """Weak evidence that the newer statement corrects the older one, where the table's row
    ``row`` found them compatible (see the module docstring); None otherwise."""
    if row in KEEPS:
        return None
    text = p.newer_text
    if not text or text.rstrip().endswith("?"):
        return None
    if chat_label(text) and chat_label(p.older_text):
        return None  # two chat turns
    words = record_words(text)
    if not words:
        return None
    older_keys = {f.key for f in p.older.facts}
    for f in p.newer.facts:
        if f.contexts & _NOT_SAID:
            return None
        if f.state is State.REFUTED and f.key not in older_keys:
            return None  # it refutes a thing of its own, not the older's record
    said = ", ".join(f'"{w}"' for w in dict.fromkeys(words))
    why = f"the newer note says an earlier record was wrong ({said})"
    return Decision(Verdict.UPDATES, RULE, WEAK, why, "")
