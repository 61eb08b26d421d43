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


def reviewer() -> str:
    """Who is acting: recorded as the actor in the audit log."""
    name = st.sidebar.text_input(
        "Reviewer name (for the audit log)",
        key="reviewer",
        value=st.session_state.get("reviewer", "reviewer"),
    )
    return name.strip() or "reviewer"


def data_version(patient_id: str) -> int:
    """Cache key for derived frames: changes whenever anything of the patient changes."""
    return engine().store.patient_version(patient_id)


def header(title: str, caption: str | None = None) -> None:
    st.title(title)
    if caption:
        st.caption(caption)


def kv(label: str, value: Any) -> None:
    st.markdown(f"**{label}:** {value}")
