"""Issue 31: conversations read for the right person. The held-out gate (the test half of
``eval/conversations``, run, never read: the floor is what the reader reaches, so a change that
loses facts or proposes another person's fact fails here), then each mechanism on sentences
written for these tests (none from the held-out transcripts)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

import memory_core as mc
from eval import conversations as conv
from memory_core.embedding import HashingEmbedder
from memory_core.ingest.llm import LLMExtractor

NOW = datetime(2026, 11, 20, 18, tzinfo=UTC)
PID = "HX-9001"


# --- the held-out gate -----------------------------------------------------------------------
#: Measured on the test half (21 transcripts, 160 facts, 59 supersedes links) on main 1199ed2,
#: found raised to what main 6a0f24b reaches, then to 91 (2026-12-05: OTC products, a relative
#: named then "she"), then to 93 (a weight "the scale said"; what "she" did to "me": "she put
#: me on ..."); wrong dates raised from 12 to 13 by the latter, which proposes one fact that
#: was not proposed at all before, with a date the key does not give it; superseded raised to
#: 46 (a newer result written as another type than the older sends the older to a reviewer);
#: then found 95, superseded 48 and wrong dates 14 (2026-12-06: a pair of values shaped like a
#: blood pressure, "118/76", is one where no test is named -- ten more facts found over the
#: test halves, one of them here proposed where it was not before, with a date the key does not
#: give it), then found 99 (a questionnaire's score as an observation, a list item read to its
#: comma), then 100 found, 49 superseded (the rest of that session's mechanisms); then 50
#: superseded and wrong dates 15 (2026-12-06, the eleventh session: a relative after "for",
#: "with", "to" is no subject -- "a carer for your mother", "I live with my son" -- so a social
#: change is proposed where it was not before, superseding its prior, dated at the session where
#: the key gives an earlier day); wrong dates 16 (2026-12-07, the twentieth session: a
#: summing-up's items read one by one -- one fact not proposed at all before is now proposed,
#: with a date the key does not give it; found the same), then found 101 and forbidden 5 at
#: that session's end; superseded lowered to 49 (2026-12-07, the twenty-sixth session: a rate
#: of change, "N kg in M days", is no reading -- the one proposal it removes from these test
#: halves, checked by a count without reading its text, is a body weight under 10 kg, and it
#: had superseded the patient's weight); the issue's targets (75 %, 0, 0, 80 %) are in
#: docs/ingest.md beside them, not met.
FLOOR = {"found": 101, "forbidden": 5, "wrong_dates": 16, "superseded": 49}


def test_the_held_out_test_half_holds_its_floor() -> None:
    outs = conv.run_all(conv.load(conv.SETS, "test"), "hashing")
    s = conv.summary(outs)
    assert s["transcripts"] == 21 and s["facts"] == 160 and s["links"] == 59
    assert s["found"] >= FLOOR["found"], s
    assert s["forbidden"] <= FLOOR["forbidden"], s
    assert s["wrong_dates"] <= FLOOR["wrong_dates"], s
    assert s["superseded"] >= FLOOR["superseded"], s


def test_the_fresh_tens_test_half_holds_its_first_run() -> None:
    """Set c (ten transcripts by a third author, frozen on main 43e60c2) -- its test half's first
    run, before any change made with its dev half: 19 / 47 facts, 8 wrong dates, 0 forbidden,
    8 / 14 superseded (the issue's target of 75 % is not met); raised to what main 6a0f24b
    reaches: 20 found, 7 wrong dates; then 21 found, 8 wrong dates: a dose said after the drug
    alone (one more fact found, and one more proposed without the date the key gives it --
    before, not proposed at all); 22 found (a clinician noting a preference); 24 found, 6
    wrong dates (a dated answer to a question in the past tense tells a story); 25 found, 9
    superseded (a unit that names its test: "That's 104.2 kilograms"); 8 wrong dates (2026-12-06:
    a medicine read out in a list is read up to its item's comma, "So: donepezil 10 mg in the
    mornings, doxazosin down to 2 mg, ..." -- three more facts found on other test halves, and
    two proposed here that were not, dated the session where the key gives their start)."""
    s = conv.summary(conv.run_all(conv.load(["c"], "test"), "hashing"))
    assert s["transcripts"] == 5 and s["facts"] == 47 and s["links"] == 14
    assert s["found"] >= 26 and s["forbidden"] == 0 and s["wrong_dates"] <= 8, s  # 2026-12-06
    assert s["superseded"] >= 9, s


def test_the_fourth_authors_test_half_holds_its_first_run() -> None:
    """Set d (twelve transcripts in new settings by a fourth author, frozen on main ba76e58)
    -- its test half's first run, before any change made with its dev half: 41 / 96 facts,
    15 wrong dates, 1 forbidden, 14 / 31 superseded (the issue's targets are not met); raised
    to what main eab27f2 reaches: 45 found, 13 wrong dates, 17 superseded; then 46 found, 12
    wrong dates (d07 was read once, as a format sample, before the mechanisms that moved it);
    48 found, 18 superseded (a clinician noting a preference); 19 superseded (a result across
    types); 53 found, 20 superseded (2026-12-06: a pair shaped like a blood pressure, a
    questionnaire's score as an observation, a list item read to its comma); 54 found, 21
    superseded (a word of a condition's name is no person)."""
    s = conv.summary(conv.run_all(conv.load(["d"], "test"), "hashing"))
    assert s["transcripts"] == 8 and s["facts"] == 96 and s["links"] == 31
    assert s["found"] >= 57 and s["forbidden"] <= 1 and s["wrong_dates"] <= 11, s  # 2026-12-06
    assert s["superseded"] >= 21, s


def test_the_fifth_authors_test_half_holds_its_first_run() -> None:
    """Set e (twelve transcripts by a fifth author, frozen on main 93f6a8a) -- its test half's
    first run, before any change made with its dev half: 45 / 84 facts, 6 wrong dates, 0
    forbidden, 14 / 24 superseded (the issue's targets are not met); raised to what main
    reaches at the end of that session: 47 found; then 48 found, 5 wrong dates ("she put me on
    ..."); 49 found, 2 wrong dates (a day said alone reads in the month the conversation
    named); 50 found (a relative's illness said with an apostrophe: "my mum's had ..."); 15
    superseded (a result across types); 51 found (a purpose makes only what follows it
    supposed); 52 found (", so I'm ..." is a clause of its own); 56 found, 16 superseded
    (2026-12-06: the tenth session's mechanisms, docs/ingest.md); 57 found, 1 wrong date, 17
    superseded (the eleventh session's); then 16 superseded: a score's "18 out of 30" had
    proposed a second score of 30 (a wrong fact), and that proposal had been what superseded
    the prior score -- checked as a yes/no on the test half, no text read; 60 found at its
    end."""
    s = conv.summary(conv.run_all(conv.load(["e"], "test"), "hashing"))
    assert s["transcripts"] == 7 and s["facts"] == 84 and s["links"] == 24
    assert s["found"] >= 60 and s["forbidden"] == 0 and s["wrong_dates"] <= 1, s
    assert s["superseded"] >= 16, s


def test_the_sixth_authors_check_holds_its_first_run() -> None:
    """Set f (eight transcripts by a sixth author, a check of the whole, frozen on main
    86cca7b) -- its test half's first run: 37 / 87 facts, 27 wrong dates, 0 forbidden, 19 / 27
    superseded (the issue's targets are not met); then 38 found, 26 wrong dates (a dated answer
    to a question in the past tense); 20 superseded (", so I'm ..." is a clause of its own); 40
    found, 21 superseded (2026-12-06: the tenth session's mechanisms, docs/ingest.md)."""
    s = conv.summary(conv.run_all(conv.load(["f"], "test"), "hashing"))
    assert s["transcripts"] == 7 and s["facts"] == 87 and s["links"] == 27
    assert s["found"] >= 41 and s["forbidden"] == 0 and s["wrong_dates"] <= 26, s  # 2026-12-06
    assert s["superseded"] >= 21, s


def test_the_seventh_authors_test_half_holds_its_first_run() -> None:
    """Set g (twelve transcripts by a seventh author, frozen on main 1fca095) -- its test half's
    first run, before any change made with its dev half: 47 / 96 facts, 19 wrong dates, 3
    forbidden, 15 / 22 superseded (the issue's targets are not met); then, with changes made
    with its dev half and others' ("since" before a day, a value before another measurement, a
    dated answer to a question in the past tense): 50 found, 17 wrong dates; 51 found ("my
    mum's had ..."); 54 found (2026-12-06: the tenth session's mechanisms); 56 found, 2
    forbidden, 16 superseded (the eleventh: a social prescriber's and a link worker's words are
    the service's, not a carer's -- their plans are plans). "Wrong dates" counts proposals,
    not facts: that change gave one fact already dated wrongly a second proposal with a wrong
    date (17 -> 18 proposals; the facts dated wrongly are as many as before). Then 57 found
    and 20 wrong dates: social words the reader lacked (benefits, leave from work, nursery,
    power of attorney, damp and mould, ...) found one more fact and proposed two that were not
    proposed at all, dated at the session where the key gives an earlier day. 58 found and 17
    superseded at the session's end. 21 wrong dates (the seventeenth session): a dose changed
    "to 1000" (no unit said) or by "put it up" is proposed where nothing was, dated otherwise
    than the key says."""
    s = conv.summary(conv.run_all(conv.load(["g"], "test"), "hashing"))
    assert s["transcripts"] == 7 and s["facts"] == 96 and s["links"] == 22
    assert s["found"] >= 58 and s["forbidden"] <= 2 and s["wrong_dates"] <= 21, s
    assert s["superseded"] >= 17, s


def test_the_eighth_authors_check_holds_its_first_run() -> None:
    """Set h (eight transcripts by an eighth author, a check of the whole at the end of the
    eighth session, frozen on main c694c7f) -- its test half's first run: 31 / 51 facts, 4
    wrong dates, 1 forbidden, 10 / 12 superseded (the issue's targets are not met); then 32
    found, 11 superseded; 3 wrong dates (the seventeenth session: a dose changed "to 1000" or
    by "put it up", proposed where nothing was, dated otherwise than the key says)."""
    s = conv.summary(conv.run_all(conv.load(["h"], "test"), "hashing"))
    assert s["transcripts"] == 4 and s["facts"] == 51 and s["links"] == 12
    assert s["found"] >= 33 and s["forbidden"] <= 1 and s["wrong_dates"] <= 3, s  # 2026-12-06
    assert s["superseded"] >= 11, s


def test_the_ninth_authors_check_holds_its_first_run() -> None:
    """Set i (eight transcripts by a ninth author, a check of the whole at the end of the
    ninth session, frozen and measured once on main 9932247) -- its test half's first run:
    48 / 82 facts, 4 wrong dates, 4 forbidden, 9 / 12 superseded (the targets are not met);
    then 50 found (2026-12-06: the tenth session's mechanisms). 8 superseded since a change
    said for a day still ahead is proposed as a plan (2026-12-06, the fourteenth session): the
    link it loses is a medication change its key dates after the session, which the reader had
    proposed as made on an earlier day (counted then as a wrong date)."""
    s = conv.summary(conv.run_all(conv.load(["i"], "test"), "hashing"))
    assert s["transcripts"] == 6 and s["facts"] == 82 and s["links"] == 12
    assert s["found"] >= 51 and s["forbidden"] <= 4 and s["wrong_dates"] <= 4, s  # 2026-12-06
    assert s["superseded"] >= 8, s


def test_the_tenth_authors_fresh_ten_hold_their_first_run() -> None:
    """Set j (ten transcripts by a tenth author, issue 31's ten fresh transcripts, written at
    the start of the tenth session and measured once at its end on main 24dcb31) -- its test
    half's first run: 54 / 95 facts, 7 wrong dates, 0 forbidden, 17 / 27 superseded (the
    targets are not met)."""
    s = conv.summary(conv.run_all(conv.load(["j"], "test"), "hashing"))
    assert s["transcripts"] == 7 and s["facts"] == 95 and s["links"] == 27
    assert s["found"] >= 56 and s["forbidden"] == 0 and s["wrong_dates"] <= 7, s  # 2026-12-06
    assert s["superseded"] >= 17, s


def test_the_eleventh_authors_ten_hold_their_first_run() -> None:
    """Set k (ten transcripts by an eleventh author, written at the start of the eleventh
    session and measured once as they came on main f02dff3, the reader of 248bed7) -- its test
    half's first run: 29 / 59 facts, 8 wrong dates, 2 forbidden, 7 / 13 superseded (the targets
    are not met: a later change may only do better)."""
    s = conv.summary(conv.run_all(conv.load(["k"], "test"), "hashing"))
    assert s["transcripts"] == 4 and s["facts"] == 59 and s["links"] == 13
    assert s["found"] >= 32 and s["forbidden"] <= 2 and s["wrong_dates"] <= 6, s  # session's end
    assert s["superseded"] >= 7, s


def test_the_twelfth_authors_ten_hold_their_first_run() -> None:
    """Set l (ten transcripts by a twelfth author, written at the start of the fourteenth
    session and measured once as they came at its end, on main 14d8886, the reader of that
    session's last change) -- its test half's first run: 23 / 43 facts, 1 wrong date, 0
    forbidden, 6 / 7 superseded (the found target is not met: a later change may only do
    better). 5 / 7 superseded since the twenty-third session: one day said two ways alone in
    its sentence ("New Year's Day, the 1st of January.") dates what was just told -- on the
    test halves together 1 fact found more and 3 wrong dates fewer, and here one proposal
    dated earlier than the prior memory it had replaced (the test half's text unread)."""
    s = conv.summary(conv.run_all(conv.load(["l"], "test"), "hashing"))
    assert s["transcripts"] == 3 and s["facts"] == 43 and s["links"] == 7
    assert s["found"] >= 23 and s["forbidden"] <= 0 and s["wrong_dates"] <= 1, s
    assert s["superseded"] >= 5, s


def test_the_thirteenth_authors_ten_hold_their_first_run() -> None:
    """Set m (ten transcripts by a thirteenth author, written at the start of the sixteenth
    session, frozen at 4681a07 and measured as they came on main a8c2aec and a3586cb: the
    same) -- its test half's first run: 24 / 83 facts, 5 wrong dates, 2 forbidden, 7 / 18
    superseded; with numbers of more than one word said in words read as digits, 29 found, 12
    wrong dates (values read now, dated by words the dates reader does not know: "the
    thirtieth"), 9 superseded (the targets are not met: a later change may only do better);
    1 forbidden since the twentieth session."""
    s = conv.summary(conv.run_all(conv.load(["m"], "test"), "hashing"))
    assert s["transcripts"] == 5 and s["facts"] == 83 and s["links"] == 18
    assert s["found"] >= 29 and s["forbidden"] <= 1 and s["wrong_dates"] <= 12, s
    assert s["superseded"] >= 9, s


def test_the_fourteenth_authors_ten_hold_their_first_run() -> None:
    """Set n (ten transcripts by a fourteenth author, written at the start of the seventeenth
    session, frozen before any change made with them and measured as they came on the
    session's starting main f681928, its prompt's type words read as the store's) -- its test
    half's first run: 58 / 122 facts, 23 wrong dates, 4 forbidden, 22 / 29 superseded; at the
    session's end 61 found, 20 wrong dates, 23 superseded (the targets are not met: a later
    change may only do better). 60 found and 21 superseded since the eighteenth session: a
    change word after a drug that is a claim of what it does, with an object of its own ("With
    <x>, <drug> increases the risk of ..."), no longer proposes the drug's dose increased --
    two such value-less proposals had matched a fact's words and superseded its prior by the
    drug's name alone. 62 found since the twentieth session."""
    s = conv.summary(conv.run_all(conv.load(["n"], "test"), "hashing"))
    assert s["transcripts"] == 7 and s["facts"] == 122 and s["links"] == 29
    assert s["found"] >= 62 and s["forbidden"] <= 4 and s["wrong_dates"] <= 20, s
    assert s["superseded"] >= 21, s


def test_the_fifteenth_authors_ten_hold_their_first_run() -> None:
    """Set o (ten transcripts by a fifteenth author, written at the start of the eighteenth
    session, frozen before any change made with them and measured as they came on the
    session's starting main 1c909c4, its prompt's "family" read as the store's "family
    history") -- its test half's first run: 36 / 64 facts, 8 wrong dates, 2 forbidden, 10 / 13
    superseded; the same at the session's end (the dev half 56 -> 69 / 99, 10 -> 4 wrong
    dates, 3 -> 0 forbidden). The targets are not met: a later change may only do better.
    38 found since the twentieth session."""
    s = conv.summary(conv.run_all(conv.load(["o"], "test"), "hashing"))
    assert s["transcripts"] == 4 and s["facts"] == 64 and s["links"] == 13
    assert s["found"] >= 38 and s["forbidden"] <= 2 and s["wrong_dates"] <= 8, s
    assert s["superseded"] >= 10, s


def test_the_sixteenth_authors_ten_hold_their_first_run() -> None:
    """Set p (ten transcripts by a sixteenth author, written at the start of the nineteenth
    session, frozen before any change made with them and measured as they came on a002854, its
    prompt's "social_history" read as the store's "social") -- its test half's first run: 80 /
    127 facts, 8 wrong dates, 2 forbidden, 19 / 25 superseded (dev 32 / 51, 7, 1, 9 / 11). The
    targets are not met: a later change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["p"], "test"), "hashing"))
    assert s["transcripts"] == 7 and s["facts"] == 127 and s["links"] == 25
    assert s["found"] >= 80 and s["forbidden"] <= 2 and s["wrong_dates"] <= 8, s
    assert s["superseded"] >= 19, s


def test_the_seventeenth_authors_ten_hold_their_first_run() -> None:
    """Set q (ten transcripts by a seventeenth author, written at the start of the twentieth
    session, frozen at f11e108 before any change made with them and measured as they came on
    c87de2f, hashing and MiniLM alike) -- its test half's first run: 44 / 58 facts, 5 wrong
    dates, 3 forbidden, 9 / 9 superseded (dev 82 / 112, 3, 4, 17 / 21); at that session's end
    2 forbidden (a number taken back in its sentence), dev 88 / 112, 3, 0, 18 / 21. The
    forbidden and wrong-date targets are not met: a later change may only do better. One
    wrong date more since the twenty-third session (6): a reaction said in answer to the
    clinician's naming of an allergen is that allergen's (the conversation's other drug's
    before) -- an expected fact no proposal matched is now matched but for its date (the test
    half's text unread; the same change took a relative's allergen off set t's dev half and
    one forbidden proposal off set n's test half)."""
    s = conv.summary(conv.run_all(conv.load(["q"], "test"), "hashing"))
    assert s["transcripts"] == 3 and s["facts"] == 58 and s["links"] == 9
    assert s["found"] >= 44 and s["forbidden"] <= 2 and s["wrong_dates"] <= 6, s
    assert s["superseded"] >= 9, s


def test_the_eighteenth_authors_ten_hold_their_first_run() -> None:
    """Set r (ten transcripts by an eighteenth author, written at the start of the
    twenty-first session, frozen at dcb4e2c before any change made with them and measured as
    they came on the reader of f996329, hashing and MiniLM alike) -- its test half's first run:
    69 / 83 facts, 1 wrong date, 3 forbidden, 19 / 19 superseded (dev 75 / 86, 4, 0, 17 / 18).
    The forbidden and wrong-date targets are not met: a later change may only do better -- but
    for one link: 18 / 19 since a drug's dose is read only up to the next drug named (f438f24),
    which removed one medication proposal of this half that had superseded a prior medicine
    with, in all likelihood, another drug's dose (the text unread; the dev halves lost no link
    and three such wrong doses)."""
    s = conv.summary(conv.run_all(conv.load(["r"], "test"), "hashing"))
    assert s["transcripts"] == 5 and s["facts"] == 83 and s["links"] == 19
    assert s["found"] >= 69 and s["forbidden"] <= 3 and s["wrong_dates"] <= 1, s
    assert s["superseded"] >= 18, s


def test_the_nineteenth_authors_ten_hold_their_first_run() -> None:
    """Set s (ten transcripts by a nineteenth author, written at the start of the
    twenty-second session, frozen at c6ae899 before any change made with them and measured as
    they came on the reader of 9ec3692, hashing and MiniLM alike) -- its test half's first run:
    64 / 90 facts, 6 wrong dates, 4 forbidden, 24 / 27 superseded (dev 52 / 93, 16, 2,
    21 / 26). The found, forbidden and wrong-date targets are not met: a later change may only
    do better."""
    s = conv.summary(conv.run_all(conv.load(["s"], "test"), "hashing"))
    assert s["transcripts"] == 5 and s["facts"] == 90 and s["links"] == 27
    assert s["found"] >= 64 and s["forbidden"] <= 4 and s["wrong_dates"] <= 6, s
    assert s["superseded"] >= 24, s


def test_the_twentieth_authors_ten_hold_their_first_run() -> None:
    """Set t (ten transcripts by a twentieth author, a check of the whole written in the
    twenty-second session, frozen at 4bb3e94 and measured once at its end on the reader of
    b7dbf99 -- the same figures on the session's starting reader, hashing and MiniLM alike):
    its test half's first run, 45 / 76 facts, 24 wrong dates, 4 forbidden, 13 / 16 superseded
    (dev 83 / 107, 11, 12, 19 / 21). The found, forbidden and wrong-date targets are not met: a
    later change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["t"], "test"), "hashing"))
    assert s["transcripts"] == 4 and s["facts"] == 76 and s["links"] == 16
    assert s["found"] >= 45 and s["forbidden"] <= 4 and s["wrong_dates"] <= 24, s
    assert s["superseded"] >= 13, s


def test_the_twenty_first_authors_ten_hold_their_first_run() -> None:
    """Set u (ten transcripts by a twenty-first author, weighted toward another person's own
    health said in the same conversation, written in the twenty-third session and frozen at
    846aa53), measured as it came on the reader of a32e665 -- the same on the session's
    starting reader 30ae8d1, hashing and MiniLM alike: its test half's first run, 48 / 80
    facts, 9 wrong dates, 4 forbidden, 11 / 19 superseded (dev 60 / 85, 13, 2, 18 / 21). The
    targets are not met: a later change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["u"], "test"), "hashing"))
    assert s["transcripts"] == 5 and s["facts"] == 80 and s["links"] == 19
    assert s["found"] >= 48 and s["forbidden"] <= 4 and s["wrong_dates"] <= 9, s
    assert s["superseded"] >= 11, s


def test_the_twenty_second_authors_ten_hold_their_first_run() -> None:
    """Set v (ten transcripts by a twenty-second author, a check of the whole written in the
    twenty-third session, frozen at 24c411a and measured once at its end on the reader of
    4b0b512, hashing and MiniLM alike): its test half's first run, 69 / 108 facts, 11 wrong
    dates, 3 forbidden, 18 / 23 superseded (dev 37 / 72, 10, 3, 10 / 12); on the session's
    starting reader 30ae8d1, 12 wrong dates and 4 forbidden. The targets are not met: a later
    change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["v"], "test"), "hashing"))
    assert s["transcripts"] == 6 and s["facts"] == 108 and s["links"] == 23
    assert s["found"] >= 69 and s["forbidden"] <= 3 and s["wrong_dates"] <= 11, s
    assert s["superseded"] >= 18, s


def test_the_twenty_third_authors_ten_hold_their_first_run() -> None:
    """Set w (ten transcripts by a twenty-third author, weighted toward results and changes
    with their own dates, medication changes in plain speech, social changes, plans,
    observations and preferences; written in the twenty-fourth session, frozen at 903fbc4),
    measured as it came on the reader of d2a28f6, hashing and MiniLM alike: its test half's
    first run, 52 / 87 facts, 9 wrong dates, 4 forbidden, 17 / 21 superseded (dev 54 / 91, 6,
    5, 11 / 17). The targets are not met: a later change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["w"], "test"), "hashing"))
    assert s["transcripts"] == 5 and s["facts"] == 87 and s["links"] == 21
    assert s["found"] >= 52 and s["forbidden"] <= 4 and s["wrong_dates"] <= 9, s
    assert s["superseded"] >= 17, s


