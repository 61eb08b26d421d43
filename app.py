"""Northwind Health clinical memory dashboard: entry point and navigation."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pages import common

st.set_page_config(
    page_title="Clinical memory — Northwind Health",
    # the tab icon is a file of this repository: an emoji needs an emoji font (an empty box
    # without one) and a Material page_icon is fetched from fonts.gstatic.com
    page_icon=str(Path(__file__).parent / ".streamlit" / "icon.png"),
    layout="wide",
)

common.gate()

# Navigation and button icons: Streamlit's bundled Material Symbols font (no emoji font, no
# outbound request; only a Material page_icon would be fetched from the internet).
PAGES = [
    st.Page("pages/worklist.py", title="Worklist", icon=":material/checklist:", default=True),
    st.Page("pages/overview.py", title="Overview", icon=":material/home:"),
    st.Page("pages/memories.py", title="Memories", icon=":material/folder_open:"),
    st.Page("pages/decay_lab.py", title="Decay lab", icon=":material/trending_down:"),
    st.Page("pages/contradictions.py", title="Contradictions", icon=":material/balance:"),
    st.Page("pages/prompt_preview.py", title="Prompt preview", icon=":material/chat:"),
    st.Page("pages/ingest.py", title="Ingest", icon=":material/download:"),
    st.Page("pages/settings.py", title="Settings & audit", icon=":material/settings:"),
]

st.navigation(PAGES).run()
