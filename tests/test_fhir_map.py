"""What one FHIR resource becomes, independent of the engine (issue 24, item 1): the
statement, its type, and the record's ``facts`` (codes, status, value, date) for each kind;
names as a clinician writes them; vitals, panels, immunizations, procedures, care plans."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from memory_core.ingest import names
from memory_core.ingest.fhir_map import FhirItem, map_resource
from memory_core.ingest.rules import RuleExtractor

SCT = "http://snomed.info/sct"
LOINC = "http://loinc.org"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
CVX = "http://hl7.org/fhir/sid/cvx"
CS = "http://terminology.hl7.org/CodeSystem/"


def cc(system: str, code: str, display: str, text: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"coding": [{"system": system, "code": code, "display": display}]}
    if text:
        out["text"] = text
    return out


def status(kind: str, code: str) -> dict[str, Any]:
    return {"coding": [{"system": CS + kind, "code": code}]}


def one(res: dict[str, Any]) -> FhirItem:
    (item,) = map_resource(res, f"fhir:{res['resourceType']}/{res['id']}", lambda _r: None)
    return item


def obs(code: str, display: str, **kw: Any) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": "o1",
        "status": "final",
        "code": cc(LOINC, code, display),
        "effectiveDateTime": "2020-01-03T09:30:00+01:00",
        **kw,
    }


# --- facts of each kind ------------------------------------------------------------------------
def test_body_weight_is_a_vital_sign_with_its_facts() -> None:
    it = one(obs("29463-7", "Body Weight", valueQuantity={"value": 82.3, "unit": "kg"}))
    assert (it.memory_type, it.content) == (
        "vital_sign",
        "Patient's body weight was 82.3 kg on 2020-01-03",
    )
    assert it.facts == {
        "codes": ["loinc:29463-7"],
        "status": "final",
        "value": "82.3 kg",
        "date": "2020-01-03",
    }
    assert it.embed_text == "Patient's body weight"  # every weighing shares one embedding


def test_a_questionnaire_score_is_an_observation_keyed_like_a_lab() -> None:
    """A PHQ-9 total (FHIR's "survey") is an observation, not a lab result, keyed by its LOINC
    code as a lab is; the transcript reader files it the same way."""
    it = one(obs("44261-6", "PHQ-9 total score", valueQuantity={"value": 11, "unit": "{score}"}))
    assert it.memory_type == "observation"
    assert it.facts["codes"] == ["loinc:44261-6"]
    said = RuleExtractor().extract(
        "NW-1",
        "Date: 2026-07-15\nDr Lindqvist: Your PHQ-9 score today is 11.\n",
        now=datetime(2026, 7, 15, 18, tzinfo=UTC),
    )
    assert [(c.memory_type, c.content) for c in said.candidates] == [
        ("observation", "Patient's PHQ-9 was 11 on 2026-07-15")
    ]


def test_the_blood_pressure_panel_is_one_reading_with_every_code() -> None:
    comp = [  # Synthea lists diastolic first: the statement still reads systolic/diastolic
        {"code": cc(LOINC, "8462-4", "Diastolic Blood Pressure"),
         "valueQuantity": {"value": 84, "unit": "mm[Hg]"}},
        {"code": cc(LOINC, "8480-6", "Systolic Blood Pressure"),
         "valueQuantity": {"value": 132, "unit": "mm[Hg]"}},
    ]  # fmt: skip
    it = one(obs("85354-9", "Blood Pressure", component=comp))
    assert it.content == "Patient's blood pressure was 132/84 mmHg on 2020-01-03"
    assert it.facts == {
        "codes": ["loinc:85354-9", "loinc:8462-4", "loinc:8480-6"],
        "status": "final",
        "value": "132/84 mmHg",
        "date": "2020-01-03",
    }


def test_an_analyte_the_lexicon_lacks_is_named_from_its_display() -> None:
    it = one(
        obs(
            "787-2",
            "MCV [Entitic volume] by Automated count",
            valueQuantity={"value": 80.7, "unit": "fL"},
            category=[{"coding": [{"system": CS + "observation-category", "code": "laboratory"}]}],
        )
    )
    assert (it.memory_type, it.content) == ("lab_result", "Patient's MCV was 80.7 fL on 2020-01-03")
    assert it.facts is not None and it.facts["codes"] == ["loinc:787-2"]


def test_a_coded_value_and_the_social_history() -> None:
    it = one(
        obs(
            "72166-2",
            "Tobacco smoking status NHIS",
            valueCodeableConcept=cc(SCT, "266919005", "Never smoker (finding)"),
        )
    )
    assert it.memory_type == "social"  # its name fills the lexicon's tobacco slot
    assert it.content == "Patient's tobacco smoking status NHIS was never smoker on 2020-01-03"
    assert it.facts is not None
    assert it.facts["codes"] == ["loinc:72166-2", "snomed:266919005"]
    assert it.facts["value"] == "never smoker"


def test_condition_allergy_medication_facts() -> None:
    cond = one(
        {
            "resourceType": "Condition",
            "id": "c1",
            "clinicalStatus": status("condition-clinical", "active"),
            "code": cc(SCT, "59621000", "Essential hypertension (disorder)", "Hypertension"),
            "onsetDateTime": "2010-05",
        }
    )
    assert cond.content == "Patient has hypertension (since May 2010)"
    assert cond.facts == {"codes": ["snomed:59621000"], "status": "active", "date": "2010-05"}
    allergy = one(
        {
            "resourceType": "AllergyIntolerance",
            "id": "a1",
            "clinicalStatus": status("allergyintolerance-clinical", "active"),
            "code": cc(
                SCT,
                "373270004",
                "Substance with penicillin structure and antibacterial mechanism of action "
                "(substance)",
            ),
            "reaction": [{"manifestation": [cc(SCT, "247472004", "Hives")]}],
            "patient": {"reference": "Patient/p"},
        }
    )
    assert allergy.content == "Patient has a documented penicillin allergy (reaction: hives)"
    assert allergy.facts == {"codes": ["snomed:373270004"], "status": "active", "value": "hives"}
    med = one(
        {
            "resourceType": "MedicationRequest",
            "id": "m1",
            "status": "stopped",
            "intent": "order",
            "medicationCodeableConcept": cc(RXNORM, "860975", "24 HR Metformin hydrochloride "
                                            "500 MG Extended Release Oral Tablet"),
            "authoredOn": "2024-03-02",
            "subject": {"reference": "Patient/p"},
        }
    )  # fmt: skip
    assert med.content == (
        "Patient stopped 24 hr metformin hydrochloride 500 mg extended release oral tablet; "
        "not a current medication"
    )
    assert med.facts == {"codes": ["rxnorm:860975"], "status": "stopped", "date": "2024-03-02"}


def test_immunization_procedure_and_care_plan_activities() -> None:
    imm = one(
        {
            "resourceType": "Immunization",
            "id": "i1",
            "status": "completed",
            "vaccineCode": cc(CVX, "140", "Influenza, seasonal, injectable, preservative free"),
            "occurrenceDateTime": "2021-10-04",
            "patient": {"reference": "Patient/p"},
        }
    )
    assert (imm.memory_type, imm.content) == (
        "immunization",
        "Patient received the influenza vaccine (seasonal, injectable, preservative free) on "
        "2021-10-04",
    )
    assert imm.facts == {"codes": ["cvx:140"], "status": "completed", "date": "2021-10-04"}
    proc = one(
        {
            "resourceType": "Procedure",
            "id": "p1",
            "status": "completed",
            "code": cc(SCT, "73761001", "Colonoscopy (procedure)"),
            "performedPeriod": {"start": "2019-06-01T10:00:00Z"},
            "subject": {"reference": "Patient/p"},
        }
    )
    assert (proc.memory_type, proc.content) == (
        "procedure",
        "Patient had colonoscopy on 2019-06-01",
    )
    plan = {
        "resourceType": "CarePlan",
        "id": "cp1",
        "status": "active",
        "intent": "order",
        "subject": {"reference": "Patient/p"},
        "category": [cc(SCT, "734163000", "Care plan"), cc(SCT, "698360004", "Diabetes self "
                                                            "management plan")],
        "period": {"start": "2015-03-02"},
        "activity": [
            {"detail": {"code": cc(SCT, "160670007", "Diabetic diet"), "status": "in-progress"}},
            {"detail": {"code": cc(SCT, "229065009", "Exercise therapy"), "status": "completed"}},
        ],
    }  # fmt: skip
    items = map_resource(plan, "fhir:CarePlan/cp1", lambda _r: None)
    assert [(i.source, i.memory_type, i.content) for i in items] == [
        (
            "fhir:CarePlan/cp1/activity/0",
            "care_plan",
            "Patient's care plan (diabetes self management plan): diabetic diet (in progress "
            "since 2015-03-02)",
        ),
        (
            "fhir:CarePlan/cp1/activity/1",
            "care_plan",
            "Patient's care plan (diabetes self management plan): exercise therapy (completed, "
            "started 2015-03-02)",
        ),
    ]
    # keyed by the activity's own code (the plan's categories are every activity's)
    assert items[0].facts == {
        "codes": ["snomed:160670007"],
        "status": "in-progress",
        "date": "2015-03-02",
    }


def test_what_is_skipped_names_its_kind_and_code() -> None:
    nv = one(obs("8302-2", "Body Height"))
    assert (nv.content, nv.reason, nv.code) == (None, "no value", "loinc:8302-2")
    claim = one({"resourceType": "Claim", "id": "x"})
    assert claim.reason == "Claim is not imported as a memory"


@pytest.mark.parametrize(
    ("code", "display", "quantity"),
    [
        # issue 34 finding 7: accepted before, each a memory the agent would have been told
        ("29463-7", "Body Weight", {"value": -70, "unit": "kg"}),
        ("29463-7", "Body Weight", {"value": -5, "unit": "kg", "code": "kg"}),
        ("4548-4", "Hemoglobin A1c", {"value": 1e308, "unit": "%"}),
        ("8310-5", "Body temperature", {"value": 380, "unit": "Cel"}),
        ("8867-4", "Heart rate", {"value": 0, "unit": "/min"}),
    ],
)
def test_a_value_outside_physiology_is_skipped_with_the_reason(
    code: str, display: str, quantity: dict[str, Any]
) -> None:
    it = one(obs(code, display, valueQuantity=quantity))
    assert it.content is None and "outside physiology" in (it.reason or "")
    assert it.code == f"loinc:{code}"


def test_a_value_in_a_unit_the_product_does_not_know_keeps_the_records_unit() -> None:
    """The record's own unit is written as given (never another); bounds are checked only in
    the units the product can convert."""
    it = one(obs("29463-7", "Body Weight", valueQuantity={"value": 12, "unit": "furlongs"}))
    assert it.content is not None and "12 furlongs" in it.content


# --- names -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Allergy to mould", "mould"),
        ("Latex allergy", "latex"),
        ("House dust mite allergy", "house dust mite"),
        ("Substance with penicillin structure and antibacterial mechanism of action (substance)",
         "penicillin"),
        ("Peanut (substance)", "peanut"),
    ],
)  # fmt: skip
def test_allergen_names(raw: str, want: str) -> None:
    assert names.allergen(raw) == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Essential hypertension (disorder)", "essential hypertension"),
        ("Fever (finding)", "fever"),
        ("COVID-19", "COVID-19"),
        ("Medication Reconciliation (procedure)", "medication reconciliation"),
        ("Escherichia coli urinary tract infection", "escherichia coli urinary tract infection"),
    ],
)
def test_semantic_tags_and_sentence_case(raw: str, want: str) -> None:
    assert names.sentence_case(names.strip_tag(raw)) == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Leukocytes [#/volume] in Blood by Automated count", "leukocytes"),
        ("Oxygen [Partial pressure] in Arterial blood",
         "oxygen partial pressure in arterial blood"),
        ("Body mass index (BMI) [Percentile] Per age and gender",
         "body mass index (BMI) percentile per age and gender"),
        ("Glucose [Mass/volume] in Urine by Test strip", "glucose in urine"),
    ],
)  # fmt: skip
def test_loinc_names(raw: str, want: str) -> None:
    assert names.loinc_name(raw) == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [("mm[Hg]", "mmHg"), ("Cel", "°C"), ("{score}", ""), ("kg/m2", "kg/m²"), ("mg/dL", "mg/dL")],
)
def test_units_as_written(raw: str, want: str) -> None:
    assert names.unit(raw) == want