def test_the_twenty_fourth_authors_ten_hold_their_first_run() -> None:
    """Set x (ten transcripts by a twenty-fourth author, a check of the whole written in the
    twenty-fourth session, frozen at d90c063 and measured once at its end on the reader of
    196d081, hashing and MiniLM alike): its test half's first run, 60 / 108 facts, 9 wrong
    dates, 0 forbidden, 17 / 19 superseded (dev 37 / 71, 10, 4, 10 / 10); the same test half on
    the session's starting reader d2a28f6. The targets are not met: a later change may only do
    better."""
    s = conv.summary(conv.run_all(conv.load(["x"], "test"), "hashing"))
    assert s["transcripts"] == 6 and s["facts"] == 108 and s["links"] == 19
    assert s["found"] >= 60 and s["forbidden"] <= 0 and s["wrong_dates"] <= 9, s
    assert s["superseded"] >= 17, s


def test_the_twenty_fifth_authors_ten_hold_their_first_run() -> None:
    """Set y (ten transcripts by a twenty-fifth author, weighted toward life changes said in
    plain words, preferences (who may be told what), observations with their start, plans, and
    results and changes dated indirectly; written in the twenty-fifth session, frozen at
    bcf33c4), measured as it came on the reader of 6c6d2ea and on the session's starting reader
    6c6148d alike: its test half's first run, 67 / 129 facts, 13 wrong dates, 2 forbidden,
    16 / 25 superseded (dev 36 / 55, 2, 3, 7 / 14). The targets are not met: a later change may
    only do better."""
    s = conv.summary(conv.run_all(conv.load(["y"], "test"), "hashing"))
    assert s["transcripts"] == 7 and s["facts"] == 129 and s["links"] == 25
    assert s["found"] >= 67 and s["forbidden"] <= 2 and s["wrong_dates"] <= 13, s
    assert s["superseded"] >= 16, s


