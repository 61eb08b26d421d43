"""Prompt preview page (AppTest on the demo store): the section shown is the engine's, previews
record nothing, the budget shrinks the section without ever trading an allergy for a
lower-priority memory, and with no endpoint "Send to model" explains how to configure one."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest

import memory_core as mc
from memory_core import context as ctx
from memory_core.labels import age_label

PAGE = "views/prompt_preview.py"
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
    """The numbers behind each line (key "ranking_table"; found by its columns)."""
    for df in at.dataframe:
        if {"line", "memory", "score"} <= set(df.value.columns):
            return df.value
    raise AssertionError("ranking table not shown")


def why(at: Any) -> list[str]:
    """The readable lists of every candidate ("- **Line 1** · Allergy · “…”"), item by item:
    the section's lines, the closest left out, the others (in an expander)."""
    first = next(k for k, m in enumerate(at.markdown) if m.value.startswith("- **Line 1**"))
    bodies = [m.value for m in at.markdown[first : first + 3] if m.value.startswith("- **")]
    return [item for body in bodies for item in body.removeprefix("- ").split("\n- ")]


def shown_tokens(at: Any) -> int:
    """The "Section tokens" metric reads "173 of 400"."""
    return int(next(m.value for m in at.metric if m.label == "Section tokens").split()[0])


def unescaped(markdown: str) -> str:
    """Markdown with the page's backslash escapes removed (memory text is escaped there)."""
    return re.sub(r"\\(.)", r"\1", markdown)


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
    assert len(table) == len(res.items) == len(why(at))
    assert (table["line"] != "—").sum() == len(res.included)
    # where each memory's age counts from, in memory_core's words (issue 23)
    ages = {i.scored.memory.content: age_label(i.scored.memory, eng.clock()) for i in res.items}
    assert list(table["age"]) == [ages[c] for c in table["memory"]]
    assert all(a.startswith("age from ") for a in table["age"])

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
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """The section shrinks with the budget; a safety line left out is named plainly above the
    section (every one of them), and no filler takes an allergy's place."""
    at = app(PAGE)
    at.number_input(key="max_memories").set_value(10).run()
    shown: list[int] = []
    for budget in (400, 175, 150, 125, 100, 80, 75, 50):
        at.slider(key="token_budget").set_value(budget).run()
        assert not at.exception
        tokens = shown_tokens(at)
        assert tokens <= budget
        shown.append(tokens)
        res = eng.build_context(
            PID, DEFAULT_QUERY, max_tokens=budget, max_memories=10, record_access=False
        )
        table = ranking(at)
        included = set(table.loc[table["line"] != "—", "memory"])
        assert included == {i.scored.memory.content for i in res.included}
        filler = [i for i in res.included if not i.scored.safety]
        allergies = [i for i in res.items if i.scored.memory.memory_type == "allergy"]
        if filler:
            assert all(i.included for i in allergies), budget
        section = at.code[0].value if tokens else ""
        numbered = [ln for ln in section.splitlines() if ln[:1].isdigit()]
        # a line may stand for several memories (issue 23: an allergy and the statement
        # pending against it share one)
        assert len(numbered) == table.loc[table["line"] != "—", "line"].nunique()
        # every safety line that did not fit is named above the section, each on its own
        left_out = [t.value for t in at.text if t.value.startswith("not injected: ")]
        assert left_out == [f"not injected: {i.line}" for i in res.safety_omitted]
        if res.safety_omitted:
            (err,) = [e.value for e in at.error if "would NOT reach the agent" in e.value]
            k = len(res.safety_omitted)
            assert err.startswith(f"{k} safety-critical memor")
    assert shown == sorted(shown, reverse=True)
    assert shown[-1] < shown[0]


def test_send_without_endpoint_explains_configuration(app: Callable[..., Any]) -> None:
    at = app(PAGE)
    assert not [i for i in at.info if "OPENAI_API_KEY" in i.value]
    at.button(key="send_to_model").click().run()
    assert not at.exception
    hints = [i.value for i in at.info if "OPENAI_API_KEY" in i.value]
    assert hints and "secrets.toml" in hints[0] and "AZURE_OPENAI_ENDPOINT" in hints[0]
    # no error but the report of a safety memory the places leave out (issue 35)
    assert not [e for e in at.error if "would NOT reach the agent" not in e.value]


# --- issue 14: the explanation table, annotations and possibly-stale flags ---------------------
def frame(at: Any, *columns: str) -> pd.DataFrame:
    """The table shown with these columns (AppTest does not expose a dataframe's key)."""
    for df in at.dataframe:
        if set(columns) <= set(df.value.columns):
            return df.value
    raise AssertionError(f"no table with columns {columns}")


