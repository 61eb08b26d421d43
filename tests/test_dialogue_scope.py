"""A cue governs the clause it is in, not the whole turn (issue 30's scope, read in
conversations, issue 31). Sentences written for these tests, not taken from any held-out
transcript."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_core.ingest.rules import RuleExtractor

PID = "NW-1005"


def _got(lines: list[str], session: str = "2026-04-14") -> list[tuple[str, str]]:
    now = datetime.fromisoformat(session).replace(hour=18, tzinfo=UTC)
    ext = RuleExtractor().extract(PID, f"Date: {session}\n" + "\n".join(lines), now=now)
    return [(c.memory_type, c.content.lower()) for c in ext.candidates]


def _meds(got: list[tuple[str, str]], drug: str) -> list[str]:
    return [c for m, c in got if m == "medication" and drug in c]


def _plans(got: list[tuple[str, str]]) -> list[str]:
    return [c for m, c in got if m == "care_plan"]


def test_a_patients_maybe_after_the_drug_hedges_how_often_not_whether_they_take_it() -> None:
    """ "I use the diclofenac gel on my wrist, maybe three times a week": the patient uses the
    gel; "maybe" is of the count, in its own clause after the drug. (The count said before
    "a week" is kept with it: "three times a week", not "a week".)"""
    got = _got(
        [
            "Nurse: Anything you use for the wrist?",
            "Patient: I use the diclofenac gel on my wrist, maybe three times a week.",
            "Nurse: And for sleep?",
            "Patient: Melatonin, I take it most nights, perhaps five nights out of seven.",
        ]
    )
    assert any("three times a week" in c for c in _meds(got, "diclofenac")), got
    assert _meds(got, "melatonin"), got


def test_a_hedge_before_the_drug_or_the_clinicians_maybe_still_proposes_nothing() -> None:
    """ "Maybe I'll try cod liver oil" and a clinician's "We could add amlodipine, maybe 5 mg"
    are a thought and a suggestion, not a medicine taken; a hedge in the drug's own clause
    governs it."""
    got = _got(
        [
            "Patient: Maybe I'll try cod liver oil for the joints.",
            "Dr Shah: We could add amlodipine, maybe 5 mg, if the readings stay up.",
            "Patient: My sister takes glucosamine, maybe I should too.",
            "Patient: I might take some ibuprofen, perhaps tomorrow.",
        ]
    )
    for drug in ("cod liver", "amlodipine", "glucosamine", "ibuprofen"):
        assert not _meds(got, drug), (drug, got)


def test_how_often_keeps_the_words_that_bound_or_doubt_it() -> None:
    """ "up to four times a day" is a most, not a schedule; "about three times a day" and
    "maybe twice a day" are the patient's estimate, "four or five times a day" a range: the
    proposal keeps those words (not "five times a day", nor "a week" for "three or four days a
    week")."""
    got = _got(
        [
            "Dr Lee: For the hip you can take paracetamol, two 500 mg tablets up to four times "
            "a day.",
            "Patient: I'm on co-codamol as well, about three times a day.",
            "Patient: And I take naproxen for it, maybe twice a day.",
            "Patient: The salbutamol inhaler, I use it four or five times a day.",
            "Patient: Loratadine, one tablet, maybe three or four days a week.",
            "Patient: And the terbutaline, maybe three, four times a day lately.",
            "Patient: The Symbicort 200/6, one puff twice a day.",
        ]
    )
    assert any("up to four times a day" in c for c in _meds(got, "paracetamol")), got
    assert any("about three times a day" in c for c in _meds(got, "co-codamol")), got
    assert any("maybe twice a day" in c for c in _meds(got, "naproxen")), got
    assert any("four or five times a day" in c for c in _meds(got, "salbutamol")), got
    assert any("three or four days a week" in c for c in _meds(got, "loratadine")), got
    assert any("maybe three, four times a day" in c for c in _meds(got, "terbutaline")), got
    inhaler = _meds(got, "symbicort")  # "200/6, one puff": a strength, then a count, no range
    assert inhaler and not any("6, one" in c for c in inhaler), got


def test_it_after_a_medicine_named_by_its_colour_is_not_the_drug_talked_of_before() -> None:
    """ "The brown inhaler, I use it twice a day" after talk of naproxen: "it" is the brown
    inhaler (a medicine the reader cannot name), never naproxen twice a day."""
    got = _got(
        [
            "Dr Shah: How is the naproxen for your back?",
            "Patient: Fine, one in the morning.",
            "Patient: The brown inhaler, I use it twice a day now.",
            "Patient: And my other tablets, I take them at teatime.",
        ]
    )
    assert not any("twice" in c or "teatime" in c for c in _meds(got, "naproxen")), got


def test_a_product_the_clinician_says_to_carry_on_with_is_the_patients_medicine() -> None:
    """ "Cod liver oil's fine to carry on with", "Carry on with the evening primrose oil": the
    patient takes it, said by the clinician who lets it stand -- not when it is the thing to
    give up, nor a question."""
    got = _got(
        [
            "Patient: And the cod liver oil?",
            "Pharmacist: Cod liver oil's fine to carry on with.",
            "Pharmacist: Carry on with the evening primrose oil as well.",
            "Pharmacist: The glucosamine is fine to keep taking.",
            "Patient: Is it fine to carry on with the turmeric?",
            "Pharmacist: No, I wouldn't carry on with the echinacea.",
        ]
    )
    for drug in ("cod liver", "primrose", "glucosamine"):
        assert _meds(got, drug), (drug, got)
    for drug in ("turmeric", "echinacea"):
        assert not _meds(got, drug), (drug, got)


def test_what_i_would_like_is_a_decision_not_a_question_or_a_hypothesis() -> None:
    """ "What I would like is to refer you to pulmonary rehab", "I would like to refer you to
    the memory clinic": a clinician's plan said as a wish (a pseudo-cleft, a polite "would
    like"), not a question opened by "what" nor a hypothesis of "would"."""
    got = _got(
        [
            "Nurse: What I would like is to refer you to pulmonary rehab, it's an exercise "
            "course at the leisure centre.",
            "Dr Shah: I would like to refer you to the memory clinic.",
        ]
    )
    plans = _plans(got)
    assert any("pulmonary rehab" in c for c in plans), got
    assert any("memory clinic" in c for c in plans), got


def test_a_wish_to_stop_a_drug_stays_a_plan_in_a_statement() -> None:
    """The same wish about a drug is no change made: "What I would like is to stop the
    metformin" is for later, never a stop applied at once."""
    from memory_core.facts import Context, read

    for text in (
        "What I would like is to stop the metformin.",
        "I would like to stop the metformin.",
    ):
        facts = read(text, "medication").facts
        assert facts and all(Context.FUTURE in f.contexts for f in facts), text


def test_a_follow_up_in_a_clause_of_its_own_does_not_defer_the_start_before_it() -> None:
    """ "I'll start you on citalopram 10 mg daily, and I'll see you again in 6 weeks": the
    start is made today (the six weeks are the follow-up's); a later day in the start's own
    clause, or before it, still defers it."""
    got = _got(
        [
            "Dr Shah: I'll start you on citalopram 10 mg daily, and I'll see you again in 6 weeks.",
            "Dr Shah: We'll start the ramipril 2.5 mg once the kidney bloods are back.",
            "Dr Shah: In two weeks, we'll start the bisoprolol 1.25 mg.",
        ]
    )
    assert any("started citalopram" in c for c in _meds(got, "citalopram")), got
    assert any("6 weeks" in c for m, c in got if m == "care_plan"), got
    assert not any("started" in c for c in _meds(got, "ramipril") + _meds(got, "bisoprolol")), got


def test_a_doubt_about_the_cause_does_not_govern_the_change_made_because_of_it() -> None:
    """ "They thought the citalopram might be causing that, so they stopped it on the 20th":
    the doubt is of the cause, in its own clause; the stop after ", so" is said as done. A
    consequence that is itself hedged ("so we could stop it"), or a condition before the
    change, still proposes no change."""
    got = _got(
        [
            "Nurse: They thought the citalopram might be causing that, so they stopped it on "
            "the 20th.",
            "Patient: I wondered if the simvastatin was giving me the cramps, so I stopped it "
            "on Monday.",
            "Dr Shah: It might be the ramipril, so we could stop it next time.",
            "Dr Shah: If the ankles stay swollen, stop the amlodipine.",
        ],
        session="2026-03-26",
    )
    assert any("stopped citalopram" in c for c in _meds(got, "citalopram")), got
    assert any("stopped simvastatin" in c for c in _meds(got, "simvastatin")), got
    assert not any("stop" in c for c in _meds(got, "ramipril")), got
    assert not any("stop" in c for c in _meds(got, "amlodipine")), got


def test_a_medicine_the_patient_used_to_take_is_not_one_they_take() -> None:
    """ "I used to be on simvastatin years ago" is the patient's history, not a medicine they
    are on: no medication proposal; "I'm on simvastatin" still is one."""
    got = _got(
        [
            "Pharmacist: Any questions about the medicines?",
            "Patient: Just one. I used to be on simvastatin years ago. Is the atorvastatin "
            "stronger?",
            "Patient: My sister was on lithium once, for years.",
            "Patient: And I'm on the glucosamine still.",
        ]
    )
    assert not _meds(got, "simvastatin"), got
    assert _meds(got, "glucosamine"), got


def test_a_medicine_moved_to_another_time_by_a_pronoun_is_the_drug_talked_of() -> None:
    """ "You take furosemide 20 mg at night." / "The hospital has moved it to the morning,
    same dose": "it", moved, is the furosemide -- now taken in the morning. An appointment
    moved ("We've moved it to Tuesday") is no medicine's new time."""
    got = _got(
        [
            "Pharmacist: You take furosemide 20 mg at night, is that right?",
            "Patient: Yes, and I'm up three times a night for the loo.",
            "Pharmacist: The hospital has moved it to the morning, same dose, 20 mg.",
        ],
        session="2026-09-20",
    )
    assert any("morning" in c for c in _meds(got, "furosemide")), got
    got = _got(
        [
            "Nurse: You're on amlodipine 5 mg in the morning.",
            "Nurse: Your review was on Monday, but we've moved it to Tuesday.",
        ],
        session="2026-09-20",
    )
    assert not any("tuesday" in c for c in _meds(got, "amlodipine")), got


def test_a_change_the_clinician_says_for_when_it_happens_is_no_change_made() -> None:
    """ "Ring us when you start it", "Once you finish the course, stop the lansoprazole too":
    a change said for when something happens is an instruction, not a change made today."""
    got = _got(
        [
            "Nurse: Here's a rescue pack of prednisolone 30 mg a day for five days.",
            "Nurse: Ring us when you start it.",
            "Dr Shah: You're on lansoprazole 30 mg with the antibiotics.",
            "Dr Shah: Once you finish the antibiotics, stop the lansoprazole too.",
        ]
    )
    assert not any("started" in c for c in _meds(got, "prednisolone")), got
    assert not any("stopped" in c for c in _meds(got, "lansoprazole")), got


def test_a_dose_said_after_another_drug_is_that_drugs() -> None:
    """ "Instead of propranolol, let's start amitriptyline 10 mg at night": the 10 mg at night
    is the amitriptyline's; the propranolol named before it has no such dose."""
    got = _got(["Dr Osei: Instead of propranolol, let's start amitriptyline 10 mg at night."])
    assert not any("10 mg" in c or "at night" in c for c in _meds(got, "propranolol")), got
    assert any("10 mg" in c for c in _meds(got, "amitriptyline")), got


def test_in_case_after_the_drug_says_what_it_is_for_not_whether_it_is_given() -> None:
    """ "I have given you a GTN spray, in case chest pain comes on": given, for when chest pain
    comes; "stop the ramipril, in case it's causing the cough" stops it. "In case of a flare,
    start the prednisolone" -- the condition before the drug -- still proposes nothing."""
    got = _got(
        [
            "Pharmacist: I have given you a GTN spray, in case chest pain comes on.",
            "Dr Shah: Please stop the ramipril, in case it's causing the cough.",
            "Dr Shah: In case of a flare, start the prednisolone.",
        ]
    )
    assert _meds(got, "gtn"), got
    assert any("stopped ramipril" in c for c in _meds(got, "ramipril")), got
    assert not _meds(got, "prednisolone"), got


def test_a_rescue_pack_given_with_when_to_start_it_is_a_plan_made() -> None:
    """ "I'll give you a rescue pack to keep at home, steroids and antibiotics, so you can
    start them straight away if you flare up": the pack is given today; "start them" is of
    when to use it, after the drugs -- no treatment deferred, and the condition after it is
    of its use. "We'll review in 3 months and start a statin" still defers the statin. (Not
    yet read: "... with a written plan for when to start them", whose "when" the assertion
    step reads as the drugs' condition.)"""
    got = _got(
        [
            "Nurse: I'll also give you a rescue pack to keep at home, steroids and antibiotics, "
            "so you can start them straight away if you flare up.",
            "Dr Shah: We'll review in 3 months and start a statin then.",
        ]
    )
    plans = _plans(got)
    assert any("rescue pack" in c for c in plans), got
    assert not any("statin" in c for c in plans), got


def test_a_contact_preference_keeps_the_patients_own_word_for_the_channel() -> None:
    """ "The landline, please" is a phone preference -- which phone, the landline; "please
    don't leave voicemails ... Call after four o'clock" is a phone preference without
    voicemails: the proposal keeps the words that say which, and what not."""
    got = _got(
        [
            "Nurse: Which number is best, the mobile or the landline?",
            "Patient: The landline, please. I can't hear the mobile.",
            "Nurse: And can we leave a message?",
            "Patient: Please don't leave voicemails, I'm at work all day. Call after four o'clock "
            "if you can.",
        ]
    )
    prefs = [c for m, c in got if m == "preference"]
    assert any("landline" in c for c in prefs), got
    assert any("voicemail" in c for c in prefs), got


def test_a_drug_named_as_what_not_to_mix_with_is_not_the_one_stopped() -> None:
    """ "I was taking 5-HTP for my mood, the pharmacist said not to mix it with sertraline so
    I stopped it on the 20th": "it" is the 5-HTP; the sertraline is only what it is not to be
    mixed with -- never "stopped sertraline" (it had been proposed, a current antidepressant
    stopped)."""
    got = _got(
        [
            "Patient: I was taking 5-HTP from the health shop for my mood since the summer, the "
            "pharmacist said not to mix it with sertraline so I stopped it on the 20th.",
            "Patient: I had some ginkgo, but you can't take it alongside warfarin, so I've "
            "stopped it.",
        ],
        session="2026-10-29",
    )
    assert not any("stop" in c for c in _meds(got, "sertraline")), got
    assert not any("stop" in c for c in _meds(got, "warfarin")), got