def test_the_twenty_sixth_authors_ten_hold_their_first_run() -> None:
    """Set z (ten transcripts by a twenty-sixth author, a check of the whole written in the
    twenty-fifth session, frozen at c6399a8 and measured once at its end on the reader of
    aa56dca, hashing and MiniLM alike): its test half's first run, 27 / 52 facts, 1 wrong date,
    1 forbidden, 8 / 14 superseded (dev 78 / 119, 8, 2, 16 / 22); the same on the session's
    starting reader 6c6148d. Its priors are written in the order they were made (one answer
    key lists them otherwise). The targets are not met: a later change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["z"], "test"), "hashing"))
    assert s["transcripts"] == 3 and s["facts"] == 52 and s["links"] == 14
    assert s["found"] >= 27 and s["forbidden"] <= 1 and s["wrong_dates"] <= 1, s
    assert s["superseded"] >= 8, s


def test_the_twenty_seventh_authors_ten_hold_their_first_run() -> None:
    """Set aa (ten transcripts by a twenty-seventh author, a check of the whole written in the
    twenty-sixth session, frozen at a5b1324 and measured once at its end on the reader of
    3bb1ed7, hashing and MiniLM alike): its test half's first run, 45 / 71 facts, 4 wrong
    dates, 0 forbidden, 11 / 15 superseded (dev 62 / 102, 8, 3, 13 / 20); the test half the
    same on the session's starting reader 4e618e6 (dev 60 / 102) and on its last, 6eab09d. The
    targets are not met: a later change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["aa"], "test"), "hashing"))
    assert s["transcripts"] == 4 and s["facts"] == 71 and s["links"] == 15
    assert s["found"] >= 45 and s["forbidden"] <= 0 and s["wrong_dates"] <= 4, s
    assert s["superseded"] >= 11, s


