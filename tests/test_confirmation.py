"""Decay counts from the last confirmation (issue 23, item 1; domain.md, "Age counts from the
last confirmation"): a fact stated again, kept by a reviewer or asserted by its record restarts
its age; an as-of view before the confirmation does not count it; every confirmation is kept
on the memory and audited, naming what confirmed it."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

import memory_core as mc
from memory_core import decay, labels
from memory_core.embedding import HashingEmbedder
from memory_core.policy import DecayPolicy
from memory_core.values import Confirmation, ConfirmationKind, Memory
from tests.conftest import NOW, Clock

DAY = timedelta(days=1)
PID = "NW-7"


def memory(importance: float, created: datetime, *confirmed: datetime, **kw: object) -> Memory:
    return Memory(
        id="m",
        patient_id="p",
        memory_type="condition",
        content="Patient has high blood pressure",
        importance=importance,
        created_at=created,
        last_accessed=kw.pop("last_accessed", created),  # type: ignore[arg-type]
        embedding=np.zeros(3, dtype=np.float32),
        embedding_model="test",
        confirmations=tuple(
            Confirmation(at, ConfirmationKind.RECORD, "fhir:Condition/c1") for at in confirmed
        ),
        **kw,  # type: ignore[arg-type]
    )


# --- the formula: only the clock's start moves -------------------------------------------------
def test_age_counts_from_the_last_confirmation_in_effect() -> None:
    pol = DecayPolicy()
    created = NOW - 3 * 365 * DAY  # "since 2023": dated at its onset
    m = memory(9.0, created, NOW - 400 * DAY, NOW - 180 * DAY)
    # confirmed 180 days ago: domain.md's first worked example, counted from the confirmation
    assert decay.current_importance_of(m, pol, NOW) == pytest.approx(9 * 0.98**6)
    assert pytest.approx(7.97258, abs=1e-5) == 9 * 0.98**6  # domain.md
    # as of a day before that confirmation, the one before it counts (399 days)
    then = NOW - 181 * DAY
    assert decay.current_importance_of(m, pol, then) == pytest.approx(9 * 0.98 ** (219 / 30))
    # as of a day before the first confirmation, only the creation (3 years - 401 days)
    early = NOW - 401 * DAY
    want = max(1.0, 9 * 0.98 ** ((3 * 365 - 401) / 30))
    assert decay.current_importance_of(m, pol, early) == pytest.approx(want)
    # never confirmed: the seed's rule unchanged (the floor after 3 years at importance 2)
    assert decay.current_importance_of(memory(2.0, created), pol, NOW) == 1.0
    assert decay.current_importance_of(memory(9.0, created), pol, NOW) == pytest.approx(
        9 * 0.98 ** (3 * 365 / 30)
    )


def test_a_confirmation_before_creation_changes_nothing() -> None:
    pol = DecayPolicy()
    m = memory(9.0, NOW - 180 * DAY, NOW - 900 * DAY)
    assert decay.current_importance_of(m, pol, NOW) == pytest.approx(9 * 0.98**6)


def test_linear_and_strength_models_count_from_it_too() -> None:
    created = NOW - 1000 * DAY
    lin = DecayPolicy(model="linear", rate=0.2 / 6)  # "20 % per 6 months"
    m = memory(9.0, created, NOW - 180 * DAY)
    assert decay.current_importance_of(m, lin, NOW) == pytest.approx(7.2)
    # strength: the hours run from the later of the last access and the last confirmation
    strength = DecayPolicy(model="strength", lam=0.01)
    s = memory(5.0, created, NOW - 24 * timedelta(hours=1), last_accessed=NOW - 300 * DAY)
    inputs = decay.DecayInputs.from_memories([s], at=NOW)
    assert decay.strength(inputs, strength, NOW.timestamp())[0] == pytest.approx(
        math.exp(-0.24) * 0.75
    )
    assert pytest.approx(0.58997, abs=1e-5) == math.exp(-0.24) * 0.75  # domain.md
    # an access after the confirmation wins
    later = memory(5.0, created, NOW - 100 * DAY, last_accessed=NOW - 24 * timedelta(hours=1))
    inputs = decay.DecayInputs.from_memories([later], at=NOW)
    assert decay.strength(inputs, strength, NOW.timestamp())[0] == pytest.approx(
        math.exp(-0.24) * 0.75
    )


def test_the_decay_lab_curve_climbs_back_at_each_confirmation() -> None:
    pol = DecayPolicy()
    created = NOW - 360 * DAY
    m = memory(9.0, created, NOW - 120 * DAY)
    times = [created + k * 30 * DAY for k in range(13)]
    got = decay.curve(m, pol, times)
    for t, value in zip(times, got, strict=True):
        start = NOW - 120 * DAY if t >= NOW - 120 * DAY else created
        assert value == pytest.approx(max(1.0, 9 * 0.98 ** ((t - start) / DAY / 30)))
    assert got[8] > got[7]  # the month of the confirmation


def test_the_age_is_explained_in_words() -> None:
    created = datetime(2024, 1, 15, tzinfo=UTC)
    m = memory(9.0, created, datetime(2026, 3, 2, tzinfo=UTC))
    assert labels.age_label(m, NOW) == (
        "age from last confirmation 2026-03-02 (asserted by its record fhir:Condition/c1)"
    )
    assert labels.age_label(m, datetime(2026, 3, 1, tzinfo=UTC)) == "age from creation 2024-01-15"
    for kind in ConfirmationKind:  # every kind has its words
        assert labels.confirmation_label(Confirmation(NOW, kind, "x"))


# --- what confirms a memory, through the engine ------------------------------------------------
def _importance(eng: mc.MemoryEngine, memory_id: str, now: datetime) -> float:
    view = eng.view(PID, now=now)
    i = [m.id for m in view.memories].index(memory_id)
    return float(view.current_importance[i])


def test_a_restatement_on_a_review_gated_type_confirms_the_older_one(
    engine: mc.MemoryEngine,
) -> None:
    old = engine.add_memory(
        PID, "Patient has type 2 diabetes", "condition", created_at=NOW - 800 * DAY
    ).memory
    res = engine.add_memory(
        PID, "Patient has type 2 diabetes mellitus", "condition", created_at=NOW - 40 * DAY
    )
    (sup,) = res.supersessions
    assert (sup.verdict, sup.state) == ("duplicate", mc.SupersessionState.PENDING)
    kept = engine.get(old.id)
    assert kept.status is mc.Status.ACTIVE  # waits for review; its age restarted
    assert kept.confirmations == (
        Confirmation(NOW - 40 * DAY, ConfirmationKind.RESTATED, res.memory.id),
    )
    (entry,) = engine.audit_log(action="confirm_memory")
    assert (entry.entity_id, entry.actor) == (old.id, "system")
    assert entry.after is not None and entry.after["confirmation"] == {
        "at": (NOW - 40 * DAY).isoformat(),
        "kind": "restated",
        "ref": res.memory.id,
    }
    assert entry.before is not None and entry.before["confirmations"] == []
    # importance 7 (a condition) over 40 days, not 800
    assert _importance(engine, old.id, NOW) == pytest.approx(7 * 0.98 ** (40 / 30))
    # as of before the restatement, from its creation
    before = NOW - 41 * DAY
    assert _importance(engine, old.id, before) == pytest.approx(7 * 0.98 ** (759 / 30))


def test_a_restatement_found_by_the_back_scan_confirms_too(engine: mc.MemoryEngine) -> None:
    records = [
        {
            "patient_id": PID,
            "content": "Patient has type 2 diabetes",
            "memory_type": "condition",
            "created_at": NOW - d * DAY,
        }
        for d in (900, 300)
    ]
    first, _ = engine.add_memories(records, detect=False)
    assert engine.get(first.memory.id).confirmations == ()
    found = engine.scan_contradictions(PID)
    assert [(s.old_id, s.verdict) for s in found] == [(first.memory.id, "duplicate")]
    assert engine.get(first.memory.id).confirmed_at == NOW - 300 * DAY


def test_rejecting_a_supersession_confirms_the_kept_memory_at_the_review(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    old = engine.add_memory(
        PID,
        "Patient has documented penicillin allergy with anaphylactic reaction",
        "allergy",
        created_at=NOW - 700 * DAY,
    ).memory
    (sup,) = engine.add_memory(
        PID,
        "Patient's penicillin allergy re-tested: reaction was a mild rash, not anaphylaxis",
        "allergy",
        created_at=NOW - 30 * DAY,
    ).supersessions
    assert sup.verdict != "duplicate" and engine.get(old.id).confirmations == ()
    review = clock.advance(days=2)
    engine.reject_supersession(sup.id, "dr-a")
    kept = engine.get(old.id)
    assert kept.confirmations == (Confirmation(review, ConfirmationKind.REVIEW_KEPT, sup.id),)
    entries = engine.audit_log(action="confirm_memory")
    assert [(e.entity_id, e.actor) for e in entries] == [(old.id, "dr-a")]
    assert labels.age_label(kept, review - DAY).startswith("age from creation")
    assert labels.age_label(kept, review).endswith(
        "(kept by a reviewer who rejected a newer statement)"
    )


def test_a_record_date_confirms_a_new_memory_checked_like_any_timestamp(
    engine: mc.MemoryEngine,
) -> None:
    onset = NOW - 12_000 * DAY  # hypertension since 1993
    res = engine.add_memory(
        PID,
        "Essential hypertension (since 1993)",
        "condition",
        created_at=onset,
        source="fhir:Condition/c1",
        confirmed_at=NOW - 20 * DAY,
    )
    assert res.memory.confirmations == (
        Confirmation(NOW - 20 * DAY, ConfirmationKind.RECORD, "fhir:Condition/c1"),
    )
    assert engine.get(res.memory.id).confirmations == res.memory.confirmations
    (added,) = engine.audit_log(action="add")
    assert added.after is not None and added.after["confirmed_at"] == (NOW - 20 * DAY).isoformat()
    assert _importance(engine, res.memory.id, NOW) == pytest.approx(7 * 0.98 ** (20 / 30))
    for bad, why in (
        ("2026-05-01T00:00:00", "naive"),
        (NOW + 2 * DAY, "in the future"),
        (onset - DAY, "before the memory's created_at"),
        ("yesterday", "not an ISO-8601 timestamp"),
    ):
        with pytest.raises(mc.ValidationError, match=why) as err:
            engine.add_memories(
                [
                    {
                        "patient_id": PID,
                        "content": "Asthma",
                        "memory_type": "condition",
                        "created_at": onset,
                        "confirmed_at": bad,
                    }
                ]
            )
        assert err.value.field == "records[0].confirmed_at"
    assert len(engine.list_memories(PID)) == 1  # nothing written


def test_confirm_memories_records_a_reimport_once_and_checks_every_item_first(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    a = engine.add_memory(
        PID,
        "Essential hypertension",
        "condition",
        created_at=NOW - 4000 * DAY,
        source="fhir:Condition/c1",
    ).memory
    b = engine.add_memory(
        PID, "Asthma", "condition", created_at=NOW - 3000 * DAY, source="fhir:Condition/c2"
    ).memory
    version = engine.get(a.id).version
    with pytest.raises(mc.ValidationError) as err:
        engine.confirm_memories(
            [
                {"memory_id": a.id, "confirmed_at": NOW - 10 * DAY},
                {"memory_id": b.id, "confirmed_at": NOW + 3 * DAY},
            ]
        )
    assert err.value.field == "items[1].confirmed_at"
    with pytest.raises(mc.NotFoundError):
        engine.confirm_memories([{"memory_id": "mem_nobody"}])
    assert engine.get(a.id).version == version and not engine.audit_log(action="confirm_memory")
    got = engine.confirm_memories(
        [
            {"memory_id": a.id, "confirmed_at": NOW - 10 * DAY},
            {"memory_id": b.id, "confirmed_at": "2026-05-01T00:00:00Z", "source": "fhir:bundle-9"},
        ],
        by="importer",
    )
    assert [m.confirmations for m in got] == [
        (Confirmation(NOW - 10 * DAY, ConfirmationKind.RECORD, "fhir:Condition/c1"),),
        (Confirmation(datetime(2026, 5, 1, tzinfo=UTC), ConfirmationKind.RECORD, "fhir:bundle-9"),),
    ]
    assert len(engine.audit_log(action="confirm_memory")) == 2
    # the same re-import again: nothing new to record
    engine.confirm_memories([{"memory_id": a.id, "confirmed_at": NOW - 10 * DAY}])
    assert len(engine.audit_log(action="confirm_memory")) == 2
    # an older record's date is kept, but the age counts from the latest
    engine.confirm_memories([{"memory_id": a.id, "confirmed_at": NOW - 90 * DAY}])
    assert engine.get(a.id).confirmed_at == NOW - 10 * DAY
    assert [c.at for c in engine.get(a.id).confirmations] == [NOW - 90 * DAY, NOW - 10 * DAY]


def test_confirmations_survive_the_snapshot_cache_and_a_fresh_engine(tmp_path: object) -> None:
    clock = Clock()
    url = f"sqlite:///{tmp_path}/c.db"
    eng = mc.open_engine(url, HashingEmbedder(), clock=clock)
    m = eng.add_memory(PID, "Essential hypertension", "condition", created_at=NOW - 900 * DAY)
    cached = _importance(eng, m.memory.id, NOW)  # the snapshot is cached now
    eng.confirm_memories([{"memory_id": m.memory.id, "confirmed_at": NOW - 30 * DAY}])
    warm = _importance(eng, m.memory.id, NOW)  # the snapshot advanced with the write
    eng.store.close()
    fresh = mc.open_engine(url, HashingEmbedder(), clock=clock)
    try:
        assert warm == pytest.approx(7 * 0.98**1) and warm > cached
        assert _importance(fresh, m.memory.id, NOW) == pytest.approx(warm)
        assert _importance(fresh, m.memory.id, NOW - 31 * DAY) == pytest.approx(cached, rel=0.05)
    finally:
        fresh.store.close()
