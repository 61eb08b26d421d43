"""The store contract: one test class run against every store (SQLite on a temporary file and
Azure Cosmos DB on a local Cosmos-protocol server in client vector-search mode), plus the
Cosmos specifics (exact server-mode query, etag races, crash repair, configuration).

The Cosmos run starts ``@vercel/cosmosdb-server`` (npm, installed on first use into the
git-ignored ``.cache/cosmosdb-server/``) on a free loopback port for the session; without node
or npm it is skipped with the reason.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.policy import DecayPolicy
from memory_core.promotion import promotions
from memory_core.store import default_store_url, open_store
from memory_core.store.base import AuditQuery, ChangeSet, FlagKeep, MemoryStore
from memory_core.store.sqlite import SQLiteStore
from memory_core.values import (
    AuditEntry,
    Confirmation,
    ConfirmationKind,
    InjectionRecord,
    Memory,
    Status,
    Supersession,
    SupersessionState,
    Tier,
)
from tests.conftest import NOW, Clock
from tests.cosmos_server import EMULATOR_KEY, CosmosServer

# the local server's certificate is self-signed (loopback only)
EMBEDDER = HashingEmbedder()
MODEL = (EMBEDDER.model_id, EMBEDDER.dimensions)


# --- backends ---------------------------------------------------------------------------------


@dataclass
class Backend:
    """A fresh, empty store location; ``store()`` opens another handle on it (another agent)."""

    kind: str
    opener: Callable[[], MemoryStore]
    opened: list[MemoryStore] = field(default_factory=list)

    def store(self, bind: bool = True) -> MemoryStore:
        s = self.opener()
        self.opened.append(s)
        if bind:
            s.bind_embedding_model(*MODEL)
        return s

    def close(self) -> None:
        for s in self.opened:
            s.close()


@pytest.fixture(params=["sqlite", "cosmos"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        path = str(tmp_path / "contract.db")
        b = Backend("sqlite", lambda: SQLiteStore(path))
    else:
        server: CosmosServer = request.getfixturevalue("cosmos_server")
        url = server.url("contract", f"t{uuid.uuid4().hex[:12]}")
        b = Backend("cosmos", lambda: open_store(url))
    yield b
    b.close()


# --- helpers ----------------------------------------------------------------------------------


def access(
    s: MemoryStore,
    patient: str,
    ids: list[str],
    at: datetime,
    promote_after: int,
    injection: InjectionRecord | None,
    actor: str,
) -> list[str]:
    """An agent's access as the engine makes it: record it, decide the promotions
    (memory_core.promotion), promote; the ids promoted by this call."""
    accessed = s.record_access(patient, ids, at, injection)
    due = promotions(accessed, DecayPolicy(promote_after=promote_after))
    return s.promote(patient, due, actor, at) if due else []


def memory(
    patient: str,
    content: str,
    *,
    created: datetime = NOW,
    memory_type: str = "observation",
    tier: Tier = Tier.LONG_TERM,
    importance: float = 5.0,
) -> Memory:
    return Memory(
        id=f"mem_{uuid.uuid4().hex}",
        patient_id=patient,
        memory_type=memory_type,
        content=content,
        importance=importance,
        created_at=created,
        last_accessed=created,
        embedding=EMBEDDER.embed(content),
        embedding_model=EMBEDDER.model_id,
        tier=tier,
    )


def add(store: MemoryStore, *mems: Memory, actor: str = "dr-a") -> None:
    store.apply(ChangeSet(insert_memories=list(mems), actor=actor, at=NOW))


def audited(changes: ChangeSet, actor: str = "dr-a", at: datetime = NOW) -> ChangeSet:
    """``changes`` as ``actor`` acting at ``at`` (the store derives the audit rows)."""
    return replace(changes, actor=actor, at=at)


def same(a: Memory, b: Memory) -> bool:
    return a == b and np.array_equal(a.embedding, b.embedding)


def engine_on(
    store: MemoryStore, clock: Clock | None = None, policy: mc.EnginePolicy | None = None
) -> mc.MemoryEngine:
    return mc.MemoryEngine(store, HashingEmbedder(), policy, clock=clock or Clock())


# --- the contract -----------------------------------------------------------------------------


class TestStoreContract:
    def test_insert_get_list_count(self, backend: Backend) -> None:
        s = backend.store()
        older = memory("P-1", "Patient walks every morning", created=NOW - timedelta(days=3))
        newer = memory("P-1", "Patient takes metformin 500 mg twice daily")
        other = memory("P-2", "Patient is allergic to latex", memory_type="allergy")
        add(s, newer, other)
        add(s, older)
        assert same(s.get_memory(newer.id), newer)
        got = s.get_memories([other.id, "mem_missing", older.id])
        assert [m.id for m in got] == [other.id, older.id] and same(got[0], other)
        assert [m.id for m in s.list_memories("P-1")] == [older.id, newer.id]  # oldest first
        assert s.list_memories("P-nobody") == []
        assert s.list_patients() == ["P-1", "P-2"]
        assert s.count_memories() == 3
        assert s.get_memories([]) == []
        with pytest.raises(mc.NotFoundError):
            s.get_memory("mem_missing")
        # another handle (another process) sees the same
        s2 = backend.store()
        assert same(s2.get_memory(older.id), older)
        with pytest.raises(mc.ConflictError):
            add(s2, replace(newer, content="a second memory with an existing id"))
        assert s.get_memory(newer.id).content == newer.content

    def test_update_needs_the_expected_version_and_is_all_or_nothing(
        self, backend: Backend
    ) -> None:
        s = backend.store()
        m = memory("P-1", "Patient checks glucose daily")
        add(s, m)
        access(s, "P-1", [m.id], NOW + timedelta(hours=1), 3, None, "agent")
        pinned = replace(m, pinned=True)
        s.apply(audited(ChangeSet(update_memories=[(pinned, 1)])))
        got = s.get_memory(m.id)
        assert (got.pinned, got.version) == (True, 2)
        assert got.access_count == 1  # updates never touch the access fields
        late = memory("P-1", "Patient started insulin")
        stale = ChangeSet(insert_memories=[late], update_memories=[(replace(m, importance=2.0), 1)])
        before = (s.versions("P-1"), len(s.list_audit(AuditQuery(limit=1000))))
        with pytest.raises(mc.ConflictError):
            s.apply(audited(stale))
        assert s.get_memory(m.id).importance == m.importance
        assert s.get_memories([late.id]) == []
        assert (s.versions("P-1"), len(s.list_audit(AuditQuery(limit=1000)))) == before
        # a second agent working from version 1 is refused as well
        other = backend.store()
        with pytest.raises(mc.ConflictError):
            other.apply(audited(ChangeSet(update_memories=[(replace(m, pinned=False), 1)])))
        other.apply(audited(ChangeSet(update_memories=[(replace(got, pinned=False), 2)])))
        assert s.get_memory(m.id).version == 3

    def test_one_stale_update_among_many_refuses_them_all(self, backend: Backend) -> None:
        s = backend.store()
        ms = [memory("P-1", f"Patient note {k}") for k in range(5)]
        add(s, *ms)
        s.apply(audited(ChangeSet(update_memories=[(replace(ms[3], importance=9.0), 1)])))
        demote = [(replace(m, status=Status.SUPERSEDED, superseded_by="x"), 1) for m in ms]
        with pytest.raises(mc.ConflictError, match=ms[3].id):
            s.apply(audited(ChangeSet(update_memories=demote)))
        got = {m.id: (m.status, m.version) for m in s.list_memories("P-1")}
        assert got == {m.id: (Status.ACTIVE, 2 if m is ms[3] else 1) for m in ms}
        stored = s.list_memories("P-1")
        s.apply(
            audited(
                ChangeSet(update_memories=[(replace(m, pinned=True), m.version) for m in stored])
            )
        )
        assert {m.version for m in s.list_memories("P-1")} == {2, 3}

    def test_applies_inside_the_write_lock_are_each_atomic_and_stay_applied(
        self, backend: Backend
    ) -> None:
        """``write_lock()``: every apply inside it is all or nothing on its own, and what was
        applied stays applied whatever the block raises after (SQLite commits the lock's
        transaction; Cosmos DB holds no lock and writes each apply as it comes); it nests."""
        s = backend.store()
        first = memory("P-1", "Patient walks every morning")
        clash = [memory("P-1", "Imported note"), replace(first, content="a clash")]
        second = memory("P-1", "Patient takes metformin 500 mg twice daily")
        with pytest.raises(RuntimeError, match="after the writes"), s.write_lock():
            add(s, first)
            with pytest.raises(mc.ConflictError):
                add(s, *clash)  # refused whole: its first memory is not written either
            with s.write_lock():
                add(s, second)
            assert s.versions("P-1")[0] == 2
            raise RuntimeError("after the writes")
        other = backend.store()  # another process sees both writes, and nothing of the clash
        assert [m.id for m in other.list_memories("P-1")] == [first.id, second.id]
        assert len(other.list_audit(AuditQuery(limit=100))) == 2
        add(other, memory("P-1", "Patient sleeps well"))  # the lock is gone
        assert other.versions("P-1")[0] == 3

    def test_a_bulk_insert_with_one_existing_id_writes_nothing(self, backend: Backend) -> None:
        s = backend.store()
        first = memory("P-1", "Patient walks every morning")
        add(s, first)
        batch = [memory(f"P-{n % 3}", f"Imported note number {n}") for n in range(9)]
        batch.insert(5, replace(first, content="a clash"))
        with pytest.raises(mc.ConflictError):
            add(s, *batch)
        assert s.count_memories() == 1 and s.list_patients() == ["P-1"]
        assert s.get_memories([m.id for m in batch]) == [s.get_memory(first.id)]
        assert len(s.list_audit(AuditQuery())) == 1
        add(s, *batch[:5], *batch[6:])
        assert s.count_memories() == 10

    def test_delete_only_what_is_archived_at_the_expected_version(self, backend: Backend) -> None:
        s = backend.store()
        keep = memory("P-1", "Patient walks every morning")
        gone = memory("P-1", "Old note")
        add(s, keep, gone)
        archived = replace(gone, status=Status.ARCHIVED, archived_at=NOW)
        s.apply(audited(ChangeSet(update_memories=[(archived, 1)])))
        with pytest.raises(mc.ConflictError):
            s.apply(audited(ChangeSet(delete_memories=[(keep, 1)])))  # not archived
        with pytest.raises(mc.ConflictError):
            s.apply(audited(ChangeSet(delete_memories=[(archived, 1)])))  # stale version
        s.apply(audited(ChangeSet(delete_memories=[(archived, 2)])))
        assert [m.id for m in s.list_memories("P-1")] == [keep.id]
        assert s.count_memories() == 1

    def test_patients_are_isolated(self, backend: Backend) -> None:
        s = backend.store()
        a = memory("P-1", "Patient takes metformin for diabetes")
        b = memory("P-2", "Patient takes metformin for diabetes")
        add(s, a)
        add(s, b)
        v2 = s.versions("P-2")
        access(s, "P-1", [a.id], NOW + timedelta(hours=1), 3, None, "agent")
        assert s.versions("P-2") == v2
        assert [m.id for m in s.list_memories("P-2")] == [b.id]
        assert s.usage("P-2").ids == [b.id] and s.usage("P-2").access_count.tolist() == [0.0]
        assert s.access_times("P-2") == {} and s.session_times("P-2") == []
        assert [x.entity_id for x in s.list_audit(AuditQuery(patient_id="P-2"))] == [b.id]
        with pytest.raises(mc.NotFoundError):
            access(s, "P-2", [a.id], NOW, 3, None, "agent")  # a is not P-2's

    def test_versions_track_content_and_usage(self, backend: Backend) -> None:
        s = backend.store()
        assert s.versions("P-1") == (0, 0) and s.patient_version("P-1") == 0
        m = memory("P-1", "Patient is fasting for a procedure", tier=Tier.SHORT_TERM)
        add(s, m)
        assert s.versions("P-1") == (1, 1)
        assert access(s, "P-1", [m.id], NOW + timedelta(hours=1), 2, None, "agent") == []
        assert s.versions("P-1") == (1, 2)  # an access is usage, not content
        promoted = access(s, "P-1", [m.id], NOW + timedelta(hours=2), 2, None, "agent")
        assert promoted == [m.id]
        assert s.versions("P-1") == (2, 3)  # a promotion changes content
        got = s.get_memory(m.id)
        assert (got.tier, got.version, got.access_count) == (Tier.LONG_TERM, 2, 2)
        (promo,) = s.list_audit(AuditQuery(action="promote"))
        assert (promo.entity_id, promo.actor, promo.after) == (m.id, "agent", {"tier": "long_term"})
        three = NOW + timedelta(hours=3)
        s.apply(audited(ChangeSet(sessions=[("P-1", three)]), at=three))
        assert s.versions("P-1") == (3, 4)
        assert s.patient_version("P-1") == 3

    def test_record_access_keeps_the_latest_moment_and_every_event(self, backend: Backend) -> None:
        s = backend.store()
        m1 = memory("P-1", "Patient walks every morning")
        m2 = memory("P-1", "Patient prefers written instructions")
        add(s, m1, m2)
        t1, t2 = NOW + timedelta(hours=1), NOW + timedelta(hours=5)
        inj = InjectionRecord(
            id=f"inj_{uuid.uuid4().hex}",
            at=t2,
            patient_id="P-1",
            query="walking",
            items=((m1.id, 0.75), (m2.id, 0.25)),
            tokens=42,
            text="## Patient Context\n1. walks",
        )
        access(s, "P-1", [m1.id, m2.id], t2, 3, inj, "agent")
        access(s, "P-1", [m1.id], t1, 3, None, "agent")  # arrives late: older moment
        got = s.get_memory(m1.id)
        assert (got.access_count, got.last_accessed) == (2, t2)
        assert s.access_times("P-1") == {m1.id: [t1, t2], m2.id: [t2]}
        ev = s.access_events("P-1")
        assert ev[m1.id].tolist() == [t1.timestamp(), t2.timestamp()]
        assert s.session_times("P-1") == [t1, t2]
        u = s.usage("P-1")
        counts = dict(zip(u.ids, u.access_count.tolist(), strict=True))
        last = dict(zip(u.ids, u.last_accessed_s.tolist(), strict=True))
        assert counts == {m1.id: 2.0, m2.id: 1.0} and last[m1.id] == t2.timestamp()
        assert u.sessions_s.tolist() == [t1.timestamp(), t2.timestamp()]
        (stored,) = s.list_injections("P-1")
        assert stored == inj
        assert s.list_injections("P-1", limit=0) == []
        with pytest.raises(mc.NotFoundError):
            access(s, "P-1", ["mem_missing"], t2, 3, None, "agent")

    def test_an_injection_names_the_agent_that_was_told(self, backend: Backend) -> None:
        """Issue 33: the ledger records which agent principal was given the section; a record
        without one (an in-process call) reads back as None, newest first."""
        s = backend.store()
        m = memory("P-1", "Patient walks every morning")
        add(s, m)
        told, plain = (
            InjectionRecord(
                id=f"inj_{uuid.uuid4().hex}",
                at=NOW + timedelta(hours=h),
                patient_id="P-1",
                query="walking",
                items=((m.id, 0.5),),
                tokens=7,
                text="1. walks",
                agent=agent,
            )
            for h, agent in ((2, "agent:ward-assistant"), (1, None))
        )
        access(s, "P-1", [m.id], plain.at, 3, plain, "agent")
        access(s, "P-1", [m.id], told.at, 3, told, "agent:ward-assistant")
        assert s.list_injections("P-1") == [told, plain]
        assert [i.agent for i in s.list_injections("P-1")] == ["agent:ward-assistant", None]

    def test_concurrent_access_increments_are_exact(self, backend: Backend) -> None:
        s = backend.store()
        hot = memory("P-1", "Patient checks glucose daily")
        fresh = memory("P-1", "Patient is fasting for a procedure", tier=Tier.SHORT_TERM)
        add(s, hot, fresh)
        agents = [backend.store() for _ in range(8)]
        rounds = 4
        errors: list[BaseException] = []
        promoted: list[str] = []
        start = threading.Barrier(len(agents))

        def work(n: int, agent: MemoryStore) -> None:
            try:
                start.wait()
                for r in range(rounds):
                    at = NOW + timedelta(minutes=1 + r * len(agents) + n)
                    promoted.extend(access(agent, "P-1", [hot.id, fresh.id], at, 10, None, "ag"))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n, a)) for n, a in enumerate(agents)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        total = len(agents) * rounds
        latest = NOW + timedelta(minutes=rounds * len(agents))
        for m in (hot, fresh):
            got = s.get_memory(m.id)
            assert got.access_count == total
            assert got.last_accessed == latest
            assert len(s.access_times("P-1")[m.id]) == total
        assert promoted == [fresh.id]  # exactly one agent promoted it
        assert len(s.list_audit(AuditQuery(action="promote"))) == 1
        assert len(s.session_times("P-1")) == total
        assert s.versions("P-1") == (2, 1 + total)

    def test_record_access_reports_counts_and_promote_flips_short_term_once(
        self, backend: Backend
    ) -> None:
        s = backend.store()
        short = memory("P-1", "Patient is fasting for a procedure", tier=Tier.SHORT_TERM)
        long = memory("P-1", "Patient walks every morning")
        other = memory("P-2", "Patient is fasting too", tier=Tier.SHORT_TERM)
        add(s, short, long)
        add(s, other)
        at = NOW + timedelta(hours=1)
        got = s.record_access("P-1", [long.id, short.id], at)
        assert got == [(long.id, 1, Tier.LONG_TERM), (short.id, 1, Tier.SHORT_TERM)]
        assert (got[1].memory_id, got[1].access_count, got[1].tier) == (
            short.id,
            1,
            Tier.SHORT_TERM,
        )
        assert s.record_access("P-1", [short.id], at)[0].access_count == 2
        assert s.versions("P-1") == (1, 3)  # accesses move the usage version only
        assert s.promote("P-1", [], "agent", at) == [] and s.versions("P-1") == (1, 3)
        ids = [long.id, short.id, other.id]  # other is not P-1's memory
        assert s.promote("P-1", ids, "agent", at) == [short.id]  # only what was short-term
        assert s.versions("P-1") == (2, 3)  # content only
        got_short = s.get_memory(short.id)
        assert (got_short.tier, got_short.version, got_short.access_count) == (
            Tier.LONG_TERM,
            2,
            2,
        )
        assert s.get_memory(long.id).version == 1
        assert s.get_memory(other.id).tier is Tier.SHORT_TERM
        (promo,) = s.list_audit(AuditQuery(action="promote"))
        assert (promo.entity_id, promo.patient_id, promo.before, promo.after, promo.at) == (
            short.id,
            "P-1",
            {"tier": "short_term"},
            {"tier": "long_term"},
            at,
        )
        # a second agent promoting the same memory: nothing flips, nothing audited
        assert backend.store().promote("P-1", [short.id], "agent", at) == []
        assert len(s.list_audit(AuditQuery(action="promote"))) == 1
        assert s.versions("P-1") == (2, 3) and s.versions("P-2") == (1, 1)

    def test_derived_reads_come_from_the_base_class(self, backend: Backend) -> None:
        s = backend.store()
        for name in ("patient_version", "access_times", "session_times"):
            assert getattr(type(s), name) is getattr(MemoryStore, name), name
        m = memory("P-1", "Patient walks every morning")
        add(s, m)
        t1 = NOW + timedelta(hours=1, microseconds=123_457)
        t2 = NOW + timedelta(days=400, microseconds=999_999)
        s.record_access("P-1", [m.id], t2)
        s.record_access("P-1", [m.id], t1)
        assert s.access_times("P-1") == {m.id: [t1, t2]}  # exact to the microsecond
        assert s.session_times("P-1") == [t1, t2]
        assert s.patient_version("P-1") == s.versions("P-1")[0] == 1

    def test_keyword_search_ranks_by_bm25_through_the_engine(self, backend: Backend) -> None:
        store = backend.store()
        engine = engine_on(store, Clock(NOW + timedelta(hours=1)))  # an add is not dated ahead
        once = memory("P-1", "Patient takes metformin 500 mg twice daily with breakfast")
        twice = memory("P-1", "Metformin dose raised, metformin with meals")
        none = memory("P-1", "Patient walks every morning")
        add(store, once, twice, none, memory("P-2", "Metformin metformin metformin"))
        at = NOW + timedelta(hours=1)

        def ids(query: str, limit: int = 10) -> list[str]:
            return [m.id for m, _ in engine.keyword_search("P-1", query, limit=limit, now=at)]

        hits = engine.keyword_search("P-1", "metformin", now=at)
        assert [m.id for m, _ in hits] == [twice.id, once.id]
        assert all(score > 0 for _, score in hits) and hits[0][1] > hits[1][1]
        assert ids("Walks, MORNING!") == [none.id]
        assert ids("metformin", 1) == [twice.id]
        assert ids("a") == [] and ids("") == [] and ids("insulin") == []
        later = memory("P-1", "Metformin stopped")
        add(store, later)  # written by someone else: the engine's snapshot is rebuilt
        assert later.id in ids("metformin")
        own = engine.add_memory("P-1", "Started metformin XR", "medication", now=at).memory
        assert own.id in ids("metformin")  # its own write: the index is extended
        assert ids("xr") == [own.id]

    def test_vector_order_through_the_engine(self, backend: Backend) -> None:
        # the seed's rule (cosine × importance), where equal importance leaves the cosine order
        seed_rule = mc.EnginePolicy(ranking=mc.RankingPolicy(mode="similarity"))
        engine = engine_on(backend.store(), policy=seed_rule)
        texts = [
            "Patient takes metformin 500 mg twice daily",
            "Patient walks every morning before breakfast",
            "Patient is allergic to latex gloves",
            "Patient prefers written discharge instructions",
        ]
        ids = [engine.add_memory("P-1", t, "observation", importance=5).memory.id for t in texts]
        query = "metformin twice daily"
        found = engine.retrieve("P-1", query, k=4, record_access=False)
        q = EMBEDDER.embed(query)
        sims = {i: float(np.dot(q, EMBEDDER.embed(t))) for i, t in zip(ids, texts, strict=True)}
        assert [x.memory.id for x in found] == sorted(ids, key=lambda i: -sims[i])
        for x in found:
            assert x.similarity == pytest.approx(sims[x.memory.id], abs=1e-6)
        assert engine.get(ids[0]).access_count == 0  # a preview records nothing

    def test_supersession_confirm_and_undo_through_the_engine(self, backend: Backend) -> None:
        clock = Clock()
        engine = engine_on(backend.store(), clock)
        old = engine.add_memory(
            "P-1",
            "Patient prefers morning appointments",
            "preference",
            created_at=NOW - timedelta(days=9),
        ).memory
        res = engine.add_memory("P-1", "Patient prefers morning appointments now", "preference")
        (auto,) = res.supersessions
        assert (auto.old_id, auto.new_id, auto.state) == (old.id, res.memory.id, "auto")
        got = engine.get(old.id)
        assert (got.status, got.superseded_by) == (Status.SUPERSEDED, res.memory.id)
        active = engine.list_memories("P-1", include_inactive=False)
        assert [m.id for m in active] == [res.memory.id]
        clock.advance(hours=1)
        undone = engine.undo_supersession(auto.id, "dr-b")
        assert undone.state is SupersessionState.UNDONE and undone.ended_at == clock.now
        assert engine.get(old.id).status is Status.ACTIVE
        assert [x.id for x in engine.supersessions("P-1", state="undone")] == [auto.id]
        with pytest.raises(mc.StateError):
            engine.undo_supersession(auto.id, "dr-b")
        # review-gated type: pending until confirmed
        a1 = engine.add_memory(
            "P-1", "Patient has a penicillin allergy", "allergy", created_at=NOW - timedelta(days=2)
        ).memory
        (pend,) = engine.add_memory(
            "P-1", "Patient has a penicillin allergy, rash", "allergy"
        ).supersessions
        assert pend.state is SupersessionState.PENDING
        assert engine.get(a1.id).status is Status.ACTIVE
        done = engine.confirm_supersession(pend.id, "dr-c")
        assert done.state is SupersessionState.CONFIRMED and done.version == 2
        assert engine.get(a1.id).status is Status.SUPERSEDED
        assert {x.id for x in engine.supersessions()} == {auto.id, pend.id}
        assert [x.id for x in engine.supersessions(state="confirmed")] == [pend.id]
        actions = [x.action for x in engine.audit_log(entity_id=a1.id)]
        assert actions == ["supersede", "add"]

    def test_undo_of_keep_both_reopens_the_review(self, backend: Backend) -> None:
        """Issue 26: a rejected ("keep both") review can be undone from where it was taken:
        the same record is pending again, in the queue and on the worklist, nothing demoted,
        one audit row (who, when, rejected -> pending); a second undo has nothing to undo."""
        clock = Clock()
        engine = engine_on(backend.store(), clock)
        a1 = engine.add_memory(
            "P-1", "Patient has a penicillin allergy", "allergy", created_at=NOW - timedelta(days=2)
        ).memory
        (pend,) = engine.add_memory(
            "P-1", "Patient has a penicillin allergy, rash", "allergy"
        ).supersessions
        kept = engine.reject_supersession(pend.id, "dr-a")
        assert kept.state is SupersessionState.REJECTED
        clock.advance(minutes=5)
        again = engine.undo_supersession(pend.id, "dr-b")
        assert (again.state, again.decided_by, again.decided_at) == (
            SupersessionState.PENDING,
            "dr-b",
            clock.now,
        )
        assert (again.effective_at, again.ended_at, again.version) == (None, None, kept.version + 1)
        assert engine.get(a1.id).status is Status.ACTIVE
        assert [x.id for x in engine.supersessions("P-1", state="pending")] == [pend.id]
        assert [w.ref for w in engine.worklist() if w.kind == "review"] == [pend.id]
        (row,) = engine.audit_log(entity_id=pend.id, action="undo_supersession")
        assert (row.actor, row.at) == ("dr-b", clock.now)
        assert (row.before or {})["state"] == "rejected" and (row.after or {})["state"] == "pending"
        # back in the queue: it can be decided again
        done = engine.confirm_supersession(pend.id, "dr-c")
        assert done.state is SupersessionState.CONFIRMED
        assert engine.get(a1.id).status is Status.SUPERSEDED
        with pytest.raises(mc.StateError):
            engine.reject_supersession(pend.id, "dr-c")

    def test_archive_and_restore_through_the_engine(self, backend: Backend) -> None:
        clock = Clock()
        engine = engine_on(backend.store(), clock)
        m = engine.add_memory("P-1", "Patient walks every morning", "observation").memory
        arch = engine.archive(m.id, "dr-a")
        assert (arch.status, arch.archived_at, arch.version) == (Status.ARCHIVED, NOW, 2)
        assert engine.retrieve("P-1", "walks every morning", record_access=False) == []
        with pytest.raises(mc.StateError):
            engine.archive(m.id, "dr-a")
        back = engine.restore(m.id, "dr-b")
        assert (back.status, back.archived_at, back.version) == (Status.ACTIVE, None, 3)
        assert [x.memory.id for x in engine.retrieve("P-1", "walks", record_access=False)] == [m.id]
        with pytest.raises(mc.ConflictError):
            engine.set_importance(m.id, 9, "dr-c", expected_version=2)
        actions = [(x.action, x.actor) for x in engine.audit_log(entity_id=m.id)]
        assert actions == [("restore", "dr-b"), ("archive", "dr-a"), ("add", "system")]

    def test_confirmations_are_stored_with_the_memory(self, backend: Backend) -> None:
        """A memory's confirmations (issue 23): inserted with it, added by an update, read back
        in time order by another handle; an update of other fields keeps them."""
        s = backend.store()
        rec = Confirmation(NOW - timedelta(days=9), ConfirmationKind.RECORD, "fhir:Condition/c1")
        m = replace(
            memory("P-1", "Essential hypertension", created=NOW - timedelta(days=900)),
            confirmations=(rec,),
        )
        plain = memory("P-1", "Patient walks every morning")
        add(s, m, plain)
        assert s.get_memory(m.id).confirmations == (rec,)
        assert s.get_memory(plain.id).confirmations == ()
        kept = Confirmation(NOW, ConfirmationKind.REVIEW_KEPT, "sup_1")
        restated = Confirmation(NOW - timedelta(days=3), ConfirmationKind.RESTATED, "mem_2")
        grown = m.with_confirmation(kept).with_confirmation(restated)
        s.apply(audited(ChangeSet(update_memories=[(grown, 1)])))
        other = backend.store()
        got = other.get_memory(m.id)
        assert got.confirmations == (rec, restated, kept) and got.confirmed_at == NOW
        assert [x.confirmations for x in other.list_memories("P-1")] == [(rec, restated, kept), ()]
        s.apply(audited(ChangeSet(update_memories=[(replace(got, pinned=True), 2)])))
        assert s.get_memory(m.id).confirmations == (rec, restated, kept)

    def test_supersession_updates_need_the_expected_version(self, backend: Backend) -> None:
        s = backend.store()
        old = memory("P-1", "Patient prefers mornings", created=NOW - timedelta(days=1))
        new = memory("P-1", "Patient prefers afternoons")
        add(s, old, new)
        sup = Supersession(
            id=f"sup_{uuid.uuid4().hex}",
            patient_id="P-1",
            old_id=old.id,
            new_id=new.id,
            similarity=0.9,
            method="manual",
            verdict="updates",
            state=SupersessionState.PENDING,
            detected_at=NOW,
        )
        s.apply(audited(ChangeSet(insert_supersessions=[sup])))
        assert s.get_supersession(sup.id) == sup
        rejected = replace(sup, state=SupersessionState.REJECTED, decided_by="dr-a", decided_at=NOW)
        s.apply(audited(ChangeSet(update_supersessions=[(rejected, 1)])))
        assert s.get_supersession(sup.id) == replace(rejected, version=2)
        with pytest.raises(mc.ConflictError):
            s.apply(audited(ChangeSet(update_supersessions=[(sup, 1)])))
        with pytest.raises(mc.NotFoundError):
            s.get_supersession("sup_missing")
        assert s.list_supersessions("P-2") == [] and s.list_supersessions(state="pending") == []

    def test_audit_listing(self, backend: Backend) -> None:
        s = backend.store()
        m = memory("P-1", "Patient walks every morning")
        add(s, m)
        pinned = replace(m, pinned=True)
        s.apply(audited(ChangeSet(update_memories=[(pinned, 1)]), actor="dr-b"))
        s.apply(audited(ChangeSet(update_memories=[(m, 2)]), actor="dr-c"))
        s.apply(audited(ChangeSet(policy={"decay": {"rate": 0.1}}), actor="dr-c"))
        log = s.list_audit(AuditQuery())
        assert [x.action for x in log] == ["policy_change", "unpin", "pin", "add"]  # newest first
        seqs = [x.seq for x in log]
        assert all(isinstance(q, int) for q in seqs) and seqs == sorted(seqs, reverse=True)
        assert log[0].patient_id is None and log[1].patient_id == "P-1"
        assert log[1].before == {**m.to_public_dict(), "pinned": True, "version": 2}
        assert log[1].after == {**m.to_public_dict(), "version": 3}
        assert log[1].at == NOW and log[1].entity == "memory"
        assert [x.action for x in s.list_audit(AuditQuery(patient_id="P-1"))] == [
            "unpin",
            "pin",
            "add",
        ]
        assert [x.action for x in s.list_audit(AuditQuery(actor="dr-c"))] == [
            "policy_change",
            "unpin",
        ]
        assert [x.action for x in s.list_audit(AuditQuery(action="pin"))] == ["pin"]
        assert len(s.list_audit(AuditQuery(entity_id=m.id))) == 3
        assert [x.action for x in s.list_audit(AuditQuery(limit=2))] == ["policy_change", "unpin"]

    def test_policy_is_saved_and_the_latest_loaded(self, backend: Backend) -> None:
        s = backend.store()
        assert s.load_policy() is None
        engine = engine_on(s)
        tuned = mc.EnginePolicy(ranking=mc.RankingPolicy(mode="weighted"))
        engine.save_policy(tuned, "dr-a")
        assert engine_on(backend.store()).policy == tuned
        (entry,) = s.list_audit(AuditQuery(action="policy_change"))
        assert entry.patient_id is None
        assert entry.after == json.loads(json.dumps(tuned.to_dict()))
        s.apply(audited(ChangeSet(policy={"decay": {"rate": 0.1}})))
        s.apply(audited(ChangeSet(policy={"decay": {"rate": 0.2}, "ranking": {"mode": "score"}})))
        assert s.load_policy() == {"decay": {"rate": 0.2}, "ranking": {"mode": "score"}}

    def test_the_dated_types_option_round_trips(self, backend: Backend) -> None:
        """Issue 35: the types whose lines say when they were last confirmed are saved as a
        list (JSON) and loaded back as the policy's tuple, on every backend."""
        s = backend.store()
        engine = engine_on(s)
        context = mc.ContextPolicy(dated_types=("medication", "lab_result"))
        tuned = mc.EnginePolicy(context=context)
        engine.save_policy(tuned, "dr-a")
        again = engine_on(backend.store()).policy
        assert again == tuned and again.context.dated_types == ("medication", "lab_result")
        engine.save_policy(mc.EnginePolicy(context=mc.ContextPolicy(dated_types=())), "dr-a")
        assert engine_on(backend.store()).policy.context.dated_types == ()

    def test_another_embedding_model_is_refused(self, backend: Backend) -> None:
        s = backend.store()
        assert s.embedding_model() == MODEL
        s.bind_embedding_model(*MODEL)  # the same again is fine
        other = backend.store(bind=False)
        with pytest.raises(mc.EmbeddingMismatchError):
            other.bind_embedding_model("another-model", MODEL[1])
        with pytest.raises(mc.EmbeddingMismatchError):
            other.bind_embedding_model(MODEL[0], 16)
        with pytest.raises(mc.EmbeddingMismatchError):
            mc.MemoryEngine(other, HashingEmbedder(dimensions=64))
        assert other.embedding_model() == MODEL

    # --- issue 15: audited writes, tombstones, purge rule, patient guard, policy version -------
    def test_a_write_without_an_actor_is_refused(self, backend: Backend) -> None:
        s = backend.store()
        m = memory("P-1", "Patient walks every morning")
        for c in (ChangeSet(insert_memories=[m]), ChangeSet(policy={"decay": {"rate": 0.9}})):
            with pytest.raises(mc.ValidationError) as err:
                s.apply(c)
            assert err.value.field == "actor"
        assert s.get_memories([m.id]) == [] and s.versions("P-1") == (0, 0)
        assert s.load_policy() is None and s.list_audit(AuditQuery()) == []

    # --- issue 25: the store writes the audit from the change ----------------------------------
    def test_the_audit_rows_are_derived_from_the_change(self, backend: Backend) -> None:
        s = backend.store()
        m = memory("P-1", "Patient is allergic to codeine: vomiting", memory_type="allergy")
        add(s, m)
        s.apply(audited(ChangeSet(update_memories=[(replace(m, importance=9.0), 1)])))
        (row,) = s.list_audit(AuditQuery(action="edit_importance"))
        assert (row.actor, row.at, row.entity, row.entity_id, row.patient_id) == (
            "dr-a",
            NOW,
            "memory",
            m.id,
            "P-1",
        )
        assert row.before == m.to_public_dict()
        assert row.after == {**m.to_public_dict(), "importance": 9.0, "version": 2}
        (added,) = s.list_audit(AuditQuery(action="add"))
        assert added.before is None and added.after == m.to_public_dict()
        # no moment given: the store stamps its own clock
        before = mc.utc_now()
        s.apply(replace(audited(ChangeSet(update_memories=[(replace(m, version=2), 2)])), at=None))
        (unpinned,) = s.list_audit(AuditQuery(limit=1))
        assert unpinned.action == "edit_importance" and before <= unpinned.at <= mc.utc_now()

    def test_audit_rows_cannot_be_forged(self, backend: Backend) -> None:
        """Issue 25, finding 3: a caller of apply cannot date, attribute, misname or leave out
        an audit row, nor write one without its change; nothing is written when it tries."""
        s = backend.store()
        m = memory("P-1", "Patient is allergic to codeine: vomiting", memory_type="allergy")
        other = memory("P-2", "Patient walks every morning")
        add(s, m, other)
        forged_row = AuditEntry(
            datetime(2001, 1, 1, tzinfo=NOW.tzinfo),
            "dr.lee@example.org",
            "edit_importance",
            "memory",
            m.id,
            "P-1",
            None,
            None,
        )
        nkda = replace(m, content="NKDA - patient has no allergies")
        old_time = datetime(2001, 1, 1, tzinfo=NOW.tzinfo)
        sup = Supersession(
            id=f"sup_{uuid.uuid4().hex}",
            patient_id="P-1",
            old_id=m.id,
            new_id=m.id,
            similarity=1.0,
            method="manual",
            verdict="updates",
            state=SupersessionState.CONFIRMED,
            detected_at=NOW,
            effective_at=NOW,
            decided_by="dr-a",
            decided_at=NOW,
        )
        refused = {
            # the forgery: content rewritten, a backdated, misnamed row given
            "audit": ChangeSet(update_memories=[(nkda, 1)], audit=[forged_row], actor="dr-a"),
            "update_memories": audited(ChangeSet(update_memories=[(nkda, 1)])),
            "at": audited(
                ChangeSet(update_memories=[(replace(m, importance=1.0), 1)]), at=old_time
            ),
            "actions": audited(
                ChangeSet(update_memories=[(replace(m, importance=1.0), 1)], actions={m.id: "pin"})
            ),
            "now": audited(
                ChangeSet(
                    update_memories=[(replace(m, status=Status.ARCHIVED, archived_at=old_time), 1)]
                )
            ),
            "accesses": audited(ChangeSet(accesses=[(m.id, "P-1", NOW)])),
            "insert_supersessions": audited(ChangeSet(insert_supersessions=[sup])),
            "flag_keeps": audited(ChangeSet(flag_keeps=[FlagKeep(m.id, "P-1", "sup_missing")])),
        }
        moved = audited(
            ChangeSet(update_memories=[(replace(other, patient_id="P-1", pinned=True), 1)])
        )
        future = audited(ChangeSet(update_memories=[(replace(m, pinned=True), 1)]))
        refused["future"] = replace(future, at=mc.utc_now() + timedelta(days=1))
        before = (
            s.versions("P-1"),
            s.versions("P-2"),
            [(x.seq, x.action) for x in s.list_audit(AuditQuery(limit=1000))],
        )
        for name, c in refused.items():
            with pytest.raises(mc.ValidationError) as err:
                s.apply(c)
            field = {"future": "at"}.get(name, name)
            assert err.value.field.startswith(field), (name, err.value.field)
        # a memory named under another patient: not found there (Cosmos) or refused (SQLite)
        with pytest.raises((mc.ValidationError, mc.ConflictError)):
            s.apply(moved)
        assert s.get_memory(m.id) == m and s.get_memory(other.id) == other
        after = (
            s.versions("P-1"),
            s.versions("P-2"),
            [(x.seq, x.action) for x in s.list_audit(AuditQuery(limit=1000))],
        )
        assert after == before
        # the moment of a legitimate change: not before the record's last write (less 5 s)
        s.apply(audited(ChangeSet(update_memories=[(replace(m, pinned=True), 1)]), at=NOW))
        with pytest.raises(mc.ValidationError) as err:
            s.apply(
                audited(
                    ChangeSet(update_memories=[(replace(m, version=2), 2)]),
                    at=NOW - timedelta(seconds=6),
                )
            )
        assert err.value.field == "at"

    def test_a_confirmation_is_audited_by_the_store(self, backend: Backend) -> None:
        """Issue 23a's confirmations under issue 25's rule: the engine writes the memory with
        one more confirmation; the store writes its ``confirm_memory`` row (actor and moment
        of the change set, before and after, the confirmation itself) and refuses one dated
        after the change, before the memory was created, or taken away."""
        s = backend.store()
        m = memory(
            "P-1", "Essential hypertension", memory_type="condition", created=NOW - timedelta(30)
        )
        add(s, m)
        seen = NOW - timedelta(days=3)
        conf = mc.Confirmation(seen, mc.ConfirmationKind.RECORD, "fhir:Condition/c1")
        s.apply(audited(ChangeSet(update_memories=[(m.with_confirmation(conf), 1)])))
        stored = s.get_memory(m.id)
        assert stored.confirmations == (conf,) and stored.version == 2
        (row,) = s.list_audit(AuditQuery(action="confirm_memory"))
        assert (row.actor, row.at, row.entity_id, row.patient_id) == ("dr-a", NOW, m.id, "P-1")
        assert row.before == m.to_public_dict()
        assert row.after is not None and row.after["confirmation"] == conf.to_public_dict()
        assert row.after["confirmed_at"] == seen.isoformat()
        # one update that confirms and archives: two rows, the confirmation first
        kept = mc.Confirmation(NOW, mc.ConfirmationKind.FLAG_KEPT, "sup_x")
        both = replace(stored.with_confirmation(kept), status=Status.ARCHIVED, archived_at=NOW)
        s.apply(audited(ChangeSet(update_memories=[(both, 2)])))
        rows = s.list_audit(AuditQuery(patient_id="P-1", limit=2))
        assert sorted(r.action for r in rows) == ["archive", "confirm_memory"]
        archived = s.get_memory(m.id)
        refused = {
            "confirmed_at": [
                archived.with_confirmation(
                    mc.Confirmation(
                        NOW + timedelta(minutes=1), mc.ConfirmationKind.RECORD, "fhir:late"
                    )
                ),
                archived.with_confirmation(
                    mc.Confirmation(
                        m.created_at - timedelta(days=1), mc.ConfirmationKind.RECORD, "fhir:early"
                    )
                ),
            ],
            "update_memories": [replace(archived, confirmations=(kept,))],  # one taken away
        }
        before = [(x.seq, x.action) for x in s.list_audit(AuditQuery(limit=1000))]
        for field_name, changes in refused.items():
            for changed in changes:
                with pytest.raises(mc.ValidationError) as err:
                    s.apply(audited(ChangeSet(update_memories=[(changed, 3)])))
                assert err.value.field == field_name
        assert s.get_memory(m.id) == archived
        assert [(x.seq, x.action) for x in s.list_audit(AuditQuery(limit=1000))] == before

    def test_a_rejection_reopened_is_audited_as_an_undo(self, backend: Backend) -> None:
        s = backend.store()
        old = memory("P-1", "Allergic to penicillin: anaphylaxis", memory_type="allergy")
        new = memory("P-1", "Penicillin re-tested: mild rash only", memory_type="allergy")
        add(s, old, new)
        sup = Supersession(
            id=f"sup_{uuid.uuid4().hex}",
            patient_id="P-1",
            old_id=old.id,
            new_id=new.id,
            similarity=0.8,
            method="rules",
            verdict="updates",
            state=SupersessionState.PENDING,
            detected_at=NOW,
        )
        s.apply(audited(ChangeSet(insert_supersessions=[sup])))
        rejected = replace(
            sup, state=SupersessionState.REJECTED, decided_by="dr-a", decided_at=NOW, version=1
        )
        s.apply(audited(ChangeSet(update_supersessions=[(rejected, 1)])))
        reopened = replace(rejected, state=SupersessionState.PENDING, version=2)
        s.apply(audited(ChangeSet(update_supersessions=[(reopened, 2)])))
        (row,) = s.list_audit(AuditQuery(action="undo_supersession"))
        assert row.before is not None and row.before["state"] == "rejected"
        assert row.after is not None and row.after["state"] == "pending"
        assert s.get_supersession(sup.id).state is SupersessionState.PENDING

    def test_a_flag_keep_is_a_change_the_store_checks(self, backend: Backend) -> None:
        s = backend.store()
        old = memory("P-1", "Takes lisinopril 10 mg", memory_type="medication")
        new = memory("P-1", "Stopped lisinopril", memory_type="medication")
        plan = memory("P-1", "Check blood pressure weekly while on lisinopril")
        elsewhere = memory("P-2", "Check blood pressure weekly")
        add(s, old, new, plan, elsewhere)
        change = Supersession(
            id=f"sup_{uuid.uuid4().hex}",
            patient_id="P-1",
            old_id=old.id,
            new_id=new.id,
            similarity=0.9,
            method="manual",
            verdict="updates",
            state=SupersessionState.AUTO,
            detected_at=NOW + timedelta(hours=1),
            effective_at=NOW,
            decided_by="dr-a",
            decided_at=NOW + timedelta(hours=1),
        )
        demoted = replace(old, status=Status.SUPERSEDED, superseded_by=new.id)
        at = NOW + timedelta(hours=1)
        s.apply(
            audited(ChangeSet(insert_supersessions=[change], update_memories=[(demoted, 1)]), at=at)
        )
        assert [x.action for x in s.list_audit(AuditQuery(patient_id="P-1", limit=2))] == [
            "supersede",
            "detect_supersession",
        ]
        keep = ChangeSet(flag_keeps=[FlagKeep(plan.id, "P-1", change.id)])
        with pytest.raises(mc.ValidationError) as err:  # before the change it answers
            s.apply(audited(keep, at=NOW))
        assert err.value.field == "at"
        with pytest.raises(mc.ValidationError) as err:  # another patient's memory
            s.apply(
                audited(ChangeSet(flag_keeps=[FlagKeep(elsewhere.id, "P-1", change.id)]), at=at)
            )
        assert err.value.field == "flag_keeps"
        s.apply(audited(keep, actor="dr-k", at=at))
        (row,) = s.list_audit(AuditQuery(action="keep_flagged"))
        assert (row.actor, row.at, row.entity_id, row.patient_id) == ("dr-k", at, plan.id, "P-1")
        assert row.before == {"change_id": change.id, "kept": False}
        assert row.after == {"change_id": change.id, "kept": True}
        last = s.last_written("P-1", [("memory", plan.id), ("supersession", change.id)])
        assert last == {("memory", plan.id): at, ("supersession", change.id): at}
        assert s.last_written("P-2", [("memory", plan.id)]) == {}
        assert s.last_written("P-1", [("memory", "mem_missing")]) == {}

    def test_a_purged_id_is_tombstoned(self, backend: Backend) -> None:
        s = backend.store()
        m = memory("P-1", "Patient walks every morning")
        add(s, m)
        archived = replace(m, status=Status.ARCHIVED, archived_at=NOW)
        s.apply(audited(ChangeSet(update_memories=[(archived, 1)])))
        assert s.purged_ids([m.id]) == set()
        s.apply(audited(ChangeSet(delete_memories=[(archived, 2)])))
        assert s.purged_ids([m.id, "mem_other"]) == {m.id}
        again = memory("P-2", "Patient is allergic to latex", memory_type="allergy")
        for reuse in (replace(again, id=m.id), replace(again, id=m.id, patient_id="P-1")):
            with pytest.raises(mc.ValidationError) as err:
                add(backend.store(), reuse)
            assert err.value.field == "id" and "purged" in err.value.message
        assert s.count_memories() == 0

    def test_purge_of_either_side_of_a_supersession(self, backend: Backend) -> None:
        clock = Clock()
        engine = engine_on(backend.store(), clock)
        old = engine.add_memory(
            "P-1",
            "Patient prefers morning appointments",
            "preference",
            created_at=NOW - timedelta(9),
        ).memory
        new = engine.add_memory("P-1", "Patient prefers morning appointments now", "preference")
        (sup,) = new.supersessions
        engine.archive(new.memory.id, "dr-a")
        assert engine.list_memories("P-1", include_inactive=False) == []
        clock.advance(days=40)
        purged = engine.purge(older_than_days=30, dry_run=False, by="dr-p")
        assert [m.id for m in purged] == [new.memory.id]
        assert engine.store.get_supersession(sup.id).state is SupersessionState.UNDONE
        assert [m.id for m in engine.list_memories("P-1", include_inactive=False)] == [old.id]
        assert engine.audit_log(entity_id=old.id)[0].action == "unsupersede"
        with pytest.raises(mc.ValidationError, match="purged"):  # the newer's id is never reused
            engine.add_memories(
                [
                    {
                        "id": new.memory.id,
                        "patient_id": "P-1",
                        "content": "x y",
                        "memory_type": "observation",
                    }
                ]
            )
        # the older side: superseded, archived, purged; the newer stays active, its record kept
        a = engine.add_memory(
            "P-2", "Patient prefers evening calls", "preference", created_at=NOW - timedelta(9)
        ).memory
        b = engine.add_memory("P-2", "Patient prefers evening calls now", "preference")
        engine.archive(a.id, "dr-a")
        clock.advance(days=40)
        assert [m.id for m in engine.purge(older_than_days=30, dry_run=False, by="dr-p")] == [a.id]
        (kept,) = engine.supersessions("P-2")
        assert kept.old_id == a.id and kept.state is SupersessionState.AUTO
        assert [m.id for m in engine.list_memories("P-2", include_inactive=False)] == [b.memory.id]

    def test_a_moved_patient_version_refuses_the_change_set(self, backend: Backend) -> None:
        s = backend.store()
        add(s, memory("P-1", "Patient walks every morning"))
        version = s.patient_version("P-1")
        late = memory("P-1", "Patient swims on Fridays")
        add(backend.store(), memory("P-1", "Patient cycles to work"))  # another writer
        stale = audited(
            ChangeSet(insert_memories=[late], expected_patient_versions={"P-1": version})
        )
        with pytest.raises(mc.errors.StaleSnapshotError):
            s.apply(stale)
        assert s.get_memories([late.id]) == []
        fresh = replace(stale, expected_patient_versions={"P-1": s.patient_version("P-1")})
        s.apply(fresh)
        assert s.get_memory(late.id).content == late.content
        new_patient = memory("P-new", "Patient is new")
        s.apply(
            audited(
                ChangeSet(insert_memories=[new_patient], expected_patient_versions={"P-new": 0})
            )
        )
        assert s.patient_version("P-new") == 1

    def test_concurrent_contradicting_adds_end_in_one_supersession(self, backend: Backend) -> None:
        n = 8 if backend.kind == "cosmos" else 20
        engines = [engine_on(backend.store()) for _ in range(2)]
        patients = [f"P-{k:02d}" for k in range(n)]
        engines[0].add_memories(
            [
                {"patient_id": p, "content": "Patient walks daily", "memory_type": "observation"}
                for p in patients
            ]
        )
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def adder(who: int) -> None:
            try:
                for p in patients:
                    barrier.wait(60)
                    text = "Patient prefers morning appointments" + (" now" if who else " again")
                    engines[who].add_memory(p, text, "preference", by=f"agent-{who}")
            except BaseException as exc:  # reported below
                errors.append(exc)
                barrier.abort()

        threads = [threading.Thread(target=adder, args=(w,)) for w in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert errors == []
        reader = engine_on(backend.store())
        for p in patients:
            prefs = [m for m in reader.list_memories(p) if m.memory_type == "preference"]
            assert len(prefs) == 2
            assert sum(m.status is Status.ACTIVE for m in prefs) == 1, p
            assert len(reader.supersessions(p)) == 1, p

    def test_an_open_engine_follows_a_saved_policy(self, backend: Backend) -> None:
        engine = engine_on(backend.store())
        engine._core.policy_check_s = 0.0
        other = engine_on(backend.store())
        assert engine.store.policy_version() == 0
        rate = engine.policy.decay.rate
        other.save_policy(replace(other.policy, decay=DecayPolicy(rate=rate / 2)), by="dr-b")
        assert engine.store.policy_version() > 0
        assert engine.policy.decay.rate == rate / 2
        v1 = engine.store.policy_version()
        other.save_policy(replace(other.policy, decay=DecayPolicy(rate=rate / 4)), by="dr-b")
        assert engine.store.policy_version() > v1
        assert engine.policy.decay.rate == rate / 4


# --- Cosmos specifics -------------------------------------------------------------------------


class CosmosSpace:
    """Fresh containers on the session's server; every store opened here is closed after."""

    def __init__(self, server: CosmosServer) -> None:
        self.server = server
        self.opened: list[MemoryStore] = []

    def url(self, **options: str) -> str:
        return self.server.url("specifics", f"t{uuid.uuid4().hex[:12]}", **options)

    def open(self, url: str) -> Any:
        return self.track(open_store(url))

    def track(self, store: MemoryStore) -> Any:
        self.opened.append(store)
        return store


@pytest.fixture
def cosmos(cosmos_server: CosmosServer) -> Iterator[CosmosSpace]:
    space = CosmosSpace(cosmos_server)
    yield space
    for store in space.opened:
        store.close()


def _body(request: Any) -> bytes:
    data = request.data
    if data is None:
        return b""
    return data if isinstance(data, bytes) else str(data).encode()


class RecordingTransport:
    """An azure-core transport that records every request and forwards it to the local server,
    except ``VectorDistance`` queries (which that server cannot run): those get a canned
    Cosmos query answer."""

    def __init__(self, answer: list[dict[str, Any]]) -> None:
        from azure.core.pipeline.transport import RequestsTransport

        self.inner = RequestsTransport()
        self.answer = answer
        self.requests: list[Any] = []

    def __enter__(self) -> RecordingTransport:
        self.inner.__enter__()
        return self

    def __exit__(self, *args: Any) -> None:
        self.inner.__exit__(*args)

    def open(self) -> None:
        self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def send(self, request: Any, **kwargs: Any) -> Any:
        import requests
        from azure.core.pipeline.transport import RequestsTransportResponse
        from requests.structures import CaseInsensitiveDict

        self.requests.append(request)
        if b"VectorDistance" not in _body(request):
            return self.inner.send(request, **kwargs)
        raw = requests.Response()
        raw.status_code = 200
        raw._content = json.dumps(
            {"_rid": "x", "Documents": self.answer, "_count": len(self.answer)}
        ).encode()
        raw.headers = CaseInsensitiveDict(
            {"Content-Type": "application/json", "x-ms-request-charge": "3.5"}
        )
        raw.url = request.url
        return RequestsTransportResponse(request, raw)


def test_server_mode_sends_the_exact_vector_query(cosmos: CosmosSpace) -> None:
    from azure.cosmos import CosmosClient

    from memory_core.store.cosmos import CosmosStore, parse_cosmos_url

    settings = parse_cosmos_url(cosmos.url(vector_search="server"))
    transport = RecordingTransport(
        [{"id": "mem_b", "similarity": 0.91}, {"id": "mem_a", "similarity": 0.4}]
    )
    client = CosmosClient(settings.endpoint, credential=EMULATOR_KEY, transport=transport)
    store = cosmos.track(CosmosStore(settings, client=client))
    store.bind_embedding_model(*MODEL)
    q = EMBEDDER.embed("metformin twice daily")
    transport.requests.clear()
    got = store.vector_candidates("P-7", q, 2)
    assert got == [("mem_b", 0.91), ("mem_a", 0.4)]
    queries = [r for r in transport.requests if b"VectorDistance" in _body(r)]
    assert len(queries) == 1
    req = queries[0]
    assert req.method == "POST" and req.headers["x-ms-documentdb-isquery"].lower() == "true"
    body = json.loads(_body(req))
    assert body["query"] == (
        "SELECT TOP @k c.id, VectorDistance(c.embedding, @q) AS similarity FROM c "
        "WHERE c.patient_id = @pid AND c.doc_type = 'memory' AND c.status = 'active' "
        "ORDER BY VectorDistance(c.embedding, @q)"
    )
    params = {p["name"]: p["value"] for p in body["parameters"]}
    assert params["@k"] == 2 and params["@pid"] == "P-7"
    assert np.array_equal(np.asarray(params["@q"], dtype=np.float32), q)
    assert req.headers["x-ms-documentdb-partitionkey"] == '["P-7"]'
    assert req.headers.get("x-ms-documentdb-query-enablecrosspartition") in (None, "false", "False")
    assert req.url.rstrip("/").endswith(f"/dbs/{settings.database}/colls/{settings.container}/docs")
    # this server has no VectorDistance: server mode there is a clear configuration error
    emulator = cosmos.open(cosmos.url(vector_search="server"))
    emulator.bind_embedding_model(*MODEL)
    with pytest.raises(mc.ConfigurationError, match="vector_search=client"):
        emulator.vector_candidates("P-7", q, 2)
    # client mode leaves vector scoring to the engine
    assert cosmos.open(cosmos.url(vector_search="client")).vector_candidates("P-7", q, 2) is None


def test_container_has_the_vector_policy_and_checks_it(cosmos: CosmosSpace) -> None:
    from memory_core.store.cosmos import META_ID, SYSTEM_PARTITION, CosmosStore

    url = cosmos.url(vector_index="diskANN")
    store = cosmos.open(url)
    assert isinstance(store, CosmosStore)
    assert store.embedding_model() is None  # no container yet: nothing stored, no error
    assert store.list_patients() == [] and store.count_memories() == 0
    store.bind_embedding_model(*MODEL)
    props = store._c.read()
    assert props["partitionKey"]["paths"] == ["/patient_id"]
    assert props["defaultTtl"] == -1
    assert props["vectorEmbeddingPolicy"] == {
        "vectorEmbeddings": [
            {
                "path": "/embedding",
                "dataType": "float32",
                "dimensions": 384,
                "distanceFunction": "cosine",
            }
        ]
    }
    policy = props["indexingPolicy"]
    assert policy["vectorIndexes"] == [{"path": "/embedding", "type": "diskANN"}]
    assert {"path": "/embedding/*"} in policy["excludedPaths"]
    # the meta document gone (as if written by an older tool): the container's own vector
    # policy still refuses another dimension
    store._c.delete_item(item=META_ID, partition_key=SYSTEM_PARTITION)
    other = cosmos.open(url)
    with pytest.raises(mc.EmbeddingMismatchError, match="vector policy"):
        other.bind_embedding_model("other-model", 16)
    with pytest.raises(mc.ValidationError, match="reserved"):
        add(store, memory("__system__", "Patient walks every morning"))


def test_a_concurrent_patch_between_read_and_replace_is_retried(
    cosmos: CosmosSpace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_core.store.cosmos import CosmosStore

    store = cosmos.open(cosmos.url())
    agent = cosmos.open(store.url)  # another agent on the same data
    assert isinstance(store, CosmosStore)
    store.bind_embedding_model(*MODEL)
    agent.bind_embedding_model(*MODEL)
    m = memory("P-1", "Patient walks every morning")
    add(store, m)
    real_read = store._read
    raced = []

    def read_then_race(doc_id: str, pk: str) -> dict[str, Any] | None:
        doc = real_read(doc_id, pk)
        if doc_id == m.id and not raced:  # an agent's access lands after our read
            raced.append(1)
            access(agent, "P-1", [m.id], NOW + timedelta(hours=1), 3, None, "agent")
        return doc

    monkeypatch.setattr(store, "_read", read_then_race)
    store.apply(audited(ChangeSet(update_memories=[(replace(m, pinned=True), 1)])))
    got = store.get_memory(m.id)
    assert raced and got.pinned and got.version == 2 and got.access_count == 1

    # a real edit in between (the version moved) is a conflict, and nothing is written
    raced.clear()

    def read_then_edit(doc_id: str, pk: str) -> dict[str, Any] | None:
        doc = real_read(doc_id, pk)
        if doc_id == m.id and not raced:
            raced.append(1)
            agent.apply(audited(ChangeSet(update_memories=[(replace(got, importance=9.0), 2)])))
        return doc

    monkeypatch.setattr(store, "_read", read_then_edit)
    with pytest.raises(mc.ConflictError):
        store.apply(audited(ChangeSet(update_memories=[(replace(got, pinned=False), 2)])))
    final = agent.get_memory(m.id)
    assert (final.pinned, final.importance, final.version) == (True, 9.0, 3)


def test_ordered_writes_survive_a_crash_between_record_and_demotion(
    cosmos: CosmosSpace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_core.store.cosmos import CosmosStore

    url = cosmos.url()
    store = cosmos.open(url)
    assert isinstance(store, CosmosStore)
    engine = engine_on(store)
    assert store._batch_is_atomic() is False  # this server applies a batch op by op
    real_write = store._write

    def crash_on_memory_update(w: Any) -> None:
        if w.kind == "replace" and w.entity == "memory":
            raise KeyboardInterrupt("process killed")
        real_write(w)

    def add_pair(older: str, newer: str) -> tuple[Memory, Memory, Supersession]:
        old = engine.add_memory("P-1", older, "preference", created_at=NOW - timedelta(days=3))
        res = engine.add_memory("P-1", newer, "preference")
        (sup,) = res.supersessions
        return old.memory, res.memory, sup

    reader = cosmos.open(url)
    # 1. an undo whose process dies after the record, before the restore: active to readers
    old, _, sup = add_pair(
        "Patient prefers morning appointments", "Patient now prefers afternoon appointments"
    )
    assert reader.get_memory(old.id).status is Status.SUPERSEDED
    monkeypatch.setattr(store, "_write", crash_on_memory_update)
    with pytest.raises(KeyboardInterrupt):
        engine.undo_supersession(sup.id, "dr-b")
    monkeypatch.undo()
    assert store._read(old.id, "P-1")["status"] == "superseded"  # type: ignore[index]
    assert reader.get_supersession(sup.id).state is SupersessionState.UNDONE
    seen = reader.get_memory(old.id)
    assert (seen.status, seen.superseded_by) == (Status.ACTIVE, None)
    assert reader.list_memories("P-1")[0].status is Status.ACTIVE
    engine.pin(old.id, "dr-b")  # the next write of the memory stores the repaired status
    doc = store._read(old.id, "P-1")
    assert doc is not None and (doc["status"], doc["pinned"]) == ("active", True)
    # 2. a supersession whose process dies after the record, before the demotion
    monkeypatch.setattr(store, "_write", crash_on_memory_update)
    with pytest.raises(KeyboardInterrupt):
        add_pair("Patient prefers phone calls", "Patient now prefers text messages")
    monkeypatch.undo()
    (sup2,) = reader.list_supersessions("P-1", state="auto")
    assert store._read(sup2.old_id, "P-1")["status"] == "active"  # type: ignore[index]
    seen = reader.get_memory(sup2.old_id)
    assert (seen.status, seen.superseded_by) == (Status.SUPERSEDED, sup2.new_id)
    statuses = {m.id: m.status for m in reader.list_memories("P-1")}
    assert statuses[sup2.old_id] is Status.SUPERSEDED and statuses[sup2.new_id] is Status.ACTIVE


def test_single_partition_change_sets_go_in_one_transactional_batch(
    cosmos: CosmosSpace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch path (what a real account runs; verified live in test_cosmos_live.py): one
    ``execute_item_batch`` per change set with etag-guarded replaces and the version counter,
    replanned once when it loses an etag race. This server has no transactional batch, so the
    batch is played here through the container's single-item calls."""
    from azure.core import MatchConditions
    from azure.cosmos.exceptions import CosmosBatchOperationError

    from memory_core.store.cosmos import COUNTER_ID, CosmosStore

    store = cosmos.open(cosmos.url(batch="on"))
    assert isinstance(store, CosmosStore)
    store.bind_embedding_model(*MODEL)
    c = store._c
    batches: list[list[Any]] = []
    lose_race = [True]

    def execute_item_batch(ops: list[Any], partition_key: str) -> list[Any]:
        batches.append(ops)
        if lose_race[0] and any(op[0] == "replace" and op[1][0] != COUNTER_ID for op in ops):
            lose_race[0] = False
            i = next(n for n, op in enumerate(ops) if op[0] == "replace")
            raise CosmosBatchOperationError(
                error_index=i,
                headers={},
                status_code=412,
                message="precondition failed",
                operation_responses=[{"statusCode": 412}],
            )
        for op in ops:
            kind, args = op[0], op[1]
            etag = op[2].get("if_match_etag") if len(op) > 2 else None
            guard = {"etag": etag, "match_condition": MatchConditions.IfNotModified} if etag else {}
            if kind == "create":
                c.create_item(args[0])
            elif kind == "replace":
                c.replace_item(item=args[0], body=args[1], **guard)
            else:
                c.delete_item(item=args[0], partition_key=partition_key, **guard)
        return []

    monkeypatch.setattr(c, "execute_item_batch", execute_item_batch)
    m = memory("P-1", "Patient walks every morning")
    add(store, m)
    assert len(batches) == 1 and [op[0] for op in batches[0]] == ["create", "create", "create"]
    assert store.versions("P-1") == (1, 1)
    store.apply(audited(ChangeSet(update_memories=[(replace(m, pinned=True), 1)])))
    assert len(batches) == 3  # lost the race once, replanned, committed
    # the memory, its audit entry (every write is audited), the counter; the replaces guarded
    ops = [(op[0], op[1][0] if op[0] == "replace" else op[1][0]["doc_type"]) for op in batches[2]]
    assert ops == [("replace", m.id), ("create", "audit"), ("replace", COUNTER_ID)]
    assert all(op[2]["if_match_etag"] for op in batches[2] if op[0] == "replace")
    got = store.get_memory(m.id)
    assert (got.pinned, got.version) == (True, 2) and store.versions("P-1") == (2, 2)
    with pytest.raises(mc.ConflictError):
        store.apply(audited(ChangeSet(update_memories=[(replace(m, pinned=False), 1)])))
    assert len(batches) == 3  # a stale version is refused before any batch


def test_documents_carry_a_schema_version_and_older_ones_still_read(cosmos: CosmosSpace) -> None:
    from memory_core.store.cosmos import SCHEMA_VERSION, CosmosStore

    store = cosmos.open(cosmos.url())
    assert isinstance(store, CosmosStore)
    store.bind_embedding_model(*MODEL)
    engine = engine_on(store)
    old = engine.add_memory(
        "P-1", "Patient prefers morning appointments", "preference", created_at=NOW
    ).memory
    new = engine.add_memory(
        "P-1", "Patient now prefers afternoon appointments", "preference"
    ).memory
    old_facts_json = store._read(old.id, "P-1")["facts"]  # type: ignore[index]
    (sup,) = store.list_supersessions("P-1")
    assert SCHEMA_VERSION == 3 and sup.rule
    engine.confirm_memories([{"memory_id": new.id}])  # a layout-3 field: confirmations
    layout_2 = {"facts", "rule", "evidence", "confirmations"}  # the fields layouts 2, 3 added
    for doc_id in (old.id, new.id, sup.id):
        doc = store._read(doc_id, "P-1")
        assert doc is not None and doc["schema"] == 3
        # a document written before the field existed reads as layout 1
        legacy = {
            k: v
            for k, v in doc.items()
            if k != "schema" and k not in layout_2 and not k.startswith("_")
        }
        store._c.replace_item(item=doc_id, body=legacy)
    reader = cosmos.open(store.url)
    assert [m.id for m in reader.list_memories("P-1")] == [old.id, new.id]
    assert reader.get_memory(old.id).status is Status.SUPERSEDED
    assert reader.get_memory(old.id).facts == old.facts  # read again from the content
    assert reader.get_memory(new.id).confirmations == ()  # written before confirmations
    assert reader.get_supersession(sup.id) == replace(sup, rule="", evidence="")
    # a layout-2 document (facts, no confirmations) reads with none
    doc = store._read(old.id, "P-1")
    assert doc is not None
    store._c.replace_item(item=old.id, body={**doc, "schema": 2, "facts": old_facts_json})
    assert reader.get_memory(old.id).confirmations == ()
    engine.pin(new.id, "dr-a")  # a rewrite stores the current layout
    doc = store._read(new.id, "P-1")
    assert doc is not None and doc["schema"] == 3 and doc["pinned"] is True and doc["facts"]
    assert "confirmations" in doc
    engine.confirm_memories([{"memory_id": new.id}], by="dr-a")
    assert reader.get_memory(new.id).confirmed_at == NOW
    doc = store._read(new.id, "P-1")
    assert doc is not None
    # a document from newer code is refused, not misread
    future = {k: v for k, v in doc.items() if not k.startswith("_")}
    store._c.replace_item(item=new.id, body={**future, "schema": 4})
    with pytest.raises(mc.StateError, match="newer than this code"):
        reader.get_memory(new.id)


def test_cosmos_init_creates_the_container_and_explains_entra(
    cosmos: CosmosSpace, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    from azure.core.credentials import AccessToken

    from memory_core import cli
    from memory_core.store.cosmos import CosmosStore

    url = cosmos.url(vector_index="quantizedFlat")
    assert cli.main(["--store", url, "--embedder", "hashing", "cosmos-init"]) == 0
    out = capsys.readouterr().out
    assert "created" in out and "384-dimension cosine vector policy" in out
    store = cosmos.open(url)
    assert store.embedding_model() == MODEL
    assert cli.main(["--store", url, "--embedder", "hashing", "cosmos-init"]) == 0
    assert "already existed" in capsys.readouterr().out

    class Token:  # an Entra ID credential (the local server does not check it)
        def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
            return AccessToken("token", int(time.time()) + 3600)

    entra = cosmos.track(CosmosStore(cosmos.url(), credential=Token()))
    assert entra.key_auth is False
    with pytest.raises(mc.ConfigurationError, match="Entra-ID data-plane roles"):
        entra.initialize(*MODEL)
    assert cli.main(["--store", "sqlite:///:memory:", "--embedder", "hashing", "cosmos-init"]) == 2
    assert "cosmos://" in capsys.readouterr().err


def test_cosmos_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_core.store.cosmos import cosmos_url_from_env, parse_cosmos_url

    s = parse_cosmos_url("cosmos://acct.documents.azure.com/db1/mems")
    assert (s.endpoint, s.database, s.container) == (
        "https://acct.documents.azure.com:443/",
        "db1",
        "mems",
    )
    assert (s.vector_search, s.vector_index, s.verify, s.batch) == (
        "server",
        "quantizedFlat",
        True,
        "auto",
    )
    local = parse_cosmos_url("cosmos://127.0.0.1:8081/db/c?vector_index=diskann&batch=off")
    assert (local.vector_search, local.verify, local.vector_index, local.batch) == (
        "client",
        False,
        "diskANN",
        "off",
    )
    assert parse_cosmos_url("cosmos://localhost:9/d/c?verify=true&vector_search=server").verify
    for bad in (
        "cosmos:///db/c",
        "cosmos://host/db",
        "cosmos://host/db/c/extra",
        "cosmos://host/db/c?vector_search=gpu",
        "cosmos://host/db/c?vector_index=hnsw",
        "cosmos://host/db/c?verify=maybe",
        "cosmos://host/db/c?colour=blue",
        "cosmos://user:secret@host/db/c",
        "cosmos://host:notaport/db/c",
    ):
        with pytest.raises(mc.ConfigurationError):
            parse_cosmos_url(bad)
    with pytest.raises(mc.ConfigurationError):
        open_store("cosmos://host/only-a-database")
    env = {"COSMOS_ENDPOINT": "https://acct.documents.azure.com:443/", "COSMOS_CONTAINER": "c2"}
    assert cosmos_url_from_env(env) == "cosmos://acct.documents.azure.com:443/memory_core/c2"
    assert cosmos_url_from_env({}) is None
    with pytest.raises(mc.ConfigurationError):
        cosmos_url_from_env({"COSMOS_ENDPOINT": "http://acct.documents.azure.com/"})
    # open_store(None): Cosmos when COSMOS_ENDPOINT is set and MEMORY_CORE_STORE is not
    monkeypatch.delenv("MEMORY_CORE_STORE", raising=False)
    monkeypatch.delenv("COSMOS_ENDPOINT", raising=False)
    assert default_store_url().startswith("sqlite:///")
    monkeypatch.setenv("COSMOS_ENDPOINT", "https://acct.documents.azure.com:443/")
    monkeypatch.setenv("COSMOS_DATABASE", "clinic")
    monkeypatch.setenv("COSMOS_VECTOR_INDEX", "diskANN")
    assert default_store_url() == (
        "cosmos://acct.documents.azure.com:443/clinic/memories?vector_index=diskANN"
    )
    monkeypatch.setenv("MEMORY_CORE_STORE", "sqlite:///:memory:")
    assert default_store_url() == "sqlite:///:memory:"