def test_the_twenty_eighth_authors_ten_hold_their_first_run() -> None:
    """Set ab (ten transcripts by a twenty-eighth author, the everyday breadth -- over-the-
    counter and herbal products, events, home readings in lay words, social changes, referrals,
    preferences, vaccines, procedures -- written in the twenty-seventh session, frozen at
    891d647 and measured once at its end, hashing and MiniLM alike): its test half's first run,
    87 / 145 facts, 13 wrong dates, 2 forbidden, 24 / 31 superseded (dev 20 / 36, 3, 1,
    6 / 9), the same on the session's starting reader 0101224. The targets are not met: a
    later change may only do better."""
    s = conv.summary(conv.run_all(conv.load(["ab"], "test"), "hashing"))
    assert s["transcripts"] == 8 and s["facts"] == 145 and s["links"] == 31
    assert s["found"] >= 87 and s["forbidden"] <= 2 and s["wrong_dates"] <= 13, s
    assert s["superseded"] >= 24, s


def test_the_twenty_ninth_authors_ten_hold_their_first_run() -> None:
    """Set ac (ten transcripts by a twenty-ninth author, medication reviews and long-term
    conditions -- polypharmacy, mental-health and chronic-pain reviews with scores, results
    talked through with their dates, lifestyle and social changes, plans, preferences --
    written in the twenty-eighth session, frozen at 5db4322 and measured once at its end,
    hashing and MiniLM alike): its test half's first run, 44 / 71 facts, 2 wrong dates,
    8 forbidden, 12 / 15 superseded (dev 64 / 106, 10, 5, 17 / 22); on the session's starting
    reader 55e641b 43 / 71, the rest the same. The targets are not met: a later change may
    only do better."""
    s = conv.summary(conv.run_all(conv.load(["ac"], "test"), "hashing"))
    assert s["transcripts"] == 4 and s["facts"] == 71 and s["links"] == 15
    assert s["found"] >= 44 and s["forbidden"] <= 8 and s["wrong_dates"] <= 2, s
    assert s["superseded"] >= 12, s


def test_the_projects_own_twenty_stay_read() -> None:
    s = conv.summary(conv.run_all(conv.load(["dialogue"]), "hashing"))
    assert s["found"] >= 99 and s["forbidden"] == 0 and s["wrong_dates"] == 0, s


# --- the mechanisms ----------------------------------------------------------------------------
def propose(text: str, now: datetime = NOW) -> mc.ingest.Proposals:
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=lambda: now)
    try:
        return eng.extract_memories(PID, f"Date: {now:%Y-%m-%d}\n{text}", now=now)
    finally:
        eng.store.close()


def said(text: str, now: datetime = NOW) -> list[tuple[str, str, str]]:
    return [(p.memory_type, p.whose, p.content) for p in propose(text, now)]


def test_a_relatives_condition_is_family_history_never_the_patients() -> None:
    got = said("Nurse: Any illness in the family?\nPatient: My father had a stroke at 66.")
    assert [(t, w) for t, w, _c in got] == [("condition", "family history")]
    assert "father" in got[0][2] and "stroke" in got[0][2]


def test_another_persons_medicine_is_not_proposed() -> None:
    got = said(
        "GP: How are you getting on?\n"
        "Patient: Fine. My wife takes bisoprolol for her heart. She's on warfarin too.\n"
        "Patient: I take paracetamol when my back is bad."
    )
    contents = " ".join(c for _t, _w, c in got).lower()
    assert "bisoprolol" not in contents and "warfarin" not in contents
    assert any(t == "medication" and "paracetamol" in c for t, _w, c in got)


def test_a_relative_speaking_of_themself_proposes_nothing_for_the_patient() -> None:
    got = said(
        "GP: Hello Mr Dale.\nDaughter: I'm allergic to penicillin myself, and I work nights.\n"
        "Daughter: Dad takes donepezil 10 mg at night."
    )
    contents = " ".join(c for _t, _w, c in got).lower()
    assert "penicillin" not in contents and "nights" not in contents
    assert any("donepezil" in c for _t, _w, c in got)


@pytest.mark.parametrize(
    "turn",
    [
        "Daughter: That's me, I'm the one allergic to latex, not Mum.",
        "Daughter: I'm allergic to latex, rather than her.",
    ],
)
def test_a_relative_who_says_it_is_theirs_not_the_patients_proposes_nothing(turn: str) -> None:
    """'I'm the one allergic to latex, not Mum': the patient named only to say it is not
    theirs -- the daughter's allergy (it had been proposed as the patient's latex allergy; set
    o, dev half)."""
    got = said(f"GP: Did she have the shingles vaccine?\n{turn}")
    assert not any("latex" in c.lower() for _t, _w, c in got), got


def test_a_decided_plan_is_a_care_plan_a_suggestion_is_not() -> None:
    got = said(
        "Doctor: I'll refer you to the podiatry clinic and we'll repeat the kidney bloods in "
        "three months.\n"
        "Doctor: If the sugars stay high we might think about insulin one day."
    )
    plans = [c for t, _w, c in got if t == "care_plan"]
    assert plans and "podiatry" in plans[0]
    assert not any("insulin" in c.lower() for _t, _w, c in got)


