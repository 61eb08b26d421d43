"""The candidate search's key index (issue 25's bench: ``add_memory`` at 10,000 memories was
21/s, 3.1 s of 3.7 s in rebuilding the index after every write): an index extended row by row
lists what one built afresh lists, leaves the index it was extended from unchanged, and the
engine extends its snapshot's index with its own writes instead of building it again -- while a
memory added later is still found by its key whatever its wording."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

import memory_core as mc
from memory_core import facts
from memory_core.contradictions import KeyIndex
from memory_core.embedding import HashingEmbedder
from memory_core.values import Memory
from tests.conftest import NOW, Clock

CONTENTS = (
    ("medication", "Patient takes metformin 500mg twice daily"),
    ("medication", "Lantus 26 units at bedtime"),
    ("medication", "insulin glargine 20 units nightly"),
    ("allergy", "NKDA"),
    ("allergy", "Allergic to codeine: vomiting"),
    ("lab_result", "HbA1c 8.1% in March"),
    ("lab_result", "HbA1c 7.2% in June"),
    ("condition", "Type 2 diabetes, well controlled"),
    ("observation", "Walks the dog every morning"),
    ("medication", "Stopped lisinopril because of a dry cough"),
)


def _memories(n: int) -> list[Memory]:
    out = []
    for i in range(n):
        mtype, content = CONTENTS[i % len(CONTENTS)]
        at = NOW - timedelta(days=n - i)
        out.append(
            Memory(
                id=f"m{i:03d}",
                patient_id="P",
                memory_type=mtype,
                content=content,
                importance=5.0,
                created_at=at,
                last_accessed=at,
                embedding=np.ones(3, dtype=np.float32),
                embedding_model="x",
            )
        )
    return out


def test_an_index_extended_row_by_row_lists_what_one_built_afresh_lists() -> None:
    mems = _memories(37)
    held, step = 5, KeyIndex.build(mems[:5])
    for end in range(6, len(mems) + 1, 4):
        before = {k: list(v) for k, v in step.rows.items()}
        grown = step.extended(mems[:end], held)
        assert {k: list(v) for k, v in step.rows.items()} == before  # the older one unchanged
        held, step = end, grown
        fresh = KeyIndex.build(mems[:end])
        assert step.rows == fresh.rows
        assert step.entries == fresh.entries == sum(len(v) for v in fresh.rows.values())
    # the keys are the ones a memory is about: the two insulin glargine wordings share one
    lantus, glargine = mems[1], mems[2]
    shared = facts.index_keys(facts.read(lantus.content, "medication"), "medication") & (
        facts.index_keys(facts.read(glargine.content, "medication"), "medication")
    )
    assert shared
    assert all(step.rows[("medication", k)][:2] == [1, 2] for k in shared)


def test_a_write_extends_the_snapshots_key_index_instead_of_building_it(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=clock)
    for i, (mtype, content) in enumerate((CONTENTS[0], CONTENTS[5])):
        eng.add_memory("P", content, mtype, created_at=NOW - timedelta(days=30 - i))
    builds: list[int] = []
    real = KeyIndex.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type[KeyIndex], *args: object) -> KeyIndex:
        builds.append(1)
        return real(cls, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(KeyIndex, "build", classmethod(counting))
    for mtype, content in (CONTENTS[1], CONTENTS[4], *CONTENTS[6:]):
        eng.add_memory("P", content, mtype)
    assert builds == []  # the index the first adds built is extended, never built again
    # "insulin glargine" meets "Lantus" (a row the index was extended by) by their shared key,
    # though their cosine (0.24 with the hashing embedder) is far below the type's cut (0.75)
    added = eng.add_memory("P", CONTENTS[2][1], "medication")
    assert builds == []
    assert [s.old_id for s in added.supersessions] == [
        m.id for m in eng.list_memories("P") if m.content == CONTENTS[1][1]
    ]
    eng.store.close()
