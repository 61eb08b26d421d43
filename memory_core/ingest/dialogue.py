"""A session transcript as a dialogue: who speaks, what they answer, and who a sentence is
about (pure).

A transcript is split into speaker turns at labels such as ``Clinician:``, ``Dr Osei:``,
``Nurse:``, ``Pharmacist:``, ``Patient:``, ``Caller:``, ``User:``, ``Assistant:``,
``Daughter:``, ``Maria (daughter):``; a label is a speaker only when one of its words says who
speaks (a ``Date:`` line is not a speaker), or a given name said on two lines or more: the
patient, unless a label says "Patient" -- then the clinician where they open the
conversation, else a relative. Text before the first label is the header: a
``Date:`` line there is the session's date. Patients, their relatives and carers and their
interpreter speak for the patient (a relative's "me" is the relative); clinicians,
pharmacists and assistants ask.

Who a sentence is about: another patient's id, a person named with a title other than the first
one the conversation names (the patient: clinicians greet or ask after their patient first), or
the patient's relatives as the subject ("my husband has diabetes"; a daughter's "my mum" is the
patient) make a sentence about someone else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING

from ..facts.assertion import PERSON_PRONOUNS
from ..facts.lexicon import lexicon

if TYPE_CHECKING:
    from ..facts.lexicon import Analyte
    from .dates import DateSpan
    from .sentence import Drug, Finding, Named

# --- speakers ----------------------------------------------------------------------------------
#: Who speaks, by a word of the label: the patient themself, someone speaking for the patient
#: (their relation is kept: a daughter's "me" is the daughter), or a clinician.
PATIENT_WORDS = frozenset(
    {"patient", "pt", "user", "caller", "client", "customer", "resident", "member", "me"}
)
PROXY_WORDS = frozenset(
    {
        "mum", "mom", "mother", "dad", "father", "daughter", "son", "wife", "husband", "partner",
        "carer", "caregiver", "worker", "aide", "keyworker", "parent", "guardian", "interpreter",
        "relative", "sister",
        "brother", "grandson", "granddaughter", "niece", "nephew", "friend", "family", "spouse",
    }
)  # fmt: skip
CLINICIAN_WORDS = frozenset(
    {
        "clinician", "doctor", "dr", "physician", "gp", "nurse", "np", "pa", "provider",
        "pharmacist", "assistant", "ai", "bot", "chatbot", "agent", "midwife", "surgeon",
        "therapist", "dietitian", "dietician", "advisor", "adviser", "counsellor", "counselor",
        "receptionist", "consultant", "registrar", "specialist", "paramedic", "hcp",
        "coordinator", "physio", "practitioner", "clinic", "team", "ward", "staff", "prescriber",
        "reception", "admin", "dentist", "optometrist", "orthoptist", "hygienist", "phlebotomist",
        "rn", "rgn", "hca", "ot", "matron", "triage", "helpline", "surgery", "practice",
        "pharmacy", "dispenser",
    }
)  # fmt: skip
#: endings of a word that names a clinical role ("paediatrician", "radiologist", "podiatrist",
#: "sonographer")
CLINICIAN_ENDINGS = ("ologist", "iatrist", "ician", "grapher")
#: two-word labels of a professional whose last word alone names a carer ("worker")
CLINICIAN_PHRASES = frozenset(
    {"link worker", "social worker", "case worker", "health worker", "outreach worker",
     "welfare worker", "community worker", "care navigator"}
)  # fmt: skip
_LABEL = re.compile(
    r"^[ \t]*(?:\[(?P<stamp>[^\]\n]{4,40})\][ \t]*)?"
    r"(?P<who>[A-Za-z][\w.'’-]*(?:[ \t]+[A-Za-z][\w.'’-]*){0,2})"
    r"(?:[ \t]*\((?P<role>[^()\n:]{1,30})\))?[ \t]*:(?=[ \t]|$)",
    re.M,
)
# a sentence ends at ., ! or ? followed by a space or the end ("7.6%" stays one number); a
# spoken pause ("...") before a number goes on: the value of what was just named ("Blood
# pressure now... 132 over 76")
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?])|\.{2,}[ \t]+(?=\d))+(?:[.!?]+|$)", re.M)


#: a note of how a turn was said, at its start: "(via interpreter)", "(laughs)", "[inaudible]"
_STAGE_NOTE = re.compile(r"[ \t]*[(\[][^()\[\]\n]{1,40}[)\]][ \t]*")

_TITLE = re.compile(r"^(?:mr|mrs|ms|miss|mx)\.?\s+[A-Z]", re.I)


def _role(who: str, role: str | None) -> tuple[str, str] | None:
    """``("patient" | "clinician", relation)`` of a label, or None when it names no speaker.
    A label that is a name with a title other than a doctor's ("Mr Osei") is the patient's
    side (a clinician is labelled by role or as Dr)."""
    for text in (role or "", who):
        words = re.findall(r"[a-z]+", text.lower())
        if " ".join(words[-2:]) in CLINICIAN_PHRASES:
            return "clinician", ""  # "Link Worker": the service's, not a carer
        rel = next((w for w in words if w in PROXY_WORDS), "")
        if rel:
            return "patient", rel
        if any(w in CLINICIAN_WORDS or w.endswith(CLINICIAN_ENDINGS) for w in words):
            return "clinician", ""
        if any(w in PATIENT_WORDS for w in words):
            return "patient", ""
    if _TITLE.match(who.strip()) and not role:
        return "patient", "relative"  # split() tells the patient from a relative by name
    return None


_NOT_SPEAKERS = frozenset(
    {"Date", "Session", "Note", "Notes", "Time", "Re", "Subject", "Plan", "Summary", "Setting",
     "Context", "Location", "Duration", "Reason", "Attendees", "Present", "Topic", "Transcript"}
)  # fmt: skip


def _name_labels(transcript: str) -> dict[str, int]:
    """Labels that are a capitalised name and start two lines or more ("Callum:"), in order
    of their first line."""
    seen: dict[str, int] = {}
    for m in _LABEL.finditer(transcript):
        who = m.group("who")
        if m.group("role") or _role(who, None) is not None or who in _NOT_SPEAKERS:
            continue
        if re.fullmatch(r"[A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+)?", who):
            seen[who] = seen.get(who, 0) + 1
    return {w: n for w, n in seen.items() if n >= 2}


#: a greeting and the name it greets ("Hi Aisha", "Good morning, Tom")
_GREETING = re.compile(
    r"\b(?i:hi|hello|hiya|morning|good morning|good afternoon|afternoon|good evening|welcome)"
    r",?\s+([A-Z][a-z'’-]+)\b"
)


def _greeted(transcript: str, found: list[re.Match[str]], named: dict[str, int]) -> str:
    """The name-labelled speaker the first clinician's turn greets, or ""."""
    for i, m in enumerate(found):
        role = _role(m.group("who"), m.group("role"))
        if role is None or role[0] != "clinician":
            continue
        end = found[i + 1].start() if i + 1 < len(found) else len(transcript)
        g = _GREETING.search(transcript, m.end(), end)
        return g.group(1) if g and g.group(1) in named else ""
    return ""


