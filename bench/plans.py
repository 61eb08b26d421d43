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
3. The version read (~0.1 ms cold): a cheaper change signal than a query (`PRAGMA
   data_version` was measured only ~15 µs cheaper cold; the WAL index header would be ~1 µs
   but ties the engine to SQLite's file format -- a decision, not a tweak).
4. The scan: a kernel that streams memory like FAISS's (an optional `faiss-cpu`
   `fvec_inner_products_ny` when installed, ~0.1-0.2 ms at 10,000).
5. Overlap the query-independent steps (version read, active rows, keyword search: ~0.25 ms
   cold) with the embedding on a second thread: measured twice more on 2026-11-30 with
   `--only e2e` (A/B, same harness) -- the engine-minus-Mem0 gap moved by -0.4 to +0.3 ms
   between runs with no consistent sign, so it stays out until a quieter machine can tell.
Note: between two `--only e2e` runs of the same code the gap to Mem0 + FAISS moves by up to
0.3 ms at each size -- as much as what is left of it. Expected: 3 and 4 together ~0.1-0.3 ms,
enough to put the engine ahead of Mem0 + FAISS outside that noise."""

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
Where the time goes (20,000 pre-embedded records, 10 patients, median of 5 runs in a fresh
process, 2026-11-30; ~1.05 s = ~19,000/s there, ~1.1 s in the benchmark process whose larger
heap makes each garbage collection dearer): validation of every record (`_prepare_all`)
~0.20 s; the audit entries (`to_public_dict` of each new memory), access tuples and results
~0.16 s; SQLite parameters ~0.17 s (the audit JSON 0.10 s, the memory rows 0.07 s); SQLite
itself ~0.49 s -- memory rows 0.15 s, 31,000 access rows 0.07 s, audit rows 0.06 s and the
commit 0.20 s, of which the WAL auto-checkpoint copying the 60 MB just written into the
database file is ~0.13 s (measured with `wal_autocheckpoint=0`: commit 0.08 s). The reference
row writes only the memory rows (no audit, no access history, no validation).

Plan: every memory keeps its full audit record (the after-state survives a purge; a clinical
requirement, not negotiable for speed), so the savings must come from doing it cheaper:
(1) encode the audit after-state straight from the memory's fields into JSON (one format
string with `json.encoder.encode_basestring_ascii` for the strings) instead of a dict and a
generic encoder, or use `orjson` if a compiled dependency is acceptable (~0.1 s);
(2) build the memory-row parameters column-wise (`to_us` over numpy arrays of timestamps,
one `tobytes` of the stacked matrix sliced per row) (~0.05 s); (3) validate the batch's
timestamps and access times as arrays, not per record (~0.05 s). Not planned: pausing the
garbage collector or deferring the WAL checkpoint -- both move the cost outside the measured
call without removing it. Expected ~0.85-0.9 s, just past 20,000/s.""",
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