def test_explanation_is_a_readable_list_in_section_order_with_the_numbers(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """Issue 26: the two explanation tables were ~1,400 px wide in a 562 px column. Now the
    section comes first, then every candidate as a list in words (its line, type, statement and
    rule), with the numbers one expander away under plain column names."""
    at = app(PAGE)
    assert not at.exception
    heads = [h.value for h in at.subheader]
    assert heads.index("Injected section") < heads.index("Why each memory is in or out")
    res = eng.build_context(PID, DEFAULT_QUERY, max_tokens=400, max_memories=5, record_access=False)
    n = len(res.included)
    items = why(at)
    assert len(items) == len(res.items)
    # in section order; a line may stand for several memories (issue 23: an allergy and the
    # statement pending review against it share one)
    lines = sorted(res.included, key=lambda i: i.position or 0)
    positions = [i.position for i in lines]
    assert sorted(set(positions)) == list(range(1, positions[-1] + 1))
    assert positions[-1] == len([ln for ln in res.text.splitlines() if ln[:1].isdigit()])
    for text, item in zip(items, lines, strict=False):
        assert text.startswith(f"**Line {item.position}**")
        assert f"“{item.scored.memory.content}”" in unescaped(text)
    assert all(t.startswith("**Not in the section**") for t in items[n:])
    words = unescaped(" ".join(items))
    assert "every active allergy is included" in words
    assert "other memories scored higher (limit 5)" in words
    table = ranking(at)
    assert list(table["line"][:n]) == [str(k) for k in positions]
    assert set(table["line"][n:]) <= {"—"}
    assert not {"cosine", "BM25"} & set(table.columns)  # plain names; the terms in tooltips
    by_content = {i.scored.memory.content: i for i in res.items}
    for _, row in table.iterrows():
        item = by_content[row["memory"]]
        assert row["meaning"] == pytest.approx(item.scored.similarity)
        assert row["keywords"] == pytest.approx(item.scored.bm25)
        assert row["score"] == pytest.approx(item.scored.score)
        assert row["importance now"] == pytest.approx(item.scored.current_importance)
    # the default question warns only about safety types left out (issue 35: by the places
    # as by the budget); no care plan counts as safety-critical
    assert {i.scored.memory.memory_type for i in res.safety_omitted} <= {
        "allergy",
        "adverse_reaction",
    }
    warned = [e.value for e in at.error if "safety-critical" in e.value]
    assert len(warned) == (1 if res.safety_omitted else 0)


def test_memory_text_in_the_list_is_plain_text(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """The list is markdown: a memory's markup is escaped, shown as typed, never rendered."""
    hostile = "Patient said **stop** [click](javascript:alert(1)) <b>now</b> :material/home:"
    eng.add_memory(PID, hostile, "observation")
    at = app(PAGE)
    at.text_area(key="session_context").input("What did the patient say about stopping?").run()
    body = " ".join(why(at))
    assert hostile not in body and "](javascript" not in body
    assert unescaped(body).count(hostile) == 1


def test_annotations_are_shown_with_their_reason(app: Callable[..., Any]) -> None:
    at = app(PAGE)
    notes = unescaped(next(m.value for m in at.markdown if "not decided" in m.value))
    pending = [line for line in notes.split("\n- ") if "(pending review:" in line]
    assert len(pending) >= 1
    assert "anaphylactic" in pending[0] and "not decided" in pending[0]
    note = pending[0][pending[0].index("(pending review:") :].split(")")[0] + ")"
    assert note in at.code[0].value  # on the line the agent gets
    at.text_area(key="session_context").input("How has the patient's HbA1c changed?").run()
    notes = unescaped(next(m.value for m in at.markdown if "earlier values" in m.value))
    assert "(was " in notes  # a lab history, on a line of the section
    assert all(line.startswith(("- **Line ", "  :gray")) for line in notes.splitlines())


def test_flags_are_listed_with_a_link_to_where_they_are_decided(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    ids = flagged_memories(eng)
    at = app(PAGE)
    assert not at.exception
    assert "Possibly out of date" in [h.value for h in at.subheader]
    texts = [t.value for t in at.text]
    for mid in ids:
        assert any(t.endswith(eng.get(mid).content) for t in texts)
    # the decisions are on Contradictions (the worklist's link for a flag opens them too)
    assert not [b for b in at.button if (b.key or "").startswith(("keep_flagged", "confirm_fl"))]
    (link,) = [p for p in at.get("page_link") if "Possibly out of date" in p.proto.label]
    assert link.proto.page.endswith("contradictions") and "review=flags" in link.proto.query_string


def flagged_memories(eng: mc.MemoryEngine) -> list[str]:
    """Two memories naming metformin, written before the metformin switch: both flagged (a care
    plan and an observation: history such as a reaction to the drug is never flagged)."""
    sup = next(s for s in eng.supersessions(PID) if "metformin 500mg" in eng.get(s.old_id).content)
    assert sup.effective_at is not None
    before = sup.effective_at - timedelta(days=20)
    ids = [
        eng.add_memory(PID, text, mtype, created_at=before).memory.id
        for text, mtype in (
            # an observation, not a reaction: a reaction to the drug stays true after the
            # change and is never flagged (domain.md, Flags; issue 26)
            ("Patient keeps the metformin box in the kitchen cupboard", "observation"),
            ("Patient takes metformin with the evening meal", "care_plan"),
        )
    ]
    assert {f.memory_id for f in eng.stale_flags(PID)} == set(ids)
    return ids
