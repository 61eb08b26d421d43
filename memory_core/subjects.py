"""What a clinical statement is about: the slot of a patient's history it fills (living
situation, employment, smoking, goals of care, a referral's specialty, a home measurement), and
whose fact it is (the patient, or a relative the sentence starts with).

The verdict (:mod:`memory_core.adjudicate`) uses slots as evidence that two statements worded
apart are about the same thing: "lives alone" and "daughter has moved in" both fill the
household slot, "unemployed" and "started a new job" the employment slot. Two statements that
fill the same slots, for the same person, with a change between them are an update -- the
newest value of the slot wins (the deterministic step arXiv 2606.01435 measures against Mem0 and
Zep). Statements that fill different slots are two facts.

The slots follow the social-history and social-determinants headings of a primary-care chart
(household, housing, marital status, employment, tobacco, alcohol, other substances,
transport, caregiving, insurance, diet), the preferences a care team records (visit time,
contact channel, language, pharmacy, pill form, goals of care), the home measurements a
patient reports (weight, sleep, walking, blood pressure, glucose checks, hypoglycaemia,
breakfast, sugary drinks) and the referral specialties of a care plan. Words are matched as
the verdict's normalised words (lower case, :data:`SYNONYMS` applied), whole words only.

Pure: text in, slots out.
"""

from __future__ import annotations

import re

