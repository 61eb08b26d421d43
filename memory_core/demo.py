"""Deterministic generator of SYNTHETIC patient memories for demos, tests and benchmarks.

Everything produced here is invented. Patients are identified only by codes such as
``NW-1001`` (Northwind demo) or ``SC-000001`` (scale runs) and described by labels like
"Synthetic patient NW-1001 (T2 diabetes, 58)"; no real person is named or described.

The generator is pure: it reads no clock and no global random state. Every call builds its
own ``random.Random(seed)``, so the same ``(now, seed)`` always gives an equal dataset.

Shape of the data:

* each patient has agent sessions ("visits") every 2-6 weeks over 12-24 months before ``now``;
* most memories are written during a session (a few minutes after it starts); lab results
  arrive from the lab a few days before the session that discusses them;
* an agent retrieves memories at the start of later sessions, so access times are visit
  times strictly after the memory was created;
* two memories of the same type for the same patient are about different things, except
  deliberate series (lab values over time, home readings) and the NW-1001 worked examples
  from the domain reference, which are meant to be detected as updates.
"""

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = [
    "MEMORY_TYPES",
    "DemoDataset",
    "DemoMemory",
    "DemoPatient",
    "northwind_demo",
    "scale_dataset",
]

MEMORY_TYPES: tuple[str, ...] = (
    "allergy",
    "adverse_reaction",
    "medication",
    "condition",
    "treatment_response",
    "care_plan",
    "lab_result",
    "preference",
    "social",
    "observation",
)


@dataclass(frozen=True)
class DemoMemory:
    """One synthetic memory, as it would have been written by the agent at ``created_at``."""

    patient_id: str
    content: str
    memory_type: str
    created_at: datetime
    access_times: tuple[datetime, ...]
    tier: str = "long_term"
    importance: float | None = None
    pinned: bool | None = None
    source: str = "demo"


@dataclass(frozen=True)
class DemoPatient:
    """A synthetic patient: an id, an invented label and the agent session times."""

    patient_id: str
    label: str
    visits: tuple[datetime, ...]


@dataclass(frozen=True)
class DemoDataset:
    """Patients plus all their memories, sorted by ``created_at`` across patients."""

    patients: tuple[DemoPatient, ...]
    memories: tuple[DemoMemory, ...]


# --------------------------------------------------------------------------------------
# Content pools
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Template:
    """A one-off fact. At most one template per ``gid`` is used for a patient."""

    gid: str
    key: str
    text: str
    values: tuple[str, ...] = ()
    requires: str = ""
    importance: float | None = None
    pinned: bool | None = None


@dataclass(frozen=True, slots=True)
class _Series:
    """A measured quantity recorded repeatedly (lab test or home reading)."""

    key: str
    text: str
    lo: float
    hi: float
    jitter: float
    floor: float
    ceil: float
    decimals: int = 0
    better: int = 0
    weight: float = 1.0


def _tpl(
    mtype: str,
    key: str,
    text: str,
    values: tuple[str, ...] = (),
    *,
    group: str = "",
    requires: str = "",
    importance: float | None = None,
    pinned: bool | None = None,
) -> _Template:
    return _Template(f"{mtype}:{group or key}", key, text, values, requires, importance, pinned)


def _nums(lo: int, hi: int, step: int = 1) -> tuple[str, ...]:
    return tuple(str(v) for v in range(lo, hi + 1, step))


_MEDICATIONS: tuple[_Template, ...] = tuple(
    _tpl("medication", k, t, v, group=g)
    for k, t, v, g in (
        (
            "metformin",
            "Patient takes metformin {v}mg twice daily with meals",
            ("500", "850", "1000"),
            "metformin",
        ),
        (
            "metformin_er",
            "Patient is on metformin ER {v}mg once daily with dinner",
            ("750", "1000", "1500"),
            "metformin",
        ),
        ("glargine", "Patient injects insulin glargine {v} units at bedtime", _nums(12, 36, 2), ""),
        ("lispro", "Patient doses insulin lispro before meals using a sliding scale", (), ""),
        (
            "empagliflozin",
            "Patient started empagliflozin {v}mg each morning for kidney protection",
            ("10", "25"),
            "",
        ),
        (
            "lisinopril",
            "Patient's blood pressure medicine is lisinopril {v}mg daily",
            ("10", "20", "40"),
            "",
        ),
        (
            "atorvastatin",
            "Patient's cholesterol is treated with atorvastatin {v}mg nightly",
            ("20", "40", "80"),
            "",
        ),
        (
            "metoprolol",
            "Patient uses metoprolol succinate {v}mg to slow the heart rate",
            ("25", "50"),
            "",
        ),
        ("aspirin", "Patient chews a low-dose aspirin every morning", (), ""),
        (
            "gabapentin",
            "Patient relies on gabapentin {v}mg at bedtime for burning feet",
            ("100", "300"),
            "",
        ),
        (
            "amlodipine",
            "Patient was prescribed amlodipine {v}mg as a second pressure drug",
            ("5", "10"),
            "",
        ),
        (
            "semaglutide",
            "Patient self-injects semaglutide {v}mg every Sunday",
            ("0.25", "0.5", "1"),
            "",
        ),
        ("sitagliptin", "Patient adds sitagliptin 100mg to breakfast", (), ""),
        ("vitamin_d", "Patient keeps up a vitamin D3 supplement of 2000 IU", (), ""),
        (
            "levothyroxine",
            "Patient's thyroid is replaced with levothyroxine {v}mcg before breakfast",
            ("50", "75", "100"),
            "",
        ),
        ("omeprazole", "Patient needs omeprazole 20mg before dinner for reflux", (), ""),
        ("glipizide", "Patient receives glipizide {v}mg before breakfast", ("2.5", "5"), ""),
        ("hctz", "Patient takes a water pill, hydrochlorothiazide 12.5mg, each morning", (), ""),
        ("sertraline", "Patient has been on sertraline 50mg daily for low mood", (), ""),
        ("glucagon", "Patient keeps a glucagon emergency kit in the kitchen drawer", (), ""),
    )
)

