"""The section states the patient's current state (issue 23): what ended is history, a question
asking for a kind gets the whole current list on one line, the allergies hold under any token
budget, reactions are found through the drug dictionary and lab results by what a question
means. Structural tests on the hashing engine (no model); the demo's figures are in
tests/test_demo_questions_heldout.py."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

import memory_core as mc
from memory_core import context as ctx
from memory_core import standing as st
from memory_core import vocabulary as voc
from memory_core.facts import read
from memory_core.question import analyse
from memory_core.tokens import count_tokens
from memory_core.values import Memory
from tests.conftest import NOW

MEDS_Q = "What medications is the patient currently taking?"
PROBLEMS_Q = "What are the patient's active medical problems?"


def memory(content: str, mtype: str, days: float = 10) -> Memory:
    return Memory(
        id=f"m{abs(hash((content, mtype)))}",
        patient_id="p",
        memory_type=mtype,
        content=content,
        importance=7,
        created_at=NOW - timedelta(days=days),
        last_accessed=NOW - timedelta(days=days),
        embedding=np.zeros(3, dtype=np.float32),
        embedding_model="t",
        facts=read(content, mtype),
    )


def add(eng: mc.MemoryEngine, content: str, mtype: str, days: float) -> Memory:
    return eng.add_memory("P-1", content, mtype, created_at=NOW - timedelta(days=days)).memory


# --- where a memory stands ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "mtype", "expected"),
    [
        ("Patient takes lisinopril 10 mg daily", "medication", st.Standing.CURRENT),
        ("Patient stopped metformin because of diarrhoea", "medication", st.Standing.ENDED),
        ("Patient's Acute bronchitis is resolved, not a current condition", "condition",
         st.Standing.ENDED),
        ("Patient has hypertension", "condition", st.Standing.CURRENT),
        ("Patient switched from lisinopril to losartan", "medication", st.Standing.CURRENT),
        ("Mother has type 2 diabetes", "condition", st.Standing.OTHER),
        ("Patient denies chest pain", "condition", st.Standing.OTHER),
        ("Patient said the new meter has an easier screen to read", "observation",
         st.Standing.UNKEYED),
        # a reaction stays true after the drug is stopped: never history
        ("Patient's cough on lisinopril resolved after stopping it", "adverse_reaction",
         st.Standing.CURRENT),
    ],
)  # fmt: skip
def test_a_memory_stands_by_its_facts(content: str, mtype: str, expected: st.Standing) -> None:
    assert st.reading(memory(content, mtype)).standing is expected


def test_a_switch_is_current_with_the_started_drug_only() -> None:
    r = st.reading(memory("Patient switched from lisinopril to losartan", "medication"))
    assert [f.name for f in r.facts] == ["losartan"]


def test_labels_come_from_the_keys_and_values() -> None:
    m = memory("Patient takes lisinopril 10 mg daily", "medication")
    assert st.label(m, st.reading(m).facts) == "lisinopril 10 mg once daily"
    m = memory("Patient has chronic kidney disease stage 2", "condition")
    assert st.label(m, st.reading(m).facts) == "chronic kidney disease (stage 2)"
    m = memory("Patient's HbA1c was 6.7% in August", "lab_result")
    assert st.label(m, st.reading(m).facts).startswith("HbA1c 6.7 %")
    m = memory("Patient stopped naproxen 220 mg", "medication", days=400)
    assert st.ended_label(m, st.reading(m).facts) == (
        f"naproxen 220 mg ({st.month_year(m.created_at.date())})"
    )


# --- what a question asks for ------------------------------------------------------------------
def test_kind_questions_come_from_the_lexicon() -> None:
    assert [k.name for k in analyse(MEDS_Q).kinds] == ["current medications"]
    assert [k.name for k in analyse(PROBLEMS_Q).kinds] == ["active problems"]
    assert [k.name for k in analyse("Any allergies?").kinds] == ["allergies"]
    both = analyse("What medications were stopped?").kinds
    assert [k.name for k in both] == ["current medications", "past medications"]
    assert both[1].ended
    assert analyse("What are they taking for reflux?").kinds == ()
    assert analyse("Any problems with the new diabetes medication?").kinds == ()
    assert voc.line_title("medication", "current") == "Current medications"
    assert voc.line_title("social", "current") == ""


def test_a_question_names_lab_analytes_by_meaning() -> None:
    hba1c, glucose, egfr, creat, acr = (
        "loinc:4548-4", "loinc:2345-7", "loinc:33914-3", "loinc:2160-0", "loinc:9318-7"
    )  # fmt: skip
    assert {hba1c, glucose} <= analyse("How is the blood sugar control lately?").keys
    assert {egfr, creat, acr} <= analyse("How is the kidney function?").keys
    assert {"loinc:29463-7", "loinc:39156-5"} <= analyse("How is the weight?").keys


def test_a_question_names_a_drugs_ingredients_and_classes() -> None:
    assert {"codeine", "acetaminophen"} <= analyse("Can I take co-codamol?").drugs
    assert "penicillins" in analyse("Can we prescribe amoxicillin?").drugs


# --- what ended is history ---------------------------------------------------------------------
def _stopped_and_current(eng: mc.MemoryEngine) -> tuple[list[Memory], list[Memory]]:
    stopped = [
        add(eng, f"Patient stopped {d}; not a current medication", "medication", 300 + k)
        for k, d in enumerate(("naproxen 220 mg", "amoxicillin 500 mg", "prednisone 20 mg"))
    ]
    current = [
        add(eng, f"Patient takes {d}", "medication", 900 + k)
        for k, d in enumerate(("albuterol inhaler", "fluticasone inhaler", "diphenhydramine 25 mg"))
    ]
    return stopped, current


def test_the_medications_question_gets_the_whole_current_list_on_one_line(
    engine: mc.MemoryEngine,
) -> None:
    stopped, current = _stopped_and_current(engine)
    res = engine.build_context("P-1", MEDS_Q, record_access=False)
    lines = res.text.splitlines()[2:-2]
    assert lines[0].startswith("1. Current medications: ")
    for name in ("albuterol", "fluticasone", "diphenhydramine"):
        assert name in lines[0]
    for name in ("naproxen", "amoxicillin", "prednisone"):
        assert name not in lines[0]  # what ended is never on the current list
    by_id = {i.scored.memory.id: i for i in res.items}
    for m in current:
        item = by_id[m.id]
        assert item.included and item.position == 1 and item.part_of == "list"
        assert "the question asks for the current medications" in item.rule
    # the stopped ones share one history line after the list: two lines, two places
    history = [by_id[m.id] for m in stopped]
    assert {i.part_of for i in history} == {"history"}
    assert {i.position for i in history} == {2}
    assert lines[1].startswith("2. Stopped or completed medications: naproxen")  # newest first
    assert res.places == 2 and len(lines) == 2


def test_an_ended_memory_never_takes_the_place_of_a_current_one(engine: mc.MemoryEngine) -> None:
    stopped = add(engine, "Patient stopped metformin because of diarrhoea", "medication", 5)
    current = add(engine, "Patient takes atorvastatin 20 mg nightly", "medication", 700)
    res = engine.build_context("P-1", "Tell me about the drugs", max_memories=1)
    by_id = {i.scored.memory.id: i for i in res.items}
    assert by_id[current.id].included and not by_id[stopped.id].included
    assert "what ended is history" in by_id[stopped.id].rule or by_id[stopped.id].rule.startswith(
        "not in the section"
    )


def test_an_ended_memory_is_shown_when_asked_about(engine: mc.MemoryEngine) -> None:
    _stopped_and_current(engine)
    why = add(engine, "Patient stopped metformin because of diarrhoea", "medication", 50)
    res = engine.build_context("P-1", "Why was metformin stopped?", record_access=False)
    item = next(i for i in res.items if i.scored.memory.id == why.id)
    assert item.included and item.part_of == ""  # its own line, the reason with it
    assert "because of diarrhoea" in res.text


def test_a_past_medications_question_lists_what_ended(engine: mc.MemoryEngine) -> None:
    stopped, _ = _stopped_and_current(engine)
    res = engine.build_context("P-1", "What medications were stopped?", record_access=False)
    by_id = {i.scored.memory.id: i for i in res.items}
    assert all(by_id[m.id].included for m in stopped)
    assert {by_id[m.id].part_of for m in stopped} == {"history"}
    assert "the question asks for what ended" in by_id[stopped[0].id].rule


# --- allergies under the budget ----------------------------------------------------------------
DOCUMENTED = "Patient has documented penicillin allergy with anaphylactic reaction"
RETEST = "Patient's penicillin allergy re-tested: reaction was a mild rash, not anaphylaxis"
SULFA = "Patient has a sulfa drug allergy causing rash"


@pytest.fixture
def contested(engine: mc.MemoryEngine) -> mc.MemoryEngine:
    """NW-1001's allergies: a documented anaphylaxis, a re-test pending review against it and
    a sulfa allergy, plus filler."""
    pol = mc.EnginePolicy(contradiction=mc.ContradictionPolicy(type_thresholds={"allergy": -1.0}))
    engine.save_policy(pol, "dr-a")
    add(engine, DOCUMENTED, "allergy", 400)
    res = engine.add_memory("P-1", RETEST, "allergy", created_at=NOW - timedelta(days=100))
    assert [s.state for s in res.supersessions] == [mc.SupersessionState.PENDING]
    add(engine, SULFA, "allergy", 300)
    for k, text in enumerate(
        ("Patient lives alone", "Patient walks a large dog twice a day", "Patient likes tea")
    ):
        add(engine, text, "social", 50 + k)
    return engine


def test_a_contested_allergy_is_one_line_saying_both(contested: mc.MemoryEngine) -> None:
    res = contested.build_context("P-1", "How is the patient doing?", record_access=False)
    (line,) = [ln for ln in res.text.splitlines() if "anaphylactic" in ln]
    assert line.split(". ", 1)[1].startswith("⚠️ " + DOCUMENTED + " (pending review: ")
    assert "re-tested" in line
    pair = [i for i in res.items if i.part_of == "pair"]
    assert len(pair) == 2 and len({i.position for i in pair}) == 1
    newer = next(i for i in pair if i.scored.memory.content == RETEST)
    assert "unconfirmed until a reviewer decides" in newer.rule
    assert not any(ln.endswith(RETEST) for ln in res.text.splitlines())  # no line of its own


def test_the_documented_allergy_is_in_every_section_that_holds_a_line(
    contested: mc.MemoryEngine,
) -> None:
    seen_forms = set()
    for budget in range(20, 200, 2):
        res = contested.build_context(
            "P-1", "How is the patient doing?", max_tokens=budget, record_access=False
        )
        assert res.tokens <= budget
        included = {i.scored.memory.content for i in res.included}
        if not res.text:
            assert {i.scored.memory.content for i in res.safety_omitted} >= {DOCUMENTED, SULFA}
            continue
        assert DOCUMENTED in included and SULFA in included, budget
        if RETEST in included:  # the unconfirmed statement is never kept without the documented
            assert DOCUMENTED in included
        else:  # shortened out: reported, and nothing less important is added after it
            assert any(i.scored.memory.content == RETEST for i in res.safety_omitted)
            assert all(i.scored.memory.memory_type == "allergy" for i in res.included)
        seen_forms.add(res.included[0].part_of if res.included else "")
    assert "allergies" in seen_forms  # at the tightest budgets the allergies share one line


def test_allergies_share_one_line_before_any_is_dropped(contested: mc.MemoryEngine) -> None:
    full = contested.build_context("P-1", "How is the patient doing?", record_access=False)
    one = ctx.render_section([("Allergies: penicillins; sulfonamides", True)])
    res = contested.build_context(
        "P-1", "How is the patient doing?", max_tokens=count_tokens(one), record_access=False
    )
    assert res.text in (one, one.replace("penicillins; sulfonamides", "sulfonamides; penicillins"))
    items = {i.scored.memory.content: i for i in res.items}
    assert items[DOCUMENTED].part_of == "allergies" and items[SULFA].part_of == "allergies"
    assert "the token budget holds no line for each" in items[SULFA].rule
    assert items[RETEST].reported  # the unconfirmed statement is not said: reported
    assert full.safety_omitted == ()


def test_what_is_reported_is_the_same_without_explaining_every_candidate(
    contested: mc.MemoryEngine,
) -> None:
    """An agent's call reads ``safety_omitted`` without the other candidates' explanations
    (issue 33): it names the same memories, in the same words, as the full explanation."""
    seen = 0
    for budget, places in [(b, 5) for b in range(20, 120, 4)] + [(None, 1), (None, 2)]:
        args = dict(max_tokens=budget, max_memories=places, record_access=False)
        first = contested.build_context("P-1", "How is the patient doing?", **args)
        alone = first.safety_omitted  # before any other candidate is explained
        full = contested.build_context("P-1", "How is the patient doing?", **args)
        explained = tuple(i for i in full.items if i.reported)
        assert alone == explained == full.safety_omitted, (budget, places)
        seen += bool(alone)
    assert seen >= 3  # the budgets and places above do leave safety memories out


# --- reactions by the drug dictionary ----------------------------------------------------------
def test_co_codamol_brings_up_the_codeine_reaction(engine: mc.MemoryEngine) -> None:
    reaction = add(
        engine, "Patient vomited repeatedly after taking codeine", "adverse_reaction", 200
    )
    cough = add(engine, "Patient developed a dry cough on lisinopril", "adverse_reaction", 200)
    for k in range(8):
        add(engine, f"Patient enjoys gardening project number {k}", "social", 10 + k)
    res = engine.build_context(
        "P-1", "Can I take co-codamol?", max_memories=1, max_tokens=60, record_access=False
    )
    by_id = {i.scored.memory.id: i for i in res.items}
    assert by_id[reaction.id].scored.safety  # codeine is an ingredient of co-codamol
    assert not by_id[cough.id].scored.safety  # lisinopril is not, and is no current drug
    assert by_id[reaction.id].included or by_id[reaction.id].reported


def test_a_reaction_to_a_class_member_is_safety_critical(engine: mc.MemoryEngine) -> None:
    reaction = add(engine, "Patient had hives after amoxicillin", "adverse_reaction", 200)
    res = engine.build_context("P-1", "Can we give penicillin V?", record_access=False)
    (item,) = [i for i in res.items if i.scored.memory.id == reaction.id]
    assert item.scored.safety and item.included


def test_a_current_medication_makes_its_reaction_safety_critical(engine: mc.MemoryEngine) -> None:
    add(engine, "Patient takes co-codamol for back pain", "medication", 100)
    reaction = add(engine, "Patient felt drowsy after codeine", "adverse_reaction", 200)
    res = engine.build_context("P-1", "How is the weather?", record_access=False)
    (item,) = [i for i in res.items if i.scored.memory.id == reaction.id]
    assert item.scored.safety


# --- lab results by meaning --------------------------------------------------------------------
def test_lab_results_are_found_by_the_body_system_a_question_names(
    engine: mc.MemoryEngine,
) -> None:
    labs = {
        "hba1c": add(engine, "Patient's HbA1c was 7.4% in August", "lab_result", 90),
        "egfr": add(engine, "Patient's eGFR was 58 mL/min in October", "lab_result", 60),
        "acr": add(engine, "Patient's urine ACR was 40 mg/g in October", "lab_result", 60),
        "weight": add(engine, "Patient weighed 86.1 kg at this session", "observation", 20),
    }
    for k in range(10):
        add(engine, f"Patient mentioned a blood donation drive number {k}", "observation", 5 + k)
    for q, wanted in (
        ("How is the patient's blood sugar control lately?", ("hba1c",)),
        ("Is the kidney function getting worse?", ("egfr", "acr")),
        ("Has the weight changed?", ("weight",)),
    ):
        res = engine.build_context("P-1", q, max_memories=3, record_access=False)
        got = {i.scored.memory.id: i for i in res.included}
        for w in wanted:
            assert labs[w].id in got, (q, w, res.text)
            assert got[labs[w].id].scored.keys  # found by its key, not only its words


def test_the_latest_labs_question_lists_each_analyte_once(engine: mc.MemoryEngine) -> None:
    add(engine, "Patient's HbA1c was 7.4% in August", "lab_result", 90)
    add(engine, "Patient's eGFR was 58 mL/min in October", "lab_result", 60)
    add(engine, "Patient's LDL cholesterol was 120 mg/dL in May", "lab_result", 150)
    res = engine.build_context("P-1", "What are the latest labs?", record_access=False)
    (line,) = [ln for ln in res.text.splitlines() if "Latest results:" in ln]
    for name in ("HbA1c 7.4 %", "eGFR 58", "LDL cholesterol 120"):
        assert name in line


# --- the lexicon's kinds are checked -----------------------------------------------------------
def test_a_kind_naming_an_unknown_type_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_core.facts import lexicon as lex_mod

    real = lex_mod.lexicon()
    questions = dict(real.questions)
    questions["kinds"] = [{"name": "bad", "types": ["medications"], "phrases": ["x y"]}]

    class Fake:
        def __getattr__(self, name: str) -> object:
            return questions if name == "questions" else getattr(real, name)

    monkeypatch.setattr(lex_mod, "lexicon", lambda: Fake())
    voc._kinds.cache_clear()
    try:
        with pytest.raises(mc.ConfigurationError, match=r"questions.json, kinds\[0\].types"):
            voc.kinds()
    finally:
        voc._kinds.cache_clear()


# --- the switches ------------------------------------------------------------------------------
def test_the_switches_give_the_seeds_line_per_memory(contested: mc.MemoryEngine) -> None:
    _stopped_and_current(contested)
    pol = contested.policy
    plain = mc.EnginePolicy.from_dict(
        {
            **pol.to_dict(),
            "context": {"lists": False, "history_last": False, "allergy_pairs": False},
        }
    )
    res = contested.build_context("P-1", MEDS_Q, record_access=False, policy=plain)
    assert all(i.part_of == "" for i in res.included)
    lines = res.text.splitlines()[2:-2]
    assert len(lines) == len(res.included)  # one memory, one line
    assert any(ln.endswith(RETEST) for ln in lines)  # the pair switched off: its own line
    on = contested.build_context("P-1", MEDS_Q, record_access=False)
    assert {i.part_of for i in on.included} >= {"list", "history", "pair"}
