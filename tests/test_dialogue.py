"""Transcripts read as dialogue (issue 24, item 4): the twenty synthetic transcripts of
``eval/dialogue`` against their expected facts (the targets: >= 90 % proposed with the right
type, value and date, none about another person, no wrong date), and each dialogue rule on
its own: confirmed questions, pronouns, answers to "any allergies?", values paired with their
dates, other people, decimal commas, speakers and the session date, dates as said."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import memory_core as mc
from eval.dialogue import cases, judge, rule_proposals, summary
from memory_core.ingest.dates import dates_in, session_date
from memory_core.ingest.dialogue import split
from memory_core.ingest.rules import RuleExtractor
from tests.conftest import Clock

PID = "NW-1002"
NOW = datetime(2026, 11, 26, 18, tzinfo=UTC)  # a Thursday


def got(transcript: str, now: datetime = NOW) -> list[tuple[str, str, str | None]]:
    ext = RuleExtractor().extract(PID, transcript, now=now)
    return [
        (c.memory_type, c.content, c.created_at.date().isoformat() if c.created_at else None)
        for c in ext.candidates
    ]


# --- the twenty transcripts ---------------------------------------------------------------------
def test_the_twenty_transcripts_meet_the_targets() -> None:
    results = [judge(c, rule_proposals(c)) for c in cases()]
    s = summary(results)
    assert s["facts"] == 100 and len(results) == 20
    assert s["share"] >= 0.9, [(r.case.file, r.missed) for r in results if r.missed]
    assert s["other_person"] == 0, [r.other_person for r in results if r.other_person]
    assert s["wrong_date"] == 0, [r.wrong_date for r in results if r.wrong_date]


def test_the_judge_counts_a_wrong_date_and_another_persons_fact() -> None:
    case = next(c for c in cases() if c.file.startswith("09_"))
    right = rule_proposals(case)
    bad = [
        ("vital_sign", "Patient's peak flow was 310 L/min", datetime(2026, 1, 1, tzinfo=UTC)),
        ("allergy", "Patient has an egg allergy", None),
    ]
    res = judge(case, [p for p in right if "peak flow" not in p[1]] + bad)
    assert len(res.wrong_date) == 1 and len(res.other_person) == 1
    assert len(res.correct) == len(case.facts) - 1


# --- each dialogue rule -----------------------------------------------------------------------
def test_a_confirmed_question_is_the_patients_fact() -> None:
    t = "Clinician: You're on sitagliptin 100 mg now?\nPatient: That's right, every morning."
    assert ("medication", "Patient takes sitagliptin 100 mg", None) in got(t)
    ext = RuleExtractor().extract(PID, t, now=NOW)
    first = ext.candidates[0]
    assert t[first.start : first.end].startswith("You're on") and t[first.end - 1] == "."
    # a question the patient denies, or leaves unanswered, is no fact
    assert got("Clinician: You're on sitagliptin 100 mg now?\nPatient: No, I never started.") == []
    assert got("Clinician: You're on sitagliptin 100 mg now?") == []


def test_it_after_a_question_about_a_drug_is_that_drug() -> None:
    t = (
        "Clinician: How are you getting on with the metformin?\n"
        "Patient: Honestly not well. I had diarrhoea every day so I stopped taking it two weeks "
        "ago."
    )
    assert got(t) == [
        ("adverse_reaction", "Patient reports diarrhoea on metformin", None),
        (
            "medication",
            "Patient stopped metformin around 2026-11-12 because of diarrhoea",
            "2026-11-12",
        ),
    ]
    dose = "Nurse: How much warfarin are you taking?\nPatient: 5 mg every evening."
    assert got(dose) == [("medication", "Patient takes warfarin 5 mg every evening", None)]


def test_a_reaction_in_answer_to_any_allergies_is_an_allergy() -> None:
    t = "Clinician: Any new allergies?\nPatient: Codeine gave me hives last month."
    assert got(t) == [("allergy", "Patient has a codeine allergy causing hives", "2026-10-01")]
    # the same words outside that question: an adverse reaction
    assert got("Patient: Codeine gave me hives last month.")[0][0] == "adverse_reaction"
    # the substance, then its reaction in the next sentence
    two = "Nurse: Does she have any allergies?\nDaughter: Penicillin. It gave her a nasty rash."
    assert got(two) == [("allergy", "Patient has a penicillin allergy causing rash", None)]
    # a substance named alone is an allergy without a reaction; an intolerance is no allergy
    assert got("Clinician: Any allergies?\nPatient: Latex.") == [
        ("allergy", "Patient has a latex allergy", None)
    ]
    assert got("Clinician: Any allergies?\nPatient: Codeine makes me vomit.") == [
        ("adverse_reaction", "Patient reports vomiting on codeine", None)
    ]


def test_values_take_the_dates_said_beside_them() -> None:
    t = "Clinician: Your HbA1c was 7.4 % last week, down from 8.1 % in June."
    assert got(t) == [
        ("lab_result", "Patient's HbA1c was 7.4% in the week of 2026-11-16", "2026-11-16"),
        ("lab_result", "Patient's HbA1c was 8.1% in June 2026", "2026-06-01"),
    ]
    listed = "User: LDL 3.1 mmol/L and total cholesterol 5.4 mmol/L, taken on 20 November"
    assert [x[2] for x in got(listed)] == ["2026-11-20", "2026-11-20"]
    assert got("Clinician: Your INR yesterday was 3.4.") == [
        ("lab_result", "Patient's INR was 3.4 on 2026-11-25", "2026-11-25")
    ]


def test_the_older_of_two_readings_supersedes_nothing_newer(
    engine: mc.MemoryEngine, clock: Clock
) -> None:
    clock.now = NOW  # the session is today: an add dated after the engine's clock is refused
    t = "Clinician: Your HbA1c was 7.4 % last week, down from 8.1 % in June."
    props = engine.extract_memories(PID, t, now=NOW)
    engine.accept_proposals(PID, props, by="r", now=NOW)
    active = [m.content for m in engine.list_memories(PID, include_inactive=False)]
    assert "Patient's HbA1c was 7.4% in the week of 2026-11-16" in active


def test_decimal_commas_are_decimals() -> None:
    assert got("Patient: Mi HbA1c fue 7,4 %.") == [("lab_result", "Patient's HbA1c was 7.4%", None)]
    assert got("Interpreter: She says her TSH was 4,2 in October.")[0][1] == (
        "Patient's TSH was 4.2 in October 2026"  # no unit said: none written (issue 30)
    )


@pytest.mark.parametrize(
    "line",
    [
        "Clinician: NW-1001 is allergic to peanuts.",
        "Patient: My husband has diabetes and takes metformin 500 mg twice daily.",
        "Carer: Mrs Okafor next door is allergic to penicillin.",
        "Mum: His sister, NW-2099, is allergic to eggs.",
    ],
)
def test_a_statement_about_another_person_is_never_proposed(line: str) -> None:
    t = "Clinician: How has Mr Lewis been?\n" + line
    assert got(t) == []


def test_a_relative_speaking_for_the_patient() -> None:
    t = "Daughter: My mum takes donepezil 10 mg at night. She lives with me and my husband now."
    assert got(t) == [
        ("medication", "Patient takes donepezil 10 mg at night", None),
        ("social", "Patient lives with their daughter and their daughter's husband", None),
    ]


def test_negated_and_hypothetical_talk_proposes_nothing() -> None:
    t = (
        "Clinician: If the cough comes back we might try losartan.\n"
        "Clinician: Have you ever had a reaction to contrast dye?\n"
        "Patient: No, never.\n"
        "Clinician: Any dizziness on the spironolactone?\n"
        "Patient: No, no dizziness."
    )
    assert got(t) == []


# --- speakers, the session's date, dates as said ---------------------------------------------
def test_speakers_and_the_header() -> None:
    t = (
        "Session: NW-1 review\nDate: 2026-11-24\n\n"
        "Dr Osei: Morning.\nMaria (daughter): Hello.\nUser: hi\nBot: Hello!\nNote: not a speaker"
    )
    header, ss = split(t)
    assert "Date: 2026-11-24" in header
    assert [(s.speaker, s.relation, s.text) for s in ss] == [
        ("clinician", "", "Morning."),
        ("patient", "daughter", "Hello."),
        ("patient", "", "hi"),
        ("clinician", "", "Hello!"),
        ("clinician", "", "Note: not a speaker"),
    ]
    assert session_date(header, NOW) == datetime(2026, 11, 24, tzinfo=UTC)
    assert session_date("Date: 2027-01-01", NOW) is None  # after now: not the session's


def test_relative_dates_read_against_the_session() -> None:
    session = datetime(2026, 11, 24, 9, tzinfo=UTC)  # a Tuesday
    said = {
        "on Friday": "2026-11-20",
        "last week": "2026-11-16",
        "two weeks ago": "2026-11-10",
        "three months ago": "2026-08",
        "in June": "2026-06",
        "in December": "2025-12",
        "since August": "2026-08",
        "12 October": "2026-10-12",
        "October 12th, 2025": "2025-10-12",
        "yesterday": "2026-11-23",
        "this morning": "2026-11-24",
        "in 2019": "2019",
        "last month": "2026-10",
    }
    for text, want in said.items():
        (d,) = dates_in(f"It was {text}.", session)
        assert d.date == want, text
    assert dates_in("You may take it with food", session) == []  # "may" is no month here
    assert dates_in("Your follow-up is on 2027-03-01", session) == []  # a plan, not a past date
    assert dates_in("since August", session)[0].phrase == "since August 2026"


def test_a_state_said_to_have_lasted_is_dated_from_its_start() -> None:
    """ "I've had a dry cough for about 3 weeks", "My ankles have been puffy for two months":
    what has lasted to now began that long ago -- since then, as "N weeks ago" is read. A
    course's length ("prednisolone for five days") and a length with no number ("for weeks")
    date nothing."""
    session = datetime(2026, 11, 24, 9, tzinfo=UTC)
    said = {
        "I've had a dry tickly cough for about 3 weeks now.": ("2026-11-03", True),
        "My ankles have been puffy for two months.": ("2026-09", True),
        "She has had the rash for a year.": ("2025", True),
    }
    for text, (want, since) in said.items():
        (d,) = dates_in(text, session)
        assert d.date == want and d.phrase.startswith("since") == since, (text, d)
    assert dates_in("Take prednisolone 30 mg for five days.", session) == []
    assert dates_in("They've been puffy for weeks.", session) == []


def test_a_slashed_date_either_way_round_is_read_the_way_its_month_agrees() -> None:
    """ "12/05" is the 12th of May in Europe and the 5th of December in the US: read only where
    a month said beside it settles which ("in May - on 12/05"), or where only one way falls in
    the month before the session (tests/test_dialogue_stories.py); "6/12" is six months."""
    session = datetime(2026, 11, 11, 12, tzinfo=UTC)
    days = [d.date for d in dates_in("At the review in May - on 12/05 - we switched you.", session)]
    assert days == ["2026-05", "2026-05-12"]
    assert [d.date for d in dates_in("Seen in December, on 12/05.", session)] == [
        "2025-12",
        "2025-12-05",
    ]
    assert [d.date for d in dates_in("Seen on 12/05.", session)] == []  # no month: unread
    assert [d.date for d in dates_in("F/u 6/12 in March.", session)] == ["2026-03"]
    assert [d.date for d in dates_in("BP 128/74 in May.", session)] == ["2026-05"]
    december = datetime(2026, 12, 15, 12, tzinfo=UTC)
    assert [d.date for d in dates_in("Review 6/12.", december)] == []  # six months


def test_a_confirmed_question_of_the_patients_life_is_their_statement() -> None:
    """ "So you're living alone now?" -- "Yes.": the patient lives alone (a question said as a
    statement is confirmed as one is asked); a contrast after the "yes" is another statement,
    and a confirmed question about a dose states no habit."""
    assert [m for m, _c, _d in got("Nurse: So you're living alone now?\nPatient: Yes.")] == [
        "social"
    ]
    assert [m for m, _c, _d in got("Nurse: Are you living alone now?\nPatient: Yes.")] == ["social"]
    # an answer that says the fact itself is read as said, once
    got_ = got("Nurse: Do you live alone?\nPatient: Yes, I live alone.")
    assert [(m, c) for m, c, _d in got_] == [("social", "Patient lives alone")]
    t = "Nurse: Is he eating well?\nCarer: Yes, though Mrs Okafor next door has had a cough."
    assert not [c for _m, c, _d in got(t) if "eating" in c.lower() and "cough" in c.lower()]
    assert [m for m, _c, _d in got("Nurse: You're on 22 units at night?\nPatient: Yeah, 22.")] in (
        [],
        ["medication"],
    )


def test_family_history_is_dated_by_what_is_said_of_it() -> None:
    """ "my mom had a stroke last Tues" in a message sent on Monday the 6th of April: the
    relative's stroke is of Tuesday the 31st of March, not of the session."""
    t = (
        "Date: 2026-04-10\n"
        "[2026-04-06 19:30] Patient: Sorry for the long message but my mom had a stroke last "
        "Tues, she's 81, she's in rehab now."
    )
    fh = [(c, d) for m, c, d in got(t, datetime(2026, 4, 10, 18, tzinfo=UTC)) if "stroke" in c]
    assert fh and fh[0][1] == "2026-03-31"