#: Phrases read as one word before slots and subjects are compared (clinical synonyms).
SYNONYMS: tuple[tuple[str, str], ...] = (
    ("blood sugars?", "glucose"),
    ("sugars?", "glucose"),
    ("finger ?sticks?", "glucose"),
    ("low glucose", "hypoglycemia"),
    ("hypos", "hypoglycemia"),
    ("hypoglycaemia", "hypoglycemia"),
    # chart abbreviations of common conditions, read as the condition (before "blood
    # pressure" is read as a measurement)
    ("(?:high blood pressure|htn)", "hypertension"),
    ("(?:high cholesterol|hld|hyperlipidaemia)", "hyperlipidemia"),
    ("underactive thyroid", "hypothyroidism"),
    ("overactive thyroid", "hyperthyroidism"),
    ("chronic kidney disease", "ckd"),
    ("coronary artery disease", "cad"),
    ("(?:heart attack|myocardial infarction)", "mi"),
    ("(?:cva|cerebrovascular accident)", "stroke"),
    ("(?:obstructive )?sleep apno?ea", "osa"),
    ("(?:gastro-?o?esophageal reflux(?: disease)?|acid reflux|gord)", "gerd"),
    ("urinary tract infection", "uti"),
    ("chronic obstructive pulmonary disease", "copd"),
    ("deep ve(?:in|nous) thrombosis", "dvt"),
    ("(?:benign prostatic hyperplasia|enlarged prostate)", "bph"),
    ("(?:type 1 diabetes(?: mellitus)?|t1d|dm1)", "t1dm"),
    ("(?:fbg|fbs|fasting blood glucose)", "fasting glucose"),
    ("hx", "history"),
    ("blood pressure", "bp"),
    ("cola", "soda"),
    ("soft drinks?", "soda"),
    ("sugary drinks?", "soda"),
    ("fizzy drinks?", "soda"),
    ("referral", "refer"),
    ("referred", "refer"),
    ("records?", "log"),
    ("logged", "log"),
    ("logging", "log"),
    ("eye doctor", "ophthalmology"),
    ("eye clinic", "ophthalmology"),
    ("retinal screening", "eye exam"),
    ("foot doctor", "podiatry"),
    ("kidney doctor", "nephrology"),
    ("heart doctor", "cardiology"),
    ("nutritionist", "dietitian"),
    ("dietician", "dietitian"),
    ("nutrition", "dietitian"),
    ("physical therapy", "physiotherapy"),
    ("early in the day", "morning"),
    ("first thing", "morning"),
    ("later in the day", "afternoon"),
    ("be seen", "visit"),
    ("appointments?", "visit"),
    ("visits", "visit"),
    ("lost", "loss"),
    ("losing", "loss"),
    ("do not resuscitate", "dnr"),
    ("full code", "fullcode"),
    ("comfort[- ]focused", "comfort"),
    ("comfort care", "comfort"),
    ("moved in", "movedin"),
    ("nursing home", "nursinghome"),
    ("assisted living", "assistedliving"),
    ("laid off", "unemployed"),
    ("out of work", "unemployed"),
    ("looking for work", "unemployed"),
    ("in writing", "written"),
    ("mychart", "portal"),
    ("patient portal", "portal"),
    ("short(?:ness)? of breath", "sob"),
    ("dyspnea", "sob"),
    (
        "(?:entered|charted|documented|recorded) (?:in error|on (?:the )?wrong (?:patient|chart))",
        "enteredinerror",
    ),
    ("total hip (?:replacement|arthroplasty)", "thr"),
    ("total knee (?:replacement|arthroplasty)", "tkr"),
    ("cap", "pneumonia"),
    ("(?:illicit |recreational |street )?drug use", "substanceuse"),
    ("gestational diabetes(?: mellitus)?", "gdm"),
    ("(?:strep throat|strep(?:tococcal)? pharyngitis)", "strep"),
    ("major depressive disorder", "mdd"),
    ("(?:type 2 diabetes(?: mellitus)?|t2d|dm2|dm type 2)", "t2dm"),
    ("(?:oral )?glucose tolerance test", "ogtt"),
    ("(?:charted|documented|entered) wrong(?:ly)?", "enteredinerror"),
    ("care home", "nursinghome"),
    ("occupational therap(?:y|ist)", "ot"),
    ("heart failure with reduced ejection fraction", "hfref"),
    ("heart failure with preserved ejection fraction", "hfpef"),
    ("atrial fibrillation", "afib"),
    ("a ?fib", "afib"),
    ("af", "afib"),
    ("lvef", "ef"),
    ("ejection fraction", "ef"),
    ("echocardiogram", "echo"),
    ("tte", "echo"),
    ("community[- ]acquired pneumonia", "pneumonia"),
    ("return to clinic", "followup"),
    ("rtc", "followup"),
    ("radiation oncology", "radonc"),
    ("medical oncology", "medonc"),
    ("surgical oncology", "surgonc"),
    ("interventional cardiology", "intcardiology"),
    ("heart rate", "pulse"),
    ("hr(?= \\d)", "pulse"),
    ("(?:o2 sats?|oxygen saturation|sats)", "spo2"),
    ("peak (?:expiratory )?flow", "peakflow"),
    ("mornings", "morning"),
    ("evenings", "evening"),
    ("(?:right eye|od|re(?= iop))", "righteye"),
    ("(?:left eye|le(?= iop))", "lefteye"),
    ("r(?= (?:[a-z]+ )?(?:fossa|eye|ear|side|arm|leg|hand|foot|knee|hip|shoulder))", "right"),
    ("l(?= (?:[a-z]+ )?(?:fossa|eye|ear|side|arm|leg|hand|foot|knee|hip|shoulder))", "left"),
)
SYNONYM_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"\b{a}\b"), b) for a, b in SYNONYMS
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Slots of the patient's history (a social fact or a preference) whose newest value replaces
#: the older one (see :data:`SINGLE_VALUED` for which need no change word).
STATE_SLOTS: dict[str, frozenset[str]] = {
    "household": _words(
        "alone roommate roommates movedin nursinghome assistedliving residential lives living "
        "live resides "
        "reside"
    ),
    "housing": _words(
        "apartment flat stairs elevator homeless shelter evicted eviction rent rental housing "
        "mortgage"
    ),
    "marital": _words("married widowed widow widower divorced separated single engaged remarried"),
    "employment": _words(
        "job jobs employed unemployed employment works working work worked retired retirement "
        "hired fired shift shifts occupation career employer"
    ),
    "tobacco": _words(
        "smoke smokes smoked smoker smokers smoking cigarette cigarettes tobacco vape vapes "
        "vaping cigar cigars nicotine"
    ),
    "alcohol": _words(
        "alcohol etoh wine wines beer beers liquor spirits whiskey vodka sober sobriety"
    ),
    "substances": _words("marijuana cannabis cocaine heroin methamphetamine meth substanceuse"),
    "transport": _words("car cars drive drives driving bus transit transportation taxi license"),
    "caregiving": _words("caregiver caregivers carer caregiving aide"),
    "insurance": _words("insurance insured uninsured medicaid medicare coverage copay copays"),
    "diet": _words("vegetarian vegan diet keto kosher halal gluten"),
    "goals": _words(
        "aggressive comfort hospice palliative curative chemotherapy dnr dni fullcode "
        "resuscitation intubation ventilator"
    ),
    "language": _words("language interpreter interpreters translator speaks speak"),
    "pharmacy": _words("pharmacy pharmacies chemist cvs walgreens boots"),
}
#: Measurements and habits a patient reports: the same slot needs a changed number or a change
#: word to be an update ("walks 20 minutes" -> "now walks 45 minutes").
MEASURE_SLOTS: dict[str, frozenset[str]] = {
    "weight": _words("weight weighs weighed weigh kg lb lbs"),
    "sleep": _words("sleep sleeps sleeping slept insomnia naps"),
    "walking": _words("walk walks walking walked steps"),
    "bp": _words("bp systolic diastolic"),
    "glucose": _words("glucose cgm glucometer"),
    "hypoglycemia": _words("hypoglycemia"),
    "breakfast": _words("breakfast"),
    "soda": _words("soda sodas"),
    "falls": _words("fall falls fell fallen"),
    "pulse": _words("pulse"),
    "spo2": _words("spo2 sats saturation oximetry"),
    "temperature": _words("temperature temp"),
    "peakflow": _words("peakflow"),
}
#: When and where a measurement was taken: two readings at different times of day, before and
#: after something, or at home and in clinic are two readings ("peak flow 350 mornings" / "420
#: evenings"; "home BP 150/95" / "clinic BP 132/84").
MEASURE_CONTEXTS = (
    _words("morning afternoon evening bedtime daytime night overnight fasting postprandial am pm"),
    _words("rest exertion"),
    _words("before after"),
    _words("home clinic office"),
)
#: The specialty of a referral: two referrals to one specialty are one plan item.
SPECIALTIES = _words(
    "cardiology nephrology ophthalmology optometry podiatry endocrinology dietitian radonc "
    "medonc surgonc intcardiology "
    "physiotherapy neurology dermatology psychiatry psychology pulmonology gastroenterology "
    "urology orthopedics orthopaedics rheumatology oncology hematology audiology dental "
    "dentist ent"
)
#: Body sites: two findings at different sites are two findings ("ulcer, left heel" / "ulcer,
#: right heel"; "BCC, nose" / "BCC, shoulder").
BODY_SITES = _words(
    "head scalp face forehead nose ear eye cheek lip mouth jaw neck throat shoulder arm elbow "
    "forearm wrist hand finger thumb chest breast back flank abdomen hip groin buttock thigh "
    "leg knee shin calf ankle foot heel toe sole sacrum sacral coccyx spine spinal lumbar "
    "thoracic cervical popliteal femoral iliac lung kidney liver"
)
#: Procedures a care plan schedules: one plan holds each once ("colonoscopy scheduled 11/14"
#: -> "colonoscopy done 11/14").
PROCEDURES = _words(
    "colonoscopy mammogram echo ct mri xray cxr dexa endoscopy egd biopsy spirometry "
    "stress angiogram catheterization cath"
)
SIDES = _words("left right l r lt rt bilateral righteye lefteye")
#: Sides that name a side whatever follows them ("R" and "L" also abbreviate litres, and
#: "bilateral" widens a finding rather than moving it): a clash of these is two findings.
PLAIN_SIDES = _words("left right lt rt righteye lefteye")
#: Who a sentence is about when it starts with one of these ("Wife works night shifts").
RELATIONS = _words(
    "wife husband spouse partner daughter son mother father mom dad sister brother sibling "
    "grandson granddaughter grandmother grandfather niece nephew friend neighbour neighbor"
)
#: Slots that hold one value at a time: a different statement on one of them replaces the
#: older even without a change word ("lives alone" -> "lives with her son"). The others can
#: hold several true values ("depends on the bus" and "has no car"), so they need a change.
SINGLE_VALUED = frozenset(
    {"household", "marital", "employment", "tobacco", "alcohol", "substances", "goals", "pharmacy"}
)
#: Slots whose value names other people: who the sentence starts with is part of the value
#: ("daughter has moved in" is the patient's household).
SHARED_SLOTS = frozenset({"household", "caregiving", "marital"})
#: Headings a chart puts before a statement ("Plan:", "Alcohol:"); any other label is a
#: speaker in a transcript.
HEADINGS = _words(
    "plan allergy allergies social sh hx history pmh meds medication medications assessment "
    "note update correction alcohol tobacco smoking diet exercise lab labs result results "
    "vitals goal goals referral preference preferences observation housing employment "
    "living transport insurance environmental food drug portal msg message telephone phone "
    "tel triage pharmacist pharmacy discharge rn nurse visit hh home health ed er hospital "
    "reconciliation review reviewed dx problem"
)

