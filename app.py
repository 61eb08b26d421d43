"""Northwind Health clinical memory dashboard: entry point and navigation."""

from __future__ import annotations

import streamlit as st

from pages import common

st.set_page_config(
    page_title="Clinical memory — Northwind Health",
    page_icon="🩺",
    layout="wide",
)

common.gate()

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon="🏠", default=True),
    st.Page("pages/memories.py", title="Memories", icon="🗂️"),
    st.Page("pages/decay_lab.py", title="Decay lab", icon="📉"),
    st.Page("pages/contradictions.py", title="Contradictions", icon="⚖️"),
    st.Page("pages/prompt_preview.py", title="Prompt preview", icon="💬"),
    st.Page("pages/ingest.py", title="Ingest", icon="📥"),
    st.Page("pages/settings.py", title="Settings & audit", icon="⚙️"),
]

st.navigation(PAGES).run()