def _titled(text: str) -> str:
    m = TITLED.search(text)
    return f"{m.group(1).lower().rstrip('.')} {m.group(2)}" if m else ""


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int
    end: int
    speaker: str  # "clinician" | "patient" | "unknown" (the patient's side includes proxies)
    turn: int = 0
    relation: str = ""  # who speaks for the patient ("daughter", "interpreter"); "" otherwise
    sent: str = ""  # the message's send date (a portal thread's "[2026-10-14 09:12]"), ISO
    label: str = ""  # the speaker's label as written ("Maria", "Dr Osei", "Daughter")
    listed: bool = False  # an item of a summing-up's list ("So to recap: ..., physio referral")

    @property
    def low(self) -> str:
        return self.text.lower()

    @property
    def question(self) -> bool:
        return self.text.rstrip().endswith("?")


#: a line that is only a bracketed header ("[Message from patient, sent Mon 12 Oct 2026 21:47]")
_HEADER_LINE = re.compile(r"^[ \t]*\[(?P<head>[^\]\n]{4,160})\][ \t]*\n", re.M)
#: a date written in full in a header: "12 Oct 2026", "Oct 12, 2026", "2026-10-12"
_FULL_DATE = re.compile(
    r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?P<m>[A-Za-z]{3,9})\.?,?\s+(?P<y>\d{4})\b"
    r"|\b(?P<m2>[A-Za-z]{3,9})\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{4})\b"
    r"|\b(?P<iso>\d{4}-\d{2}-\d{2})\b"
)


