"""What to change when a target is missed, shown in docs/benchmarks.md next to the current
profile and only for targets the run missed. Written on 2026-11-30 from measurements of the
engine after the merge of the write-path work (commit b6dabc8) and the einsum cosine scan;
times are medians on the 2-core benchmark machine and move by ±20 % between runs -- the
profile printed under each plan is the one of the run that wrote the report."""

from __future__ import annotations

_RANK = """\
Where the engine's own time goes at 2,000 memories with the query already embedded (~0.4 ms,
CPU caches warm): `_rank` -- the cosine scan (`ranking.dots`, numpy's einsum), exact vector
ranks for the pool (`np.sort` of the float32 cosines), BM25 over the patient's in-memory
keyword index (`lexical.LexicalIndex.search`), the SQLite version read that tells whether the
snapshot is current (~5 µs warm, ~90 µs cold), decay of the pool; then `select_and_render`.

If this target is missed: check that the snapshot is reused (one `store.versions` read per
call, no `_build_snapshot`), then the items of the e2e plan below."""

_E2E = """\
Where the time goes. The query embedding (~4.6-5.1 ms) is the same for every contender; what
differs is the work after it. Run of 2026-11-30 (30 rounds): the engine adds 0.73 /
0.89 / 1.03 / 0.92 ms to the floor at 100 / 1,000 / 2,000 / 10,000 memories, Mem0 + FAISS
0.55 / 0.67 / 0.78 / 0.45 ms -- so the engine is within 1.3x the floor everywhere but 0.2-0.5
ms (4-7 %) behind Mem0's bare vector search. Timed statement by statement inside
`build_context` with the CPU caches cold (as on an agent's turn, after the embedding), 100
memories, ~0.74 ms in all: the SQLite version read that tells whether the snapshot is current
~98 µs, BM25 keyword search ~96 µs (query tokenising 24, then five numpy calls of 11-18 µs
each), cosines ~80 µs (einsum + the cosine kernel's ufunc calls), vector ranks ~66 µs, decay of
the pool ~52 µs, active rows ~40 µs, fusion/top/unique ~40 µs, safety tiers ~40 µs, rendering
and token count ~61 µs, argument validation ~30 µs. Each numpy call costs 5-20 µs cold
whatever its size, so at these sizes the count of calls, not the arithmetic, is the cost. At
10,000 memories the cosine scan adds 0.8-1.7 ms (15 MB of float32 rows just pushed out of the
caches; measured alone on a cold 10,000 x 384 matrix: OpenBLAS `sgemv` 1.22-1.41 ms, numpy
einsum 0.61-0.74 ms -- the engine's kernel since this run, split over two threads above
4,096 rows -- and FAISS's flat inner product 0.49-0.61 ms on one thread) and exact vector
ranks 0.26-0.47 ms by statement timing (the `np.sort` in it measures 32 µs alone: item 2).
Mem0 + FAISS does only the vector search: no keyword half, no decay, no safety tiers, no
explanation-ready pool.

Done since those timings (commit ac8bcb1): cosines from cached inverse row norms in place,
the candidate set as one mask, context tiers by type cached per snapshot, fast paths in the
argument checks -- about 0.07-0.1 ms per cold call at 100 memories; two `--only e2e` runs
afterwards had the engine between 0.04 ms ahead of and 0.33 ms behind Mem0 + FAISS.

Plan (inside `memory_core`; the harness's agreement checks keep the results identical):
1. (Measured and dropped on 2026-12-01.) BM25 scored in plain Python over the query terms'
   postings when they are few: the benchmark's queries touch 0-17 postings at 100 memories
   and 1-1,726 at 10,000, and an in-process A/B (60 shuffled rounds, each call after an
   embedding, `query_vector` given) saved 5-14 µs of 0.29 / 0.40 / 0.47 / 0.93 ms at 100 /
   1,000 / 2,000 / 10,000 memories -- 1-2 %, not worth a second scoring path.
2. (Measured and dropped on 2026-12-01.) Vector ranks without a full sort: numpy 2's sort
   of 10,000 float32 cosines takes 32 µs with the caches flushed and `np.partition` 26 µs,
   so the ~0.3 ms once attributed to it is not there to win.
3. (Done on 2026-12-01.) The version read: `build_context` read the store's version twice
   (in `rank` and again for the section); the section now uses the snapshot it was ranked on
   -- one read per call, 0.10-0.17 ms measured in paired interleaved A/B at every size (and a
   write between the two reads can no longer mix two states of the patient in one section).
   A cheaper change signal (`PRAGMA data_version`, ~15 µs cheaper cold; the WAL index header,
   ~1 µs but tied to SQLite's file format) is a decision, not a tweak.
4. The scan: a kernel that streams memory like FAISS's (an optional `faiss-cpu`
   `fvec_inner_products_ny` when installed, ~0.1-0.2 ms at 10,000).
5. (Measured on 2026-12-01, not merged.) The version read, active rows and keyword hits on a
   worker thread while the query is embedded: -0.11 / -0.12 / -0.19 / -0.30 ms at 100 / 1,000 /
   2,000 / 10,000 memories with the second core free (475 paired rounds), +0.07 / +0.13 / +0.11
   / +0.06 ms with it busy (1,470 rounds), and 0.10-0.24 ms more CPU per call either way: it
   trades throughput for latency and depends on the machine's load, which is why single
   `--only e2e` runs showed no consistent sign.
6. (Done on 2026-12-01.) Fewer array operations per call, results identical (the A/B compares
   every explained number): each searched term's BM25 per row kept with the keyword index (it
   depends on the index only: a term costs a dict look-up, not ~9 array operations); the
   pool's top by one stable sort up to 1,024 values (cold: 40 µs against 100 for the
   partition and its ties); the cosine clip by `np.minimum`/`np.maximum` (20 µs against 40
   cold); the chosen rows by a mask, not `np.unique` (17 against 65); the vocabulary expansion
   once per call; the slot-limit reasons written only when the explanations are built; RRF
   without `np.where`. Paired interleaved A/B against 4f6d4f2, each call after an embedding
   (300 rounds): -89 / -101 / -148 / -153 µs at 100 / 1,000 / 2,000 / 10,000 memories with
   the vector given, -182 / -151 / -156 / -152 µs with the query embedded in the call (CPU
   time alike); leaving each part out (250 rounds) costs 10-50 µs, each of the same sign.
7. (Measured on 2026-12-01, not kept: inside the noise in paired A/B, 200-250 rounds.) The
   version read through `PRAGMA data_version` plus the connection's `total_changes`, versions
   kept per patient until either moves: -18 / -12 / -26 / -1 µs (the pragma costs ~90 µs cold,
   the query ~110); the query without the generator-based error wrapper: +8 / -8 / -35 / +5 µs
   (-30 µs alone); ScoredMemory fields by one `tolist` per column: +1 / +17 / +19 / +19 µs;
   ndarray methods for the decay inputs' `searchsorted` and the keyword hits' nonzero: +5 / +1
   / -48 / +22 µs; at 10,000, the split scan doing the helper's half itself when the helper
   has not started: -10 µs wall, +31 µs CPU (300 rounds), -311 µs [-947, +16] with a busy
   loop on the second core.
   One `--only e2e` run after item 6 (2026-12-01 14:40, load average ~3 from other work):
   the engine 0.33 / 0.34 ms ahead of Mem0 + FAISS at 100 / 1,000 memories, 0.12 / 0.69 ms
   behind at 2,000 / 10,000 (the floor 6.2-7.9 ms there, against ~5 ms on a quiet machine).
Where the rest goes (statement timing, cold, after this: ~0.70 / 0.86 / 1.0 / 2.0 ms at 100 /
1,000 / 2,000 / 10,000): the version read ~0.13 ms, the keyword half 0.10-0.20 ms (its query
tokenising alone ~47 µs cold), the scan 0.05 / 0.13 / 0.22 / ~1.0 ms, the vector ranks 0.04 -
0.25 ms (the `np.sort` of 10,000 cosines ~175 µs in this timing, not the 32 µs of item 2's
flushed-cache test), the five ScoredMemory objects ~60 µs, their annotations ~50 µs, the
selection ~65 µs.
Note: between two `--only e2e` runs of the same code the gap to Mem0 + FAISS moves by up to
0.3 ms at each size -- as much as what is left of it (2026-12-01 13:24: 0.10 / 0.03 / 0.18 /
0.36 ms). Expected from 4: ~0.1-0.2 ms at 10,000."""