_CONDITIONS: tuple[_Template, ...] = tuple(
    _tpl("condition", k, t, v)
    for k, t, v in (
        ("t2d", "Patient has type 2 diabetes diagnosed {v} years ago", _nums(2, 18)),
        ("htn", "Patient has long-standing high blood pressure", ()),
        ("ckd2", "Patient has chronic kidney disease stage 2", ()),
        ("neuropathy", "Patient has peripheral neuropathy with numbness in both feet", ()),
        ("hyperlipid", "Patient carries a diagnosis of mixed hyperlipidemia", ()),
        ("retinopathy", "Patient has mild diabetic retinopathy in the left eye", ()),
        ("osa", "Patient was diagnosed with obstructive sleep apnea and uses CPAP", ()),
        ("hypothyroid", "Patient has had an underactive thyroid for many years", ()),
        ("obesity", "Patient has class 2 obesity with a BMI of {v}", _nums(35, 39)),
        ("knee_oa", "Patient has knee osteoarthritis that limits long walks", ()),
        ("foot_ulcer", "Patient had a diabetic foot ulcer on the left heel", ()),
        ("depression", "Patient has mild depression managed by primary care", ()),
        ("gerd", "Patient has gastroesophageal reflux disease", ()),
        ("nafld", "Patient has fatty liver disease seen on an abdominal ultrasound", ()),
        ("cad", "Patient has coronary artery disease with one cardiac stent", ()),
        ("gastroparesis", "Patient has gastroparesis causing early fullness after meals", ()),
        ("anemia", "Patient has mild iron-deficiency anemia", ()),
    )
)

_CONDITION_LABELS: dict[str, str] = {
    "t2d": "T2 diabetes",
    "htn": "hypertension",
    "ckd2": "CKD stage 2",
    "neuropathy": "peripheral neuropathy",
    "hyperlipid": "hyperlipidemia",
    "retinopathy": "retinopathy",
    "osa": "sleep apnea",
    "obesity": "obesity",
}

_TREATMENT_RESPONSES: tuple[_Template, ...] = tuple(
    _tpl("treatment_response", k, t, v, requires=r)
    for k, t, v, r in (
        (
            "tr_empa",
            "Patient's fasting readings dropped about 20 points after adding empagliflozin",
            (),
            "empagliflozin",
        ),
        (
            "tr_sema",
            "Patient has lost {v} kg since starting semaglutide",
            _nums(2, 9),
            "semaglutide",
        ),
        (
            "tr_lisinopril",
            "Patient's clinic blood pressure reached goal on lisinopril",
            (),
            "lisinopril",
        ),
        (
            "tr_statin",
            "Patient's LDL fell by about a third after atorvastatin was increased",
            (),
            "atorvastatin",
        ),
        (
            "tr_glargine",
            "Patient reports fewer overnight lows since the glargine dose was cut",
            (),
            "glargine",
        ),
        ("tr_gabapentin", "Patient says burning foot pain eased with gabapentin", (), "gabapentin"),
        (
            "tr_metoprolol",
            "Patient's heart rate settled in the low 70s on metoprolol",
            (),
            "metoprolol",
        ),
        (
            "tr_sitagliptin",
            "Patient's post-lunch spikes shrank after adding sitagliptin",
            (),
            "sitagliptin",
        ),
        ("tr_diet_only", "Patient saw little glucose change from diet counseling alone", (), ""),
        ("tr_walk", "Patient's after-dinner readings improve when walking after meals", (), ""),
        ("tr_cpap", "Patient sleeps through the night since starting CPAP therapy", (), "osa"),
        (
            "tr_ulcer",
            "Patient's heel ulcer closed after six weeks in an offloading boot",
            (),
            "foot_ulcer",
        ),
        (
            "tr_thyroid",
            "Patient felt more energetic after the thyroid dose adjustment",
            (),
            "levothyroxine",
        ),
        ("tr_classes", "Patient's glucose control improved after group diabetes classes", (), ""),
        (
            "tr_amlodipine",
            "Patient's ankle swelling cleared once amlodipine was lowered",
            (),
            "amlodipine",
        ),
        ("tr_sertraline", "Patient's mood and sleep improved on sertraline", (), "sertraline"),
        ("tr_omeprazole", "Patient's reflux symptoms settled on omeprazole", (), "omeprazole"),
        ("tr_cgm", "Patient's time in range rose once the glucose sensor was started", (), ""),
        (
            "tr_met_er",
            "Patient's readings barely changed after the metformin ER increase",
            (),
            "metformin_er",
        ),
    )
)