def test_a_portal_message_dates_relative_words_by_its_own_send_date() -> None:
    got = propose(
        "[2026-11-12 09:10] Patient: I had my bloods done at the surgery yesterday. "
        "The potassium was 5.1 and the sodium 139.\n"
        "[2026-11-19 16:00] Nurse: Thanks, noted.",
        NOW,
    )
    dated = {p.content: p.created_at.date().isoformat() for p in got}
    k = next(c for c in dated if "potassium" in c)
    assert dated[k] == "2026-11-11"


def test_a_thread_whose_header_gives_its_first_day_dates_later_messages_by_theirs() -> None:
    """A thread exported with the day it began as its date and read once it ended: a later
    message's fact takes that message's send date, not the header's."""
    text = (
        "Session: HX-9001 portal thread\nDate: 2026-11-10\n"
        "[2026-11-10 08:00] Patient: Morning, quick question about my inhaler.\n"
        "[2026-11-14 19:30] Patient: Update: my peak flow was 410 this evening.\n"
    )
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=lambda: NOW)
    try:
        got = eng.extract_memories(PID, text, now=NOW)
    finally:
        eng.store.close()
    pf = [p for p in got if "peak flow" in p.content]
    assert pf and pf[0].created_at.date().isoformat() == "2026-11-14"


def test_a_message_stamped_with_its_date_in_words_is_dated_by_it() -> None:
    """ "[Wed 11 Nov 2026 09:10] Patient:" and "[Nov 14, 2026 7:30 PM] Nurse:" stamp their
    messages as "[2026-11-11 09:10]" does: a message's relative words ("yesterday") are read
    against its own send date, and a later message's fact takes its date."""
    text = (
        "[Tue 10 Nov 2026 08:00] Patient: Morning, quick question about my inhaler.\n"
        "[Thu 12 Nov 2026 09:10] Patient: I had my bloods done at the surgery yesterday. "
        "The potassium was 5.1.\n"
        "[Nov 14, 2026 7:30 PM] Patient: Update: my peak flow was 410 this evening.\n"
    )
    dated = {p.content: p.created_at.date().isoformat() for p in propose(text, NOW)}
    k = next(c for c in dated if "potassium" in c)
    assert dated[k] == "2026-11-11", dated
    pf = next(c for c in dated if "peak flow" in c)
    assert dated[pf] == "2026-11-14", dated


def test_european_dates_and_decimal_commas() -> None:
    got = propose("Patient: The HbA1c on 03.11.2026 was 7,4 %.")
    hba1c = [p for p in got if "HbA1c" in p.content]
    assert hba1c and "7.4" in hba1c[0].content
    assert hba1c[0].created_at.date().isoformat() == "2026-11-03"


def test_a_result_outside_physiology_is_rejected_with_the_reason() -> None:
    got = propose("Nurse: What did the scales say?\nPatient: My body weight was 0 kg today.")
    assert not any("0 kg" in p.content for p in got)
    assert any("outside physiology" in r.reason for r in got.rejected)


# --- the model extractor's checks (issue 30's, on a transcript) --------------------------------
TRANSCRIPT = (
    "Clinician: How is the blood pressure?\n"
    "Patient: My home readings are 138/84. My mother had a stroke.\n"
    "Patient: My husband takes atenolol.\n"
)


def item(content: str, evidence: str, mtype: str = "vital_sign", **kw: Any) -> dict[str, Any]:
    return {
        "patient_id": PID,
        "memory_type": mtype,
        "content": content,
        "importance": None,
        "evidence": evidence,
        "date": None,
        "confidence": 0.9,
        "whose": kw.get("whose", "patient"),
    }


def parse(items: list[Any]) -> Any:
    return LLMExtractor("stub", client=object()).parse(items, PID, TRANSCRIPT)


def test_model_items_pass_the_quote_value_and_people_checks() -> None:
    out = parse(
        [
            item("Patient's blood pressure was 138/84", "home readings are 138/84"),
            item("Patient's blood pressure was 150/90", "home readings are 138/84"),
            item("Patient's blood pressure was 138/84", "readings are 138/8"),
            item("Patient takes atenolol", "My husband takes atenolol.", "medication"),
            item(
                "Family history: mother had a stroke",
                "My mother had a stroke.",
                "condition",
                whose="family history",
            ),
            item(
                "Family history: stroke",
                "home readings are 138/84",
                "condition",
                whose="family history",
            ),
        ]
    )
    assert [c.content for c in out.candidates] == [
        "Patient's blood pressure was 138/84",
        "Family history: mother had a stroke",
    ]
    assert out.candidates[1].whose == "family history"
    reasons = [r.reason for r in out.rejected]
    assert "150" in reasons[0] and "does not say" in reasons[0]
    assert "whole words" in reasons[1]
    assert "another person" in reasons[2]
    assert "names no relative" in reasons[3]


def test_a_quote_with_look_alike_characters_maps_back_to_the_transcript() -> None:
    spoofed = "home r\u0435adings are 138/84"  # a Cyrillic e
    out = parse([item("Patient's blood pressure was 138/84", spoofed)])
    assert len(out.candidates) == 1
    c = out.candidates[0]
    assert TRANSCRIPT[c.start : c.end] == "home readings are 138/84"


def test_at_most_twenty_items_are_read() -> None:
    out = parse([item("Patient's blood pressure was 138/84", "readings are 138/84")] * 25)
    assert len(out.candidates) == 20
    assert len(out.rejected) == 5 and "more than 20" in out.rejected[0].reason


def test_the_circuit_breaker_stops_calling_a_failing_model() -> None:
    calls = []

    class Failing:
        def with_options(self, **_kw: Any) -> Failing:
            return self

        @property
        def chat(self) -> Any:
            import openai

            class C:
                class completions:
                    @staticmethod
                    def create(**_kw: Any) -> Any:
                        calls.append(1)
                        raise openai.APIConnectionError(request=None)  # type: ignore[arg-type]

            return C

    t = [0.0]
    ext = LLMExtractor("stub", client=Failing(), clock=lambda: t[0])
    for _ in range(5):
        with pytest.raises(mc.ingest.ExtractionError):
            ext.extract(PID, TRANSCRIPT, now=NOW)
    assert len(calls) == 3  # the breaker opened after three failures in a row
    t[0] = 61.0
    with pytest.raises(mc.ingest.ExtractionError):
        ext.extract(PID, TRANSCRIPT, now=NOW)
    assert len(calls) == 4  # after the cool-down one call tries again


def test_deferred_and_declined_treatments_are_no_medicine() -> None:
    got = said(
        "Doctor: I'm not going to start a statin yet.\n"
        "Doctor: Next month we'll start you on bisoprolol 2.5 mg once a day.\n"
        "Doctor: We'll review you in 3 months and start ramipril if the pressure stays up.\n"
        "Patient: I was thinking of buying some St John's wort for my mood."
    )
    words = " ".join(c for _t, _w, c in got).lower()
    for drug in ("statin", "bisoprolol", "ramipril", "wort"):
        assert drug not in words, got


def test_a_relative_answering_of_their_own_health_is_theirs() -> None:
    got = said(
        "Doctor: Hello Mr Lee. How is your own blood pressure, Mrs Lee?\n"
        "Wife: Much better on the amlodipine 5 mg, thank you.\n"
        "Doctor: Maria, are you still on your inhaler?\n"
        "Daughter (Maria): Yes, the salbutamol, two puffs.\n"
        "Doctor: And Mr Lee, are you still taking the metformin 500 mg twice a day?\n"
        "Patient: Yes."
    )
    words = " ".join(c for _t, _w, c in got).lower()
    assert "amlodipine" not in words and "salbutamol" not in words
    assert "metformin" in words


def test_a_relatives_possession_is_theirs() -> None:
    got = said("Patient: I collect the alendronate for my wife, and my husband's inhaler.")
    assert got == []


def test_a_value_said_alone_after_its_measurement_and_a_decided_stop() -> None:
    got = said(
        "Doctor: Now your blood pressure. ... 148 over 90.\n"
        "Doctor: I'm going to stop the tamsulosin as of tonight."
    )
    assert ("vital_sign", "patient", "Patient's blood pressure was 148/90") in got
    assert any(t == "medication" and "stopped tamsulosin" in c for t, _w, c in got)


