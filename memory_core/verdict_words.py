"""The word lists the offline verdict (:mod:`memory_core.adjudicate`) reads: words with no
subject, words of change, negation, resolution and correction, predicates, reaction words,
rescue medicines, formulations, classes of values, phrases read as one word, and the forms of an
empty allergy list. Data only: no verdict is decided here."""

from __future__ import annotations

import re


def vocab(words: str) -> frozenset[str]:
    """A word list written as one whitespace-separated string."""
    return frozenset(words.split())


# words that carry no subject ("Patient's HbA1c was ...")
STOPWORDS = vocab(
    """a an the and or but of to in on at for with by from as into onto via per than then
    this that these those it its it's is are was were be been being am has have had having do
    does did will would shall should can could may might must i me my we our you your he him
    his she her they them their patient patients pt reports reported report says said states
    stated describes described notes noted today currently also very so just about some
    again one both every each which who whom what when where why how since
    much many more most then there here all any something someone anything everything
    mg mcg ml g kg lb lbs units unit mmol dl l mmhg iu miu ng pg mm cm"""
)
# conversational fillers: no subject in them
FILLERS = vocab(
    """oh ok okay yeah yes yep yup nope lol lmao haha hahaha hehe hmm hmmm umm um uh ah wow
    omg nice cool good great awesome really just like so well think thing things lot too maybe
    sure gonna wanna got get go going know thanks thank please sorry right actually literally
    im i'm you're that's it's don't dont can't cant hey hi hello bye goodbye today tomorrow
    tonight yesterday lately doing feeling talk chat"""
)