_ADVERSE_REACTIONS: tuple[_Template, ...] = tuple(
    _tpl("adverse_reaction", k, t, (), requires=r)
    for k, t, r in (
        ("ar_lisinopril", "Patient developed a dry nagging cough on lisinopril", "lisinopril"),
        (
            "ar_empagliflozin",
            "Patient had a genital yeast infection after starting empagliflozin",
            "empagliflozin",
        ),
        (
            "ar_atorvastatin",
            "Patient reported thigh muscle aches on the higher atorvastatin dose",
            "atorvastatin",
        ),
        (
            "ar_metoprolol",
            "Patient felt lightheaded and tired when metoprolol was doubled",
            "metoprolol",
        ),
        (
            "ar_semaglutide",
            "Patient had two weeks of nausea after the semaglutide dose increase",
            "semaglutide",
        ),
        (
            "ar_amlodipine",
            "Patient noticed ankle swelling within a month of amlodipine",
            "amlodipine",
        ),
        ("ar_glipizide", "Patient had a shaky low of 58 mg/dL on glipizide", "glipizide"),
        ("ar_glargine", "Patient gets red itchy bumps at glargine injection sites", "glargine"),
        (
            "ar_metformin",
            "Patient had loose stools for a month on immediate-release metformin",
            "metformin",
        ),
        ("ar_gabapentin", "Patient felt too drowsy to drive on gabapentin 600mg", "gabapentin"),
        ("ar_hctz", "Patient's sodium dipped slightly on hydrochlorothiazide", "hctz"),
        (
            "ar_sitagliptin",
            "Patient reported joint pain that began after sitagliptin",
            "sitagliptin",
        ),
        ("ar_lispro", "Patient had a low after a mistimed lispro dose at a late dinner", "lispro"),
    )
)

_CARE_PLANS: tuple[_Template, ...] = tuple(
    _tpl("care_plan", k, t, (), requires=r, pinned=p)
    for k, t, r, p in (
        ("a1c_target", "Patient's agreed HbA1c target is below 7%", "", None),
        ("eye_exam", "Patient is scheduled for a dilated eye exam every year", "", None),
        ("glucose_log", "Patient should check fasting glucose each morning and log it", "", None),
        ("dietitian", "Patient was referred to a dietitian for carbohydrate counting", "", None),
        ("foot_check", "Patient's plan includes a daily foot inspection with a mirror", "", None),
        ("walking", "Patient aims to walk 30 minutes on five days each week", "", None),
        ("uacr_yearly", "Patient needs a urine albumin test once a year", "", None),
        ("kidney_repeat", "Patient to repeat kidney function tests in three months", "", None),
        ("telehealth", "Patient enrolled in the remote glucose monitoring program", "", None),
        ("bp_goal", "Patient's blood pressure goal is below 130/80", "", None),
        ("podiatry", "Patient to see podiatry twice a year for nail and callus care", "", None),
        ("drinks", "Patient plans to cut sugary drinks to one per week", "", None),
        ("flu", "Patient should get a flu vaccine each autumn", "", None),
        (
            "titration",
            "Patient raises glargine by 2 units every 3 days until fasting is under 130",
            "glargine",
            None,
        ),
        ("meter", "Patient is asked to bring the glucose meter to every visit", "", None),
        ("cgm", "Patient started a continuous glucose monitor with weekly data review", "", None),
        ("cardiology", "Patient is due for a cardiology stress test this spring", "", None),
        ("hypo_plan", "Patient has a written hypoglycemia action plan at home", "", True),
        ("sick_day", "Patient learned sick-day rules for fever or vomiting", "", None),
        ("dental", "Patient should book a dental cleaning every six months", "", None),
        ("quit_smoking", "Patient agreed to a referral to the quit-smoking clinic", "smoker", None),
    )
)

_PREFERENCES: tuple[_Template, ...] = tuple(
    _tpl("preference", k, t, v)
    for k, t, v in (
        ("appt", "Patient prefers {v} appointments", ("morning", "afternoon", "early evening")),
        (
            "language",
            "Patient would rather discuss care in {v}",
            ("Spanish", "Portuguese", "Vietnamese", "Tagalog", "Polish"),
        ),
        ("written", "Patient wants written instructions handed over after every visit", ()),
        ("text_reminders", "Patient likes reminders sent by text message", ()),
        ("no_calls", "Patient dislikes phone calls and reads email daily", ()),
        ("video", "Patient favors video visits over coming in person", ()),
        ("family", "Patient asks that family join decisions about treatment", ()),
        ("tablets", "Patient would choose tablets over injections when possible", ()),
        ("large_print", "Patient needs large-print handouts because of poor eyesight", ()),
        ("clinician", "Patient requests a female clinician for foot exams", ()),
        ("plain", "Patient asks for plain words instead of medical jargon", ()),
        ("pharmacy", "Patient picks up prescriptions at the pharmacy near work", ()),
        ("refills", "Patient wants 90-day supplies for all refills", ()),
        ("results_call", "Patient wants a call about lab results before they reach the portal", ()),
        ("vegetarian", "Patient follows a vegetarian diet by choice", ()),
        ("short_visits", "Patient likes short visits with one clear goal", ()),
    )
)

