"""Prompt preview page (AppTest on the demo store): the section shown is the engine's, previews
record nothing, the budget shrinks the section without ever trading an allergy for a
lower-priority memory, and with no endpoint "Send to model" explains how to configure one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest

import memory_core as mc
from memory_core import context as ctx

PAGE = "pages/prompt_preview.py"
PID = "NW-1001"
DEFAULT_QUERY = "Patient asks whether the new diabetes medication could upset their stomach again."
ENDPOINT_VARS = (
    "OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


@pytest.fixture
def eng(demo_store: str) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(demo_store)
    yield e
    e.store.close()


@pytest.fixture(autouse=True)
def no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENDPOINT_VARS:
        monkeypatch.delenv(name, raising=False)


def ranking(at: Any) -> pd.DataFrame:
    """The ranking table (key "ranking_table"; found by its columns)."""
    for df in at.dataframe:
        if {"rule", "included", "score"} <= set(df.value.columns):
            return df.value
    raise AssertionError("ranking table not shown")


def shown_tokens(at: Any) -> int:
    return int(next(m.value for m in at.metric if m.label == "Section tokens"))


def store_state(eng: mc.MemoryEngine) -> tuple[object, ...]:
    mems = eng.list_memories(PID)
    return (
        tuple((m.id, m.access_count, m.last_accessed, m.tier, m.version) for m in mems),
        tuple(sorted((k, tuple(v)) for k, v in eng.access_times(PID).items())),
        len(eng.injections(PID)),
        len(eng.audit_log(limit=100_000)),
    )


def test_section_is_the_engines(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    at = app(PAGE)
    assert not at.exception
    assert at.text_area(key="session_context").value == DEFAULT_QUERY
    res = eng.build_context(PID, DEFAULT_QUERY, max_tokens=400, max_memories=5, record_access=False)
    assert at.code[0].value == res.text
    assert shown_tokens(at) == res.tokens
    # the whole system prompt wraps exactly that section
    assert at.code[1].value == ctx.build_system_prompt(res.text, DEFAULT_QUERY, eng.role)
    table = ranking(at)
    assert len(table) == len(res.items)
    assert table["included"].sum() == len(res.included)

    query = "Does the patient have any drug allergies I should know about?"
    at.text_area(key="session_context").input(query).run()
    at.slider(key="token_budget").set_value(250).run()
    assert not at.exception
    res = eng.build_context(PID, query, max_tokens=250, max_memories=5, record_access=False)
    assert at.code[0].value == res.text
    assert shown_tokens(at) == res.tokens


def test_preview_records_no_access(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    before = store_state(eng)
    at = app(PAGE)
    at.slider(key="token_budget").set_value(200).run()
    at.number_input(key="max_memories").set_value(8).run()
    at.text_area(key="session_context").input("How is the patient's blood pressure?").run()
    at.button(key="send_to_model").click().run()
    assert not at.exception
    assert store_state(eng) == before


def test_shrinking_the_budget_never_drops_an_allergy_for_filler(
    app: Callable[..., Any],
) -> None:
    at = app(PAGE)
    at.number_input(key="max_memories").set_value(10).run()
    shown: list[int] = []
    for budget in (400, 175, 150, 125, 100, 75, 50):
        at.slider(key="token_budget").set_value(budget).run()
        assert not at.exception
        tokens = shown_tokens(at)
        assert tokens <= budget
        shown.append(tokens)
        table = ranking(at)
        filler = table[table["included"] & ~table["safety"]]
        allergies = table[table["type"] == "allergy"]
        if len(filler):
            assert allergies["included"].all(), (budget, allergies[["content", "rule"]])
        section = at.code[0].value if tokens else ""
        numbered = [ln for ln in section.splitlines() if ln[:1].isdigit()]
        # a line may stand for several memories (issue 23: an allergy and the statement
        # pending against it share one)
        assert len(numbered) == table.loc[table["included"], "line"].nunique()
    assert shown == sorted(shown, reverse=True)
    assert shown[-1] < shown[0]


def test_send_without_endpoint_explains_configuration(app: Callable[..., Any]) -> None:
    at = app(PAGE)
    assert not [i for i in at.info if "OPENAI_API_KEY" in i.value]
    at.button(key="send_to_model").click().run()
    assert not at.exception
    hints = [i.value for i in at.info if "OPENAI_API_KEY" in i.value]
    assert hints and "secrets.toml" in hints[0] and "AZURE_OPENAI_ENDPOINT" in hints[0]
    assert not at.error


# --- issue 14: the explanation table, annotations and possibly-stale flags ---------------------
def frame(at: Any, *columns: str) -> pd.DataFrame:
    """The table shown with these columns (AppTest does not expose a dataframe's key)."""
    for df in at.dataframe:
        if set(columns) <= set(df.value.columns):
            return df.value
    raise AssertionError(f"no table with columns {columns}")


def test_explanation_rows_in_section_order_with_the_numbers(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app(PAGE)
    assert not at.exception
    table = ranking(at)
    for col in ("cosine", "BM25", "relevance", "current importance", "score", "reason"):
        assert col in table.columns
    res = eng.build_context(PID, DEFAULT_QUERY, max_tokens=400, max_memories=5, record_access=False)
    n = len(res.included)
    # in section order; a line may stand for several memories (issue 23: an allergy and the
    # statement pending review against it share one)
    positions = sorted(i.position or 0 for i in res.included)
    assert list(table["line"][:n]) == [str(k) for k in positions]
    assert positions[-1] == len([ln for ln in res.text.splitlines() if ln[:1].isdigit()])
    assert set(table["line"][n:]) <= {"—"}
    by_id = {i.scored.memory.content: i for i in res.items}
    for _, row in table.iterrows():
        item = by_id[row["content"]]
        assert row["cosine"] == pytest.approx(item.scored.similarity)
        assert row["score"] == pytest.approx(item.scored.score)
        assert row["current importance"] == pytest.approx(item.scored.current_importance)
    reasons = " ".join(table["rule"])
    assert "max_memories" not in reasons and "excluded:" not in reasons
    assert "every active allergy is included" in reasons
    assert "other memories scored higher (limit 5)" in reasons
    # the default question warns about nothing (no care plan counts as safety-critical)
    assert not [w for w in at.warning if "safety-critical" in w.value]


def test_annotations_are_shown_with_their_reason(app: Callable[..., Any]) -> None:
    at = app(PAGE)
    notes = frame(at, "annotation", "why")
    pending = notes[notes["annotation"].str.startswith("(pending review:")]
    assert len(pending) >= 1
    assert "anaphylactic" in pending["memory"].iloc[0]
    assert "not decided" in pending["why"].iloc[0]
    assert pending["annotation"].iloc[0] in at.code[0].value  # on the line the agent gets
    assert notes["annotation"].str.startswith("(was ").any()  # a lab history


def test_possibly_stale_flags_keep_and_confirm(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    sup = next(s for s in eng.supersessions(PID) if "metformin 500mg" in eng.get(s.old_id).content)
    assert sup.effective_at is not None
    before = sup.effective_at - timedelta(days=20)
    ids = [
        eng.add_memory(PID, text, mtype, created_at=before).memory.id
        for text, mtype in (
            # an observation, not a reaction: a reaction to the drug stays true after the
            # change and is never flagged (domain.md, Flags; issue 26)
            ("Patient's home glucose readings improved on metformin", "observation"),
            ("Patient takes metformin with the evening meal", "care_plan"),
        )
    ]
    assert {f.memory_id for f in eng.stale_flags(PID)} == set(ids)
    at = app(PAGE)
    assert not at.exception
    flags = frame(at, "flag", "why", "change id")
    assert set(flags["memory id"]) == set(ids)
    day = sup.effective_at.date().isoformat()
    assert set(flags["flag"]) == {f"(may be outdated: metformin changed on {day})"}
    assert flags["why"].str.contains("names metformin").all()
    assert flags["why"].str.contains("Patient tolerates metformin 500mg well").all()

    at.selectbox(key="stale_flag_choice").set_value(
        at.selectbox(key="stale_flag_choice").options[0]
    )
    chosen = at.selectbox(key="stale_flag_choice").value
    at.button(key="keep_flagged").click().run()
    assert not at.exception
    left = {f.memory_id for f in eng.stale_flags(PID)}
    assert len(left) == 1 and left < set(ids)
    (kept,) = eng.audit_log(action="keep_flagged")
    assert kept.entity_id not in left and kept.actor
    assert chosen.startswith(eng.get(kept.entity_id).content[:40])

    at.button(key="confirm_flagged").click().run()
    assert not at.exception
    assert eng.stale_flags(PID) == []
    (gone,) = left
    assert eng.get(gone).status is mc.Status.ARCHIVED
    assert len(eng.audit_log(action="confirm_flagged")) == 1
