"""The drug dictionary and the offline RuleExtractor: speaker turns, questions, negations, each
fact kind, and proposals -> review -> one audited add_memories call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path

import pytest

import memory_core as mc
from memory_core import drugs
from memory_core.ingest import Proposal, RuleExtractor
from memory_core.ingest.rules import sentences
from tests.conftest import NOW, Clock

PID = "NW-1001"


def contents(transcript: str, now: datetime = NOW) -> list[tuple[str, str]]:
    ext = RuleExtractor().extract(PID, transcript, now=now)
    return [(c.memory_type, c.content) for c in ext.candidates]


# --- drug dictionary ---------------------------------------------------------------------------
def test_resolve_brands_to_generics_with_spans() -> None:
    text = "Stopped Glucophage; started Ozempic, then lisinopril."
    found = drugs.resolve(text)
    assert [d.name for d in found] == ["metformin", "semaglutide", "lisinopril"]
    for d in found:
        assert text[d.start : d.end] == d.text  # punctuation stripped from the span
    assert [d.text for d in found] == ["Glucophage", "Ozempic", "lisinopril"]


def test_supplement_covers_allergy_classes_the_dictionary_lacks() -> None:
    found = drugs.resolve("Allergies: sulfa drugs, NSAIDs, opioids, contrast dye and latex.")
    assert [(d.name, d.origin) for d in found] == [
        ("sulfonamides", "supplement"),
        ("nsaids", "supplement"),
        ("opioids", "supplement"),
        ("iodinated contrast", "supplement"),
        ("latex", "supplement"),
    ]


def test_resolve_from_several_threads_at_once() -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"dose {i}: metformin and Ozempic, sulfa" for i in range(16)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(drugs.canonical_names, texts))
    assert all(r == {"metformin", "semaglutide", "sulfonamides"} for r in results)


def test_lab_words_are_not_drugs() -> None:
    assert drugs.resolve("Her LDL cholesterol and fasting glucose, potassium and vitamin") == []


# --- transcript structure ----------------------------------------------------------------------
def test_speaker_turns_and_offsets() -> None:
    t = "Header line\nClinician: Your HbA1c was 7.6% on 2026-05-20. Good.\nPatient: Thanks!"
    ss = sentences(t)
    assert [(s.speaker, s.text) for s in ss] == [
        ("clinician", "Your HbA1c was 7.6% on 2026-05-20."),
        ("clinician", "Good."),
        ("patient", "Thanks!"),
    ]
    assert all(t[s.start : s.end] == s.text for s in ss)


def test_questions_are_not_facts() -> None:
    t = (
        "Clinician: Are you allergic to penicillin?\n"
        "Clinician: Do you prefer morning appointments?\n"
        "Clinician: Did you stop the metformin ER?"
    )
    assert contents(t) == []


@pytest.mark.parametrize(
    "line",
    [
        "Patient: No known drug allergies.",
        "Clinician: Patient denies allergies.",
        "Clinician: NKDA.",
        "Patient: I'm not allergic to latex.",
        "Patient: No allergies that I know of.",
        "Clinician: She denies any drug allergies, including penicillin.",
    ],
)
def test_negated_allergies_propose_nothing(line: str) -> None:
    assert [c for c in contents(line) if c[0] == "allergy"] == []


# --- each fact kind ----------------------------------------------------------------------------
def test_allergy_with_reaction_and_severity() -> None:
    assert contents("Patient: I'm allergic to penicillin — I get hives, fairly severe.") == [
        ("allergy", "Patient has a penicillin allergy causing hives (severe)")
    ]
    assert contents("Patient: I have a sulfa allergy, it gave me a rash.") == [
        ("allergy", "Patient has a sulfa allergy causing rash")
    ]


def test_allergy_from_the_topic_of_the_conversation() -> None:
    t = "Clinician: Let's go through your allergies.\nPatient: Sulfa drugs gave me a rash."
    assert contents(t) == [("allergy", "Patient has a sulfa drug allergy causing rash")]
    # the same words outside an allergy conversation are an adverse reaction at most
    assert ("allergy", "Patient has a sulfa drug allergy causing rash") not in contents(
        "Patient: Sulfa drugs gave me a rash."
    )


def test_food_allergen_in_an_allergy_conversation_and_intolerances() -> None:
    t = (
        "Patient: I can't take codeine, it makes me vomit.\n"
        "Clinician: Any allergies besides the codeine reaction?\n"
        "Patient: Just shellfish, I swell up.\n"
        "Patient: No, nothing else."
    )
    assert contents(t) == [
        ("adverse_reaction", "Patient reports vomiting on codeine"),
        ("allergy", "Patient has a shellfish allergy causing swelling"),
    ]


def test_dose_cut_named_after_the_drug_and_blood_pressure() -> None:
    t = (
        "Patient: The metoprolol makes me really tired, so my GP cut it down to 25 mg.\n"
        "Clinician: Blood pressure today is 138 over 82."
    )
    assert contents(t, datetime(2026, 11, 1, 12, tzinfo=UTC)) == [
        ("adverse_reaction", "Patient reports fatigue on metoprolol"),
        ("medication", "Patient's metoprolol dose decreased to 25 mg"),
        ("vital_sign", "Patient's blood pressure was 138/82 on 2026-11-01"),
    ]


def test_medication_changes() -> None:
    t = (
        "Patient: I stopped metformin ER two weeks ago because of persistent diarrhoea.\n"
        "Clinician: We'll start empagliflozin 10 mg once daily.\n"
        "Clinician: We'll switch you from lisinopril to losartan 50 mg daily.\n"
        "Clinician: I'm increasing your metformin to 1000 mg twice daily.\n"
        "Patient: I take atorvastatin 20 mg at night.\n"
        "Clinician: Your lisinopril stays at 20 mg daily."
    )
    got = contents(t)
    # "two weeks ago" said on 2026-06-01: the stop is dated, and its reason kept
    assert (
        "medication",
        "Patient stopped metformin ER around 2026-05-18 because of persistent diarrhoea",
    ) in got
    assert ("medication", "Patient started empagliflozin 10 mg once daily") in got
    assert ("medication", "Patient switched from lisinopril to losartan 50 mg daily") in got
    assert ("medication", "Patient's metformin dose increased to 1000 mg twice daily") in got
    assert ("medication", "Patient takes atorvastatin 20 mg at night") in got
    assert ("medication", "Patient stopped atorvastatin because of muscle aches") in contents(
        "Clinician: We are stopping atorvastatin because of your muscle aches, and starting "
        "rosuvastatin 10 mg at night."
    )
    assert ("medication", "Patient takes lisinopril 20 mg daily") in got


def test_a_switch_to_a_drug_whose_old_drug_is_unnamed_or_unknown_is_a_change() -> None:
    """ "Switched you to X" names the new drug only (the old one may be a brand the dictionary
    lacks): the patient is on X now, with its dose (a combination inhaler's strength "100/6"
    too), dated by "in May" -- the month, no "may" of possibility; a switch only weighed, or
    planned for later, is no change."""
    got = contents("Nurse: In May we switched you to Symbicort 100/6, two puffs twice a day.")
    assert got == [
        (
            "medication",
            "Patient switched to budesonide/formoterol (Symbicort) 100/6 two puffs twice a day"
            " in May 2026",
        )
    ]
    # from two drugs to a third: both are what was switched from
    assert contents(
        "Nurse: We switched you from the Clenil inhaler and the blue salbutamol to Symbicort."
    ) == [
        (
            "medication",
            "Patient switched from clenil and albuterol (salbutamol) to budesonide/formoterol "
            "(Symbicort)",
        )
    ]
    # a switch from one drug to another is dated by what is said beside it
    assert contents(
        "Nurse: At the review in May - on 12/05 - we switched you from the blue salbutamol to "
        "Symbicort 100/6."
    ) == [
        (
            "medication",
            "Patient switched from albuterol (salbutamol) to budesonide/formoterol (Symbicort) "
            "100/6 on 2026-05-12",
        )
    ]
    assert contents("Clinician: We'll change him over to apixaban 5 mg twice daily.") == [
        ("medication", "Patient switched to apixaban 5 mg twice daily")
    ]
    assert contents("Clinician: We might switch you to apixaban next time.") == []
    assert contents("Clinician: We will switch you to apixaban at the next review.") == []
    assert [
        c for c in contents("Patient: I moved to Leeds in March.") if c[0] == "medication"
    ] == []


def test_a_dose_said_in_a_sentence_of_its_own_is_the_drug_just_named() -> None:
    """ "I'd like to start a medicine called donepezil. It's 5 milligrams at night.": the dose
    is donepezil's, not an observation of its own."""
    assert contents(
        "Clinician: I'd like to start a medicine called donepezil. It's 5 milligrams at night."
    ) == [("medication", "Patient started donepezil 5 mg at night")]
    assert contents(
        "Clinician: I'd like to switch you from Lantus to Tresiba. We'll start at 18 units once "
        "a day."
    ) == [
        (
            "medication",
            "Patient switched from insulin glargine (Lantus) to insulin degludec (rdna origin) "
            "(Tresiba) 18 units once a day",
        )
    ]
    # a drug that already has its dose keeps it; a dose in another turn is not amended in
    got = contents("Clinician: Start ramipril 2.5 mg daily. It's 5 mg tablets at the pharmacy.")
    assert ("medication", "Patient started ramipril 2.5 mg daily") in got