def test_a_date_said_of_a_value_compared_with_is_not_the_results() -> None:
    """ "Your eGFR is 52, a little lower than the 56 in November": November is the 56's; the
    52 keeps the date of the tests talked of ("your kidney blood test was last Tuesday")."""
    t = (
        "Date: 2026-05-10\n"
        "Dr: Ernest, your kidney blood test was last Tuesday. Your eGFR is 52, a little lower "
        "than the 56 in November, but stable enough."
    )
    labs = [
        (c, d) for m, c, d in got(t, datetime(2026, 5, 10, 18, tzinfo=UTC)) if m == "lab_result"
    ]
    assert ("Patient's eGFR was 52 on 2026-05-05", "2026-05-05") in labs
    assert ("Patient's eGFR was 56 in November 2025", "2025-11-01") in labs


def test_results_listed_after_one_date_all_take_it() -> None:
    """ "On the 10th the potassium was 5.1 and the creatinine 142": one date for the list (the
    first result's "was" compares it with nothing); a value compared with one said after it
    keeps its own."""
    now = datetime(2026, 9, 14, 18, tzinfo=UTC)
    for said in (
        "His last bloods, on the tenth, the potassium was 5.1 and the creatinine 142.",
        "Before discharge, on the 10th, the potassium was 5.1 and the creatinine 142.",
    ):
        labs = {c: d for m, c, d in got(f"Date: 2026-09-14\nNurse: {said}", now)}
        dated = {c: d for c, d in labs.items() if "creatinine" in c or "potassium" in c}
        assert sorted(dated.values()) == ["2026-09-10", "2026-09-10"], labs