# words that say a state changed (asymmetric use between the two statements is evidence)
CHANGE_WORDS = vocab(
    """now no longer stopped stop stopping discontinued discontinue quit quitting ceased held
    resolved resolving healed gone settled cleared cured remission recovered
    switched switch switching changed change changing moved replaced instead rather
    increased increase decreased decrease raised reduced reduce lowered cut titrated doubled
    halved tapered
    progressed worsened worse worsening better improved improving
    corrected clarifies clarified actually retired widowed divorced
    started starting start restarted resumed added adding new anymore movedin
    done completed rescheduled cancelled canceled postponed attended statuspost
    outgrown reclassified verified"""
)
# verbs of wanting and taking: the predicate of a statement, not its subject
PREDICATES = vocab(
    """prefers prefer preferred preference likes like liked wants want wanted needs need
    asks ask asked requests request takes take taking took uses use using on
    has have"""
)
# words of every allergy or reaction statement (not what tells two reactions apart)
REACTION_WORDS = vocab(
    "allergy allergic allergies intolerance intolerant reaction reacts react induced "
    "caused causes cause on after from listed documented history"
)
# a state that ended: with a negation, an update ("resolved, no pain now"), not a correction
RESOLUTIONS = vocab(
    "resolved healed gone settled cleared cured remission recovered stopped discontinued quit "
    "outgrown "
    "longer anymore ceased"
)
NEGATIONS = vocab(
    "no not never none denies denied without negative isn't wasn't isnt wasnt doesn't doesnt "
    "don't dont"
)
# a change of the treatment itself (not of its outcome: "proteinuria reduced on lisinopril"),
# or a correction of what was said about it
THERAPY_CHANGES = vocab(
    """stopped stop discontinued quit held switched switch changed replaced started restarted
    resumed added adding titrated doubled halved tapered correction corrected anymore longer
    failure failed"""
)
CORRECTIONS = vocab("correction corrected")
# a change of the dose or of the order, not of a reaction: beside a second reaction to the
# drug it is no evidence the first changed ("redness at the patch site" / "drowsy when
# febrile (increased absorption)")
DOSE_CHANGES = vocab(
    """increased increase decreased decrease raised reduced reduce lowered cut titrated doubled
    halved tapered switched switch switching changed change changing started starting start
    restarted resumed added adding"""
)
# the states of a plan item, from asked for to done or dropped
PLAN_STATES = vocab(
    "sent booked scheduled rescheduled attended done completed cancelled canceled declined "
    "postponed received"
)
# a denial and an admission of the same thing contradict each other
DENIALS = vocab("denies denied")
ADMISSIONS = vocab("admits admitted endorses endorsed acknowledges acknowledged")
# a newer statement adding to the older rather than replacing it ("also works weekend shifts")
ADDITIONS = vocab("also additionally too additional second another")
# ... and, for a reaction, a new one beside the first ("new rash on lisinopril")
NEW_FACTS = ADDITIONS | vocab("new")
# a finding that moved or grew: its new sites update it ("the rash has spread to both arms")
SPREAD = vocab("spread spreading spreads extended extends")
# a medicine taken as needed: a rescue order beside a scheduled one is a second order
AS_NEEDED = vocab("prn")
# dose forms and routes of one drug
DOSE_FORMS = vocab(
    "sl sublingual patch patches tablet tablets tab tabs capsule capsules spray inhaler inhaled "
    "nebs nebuliser nebulizer injection iv im subcut sc po oral topical cream gel drops "
    "suppository"
)
# a qualitative test result (its value when it has no number)
QUALITATIVE = vocab("positive negative detected notdetected reactive nonreactive")
# when, not what: "over the past month" is no subject two statements share
TIME_WORDS = vocab(
    "past last next month months week weeks year years day days ago recent recently over "
    "during lately wk wks mo mos yr yrs hr hrs h d"
)
# what treats a reaction, not what causes it ("anaphylaxis, carries EpiPen")
RESCUE_DRUGS = vocab(
    "epinephrine diphenhydramine cetirizine loratadine famotidine prednisone prednisolone "
    "methylprednisolone hydrocortisone albuterol"
)
# a drug named as the setting of another ("potassium 20 mEq daily while on furosemide")
CONTEXT_DRUG = re.compile(
    r"\b(?:while (?:on|taking)|alongside|on top of|in addition to|except(?: on)?|apart from)\s+$"
)
FORMULATIONS = vocab("er xr sr xl ir la cr dr extended immediate release modified delayed")
# choices of the same kind: two statements naming different members of one class differ in
# their value (morning -> afternoon appointments; text -> phone reminders)
VALUE_CLASSES: tuple[frozenset[str], ...] = (
    vocab("morning afternoon evening night early late midday noon weekend weekday"),
    vocab(
        "text sms phone call email mail letter portal app video telehealth person inperson "
        "printed written writing verbal verbally spoken"
    ),
    vocab("monday tuesday wednesday thursday friday saturday sunday"),
    vocab("capsule tablet pill liquid injection patch spray inhaler"),
    vocab(
        "english spanish portuguese vietnamese chinese mandarin cantonese french arabic "
        "russian korean tagalog haitian creole hindi"
    ),
    vocab("aggressive comfort hospice palliative curative fullcode dnr"),
)
# phrases read as one subject word (synonyms of the same thing)
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"\b{a}\b"), b)
    for a, b in (
        ("high blood pressure", "hypertension"),
        ("htn", "hypertension"),
        ("chronic kidney disease", "ckd"),
        ("myalgias?", "muscle pain"),
        ("urticaria", "hives"),
        ("muscle aches?", "muscle pain"),
        ("follow[- ]up", "followup"),
        ("f/u", "followup"),
        ("in[- ]person", "inperson"),
        ("not detected", "notdetected"),
        ("s/p", "statuspost"),
        ("non[- ]?reactive", "nonreactive"),
        ("half an hour", "30 minutes"),
        ("(?:every|each) morning", "daily morning"),
        ("bid", "twice daily"),
        ("twice a day", "twice daily"),
        ("once a day", "daily"),
        ("every day", "daily"),
        ("a day", "daily"),
        ("nightly", "bedtime"),
        ("at night", "bedtime"),
        ("a week", "weekly"),
        ("per week", "weekly"),
        ("once", "1 times"),
        ("twice", "2 times"),
        ("two", "2"),
        ("three", "3"),
        ("four", "4"),
        ("five", "5"),
        ("six", "6"),
        ("seven", "7"),
        ("eight", "8"),
        ("nine", "9"),
        ("ten", "10"),
        ("hours?", "h"),
        ("(?:nighttime|night[- ]time)", "night"),
    )
)

# words that name no subject of their own before "resolved" ("pain resolved": whose pain?)
GENERIC = vocab("pain symptom symptoms sx issue issues problem problems it this that all")

#: The habits an observation reports besides its measurements ("smokes 5 a day").
HABIT_SLOTS = frozenset({"tobacco", "alcohol", "substances"})
#: Change words that say a reported habit or measurement itself changed ("now walks 45
#: minutes"); "raised", "switching" in an observation describe something else.
NOW_WORDS = vocab("now longer anymore stopped started quit resolved since")

NO_ALLERGIES = re.compile(
    r"(?:^|[:;,.\-]\s*)(?:(?:patient|pt)\s+)?(?:(?:has|reports)\s+)?(?:nkda|nka|nkfa|"
    r"no known (?:drug |food |medication )?allerg(?:y|ies)|no allerg(?:y|ies)(?: known)?|"
    r"denies (?:any )?(?:drug )?allerg(?:y|ies)|none known|none)\b[\s.;,]*(?:\(.*\))?\W*$",
    re.IGNORECASE,
)


#: What an empty allergy list covers, by its words: "NKDA" is about drugs only.
LIST_SCOPES = (
    (re.compile(r"\b(?:nkda|drug|medication)\b", re.IGNORECASE), "drug"),
    (re.compile(r"\b(?:nkfa|food)\b", re.IGNORECASE), "food"),
)
#: Allergens of the supplement that are foods or in the environment, not drugs.
FOOD_ALLERGENS = frozenset({"shellfish", "peanut", "tree nuts", "egg"})
