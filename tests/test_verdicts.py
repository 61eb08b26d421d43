"""The decision table (memory_core.facts.rules), rule by rule: each case is two statements of
one type, the rule that must decide them, its verdict and the strength of its evidence; then
domain.md's worked pairs and the demo's cases end to end on MiniLM (candidates by cosine or a
shared key, strong evidence applied at once on automatic types, anything weaker pending)."""

from __future__ import annotations

from datetime import timedelta

import pytest

import memory_core as mc
from memory_core.facts import Context, State, Strength, Verdict, decide_texts, rules
from tests.conftest import NOW

S, W, N = Strength.STRONG, Strength.WEAK, Strength.NONE

#: rule id -> (older, newer, memory type, verdict, strength)
CASES: dict[str, list[tuple[str, str, str, str, Strength]]] = {
    "key.none-shared": [
        # different drugs, tests, allergens, conditions: no key in common
        ("On Ozempic 0.5 mg weekly", "On Jardiance 10 mg daily", "medication", "compatible", N),
        ("LDL 101 mg/dL", "HDL 38 mg/dL", "lab_result", "compatible", N),
        ("Patient has documented penicillin allergy with anaphylactic reaction",
         "Patient has a sulfa drug allergy causing rash", "allergy", "compatible", N),
        ("Hep B surface antibody positive", "Hep C antibody negative", "lab_result",
         "compatible", N),
        ("Hypertension (disorder)", "Viral sinusitis (disorder) is resolved", "condition",
         "compatible", N),
        ("Patient lives alone", "Patient tolerates metformin 500mg well", "social",
         "compatible", N),
        # two turns of nothing but a speaker's label and stop words say nothing to restate
        ("Emi: They really are", "Emi: Will do!", "observation", "compatible", N),
    ],
    "context.hypothetical": [
        ("Patient takes lisinopril 10 mg daily", "If cough develops, switch lisinopril to losartan",
         "medication", "compatible", N),
        ("Metformin 1000 mg BID", "Consider stopping metformin if eGFR falls below 30",
         "medication", "compatible", N),
    ],
    "context.uncertain": [
        ("Gout, on allopurinol", "?gout flare - awaiting urate", "condition", "compatible", N),
        ("Creatinine 1.1 (baseline)", "Possible creatinine 1.8 - lab query, sample haemolysed",
         "lab_result", "compatible", N),
    ],
    "context.question": [
        # issue 30's examples: a question asserts nothing
        ("Metformin 500 mg twice daily", "Patient asked whether to stop metformin",
         "medication", "compatible", N),
        ("Lisinopril 10 mg daily", "Can I stop the lisinopril now my BP is better?",
         "medication", "compatible", N),
    ],
    "context.instruction": [
        ("Metformin 500 mg twice daily", "Sick day rules: stop metformin when vomiting",
         "medication", "compatible", N),
        ("Insulin glargine 20 units at night", "Hold glargine the night before surgery",
         "medication", "compatible", N),
    ],
    "context.definition": [
        ("HbA1c 7.1%", "HbA1c of 6.5% or more is diagnostic of diabetes", "lab_result",
         "compatible", N),
    ],
    "context.reported": [
        ("Sertraline 50 mg daily", "Read that sertraline can be stopped after six months",
         "medication", "compatible", N),
    ],
    "context.future": [
        ("Prednisolone 10 mg daily", "Will reduce prednisolone to 5 mg next month",
         "medication", "compatible", N),
    ],
    "history.before-record": [
        # history dated before the older's own date: what held then says nothing of now
        ("Weight 78 kg on 2026-03-02", "Weighed 95 kg before the gastric sleeve in 2019.",
         "lab_result", "compatible", N),
        ("Levothyroxine 125 mcg od since 2023",
         "Previously took levothyroxine 100 mcg from 2018 to 2022.", "medication", "compatible",
         N),
    ],
    "chat.weak-evidence": [
        # one speaker's chat turns: a paraphrase of a finding is weak, not raised for review
        ("Paola: Hi! I am pretty tired today, school finished at 4 pm",
         "Paola: I haven't slept well, maybe that's why I feel so tired", "observation",
         "compatible", N),
    ],
    "speaker.another": [
        # chat turns stored as memories: each speaker's own statement is that speaker's
        ("Paola: I am pretty tired today after school", "Kevin: I am so tired after the match",
         "observation", "compatible", N),
    ],
    "context.other-person": [
        # an unborn baby's or a cord's readings are not the mother's (fetal: of a test only)
        ("Pulse 84 bpm", "Fetal heart rate 150 bpm on the CTG", "vital_sign", "compatible", N),
        ("Hb 118 g/L", "Cord blood haemoglobin 170 g/L", "lab_result", "compatible", N),
        ("Weight 82 kg", "Patient's baby weighed 3.4 kg", "vital_sign", "compatible", N),
        ("Type 2 diabetes", "Mother has type 2 diabetes", "condition", "compatible", N),
        ("Quit smoking 2019", "Pt's husband still smokes inside the house", "social",
         "compatible", N),
        ("A1c 6.9%", "My husband's A1c came back 9.1 so he's seeing someone", "lab_result",
         "compatible", N),
    ],
    "key.in-passing": [
        ("Metformin 1000 mg BID", "Started empagliflozin 10 mg daily, added to metformin",
         "medication", "compatible", N),
        # a condition said as another's cause ("secondary to", "-associated"): in passing
        ("Type 2 diabetes", "Peripheral neuropathy secondary to diabetes, feet numb",
         "condition", "compatible", N),
        ("Psoriasis", "Psoriasis-associated arthritis in both hands", "condition",
         "compatible", N),
        # every thing of the phrase after "despite" is named in passing
        ("Allergy: sulfa antibiotics - hives",
         "Has taken bumetanide for years despite sulfa antibiotic allergy", "allergy",
         "compatible", N),
    ],
    "statement.restated": [
        ("Patient walks daily in the morning", "Patient walks daily in the morning.",
         "observation", "duplicate", S),
        # nothing the lexicon keys, the same words again: a restatement too, not words-only
        ("Patient reports feeling fine", "Patient says she is feeling fine", "observation",
         "duplicate", S),
    ],
    "key.siblings": [
        ("Type 1 diabetes", "Type 2 diabetes", "condition", "compatible", N),
        ("Insulin glargine 20 units at bedtime", "Insulin lispro 6 units with meals",
         "medication", "compatible", N),
    ],
    "code.different": [],  # coded records: see test_two_codes_are_two_things
    "qualifier.two-places": [
        ("Osteoarthritis, left knee", "Osteoarthritis, right hip", "condition", "compatible", N),
        # a reading before a run is at rest, one right after it on exertion
        ("Heart rate 72 before her run", "Heart rate 158 right after her run", "observation",
         "compatible", N),
        # lying and standing are two postures: a postural drop is no new blood pressure
        ("Blood pressure lying 138/80 mmHg", "Standing BP 112/70 at 3 mins - postural drop",
         "vital_sign", "compatible", N),
        # an order for one side is another order than for the other side; a target is set
        # for where it is read, as a reading is
        ("Latanoprost 0.005% one drop left eye at night",
         "Latanoprost 0.005% one drop right eye at night", "medication", "compatible", N),
        ("Home BP goal below 135/85", "Clinic blood pressure goal under 140/90", "care_plan",
         "compatible", N),
        ("Home BP 150/95 in the mornings", "Clinic BP 132/84 today", "observation",
         "compatible", N),
        ("X-ray left wrist ordered", "X-ray left ankle ordered", "care_plan", "compatible", N),
    ],
    "question.new-answer": [
        ("who won the softball championship this year? Florida State",
         "who won the softball championship this year? UCLA", "observation", "updates", S),
    ],
    "allergy.empty-list": [
        ("NKDA", "Allergic to codeine - severe vomiting", "allergy", "updates", S),
        ("Allergic to codeine - severe vomiting", "NKDA", "allergy", "contradicts", S),
    ],
    "allergy.list-scope": [
        ("NKDA", "Latex allergy - rash", "allergy", "compatible", N),
    ],
    "allergy.list-restated": [
        ("NKDA", "Allergies reviewed at triage: no known drug allergies.", "allergy",
         "duplicate", S),
    ],
    "allergy.refuted": [
        ("Penicillin allergy - rash as a child",
         "Penicillin allergy delabelled: tolerated amoxicillin oral challenge", "allergy",
         "contradicts", S),
        # a reaction to an agent that is no drug (latex, a food) is about that agent too
        ("Contact dermatitis from latex gloves.",
         "Latex reaction not confirmed - patch testing negative.", "adverse_reaction",
         "contradicts", S),
    ],
    "reaction.first": [
        # the older said the drug caused nothing; the newer names a reaction to it
        ("No side effects from ramipril", "Ramipril - dry cough for a month", "adverse_reaction",
         "updates", W),
        ("Denies side effects from metformin", "Metformin upsets her stomach, diarrhoea most days",
         "adverse_reaction", "updates", W),
    ],
    "reaction.another": [
        ("Cough on lisinopril", "New rash on lisinopril", "adverse_reaction", "compatible", N),
        ("Nausea on donepezil", "Vivid dreams when donepezil taken at night",
         "adverse_reaction", "compatible", N),
        # a reaction named as a condition beside one said in words of no condition
        ("Ankle swelling on amlodipine",
         "Amlodipine: she says she keeps going bright red after her tea", "adverse_reaction",
         "compatible", N),
    ],
    "reaction.changed": [
        ("Mild ankle oedema on amlodipine 5 mg", "Severe ankle oedema on amlodipine 5 mg",
         "adverse_reaction", "updates", W),
    ],
    "reaction.recurred": [
        ("Cough on lisinopril resolved after stopping it",
         "Cough on lisinopril again since restarting it", "adverse_reaction", "updates", W),
    ],
    "reaction.resolved": [
        ("Dry cough on lisinopril", "Lisinopril cough resolved after switching to losartan",
         "adverse_reaction", "updates", S),
    ],
    "allergy.same-agent": [
        ("Amlodipine -> ankle swelling", "Norvasc causing bilateral pedal edema",
         "adverse_reaction", "duplicate", W),
    ],
    "allergy.reaction-change": [
        ("Allergic to shellfish - mild lip tingling",
         "Shellfish allergy escalated: anaphylaxis after shrimp", "allergy", "updates", W),
    ],
    "drug.combination-and-part": [
        ("Buprenorphine/naloxone 16/4 mg SL daily", "Naloxone 4 mg nasal spray - kit at home",
         "medication", "compatible", N),
    ],
    "drug.refuted": [
        ("Patient takes atorvastatin 20 mg nightly",
         "Atorvastatin was charted on the wrong patient", "medication", "contradicts", W),
    ],
    "drug.stop": [
        ("Patient takes metformin 500 mg BID", "Metformin stopped - diarrhoea", "medication",
         "updates", S),
        ("Lisinopril 10 mg daily", "Lisinopril 10 mg daily stopped due to cough; started losartan",
         "medication", "updates", S),
        # a stop naming another dose may be another order: a reviewer decides
        ("Acetaminophen 500 MG Oral Tablet", "stopped Acetaminophen 325 MG Oral Tablet",
         "medication", "updates", W),
    ],
    "drug.restart": [
        ("Metformin stopped", "Metformin restarted 500 mg daily", "medication", "updates", S),
        # in a plan, two steps join after review
        ("Hold warfarin 5 mg", "Resume warfarin 2.5 mg after surgery", "care_plan",
         "updates", W),
    ],
    "drug.two-orders": [
        # a modified-release background dose and an as-needed breakthrough dose
        ("Morphine sulfate MR 20 mg twice daily",
         "Oramorph 5 mg every 4 hours as needed for breakthrough pain", "medication",
         "compatible", N),
        ("Nitroglycerin 0.4 mg SL PRN chest pain", "Nitroglycerin patch 0.4 mg/hr daily",
         "medication", "compatible", N),
    ],
    "drug.dose-change": [
        ("Lisinopril 10 mg daily", "Lisinopril increased to 20 mg daily", "medication",
         "updates", S),
        # a route is no place: "by mouth" on one side only changes nothing
        ("ASA 75 mg daily", "Aspirin 150 mg by mouth once daily", "medication", "updates", S),
        ("Insulin glargine 20 units at bedtime", "Lantus titrated to 26 units qHS",
         "medication", "updates", S),
        # a "?" written onto a word is a query of it ("?ADHF": possible heart failure), no
        # question the statement asks and answers; an arrow between two doses is "to"
        ("Furosemide 40 mg orally once daily", "Furosemide increased to 80 mg for ?ADHF",
         "medication", "updates", S),
        ("Amlodipine 10 mg once daily", "amlodipine 10mg -> 5mg, ankle swelling ++",
         "medication", "updates", S),
        # a strength and a count of tablets are no two values of one thing
        ("Tylenol 500 mg q6h PRN pain", "Tylenol 2 tabs qHS PRN sleep", "medication",
         "updates", W),
        # an as-needed dose beside a scheduled one may be a second order (a dose for highs)
        ("Insulin aspart 6 units with meals", "Insulin aspart 2 units as needed for high sugars",
         "medication", "updates", W),
    ],
    "drug.frequency-change": [
        ("Metformin 500 mg daily", "Metformin 500 mg BID", "medication", "updates", S),
        # a weekly dose's day is when it is taken: moved to another day, the order changed
        ("Methotrexate 15 mg once weekly on Mondays",
         "Methotrexate 15 mg now taken on Fridays", "medication", "updates", S),
        # as needed beside at night: maybe a second order, unless the newer says it changed
        ("Lorazepam 0.5 mg at night", "Lorazepam 0.5 mg PRN for agitation", "medication",
         "updates", W),
        ("Lorazepam 0.5 mg at night", "Lorazepam changed to 0.5 mg PRN only", "medication",
         "updates", S),
        # the same side, another time: the order changed
        ("Latanoprost one drop left eye at night", "Latanoprost one drop left eye in the morning",
         "medication", "updates", S),
        # "with meals" says when, not how often: beside a count, for a reviewer
        ("Insulin aspart 6 units with meals", "NovoRapid 6u TDS with meals", "medication",
         "updates", W),
    ],
    "drug.formulation-change": [
        ("Patient tolerates metformin 500mg well",
         "Patient reports persistent GI distress on metformin; switched to extended-release "
         "formulation", "medication", "updates", S),
    ],
    "drug.change-word": [
        ("Takes lisinopril", "Lisinopril increased", "medication", "updates", W),
    ],
    "drug.same": [
        # the same weekly day said again is the same order
        ("Alendronic acid 70 mg every Sunday", "Alendronic acid 70 mg every Sunday morning",
         "medication", "duplicate", S),
        ("Metformin 500 mg BID", "Metformin 500mg twice daily", "medication", "duplicate", S),
        ("Takes metformin", "On metformin", "medication", "duplicate", W),
        # once a day said with when it is taken: the same dose a day (a reviewer may check)
        ("Simvastatin 40 mg once daily", "Simvastatin 40 mg at night", "medication",
         "duplicate", W),
        ("Amlodipine 5 mg once daily", "Amlodipine 5 mg mane", "medication", "duplicate", W),
        ("Metformin 500 mg twice daily", "Metformin 500 mg with breakfast and with dinner",
         "medication", "duplicate", S),
    ],
    "lab.target": [
        ("INR 2.6", "INR target 2-3", "lab_result", "compatible", N),
    ],
    "lab.new-target": [
        ("Goal BP under 140/90", "BP goal lowered to under 130/80", "care_plan", "updates", S),
    ],
    "lab.same-target": [
        ("Goal A1c < 7%", "Target HbA1c below 7 percent", "care_plan", "duplicate", S),
    ],
    "lab.new-value": [
        ("Patient's HbA1c was 8.2% in January", "Patient's HbA1c improved to 7.1% in March",
         "lab_result", "updates", S),
        ("Creatinine 1.2 mg/dL", "Creat, since starting spironolactone 25 mg, up to 1.6",
         "lab_result", "updates", S),
        # one reading says where it was taken and the other not: maybe two readings
        ("Heart rate 72", "Heart rate 158 after exercise", "observation", "updates", W),
    ],
    "lab.same-value": [
        ("HbA1c 7.2% on 2026-03-14", "A1c 7.2% (2026-03-14)", "lab_result", "duplicate", S),
        ("Hb 98 g/L", "Haemoglobin 9.8 g/dL", "lab_result", "duplicate", S),
        # a date that holds the other's is the same reading said again
        ("BP 138/84 on 2026-01-05", "BP 138/84 (from the January clinic) copied into the letter",
         "vital_sign", "duplicate", S),
    ],
    "lab.new-date": [
        ("HbA1c 7.2% in March 2026", "HbA1c 7.2% in June 2026", "lab_result", "updates", S),
    ],
    "lab.result-flip": [
        ("Chlamydia NAAT positive", "Test of cure: chlamydia NAAT negative", "lab_result",
         "updates", S),
    ],
    "lab.first-value": [
        ("HbA1c ordered", "HbA1c 7.4%", "lab_result", "updates", W),
    ],
    "lab.other-measure": [
        ("Fasting glucose 126", "Glucose 180 two hours after lunch", "lab_result",
         "compatible", N),
    ],
    "condition.refuted": [
        ("Atrial fibrillation", "AF ruled out on Holter", "condition", "contradicts", S),
    ],
    "condition.progressed": [
        ("Prediabetes", "Now diagnosed with type 2 diabetes", "condition", "updates", W),
    ],
    "condition.resolved": [
        ("Community-acquired pneumonia, right lower lobe", "CAP resolved - repeat CXR clear",
         "condition", "updates", S),
    ],
    "condition.presence": [
        ("Denies chest pain", "Chest pain on exertion for two weeks", "observation",
         "updates", W),
    ],
    "condition.new-stage": [
        ("CKD stage 3a", "CKD stage 3b", "condition", "updates", S),
    ],
    "condition.spread": [
        ("Hives on the neck", "The hives have spread to his legs", "observation", "updates", S),
    ],
    "condition.another": [
        ("DVT L popliteal vein 3/2025, treated", "New DVT on duplex 9/2026", "condition",
         "compatible", N),
        # an episode of a long-term condition beside the condition
        ("COPD, GOLD stage 2", "COPD exacerbation treated with a rescue pack at home",
         "condition", "compatible", N),
        ("Gout.", "Gout attack in the right knee last week, on colchicine", "condition",
         "compatible", N),
        # ... with the episode's word before it ("an exacerbation of COPD")
        ("COPD", "Infective exacerbation of COPD - doxy 200mg stat then 100mg od x4",
         "condition", "compatible", N),
        ("Ulcerative colitis", "Moderate flare of ulcerative colitis, started prednisolone",
         "condition", "compatible", N),
    ],
    "condition.restated": [
        ("Essential hypertension", "HTN (primary)", "condition", "duplicate", W),
        ("Heart failure with reduced ejection fraction", "HFrEF", "condition", "duplicate", W),
    ],
    "slot.two-kinds": [
        ("Smokes cigars occasionally", "Quit cigarettes 20 years ago", "social", "compatible", N),
        # a kind named in the other number than its phrase ("result" for "abnormal results")
        ("Text messages preferred for appointment reminders.",
         "Phone call preferred for an abnormal test result.", "preference", "compatible", N),
    ],
    "slot.addition": [
        ("Works as a nurse", "Also works weekend shifts at a care home", "social",
         "compatible", N),
    ],
    "slot.presence": [
        ("Has a home health aide three times a week", "No home health aide since March",
         "social", "updates", W),
    ],
    "slot.admitted": [
        # denied by the value none, admitted in words the value rows cannot compare
        ("Teetotal", "Admits to drinking vodka most evenings", "social", "contradicts", W),
        ("Does not drink fizzy drinks", "Has three cans of cola a day", "observation",
         "contradicts", W),
    ],
    "slot.state-change": [
        ("Patient has a car", "Patient no longer has a car", "social", "updates", W),
        # a recurring plan item said planned may be the same item restated: for a reviewer
        ("Annual cardiology follow-up.", "Cardiology: next annual review booked for May.",
         "care_plan", "updates", W),
        ("Refer to cardiology for palpitations.", "Cardiology appointment booked for 3 June.",
         "care_plan", "updates", S),
    ],
    "plan.later-dose": [
        # a later dose of one vaccine: the last dose now, for a reviewer
        ("Tetanus: last booster 2010", "Tetanus booster given in A&E today after a garden fork.",
         "immunization", "updates", W),
    ],
    "plan.done-or-cancelled": [
        ("Referral to cardiology sent", "Attended cardiology clinic", "care_plan", "updates", S),
        ("Colonoscopy scheduled for Dec 12", "Colonoscopy cancelled - pt declined", "care_plan",
         "updates", S),
        # one session of a recurring plan cancelled may be that session: for a reviewer
        ("Physiotherapy weekly", "Physio cancelled this week due to snow", "care_plan",
         "updates", W),
    ],
    "plan.new-timing": [
        ("Plan: recheck HbA1c in three months", "Plan changed: recheck HbA1c in six months",
         "care_plan", "updates", S),
        # a period as the UK writes it: "3/12" three months, "6-monthly" every six months
        ("Review in diabetes clinic in 6 months", "Diabetes clinic f/u 3/12", "care_plan",
         "updates", W),
        ("Diabetes review every 3 months", "Diabetes review 6-monthly from now on", "care_plan",
         "updates", W),
    ],
    "slot.single-valued": [
        # a habit given up, in lay words
        ("Smokes 10 cigarettes/day.", "hasnt had a ciggie in 3 wks!! using the patches",
         "social", "updates", S),
        # two values of a slot of several that cannot hold together: drives / no car
        ("Drives to work every day", "Gave up driving after the stroke", "social", "updates",
         S),
        ("Does not drive", "Now drives herself to clinic", "social", "updates", S),
        # a preferred place of death (PPD) is one place
        ("Preferred place of death: hospital", "Now wishes to die at home with her family",
         "preference", "updates", S),
        # the UK's DNACPR is a do-not-resuscitate order
        ("For CPR and full escalation", "DNACPR form signed today after discussion with his wife",
         "care_plan", "updates", S),
        ("Patient prefers morning appointments", "Patient now prefers afternoon appointments",
         "preference", "updates", S),
        ("Prefers female carers for personal care.", "Now prefers male carers for personal care.",
         "preference", "updates", S),
        ("Smokes 10 cigarettes a day", "Quit smoking in March", "social", "updates", S),
        # a denial and an admission: the newer value, for a reviewer (no word of change)
        ("Denies drug use", "Admits to methamphetamine use on weekends", "social",
         "updates", W),
        ("Lives alone", "Daughter has moved in with her", "social", "updates", S),
        # another value with no word of change: a reviewer decides
        ("Prefers text reminders", "Prefers phone calls", "preference", "updates", W),
    ],
    "slot.new-entry": [
        # a chart field restated with other words: maybe a new value, for a reviewer
        ("Address: 14 Elm Road.", "Address: 3 Birch Court.", "social", "updates", W),
        ("Nominated pharmacy: Lloyds, Station Rd.", "Nominated pharmacy: Well Pharmacy, Market Sq.",
         "preference", "updates", W),
        ("Oncology: chemo cycle 3 on 14/5.", "Oncology: cycle 3 moved to 21/5.", "care_plan",
         "updates", W),
    ],
    "slot.new-amount": [
        ("Walks 20 minutes a day", "Now walks 45 minutes a day", "observation", "updates", S),
    ],
    "reaction.class-member": [
        ("No side effects from ACE inhibitors", "Dry cough on lisinopril, switched to losartan.",
         "adverse_reaction", "updates", W),
    ],
    "slot.past-amount": [
        ("Alcohol 6 units/week", "Used to drink around 40 units a week in his thirties", "social",
         "compatible", N),
    ],
    "slot.same-value": [
        ("Prefers text message reminders", "Likes appointment reminders by SMS", "preference",
         "duplicate", W),
    ],
    "slot.another-value": [
        ("Depends on the bus to reach the clinic", "Daughter drives her to appointments",
         "social", "compatible", N),
    ],
    "slot.two-items": [
        ("F/u podiatry in 2 wks for nail care", "F/u podiatry in 2 wks for orthotics fitting",
         "care_plan", "compatible", N),
        # two entries under one plan's heading, in words apart (a moved item: slot.new-entry)
        ("Smoking cessation: varenicline course.",
         "Smoking cessation: group sessions at the library.", "care_plan", "compatible", N),
    ],
    "response.two-treatments": [
        ("Sumatriptan aborts migraines within 1 hr", "Propranolol cut migraine days to 3 a month",
         "treatment_response", "compatible", N),
    ],
    "response.two-outcomes": [
        ("BP controlled on lisinopril", "Proteinuria reduced on lisinopril",
         "treatment_response", "compatible", N),
        # how it did (helping, not helped) is no outcome: mood and sleep are two
        ("Citalopram is helping his mood", "Citalopram has not helped his sleep, still up at 5am",
         "treatment_response", "compatible", N),
        # an outcome named as a condition beside one said in other words
        ("Ankle oedema improved on furosemide", "Furosemide: breathing easier when lying flat",
         "treatment_response", "compatible", N),
        # the treatment's change to the dose the older already says is no change of it
        ("Bisoprolol 5 mg keeping her heart rate down, 64 at rest.",
         "Feels tired all the time since bisoprolol went up to 5 mg.", "treatment_response",
         "compatible", N),
    ],
    "response.restated": [
        # ... but the same number with its unit is one outcome, in other words
        ("Weight loss of 4 kg on Ozempic", "Lost 4 kg since starting Ozempic",
         "treatment_response", "duplicate", W),
    ],
    "slot.scoped-value": [
        # a newer preference for one purpose beside one said of none (the other way round, a
        # reviewer decides: "slot.single-valued" above)
        ("Prefers a phone call from the practice",
         "Prefers text messages for appointment reminders", "preference", "compatible", N),
    ],
    "response.outcome-changed": [
        ("A1c not at goal on metformin alone", "A1c at goal after adding semaglutide",
         "treatment_response", "updates", W),
    ],
    "response.treatment-changed": [
        ("Sertraline 100 mg: mood much better.", "Sertraline increased to 150 mg, mood still flat.",
         "treatment_response", "updates", W),
    ],
    "response.refuted": [
        ("Good response to Lasix, weight down 2 kg",
         "Correction: pt had not been taking Lasix (bottle unopened)", "treatment_response",
         "contradicts", W),
    ],
    "words.same-subject": [
        # nothing the lexicon keys: the words alone, weak (never of a free-text type: below)
        ("Uses the rollator indoors only", "Now uses the rollator outdoors as well",
         "treatment_response", "updates", W),
        ("Patient reports feeling fine", "Says she feels fine most days", "preference",
         "duplicate", W),
    ],
    "episode.dated-apart": [
        # the same thing ended twice, each on its own date: two episodes of history
        ("Pneumonia, resolved March 2019", "Pneumonia resolved in January 2023", "condition",
         "compatible", N),
        ("Stopped prednisolone in 2021", "Stopped prednisolone in 2024", "medication",
         "compatible", N),
    ],
    "statement.corrects": [
        # a note that says an earlier record was wrong, naming nothing the table keys in common
        ("Needs a Polish interpreter", "Interpreter need recorded in error - speaks English",
         "preference", "updates", W),
        ("Wears glasses for reading", "Correction: no glasses, that note belonged to her sister",
         "observation", "updates", W),
        ("Fever after the flu vaccine",
         "Correction: the fever followed the shingles vaccine, not the flu one",
         "adverse_reaction", "updates", W),
        ("Hypothyroidism", "Diagnosis corrected: hyperthyroidism, TSH suppressed", "condition",
         "updates", W),
        ("Knee pain better with physio", "Pt never actually went to physio - waiting list",
         "treatment_response", "updates", W),
    ],
    "default.compatible": [
        # an occasion of a habit is no change of it
        ("Drinks 14 units a week", "Had 2 pints at the weekend", "social", "compatible", N),
        ("HbA1c ordered", "HbA1c sample sent to the lab", "lab_result", "compatible", N),
        # a count of weeks is when a test is due, not its result
        ("Potassium 4.1 mmol/L", "Recheck potassium in 2 weeks", "lab_result", "compatible", N),
    ],
}  # fmt: skip

