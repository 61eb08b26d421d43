"""REALTALK (github danny911kr/REALTALK, its own chats ``data/Chat_*.json``): every turn
stored as an ``observation`` memory, one patient per chat; recall@5/@10 of the questions'
evidence turns for the engine as shipped, with detection off, and for candidate relevance
designs computed from the same stored vectors and the engine's own BM25 half."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

import memory_core as mc
from memory_core import ranking

from .runner import Context, Section, pct, progress, ranks_desc, table, top_k

F64 = npt.NDArray[np.float64]
KS = (5, 10)
MAX_CHARS = 2000  # the engine's content limit
_EVIDENCE = re.compile(r"D(\d+)\s*:\s*(\d+)(?:\s*-\s*(?:D(\d+)\s*:\s*)?(\d+))?")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str
    created: datetime


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True)
class Chat:
    name: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    skipped_turns: int
    unresolved_questions: int


def _when(s: str | None) -> datetime | None:
    if not s:
        return None
    try:
        return datetime.strptime(s.strip(), "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def parse_evidence(items: list[str]) -> set[str]:
    """Evidence ids as the files write them: ``D3:4``, ranges ``D12:3-D12:5``, several in one
    string (``D1:11; D3:18``), stray punctuation (``D5:3.``, ``D17;39``)."""
    text = " ".join(str(x) for x in items)
    text = re.sub(r"D(\d+);(\d+)", r"D\1:\2", text)
    out: set[str] = set()
    for m in _EVIDENCE.finditer(text):
        s, a = int(m.group(1)), int(m.group(2))
        if m.group(4) is not None and (m.group(3) is None or int(m.group(3)) == s):
            b = int(m.group(4))
            out.update(f"D{s}:{i}" for i in range(a, max(a, b) + 1))
        else:
            out.add(f"D{s}:{a}")
            if m.group(3) is not None and m.group(4) is not None:
                out.add(f"D{m.group(3)}:{m.group(4)}")
    return out


def load_chat(path: Path) -> Chat:
    d = json.loads(path.read_text(encoding="utf-8"))
    sessions = sorted(
        (int(k.split("_")[1]), k)
        for k in d
        if re.fullmatch(r"session_\d+", k) and isinstance(d[k], list)
    )
    turns: list[Turn] = []
    skipped = 0
    last: datetime | None = None
    for _, key in sessions:
        start = _when(d.get(f"{key}_date_time"))
        for t in d[key]:
            text = str(t.get("clean_text") or "").strip()
            when = _when(t.get("date_time")) or start or last
            if not text or when is None:
                skipped += 1
                continue
            last = when
            speaker = str(t.get("speaker") or "").strip()
            content = f"{speaker}: {text}" if speaker else text
            turns.append(Turn(str(t["dia_id"]), content[:MAX_CHARS], when))
    ids = {t.dia_id for t in turns}
    questions = []
    unresolved = 0
    for q in d.get("qa", []):
        ev = parse_evidence(q.get("evidence") or []) & ids
        if not ev or not str(q.get("question") or "").strip():
            unresolved += 1
            continue
        questions.append(Question(str(q["question"]).strip(), frozenset(ev), int(q["category"])))
    return Chat(path.stem, tuple(turns), tuple(questions), skipped, unresolved)


# --- candidate relevance designs (numpy over one chat's stored vectors and BM25 scores) -----


def _mm(x: F64) -> F64:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def _z(x: F64) -> F64:
    sd = float(x.std())
    return (x - float(x.mean())) / sd if sd > 0 else np.zeros_like(x)


def _rrf(cos: F64, bm: F64, created: F64, k: int, w_bm: float = 1.0) -> F64:
    rc = ranks_desc(cos, created)
    rb = ranks_desc(bm, created)
    return 1.0 / (k + rc) + np.where(bm > 0, w_bm / (k + rb), 0.0)


Design = Callable[[F64, F64, F64], F64]  # (cosine, bm25 (0 = no match), created) -> score


def _max_norm(w: float) -> Design:
    def f(c: F64, b: F64, t: F64) -> F64:
        top = float(b.max())
        return (1 - w) * c + w * (b / top if top > 0 else b)

    return f


def _min_max(w: float) -> Design:
    return lambda c, b, t: (1 - w) * _mm(c) + w * _mm(b)


def _z_fusion(w: float) -> Design:
    return lambda c, b, t: (1 - w) * _z(c) + w * _z(b)


def _saturated(w: float) -> Design:
    def f(c: F64, b: F64, t: F64) -> F64:
        half = float(b[b > 0].mean()) if (b > 0).any() else 1.0
        return (1 - w) * c + w * (b / (b + half))

    return f


def _rrf_design(k: int, w_bm: float = 1.0) -> Design:
    return lambda c, b, t: _rrf(c, b, t, k, w_bm)


SHIPPED_DESIGN = (
    f"shipped: `hybrid_relevance` (max-norm BM25, w={ranking.KEYWORD_WEIGHT}, cosine clipped at 0)"
)


def _shipped(c: F64, b: F64, t: F64) -> F64:
    return ranking.hybrid_relevance(c, b)


def designs() -> dict[str, Design]:
    """(a) RRF; (b) BM25 normalised (by its max, or min-max on both halves) blended with
    cosine; (c) other cheap fusions; and the engine's own relevance function."""
    out: dict[str, Design] = {
        "cosine": lambda c, b, t: c,
        "BM25": lambda c, b, t: b,
        SHIPPED_DESIGN: _shipped,
        "(a) RRF k=60": _rrf_design(60),
    }
    for w in (0.3, 0.4, 0.5, 0.6, 0.7):
        out[f"(b) max-norm BM25, w={w}"] = _max_norm(w)
    for w in (0.3, 0.4, 0.5, 0.6, 0.7):
        out[f"(b) min-max both, w={w}"] = _min_max(w)
    out["(c) RRF k=20"] = _rrf_design(20)
    out["(c) RRF k=60, BM25 ×2"] = _rrf_design(60, 2.0)
    for w in (0.3, 0.5):
        out[f"(c) z-score fusion, w={w}"] = _z_fusion(w)
    for w in (0.3, 0.5):
        out[f"(c) saturated BM25 b/(b+mean), w={w}"] = _saturated(w)
    return out


