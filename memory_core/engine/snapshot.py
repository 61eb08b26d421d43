"""The per-patient snapshot cache: memories, vectors and supersessions as arrays, rebuilt only
when the store's patient version moves, and advanced in memory by this engine's own writes.

Why: every retrieval would otherwise re-read and re-stack the patient's vectors; the cache is
a measured win on every hot path.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..contradictions import KeyIndex
from ..errors import ValidationError
from ..flags import FlagIndex
from ..lexical import LexicalIndex
from ..store.base import ChangeSet, MemoryStore
from ..values import Memory, StaleFlag, Status, Supersession, Tier

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
_T = TypeVar("_T")

# The default bound of an engine's snapshot and usage caches together (least recently used
# patients are evicted beyond it): 512 MiB suits a 2-core / 24 GB machine serving many patients,
# and holds one patient of ~250,000 memories or ~40,000 patients of 3. Configurable per engine
# (``MemoryEngine(..., cache_bytes=...)``, ``open_engine(..., cache_bytes=...)``).
DEFAULT_CACHE_BYTES = 512 * 2**20
# The estimate of what a cached memory costs beyond its arrays and text (its Memory object,
# strings' headers, datetimes, the embedding's view, index entries), measured with tracemalloc
# on memories read from a store (about 710 bytes), and of a snapshot's own overhead.
PER_MEMORY_BYTES = 800
PER_SNAPSHOT_BYTES = 2048
# ... of a patient's usage beside its arrays (the Use object, three array headers, cache slots:
# about 600 bytes measured), of a numpy array's own header, of one value kept in a snapshot's
# memo beside its data (the key, the dict slot), and of one possibly-stale flag in a memoized
# list (a slotted StaleFlag and its list slot: about 110 bytes).
PER_USE_BYTES = 640
ARRAY_BYTES = 112
PER_MEMO_BYTES = 200
PER_FLAG_BYTES = 128
# ... of one supersession record a snapshot holds (the object, its ids' strings, two or three
# datetimes, its rule and a sentence of evidence: about 330 bytes measured without evidence).
PER_SUPERSESSION_BYTES = 512
# ... of one entry of a memoized per-row dict (a memory's standing, engine.retrieval.readings:
# the dict slot, the Reading and its keys' frozenset; about 390 bytes measured with tracemalloc)
PER_ROW_ENTRY_BYTES = 512
# ... of one row listed under a key of the key index (a list slot and the row's int object).
PER_KEY_ROW = 40


def growth_room(n: int) -> int:
    """Spare rows a snapshot of ``n`` memories keeps for this engine's appends: about an
    eighth (at least 1, at most 4,096), so a small patient does not hold 16 empty rows
    (24 KiB at 384 dims) and a large one appends thousands without a copy."""
    return min(max(n // 8, 1), 4096)


@dataclass
class LexSlot:
    """A snapshot's keyword index, built when a keyword query first needs it."""

    index: LexicalIndex | None = None
    sized: tuple[int, int] = (0, 0)  # (id of the index sized, its estimated bytes)

    def estimated_bytes(self) -> int:
        """:func:`lexical_bytes` of the index, once built (0 before), computed once per index."""
        index = self.index
        if index is None:
            return 0
        if self.sized[0] != id(index):
            self.sized = (id(index), lexical_bytes(index))
        return self.sized[1]


@dataclass
class FlagSlot:
    """A snapshot's index of its supersessions for the flags and annotations
    (:class:`~memory_core.flags.FlagIndex`), built when a section first needs it and advanced
    with the snapshot."""

    index: FlagIndex | None = None


@dataclass
class KeySlot:
    """A snapshot's memories by the keys they are about (:class:`KeyIndex`), built when the
    candidate search first needs it and advanced with the snapshot."""

    index: KeyIndex | None = None


