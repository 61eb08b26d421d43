from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder

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