def test_a_symptom_the_clinician_calls_a_known_side_effect_is_an_adverse_reaction() -> None:
    """The patient tells of a symptom; the clinician says it is a known side effect of a drug:
    an adverse reaction to it, whether the symptom is named again or "that"."""
    got = contents(
        "Patient: I get breathless when I walk up the stairs.\n"
        "Nurse: That's a known side effect of ticagrelor, and it often settles."
    )
    assert ("adverse_reaction", "Patient reports breathless on ticagrelor") in got
    got = contents(
        "Patient: His temper's been short, real irritability, since the dose went up.\n"
        "Nurse: Irritability is a known side effect of levetiracetam."
    )
    assert ("adverse_reaction", "Patient reports irritability on levetiracetam") in got
    # "that" with nothing told before it is nobody's symptom
    got = contents("Nurse: That's a known side effect of ticagrelor.")
    assert [c for c in got if c[0] == "adverse_reaction"] == []


@pytest.mark.parametrize(
    ("brand", "generic"),
    [
        ("Microgynon", "ethinyl estradiol/levonorgestrel"),
        ("Nexplanon", "etonogestrel"),
        ("Clenil", "beclomethasone"),
        ("Adcal-D3", "calcium carbonate/cholecalciferol"),
    ],
)
def test_uk_brands_the_dictionary_lacks(brand: str, generic: str) -> None:
    """Brands of the UK's pill, implant, inhaler and calcium: the dictionary's own spellings
    of their generics, so a brand and its generic are one key."""
    assert [d.name for d in drugs.resolve(f"I'm on {brand}")] == [generic]