_PARAMS = [
    pytest.param(rule, *case, id=f"{rule}-{i}")
    for rule, cases in CASES.items()
    for i, case in enumerate(cases)
]


@pytest.mark.parametrize(("rule", "older", "newer", "mtype", "verdict", "strength"), _PARAMS)
@pytest.mark.usefixtures("rules_only")
def test_rule(
    rule: str, older: str, newer: str, mtype: str, verdict: str, strength: Strength
) -> None:
    d = decide_texts(older, newer, mtype)
    assert (d.rule, d.verdict.value, d.strength) == (rule, verdict, strength), d.evidence
    if d.supersedes:
        assert d.evidence, "every superseding decision says why"


def test_every_rule_id_has_a_case_and_each_row_returns_only_its_own() -> None:
    from memory_core.facts import read

    assert set(CASES) <= set(rules.rule_ids())
    missing = set(rules.rule_ids()) - {r for r, cases in CASES.items() if cases}
    # rule ids with no golden case of their own yet say so here, by name
    assert missing <= {
        "code.different", "allergy.reinstated", "reaction.added", "lab.same-result",
        "plan.restated", "condition.recurred", "condition.changed", "slot.same-amount",
        "slot.plan-restated", "response.added", "question.same-answer",
        # across types, not rows of the table: tests/test_assertion.py and
        # tests/test_drug_class_named.py, tests/test_drug_clipped_name.py
        "drug.stop-named-elsewhere", "drug.class-named", "drug.clipped-name",
    }, missing  # fmt: skip
    for cases in CASES.values():
        for older, newer, mtype, _v, _s in cases:
            row, d = rules.decide_row(read(older, mtype), read(newer, mtype), mtype, older, newer)
            assert d.rule in row.decides, (row.id, d.rule)