def _message_headers(transcript: str) -> dict[int, tuple[int, str]]:
    """Header lines that date the message under them, by where that message's label starts:
    (where the header starts, the date as YYYY-MM-DD)."""
    out: dict[int, tuple[int, str]] = {}
    for h in _HEADER_LINE.finditer(transcript):
        iso = date_written(h.group("head"))
        if iso:
            out[h.end()] = (h.start(), iso)
    return out


def date_written(head: str) -> str:
    """The date a header or a message's stamp writes in full ("Mon 12 Oct 2026 21:47", "Oct
    12, 2026", "2026-10-12 09:10"), as YYYY-MM-DD; "" where it writes none."""
    m = _FULL_DATE.search(head)
    if m is None:
        return ""
    if m.group("iso"):
        iso = m.group("iso")
    else:
        day, mon, year = (m.group("d"), m.group("m"), m.group("y")) if m.group("d") else (
            m.group("d2"), m.group("m2"), m.group("y2"))  # fmt: skip
        month = lexicon().months.get(mon.lower())  # the dates reader's month names
        if month is None:
            return ""
        iso = f"{year}-{month:02d}-{int(day):02d}"
    try:
        datetime.fromisoformat(iso)
    except ValueError:
        return ""
    return iso


def split(transcript: str) -> tuple[str, list[Sentence]]:
    """The header (text before the first speaker) and the speaker-attributed sentences."""
    labels = []
    patient = ""  # the patient as titled: the first titled name said (a greeting) or labelled
    named = _name_labels(transcript)
    found = list(_LABEL.finditer(transcript))
    # the patient among speakers labelled by a given name: the one the clinician's opening
    # greets ("Hi Aisha, I'm Beth ..."), else the first to speak
    first_name = _greeted(transcript, found, named) or next(iter(named), "")
    # where a label says "Patient", a speaker labelled by a given name is someone else: the
    # clinician when they open the conversation (they greet), else a relative
    labelled = any(_role(m.group("who"), m.group("role")) == ("patient", "") for m in found)
    opener = next(
        (m.group("who") for m in found if m.group("who") in named or _role(m.group("who"), None)),
        "",
    )
    for m in found:
        role = _role(m.group("who"), m.group("role"))
        if role is None and m.group("who") in named and labelled:
            role = ("clinician", "") if m.group("who") == opener else ("patient", "relative")
        elif role is None and m.group("who") in named:
            # a speaker labelled by a given name only: the first such is the patient
            role = ("patient", "" if m.group("who") == first_name else "relative")
        if role is None:
            continue
        if role == ("patient", "relative"):
            said = _titled(transcript[: m.start()]) or _titled(m.group("who"))
            patient = patient or said
            # a titled name is the patient only where no label says "Patient" (there, the
            # greeted "Mr Coleman" beside "Patient:" is the one who came with her)
            if patient and not labelled and _titled(m.group("who")) == patient:
                role = ("patient", "")
        labels.append((m, role))
    turns: list[tuple[str, str, int, int, str, str]] = []
    if not labels:
        turns.append(("unknown", "", 0, len(transcript), "", ""))
        header = ""
    else:
        header = transcript[: labels[0][0].start()]
    heads = _message_headers(transcript)
    carried = ""  # a header dates every turn under it until the next header
    for i, (m, (who, rel)) in enumerate(labels):
        end = labels[i + 1][0].start() if i + 1 < len(labels) else len(transcript)
        nxt = heads.get(end)  # the next message's header line is no words of this one
        end = nxt[0] if nxt else end
        start = m.end()
        note = _STAGE_NOTE.match(transcript, start, end)  # "(via interpreter)", "(laughs)"
        own = heads.get(m.start())  # "[Message from patient, sent Mon 12 Oct 2026 21:47]"
        carried = own[1] if own else carried
        stamp = date_written(m.group("stamp") or "") or carried
        turns.append((who, rel, note.end() if note else start, end, stamp,
                      m.group("who")))  # fmt: skip
    out: list[Sentence] = []
    for t, (who, rel, start, end, stamp, label) in enumerate(turns):
        for m in _SENTENCE.finditer(transcript, start, end):
            raw = m.group(0)
            s = m.start() + (len(raw) - len(raw.lstrip()))
            e = m.start() + len(raw.rstrip())
            if e > s and any(ch.isalnum() for ch in transcript[s:e]):
                out.append(Sentence(transcript[s:e], s, e, who, t, rel, stamp, label))
    return header, out


