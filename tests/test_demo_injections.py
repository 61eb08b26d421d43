"""The seeded demo's injection history is the engine's own (issue 23, item 5): every past
injection was made by ``build_context`` as of its session, so none gave the agent a memory
that was superseded (or archived) at that time, and each holds every allergy active then.
Before the replay was the engine's (hand-written injection records), 79 of the 145 seeded
injections held a superseded memory and 64 left out an active allergy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import memory_core as mc
from tests.conftest import DEMO_NOW


@pytest.fixture
def eng(demo_store: str) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(demo_store, "minilm", clock=lambda: DEMO_NOW)
    yield e
    e.store.close()


def test_every_seeded_injection_is_what_build_context_gave_at_its_time(
    eng: mc.MemoryEngine,
) -> None:
    checked = 0
    allergies_seen = 0
    for pid in eng.list_patients():
        injections = eng.injections(pid, limit=10_000)
        assert injections, pid
        events = {t for times in eng.access_times(pid).values() for t in times}
        assert {i.at for i in injections} == events  # every access came with its injection
        for inj in injections:
            view = eng.view(pid, now=inj.at)
            status = {m.id: s for m, s in zip(view.memories, view.status, strict=True)}
            given = [mid for mid, _ in inj.items]
            for mid in given:
                assert status.get(mid) is mc.Status.ACTIVE, (pid, inj.at, mid, status.get(mid))
            allergies = {
                m.id
                for m, s in zip(view.memories, view.status, strict=True)
                if s is mc.Status.ACTIVE and m.memory_type == "allergy"
            }
            assert allergies <= set(given), (pid, inj.at)
            allergies_seen += len(allergies)
            checked += 1
    assert checked >= 1000 and allergies_seen > 0