def test_strong_evidence_needs_a_shared_key_and_an_explicit_change() -> None:
    """No case above decides strongly without a key both statements share (a statement
    restated word for word aside: nothing is hidden by it)."""
    for rule, cases in CASES.items():
        for older, newer, mtype, _verdict, strength in cases:
            d = decide_texts(older, newer, mtype)
            if strength is S and rule != "statement.restated":
                assert d.key, (rule, older, newer)


# --- coded records ----------------------------------------------------------------------------
def test_two_codes_are_two_things() -> None:
    from memory_core.facts import decide, read_coded

    htg = read_coded("Hypertriglyceridemia (disorder)", "condition", ["snomed:302870006"], "active")
    sinus = read_coded(
        "Viral sinusitis (disorder) is resolved", "condition", ["snomed:444814009"], "resolved"
    )
    d = decide(htg, sinus, "condition")
    assert (d.rule, d.verdict.value) == ("code.different", "compatible")
    # the same code resolved: strong
    same = read_coded("Viral sinusitis (disorder)", "condition", ["snomed:444814009"], "active")
    d = decide(same, sinus, "condition")
    assert (d.rule, d.verdict.value, d.strength) == ("condition.resolved", "updates", S)
    # two acetaminophen orders of two RxNorm codes: two orders, whatever the words
    a500 = read_coded("Acetaminophen 500 MG Oral Tablet", "medication", ["rxnorm:198440"], "active")
    a325 = read_coded(
        "Acetaminophen 325 MG Oral Tablet", "medication", ["rxnorm:313782"], "stopped"
    )
    assert decide(a500, a325, "medication").rule == "code.different"


def test_two_episodes_of_one_coded_condition_are_two_facts_of_history() -> None:
    """Synthea's acute bronchitis resolved in 2015 and again in 2016, five pregnancies each
    resolved: 23 of 35 pending reviews on 20 patients were such pairs (each pair of episodes).
    Resolved on another date is another episode; resolved on the day the active record was
    written is the same episode ending (strong, at once)."""
    from memory_core.facts import decide, read_coded

    code = ["snomed:10509002"]
    first = read_coded("Acute bronchitis", "condition", code, "resolved", date="2015-06-04")
    second = read_coded("Acute bronchitis", "condition", code, "resolved", date="2016-03-29")
    d = decide(first, second, "condition")
    assert (d.rule, d.verdict.value, d.strength) == ("episode.dated-apart", "compatible", N)
    again = read_coded("Acute bronchitis", "condition", code, "resolved", date="2015-06-04")
    assert decide(first, again, "condition").verdict.value == "duplicate"
    active = read_coded("Acute bronchitis", "condition", code, "active", date="2016-03-10")
    d = decide(active, second, "condition")
    assert (d.rule, d.verdict.value, d.strength) == ("condition.resolved", "updates", S)


def test_a_coded_record_meets_a_statement_in_words() -> None:
    from memory_core.facts import decide, read, read_coded

    coded = read_coded("Essential hypertension", "condition", ["snomed:59621000"], "active")
    words = read("HTN, well controlled on lisinopril", "condition")
    assert "condition:hypertension" in coded.keys & words.keys
    resolved = read_coded("Essential hypertension", "condition", ["snomed:59621000"], "resolved")
    assert decide(words, resolved, "condition").rule == "condition.resolved"


# --- end to end on MiniLM: domain.md's worked pairs and the demo's cases -----------------------


def _add(e: mc.MemoryEngine, text: str, mtype: str, days: float) -> mc.AddResult:
    return e.add_memory("NW-1", text, mtype, created_at=NOW - timedelta(days=days))