def moment(s: Sentence, session: datetime, latest: datetime | None = None) -> datetime:
    """The moment a sentence's relative dates are read against: its message's send date (a
    portal thread's stamp, on or before ``latest``: the extraction's moment -- a thread whose
    header gives the day it began has later messages -- else the session's), else the
    session's."""
    if s.sent:
        try:
            at = datetime.fromisoformat(s.sent).replace(hour=12, tzinfo=UTC)
        except ValueError:
            return session
        if at.date() <= (latest or session).date():
            return at
    return session


def sentences(transcript: str) -> list[Sentence]:
    """Speaker-attributed sentences with their offsets into ``transcript``."""
    return split(transcript)[1]


# --- answers ---------------------------------------------------------------------------------
#: an answer that confirms the question it answers
AFFIRM = re.compile(
    r"^(?:yes|yeah|yep|yup|yes please|correct|that'?s right|that is right|right|exactly|"
    r"indeed|sure|mm-?hmm|uh-huh|s[ií]|absolutely|i am|i do|she is|he is|she does|he does|"
    r"still|that'?s correct)\b",
    re.I,
)
#: a patient's question that asks for something ("Could you email me the letter?")
REQUEST = re.compile(
    r"^(?:[\w']+\s+){0,3}?(?:could|can|would|will) (?:you|u)\b|^please\b|\b(?:please|pls|plz)\b"
    r"|^[^?]*,\s*(?:could|can|would|will) (?:you|u)\s*\?\s*$",  # "Text me first, would you?"
    re.I,
)
#: a request to record what the patient states ("Please can you put on my record that I'm
#: allergic to sticky plasters?", "Can you note that I've stopped the omeprazole?"): the
#: statement, said
RECORD_THAT = re.compile(
    r"^(?:[\w',]+\s+){0,4}?(?:could|can|would|will) (?:you|u)\s+(?:please\s+)?(?:put|add|note|"
    r"record|write|make a note|update)\b[^?]*?\bthat\s+"
    r"(?P<said>(?:i|i'm|i am|i've|i have|my)\b[^?]+)\?\s*$",
    re.I,
)
#: a statement with a question tagged on ("I'm still on X, is that okay?")
DECLARED = re.compile(
    r"^((?:i|i'm|i am|i've|i have|my|she|he|she's|he's|we)\b.*),\s*[^,]*\?\s*$", re.I
)
#: a clinician's act said before a question ("I'll refer her to the dietitian, and in the
#: meantime can you keep a food chart?"): the act is said, only the rest asks
DONE_THEN_ASKED = re.compile(
    r"^((?:i'll|i will|i've|i have|we'll|we will|we've|i'm going to|we're going to)\b[^?]*?),"
    r"\s*(?:and\s+)?[^,?]*\?\s*$",
    re.I,
)