def test_a_clause_is_dated_by_since_in_the_clause_after_it() -> None:
    """ "I'm her carer really - since her diagnosis in February": February dates the caring."""
    t = "Date: 2026-05-20\nPatient: I'm her carer really - since her diagnosis in February."
    social = [(c, d) for m, c, d in got(t, datetime(2026, 5, 20, 18, tzinfo=UTC)) if m == "social"]
    assert social and social[0][1] == "2026-02-01"


def test_the_babys_or_a_relatives_own_thing_is_not_the_patients() -> None:
    """ "The scan said the baby's kidney had a bit of dilatation": the baby's finding, not the
    mother's procedure; the people are dialogue.json's, the one list of them for this."""
    t = "Midwife: The scan last month said the baby's kidney had a bit of renal pelvis dilatation."
    assert got(t) == []


def test_a_qualitative_result_said_is_a_result() -> None:
    """ "Your chlamydia test from a fortnight ago came back positive": a lab result, positive,
    dated a fortnight back; "The COVID test was negative" is a result, not an immunisation."""
    now = datetime(2026, 5, 20, 18, tzinfo=UTC)
    t = "Date: 2026-05-20\nNurse: Your chlamydia test from a fortnight ago came back positive."
    assert got(t, now) == [
        ("lab_result", "Patient's chlamydia naat was positive around 2026-05-06", "2026-05-06")
    ]
    t = "Date: 2026-05-20\nNurse: The COVID test was negative."
    assert [(m, c) for m, c, _d in got(t, now)] == [
        ("lab_result", "Patient's COVID-19 test was negative")
    ]
    # a result that is not the patient's, or asked about, is none
    t = "Date: 2026-05-20\nNurse: Was your husband's COVID test negative?"
    assert [m for m, _c, _d in got(t, now) if m == "lab_result"] == []


def test_extraction_reads_the_session_date_not_the_clock() -> None:
    t = "Date: 2026-11-02\nNurse: Her blood pressure today is 128 over 74."
    later = NOW + timedelta(days=30)
    assert got(t, later) == [
        ("vital_sign", "Patient's blood pressure was 128/74 on 2026-11-02", "2026-11-02")
    ]


def test_a_link_worker_or_social_prescriber_speaks_for_the_service() -> None:
    """ "Link Worker:", "Social Prescriber:", "Social Worker:" are the professional's side (a
    "Support Worker:" is the patient's carer): what they arrange is a plan."""
    for label in ("Link Worker", "Social Prescriber", "Social Worker"):
        t = f"Date: 2026-08-05\n{label}: I'll refer you to Citizens Advice for the debt.\n"
        assert [m for m, _c, _d in got(t)] == ["care_plan"], label
    _h, said = split("Date: 2026-08-05\nSupport Worker: He had a good night.\n")
    assert [(x.speaker, x.relation) for x in said] == [("patient", "worker")]


@pytest.mark.parametrize(
    "said",
    [
        "I can get you a food bank voucher today.",
        "I can write a letter of support to the housing association about the mould.",
        "I'll give you a ring on the 19th to see how you're getting on.",
    ],
)
def test_what_the_service_offers_to_do_is_a_plan(said: str) -> None:
    """A social prescriber's offer ("I can get you ...", "I can write ...") or a call promised
    ("I'll give you a ring") is a plan of care."""
    got_ = got(f"Date: 2026-08-05\nLink Worker: {said}\n")
    assert [m for m, _c, _d in got_] == ["care_plan"], got_


