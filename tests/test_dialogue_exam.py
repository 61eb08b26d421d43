"""A clinician's examination findings and the patient's symptoms said in a consultation are
observations (issue 31): the diabetic foot check (monofilament, sensation, foot pulses), joint
crepitus, thirst, sleeping propped on pillows. Sentences written for these tests, not taken from
any held-out transcript."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_core.ingest.rules import RuleExtractor


def _observations(lines: list[str]) -> list[str]:
    now = datetime(2026, 4, 14, 18, tzinfo=UTC)
    ext = RuleExtractor().extract("NW-1006", "Date: 2026-04-14\n" + "\n".join(lines), now=now)
    return [c.content.lower() for c in ext.candidates if c.memory_type == "observation"]


def test_the_foot_check_and_other_findings_are_observations() -> None:
    got = _observations(
        [
            "Dr Shah: There is reduced sensation to the monofilament at the right heel.",
            "Dr Shah: Both foot pulses are easy to feel.",
            "Dr Shah: The knee has some crepitus on bending.",
            "Patient: I've been really thirsty this week.",
            "Patient: I sleep on four pillows now.",
        ]
    )
    for word in ("monofilament", "pulses", "crepitus", "thirsty", "pillows"):
        assert any(word in c for c in got), (word, got)


def test_a_finding_asked_about_or_denied_is_no_observation() -> None:
    got = _observations(["Nurse: Any thirst?", "Patient: No, no thirst at all."])
    assert got == [], got


def test_a_relative_on_dialysis_is_family_history_the_store_accepts() -> None:
    """ "My brother's on dialysis": kidney failure in the family (the lexicon's end-stage
    kidney disease is named by "on dialysis", "has dialysis"), proposed and not refused as
    naming no condition; a dialysis unit or a dialysis that might come one day names none."""
    import memory_core as mc
    from memory_core.embedding import HashingEmbedder

    now = datetime(2026, 4, 14, 18, tzinfo=UTC)
    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=lambda: now)
    try:
        props = eng.extract_memories(
            "NW-1006",
            "Date: 2026-04-14\nPatient: My brother has dialysis, three times a week.\n"
            "Nurse: The dialysis unit is on the second floor.\n"
            "Dr Shah: If the kidneys get worse you might need dialysis one day.",
            now=now,
        )
    finally:
        eng.store.close()
    conditions = [(p.content, p.whose) for p in props if p.memory_type == "condition"]
    assert conditions == [
        (
            "Family history (brother): Their brother has dialysis, three times a week",
            "family history",
        )
    ], (conditions, props.rejected)


def test_a_vaccine_the_patient_turns_down_is_their_preference_not_an_immunisation() -> None:
    """ "I'll give the shingles one a miss, thanks", "I don't want any more of the Covid
    jabs": the patient's choice, kept as a preference (never as a vaccine had)."""
    now = datetime(2026, 4, 14, 18, tzinfo=UTC)
    text = (
        "Date: 2026-04-14\nNurse: You're due the shingles vaccine and the Covid booster.\n"
        "Patient: I'll give the shingles vaccine a miss, thanks.\n"
        "Patient: And I don't want any more of the Covid jabs, I've decided.\n"
    )
    got = [
        (c.memory_type, c.content.lower())
        for c in RuleExtractor().extract("P", text, now=now).candidates
    ]
    prefs = [c for m, c in got if m == "preference"]
    assert any("shingles" in c for c in prefs) and any("covid" in c for c in prefs), got
    assert not any(m == "immunization" and ("miss" in c or "want" in c) for m, c in got), got


def _social(lines: list[str]) -> list[str]:
    now = datetime(2026, 4, 14, 18, tzinfo=UTC)
    ext = RuleExtractor().extract("NW-1006", "Date: 2026-04-14\n" + "\n".join(lines), now=now)
    return [c.content.lower() for c in ext.candidates if c.memory_type == "social"]


def test_the_patients_job_said_as_what_they_are_is_social_history() -> None:
    """ "I'm a plumber", "I am cook in a hotel", "I work as a postman": the patient's job, now."""
    got = _social(["Dr Shah: What do you do?", "Patient: I'm a plumber, self-employed."])
    assert any("plumber" in c for c in got), got
    got = _social(["Dr Shah: Are you working?", "Patient: Yes, I am cook in a hotel."])
    assert any("cook" in c for c in got), got