# --- about whom ------------------------------------------------------------------------------
#: a patient id as the product writes them (the demo's and the scale runs' shapes)
PATIENT_ID = re.compile(r"\b[A-Z]{2}-\d{4,6}\b")
TITLED = re.compile(r"\b(Mr|Mrs|Ms|Miss|Mx)\.?\s+([A-Z][a-z'’-]+)")
_PRONOUN_OF_TITLE = {"mr": "he", "mrs": "she", "ms": "she", "miss": "she"}
#: the patient, as the relative or carer who speaks for them names them
_PATIENT_AS = {
    "daughter": ("mum", "mom", "mother", "dad", "father"),
    "son": ("mum", "mom", "mother", "dad", "father"),
    "wife": ("husband", "partner"),
    "husband": ("wife", "partner"),
    "partner": ("husband", "wife", "partner"),
    "mum": ("son", "daughter", "child", "boy", "girl"),
    "mom": ("son", "daughter", "child", "boy", "girl"),
    "mother": ("son", "daughter", "child", "boy", "girl"),
    "dad": ("son", "daughter", "child", "boy", "girl"),
    "father": ("son", "daughter", "child", "boy", "girl"),
    "parent": ("son", "daughter", "child", "boy", "girl"),
}
_RELATIVES = (
    "husband|wife|partner|mother|father|mum|mom|dad|son|daughter|sister|brother|grandmother|"
    "grandfather|aunt|uncle|cousin|neighbou?r|friend|child|boy|girl|niece|nephew|flatmate"
)


@cache
def _relative_subject() -> re.Pattern[str]:
    """A sentence whose subject is a relative: after the words that may open an answer
    ("Yeah, my mum ..."), perhaps an aside between dashes ("Also -- difficult one -- my
    sister"), a possessive and perhaps a describing word ("my younger sister")."""
    from .statements import cues

    c = cues()
    leads = "|".join(map(re.escape, c.leads))
    describers = "|".join(map(re.escape, sorted(c.describers)))
    people = "|".join(sorted(set(_RELATIVES.split("|")) | c.relatives, key=lambda w: (-len(w), w)))
    aside = r"(?:(?<=[—–\-] )[^—–\-.?!]{1,40}? [—–\-]{1,2} +)?"
    return re.compile(
        rf"^(?:(?:{leads})[,—–\- ]+)*{aside}(?:(?:my|his|her|their|your|our) "
        rf"(?:(?:{describers}) )?({people})|(?P<named>{'|'.join(sorted(KIN_NAMES))}))\b"
    )


#: the relatives a speaker names as a name, without "my" ("Mum had angina"): in a clinician's
#: mouth the parent who came with a child, so read as a relative only when another speaks
KIN_NAMES = frozenset(
    {"mum", "mom", "mam", "mummy", "mommy", "dad", "daddy", "nan", "nana", "nanna", "gran",
     "granny", "grandma", "grandad", "granddad", "grandpa"}
)  # fmt: skip


_PRONOUN_SUBJECT = re.compile(
    r"^(?:(?:and|but|so|also|well|oh|now|then)[, ]+)*(?:she|he|she's|he's|her|his)\b"
    r"(?! (?:own|mum|mom|dad|mother|father)\b)"
)


#: the one spoken to (a person spoken of: the facts reader's ``PERSON_PRONOUNS``)
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|yours|yourself)\b")
#: a third person's own, set against the patient's ("his own asthma review")
_OWN = re.compile(r"\b(?:his|her|their) own\b")

#: what another person did to the speaker's treatment ("she put me on", "he started me on",
#: "she upped my"), or said of the speaker ("she said my heart's in atrial fibrillation"): the
#: speaker's fact
ACTS_ON_ME = re.compile(
    r"\b(?:(?:put|started|switched|changed|moved|took|taken)\s+me\s+(?:on|off)|(?:upped|increased|"
    r"reduced|lowered|stopped|changed|switched|doubled|halved)\s+my|(?:said|says|told me|thinks|"
    r"reckons)\s+(?:that\s+)?(?:my|i|i've|i'm)\b)"
)


