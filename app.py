"""Northwind Health clinical memory dashboard: entry point and navigation."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from views import common

st.set_page_config(
    page_title="Clinical memory — Northwind Health",
    # the tab icon is a file of this repository: an emoji needs an emoji font (an empty box
    # without one) and a Material page_icon is fetched from fonts.gstatic.com
    page_icon=str(Path(__file__).parent / ".streamlit" / "icon.png"),
    layout="wide",
)

common.gate()

# The page files live in views/, never in a folder called pages/: Streamlit discovers a pages/
# folder next to the entry point and, on a freshly started server whose first request is a
# page's link (/contradictions?patient=...), runs that file on its own before this navigation
# is registered -- the sidebar then listed the source files and "common" gave a blank page
# (issue 35; tests/test_browser_links.py opens each page's link first on a fresh server).
# Navigation and button icons: Streamlit's bundled Material Symbols font (no emoji font, no
# outbound request; only a Material page_icon would be fetched from the internet).
PAGES = [
    st.Page("views/worklist.py", title="Worklist", icon=":material/checklist:", default=True),
    st.Page("views/overview.py", title="Overview", icon=":material/home:"),
    st.Page("views/memories.py", title="Memories", icon=":material/folder_open:"),
    st.Page("views/decay_lab.py", title="Decay lab", icon=":material/trending_down:"),
    st.Page("views/contradictions.py", title="Contradictions", icon=":material/balance:"),
    st.Page("views/prompt_preview.py", title="Prompt preview", icon=":material/chat:"),
    st.Page("views/ingest.py", title="Ingest", icon=":material/download:"),
    st.Page("views/settings.py", title="Settings & audit", icon=":material/settings:"),
]

st.navigation(PAGES).run()