@dataclass(frozen=True)
class Snapshot:
    """Everything about one patient the hot paths need, cached by the store's patient version."""

    version: int
    memories: tuple[Memory, ...]  # each one's embedding is a view of its row of `buffer`
    matrix: F32  # a view of the first len(memories) rows of `buffer`
    created_s: F64
    types: tuple[str, ...]
    index: dict[str, int]
    supersessions: tuple[Supersession, ...]
    importance: F64
    pinned: npt.NDArray[np.bool_]
    short_term: npt.NDArray[np.bool_]
    types_arr: npt.NDArray[np.str_]
    buffer: F32  # room to append this engine's own new memories without copying
    active: npt.NDArray[np.bool_]  # stored status == active
    norms: npt.NDArray[np.float32]  # L2 norm of each row of `matrix`
    settled_s: float  # no status change takes effect after this moment (as-of fast path)
    lexical: LexSlot  # the keyword index, built on first use
    flags: FlagSlot = field(default_factory=FlagSlot)  # the flags' index, built on first use
    keys: KeySlot = field(default_factory=KeySlot)  # memories by key, built on first use
    text_bytes: int = 0  # characters of the contents and ids (the cache's size estimate)
    memo: dict[Any, Any] = field(default_factory=dict)  # other derived values, built on use
    # each memory's latest confirmation (epoch seconds, NaN: never confirmed); None when no
    # memory of the patient is confirmed. As of an earlier moment: Memory.confirmation_at.
    confirmed_s: F64 | None = None

    def memoized(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """A value derived from this snapshot, made on first use and kept with it."""
        if key in self.memo:
            got: _T = self.memo[key]
            return got
        value = self.memo[key] = make()
        return value

    def memory_of(self, memory_id: str) -> Memory | None:
        """The snapshot's memory of this id (None: not in it)."""
        i = self.index.get(memory_id)
        return None if i is None else self.memories[i]

    def key_index(self) -> KeyIndex:
        """The memories indexed by the keys they are about, built on first use (two threads
        may both build it: the same index either way)."""
        got = self.keys.index
        if got is None:
            got = self.keys.index = KeyIndex.build(self.memories)
        return got

    def flag_index(self) -> FlagIndex:
        """The supersessions indexed for the flags and annotations, built on first use (two
        threads may both build it: the same index either way)."""
        got = self.flags.index
        if got is None:
            got = self.flags.index = FlagIndex.build(self.supersessions, self.memory_of)
        return got


@dataclass
class Use:
    """A patient's usage (accesses, sessions) aligned with a snapshot's memories, cached by the
    store's usage version; access events are loaded only for as-of queries in the past."""

    version: tuple[int, int]
    access_count: F64
    last_s: F64
    sessions_s: F64
    latest_s: float
    events: dict[str, F64] | None = None
    sized: tuple[int, int] = (0, 0)  # (id of the events sized, their estimated bytes)


def settled_s(mems: Sequence[Memory], supersessions: Sequence[Supersession]) -> float:
    """The last moment at which any status of these memories changed."""
    moments = [m.archived_at.timestamp() for m in mems if m.archived_at is not None]
    for sup in supersessions:
        for t in (sup.effective_at, sup.ended_at):
            if t is not None:
                moments.append(t.timestamp())
    return max(moments, default=-np.inf)


def held_in(mems: Sequence[Memory], buffer: F32, start: int = 0) -> list[Memory]:
    """Copies of the memories whose embeddings are views of their rows of ``buffer`` (from row
    ``start``), so the vectors are held once and the store's copies can be freed. Memories are
    frozen: copies, never an assignment to one."""
    return [replace(m, embedding=buffer[i]) for i, m in enumerate(mems, start=start)]


def make_snapshot(
    version: int,
    mems: Sequence[Memory],
    supersessions: tuple[Supersession, ...],
    dims: int,
) -> Snapshot:
    n = len(mems)
    buffer = np.zeros((n + growth_room(n), dims), dtype=np.float32)
    if n:
        buffer[:n] = np.vstack([m.embedding for m in mems])
    mems = tuple(held_in(mems, buffer))
    return Snapshot(
        version=version,
        memories=mems,
        matrix=buffer[:n],
        created_s=np.fromiter((m.created_at.timestamp() for m in mems), np.float64, n),
        types=tuple(m.memory_type for m in mems),
        index={m.id: i for i, m in enumerate(mems)},
        supersessions=supersessions,
        importance=np.fromiter((m.importance for m in mems), np.float64, n),
        pinned=np.fromiter((m.pinned for m in mems), np.bool_, n),
        short_term=np.fromiter((m.tier is Tier.SHORT_TERM for m in mems), np.bool_, n),
        types_arr=np.array([m.memory_type for m in mems], dtype="<U40"),
        buffer=buffer,
        active=np.fromiter((m.status is Status.ACTIVE for m in mems), np.bool_, n),
        norms=np.linalg.norm(buffer[:n], axis=1).astype(np.float32),
        settled_s=settled_s(mems, supersessions),
        lexical=LexSlot(),
        text_bytes=sum(len(m.content) + len(m.id) for m in mems),
        confirmed_s=latest_confirmations(mems),
    )


def latest_confirmations(mems: Sequence[Memory]) -> F64 | None:
    """Each memory's latest confirmation (epoch seconds; NaN: none), or None when none is
    confirmed (:attr:`Snapshot.confirmed_s`)."""
    if not any(m.confirmations for m in mems):
        return None
    return np.fromiter(
        (m.confirmations[-1].at.timestamp() if m.confirmations else np.nan for m in mems),
        np.float64,
        len(mems),
    )


def advanced_confirmations(
    snap: Snapshot, index: dict[str, int], changed: Sequence[Memory], new: Sequence[Memory]
) -> F64 | None:
    """:attr:`Snapshot.confirmed_s` after ``changed`` (updated rows) and ``new`` (appended
    rows, in order), without a pass over the unchanged rows."""
    had = snap.confirmed_s
    if had is None and not any(m.confirmations for m in (*changed, *new)):
        return None
    n = len(snap.memories)
    out = np.full(n + len(new), np.nan)
    if had is not None:
        out[:n] = had
    for m in (*changed, *new):
        if m.confirmations:
            out[index[m.id]] = m.confirmations[-1].at.timestamp()
        else:
            out[index[m.id]] = np.nan
    return out


def by_patient(changes: ChangeSet) -> dict[str, ChangeSet]:
    """The parts of a change set that :func:`advance` reads, per patient, in one pass over it
    (a whole-store cleanup writes tens of thousands of patients in a change set: reading all of
    it once per patient was quadratic). Audit entries are left out: no snapshot holds them."""
    parts: dict[str, ChangeSet] = {}

    def part(pid: str) -> ChangeSet:
        got = parts.get(pid)
        if got is None:
            got = parts[pid] = ChangeSet()
        return got

    for m in changes.insert_memories:
        part(m.patient_id).insert_memories.append(m)
    for u in changes.update_memories:
        part(u[0].patient_id).update_memories.append(u)
    for d in changes.delete_memories:
        part(d[0].patient_id).delete_memories.append(d)
    for s in changes.insert_supersessions:
        part(s.patient_id).insert_supersessions.append(s)
    for su in changes.update_supersessions:
        part(su[0].patient_id).update_supersessions.append(su)
    for a in changes.accesses:
        part(a[1]).accesses.append(a)
    for mark in changes.sessions:
        part(mark[0]).sessions.append(mark)
    return parts


def advance(
    snap: Snapshot, use: Use, pid: str, changes: ChangeSet, version: tuple[int, int]
) -> tuple[Snapshot, Use] | None:
    """The snapshot and usage after this engine's own ``changes`` (None: rebuild instead);
    ``changes`` may hold other patients' records too (they are skipped), but a caller with
    many patients passes each its own part (:func:`by_patient`)."""
    if any(m.patient_id == pid for m, _ in changes.delete_memories):
        return None
    new = [m for m in changes.insert_memories if m.patient_id == pid]
    if new and snap.memories and min(m.created_at for m in new) < snap.memories[-1].created_at:
        return None  # back-filled history: keep the oldest-first order of a fresh read
    mems = list(snap.memories)
    importance, pinned = snap.importance.copy(), snap.pinned.copy()
    short, active = snap.short_term.copy(), snap.active.copy()
    for m, expected in changes.update_memories:
        if m.patient_id == pid:
            i = snap.index.get(m.id)
            if i is None or m.memory_type != snap.types[i]:
                return None
            if m.content != mems[i].content:
                return None  # the keyword index is extended, never edited: rebuild
            mems[i] = replace(m, version=expected + 1, embedding=snap.buffer[i])
            importance[i], pinned[i] = m.importance, m.pinned
            short[i], active[i] = m.tier is Tier.SHORT_TERM, m.status is Status.ACTIVE
    new.sort(key=lambda m: m.created_at)
    n, k = len(mems), len(new)
    buffer = snap.buffer
    if n + k > buffer.shape[0]:
        buffer = np.zeros((n + k + growth_room(n + k), buffer.shape[1]), dtype=np.float32)
        buffer[:n] = snap.buffer[:n]
        mems = held_in(mems, buffer)  # let the old buffer go
    for j, m in enumerate(new):
        buffer[n + j] = m.embedding
    mems += held_in(new, buffer, n)
    updated = [(s, e) for s, e in changes.update_supersessions if s.patient_id == pid]
    inserted = tuple(s for s in changes.insert_supersessions if s.patient_id == pid)
    decided = [replace(s, version=expected + 1) for s, expected in updated]
    if decided:
        sups = {s.id: s for s in snap.supersessions}
        sups.update((s.id, s) for s in decided)
        sups.update((s.id, s) for s in inserted)
        supersessions = tuple(sups.values())
    else:  # new ids (the store refuses a duplicate): appended, as the dict above would
        supersessions = snap.supersessions + inserted
    index = dict(snap.index)
    index.update((m.id, n + j) for j, m in enumerate(new))
    changed = [m for m, _ in changes.update_memories if m.patient_id == pid]
    lex = snap.lexical.index  # contents never change: extend by the new rows only
    confirmed = advanced_confirmations(snap, index, changed, new)
    fresh = Snapshot(
        version=version[0],
        memories=tuple(mems),
        matrix=buffer[: n + k],
        created_s=np.concatenate([snap.created_s, [m.created_at.timestamp() for m in new]]),
        types=snap.types + tuple(m.memory_type for m in new),
        index=index,
        supersessions=supersessions,
        importance=np.concatenate([importance, [m.importance for m in new]]),
        pinned=np.concatenate([pinned, np.array([m.pinned for m in new], dtype=np.bool_)]),
        short_term=np.concatenate(
            [short, np.array([m.tier is Tier.SHORT_TERM for m in new], dtype=np.bool_)]
        ),
        types_arr=np.concatenate(
            [snap.types_arr, np.array([m.memory_type for m in new], dtype="<U40")]
        ),
        buffer=buffer,
        active=np.concatenate(
            [active, np.array([m.status is Status.ACTIVE for m in new], dtype=np.bool_)]
        ),
        norms=np.concatenate([snap.norms, np.linalg.norm(buffer[n : n + k], axis=1)]).astype(
            np.float32
        ),
        settled_s=max(
            snap.settled_s,
            settled_s([*new, *changed], [*inserted, *(x for x, _ in updated)]),
        ),
        lexical=LexSlot(None if lex is None else lex.extended([m.content for m in new])),
        text_bytes=snap.text_bytes + sum(len(m.content) + len(m.id) for m in new),
        confirmed_s=confirmed,
    )
    flags = snap.flags.index  # advanced by the records written, never rebuilt
    if flags is not None:
        fresh.flags.index = flags.advanced([*inserted, *decided], fresh.memory_of)
    keys = snap.keys.index  # contents never change: extended by the new rows only
    if keys is not None:
        fresh.keys.index = keys.extended(fresh.memories, n)
    times = [at.timestamp() for _, p, at in changes.accesses if p == pid]
    latest = max([use.latest_s, *times])
    sessions = use.sessions_s
    added = sorted(at.timestamp() for p, at in changes.sessions if p == pid)
    if added:
        sessions = np.sort(np.concatenate([sessions, np.array(added)]))
    return fresh, Use(
        version=version,
        access_count=np.concatenate(
            [use.access_count, np.array([m.access_count for m in new], dtype=np.float64)]
        ),
        last_s=np.concatenate(
            [use.last_s, np.array([m.last_accessed.timestamp() for m in new], dtype=np.float64)]
        ),
        sessions_s=sessions,
        latest_s=latest,
        events=None if times else use.events,
    )


#: Per term of a keyword index: the dict entry, the term string and two array headers (the
#: small patients' indexes measured about 360 bytes a term with tracemalloc).
PER_TERM_BYTES = 400


def lexical_bytes(index: LexicalIndex) -> int:
    """An upper estimate of a keyword index's size, without walking it (it is asked on every
    write that advances a snapshot): a fixed cost per term, and 16 bytes per token of every
    document -- 8 for a posting (an int32 row and a float32 weight), 8 for its float64 BM25
    once a query searched its term -- at least one posting per distinct term of a document,
    so never fewer than the postings held."""
    terms = len(getattr(index, "_postings", ()))
    return index.lengths.nbytes + terms * PER_TERM_BYTES + 16 * int(index.lengths.sum())


def value_bytes(value: object) -> int:
    """An estimate of one value a snapshot memoizes (arrays, lists of flags, per-row dicts,
    numbers)."""
    if isinstance(value, np.ndarray):
        return ARRAY_BYTES + value.nbytes
    if isinstance(value, list | tuple):
        each = PER_FLAG_BYTES if value and isinstance(value[0], StaleFlag) else 64
        return 56 + len(value) * each
    if isinstance(value, dict):
        return 64 + len(value) * PER_ROW_ENTRY_BYTES
    return 32


def key_bytes(index: KeyIndex | None) -> int:
    """An estimate of a key index: an entry per key (its tuple, list and dict slot) and a
    pointer and a boxed int per row listed (0 before it is built)."""
    if index is None:
        return 0
    return PER_MEMO_BYTES + len(index.rows) * PER_ROW_ENTRY_BYTES + index.entries * PER_KEY_ROW


def lazy_bytes(snap: Snapshot) -> int:
    """What a snapshot built after it was cached: its keyword index, its flags' and keys'
    indexes and its memoized values (a section builds them on its first call)."""
    flags = snap.flags.index
    memo = sum(PER_MEMO_BYTES + value_bytes(v) for v in list(snap.memo.values()))
    indexes = (flags.estimated_bytes() if flags else 0) + key_bytes(snap.keys.index)
    return snap.lexical.estimated_bytes() + indexes + memo


def snapshot_bytes(snap: Snapshot) -> int:
    """The estimated size of a cached snapshot: its arrays (the embedding buffer with its growth
    room dominates), contents and ids, a fixed cost per memory, its supersession records and
    what it built lazily (:func:`lazy_bytes`). Arrays shared with an older snapshot of the same
    patient are counted again (the older one is dropped from the cache when this one replaces
    it)."""
    n = len(snap.memories)
    arrays = (
        snap.buffer.nbytes
        + snap.created_s.nbytes
        + snap.importance.nbytes
        + snap.pinned.nbytes
        + snap.short_term.nbytes
        + snap.types_arr.nbytes
        + snap.active.nbytes
        + snap.norms.nbytes
        + (0 if snap.confirmed_s is None else snap.confirmed_s.nbytes)
    )
    records = len(snap.supersessions) * PER_SUPERSESSION_BYTES
    return (
        PER_SNAPSHOT_BYTES
        + arrays
        + snap.text_bytes
        + n * PER_MEMORY_BYTES
        + records
        + lazy_bytes(snap)
    )


def usage_bytes(use: Use) -> int:
    """The estimated size of a cached usage (its arrays and, once loaded, its access events)."""
    size = use.access_count.nbytes + use.last_s.nbytes + use.sessions_s.nbytes + PER_USE_BYTES
    events = use.events
    if events is not None:
        if use.sized[0] != id(events):
            use.sized = (id(events), sum(a.nbytes + 160 for a in events.values()))
        size += use.sized[1]
    return size


class Snapshots:
    """The engine's snapshot and usage caches, keyed by patient, bounded by ``max_bytes``
    (estimated with :func:`snapshot_bytes` and :func:`usage_bytes`): beyond it the least
    recently used patients are evicted (the patient just used always stays, however large).
    A patient's snapshot and usage are evicted together.

    A snapshot grows after it is cached (the first section builds its keyword index, its flags'
    index and memoized arrays; an as-of query loads access events): the snapshots handed out
    are sized again at the next look-up of any patient (:meth:`settle`), before anything is
    evicted, so the bound holds for what the caches really hold, not for what they held when
    each patient was first read."""

    def __init__(self, store: MemoryStore, dims: int, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValidationError(
                "cache_bytes", f"must be a non-negative integer, got {max_bytes!r}"
            )
        self.store = store
        self.dims = dims
        self.max_bytes = max_bytes
        self.cache: OrderedDict[str, Snapshot] = OrderedDict()  # least recently used first
        self.usage: dict[str, Use] = {}
        self.sizes: dict[str, int] = {}
        self.bytes = 0  # the estimated size of everything cached
        self.evictions = 0
        self.lock = threading.Lock()
        self.lent: dict[str, Snapshot] = {}  # handed out since the last settle: may have grown

    def snapshot(self, patient_id: str) -> Snapshot:
        return self.state(patient_id)[0]

    def state(self, patient_id: str) -> tuple[Snapshot, Use]:
        """The patient's snapshot (memories, vectors, supersessions) and usage, each rebuilt
        only when the store says it changed."""
        content, usage = self.store.versions(patient_id)
        with self.lock:
            snap = self.cache.get(patient_id)
            use = self.usage.get(patient_id)
        if snap is None or snap.version != content:
            snap = make_snapshot(
                content,
                self.store.list_memories(patient_id),
                tuple(self.store.list_supersessions(patient_id)),
                self.dims,
            )
            use = None
        if use is None or use.version != (content, usage):
            use = self._build_usage(patient_id, snap, (content, usage))
        with self.lock:
            sized = self._settle()
            # sized just now, and still what is cached: its size is known (the common case of
            # a patient asked about again)
            known = (
                patient_id in sized
                and self.cache.get(patient_id) is snap
                and self.usage.get(patient_id) is use
            )
            self._put(patient_id, snap, use, sized=known)
            self.lent[patient_id] = snap
        return snap, use

    def settle(self) -> None:
        """Size again the snapshots handed out since the last look-up (what they built since)
        and evict while the estimate is over the bound."""
        with self.lock:
            self._settle()
            self._evict()

    def _settle(self) -> set[str]:
        """:meth:`settle` without the eviction (holds the lock); the patients sized."""
        sized = set()
        for pid, snap in self.lent.items():
            if self.cache.get(pid) is not snap:
                continue
            use = self.usage.get(pid)
            size = snapshot_bytes(snap) + (0 if use is None else usage_bytes(use))
            self.bytes += size - self.sizes.get(pid, 0)
            self.sizes[pid] = size
            sized.add(pid)
        self.lent.clear()
        return sized

    def _put(self, pid: str, snap: Snapshot, use: Use, sized: bool = False) -> None:
        """Cache (or refresh) one patient as the most recently used, then evict the least
        recently used others while the estimate is over the bound. Holds the lock. ``sized``:
        these very snapshot and usage are cached and were sized just now."""
        self.cache[pid] = snap
        self.cache.move_to_end(pid)
        self.usage[pid] = use
        if not sized:
            size = snapshot_bytes(snap) + usage_bytes(use)
            self.bytes += size - self.sizes.get(pid, 0)
            self.sizes[pid] = size
        self._evict()

    def _evict(self) -> None:
        """Drop the least recently used patients while over the bound (holds the lock)."""
        while self.bytes > self.max_bytes and len(self.cache) > 1:
            old = next(iter(self.cache))
            self._drop(old)
            self.evictions += 1

    def _drop(self, pid: str) -> None:
        """Forget one patient (holds the lock)."""
        self.cache.pop(pid, None)
        self.usage.pop(pid, None)
        self.lent.pop(pid, None)
        self.bytes -= self.sizes.pop(pid, 0)

    def clear(self) -> None:
        with self.lock:
            self.cache.clear()
            self.usage.clear()
            self.sizes.clear()
            self.lent.clear()
            self.bytes = 0

    def apply(self, changes: ChangeSet) -> None:
        """Write through the store, then bring the cached snapshots up to date by applying the
        same changes in memory -- when nobody else wrote in between (the store's content
        version moved by exactly one); otherwise the next read rebuilds."""
        patients = changes.patients()
        with self.lock:
            before = {p: (self.cache.get(p), self.usage.get(p)) for p in patients}
        self.store.apply(changes)
        parts = by_patient(changes) if len(before) > 1 else {}
        for pid, (snap, use) in before.items():
            content, usage = self.store.versions(pid)
            fresh = None
            if snap is not None and use is not None and content == snap.version + 1:
                part = parts.get(pid, changes) if parts else changes
                fresh = advance(snap, use, pid, part, (content, usage))
            with self.lock:
                if fresh is not None and self.cache.get(pid) is snap:
                    self._put(pid, *fresh)
                else:
                    self._drop(pid)

    def accessed(self, patient_id: str, counts: Sequence[tuple[str, int]], at_s: float) -> bool:
        """After this engine recorded one access of each of ``counts``' memories at ``at_s``
        (the store's post-increment counts), apply it to the cached usage in memory instead of
        reloading the patient's whole usage -- when the store's usage version moved by exactly
        this one write (and the content version not at all); otherwise the cached usage is
        dropped and the next read reloads it. True when applied in memory."""
        content, usage = self.store.versions(patient_id)
        with self.lock:
            snap = self.cache.get(patient_id)
            use = self.usage.get(patient_id)
            if (
                snap is None
                or use is None
                or snap.version != content
                or use.version != (content, usage - 1)
            ):
                if use is not None:
                    self.usage.pop(patient_id, None)
                    if snap is not None:  # keep the snapshot; the usage is read again
                        self._put_snapshot_only(patient_id, snap)
                return False
            count, last = use.access_count.copy(), use.last_s.copy()
            latest = use.latest_s
            for mid, n in counts:
                i = snap.index.get(mid)
                if i is None:  # not in this snapshot: reload rather than guess
                    self.usage.pop(patient_id, None)
                    self._put_snapshot_only(patient_id, snap)
                    return False
                count[i] = n
                last[i] = max(last[i], at_s)
                latest = max(latest, float(last[i]))
            sessions = use.sessions_s
            k = int(np.searchsorted(sessions, at_s, side="right"))
            fresh = Use(
                version=(content, usage),
                access_count=count,
                last_s=last,
                sessions_s=np.concatenate([sessions[:k], [at_s], sessions[k:]]),
                latest_s=latest,
                events=None,  # loaded again by the first as-of query before at_s
            )
            self._put(patient_id, snap, fresh)
            return True

    def _put_snapshot_only(self, pid: str, snap: Snapshot) -> None:
        """Keep ``pid``'s snapshot cached with no usage (holds the lock)."""
        self.bytes -= self.sizes.get(pid, 0)
        self.sizes[pid] = size = snapshot_bytes(snap)
        self.bytes += size

    def _build_usage(self, patient_id: str, snap: Snapshot, version: tuple[int, int]) -> Use:
        u = self.store.usage(patient_id)
        count = np.fromiter((m.access_count for m in snap.memories), np.float64, len(snap.index))
        last = np.fromiter(
            (m.last_accessed.timestamp() for m in snap.memories), np.float64, len(snap.index)
        )
        for k, mid in enumerate(u.ids):
            i = snap.index.get(mid)
            if i is not None:
                count[i] = u.access_count[k]
                last[i] = u.last_accessed_s[k]
        used = last[count > 0]
        return Use(
            version=version,
            access_count=count,
            last_s=last,
            sessions_s=u.sessions_s,
            latest_s=float(used.max()) if used.size else 0.0,
        )


class PatientPool:
    """A patient's memories during a batch add: the stored ones plus those added so far, in
    growable arrays (appending a memory is O(1) amortised, not a copy of the whole matrix)."""

    def __init__(self, snap: Snapshot) -> None:
        self.memories = list(snap.memories)
        self.n_stored = len(self.memories)
        self._snap = snap
        self._n = self.n_stored
        self._matrix = snap.matrix
        self._types = snap.types_arr
        self._created = snap.created_s
        self._active = snap.active  # status is active; copied before the first change
        self._norms = snap.norms
        self._own_active = False
        self._pending: list[Memory] = []
        self.replaced: dict[str, Memory] = {}  # stored memories demoted by the batch

    @property
    def snapshot(self) -> Snapshot:
        """The stored state the pool started from."""
        return self._snap

    def versions(self, memory_id: str) -> int:
        return self._snap.memories[self._snap.index[memory_id]].version

    def arrays(self) -> tuple[F32, npt.NDArray[np.str_], F64, npt.NDArray[np.bool_], F32]:
        """(matrix, types, created_s, active, norms) of every memory in the pool."""
        if self._pending:
            self._flush()
        n = self._n
        return (
            self._matrix[:n],
            self._types[:n],
            self._created[:n],
            self._active[:n],
            self._norms[:n],
        )

    def add(self, m: Memory) -> None:
        """Add a memory; its row is written only when a later detection needs it (a single
        add never copies the patient's matrix)."""
        self.memories.append(m)
        self._pending.append(m)

    def _flush(self) -> None:
        n, k = self._n, len(self._pending)
        if n == self.n_stored or n + k > self._matrix.shape[0]:
            # first growth (the snapshot's arrays are shared: copy) or full: grow
            cap = max(2 * (n + k), n + k + 64)
            matrix = np.zeros((cap, self._snap.buffer.shape[1]), dtype=np.float32)
            matrix[:n] = self._matrix[:n]
            types = np.empty(cap, dtype="<U40")
            types[:n] = self._types[:n]
            created = np.zeros(cap, dtype=np.float64)
            created[:n] = self._created[:n]
            active = np.zeros(cap, dtype=np.bool_)
            active[:n] = self._active[:n]
            norms = np.zeros(cap, dtype=np.float32)
            norms[:n] = self._norms[:n]
            self._matrix, self._types, self._created = matrix, types, created
            self._active, self._norms, self._own_active = active, norms, True
        for j, m in enumerate(self._pending):
            self._matrix[n + j] = m.embedding
            self._types[n + j] = m.memory_type
            self._created[n + j] = m.created_at.timestamp()
            self._active[n + j] = self.memories[n + j].status is Status.ACTIVE
        self._norms[n : n + k] = np.linalg.norm(self._matrix[n : n + k], axis=1)
        self._n = n + k
        self._pending = []

    def replace(self, row: int, m: Memory) -> None:
        self.memories[row] = m
        if row < self._n:
            if not self._own_active:
                self._active = self._active.copy()
                self._own_active = True
            self._active[row] = m.status is Status.ACTIVE
        if row < self.n_stored:
            self.replaced[m.id] = m

    def added(self) -> list[Memory]:
        return self.memories[self.n_stored :]