def test_caring_for_a_relative_is_the_patients_own_social_fact() -> None:
    """ "So you're an unpaid carer for your mother, three days a week": the patient's caring
    role (social), though it names the mother; "the tablets I collect for my husband" stay
    his."""
    said = "So you're an unpaid carer for your mother, three days a week."
    assert [m for m, _c, _d in got(f"Date: 2026-08-05\nLink Worker: {said}\n")] == ["social"]
    t = "Date: 2026-08-05\nPatient: I look after my husband most days now.\n"
    assert [m for m, _c, _d in got(t)] == ["social"]
    t = "Date: 2026-08-05\nPatient: That's the ramipril 5 mg I collect for my husband.\n"
    assert [c for m, c, _d in got(t) if m == "medication"] == []


@pytest.mark.parametrize(
    "said",
    [
        "So I'm on the Universal Credit now.",
        "I started maternity leave early, last Friday.",
        "There's black mould in the bedroom, up the wall behind the bed.",
        "We have set up a lasting power of attorney.",
    ],
)
def test_money_work_housing_and_legal_changes_are_social(said: str) -> None:
    """Benefits, leave from work, damp housing, a power of attorney: the patient's social
    circumstances."""
    assert [m for m, _c, _d in got(f"Date: 2026-08-05\nPatient: {said}\n")] == ["social"]


def test_a_combination_by_its_own_name_shows_its_ingredients() -> None:
    """ "Co-codamol ... It made me terribly constipated": the reaction names the codeine in it,
    as a brand of a combination does ("budesonide/formoterol (Symbicort)")."""
    t = (
        "Date: 2026-06-23\n"
        "Pharmacist: What about painkillers with codeine in them, have you tried those?\n"
        "Patient: Co-codamol once. It made me terribly constipated. Never again.\n"
    )
    reactions = [c for m, c, _d in got(t) if m == "adverse_reaction"]
    assert reactions == ["Patient reports constipation on acetaminophen/codeine (Co-codamol)"]


def test_a_relatives_event_that_dates_a_story_is_no_relatives_fact() -> None:
    """ "Codeine - after my son's birth it made me vomit constantly": the son's birth dates the
    mother's reaction; it is hers."""
    t = (
        "Date: 2026-07-15\nMidwife: Any medicines that disagree with you?\n"
        "Patient: Codeine - after my son's birth it made me vomit constantly, so I don't take it.\n"
    )
    assert [m for m, _c, _d in got(t) if m == "adverse_reaction"] == ["adverse_reaction"]


def test_a_landline_asked_for_is_a_phone_preference() -> None:
    t = (
        "Date: 2026-03-30\nNurse: Is there a number that's best to call you on?\n"
        "Patient: The landline, please. I can't hear the mobile.\n"
    )
    assert ("preference", "Patient prefers to be contacted by phone (landline)") in [
        (m, c) for m, c, _d in got(t)
    ]


def test_a_course_a_doctor_gave_the_patient_is_a_medicine_given() -> None:
    """ "Dr Nguyen gave me the prednisolone and an antibiotic": the patient was given it (a
    determiner after "gave me" is no other object)."""
    t = (
        "Date: 2026-07-22\nNurse: Any chest infections since I last saw you?\n"
        "Patient: One bad one in May. Dr Nguyen gave me the prednisolone and an antibiotic.\n"
    )
    assert [c for m, c, _d in got(t) if m == "medication"] == ["Patient was given prednisolone"]


@pytest.mark.parametrize(
    ("said", "word"),
    [
        ("I'd rather see a female doctor for the smear, if that's possible.", "female doctor"),
        ("I don't want to go on any more tablets if I can help it.", "tablets"),
    ],
)
def test_a_polite_if_leaves_a_preference_a_preference(said: str, word: str) -> None:
    """ "if that's possible", "if I can help it": politeness, no condition; "any more" is none
    either; "I'd rather ..." makes the clause a preference before the smear it names."""
    prefs = [c for m, c, _d in got(f"Date: 2026-10-08\nPatient: {said}\n") if m == "preference"]
    assert prefs and word in prefs[0], prefs


@pytest.mark.parametrize(
    ("said", "want"),
    [
        ("Could you send letters in large print? My eyes aren't great.",
         "Patient prefers to be contacted by letter in large print"),
        ("Please send letters in Arabic if you can.",
         "Patient prefers to be contacted by letter in Arabic"),
    ],
)  # fmt: skip
def test_a_contact_preference_keeps_its_format_and_language(said: str, want: str) -> None:
    prefs = [c for m, c, _d in got(f"Date: 2026-10-08\nPatient: {said}\n") if m == "preference"]
    assert want in prefs, prefs


def test_an_asthma_control_test_score_is_an_observation() -> None:
    """ "Your asthma control test score today is 22 out of 25": a scored assessment (LOINC
    82668-5, ACT total score), no diagnosis of asthma; the scale's top is no second score
    ("The MoCA score today is 18 out of 30" had also proposed a MoCA of 30)."""
    t = "Date: 2026-10-08\nNurse: Your asthma control test score today is 22 out of 25.\n"
    assert [(m, c) for m, c, _d in got(t)] == [
        ("observation", "Patient's ACT was 22 on 2026-10-08")
    ]
    t = "Date: 2026-10-08\nDoctor: The MoCA score today is 18 out of 30.\n"
    assert [c for _m, c, _d in got(t)] == ["Patient's MoCA was 18 on 2026-10-08"]


@pytest.mark.parametrize(
    "said",
    [
        "The wound has healed well, no redness or gaps.",
        "Your inhaler technique needs a small tweak.",
        "You're smiling and making good eye contact today.",
    ],
)
def test_what_the_clinician_sees_is_an_observation(said: str) -> None:
    """A wound healed, an inhaler technique, eye contact: what the clinician observes (the
    negated findings after the healed wound are another clause)."""
    assert [m for m, _c, _d in got(f"Date: 2026-10-08\nNurse: {said}\n")] == ["observation"]


def test_a_disorder_had_on_a_drug_is_a_reaction_to_it() -> None:
    """ "You had oral thrush in April on the Clenil": a reaction to the Clenil (an infection a
    drug brought on), in April; "diabetes well controlled on metformin" is none."""
    t = "Date: 2026-10-08\nNurse: You had oral thrush in April on the Clenil.\n"
    reactions = [(c, d) for m, c, d in got(t) if m == "adverse_reaction"]
    assert reactions == [("Patient reports oral thrush on clenil", "2026-04-01")], reactions
    t = "Date: 2026-10-08\nDoctor: Your diabetes is well controlled on metformin.\n"
    assert "adverse_reaction" not in [m for m, _c, _d in got(t)]