_SOCIAL: tuple[_Template, ...] = tuple(
    _tpl("social", k, t, (), group=g)
    for k, t, g in (
        ("spouse_cooks", "Patient lives with a spouse who cooks most meals", "household"),
        ("adult_son", "Patient shares an apartment with an adult son", "household"),
        (
            "spouse_dementia",
            "Patient is the daily caregiver for a spouse with dementia",
            "household",
        ),
        ("night_shift", "Patient works night shifts at a warehouse", "work"),
        ("retired", "Patient retired from teaching last year", "work"),
        ("trucker", "Patient drives a long-haul truck for work", "work"),
        ("bakery", "Patient runs a small bakery and starts work at 4am", "work"),
        ("daughter", "Patient's daughter is the main caregiver and drives to visits", ""),
        ("bus", "Patient depends on the bus to reach the clinic", ""),
        ("cost", "Patient worries about the cost of insulin and test strips", ""),
        ("grandkids", "Patient looks after two grandchildren after school", ""),
        ("smoker", "Patient smokes half a pack a day and wants to quit", ""),
        ("alcohol", "Patient drinks two or three beers on weekends", ""),
        ("church", "Patient attends a church group with weekly shared meals", ""),
        ("dog", "Patient walks a large dog twice a day", ""),
        ("food_access", "Patient has no car and the nearest grocery store is far", ""),
        ("ramadan", "Patient fasts during Ramadan every year", ""),
        ("stairs", "Patient lives on a third floor without an elevator", ""),
        ("school", "Patient left school at fourteen and reads slowly", ""),
        ("shared_phone", "Patient shares one smartphone with the whole family", ""),
    )
)

_OBSERVATIONS: tuple[_Template, ...] = tuple(
    _tpl("observation", f"obs_{i}", t, v, importance=imp)
    for i, (t, v, imp) in enumerate(
        (
            (
                "Patient reported {v} mild lows this month, all before lunch",
                ("two", "three", "four"),
                None,
            ),
            ("Patient forgot evening doses twice last week", (), None),
            ("Patient brought a complete glucose log to the session", (), None),
            ("Patient mentioned tingling in the toes that is worse at night", (), None),
            ("Patient seemed tired and described poor sleep", (), None),
            ("Patient skips breakfast on work days", (), None),
            ("Patient noticed blurry vision after large meals", (), None),
            ("Patient has a small callus on the right big toe", (), None),
            ("Patient asked about switching to a cheaper glucose meter", (), None),
            ("Patient reported thirst and urinating more often", (), None),
            ("Patient started swimming twice a week at the community pool", (), None),
            ("Patient's monofilament test showed reduced sensation in both feet", (), None),
            ("Patient appeared anxious about starting insulin", (), None),
            ("Patient had a cold last week and readings ran high", (), None),
            ("Patient's injection sites looked healthy without lumps", (), None),
            ("Patient said holiday meals raised glucose for several days", (), None),
            ("Patient ran out of test strips for {v} days", ("three", "four", "five"), None),
            ("Patient's pill organizer was filled correctly for the week", (), None),
            ("Patient gets calf cramps when walking uphill", (), None),
            ("Patient's gums bled during brushing this month", (), None),
            ("Patient ate out most evenings this week", (), None),
            ("Patient has been taking the stairs instead of the elevator", (), None),
            ("Patient's mood has been low since winter started", (), None),
            ("Patient's ankles were mildly swollen by the end of the day", (), None),
            ("Patient noted a slow-healing cut on the left shin", (), None),
            ("Patient described dizziness when standing up quickly", (), None),
            ("Patient asked for help reading nutrition labels", (), None),
            ("Patient's pharmacy records show on-time refill pickups", (), None),
            ("Patient reported late-night snacking after long shifts", (), None),
            ("Patient's heels were dry and cracked", (), None),
            ("Patient lost track of insulin pen expiry dates", (), None),
            ("Patient mentioned a family wedding trip coming up", (), 3.0),
            ("Patient felt shaky during a long afternoon meeting", (), None),
            ("Patient cut soda down to one can a day", (), None),
            ("Patient said the new meter has an easier screen to read", (), None),
            ("Patient gets heartburn after spicy dinners", (), None),
            ("Patient brought a neighbor along for support", (), None),
            ("Patient described stress from a recent job change", (), None),
            ("Patient was treated in the emergency room for a severe low", (), 7.0),
            ("Patient's toenails looked thick and needed trimming", (), None),
            ("Patient has been sleeping about {v} hours a night", ("five", "six"), None),
            ("Patient reported a sweet tooth flare during exam season at work", (), None),
        )
    )
)

_ALLERGIES: tuple[str, ...] = (
    "Patient has a latex allergy causing contact dermatitis",
    "Patient reports an iodine contrast allergy with hives",
    "Patient is allergic to codeine, which causes widespread itching",
    "Patient carries an epinephrine pen for a bee sting allergy",
    "Patient has an adhesive tape allergy that blisters the skin",
    "Patient has documented penicillin allergy with anaphylactic reaction",
    "Patient has a sulfa drug allergy causing rash",
)

_LABS: tuple[_Series, ...] = (
    _Series(
        "hba1c", "Patient's HbA1c {verb} {v}% in {month}", 6.4, 9.6, 0.45, 5.4, 12.0, 1, -1, 3.0
    ),
    _Series("egfr", "Patient's eGFR {verb} {v} mL/min in {month}", 55, 100, 5, 20, 120, 0, 1, 2.0),
    _Series(
        "ldl",
        "Patient's LDL cholesterol {verb} {v} mg/dL in {month}",
        70,
        160,
        12,
        40,
        220,
        0,
        -1,
        1.5,
    ),
    _Series(
        "fpg",
        "Patient's fasting glucose {verb} {v} mg/dL in {month}",
        100,
        190,
        15,
        70,
        320,
        0,
        -1,
        2.0,
    ),
    _Series(
        "uacr",
        "Patient's urine albumin-to-creatinine ratio {verb} {v} mg/g in {month}",
        15,
        120,
        8,
        4,
        600,
        0,
        -1,
        1.5,
    ),
    _Series(
        "tg",
        "Patient's triglycerides {verb} {v} mg/dL in {month}",
        110,
        280,
        25,
        50,
        600,
        0,
        -1,
        1.0,
    ),
    _Series(
        "k", "Patient's potassium {verb} {v} mmol/L in {month}", 3.9, 4.9, 0.25, 3.2, 5.9, 1, 0, 1.0
    ),
)