_LEAD = _words(
    "patient patient's pt pt's his her their the a my our younger older adult elder little big step"
)
_REPORTERS = RELATIONS | {"patient", "pt", "i", "she", "he"}
#: A relation followed by one of these reports the patient's fact ("daughter reports pt fell").
_REPORTING = _words(
    "reports reported says said states stated notes noted tells told mentions admits messaged "
    "writes wrote called calls asks asked"
)


def normalise(low: str) -> str:
    """``low`` (lower case) with :data:`SYNONYMS` applied."""
    for rx, rep in SYNONYM_PATTERNS:
        low = rx.sub(rep, low)
    return low


def slots(words: tuple[str, ...]) -> frozenset[str]:
    """The slots named by ``words`` (normalised words of one statement)."""
    ws = set(words)
    out = {n for n, trig in STATE_SLOTS.items() if ws & trig}
    out |= {n for n, trig in MEASURE_SLOTS.items() if ws & trig}
    specialties = ws & SPECIALTIES
    out |= {f"refer:{w}" for w in specialties}
    if "followup" in ws:  # one follow-up per specialty ("f/u cardiology", "f/u radonc")
        out |= {f"followup:{w}" for w in specialties} if specialties else {"followup"}
    out |= {f"proc:{w}" for w in ws & PROCEDURES}
    return frozenset(out)


def plan_slot(slot: str) -> bool:
    """Care-plan items one plan holds once: a referral to a specialty, the next follow-up, a
    scheduled procedure."""
    return slot.startswith(("followup", "refer:", "proc:"))


def whose(words: tuple[str, ...]) -> str:
    """Whose fact: a relation the sentence starts with ("wife works nights", "pt's mother had
    to stop ...", "my husband's A1c"), after any reporter ("mom says pt's brother ..."), else
    "patient". A relation later in the sentence is its object ("lives with wife")."""
    i = 0
    while i < len(words):
        who = words[i].removesuffix("'s")
        if i + 1 < len(words) and words[i + 1] in _REPORTING and who in _REPORTERS:
            i += 2  # "pt says ...", "mom reports ...": whose fact follows
            while i < len(words) and words[i] in {"that", "her", "his"}:
                i += 1
            continue
        if words[i] in _LEAD:
            i += 1
            continue
        return who if who in RELATIONS else "patient"
    return "patient"


def is_heading(label: str) -> bool:
    """A chart heading ("plan", "plan changed", "environmental allergy", "portal msg"), not a
    speaker's name."""
    return any(w in HEADINGS for w in label.split())
