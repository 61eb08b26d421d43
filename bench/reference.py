"""The reference to beat: the engine's algorithms written plainly, one memory at a time.

This is what a newcomer would write from ``domain.md``: records are plain dicts with ISO-8601
timestamps (as ``Memory.to_public_dict`` gives them) and a numpy vector each; every call parses
each memory's timestamps, computes its decayed importance and access boost, and its cosine with
the query, in a Python loop. It exists only so the benchmark can check the engine against it
and report every figure as a ratio to it; nothing outside ``bench/`` imports it.

It follows the engine's documented rules exactly (so results can be compared): status as of
``now`` from the supersession records, the relevance ``0.6 · max(cosine, 0) + 0.4 · BM25 / the
query's best BM25`` (the default ``hybrid`` mode), the candidate pool (the best ``pool``
relevances plus every always-included type), the score ``relevance × current importance / 10``
with newer first on ties, allergies then other safety items first in the section, at most
``max_memories`` lines. ``mode="similarity"`` is the seed's rule instead: the pool by
reciprocal-rank fusion of the vector and keyword ranks, the score ``similarity × current
importance / 10``.

Two of the engine's parts are inputs here, not reimplemented: the keyword hits (the ids and BM25
scores the engine's keyword search returns for the query, its clinical-vocabulary expansions
included, fetched before the clock starts, like the query vector -- the newcomer's version has no
keyword index) and the contradiction verdict
(the engine's adjudicator rule, called for each candidate pair).
"""

from __future__ import annotations

import math
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

HEADER = "**Patient Context from Previous Interactions:**"
CLOSING = "Use this context to personalize your responses and maintain continuity of care."
SAFETY_TYPES = ("allergy", "adverse_reaction")
SUPERSEDING = ("contradicts", "updates", "duplicate")
#: The judgement the reference borrows from the engine (the one part it does not reimplement):
#: ``decide(older content, newer content, type) -> (supersedes, strong)`` and ``keys(content,
#: type) -> the keys it is about`` (memory_core.facts).
Decide = Callable[[str, str, str], tuple[bool, bool]]
Keys = Callable[[str, str], frozenset[str]]
#: Of the memories about one key, each is compared with at most this many newer ones below
#: the cut (as the engine's back-scan).
KEY_PAIR_SPAN = 8
# on insert the engine adjudicates only the new memory's most similar candidates (its
# CANDIDATE_LIMIT); the back-scan adjudicates every pair
CANDIDATE_LIMIT = 32
Record = dict[str, Any]


@dataclass(frozen=True)
class DecayParams:
    """The decay policy as plain numbers (the engine's ``DecayPolicy`` defaults)."""

    model: str = "exponential"
    rate: float = 0.02
    lam: float = 0.01
    boost: float = 0.5
    boost_cap: float = 3.0
    floor: float = 1.0
    ceiling: float = 10.0
    strength_boost: float = 0.05
    strength_boost_cap: float = 0.3
    short_term_rate: float = 0.30
    short_term_lam: float = 0.05
    warn_threshold: float = 8.0

    @classmethod
    def from_policy(cls, policy: Any) -> DecayParams:
        names = cls.__dataclass_fields__
        return cls(**{k: getattr(policy, k) for k in names})


def parse_time(text: str) -> float:
    """Epoch seconds of an ISO-8601 timestamp with an offset."""
    return datetime.fromisoformat(text).timestamp()


def confirmed_s(record: Record, now_s: float) -> float | None:
    """The latest confirmation of the memory taken effect by ``now_s`` (None: none), from its
    ``confirmations`` (domain.md: age counts from the last confirmation)."""
    times = [parse_time(c["at"]) for c in record.get("confirmations") or ()]
    done = [t for t in times if t <= now_s]
    return max(done) if done else None


