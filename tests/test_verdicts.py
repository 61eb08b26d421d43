"""Supersession verdicts from evidence (issue 12): golden cases per rule, the LLM adjudicator
against a loopback chat-completions stub, domain.md's worked pairs and the demo's cases end to
end on MiniLM."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, ClassVar

import pytest

import memory_core as mc
from memory_core import labs
from memory_core.adjudicate import verdict_by_rule
from memory_core.adjudicate_llm import SCHEMA, LLMAdjudicator, make_adjudicator
from memory_core.contradictions import RuleAdjudicator
from memory_core.embedding.openai import make_client
from tests.chat_stub import ChatHandler, serve
from tests.conftest import NOW


def v(older: str, newer: str, memory_type: str) -> str:
    return verdict_by_rule(older, newer, 0.0, memory_type)


# --- drugs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        # the same drug with a change
        (
            "Patient takes lisinopril 10mg daily",
            "Lisinopril increased to 20mg daily",
            "medication",
            "updates",
        ),
        ("Takes Glucophage 500 mg daily", "Metformin stopped - eGFR 28", "medication", "updates"),
        (
            "Metformin immediate-release 500 mg twice daily",
            "Switched to metformin ER 500 mg twice daily",
            "medication",
            "updates",
        ),
        (
            "Patient on metoprolol succinate 50 mg",
            "Patient stopped metoprolol on her own last month",
            "medication",
            "updates",
        ),
        (
            "Patient is allergic to sulfa drugs",
            "Patient clarifies she is not allergic to sulfa",
            "allergy",
            "contradicts",
        ),
        # the same drug, the same statement
        (
            "Patient takes metformin 500 mg twice daily",
            "Patient is taking metformin 500mg BID",
            "medication",
            "duplicate",
        ),
        (
            "Nausea and vomiting on Ozempic",
            "Semaglutide causes nausea and vomiting",
            "adverse_reaction",
            "duplicate",
        ),
        # different drugs (brand names resolved) are two facts
        ("On Ozempic 0.5 mg weekly", "On Jardiance 10 mg daily", "medication", "compatible"),
        (
            "Metformin ER 500 mg with dinner",
            "Metoprolol 25 mg twice daily",
            "medication",
            "compatible",
        ),
        (
            "Patient has documented penicillin allergy with anaphylactic reaction",
            "Patient has a sulfa drug allergy causing rash",
            "allergy",
            "compatible",
        ),
        (
            "Patient reports an aspirin allergy (wheezing)",
            "Patient reports an ibuprofen allergy (wheezing)",
            "allergy",
            "compatible",
        ),
        # two reactions to one drug are two facts
        ("Hypoglycemia on glipizide", "Weight gain on glipizide", "adverse_reaction", "compatible"),
        # a drug named on one side only: no evidence of one subject
        ("Allergy: penicillin (anaphylaxis 2009)", "Allergy: shellfish", "allergy", "compatible"),
    ],
)
def test_drug_rule(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want


# --- lab results -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("older", "newer", "want"),
    [
        (
            "Patient's HbA1c rose to 9.9% in August",
            "Patient's HbA1c rose to 10.3% in October",
            "updates",
        ),
        (
            "Patient's HbA1c was 8.2% in January",
            "Patient's HbA1c improved to 7.1% in March",
            "updates",
        ),
        (
            "Urine albumin-to-creatinine ratio 45 mg/g",
            "Urine ACR 120 mg/g, up from last year",
            "updates",
        ),
        ("A1c 7.0% in March", "glycated haemoglobin 7.1% in June", "updates"),
        # the same value on another date is a new measurement
        (
            "Patient's potassium was 4.0 mmol/L in August",
            "Patient's potassium was 4.0 mmol/L in June",
            "updates",
        ),
        # the same value and date: a duplicate
        ("HbA1c 7.2% on 2026-03-14", "A1c 7.2% (14 Mar 2026)", "duplicate"),
        ("LDL 118 mg/dL on 2025-11-20", "LDL cholesterol 118 mg/dL (2025-11-20)", "duplicate"),
        # two analytes are two facts
        ("LDL 101 mg/dL", "HDL 38 mg/dL", "compatible"),
        (
            "Patient's LDL cholesterol was 131 mg/dL in October",
            "Patient's triglycerides was 153 mg/dL in February",
            "compatible",
        ),
        ("TSH 4.5 mIU/L", "Free T4 1.1 ng/dL", "compatible"),
        (
            "Urine albumin-to-creatinine ratio 45 mg/g in April",
            "LDL 142 mg/dL in April",
            "compatible",
        ),
    ],
)
def test_lab_rule(older: str, newer: str, want: str) -> None:
    assert v(older, newer, "lab_result") == want


def test_two_different_lab_values_are_never_a_duplicate() -> None:
    for a, b in [(9.9, 10.3), (8.5, 8.3), (4.0, 4.1)]:
        got = v(f"HbA1c {a}% in August", f"HbA1c {b}% in August", "lab_result")
        assert got == "updates"


def test_lab_facts_read_analyte_value_and_date() -> None:
    (fact,) = labs.lab_facts("Urine albumin-to-creatinine ratio 45 mg/g on 2026-04-02")
    assert (fact.analyte, fact.value, fact.date) == ("uacr", 45.0, (2026, 4, 2))
    assert labs.analytes("fasting sugar 131") == {"fasting glucose", "glucose"}
    assert labs.analytes("Vitamin B12 190 pg/mL") == {"vitamin b12"}
    assert labs.numbers("A1c 7.2% (14 Mar 2026)") == (7.2,)


# --- preferences, conditions, responses, free text ---------------------------------------------


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        (
            "Patient prefers morning appointments",
            "Patient now prefers afternoon appointments",
            "preference",
            "updates",
        ),
        (
            "Patient wants reminders by text message",
            "Patient now prefers reminders by phone call instead of text",
            "preference",
            "updates",
        ),
        ("Prefers in-person visits", "Now prefers video visits", "preference", "updates"),
        (
            "Wants an interpreter for Vietnamese",
            "Needs a Vietnamese interpreter at visits",
            "preference",
            "duplicate",
        ),
        # the demo's case: two channels, both can be true
        (
            "Patient dislikes phone calls and reads email daily",
            "Patient likes reminders sent by text message",
            "preference",
            "compatible",
        ),
        (
            "Prefers morning appointments",
            "Prefers morning medication doses",
            "preference",
            "compatible",
        ),
        (
            "Acute gout flare in right big toe",
            "Gout flare resolved, no pain now",
            "condition",
            "updates",
        ),
        (
            "Patient has stage 2 chronic kidney disease",
            "Chronic kidney disease progressed to stage 3a",
            "condition",
            "updates",
        ),
        ("Left knee pain", "Right shoulder pain", "condition", "compatible"),
        ("Patient has type 2 diabetes", "Patient has hypertension", "condition", "compatible"),
        (
            "A1c not at goal on metformin alone",
            "A1c at goal after adding semaglutide",
            "treatment_response",
            "contradicts",
        ),
        (
            "BP controlled on lisinopril",
            "Proteinuria reduced on lisinopril",
            "treatment_response",
            "compatible",
        ),
        # free text: a changed value span or a change word over a shared subject
        (
            "Patient weighed 107.8 kg at this session",
            "Patient weighed 107.4 kg at this session",
            "observation",
            "updates",
        ),
        (
            "Works night shifts at a warehouse",
            "Changed to day shifts at the warehouse",
            "social",
            "updates",
        ),
        (
            "Plan: recheck HbA1c in three months",
            "Plan changed: recheck HbA1c in six months",
            "care_plan",
            "updates",
        ),
        (
            "Refer to podiatry for foot care",
            "Enrol in diabetes education class",
            "care_plan",
            "compatible",
        ),
        (
            "Patient seemed tired and described poor sleep",
            "Patient has been sleeping about six hours a night",
            "observation",
            "compatible",
        ),
        (
            "Patient lives alone",
            "Patient works night shifts at a warehouse",
            "social",
            "compatible",
        ),
    ],
)
def test_subject_rule(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want


@pytest.mark.parametrize(
    ("older", "newer", "want"),
    [
        # conversation turns: similar wording is not an update
        ("Nebraas: How about you?", "Nebraas: What about you?", "compatible"),
        ("Nicolas: Oh cool", "Nicolas: Oh dang that sucks", "compatible"),
        ("Nebraas: Oh nice", "Nebraas: Oh no I'm so sorry!", "compatible"),
        ("elise: Those look amazing Kate!", "Emi: That sounds amazing Kate!", "compatible"),
        # only the same turn word for word is a duplicate
        ("Nicolas: Oh dang that sucks", "Nicolas: Oh dang that sucks", "duplicate"),
        # a question with a new answer updates it; another question's answer does not
        (
            "who won the ncaa women's softball championship this year? Florida State",
            "who won the ncaa women's softball championship this year? UCLA",
            "updates",
        ),
        (
            "who has scored the most points in a nba game? Wilt Chamberlain",
            "who has scored the most 3 pointers in nba history? Ray Allen",
            "compatible",
        ),
        (
            "who has the most nba points in a game? Wilt Chamberlain",
            "who scored the most points in one nba basketball game? Wilt Chamberlain",
            "compatible",
        ),
    ],
)
def test_free_text_needs_more_than_similar_wording(older: str, newer: str, want: str) -> None:
    assert v(older, newer, "observation") == want


def test_the_rule_adjudicator_reads_the_memory_type(engine: mc.MemoryEngine) -> None:
    adj = RuleAdjudicator()
    assert adj.method == "rules"
    a = engine.add_memory("NW-1", "HbA1c 7.2% on 2026-03-14", "lab_result").memory
    b = engine.add_memory("NW-2", "A1c 7.2% (14 Mar 2026)", "lab_result").memory
    assert adj.adjudicate(a, b, 0.7) == "duplicate"


# --- the LLM adjudicator -----------------------------------------------------------------------


class _Handler(ChatHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    answer: ClassVar[str] = "{}"
    delay: ClassVar[float] = 0.0


@pytest.fixture
def server() -> Iterator[str]:
    yield from serve(_Handler)


def _llm(url: str, timeout: float = 10.0) -> LLMAdjudicator:
    return LLMAdjudicator("gpt-test", make_client(api_key="k", base_url=url), timeout=timeout)


def _pair(engine: mc.MemoryEngine, older: str, newer: str, mtype: str) -> tuple[mc.Memory, ...]:
    a = engine.add_memory("NW-1", older, mtype).memory
    b = engine.add_memory("NW-2", newer, mtype).memory  # another patient: no detection here
    return a, b


def test_llm_request_shape_and_schema(server: str, engine: mc.MemoryEngine) -> None:
    _Handler.answer = json.dumps({"verdict": "updates", "evidence": "metformin: switched"})
    a, b = _pair(
        engine, "Patient takes metformin", "Patient switched to metformin ER", "medication"
    )
    adj = _llm(server)
    assert adj.adjudicate(a, b, 0.71) == "updates" and adj.fallbacks == 0
    (req,) = _Handler.seen
    assert req["path"].endswith("/chat/completions")
    body = req["body"]
    assert body["model"] == "gpt-test" and body["temperature"] == 0
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == SCHEMA
    assert SCHEMA["properties"]["verdict"]["enum"] == [
        "updates",
        "contradicts",
        "duplicate",
        "compatible",
    ]
    system, user = body["messages"]
    assert system["role"] == "system" and "evidence" in system["content"].lower()
    data = json.loads(user["content"])  # the statements go in as data
    assert data["memory_type"] == "medication" and data["similarity"] == 0.71
    assert data["older"]["content"] == a.content and data["newer"]["content"] == b.content


@pytest.mark.parametrize(
    "raw",
    ["not json", json.dumps({"verdict": "maybe"}), json.dumps(["updates"]), ""],
)
def test_unreadable_answer_falls_back_to_the_rules(
    server: str, engine: mc.MemoryEngine, raw: str
) -> None:
    _Handler.answer = raw
    adj = _llm(server)
    a, b = _pair(engine, "On Ozempic 0.5 mg weekly", "On Jardiance 10 mg daily", "medication")
    assert adj.adjudicate(a, b, 0.64) == "compatible"  # the rules: two drugs
    c, d = _pair(engine, "Lisinopril 10 mg daily", "Lisinopril increased to 20 mg", "medication")
    assert adj.adjudicate(c, d, 0.8) == "updates"  # the rules: the same drug, a new dose
    assert adj.fallbacks == 2


def test_timeout_falls_back_to_the_rules(server: str, engine: mc.MemoryEngine) -> None:
    _Handler.answer = json.dumps({"verdict": "duplicate", "evidence": "x"})
    _Handler.delay = 2.0
    adj = _llm(server, timeout=0.3)
    a, b = _pair(engine, "LDL 101 mg/dL", "HDL 38 mg/dL", "lab_result")
    assert adj.adjudicate(a, b, 0.68) == "compatible"  # not the slow "duplicate"
    assert adj.fallbacks == 1 and len(_Handler.seen) == 1  # no retries


def test_the_llm_verdict_drives_the_engine(server: str, clock: Callable[[], datetime]) -> None:
    from memory_core.embedding import HashingEmbedder

    adj = _llm(server)
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), adjudicator=adj, clock=clock)
    eng.add_memory("NW-1", "Patient takes drug A daily", "medication")
    _Handler.answer = json.dumps({"verdict": "contradicts", "evidence": "drug A stopped"})
    res = eng.add_memory("NW-1", "Patient takes drug A daily, stopped", "medication")
    assert [(s.method, s.verdict) for s in res.supersessions] == [("llm:gpt-test", "contradicts")]
    eng.store.close()


def test_make_adjudicator() -> None:
    assert isinstance(make_adjudicator("rules"), RuleAdjudicator)
    with pytest.raises(mc.ConfigurationError, match="unknown adjudicator"):
        make_adjudicator("oracle")


# --- end to end on MiniLM: domain.md's worked pairs and the demo's cases -----------------------


def _add(e: mc.MemoryEngine, text: str, mtype: str, days: float) -> mc.AddResult:
    from datetime import timedelta

    return e.add_memory("NW-1", text, mtype, created_at=NOW - timedelta(days=days))


def test_worked_pairs_end_to_end(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    morning = _add(e, "Patient prefers morning appointments", "preference", 300).memory
    res = _add(e, "Patient now prefers afternoon appointments", "preference", 10)
    assert [(s.old_id, s.verdict, s.state) for s in res.supersessions] == [
        (morning.id, "updates", mc.SupersessionState.AUTO)
    ]
    tol = _add(e, "Patient tolerates metformin 500mg well", "medication", 200).memory
    er = _add(
        e,
        "Patient reports persistent GI distress on metformin; switched to extended-release "
        "formulation",
        "medication",
        100,
    )
    assert [(s.old_id, s.state) for s in er.supersessions] == [(tol.id, mc.SupersessionState.AUTO)]
    _add(e, "Patient has documented penicillin allergy with anaphylactic reaction", "allergy", 90)
    sulfa = _add(e, "Patient has a sulfa drug allergy causing rash", "allergy", 80)
    assert sulfa.supersessions == ()  # both stay active
    jan = _add(e, "Patient's HbA1c was 8.2% in January", "lab_result", 150).memory
    mar = _add(e, "Patient's HbA1c improved to 7.1% in March", "lab_result", 90)
    assert [(s.old_id, s.verdict) for s in mar.supersessions] == [(jan.id, "updates")]
    ranked = [m.memory.id for m in e.retrieve("NW-1", "HbA1c", k=10, record_access=False)]
    assert ranked[0] == mar.memory.id and jan.id not in ranked  # the newer one first
    kept = e.get(jan.id)  # the older one kept as history, its base importance unchanged
    assert kept.status is mc.Status.SUPERSEDED and kept.importance == jan.importance
    alone = _add(e, "Patient lives alone", "social", 60)
    assert alone.supersessions == ()


def test_demo_cases_end_to_end(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    aug = _add(e, "Patient's HbA1c rose to 9.9% in August", "lab_result", 90).memory
    octo = _add(e, "Patient's HbA1c rose to 10.3% in October", "lab_result", 30)
    assert [(s.old_id, s.verdict) for s in octo.supersessions] == [(aug.id, "updates")]
    _add(e, "Patient dislikes phone calls and reads email daily", "preference", 60)
    text = _add(e, "Patient likes reminders sent by text message", "preference", 20)
    assert text.supersessions == ()  # both can be true
    er = _add(
        e,
        "Patient reports persistent GI distress on metformin; switched to extended-release "
        "formulation",
        "medication",
        50,
    ).memory
    stop = _add(e, "Patient stopped metformin ER because of persistent diarrhoea", "medication", 5)
    assert [(s.old_id, s.verdict, s.state) for s in stop.supersessions] == [
        (er.id, "updates", mc.SupersessionState.AUTO)
    ]


# --- slots of the history, transcript turns, drug mentions (issue 12, second round) -----------


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        # a single-valued slot: the newest value wins, worded apart
        ("Patient lives alone", "Patient's daughter has moved in with the patient", "social",
         "updates"),
        ("Unemployed, looking for work", "Started a new job at a grocery store", "social",
         "updates"),
        ("Married, lives with husband", "Widowed in March, now lives alone", "social", "updates"),
        ("Former smoker, quit 2015", "Quit smoking in 2015", "social", "duplicate"),
        # the same slot, another person's fact
        ("Works from home", "Wife works night shifts", "social", "compatible"),
        # a slot that holds several true values needs a change; a negation of something else
        # is none
        ("Patient depends on the bus to reach the clinic",
         "Patient has no car and the nearest grocery store is far", "social", "compatible"),
        ("Patient shares an apartment with an adult son",
         "Patient lives on a third floor without an elevator", "social", "compatible"),
        # goals of care
        ("Wants aggressive treatment for cancer",
         "Has decided against chemotherapy, wants comfort-focused care", "preference", "updates"),
        # a measurement needs a changed number or a "now" word; a negation of what both name
        ("Skips breakfast most days", "Now eats breakfast every day", "observation", "updates"),
        ("Says she does not drink soda", "Admits to two cans of cola a day", "observation",
         "contradicts"),
        ("Patient brought a complete glucose log to the session",
         "Patient said holiday meals raised glucose for several days", "observation",
         "compatible"),
        ("Patient brought a complete glucose log to the session",
         "Patient asked about switching to a cheaper glucose meter", "observation", "compatible"),
        ("Checks glucose before breakfast", "Checks blood pressure before breakfast",
         "observation", "compatible"),
        # a drug in two notes is no shared subject of observations (a care plan's item it is)
        ("Patient lost track of insulin pen expiry dates",
         "Patient appeared anxious about starting insulin", "observation", "compatible"),
        ("Plan: start insulin at next visit",
         "Insulin not needed - A1c 6.9, continue oral medicines", "care_plan", "contradicts"),
        # referrals and the follow-up: one item each
        ("Refer to ophthalmology for diabetic eye exam",
         "Ophthalmology referral for retinal screening", "care_plan", "duplicate"),
        ("Refer to cardiology for chest pain", "Refer to nephrology for rising creatinine",
         "care_plan", "compatible"),
        ("Follow up in clinic in 2 weeks", "Follow-up moved to 4 weeks", "care_plan", "updates"),
    ],
)  # fmt: skip
def test_slot_rule(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want


def test_transcript_turns_are_judged_by_their_words() -> None:
    # same speaker, same topic, "now" and "new" in passing: two turns, both stay
    older = "Sam: I just got off of work and waiting for the bus is torture."
    newer = "Sam: It is going well right now. I am on my way back from work."
    assert v(older, newer, "observation") == "compatible"
    # "sugar" in two speakers' advice is no lab result
    tips = "Ana: Drink water, limit added sugar and processed foods"
    reply = "Ben: Thats interesting! Drink water, watch out for too much sugar"
    assert v(tips, reply, "observation") == "compatible"
    assert v("Sam: Good morning", "Sam: good morning!", "observation") == "duplicate"
    assert v("Sam: I weigh 80 kg now", "Sam: I weigh 78 kg now", "observation") == "updates"
    # a chart heading is not a speaker
    assert (
        v("Plan: recheck HbA1c in three months", "Plan changed: recheck HbA1c in six months",
          "care_plan")
        == "updates"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        # combination brands and abbreviations from the supplement
        ("Allergy: Augmentin - hives", "Allergy: amoxicillin-clavulanate, hives", "allergy",
         "duplicate"),
        ("Penicillin allergy (hives)",
         "PCN allergy removed: negative skin test and oral challenge - pt is not allergic",
         "allergy", "contradicts"),
        # a rescue medicine is not what the allergy is to
        ("Peanut allergy - anaphylaxis, carries EpiPen",
         "Tree nut allergy (cashew, pistachio) - anaphylaxis, carries EpiPen", "allergy",
         "compatible"),
        ("Shellfish allergy - mild itching",
         "Shellfish allergy now severe - needed epinephrine after shrimp", "allergy", "updates"),
        # a second reaction with a lab value in it is a second fact
        ("Lisinopril - dry cough", "Lisinopril - hyperkalemia, K 5.8", "adverse_reaction",
         "compatible"),
        # two members of one family are two drugs; a drug named as the setting of another
        ("Insulin glargine 22 units qhs", "Insulin lispro 4 units with meals", "medication",
         "compatible"),
        ("Furosemide 40 mg qAM", "Potassium chloride 20 mEq daily while on furosemide",
         "medication", "compatible"),
        ("Patient takes insulin", "Patient now takes insulin glargine 20 units", "medication",
         "updates"),
        # a treatment's response changed with the treatment; its outcome's direction is no
        # change of the treatment
        ("Doing well on metformin 500 mg, no GI sx",
         "Ongoing diarrhea on metformin; changed to ER tablets", "treatment_response",
         "updates"),
        ("BP controlled on lisinopril", "Proteinuria reduced on lisinopril",
         "treatment_response", "compatible"),
    ],
)  # fmt: skip
def test_drug_mentions_rule(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want


def test_chart_symbols_with_a_value_are_analytes() -> None:
    assert labs.analytes("K 5.6 on 2/3") == {"potassium"}
    assert labs.analytes("Na 131 this morning") == {"sodium"}
    assert labs.analytes("Vitamin K given") == frozenset()
    assert v("K 5.6 on 2/3", "Potassium 4.4 on repeat 2/10", "lab_result") == "updates"


@pytest.mark.parametrize(
    ("text", "empty"),
    [
        ("NKDA", True),
        ("No known drug allergies", True),
        ("Allergies: none", True),
        ("Patient denies any drug allergies.", True),
        ("No known allergy to latex", False),
        ("Allergic to codeine - vomiting", False),
    ],
)
def test_an_empty_allergy_list_is_recognised(text: str, empty: bool) -> None:
    from memory_core.allergy_lists import no_allergies

    assert no_allergies(text) is empty


def test_an_allergy_updates_an_empty_allergy_list() -> None:
    from memory_core.adjudicate import standing_candidate

    assert v("NKDA", "Allergic to codeine - severe vomiting", "allergy") == "updates"
    # the reverse says an allergy is not there: a contradiction, for review
    assert v("Allergic to codeine - severe vomiting", "NKDA", "allergy") == "contradicts"
    assert standing_candidate("NKDA", "Allergic to codeine", "allergy")
    assert not standing_candidate("Allergic to latex", "Allergic to codeine", "allergy")
    # the same empty list restated is a duplicate (cosine -0.02); another scope is another list
    assert standing_candidate("NKDA", "No known drug allergies", "allergy")
    assert v("NKDA", "Allergies reviewed at triage: no known drug allergies.", "allergy") == (
        "duplicate"
    )
    assert v("NKDA", "NKFA", "allergy") == "compatible"
    # an empty drug list says nothing of latex; a relative's allergy is not the patient's
    assert not standing_candidate("NKDA", "Latex allergy - rash", "allergy")
    assert v("NKDA", "Latex allergy - rash", "allergy") == "compatible"
    assert not standing_candidate("NKDA", "Mom says her son is allergic to penicillin", "allergy")


def test_an_empty_allergy_list_is_a_candidate_whatever_its_cosine(
    minilm_engine: mc.MemoryEngine,
) -> None:
    e = minilm_engine
    nkda = _add(e, "NKDA", "allergy", 300).memory
    latex = _add(e, "Latex allergy - contact rash", "allergy", 200)
    assert latex.supersessions == ()  # NKDA covers drugs only
    # "NKDA" / "allergic to codeine": cosine 0.03, far below the cut, yet adjudicated
    preview = e.preview_supersessions("NW-1", "Allergic to codeine - severe vomiting", "allergy")
    assert [(m.id, mode) for m, _sim, mode in preview] == [(nkda.id, "review")]
    assert preview[0][1] < e.threshold_for("allergy")
    codeine = _add(e, "Allergic to codeine - severe vomiting", "allergy", 10)
    assert [(s.old_id, s.verdict, s.state) for s in codeine.supersessions] == [
        (nkda.id, "updates", mc.SupersessionState.PENDING)
    ]  # a safety type: for review, NKDA stays in the prompt until then
    assert e.get(nkda.id).status is mc.Status.ACTIVE


def test_the_back_scan_finds_an_empty_allergy_list_below_the_cut(
    minilm_engine: mc.MemoryEngine,
) -> None:
    from datetime import timedelta

    e = minilm_engine
    rows = [
        {"patient_id": "NW-1", "content": text, "memory_type": "allergy",
         "created_at": NOW - timedelta(days=d)}
        for text, d in (("NKDA", 300), ("Allergic to codeine - severe vomiting", 10))
    ]  # fmt: skip
    e.add_memories(rows, detect=False)
    found = e.scan_contradictions("NW-1")
    assert [(s.verdict, s.state) for s in found] == [("updates", mc.SupersessionState.PENDING)]
    assert found[0].similarity < e.threshold_for("allergy")
    assert e.scan_contradictions("NW-1") == []  # recorded once


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        # a negation of what the other names
        ("Pt denies chest pain", "Pt admits to exertional chest pressure on stairs x 2 wks",
         "observation", "contradicts"),
        ("Dx (ED): new-onset atrial fibrillation",
         "Not AF - tele review shows multifocal atrial tachycardia", "condition", "contradicts"),
        # two sites are two findings
        ("DVT L popliteal vein 3/2025", "New DVT R femoral vein on duplex 9/2026", "condition",
         "compatible"),
        ("Stage 2 pressure injury, sacrum", "Stage 1 pressure injury, L heel", "observation",
         "compatible"),
        # procedures and follow-ups: one item each, per specialty
        ("Colonoscopy scheduled 11/14", "Colonoscopy done 11/14 - 2 adenomas removed",
         "care_plan", "updates"),
        ("Echo in 6 months to reassess EF", "Repeat TTE in ~6 mo for LVEF reassessment",
         "care_plan", "duplicate"),
        ("RTC 3 months for HTN", "RTC 4 weeks for HTN recheck", "care_plan", "updates"),
        ("F/u with medical oncology in 3 wks for cycle 2",
         "F/u with radiation oncology in 3 wks after simulation", "care_plan", "compatible"),
        # a correction under another heading is still about the plan's item
        ("Plan: hold Eliquis 48 h before cataract surgery",
         "Correction: do NOT hold apixaban - low bleeding risk", "care_plan", "contradicts"),
        # dictionary spellings of one drug; a drug named as an exception is no subject
        ("Synthroid 75 mcg PO qAM", "Levothyroxine 88 mcg PO daily", "medication", "updates"),
        ("Methotrexate 15 mg PO weekly", "Folic acid 1 mg PO daily except MTX day",
         "medication", "compatible"),
        ("Iodinated contrast allergy - hives", "Gadolinium contrast - nausea and hives",
         "allergy", "compatible"),
        ("Responding to MTX - fewer joint flares",
         "MTX failure: persistent synovitis; adding adalimumab", "treatment_response",
         "updates"),
    ],
)  # fmt: skip
def test_fourth_author_rules(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        # a label that names the subject is part of the statement; a speaker's name is not
        ("Dizziness after starting doxazosin",
         "Doxazosin: dizziness now with two near-falls", "adverse_reaction", "updates"),
        ("Ava: I walk the dog every morning", "Ava: we got a new puppy", "observation",
         "compatible"),
        ("elise: that looks amazing", "elise: that looks lovely", "observation", "compatible"),
        # two sides are two findings, with or without a body site the verdict knows
        ("Contact dermatitis R wrist from nickel", "Contact dermatitis L wrist from nickel",
         "condition", "compatible"),
        ("RE IOP 24 on timolol", "LE IOP 24 on timolol", "treatment_response", "compatible"),
        # two readings: two measures, or one measure at two times of day
        ("Home BP 128/80 evenings", "Home HR 64 evenings", "observation", "compatible"),
        ("Home BP 150/90 mornings", "Home BP 126/78 evenings", "observation", "compatible"),
        ("Weight 70 kg", "Weighed 70.0 kg at the pharmacy", "observation", "duplicate"),
        # a qualitative result of one test changed
        ("Strep throat swab positive", "Repeat strep throat swab negative", "lab_result",
         "updates"),
        ("Hepatitis C antibody positive", "Hepatitis C RNA negative", "lab_result",
         "compatible"),
        # a plan item's state changed; a condition's other name is another condition
        ("Referral to falls clinic sent", "Attended falls clinic, exercise plan given",
         "care_plan", "updates"),
        ("Glaucoma right eye", "Retinal vein occlusion right eye", "condition", "compatible"),
        ("Knee OA, awaiting total knee replacement", "s/p TKR March", "condition", "updates"),
        # corrections: entered on the wrong chart, or headed as one and negating the subject
        ("Wound healing well on silver dressing",
         "Silver dressing note was charted on the wrong patient - wound unchanged",
         "treatment_response", "contradicts"),
        ("Carer reports pt fell on the stairs",
         "Correction: pt did not fall, she slipped one step and sat down", "observation",
         "contradicts"),
        # an allergy to one agent with a different reaction is a second fact, not a duplicate
        ("Penicillin allergy - rash", "Penicillin allergy - wheeze and lip swelling", "allergy",
         "compatible"),
        ("Sulfa allergy - hives", "Sulfonamide allergy: urticaria", "allergy", "duplicate"),
    ],
)  # fmt: skip
def test_fifth_and_sixth_author_rules(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        # a heading that names a slot is read for the slot ("Smoking status:", "Housing:")
        ("Tobacco: current smoker, half a pack a day", "Tobacco: former smoker, quit in May",
         "social", "updates"),
        # an addition is not a replacement; a pharmacy for one drug sits beside the usual one
        ("Works days as a bus driver", "Also works evening shifts at a bar", "social",
         "compatible"),
        ("Pharmacy: the supermarket pharmacy for routine meds",
         "Specialty pharmacy for adalimumab through the clinic", "preference", "compatible"),
        # a denial and an admission on one slot contradict
        ("Denies recreational drug use", "Admits to cocaine use at weekends", "social",
         "contradicts"),
        # readings before / after, at home / in clinic are two readings
        ("Pulse 68 before the walk test", "Pulse 140 after the walk test", "observation",
         "compatible"),
        ("Clinic BP 138/86", "Home BP 152/94 most evenings", "observation", "compatible"),
        ("Salbutamol helps her daytime cough", "Salbutamol does not help at night",
         "treatment_response", "compatible"),
        # a rescue order beside a maintenance one; a combination and its component
        ("Glyceryl trinitrate spray PRN angina", "Glyceryl trinitrate patch 5 mg daily",
         "medication", "compatible"),
        ("Oxycodone 5 mg PO q6h", "Oxycodone 5 mg PO q6h PRN pain", "medication", "updates"),
        # a target is not a result; a value in other units is the same value
        ("HbA1c 8.1%", "HbA1c target under 7.5%", "lab_result", "compatible"),
        ("Haemoglobin 11.2 g/dL", "Hb 112 g/L", "lab_result", "duplicate"),
        ("Fasting glucose 7.0 mmol/L", "Fasting glucose 126 mg/dL", "lab_result", "duplicate"),
        ("Fasting glucose 7.0 mmol/L", "Fasting glucose 150 mg/dL", "lab_result", "updates"),
        # two reactions to one agent share where they happened, not what they were
        ("Felt dizzy after the influenza vaccine at the pharmacy",
         "Sore arm for a day after the influenza vaccine at the pharmacy", "adverse_reaction",
         "compatible"),
        ("Ankle swelling on amlodipine", "Pedal swelling attributed to Norvasc",
         "adverse_reaction", "duplicate"),
        ("Cough on lisinopril", "New rash on lisinopril", "adverse_reaction", "compatible"),
        ("Thrush after inhaled fluticasone", "Hoarse voice after inhaled fluticasone",
         "adverse_reaction", "compatible"),
        ("Mild nausea on semaglutide", "Nausea on semaglutide now daily, with vomiting",
         "adverse_reaction", "updates"),
        # two subjects said alike, each with a word the other lacks, are two things; one
        # inside the other is the same thing in more words
        ("Allergic rhinitis", "Vasomotor rhinitis", "condition", "compatible"),
        ("Prefers to walk in the morning", "Prefers to take insulin in the morning",
         "preference", "compatible"),
        ("Type 2 diabetes", "Type 2 diabetes mellitus", "condition", "duplicate"),
        # a finding that spread updates the older; a parent's message is the child's fact
        ("Hives on the neck", "Dad messaged: the hives have spread to his legs", "observation",
         "updates"),
    ],
)  # fmt: skip
def test_seventh_and_eighth_author_rules(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "want"),
    [
        # a dose change beside a second reaction is no change of the first
        ("Nicotine patch - itchy skin under the patch",
         "Nicotine patch - vivid dreams since the dose was increased", "adverse_reaction",
         "compatible"),
        # no reaction word in common: "now", "better", "stopped" tell of the newer reaction
        ("Dry cough on lisinopril", "Lisinopril stopped: angioedema of the lips",
         "adverse_reaction", "compatible"),
        ("Constipation on oxycodone", "Oxycodone: now very drowsy in the afternoons",
         "adverse_reaction", "compatible"),
        # ... but a word of the first reaction, its end or its amount is a change of it
        ("Dizziness on amlodipine 10 mg",
         "Dizzy spells much better since Norvasc went down to 5 mg", "adverse_reaction",
         "updates"),
        ("Diarrhoea and bloating on metformin IR", "Metformin GI upset resolved on the XR tablet",
         "adverse_reaction", "updates"),
        ("Weight gain on olanzapine, 4 kg", "Up 9 kg since olanzapine started",
         "adverse_reaction", "updates"),
        # only a number differs (an episode's timing, a dose): another episode, both stay
        ("Hives 2 hours after amoxicillin", "Hives on day 6 of the amoxicillin course",
         "adverse_reaction", "compatible"),
        # a combination under its brand and its components is one drug
        ("Bactrim DS 1 tab BID for UTI", "Sulfamethoxazole/trimethoprim stopped - rash",
         "medication", "updates"),
        ("Losartan/HCTZ 50/12.5 daily", "Hyzaar 100/25 daily", "medication", "updates"),
        ("Bactrim DS BID", "Sulfamethoxazole-trimethoprim 800/160 BID stopped", "medication",
         "updates"),
        # a chart abbreviation or a lay name is the condition it stands for
        ("Known hypothyroidism on levothyroxine", "Underactive thyroid, on levothyroxine",
         "condition", "duplicate"),
        ("Hx HTN", "Has a history of high blood pressure", "condition", "duplicate"),
        ("High cholesterol", "HLD", "condition", "duplicate"),
        ("Obstructive sleep apnoea", "OSA", "condition", "duplicate"),
        ("Hx of heart attack 2019", "MI 2019", "condition", "duplicate"),
        ("Fasting blood glucose 130s at home", "FBG around 130 at home this week",
         "observation", "duplicate"),
        # two drugs are two facts whatever lab value each names
        ("Hyperkalaemia on spironolactone, K 5.9", "Hyperkalaemia on lisinopril, K 5.6",
         "adverse_reaction", "compatible"),
        ("Hyperkalaemia on spironolactone, K 5.6",
         "Spironolactone: hyperkalaemia worse, K 6.1", "adverse_reaction", "updates"),
    ],
)  # fmt: skip
def test_ninth_author_rules(older: str, newer: str, mtype: str, want: str) -> None:
    assert v(older, newer, mtype) == want
