"""The held-out statements of issue 30 (``eval/statements/``, frozen before the reader changed,
written by authors who had not read it): the test half is run, never read. The figures it
reached are held here so that no change loses them; the issue's target for kept facts
superseded at once is 0 -- where this test allows more, the closing note says how many and that
the target is not met."""

from __future__ import annotations

import tempfile
from collections import Counter
from datetime import timedelta
from functools import lru_cache

import pytest

import memory_core as mc
from eval.statements import (
    T0,
    load_pairs,
    load_values,
    measures,
    outcomes,
    unit_invented,
    value_read,
    value_right,
)


@lru_cache(maxsize=64)  # each half is run once for the tests of the module
def _measured(files: tuple[str, ...]) -> dict[str, int]:
    cases = load_pairs("test", files)
    with tempfile.TemporaryDirectory() as tmp:
        eng = mc.open_engine(
            f"sqlite:///{tmp}/st.db", "hashing", clock=lambda: T0 + timedelta(days=60)
        )
        got = list(outcomes(eng, cases))
        eng.store.close()
    return measures(cases, got)


@pytest.fixture(scope="module")
def test_half() -> dict[str, int]:
    """The first three authors' test half (set_c is all dev)."""
    return _measured(("set_a", "set_b", "set_c"))


def test_the_test_half_hides_few_true_facts_at_once(test_half: dict[str, int]) -> None:
    """Measured on main e76c5f1: 3 of 84 kept facts superseded at once by a statement that is
    not the same fact again (8 before the assertion step's first round, 21 of 30 in the issue's
    independent check); 2 more replaced by the same fact restated (the newer carries it)."""
    assert test_half["keep"] == 84
    assert test_half.get("keep_auto", 0) <= 3


def test_the_test_half_still_finds_the_changes(test_half: dict[str, int]) -> None:
    assert test_half["replace"] == 31
    assert test_half["replace_found"] >= 26  # 26 of 31 on main e76c5f1


def test_the_test_halfs_values_keep_their_units() -> None:
    vals = load_values("test")
    got = [value_read(v) for v in vals]
    assert sum(unit_invented(v, g) for v, g in zip(vals, got, strict=True)) == 0
    right = sum(value_right(v, g) for v, g in zip(vals, got, strict=True))
    assert right >= 34  # of 42 on main e76c5f1: the rest are bare numbers read in their one unit