def current_importance(record: Record, p: DecayParams, now_s: float) -> float:
    """One memory's current importance (wall clock), from its ISO timestamps."""
    confirmed = confirmed_s(record, now_s)
    importance = float(record["importance"])
    count = float(record["access_count"])
    short = record["tier"] == "short_term"
    if p.model == "strength":
        if record["pinned"]:
            raw = importance
        else:
            since = parse_time(record["last_accessed"])
            if confirmed is not None:
                since = max(since, confirmed)
            hours = max(now_s - since, 0.0) / 3600.0
            lam = p.short_term_lam if short else p.lam
            retention = math.exp(-lam * hours)
            bonus = min(count * p.strength_boost, p.strength_boost_cap)
            b = importance / 10.0
            raw = 10.0 * (min(retention + bonus, 1.0) * min(b * 1.5, 1.0))
    else:
        start = parse_time(record["created_at"])
        if confirmed is not None:
            start = max(start, confirmed)
        months = max(now_s - start, 0.0) / 86_400.0 / 30.0
        rate = p.short_term_rate if short else p.rate
        if record["pinned"]:
            factor = 1.0
        elif p.model == "linear":
            factor = max(0.0, 1.0 - rate * months)
        else:
            factor = (1.0 - rate) ** months
        raw = importance * factor + min(count * p.boost, p.boost_cap)
    return min(max(raw, p.floor), p.ceiling)