_OBS_SERIES: tuple[_Series, ...] = (
    _Series(
        "bp", "Patient's home systolic pressure averaged {v} mmHg this week", 118, 156, 7, 95, 190
    ),
    _Series("weight", "Patient weighed {v} kg at this session", 60, 118, 1.8, 45, 160, 1),
    _Series("tir", "Patient's sensor showed {v}% time in range over two weeks", 40, 80, 8, 15, 98),
    _Series(
        "steps",
        "Patient averaged {v} steps a day on the phone tracker",
        2500,
        9000,
        900,
        500,
        20000,
    ),
)

_POOLS: dict[str, tuple[_Template, ...]] = {
    "condition": _CONDITIONS,
    "medication": _MEDICATIONS,
    "social": _SOCIAL,
    "preference": _PREFERENCES,
    "care_plan": _CARE_PLANS,
    "treatment_response": _TREATMENT_RESPONSES,
    "adverse_reaction": _ADVERSE_REACTIONS,
    "observation": _OBSERVATIONS,
}
_BY_KEY: dict[str, dict[str, _Template]] = {
    mtype: {t.key: t for t in pool} for mtype, pool in _POOLS.items()
}

# Share of the non-fixed memories per one-off type (order matters: facts chosen earlier can
# be required by later ones). Labs and home-reading series absorb whatever is left.
_TYPE_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("condition", 0.04),
    ("medication", 0.05),
    ("social", 0.07),
    ("preference", 0.08),
    ("care_plan", 0.11),
    ("treatment_response", 0.08),
    ("adverse_reaction", 0.03),
    ("observation", 0.24),
)
_LAB_SHARE = 0.7  # of the leftover; the rest are home-reading observations

# Per later session, the chance that the agent retrieved the memory.
_ACCESS_RATE: dict[str, float] = {
    "allergy": 0.55,
    "adverse_reaction": 0.4,
    "medication": 0.32,
    "condition": 0.28,
    "treatment_response": 0.22,
    "care_plan": 0.25,
    "lab_result": 0.2,
    "preference": 0.3,
    "social": 0.16,
    "observation": 0.08,
}
_MAX_ACCESSES = 8
_SHORT_TERM_SHARE = 0.1  # of observations (not the fixed facts)
_SHORT_TERM_MAX_ACCESSES = 2  # stay below the engine's promotion threshold (3)

_EARLY_TYPES = frozenset({"condition", "social", "medication"})
_LATE_TYPES = frozenset({"treatment_response", "adverse_reaction"})

_MONTHS: tuple[str, ...] = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

# --------------------------------------------------------------------------------------
# Patients
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PatientSpec:
    patient_id: str
    age: int
    history_days: int
    n_memories: int
    conditions: tuple[str, ...]
    medications: tuple[str, ...]
    allergies: tuple[str, ...] = ()
    worked: bool = False


_NORTHWIND: tuple[_PatientSpec, ...] = (
    _PatientSpec("NW-1001", 58, 610, 58, ("t2d", "htn"), ("lisinopril", "atorvastatin"), (), True),
    _PatientSpec(
        "NW-1002",
        67,
        400,
        34,
        ("t2d", "ckd2", "htn"),
        ("glargine", "lisinopril"),
        (_ALLERGIES[1],),
    ),
    _PatientSpec("NW-1003", 49, 715, 90, ("t2d", "neuropathy"), ("metformin_er", "gabapentin")),
    _PatientSpec(
        "NW-1004",
        72,
        520,
        120,
        ("t2d", "ckd2", "neuropathy", "htn"),
        ("glargine", "empagliflozin", "metoprolol", "atorvastatin"),
        (_ALLERGIES[2], _ALLERGIES[0]),
    ),
    _PatientSpec(
        "NW-1005",
        61,
        670,
        147,
        ("t2d", "htn", "hyperlipid"),
        ("metformin", "empagliflozin", "lisinopril", "atorvastatin"),
        (_ALLERGIES[0],),
    ),
    _PatientSpec("NW-1006", 44, 455, 64, ("t2d", "osa"), ("metformin_er", "semaglutide")),
    _PatientSpec(
        "NW-1007",
        55,
        545,
        75,
        ("t2d", "htn", "retinopathy"),
        ("metformin", "metoprolol", "glargine"),
        (_ALLERGIES[3],),
    ),
    _PatientSpec("NW-1008", 38, 380, 45, ("t2d", "obesity"), ("metformin", "sitagliptin")),
)

