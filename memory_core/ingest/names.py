"""Names as a clinician writes them, from a coded record (pure: text in, text out).

A coding's display is written for a terminology browser: SNOMED CT puts a semantic tag after
the name ("Essential hypertension (disorder)"), names allergies as findings ("Allergy to
mould", "Latex allergy") and substances by their structure ("Substance with penicillin
structure and antibacterial mechanism of action (substance)"); LOINC names the property,
specimen and method ("Leukocytes [#/volume] in Blood by Automated count"); RxNorm writes units
in capitals ("lisinopril 10 MG Oral Tablet"); UCUM writes units for machines ("mm[Hg]",
"Cel", "{score}"). These functions turn each into what a clinician would write: "Essential
hypertension", "mould", "penicillin", "leukocytes", "lisinopril 10 mg oral tablet", "mmHg".
They know the formats, not the vocabulary: which analyte a LOINC code is, and its usual
name, comes from the lexicon (:mod:`memory_core.facts.lexicon`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: SNOMED CT's semantic tags (the hierarchy a concept's fully specified name ends with).
SEMANTIC_TAGS = (
    "disorder", "finding", "procedure", "substance", "qualifier value", "physical object",
    "record artifact", "situation", "observable entity", "body structure", "event",
    "morphologic abnormality", "regime/therapy", "product", "medicinal product",
    "clinical drug", "organism", "specimen", "environment", "person", "attribute",
    "assessment scale", "social concept", "occupation", "life style", "disposition",
    "dose form", "navigational concept", "environment / location", "cell", "cell structure",
)  # fmt: skip
_TAG = re.compile(r"\s*\((?:" + "|".join(re.escape(t) for t in SEMANTIC_TAGS) + r")\)\s*$", re.I)
_ALLERGY_TO = re.compile(
    r"^(?:(?:history of |h/o )?allerg(?:y|ic) to|allergy to substance|hypersensitivity to)\s+",
    re.I,
)
_ALLERGY_SUFFIX = re.compile(r"\s+(?:allergy|allergic reaction|hypersensitivity)$", re.I)
_STRUCTURE = re.compile(r"^substance with (.+?) structure\b", re.I)
# LOINC's bracketed property when it only repeats what the unit says ("[Mass/volume]")
_UNIT_PROPERTIES = frozenset(
    {
        "mass/volume", "moles/volume", "#/volume", "presence", "entitic volume", "entitic mass",
        "enzymatic activity/volume", "volume fraction", "mass fraction", "units/volume",
        "ratio", "score", "mass", "length", "time", "interpretation", "type", "identifier",
        "arbitrary concentration", "number", "moles/mass", "mass/mass", "volume rate",
        "velocity", "temperature", "pressure", "area", "volume", "mass ratio", "moles ratio",
        "#/area", "titer", "catalytic activity/volume", "substance rate",
    }
)  # fmt: skip
_BRACKET = re.compile(r"\s*\[([^\]]*)\]")
_METHOD = re.compile(r"\s+by\s+.*$", re.I)
_DEFAULT_SPECIMEN = re.compile(r"\s+in\s+(?:blood|serum or plasma|serum|plasma)$", re.I)
_REPORTED = re.compile(r"\s+-\s+reported$", re.I)
_RXNORM_UNITS = {
    "MG": "mg", "ML": "mL", "MCG": "mcg", "UNT": "units", "HR": "hr", "MEQ": "mEq",
    "ACTUAT": "actuation", "MG/ML": "mg/mL", "UNT/ML": "units/mL", "MG/ACTUAT": "mg/actuation",
    "MCG/ACTUAT": "mcg/actuation", "MCG/HR": "mcg/hr", "MG/HR": "mg/hr",
}  # fmt: skip
# UCUM units in their written form: special units in brackets, annotations in braces
_UCUM = {
    "cel": "°C", "[degf]": "°F", "kg/m2": "kg/m²", "mm[hg]": "mmHg", "[lb_av]": "lb",
    "[in_i]": "in", "10*3/ul": "×10³/µL", "10*6/ul": "×10⁶/µL", "10*9/l": "×10⁹/L",
    "10*12/l": "×10¹²/L", "ug/dl": "µg/dL", "ug/l": "µg/L", "ug/ml": "µg/mL", "umol/l": "µmol/L",
    "ml/min/{1.73_m2}": "mL/min/1.73 m²", "ml/min/1.73m2": "mL/min/1.73 m²", "/min": "/min",
    "mg/dl": "mg/dL", "g/dl": "g/dL", "mmol/l": "mmol/L", "meq/l": "mEq/L", "u/l": "U/L",
    "iu/l": "IU/L", "[iu]/l": "IU/L", "ng/ml": "ng/mL", "pg/ml": "pg/mL", "miu/l": "mIU/L",
    "fl": "fL", "pg": "pg", "g/l": "g/L", "mg/l": "mg/L", "ml": "mL", "l/min": "L/min",
}  # fmt: skip
_ANNOTATION = re.compile(r"\{[^}]*\}")


def strip_tag(name: str) -> str:
    """A SNOMED CT name without its semantic tag: "Fever (finding)" -> "Fever"."""
    return _TAG.sub("", name).strip()


def _capitalised(word: str, least: int) -> bool:
    """An ordinary word written with a capital ("Hypertension", "Weight-for-length"), not an
    abbreviation ("COVID-19", "DTaP", "BMI") and not shorter than ``least`` letters."""
    core = word.strip(",;:()")
    letters = core.replace("-", "")
    return (
        len(letters) >= least
        and letters.isalpha()
        and core[0].isupper()
        and core[1:].replace("-", "").islower()
    )


def sentence_case(name: str, *, title: bool = False, least: int = 4) -> str:
    """A display as a clinician writes it inside a sentence. A display in title case ("Body
    Weight", "Medication Reconciliation"; or any LOINC name, ``title=True``) has its ordinary
    capitalised words lower-cased; otherwise only its first word, when that is an ordinary
    word of ``least`` or more letters ("Hypertension" -> "hypertension"; "COVID-19", "DTaP",
    "Hep B" and later proper names kept)."""
    words = name.split(" ")
    long_words = [w for w in words if len(w.strip(",;:()").replace("-", "")) >= 4]
    if title or (len(long_words) >= 2 and all(_capitalised(w, 4) for w in long_words)):
        return " ".join(w.lower() if _capitalised(w, 3) else w for w in words)
    if words and _capitalised(words[0], least):
        return name[0].lower() + name[1:]
    return name


def concept_text(cc: Any) -> str | None:
    """A CodeableConcept's name: its ``text``, else its first coding's ``display``, else its
    first ``code``; SNOMED semantic tags stripped."""
    if not isinstance(cc, Mapping):
        return None
    if isinstance(cc.get("text"), str) and cc["text"].strip():
        return strip_tag(cc["text"]) or None
    codings = [c for c in cc.get("coding") or [] if isinstance(c, Mapping)]
    for coding in codings:
        if isinstance(coding.get("display"), str) and coding["display"].strip():
            return strip_tag(coding["display"]) or None
    for coding in codings:
        if coding.get("code"):
            return str(coding["code"])
    return None


def allergen(name: str) -> str:
    """The substance of an allergy as named in a record: "Allergy to mould" -> "mould",
    "Latex allergy" -> "latex", "Substance with penicillin structure and antibacterial
    mechanism of action (substance)" -> "penicillin"."""
    text = strip_tag(name)
    if m := _STRUCTURE.match(text):
        return m.group(1)
    text = _ALLERGY_SUFFIX.sub("", _ALLERGY_TO.sub("", text)).strip()
    return sentence_case(text) if text else name


def drug(name: str) -> str:
    """An RxNorm name as a clinician writes it: units and words in lower case, tall-man
    lettering undone ("Acetaminophen 325 MG / oxyCODONE Hydrochloride 5 MG Oral Tablet" ->
    "acetaminophen 325 mg / oxycodone hydrochloride 5 mg oral tablet"); words in capitals
    (an application number, "HR" as "hr") as written or as units."""
    words = [_RXNORM_UNITS.get(w, w) for w in name.split(" ")]
    return " ".join(w.lower() if any(ch.islower() for ch in w) else w for w in words)


def loinc_name(display: str) -> str:
    """A LOINC display shortened: a bracketed property that only repeats the unit, the method
    ("by Automated count") and the usual specimen (blood, serum or plasma) dropped; a property
    that says something ("[Percentile]", "[Partial pressure]") kept as words."""

    def bracket(m: re.Match[str]) -> str:
        inner = m.group(1).strip()
        return "" if inner.lower() in _UNIT_PROPERTIES else f" {inner.lower()}"

    text = _REPORTED.sub("", strip_tag(display))
    text = _BRACKET.sub(bracket, text)
    text = _METHOD.sub("", text)
    text = _DEFAULT_SPECIMEN.sub("", text)
    text = re.sub(r"\s+", " ", text).strip(" -,")
    return sentence_case(text, title=True) if text else display


def unit(raw: str | None) -> str:
    """A UCUM unit as written in a note: "mm[Hg]" -> "mmHg", "Cel" -> "°C", "{score}" -> ""."""
    if not raw:
        return ""
    text = str(raw).strip()
    known = _UCUM.get(text.lower())
    if known is not None:
        return known
    text = _ANNOTATION.sub("", text)
    text = re.sub(r"\[([A-Za-z]+)(?:_[a-z]+)?\]", r"\1", text)
    return text.strip()


def quantity(value: str, unit_text: str) -> str:
    """A value with its unit as written: "7.6%", "72/min", "82.3 kg", "3" (no unit)."""
    if not unit_text:
        return value
    if unit_text == "%" or unit_text.startswith("/"):
        return f"{value}{unit_text}"
    return f"{value} {unit_text}"
