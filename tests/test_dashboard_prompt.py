"""Prompt preview page (AppTest on the demo store): the section shown is the engine's, previews
record nothing, the budget shrinks the section without ever trading an allergy for a
lower-priority memory, and with no endpoint "Send to model" explains how to configure one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
        assert len(numbered) == int(table["included"].sum())
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
