"""AppTest of the Settings & audit page (views/settings.py) on the seeded demo store."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

import memory_core as mc
from memory_core.labels import action_label
from memory_core.store.base import AuditQuery
from memory_core.values import AuditAction

PAGE = "views/settings.py"
PID = "NW-1001"


@pytest.fixture
def eng(demo_store: str) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(demo_store)
    yield e
    e.store.close()


def _audit(at: Any) -> Any:
    """The audit table's DataFrame, or None when the page shows none."""
    frames = [d.value for d in at.dataframe if "actor" in d.value.columns]
    return frames[0] if frames else None


def test_live_store_embedder_and_policy_are_shown(
    app: Callable[..., Any], eng: mc.MemoryEngine, demo_store: str
) -> None:
    at = app(PAGE)
    assert not at.exception and not at.error
    codes = [c.value for c in at.code]
    desc = eng.embedder.describe()
    assert desc["model_id"] in codes
    assert demo_store in codes
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Dimensions"] == str(desc["dimensions"])
    assert metrics["Threshold in use"] == f"{eng.contradiction_threshold:.2f}"
    thresholds = next(d.value for d in at.dataframe if "source" in d.value.columns)
    thresholds = thresholds.set_index("type")
    for t in ("allergy", "preference", "observation"):
        assert thresholds.loc[t, "threshold"] == pytest.approx(eng.threshold_for(t))
    assert thresholds.loc["allergy", "on a match"] == "wait for a reviewer"
    assert thresholds.loc["preference", "on a match"] == "replace at once"
    assert json.loads(at.json[0].value) == json.loads(json.dumps(eng.policy.to_dict()))


def test_azure_settings_are_documented_and_cosmos_marked_planned(
    app: Callable[..., Any],
) -> None:
    at = app(PAGE)
    code = "\n".join(c.value for c in at.code)
    for var in (
        "COSMOS_ENDPOINT",
        "COSMOS_KEY",
        "COSMOS_DATABASE",
        "COSMOS_CONTAINER",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        ".streamlit/secrets.toml",
    ):
        assert var in code
    assert "cosmos://" in code
    # the availability note follows what this build really has
    has_store = importlib.util.find_spec("memory_core.store.cosmos") is not None
    has_sdk = has_store and importlib.util.find_spec("azure.cosmos") is not None
    notes = [w.value for w in at.warning] + [i.value for i in at.info]
    notes += [x.value for x in at.success]
    if not has_store:
        assert any("not available in this build" in n for n in notes)
    elif not has_sdk:
        assert any("`azure-cosmos` package" in n for n in notes)
    else:
        assert any("Supported by this build" in n for n in notes)


