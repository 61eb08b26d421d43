"""Every dashboard page reachable by its link on a freshly started server (issue 35, item 3).

A shared link (``/contradictions?patient=NW-1003``) is often the first request a server gets.
Streamlit discovers a folder called ``pages/`` next to app.py (where the page files were; they
are in ``views/`` now) and, on a fresh server, ran the linked file on its own -- before app.py
registered the navigation: the sidebar listed the source files ("app, charts, common, … flag
review") and "common" gave a blank page. Each
page is opened here FIRST, on a server of its own that has served nothing yet, in Debian's
Chromium: it renders its own heading, the sidebar lists the dashboard's pages (never a
source file) and nothing raises. A screenshot of each is saved next to the other browser
tests' (a temporary folder unless UPDATE_SCREENSHOTS=1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_browser import (
    ARGS,
    CHROMIUM,
    NO_BROWSER,
    PAGES,
    _full_page_shot,
    _seeded_now,
    _serve,
    _settle,
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None and bool(NO_BROWSER),
    reason=f"no Chromium in this environment (MEMORY_CORE_NO_BROWSER={NO_BROWSER})",
)

#: what the sidebar lists: the titles app.py registers, nothing else
NAV_TITLES = [
    "Worklist",
    "Overview",
    "Memories",
    "Decay lab",
    "Contradictions",
    "Prompt preview",
    "Ingest",
    "Settings & audit",
]
#: the dashboard's helper modules, which must never be served as pages
NOT_PAGES = ("app", "charts", "common", "flag review", "flag_review")


@pytest.fixture(autouse=True)
def _chromium_is_there() -> None:
    if CHROMIUM is None:
        pytest.fail(
            "Debian's chromium is not installed: `make test` installs it (apt-get install "
            "chromium); where this environment cannot have it, set MEMORY_CORE_NO_BROWSER=<why>"
        )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _seeded_now(tmp_path_factory.mktemp("links"))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.mark.parametrize(
    ("name", "path", "title"), [p for p in PAGES if p[1]] + [("flag_review", "flag_review", "")]
)
def test_page_link_first_on_a_fresh_server(
    store: Path, browser: object, name: str, path: str, title: str
) -> None:
    """The page's URL is the server's first request: it renders that page, with the
    dashboard's navigation in the sidebar. A helper module's name is no page: its URL opens
    the default page (Worklist), never a blank one."""
    for url in _serve(store):  # a server of its own: nothing has run app.py yet
        page: Any = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
        page.goto(f"{url}/{path}?patient=NW-1003")
        _settle(page)
        want = title or "Worklist"
        page.get_by_role("heading", name=want).first.wait_for(timeout=60_000)
        _settle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.first.wait_for(timeout=30_000)
        # each link's text is its Material icon's name, then its title ("balance Contradictions")
        links = [" ".join(t.split()) for t in nav.get_by_role("link").all_inner_texts()]
        assert len(links) == len(NAV_TITLES), f"/{path} opened first: the sidebar lists {links}"
        assert all(x.endswith(t) for x, t in zip(links, NAV_TITLES, strict=True)), links
        assert not [x for x in links if x.lower() in NOT_PAGES]
        shot = _full_page_shot(page, f"link-first-{name}", 1400)
        assert shot.stat().st_size > 10_000
        page.close()