def test_a_drug_said_alone_after_what_the_patient_takes_is_taken_too() -> None:
    """ "I take the St John's wort, for my mood. And cod liver oil capsules.": both taken."""
    t = (
        "Date: 2026-10-06\nPharmacist: Anything else you take?\n"
        "Patient: I take the St John's wort, for my mood. And cod liver oil capsules.\n"
    )
    meds = [c for m, c, _d in got(t) if m == "medication"]
    assert any("cod liver oil" in c for c in meds), meds


def test_going_to_a_place_is_no_future() -> None:
    """ "I've started going to the gym three times a week": going somewhere, not "going to"
    do something later -- a habit said as it is now."""
    t = "Date: 2026-10-08\nPatient: I've started going to the gym three times a week.\n"
    assert [m for m, _c, _d in got(t)] == ["social"]


def test_a_dose_doubled_is_increased() -> None:
    t = "Date: 2026-10-08\nPatient: My GP doubled my metformin in June.\n"
    assert ("medication", "Patient's metformin dose increased", "2026-06-01") in got(t)


@pytest.mark.parametrize(
    ("said", "want"),
    [
        ("The consultant put me on apixaban instead of the warfarin.",
         "Patient switched from warfarin to apixaban"),
        ("The pharmacist swapped my simvastatin for atorvastatin.",
         "Patient switched from simvastatin to atorvastatin"),
        ("Dr Shah changed my inhaler to Symbicort.",
         "Patient switched to budesonide/formoterol (Symbicort)"),
        ("I cut the amlodipine down to half a tablet myself.",
         "Patient's amlodipine dose decreased"),
    ],
)  # fmt: skip
def test_a_switch_said_another_way_is_a_switch(said: str, want: str) -> None:
    """ "instead of the warfarin" is the warfarin stopped (it had been proposed as started);
    "swapped X for Y", "changed my inhaler to Y", "cut the X down"."""
    meds = [c for m, c, _d in got(f"Date: 2026-10-08\nPatient: {said}\n") if m == "medication"]
    assert meds and meds[0].startswith(want), meds
    assert not [c for c in meds if c.startswith("Patient started warfarin")], meds


@pytest.mark.parametrize(
    ("said", "want"),
    [
        ("Since starting the ramipril I've had a dry cough.", "on ramipril"),
        ("I get terrible heartburn with the naproxen.", "on naproxen"),
        ("I've been dizzy since they increased the doxazosin.", "on doxazosin"),
    ],
)
def test_a_symptom_since_or_with_a_drug_is_a_reaction_to_it(said: str, want: str) -> None:
    """A symptom told since a drug was started or increased, or "with" it, is a reaction the
    patient reports; "better with the naproxen" is none."""
    got_ = got(f"Date: 2026-10-08\nPatient: {said}\n")
    assert [c for m, c, _d in got_ if m == "adverse_reaction" and want in c], got_
    got_ = got("Date: 2026-10-08\nPatient: My knee pain is much better with the naproxen.\n")
    assert not [c for m, c, _d in got_ if m == "adverse_reaction"], got_


def test_the_value_a_result_changed_from_is_no_result_of_today() -> None:
    """ "You weigh 82 kilos today, down from 85": 85 is what it was, not a weight taken today
    (it had been proposed, with no unit, as the session's); "up from 52 in March" keeps its
    own date."""
    t = "Date: 2026-10-08\nNurse: You weigh 82 kilos today, down from 85.\n"
    weights = [c for m, c, _d in got(t) if m == "vital_sign"]
    assert weights == ["Patient's body weight was 82 kg on 2026-10-08"], weights
    t = "Date: 2026-10-08\nDoctor: Your HbA1c came back at 58, up from 52 in March.\n"
    labs = [(c, d) for m, c, d in got(t) if m == "lab_result"]
    assert ("Patient's HbA1c was 52 in March 2026", "2026-03-01") in labs, labs


def test_a_reaction_to_a_drug_said_so_is_a_reaction() -> None:
    """ "I had a bad reaction to morphine once, I couldn't breathe properly": a reaction to
    morphine, though its symptom is said with a negation."""
    t = (
        "Date: 2026-10-08\nDoctor: How did the pain relief go last time?\n"
        "Patient: I had a bad reaction to morphine once, I couldn't breathe properly.\n"
    )
    assert ("adverse_reaction", "Patient reports a reaction to morphine") in [
        (m, c) for m, c, _d in got(t)
    ], got(t)


def test_a_date_across_a_clause_break_is_the_next_values() -> None:
    """ "Your TSH is 6.8 -- that's raised; in December it was 3.1": December opens the clause
    after the break and dates the 3.1; the 6.8 is today's (it had taken December, and the old
    3.1 the session's date, so the older value would have read as the current one)."""
    now = datetime(2026, 7, 8, 18, tzinfo=UTC)
    for said in (
        "Your TSH is 6.8 — that's raised; in December it was 3.1.",
        "Your TSH is 6.8; in December it was 3.1.",
        "Your TSH is 6.8 - that's up - in December it was 3.1.",
    ):
        labs = {
            c: d for m, c, d in got(f"Date: 2026-07-08\nNurse: {said}", now) if m == "lab_result"
        }
        by_value = {("6.8" if "6.8" in c else "3.1"): d for c, d in labs.items()}
        assert by_value == {"6.8": None, "3.1": "2025-12-01"}, labs


def test_a_weekday_of_a_named_week_is_that_day() -> None:
    """ "the bloods you had on Tuesday last week" said on Wednesday the 8th of July is Tuesday
    the 30th of June, one date (it was read as yesterday, a Tuesday, and as the week of the
    29th); "the Tuesday before last" is the one before the last Tuesday; a weekday of this week
    still to come is a plan's, no date."""
    session = datetime(2026, 7, 8, 9, tzinfo=UTC)  # a Wednesday
    said = {
        "on Tuesday last week": "2026-06-30",
        "Tuesday of last week": "2026-06-30",
        "last week on Tuesday": "2026-06-30",
        "last week, on the Friday": "2026-07-03",
        "on Tues last week": "2026-06-30",
        "the Thursday of the previous week": "2026-07-02",
        "on Monday the week before last": "2026-06-22",
        "the Tuesday before last": "2026-06-30",
        "on Monday this week": "2026-07-06",
    }
    for text, want in said.items():
        got = [d.date for d in dates_in(f"The bloods were {text}.", session)]
        assert got == [want], text
    assert dates_in("Come in on Friday this week.", session) == []  # ahead: a plan


