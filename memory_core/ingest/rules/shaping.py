"""How a sentence is shaped before the rules read it: a clinician's statement with a question
tag or a question after it, a frame that says it was not told before, a summing-up's items."""

from __future__ import annotations

import re
from dataclasses import replace

from ..dialogue import Sentence

#: a question tag after a clinician's statement ("..., is that right?"): the statement is said,
#: the tag only checks it
_TAG = re.compile(
    r"^(?P<said>.*?\w.*?)[\s,;:—–-]+(?:is that right|is that correct|isn'?t it|is that so|am i "
    r"right|have i got that right|is that your understanding|does that sound right|right|yes|"
    r"correct|yeah)\s*\?\s*$",
    re.I,
)
#: a question's own opening: an auxiliary before its subject ("Are you ...", "Have you ...")
_ASKS = re.compile(
    r"^\W*(?:(?:and|so|now|okay|ok|right),?\s+)?(?:are|is|do|does|did|have|has|can|"
    r"could|would|will|was|were|what|when|where|which|who|how|why)\b",
    re.I,
)


def _untagged(s: Sentence) -> Sentence:
    """A clinician's statement with a question tag after it, as the statement ("You've got your
    fracture clinic appointment on the 7th of April, is that right?" states the appointment);
    any other sentence as it is."""
    if s.speaker != "clinician" or not s.question:
        return s
    m = _TAG.match(s.text)
    if m is None or _ASKS.match(m.group("said")) or len(m.group("said").split()) < 3:
        return s
    said = m.group("said").rstrip(" ,;:—–-")
    return replace(s, text=said + ".", end=s.start + len(said))


def _untold(s: Sentence) -> Sentence:
    """A sentence that opens by saying it was not told before ("I realised I never told you
    that my mother had a stroke", "I forgot to mention, my dad had bowel cancer"), as what it
    tells: the frame's negation is of the telling, not of what is told; any other sentence as
    it is."""
    m = _UNTOLD.match(s.text)
    if m is None or m.end() >= len(s.text):
        return s
    return replace(s, text=s.text[m.end() :], start=s.start + m.end())


#: a frame that says what follows was not told before: its words up to what is told
_UNTOLD = re.compile(
    r"^\W*(?:(?:and|also|oh|sorry|actually)\W+)*(?:i\s+(?:realised|realized|just remembered)\s+)?"
    r"(?:i\s+)?(?:never|didn't|did not|forgot to|haven't|have not|don't think i|do not think i|"
    r"not sure (?:if|whether) i)\s+(?:told|tell|mention|mentioned|said|say)\b"
    r"(?:\s+(?:you|it|this|before|earlier))*\s*(?:that\b|,|:|-|but\b)\s*(?!to\b)",
    re.I,
)


def _statement_then_question(s: Sentence) -> list[Sentence]:
    """A clinician's statement with a question after a dash or a semicolon ("You had oral
    thrush in April on the Clenil - any sore mouth on the Symbicort?"): the statement, read as
    said, then the whole question (what it asks of is the statement's too: "The water tablet,
    furosemide - what dose are you taking?"); any other sentence as it is."""
    if s.speaker != "clinician" or not s.question:
        return [s]
    cuts = list(_THEN_ASKED.finditer(s.text))
    if not cuts:
        return [s]
    cut = cuts[-1]
    head = s.text[: cut.start()].rstrip()
    if _ASKS.match(head) or len(head.split()) < 3 or head.endswith("?"):
        return [s]
    return [replace(s, text=head + ".", end=s.start + len(head)), s]


def _recap_items(s: Sentence) -> list[Sentence]:
    """A summing-up ("So to recap: allopurinol up to 200, naproxen stopped, physio referral,
    and a repeat urate in six weeks", "So: donepezil moves to the morning, ..., and
    trimethoprim on the allergy list"): each item of its list read as a sentence of its own,
    so that no item's words govern another's, and a clinician's item that names a test, a
    scan or a service as a plan made; any other sentence as it is."""
    head = _RECAP.match(s.text)
    if head is None:
        return [s]
    out, at = [], head.end()
    for cut in [*_RECAP_CUT.finditer(s.text, at), None]:
        end = cut.start() if cut else len(s.text)
        item = s.text[at:end].strip(" .")
        if item:
            a = s.text.index(item, at)
            end_at = s.start + a + len(item)
            out.append(replace(s, text=item + ".", start=s.start + a, end=end_at, listed=True))
        at = cut.end() if cut else end
    return out or [s]


#: a summing-up's opening words, up to its list
_RECAP = re.compile(
    r"^\W*(?:so,?\s*(?:to (?:recap|sum up|summari[sz]e)|in summary)?\s*:|(?:so,?\s+)?(?:to recap|"
    r"to sum up|to summari[sz]e|in summary)\b[:,]?)\s*",
    re.I,
)
#: between a summing-up's items: a comma or semicolon, with an "and" after it or not
_RECAP_CUT = re.compile(r"\s*[,;]\s+(?:and\s+)?")


#: a question after a statement, past a dash or a semicolon: its opening words
_THEN_ASKED = re.compile(
    r"\s[-–—]\s+(?=(?:and\s+)?(?:any|anything|are|is|do|does|did|have|has|how|what|when|"
    r"which|who|can|could|would|will)\b)|;\s+(?=(?:any|are|is|do|does|did|have|has|how|what)\b)",
    re.I,
)
