"""Results and vital signs: the values a sentence reads with their dates, a test's date said
before its results, a qualitative result; and the readings and doses a reply or the speaker
takes back."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import pairwise

from ...facts.lexicon import lexicon
from ...facts.values import as_number
from .. import names
from ..dates import told_as_done
from ..dialogue import Sentence, State
from ..proposals import Candidate
from ..sentence import Named, Result, date_for, results
from .base import Item

#: a sentence about tests taken (its date dates the results said next)
_TESTS = re.compile(
    r"\b(bloods|blood (?:tests?|work|results?|samples?)|tests?|results?|labs?|laborator\w*|sample|"
    r"taken|done|checked)\b"
)
#: a sentence about a scan or a test of how an organ works (its date dates the results said
#: just after it -- the ejection fraction after the echo -- not the bloods' results said later)
_SCANS = re.compile(
    r"\b(scans?|echo|echocardiogram|x-?rays?|ecg|spirometry|ultrasound|mri|ct|dexa|"
    r"bone density|breathing tests?|lung function(?: tests?)?)\b"
)
#: how many turns after a scan's date its results may be said ("on the fifth" -- "ejection
#: fraction 35 percent"; a question and its answer between)
_SCAN_TURNS = 2
#: a sentence about the result just named ("That was actually from the fasting sample ...")
_THAT_ONE = re.compile(
    r"(?:(?:and|but|so|now)\s+)?(?:that|this|it|which)(?:\s+one)?\s*(?:was|were|is|['’]s)\b", re.I
)


#: a test's name followed by its result in a few words ("came back positive", "was negative",
#: "from a fortnight ago came back positive")
_WORDS_AFTER = re.compile(
    r"(?:\s+[\w'-]+){0,5}?\s+(?:came back|come back|was|is|were|showed|shows|result(?:ed)?)\b"
)
_NO_JAB = frozenset({"immunization"})
#: a result said before the test it is of ("positive for nitrites and leukocytes")
_FOUND_FOR = re.compile(r"\b((?:weakly |strongly )?(?:positive|negative))\s+for\s+(?:the\s+)?$")


#: a reply that opens by saying the reading just said is wrong ("No, that's 138", "No no, 9.4")
_CORRECTION = re.compile(r"^\W*(?:no|nope|sorry,? no)\b(?:[\s,.!-]+no\b)?")
_FIGURE = re.compile(r"\d+(?:\.\d+)?")
#: a sentence that corrects the speaker's own sentence before with a number said first ("No,
#: sorry, 11.2", "Sorry, I mean 138", "I mean 7.4", "no wait, it's 15 milligrams", "Actually,
#: it's 20"; not "Sorry, I have to leave at 3")
_SELF_CORRECTION = re.compile(
    r"^\W*(?:(?:no|nope),?\s+)?(?:sorry|i mean|i meant|wait|hang on|actually)\b[,\s]*"
    r"(?:(?:no|i mean|i meant|it's|it is|that's)[,\s]+)?\d"
)
#: two words of taking back at a sentence's opening ("no, sorry, that's what I was on in
#: hospital", "sorry, no, I've got that the wrong way round ... 55.1"): the speaker's last
#: number is taken back, whatever words come before the one said instead
_RETRACT = re.compile(
    r"^\W*(?:no,?\s+sorry|sorry,?\s+no|no,?\s+wait|wait,?\s+no|actually,?\s+no)\b"
)
#: a word that takes back what was just said, within a sentence ("It was 38 -- sorry, wrong
#: column -- 28", "84 kilos, no I mean 84.5", "100 mg, actually no, 50 mg", "the furosemide
#: 20, no, what am I saying, it's 40")
_TAKEN_BACK = re.compile(
    r"\b(?:(?<!i'm )(?<!so )sorry(?! to\b| about\b| for\b| that\b)|i mean|i misread|my mistake|"
    r"correction|(?:actually|wait),? no|no,? wait|hang on|scratch that|what am i saying|"
    r"no,? (?:it's|it is|it was|that's|make that))\b"
)  # not sympathy ("I'm sorry to say", "so sorry about that")
#: the readings a reply can correct
_READINGS = frozenset({"vital_sign", "lab_result"})
#: what the speaker can take back of their own: a reading, or a dose ("Lansoprazole 30... no
#: wait, it's 15 milligrams")
_OWN_NUMBERS = _READINGS | {"medication"}


def _taken_back(text: str) -> frozenset[str]:
    """The numbers a sentence says after its last word that takes back a number said before
    it ("It was 38 -- sorry, I'm looking at the wrong column -- it was 28": {"28"}); none
    where no number comes before ("Sorry I'm late. Your potassium was 5.1")."""
    low = text.lower()
    marks = [m for m in _TAKEN_BACK.finditer(low) if _FIGURE.search(low, 0, m.start())]
    return frozenset(_FIGURE.findall(low, marks[-1].end())) if marks else frozenset()


def _said_next(said: Sequence[Sentence], k: int) -> frozenset[str]:
    """The numbers of the sentence after ``said[k]`` where the same speaker says it in the
    same turn: what a speaker who took a number back without a new one says instead."""
    if k + 1 < len(said):
        y, z = said[k], said[k + 1]
        if z.label == y.label and z.speaker == y.speaker and z.turn == y.turn:
            return frozenset(_FIGURE.findall(z.text))
    return frozenset()


def _uncorrected(
    cands: list[Candidate], by_turn: Mapping[int, Sequence[Sentence]]
) -> list[Candidate]:
    """The candidates but the readings the other speaker's next turn corrects at once: a turn
    that opens with "no" and gives a number the reading does not have ("So your home average
    is 158 over 86." -- "No, that's 138.": the reading said was misread, and the corrected one
    is read where it is said again); and those the speaker takes back, in the next sentence or
    in the same one. ``by_turn``: each turn's sentences, turns in order."""
    # (start, end) of what was said wrong, the numbers said instead, the types they may be of,
    # and whether the numbers said instead are in the same sentence (its dose is mended there)
    wrong: list[tuple[int, int, frozenset[str], frozenset[str], bool]] = []
    for before, after in pairwise(by_turn.values()):
        reply = after[0]
        if reply.speaker == before[0].speaker or not _CORRECTION.match(reply.text.lower()):
            continue
        said = frozenset(_FIGURE.findall(reply.text))
        if said:
            wrong.append((before[0].start, before[-1].end, said, _READINGS, False))
    # "... one hundred twelve. No, sorry, eleven comma two.": the speaker's own correction of
    # the sentence before -- in the same turn, or opening their next one ("Sorry, typo! I meant
    # 100 micrograms daily, not 125.", a message after their own)
    said_in_order = [x for turn in by_turn.values() for x in turn]
    for k, y in enumerate(said_in_order):
        said = frozenset(_FIGURE.findall(y.text))
        retracted = bool(_RETRACT.match(y.text.lower()))
        if retracted and not said:  # "no, sorry, that's the old dose. It's 5 now."
            said = _said_next(said_in_order, k)
        if not said or not (retracted or _SELF_CORRECTION.match(y.text.lower())):
            continue
        for x in reversed(said_in_order[:k]):  # the same speaker's last words with a number
            if x.label != y.label or x.speaker != y.speaker:
                break
            if _FIGURE.search(x.text):
                wrong.append((x.start, x.end, said, _OWN_NUMBERS, retracted))
                break
    for turn in by_turn.values():
        for y in turn:  # "It was 38 -- sorry, wrong column -- it was 28"
            if said := _taken_back(y.text):
                wrong.append((y.start, y.end, said, _OWN_NUMBERS, True))
    if not wrong:
        return cands
    out = []
    for c in cands:
        figures = set(_FIGURE.findall(c.content))
        hit, here = next(
            (
                (said, same)
                for a, b, said, types, same in wrong
                if c.memory_type in types and a <= c.start < b and said - figures
            ),
            (None, False),
        )
        if hit is None:
            out.append(c)
        elif here and c.memory_type == "medication" and len(hit) == 1 and len(figures - hit) == 1:
            # "sertraline 100 mg, actually no, 50 mg": the dose said instead, in its place
            (old,), (new,) = figures - hit, hit
            out.append(
                replace(c, content=re.sub(rf"(?<![\d.]){re.escape(old)}(?![\d.])", new, c.content))
            )
    return out