def test_a_stage_is_no_value_and_a_year_compared_with_is_not_the_results() -> None:
    """ "Your eGFR is 54, which is much the same as last year, so still stage 3a": the 54 is
    today's (last year is the value it is compared with), and "stage 3a" is a stage, not an
    eGFR of 3 (both had been proposed: eGFR 54 and eGFR 3, dated 2025)."""
    now = datetime(2026, 9, 14, 18, tzinfo=UTC)
    said = (
        "Dr: Your kidney function, the eGFR, is 54, which is much the same as last year, so "
        "still stage 3a. Potassium was 4.9, that's fine."
    )
    labs = [(c, d) for m, c, d in got(f"Date: 2026-09-14\n{said}", now) if m == "lab_result"]
    assert ("Patient's eGFR was 54", None) in labs, labs
    assert not any("eGFR was 3" in c for c, _d in labs), labs
    similar = "Dr: Your HbA1c is 52, similar to March."
    labs = [(c, d) for m, c, d in got(f"Date: 2026-09-14\n{similar}", now) if m == "lab_result"]
    assert ("Patient's HbA1c was 52", None) in labs, labs


def test_a_date_answering_another_question_does_not_re_date_the_tests() -> None:
    """The bloods were "on the fifth"; asked when he stopped smoking, the patient says "New
    Year." -- that is the stop's date, not the tests': the eGFR said after it is still of the
    5th (it had been dated New Year's Day)."""
    now = datetime(2026, 3, 17, 18, tzinfo=UTC)
    t = (
        "Date: 2026-03-17\n"
        "Dr: You had your bloods done on the fifth, a couple of weeks ago.\n"
        "Patient: That's right.\n"
        "Dr: When did you stop smoking?\n"
        "Patient: New Year.\n"
        "Dr: Good. Kidney function - your eGFR is 52, about where it was."
    )
    labs = [(c, d) for m, c, d in got(t, now) if m == "lab_result"]
    assert labs == [("Patient's eGFR was 52 on 2026-03-05", "2026-03-05")], labs
    asked = t.replace("When did you stop smoking?", "When were the bloods taken, again?")
    labs = [(c, d) for m, c, d in got(asked, now) if m == "lab_result"]
    assert labs == [("Patient's eGFR was 52 on 2026-01-01", "2026-01-01")], labs


def test_a_day_of_the_month_said_beside_last_week_is_that_day() -> None:
    """ "our test from last week, the eighteenth", said on Tuesday the 25th of August: the
    18th (it was read as the week of the 17th); a day the week does not hold leaves the week."""
    session = datetime(2026, 8, 25, 9, tzinfo=UTC)  # a Tuesday
    said = {
        "from last week, the eighteenth": ["2026-08-18"],
        "last week, on the 20th": ["2026-08-20"],
        "last week, the 30th": ["2026-08-17"],  # not a day of last week: the week alone
    }
    for text, want in said.items():
        assert [d.date for d in dates_in(f"Our test {text}.", session)] == want, text


def test_a_dose_changed_to_a_number_said_with_the_unit_of_the_dose_it_came_from() -> None:
    """ "put the amlodipine up from five milligrams to ten": to 10 mg (the unit is said once;
    it had been proposed as "dose increased", with no dose)."""
    for said, want in (
        ("I'd like to put the amlodipine up from five milligrams to ten.", "to 10 mg"),
        ("The levothyroxine goes up from fifty micrograms to seventy-five.", "to 75 mcg"),
        ("We'll increase the ramipril from 5 mg to 10.", "to 10 mg"),
    ):
        meds = [c for m, c, _d in got(f"Dr: {said}\nPatient: OK.") if m == "medication"]
        assert meds and meds[0].endswith(want), (said, meds)


def test_a_start_said_done_on_a_day_is_no_plan_whatever_after_says() -> None:
    """ "You stopped the ramipril on the 18th of October, and started the Entresto ... on the
    20th, after the gap": "after the" is no later time here -- the start was on the 20th (it
    had been dropped as deferred); "we'll start it after the scan" still is a plan."""
    now = datetime(2026, 11, 10, 18, tzinfo=UTC)
    t = (
        "Date: 2026-11-10\nNurse: You stopped the ramipril on the 18th of October, and started "
        "the Entresto, sacubitril valsartan, 24/26 twice a day on the 20th, after the gap."
    )
    meds = [(c, d) for m, c, d in got(t, now) if m == "medication"]
    assert any("started sacubitril/valsartan" in c and d == "2026-10-20" for c, d in meds), meds
    plan = "Date: 2026-11-10\nNurse: We'll start the Entresto after the scan."
    assert not any(m == "medication" for m, _c, _d in got(plan, now))


def test_a_question_of_she_after_the_clinician_named_a_relative_asks_of_the_relative() -> None:
    """ "Oh -- your sister, you mentioned her. Is she on a blood thinner too?" -- "She is,
    she's on rivaroxaban after a clot following her knee operation": the sister's, not the
    patient's (it had been proposed as the patient's procedure)."""
    t = (
        "Date: 2026-05-12\n"
        "Pharmacist: Any allergies I should double-check?\n"
        "Gwen: Penicillin - I came out in a rash as a child.\n"
        "Pharmacist: Yes, that's on your record. Are you still working?\n"
        "Gwen: Part-time, I'm a receptionist at the primary school, mornings only.\n"
        "Pharmacist: Lovely. Oh - your sister, you mentioned her. Is she on a blood thinner too?\n"
        "Gwen: She is, she's on rivaroxaban after a clot following her knee operation last "
        "year. Different one to mine."
    )
    got_ = got(t, datetime(2026, 5, 12, 18, tzinfo=UTC))
    assert not any("rivaroxaban" in c or "knee" in c for _m, c, _d in got_), got_