# NW-1001 worked examples (domain reference), placed at a fraction of the patient's history.
_WORKED: tuple[tuple[str, str, float], ...] = (
    ("allergy", "Patient has documented penicillin allergy with anaphylactic reaction", 0.0),
    ("social", "Patient lives alone", 0.0),
    ("medication", "Patient tolerates metformin 500mg well", 0.06),
    ("preference", "Patient prefers morning appointments", 0.12),
    ("allergy", "Patient has a sulfa drug allergy causing rash", 0.45),
    (
        "medication",
        "Patient reports persistent GI distress on metformin; "
        "switched to extended-release formulation",
        0.62,
    ),
    ("preference", "Patient now prefers afternoon appointments", 0.85),
    # safety updates that wait for a reviewer (allergy / adverse reaction: review mode)
    ("adverse_reaction", "Patient developed a dry cough on lisinopril", 0.30),
    (
        "adverse_reaction",
        "Patient's dry cough on lisinopril resolved after switching to losartan",
        0.80,
    ),
    (
        "allergy",
        "Patient's penicillin allergy re-tested: reaction was a mild rash, not anaphylaxis",
        0.93,
    ),
)
# Pool groups that would blur the worked examples for NW-1001.
_WORKED_EXCLUDED = frozenset(
    {"medication:metformin", "adverse_reaction:ar_metformin", "preference:appt", "social:household"}
)
_WORKED_HBA1C_BEFORE = (8.3, 9.5)  # NW-1001 HbA1c range before the January anchor
_WORKED_HBA1C_AFTER = (6.6, 7.4)  # ... and after the March anchor


def _ri(rng: random.Random, lo: int, hi: int) -> int:
    """Uniform integer in [lo, hi]; cheaper than ``randint`` on the hot paths."""
    return lo + int(rng.random() * (hi - lo + 1))


def _require_aware(now: datetime) -> datetime:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime (e.g. datetime.now(UTC))")
    return now.astimezone(UTC)


def _label(spec: _PatientSpec) -> str:
    parts = [_CONDITION_LABELS[c] for c in spec.conditions if c in _CONDITION_LABELS]
    return f"Synthetic patient {spec.patient_id} ({', '.join(parts)}, {spec.age})"