def variants() -> dict[str, tuple[str, mc.EnginePolicy]]:
    """Policies ranked through ``build_context(policy=...)`` on an engine with detection off:
    name -> (which engine: ``off`` as loaded, ``equal`` every turn at base importance 4)."""
    rp = mc.RankingPolicy
    out = {
        "engine, detection off, `similarity` mode (the seed's rule)": (
            "off",
            mc.EnginePolicy(ranking=rp(mode="similarity")),
        ),
    }
    for w in (0.2, 0.3, 0.5, 0.6):
        out[f"engine, detection off, keyword_weight={w}"] = (
            "off",
            mc.EnginePolicy(ranking=rp(keyword_weight=w)),
        )
    out[EQUAL_NO_DECAY] = ("equal", mc.EnginePolicy(decay=mc.DecayPolicy(rate=0.0)))
    return out


EQUAL_DECAY = "equal importance: relevance × current importance (shipped policy)"
EQUAL_NO_DECAY = "equal importance: relevance alone (decay off, rate 0)"


def _hits(ranked: list[str], evidence: frozenset[str], k: int) -> bool:
    return any(r in evidence for r in ranked[:k])


def run(ctx: Context) -> Section:
    sec = Section("Retrieval: REALTALK (dev: all 10 chats)")
    folder = ctx.data / "realtalk"
    files = sorted(folder.glob("Chat_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    if not files:
        sec.add(f"Not run: no `Chat_*.json` in `{folder}` (see docs/running-the-evaluation.md).")
        return sec
    ds = designs()
    vs = variants()
    # hits[method][k] = number of questions with an evidence turn in the top k
    hits: dict[str, Counter[int]] = {}
    by_cat: dict[int, Counter[str]] = {}
    n_q = n_turns = n_hidden = skipped = unresolved = all_ev_hidden = n_bonus = 0
    sup_states: Counter[str] = Counter()
    per_chat: list[list[object]] = []

    def count(method: str, ranked: list[str], q: Question) -> None:
        c = hits.setdefault(method, Counter())
        for k in KS:
            c[k] += _hits(ranked, q.evidence, k)

    for ci, path in enumerate(files, 1):
        chat = load_chat(path)
        skipped += chat.skipped_turns
        unresolved += chat.unresolved_questions
        pid = f"realtalk-{ci:02d}"
        texts = [t.text for t in chat.turns]
        vecs = ctx.embed(texts, f"realtalk-{ci:02d}-turns")
        now = max(t.created for t in chat.turns) + timedelta(days=1)
        records = [
            {
                "id": f"{pid}-{i:05d}",
                "patient_id": pid,
                "content": t.text,
                "memory_type": "observation",
                "created_at": t.created,
                "embedding": vecs[i],
            }
            for i, t in enumerate(chat.turns)
        ]
        dia = {f"{pid}-{i:05d}": t.dia_id for i, t in enumerate(chat.turns)}
        with ctx.engine(now) as shipped, ctx.engine(now) as off, ctx.engine(now) as equal:
            shipped.add_memories(records, by="eval")
            off.add_memories(records, by="eval", detect=False)
            equal.add_memories([{**r, "importance": 4} for r in records], by="eval", detect=False)
            engines = {"off": off, "equal": equal}
            mems = shipped.list_memories(pid)
            hidden = {m.id for m in mems if m.status.value != "active"}
            n_hidden += len(hidden)
            n_turns += len(mems)
            sup_states.update(s.state.value for s in shipped.supersessions(pid))
            view = off.view(pid)
            ids = [m.id for m in view.memories]
            n_bonus += sum(m.importance > 4 for m in view.memories)
            matrix = np.vstack([np.asarray(m.embedding, dtype=np.float32) for m in view.memories])
            created = np.array([m.created_at.timestamp() for m in view.memories])
            imp = np.asarray(view.current_importance, dtype=np.float64) / 10.0
            row = {mid: i for i, mid in enumerate(ids)}
            qv = ctx.embed([q.text for q in chat.questions], f"realtalk-{ci:02d}-questions")
            cos_all = (matrix @ qv.T).astype(np.float64)
            chat_hits = Counter[str]()
            for qi, q in enumerate(chat.questions):
                ev_ids = {mid for mid, d in dia.items() if d in q.evidence}
                all_ev_hidden += ev_ids <= hidden
                got = [
                    dia[s.memory.id]
                    for s in shipped.retrieve(pid, q.text, k=10, record_access=False)
                ]
                count("engine as shipped", got, q)
                chat_hits["shipped"] += _hits(got, q.evidence, 5)
                got = [
                    dia[s.memory.id] for s in off.retrieve(pid, q.text, k=10, record_access=False)
                ]
                count("engine, detection off", got, q)
                got = [
                    dia[s.memory.id] for s in equal.retrieve(pid, q.text, k=10, record_access=False)
                ]
                count(EQUAL_DECAY, got, q)
                for name, (which, pol) in vs.items():
                    items = (
                        engines[which]
                        .build_context(
                            pid, q.text, max_memories=10, record_access=False, policy=pol
                        )
                        .items
                    )
                    count(name, [dia[i.scored.memory.id] for i in items[:10]], q)
                bm = np.zeros(len(ids))
                for m, bm25 in off.keyword_search(pid, q.text, limit=len(ids)):
                    bm[row[m.id]] = bm25
                cos = cos_all[:, qi]
                for name, fn in ds.items():
                    rel = fn(cos, bm, created)
                    for suffix, score in (("", rel), (" × importance", rel * imp)):
                        order = top_k(score, created, max(KS))
                        ranked = [dia[ids[i]] for i in order]
                        count(name + suffix, ranked, q)
                        if suffix == "" and name in ("cosine", "(a) RRF k=60"):
                            chat_hits[name] += _hits(ranked, q.evidence, 5)
                by_cat.setdefault(q.category, Counter())["n"] += 1
                n_q += 1
        per_chat.append(
            [chat.name, len(chat.turns), len(chat.questions), len(hidden),
             chat_hits["shipped"], chat_hits["cosine"], chat_hits["(a) RRF k=60"]]
        )  # fmt: skip
        progress(
            f"realtalk: chat {ci}/{len(files)} {chat.name}: {len(chat.turns)} turns, "
            f"{len(hidden)} hidden, {len(chat.questions)} questions"
        )

    def r(method: str, k: int) -> float:
        return hits[method][k] / n_q

    for method in hits:
        for k in KS:
            sec.numbers[f"{method} recall@{k}"] = r(method, k)
    sec.numbers["turns"] = n_turns
    sec.numbers["questions"] = n_q
    sec.numbers["hidden share"] = n_hidden / n_turns
    sec.add(
        f"{len(files)} chats, {n_turns:,} turns stored (each `Speaker: text` as an "
        f"`observation` at its own timestamp; {skipped} empty turns skipped), {n_q:,} questions "
        f"whose evidence turns are in the chat ({unresolved} without resolvable evidence left "
        "out). Bulk `add_memories` (detection on for the shipped engine, off for the two others). "
        "Clock: one day after each chat's last turn. Evidence ids are normalised (ranges "
        "`D12:3-D12:5` expanded, `D1:11; D3:18` split).",
        "",
        f"Turns hidden while loading (superseded or archived): **{n_hidden:,} of {n_turns:,} "
        f"({pct(n_hidden / n_turns)})**; supersession records by state: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(sup_states.items()))
        + f". Questions whose every evidence turn was hidden: {all_ev_hidden} "
        f"({pct(all_ev_hidden / n_q)}).",
        "",
    )
    main = [
        "engine as shipped",
        "engine, detection off",
        *[n for n in vs if vs[n][0] == "off"],
        "cosine",
        "BM25",
        "(a) RRF k=60",
        "cosine × importance",
    ]
    labels = {
        "engine as shipped": "engine as shipped (`hybrid`, detection on)",
        "engine, detection off": "engine, detection off (`hybrid`, the measure of the relevance)",
        "cosine × importance": "cosine × importance (the `similarity` rule over all turns)",
    }
    decay_cost = r(EQUAL_NO_DECAY, 5) - r(EQUAL_DECAY, 5)
    decay_cost10 = r(EQUAL_NO_DECAY, 10) - r(EQUAL_DECAY, 10)
    sec.numbers["decay cost recall@5"] = decay_cost
    sec.numbers["decay cost recall@10"] = decay_cost10
    rrf5, cos5, ship5 = r("(a) RRF k=60", 5), r("cosine", 5), r("engine as shipped", 5)
    off5 = r("engine, detection off", 5)
    sec.add(
        *table(
            ["ranking", "recall@5", "recall@10"],
            [[labels.get(m, m), pct(r(m, 5)), pct(r(m, 10))] for m in main],
        ),
        "",
        "The engine rows rank through the public API (`retrieve`, or `build_context(policy=...)` "
        "for the policy variants) over the memories the engine keeps active; cosine, BM25, RRF "
        "and the designs below rank all stored turns (nothing hidden), from the vectors the "
        "engine stored and the scores of its own `keyword_search`; ties go to the newer turn. "
        f"The shipped ranking is `hybrid`: relevance = {1 - ranking.KEYWORD_WEIGHT:.1f} · "
        f"max(cosine, 0) + {ranking.KEYWORD_WEIGHT:.1f} · BM25 / the query's best BM25 "
        "(`memory_core.ranking.hybrid_relevance`), score = relevance × current importance / 10, "
        "over a pool of the 50 best relevances.",
        "",
        "Targets (issue 12): engine as shipped ≥ plain RRF of its own halves "
        f"({pct(ship5)} vs {pct(rrf5)}: {'met' if ship5 >= rrf5 else 'not met'}) and ≥ cosine "
        f"+ 0.10 ({pct(ship5)} vs {pct(cos5 + 0.10)}: "
        f"{'met' if ship5 >= cos5 + 0.10 - 1e-12 else 'not met'}); with detection off (the "
        f"relevance without supersession hiding turns): {pct(off5)} vs {pct(rrf5)} and "
        f"{pct(cos5 + 0.10)} ({'met' if off5 >= max(rrf5, cos5 + 0.10 - 1e-12) else 'not met'}).",
        "",
        "**Decay on equal-importance data.** A third engine holds the same turns, every one at "
        "base importance 4, detection off: its shipped policy (relevance × decayed importance) "
        "against the same relevance without decay (rate 0: every current importance 4, so the "
        "order is the relevance's, newer first on ties).",
        "",
        *table(
            ["ranking", "recall@5", "recall@10"],
            [[m, pct(r(m, 5)), pct(r(m, 10))] for m in (EQUAL_DECAY, EQUAL_NO_DECAY)],
        ),
        "",
        f"Recall lost to decay: {decay_cost:+.3f} @5, {decay_cost10:+.3f} @10 (the limit is "
        f"0.01: {'met' if max(decay_cost, decay_cost10) <= 0.01 + 1e-12 else 'not met'}).",
        "",
        "### Relevance designs (dev)",
        "",
        "Each design alone and multiplied by the product's current importance / 10 (the "
        "default score's form). Importance: every turn is an `observation` (base 4, plus 1 per "
        f'permanence word such as "always" or "remember": {pct(n_bonus / n_turns)} of the '
        "turns are above 4) under the default decay at the chat's clock.",
        "",
    )
    names = [n for n in ds if n not in ("cosine", "BM25")]
    sec.add(
        *table(
            ["design", "recall@5", "recall@10", "× importance @5", "× importance @10"],
            [
                [
                    n,
                    pct(r(n, 5)),
                    pct(r(n, 10)),
                    pct(r(n + " × importance", 5)),
                    pct(r(n + " × importance", 10)),
                ]
                for n in ["cosine", "BM25", *names]
            ],
        ),
        "",
        "Per chat (questions with an evidence turn in the top 5):",
        "",
        *table(
            ["chat", "turns", "questions", "hidden", "shipped @5", "cosine @5", "RRF @5"],
            per_chat,
        ),
    )
    return sec