def test_a_plan_handed_over_is_a_plan() -> None:
    assert (
        contents("Nurse: I'm giving you a new written asthma action plan and a letter for school.")[
            0
        ][0]
        == "care_plan"
    )


def test_an_answer_that_gives_up_the_habit_asked_about() -> None:
    """ "Do you smoke?" -- "I stopped in January.": the patient quit smoking, in January; an
    answer about a medicine asked about is the medicine rules', not a habit."""
    got = contents("Nurse: Do you smoke?\nPatient: I stopped in January.")
    assert ("social", "Patient quit smoking in January 2026") in got
    got = contents("Nurse: Do you drink alcohol?\nPatient: I gave up last year.")
    assert ("social", "Patient quit drinking in 2025") in got
    got = contents("Nurse: Are you still taking the metformin?\nPatient: I stopped in January.")
    assert not [c for c in got if c[0] == "social"]


@pytest.mark.parametrize(
    ("asked", "answer", "named"),
    [
        ("And food and drink?", "I've given up fizzy drinks completely.", "fizzy drinks"),
        ("Do you smoke at all?", "I gave up the wine at New Year.", "wine"),
    ],
)
def test_an_answer_that_names_what_it_gave_up_is_not_the_habit_asked_about(
    asked: str, answer: str, named: str
) -> None:
    """ "And food and drink?" -- "I've given up fizzy drinks completely.": what was given up is
    named, so it is no "quit drinking" (alcohol); the answer is read as said."""
    got = contents(f"Doctor: {asked}\nPatient: {answer}")
    assert not [c for c in got if c[1].startswith("Patient quit")], got
    assert [c for c in got if c[0] == "social" and named in c[1]], got


def test_the_first_dose_taken_is_a_start() -> None:
    got = contents(
        "Patient: Picked it up Saturday and took the first losartan yesterday morning.",
        datetime(2026, 4, 6, 12, tzinfo=UTC),
    )
    assert got == [("medication", "Patient started losartan on 2026-04-05")]