def test_worked_pairs_end_to_end(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    morning = _add(e, "Patient prefers morning appointments", "preference", 300).memory
    res = _add(e, "Patient now prefers afternoon appointments", "preference", 10)
    assert [(s.old_id, s.verdict, s.state, s.rule) for s in res.supersessions] == [
        (morning.id, "updates", mc.SupersessionState.AUTO, "slot.single-valued")
    ]
    assert "morning → afternoon" in res.supersessions[0].evidence
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
    assert [(s.old_id, s.verdict, s.rule) for s in mar.supersessions] == [
        (jan.id, "updates", "lab.new-value")
    ]
    ranked = [m.memory.id for m in e.retrieve("NW-1", "HbA1c", k=10, record_access=False)]
    assert ranked[0] == mar.memory.id and jan.id not in ranked  # the newer one first
    kept = e.get(jan.id)  # the older one kept as history, its base importance unchanged
    assert kept.status is mc.Status.SUPERSEDED and kept.importance == jan.importance
    alone = _add(e, "Patient lives alone", "social", 60)
    assert alone.supersessions == ()
    lisinopril = _add(e, "Patient takes lisinopril 10 mg daily", "medication", 50).memory
    cond = _add(e, "If cough develops, switch lisinopril to losartan", "care_plan", 40)
    assert cond.supersessions == () and e.get(lisinopril.id).status is mc.Status.ACTIVE
    metformin = _add(e, "Metformin 1000 mg BID", "medication", 30).memory
    empa = _add(e, "Started empagliflozin 10 mg daily, added to metformin", "medication", 20)
    assert empa.supersessions == () and e.get(metformin.id).status is mc.Status.ACTIVE


def test_a_shared_key_finds_a_pair_below_the_cut(minilm_engine: mc.MemoryEngine) -> None:
    """ "Lantus titrated to 26 units" meets "insulin glargine 20 units" whatever their cosine."""
    e = minilm_engine
    old = _add(e, "Insulin glargine 20 units at bedtime", "medication", 30).memory
    new = _add(e, "Lantus titrated to 26 units qHS", "medication", 1)
    (sup,) = new.supersessions
    assert (sup.old_id, sup.rule, sup.state) == (
        old.id,
        "drug.dose-change",
        mc.SupersessionState.AUTO,
    )
    assert "insulin glargine" in sup.evidence and "20 units" in sup.evidence


def test_weak_evidence_goes_to_review_on_an_automatic_type(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    old = _add(e, "Essential hypertension", "condition", 30).memory
    new = _add(e, "HTN (primary)", "condition", 1)
    (sup,) = new.supersessions
    assert (sup.old_id, sup.rule, sup.state) == (
        old.id,
        "condition.restated",
        mc.SupersessionState.PENDING,
    )
    assert e.get(old.id).status is mc.Status.ACTIVE


def test_demo_cases_end_to_end(minilm_engine: mc.MemoryEngine) -> None:
    e = minilm_engine
    aug = _add(e, "Patient's HbA1c rose to 9.9% in August", "lab_result", 90).memory
    octo = _add(e, "Patient's HbA1c rose to 10.3% in October", "lab_result", 30)
    assert [(s.old_id, s.verdict) for s in octo.supersessions] == [(aug.id, "updates")]
    er = _add(
        e,
        "Patient reports persistent GI distress on metformin; switched to extended-release "
        "formulation",
        "medication",
        50,
    ).memory
    stop = _add(e, "Patient stopped metformin ER because of persistent diarrhoea", "medication", 5)
    assert [(s.old_id, s.verdict, s.state, s.rule) for s in stop.supersessions] == [
        (er.id, "updates", mc.SupersessionState.AUTO, "drug.stop")
    ]


def test_an_empty_allergy_list_is_a_candidate_whatever_its_cosine(
    minilm_engine: mc.MemoryEngine,
) -> None:
    e = minilm_engine
    nkda = _add(e, "NKDA", "allergy", 300).memory
    latex = _add(e, "Latex allergy - contact rash", "allergy", 200)
    assert latex.supersessions == ()  # NKDA covers drugs only
    # "NKDA" / "allergic to codeine": cosine 0.03, far below the cut, yet one allergy list
    preview = e.preview_supersessions("NW-1", "Allergic to codeine - severe vomiting", "allergy")
    assert [(p.memory.id, p.mode, p.rule) for p in preview] == [
        (nkda.id, "review", "allergy.empty-list")
    ]
    assert preview[0].similarity < e.threshold_for("allergy")
    codeine = _add(e, "Allergic to codeine - severe vomiting", "allergy", 10)
    assert [(s.old_id, s.verdict, s.state) for s in codeine.supersessions] == [
        (nkda.id, "updates", mc.SupersessionState.PENDING)
    ]  # a safety type: for review, NKDA stays in the prompt until then
    assert e.get(nkda.id).status is mc.Status.ACTIVE


def test_the_back_scan_finds_pairs_about_one_key_below_the_cut(
    minilm_engine: mc.MemoryEngine,
) -> None:
    e = minilm_engine
    rows = [
        {"patient_id": "NW-1", "content": text, "memory_type": mtype,
         "created_at": NOW - timedelta(days=d)}
        for text, mtype, d in (
            ("NKDA", "allergy", 300),
            ("Allergic to codeine - severe vomiting", "allergy", 10),
            ("Insulin glargine 20 units at bedtime", "medication", 40),
            ("Lantus titrated to 26 units qHS", "medication", 5),
        )
    ]  # fmt: skip
    e.add_memories(rows, detect=False)
    found = e.scan_contradictions("NW-1")
    assert sorted((s.rule, s.state.value) for s in found) == [
        ("allergy.empty-list", "pending"),
        ("drug.dose-change", "auto"),
    ]
    assert e.scan_contradictions("NW-1") == []  # recorded once


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        # the held-out failures: two true facts, never hidden at once
        ("Metformin 1000 mg BID", "Started empagliflozin 10 mg daily, added to metformin",
         "medication"),
        ("Lisinopril 10 mg daily", "If cough develops, switch lisinopril to losartan",
         "medication"),
        ("Metformin 500 mg BID", "Consider stopping metformin if eGFR falls below 30",
         "medication"),
        ("Smokes cigars occasionally", "Quit cigarettes 20 years ago", "social"),
        ("Hep B surface antibody positive", "Hep C antibody negative", "lab_result"),
        # a drug named as a qualifier of a noun is no statement about the drug
        ("Methotrexate 15 mg once weekly (Mondays)",
         "Folic acid 5 mg once weekly on Thursday - not on methotrexate day", "medication"),
        # a ratio of two analytes is a measure of its own
        ("PSA 3.1 ng/mL", "Free/total PSA ratio 0.22", "lab_result"),
        ("HDL 1.4 mmol/L", "Cholesterol/HDL ratio 3.9", "lab_result"),
        # chat turns (REALTALK): a speaker's label and a question are no key, two long turns
        # share a few words by chance, an event is no change of a habit of several values
        ("elise: How about you Kate? Are you interested in art and do you have a favorite style?",
         "elise: What about you Kate? Do you have any interest in planes", "observation"),
        ("Emi: I bet that was really tough for you, it is like the person you remember is gone",
         "Emi: Are you feeling any better since seeing your ex?", "observation"),
        ("elise: I will talk to you tomorrow Kate, I am going out for a walk now and then dinner",
         "elise: I just had my first yoga class and it went amazing!", "observation"),
    ],
)  # fmt: skip
def test_two_true_facts_are_never_superseded_at_once(older: str, newer: str, mtype: str) -> None:
    d = decide_texts(older, newer, mtype)
    assert not d.supersedes, (d.rule, d.evidence)


def test_docs_verdicts_lists_every_rule_id() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "verdicts.md").read_text()
    missing = [r for r in rules.rule_ids() if f"`{r}`" not in page]
    assert not missing, missing
    rows = [r.id for r in rules.TABLE]
    assert all(f"| `{r}` |" in page for r in rows), "every row of the table has its line"


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Patient has a car", "Patient no longer has a car", "social"),
        ("Takes metformin", "Does not take metformin", "medication"),
        ("Metformin 500 mg", "Metformin increased to 500 mg", "medication"),
        ("Chest pain on exertion", "No chest pain on exertion", "condition"),
    ],
)
def test_a_negation_or_a_change_is_never_a_restatement(older: str, newer: str, mtype: str) -> None:
    assert decide_texts(older, newer, mtype).rule != "statement.restated"


def test_a_statement_dated_before_the_older_was_recorded_is_for_a_reviewer() -> None:
    """A newer statement about an earlier time ("2019: omeprazole 40 mg BD for 8 weeks") read
    after the older was charted is no explicit change of the current fact: weak, and the
    evidence says so. Dated on or after the older's own date, it stays strong."""
    from memory_core.facts import read

    older, newer = "Omeprazole 20 mg daily", "2019: omeprazole 40 mg BD"
    fo, fn = read(older, "medication"), read(newer, "medication")
    assert rules.decide(fo, fn, "medication", older, newer).strong  # no recording date known
    d = rules.decide(fo, fn, "medication", older, newer, older_on="2026-01-05")
    assert d.supersedes and d.strength is W
    assert "dated 2019, before the older's 2026-01-05" in d.evidence
    # a sentence that only mentions another dose, without saying it changed, is for a reviewer
    # whatever its date (issue 30: an automatic change needs a statement that asserts it)
    narrative = "2019: omeprazole 40 mg BD for 8 weeks, then stepped down"
    d = rules.decide(fo, read(narrative, "medication"), "medication", older, narrative)
    assert d.supersedes and d.strength is W
    older, newer = "LDL 118 mg/dL on 2025-11-20", "LDL cholesterol 132 mg/dL on 2026-02-02"
    fo, fn = read(older, "lab_result"), read(newer, "lab_result")
    assert rules.decide(fo, fn, "lab_result", older, newer, older_on="2026-01-05").strong


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Levothyroxine 125 mcg od.", "Previously took levothyroxine 100 mcg from 2018 to 2022.",
         "medication"),
        ("Weight 78 kg.", "Weighed 95 kg before the gastric sleeve in 2019.", "lab_result"),
        ("PSA 2.4 ng/mL", "PSA was 6.8 in 2018 before the prostate biopsy (benign).",
         "lab_result"),
        ("Ramipril 10 mg once daily.", "Was on ramipril 2.5 mg until 2019.", "medication"),
    ],
)  # fmt: skip
def test_history_from_before_the_older_was_recorded_asks_no_reviewer(
    older: str, newer: str, mtype: str
) -> None:
    """History dated before the older was recorded (the older charted 2026-06-01, the newer
    says 2018-2022) says nothing of the current fact: compatible, no reviewer asked. The same
    history dated after the older was charted, or not dated at all, is still for a reviewer.
    Before this, each went to review (87 kept facts of the statement sets, none of them a
    change)."""
    from memory_core.facts import read

    fo, fn = read(older, mtype), read(newer, mtype)
    d = rules.decide(fo, fn, mtype, older, newer, older_on="2026-06-01", newer_on="2026-07-01")
    assert (d.rule, d.supersedes) == ("history.before-record", False), d
    assert "before the older's 2026-06-01" in d.evidence
    d = rules.decide(fo, fn, mtype, older, newer, older_on="2015-06-01", newer_on="2026-07-01")
    assert d.supersedes and not d.strong, d  # the history is after the older: a reviewer
    undated = "Years ago I was on 7 mg of warfarin when I had the clot in my leg"
    fw, fu = read("Warfarin 3 mg daily", "medication"), read(undated, "medication")
    d = rules.decide(fw, fu, "medication", "Warfarin 3 mg daily", undated, "2026-06-01")
    assert d.supersedes and not d.strong, d