def _dates_the_tests(st: State, s: Sentence, other_asked: bool) -> bool:
    """A sentence that is only a date, said with no question about the tests: it dates them
    again only in the turn that said their date or the next ("... on the 12th. Sorry, the
    14th."), not after another question ("When did you stop smoking?" -- "New Year.") nor
    turns later ("I won't lie, Christmas was... Christmas.")."""
    return st.test_date is not None and not other_asked and s.turn - st.test_date[1] <= _TEST_TURNS


#: how many turns after the tests' date a date said alone may correct it
_TEST_TURNS = 1


def _the_change(x: Result, st: State) -> bool:
    """A vital sign's value a quarter or less of the last one read of it in the conversation
    ("Let's get you on the scales... 91.5 kilos." -- "Four and a half kilos! I'll take
    that.", "That's about three and a half kilos", or the baby's "She weighs 4.6 kg"): no
    reading of the patient's -- the amount said back, or another person's. (A result of a
    test of the blood may fall that far: it is read.)"""
    said, v = st.values.get(x.analyte.id, []), as_number(x.value)
    return x.analyte.kind == "vital" and v is not None and bool(said) and v <= said[-1] / 4


def _record(x: Result, st: State) -> None:
    if (v := as_number(x.value)) is not None:
        st.values.setdefault(x.analyte.id, []).append(v)