def test_supplements_lay_readings_and_a_value_said_before_its_name() -> None:
    """A multivitamin is a medication; "their sugar was 11.2" is a glucose; "84kg on the
    bathroom scales" a weight, its value said before what it measures (in a unit of it)."""
    assert ("medication", "Patient takes multivitamin every morning") in contents(
        "Aide: And a multivitamin every morning."
    )
    got = contents("Patient: their sugar was 11.2 this morning, is that bad")
    assert [c for c in got if c[0] == "lab_result" and "glucose was 11.2" in c[1]]
    got = contents("Patient: 84kg on the bathroom scales this morning")
    assert [c for c in got if c[0] == "vital_sign" and "body weight was 84 kg" in c[1]]
    # a number before a name, in no unit of it, is no value of it
    got = contents("Patient: 2 tablets a day, and weight stable.")
    assert [c for c in got if c[0] == "vital_sign"] == []


def test_brand_names_resolve_to_the_generic_in_the_statement() -> None:
    assert contents("Patient: I stopped taking Glucophage.") == [
        ("medication", "Patient stopped metformin (Glucophage)")
    ]


def test_hedged_or_negated_medication_talk_is_not_a_change() -> None:
    t = (
        "Clinician: We might consider starting semaglutide later.\n"
        "Patient: I'm not taking the atorvastatin 20 mg any more."
    )
    assert [c for c in contents(t) if c[0] == "medication"] == []


def test_adverse_reaction_and_its_absence() -> None:
    assert contents("Patient: The lisinopril gave me a dry cough.") == [
        ("adverse_reaction", "Patient reports dry cough on lisinopril")
    ]
    # no reaction: the medicine is the patient's (an over-the-counter one, said without a dose)
    assert contents("Patient: I take ibuprofen without problems.") == [
        ("medication", "Medication: They take ibuprofen without problems")
    ]


def test_lab_values_with_unit_and_date() -> None:
    now = datetime(2026, 11, 1, 12, tzinfo=UTC)
    ext = RuleExtractor().extract(
        PID,
        "Clinician: Your HbA1c came back at 7.6% on 2026-10-20.\n"
        "Clinician: Your eGFR was 58 mL/min in September.\n"
        "Clinician: Potassium 5.4 mmol/L.\n"
        "Clinician: Your LDL was 96 in March.",
        now=now,
    )
    got = [(c.content, c.created_at) for c in ext.candidates]
    assert got == [
        ("Patient's HbA1c was 7.6% on 2026-10-20", datetime(2026, 10, 20, tzinfo=UTC)),
        ("Patient's eGFR was 58 mL/min in September 2026", datetime(2026, 9, 1, tzinfo=UTC)),
        ("Patient's potassium was 5.4 mmol/L", None),
        ("Patient's LDL cholesterol was 96 in March 2026", datetime(2026, 3, 1, tzinfo=UTC)),
    ]


def test_preferences_and_social_facts() -> None:
    t = (
        "Patient: Afternoon appointments work best for me now.\n"
        "Patient: I prefer text messages to phone calls.\n"
        "Patient: My first language is Spanish, so I prefer Spanish.\n"
        "Patient: Please give me written instructions.\n"
        "Patient: Yes, I live alone, but my daughter visits on weekends.\n"
        "Patient: I quit smoking in 2019.\n"
        "Patient: I work night shifts."
    )
    assert contents(t) == [
        ("preference", "Patient now prefers afternoon appointments"),
        ("preference", "Patient prefers to be contacted by text message"),
        ("preference", "Patient prefers to communicate in Spanish"),
        ("preference", "Patient prefers written instructions"),
        ("social", "Patient lives alone"),
        ("social", "Patient's daughter visits on weekends"),
        ("social", "Patient quit smoking in 2019"),
        ("social", "Patient works night shifts"),
    ]


# --- through the engine ------------------------------------------------------------------------
def demo_transcript(name: str) -> str:
    return files("memory_core").joinpath(f"data/demo/{name}").read_text(encoding="utf-8")