@pytest.mark.parametrize(
    ("older", "newer", "strong"),
    [
        # the month dates the reading: January of the year it was written, before June
        (
            "Oxygen saturation 95% on air",
            "SpO2 was 89% on air during the admission in January.",
            False,
        ),
        ("TSH 2.1", "TSH was 5.8 in March", False),
        # a month after the writing's own month is last year's
        ("eGFR 52", "eGFR 44 in September", False),
        # a word of now or of this occasion: the month is of another value
        ("eGFR 52", "eGFR 44 this week; it was 52 in March", True),
        ("HbA1c 58 mmol/mol", "HbA1c 48 mmol/mol today (58 in January)", True),
        # this month is not before the older's
        ("TSH 2.1", "TSH was 5.8 in July", True),
        # a state said with the month it began is current
        ("Drinks about 30 units of alcohol a week", "Teetotal since January", True),
    ],
)
def test_a_month_without_its_year_is_the_last_such_month_before_the_writing(
    older: str, newer: str, strong: bool
) -> None:
    """A newer statement written on 2026-07-01 about a reading "in January" dates it January
    2026: before the older was recorded (2026-06-01), so no change at once. Before this, a
    month without its year was never before anything."""
    from memory_core.facts import read
    from memory_core.facts.model import SUBJECT_KINDS

    mtype = "social" if "units" in older else "lab_result"
    fo, fn = read(older, mtype), read(newer, mtype)
    assert any(f.kind in SUBJECT_KINDS[mtype] for f in fn.facts)
    d = rules.decide(fo, fn, mtype, older, newer, older_on="2026-06-01", newer_on="2026-07-01")
    assert d.supersedes
    assert d.strong is strong, d
    if not strong:
        assert "before the older's 2026-06-01" in d.evidence


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        (
            "Hepatitis B vaccine second dose due in August",
            "The second dose of hepatitis B vaccine is usually given one month after the first.",
            "care_plan",
        ),
        (
            "Metformin 500 mg twice daily",
            "Metformin is usually stopped before a contrast scan.",
            "medication",
        ),
        (
            "Methotrexate 15 mg weekly",
            "Methotrexate is generally reduced to 10 mg weekly in renal impairment.",
            "medication",
        ),
        (
            "Warfarin 3 mg daily",
            "Warfarin is normally held for 5 days before surgery.",
            "medication",
        ),
        (
            "HbA1c 58 mmol/mol",
            "HbA1c is typically 42 mmol/mol in adults without diabetes.",
            "lab_result",
        ),
        (
            "Atorvastatin 20 mg at night",
            "Atorvastatin 40 mg is the usual high-intensity dose.",
            "medication",
        ),
        ("Atorvastatin 20 mg at night", "Licensed dose range 10-80 mg daily.", "medication"),
    ],
)
def test_what_is_usually_done_is_a_definition_not_the_patients_change(
    older: str, newer: str, mtype: str
) -> None:
    """A sentence of what is usually, typically, normally or generally done says how things go
    in general (assertion.json's DEFINITION): it changes nothing of the patient's own plan,
    drug or result ("A booster dose ... is usually given 6 to 12 months after the first dose"
    had completed the patient's booster at once)."""
    d = decide_texts(older, newer, mtype)
    assert not d.supersedes, d


def test_a_habits_amount_is_compared_a_day_when_its_period_is_said() -> None:
    """ "140 cigarettes per week" is the 20 a day charted: a restatement for a reviewer at most,
    never a new amount at once; 70 a week is a new amount; an amount said without its period
    is compared as written ("cut down to 10 cigarettes")."""
    from memory_core.facts import read

    older = "Smokes 20 cigarettes a day"
    assert read(older, "social").facts[0].value.endswith("amount=20 cigarettes/day")
    same = decide_texts(older, "Smoking: 140 cigarettes per week.", "social")
    assert not same.strong and same.rule != "slot.new-amount", same
    fewer = decide_texts(older, "Smokes 70 cigarettes per week now", "social")
    assert fewer.rule == "slot.new-amount" and fewer.strong
    assert "20 cigarettes/day" in fewer.evidence and "70 cigarettes/week" in fewer.evidence
    assert decide_texts(older, "cut down to 10 cigarettes", "social").rule == "slot.new-amount"
    more = decide_texts("Drinks 14 units a week", "Drinks 28 units a week", "social")
    assert more.rule == "slot.new-amount" and more.strong


def test_a_qualified_reading_is_keyed_as_the_analyte_it_makes() -> None:
    """labs.json's ``when``: a glucose taken fasting is a fasting glucose, so "Glucose, fasting:
    126 mg/dL" and "Fasting glucose 5.8 mmol/L" are two values of one test."""
    d = decide_texts("Glucose, fasting: 126 mg/dL", "Fasting glucose 5.8 mmol/L", "lab_result")
    assert (d.rule, d.verdict.value) == ("lab.new-value", "updates"), d.evidence


@pytest.mark.parametrize("mtype", ["observation", "care_plan", "social"])
def test_free_text_notes_are_not_read_by_their_words(mtype: str) -> None:
    """Two notes of a free-text type that share words: neither replaces the other (chat
    turns are stored as observations: the words-only reading made 22 reviews per 100 turns);
    the same words again still restate."""
    # (a rollator is the mobility slot's now: a magnifier is no chart slot)
    d = decide_texts("Uses the magnifier indoors only", "Now uses the magnifier outdoors as well",
                     mtype)  # fmt: skip
    assert d.rule == "key.none-shared" and not d.supersedes
    same = decide_texts("Emi: See you at the game", "Emi: see you at the game!", mtype)
    assert same.rule == "statement.restated"


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        # "correction" that is not in a heading names a thing ("correction scale")
        ("Insulin glargine 20 units at night", "Insulin aspart with meals plus correction scale",
         "medication"),
        # a refutation with its own thing (kinds) is a fact about that thing
        ("Allergic to penicillin", "Tolerated cefalexin last winter", "allergy"),
        # a question, a condition: nothing corrected
        ("Needs a Polish interpreter", "Was the interpreter need recorded in error?",
         "preference"),
        ("Needs a Polish interpreter", "If the interpreter flag is in error, remove it",
         "preference"),
        # a correction that refutes a thing of its own the older does not name
        ("Asthma", "COPD entered in error", "condition"),
        # a chat turn says "incorrect" of anything; it corrects no record
        ("Kim: The film was long", "Kim: The reviews are incorrect though", "observation"),
    ],
)  # fmt: skip
def test_a_correction_reopens_nothing_it_does_not_correct(
    older: str, newer: str, mtype: str
) -> None:
    d = decide_texts(older, newer, mtype)
    assert d.rule != "statement.corrects", d.evidence
    assert not d.supersedes or d.rule != "statement.corrects"


def test_a_correction_is_never_applied_at_once_and_says_its_words() -> None:
    d = decide_texts(
        "Uses a magnifier outdoors",
        "Magnifier entry incorrect; reads with large print",
        "observation",
    )
    assert (d.rule, d.strength) == ("statement.corrects", W)
    assert '"incorrect"' in d.evidence


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Uses a wheelchair outdoors", "Wheelchair entry incorrect; walks with a frame",
         "observation"),
        ("Lives alone", "Lives alone entry incorrect; lives with her daughter", "social"),
    ],
)  # fmt: skip
def test_a_correction_a_row_reads_as_a_change_is_still_for_a_reviewer(
    older: str, newer: str, mtype: str
) -> None:
    """A chart slot's row reads "entry incorrect; walks with a frame" as a change of the slot:
    the note says an earlier record was wrong, so a reviewer decides (it was applied at once)."""
    d = decide_texts(older, newer, mtype)
    assert d.supersedes and d.strength is W, (d.rule, d.evidence)
    assert '"incorrect"' in d.evidence


def test_a_fetal_words_other_person_is_a_tests_not_a_conditions() -> None:
    """ "Fetal" makes a test's reading the unborn baby's; a condition named with it (fetal
    alcohol spectrum disorder) is the patient's own."""
    d = decide_texts(
        "Fetal alcohol spectrum disorder",
        "Fetal alcohol spectrum disorder resolved",
        "condition",
    )
    assert d.rule != "context.other-person", d.evidence


def test_other_values_of_a_slot_of_several_stay_beside_each_other() -> None:
    """Only the exclusive values of transport replace each other: a lift from family beside
    driving is another way to clinic."""
    d = decide_texts("Drives his own car", "His son drives him to appointments", "social")
    assert not d.supersedes, d.evidence


@pytest.mark.parametrize(
    ("older", "newer", "strength"),
    [
        # a pharmacy named as where the medicine comes from: a change of supplier, for review
        ("Levothyroxine 75 mcg daily",
         "No longer collects his levothyroxine from the chemist on Main Street", W),
        ("Insulin glargine 20 units at night",
         "Stopped getting her insulin from Lloyds, uses the online pharmacy now", W),
        # a pharmacy a prescription is sent to names no source: the change stands
        ("Amlodipine 5 mg OD",
         "Amlodipine increased to 10 mg OD, prescription sent to the pharmacy", S),
    ],
)  # fmt: skip
def test_a_drug_change_beside_its_supplier_is_for_a_reviewer(
    older: str, newer: str, strength: Strength
) -> None:
    d = decide_texts(older, newer, "medication")
    assert d.supersedes and d.strength is strength, d.evidence


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Prediabetes", "Diabetes clinic: two HbA1c results of 51 and 53 confirm type 2 diabetes."),
        ("Impaired fasting glucose", "Diagnosed with type 2 diabetes today"),
        ("Mild cognitive impairment", "Memory clinic diagnosis today: Alzheimer's dementia."),
    ],
)
def test_a_diagnosis_makes_the_condition_it_progresses_from_history_for_a_reviewer(
    engine: mc.MemoryEngine, clock: object, older: str, newer: str
) -> None:
    """conditions.json's ``follows``: a newer statement asserting type 2 diabetes after
    "prediabetes" (a key of its own) supersedes it -- weak evidence, pending review, never at
    once; the new memory reaches the old one through the precursor's key, whatever the
    cosine. Before: no key in common, both stayed current."""
    d = decide_texts(older, newer, "condition")
    assert d.rule == "condition.progressed" and d.supersedes and d.strength is W
    old = engine.add_memory("P-PROG", older, "condition", created_at=NOW - timedelta(days=90))
    res = engine.add_memory("P-PROG", newer, "condition")
    mine = [s for s in res.supersessions if s.old_id == old.memory.id]
    assert [(s.rule, s.state.value) for s in mine] == [("condition.progressed", "pending")]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Prediabetes", "Her mother has type 2 diabetes."),
        ("Prediabetes", "Type 2 diabetes ruled out on the repeat HbA1c."),
        ("Prediabetes", "Could this be type 2 diabetes?"),
        ("Type 2 diabetes", "Prediabetes"),
        ("Mild cognitive impairment", "Leaflet on dementia given to her husband."),
    ],
)
def test_a_diagnosis_of_someone_else_denied_asked_or_only_named_supersedes_no_precursor(
    older: str, newer: str
) -> None:
    assert not decide_texts(older, newer, "condition").supersedes


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "rule"),
    [
        (
            "Warfarin 3 mg daily",
            "Son rang: Dad's warfarin was stopped by the cardiologist yesterday.",
            "medication",
            "drug.stop",
        ),
        (
            "Amlodipine 5 mg once daily",
            "Email from patient's husband: 'the GP put my wife's amlodipine up to 10 mg.'",
            "medication",
            "drug.dose-change",
        ),
        (
            "Sertraline 50 mg daily",
            "Mum phoned: her son has stopped his sertraline.",
            "medication",
            "drug.stop",
        ),
    ],
)
def test_a_relative_who_writes_names_the_patient_by_the_relation_the_other_way_round(
    older: str, newer: str, mtype: str, rule: str
) -> None:
    """assertion.json's ``writer_kin``: a daughter or son who phones or writes calls the
    patient Mum or Dad, a spouse "my wife", a parent "her son": those words are the patient, so
    the change is the patient's. Before: every relative word was another person."""
    d = decide_texts(older, newer, mtype)
    assert d.rule == rule and d.supersedes, d


