"""Possibly-stale flags (issue 14): derived from the supersessions in effect, kept or confirmed
by a reviewer (audited), seen as of a moment, cleared by undoing the change; and the
annotations they and pending supersessions and lab histories put on a memory's line."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core import flags
from memory_core.embedding import HashingEmbedder
from memory_core.values import Memory
from tests.conftest import NOW, Clock
from tests.cosmos_server import CosmosServer


class SameDrug:
    """Two statements naming a drug in common update each other; anything else is compatible
    (a deterministic stand-in for the verdict rule, which another issue is improving)."""

    method = "test"

    def adjudicate(self, older: Memory, newer: Memory, similarity: float) -> str:
        a = flags.mentions(older, older.memory_type)
        b = flags.mentions(newer, newer.memory_type)
        analytes = flags.analyte_mentions(older.content) & flags.analyte_mentions(newer.content)
        return "updates" if (a & b) or analytes else "compatible"


POLICY = mc.EnginePolicy(
    contradiction=mc.ContradictionPolicy(
        type_thresholds={"medication": -1.0, "condition": -1.0, "lab_result": -1.0},
        modes={"allergy": "review", "adverse_reaction": "review"},
    )
)


@pytest.fixture
def eng(clock: Clock) -> Iterator[mc.MemoryEngine]:
    e = mc.open_engine(
        "sqlite:///:memory:", HashingEmbedder(), POLICY, adjudicator=SameDrug(), clock=clock
    )
    yield e
    e.store.close()


@pytest.mark.parametrize("kind", ["sqlite", "cosmos"])
def test_keep_and_confirm_on_both_stores(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> None:
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'flags.db'}"
    else:
        server: CosmosServer = request.getfixturevalue("cosmos_server")
        url = server.url("flags", f"t{uuid.uuid4().hex[:12]}")
    e = mc.open_engine(url, HashingEmbedder(), POLICY, adjudicator=SameDrug(), clock=clock)
    try:
        ids = _setup(e)
        _, sup = _change(e, timedelta(days=30))
        assert {f.memory_id for f in e.stale_flags("NW-1")} == {ids["obs"], ids["plan"]}
        e.keep_flagged(ids["plan"], sup.id, "dr-a")
        e.confirm_flagged(ids["obs"], sup.id, "dr-a")
        assert e.stale_flags("NW-1") == []
        assert [a.entity_id for a in e.audit_log(action="keep_flagged")] == [ids["plan"]]
        assert [a.entity_id for a in e.audit_log(action="confirm_flagged")] == [ids["obs"]]
        # another engine on the same store reads the same decisions
        other = mc.open_engine(url, HashingEmbedder(), POLICY, adjudicator=SameDrug(), clock=clock)
        assert other.stale_flags("NW-1") == []
        assert other.get(ids["obs"]).status is mc.Status.ARCHIVED
        other.store.close()
    finally:
        e.store.close()


def _setup(eng: mc.MemoryEngine) -> dict[str, str]:
    t0 = NOW - timedelta(days=200)
    ids = {}
    for key, content, mtype, days in (
        ("med", "Patient tolerates metformin 500mg well", "medication", 0),
        ("ar", "Patient had loose stools on metformin in the first weeks", "adverse_reaction", 10),
        ("obs", "Home glucose readings improved since metformin began", "observation", 15),
        ("plan", "Patient takes metformin with the evening meal", "care_plan", 20),
        ("lab", "Patient's vitamin B12 was 180 ng/L while on metformin", "lab_result", 25),
        ("other", "Patient walks after dinner", "care_plan", 30),
        ("allergy", "Patient reports hives with metformin tablets", "allergy", 35),
        ("lisinopril", "Patient takes lisinopril 10mg daily", "medication", 40),
    ):
        ids[key] = eng.add_memory(
            "NW-1", content, mtype, created_at=t0 + timedelta(days=days)
        ).memory.id
    return ids


def _change(eng: mc.MemoryEngine, when: timedelta) -> tuple[str, mc.Supersession]:
    res = eng.add_memory(
        "NW-1",
        "Patient reports persistent GI distress on metformin; switched to extended-release",
        "medication",
        created_at=NOW - when,
    )
    (sup,) = [s for s in res.supersessions if s.state is mc.SupersessionState.AUTO]
    return res.memory.id, sup


def test_superseded_medication_flags_the_memories_naming_the_drug(eng: mc.MemoryEngine) -> None:
    ids = _setup(eng)
    assert eng.stale_flags("NW-1") == []
    new_id, sup = _change(eng, timedelta(days=30))
    assert sup.old_id == ids["med"]
    got = eng.stale_flags("NW-1")
    assert {f.memory_id for f in got} == {ids["obs"], ids["plan"]}
    for f in got:
        assert isinstance(f, mc.StaleFlag)
        assert (f.change_id, f.changed_id, f.new_id) == (sup.id, ids["med"], new_id)
        assert f.subject == "metformin" and f.kind == "medication"
        assert f.since == NOW - timedelta(days=30)
    # a flag is not a supersession: the memories stay active and injected, annotated
    res = eng.build_context("NW-1", "metformin glucose readings", record_access=False)
    day = (NOW - timedelta(days=30)).date().isoformat()
    obs = next(i for i in res.items if i.scored.memory.id == ids["obs"])
    assert obs.included
    assert obs.annotations == (f"(may be outdated: metformin changed on {day})",)
    assert obs.line.endswith(f"(may be outdated: metformin changed on {day})")
    assert f"(may be outdated: metformin changed on {day})" in res.text


def test_history_that_stays_true_is_never_flagged(eng: mc.MemoryEngine) -> None:
    """domain.md, "Flags and annotations": a reaction to the drug, an allergy and a past result
    stay true after the medication changes (issue 26: switching a drug flagged the reactions
    to it "may be outdated" and offered to archive them)."""
    ids = _setup(eng)
    _change(eng, timedelta(days=30))
    flagged = {f.memory_id for f in eng.stale_flags("NW-1")}
    assert flagged == {ids["obs"], ids["plan"]}
    assert not flagged & {ids["ar"], ids["lab"], ids["allergy"]}
    res = eng.build_context("NW-1", "metformin reaction allergy B12", record_access=False)
    for key in ("ar", "lab", "allergy"):
        item = next(i for i in res.items if i.scored.memory.id == ids[key])
        assert item.included
        assert not any("may be outdated" in a for a in item.annotations), key
    with pytest.raises(mc.NotFoundError):  # nothing to keep or confirm for them
        eng.confirm_flagged(ids["ar"], eng.stale_flags("NW-1")[0].change_id, "dr-a")


def test_as_of_and_undo(eng: mc.MemoryEngine) -> None:
    ids = _setup(eng)
    _, sup = _change(eng, timedelta(days=30))
    before = NOW - timedelta(days=31)
    assert eng.stale_flags("NW-1", now=before) == []
    assert len(eng.stale_flags("NW-1", now=NOW - timedelta(days=29))) == 2
    eng.undo_supersession(sup.id, "dr-a")
    assert eng.stale_flags("NW-1") == []  # undoing the change clears the flags it raised
    # as of a moment while the change was in effect, they stood
    assert {f.memory_id for f in eng.stale_flags("NW-1", now=NOW - timedelta(days=1))} == {
        ids["obs"],
        ids["plan"],
    }


def test_keeping_a_flagged_memory_confirms_it_at_the_keep(
    eng: mc.MemoryEngine, clock: Clock
) -> None:
    ids = _setup(eng)
    _, sup = _change(eng, timedelta(days=30))
    kept_at = clock.advance(hours=3)
    eng.keep_flagged(ids["plan"], sup.id, "dr-a")
    plan = eng.get(ids["plan"])
    assert plan.confirmations == (mc.Confirmation(kept_at, mc.ConfirmationKind.FLAG_KEPT, sup.id),)
    (entry,) = eng.audit_log(action="confirm_memory")
    assert (entry.entity_id, entry.actor) == (ids["plan"], "dr-a")
    assert entry.after is not None and entry.after["confirmation"]["ref"] == sup.id
    # its age counts from the keep (care plan, importance 7), and not as of before it
    view = eng.view("NW-1", now=kept_at)
    i = [m.id for m in view.memories].index(ids["plan"])
    assert view.current_importance[i] == pytest.approx(7.0)
    earlier = eng.view("NW-1", now=kept_at - timedelta(days=1))
    j = [m.id for m in earlier.memories].index(ids["plan"])
    assert earlier.current_importance[j] < 7.0
    assert eng.get(ids["obs"]).confirmations == ()  # only the memory kept


def test_keep_clears_the_flag_audited(eng: mc.MemoryEngine, clock: Clock) -> None:
    ids = _setup(eng)
    _, sup = _change(eng, timedelta(days=30))
    kept_at = clock.now
    eng.keep_flagged(ids["plan"], sup.id, "dr-a")
    assert [f.memory_id for f in eng.stale_flags("NW-1")] == [ids["obs"]]
    clock.advance(days=1)
    assert [f.memory_id for f in eng.stale_flags("NW-1")] == [ids["obs"]]
    # as of before the decision the flag stood
    earlier = {f.memory_id for f in eng.stale_flags("NW-1", now=kept_at - timedelta(hours=1))}
    assert earlier == {ids["obs"], ids["plan"]}
    (entry,) = eng.audit_log(action="keep_flagged")
    assert (entry.actor, entry.entity_id, entry.patient_id) == ("dr-a", ids["plan"], "NW-1")
    assert eng.get(ids["plan"]).status is mc.Status.ACTIVE
    with pytest.raises(mc.NotFoundError):  # no such flag any more
        eng.keep_flagged(ids["plan"], sup.id, "dr-a")


def test_confirm_archives_audited_and_restore_undoes(eng: mc.MemoryEngine) -> None:
    ids = _setup(eng)
    _, sup = _change(eng, timedelta(days=30))
    m = eng.confirm_flagged(ids["obs"], sup.id, "dr-a")
    assert m.status is mc.Status.ARCHIVED
    assert [f.memory_id for f in eng.stale_flags("NW-1")] == [ids["plan"]]
    (entry,) = eng.audit_log(action="confirm_flagged")
    assert entry.after is not None and entry.after["flag"]["change_id"] == sup.id
    eng.restore(ids["obs"], "dr-a")
    assert eng.get(ids["obs"]).status is mc.Status.ACTIVE


def test_annotation_switches(eng: mc.MemoryEngine) -> None:
    ids = _setup(eng)
    _change(eng, timedelta(days=30))
    off = eng.policy
    off = mc.EnginePolicy.from_dict(
        {**off.to_dict(), "context": {"annotate_stale": False, "annotate_pending": True}}
    )
    res = eng.build_context("NW-1", "metformin glucose readings", record_access=False, policy=off)
    obs = next(i for i in res.items if i.scored.memory.id == ids["obs"])
    assert obs.annotations == () and "may be outdated" not in res.text


def test_context_policy_is_validated_and_serialised() -> None:
    pol = mc.EnginePolicy()
    assert pol.to_dict()["context"] == {
        "annotate_pending": True,
        "annotate_stale": True,
        "annotate_lab_history": True,
        "lab_history_max": 3,
        "lists": True,
        "history_last": True,
        "allergy_pairs": True,
        "answer_places": True,
        "dated_types": ("medication",),
    }
    assert mc.EnginePolicy.from_dict(pol.to_dict()) == pol
    off = mc.EnginePolicy.from_dict({"context": {"lists": False, "allergy_pairs": False}})
    assert not off.context.lists and not off.context.allergy_pairs and off.context.history_last
    not_a_bool: Any = "yes"
    with pytest.raises(mc.ValidationError):
        mc.ContextPolicy(annotate_stale=not_a_bool)
    with pytest.raises(mc.ValidationError, match="history_last"):
        mc.ContextPolicy(history_last=not_a_bool)
    with pytest.raises(mc.ValidationError, match="answer_places"):
        mc.ContextPolicy(answer_places=not_a_bool)
    with pytest.raises(mc.ValidationError):
        mc.ContextPolicy(lab_history_max=0)
    with pytest.raises(mc.ValidationError):
        mc.EnginePolicy.from_dict({"context": {"no_such": True}})


def test_lab_history_newest_first_at_most_three(eng: mc.MemoryEngine) -> None:
    t0 = NOW - timedelta(days=400)
    for days, value in ((0, 92), (30, 89), (150, 90), (280, 85), (390, 89)):
        eng.add_memory(
            "NW-1",
            f"Patient's eGFR was {value} mL/min",
            "lab_result",
            created_at=t0 + timedelta(days=days),
        )
    eng.add_memory("NW-1", "Patient's HbA1c was 7.1%", "lab_result", created_at=t0)
    res = eng.build_context("NW-1", "eGFR kidney function", record_access=False)
    egfr = [i for i in res.items if "eGFR" in i.scored.memory.content]
    assert len(egfr) == 1  # the rest are superseded
    months = [(t0 + timedelta(days=d)).strftime("%B %Y") for d in (280, 150, 30)]
    expected = f"(was 85 in {months[0]}, 90 in {months[1]}, 89 in {months[2]})"
    assert egfr[0].annotations == (expected,)
    assert f"Patient's eGFR was 89 mL/min {expected}" in res.text
    # as of before the last value, the history is one shorter and ends earlier
    past = eng.build_context(
        "NW-1", "eGFR", now=t0 + timedelta(days=300), record_access=False
    ).items
    (line,) = [i for i in past if "eGFR" in i.scored.memory.content]
    assert line.annotations == (
        f"(was 90 in {months[1]}, 89 in {months[2]}, 92 in {t0.strftime('%B %Y')})",
    )


def test_lab_history_within_one_month_names_the_days(eng: mc.MemoryEngine) -> None:
    """Daily results (an inpatient stay) read as "on <day>": "in March 2020" three times says
    nothing (issue 24)."""
    t0 = datetime(2020, 3, 24, 8, tzinfo=UTC)
    for day, value in enumerate((101, 105, 108, 99)):
        eng.add_memory(
            "NW-1",
            f"Patient's fasting glucose was {value} mg/dL",
            "lab_result",
            created_at=t0 + timedelta(days=day),
        )
    res = eng.build_context("NW-1", "fasting glucose", record_access=False)
    (line,) = [i for i in res.items if "glucose" in i.scored.memory.content]
    assert line.annotations == ("(was 108 on 2020-03-26, 105 on 2020-03-25, 101 on 2020-03-24)",)


def test_pending_supersession_is_annotated(eng: mc.MemoryEngine) -> None:
    old = eng.add_memory(
        "NW-1",
        "Patient has documented penicillin allergy with anaphylactic reaction",
        "allergy",
        created_at=NOW - timedelta(days=100),
    ).memory
    pol = mc.EnginePolicy(contradiction=mc.ContradictionPolicy(type_thresholds={"allergy": -1.0}))
    eng.save_policy(pol, "dr-a")
    newer = "Patient's penicillin allergy re-tested: reaction was a mild rash, not anaphylaxis"
    res = eng.add_memory("NW-1", newer, "allergy", created_at=NOW - timedelta(days=1))
    assert [s.state for s in res.supersessions] == [mc.SupersessionState.PENDING]
    ctx_res = eng.build_context("NW-1", "penicillin", record_access=False)
    item = next(i for i in ctx_res.items if i.scored.memory.id == old.id)
    assert item.included and item.position in (1, 2)
    note = item.annotations[0]
    assert note.startswith("(pending review: Patient's penicillin allergy re-tested")
    assert len(note) <= len("(pending review: )") + flags.PENDING_CHARS
    assert item.line.endswith(note)


def test_flags_reach_the_worklist_and_leave_it_when_kept(eng: mc.MemoryEngine) -> None:
    ids = _setup(eng)
    assert [i for i in eng.worklist() if i.kind == "stale_flag"] == []
    _, sup = _change(eng, timedelta(days=30))
    items = [i for i in eng.worklist() if i.kind == "stale_flag"]
    assert {i.ref for i in items} == {ids["obs"], ids["plan"]}
    day = NOW - timedelta(days=30)
    for i in items:
        assert i.patient_id == "NW-1" and i.since == day
        assert f"metformin changed on {day.day} {day:%b %Y}" in i.title
    assert eng.worklist().totals["stale_flag"] == 2
    eng.keep_flagged(ids["plan"], sup.id, "dr-a")
    assert [i.ref for i in eng.worklist() if i.kind == "stale_flag"] == [ids["obs"]]
    eng.undo_supersession(sup.id, "dr-a")  # the change undone: no flag is left
    assert [i for i in eng.worklist() if i.kind == "stale_flag"] == []


def test_condition_names_are_the_lexicons_and_a_subtype_flags_only_its_own(clock: Clock) -> None:
    """Condition names come from the lexicon (one vocabulary, issue 22): a resolved "type 1
    diabetes" (a corrected diagnosis) flags the plan naming "T1DM", not the one naming plain
    "diabetes" (still true of a patient with another type) nor a relative's type 2 diabetes;
    names are matched by concept, not by words ("sleep apnoea" / "OSA")."""
    assert flags.condition_mentions("Dx: T1DM since childhood") == {"type 1 diabetes", "diabetes"}
    assert flags.condition_mentions("T1DM", broader=False) == {"type 1 diabetes"}
    assert flags.condition_mentions("uses CPAP for OSA") == flags.condition_mentions(
        "sleep apnoea, CPAP nightly"
    )
    assert flags.analyte_mentions("FBG 7.2 mmol/L this morning") == {"fasting glucose", "glucose"}
    e = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), POLICY, clock=clock)
    try:
        t0 = NOW - timedelta(days=100)
        old = e.add_memory("NW-1", "Type 1 diabetes", "condition", created_at=t0).memory.id
        plan = e.add_memory(
            "NW-1", "Carb counting class for T1DM", "care_plan", created_at=t0 + timedelta(days=1)
        ).memory.id
        broad = e.add_memory(
            "NW-1", "Diabetes education booked", "care_plan", created_at=t0 + timedelta(days=2)
        ).memory.id
        e.add_memory(
            "NW-1", "Sister has type 2 diabetes", "observation", created_at=t0 + timedelta(days=3)
        )
        res = e.add_memory(
            "NW-1",
            "Type 1 diabetes resolved: diagnosis corrected after antibody tests",
            "condition",
            created_at=t0 + timedelta(days=10),
        )
        assert [s.old_id for s in res.supersessions] == [old]
        if res.supersessions[0].state is mc.SupersessionState.PENDING:
            e.confirm_supersession(res.supersessions[0].id, "dr-a")
        assert {f.memory_id for f in e.stale_flags("NW-1")} == {plan}
        assert broad not in {f.memory_id for f in e.stale_flags("NW-1")}
    finally:
        e.store.close()
