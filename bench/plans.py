"""What to change when a target is missed, shown in docs/benchmarks.md next to the current
profile and only for targets the run missed. Written from the profiles of engine commit
d311a2c (2026-11-30); shares and times quoted are approximate -- the profile printed under
each plan is the one of the run that wrote the report."""

from __future__ import annotations

_RANK = """\
Where the time goes (profile below): the keyword half of retrieval, `SQLiteStore.keyword_search`
(about half of the engine's own time: the FTS5 `MATCH` ORs every query word, so words such as
"patient", "the", "any", "has" match nearly every row and SQLite computes `bm25()` for all of
them and sorts them -- ~4 ms at 2,000 memories, ~9 ms at 10,000). Its cost follows the whole
store, not the patient: the posting lists of those words span every patient, and the patient
filter (`pk:` token) is applied by intersecting with them. Measured separately: 0.27 ms for a
100-memory patient alone in a store, 1.7 ms for the same patient with 40,000 other memories in
the store -- so in production it grows with the number of patients. Then come
`sanitize_line` on every pool candidate in `select_and_render` (~20 %), `np.linalg.norm` over
the whole matrix in `cosine_to_all` on every call, two full `argsort`s over N (vector ranks,
fused order), and `dataclasses.replace` in `_with_usage` for every pool candidate.

Plan (inside `memory_core`; the harness's agreement checks keep the results honest):
1. Keyword half: keep per-snapshot postings (term -> rows, term frequencies, document
   lengths), built once per content version, and score BM25 in numpy (`np.add.at`, ~0.1 ms at
   2,000, independent of the other patients). This ranks with the patient's own statistics
   rather than the whole FTS table's -- a small, deliberate ranking change (the Cosmos store
   already does exactly this with a per-version cache). Stop-gaps: leave out of the `MATCH` the
   terms found in more than half of the patient's memories, or give each patient's rows a
   contentless per-patient FTS table/prefix so the posting lists are the patient's own.
2. `cosine_to_all`: keep the row norms (or a unit-normalised copy) in the snapshot, computed
   when the snapshot is built or advanced.
3. Vector ranks: exact ranks only for the best `4 × candidate_pool` rows (`argpartition`) and
   the keyword hits (rows with a higher cosine + earlier ties); any other row's fused value is
   below every top-pool row, so it cannot enter the pool. Same for the fused order.
4. `select_and_render`: sanitise only the lines that are rendered and build the explanation
   lines lazily (or memoise `sanitize_line` per content); call `_with_usage` only for them.

Expected: the engine's own work under 1 ms at 2,000 memories, i.e. ≥ 20× the reference
(which does not search keywords: it is handed the store's hits, see Method)."""

_E2E = (
    _RANK
    + """

End to end the query embedding (one onnxruntime thread, ~4.5–5 ms) is shared with the floor
and with Mem0; Mem0 + FAISS is the floor plus ~0.5–1 ms, so the engine must add less than
that at every size -- all four items, and at 10,000 memories the cosine and ranking must stay
array-only. A product decision on the side: with BLAS at one thread, two onnxruntime intra-op
threads cut a single query embedding from ~4.9 to ~3.0 ms and batch throughput from ~235 to
~410 sentences/s here (rows "2 onnxruntime threads"); the engine row with two threads gains
less than the floor does, which points at the idle worker spinning against the Python work
between calls -- set `session.intra_op.allow_spinning = "0"` if two threads become the default."""
)