def current_importances(records: Iterable[Record], p: DecayParams, now_s: float) -> list[float]:
    return [current_importance(r, p, now_s) for r in records]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two vectors (0 when either is zero)."""
    na = math.sqrt(float(np.dot(a, a)))
    nb = math.sqrt(float(np.dot(b, b)))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return max(-1.0, min(1.0, float(np.dot(a, b)) / (na * nb)))


def in_effect(sup: Record, now_s: float) -> bool:
    """Whether a supersession record demotes its older memory at ``now_s``."""
    if sup["effective_at"] is None or parse_time(sup["effective_at"]) > now_s:
        return False
    if sup["state"] in ("auto", "confirmed"):
        return True
    return (
        sup["state"] == "undone"
        and sup["ended_at"] is not None
        and now_s < parse_time(sup["ended_at"])
    )


def active_records(
    records: Sequence[Record], supersessions: Sequence[Record], now_s: float
) -> list[Record]:
    """Memories visible and active at ``now_s`` (oldest first, as given)."""
    demoted = {s["old_id"] for s in supersessions if in_effect(s, now_s)}
    out = []
    for r in records:
        if parse_time(r["created_at"]) > now_s + 1e-6:
            continue
        if r.get("archived_at") is not None and parse_time(r["archived_at"]) <= now_s:
            continue
        if r["id"] in demoted:
            continue
        out.append(r)
    return out


@dataclass(frozen=True)
class ContextLine:
    memory_id: str
    current_importance: float
    text: str


def build_context(
    records: Sequence[Record],
    supersessions: Sequence[Record],
    query_vector: np.ndarray,
    now: datetime,
    p: DecayParams,
    *,
    keyword_hits: Sequence[tuple[str, float]] = (),
    max_memories: int = 5,
    pool: int = 50,
    rrf_k: int = 60,
    always_types: Sequence[str] = ("allergy",),
    mode: str = "hybrid",
    keyword_weight: float = 0.4,
) -> tuple[str, list[ContextLine]]:
    """The injected section for a query whose vector is given, and its lines. Every active
    memory gets its timestamps parsed, its current importance and its cosine computed, one at
    a time; then the candidate pool and the score order pick the lines."""
    now_s = now.timestamp()
    cands = []
    for r in active_records(records, supersessions, now_s):
        cands.append(
            {
                "record": r,
                "sim": cosine(query_vector, r["embedding"]),
                "created": parse_time(r["created_at"]),
                "current": current_importance(r, p, now_s),
            }
        )
    if not cands:
        return "", []
    best = max((b for _, b in keyword_hits), default=0.0)
    bm25 = dict(keyword_hits)
    for c in cands:
        k = bm25.get(c["record"]["id"], 0.0) / best if best > 0 else 0.0
        c["rel"] = (1.0 - keyword_weight) * max(c["sim"], 0.0) + keyword_weight * min(k, 1.0)
    # vector ranks (equal similarities share the best rank), keyword ranks among the active
    # ones, fusion
    by_sim = sorted(range(len(cands)), key=lambda i: -cands[i]["sim"])
    rank = 0
    for seen, i in enumerate(by_sim, start=1):
        if seen == 1 or cands[i]["sim"] != cands[by_sim[seen - 2]]["sim"]:
            rank = seen
        cands[i]["fused"] = 1.0 / (rrf_k + rank)
    position = {c["record"]["id"]: i for i, c in enumerate(cands)}
    rank = 0
    for mid, _ in keyword_hits:
        i = position.get(mid)
        if i is not None:
            rank += 1
            cands[i]["fused"] += 1.0 / (rrf_k + rank)
    key = "rel" if mode == "hybrid" else "fused"
    best_first = sorted(range(len(cands)), key=lambda i: -cands[i][key])
    chosen = set(best_first[: min(pool, len(cands))])
    chosen |= {i for i, c in enumerate(cands) if c["record"]["memory_type"] in always_types}
    scored = []
    for i in sorted(chosen):
        c = cands[i]
        rel = c["rel"] if mode == "hybrid" else c["sim"]
        scored.append((c, c["current"], rel * c["current"] / 10.0))
    scored.sort(key=lambda t: (-t[2], -t[0]["created"]))

    # every allergy leads and uses no place; the places go to the others by score (issue 14);
    # a statement identical to one already placed (the same type and words: case, spacing and
    # punctuation aside, but a sign or decimal point before a number kept) takes no line
    # (issue 25)
    def same_key(i: int) -> tuple[str, str, bool]:
        c, cur, _ = scored[i]
        text = " ".join(c["record"]["content"].casefold().split())
        kept = "".join(
            ch
            for k, ch in enumerate(text)
            if not unicodedata.category(ch).startswith("P")
            or text[k + 1 : k + 3].lstrip()[:1].isdigit()
        )
        return c["record"]["memory_type"], " ".join(kept.split()), cur >= p.warn_threshold

    allergies = [i for i, t in enumerate(scored) if t[0]["record"]["memory_type"] == "allergy"]
    others = [i for i, t in enumerate(scored) if t[0]["record"]["memory_type"] != "allergy"]
    seen: set[tuple[str, str, bool]] = set()
    order: list[int] = []
    places = 0
    for i in allergies + others:
        is_allergy = scored[i][0]["record"]["memory_type"] == "allergy"
        if not is_allergy and places >= max_memories:
            break
        k = same_key(i)
        if k in seen:
            continue
        seen.add(k)
        order.append(i)
        places += not is_allergy
    lines = []
    for i in order:
        c, cur, _ = scored[i]
        text = " ".join(c["record"]["content"].split())
        lines.append(ContextLine(c["record"]["id"], cur, text))
    body = "\n".join(
        f"{n}. {'⚠️ ' if line.current_importance >= p.warn_threshold else ''}{line.text}"
        for n, line in enumerate(lines, start=1)
    )
    return f"{HEADER}\n\n{body}\n\n{CLOSING}", lines


def contradiction_hits(
    records: Sequence[Record],
    supersessions: Sequence[Record],
    new_content: str,
    new_vector: np.ndarray,
    new_type: str,
    new_created: datetime,
    now: datetime,
    threshold: float,
    decide: Decide,
    keys: Keys,
) -> list[tuple[str, float]]:
    """Older active memories of the same type that the new one would supersede: ``(memory id,
    cosine)``, the most similar candidates first, then those about a key the new one is about
    too (whatever their cosine). Compares the new embedding with every older memory."""
    now_s = now.timestamp()
    new_s = new_created.timestamp()
    demoted = {s["old_id"] for s in supersessions if in_effect(s, now_s)}
    hits = []
    for r in records:
        if r["memory_type"] != new_type:
            continue
        if parse_time(r["created_at"]) > new_s:
            continue
        if r["id"] in demoted or (
            r.get("archived_at") is not None and parse_time(r["archived_at"]) <= now_s
        ):
            continue
        sim = cosine(new_vector, r["embedding"])
        hits.append((r, sim))
    near = sorted((h for h in hits if h[1] >= threshold), key=lambda h: -h[1])
    near = near[:CANDIDATE_LIMIT]  # only the most similar candidates are adjudicated
    seen = {r["id"] for r, _s in near}
    mine = keys(new_content, new_type)
    keyed = [h for h in hits if h[0]["id"] not in seen and keys(h[0]["content"], new_type) & mine]
    return [
        (r["id"], sim) for r, sim in near + keyed if decide(r["content"], new_content, new_type)[0]
    ]


def back_scan(
    records: Sequence[Record],
    supersessions: Sequence[Record],
    now: datetime,
    threshold_for: Callable[[str], float],
    decide: Decide,
    auto_types: Callable[[str], bool],
    keys: Keys,
) -> list[tuple[str, str]]:
    """Every same-type pair of active memories at or above its type's threshold -- and each
    memory with its next few newer ones about a key it is about, below the threshold --
    without a supersession record becomes one where the decision supersedes (older by newer):
    ``(old id, new id)``, a set (the order differs from the engine's where they tie). An
    automatic type's older memory is superseded once, by its most similar newer candidate.
    Pairs are compared one by one in a Python loop."""
    now_s = now.timestamp()
    act = active_records(records, supersessions, now_s)
    known = {(s["old_id"], s["new_id"]) for s in supersessions}
    known |= {(b, a) for a, b in known}
    pairs = []
    for i in range(len(act)):
        a = act[i]
        for j in range(i + 1, len(act)):
            b = act[j]
            if a["memory_type"] != b["memory_type"]:
                continue
            sim = cosine(a["embedding"], b["embedding"])
            if sim >= threshold_for(a["memory_type"]):
                pairs.append((sim, i, j))
    pairs.sort(key=lambda t: -t[0])
    pairs += _keyed_pairs(act, threshold_for, keys)
    taken: set[str] = set()
    out = []
    for _sim, i, j in pairs:
        a, b = act[i], act[j]
        ka = (parse_time(a["created_at"]), a["id"])
        kb = (parse_time(b["created_at"]), b["id"])
        older, newer = (a, b) if ka <= kb else (b, a)
        if (older["id"], newer["id"]) in known or older["id"] in taken:
            continue
        if not decide(older["content"], newer["content"], older["memory_type"])[0]:
            continue
        known.add((older["id"], newer["id"]))
        if auto_types(older["memory_type"]):
            taken.add(older["id"])
        out.append((older["id"], newer["id"]))
    return out


def _keyed_pairs(
    act: Sequence[Record], threshold_for: Callable[[str], float], keys: Keys
) -> list[tuple[float, int, int]]:
    """Pairs about one key below the cut: each memory and its next :data:`KEY_PAIR_SPAN` newer
    ones about that key, each pair once."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(act):
        for k in keys(r["content"], r["memory_type"]):
            groups.setdefault((r["memory_type"], k), []).append(i)
    out: list[tuple[float, int, int]] = []
    seen: set[tuple[int, int]] = set()
    for (t, _k), rows in groups.items():
        rows.sort(key=lambda i: (parse_time(act[i]["created_at"]), act[i]["id"]))
        for x, i in enumerate(rows):
            for j in rows[x + 1 : x + 1 + KEY_PAIR_SPAN]:
                sim = cosine(act[i]["embedding"], act[j]["embedding"])
                if (i, j) not in seen and sim < threshold_for(t):
                    seen.add((i, j))
                    out.append((sim, i, j))
    return out


# --- writes: one memory per transaction, the way a first version would do it -------------------

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, patient_id TEXT NOT NULL, memory_type TEXT NOT NULL,
    content TEXT NOT NULL, importance REAL NOT NULL, created_at TEXT NOT NULL,
    last_accessed TEXT NOT NULL, access_count INTEGER NOT NULL, pinned INTEGER NOT NULL,
    tier TEXT NOT NULL, status TEXT NOT NULL, embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_patient ON memories (patient_id);
"""


def open_db(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.executescript(SCHEMA)
    return db


def insert(db: sqlite3.Connection, record: Record) -> None:
    """Insert one memory in its own transaction."""
    db.execute("BEGIN")
    db.execute(
        "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record["id"],
            record["patient_id"],
            record["memory_type"],
            record["content"],
            float(record["importance"]),
            record["created_at"],
            record["last_accessed"],
            int(record["access_count"]),
            int(bool(record["pinned"])),
            record["tier"],
            record.get("status", "active"),
            np.asarray(record["embedding"], dtype=np.float32).tobytes(),
        ),
    )
    db.execute("COMMIT")