@pytest.mark.parametrize(
    ("newer", "mtype", "state"),
    [
        ("He has stopped his sertraline.", "medication", "stopped"),
        ("She has stopped taking her sertraline.", "medication", "stopped"),
        ("The cough has stopped.", "condition", "resolved"),
        ("Her headaches have stopped since the new glasses.", "condition", "resolved"),
    ],
)
def test_has_stopped_stops_a_drug_and_resolves_a_condition(
    newer: str, mtype: str, state: str
) -> None:
    """ "has stopped" was a condition-only phrase (resolved), and as the longest match it hid
    "stopped" from the drug after it: "He has stopped his sertraline" left sertraline active."""
    from memory_core.facts import read

    assert [f.state.value for f in read(newer, mtype).facts] == [state]


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        # the patient introduces the relative: "Mum" is the patient's mother
        ("Warfarin 3 mg daily", "My daughter says Mum has stopped her warfarin.", "medication"),
        # another relative than the writer's word for the patient
        ("Warfarin 3 mg daily", "Son rang: Dad's brother stopped his warfarin.", "medication"),
        ("INR 2.6", "Daughter phoned: her aunt's INR was 3.8 today.", "lab_result"),
        # no writer: whose mum it is cannot be told
        ("INR 2.6", "Mum's INR was 3.8 today", "lab_result"),
        # advice on an amount is no amount
        ("Drinks about 20 units of alcohol a week", "Aim for under 14 units a week.", "social"),
    ],
)
def test_other_relatives_and_advice_change_nothing(older: str, newer: str, mtype: str) -> None:
    assert not decide_texts(older, newer, mtype).supersedes


@pytest.mark.parametrize(
    ("text", "timing"),
    [
        ("Physiotherapy twice weekly", "2/week"),
        ("Physiotherapy 3 times a week", "3/week"),
        ("Physiotherapy once a week", "1 week"),
        ("District nurse home visits fortnightly", "2 week"),
        ("Annual diabetic foot check", "1 year"),
        ("Foot checks every 3 months", "3 month"),
        ("Diabetes review 6-monthly", "6 month"),
        ("Follow up in 3 months", "3 month"),
    ],
)
def test_a_plans_interval_is_read_as_written(text: str, timing: str) -> None:
    """How often a plan item recurs: "twice weekly" is twice a week (it was read "2 week",
    every two weeks), "fortnightly" every two weeks, "annual" every year."""
    from memory_core.facts import read
    from memory_core.facts.values import parts

    got = [parts(f.value).get("timing") for f in read(text, "care_plan").facts if f.kind == "slot"]
    assert got == [timing]


def test_a_plan_made_more_or_less_frequent_is_a_new_timing() -> None:
    d = decide_texts(
        "Annual diabetic foot check", "Foot checks increased to every 3 months.", "care_plan"
    )
    assert d.rule == "plan.new-timing" and d.strong, d
    d = decide_texts(
        "Community nurse home visits fortnightly",
        "Home visits reduced to every two months now that she is stable.",
        "care_plan",
    )
    assert d.rule == "plan.new-timing" and d.strong, d
    same = decide_texts("Physiotherapy twice weekly", "Physio twice a week continues", "care_plan")
    assert same.rule != "plan.new-timing"


@pytest.mark.parametrize(
    ("text", "mtype", "state"),
    [
        # a sentence that names its own subject keeps its state word
        ("Physiotherapy continues. Her oxygen was stopped yesterday.", "care_plan", "active"),
        ("Metformin 500 mg twice daily. Her husband stopped drinking.", "medication", "active"),
        # a sentence with nothing of its own before the state word continues the thing before
        ("On metformin 500 mg. Stopped last week.", "medication", "stopped"),
        ("On metformin 500 mg. It was stopped last week.", "medication", "stopped"),
        ("Metformin 500 mg. Dr Patel stopped it.", "medication", "stopped"),
    ],
)
def test_a_state_word_reaches_back_a_sentence_only_without_a_subject_of_its_own(
    text: str, mtype: str, state: str
) -> None:
    """Before: a state word in a sentence that named nothing the lexicon keys gave its state
    to the thing of the sentence before ("Physiotherapy continues. Her oxygen was stopped
    yesterday." stopped the physiotherapy at once)."""
    from memory_core.facts import read

    assert [f.state.value for f in read(text, mtype).facts] == [state]


@pytest.mark.parametrize(
    ("newer", "strong"),
    [
        ("Digoxin stopped by cardiology but the GP list still shows it as a repeat.", False),
        ("Stopped digoxin, however she is still taking it some days.", False),
        # a contrast about another thing disputes nothing
        ("Digoxin stopped, but still taking bisoprolol.", True),
        (
            "Digoxin stopped last week. Bisoprolol continued, but it is still causing tiredness.",
            True,
        ),
    ],
)
def test_a_change_disputed_in_its_own_sentence_is_for_a_reviewer(newer: str, strong: bool) -> None:
    """assertion.json's ``disputes``: a change word, then a contrast, a pointer back and a word
    of it continuing -- which is true is for a reviewer (weak), never applied at once."""
    d = decide_texts("Digoxin 125 micrograms once daily", newer, "medication")
    assert d.rule == "drug.stop" and d.strong is strong, d
    if not strong:
        assert "disputes the change" in d.evidence


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "rule"),
    [
        # "moved to" a time reschedules a plan; it is no move of house
        ("Colonoscopy booked for 14 March", "Colonoscopy moved to 2 April", "care_plan",
         "slot.state-change"),
        ("Follow up in clinic in 2 weeks", "Follow-up appointment moved to the 14th",
         "care_plan", "slot.state-change"),
        ("Follow up in clinic in 2 weeks", "Follow-up moved to Tuesday", "care_plan",
         "slot.state-change"),
        # "saturations" is the oxygen saturation
        ("Oxygen saturation 92% on room air", "Saturations 97% on room air today.", "vital_sign",
         "lab.new-value"),
        # a depressive episode in remission resolves the depression
        ("Depression, moderate episode", "Now in full remission from her depressive episode.",
         "condition", "condition.resolved"),
    ],
)  # fmt: skip
def test_words_of_plans_results_and_conditions_read_as_clinicians_write_them(
    older: str, newer: str, mtype: str, rule: str
) -> None:
    d = decide_texts(older, newer, mtype)
    assert d.rule == rule and d.supersedes, d


def test_moved_to_a_place_is_still_a_move() -> None:
    from memory_core.facts import read

    keys = [f.key for f in read("Moved to a care home last week", "social").facts]
    assert keys == ["slot:household"]
    keys = [f.key for f in read("Colonoscopy moved to 2 April", "care_plan").facts]
    assert "slot:household" not in keys


@pytest.mark.parametrize(
    "newer",
    [
        "Ramipril could go up to 10 mg.",
        "Please increase ramipril to 10 mg.",
        "Ramipril 10 mg proposed.",
        "Once the U&E is back, ramipril up to 10 mg.",
        "Ramipril: titrate to 10 mg as tolerated.",
        "Ramipril increase to 10 mg pending blood results.",
    ],
)
def test_a_new_dose_said_as_a_possibility_request_or_plan_is_not_applied_at_once(
    newer: str,
) -> None:
    """A dose read from the number alone (no change word gave the drug its state) takes the
    contexts over that number: under "could", "please", "proposed", "once ...,", "as
    tolerated" or with the plan "pending", 5 mg stays current (before: each was a dose change
    at once)."""
    d = decide_texts("Ramipril 5 mg once daily", newer, "medication")
    assert not (d.supersedes and d.strong), d


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Ramipril 5 mg once daily", "Ramipril 10 mg once daily", "medication"),
        ("Ramipril 5 mg once daily", "Ramipril increased to 10 mg once a day.", "medication"),
        ("Prefers contact by phone", "Please email me from now on, I've changed my number.",
         "preference"),
    ],
)  # fmt: skip
def test_once_daily_and_a_patients_please_still_say_the_change(
    older: str, newer: str, mtype: str
) -> None:
    d = decide_texts(older, newer, mtype)
    assert d.supersedes, d


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        # sick-day rules and rules without "if"
        ("Metformin 500 mg twice daily", "On days you cannot eat, stop metformin.", "medication"),
        ("Metformin 500 mg twice daily", "Vomiting or diarrhoea? Stop metformin and call us.",
         "medication"),
        ("Metformin 500 mg twice daily", "Stop metformin for 48 hours after the contrast.",
         "medication"),
        ("Metformin 500 mg twice daily", "Metformin is stopped when eGFR is below 30.",
         "medication"),
        # a target for a habit is no amount
        ("Drinks 20 units of alcohol a week", "Target: under 14 units a week.", "social"),
        # readings of an earlier moment
        ("eGFR 45", "eGFR was 60 a year ago.", "lab_result"),
        ("Weight 82 kg", "Weight at booking was 70 kg.", "vital_sign"),
        ("Weight 82 kg", "He weighed 95 kg before the diet.", "vital_sign"),
        ("Blood pressure 150/90", "BP was 170/100 when first seen.", "vital_sign"),
    ],
)  # fmt: skip
def test_rules_targets_and_earlier_readings_are_never_a_change_at_once(
    older: str, newer: str, mtype: str
) -> None:
    """Probes written for the kinds the held-out test halves still got wrong in aggregate
    (each hid the older fact at once before): a rule said without "if", a target, a reading
    of a moment before the older was charted ("a year ago": dated from the day the newer was
    written)."""
    from memory_core.facts import read

    d = rules.decide(
        read(older, mtype), read(newer, mtype), mtype, older, newer,
        older_on="2026-06-01", newer_on="2026-07-01",
    )  # fmt: skip
    assert not (d.supersedes and d.strong), d


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Metformin 500 mg twice daily", "Metformin stopped after the contrast reaction.",
         "medication"),
        ("Metformin 500 mg twice daily", "Metformin is stopped.", "medication"),
        ("eGFR 45", "eGFR 38 today, was 45 a year ago.", "lab_result"),
        ("Weight 82 kg", "Weight 79 kg today, down from 84 kg before the diet.", "vital_sign"),
        ("HbA1c 58 mmol/mol", "HbA1c 52 now, 64 before the dose increase.", "lab_result"),
    ],
)  # fmt: skip
def test_a_change_made_or_a_reading_of_now_beside_an_earlier_one_is_still_a_change(
    older: str, newer: str, mtype: str
) -> None:
    """A change made after an event (past tense), and a reading of now in its own clause
    beside an earlier one ("before the dose increase" reaches its own clause only)."""
    from memory_core.facts import read

    d = rules.decide(
        read(older, mtype), read(newer, mtype), mtype, older, newer,
        older_on="2026-06-01", newer_on="2026-07-01",
    )  # fmt: skip
    assert d.supersedes and d.strong, d


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Amlodipine 5 mg daily",
         "My neighbour said her amlodipine was stopped because of swollen ankles", "medication"),
        ("Amlodipine 5 mg daily",
         "Hospital letter says amlodipine stopped - not confirmed with the patient", "medication"),
        ("Hypertension", "Hypertension - resolved per patient, not confirmed", "condition"),
        ("HbA1c 58 mmol/mol", "The app estimates an HbA1c of 48 from her CGM", "lab_result"),
        ("HbA1c 58 mmol/mol", "Estimated HbA1c 48 from the sensor", "lab_result"),
        ("Blood pressure 150/90", "BP 130/80 at the pharmacy, she thinks", "vital_sign"),
        ("INR 2.5", "My daughter says her INR was 4", "lab_result"),
    ],
)  # fmt: skip
def test_hearsay_estimates_and_unconfirmed_changes_are_never_applied_at_once(
    older: str, newer: str, mtype: str
) -> None:
    """A person the patient introduces reports on "her" thing (theirs); a hedge opening a
    clause ("- not confirmed") hedges the statement; an estimated result and what "she
    thinks" are uncertain. Each hid the older fact at once before (probes of mine)."""
    d = decide_texts(older, newer, mtype)
    assert not (d.supersedes and d.strong), d


