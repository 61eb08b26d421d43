"""A small clinical vocabulary for the keyword half of retrieval: the words a clinician asks
with, mapped to the words a record is written with.

A clinician asks "is the kidney function getting worse?" and means the eGFR, creatinine and
albumin-to-creatinine results; asks about "the diabetes medication" and means metformin, an
insulin, an SGLT2 inhibitor or a GLP-1 agonist. BM25 sees literal words only, so a query's
*concept* words (:data:`CONCEPTS`) add the terms a record uses for them to the keyword query,
each concept as one extra query term at :data:`EXPANSION_WEIGHT` of a literal word (a memory
matches a concept through its best-scoring term, never once per term). A brand name in the
query (Ozempic, Glucophage) adds its generic name through :mod:`memory_core.drugs` at
:data:`SYNONYM_WEIGHT`. Expansion only adds: the query's own words are searched as before, so
a memory with the exact word beats one that matches through an expansion.

The groups are generic and name their source (a drug class as the WHO ATC classification and
the BNF group it; a body system by the laboratory tests of its standard panel), not the demo's
sentences. Limits: the words are matched as tokens (no stemming, so plural spellings are
listed), only the query is expanded (a record that writes a brand name is not found by its
generic name), and the lists cover cardiometabolic primary care, not all of medicine.

Pure: text in, terms out (the drug dictionary is read lazily by :mod:`memory_core.drugs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from . import drugs
from .lexical import STOPWORDS, query_terms, tokens

#: A concept's weight in the keyword query, as a share of one literal query word.
EXPANSION_WEIGHT = 0.5
#: A brand name's generic name (the same drug): a literal word's weight.
SYNONYM_WEIGHT = 1.0
#: The longest concept phrase, in words.
MAX_PHRASE_WORDS = 3


@dataclass(frozen=True, slots=True)
class Concept:
    """``name``: how an explanation names it; ``phrases``: how a query says it (lexical
    tokens, space-separated); ``terms``: the words a record uses for it (lexical tokens)."""

    name: str
    phrases: tuple[str, ...]
    terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Expansion:
    """One concept (or brand name) found in a query: ``via`` the query's words as tokens,
    ``concept`` what they mean, ``terms`` the words searched for it (none of the query's own
    searched words), ``weight`` its share of a literal word."""

    via: str
    concept: str
    terms: tuple[str, ...]
    weight: float

    def label(self, term: str) -> str:
        """How an explanation says a memory matched: "kidney function → egfr"."""
        return f"{self.via} → {term}"


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Heads of a medication phrase: "diabetes medication", "blood pressure pills", ...
MEDICATION_HEADS = _words(
    "medication medications medicine medicines meds drug drugs tablet tablets pill pills "
    "treatment treatments therapy injection injections jab jabs prescription prescriptions "
    "agent agents"
)


def _drug_class(
    name: str, qualifiers: Iterable[str], class_names: Iterable[str], members: str
) -> Concept:
    """A therapeutic class: "<qualifier> <head>" for every medication head, the class's own
    names, and its member drugs (INN generic names) as terms."""
    phrases = [f"{q} {h}" for q in qualifiers for h in MEDICATION_HEADS]
    return Concept(name, (*phrases, *class_names), _words(members))


# --- drug classes: members as the WHO ATC classification groups them (ATC code in brackets),
# --- cross-checked against the BNF chapter ------------------------------------------------------
_INSULINS = "insulin glargine detemir degludec lispro aspart glulisine isophane nph"
_SGLT2 = "empagliflozin dapagliflozin canagliflozin ertugliflozin"  # A10BK
_GLP1 = "semaglutide liraglutide dulaglutide exenatide lixisenatide tirzepatide"  # A10BJ, A10BX
_DPP4 = "sitagliptin linagliptin saxagliptin alogliptin vildagliptin"  # A10BH
_SULFONYLUREAS = "glipizide glimepiride gliclazide glibenclamide glyburide tolbutamide"  # A10BB
_ACE = "lisinopril enalapril ramipril perindopril captopril quinapril benazepril"  # C09A
_ARB = "losartan valsartan candesartan irbesartan olmesartan telmisartan"  # C09C
_BETA = "metoprolol atenolol bisoprolol carvedilol propranolol nebivolol labetalol"  # C07
_CCB = "amlodipine nifedipine felodipine lercanidipine diltiazem verapamil"  # C08
_THIAZIDES = "hydrochlorothiazide chlorthalidone indapamide bendroflumethiazide"  # C03A, C03BA
_DIURETICS = f"{_THIAZIDES} furosemide bumetanide torsemide spironolactone eplerenone"  # C03
_STATINS = "atorvastatin simvastatin rosuvastatin pravastatin lovastatin fluvastatin pitavastatin"
_PPI = "omeprazole esomeprazole lansoprazole pantoprazole rabeprazole"  # A02BC
_SSRI = "sertraline fluoxetine citalopram escitalopram paroxetine"  # N06AB
_NSAIDS = "ibuprofen naproxen diclofenac celecoxib meloxicam"  # M01A
_OPIOIDS = "codeine tramadol morphine oxycodone hydrocodone dihydrocodeine"  # N02A

DRUG_CLASSES: tuple[Concept, ...] = (
    # A10 drugs used in diabetes (BNF 6.1): insulins, biguanides, sulfonylureas, glitazones,
    # DPP-4 inhibitors, GLP-1 receptor agonists, SGLT2 inhibitors, glinides, acarbose
    _drug_class(
        "diabetes medication",
        (
            "diabetes",
            "diabetic",
            "glucose",
            "blood sugar",
            "blood glucose",
            "glucose lowering",
            "glycaemic",
            "glycemic",
        ),
        ("antidiabetic", "antidiabetics", "hypoglycaemics", "hypoglycemics"),
        f"metformin {_INSULINS} {_SGLT2} {_GLP1} {_DPP4} {_SULFONYLUREAS} pioglitazone "
        "repaglinide nateglinide acarbose",
    ),
    # A10A insulins and analogues: the named insulins
    Concept("insulin", ("insulin", "insulins"), _words(_INSULINS)),
    Concept(
        "SGLT2 inhibitor",
        ("sglt2", "sglt2 inhibitor", "sglt2 inhibitors", "gliflozin", "gliflozins"),
        _words(_SGLT2),
    ),
    Concept(
        "GLP-1 receptor agonist",
        ("glp 1", "glp1", "glp 1 agonist", "glp 1 agonists", "incretin", "incretins"),
        _words(_GLP1),
    ),
    Concept(
        "DPP-4 inhibitor",
        ("dpp 4", "dpp4", "dpp 4 inhibitor", "gliptin", "gliptins"),
        _words(_DPP4),
    ),
    Concept(
        "sulfonylurea", ("sulfonylurea", "sulfonylureas", "sulphonylureas"), _words(_SULFONYLUREAS)
    ),
    # antihypertensives (BNF 2.5 / 2.2 / 2.4 / 2.6.2): C02, C03, C07, C08, C09
    _drug_class(
        "blood pressure medication",
        ("blood pressure", "bp", "hypertension", "pressure"),
        ("antihypertensive", "antihypertensives"),
        f"{_ACE} {_ARB} {_BETA} {_CCB} {_DIURETICS} doxazosin clonidine hydralazine",
    ),
    Concept("ACE inhibitor", ("ace inhibitor", "ace inhibitors"), _words(_ACE)),
    Concept(
        "angiotensin receptor blocker",
        ("arb", "arbs", "angiotensin receptor blocker", "angiotensin receptor blockers"),
        _words(_ARB),
    ),
    Concept("beta blocker", ("beta blocker", "beta blockers", "betablocker"), _words(_BETA)),
    Concept(
        "calcium channel blocker",
        ("calcium channel blocker", "calcium channel blockers", "ccb"),
        _words(_CCB),
    ),
    Concept("thiazide", ("thiazide", "thiazides"), _words(_THIAZIDES)),
    Concept(
        "diuretic",
        ("diuretic", "diuretics", "water pill", "water pills", "water tablet", "water tablets"),
        _words(_DIURETICS),
    ),
    # C10 lipid-modifying agents (BNF 2.12): statins, ezetimibe, fibrates, PCSK9 inhibitors
    _drug_class(
        "cholesterol medication",
        ("cholesterol", "lipid", "lipids", "lipid lowering"),
        (),
        f"{_STATINS} ezetimibe fenofibrate gemfibrozil evolocumab alirocumab inclisiran",
    ),
    Concept("statin", ("statin", "statins"), _words(_STATINS)),
    # analgesics (N02, M01A; BNF 4.7, with 4.7.3 neuropathic pain)
    _drug_class(
        "pain medication",
        ("pain", "nerve pain"),
        (
            "painkiller",
            "painkillers",
            "pain killer",
            "pain killers",
            "pain relief",
            "pain reliever",
            "pain relievers",
            "analgesic",
            "analgesics",
        ),
        f"paracetamol acetaminophen {_NSAIDS} aspirin {_OPIOIDS} gabapentin pregabalin "
        "duloxetine amitriptyline",
    ),
    Concept(
        "NSAID", ("nsaid", "nsaids", "anti inflammatory", "anti inflammatories"), _words(_NSAIDS)
    ),
    Concept("opioid", ("opioid", "opioids", "opiate", "opiates"), _words(_OPIOIDS)),
    # N06A antidepressants (BNF 4.3)
    _drug_class(
        "antidepressant",
        ("depression", "mood", "antidepressant"),
        ("antidepressant", "antidepressants", "ssri", "ssris"),
        f"{_SSRI} duloxetine venlafaxine mirtazapine amitriptyline bupropion trazodone",
    ),
    # A02 drugs for acid-related disorders (BNF 1.3)
    _drug_class(
        "acid and reflux medication",
        ("reflux", "heartburn", "acid", "ulcer"),
        ("ppi", "ppis", "proton pump inhibitor", "proton pump inhibitors", "antacid", "antacids"),
        f"{_PPI} famotidine ranitidine",
    ),
    # H03 thyroid therapy (BNF 6.2)
    _drug_class(
        "thyroid medication",
        ("thyroid",),
        (),
        "levothyroxine liothyronine carbimazole methimazole propylthiouracil",
    ),
    # B01 antithrombotic agents (BNF 2.8, 2.9): anticoagulants and antiplatelets
    Concept(
        "blood thinner",
        (
            "blood thinner",
            "blood thinners",
            "anticoagulant",
            "anticoagulants",
            "anticoagulation",
            "antiplatelet",
            "antiplatelets",
        ),
        _words(
            "warfarin apixaban rivaroxaban edoxaban dabigatran heparin enoxaparin "
            "aspirin clopidogrel ticagrelor prasugrel"
        ),
    ),
)

# --- body systems: the laboratory tests and terms of their standard panels ----------------------
BODY_SYSTEMS: tuple[Concept, ...] = (
    # KDIGO 2012 CKD guideline: kidney *function* is the glomerular filtration rate (eGFR from
    # serum creatinine or cystatin C; urea); kidney *disease* is staged by GFR and by
    # albuminuria (urine albumin-to-creatinine ratio, ACR / UACR)
    Concept(
        "kidney function",
        ("kidney function", "renal function", "kidney functions", "filtration"),
        _words("egfr gfr creatinine cystatin urea bun"),
    ),
    Concept(
        "kidney disease",
        (
            "kidney",
            "kidneys",
            "renal",
            "nephropathy",
            "ckd",
            "kidney disease",
            "kidney damage",
            "renal disease",
        ),
        _words(
            "egfr gfr creatinine cystatin albumin microalbumin uacr acr albuminuria "
            "proteinuria ckd nephropathy renal kidney kidneys"
        ),
    ),
    # ADA Standards of Care, glycaemic targets: A1C, plasma glucose, CGM (time in range)
    Concept(
        "glucose control",
        (
            "diabetes",
            "glucose",
            "sugar",
            "sugars",
            "blood sugar",
            "blood sugars",
            "blood glucose",
            "glucose control",
            "glycaemic",
            "glycemic",
            "glycaemic control",
            "glycemic control",
        ),
        _words("hba1c a1c glucose glycated fructosamine cgm"),
    ),
    # lipid panel (LOINC 57698-3): total cholesterol, HDL, LDL, triglycerides
    Concept(
        "lipids",
        ("cholesterol", "lipid", "lipids", "lipid panel", "lipid profile", "cholesterol numbers"),
        _words("ldl hdl triglycerides triglyceride cholesterol lipid lipids"),
    ),
    # blood pressure measurement (ESH / ACC-AHA): systolic and diastolic pressure in mmHg
    Concept(
        "blood pressure",
        ("blood pressure", "bp", "hypertension", "hypertensive"),
        _words("systolic diastolic mmhg hypertension bp pressure"),
    ),
    # hepatic function panel (LOINC 24325-3): ALT, AST, ALP, bilirubin; steatosis (AASLD)
    Concept(
        "liver",
        ("liver", "hepatic", "liver function", "lfts", "lft"),
        _words(
            "alt ast alp ggt bilirubin lfts lft hepatic liver fatty steatosis nafld masld "
            "cirrhosis hepatitis"
        ),
    ),
    # thyroid function tests (LOINC 3016-3 TSH, 3024-7 free T4); "underactive" and
    # "overactive" are the lay names of hypo- and hyperthyroidism
    Concept(
        "thyroid",
        ("thyroid", "thyroid function"),
        _words("tsh t4 t3 thyroxine hypothyroidism hyperthyroidism underactive overactive thyroid"),
    ),
    # cardiac investigations and the common heart conditions
    Concept(
        "heart",
        ("heart", "cardiac", "cardiovascular"),
        _words(
            "cardiac ecg ekg echocardiogram troponin bnp arrhythmia fibrillation afib angina "
            "infarction murmur palpitations"
        ),
    ),
    # full blood count and iron studies (WHO haemoglobin thresholds for anaemia)
    Concept(
        "anaemia",
        ("anaemia", "anemia", "anaemic", "anemic", "blood count"),
        _words("haemoglobin hemoglobin hb hgb ferritin iron anaemia anemia"),
    ),
    # electrolytes panel (LOINC 24326-1) / basic metabolic panel (LOINC 51990-0)
    Concept(
        "electrolytes",
        ("electrolyte", "electrolytes"),
        _words("sodium potassium chloride bicarbonate magnesium calcium"),
    ),
    # body weight and the WHO BMI classification
    Concept(
        "weight",
        ("weight", "obesity", "obese", "overweight"),
        _words("bmi weighed weight kg obesity"),
    ),
    # diabetic eye screening (ADA / NHS DESP): retinopathy, maculopathy
    Concept(
        "eyes",
        ("eye", "eyes", "vision", "eyesight", "sight"),
        _words("retinopathy retinal retina maculopathy vision eyesight cataract glaucoma"),
    ),
    # the diabetic foot (IWGDF): neuropathy, ulcers, podiatry
    Concept(
        "feet",
        ("foot", "feet"),
        _words("podiatry podiatrist neuropathy ulcer callus toes toenails heel heels"),
    ),
    # tobacco use (SNOMED CT "tobacco smoking behavior")
    Concept(
        "smoking",
        ("smoke", "smokes", "smoking", "smoker", "tobacco"),
        _words("smoke smokes smoking smoker cigarette cigarettes tobacco vape vaping"),
    ),
)

# --- contact: HL7 FHIR ContactPoint.system (phone | fax | email | pager | url | sms | other),
# --- plus the patient portal and post ----------------------------------------------------------
CONTACT: tuple[Concept, ...] = (
    Concept(
        "contact",
        (
            "contact",
            "contacted",
            "contacting",
            "reach them",
            "reach him",
            "reach her",
            "get in touch",
            "get hold of",
        ),
        _words(
            "phone telephone call calls email emails text texts message messages sms portal "
            "letter letters mail voicemail"
        ),
    ),
)

CONCEPTS: tuple[Concept, ...] = (*DRUG_CLASSES, *BODY_SYSTEMS, *CONTACT)


def _phrase_index(concepts: Sequence[Concept]) -> dict[tuple[str, ...], Concept]:
    """Phrase (as tokens) -> its concept. A phrase names one concept; the first listed wins
    (drug classes come first: "sugar pills" is a medication)."""
    out: dict[tuple[str, ...], Concept] = {}
    for c in concepts:
        for p in c.phrases:
            key = tuple(tokens(p))
            if not 0 < len(key) <= MAX_PHRASE_WORDS:
                raise ValueError(f"phrase {p!r} of {c.name!r}: 1 to {MAX_PHRASE_WORDS} words")
            out.setdefault(key, c)
    return out


_PHRASES = _phrase_index(CONCEPTS)


def find_concepts(query: str) -> list[tuple[str, Concept]]:
    """The concepts a query names, in order, as (the query's words, concept): the longest
    phrase first at each position, each word in at most one phrase, each concept once."""
    toks = tokens(query)
    found: list[tuple[str, Concept]] = []
    seen: set[str] = set()
    i = 0
    while i < len(toks):
        for n in range(min(MAX_PHRASE_WORDS, len(toks) - i), 0, -1):
            c = _PHRASES.get(tuple(toks[i : i + n]))
            if c is not None:
                if c.name not in seen:
                    seen.add(c.name)
                    found.append((" ".join(toks[i : i + n]), c))
                i += n
                break
        else:
            i += 1
    return found


def _brand_generics(query: str, literal: frozenset[str]) -> list[Expansion]:
    """Brand names in the query resolved to their generic names by the drug dictionary."""
    out: list[Expansion] = []
    for m in drugs.resolve(query):
        if m.origin != "dictionary":
            continue
        terms = tuple(t for t in dict.fromkeys(tokens(m.name)) if t not in literal)
        if not terms or set(tokens(m.name)) <= literal:
            continue  # the generic name itself is in the query
        out.append(Expansion(" ".join(tokens(m.text)), m.name, terms, SYNONYM_WEIGHT))
    return out


@lru_cache(maxsize=4096)
def expand(query: str) -> tuple[Expansion, ...]:
    """What the query's concept words and brand names add to its keyword query; the query's
    own searched words (:func:`lexical.query_terms`) are never among the added terms."""
    literal = frozenset(query_terms(query))
    out: list[Expansion] = []
    for via, c in find_concepts(query):
        terms = tuple(t for t in dict.fromkeys(c.terms) if t not in literal and t not in STOPWORDS)
        # half the weight of the query's words that name the concept ("kidney function": 2)
        words = sum(1 for t in via.split() if t in literal)
        if terms and words:
            out.append(Expansion(via, c.name, terms, EXPANSION_WEIGHT * words))
    out.extend(_brand_generics(query, literal))
    return tuple(out)


def weighted_terms(
    query: str, expansions: Sequence[Expansion] | None = None
) -> tuple[tuple[float, tuple[str, ...]], ...]:
    """The keyword query as (weight, terms) groups: each searched word of the query alone at
    weight 1, then each expansion (a memory matches a group through its best term).
    ``expansions``: the query's :func:`expand`, if the caller has it already."""
    literal = tuple((1.0, (t,)) for t in query_terms(query))
    found = expand(query) if expansions is None else expansions
    return literal + tuple((e.weight, e.terms) for e in found)


def matched(expansions: Sequence[Expansion], content: str) -> tuple[str, ...]:
    """How ``content`` matches the expansions: "kidney function → egfr", one per expansion
    (its first term the content uses)."""
    if not expansions:
        return ()
    words = set(tokens(content))
    out: list[str] = []
    for e in expansions:
        term = next((t for t in e.terms if t in words), None)
        if term is not None:
            out.append(e.label(term))
    return tuple(out)
