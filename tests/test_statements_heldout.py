"""The held-out statements of issue 30 (``eval/statements/``, frozen before the reader changed,
written by authors who had not read it): the test half is run, never read. The figures it
reached are held here so that no change loses them; the issue's target for kept facts
superseded at once is 0 -- where this test allows more, the closing note says how many and that
the target is not met."""

from __future__ import annotations

import tempfile
from datetime import timedelta

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


@pytest.fixture(scope="module")
def fresh_half() -> dict[str, int]:
    """The fourth author's test half (set_d, frozen on main 43e60c2)."""
    return _measured(("set_d",))


@pytest.fixture(scope="module")
def fifth_half() -> dict[str, int]:
    """The fifth author's test half (set_e, frozen on main 1347087)."""
    return _measured(("set_e",))


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


def test_the_fresh_test_half_hides_few_true_facts_at_once(fresh_half: dict[str, int]) -> None:
    """set_d's test half, first run on main 43e60c2 (before any change made with its dev
    half): 1 of 48 kept facts superseded at once (target 0: not met), 13 of 15 changes found;
    the same after the changes its dev half led to."""
    assert fresh_half["keep"] == 48 and fresh_half["replace"] == 15
    assert fresh_half.get("keep_auto", 0) <= 1
    assert fresh_half["replace_found"] >= 13


def test_the_fifth_test_half_hides_few_true_facts_at_once(fifth_half: dict[str, int]) -> None:
    """set_e's test half, first run on main 1347087 (before any change made with its dev
    half): 2 of 56 kept facts superseded at once (target 0: not met), 17 of 23 changes found."""
    assert fifth_half["keep"] == 56 and fifth_half["replace"] == 23
    assert fifth_half.get("keep_auto", 0) <= 2
    assert fifth_half["replace_found"] >= 17


@pytest.fixture(scope="module")
def sixth_half() -> dict[str, int]:
    """The sixth author's test half (set_f, frozen on main d7ee05a)."""
    return _measured(("set_f",))


def test_the_sixth_test_half_hides_no_true_fact_at_once(sixth_half: dict[str, int]) -> None:
    """set_f's test half, first run on main d7ee05a (before any change made with its dev
    half): 0 of 52 kept facts superseded at once (4 replaced by the same fact restated), 16 of
    16 changes found (10 at once)."""
    assert sixth_half["keep"] == 52 and sixth_half["replace"] == 16
    assert sixth_half.get("keep_auto", 0) == 0
    assert sixth_half["replace_found"] >= 16


@pytest.fixture(scope="module")
def seventh_half() -> dict[str, int]:
    """The seventh author's test half (set_g, frozen on main c1028ef)."""
    return _measured(("set_g",))


def test_the_seventh_test_half_hides_few_true_facts_at_once(seventh_half: dict[str, int]) -> None:
    """set_g's test half, first run on main c1028ef (before any change made with its dev
    half): 1 of 57 kept facts superseded at once (target 0: not met; 5 replaced by the same
    fact restated), 11 of 19 changes found (7 at once)."""
    assert seventh_half["keep"] == 57 and seventh_half["replace"] == 19
    assert seventh_half.get("keep_auto", 0) <= 1
    assert seventh_half["replace_found"] >= 11


@pytest.fixture(scope="module")
def eighth_half() -> dict[str, int]:
    """The eighth author's test half (set_h, frozen on main bf15558)."""
    return _measured(("set_h",))


def test_the_eighth_test_half_hides_few_true_facts_at_once(eighth_half: dict[str, int]) -> None:
    """set_h's test half (hospital, transitions of care, US ambulatory notes), first run on
    main bf15558 (before any change made with its dev half): 2 of 49 kept facts superseded at
    once (target 0: not met; 5 replaced by the same fact restated), 25 of 27 changes found
    (15 at once)."""
    assert eighth_half["keep"] == 49 and eighth_half["replace"] == 27
    assert eighth_half.get("keep_auto", 0) <= 2
    assert eighth_half["replace_found"] >= 25


@pytest.fixture(scope="module")
def ninth_half() -> dict[str, int]:
    """The ninth author's test half (set_i, frozen on main f8f7bb2)."""
    return _measured(("set_i",))


def test_the_ninth_test_half_hides_few_true_facts_at_once(ninth_half: dict[str, int]) -> None:
    """set_i's test half (machine-made clinical text and the replies around it), first run on
    main f8f7bb2 (before any change made with its dev half): 2 of 52 kept facts superseded at
    once (target 0: not met; 5 replaced by the same fact restated), 18 of 22 changes found
    (9 at once)."""
    assert ninth_half["keep"] == 52 and ninth_half["replace"] == 22
    assert ninth_half.get("keep_auto", 0) <= 2
    assert ninth_half["replace_found"] >= 18


@pytest.fixture(scope="module")
def tenth_half() -> dict[str, int]:
    """The tenth author's test half (set_j, frozen on main 828dc24)."""
    return _measured(("set_j",))


def test_the_tenth_test_half_hides_few_true_facts_at_once(tenth_half: dict[str, int]) -> None:
    """set_j's test half (what patients type or say to an AI care assistant), first run on main
    828dc24 (before any change made with its dev half): 4 of 58 kept facts superseded at once
    (target 0: not met; 3 replaced by the same fact restated), 10 of 19 changes found (1 at
    once)."""
    assert tenth_half["keep"] == 58 and tenth_half["replace"] == 19
    assert tenth_half.get("keep_auto", 0) <= 4
    assert tenth_half["replace_found"] >= 10
