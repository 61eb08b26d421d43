"""The keyword half of retrieval (memory_core.lexical): its BM25 checked against SQLite FTS5's
own ``bm25()`` on the same word forms (at FTS5's parameters), the shipped parameters against
the formula worked by hand, the word forms (Snowball stems) a memory and a question share, and
the incremental extension against a fresh build."""

from __future__ import annotations

import math
import sqlite3

import numpy as np
import pytest

from memory_core.lexical import K1, B, LexicalIndex, analyse, bm25, form, query_terms, tokens

DOCS = [
    "Patient takes metformin 500 mg twice daily with breakfast",
    "Metformin dose raised, metformin with meals",
    "Patient walks every morning",
    "Allergic to penicillin: hives and facial swelling",
    "HbA1c 7.9% on 2026-03-02; metformin adherence good",
    "Café visits with daughter on Sundays; naïve to insulin",
    "Prefers morning appointments; daughter drives",
]
QUERIES = [
    "metformin",
    "Any side effects from the diabetes medication, metformin?",
    "morning walks with daughter",
    "penicillin allergy hives",
    "cafe naive insulin",
    "HbA1c 7.9",
]


def fts5_scores(docs: list[str], query: str) -> np.ndarray:
    """-bm25() from an in-memory FTS5 table holding exactly ``docs``' word forms (0 where no
    match): FTS5's own BM25 (k1 = 1.2, b = 0.75) over the same terms as ours."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize = 'unicode61 remove_diacritics 2')")
    rows = [(i, " ".join(analyse(d))) for i, d in enumerate(docs)]
    db.executemany("INSERT INTO t (rowid, c) VALUES (?, ?)", rows)
    out = np.zeros(len(docs))
    terms = " OR ".join(f'"{t}"' for t in query_terms(query))
    for rowid, score in db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (terms,)):
        out[rowid] = -score
    return out


@pytest.mark.parametrize("query", QUERIES)
def test_scores_match_sqlite_fts5(query: str) -> None:
    ours = LexicalIndex.build(DOCS, k1=1.2, b=0.75).scores(query_terms(query))
    assert ours == pytest.approx(fts5_scores(DOCS, query), rel=1e-9, abs=1e-12)
    assert (ours > 0).any()


def test_golden_value() -> None:
    # 4 documents, "penicillin" in one of them: idf = ln(3.5 / 1.5); that document has
    # 7 tokens against an average of 20 / 4 = 5
    docs = [
        "penicillin causes hives and facial swelling today",
        "walks",
        "a b c d e f",
        "x y z w q r",
    ]
    idf = math.log(3.5 / 1.5)
    fts5 = idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 7 / 5))
    assert LexicalIndex.build(docs, 1.2, 0.75).scores(["penicillin"])[0] == pytest.approx(
        fts5, rel=1e-12
    )
    # the shipped parameters (Anserini's): k1 = 0.9, b = 0.4
    assert (K1, B) == (0.9, 0.4)
    shipped = idf * 1.9 / (1 + 0.9 * (0.6 + 0.4 * 7 / 5))
    assert bm25(docs, "penicillin")[0] == pytest.approx(shipped, rel=1e-12)
    assert bm25(docs, "penicillin")[0] == pytest.approx(0.78761, abs=5e-6)


def test_a_memory_and_a_question_meet_in_their_word_forms() -> None:
    # the misses: the keyword half matched exact tokens only
    for asked, written in [
        ("Who does the patient live with?", "Patient lives with a spouse who cooks most meals"),
        ("Does the job involve driving?", "Patient drives a long-haul truck for work"),
        ("Any change in the insulin dose?", "Insulin doses were cut by 2 units"),
        ("Is she fasting?", "Patient fasts during Ramadan"),
        ("What hours does he work?", "Patient works night shifts"),
    ]:
        scores = bm25([written, "Patient walks a large dog"], asked)
        assert scores[0] > 0 and scores[1] == 0, (asked, written)
    assert form("lives") == form("living") == form("live") == "live"
    assert analyse("Drives, driving; DRIVE") == ["drive", "drive", "drive"]


def test_tokens_and_terms() -> None:
    assert tokens("Naïve CAFÉ-visits, 7.9% HbA1c_x") == [
        "naive",
        "cafe",
        "visits",
        "7",
        "9",
        "hba1c",
        "x",
    ]
    # stop words, one-letter words and repeats are not searched; at most 32 terms
    assert query_terms("Does the patient have a metformin METFORMIN allergy?") == [
        "metformin",
        "allergi",  # the word form (Snowball stem) of "allergy"
    ]
    assert len(query_terms(" ".join(f"w{i}" for i in range(50)))) == 32


def test_search_order_limit_and_allowed_rows() -> None:
    index = LexicalIndex.build(DOCS)
    assert index.search("metformin", 10)[0].tolist() == [1, 0, 4]
    assert index.search("metformin", 1)[0].tolist() == [1]
    allowed = np.ones(len(DOCS), dtype=bool)
    allowed[1] = False
    assert index.search("metformin", 10, allowed)[0].tolist() == [0, 4]
    assert index.search("the of a", 10)[0].size == 0 and index.search("", 10)[0].size == 0
    assert index.search("insulin", 0)[0].size == 0
    _, scores = index.search("metformin", 10)
    assert scores.tolist() == sorted(scores.tolist(), reverse=True) and (scores > 0).all()


def test_extended_equals_a_fresh_build() -> None:
    base = LexicalIndex.build(DOCS[:3])
    grown = base.extended(DOCS[3:5]).extended(DOCS[5:])
    fresh = LexicalIndex.build(DOCS)
    for q in QUERIES:
        assert grown.scores(query_terms(q)) == pytest.approx(fresh.scores(query_terms(q)))
    # the older index is unchanged (snapshots share posting lists)
    assert len(base) == 3 and base.search("metformin", 10)[0].tolist() == [1, 0]
    assert base.extended([]) is base


def test_empty_index() -> None:
    index = LexicalIndex.build([])
    assert len(index) == 0 and index.search("metformin", 5)[0].size == 0