def test_a_relatives_job_or_a_job_held_before_is_not_the_patients_job() -> None:
    """A daughter's "I work as a nurse" is hers, the nurse's "I'm a nurse with the heart failure
    team" the nurse's; "I used to work as a cleaner" is history (it may be kept as said, never
    as the job the patient has now)."""
    got = _social(
        [
            "Dr Shah: And this is your daughter?",
            "Daughter: Yes. I work as a nurse, so I help with the tablets.",
            "Daughter: I'm a teacher, so I can only come after four.",
            "Patient: I used to work as a cleaner.",
            "Nurse: Hello, I'm a nurse with the heart failure team. I work nights mostly.",
        ]
    )
    jobs = ("nurse", "teacher", "works as a cleaner", "works nights")
    assert not any(w in c for c in got for w in jobs), got


def test_a_pair_said_before_another_reading_is_the_blood_pressure_by_its_shape() -> None:
    """ "This morning it was 118 over 70, pulse 58": the pair before the pulse is a blood
    pressure by its shape (as it is alone), not lost because the sentence names the pulse."""
    now = datetime(2026, 9, 20, 18, tzinfo=UTC)
    said = "Date: 2026-09-20\nPharmacist: Do you have a monitor at home?\n" + (
        "Patient: Yes. This morning it was 118 over 70, pulse 58."
    )
    got = [
        (c.memory_type, c.content.lower())
        for c in RuleExtractor().extract("P", said, now=now).candidates
    ]
    vitals = [c for m, c in got if m == "vital_sign"]
    assert any("blood pressure" in c and "118/70" in c for c in vitals), got
    assert any("heart rate" in c and "58" in c for c in vitals), got


def test_a_target_said_as_a_bare_pair_is_no_reading() -> None:
    """ "At home we aim for under 135/85": a target, no blood pressure taken -- a pair known
    only by its shape is no reading after a target's word; "It was 148/90 this morning" is."""
    now = datetime(2026, 9, 20, 18, tzinfo=UTC)
    said = (
        "Date: 2026-09-20\nDr Shah: Your average of 152/96 is still above target. At home we aim "
        "for under 135/85.\nPatient: It was 148/90 this morning."
    )
    got = [
        c.content.lower()
        for c in RuleExtractor().extract("P", said, now=now).candidates
        if c.memory_type == "vital_sign"
    ]
    assert not any("135/85" in c for c in got), got
    assert any("148/90" in c for c in got), got


def _responses(lines: list[str]) -> list[str]:
    now = datetime(2026, 8, 20, 18, tzinfo=UTC)
    ext = RuleExtractor().extract("NW-1006", "Date: 2026-08-20\n" + "\n".join(lines), now=now)
    return [c.content.lower() for c in ext.candidates if c.memory_type == "treatment_response"]


def test_an_answer_to_how_a_drug_is_working_is_that_drugs_response() -> None:
    """ "How's the carbocisteine going?" -- "It's helped. The phlegm's much easier to shift":
    the answer is the carbocisteine's effect, though it names no drug; "And how is the
    sumatriptan working for the attacks?" -- "It's brilliant", too. An answer that tells no
    effect ("I haven't started it yet"), or a question that names no drug, proposes none."""
    got = _responses(
        [
            "Nurse: How's the carbocisteine going?",
            "Patient: It's helped. The phlegm's much easier to shift in the mornings.",
            "Dr Osei: And how is the sumatriptan working for the attacks?",
            "Patient: It's brilliant. The 50 mg knocks the headache out within an hour.",
        ]
    )
    assert any("carbocisteine" in c and "helped" in c for c in got), got
    assert any("sumatriptan" in c and "brilliant" in c for c in got), got
    none = _responses(
        [
            "Nurse: How is the sertraline going?",
            "Patient: I haven't started it yet, I was waiting for the pharmacy.",
            "Nurse: How are you getting on generally?",
            "Patient: Much better, thanks.",
        ]
    )
    assert not any("sertraline" in c for c in none), none


def test_no_cigarette_since_a_day_is_smoking_stopped_that_day() -> None:
    """ "I've not had a cigarette since the 3rd", "Haven't smoked since the 3rd": the patient
    quit smoking on the 3rd, said as the habit's absence since a day."""
    for said in ("I've not had a cigarette since the 3rd.", "Haven't smoked since the 3rd."):
        now = datetime(2026, 9, 20, 18, tzinfo=UTC)
        text = f"Date: 2026-09-20\nPharmacist: And smoking?\nPatient: {said}\n"
        got = [
            (c.content, c.created_at.date().isoformat() if c.created_at else None)
            for c in RuleExtractor().extract("P", text, now=now).candidates
            if c.memory_type == "social"
        ]
        assert any("quit smoking" in c and at == "2026-09-03" for c, at in got), (said, got)