def test_a_relative_answering_of_your_mum_speaks_of_the_patient() -> None:
    """ "Thanks for bringing your mum in today. How has she been on the donepezil?" --
    "Daughter: She's been on donepezil 10 mg at night": the daughter answers of the patient."""
    t = (
        "Date: 2026-11-02\n"
        "Nurse: Thanks for bringing your mum in today. How has she been on the donepezil?\n"
        "Daughter: She's been on donepezil 10 mg at night since the summer."
    )
    meds = [c for m, c, _d in got(t, datetime(2026, 11, 2, 18, tzinfo=UTC)) if m == "medication"]
    assert any("donepezil 10 mg" in c for c in meds), meds


def test_a_day_and_month_with_dots_and_no_year_after_a_date_word_is_a_day() -> None:
    """ "since 12.06." (as Poland and Germany write the 12th of June) after "since", "until",
    "dated": the last such day not after the session; a decimal after a value ("it was 5.1.")
    or a dose ("I'm on 2.5.", "reduced from 7.5.") is no date."""
    session = datetime(2026, 8, 25, 9, tzinfo=UTC)
    assert [d.date for d in dates_in("Yes, since 12.06. Before, I lived alone.", session)] == [
        "2026-06-12"
    ]
    assert [d.date for d in dates_in("A letter dated 3.8.", session)] == ["2026-08-03"]
    assert [d.date for d in dates_in("I'm on 2.5.", session)] == []
    assert [d.date for d in dates_in("Her warfarin was reduced from 7.5.", session)] == []
    assert [d.date for d in dates_in("It was 5.1.", session)] == []
    assert [d.date for d in dates_in("Potassium on the ward 5.1.", session)] == []
    assert [d.date for d in dates_in("Since 31.09. nothing.", session)] == []  # no such day


def test_a_dose_put_up_to_a_number_without_a_unit_is_proposed_with_it() -> None:
    """ "How is the metformin?" -- "The doctor put it up to 1000 in March.": the metformin's
    dose went up to 1000 in March (nothing had been proposed: "put it" named no drug); "10 a
    day" or "to 2 tablets" is no dose said."""
    now = datetime(2026, 8, 11, 18, tzinfo=UTC)
    t = (
        "Date: 2026-08-11\nNurse: How is the metformin?\n"
        "Patient: The doctor put it up to 1000 in March."
    )
    meds = [(c, d) for m, c, d in got(t, now) if m == "medication"]
    assert meds == [("Patient's metformin dose increased to 1000", "2026-03-01")], meds
    t = "Date: 2026-08-11\nPatient: My ramipril went up to 2 tablets."
    meds = [c for m, c, _d in got(t, now) if m == "medication"]
    assert meds == ["Patient's ramipril dose increased"], meds


def test_a_dose_a_record_holds_read_out_is_not_proposed_until_confirmed() -> None:
    """ "Levothyroxine -- we have 100 micrograms on file." -- "That changed. The doctor put it
    up to 125 in May": the record's 100 micrograms is no dose the patient takes (it had been
    proposed beside the change, dated later than it); confirmed ("Is that right?" -- "Yes."),
    it is."""
    now = datetime(2026, 6, 10, 18, tzinfo=UTC)
    said = "Pharmacist: Levothyroxine - we have 100 micrograms on file."
    t = f"Date: 2026-06-10\n{said}\nPatient: That changed. The doctor put it up to 125 in May."
    meds = [c for m, c, _d in got(t, now) if m == "medication"]
    assert meds == ["Patient's levothyroxine dose increased to 125"], meds
    t = f"Date: 2026-06-10\n{said} Is that right?\nPatient: Yes."
    meds = [c for m, c, _d in got(t, now) if m == "medication"]
    assert meds == ["Patient takes levothyroxine 100 mcg"], meds


def test_a_vaccine_recommended_or_left_to_the_gp_is_a_plan_not_a_dose_given() -> None:
    """ "I'd also recommend the Shingrix shingles vaccine", "Shingrix through your GP.": a plan
    (it had been proposed as an immunisation given); "I had my flu jab on Saturday" and "I'll
    give the first hepatitis B dose in your right arm" (given in the session) are doses given."""
    now = datetime(2026, 10, 6, 18, tzinfo=UTC)
    t = (
        "Date: 2026-10-06\nDr: I'd also recommend the Shingrix shingles vaccine.\n"
        "Patient: OK.\nDr: Bloods every 2 weeks. Shingrix through your GP.\n"
        "Patient: I had my flu jab on Saturday.\n"
        "Nurse: I'll give the first hepatitis B dose in your right arm."
    )
    said = got(t, now)
    jabs = [c for m, c, _d in said if m == "immunization"]
    assert not any("Shingrix" in c for c in jabs), said
    assert any("Shingrix" in c for m, c, _d in said if m == "care_plan"), said
    assert any("flu jab" in c for c in jabs) and any("hepatitis B" in c for c in jabs), said


def test_a_habit_given_up_said_without_a_subject_answers_the_question() -> None:
    """ "How's the smoking?" -- "Stopped! First of January.": the patient quit smoking on the
    1st of January (nothing had been proposed: the give-up words wanted an "I")."""
    t = (
        "Date: 2026-03-10\nDr: How's the smoking?\n"
        "Patient: Stopped! First of January. Not a single one since."
    )
    social = [(c, d) for m, c, d in got(t, datetime(2026, 3, 10, 18, tzinfo=UTC)) if m == "social"]
    assert social == [("Patient quit smoking", "2026-01-01")], social


def test_a_course_finished_is_a_medicine_stopped() -> None:
    """ "And you've finished the prednisolone?" -- "Yes, tapered down, last tablet on the 31st
    of August": the prednisolone stopped on the 31st (nothing had been proposed)."""
    t = (
        "Date: 2026-10-06\nDr: And you've finished the prednisolone?\n"
        "Patient: Yes, tapered down, last tablet on the 31st of August."
    )
    meds = [
        (c, d) for m, c, d in got(t, datetime(2026, 10, 6, 18, tzinfo=UTC)) if m == "medication"
    ]
    assert meds == [("Patient stopped prednisolone on 2026-08-31", "2026-08-31")], meds


