"""The back-scan against a plain pairwise statement of its rule (float64 cosines, one pair at a
time): for an automatic type each older memory is superseded by its most similar newer one
(ties within 1e-6: the earliest newer one) whose verdict supersedes; for a
review-gated type every superseding pair becomes a pending record, most similar first. The
scan reads candidates off strip rows; the reference lists every pair."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import numpy as np
import pytest

import memory_core as mc
from memory_core import contradictions as cx
from memory_core.contradictions import deciding
from memory_core.embedding import HashingEmbedder
from memory_core.values import Memory
from tests.conftest import NOW, Clock

DIMS = 32
CUT = 0.35
TIE = 1e-6


class HashVerdicts:
    """A deterministic adjudicator that turns down about a third of the pairs, so the scan
    often has to go past an older memory's best candidate."""

    method = "test"

    def adjudicate(self, older: Memory, newer: Memory, similarity: float) -> str:
        digest = hashlib.sha256(f"{older.id}>{newer.id}".encode()).digest()
        return "compatible" if digest[0] % 3 == 0 else "updates"


def _records() -> list[dict[str, object]]:
    rng = np.random.default_rng(5)
    centre = rng.normal(size=DIMS)
    vectors = centre + rng.normal(scale=1.1, size=(260, DIMS))
    vectors[[41, 97, 181]] = vectors[1]  # identical copies of one statement: exact ties
    recs: list[dict[str, object]] = []
    for k, vec in enumerate(vectors):
        mtype = ("observation", "lab_result", "allergy", "preference")[k % 4]
        recs.append(
            {
                "patient_id": "NW-21",
                "content": f"Statement {k}",
                "memory_type": "observation" if k in (41, 97, 181) else mtype,
                # some share a moment: the tie between them goes by id
                "created_at": NOW - timedelta(hours=300 - (k // 3)),
                "embedding": np.asarray(vec, dtype=np.float32).tolist(),
                "id": f"r-{k:03d}",
            }
        )
    return recs


def _expected(
    memories: list[Memory], auto: set[str], exempt: set[str]
) -> list[tuple[str, str, str]]:
    verdicts = HashVerdicts()
    ordered = sorted(memories, key=lambda m: (m.created_at, m.id))
    out: list[tuple[str, str, str]] = []
    for t in dict.fromkeys(m.memory_type for m in memories):  # types by first appearance
        if t in exempt:
            continue
        same = [m for m in ordered if m.memory_type == t]

        def cos(a: Memory, b: Memory) -> float:
            x, y = a.embedding.astype(np.float64), b.embedding.astype(np.float64)
            return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))

        if t in auto:
            picks = []
            for i, older in enumerate(same):
                cands = [(cos(older, n), j, n) for j, n in enumerate(same) if j > i]
                cands = [c for c in cands if c[0] >= CUT]
                cands.sort(key=lambda c: (-c[0], c[1]))
                ranked: list[Memory] = []
                while cands:  # a run of near-equal cosines goes to the earliest newer first
                    run = [c for c in cands if c[0] >= cands[0][0] - TIE]
                    cands = cands[len(run) :]
                    ranked += [n for _s, _j, n in sorted(run, key=lambda c: c[1])]
                for newer in ranked:
                    if verdicts.adjudicate(older, newer, 0.0) != "compatible":
                        picks.append((older, newer))
                        break
            # recorded by older memory in the order the patient's memories are listed
            place = {m.id: k for k, m in enumerate(memories)}
            picks.sort(key=lambda p: place[p[0].id])
            out += [(o.id, n.id, "auto") for o, n in picks]
        else:
            pairs = [
                (cos(a, b), a, b)
                for i, a in enumerate(same)
                for b in same[i + 1 :]
                if cos(a, b) >= CUT and verdicts.adjudicate(a, b, 0.0) != "compatible"
            ]
            pairs.sort(key=lambda p: -p[0])
            out += [(a.id, b.id, "pending") for _s, a, b in pairs]
    return out


@pytest.mark.parametrize("block_bytes", [None, 4 * 65 * 9])  # one strip; strips of 9 rows
def test_the_back_scan_follows_its_rule_pair_by_pair(
    clock: Clock, monkeypatch: pytest.MonkeyPatch, block_bytes: int | None
) -> None:
    if block_bytes is not None:
        monkeypatch.setattr(cx, "BLOCK_BYTES", block_bytes)
    policy = mc.EnginePolicy(
        contradiction=mc.ContradictionPolicy(
            threshold=CUT, modes={"allergy": "review"}, exempt_types=("preference",)
        )
    )
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(DIMS), clock=clock)
    eng._core.adjudicator = deciding(HashVerdicts())
    eng.save_policy(policy, "dr-test")
    eng.add_memories(_records(), detect=False)
    memories = eng.list_memories("NW-21")
    auto = {"observation", "lab_result"}
    want = _expected(memories, auto, {"preference"})
    got = eng.scan_contradictions("NW-21")
    assert [(s.old_id, s.new_id, s.state.value) for s in got] == want
    assert len({o for o, _n, st in want if st == "auto"}) > 40
    assert any(st == "pending" for _o, _n, st in want)
