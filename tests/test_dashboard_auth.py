"""Access control: logged out, viewer and reviewer (AppTest with st.user), and the login gate
holding even when a page file is run directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import memory_core as mc
from memory_core.store import AuditQuery

ROOT = Path(__file__).resolve().parents[1]
REVIEWER = "dr.lee@northwind.example"


def _app(user: dict[str, Any], script: str = "app.py") -> Any:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / script), default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback"}
    at.secrets["access"] = {"reviewers": [REVIEWER]}
    at.user = user
    at.run()
    return at


def test_logged_out_sees_only_the_login(demo_store: str) -> None:
    at = _app({"is_logged_in": False})
    assert not at.exception
    assert at.button(key="login").label == "Log in"
    assert not at.dataframe and not at.metric
    assert all("NW-" not in t.value for t in at.text)


def test_a_page_file_run_directly_still_needs_a_login(demo_store: str) -> None:
    for page in ("views/memories.py", "views/decay_lab.py", "views/prompt_preview.py"):
        at = _app({"is_logged_in": False}, page)
        assert not at.exception
        assert not at.dataframe and not at.metric
        assert any("Sign in" in i.value for i in at.info)


def test_viewer_can_look_but_not_change(demo_store: str) -> None:
    at = _app({"is_logged_in": True, "email": "nurse@northwind.example", "name": "Nurse"})
    assert any("viewer" in c.value for c in at.sidebar.caption)
    at.switch_page("views/contradictions.py").run()
    assert not at.exception
    confirm = [b for b in at.button if b.key and b.key.startswith("confirm_")]
    assert confirm and all(b.disabled for b in confirm)


def test_reviewer_acts_as_their_signed_in_identity(demo_store: str) -> None:
    at = _app({"is_logged_in": True, "email": REVIEWER, "name": "Dr Lee"})
    assert any("reviewer" in c.value for c in at.sidebar.caption)
    at.switch_page("views/contradictions.py").run()
    confirm = [b for b in at.button if b.key and b.key.startswith("confirm_")]
    assert confirm and not confirm[0].disabled
    sup_id = confirm[0].key.removeprefix("confirm_")
    confirm[0].click().run()
    assert not at.exception
    store = mc.open_store(demo_store)
    assert store.get_supersession(sup_id).decided_by == REVIEWER
    audit = store.list_audit(AuditQuery(entity_id=sup_id, action="confirm_supersession"))
    assert [a.actor for a in audit] == [REVIEWER]