def test_when_the_last_one_was_dates_the_stop_just_told() -> None:
    """ "I stopped smoking. Last cigarette was the bank holiday weekend in August.": the quit is
    of August (it had been dated the session)."""
    t = (
        "Date: 2026-10-07\nNurse: Any flare-ups since then?\n"
        "Patient: No. And I've got news. I stopped smoking. Last cigarette was the bank holiday "
        "weekend in August."
    )
    quit_ = [d for m, c, d in got(t, datetime(2026, 10, 7, 18, tzinfo=UTC)) if "quit" in c]
    assert quit_ == ["2026-08-01"], quit_


def test_advice_to_steer_clear_of_a_product_is_no_finding() -> None:
    """ "I'd steer clear of turmeric too, it can add to the bleeding risk": advice, not a
    response to treatment ("clear" had been read as a symptom cleared) nor an observation."""
    t = (
        "Date: 2026-05-12\nPatient: Could I take turmeric instead for the back?\n"
        "Pharmacist: I'd steer clear of turmeric too, it can add to the bleeding risk."
    )
    assert not any("turmeric" in c for _m, c, _d in got(t, datetime(2026, 5, 12, 18, tzinfo=UTC)))


def test_the_day_a_plan_is_for_is_the_next_such_day() -> None:
    """The day a plan names, read ahead of the session (a Thursday, 7 May 2026): a day and a
    month the next such day, a weekday alone the next one, a day of the month alone the next
    such day, "tomorrow" the day after; two days, or none, name no one day."""
    from memory_core.ingest.dates import day_planned

    session = datetime(2026, 5, 7, 10, tzinfo=UTC)
    said = {
        "Your growth scan is booked for the 10th of August.": "2026-08-10",
        "I've booked you for Tuesday 23 June at 08:50.": "2026-06-23",
        "Kidney bloods on Monday, please.": "2026-05-11",
        "See you at the review on the 27th.": "2026-05-27",
        "I'll ring you on the 3rd.": "2026-06-03",
        "Come back tomorrow for the dressing.": "2026-05-08",
        "The asthma review is on March 25th.": "2027-03-25",
        "I'll see you this Friday.": "2026-05-08",
        "Your nurse review is on Thursday 7 May at 4.": "2026-05-07",
        "Repeat bloods for Wednesday the nineteenth of August.": "2026-08-19",
    }
    for text, want in said.items():
        got = day_planned(text, session)
        assert got is not None and got.date().isoformat() == want, (text, got)
    for text in (
        "Repeat the bloods in two weeks.",
        "Blood test on Thursday 26 March and nurse review on Thursday 9 April.",
        "We spoke on the phone last week.",
        "Keep going with the 21 mg patches, then down to 14.",
        "The group course is on Thursday evenings.",
    ):
        assert day_planned(text, session) is None, text


def test_a_date_a_letter_gives_dates_the_medicine_just_named() -> None:
    """ "Ramipril 2.5 milligrams once a day. The discharge letter says that was started on the
    4th.": where the letter or the notes say the date, the sentence still says only when --
    the medicine just named is dated by it (it had been dated the session)."""
    t = (
        "Date: 2026-05-12\nPharmacist: Can we go through the new ones?\n"
        "Wife: Ramipril 2.5 milligrams once a day. The discharge letter says that was started "
        "on the 4th.\n"
        "Pharmacist: And the other one?\n"
        "Wife: Bisoprolol 1.25 milligrams in the morning. The notes said started on the 6th of "
        "May."
    )
    dated = {c.split()[2]: d for m, c, d in got(t, datetime(2026, 5, 12, 18, tzinfo=UTC))}
    assert dated.get("ramipril") == "2026-05-04", dated
    assert dated.get("bisoprolol") == "2026-05-06", dated


def test_a_change_of_one_medicine_to_another_is_a_switch() -> None:
    """ "I'm changing your ramipril to losartan 50 mg", "I want to switch his amlodipine over
    to lercanidipine 10 mg": a medicine changed to another names the one given up first, the
    one in its place after "to" (neither had been proposed)."""
    t = (
        "Date: 2026-05-12\nDoctor: The cough fits with the ramipril. I'm changing your ramipril "
        "to losartan 50 mg once a day.\n"
        "Patient: Fine.\n"
        "Doctor: And the ankles: I want to switch his amlodipine over to lercanidipine 10 mg."
    )
    said = [c.lower() for _m, c, _d in got(t, datetime(2026, 5, 12, 18, tzinfo=UTC))]
    assert any("ramipril" in c and "losartan" in c for c in said), said
    assert any("amlodipine" in c and "lercanidipine" in c for c in said), said


def test_an_amount_over_days_is_no_weight() -> None:
    """ "A gain of two kilos in three days means fluid": how fast a weight changes, no weight
    reading (it had been proposed as a body weight of 2 kg)."""
    t = "Date: 2026-06-16\nNurse: A gain of two kilos in three days means fluid."
    said = [(m, c) for m, c, _d in got(t, datetime(2026, 6, 16, 18, tzinfo=UTC))]
    assert not [c for m, c in said if m == "vital_sign"], said


def test_that_day_is_the_day_just_named() -> None:
    """ "You were seen in A&E on the 2nd of March." -- "Yes." -- "They checked your kidneys
    that day. The eGFR was 51.": the results are that day's (they had been dated the session);
    "the day after" or "that day I started" would be another day, and say none."""
    t = (
        "Date: 2026-03-20\nNurse: I see you were seen in A&E on the 2nd of March.\n"
        "Patient: Yes, with the chest.\n"
        "Nurse: And they checked your kidneys that day. The eGFR was 51."
    )
    dated = {
        c: d for m, c, d in got(t, datetime(2026, 3, 20, 18, tzinfo=UTC)) if "egfr" in c.lower()
    }
    assert list(dated.values()) == ["2026-03-02"], dated


def test_a_dated_change_said_after_the_dose_dates_the_dose() -> None:
    """ "I'm on the citalopram 20 now. The GP upped it on the 3rd of February.": the dose said
    first is the dose since that day (it had been dated the session)."""
    t = (
        "Date: 2026-03-20\nDoctor: Which antidepressant are you on?\n"
        "Patient: I'm on the citalopram 20 now. The GP upped it on the 3rd of February."
    )
    dated = {c: d for m, c, d in got(t, datetime(2026, 3, 20, 18, tzinfo=UTC)) if "20" in c}
    assert dated and set(dated.values()) == {"2026-02-03"}, dated