def test_a_test_date_dates_the_results_said_later() -> None:
    got = propose(
        "Doctor: Your blood tests from the 12th of November came back.\n"
        "Patient: Okay.\n"
        "Doctor: Your potassium was 5.9, which is high.",
    )
    k = next(p for p in got if "potassium" in p.content)
    assert k.created_at.date().isoformat() == "2026-11-12"
    assert "12th of November" in k.dated_by and "12th" not in k.evidence


def test_a_date_said_of_one_result_just_named_dates_only_that_turns_results() -> None:
    """'That was actually from the fasting sample on the 28th of October': the date of the
    result just named, said against the date the call gave its results -- the results of later
    turns keep the call's date (they had all taken the 28th; set o, dev half)."""
    got = propose(
        "Nurse: I'm ringing with your blood results, the ones we took on the 12th of November.\n"
        "Patient: Go on.\n"
        "Nurse: Next, cholesterol. That was actually from the fasting sample on the 28th of"
        " October, the week before. Total cholesterol 5.8.\n"
        "Patient: Good.\n"
        "Nurse: Then your thyroid. Your TSH is 6.2.",
    )
    dates = {
        p.content.split(" was ")[0]: p.created_at.date().isoformat()
        for p in got
        if " was " in p.content
    }
    assert dates["Patient's total cholesterol"] == "2026-10-28", dates
    assert dates["Patient's TSH"] == "2026-11-12", dates


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ("Patient: No, that's one thirty-eight. My eights look like fives, sorry.", []),
        ("Patient: No no, 9.4, not 8.4.", []),
        ("Patient: Yes, that's about what I get at home.", ["158/86"]),
        ("Patient: No, I don't take it at home.", ["158/86"]),
    ],
)
def test_a_reading_the_other_speaker_corrects_at_once_is_not_proposed(
    reply: str, kept: list[str]
) -> None:
    """'So your home average is 158 over 86.' -- 'No, that's 138.': the reading said is the
    one corrected, not the patient's (it had been proposed beside the corrected one; set o,
    dev half). A reply that opens with "no" and gives another number of the reading corrects
    it; agreeing, or a "no" with no number, corrects nothing."""
    first = "Clinician: So your home average is... one fifty-eight over eighty-six."
    if "9.4" in reply:
        first = "Nurse: Your HbA1c came back at 8.4 %."
    got = [c for _t, _w, c in said(f"{first}\n{reply}") if "158" in c or "8.4" in c]
    assert [x for x in ("158/86", "8.4") if any(x in c for c in got)] == kept, got


@pytest.mark.parametrize(
    "turn",
    [
        "Doctor: Ankle swelling is the main one. If your ankles swell up, let me know.",
        "Nurse: Constipation is the common one.",
        "Nurse: A hoarse voice can happen with steroid inhalers.",
        "Nurse: Headache is quite common with it at first.",
        "Pharmacist: It can cause a dry cough in some people.",
    ],
)
def test_a_side_effect_told_of_a_medicine_is_no_finding_of_the_patient(turn: str) -> None:
    """'Side effects?' -- 'Ankle swelling is the main one.': what a medicine can do, said of
    it in general (a definition, as "is the usual dose" is), not what the patient has (each
    had been proposed as an observation of the patient; sets m and o, dev halves)."""
    got = said(f"Doctor: I'm putting the amlodipine up to 10 mg.\nPatient: Side effects?\n{turn}")
    assert [t for t, _w, _c in got] == ["medication"], got


@pytest.mark.parametrize(
    "turn",
    [
        "Pharmacist: Ibuprofen with apixaban really does raise the risk of a bleed.",
        "Pharmacist: St John's wort can stop the apixaban working properly, it lowers the level"
        " in your blood.",
    ],
)
def test_a_change_word_with_an_object_of_its_own_changes_no_drug(turn: str) -> None:
    """'raise the risk of a bleed', 'lowers the level', 'stop the apixaban working': the verb
    changes something else than the drug (these had proposed the patient's apixaban increased,
    stopped, and St John's wort decreased; set o, dev half). The drug's own change is still read
    ("reduced the evening furosemide")."""
    got = said(turn)
    assert not any(t == "medication" for t, _w, _c in got), got
    got = said("Doctor: We reduced the evening furosemide to 40 mg.")
    assert ("medication", "patient", "Patient's furosemide dose decreased to 40 mg") in got


@pytest.mark.parametrize("verb", ["double", "halve", "raise", "lower"])
def test_a_change_said_of_it_after_the_drug_gives_its_new_dose(verb: str) -> None:
    """'I'd like to increase the furosemide.' -- 'I'm going to double it to 80 mg': "it" is the
    drug the change words govern, as "doubled it" was (the new dose had not been proposed;
    set o, dev half)."""
    got = said(
        "Doctor: I'd like to change the furosemide.\nPatient: Okay.\n"
        f"Doctor: I'm going to {verb} it to 80 mg."
    )
    assert any(t == "medication" and "furosemide" in c and "80 mg" in c for t, _w, c in got), got


def test_a_relatives_me_and_my_in_a_proposal_are_the_relative() -> None:
    """'No, she moved in with me.' said by the daughter: the proposal says with whom ("She
    moved in with their daughter"); it had said "with me" -- the reviewer's "me" (set o, dev
    half)."""
    got = said(
        "GP: Is she still living on her own?\n"
        "Daughter: No, she moved in with me. It wasn't safe any more, she'd left the gas on."
    )
    socials = [c for t, _w, c in got if t == "social"]
    assert any("moved in with their daughter" in c for c in socials), got
    assert not any(" me" in c for c in socials), got


def test_a_time_asked_for_because_it_would_help_is_a_preference() -> None:
    """'So if you could do her appointments in the morning, that would really help.': a
    preference for mornings, said as a request (it had not been proposed; set o, dev half)."""
    got = said(
        "Daughter: So if you could do her appointments in the morning, that would really help."
    )
    assert ("preference", "patient", "Patient prefers morning appointments") in got, got


def test_a_result_said_before_the_test_it_is_of_is_read() -> None:
    """'It's positive for nitrites and leukocytes': the urine nitrite positive (a result said
    before its test had not been read, and the lexicon had no urine nitrite; sets g and o)."""
    got = said("Doctor: We dipped the sample. It's positive for nitrites and leukocytes.")
    assert ("lab_result", "patient", "Patient's urine nitrite was positive") in got, got


@pytest.mark.parametrize(
    "question",
    [
        "Have you had any diabetes tablets that didn't agree with you?",
        "Any medicines in the past you couldn't tolerate?",
    ],
)
def test_a_drug_named_answering_which_medicines_disagreed_is_what_the_symptom_was_on(
    question: str,
) -> None:
    """'Have you had any tablets that didn't agree with you?' -- 'Sitagliptin, years ago. My
    joints ached terribly.': a reaction to sitagliptin, as the answer to "Any side effects?"
    is to the drug asked of (it had been proposed as a symptom alone; set o, dev half)."""
    got = said(
        f"Nurse: {question}\nPatient: Sitagliptin, years ago. My joints ached terribly. They"
        " stopped it."
    )
    assert any(t == "adverse_reaction" and "sitagliptin" in c for t, _w, c in got), got


def test_a_clinicians_answer_of_his_own_after_the_patient_named_a_relative_is_theirs() -> None:
    """'My son's shouting -- his asthma's been bad ...' -- 'He can have his own asthma review,
    yes -- ring reception and book him in separately.': the son's review, not the patient's
    plan, where the patient's title does not say their sex (set m, dev half)."""
    got = said(
        "Patient: Sorry, my son's shouting. His asthma's been bad with the pollen. Is that"
        " something I need to book for him?\n"
        "Nurse: He can have his own asthma review, yes. Ring reception and book him in"
        " separately."
    )
    assert not any("asthma review" in c for _t, _w, c in got), got


@pytest.mark.parametrize(
    ("turn", "shown"),
    [
        ("Patient: There's the St John's wort. I take that for my nerves, one a day.", "one a day"),
        ("Patient: I take cod liver oil, one capsule a day.", "one capsule a day"),
        ("Patient: I take metformin 500 a day.", "metformin 500 a day"),
    ],
)
def test_a_count_said_before_a_period_is_part_of_how_often(turn: str, shown: str) -> None:
    """'one a day': the count is how often, not dropped ("Patient takes st john's wort a day"
    had been proposed; set o, dev half); a dose before a period stays the dose."""
    got = said(turn)
    assert any(t == "medication" and shown in c for t, _w, c in got), got


