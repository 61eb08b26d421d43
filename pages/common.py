"""Shared dashboard plumbing: the engine (once per server), the patient picker (session state
+ URL query string), the reviewer's name, and error display. Layout only: every number comes
from memory_core."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

import memory_core as mc
from memory_core.store import default_store_url

T = TypeVar("T")


def store_url() -> str:
    return default_store_url()


def embedder_spec() -> str:
    return os.environ.get("MEMORY_CORE_EMBEDDER", "minilm")


@st.cache_resource(show_spinner="Loading the memory engine and embedding model…")
def _engine(url: str, embedder: str) -> mc.MemoryEngine:
    return mc.open_engine(url, embedder)


def engine() -> mc.MemoryEngine:
    """The engine for this server's store (created once, shared by every session)."""
    return _engine(store_url(), embedder_spec())


def run(action: Callable[[], T], success: str | None = None) -> T | None:
    """Run an engine call; show its error as st.error (never a traceback)."""
    try:
        result = action()
    except mc.MemoryCoreError as exc:
        st.error(f"{type(exc).__name__}: {exc}")
        return None
    if success:
        st.toast(success)
    return result


def seed_button() -> None:
    """Empty state: offer to load the synthetic demo patients, with a progress bar."""
    from memory_core.seed import seed_demo

    st.info(
        "This store has no patients yet. Load the synthetic Northwind Health demo patients, "
        "or add memories from the **Memories** page or `python -m memory_core import`."
    )
    if st.button("Load demo data", key="seed_demo", type="primary"):
        bar = st.progress(0.0, text="Embedding demo memories…")

        def progress(done: int, total: int) -> None:
            bar.progress(done / max(total, 1), text=f"Embedding demo memories… {done}/{total}")

        summary = run(lambda: seed_demo(engine(), progress=progress))
        if summary:
            st.success(f"Loaded {summary['memories']} memories for {summary['patients']} patients.")
            st.rerun()


def patient_picker() -> str | None:
    """Sidebar patient selector shared by every page; kept in session state and in the URL
    (``?patient=NW-1001``) so a link opens the same patient."""
    require_access()
    patients = engine().list_patients()
    if not patients:
        return None
    wanted = st.session_state.get("patient") or st.query_params.get("patient")
    if wanted not in patients:
        wanted = patients[0]
    choice = st.sidebar.selectbox(
        "Patient", patients, index=patients.index(wanted), key="patient_select"
    )
    st.session_state["patient"] = choice
    if st.query_params.get("patient") != choice:
        st.query_params["patient"] = choice
    return str(choice)


def auth_configured() -> bool:
    """True when ``.streamlit/secrets.toml`` (or the test's secrets) has an ``[auth]`` section."""
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all: Streamlit raises
        return False


def _reviewer_emails() -> set[str]:
    try:
        emails = st.secrets.get("access", {}).get("reviewers", [])
    except Exception:
        emails = []
    return {str(e).strip().lower() for e in emails}


def gate() -> None:
    """Called by app.py before any page: with ``[auth]`` configured, only signed-in users get
    past it (Streamlit's built-in OIDC ``st.login``); without it the dashboard is local-only
    (bound to 127.0.0.1) and whoever uses it is a reviewer."""
    if not auth_configured():
        return
    if not st.user.is_logged_in:
        st.title("🩺 Clinical memory dashboard")
        st.info("Sign in with your organisation account to view patient memories.")
        st.button("Log in", key="login", type="primary", on_click=st.login)
        st.stop()
    role = "reviewer" if can_edit() else "viewer (read-only)"
    st.sidebar.caption(f"Signed in as {identity()} · {role}")
    st.sidebar.button("Log out", key="logout", on_click=st.logout)


def require_access() -> None:
    """Defence in depth, called by every page through the patient picker: if Streamlit serves a
    page file directly (its folder discovery, before app.py's navigation has run), the login
    gate still holds."""
    if auth_configured() and not st.user.is_logged_in:
        st.info("Sign in from the dashboard's home page to view patient memories.")
        st.stop()


def identity() -> str:
    """The signed-in user's e-mail (or name)."""
    email = st.user.get("email") or st.user.get("name") or "unknown"
    return str(email)


def can_edit() -> bool:
    """Reviewers may change things; viewers only look. Without [auth] the local user is a
    reviewer; with it, only e-mails listed in ``[access] reviewers`` are."""
    if not auth_configured():
        return True
    return bool(st.user.is_logged_in) and identity().strip().lower() in _reviewer_emails()


def read_only_note() -> None:
    if not can_edit():
        st.caption("🔒 Read-only: your account is not on the reviewer list.")


def reviewer() -> str:
    """Who is acting, recorded as the actor in the audit log: the signed-in identity with
    [auth], otherwise the name typed in the sidebar."""
    if auth_configured():
        return identity()
    name = st.sidebar.text_input(
        "Reviewer name (for the audit log)",
        key="reviewer",
        value=st.session_state.get("reviewer", "reviewer"),
    )
    return name.strip() or "reviewer"


def data_version(patient_id: str) -> str:
    """Cache key for derived frames: names the store and changes whenever anything of the
    patient changes, accesses and sessions included."""
    content, usage = engine().store.versions(patient_id)
    return f"{store_url()}|{content}|{usage}"


def header(title: str, caption: str | None = None) -> None:
    st.title(title)
    if caption:
        st.caption(caption)


def kv(label: str, value: Any) -> None:
    st.markdown(f"**{label}:** {value}")
