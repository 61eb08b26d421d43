"""The data of the synthetic scale generator (:mod:`memory_core.demo.generator`): memory
types, statement templates per type, lab and home-reading series, and the mix of types and
accesses. (The Northwind demo patients are written out in ``data/demo_northwind.jsonl``.)

Everything here is invented; no real person is named or described. Data only: no code reads
it except the generator.
"""

from dataclasses import dataclass

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


# --------------------------------------------------------------------------------------
# Content pools
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """A one-off fact. At most one template per ``gid`` is used for a patient."""

    gid: str
    key: str
    text: str
    values: tuple[str, ...] = ()
    requires: str = ""
    importance: float | None = None
    pinned: bool | None = None


@dataclass(frozen=True, slots=True)
class Series:
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
) -> Template:
    return Template(f"{mtype}:{group or key}", key, text, values, requires, importance, pinned)


def _nums(lo: int, hi: int, step: int = 1) -> tuple[str, ...]:
    return tuple(str(v) for v in range(lo, hi + 1, step))


MEDICATIONS: tuple[Template, ...] = tuple(
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

CONDITIONS: tuple[Template, ...] = tuple(
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

CONDITION_LABELS: dict[str, str] = {
    "t2d": "T2 diabetes",
    "htn": "hypertension",
    "ckd2": "CKD stage 2",
    "neuropathy": "peripheral neuropathy",
    "hyperlipid": "hyperlipidemia",
    "retinopathy": "retinopathy",
    "osa": "sleep apnea",
    "obesity": "obesity",
}

TREATMENT_RESPONSES: tuple[Template, ...] = tuple(
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

ADVERSE_REACTIONS: tuple[Template, ...] = tuple(
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

CARE_PLANS: tuple[Template, ...] = tuple(
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

PREFERENCES: tuple[Template, ...] = tuple(
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

SOCIAL: tuple[Template, ...] = tuple(
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

OBSERVATIONS: tuple[Template, ...] = tuple(
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

ALLERGIES: tuple[str, ...] = (
    "Patient has a latex allergy causing contact dermatitis",
    "Patient reports an iodine contrast allergy with hives",
    "Patient is allergic to codeine, which causes widespread itching",
    "Patient carries an epinephrine pen for a bee sting allergy",
    "Patient has an adhesive tape allergy that blisters the skin",
    "Patient has documented penicillin allergy with anaphylactic reaction",
    "Patient has a sulfa drug allergy causing rash",
)

LABS: tuple[Series, ...] = (
    Series("hba1c", "Patient's HbA1c {verb} {v}%", 6.4, 9.6, 0.45, 5.4, 12.0, 1, -1, 3.0),
    Series("egfr", "Patient's eGFR {verb} {v} mL/min", 55, 100, 5, 20, 120, 0, 1, 2.0),
    Series(
        "ldl",
        "Patient's LDL cholesterol {verb} {v} mg/dL",
        70,
        160,
        12,
        40,
        220,
        0,
        -1,
        1.5,
    ),
    Series(
        "fpg",
        "Patient's fasting glucose {verb} {v} mg/dL",
        100,
        190,
        15,
        70,
        320,
        0,
        -1,
        2.0,
    ),
    Series(
        "uacr",
        "Patient's urine albumin-to-creatinine ratio {verb} {v} mg/g",
        15,
        120,
        8,
        4,
        600,
        0,
        -1,
        1.5,
    ),
    Series(
        "tg",
        "Patient's triglyceride level {verb} {v} mg/dL",
        110,
        280,
        25,
        50,
        600,
        0,
        -1,
        1.0,
    ),
    Series("k", "Patient's potassium {verb} {v} mmol/L", 3.9, 4.9, 0.25, 3.2, 5.9, 1, 0, 1.0),
)

OBS_SERIES: tuple[Series, ...] = (
    Series(
        "bp", "Patient's home systolic pressure averaged {v} mmHg this week", 118, 156, 7, 95, 190
    ),
    Series("weight", "Patient weighed {v} kg at this session", 60, 118, 1.8, 45, 160, 1),
    Series("tir", "Patient's sensor showed {v}% time in range over two weeks", 40, 80, 8, 15, 98),
    Series(
        "steps",
        "Patient averaged {v} steps a day on the phone tracker",
        2500,
        9000,
        900,
        500,
        20000,
    ),
)

POOLS: dict[str, tuple[Template, ...]] = {
    "condition": CONDITIONS,
    "medication": MEDICATIONS,
    "social": SOCIAL,
    "preference": PREFERENCES,
    "care_plan": CARE_PLANS,
    "treatment_response": TREATMENT_RESPONSES,
    "adverse_reaction": ADVERSE_REACTIONS,
    "observation": OBSERVATIONS,
}
BY_KEY: dict[str, dict[str, Template]] = {
    mtype: {t.key: t for t in pool} for mtype, pool in POOLS.items()
}

# Share of the non-fixed memories per one-off type (order matters: facts chosen earlier can
# be required by later ones). Labs and home-reading series absorb whatever is left.
TYPE_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("condition", 0.04),
    ("medication", 0.05),
    ("social", 0.07),
    ("preference", 0.08),
    ("care_plan", 0.11),
    ("treatment_response", 0.08),
    ("adverse_reaction", 0.03),
    ("observation", 0.24),
)
LAB_SHARE = 0.7  # of the leftover; the rest are home-reading observations

# Per later session, the chance that the agent retrieved the memory.
ACCESS_RATE: dict[str, float] = {
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
MAX_ACCESSES = 8
SHORT_TERM_SHARE = 0.1  # of observations (not the fixed facts)
SHORT_TERM_MAX_ACCESSES = 2  # stay below the engine's promotion threshold (3)

EARLY_TYPES = frozenset({"condition", "social", "medication"})
LATE_TYPES = frozenset({"treatment_response", "adverse_reaction"})


# --------------------------------------------------------------------------------------
# Patients
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PatientSpec:
    patient_id: str
    age: int
    history_days: int
    n_memories: int
    conditions: tuple[str, ...]
    medications: tuple[str, ...]
    allergies: tuple[str, ...] = ()


SCALE_CONDITIONS: tuple[str, ...] = (
    "htn",
    "ckd2",
    "neuropathy",
    "hyperlipid",
    "retinopathy",
    "osa",
    "obesity",
)
SCALE_MEDS: tuple[str, ...] = (
    "glargine",
    "empagliflozin",
    "lisinopril",
    "atorvastatin",
    "metoprolol",
    "semaglutide",
    "sitagliptin",
    "gabapentin",
)