def test_a_prescription_sent_is_a_medicine_started() -> None:
    """'I've sent a prescription for X' starts X (a plan was all it proposed); a repeat
    prescription starts nothing and a question about one proposes nothing."""
    got = said("Doctor: I've sent a prescription for nitrofurantoin 100 mg twice a day.")
    assert ("medication", "patient", "Patient started nitrofurantoin 100 mg twice a day") in got
    got = said("Doctor: Your repeat prescription for atorvastatin is ready to collect.")
    assert not any(t == "medication" and "started" in c for t, _w, c in got)
    assert said("Doctor: Shall I send a prescription for nitrofurantoin?") == []


@pytest.mark.parametrize(
    "turn",
    [
        "Midwife: Your growth scan is booked for the 10th of August, and the clinic will ring.",
        "Doctor: I'll see you Friday and we'll go through the results then.",
        "Nurse: We'll repeat your kidney bloods in June.",
    ],
)
def test_a_plans_date_said_without_a_year_is_the_next_not_the_last(turn: str) -> None:
    """NOW is 20 November 2026: a plan's "10th of August", "Friday" or "June" is ahead, not
    the one before the session -- the plan is dated the session, never months back."""
    plans = [p for p in propose(turn) if p.memory_type == "care_plan"]
    assert plans
    assert all(p.created_at is None or p.created_at.date() == NOW.date() for p in plans)


def test_a_plan_told_as_done_keeps_its_date() -> None:
    plans = [
        p
        for p in propose("Doctor: I referred you to physiotherapy on the 3rd of November.")
        if p.memory_type == "care_plan"
    ]
    assert plans and plans[0].created_at is not None
    assert plans[0].created_at.date().isoformat() == "2026-11-03"


def test_since_and_a_date_is_when_not_why() -> None:
    """'since February' dates the dose; 'since it gave me cramps' is the reason."""
    now = datetime(2026, 4, 14, 12, tzinfo=UTC)
    (p,) = propose("Nurse: Metformin 1000 mg twice daily since February, thank you.", now)
    assert p.created_at is not None and p.created_at.date().isoformat() == "2026-02-01"
    turn = "Patient: I stopped the atorvastatin since March because it gave me cramps."
    (q,) = propose(turn, now)
    assert q.created_at is not None and q.created_at.date().isoformat() == "2026-03-01"
    assert "because it gave them cramps" in q.content
    started = "Patient: They started me on metformin 500 mg twice a day"
    (m,) = propose(started + " - I've been on it since the 6th.", now)
    assert m.created_at is not None and m.created_at.date().isoformat() == "2026-04-06"


def test_of_two_dates_said_together_the_one_inside_the_other_dates_the_fact() -> None:
    """'this year ... on the 2nd of October': the day, which the year holds."""
    got = propose(
        "Nurse: Have you had your flu jab this year?\n"
        "Patient: Yes, at Boots, on the 2nd of October."
    )
    jabs = [p for p in got if p.memory_type == "immunization"]
    assert jabs and jabs[0].created_at is not None
    assert jabs[0].created_at.date().isoformat() == "2026-10-02"


def test_a_clinicians_wouldnt_is_a_decision_not_to_act() -> None:
    """'No, I wouldn't stop it yet', answering a son's question whether to stop the donepezil:
    nothing stopped (set q's dev half had proposed 'Patient stopped donepezil')."""
    got = said(
        "Doctor: Any problems with the donepezil?\n"
        "Son: Is it time to stop her donepezil, do you think?\n"
        "Doctor: No, I wouldn't stop it yet, it may still help.\n"
        "Son: And the amlodipine?\n"
        "Doctor: I would not stop the amlodipine either."
    )
    assert not any("stopped" in c.lower() for _t, _w, c in got), got


@pytest.mark.parametrize(
    "turn",
    [
        "Wife: Cigarette smoke always set off my asthma.",
        "Husband: The cold always sets off my angina.",
        "Daughter: Honestly the stress has flared my eczema.",
    ],
)
def test_a_relatives_my_before_a_condition_is_their_own(turn: str) -> None:
    """A relative's "my asthma" is the relative's, whoever the sentence's subject is (set q's
    dev half had proposed a wife's asthma, set off by his smoking, as the patient's
    diagnosis)."""
    got = said(f"Doctor: And the smoking?\nPatient: Stopped in March.\n{turn}")
    assert not any(t == "condition" for t, _w, _c in got), got


def test_a_relative_speaking_of_the_patients_condition_is_still_read() -> None:
    got = said("Doctor: How is she?\nDaughter: The cold has set off her asthma again.")
    assert any(t == "condition" and "asthma" in c.lower() for t, _w, c in got), got


@pytest.mark.parametrize(
    ("line", "kept", "taken_back"),
    [
        (
            "Nurse: Your ferritin came back at 45 -- sorry, that's last year's line -- it's 19 "
            "micrograms per litre.",
            "19",
            "45",
        ),
        ("Doctor: Pressure's 162 over 90, sorry, wrong arm -- 142 over 84.", "142", "162"),
        ("Doctor: Your weight is 84 kilos, sorry, 48 -- no I mean 84.5 kilos.", "84.5", "48"),
    ],
)
def test_a_reading_taken_back_within_its_sentence_is_not_proposed(
    line: str, kept: str, taken_back: str
) -> None:
    """A number the speaker takes back in the same sentence ("45 -- sorry, that's last year's
    line -- it's 19"): only the reading after the last correction is proposed (set q's dev
    half had proposed both values of a vitamin D said so)."""
    got = [c for t, _w, c in said(line) if t in ("lab_result", "vital_sign")]
    assert any(kept in c for c in got), got
    assert not any(re.search(rf"\b{re.escape(taken_back)}\b", c) for c in got), got


def test_an_apology_before_the_only_reading_keeps_it() -> None:
    got = said("Nurse: Sorry, I'm running late. Your potassium was 5.1 on Monday.")
    assert any("5.1" in c for _t, _w, c in got), got


def test_sympathy_between_two_readings_takes_neither_back() -> None:
    got = said("Doctor: Your HbA1c is 75, I'm sorry to say, and your weight is 96 kg.")
    contents = " ".join(c for _t, _w, c in got)
    assert "75" in contents and "96" in contents, got


def test_a_summing_up_is_read_item_by_item() -> None:
    """'So to recap: a, b, c, and d': each item its own statement (set q's dev half had
    proposed the whole list as one plan holding one drug's name and another's stop, and a
    recap's "on the allergy list" as an allergy to every drug of the list)."""
    got = said(
        "Doctor: So to recap: warfarin stays at 3 mg, simvastatin stopped, a chest X-ray, "
        "and the cardiology referral.\n"
        "Doctor: So: metoprolol in the evenings, and co-amoxiclav on the allergy list."
    )
    plans = [c.lower() for t, _w, c in got if t == "care_plan"]
    assert not any("warfarin" in c or "stopped" in c for c in plans), plans
    assert any("x-ray" in c for c in plans) and any("cardiology" in c for c in plans), plans
    assert any(t == "medication" and "stopped simvastatin" in c for t, _w, c in got), got
    allergies = [c.lower() for t, _w, c in got if t == "allergy"]
    assert allergies and not any("metoprolol" in c for c in allergies), allergies


@pytest.mark.parametrize(
    ("line", "drug", "new", "old"),
    [
        ("Doctor: We'll move your quetiapine from night-time to 6 pm.", "quetiapine", "6 pm", ""),
        (
            "Doctor: Please take the atorvastatin in the evening instead of the morning.",
            "atorvastatin",
            "evening",
            "morning",
        ),
        (
            "Doctor: I'm moving your levothyroxine to bedtime rather than breakfast.",
            "levothyroxine",
            "bedtime",
            "breakfast",
        ),
        ("Doctor: Citalopram moves to the morning.", "citalopram", "morning", ""),
    ],
)
def test_a_dose_moved_in_the_day_is_the_drug_at_its_new_time(
    line: str, drug: str, new: str, old: str
) -> None:
    """A dose moved to another time of day is what the patient now takes, at the new time --
    never a stop, never a social fact (set q's dev half: "Donepezil moves to the morning" was
    proposed as a social fact, a move "from bedtime to the morning" not at all)."""
    got = said(line)
    meds = [c.lower() for t, _w, c in got if t == "medication" and drug in c.lower()]
    assert meds and new in meds[0] and "stopped" not in meds[0], got
    if old:
        assert meds[0].index(new) < meds[0].index(old), meds  # the new time, then the old
    assert not any(t == "social" for t, _w, _c in got), got