# --- the conversation's state -------------------------------------------------------------------
@dataclass
class State:
    """What the conversation is about, as it goes: the drugs and the measurement named last,
    the question being answered and what it asked about."""

    drugs: list[Drug] = field(default_factory=list)
    drugs_age: int = 99
    drugs_turn: int = -1  # the turn that named them
    analyte: Analyte | None = None
    analyte_age: int = 99
    #: each test's values as read so far in the conversation, in order (by analyte id)
    values: dict[str, list[float]] = field(default_factory=dict)
    question: tuple[Sentence, Named] | None = None
    allergy: bool = False
    appointments: bool = False
    contact: bool = False
    patient_name: str | None = None
    pending: list[tuple[Drug, Sentence]] = field(default_factory=list)  # allergens, no reaction
    #: the substances the talk of allergies named last, the sentence and the date said of each
    allergens: list[tuple[Drug, Sentence, DateSpan | None]] = field(default_factory=list)
    other_turn: int = -1  # the turn in which someone other than the patient was named last
    other_relation: str = ""  # and how the patient is related to them ("sister")
    other_named_by_patient: bool = False  # and it was the patient who named them
    addressed_other: bool = False  # the clinician asked a relative of their own health
    given_name: str | None = None  # the patient's given name, as the clinician calls them
    patient_pronoun: str = ""  # "he" or "she", where the patient's title says ("Mrs Nowak")
    proxy_names: frozenset[str] = frozenset()  # the given names of relatives who speak
    others_drugs: set[str] = field(default_factory=set)  # drugs said to be someone else's
    #: the concepts of the findings the patient's side told of, and those of its last sentence
    reported: set[str] = field(default_factory=set)
    #: and the date said of each when it was told ("for about 3 weeks", "two years ago"), with
    #: the sentence that said it (where in the transcript)
    reported_when: dict[str, tuple[DateSpan, int, int]] = field(default_factory=dict)
    last_reported: list[Finding] = field(default_factory=list)
    #: the drug being talked about when the patient's side told of them
    reported_on: list[Drug] = field(default_factory=list)
    #: the drugs the clinician's question about side effects asked of (named in it, or else
    #: talked about when it was asked)
    side_effects_of: list[Drug] = field(default_factory=list)
    #: the clinician asked which medicines disagreed with the patient, naming none ("Any
    #: tablets that didn't agree with you?"): the drug the answer names is the one asked of
    reactions_asked: bool = False
    #: the drugs said last to have been started ("first dose on the 22nd")
    started: list[Drug] = field(default_factory=list)
    #: the drugs said last to have been started or had their dose changed
    changed: list[Drug] = field(default_factory=list)
    #: the unit each drug's dose was last said in ("we have 100 micrograms on file")
    dose_units: dict[str, str] = field(default_factory=dict)
    #: the clinician's question about the family: where it starts, and the disorders it asks of
    family_asked: tuple[int, tuple[str, ...]] | None = None
    #: the clinician's sentence in their turn that raised a habit ("Now, smoking."), if any
    habit_raised: str = ""

    def titled(self, title: str, name: str) -> None:
        """The patient is the first titled name said ("Hello Mrs Nowak"): that name, and the
        pronoun the title gives."""
        self.patient_name = name
        self.patient_pronoun = _PRONOUN_OF_TITLE.get(title.lower(), "")

    def names(self) -> tuple[str, ...]:
        """The names the patient goes by in this conversation."""
        return tuple(n for n in (self.patient_name, self.given_name) if n)

    #: the day the conversation last named with its month: a day said alone after it reads in
    #: its month ("born on the 1st of October ... home on the 4th")
    told_day: datetime | None = None
    told_turn: int = -1  # the turn that named it
    #: the days said alone so far, as read: the same day said again is the same date
    days_alone: dict[int, datetime] = field(default_factory=dict)
    #: the tests' date, its turn and where it was said (start, end)
    test_date: tuple[DateSpan, int, int, int] | None = None
    # ... and a scan's or a test of function's ("the echo on the fifth"), for the results said
    # in the next turns
    scan_date: tuple[DateSpan, int, int, int] | None = None
    #: the test date of the results said before one turn dated a result just named ("That
    #: was actually from the fasting sample on the 28th"): in force again after that turn
    test_date_before: tuple[DateSpan, int, int, int] | None = None
    #: each drug's last start or change told with its date ("she put his levetiracetam up on
    #: the 5th of October"): the date, its turn and where it was said
    drug_dates: dict[str, tuple[DateSpan, int, int, int]] = field(default_factory=dict)
    #: a hospital stay's days told ("you went home Monday the 4th"): each event's date, its
    #: turn and where it was said; and the one the sentence being read refers to ("by the day
    #: you went home"), if any
    stays: dict[str, tuple[DateSpan, int, int, int]] = field(default_factory=dict)
    stay: tuple[DateSpan, int, int, int] | None = None

    def refers_to_other(self, s: Sentence) -> bool:
        """Whether "she" or "he", as the sentence's subject, is someone other than the patient:
        always in the patient's own mouth (they say "I"), and in the turn that just named
        another person ("My wife, ... She takes bisoprolol"); and whether a clinician's answer
        to the patient's own turn that named another person speaks of that person ("My son
        has asthma ..." -- "Please book him his own appointment"): no "you", and a pronoun
        the patient, titled as the other sex ("Mrs Nowak"), cannot be -- or, the patient's sex
        unknown, "his own" or "her own" ("He can have his own asthma review")."""
        if (
            s.speaker == "clinician"
            and s.turn == self.other_turn + 1
            and self.other_named_by_patient
            and not _SECOND_PERSON.search(s.low)
        ):
            if self.patient_pronoun and any(
                PERSON_PRONOUNS.get(w.replace("'s", "s"), self.patient_pronoun)
                != self.patient_pronoun
                for w in re.findall(r"[a-z']+", s.low)  # "he's" as the tokeniser writes it
            ):
                return True
            if not self.patient_pronoun and _OWN.search(s.low):
                return True  # "He can have his own asthma review": his, not the patient's
        if not _PRONOUN_SUBJECT.match(s.low) or ACTS_ON_ME.search(s.low):
            return False  # "She ... put me on flucloxacillin": what she did is the speaker's
        own = s.speaker == "patient" and not s.relation
        return own or s.turn == self.other_turn

    def topic_drugs(self) -> list[Drug]:
        return self.drugs if self.drugs_age <= 4 else []

    def topic_analyte(self) -> Analyte | None:
        return self.analyte if self.analyte_age <= 3 else None


def about_other(patient_id: str, s: Sentence, st: State) -> bool:
    """Whether the sentence is about someone other than the patient."""
    if any(i != patient_id for i in PATIENT_ID.findall(s.text)):
        return True
    for title, name in TITLED.findall(s.text):
        if st.patient_name is None:
            st.titled(title, name)
        elif name != st.patient_name:
            return True
    m = _relative_subject().match(s.low)
    if m is None or (m.group("named") and s.speaker == "clinician"):
        return False
    rel = m.group(1) or m.group("named")
    mine = m.group("named") or re.search(r"\b(?:my|our) ", m.group(0))  # not "her own mother"
    if s.relation and rel in _PATIENT_AS.get(s.relation, ()) and mine:
        return False  # a daughter's "my mum" is the patient
    clinician_asks = s.speaker == "clinician" and s.low.lstrip().startswith(("your", "his", "her"))
    if clinician_asks and rel in ("mum", "mom", "mother", "dad", "father", "son", "daughter"):
        return False
    st.other_turn = s.turn
    st.other_relation = rel
    st.other_named_by_patient = s.speaker == "patient" and not s.relation
    return True
