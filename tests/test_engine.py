"""Engine behaviour on the fast hashing embedder: access refresh, as-of, cleanup, audit,
archive/restore, conflicts, validation, promotion."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

import memory_core as mc
from memory_core.contradictions import same_type_pair_arrays
from memory_core.embedding import HashingEmbedder
from tests.conftest import NOW, Clock


def snapshot(engine: mc.MemoryEngine) -> tuple[object, ...]:
    """Everything the store holds, to prove that a refused call wrote nothing."""
    pats = engine.list_patients()
    return (
        tuple(
            (m.id, m.version, m.access_count, m.status)
            for p in pats
            for m in engine.list_memories(p)
        ),
        len(engine.audit_log(limit=100000)),
        tuple(s.id for s in engine.supersessions()),
    )


def test_add_defaults_by_type(engine: mc.MemoryEngine) -> None:
    allergy = engine.add_memory("NW-1", "Patient is allergic to latex", "allergy").memory
    pref = engine.add_memory("NW-1", "Patient prefers written instructions", "preference").memory
    other = engine.add_memory("NW-1", "Something odd", "task_result", importance=3).memory
    assert (allergy.importance, allergy.pinned) == (10, True)
    assert (pref.importance, pref.pinned) == (6, False)  # 5 + "prefers"
    assert other.importance == 3
    assert allergy.created_at == NOW and allergy.last_accessed == NOW
    assert engine.get(allergy.id) == allergy
    assert [m.id for m in engine.list_memories("NW-1")] == [allergy.id, pref.id, other.id]
    assert engine.list_patients() == ["NW-1"]


def test_refresh_on_access_counts_only_agent_retrievals(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    m = engine.add_memory("NW-1", "Patient walks every morning", "observation").memory
    clock.advance(days=2)
    engine.retrieve("NW-1", "walking", record_access=False)
    engine.build_context("NW-1", "walking", record_access=False)
    assert engine.get(m.id).access_count == 0
    assert engine.injections("NW-1") == []
    res = engine.build_context("NW-1", "walking")
    got = engine.get(m.id)
    assert got.access_count == 1 and got.last_accessed == clock.now
    inj = engine.injections("NW-1")
    assert len(inj) == 1 and inj[0].items[0][0] == m.id and inj[0].text == res.text
    assert inj[0].tokens == res.tokens and inj[0].query == "walking"
    engine.retrieve("NW-1", "walking", k=1)
    assert engine.get(m.id).access_count == 2
    assert len(engine.access_times("NW-1")[m.id]) == 2


def test_access_counts_exact_under_threads(tmp_path: object, clock: Clock) -> None:
    import threading

    eng = mc.open_engine(f"sqlite:///{tmp_path}/t.db", HashingEmbedder(), clock=clock)
    m = eng.add_memory("NW-1", "Patient checks glucose daily", "observation").memory

    def work() -> None:
        for _ in range(50):
            eng.retrieve("NW-1", "glucose", k=1)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert eng.get(m.id).access_count == 400


def test_as_of_hides_later_memories_and_accesses(
    engine: mc.MemoryEngine, clock: Clock, days_ago: Callable[[float], datetime]
) -> None:
    old = engine.add_memory(
        "NW-1", "Patient checks glucose daily", "observation", created_at=days_ago(100)
    ).memory
    engine.add_memory(
        "NW-1", "Patient started yoga classes", "observation", created_at=days_ago(10)
    )
    engine.retrieve("NW-1", "glucose", k=1, now=days_ago(5))
    assert engine.get(old.id).access_count == 1
    past = engine.view("NW-1", now=days_ago(50))
    assert [m.id for m in past.memories] == [old.id]
    assert past.access_count[0] == 0  # the access happened later
    present = engine.view("NW-1")
    assert present.access_count[0] == 1
    got = engine.retrieve("NW-1", "yoga", now=days_ago(50), record_access=False)
    assert [s.memory.id for s in got] == [old.id]


def test_cleanup_archives_weak_but_never_pinned_or_review_gated(
    engine: mc.MemoryEngine, days_ago: Callable[[float], datetime]
) -> None:
    weak = engine.add_memory(
        "NW-1",
        "Patient mentioned a cold last winter",
        "intermediate_step",
        created_at=days_ago(6 * 365),
    ).memory
    pinned = engine.add_memory(
        "NW-1",
        "Patient note pinned by reviewer",
        "intermediate_step",
        created_at=days_ago(6 * 365),
        pinned=True,
    ).memory
    allergy = engine.add_memory(
        "NW-1",
        "Patient is allergic to latex",
        "allergy",
        importance=2,
        pinned=False,
        created_at=days_ago(6 * 365),
    ).memory
    reaction = engine.add_memory(
        "NW-1",
        "Cough on lisinopril",
        "adverse_reaction",
        importance=1,
        created_at=days_ago(6 * 365),
    ).memory
    fresh = engine.add_memory("NW-1", "Patient started walking", "observation").memory
    before = snapshot(engine)
    dry = engine.cleanup(threshold=0.05)
    assert [m.id for m in dry.archived] == [weak.id]
    assert snapshot(engine) == before  # a dry run changes nothing
    res = engine.cleanup(threshold=0.05, dry_run=False, by="reviewer-a")
    assert [m.id for m in res.archived] == [weak.id]
    assert res.strengths[weak.id] < 0.05
    statuses = {m.id: m.status for m in engine.list_memories("NW-1")}
    assert statuses[weak.id] is mc.Status.ARCHIVED
    for keep in (pinned, allergy, reaction, fresh):
        assert statuses[keep.id] is mc.Status.ACTIVE
    log = engine.audit_log(action="cleanup_archive")
    assert len(log) == 1 and log[0].actor == "reviewer-a" and log[0].before["status"] == "active"
    restored = engine.restore(weak.id, "reviewer-a")
    assert restored.status is mc.Status.ACTIVE and restored.archived_at is None
    assert engine.get(weak.id).content == weak.content  # nothing lost


def test_archived_memories_never_reach_the_prompt(engine: mc.MemoryEngine) -> None:
    m = engine.add_memory("NW-1", "Patient checks glucose daily", "observation").memory
    engine.archive(m.id, "reviewer-a")
    assert engine.build_context("NW-1", "glucose", record_access=False).text == ""
    with pytest.raises(mc.StateError):
        engine.archive(m.id, "reviewer-a")


def test_pin_unpin_importance_are_audited(engine: mc.MemoryEngine) -> None:
    m = engine.add_memory("NW-1", "Patient checks glucose daily", "observation").memory
    engine.pin(m.id, "dr-a")
    engine.set_importance(m.id, 8, "dr-a")
    engine.unpin(m.id, "dr-b")
    got = engine.get(m.id)
    assert (got.pinned, got.importance, got.version) == (False, 8, 4)
    actions = [(a.action, a.actor) for a in engine.audit_log(entity_id=m.id)]
    assert actions == [
        ("unpin", "dr-b"),
        ("edit_importance", "dr-a"),
        ("pin", "dr-a"),
        ("add", "system"),
    ]
    edit = engine.audit_log(action="edit_importance")[0]
    assert (edit.before["importance"], edit.after["importance"]) == (4, 8)


def test_second_reviewer_gets_a_conflict(engine: mc.MemoryEngine) -> None:
    m = engine.add_memory("NW-1", "Patient checks glucose daily", "observation").memory
    engine.set_importance(m.id, 6, "dr-a", expected_version=m.version)
    with pytest.raises(mc.ConflictError):
        engine.set_importance(m.id, 9, "dr-b", expected_version=m.version)
    assert engine.get(m.id).importance == 6


def test_audit_is_append_only(engine: mc.MemoryEngine) -> None:
    import sqlite3

    engine.add_memory("NW-1", "Patient checks glucose daily", "observation")
    db = engine.store._db  # type: ignore[attr-defined]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("UPDATE audit SET actor = 'x'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("DELETE FROM audit")


def test_short_term_memory_promoted_after_n_accesses(engine: mc.MemoryEngine, clock: Clock) -> None:
    m = engine.add_memory(
        "NW-1", "Patient is fasting for a procedure", "observation", tier="short_term"
    ).memory
    for _ in range(3):
        clock.advance(hours=1)
        engine.retrieve("NW-1", "fasting procedure", k=1)
    got = engine.get(m.id)
    assert got.tier is mc.Tier.LONG_TERM and got.access_count == 3
    assert engine.audit_log(action="promote")[0].entity_id == m.id


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "   \n\t"}, "content"),
        ({"content": "x" * 2001}, "content"),
        ({"content": "\u200b\u200b"}, "content"),
        ({"importance": 0}, "importance"),
        ({"importance": 11}, "importance"),
        ({"importance": float("nan")}, "importance"),
        ({"importance": float("inf")}, "importance"),
        ({"importance": "7"}, "importance"),
        ({"importance": True}, "importance"),
        ({"created_at": datetime(2026, 1, 1)}, "created_at"),
        ({"created_at": "2026-01-01T00:00:00"}, "created_at"),
        ({"created_at": "yesterday"}, "created_at"),
        ({"created_at": NOW + timedelta(days=1)}, "created_at"),
        ({"patient_id": "../etc/passwd"}, "patient_id"),
        ({"patient_id": "NW 1"}, "patient_id"),
        ({"patient_id": "NW\x001"}, "patient_id"),
        ({"patient_id": ""}, "patient_id"),
        ({"memory_type": "Allergy!"}, "memory_type"),
        ({"tier": "forever"}, "tier"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(
    engine: mc.MemoryEngine, kwargs: dict[str, object], field: str
) -> None:
    engine.add_memory("NW-1", "Existing memory", "observation")
    before = snapshot(engine)
    args: dict[str, object] = {
        "patient_id": "NW-1",
        "content": "Patient note",
        "memory_type": "observation",
    }
    args.update(kwargs)
    with pytest.raises(mc.ValidationError) as err:
        engine.add_memory(**args)  # type: ignore[arg-type]
    assert err.value.field.endswith(field)
    assert snapshot(engine) == before


def test_aware_timestamps_in_any_zone_are_stored_in_utc(engine: mc.MemoryEngine) -> None:
    m = engine.add_memory(
        "NW-1", "Patient note", "observation", created_at="2026-05-01T09:00:00+02:00"
    ).memory
    assert m.created_at.isoformat() == "2026-05-01T07:00:00+00:00"


def test_batch_with_one_bad_record_writes_nothing(engine: mc.MemoryEngine) -> None:
    good = {"patient_id": "NW-1", "content": "Fine", "memory_type": "observation"}
    bad = {"patient_id": "NW-1", "content": "Bad", "memory_type": "observation", "importance": 42}
    with pytest.raises(mc.ValidationError) as err:
        engine.add_memories([good, good | {"content": "Also fine"}, bad])
    assert err.value.field == "records[2].importance"
    assert engine.list_patients() == []


def test_wrong_dimension_and_other_model_are_refused(engine: mc.MemoryEngine) -> None:
    rec = {"patient_id": "NW-1", "content": "x", "memory_type": "observation"}
    with pytest.raises(mc.ValidationError, match="dimensions"):
        engine.add_memories([rec | {"embedding": [0.1] * 3}])
    with pytest.raises(mc.ValidationError, match="NaN"):
        engine.add_memories([rec | {"embedding": [float("nan")] * 384}])
    with pytest.raises(mc.ValidationError, match="cannot be mixed"):
        engine.add_memories([rec | {"embedding": [0.1] * 384, "embedding_model": "other"}])


def test_store_refuses_another_embedding_model(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/m.db"
    mc.open_engine(url, HashingEmbedder(dimensions=384)).add_memory("NW-1", "x", "observation")
    with pytest.raises(mc.EmbeddingMismatchError, match="384"):
        mc.open_engine(url, HashingEmbedder(dimensions=128))


def test_unknown_store_and_embedder() -> None:
    with pytest.raises(mc.ConfigurationError, match="unknown store URL"):
        mc.open_engine("postgres://x", "hashing")
    with pytest.raises(mc.ConfigurationError, match="unknown embedder"):
        mc.open_engine("sqlite:///:memory:", "word2vec")


def test_file_store_persists_across_reopen(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/p.db"
    eng = mc.open_engine(url, "hashing")
    m = eng.add_memory("NW-1", "Patient checks glucose daily", "observation").memory
    eng.store.close()
    again = mc.open_engine(url, "hashing")
    got = again.get(m.id)
    assert got == m and got.embedding.dtype.name == "float32"
    assert (got.embedding == m.embedding).all()
    mode = again.store._read("PRAGMA journal_mode")[0][0]  # type: ignore[attr-defined]
    assert mode == "wal"


def test_policy_save_is_audited_and_reloaded(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/p.db"
    eng = mc.open_engine(url, "hashing")
    new = mc.EnginePolicy(decay=mc.DecayPolicy(model="linear", rate=0.05))
    eng.save_policy(new, "tuner-a")
    entry = eng.audit_log(action="policy_change")[0]
    assert entry.actor == "tuner-a"
    assert entry.before["decay"]["model"] == "exponential" and entry.after["decay"]["rate"] == 0.05
    assert mc.open_engine(url, "hashing").policy == new


def test_keyword_half_finds_exact_drug_names(engine: mc.MemoryEngine) -> None:
    a = engine.add_memory("NW-1", "Patient takes metoprolol 25mg twice daily", "medication").memory
    b = engine.add_memory("NW-1", "Patient takes metformin 1000mg twice daily", "medication").memory
    hits = engine.keyword_search("NW-1", "metformin")
    assert [h[0].id for h in hits] == [b.id]
    assert engine.keyword_search("NW-2", "metformin") == []
    got = engine.retrieve("NW-1", "metformin", record_access=False)
    assert got[0].memory.id == b.id and got[0].keyword_rank == 1
    assert {s.memory.id for s in got} == {a.id, b.id}


def test_weighted_mode_uses_all_three_terms(
    clock: Clock, days_ago: Callable[[float], datetime]
) -> None:
    pol = mc.EnginePolicy(ranking=mc.RankingPolicy(mode="weighted", alpha=0, beta=0, gamma=1))
    eng = mc.open_engine("sqlite:///:memory:", "hashing", pol, clock=clock)
    old = eng.add_memory(
        "NW-1", "Patient checks glucose daily", "observation", created_at=days_ago(90)
    ).memory
    new = eng.add_memory(
        "NW-1", "Patient dislikes needles", "observation", created_at=days_ago(1)
    ).memory
    got = eng.retrieve("NW-1", "glucose", record_access=False)
    assert [s.memory.id for s in got] == [new.id, old.id]  # recency only
    assert got[0].score == pytest.approx(1.0) and got[1].score == pytest.approx(0.0)


def test_incremental_snapshot_equals_a_fresh_read(tmp_path: object, clock: Clock) -> None:
    """The engine updates its cached snapshot in place after its own writes; it must always
    equal what a fresh engine reads from the store."""
    url = f"sqlite:///{tmp_path}/inc.db"
    eng = mc.open_engine(url, HashingEmbedder(), clock=clock)

    def same() -> None:
        fresh = mc.open_engine(url, HashingEmbedder(), clock=clock)
        for pid in eng.list_patients():
            a, b = eng.view(pid), fresh.view(pid)
            assert [(m.id, m.version, m.status, m.pinned, m.importance) for m in a.memories] == [
                (m.id, m.version, m.status, m.pinned, m.importance) for m in b.memories
            ]
            assert list(a.status) == list(b.status)
            assert a.current_importance.tolist() == pytest.approx(b.current_importance.tolist())
            assert a.access_count.tolist() == b.access_count.tolist()
            ra = eng.retrieve(pid, "glucose check", record_access=False)
            rb = fresh.retrieve(pid, "glucose check", record_access=False)
            assert [(s.memory.id, s.score) for s in ra] == [(s.memory.id, s.score) for s in rb]
        fresh.store.close()

    m1 = eng.add_memory("NW-1", "Patient checks glucose twice daily", "observation").memory
    same()
    clock.advance(days=3)
    eng.add_memory("NW-1", "Patient checks glucose twice daily now", "observation")
    same()
    eng.retrieve("NW-1", "glucose", k=2)
    clock.advance(days=1)
    eng.add_memories(
        [
            {
                "patient_id": "NW-1",
                "content": "Patient takes metformin",
                "memory_type": "medication",
            },
            {"patient_id": "NW-2", "content": "Patient lives alone", "memory_type": "social"},
        ]
    )
    same()
    eng.pin(m1.id, "dr-a")
    eng.archive(m1.id, "dr-a")
    same()
    eng.add_memory("NW-1", "Older note added later", "observation", created_at=NOW)  # back-fill
    same()


def test_engine_uses_a_store_side_vector_search_for_present_queries(clock: Clock) -> None:
    from memory_core.store.sqlite import SQLiteStore

    class ServerSearch(SQLiteStore):
        calls: list[int] = []  # noqa: RUF012

        def vector_candidates(
            self, patient_id: str, query: object, k: int
        ) -> list[tuple[str, float]]:
            self.calls.append(k)
            mems = self.list_memories(patient_id)
            return [(m.id, 0.0) for m in reversed(mems)]  # the "server" prefers the newest

    store = ServerSearch(":memory:")
    eng = mc.MemoryEngine(store, HashingEmbedder(), clock=clock)
    a = eng.add_memory("NW-1", "Patient checks glucose daily", "observation").memory
    clock.advance(days=1)
    b = eng.add_memory("NW-1", "Patient dislikes needles", "observation").memory
    got = {s.memory.id: s for s in eng.retrieve("NW-1", "glucose", record_access=False)}
    assert (got[b.id].vector_rank, got[a.id].vector_rank) == (1, 2)
    assert got[a.id].similarity > got[b.id].similarity  # exact cosines still score
    assert store.calls == [eng.policy.ranking.candidate_pool]
    eng.retrieve("NW-1", "glucose", now=clock.now, record_access=False)  # as of: client-side
    assert len(store.calls) == 1


def _near(base: list[float], i: int, eps: float) -> list[float]:
    out = list(base)
    out[i] += eps
    return out


@pytest.mark.parametrize("one_by_one", [False, True])
def test_a_superseded_memory_is_not_superseded_again(
    engine: mc.MemoryEngine, one_by_one: bool
) -> None:
    """Only active memories take part in detection: the chain A -> B -> C records A by B and B
    by C, never A by C (A is already superseded), whether added together or one at a time, and
    also when an older memory is back-filled after a newer one."""
    dims = engine.embedder.dimensions
    base = [1.0] * dims
    recs = [
        {
            "patient_id": "NW-9",
            "content": f"Patient walks {k} km daily",
            "memory_type": "observation",
            "created_at": NOW - timedelta(days=30 - k),
            "embedding": _near(base, k, 0.01),
            "id": f"m-{k}",
        }
        for k in range(3)
    ]
    if one_by_one:
        for r in recs:
            engine.add_memories([r])
    else:
        engine.add_memories(recs)
    pairs = sorted((s.old_id, s.new_id) for s in engine.supersessions("NW-9"))
    assert pairs == [("m-0", "m-1"), ("m-1", "m-2")]
    status = {m.id: m.status for m in engine.list_memories("NW-9")}
    assert status == {
        "m-0": mc.Status.SUPERSEDED,
        "m-1": mc.Status.SUPERSEDED,
        "m-2": mc.Status.ACTIVE,
    }
    # back-filled: the newest first, then the oldest, then the middle one
    later = [dict(r, patient_id="NW-8", id=f"n-{k}") for k, r in enumerate(recs)]
    for r in (later[2], later[0], later[1]):
        engine.add_memories([r])
    pairs = sorted((s.old_id, s.new_id) for s in engine.supersessions("NW-8"))
    assert pairs == [("n-0", "n-2"), ("n-1", "n-2")]


def test_back_scan_tries_a_newer_memory_after_the_best_one_is_compatible(
    engine: mc.MemoryEngine,
) -> None:
    """Auto types: each older memory is superseded by its most similar newer one the
    adjudicator accepts (here the closest names another drug, so the next one wins); review
    types: every pair becomes a pending record, most similar first."""
    dims = engine.embedder.dimensions
    base = [1.0] * dims

    def rec(k: int, content: str, mtype: str, eps: float) -> dict[str, object]:
        return {
            "patient_id": "NW-7",
            "content": content,
            "memory_type": mtype,
            "created_at": NOW - timedelta(days=40 - k),
            "embedding": _near(base, 0, eps),
            "id": f"s-{k}",
        }

    engine.add_memories(
        [
            rec(0, "Patient takes metformin 500mg", "medication", 0.0),
            rec(1, "Patient takes metoprolol 25mg", "medication", 0.001),  # closest: compatible
            rec(2, "Patient takes metformin 1000mg", "medication", 0.3),
            rec(3, "Allergy to penicillin", "allergy", 0.0),
            rec(4, "Allergy to penicillin, hives", "allergy", 0.2),
            rec(5, "Allergy to penicillin, hives and lip swelling", "allergy", 0.5),
        ],
        detect=False,
    )
    found = engine.scan_contradictions("NW-7")
    auto = [(s.old_id, s.new_id) for s in found if s.state is mc.SupersessionState.AUTO]
    assert auto == [("s-0", "s-2")]
    review = [s for s in found if s.state is mc.SupersessionState.PENDING]
    assert [s.similarity for s in review] == sorted((s.similarity for s in review), reverse=True)
    assert {(s.old_id, s.new_id) for s in review} == {
        ("s-3", "s-4"),
        ("s-3", "s-5"),
        ("s-4", "s-5"),
    }
    assert engine.scan_contradictions("NW-7") == []  # already recorded


def test_back_scan_ties_between_identical_copies_go_to_the_first_copy(
    engine: mc.MemoryEngine,
) -> None:
    """A memory recorded four times: each copy is superseded by the next one, as detection on
    insert would have recorded them, however the block product rounds. Among 300 other
    memories of the type a matrix product gives identical vectors cosines a few units in the
    last place apart, which used to hand the tie to whichever copy the tiling favoured."""
    dims = engine.embedder.dimensions
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(300, dims)).astype(np.float32)
    copy = rng.normal(size=dims).astype(np.float32)
    at = [3, 5, 64, 299]  # OpenBLAS here: 3·5 rounds to 1 + 1 ulp, 3·64 to 1 + 2 ulp
    matrix[at] = copy
    (_t, a, b, vals), *_ = same_type_pair_arrays(
        ["observation"] * 300, matrix, {"observation": 0.9}
    )
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [
        (x, y) for i, x in enumerate(at) for y in at[i + 1 :]
    ]
    assert np.unique(vals).size == 1  # one value for six pairs of identical vectors

    recs = [
        {
            "patient_id": "NW-6",
            # the others name nothing the facts reader keys: only their cosines pair them
            "content": f"Garden note {k}" if k not in at else "Home systolic 187 mmHg",
            "memory_type": "observation",
            "created_at": NOW - timedelta(hours=400 - k),
            "embedding": matrix[k].tolist(),
            "id": f"o-{k:03d}",
        }
        for k in range(300)
    ]
    engine.add_memories(recs, detect=False)
    found = engine.scan_contradictions("NW-6")
    assert [(s.old_id, s.new_id) for s in found] == [
        ("o-003", "o-005"),
        ("o-005", "o-064"),
        ("o-064", "o-299"),
    ]


@pytest.mark.parametrize(
    ("older", "older_type", "newer", "newer_type", "rule"),
    [
        ("MoCA 22/30", "observation", "MoCA 19/30", "lab_result", "lab.new-value"),
        ("HbA1c 7.1%", "lab_result", "HbA1c now 6.5%", "observation", "lab.new-value"),
        ("Weight 80 kg", "vital_sign", "Weighed 75 kg at home", "observation", "lab.new-value"),
    ],
)
def test_a_newer_result_written_as_another_type_sends_the_older_to_review(
    tmp_path: Path, older: str, older_type: str, newer: str, newer_type: str, rule: str
) -> None:
    """A test's result charted as one type and its newer result as another: both stayed
    current (the candidates are of the new memory's type); now the older goes to a reviewer,
    never at once, and the same result again changes nothing."""
    eng = mc.open_engine(f"sqlite:///{tmp_path / 's.db'}", "hashing", clock=lambda: NOW)
    old = eng.add_memory("NW-7", older, older_type, created_at=NOW - timedelta(days=40)).memory
    res = eng.add_memory("NW-7", newer, newer_type, created_at=NOW - timedelta(days=1))
    mine = [s for s in res.supersessions if s.old_id == old.id]
    assert [(s.rule, s.state) for s in mine] == [(rule, mc.SupersessionState.PENDING)], mine
    assert older_type in mine[0].evidence and newer_type in mine[0].evidence
    again = eng.add_memory("NW-8", older, older_type, created_at=NOW - timedelta(days=40)).memory
    res = eng.add_memory("NW-8", older, newer_type, created_at=NOW - timedelta(days=1))
    assert not [s for s in res.supersessions if s.old_id == again.id]