#: Each later author's test half at its first run, before any change made with its dev half
#: (the main it was frozen on; its README says the rest): keep pairs, replace pairs, kept facts
#: superseded at once, changes found. The issue's target for kept facts at once is 0 -- where
#: the first run had more, the target is not met. A later change may only do better.
FIRST_RUNS = (
    ("set_d", "43e60c2", 48, 15, 1, 13),  # clinician shorthand, letters, pharmacy, carers
    ("set_e", "1347087", 56, 23, 2, 17),  # telephone notes, handovers, MAR, diaries
    ("set_f", "d7ee05a", 52, 16, 0, 16),  # specialist, obstetric, paediatric, dental ...
    ("set_g", "c1028ef", 57, 19, 1, 11),  # patients', families' and carers' words
    ("set_h", "bf15558", 49, 27, 2, 25),  # hospital, transitions, US ambulatory notes
    ("set_i", "f8f7bb2", 52, 22, 2, 18),  # machine-made text, Indian and Nigerian English
    ("set_j", "828dc24", 58, 19, 4, 10),  # what patients type to an AI care assistant
    ("set_k", "bcbfb44", 45, 25, 1, 11),  # social history, doses in plans, dated results
    ("set_l", "bdc0d12", 60, 20, 3, 11),  # patients and relatives texting an AI assistant
    ("set_m", "562fb63", 50, 19, 1, 12),  # specialist clinics: conditions, allergies, plans
    ("set_n", "aa63448", 51, 22, 3, 16),  # planned doses, relatives' medicines, habit advice
    ("set_o", "ff515bb", 55, 22, 1, 16),  # long statements, several topics each
    ("set_p", "c960553", 48, 18, 0, 13),  # a broad realistic mix, a check of the whole
    ("set_q", "5cb8437", 59, 23, 4, 13),  # habit history and advice, plans, others' medicines
    ("set_r", "7a28131", 44, 15, 1, 11),  # a broad realistic mix, a check of the whole
    ("set_s", "666a266", 54, 22, 4, 12),  # habit advice, others' medicines, plans, questions
    ("set_t", "00c1e52", 39, 19, 1, 13),  # a broad realistic mix, a check of the whole
    ("set_u", "a63547c", 54, 31, 0, 20),  # habit advice and history, others' doses, plans
    ("set_v", "9932247", 44, 19, 0, 14),  # a broad realistic mix, a check of the whole
    ("set_w", "24dcb31", 43, 18, 0, 14),  # a broad realistic mix, a check of the whole
    ("set_x", "459b7a0", 37, 20, 1, 15),  # same thing named with change words; units
    ("set_y", "55e64d6", 45, 19, 0, 10),  # habit advice, others' medicines, plans, history
    ("set_z", "b6d1616", 43, 16, 1, 9),  # a broad realistic mix, a check of the whole
    ("set_aa", "f4f0f68", 33, 19, 0, 15),  # a broad realistic mix, measured once as it came
    ("set_ab", "0d55f66", 59, 20, 1, 12),  # others' facts, definitions, conditionals, restated
    ("set_ac", "a8c2aec", 40, 17, 0, 15),  # a broad realistic mix, kept out of the model's fit
    ("set_ad", "f681928", 59, 24, 2, 19),  # others' facts, conditionals, restated, plans
    ("set_ae", "1c909c4", 59, 20, 0, 18),  # every keep kind; others by pronoun, clipped names
    ("set_af", "ba836b0", 51, 22, 1, 16),  # conditionals without "if", restated, others
    ("set_ag", "377a31d", 55, 20, 0, 14),  # restated in other words and units, conditionals
    ("set_ah", "c18f3fa", 57, 24, 0, 18),  # restated, conditionals, others' doses and results
    ("set_ai", "2f94365", 46, 22, 0, 18),  # restated and look-alike units, conditionals, others
    ("set_aj", "c506b4c", 41, 17, 1, 11),  # a broad realistic mix, measured once at the end
    ("set_ak", "e44e406", 55, 26, 2, 20),  # others' doses and results, definitions, restated
    ("set_al", "4b0b512", 43, 15, 1, 12),  # a broad realistic mix, measured once at the end
    ("set_am", "d3790e5", 51, 24, 1, 10),  # history of the same thing, restated, not medicines
    ("set_an", "196d081", 42, 17, 0, 15),  # a broad realistic mix, measured once at the end
    ("set_ao", "058a318", 59, 26, 1, 22),  # restated in other units, others' same thing, rules
    ("set_ap", "3db18c2", 51, 23, 0, 19),  # others' same thing as labels, near misses, restated
    ("set_aq", "0101224", 46, 27, 1, 21),  # the everyday notes of a week, every memory type
    ("set_ar", "1484733", 41, 37, 1, 28),  # specialists' letters and the GP notes answering them
    ("set_as", "53dbd98", 41, 45, 0, 29),  # what patients, relatives and carers write themselves
)


@pytest.mark.parametrize(
    ("name", "frozen_on", "keep", "replace", "at_once", "found"),
    FIRST_RUNS,
    ids=[r[0] for r in FIRST_RUNS],
)
def test_each_later_authors_test_half_holds_its_first_run(
    name: str, frozen_on: str, keep: int, replace: int, at_once: int, found: int
) -> None:
    m = _measured((name,))
    assert m["keep"] == keep and m["replace"] == replace, frozen_on
    assert m.get("keep_auto", 0) <= at_once, m
    assert m["replace_found"] >= found, m


