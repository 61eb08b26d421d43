"""Issue 35, item A: a line for a medication says when it was last confirmed.

The policy option ``ContextPolicy.dated_types`` (default: medication only) names the memory
types whose lines in the injected section carry the date their fact was last asserted -- the
later of when it was recorded and its latest confirmation at the moment asked about -- as
"(recorded 3 Mar 2026)" or "(last confirmed 3 Mar 2026)". The words count in the token budget.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from tests.conftest import NOW, Clock

PID = "NW-1"
GLARGINE = "Patient injects insulin glargine 12 units at bedtime"
EGFR = "Patient's eGFR was 61 mL/min"


def _policy(eng: mc.MemoryEngine, dated: tuple[str, ...]) -> mc.EnginePolicy:
    return replace(eng.policy, context=replace(eng.policy.context, dated_types=dated))


def _line(res: mc.ContextResult, words: str) -> str:
    return next(line for line in res.text.splitlines() if words in line)


def test_the_default_dates_medications_only() -> None:
    assert mc.ContextPolicy().dated_types == ("medication",)
    assert mc.EnginePolicy().to_dict()["context"]["dated_types"] == ("medication",)


def test_a_medication_line_says_when_it_was_recorded(engine: mc.MemoryEngine) -> None:
    engine.add_memory(PID, GLARGINE, "medication", created_at=datetime(2026, 3, 3, 9, tzinfo=UTC))
    engine.add_memory(PID, EGFR, "lab_result", created_at=datetime(2026, 2, 20, 8, tzinfo=UTC))
    res = engine.build_context(PID, "current insulin dose and kidney function", record_access=False)
    assert _line(res, "glargine").endswith(f"{GLARGINE} (recorded 3 Mar 2026)")
    assert _line(res, "eGFR").endswith(EGFR)  # a lab result: not named by the default policy
    item = next(i for i in res.items if i.scored.memory.content == GLARGINE)
    assert item.annotations == ("(recorded 3 Mar 2026)",)


def test_a_later_confirmation_is_the_date_said(engine: mc.MemoryEngine) -> None:
    m = engine.add_memory(
        PID, GLARGINE, "medication", created_at=datetime(2026, 3, 3, 9, tzinfo=UTC)
    ).memory
    engine.confirm_memories(
        [{"memory_id": m.id, "confirmed_at": datetime(2026, 5, 14, 10, tzinfo=UTC)}]
    )
    res = engine.build_context(PID, "current insulin dose", record_access=False)
    assert _line(res, "glargine").endswith(f"{GLARGINE} (last confirmed 14 May 2026)")
    # as of a moment before the confirmation, it had not happened yet
    before = engine.build_context(
        PID, "current insulin dose", now=datetime(2026, 4, 1, tzinfo=UTC), record_access=False
    )
    assert _line(before, "glargine").endswith(f"{GLARGINE} (recorded 3 Mar 2026)")


def test_another_type_is_dated_when_the_policy_names_it(engine: mc.MemoryEngine) -> None:
    engine.add_memory(PID, EGFR, "lab_result", created_at=datetime(2026, 2, 20, 8, tzinfo=UTC))
    engine.add_memory(PID, GLARGINE, "medication", created_at=datetime(2026, 3, 3, 9, tzinfo=UTC))
    q = "current insulin dose and kidney function"
    labs = engine.build_context(
        PID, q, record_access=False, policy=_policy(engine, ("medication", "lab_result"))
    )
    assert _line(labs, "eGFR").endswith(f"{EGFR} (recorded 20 Feb 2026)")
    assert _line(labs, "glargine").endswith("(recorded 3 Mar 2026)")
    none = engine.build_context(PID, q, record_access=False, policy=_policy(engine, ()))
    assert _line(none, "glargine").endswith(GLARGINE) and "recorded" not in none.text


def test_the_date_counts_in_the_token_budget(engine: mc.MemoryEngine) -> None:
    engine.add_memory(PID, GLARGINE, "medication", created_at=datetime(2026, 3, 3, 9, tzinfo=UTC))
    q = "current insulin dose"
    dated = engine.build_context(PID, q, record_access=False)
    plain = engine.build_context(PID, q, record_access=False, policy=_policy(engine, ()))
    assert "(recorded 3 Mar 2026)" in dated.text and "recorded" not in plain.text
    assert plain.tokens < dated.tokens
    # a budget the line fits without its date and not with it
    budget = dated.tokens - 1
    fits = engine.build_context(
        PID, q, record_access=False, max_tokens=budget, policy=_policy(engine, ())
    )
    assert GLARGINE in fits.text and fits.tokens <= budget
    cut = engine.build_context(PID, q, record_access=False, max_tokens=budget)
    assert GLARGINE not in cut.text and cut.tokens <= budget
    (item,) = cut.items
    assert not item.included and "token budget" in item.rule
    exact = engine.build_context(PID, q, record_access=False, max_tokens=dated.tokens)
    assert exact.text == dated.text


def test_a_list_entry_of_a_dated_type_carries_its_date(engine: mc.MemoryEngine) -> None:
    engine.add_memory(PID, GLARGINE, "medication", created_at=datetime(2026, 3, 3, 9, tzinfo=UTC))
    engine.add_memory(
        PID,
        "Patient takes metformin 500 mg twice daily",
        "medication",
        created_at=datetime(2025, 12, 1, 9, tzinfo=UTC),
    )
    res = engine.build_context(PID, "What medications is the patient on?", record_access=False)
    listed = _line(res, "metformin")
    assert "(recorded 3 Mar 2026)" in listed and "(recorded 1 Dec 2025)" in listed
    plain = engine.build_context(
        PID, "What medications is the patient on?", record_access=False, policy=_policy(engine, ())
    )
    assert "recorded" not in plain.text


def test_the_option_is_validated_and_serialised() -> None:
    pol = mc.EnginePolicy(context=mc.ContextPolicy(dated_types=("medication", "lab_result")))
    assert mc.EnginePolicy.from_dict(pol.to_dict()) == pol
    # as JSON gives it back: a list
    loaded = mc.EnginePolicy.from_dict({"context": {"dated_types": ["lab_result"]}})
    assert loaded.context.dated_types == ("lab_result",)
    assert mc.EnginePolicy.from_dict({}).context.dated_types == ("medication",)
    bad: Any
    for bad in ("medication", ["medication", 3], [""], None):
        with pytest.raises(mc.ValidationError, match="dated_types"):
            mc.ContextPolicy(dated_types=bad)


def test_a_saved_option_is_what_an_engine_opened_later_uses(tmp_path: Any) -> None:
    clock = Clock(NOW + timedelta(days=1))
    url = f"sqlite:///{tmp_path / 's.db'}"
    eng = mc.open_engine(url, HashingEmbedder(), clock=clock)
    eng.add_memory(PID, EGFR, "lab_result", created_at=datetime(2026, 2, 20, 8, tzinfo=UTC))
    eng.save_policy(_policy(eng, ("lab_result",)), "dr-a")
    eng.store.close()
    again = mc.open_engine(url, HashingEmbedder(), clock=clock)
    try:
        assert again.policy.context.dated_types == ("lab_result",)
        res = again.build_context(PID, "kidney function eGFR", record_access=False)
        assert _line(res, "eGFR").endswith(f"{EGFR} (recorded 20 Feb 2026)")
    finally:
        again.store.close()