def test_a_dose_lowered_and_moved_says_both() -> None:
    got = said(
        "Doctor: I'd like to move your insulin detemir from bedtime to the morning and "
        "lower it to 18 units."
    )
    meds = [c.lower() for t, _w, c in got if t == "medication"]
    assert any("18" in c and "morning" in c for c in meds), got


def test_an_fev1_as_a_percentage_of_predicted_is_read() -> None:
    """Spirometry's FEV1 is said in litres or as a percentage of the predicted value ("FEV1 is
    61 percent of predicted"): both are its results (three COPD reviews of the dev halves had
    the percentage unread)."""
    got = said("Nurse: We did your breathing test. Your FEV1 is 61 percent of predicted.")
    assert any(t == "lab_result" and "FEV1" in c and "61" in c for t, _w, c in got), got


@pytest.mark.parametrize(
    "answer", ["Wife: Thursday the 9th of July.", "Wife: Yes, Thursday the 9th of July."]
)
def test_a_date_answered_to_what_was_just_told_dates_it(answer: str) -> None:
    """The other speaker's next turn gives only a date, a weekday beside it: the date of what
    was just told, with no "When?" asked (set q's dev half: a fall, its day given in the
    answer, had been dated at the session)."""
    got = propose(f"Doctor: You had a fall on the stairs, I hear.\n{answer}", NOW)
    falls = [p for p in got if p.memory_type == "observation" and "fall" in p.content.lower()]
    assert falls and falls[0].created_at.date().isoformat() == "2026-07-09", got


@pytest.mark.parametrize(
    "line",
    [
        "Doctor: I'm going to reduce the bisoprolol to 5 milligrams once a day from tomorrow.",
        "Doctor: Let's bring the bisoprolol down to 5 mg, starting tomorrow morning.",
    ],
)
def test_a_change_decided_today_from_tomorrow_is_the_change(line: str) -> None:
    """A change decided now that starts tomorrow is the order as it now stands (the
    prescription changes today), not a plan for a later day (set q's dev half: "reduce the
    amlodipine to 5 mg once a day from tomorrow" had been a plan only)."""
    got = said(line)
    assert any(t == "medication" and "5 mg" in c for t, _w, c in got), got


def test_a_plan_for_next_week_stays_a_plan() -> None:
    got = said("Doctor: Next Monday we'll reduce the bisoprolol to 5 milligrams.")
    assert not any(t == "medication" for t, _w, _c in got), got


@pytest.mark.parametrize(
    "line",
    [
        "Doctor: Carry on with the quetiapine at 8 pm.",
        "Doctor: Keep taking the quetiapine at 8 pm.",
    ],
)
def test_carry_on_with_a_drug_is_taking_it(line: str) -> None:
    got = said(line)
    assert any(t == "medication" and "quetiapine" in c and "8 pm" in c for t, _w, c in got), got


def test_a_stop_told_after_the_drug_by_a_pronoun_is_a_stop() -> None:
    """ "Now the clopidogrel you used to take, they've stopped that": the stop is told after
    the drug, of "that" (a discharge's stop, unread in a dev transcript)."""
    got = said("Pharmacist: Now the clopidogrel you used to take, they've stopped that.")
    assert any(t == "medication" and "stopped clopidogrel" in c for t, _w, c in got), got


def test_it_after_a_drug_only_considered_is_the_drug_talked_of_before() -> None:
    """ "We could consider switching to nortriptyline" names a drug only considered: the "it"
    said next is still the drug talked of before (set q's dev half had read "I took it at 7
    pm" as the considered drug taken)."""
    got = said(
        "Doctor: How is the amitriptyline?\n"
        "Patient: I'm drowsy in the mornings on the amitriptyline.\n"
        "Doctor: If that doesn't settle we could consider switching to nortriptyline instead.\n"
        "Patient: I took it at 8 pm last night and felt better this morning."
    )
    assert not any("nortriptyline" in c.lower() for _t, _w, c in got), got


def test_a_clinicians_finding_told_by_the_patient_is_the_patients() -> None:
    """ "She said my heart's in atrial fibrillation": what the doctor said of the speaker is
    the speaker's own fact, not a third person's (it had been read as "she"'s)."""
    got = said(
        "Pharmacist: Dr Osei saw you last week?\nPatient: She said my heart's in atrial "
        "fibrillation."
    )
    assert any(t == "condition" and "atrial fibrillation" in c for t, _w, c in got), got


@pytest.mark.parametrize(
    ("line", "word"),
    [
        ("Patient: And I realised I never told you that my aunt had breast cancer at 45.", "aunt"),
        ("Patient: I forgot to mention, my grandad had bowel cancer.", "grandad"),
        ("Patient: I don't think I told you that my uncle had a heart attack at 50.", "uncle"),
    ],
)
def test_a_frame_that_says_it_was_not_told_before_negates_nothing_told(
    line: str, word: str
) -> None:
    """ "I never told you that my aunt had breast cancer": the negation is of the telling, not
    of what is told (set q's dev half: a mother's stroke said so went unread)."""
    got = said(f"Doctor: Anything else?\n{line}")
    assert any(w == "family history" and word in c.lower() for _t, w, c in got), got


def test_never_told_to_stop_is_no_stop() -> None:
    got = said("Doctor: I never told you to stop the simvastatin, keep taking it.")
    assert not any("stopped" in c.lower() for _t, _w, c in got), got


@pytest.mark.parametrize(
    "line",
    ["Daughter: Her own mother had Parkinson's.", "Son: Her mother, my nan, had Parkinson's too."],
)
def test_a_proxys_her_mother_is_the_patients_mother(line: str) -> None:
    """A daughter's "my mum" is the patient, but "her mother" is the patient's mother: family
    history (two dev transcripts' grandmothers' dementia went unread)."""
    got = said(f"Doctor: Good morning, Mrs Hale. Anyone in the family with memory trouble?\n{line}")
    assert [(t, w) for t, w, _c in got] == [("condition", "family history")], got


def test_a_proxys_parent_is_the_patient_only_by_the_patients_sex() -> None:
    """A daughter's "my mum has had a chest infection" is the patient's (Mrs Hale's), read
    past the facts reader's "another person"; her "Dad has diabetes" is not the patient's."""
    got = said(
        "Doctor: Good morning, Mrs Hale. How has she been?\n"
        "Daughter: My mum has had a chest infection.\n"
        "Daughter: Dad has diabetes, he's in the car."
    )
    patients = [c.lower() for _t, w, c in got if w == "patient"]
    assert any("chest infection" in c for c in patients), got
    assert not any("diabetes" in c for c in patients), got


def test_i_see_you_had_is_no_plan_to_see_you() -> None:
    """ "I see you had a fall": the clinician noticing, not "see you" of a follow-up (it had
    been proposed as a plan); "I'll see you in six weeks" stays a plan."""
    got = said("Doctor: I see you had a fall on the stairs.\nDoctor: I'll see you in six weeks.")
    assert [t for t, _w, _c in got] == ["observation", "care_plan"], got


@pytest.mark.parametrize(
    ("asked", "agreed", "word"),
    [
        (
            "Patient: Could I get my inhalers in a weekly tray? I forget them.",
            "Pharmacist: Yes, we can do that for you.",
            "tray",
        ),
        (
            "Patient: Can you phone my landline rather than the mobile?",
            "Nurse: Of course, I'll change that now.",
            "landline",
        ),
    ],
)
def test_a_request_of_the_care_agreed_is_a_preference(asked: str, agreed: str, word: str) -> None:
    """The patient asks for something of their care and the clinician agrees: how they want
    their care (four dev transcripts' blister packs and dosette boxes, and letters by email,
    had gone unread)."""
    got = said(f"{asked}\n{agreed}")
    assert any(t == "preference" and word in c for t, _w, c in got), got


def test_a_request_turned_down_or_for_a_drug_is_no_preference() -> None:
    got = said(
        "Patient: Could I have some antibiotics for this cough?\nDoctor: Yes, I think so.\n"
        "Patient: Could I have my tablets in a dosette box?\nDoctor: I'm afraid we can't do "
        "those here."
    )
    assert not any(t == "preference" for t, _w, _c in got), got