def _make_visits(rng: random.Random, now: datetime, history_days: int) -> list[datetime]:
    """Session starts every 2-6 weeks from ``history_days`` ago; the last is >= 2 h before now."""
    base = (now - timedelta(days=history_days)).replace(hour=0, minute=0, second=0, microsecond=0)
    latest = int((now - base).total_seconds() // 60) - 120
    rand = rng.random
    minutes: list[int] = []
    day = 0
    while True:
        m = day * 1440 + 480 + 15 * int(rand() * 40)  # 08:00-17:45 UTC
        if m > latest:
            break
        minutes.append(m)
        day += 14 + int(rand() * 29)
    if not minutes:  # only reachable for absurdly short histories
        minutes.append(latest - 60)
    return [base + timedelta(minutes=m) for m in minutes]


def _fmt(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}" if decimals else str(round(value))


class _PatientBuilder:
    """Builds one patient's memories; ``strict`` forbids duplicate contents."""

    def __init__(self, rng: random.Random, spec: _PatientSpec, now: datetime, strict: bool) -> None:
        self.rng = rng
        self.spec = spec
        self.now = now
        self.strict = strict
        self.visits = _make_visits(rng, now, spec.history_days)
        self.memories: list[DemoMemory] = []
        self.seen: set[str] = set()
        # Conditions named in labels come only from the profile, so labels stay complete.
        self.used_gids: set[str] = {f"condition:{key}" for key in _CONDITION_LABELS}
        if spec.worked:
            self.used_gids |= _WORKED_EXCLUDED
        self.facts: set[str] = set()
        self.tries = 40 if strict else 3  # attempts at a content not yet used by the patient

    # -- primitives -------------------------------------------------------------------

    @property
    def room(self) -> int:
        return self.spec.n_memories - len(self.memories)

    def _accesses(self, first: int, mtype: str, cap: int) -> tuple[datetime, ...]:
        visits = self.visits
        n = len(visits)
        if first >= n:
            return ()
        p = _ACCESS_RATE[mtype]
        if n - first <= 3:  # recent memories are what the agent is still talking about
            p = max(p, 0.45)
        rand = self.rng.random
        chosen = [visits[i] for i in range(first, n) if rand() < p]
        if len(chosen) > cap:
            chosen = sorted(self.rng.sample(chosen, cap))
        return tuple(chosen)

    def _emit(
        self,
        mtype: str,
        text: str,
        created: datetime,
        first_access: int,
        *,
        short_term: bool = False,
        importance: float | None = None,
        pinned: bool | None = None,
    ) -> None:
        cap = _SHORT_TERM_MAX_ACCESSES if short_term else _MAX_ACCESSES
        self.seen.add(text)
        self.memories.append(
            DemoMemory(
                self.spec.patient_id,
                text,
                mtype,
                created,
                self._accesses(first_access, mtype, cap),
                "short_term" if short_term else "long_term",
                importance,
                pinned,
            )
        )

    def _pick_visit(self, mtype: str) -> int:
        r = self.rng.random()
        if mtype in _EARLY_TYPES:
            r *= r
        elif mtype in _LATE_TYPES:
            r = 0.25 + 0.75 * r
        return min(len(self.visits) - 1, int(r * len(self.visits)))

    def _emit_at_visit(
        self,
        mtype: str,
        text: str,
        idx: int,
        *,
        short_term: bool = False,
        importance: float | None = None,
        pinned: bool | None = None,
    ) -> None:
        created = self.visits[idx] + timedelta(seconds=_ri(self.rng, 240, 3300))
        self._emit(
            mtype,
            text,
            created,
            idx + 1,
            short_term=short_term,
            importance=importance,
            pinned=pinned,
        )

    def _first_visit_after(self, t: datetime) -> int:
        for i, v in enumerate(self.visits):
            if v > t:
                return i
        return len(self.visits)

    def _render(self, tpl: _Template) -> str:
        return tpl.text.format(v=self.rng.choice(tpl.values)) if tpl.values else tpl.text

    def _use(self, mtype: str, tpl: _Template, idx: int) -> None:
        self.used_gids.add(tpl.gid)
        self.facts.add(tpl.key)
        short = mtype == "observation" and self.rng.random() < _SHORT_TERM_SHARE
        self._emit_at_visit(
            mtype,
            self._render(tpl),
            idx,
            short_term=short,
            importance=tpl.importance,
            pinned=tpl.pinned,
        )

    # -- phases -----------------------------------------------------------------------

    def build(self) -> tuple[DemoPatient, list[DemoMemory]]:
        anchors: list[tuple[datetime, float]] = []
        if self.spec.worked:
            anchors = self._worked_examples()
        self._fixed_facts()
        if self.room > 0:
            self._free_facts(anchors)
        patient = DemoPatient(self.spec.patient_id, _label(self.spec), tuple(self.visits))
        return patient, self.memories

    def _worked_examples(self) -> list[tuple[datetime, float]]:
        last = len(self.visits) - 1
        for mtype, text, frac in _WORKED:
            if self.room > 0:
                self._emit_at_visit(mtype, text, round(frac * last))
        self.facts.update({"metformin", "metformin_er"})
        # HbA1c anchors: the most recent January and March that both lie before `now`.
        now = self.now
        year = now.year if (now.month, now.day) >= (3, 8) else now.year - 1
        jan_lo = min(now.day + 1, 28) if (year < now.year and now.month == 1) else 3
        if year < now.year and now.month > 1:
            jan_lo = 20  # February / early March: keep January as recent as possible
        jan_day = self.rng.randint(jan_lo, max(jan_lo, 28))
        mar_hi = min(25, now.day - 2) if (year == now.year and now.month == 3) else 25
        mar_day = self.rng.randint(2, mar_hi)
        anchors: list[tuple[datetime, float]] = []
        for month, day, value, text in (
            (1, jan_day, 8.2, "Patient's HbA1c was 8.2% in January"),
            (3, mar_day, 7.1, "Patient's HbA1c improved to 7.1% in March"),
        ):
            created = datetime(
                year, month, day, self.rng.randint(7, 10), self.rng.randint(0, 59), tzinfo=UTC
            )
            if self.room > 0:
                self._emit("lab_result", text, created, self._first_visit_after(created))
            anchors.append((created, value))
        return anchors

    def _fixed_facts(self) -> None:
        spec = self.spec
        for text in spec.allergies:
            if self.room > 0 and text not in self.seen:
                self._emit_at_visit("allergy", text, 0)
        for mtype, keys, spread in (
            ("condition", spec.conditions, 2),
            ("medication", spec.medications, 3),
        ):
            for key in keys:
                tpl = _BY_KEY[mtype][key]
                # label conditions are pre-reserved in used_gids; medications share groups
                if self.room > 0 and (mtype == "condition" or tpl.gid not in self.used_gids):
                    self._use(mtype, tpl, min(_ri(self.rng, 0, spread - 1), len(self.visits) - 1))

    def _free_facts(self, anchors: list[tuple[datetime, float]]) -> None:
        rng = self.rng
        remaining = self.room
        jittered = [(mtype, w * rng.uniform(0.75, 1.25)) for mtype, w in _TYPE_WEIGHTS]
        for mtype, w in jittered:
            quota = math.floor(remaining * w)
            if quota <= 0 or self.room <= 0:
                continue
            avail = [
                t
                for t in _POOLS[mtype]
                if t.gid not in self.used_gids and (not t.requires or t.requires in self.facts)
            ]
            rng.shuffle(avail)
            for tpl in avail:
                if quota <= 0 or self.room <= 0:
                    break
                if tpl.gid in self.used_gids:
                    continue
                self._use(mtype, tpl, self._pick_visit(mtype))
                quota -= 1
        left = self.room
        n_labs = round(left * _LAB_SHARE)
        self._labs(n_labs, anchors)
        self._home_readings(self.room)

    def _next_value(self, series: _Series, last: float | None, lo: float, hi: float) -> float:
        if last is None:
            value = self.rng.uniform(max(series.lo, lo), min(series.hi, hi))
        else:
            value = last + self.rng.uniform(-series.jitter, series.jitter)
        value = min(max(value, lo), hi)
        return round(value, series.decimals)

    def _labs(self, count: int, anchors: list[tuple[datetime, float]]) -> None:
        if count <= 0:
            return
        rng = self.rng
        n_visits = len(self.visits)
        candidates = list(range(1, n_visits)) or [0]
        total_w = sum(s.weight for s in _LABS)
        counts = [math.floor(count * s.weight / total_w) for s in _LABS]
        for i in range(count - sum(counts)):
            counts[i % len(counts)] += 1
        window = timedelta(days=75)
        for series, c in zip(_LABS, counts, strict=True):
            if c <= 0:
                continue
            cands = candidates
            use_anchors = series.key == "hba1c" and bool(anchors)
            if use_anchors:
                cands = [
                    i
                    for i in candidates
                    if all(abs(self.visits[i] - a) >= window for a, _ in anchors)
                ] or candidates
            points: list[tuple[datetime, int]] = []
            for j in range(c):
                idx = cands[min(len(cands) - 1, int((j + rng.random()) / c * len(cands)))]
                visit = self.visits[idx]
                if idx == 0:
                    created = visit + timedelta(days=_ri(rng, 2, 6))
                    first = 1
                else:
                    created = visit - timedelta(days=_ri(rng, 2, 6))
                    first = idx
                created = created.replace(hour=_ri(rng, 6, 10), minute=_ri(rng, 0, 59))
                if created >= self.now:  # only possible for a degenerate one-visit history
                    created = self.now - timedelta(minutes=rng.randint(1, 59))
                points.append((created, first))
            points.sort()
            self._lab_series(series, points, anchors if use_anchors else [])

    def _lab_series(
        self,
        series: _Series,
        points: list[tuple[datetime, int]],
        anchors: list[tuple[datetime, float]],
    ) -> None:
        last: float | None = None
        anchor_iter = iter(sorted(anchors))
        pending = next(anchor_iter, None)
        for created, first in points:
            while pending is not None and pending[0] <= created:
                last = pending[1]
                pending = next(anchor_iter, None)
            lo, hi = series.floor, series.ceil
            if anchors:
                lo, hi = _WORKED_HBA1C_BEFORE if created < anchors[0][0] else _WORKED_HBA1C_AFTER
                if last is not None and not lo <= last <= hi:
                    last = None
            month = _MONTHS[created.month - 1]
            text = ""
            value = 0.0
            for _ in range(self.tries):
                value = self._next_value(series, last, lo, hi)
                if last is None:
                    verb = "was"
                else:
                    delta = value - last
                    if abs(delta) < series.jitter * 0.2 or series.better == 0:
                        verb = "was steady at" if series.better else "was"
                    elif delta * series.better > 0:
                        verb = "improved to"
                    else:
                        verb = "rose to" if delta > 0 else "fell to"
                text = series.text.format(verb=verb, v=_fmt(value, series.decimals), month=month)
                if text not in self.seen:
                    break
            else:
                if self.strict:
                    raise RuntimeError(f"could not make a unique {series.key} lab text")
            last = value
            self._emit("lab_result", text, created, first)

    def _home_readings(self, count: int) -> None:
        rng = self.rng
        last: dict[str, float] = {}
        for _ in range(count):
            text = ""
            series = _OBS_SERIES[0]
            value = 0.0
            for _ in range(self.tries):
                series = rng.choice(_OBS_SERIES)
                value = self._next_value(series, last.get(series.key), series.floor, series.ceil)
                text = series.text.format(v=_fmt(value, series.decimals))
                if text not in self.seen:
                    break
            else:
                if self.strict:
                    raise RuntimeError("could not make a unique home-reading text")
            last[series.key] = value
            self._emit_at_visit(
                "observation",
                text,
                self._pick_visit("observation"),
                short_term=rng.random() < _SHORT_TERM_SHARE,
            )


def _dataset(patients: list[DemoPatient], memories: list[DemoMemory]) -> DemoDataset:
    memories.sort(key=lambda m: m.created_at)
    return DemoDataset(tuple(patients), tuple(memories))


def northwind_demo(now: datetime, seed: int = 7) -> DemoDataset:
    """The Northwind Health demo: 8 synthetic patients ``NW-1001`` ... ``NW-1008``.

    Each has 12-24 months of sessions before ``now`` and 34-147 memories (633 in all).
    NW-1001 carries the worked examples of the domain reference verbatim. ``now`` must be
    timezone-aware; all returned datetimes are UTC and every ``created_at`` is before it.
    """
    now = _require_aware(now)
    rng = random.Random(seed)
    patients: list[DemoPatient] = []
    memories: list[DemoMemory] = []
    for spec in _NORTHWIND:
        patient, mems = _PatientBuilder(rng, spec, now, strict=True).build()
        patients.append(patient)
        memories.extend(mems)
    return _dataset(patients, memories)


_SCALE_CONDITIONS: tuple[str, ...] = (
    "htn",
    "ckd2",
    "neuropathy",
    "hyperlipid",
    "retinopathy",
    "osa",
    "obesity",
)
_SCALE_MEDS: tuple[str, ...] = (
    "glargine",
    "empagliflozin",
    "lisinopril",
    "atorvastatin",
    "metoprolol",
    "semaglutide",
    "sitagliptin",
    "gabapentin",
)


def scale_dataset(
    n_patients: int, memories_per_patient: int, now: datetime, seed: int = 11
) -> DemoDataset:
    """The same generator at scale: patients ``SC-000001`` ... with exactly
    ``memories_per_patient`` memories each. Contents may repeat within a patient when the
    count is far beyond what the template pools can vary (thousands per patient)."""
    now = _require_aware(now)
    if n_patients < 0:
        raise ValueError("n_patients must be >= 0")
    if memories_per_patient < 0:
        raise ValueError("memories_per_patient must be >= 0")
    rng = random.Random(seed)
    patients: list[DemoPatient] = []
    memories: list[DemoMemory] = []
    for i in range(1, n_patients + 1):
        conditions = ("t2d", *rng.sample(_SCALE_CONDITIONS, rng.randint(0, 2)))
        meds = (
            rng.choice(("metformin", "metformin_er")),
            *rng.sample(_SCALE_MEDS, rng.randint(0, 3)),
        )
        allergies = (rng.choice(_ALLERGIES),) if rng.random() < 0.25 else ()
        spec = _PatientSpec(
            f"SC-{i:06d}",
            rng.randint(30, 85),
            rng.randint(372, 720),
            memories_per_patient,
            conditions,
            meds,
            allergies,
        )
        patient, mems = _PatientBuilder(rng, spec, now, strict=False).build()
        patients.append(patient)
        memories.extend(mems)
    return _dataset(patients, memories)
