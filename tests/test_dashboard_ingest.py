"""Ingest page (AppTest on the demo store): a demo transcript proposes memories without writing
anything; the table shows the engine's proposals with their supersessions and the evidence
highlighted; rejected and edited rows are honoured by the one Save; the FHIR tab previews and
then imports the demo bundle."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import memory_core as mc

PAGE = "views/ingest.py"
PID = "NW-1001"
DEMO = "transcript_nw1001_followup.txt"


@pytest.fixture
def eng(demo_store: str) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(demo_store)
    yield e
    e.store.close()


@pytest.fixture(autouse=True)
def no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


def proposed(app: Callable[..., Any]) -> Any:
    at = app(PAGE)
    assert not at.exception
    at.selectbox(key="ingest_demo").select(DEMO).run()
    assert "Patient: I stopped metformin ER" in at.text_area(key="ingest_transcript").value
    at.button(key="ingest_propose").click().run()
    assert not at.exception
    return at


def test_demo_transcript_proposes_and_writes_nothing(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    before = len(eng.list_memories(PID))
    at = proposed(app)
    (editor,) = at.data_editor
    table = editor.value
    text = at.text_area(key="ingest_transcript").value
    expected = eng.extract_memories(PID, text, name=DEMO)
    assert list(table["statement"]) == [p.content for p in expected]
    assert list(table["type"]) == [p.memory_type for p in expected]
    assert list(table["importance"]) == [p.importance for p in expected]
    assert table["accept"].all()
    stop = "Patient stopped metformin ER around 2026-10-14 because of persistent diarrhoea"
    assert stop in set(table["statement"])  # "two weeks ago", said on the Date: 2026-10-28
    # rows are numbered 1..N, as the evidence marks in the transcript are (issue 26: 0..N-1)
    assert list(table.index) == list(range(1, len(expected) + 1))
    # what each would replace, its evidence and confidence: listed under the table by number
    texts = [t.value for t in at.text]
    for p in expected:
        assert f"From the words: “{p.evidence}”" in texts
        for s in p.supersedes:
            assert any(t.startswith("Would replace:") and s.content in t for t in texts)
    # the evidence is highlighted in the transcript, numbered like the rows
    marks = [m.value for m in at.markdown if "<mark" in m.value]
    assert len(marks) == 1 and marks[0].count("<mark") == len({(p.start, p.end) for p in expected})
    assert "<sup><b>1</b></sup>" in marks[0] and f"<b>{len(expected)}</b>" in marks[0]
    assert len(eng.list_memories(PID)) == before  # proposing writes nothing


def test_save_writes_the_accepted_rows_as_edited(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    before = {m.id for m in eng.list_memories(PID)}
    at = proposed(app)
    table = at.data_editor[0].value
    n = len(table)
    stop = int(next(i for i, s in enumerate(table["statement"]) if "stopped metformin" in s))
    other = 0 if stop != 0 else 1
    at.session_state["ingest_editor"] = {
        "edited_rows": {
            str(other): {"accept": False},
            str(stop): {"statement": "Patient stopped metformin ER (persistent diarrhoea)"},
        },
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    save = at.button(key="ingest_save")
    assert save.label == f"Save {n - 1} accepted"
    save.click().run()
    assert not at.exception
    assert any("Saved" in s.value for s in at.success)
    new = [m for m in eng.list_memories(PID) if m.id not in before]
    assert len(new) == n - 1
    contents = {m.content for m in new}
    assert "Patient stopped metformin ER (persistent diarrhoea)" in contents
    assert table["statement"].iloc[other] not in contents
    assert all(m.source and m.source.startswith(f"transcript:{DEMO}@") for m in new)
    ids = {m.id for m in new}
    adds = [a for a in eng.audit_log(limit=10_000) if a.action == "add" and a.entity_id in ids]
    assert len(adds) == n - 1 and {a.actor for a in adds} == {"reviewer"}


def test_fhir_tab_previews_then_imports(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    before = len(eng.list_memories(PID))
    at = app(PAGE)
    at.button(key="fhir_preview").click().run()
    assert not at.exception
    summary = next(m.value for m in at.markdown if "would create" in m.value)
    assert "dry run" in summary
    created = next(d.value for d in at.dataframe if "source" in d.value.columns)
    replaced = next(d.value for d in at.dataframe if "older memory" in d.value.columns)
    assert len(eng.list_memories(PID)) == before
    at.button(key="fhir_apply").click().run()
    assert not at.exception
    assert len(eng.list_memories(PID)) == before + len(created)
    # issue 26: the preview said 2 (4 on a fresh seed) and the import then did 8; now both are
    # one computation, so the import replaces exactly what the preview listed
    done = next(m.value for m in at.markdown if " created " in m.value)
    assert f"superseded {len(replaced)}" in done
    assert any(f"superseded {len(replaced)}" in s.value for s in at.success)
    new_ids = {m.id for m in eng.list_memories(PID) if (m.source or "").startswith("fhir:")}
    sups = [s for s in eng.supersessions(PID) if s.new_id in new_ids or s.old_id in new_ids]
    assert len(sups) == len(replaced) > 0
    olds = {eng.get(s.old_id).content for s in sups}
    assert olds == set(replaced["older memory"])
    fhir = [m for m in eng.list_memories(PID) if (m.source or "").startswith("fhir:")]
    assert sorted(m.source or "" for m in fhir) == sorted(created["source"])


def test_errors_show_on_the_click_that_caused_them(app: Callable[..., Any]) -> None:
    """Issue 26: Propose with an empty transcript showed its error one click late. Now the
    error is on the same run as the click, and the next unrelated rerun does not repeat it."""
    at = app(PAGE)
    at.button(key="ingest_propose").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "Nothing was proposed. Paste, upload or pick a transcript first: the transcript is empty."
    ]
    at.run()  # nothing clicked: the message is gone, nothing new appears
    assert not at.error


def test_a_transcript_over_the_limit_is_refused_with_a_message(app: Callable[..., Any]) -> None:
    from memory_core.ingest.service import MAX_TRANSCRIPT_CHARS

    at = app(PAGE)
    long = "Patient: I walk every day.\n" * (MAX_TRANSCRIPT_CHARS // 27 + 2)
    at.text_area(key="ingest_transcript").input(long).run()
    # kept whole (not cut, not emptied) and said at once
    assert at.text_area(key="ingest_transcript").value == long
    assert any(f"{len(long):,} characters" in e.value for e in at.error)
    at.button(key="ingest_propose").click().run()
    assert any(e.value.startswith("Nothing was proposed.") for e in at.error)
    assert not at.data_editor
