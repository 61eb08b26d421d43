"""Roles enforced in one place (issue 26, item 3; issue 25, finding 11): every write the pages
offer goes through ``engine.acting_as(actor, role)``, which refuses a viewer with
``PermissionDeniedError`` and writes nothing; and every write widget of every page is disabled
for a signed-in viewer, and refused when clicked anyway (a crafted request), also when a page
forgets to disable it."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core.access import AccessRule, Role
from memory_core.embedding import HashingEmbedder
from memory_core.engine.acting import AGENT_CALLS, WRITES, Acting
from memory_core.store import AuditQuery
from tests.conftest import DEMO_NOW, Clock
from views import common

ROOT = Path(__file__).resolve().parents[1]
REVIEWER = "dr.lee@northwind.example"
VIEWER = {"is_logged_in": True, "email": "nurse@northwind.example", "name": "Nurse"}
PID = "NW-1001"

#: buttons that write nothing (navigation, previews, a model call)
READS = {"worklist_open", "preview_add", "send_to_model", "ingest_propose", "fhir_preview"}
#: each write widget (by key or key prefix) and the guarded engine writes it makes
WIDGET_WRITES = {
    "pin_toggle": {"pin", "unpin"},
    "archive_toggle": {"archive", "restore"},
    "save_importance": {"set_importance"},
    "save_new": {"add_memory"},
    "confirm_flagged_": {"confirm_flagged"},
    "confirm_": {"confirm_supersession"},
    "reject_": {"reject_supersession"},
    "undo_": {"undo_supersession"},
    "scan": {"scan_contradictions"},
    "keep_flagged_": {"keep_flagged"},
    "lab_save": {"save_policy"},
    "dated_save": {"save_policy"},
    "ingest_save": {"accept_proposals"},
    "fhir_apply": {"import_fhir"},
    "seed_demo": {"seed_demo"},
}


def _writes_of(key: str) -> set[str]:
    for prefix in sorted(WIDGET_WRITES, key=len, reverse=True):  # the longest prefix first
        if key == prefix or (prefix.endswith("_") and key.startswith(prefix)):
            return WIDGET_WRITES[prefix]
    raise AssertionError(f"button {key!r} is neither a known read nor a known write")


# --- the engine's guard ------------------------------------------------------------------------
def test_the_access_rule() -> None:
    local = AccessRule(None)
    assert local.role_of(None) is Role.REVIEWER and local.role_of("anyone") is Role.REVIEWER
    listed = AccessRule.from_list([" Dr.Lee@Northwind.example ", ""])
    assert listed.role_of("dr.lee@northwind.example") is Role.REVIEWER
    assert listed.role_of("nurse@northwind.example") is Role.VIEWER
    assert listed.role_of(None) is Role.VIEWER and listed.role_of("") is Role.VIEWER
    assert AccessRule.from_list([]).role_of(REVIEWER) is Role.VIEWER  # an empty list: no one


def test_writes_lists_every_write_of_the_guard() -> None:
    methods = {
        name
        for name, _ in inspect.getmembers(Acting, inspect.isfunction)
        if not name.startswith("_")
    }
    assert methods == set(WRITES) | set(AGENT_CALLS)  # the agent's calls: test_agent_principal
    assert set().union(*WIDGET_WRITES.values()) == set(WRITES)


def _state(eng: mc.MemoryEngine) -> tuple[Any, ...]:
    mems = tuple(
        (m.id, m.version, m.status, m.pinned, m.importance)
        for p in eng.list_patients()
        for m in eng.list_memories(p)
    )
    sups = tuple((s.id, s.state, s.version) for s in eng.supersessions())
    return mems, sups, len(eng.audit_log(limit=100_000)), eng.policy.to_dict()


@pytest.fixture
def guarded(clock: Clock) -> Iterator[tuple[mc.MemoryEngine, dict[str, Any]]]:
    """A fast engine with one of everything a write can act on."""
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=clock)
    dims = eng.embedder.dimensions
    vec = [1.0] + [0.0] * (dims - 1)
    old, new = (
        eng.add_memories(
            [
                {
                    "patient_id": PID,
                    "content": text,
                    "memory_type": "allergy",
                    "created_at": clock.now - timedelta(days=days),
                    "embedding": vec,
                }
            ]
        )[0]
        for text, days in (("Patient has a penicillin allergy", 9), ("Penicillin: rash only", 1))
    )
    (sup,) = new.supersessions
    bundle = json.loads(
        files("memory_core").joinpath("data/demo/fhir_nw1001_bundle.json").read_text("utf-8")
    )
    # after the bundle's dates, and not after the wall clock (a store refuses a change dated
    # in its future: issue 25)
    clock.now = DEMO_NOW
    yield eng, {"memory": old.memory, "sup": sup, "bundle": bundle}
    eng.store.close()


def _calls(eng: mc.MemoryEngine, it: dict[str, Any]) -> dict[str, Callable[[Acting], Any]]:
    m, s = it["memory"], it["sup"]
    return {
        "pin": lambda a: a.pin(m.id),
        "unpin": lambda a: a.unpin(m.id),
        "set_importance": lambda a: a.set_importance(m.id, 3.0),
        "archive": lambda a: a.archive(m.id),
        "restore": lambda a: a.restore(m.id),
        "add_memory": lambda a: a.add_memory(PID, "Patient walks daily", "observation"),
        "confirm_supersession": lambda a: a.confirm_supersession(s.id),
        "reject_supersession": lambda a: a.reject_supersession(s.id),
        "undo_supersession": lambda a: a.undo_supersession(s.id),
        "scan_contradictions": lambda a: a.scan_contradictions(PID),
        "keep_flagged": lambda a: a.keep_flagged(m.id, s.id),
        "confirm_flagged": lambda a: a.confirm_flagged(m.id, s.id),
        "save_policy": lambda a: a.save_policy(eng.policy),
        "accept_proposals": lambda a: a.accept_proposals(PID, []),
        "import_fhir": lambda a: a.import_fhir(it["bundle"], dry_run=False),
        "seed_demo": lambda a: a.seed_demo(),
    }


def test_a_viewer_is_refused_every_write_and_nothing_is_written(
    guarded: tuple[mc.MemoryEngine, dict[str, Any]],
) -> None:
    eng, it = guarded
    viewer = eng.acting_as("nurse@northwind.example", Role.VIEWER)
    calls = _calls(eng, it)
    assert set(calls) == set(WRITES)
    before = _state(eng)
    for name in WRITES:
        with pytest.raises(mc.PermissionDeniedError) as err:
            calls[name](viewer)
        assert err.value.action == name and err.value.role == "viewer"
        assert "nurse@northwind.example" in str(err.value)
        assert _state(eng) == before, name
    # a preview writes nothing and is open to every role
    report = viewer.import_fhir(it["bundle"], dry_run=True)
    assert report.dry_run and report.created and _state(eng) == before


def test_a_reviewer_acts_under_their_own_name(
    guarded: tuple[mc.MemoryEngine, dict[str, Any]],
) -> None:
    eng, it = guarded
    dr = eng.acting_as(REVIEWER, "reviewer")
    assert dr.may_write and dr.role is Role.REVIEWER
    dr.set_importance(it["memory"].id, 9.0)
    dr.reject_supersession(it["sup"].id)
    dr.undo_supersession(it["sup"].id)  # "keep both" undone: the review is open again
    actions = [(a.action, a.actor) for a in eng.audit_log(limit=4)]
    assert actions == [
        ("undo_supersession", REVIEWER),
        # keeping the older memory confirms it, under the reviewer's name (issue 23)
        ("confirm_memory", REVIEWER),
        ("reject_supersession", REVIEWER),
        ("edit_importance", REVIEWER),
    ]
    assert eng.store.get_supersession(it["sup"].id).state is mc.SupersessionState.PENDING


# --- every write widget of every page, under a viewer ------------------------------------------
def _viewer_app(script: str = "app.py") -> Any:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / script), default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback"}
    at.secrets["access"] = {"reviewers": [REVIEWER]}
    at.user = VIEWER
    return at


def _visit(demo_store: str) -> Iterator[tuple[str, Any]]:
    """Each page as a viewer, driven into the states where its write widgets show: a flagged
    memory and a decided review exist, the tuned policy differs from the saved one (and the
    dated types picked on Settings), a transcript is proposed and a FHIR bundle previewed."""
    eng = mc.open_engine(demo_store)
    from tests.test_dashboard_prompt import flagged_memories

    flagged_memories(eng)
    eng.store.close()
    at = _viewer_app()
    at.query_params["patient"] = PID
    at.run()
    for page in (
        "views/worklist.py",
        "views/overview.py",
        "views/memories.py",
        "views/contradictions.py",
        "views/prompt_preview.py",
        "views/settings.py",
    ):
        at.switch_page(page).run()
        if page == "views/memories.py":  # a statement to save: the check reaches the engine
            at.text_area(key="new_content").input("Patient walks every morning").run()
        if page == "views/settings.py":  # another choice of dated types to save (issue 35)
            at.multiselect(key="dated_types").set_value(["medication", "lab_result"]).run()
        yield page, at
    at.switch_page("views/decay_lab.py").run()
    at.radio(key="lab_rate_form").set_value("% per period").run()
    at.slider(key="lab_loss_pct").set_value(50.0).run()
    yield "views/decay_lab.py", at
    at.switch_page("views/ingest.py").run()
    at.selectbox(key="ingest_demo").select("transcript_nw1001_followup.txt").run()
    at.button(key="ingest_propose").click().run()
    at.button(key="fhir_preview").click().run()
    yield "views/ingest.py", at


def _buttons(at: Any) -> list[Any]:
    return [b for b in at.button if b.key not in (None, "logout")]


def test_every_write_widget_is_disabled_for_a_viewer(demo_store: str) -> None:
    """A browser cannot click a disabled widget (AppTest refuses it too); the next test clicks
    every one of them with the page's check removed, and the engine refuses."""
    seen: set[str] = set()
    before = _store_state(demo_store)
    for page, at in _visit(demo_store):
        assert not at.exception, page
        writes = [b for b in _buttons(at) if b.key not in READS]
        if writes:  # the page says why its buttons are off
            assert any("Read-only" in c.value for c in at.caption), page
        for b in writes:
            assert b.disabled, f"{page}: {b.key} is enabled for a viewer"
            seen |= _writes_of(b.key)
        for inp in at.number_input:  # the importance editor is locked too
            if inp.key == "edit_importance":
                assert inp.disabled
        if page == "views/worklist.py":
            before = _store_state(demo_store)  # after _visit added the flagged memories
        assert _store_state(demo_store) == before, page  # viewing and previewing wrote nothing
    # the pages offer every guarded write (the demo loader: the empty store's test below)
    assert seen == set(WRITES) - {"seed_demo"}