class ReadingRules:
    """The rules of results and vital signs."""

    @staticmethod
    def _test_asked(s: Sentence, r: Named, st: State) -> None:
        """A clinician's question that says when a test was done ("You had the breathing test
        at the lab last Thursday?"): the date of the results said next, as a statement's is
        (the answer confirms it, or corrects it with a date of its own)."""
        if s.speaker != "clinician" or not r.dates or not told_as_done(s.text):
            return
        if _SCANS.search(s.low):
            st.scan_date = (r.dates[-1], s.turn, s.start, s.end)
        elif _TESTS.search(s.low):
            st.test_date = (r.dates[-1], s.turn, s.start, s.end)

    def _readings(self, s: Sentence, r: Named, st: State) -> Iterator[Item]:
        conf = 0.9 if s.speaker == "clinician" else 0.8
        yield from self._qualitative(s, r, conf)
        found = results(s, r, st)
        only_date = len(r.dates) == 1 and not re.search(
            r"\w", s.text[: r.dates[0].start] + s.text[r.dates[0].end :]
        )
        scan_asked = st.question is not None and bool(_SCANS.search(st.question[0].low))
        asked = st.question is not None and bool(_TESTS.search(st.question[0].low))
        other_asked = st.question is not None and not asked  # "When did you stop smoking?"
        if st.test_date_before is not None and st.test_date and st.test_date[1] != s.turn:
            st.test_date, st.test_date_before = st.test_date_before, None
        if r.dates and (_SCANS.search(s.low) or (only_date and scan_asked)):
            # "They did the echo on the fifth": the date of the scan's results said next
            st.scan_date = (r.dates[-1], s.turn, s.start, s.end)
        elif r.dates and (
            _TESTS.search(s.low) or (only_date and (asked or _dates_the_tests(st, s, other_asked)))
        ):
            # "I had my kidney bloods done yesterday." / "Your blood tests from the 12th of May" /
            # "When were the bloods?" -- "14.03.2026.": the date of the results said next, in
            # this conversation, until another is said -- or, said of the result just named
            # ("That was actually from the fasting sample on the 28th"), until the turn ends
            if st.test_date and st.test_date[1] != s.turn and _THAT_ONE.match(s.text):
                st.test_date_before = st.test_date
            st.test_date = (r.dates[-1], s.turn, s.start, s.end)
        carried = st.test_date
        if st.scan_date is not None and s.turn - st.scan_date[1] <= _SCAN_TURNS:
            carried = st.scan_date
        for x in found:
            if _the_change(x, st):
                continue  # "91.5 kilos. You were 96." -- "Four and a half kilos!": said back
            _record(x, st)
            shown = names.quantity(x.value, x.unit)
            text = f"Patient's {x.said or x.analyte.display} was {shown}"
            created = None
            dated_by = None
            if x.date is not None:
                text += f" {x.date.phrase}"
                created = x.date.at
            elif carried is not None and x.analyte.kind == "lab" and st.stay is None:
                text += f" {carried[0].phrase}"  # the date's own words are its evidence
                created, dated_by = carried[0].at, (carried[2], carried[3])
            mtype = x.analyte.memory_type
            yield mtype, text, conf, created, s.start, s.end, dated_by

    @staticmethod
    def _qualitative(s: Sentence, r: Named, conf: float) -> Iterator[Item]:
        """A test read as positive or negative ("Your chlamydia test ... came back positive",
        "The COVID test was negative"): its result, dated by what is said beside it."""
        lex = lexicon()
        for a, b, analyte in r.analytes:
            if not analyte.qualitative:
                continue
            words = _WORDS_AFTER.match(s.low, b)
            tail = s.low[b : b + 60]
            before = _FOUND_FOR.search(s.low, max(0, a - 40), a)
            if before is not None:  # "the urine dip is positive for nitrites"
                words, tail = before, before.group(1)
            toks = re.findall(r"[a-z]+", tail)
            found = lex.qualitative.find(toks, toks)
            if words is None or not found:
                continue
            when = date_for(r, a, b)
            on = f" {when.phrase}" if when else ""
            text = f"Patient's {analyte.display} was {found[0].value}{on}"
            yield "lab_result", text, conf, when.at if when else None, s.start, s.end
