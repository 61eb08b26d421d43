"""What an answer confirms or tells of the question before it: a "yes" (said alone, with a
subject and an auxiliary, with a date, or echoing the question's verb), "no" to "still ...?",
an effect of the drug asked about, a request the clinician agrees to."""

from __future__ import annotations

import re

from ..dates import told_as_done
from ..dialogue import AFFIRM, Sentence
from ..sentence import Named
from ..statements import as_statement, cues, stems, words_of

#: where an answer turns to something else ("Yes, though ...", "Yes, but ...")
_CONTRAST_CUT = re.compile(r"\b(?:though|although|but|except|however)\b", re.I)


#: a request of the care, asked by the patient's side ("Could I have my tablets in a dosette
#: box?", "Could you send the appointment by email?", "Can you text me first?")
_ASKS_FOR = re.compile(
    r"^\W*(?:(?:oh|also|and|so|one more thing|actually)\W+)*(?:could|can|would|may)\s+"
    r"(?:i|we|you|u)\s+(?:have|get|do|send|put|text|email|ring|call|phone|message|see|book)\b",
    re.I,
)
#: a clinician's turn that agrees to a request ("Yes, we can do a weekly blister pack", "Of
#: course", "Sure, I'll set that up")
_AGREED = re.compile(
    r"^\W*(?:yes|yeah|yep|of course|certainly|sure|absolutely|no problem|definitely|that's fine)\b",
    re.I,
)


#: a question how a drug is working for the patient ("How's the carbocisteine going?", "how is
#: the sumatriptan working for the attacks?", "Is the sertraline helping?")
_HOW_WORKING = re.compile(
    r"\bhow(?:'s| is| are)\b.{0,40}\b(?:going|working|doing|suiting you|getting on)\b"
    r"|\b(?:is|are) (?:the|your) \w+(?: \w+)? (?:helping|working)\b"
)


def _effect_told(text: str) -> bool:
    """Whether an answer tells an effect: a cue of dialogue.json's treatment responses
    ("helped", "better", "no difference") in its words."""
    kind = next(k for k in cues().kinds if k.type == "treatment_response")
    words = words_of(text)
    return kind.cue_at(stems(words), words) is not None


#: a question that only points back at what was just said ("Is that right?", "Is that how
#: you've been taking it?", "Is that still the case?")
_BACK_REF = re.compile(
    r"^\W*(?:(?:and|so)\s+)?is (?:that|this) (?:still )?(?:right|correct|the case|true|how "
    r"you(?:'ve| have) been taking (?:it|them)|what you(?:'re| are) taking)\s*\?\s*$",
    re.I,
)


def _yes_alone(text: str) -> bool:
    """A sentence that is only a yes ("Yes.", "Yeah, that's right.")."""
    m = AFFIRM.match(text.strip())
    return m is not None and not re.search(
        r"\w",
        text.strip()[m.end() :].lower().replace("that's right", "").replace("that is right", ""),
    )


#: an answer with a subject of its own ("Yes, I live alone", "yes we do"): it says the fact
_SAYS_ITSELF = re.compile(r"\b(?:i|i'm|i've|we|we're|he|she|he's|she's|they)\b", re.I)
#: an answer that is only a confirmation, its subject and an auxiliary ("I do.", "Yes, she
#: is.", "We have."): it says nothing itself, so the question is what it confirms
_BARE_YES = re.compile(
    r"^(?:(?:yes|yeah|yep|oh|well|aye),?\s+)?(?:i|we|he|she|they)\s+(?:do|did|does|am|are|is|was|"
    r"were|have|has|had|will|can|would)(?:\s+(?:yes|indeed|still|now))?\W*$",
    re.I,
)
#: a confirmed question is no plan: the plan words of a question are the clinician's asking
_NO_PLAN = frozenset({"care_plan"})
#: what a confirmed question about a medicine, a dose or a test does not state
_NOT_CLINICAL = frozenset({"social", "preference", "observation"})


def _dated_answer(s: Sentence, r: Named, q: Sentence) -> bool:
    """An answer whose first clause says when, and nothing against, to a question about
    something done ("Did you have your flu jab this year?" -- "October, at the pharmacy.",
    "Got it on the 7th of October."): it confirms the question as a "yes" does."""
    if not r.dates or as_statement(q.text) is None:
        return False
    if not told_as_done(q.text) and not _SINCE_OPENS.match(s.text):
        return False  # a question about now is confirmed by "since ..." ("Since July.")
    head = _FIRST_CLAUSE.match(s.text)
    end = head.end() if head else len(s.text)
    negated = set(re.findall(r"[\w']+", s.low[:end])) & cues().negations
    opens = r.dates[0].start <= _OPENS_WITHIN and r.dates[0].start < end
    return opens and not negated and not _NOT_YET.search(s.low[:end])


#: an answer that opens with "since" ("Since July.", "Ever since the 3rd of May")
_SINCE_OPENS = re.compile(r"^\W*(?:(?:yes|yeah|yep),?\s+)?(?:ever\s+)?since\b", re.I)
#: an answer that echoes the question's verb of its thing ("Has he had his Covid booster?" --
#: "He had it at the chemist on the 2nd of October."): a "yes"
_ECHOED = re.compile(
    r"^\W*(?:i|he|she|we|they)\s+(?:had|got|did|have had|has had|'ve had|'s had)\s+"
    r"(?:it|that|them|one)\b",
    re.I,
)


def _gerund(phrase: str) -> str:
    """A phrase whose first word is a verb, that word as its -ing form ("drive" -> "driving",
    "go to church" -> "going to church"; lemminflect)."""
    first, _sp, rest = phrase.partition(" ")
    if not first.endswith("ing"):
        from lemminflect import getInflection

        forms_ = getInflection(first, tag="VBG")
        first = forms_[0] if forms_ else first
    return f"{first} {rest}".strip()


#: a question whether something goes on ("Are you still managing the allotment?", "Do you
#: still drive?"), what it asks of after "still"
_STILL_ASKED = re.compile(
    r"^\W*(?:(?:and|so|now)\W+)?(?:are|do|is|does)\s+(?P<who>you|he|she|they)\s+still\s+"
    r"(?P<rest>[^?]{3,80}?)\s*\?\s*$",
    re.I,
)
#: an answer that is only "No." ("No.", "Nope.", "Not any more.")
_BARE_NO = re.compile(r"^\W*(?:no|nope|nah|not any ?more|not now)\W*$", re.I)
#: how far into the answer its date may begin ("Got it on the 7th of October")
_OPENS_WITHIN = 12
#: an answer's first clause: up to the end of its sentence or a semicolon
_FIRST_CLAUSE = re.compile(r"[^.;!?]*")
#: "not yet", "still waiting": nothing done
_NOT_YET = re.compile(r"\b(?:yet|still waiting|waiting for|booked)\b")