def test_every_write_widget_is_refused_for_a_viewer_by_the_engine(
    demo_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crafted request, or a page that forgot to disable its buttons (``can_edit`` patched to
    say yes): every write widget of every page is clicked as a viewer, and the guarded path
    refuses each -- nothing written, the page says "Read-only"."""
    monkeypatch.setattr(common, "can_edit", lambda: True)
    before = _store_state(demo_store)
    clicked: set[str] = set()
    for page, at in _visit(demo_store):
        if page == "views/worklist.py":
            before = _store_state(demo_store)  # after _visit added the flagged memories
        for b in [b for b in _buttons(at) if b.key not in READS]:
            clicked |= _writes_of(b.key)
            assert not b.disabled
            at.button(key=b.key).click().run()
            assert not at.exception, (page, b.key)
            assert _store_state(demo_store) == before, f"{page}: {b.key} wrote as a viewer"
            refusals = [e.value for e in at.error] + [e.value for e in at.warning]
            assert any("Read-only" in r for r in refusals), (page, b.key, refusals)
    assert clicked == set(WRITES) - {"seed_demo"}


def _store_state(url: str) -> tuple[Any, ...]:
    store = mc.open_store(url)
    try:
        mems = tuple(
            (m.id, m.version) for p in store.list_patients() for m in store.list_memories(p)
        )
        sups = tuple((s.id, s.version) for s in store.list_supersessions())
        audit = len(store.list_audit(AuditQuery(limit=1_000_000)))
        return mems, sups, audit, store.load_policy()
    finally:
        store.close()


def test_an_empty_store_offers_the_demo_to_reviewers_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: a signed-in non-reviewer loaded the demo on an empty store (633 memories
    written). Now the button is disabled for a viewer and refused when clicked."""
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    monkeypatch.setenv("MEMORY_CORE_STORE", url)
    monkeypatch.setenv("MEMORY_CORE_EMBEDDER", "hashing")
    at = _viewer_app()
    at.run()
    seed = at.button(key="seed_demo")
    assert seed.disabled
    assert _writes_of(seed.key) == {"seed_demo"}
    monkeypatch.setattr(common, "can_edit", lambda: True)  # the page forgot: the engine refuses
    at.run()
    at.button(key="seed_demo").click().run()
    assert any("Read-only" in e.value for e in at.error)
    store = mc.open_store(url)
    try:
        assert store.count_memories() == 0
    finally:
        store.close()