def test_every_test_half_together() -> None:
    """The forty-five sets' test halves (2,156 kept facts, 945 changes; hashing embedder):
    4 of the first twenty-seven's 1,260 kept facts superseded at once on main f4f0f68, where 16
    of the first twenty-six's 1,227 were before the learned assertion model held what the
    phrase rules read as a change; with set ab (a fresh author, 1 at once as it came on
    0d55f66) and set ac (0 at once) 5; with set ad (2 at once as it came on f681928) 7, set
    ae (0 at once as it came on 1c909c4) 7, set af (1 at once as it came on ba836b0) 8, set ag
    (0 at once as it came on 377a31d) 8, set ah (0 at once as it came on c18f3fa) 8, set ai
    (0 at once as it came on 9ec3692's reader) 8 and set aj (1 at once, measured once at the
    end of the twenty-second session, as on its starting reader) 9; 7 since a day's amount
    said another way and part of a tablet are read (one of set ab's), 8 with set aj's one --
    the issue's target is 0: not met. 494 changes found (381 of the twenty-seven's since
    clipped names ("levo", "pred") are read, 12 of set ab's 20, 15 of set ac's 17, 19 of set
    ad's 24, 18 of set ae's 20, 16 of set af's 22, 14 of set ag's 20, 18 of set ah's 24, 18 of
    set ai's 22); 527 since a vaccine is keyed by the disease it prevents and a later dose
    goes to a reviewer (plan.later-dose); 538 with set aj's 11 of 17. Set ak (a thirty-seventh
    author, as it came on e44e406, the reader of 30ae8d1): 2 of 55 kept facts at once (another
    person's dose changes), 20 of 26 changes found -- 10 and 558 in all; 8 at once after that
    session's changes (one of set ak's now for a reviewer, one of set ad's conditionals
    unchanged); set al (a thirty-eighth author, measured once at that session's end on
    4b0b512, as on its starting reader): 1 of 43 at once (a single-valued slot restated), 12
    of 15 found -- 9 and 570 in all. Set am (a thirty-ninth author, weighted toward history
    of the same thing, restatements and changes that are not medicines or results, as it came
    on d3790e5, the reader of d2a28f6): 1 of 51 kept facts at once (a conditional dose
    change), 10 of 24 changes found -- 10 and 580 in all; 9 since a change said to hold on a
    condition ("subject to", "on days with", a "when" naming a clinical thing) goes to a
    reviewer (set am's). Set an (a fortieth author, measured once at that session's end on
    196d081, as on its starting reader d2a28f6): 0 of 42 at once, 15 of 17 found -- 9 and 595
    in all. Set ao (a forty-first author, weighted toward restatements in other units and
    names, another person's same thing, definitions, conditionals and timing said again, as it
    came on 058a318, the reader of 6c6148d): 1 of 59 kept facts at once (another person's dose
    change), 22 of 26 changes found -- 10 and 617 in all. Set ap (a forty-second author,
    weighted toward another person's same thing with the person said in every place -- a label
    after a dash or in brackets, a heading, "for her husband" --, near misses that are both
    true, restatements and rules, as it came on 3db18c2, the reader of 4e618e6): 0 of 51 kept
    facts at once, 19 of 23 changes found -- 10 and 636 in all. Set aq (a forty-third author,
    the everyday notes of a week in every memory type, not aimed at tricks, as it came on
    0101224, the reader of 0bea6fb): 1 of 46 kept facts at once, 21 of 27 changes found -- 11
    and 657 in all; 660 at that session's end (an arrow between doses read as "to", a "?"
    written onto a word as its query, a clip said with a dose, a state word misspelt by one
    edit, a dose said before its drug). Set ar (a forty-fourth author, specialists' letters and
    the GP notes that answer them, as it came on 1484733, the reader of 55e641b): 1 of 41 kept
    facts at once, 28 of 37 changes found; set as (a forty-fifth author, what patients,
    relatives and carers write themselves, as it came on the same reader): 0 of 41 at once, 29
    of 45 found -- 12 and 717 in all; 737 at the twenty-eighth session's end (history dated
    before the record asks no reviewer, a stop said with a negation, a bracket's own words, a
    blood pressure said aloud, a writer who is the patient's relative, a second mention's value,
    a preferred name, appointments by phone, a device removed)."""
    total: Counter[str] = Counter(_measured(("set_a", "set_b", "set_c")))
    for name, *_ in FIRST_RUNS:
        total.update(_measured((name,)))
    assert (total["keep"], total["replace"]) == (2156, 945)
    assert total["keep_auto"] <= 12, total
    assert total["replace_found"] >= 737, total