def test_a_relative_who_reports_the_patients_own_change_still_changes_it() -> None:
    for newer in ("My wife says I stopped the metformin a month ago",
                  "Wife says he stopped metformin last week"):  # fmt: skip
        d = decide_texts("Metformin 500 mg twice daily", newer, "medication")
        assert d.rule == "drug.stop" and d.strong, d
    assert decide_texts("eGFR 45", "eGFR 52 (estimated GFR)", "lab_result").strong


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Asthma", "Childhood asthma, resolved.", "condition"),
        ("Hypertension", "White coat hypertension excluded.", "condition"),
        ("Hypertension", "Ruled out hypertension in her sister.", "condition"),
        ("Type 2 diabetes", "Diabetes in his father, diagnosed at 60.", "condition"),
    ],
)
def test_childhood_another_condition_and_another_person_resolve_nothing_at_once(
    older: str, newer: str, mtype: str
) -> None:
    """ "Childhood asthma" is asthma in childhood (history), not a name of asthma; white coat
    hypertension is a finding of its own; a person named after "in her"/"in his" owns what the
    clause said before them (probes of mine: each resolved the condition at once before)."""
    d = decide_texts(older, newer, mtype)
    assert not (d.supersedes and d.strong), d


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Colonoscopy booked for 14 March", "Colonoscopy done for her husband last week.",
         "care_plan"),
        ("Annual diabetic eye screening", "Eye screening done for his wife.", "care_plan"),
        # a plan's own month (no year) no longer keeps an earlier year from being compared
        ("Colonoscopy booked for 14 March", "Had a colonoscopy in 2019, normal.", "care_plan"),
    ],
)  # fmt: skip
def test_a_plan_done_for_someone_else_or_in_an_earlier_year_is_not_done_at_once(
    older: str, newer: str, mtype: str
) -> None:
    from memory_core.facts import read

    d = rules.decide(
        read(older, mtype), read(newer, mtype), mtype, older, newer,
        older_on="2026-01-05", newer_on="2026-02-04",
    )  # fmt: skip
    assert not (d.supersedes and d.strong), d


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("TSH 2.1 mU/L", "what's a normal TSH, is 4 ok", "lab_result"),
        ("Levothyroxine 100 mcg daily", "how long after stopping levothyroxine 75 mcg do I wait",
         "medication"),
        ("Levothyroxine 100 mcg daily",
         "Mrs Jones in the next bay had her levothyroxine stopped.", "medication"),
    ],
)  # fmt: skip
def test_a_question_without_its_mark_and_another_patient_in_the_bay_change_nothing(
    older: str, newer: str, mtype: str
) -> None:
    """A sentence opening with what, how, why, who or where asks (typed without "?"); a
    patient "in the next bay" is another patient (probes of mine: each hid the older at once)."""
    d = decide_texts(older, newer, mtype)
    assert not (d.supersedes and d.strong), d


def test_a_habit_of_a_past_period_of_life_is_history() -> None:
    """ "At university she drank 50 units a week": a period of life over (assertion.json's
    HISTORICAL periods beside "in his twenties"), never the amount now."""
    for newer in ("At university she drank 50 units a week.",
                  "Drank 40 units a week in the army."):  # fmt: skip
        d = decide_texts("Drinks 20 units of alcohol a week", newer, "social")
        assert not (d.supersedes and d.strong), d


@pytest.mark.parametrize(
    ("newer", "newer_on", "strong"),
    [
        ("From 1 July ramipril goes up to 10 mg.", "2026-02-04", False),
        ("Ramipril increases to 10 mg starting in March.", "2026-02-04", False),
        # the month is past or this one: the change was made
        ("From 1 July ramipril went up to 10 mg.", "2026-07-15", True),
        ("Ramipril 10 mg from May.", "2026-05-10", True),
    ],
)
def test_a_change_dated_from_a_month_still_ahead_is_a_plan(
    newer: str, newer_on: str, strong: bool
) -> None:
    """ "From 1 July" written in February dates the change from a month whose nearest
    occurrence is ahead: a plan, for a reviewer; written in mid-July it was made."""
    from memory_core.facts import read

    older = "Ramipril 5 mg once daily"
    d = rules.decide(
        read(older, "medication"), read(newer, "medication"), "medication", older, newer,
        older_on="2026-01-01", newer_on=newer_on,
    )  # fmt: skip
    assert d.supersedes and d.strong is strong, d


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Alcohol 14 units per week", "In his 20s he was drinking 40 units a week; steady now."),
        ("Smokes 10 cigarettes per day", "In her late thirties she smoked 20 a day."),
        ("Alcohol 14 units per week", "When she was younger she drank about 30 units a week."),
        ("Alcohol 14 units per week", "Drank 50 units a week in his navy days."),
    ],
)
def test_a_life_period_makes_a_habits_amount_history(older: str, newer: str) -> None:
    """A decade of life, youth, service ("in his 20s", "in her late thirties", "in his navy
    days") says what was, not what is: the current amount stands (assertion.json's periods,
    written once with their alternatives: ``in {his|her|...} {|early|mid|late} {20s|...}``)."""
    d = decide_texts(older, newer, "social")
    assert d.strength is not Strength.STRONG, (d.rule, d.evidence)


def test_a_rule_literal_spells_out_its_alternatives() -> None:
    from memory_core.facts.lexicon import alternatives

    assert alternatives("in {his|her} {|late} {20s|thirties}") == [
        "in his 20s", "in his thirties", "in his late 20s", "in his late thirties",
        "in her 20s", "in her thirties", "in her late 20s", "in her late thirties",
    ]  # fmt: skip
    assert alternatives("at university") == ["at university"]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Alcohol 4 drinks per day", "Limit: 2 drinks per day for men."),
        ("Alcohol 28 units per week", "Safe limit is 14 units/week."),
        ("Walks 2000 steps a day", "Goal of 10,000 steps a day."),
        ("Alcohol 40 units per week", "Please reduce to 7 units per week."),
        ("Alcohol 30 units per week", "Reduce alcohol intake to below 14 units per week."),
        ("Smokes 20 cigarettes per day", "Encouraged to reduce to 5 cigarettes daily."),
        ("Smokes 20 cigarettes per day", "Cut down to 10 cigarettes a day, then set a quit date."),
        # an imperative after a heading ("Advice:", "Sleep hygiene:") opens its clause
        ("Alcohol 20 units per week", "Advice: reduce to 14 units a week."),
        ("Sleeps about 5 hours a night", "Sleep hygiene: aim for 7-8 hours, same bedtime."),
        ("Alcohol 20 units per week", "Plan: cut down to 14 units a week."),
        ("Alcohol 20 units per week", "Discussed alcohol. Cut back to 14 units a week."),
        ("Walks 10 minutes a day", "Increase walking to 30 minutes a day."),
        # the imperative is the habit's own verb: "walk", not the note's "walks"
        ("Walks 2000 steps a day", "Walk at least 10,000 steps daily."),
    ],
)
def test_advice_on_a_measured_habit_is_not_its_amount(older: str, newer: str) -> None:
    """A habit with an amount (alcohol, tobacco, exercise: slots.json's ``measure``) is told a
    limit, a goal, or a sentence that opens with an imperative ("Reduce ...", "Please reduce
    ...", "Advice: reduce ..."): advice, not what the patient does (assertion.json's rules of
    kind ``measure``); "Cut down to ..." may be advice or a note of what was done (``cut`` is
    both): never at once."""
    d = decide_texts(older, newer, "social")
    assert d.strength is not Strength.STRONG, (d.rule, d.evidence)


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Alcohol 30 units per week", "Has managed to reduce to 10 units a week.", "social"),
        ("Smokes 20 cigarettes per day", "Cut down to 10 cigarettes a day since new year.",
         "social"),
        ("Prefers letters", "Please phone me from now on instead of writing.", "preference"),
        # "cut" is its own past: with a time gone by in its clause it is a note of what was done
        ("Smokes 20 cigarettes per day", "Cut down to 10 cigarettes a day 3 weeks ago.",
         "social"),
        ("Alcohol 30 units per week", "Cut back to 10 units a week since Christmas.", "social"),
    ],
)  # fmt: skip
def test_a_measured_habit_changed_or_a_preference_asked_for_is_still_a_change(
    older: str, newer: str, mtype: str
) -> None:
    """The imperative openers are the measured habits' only: a preference asked for with
    "please" is the patient's own, and "managed to reduce" is done."""
    d = decide_texts(older, newer, mtype)
    assert d.supersedes, (d.rule, d.evidence)


def test_a_goal_for_a_goal_is_still_compared() -> None:
    """A goal where the older was a goal too ("Goal: walk 10 minutes daily" / "Goal: walk 30
    minutes daily") is a new goal, for a reviewer; a goal beside a habit is no amount."""
    d = decide_texts("Goal: walk 10 minutes daily", "Goal: walk 30 minutes daily", "social")
    assert d.supersedes and d.strength is Strength.WEAK, (d.rule, d.evidence)
    d = decide_texts("Walks 10 minutes daily", "Goal: walk 30 minutes daily", "social")
    assert not d.supersedes, (d.rule, d.evidence)


