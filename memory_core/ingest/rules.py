"""The offline extractor: hand-written rules over a session transcript (no model, no network).

The transcript is split into speaker turns (``Clinician:``, ``Patient:``, ``Nurse:``, ...; text
before the first label is a header and ignored unless there are no labels at all) and each turn
into sentences. Questions (a sentence ending in ``?``) are never facts. Both a patient's own
statements and a clinician's are used. Each rule reads one sentence and proposes at most a few
statements in the product's style ("Patient ..."), with that sentence as the evidence span.

What it understands: allergies (with reaction and severity; negations such as "no known drug
allergies", "denies allergies", "not allergic to latex" propose nothing), medications (taking,
started, stopped with the reason, switched from A to B, dose increased or decreased), adverse
reactions (a symptom caused by a named drug), lab values (HbA1c, eGFR, LDL, fasting glucose,
potassium, urine albumin/creatinine with value, unit and date), preferences (appointment times,
contact channel, written instructions, language) and social facts (who the patient lives with,
smoking, work pattern, family help). What it does not: see docs/ingest.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from .. import drugs
from .proposals import Candidate, Extraction

_SPEAKERS = (
    "clinician|patient|doctor|dr\\.? ?[a-z]*|nurse|pharmacist|caregiver|carer|agent|"
    "assistant|interpreter|physician|gp|np|pa|provider|daughter|son|wife|husband|partner"
)
_LABEL = re.compile(rf"^[ \t]*(?P<who>{_SPEAKERS})[ \t]*:[ \t]*", re.I | re.M)
# a sentence ends at ., ! or ? followed by a space or the end ("7.6%" stays one number)
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+(?:[.!?]+|$)", re.M)
PATIENT_SIDE = frozenset({"patient", "caregiver", "carer", "daughter", "son", "wife", "husband"})


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int
    end: int
    speaker: str  # "clinician" | "patient" | "unknown" (normalised)

    @property
    def low(self) -> str:
        return self.text.lower()


def _speaker(label: str) -> str:
    low = label.lower().strip()
    if low in PATIENT_SIDE or low == "patient":
        return "patient"
    return "clinician"


def sentences(transcript: str) -> list[Sentence]:
    """Speaker-attributed sentences with their offsets into ``transcript``."""
    labels = list(_LABEL.finditer(transcript))
    turns: list[tuple[str, int, int]] = []
    if not labels:
        turns.append(("unknown", 0, len(transcript)))
    for i, m in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(transcript)
        turns.append((_speaker(m.group("who")), m.end(), end))
    out: list[Sentence] = []
    for who, start, end in turns:
        for m in _SENTENCE.finditer(transcript, start, end):
            raw = m.group(0)
            s = m.start() + (len(raw) - len(raw.lstrip()))
            e = m.start() + len(raw.rstrip())
            if e > s and any(ch.isalnum() for ch in transcript[s:e]):
                out.append(Sentence(transcript[s:e], s, e, who))
    return out


# --- vocabularies ------------------------------------------------------------------------------
_ALLERGY = re.compile(r"\ballerg(?:y|ic|ies)\b|\banaphyla\w*")
_ALLERGY_NEG = re.compile(
    r"\bno (?:known |new |other |drug |food )*allerg|\bnkda\b|\bnka\b|"
    r"\bdenie[sd] (?:any |known |drug )*allerg|\bnot allergic\b|\bnever (?:been |had an? )?allerg|"
    r"\bno allergic reaction"
)
_REACTIONS = (
    "anaphylaxis", "anaphylactic reaction", "anaphylactic shock", "hives", "urticaria",
    "rash", "itching", "itchy rash", "swelling", "facial swelling", "throat swelling",
    "angioedema", "wheezing", "shortness of breath", "blisters", "nausea", "vomiting",
    "swell up", "swelling up", "vomit",
)  # fmt: skip
_SYMPTOMS = (
    "persistent diarrhoea", "persistent diarrhea", "diarrhoea", "diarrhea", "loose stools",
    "nausea", "vomiting", "dizziness", "dry cough", "cough", "headaches", "headache",
    "stomach upset", "upset stomach", "gi distress", "gi upset", "bloating", "cramps",
    "muscle aches", "muscle pain", "ankle swelling", "swelling", "fatigue", "constipation",
    "low blood sugars", "hypoglycaemia", "hypoglycemia", "rash", "itching", "hives",
    "heartburn", "yeast infection", "thrush", "vomit", "really tired", "tired", "tiredness",
    "swell up",
)  # fmt: skip
# how a symptom as said is written in the statement
_SYMPTOM_NAMES = {
    "vomit": "vomiting", "really tired": "fatigue", "tired": "fatigue", "tiredness": "fatigue",
    "swell up": "swelling", "diarrhea": "diarrhoea", "persistent diarrhea": "persistent diarrhoea",
}  # fmt: skip
# non-drug allergens (the drug dictionary and its supplement name drugs and drug classes)
_ALLERGENS = (
    "shellfish", "peanuts", "peanut", "tree nuts", "nuts", "eggs", "egg", "milk", "wheat",
    "soy", "fish", "bee stings", "wasp stings", "pollen", "dust mites",
)  # fmt: skip
_SEVERITY = re.compile(r"\b(severe|serious|life-threatening|mild|moderate|fairly severe)\b")
_CAUSE = re.compile(
    r"\b(gave|gives|giving|caused|causes|causing|made|makes|making|got|get|gets|getting|"
    r"broke out|break out|side effects?|because of|due to|from|on)\b"
)
_NO_PROBLEM = re.compile(
    r"\b(without (?:any )?(?:problems?|issues?|side effects?)|no (?:problems?|issues?|side "
    r"effects?)|tolerat\w+ (?:it )?well|fine on|settled|went away|resolved)\b"
)
_HEDGE = re.compile(
    r"\b(consider\w*|might|maybe|perhaps|could|would you|should we|thinking about|if you|"
    r"if it|in case|unless|not sure)\b"
)
_MED_NEG = re.compile(r"\b(not taking|never took|never taken|didn't start|did not start|not on)\b")
_STOP = re.compile(
    r"\b(stopped|stopping|stop taking|discontinued|discontinuing|quit|came off|come off|"
    r"taken off|stopped taking)\b"
)
_START = re.compile(
    r"\b(started|starting|start|begin|began|initiat\w+|put (?:you |him |her |me )?on|"
    r"prescrib\w+|adding|add)\b"
)
_SWITCH = re.compile(r"\b(switch\w*|chang\w+|mov\w+)\b[^.]*?\bfrom\b")
_UP = re.compile(r"\b(increas\w+|rais\w+|upp\w+|titrat\w+ up|bump\w* up|went up|go up)\b")
_DOWN = re.compile(
    r"\b(decreas\w+|reduc\w+|lower\w*|cut\w* (?:it |them )?(?:back|down)|went down|halv\w+)\b"
)
_TAKE = re.compile(
    r"\b(take|takes|taking|took|on|stays? at|continu\w+|remain\w* on|using|use|inject\w*)\b"
)
_DOSE = re.compile(
    r"(\d+(?:\.\d+)?)\s?(mg|mcg|micrograms?|g|units?|iu|ml)\b(?:/(?:day|d|week))?", re.I
)
_FREQ = re.compile(
    r"\b(once daily|twice daily|three times (?:a|per) day|once a day|twice a day|every day|"
    r"daily|nightly|at night|at bedtime|every night|each night|every evening|every morning|"
    r"in the morning|with dinner|with meals|"
    r"with breakfast|once weekly|once a week|weekly|as needed|now and then|bid|tid|qd)\b",
    re.I,
)
_FORM = re.compile(r"\s*(er|xr|xl|sr|ir|extended[- ]release)\b", re.I)
_FORM_BEFORE = re.compile(r"(extended[- ]release|immediate[- ]release)\s+$", re.I)
_REASON = re.compile(
    r"\b(?:because of|because|due to|since|as it|as they)\b\s*"
    r"(?P<why>(?:(?!,\s*(?:and|but|so)\b)[^.;!?])+)"
)

_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTH_RE = "|".join(_MONTHS)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH_RE})(?:,? (\d{{4}}))?\b", re.I)
_MONTH_DAY = re.compile(rf"\b({_MONTH_RE}) (\d{{1,2}})(?:st|nd|rd|th)?(?:,? (\d{{4}}))?\b", re.I)
_IN_MONTH = re.compile(rf"\bin ({_MONTH_RE})(?: (\d{{4}}))?\b", re.I)

# (normalised analyte, label in the sentence, pattern, default unit)
_ANALYTES = (
    ("hba1c", "HbA1c", r"\b(?:hba1c|a1c|ha?emoglobin a1c)\b", "%"),
    ("egfr", "eGFR", r"\begfr\b", "mL/min/1.73m2"),
    ("ldl", "LDL cholesterol", r"\bldl(?: cholesterol)?\b", "mg/dL"),
    ("glucose", "fasting glucose", r"\bfasting (?:blood )?(?:glucose|sugar)\b", "mg/dL"),
    ("potassium", "potassium", r"\bpotassium\b", "mmol/L"),
    (
        "uacr",
        "urine albumin/creatinine ratio",
        r"\b(?:uacr|urine albumin(?:[- ]to[- ]|/| )creatinine(?: ratio)?|albumin[- ]creatinine "
        r"ratio)\b",
        "mg/g",
    ),
)
_VALUE = re.compile(
    r"[^0-9?]{0,40}?(?<![\d-])(\d+(?:\.\d+)?)(?![\d-])\s*"
    r"(%|mg/dl|mmol/l|ml/min(?:/1\.73\s?m2|/1\.73m²)?|mg/g|mg/mmol)?",
    re.I,
)

_APPT = re.compile(
    r"\b(morning|afternoon|evening|weekend|early|late|lunchtime)s?\b[^.?!]{0,40}?\bappointments?\b"
    r"|\bappointments?\b[^.?!]{0,40}?\b(morning|afternoon|evening|weekend|lunchtime)s?\b"
)
_PREFER = re.compile(
    r"\b(prefer\w*|rather|better|best|suit\w*|work\w* for me|works? best|like|easier|easiest|"
    r"want)\b"
)
_NOW = re.compile(r"\b(now|instead|these days|anymore|any more|from now on|switch)\b")
_CHANNELS = (
    (r"\b(?:text messages?|texts?|sms)\b|\btext me\b", "by text message"),
    (r"\b(?:e-?mails?)\b|\be-?mail me\b", "by email"),
    (r"\b(?:phone calls?|calls?|call me|phone me|ring me)\b", "by phone"),
    (r"\b(?:the portal|patient portal)\b", "through the patient portal"),
    (r"\b(?:letters?|post)\b", "by letter"),
)
_LANGS = (
    "spanish", "portuguese", "polish", "french", "arabic", "mandarin", "cantonese",
    "vietnamese", "tagalog", "russian", "hindi", "urdu", "bengali", "somali", "german",
    "italian", "korean", "japanese", "turkish", "english",
)  # fmt: skip
_LANG = re.compile(rf"\b({'|'.join(_LANGS)})\b")
_LANG_CUE = re.compile(
    r"\b(first language|native language|mother tongue|prefer\w*|speak\w*|interpreter)\b"
)
_LIVES = re.compile(
    r"\bli(?:ve|ves|ving) (alone|on (?:my|his|her) own|by (?:my|him|her)self|with (?:my |his |her "
    r"|a )?(wife|husband|partner|daughter|son|parents|mother|father|family|children|kids|sister|"
    r"brother|roommate|grandchildren))"
)
_SMOKE = re.compile(
    r"\b(?:(quit|stopped|gave up) smoking(?: (?:in|back in) (\d{4}))?|(don't|do not|never|doesn't|"
    r"does not) smoke|(smokes?|smoking) (?:about )?(\d+|a pack|half a pack))"
)
_WORK = re.compile(
    r"\bwork(?:s|ing)? (night shifts?|nights|shifts|from home|full[- ]time|part[- ]time|as an? "
    r"[a-z]+(?: [a-z]+)?)\b"
)
_FAMILY = re.compile(
    r"\bmy (daughter|son|wife|husband|partner|carer|caregiver|neighbou?r|sister|brother) "
    r"((?:helps|visits|manages|drives|checks|cooks|sorts)\b[^.,;!?]*)"
)
_FIRST_TO_THIRD = (
    (r"\bme\b", "them"),
    (r"\bmy\b", "their"),
    (r"\bi\b", "they"),
    (r"\bmine\b", "theirs"),
)


def _third_person(text: str) -> str:
    for pat, rep in _FIRST_TO_THIRD:
        text = re.sub(pat, rep, text, flags=re.I)
    return text


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,;:-—")
    return re.sub(r"^(the|my|your|his|her|their|a|an|some)\s+", "", text, flags=re.I)


@dataclass(frozen=True)
class _Drug:
    mention: drugs.DrugMention
    phrase: str  # as it goes into the sentence ("metformin ER", "metformin (Glucophage)")
    end: int  # offset in the sentence after the phrase (formulation included)
    start: int


def _drugs_in(s: Sentence) -> list[_Drug]:
    out: list[_Drug] = []
    for m in drugs.resolve(s.text):
        surface = m.text.lower()
        if surface in m.name and m.origin == "dictionary":
            phrase = m.name  # "glargine" -> "insulin glargine"
        elif surface.startswith(m.name[:5]) or m.origin == "supplement":
            phrase = re.sub(r"\s+drugs$", " drug", surface)
        else:
            phrase = f"{m.name} ({m.text})"
        end = m.end
        form = _FORM.match(s.text, m.end)
        before = _FORM_BEFORE.search(s.text[: m.start])
        if form:
            tag = form.group(1)
            phrase += " ER" if tag.lower().startswith("extended") else f" {tag.upper()}"
            end = form.end()
        elif before and before.group(1).lower().startswith("extended"):
            phrase += " ER"
        out.append(_Drug(m, phrase, end, m.start))
    return out


def _dose_after(s: Sentence, pos: int, limit: int = 45) -> str:
    m = _DOSE.search(s.text, pos, min(len(s.text), pos + limit))
    if not m:
        return ""
    unit = m.group(2).lower()
    unit = {"unit": "units", "micrograms": "mcg", "microgram": "mcg", "iu": "units"}.get(unit, unit)
    return f"{m.group(1)} {unit}" if unit == "units" else f"{m.group(1)}{unit}"


def _freq_after(s: Sentence, pos: int) -> str:
    m = _FREQ.search(s.text, pos)
    return m.group(1).lower() if m else ""


def _date_in(text: str, now: datetime) -> tuple[datetime, str] | None:
    """A date named in ``text``: (start of the period in UTC, as the sentence should say it)."""
    if m := _ISO_DATE.search(text):
        try:
            d = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
        except ValueError:
            return None
        return d, f"on {m.group(0)}"
    for pat, day_first in ((_DAY_MONTH, True), (_MONTH_DAY, False)):
        if m := pat.search(text):
            day, month = (m.group(1), m.group(2)) if day_first else (m.group(2), m.group(1))
            mi = _MONTHS.index(month.lower()) + 1
            year = int(m.group(3)) if m.group(3) else _year_for(mi, now)
            try:
                d = datetime(year, mi, int(day), tzinfo=UTC)
            except ValueError:
                return None
            return d, f"on {d:%Y-%m-%d}"
    if m := _IN_MONTH.search(text):
        mi = _MONTHS.index(m.group(1).lower()) + 1
        year = int(m.group(2)) if m.group(2) else _year_for(mi, now)
        d = datetime(year, mi, 1, tzinfo=UTC)
        return d, f"in {_MONTHS[mi - 1].title()} {year}"
    if re.search(r"\b(today|this morning)\b", text, re.I):
        d = datetime(now.year, now.month, now.day, tzinfo=UTC)
        return d, f"on {d:%Y-%m-%d}"
    return None


def _year_for(month: int, now: datetime) -> int:
    """A month named without a year is the latest one not after ``now``."""
    return now.year if month <= now.month else now.year - 1


def _fmt_value(value: str, unit: str) -> str:
    return f"{value}%" if unit == "%" else f"{value} {unit}"


class RuleExtractor:
    """Offline, deterministic extraction (see the module docstring for what it understands)."""

    method = "rule"

    def extract(self, patient_id: str, transcript: str, *, now: datetime) -> Extraction:
        out = Extraction(method=self.method)
        allergy_topic = False
        seen: set[tuple[str, str]] = set()
        for s in sentences(transcript):
            if s.speaker == "clinician":
                allergy_topic = bool(_ALLERGY.search(s.low) or "reaction" in s.low)
            if s.text.rstrip().endswith("?"):
                continue  # a question is not a fact
            for mtype, content, conf, created in self._sentence(s, allergy_topic, now):
                key = (mtype, content.lower())
                if key in seen:
                    continue
                seen.add(key)
                if s.speaker == "unknown":
                    conf -= 0.1
                out.candidates.append(
                    Candidate(
                        content=content,
                        memory_type=mtype,
                        start=s.start,
                        end=s.end,
                        confidence=round(max(0.1, min(conf, 0.99)), 2),
                        created_at=created,
                    )
                )
        return out

    # each rule yields (memory_type, content, confidence, created_at or None)
    def _sentence(
        self, s: Sentence, allergy_topic: bool, now: datetime
    ) -> Iterator[tuple[str, str, float, datetime | None]]:
        found = _drugs_in(s)
        allergy = list(self._allergy(s, found, allergy_topic))
        yield from allergy
        if not allergy:
            yield from self._adverse(s, found)
            yield from self._medication(s, found)
        yield from self._lab(s, now)
        yield from self._vitals(s, now)
        yield from self._preference(s)
        yield from self._social(s)

    def _allergy(
        self, s: Sentence, found: list[_Drug], topic: bool
    ) -> Iterator[tuple[str, str, float, datetime | None]]:
        low = s.low
        if _ALLERGY_NEG.search(low):
            return
        explicit = bool(_ALLERGY.search(low))
        reaction = next((r for r in _REACTIONS if re.search(rf"\b{r}\b", low)), None)
        allergens = [a for a in _ALLERGENS if re.search(rf"\b{a}\b", low)][:1]
        subjects = bool(found or allergens)
        by_topic = topic and reaction and subjects and (_CAUSE.search(low) or allergens)
        if not explicit and not by_topic:
            return
        if _NO_PROBLEM.search(low) or re.match(r"(no|none|never|not)\b", low):
            return
        names: list[str] = [d.phrase for d in found] + allergens
        if not names:
            m = re.search(
                r"\ballergic to (?:the |a )?([a-z][a-z -]{2,30}?)\b(?:[,.;—-]|$| and)", low
            )
            if not m:
                return
            names = [m.group(1).strip()]
        if reaction and reaction.startswith("anaphyla"):
            reaction = "anaphylaxis"
        reaction = _SYMPTOM_NAMES.get(reaction or "", reaction)
        sev = _SEVERITY.search(low)
        severity = sev.group(1).replace("fairly ", "") if sev else None
        if reaction == "anaphylaxis":
            severity = "severe"
        for name in names:
            text = f"Patient has a {name} allergy"
            if reaction:
                text += f" causing {reaction}"
            if severity:
                text += f" ({severity})"
            yield "allergy", text, 0.9 if explicit else 0.75, None

    def _adverse(
        self, s: Sentence, found: list[_Drug]
    ) -> Iterator[tuple[str, str, float, datetime | None]]:
        low = s.low
        if not found or _NO_PROBLEM.search(low) or _HEDGE.search(low):
            return
        symptom = next((x for x in _SYMPTOMS if re.search(rf"\b{re.escape(x)}\b", low)), None)
        if symptom is None or not _CAUSE.search(low):
            return
        if re.search(rf"\b(no|not|without|never)\b[^.]{{0,20}}\b{re.escape(symptom)}\b", low):
            return
        sev = _SEVERITY.search(low)
        name = _SYMPTOM_NAMES.get(symptom, symptom)
        what = f"{sev.group(1).replace('fairly ', '')} {name}" if sev else name
        symptom_at = low.index(symptom)
        # the drug the symptom is about: the last named before it, else the first after
        before = [d for d in found if d.start < symptom_at]
        drug = before[-1] if before else found[0]
        if _SWITCH.search(low) and len(found) >= 2:
            drug = found[0]  # "switched from A to B because of the cough on A"
        yield "adverse_reaction", f"Patient reports {what} on {drug.phrase}", 0.8, None

    def _medication(
        self, s: Sentence, found: list[_Drug]
    ) -> Iterator[tuple[str, str, float, datetime | None]]:
        low = s.low
        if not found or _MED_NEG.search(low) or _HEDGE.search(low):
            return
        conf = 0.9 if s.speaker == "clinician" else 0.85
        if _SWITCH.search(low) and len(found) >= 2:
            a, b = found[0], found[1]
            text = f"Patient switched from {a.phrase} to {b.phrase}"
            dose = _dose_after(s, b.end)
            freq = _freq_after(s, b.end)
            text += "".join(f" {x}" for x in (dose, freq) if x)
            yield "medication", text, conf, None
            return
        for d in found:
            window = low[max(0, d.start - 40) : d.start]
            after = low[d.end : d.end + 30]
            later = low[d.end : d.end + 60]  # "the metoprolol ..., so my GP cut it down to 25 mg"
            dose = _dose_after(s, d.end)
            freq = _freq_after(s, d.end)
            details = "".join(f" {x}" for x in (dose, freq) if x)
            if _STOP.search(window):
                text = f"Patient stopped {d.phrase}"
                why = _REASON.search(s.text, d.end)
                if why:
                    reason = _clean(why.group("why"))
                    text += f" because of {_third_person(reason)}"
                yield "medication", text, conf, None
            elif _UP.search(window) or _UP.search(after) or _DOWN.search(window + " " + later):
                to = re.search(
                    r"\bto\s+(\d+(?:\.\d+)?\s?(?:mg|mcg|units?|g|ml)\b)", s.text[d.end :]
                )
                verb = "increased" if (_UP.search(window) or _UP.search(after)) else "decreased"
                text = f"Patient's {d.phrase} dose {verb}"
                if to:
                    target = _dose_after(s, d.end + to.start(1))
                    text += f" to {target}"
                    freq = _freq_after(s, d.end + to.end())
                    text += f" {freq}" if freq else ""
                yield "medication", text, conf, None
            elif _START.search(window):
                yield "medication", f"Patient started {d.phrase}{details}", conf, None
            elif (_TAKE.search(window) or re.match(r"\s*(stays|remains|continues) at", after)) and (
                dose or freq
            ):
                yield "medication", f"Patient takes {d.phrase}{details}", conf - 0.05, None

    def _lab(self, s: Sentence, now: datetime) -> Iterator[tuple[str, str, float, datetime | None]]:
        for _key, label, pattern, unit in _ANALYTES:
            m = re.search(pattern, s.low)
            if not m:
                continue
            val = _VALUE.match(s.text, m.end())
            if not val:
                continue
            shown_unit = unit
            if val.group(2):
                given = val.group(2)
                shown_unit = (
                    "%" if given == "%" else given.replace("dl", "dL").replace("mmol/l", "mmol/L")
                )
            when = _date_in(s.text, now)
            text = f"Patient's {label} was {_fmt_value(val.group(1), shown_unit)}"
            created = None
            if when is not None:
                text += f" {when[1]}"
                created = when[0] if when[0] <= now else None
            yield "lab_result", text, 0.9 if s.speaker == "clinician" else 0.8, created

    def _vitals(
        self, s: Sentence, now: datetime
    ) -> Iterator[tuple[str, str, float, datetime | None]]:
        m = re.search(
            r"\b(?:blood pressure|bp)\b\D{0,25}?(\d{2,3})\s*(?:/|over)\s*(\d{2,3})\b", s.low
        )
        if m:
            when = _date_in(s.text, now)
            text = f"Patient's blood pressure was {m.group(1)}/{m.group(2)} mmHg"
            yield "observation", text + (f" {when[1]}" if when else ""), 0.85, None

    def _preference(self, s: Sentence) -> Iterator[tuple[str, str, float, datetime | None]]:
        low = s.low
        if (m := _APPT.search(low)) and _PREFER.search(low):
            when = m.group(1) or m.group(2)
            now_word = "now " if _NOW.search(low) else ""
            yield "preference", f"Patient {now_word}prefers {when} appointments", 0.85, None
        if _PREFER.search(low) or re.search(r"\bplease (?:text|e-?mail|call|phone|write)", low):
            hits = [(m.start(), label) for pat, label in _CHANNELS if (m := re.search(pat, low))]
            if hits and not re.search(r"\bappointments?\b", low[: min(h[0] for h in hits)][-15:]):
                hits.sort()
                # "prefer texts to calls": the first named channel is the preferred one
                yield "preference", f"Patient prefers to be contacted {hits[0][1]}", 0.8, None
        written = re.search(r"\bwritten instructions\b|\bwrite (?:it|things|them) down\b", low)
        if written and (_PREFER.search(low) or "please" in low):
            yield "preference", "Patient prefers written instructions", 0.8, None
        if (lang := _LANG.search(low)) and _LANG_CUE.search(low):
            name = lang.group(1).title()
            if "interpreter" in low:
                yield "preference", f"Patient needs a {name} interpreter", 0.85, None
            else:
                yield "preference", f"Patient prefers to communicate in {name}", 0.85, None

    def _social(self, s: Sentence) -> Iterator[tuple[str, str, float, datetime | None]]:
        low = s.low
        if m := _LIVES.search(low):
            if m.group(2):
                yield "social", f"Patient lives with their {m.group(2)}", 0.85, None
            else:
                yield "social", "Patient lives alone", 0.85, None
        if m := _SMOKE.search(low):
            if m.group(1):
                year = f" in {m.group(2)}" if m.group(2) else ""
                yield "social", f"Patient quit smoking{year}", 0.85, None
            elif m.group(3):
                yield "social", "Patient does not smoke", 0.85, None
            else:
                yield "social", "Patient smokes", 0.75, None
        if m := _WORK.search(low):
            yield "social", f"Patient works {m.group(1)}", 0.8, None
        if m := _FAMILY.search(low):
            rest = _third_person(_clean(m.group(2)))
            yield "social", f"Patient's {m.group(1)} {rest}", 0.75, None