PLANS: dict[str, str] = {
    "context": _RANK,
    "e2e": _E2E,
    "backscan": """\
Where the time goes: `same_type_pairs` materialises every pair at or above the lowest
threshold as a Python tuple (millions at 5,000 memories imported without detection), then
`scan_contradictions` calls `threshold_for` per pair, sorts the list and walks it in Python
(its own loop is the largest single item); `drug_mentions` runs its regexes again for each
pair's two texts.

Plan: stay in numpy per type. For each type's block of the unit matrix, take the upper
triangle at or above that type's threshold (one threshold per block, no per-pair call). For
`auto` types only the first superseding pair of each older memory is ever recorded (later
pairs with the same older one are skipped because it is demoted), so per older row walk its
candidates in descending similarity and stop at the first superseding verdict that is not
already known: a few adjudications per row instead of a tuple per pair. `review` types keep
every pair, but they are few. Memoise `drug_mentions`/`analyte_mentions` per content (an
`lru_cache`). Sort the recorded supersessions by similarity at the end to keep today's order.
Expected: tens of ms of matrix work plus the writes (~0.5 s for ~5,000 supersessions with
their audit rows), under 1 s.""",
    "add_one": """\
Where the time goes (besides the embedding, ~5 ms): `_advance` recomputes `_settled_s` over
every memory and every supersession of the patient after each write (~30 % of an add at 10,000
memories with ~9,900 supersessions), and `candidates_for_new` compares the new vector with
every same-type row -- superseded history included -- recomputing their norms each time.

Plan: carry `settled_s` forward in `_advance` (the max of the old value and the moments in the
change set: new supersessions' `effective_at`/`ended_at`, archivals), and in detection compare
only with active same-type rows using cached row norms (a real patient's superseded history --
9,906 of 10,000 here -- is compared today and then skipped). Expected: embedding ~5 ms +
check < 0.5 ms + write ~1.5 ms, about 140 adds/s.""",
    "add_batch": """\
Where the time goes: the batch's embedding (about half; one onnxruntime thread embeds ~235
short sentences/s here -- see the embedder rows -- so 250/s is out of reach with one thread
whatever else is done) and detection: `candidates_for_new` recomputes the norms of every
same-type row for each new memory and compares with superseded rows too.

Plan: (1) in `_PatientPool`, keep row norms (or unit rows) and per-type lists of active rows,
appended as the batch adds memories; compare only with those; (2) embed batches with two
onnxruntime threads (a second session for batches, or `MEMORY_CORE_ORT_THREADS=2`: ~410/s
here); (3) the `_advance` fix of `add_memory`. Expected ~250–300/s at 10,000 existing.""",
    "bulk": """\
Where the time goes: `_prepare` per record (~30 %: `_field_of` with its `Mapping` isinstance
check, validation of the embedding, `default_importance`), the store write (~30 %:
`executemany` into `memories` and `memories_fts`, and one audit row per memory whose
`json.dumps(to_public_dict(), sort_keys=True)` is a large part), `_advance` (~10 %), and the
commit.

Plan: a fast path in `_prepare` for plain dicts (`record.get`), validate embeddings for the
whole batch at once (`np.isfinite` on the stacked matrix), write one `import` audit entry per
batch (count, ids, source) instead of a full record per memory -- or at least drop
`sort_keys` -- and fill `memories_fts` with one `INSERT ... SELECT` from the rows just
inserted. Expected ~2×, about the target; the plain reference (one row per transaction, no
full-text index, no audit) does ~20,000/s here.""",
    "app": """\
The slow page is the contradictions page (its threshold tuner); the others rerun in well under
100 ms. On a rerun whose data is cached, the similarity histogram is built from one value per
same-type pair -- about a million at 2,000 active memories -- through `go.Histogram(x=<pandas
column>)`, which plotly validates element by element, deep-copies and ships to the browser;
`st.cache_data` also copies the cached million-row frame on every hit. On a cache miss (every
new minute, and the first run) `_pairs` formats two timestamps per pair.

Plan (pages/contradictions.py, pages/charts.py): bin on the server (`np.histogram` of a float64
array, ~100 bins, drawn as bars), cache arrays rather than a frame, and materialise table rows
only for the pairs displayed.""",
    "rss": """\
Where the bytes are: see the table above. If embeddings are held twice (the snapshot matrix
and each `Memory.embedding` over its SQLite blob), give each cached Memory a view of its matrix
row; allocate the snapshot buffer at the exact size and grow only on append; `sys.intern` the
strings repeated on every row (patient id, type, model id, source).""",
}
