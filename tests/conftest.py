from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from tests.cosmos_server import CosmosServer, CosmosServerUnavailable


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--eval-report",
        action="store_true",
        help="print the evaluation tests' tallies (clinician questions, held-out demo "
        "questions) as they run; without it a tally stays in the test's captured output "
        "(shown when the test fails, or with -rP), never in the middle of the progress dots",
    )


@pytest.fixture
def eval_report(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> Callable[[str], None]:
    """``eval_report(text)``: an evaluation test's tally, on the terminal only with
    ``--eval-report`` (issue 35: `pytest -q` printed them among the dots)."""

    def report(text: str) -> None:
        if request.config.getoption("--eval-report"):
            with capsys.disabled():
                print(text)
        else:
            print(text)

    return report


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A settable clock for engines under test."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now = self.now + timedelta(**kw)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def engine(clock: Clock) -> Iterator[mc.MemoryEngine]:
    """A fast engine: in-memory SQLite, the hashing embedder, a fixed clock."""
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=clock)
    yield eng
    eng.store.close()


@pytest.fixture(scope="session")
def minilm() -> mc.Embedder:
    from memory_core.embedding.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture
def minilm_engine(minilm: mc.Embedder, clock: Clock) -> Iterator[mc.MemoryEngine]:
    eng = mc.open_engine("sqlite:///:memory:", minilm, clock=clock)
    yield eng
    eng.store.close()


@pytest.fixture
def days_ago() -> Callable[[float], datetime]:
    return lambda d: NOW - timedelta(days=d)


@pytest.fixture(scope="session")
def cosmos_server() -> Iterator[CosmosServer]:
    """One local Cosmos-protocol server for the whole test session (skips where Node is
    missing); each test makes its own database."""
    try:
        server = CosmosServer.start()
    except CosmosServerUnavailable as exc:
        pytest.skip(f"no local Cosmos-protocol server: {exc}")
    try:
        yield server
    finally:
        server.stop()


# --- dashboard fixtures ------------------------------------------------------------------------

DEMO_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite file seeded once per test session with the demo data (real MiniLM)."""
    from memory_core.seed import seed_demo

    path = tmp_path_factory.mktemp("demo") / "demo.db"
    eng = mc.open_engine(f"sqlite:///{path}", "minilm", clock=lambda: DEMO_NOW)
    seed_demo(eng, now=DEMO_NOW)
    eng.store.close()  # checkpoints the WAL into the file
    return str(path)


@pytest.fixture
def demo_store(demo_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A private copy of the seeded demo store, made the dashboard's store for this test."""
    import shutil

    copy = tmp_path / "store.db"
    shutil.copyfile(demo_db, copy)
    url = f"sqlite:///{copy}"
    monkeypatch.setenv("MEMORY_CORE_STORE", url)
    monkeypatch.setenv("MEMORY_CORE_EMBEDDER", "minilm")
    return url


APP = Path(__file__).resolve().parents[1] / "app.py"


@pytest.fixture
def app(demo_store: str) -> Callable[..., object]:
    """``app(page=None)`` -> a run AppTest of the dashboard on the demo store copy.
    ``page`` is a path relative to app.py such as ``"views/memories.py"``; ``state`` presets
    session state (the sidebar's reviewer name is "reviewer" unless given)."""
    from streamlit.testing.v1 import AppTest

    def make(page: str | None = None, **state: object) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=60)
        state.setdefault("reviewer", "reviewer")  # an empty name is refused (issue 16)
        for k, val in state.items():
            at.session_state[k] = val
        at.run()
        if page is not None:
            at.switch_page(page).run()
        return at

    return make


@pytest.fixture
def rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The decision table's phrase rules alone, without the learned assertion model's second
    opinion (``tests/test_assertion_model.py`` tests that, on these same golden cases too)."""
    from memory_core.facts import rules

    monkeypatch.setattr(rules, "reasons_not_asserted", lambda text: ())