def test_audit_filter_by_action_shows_only_that_action(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    at = app(PAGE)
    assert len(set(_audit(at)["action"])) > 1  # unfiltered: several actions
    at.selectbox(key="audit_action").select("supersede").run()
    df = _audit(at)
    assert set(df["action"]) == {"Replaced by a newer memory"}  # words, not the code
    assert len(df) == len(eng.audit_log(action="supersede"))
    before = json.loads(df["before"].iloc[0])
    after = json.loads(df["after"].iloc[0])
    assert (before["status"], after["status"]) == ("active", "superseded")


def test_audit_filter_by_patient_and_actor(app: Callable[..., Any], eng: mc.MemoryEngine) -> None:
    mem = next(m for m in eng.list_memories(PID) if not m.pinned)
    eng.pin(mem.id, by="Dr. Rivera")
    at = app(PAGE)
    at.selectbox(key="audit_patient_scope").select("current").run()
    df = _audit(at)
    assert set(df["patient"]) == {PID}
    at.text_input(key="audit_actor").input("Dr. Rivera").run()
    df = _audit(at)
    assert list(df["actor"]) == ["Dr. Rivera"]
    assert (df["action"].iloc[0], df["entity id"].iloc[0]) == ("Pinned", mem.id)
    assert (
        df["what happened"].iloc[0]
        == f"{PID} · Dr. Rivera pinned “{mem.content}”: it no longer fades"
    )
    assert json.loads(df["after"].iloc[0])["pinned"] is True
    at.text_input(key="audit_actor").input("nobody").run()
    assert _audit(at) is None
    assert any("No audit rows match" in i.value for i in at.info)


def test_audit_filter_offers_every_audited_action(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """The action filter lists every action the core audits (purge and promote included), so a
    reviewer can find a deletion."""
    at = app(PAGE)
    options = at.selectbox(key="audit_action").options
    assert "Deleted (purge)" in options and "Became long-term" in options
    assert set(options) == {"All actions", *(action_label(a.value) for a in AuditAction)}
    assert len(set(options)) == len(AuditAction) + 1  # one distinct label per action
    mem = next(m for m in eng.list_memories(PID) if not m.pinned)
    eng.archive(mem.id, by="Dr. Rivera")
    # archived just now: purged at once (a purge dated in the future is refused, issue 25)
    purged = eng.purge(older_than_days=0, dry_run=False, patient_id=PID, by="Dr. Rivera")
    assert [m.id for m in purged] == [mem.id]
    at.selectbox(key="audit_action").select("purge").run()
    df = _audit(at)
    assert set(df["action"]) == {"Deleted (purge)"}
    assert mem.id in set(df["entity id"])
    assert any(mem.content in t and "deleted" in t for t in df["what happened"])


@pytest.mark.parametrize("bad", [0, -5, 20_000])
def test_audit_row_limit_outside_its_range_says_so(app: Callable[..., Any], bad: int) -> None:
    at = app(PAGE)
    at.number_input(key="audit_limit").set_value(bad).run()
    assert not at.exception
    assert any("Enter a number from 1 to 10000" in e.value for e in at.error)
    assert _audit(at) is None  # nothing shown from the old limit


def test_audit_log_comes_before_the_azure_instructions_and_says_what_changed(
    app: Callable[..., Any],
) -> None:
    at = app(PAGE)
    heads = [h.value for h in at.subheader]
    assert heads.index("Audit log") < heads.index("Switching to Azure")
    df = _audit(at)
    assert "what changed" in df.columns
    sup = df[df["action"] == "Replaced by a newer memory"]["what changed"]
    assert sup.str.contains("status: active → replaced by a newer memory").all()
    assert not df["what changed"].str.contains("embedding_model|embedding model").any()
    # no raw codes or ISO timestamps: fields and values in words (issue 26)
    words = " ".join(df["what changed"]) + " ".join(df["what happened"])
    for code in ("decided_at", "superseded_by", "_supersession", "None →", "T00:", "+00:00"):
        assert code not in words, code


def test_audit_rows_read_as_sentences_with_the_memories_text(
    app: Callable[..., Any], eng: mc.MemoryEngine
) -> None:
    """Issue 26: the audit showed `confirm_supersession` and `decided at: None → 2026-12-01T…`
    without the memory's text. Now each row is a sentence quoting the statements."""
    sup = next(
        s
        for s in eng.supersessions(PID, state="pending")
        if "penicillin" in eng.get(s.old_id).content
    )
    old, new = eng.get(sup.old_id).content, eng.get(sup.new_id).content
    eng.confirm_supersession(sup.id, "Dr Lee")
    eng.undo_supersession(sup.id, "Dr Lee")
    at = app(PAGE)
    at.text_input(key="audit_actor").input("Dr Lee").run()
    df = _audit(at)
    rows = set(zip(df["action"], df["what happened"], strict=True))
    who = f"{PID} · "  # the patient first: the log may list every patient
    assert ("Replacement confirmed", f"{who}Dr Lee confirmed that “{new}” replaces “{old}”") in rows
    assert (
        "Decision undone",
        f"{who}Dr Lee undid the confirmation that “{new}” replaces “{old}”: back to review",
    ) in rows
    assert ("Replaced by a newer memory", f"{who}“{old}” was replaced by a newer memory") in rows
    assert ("Active again", f"{who}“{old}” is active again") in rows
    assert set(df["action"]) <= {
        "Replacement confirmed",
        "Decision undone",
        "Replaced by a newer memory",
        "Active again",
    }


# --- the one mapping of words (memory_core/labels.py) -------------------------------------------
def test_every_audited_action_has_its_own_words_and_a_sentence() -> None:
    from memory_core.labels import ACTION_LABELS, audit_sentence, changed_in_words

    assert set(ACTION_LABELS) == {a.value for a in AuditAction}
    assert len(set(ACTION_LABELS.values())) == len(AuditAction)
    at = datetime(2026, 12, 1, 20, 23, 1, 211118, tzinfo=UTC)
    memory = {"content": "Patient takes metformin", "memory_type": "medication"}
    sup = {"old_id": "m1", "new_id": "m2", "state": "pending"}
    contents = {"m1": "Patient takes metformin", "m2": "Patient stopped metformin"}
    for action in AuditAction:
        entity = "supersession" if "supersession" in action.value else "memory"
        rec = sup if entity == "supersession" else memory
        entry = mc.AuditEntry(at, "Dr Lee", action.value, entity, "m1", PID, rec, rec)
        sentence = audit_sentence(entry, contents)
        assert "_" not in sentence, sentence  # no code such as confirm_supersession
        assert "“Patient" in sentence or action in (
            AuditAction.POLICY_CHANGE,
            AuditAction.IMPORT_SESSIONS,
        ), sentence
    # what changed: fields and values in words, no ISO timestamps, no None
    words = changed_in_words(
        {"state": "pending", "decided_at": None, "superseded_by": None},
        {"state": "confirmed", "decided_at": at.isoformat(), "superseded_by": "m2"},
    )
    assert words == (
        "review: waiting for review → confirmed by a reviewer; decided on: none → "
        "01 Dec 2026 20:23 UTC"
    )


def test_say_when_last_confirmed_is_shown_and_saved(
    app: Callable[..., Any], demo_store: str
) -> None:
    """Issue 35: the types whose lines say when they were last confirmed (medication by
    default) are on the page, and a reviewer's choice is saved as the policy (audited)."""
    at = app(PAGE)
    pick = at.multiselect(key="dated_types")
    assert pick.value == ["medication"]
    assert at.button(key="dated_save").disabled  # nothing changed yet
    pick.set_value(["medication", "lab_result"]).run()
    at.button(key="dated_save").click().run()
    assert not at.exception and not at.error
    eng = mc.open_engine(demo_store)
    try:
        assert eng.policy.context.dated_types == ("medication", "lab_result")
        (entry, *_) = eng.store.list_audit(AuditQuery(action="policy_change"))
        assert entry.actor == "reviewer"
    finally:
        eng.store.close()