def test_another_person_of_the_same_name_is_not_the_patient() -> None:
    """ "The other Mrs Patel (different DOB) had apixaban reduced": another person who shares a
    title or a bed's description is the subject; the patient's dose stands."""
    d = decide_texts(
        "Apixaban 5 mg twice daily",
        "The other Mrs Patel (different DOB) had apixaban reduced to 2.5 mg.",
        "medication",
    )
    assert not d.supersedes, (d.rule, d.evidence)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Sertraline 100 mg daily", "Sertraline reduced to 50 mg for my daughter."),
        ("Gabapentin 300 mg tds", "For my son: gabapentin stopped by neuro."),
    ],
)
def test_a_change_for_the_writers_relative_is_for_a_reviewer(older: str, newer: str) -> None:
    """ "... for my daughter": a parent writing for a child who is the patient, or a patient
    writing of their own child -- whose change it is, only a reader of the record can say. It
    waits for a reviewer; it is never applied at once."""
    d = decide_texts(older, newer, "medication")
    assert d.strength is not Strength.STRONG, (d.rule, d.evidence)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Smokes 15 cigarettes a day", "i stopped smokin 2 wks ago!! on the nicotine patches"),
        ("Vapes daily", "stopped vapin last month, feel loads better"),
    ],
)
def test_a_habit_written_as_spoken_is_read(older: str, newer: str) -> None:
    """ "smokin", "vapin": a habit's words written as they are said (the g dropped) are its
    words (slots.json's triggers and values, each "-ing" word read in both spellings)."""
    assert decide_texts(older, newer, "social").supersedes


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Omeprazole 40 mg daily", "Stop omeprazole after 8 weeks."),
        ("Ramipril 5 mg daily", "Increase ramipril to 10 mg in 2 weeks."),
        ("Bisoprolol 2.5 mg daily", "Titrate bisoprolol up to 10 mg over 8 weeks."),
        ("Bisoprolol 2.5 mg daily", "Next step: bisoprolol 5 mg."),
        ("Warfarin 3 mg daily", "Starting Monday, warfarin 4 mg."),
        ("Apixaban 5 mg twice daily", "Hold apixaban 48 hours pre-op, restart day 2 post-op."),
        ("Levothyroxine 100 mcg daily", "Levothyroxine to 125 mcg after the next TSH."),
    ],
)
def test_a_change_timed_ahead_is_a_plan(older: str, newer: str) -> None:
    """A change with a time still ahead in its clause ("after 8 weeks", "in 2 weeks", "over 8
    weeks"), a titration, the next step, a day it starts on, a hold before an operation: a
    plan or an instruction, never the patient's dose now."""
    d = decide_texts(older, newer, "medication")
    assert d.strength is not Strength.STRONG, (d.rule, d.evidence)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Omeprazole 40 mg daily", "Stopped omeprazole after 8 weeks, reflux settled."),
        ("Ramipril 5 mg daily", "Ramipril increased to 10 mg 2 weeks ago."),
        ("Bisoprolol 2.5 mg daily", "Bisoprolol titrated up to 5 mg over 8 weeks."),
    ],
)
def test_a_change_made_over_a_time_is_still_made(older: str, newer: str) -> None:
    d = decide_texts(older, newer, "medication")
    assert d.supersedes and d.strength is Strength.STRONG, (d.rule, d.evidence)


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Lives with husband", "Does she live alone now", "social"),
        ("Smokes 20 cigarettes per day", "Is he still smoking 20 a day", "social"),
        ("eGFR 60", "eGFR 45 would mean stage 3a.", "lab_result"),
        ("Metformin 500 mg twice daily", "Stop metformin should you become dehydrated.",
         "medication"),
        ("Smokes 20 cigarettes per day", "Stop smoking - the single best thing for your lungs.",
         "social"),
    ],
)  # fmt: skip
def test_asked_defined_conditional_or_advised_without_its_usual_word(
    older: str, newer: str, mtype: str
) -> None:
    """A question opened by an auxiliary and its subject ("Does she live alone now", no "?"),
    what a value would mean, a condition said by inversion ("should you become dehydrated"), a
    habit's imperative ("Stop smoking - ..."): none is the patient's change."""
    d = decide_texts(older, newer, mtype)
    assert d.strength is not Strength.STRONG, (d.rule, d.evidence)


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("Lives with husband", "Does not live with her husband any more - lives alone.", "social"),
        ("Smokes 20 cigarettes per day", "Has stopped smoking.", "social"),
        ("eGFR 60", "eGFR 45 today.", "lab_result"),
    ],
)
def test_a_change_said_in_note_style_is_still_a_change(older: str, newer: str, mtype: str) -> None:
    d = decide_texts(older, newer, mtype)
    assert d.supersedes, (d.rule, d.evidence)


@pytest.mark.parametrize(
    ("older", "newer", "changes"),
    [
        ("Mobilises independently", "Since the stroke he needs a frame to walk.", True),
        ("Walks with a stick", "Now uses a wheelchair.", True),
        ("Mobilises with a frame", "Mobilising independently again since physio finished.", True),
        ("Uses a frame indoors", "OT plan: trial of a wheeled walker outdoors from next week.",
         False),
        ("Mobilises with a zimmer frame", "Mobilises with a zimmer frame, steady.", False),
    ],
)  # fmt: skip
def test_how_the_patient_gets_about_is_one_chart_slot(
    older: str, newer: str, changes: bool
) -> None:
    """Mobility (slots.json): independent, a stick, a frame, a wheelchair, housebound or
    bedbound -- one value at a time; a walking aid planned is no change."""
    d = decide_texts(older, newer, "observation")
    assert bool(d.supersedes and d.verdict is not Verdict.DUPLICATE) is changes, (
        d.rule,
        d.evidence,
    )


@pytest.mark.parametrize(
    ("text", "mtype", "key", "state"),
    [
        ("Not yet started metformin", "medication", "drug:metformin", None),
        ("Influenza vaccine: not yet given", "immunization", "drug:influenza-vaccine", "planned"),
        ("Shingles vaccine: not given", "immunization", "drug:shingles-vaccine", "planned"),
        ("Bloods not done", "care_plan", "slot:procedure blood test", "planned"),
    ],
)  # fmt: skip
def test_not_done_is_still_to_do(text: str, mtype: str, key: str, state: str | None) -> None:
    """ "Not given", "not (yet) done": the thing is still to do, never done; "not yet started"
    starts nothing."""
    from memory_core.facts import read

    f = read(text, mtype).get(key)
    assert f is not None
    if state is None:
        assert Context.NEGATED in f.contexts, (f.state, f.contexts)  # a start negated
    else:
        assert f.state == State(state), f.state


@pytest.mark.parametrize(
    ("older", "newer", "mtype", "changes"),
    [
        ("Flu vaccine due", "Flu vaccine given today.", "immunization", True),
        ("Influenza vaccine 2025-26: not yet given", "Flu vaccine given today at the surgery.",
         "immunization", True),
        ("Flu vaccine declined", "Flu vaccine given today.", "immunization", True),
        ("Influenza vaccine 2025-26: not yet given", "Got my flu shot at CVS on Saturday.",
         "immunization", True),
        ("Colonoscopy booked for 12 March", "Colonoscopy done on 12 March: two polyps removed.",
         "procedure", True),
        ("Flu vaccine given 2025-10-01", "Flu vaccine due next month.", "immunization", False),
        ("Flu vaccine due", "Flu vaccine due in October.", "immunization", False),
    ],
)  # fmt: skip
def test_a_vaccine_or_procedure_due_then_given_is_done(
    older: str, newer: str, mtype: str, changes: bool
) -> None:
    """A vaccine due, declined or not given that is then given -- a procedure booked that is
    then done -- makes the older status out of date (plan.done-or-cancelled); a dose given
    says nothing of the next one due."""
    d = decide_texts(older, newer, mtype)
    assert bool(d.supersedes and d.verdict is not Verdict.DUPLICATE) is changes, (
        d.rule,
        d.evidence,
    )


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Lives with husband", "Husband died in January; she is now living on her own."),
        ("Lives alone", "My son moved back in with me last month."),
        ("Does not drive", "Passed my driving test last week."),
    ],
)
def test_a_household_or_driving_changed_in_a_patients_words(older: str, newer: str) -> None:
    """ "Living on her own", "moved back in with me", "passed my driving test": the slot's
    words as people say them (slots.json)."""
    d = decide_texts(older, newer, "social")
    assert d.supersedes and d.verdict is Verdict.UPDATES, (d.rule, d.evidence)


def test_a_relative_moving_back_in_elsewhere_is_not_the_patients_household() -> None:
    d = decide_texts("Lives alone", "Her son moved back in with his wife last year.", "social")
    assert not d.supersedes, (d.rule, d.evidence)


@pytest.mark.parametrize(
    "newer",
    [
        "Not had a cigarette since the quit date, Monday the 5th of October.",
        "Has not had a cigarette since her quit date.",
    ],
)
def test_a_habit_given_up_since_the_quit_date_covers_the_older_habit(newer: str) -> None:
    """ "Since the quit date" is past (a quit date set is a plan); a habit given up, said of a
    kind the older did not name ("a cigarette" after "smokes 20 a day"), still covers it -- it
    was read as a second, scoped fact."""
    d = decide_texts("Smokes 20 a day", newer, "social")
    assert d.supersedes and d.verdict is Verdict.UPDATES, (d.rule, d.evidence)
    assert not decide_texts(
        "Smokes 20 a day", "Set a quit date for 1 December.", "social"
    ).supersedes


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Wart on left hand cleared after cryotherapy",
         "Wart on right foot not responding to cryotherapy"),
        ("Palliative XRT to T10 spinal met - pain resolved",
         "Palliative XRT to L hip met - pain improved about 50%"),
    ],
)  # fmt: skip
def test_statements_read_by_their_words_at_two_places_are_two_facts(older: str, newer: str) -> None:
    """Two responses the lexicon keys nothing of, said of two sides or body sites: two facts
    (the words' reading sent them to a reviewer as one response changed)."""
    d = decide_texts(older, newer, "treatment_response")
    assert (d.rule, d.supersedes) == ("qualifier.two-places", False), d.evidence


@pytest.mark.parametrize(
    ("older", "newer", "mtype"),
    [
        ("UDS 11/24: buprenorphine positive", "UDS 11/24: fentanyl positive", "lab_result"),
        ("Food allergy: tree nuts (cashew, pistachio) - throat itching",
         "Food allergy: sesame - hives, added today", "allergy"),
    ],
)  # fmt: skip
def test_two_things_of_one_kind_named_apart_are_two_facts(
    older: str, newer: str, mtype: str
) -> None:
    """Both statements name their own thing of one kind, none the same (two drugs found in a
    drug screen, two allergies with two reactions): two facts, whatever words they share (the
    words' reading sent them to a reviewer)."""
    d = decide_texts(older, newer, mtype)
    assert (d.rule, d.supersedes) == ("key.none-shared", False), d.evidence


def test_a_later_dose_of_the_same_vaccine_updates_the_last_one_for_a_reviewer() -> None:
    """ "Tetanus: last booster 2010" and "Tetanus booster given in A&E today": a later dose of
    one vaccine is the patient's last dose now -- weak (a dose given stays in the history; a
    reviewer says whether the older record is out of date). Another person's dose, a dose
    planned or a dose only asked about changes nothing."""
    for older, newer in (
        ("Tetanus: last booster 2010", "Tetanus booster given in A&E today after a garden fork."),
        ("Hepatitis B course: 2 of 3 doses completed.", "3rd hep B dose given at occ health."),
        ("COVID-19 booster: last dose Apr 2024", "Had my covid booster at the chemist on Saturday"),
    ):
        d = decide_texts(older, newer, "immunization")
        assert d.rule == "plan.later-dose" and not d.strong, (newer, d)
    for newer in (
        "Her husband had his tetanus booster today.",
        "Tetanus booster due in 2030.",
        "Does he need a tetanus booster after the dog bite?",
    ):
        d = decide_texts("Tetanus: last booster 2010", newer, "immunization")
        assert d.verdict is not Verdict.UPDATES, (newer, d)


def test_a_vaccine_dose_restated_with_its_own_date_is_no_later_dose() -> None:
    d = decide_texts(
        "Influenza vaccine given Oct 2024", "Flu jab done Oct 2024 at the surgery.", "immunization"
    )
    assert d.rule != "plan.later-dose", d