def test_extract_writes_nothing_and_accept_writes_once_audited(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    # the day after the transcript's date: its "two weeks ago" is read against that date (from
    # an earlier day, a relative date in a future-dated transcript is refused: issue 34)
    clock.now = datetime(2026, 10, 29, 12, tzinfo=UTC)
    engine.add_memory(
        PID,
        "Patient is on metformin ER 500 mg once daily",
        "medication",
        created_at=NOW - timedelta(days=60),  # before the stop the transcript dates
    )
    before = (len(engine.list_memories(PID)), len(engine.audit_log(limit=1000)))
    text = demo_transcript("transcript_nw1001_followup.txt")
    props = engine.extract_memories(PID, text, name="nw1001.txt")
    assert (len(engine.list_memories(PID)), len(engine.audit_log(limit=1000))) == before
    assert props and props.rejected == []
    stop = next(p for p in props if "stopped metformin" in p.content)
    assert isinstance(stop, Proposal)
    assert stop.memory_type == "medication"
    assert text[stop.start : stop.end] == stop.evidence
    assert stop.source == f"transcript:nw1001.txt@{stop.start}-{stop.end}"
    assert stop.importance == 7.0  # the type's default
    # the supersessions shown are exactly preview_supersessions' decision
    preview = engine.preview_supersessions(
        PID, stop.content, stop.memory_type, created_at=stop.created_at
    )
    assert [(s.memory_id, s.mode) for s in stop.supersedes] == [
        (h.memory.id, h.mode) for h in preview
    ]
    assert len(stop.supersedes) == 1

    results = engine.accept_proposals(PID, [stop, props[0]], by="dr-reviewer")
    assert [r.memory.content for r in results] == [stop.content, props[0].content]
    assert results[0].memory.source == stop.source
    ids = {r.memory.id for r in results}
    adds = [a for a in engine.audit_log(limit=1000) if a.action == "add" and a.entity_id in ids]
    assert len(adds) == 2 and {a.actor for a in adds} == {"dr-reviewer"}


def test_accepting_another_patients_proposal_writes_nothing(engine: mc.MemoryEngine) -> None:
    props = engine.extract_memories(PID, "Patient: I live alone.")
    with pytest.raises(mc.ValidationError, match="patient_id"):
        engine.accept_proposals("NW-1002", props, by="r")
    assert engine.list_memories("NW-1002") == [] and engine.list_memories(PID) == []


def test_reviewer_edits_are_what_is_saved(engine: mc.MemoryEngine) -> None:
    (p,) = engine.extract_memories(PID, "Patient: I live alone.")
    edited = {**p.__dict__, "content": "Patient lives alone since 2024", "importance": 6.0}
    (res,) = engine.accept_proposals(PID, [edited], by="r")
    assert (res.memory.content, res.memory.importance) == ("Patient lives alone since 2024", 6.0)


def test_bad_transcripts_are_refused(engine: mc.MemoryEngine) -> None:
    with pytest.raises(mc.ValidationError, match="transcript"):
        engine.extract_memories(PID, "   ")
    with pytest.raises(mc.ValidationError, match="patient_id"):
        engine.extract_memories("bad id", "Patient: I live alone.")


# --- command line ------------------------------------------------------------------------------
def test_cli_extract_dry_run_then_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memory_core.cli import main

    url = f"sqlite:///{tmp_path}/cli.db"
    path = tmp_path / "visit.txt"
    path.write_text("Patient: I live alone.\nClinician: Your HbA1c was 7.1% on 2026-05-02.\n")
    base = ["--store", url, "--embedder", "hashing", "extract", PID, str(path)]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "[social] Patient lives alone" in out and "dry run: nothing written" in out
    assert main([*base, "--apply", "--by", "dr-lee"]) == 0
    assert "saved 2 memories" in capsys.readouterr().out
    eng = mc.open_engine(url, "hashing")
    sources = sorted(m.source or "" for m in eng.list_memories(PID))
    assert all(s.startswith("transcript:visit.txt@") for s in sources) and len(sources) == 2
    eng.store.close()


@pytest.mark.parametrize(
    "extra",
    [["--extractor", "gpt"], ["--extractor", "openai:"]],
)
def test_cli_extract_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    from memory_core.cli import main

    path = tmp_path / "visit.txt"
    path.write_text("Patient: I live alone.\n")
    base = ["--store", f"sqlite:///{tmp_path}/cli.db", "--embedder", "hashing", "extract"]
    assert main([*base, PID, str(path), *extra]) == 2
    assert capsys.readouterr().err.startswith("error: --extractor")
    assert main([*base, PID, str(tmp_path / "missing.txt")]) == 2
    assert main([*base, "bad id", str(path)]) == 2
    (tmp_path / "empty.txt").write_text("  \n")
    assert main([*base, PID, str(tmp_path / "empty.txt")]) == 2
    assert "transcript" in capsys.readouterr().err