PLANS: dict[str, str] = {
    "context": _RANK,
    "e2e": _E2E,
    "backscan": """\
Where the time goes: the back-scan walks each type's block of the unit matrix in numpy (upper
triangle at or above the type's threshold), adjudicates only the best unknown pair of each
older memory for `auto` types, and writes the supersessions and their audit rows in one
transaction -- at 5,000 memories about half is the writes. If missed: profile
`MemoryEngine.scan_contradictions`; the write half scales with the supersessions found
(~4,950 here), the matrix half with the square of the largest type's count.""",
    "add_one": """\
Where the time goes: the embedding (~5 ms of the ~7-8 ms per add), then the write (one
transaction: memory, audit, any supersession) and the check against the patient's active
same-type rows (~0.6 ms at 2,000). The spread of this row is wide on a shared machine (one
slow fsync-free commit or a GC pass moves a 30-add sample). If missed: compare the embedding
rows of the same run first -- a slower embedder moves this figure one for one.""",
    "add_batch": """\
Where the time goes: the batch's embedding (a second onnxruntime session with
`MEMORY_CORE_ORT_BATCH_THREADS` threads embeds batches of 8 or more), then detection against
the patient's growing pool and one write per batch. If missed: check the batch session's
thread count in the report header, then profile `engine.supersession.detect_batch`.""",
    "bulk": """\
Where the time goes (20,000 pre-embedded records, 10 patients, 2026-12-01 after issue 11's
write-path work: instruction count for 5,000 records 2,315 M -> 1,849 M (-20 %); CPU in a
fresh process ~1.05-1.4 s against ~1.5-1.75 s before, measured in turns on the loaded 2-core
machine; the benchmark row 13,300/s -> 16,200/s in back-to-back runs there): SQLite ~0.6 s
(executemany of the memory, access and audit rows -- the audit table's append-only trigger
and index included -- and the commit with its WAL checkpoint of the 60 MB just written,
0.2-0.3 s); per record ~0.3 s (`uuid4` and `Memory()` ~0.05 s each, the embedding check
~0.035 s, `default_importance` ~0.02 s, access times ~0.02 s, the rest field reads and
calls); the audit after-states ~0.06 s (`codec.memory_state_json`, mostly `isoformat`); the
memory rows' parameters ~0.06 s (`memory_row`, the blob). In the benchmark's process a full
garbage collection (~0.25 s at its heap) falls into one run in two or three: each run leaves
~40,000 tracked objects (the Memory and AddResult objects it returns; the AuditEntry and dict
per memory are gone).

Done (issue 11): (1) the store writes the audit entries of inserted memories itself
(`ChangeSet.insert_audit`: one actor and moment for the batch; the Cosmos store writes
`ChangeSet.audit_entries()`), and the SQLite store encodes each after-state straight from the
memory -- the same text as `dumps(to_public_dict())`, checked by a digest of the audit table on
a fixed workload; (2) quick paths inside the one set of validators: a datetime already in UTC
is taken as it is, access times are checked against `created_at` with one `min`, the
embedding's finite / non-zero check is one float64 dot product, a `Tier` is taken as it is;
(3) the embedding is bound as a bytearray, the audit action as a plain str, the audit's
entity and empty before-state as SQL literals; no tombstone lookup when the store has none.

If still missed: what is left is mostly SQLite's own work and the objects the API returns.
Candidates: the memory row's three NULLs and its bool go through sqlite3's adapter lookup
(~1 µs a row: one INSERT whose NULL columns are literals for rows that have them NULL);
`default_importance` once per distinct (type, text) of a batch; the access rows' `to_us`.
Not planned: pausing the garbage collector or deferring the WAL checkpoint (both move the
cost outside the measured call), a hand-rolled uuid, building Memory objects around their
frozen-dataclass `__init__`.""",
    "app": """\
Where the time goes: the contradictions page (its threshold tuner) is the slowest rerun; it
bins the same-type similarities on the server (`np.histogram`) and caches arrays, not frames.
If missed: sample the AppTest thread (the profile below) and look for a per-pair Python loop
or a plotly trace built from a large column.""",
    "rss": """\
Where the bytes are: see the table above. The snapshot holds one float32 matrix per patient
(each cached Memory's embedding is a view of its row) and the keyword index int32/float32
postings. If missed: check for a second copy of the embeddings (a Memory whose embedding is
not a view) and for strings repeated per row (patient id, type, model id, source) that could
be interned.""",
}
