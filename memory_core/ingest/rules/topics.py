"""What the talk is about, turn by turn: the topics a clinician's sentence opens (allergies,
side effects, the family, appointments, contact), the drug and measurement talked of last, and
the drugs a sentence names without naming them ("stopped it", an answer that names only a
dose)."""

from __future__ import annotations

import re

from ...facts.model import KeyKind, Role
from ...facts.reader import read as read_facts
from ..dates import told_as_done
from ..dialogue import TITLED, Sentence, State
from ..sentence import Drug, Named, date_for, dose_after
from ..statements import asks_of_family
from .allergies import (
    _ALLERGY,
    _ALLERGY_TOPIC,
    _REACTIONS_ASKED,
    _SIDE_EFFECTS_ASKED,
    _SIDE_EFFECTS_TURNS,
    _SINCE_DRUG,
    _reactions,
)
from .changes import _DOWN, _HEDGE, _SINCE_STARTED, _STARTED_SAID, _UP, _told_when
from .social import _PREFER, _WHEN_ASKED

#: a sentence whose subject is "it" or "that": the drug talked about
_IT_SUBJECT = re.compile(r"^\W*(?:(?:and|but|so|also|well)\W+)?(?:it|that|this one|it's)\b")


#: a pronoun a medication verb governs ("stopped it", "increase it", "it gave me", "increase the
#: dose")
_GOVERNED = re.compile(
    r"\b(?:stop\w*|start\w*|increas\w*|decreas\w*|reduc\w*|drop\w*|cut|take|takes|taking|took|"
    r"use|uses|using|continu\w*|off|(?:been|still|stay\w*|keep|kept)\s+on|upp\w+|doubl\w+|"
    r"halv\w+|tripl\w+|rais\w+|lower\w*|restart\w*|mov\w+|shift\w+)\s+"
    r"(?P<pro>it|that|them|(?:the|your|his|her|my|their) dose)\b|\bput\s+(?P<pro3>it|that)\s+up\b|"
    r"\b(?P<pro2>it|that|they)\s+"
    r"(?:made|makes|gave|gives|caused|causes|did|does)\b",
    re.I,
)


def _governed(text: str) -> list[tuple[int, int]]:
    """Where a pronoun a medication verb governs is -- none after a medicine named by what it
    looks like or as "other" ("The brown inhaler, I use it twice a day": "it" is that
    inhaler, not the drug talked of before)."""
    out = []
    for m in _GOVERNED.finditer(text):
        g = next(n for n in ("pro", "pro2", "pro3") if m.group(n))
        if _UNNAMED_MEDICINE.search(text, 0, m.start(g)):
            break
        out.append((m.start(g), m.end(g)))
    return out


#: a medicine named by its colour or as "other", not by a name the lexicon reads
_UNNAMED_MEDICINE = re.compile(
    r"\b(?:blue|brown|purple|orange|pink|red|white|yellow|green|grey|gray|other)\s+(?:inhalers?|"
    r"puffers?|tablets?|pills?|capsules?|creams?|patch(?:es)?|sprays?|drops|injections?)\b",
    re.I,
)


def _only_considered(r: Named) -> bool:
    """A statement that names its drugs only as a treatment to consider, after a hedge and a
    verb of switching, adding, trying or considering ("If the drowsiness hasn't settled we
    could consider switching to propranolol"; not "That might have been when you started the
    turmeric")."""
    first = min(d.start for d in r.drugs)
    hedge = _HEDGE.search(r.low, 0, first)
    return (
        not r.s.question
        and hedge is not None
        and _CONSIDERED.search(r.low, hedge.end(), first) is not None
    )


#: a treatment considered, after a hedge: the words before the drug
_CONSIDERED = re.compile(r"\b(?:switch\w*|add\w*|try\w*|trial\w*|consider\w*|chang\w*)\b")

#: a sentence without a subject that opens with a change ("Started on the 1st of June.")
_BARE_CHANGE = re.compile(
    r"\W*(?:started|stopped|began|increased|reduced|decreased|upped|came off)\b", re.I
)


def _named_in_passing(text: str) -> bool:
    """Whether every drug a sentence names is named in passing ("There are options that are
    safe alongside apixaban"): no new topic for the "it" said next."""
    drugs = [f for f in read_facts(text, "medication").facts if f.kind is KeyKind.DRUG]
    return bool(drugs) and all(f.role is Role.MENTION for f in drugs)


class TopicRules:
    """The rules of the dialogue: its topics, and the drugs said without a name."""

    @staticmethod
    def _clinician_topics(s: Sentence, r: Named, st: State) -> None:
        if _ALLERGY_TOPIC.search(s.low):
            st.allergy = True
        if s.question:
            st.question = (s, r)
            asked = asks_of_family(s.text)  # "Does anyone in your family have diabetes?"
            st.family_asked = (s.start, asked) if asked else None
            st.reactions_asked = bool(_REACTIONS_ASKED.search(s.low)) and not r.drugs
            if _SIDE_EFFECTS_ASKED.search(s.low):  # of the drug named, or talked of lately
                recent = st.drugs if s.turn - st.drugs_turn <= _SIDE_EFFECTS_TURNS else []
                if _SINCE_STARTED.search(s.low) and st.started:
                    recent = st.started  # "Any side effects since you started?": the new one
                st.side_effects_of = r.drugs or recent
            triggers = {slot for _a, _b, slot in r.slot_triggers()}
            when = re.search(r"\b(time|when)\b", s.low) and re.search(r"\bbest|suits?\b", s.low)
            choice = _PREFER.search(s.low) or _WHEN_ASKED.search(s.low)
            if ("visit time" in triggers and choice) or when:
                st.appointments = True  # not "How has she been since Monday's visit?"
            if "contact channel" in triggers or re.search(r"\b(reach|contact|remind)\w*", s.low):
                st.contact = True
        if st.patient_name is None:
            for title, name in TITLED.findall(s.text):
                st.titled(title, name)
                break

    @staticmethod
    def _note_topics(r: Named, st: State) -> None:
        told = [f for f in r.findings if not r.negated(f.start)]
        if r.s.speaker != "clinician" and told:
            st.last_reported = told
            st.reported.update(f.concept for f in told)
            for f in told:  # "I've had a dry cough for about 3 weeks": since when, and where
                if (when := date_for(r, f.start, f.end)) is not None:
                    st.reported_when[f.concept] = (when, r.s.start, r.s.end)
            st.reported_on = st.topic_drugs()[:1]  # the drug talked of when it was told
        allergy_talk = _ALLERGY.search(r.low) or (st.allergy and r.s.speaker != "clinician")
        if _ALLERGY.search(r.low) and (
            mine := [d for d in r.drugs if d.name not in st.others_drugs]
        ):
            # not one said to be a relative's ("I can't have aspirin"); where and when it was
            # said ("You reacted to co-amoxiclav on the 3rd of March"), for the answer's reaction
            st.allergens = [(d, r.s, date_for(r, d.start, d.end)) for d in mine]
        if not r.drugs and st.drugs and _governed(r.text):
            st.drugs_age = 0  # "Could you stop it from today?": still the drug talked of
        started = bool(r.drugs) and _STARTED_SAID.search(r.low) is not None
        if started:
            st.started = r.drugs  # "apixaban 5 mg twice a day, first dose on the 22nd"
        if r.drugs and (started or _UP.search(r.low) or _DOWN.search(r.low)):
            st.changed = r.drugs
        # the day a drug was started or changed, told -- or asked to be confirmed ("So you
        # started the apixaban on the 28th?")
        asked_to_confirm = r.s.speaker == "clinician" and told_as_done(r.text)
        if not r.s.question or asked_to_confirm:
            for d in r.drugs:
                when = date_for(r, d.start, d.end)
                if when is not None and _told_when(r, when):
                    st.drug_dates[d.name] = (when, r.s.turn, r.s.start, r.s.end)
        for d in r.drugs:
            _n, _sp, unit = dose_after(r.text, d.end).partition(" ")
            if unit:
                st.dose_units[d.name] = unit
        if r.drugs and not allergy_talk:
            it = _IT_SUBJECT.match(r.low)
            # a drug only considered ("we could consider switching to propranolol") is no new
            # topic: "I took it at 7 pm" next is still the drug talked of before
            considered = _only_considered(r)
            passing = _named_in_passing(r.text) or considered
            kept = st.topic_drugs() if it or passing else []
            if kept and (not it or not any(d.start < it.end() for d in r.drugs)):
                # "The St John's wort is the important one. It speeds up how your body clears
                # apixaban": "it", the subject, is still the St John's wort -- the drug named
                # after it is no new topic for the "it" said next ("stop it from today")
                st.drugs_age, st.drugs_turn = 0, r.s.turn
            elif not considered:  # a drug only considered leaves the topic as it was
                st.drugs, st.drugs_age, st.drugs_turn = r.drugs, 0, r.s.turn
        if r.analytes:
            st.analyte, st.analyte_age = r.analytes[-1][2], 0

    @staticmethod
    def _with_pronouns(explicit: list[Drug], s: Sentence, st: State, confirmed: bool) -> list[Drug]:
        """The drugs named, and a drug talked about before that a pronoun governed by a
        medication verb stands for, where no drug named earlier in the sentence is meant ("they
        stopped it, and I'm on spironolactone")."""
        topic = (
            []
            if confirmed
            else [d for d in st.topic_drugs() if d.name not in {e.name for e in explicit}]
        )
        if not topic:
            return explicit
        out = list(explicit)
        for at, end in _governed(s.text):
            if not any(d.start < at for d in explicit):
                out.append(topic[0].at(at, end))
                break
        return sorted(out, key=lambda d: d.start)

    @staticmethod
    def _implicit_drugs(s: Sentence, r: Named, st: State, confirmed: bool) -> list[Drug]:
        """The drugs a sentence names without naming them: "it", "that", "them" after talk of
        a drug; a patient's answer to a question about one drug."""
        topic = st.topic_drugs()
        if st.allergy and s.speaker != "clinician" and st.pending:
            topic = [st.pending[-1][0]]  # "Trimethoprim. My face swelled up when I took it."
        elif st.allergy and s.speaker != "clinician" and st.allergens and _reactions(r):
            # "Your only recorded allergy is latex. Is that right?" -- "That's right, it gave
            # me a rash": the substance the talk of allergies named last, not the drug before
            topic = [st.allergens[0][0]]
        if confirmed:
            return []
        since = _SINCE_DRUG.search(s.low)
        if since and s.speaker != "clinician" and len(st.changed) == 1 and r.findings:
            # "I've had a headache most days since going up to the 100": the drug whose start
            # or change was told last
            return [st.changed[0].at(since.start(), since.start())]
        if not topic or _UNNAMED_MEDICINE.search(s.text):
            return []  # "The brown inhaler, I use it twice a day": another medicine, unnamed
        out = [topic[0].at(a, b) for a, b in _governed(s.text)]
        if out:
            return out
        if (
            s.speaker != "clinician"
            and st.question is not None
            and st.question[1].drugs
            and (dose_after(s.text, 0, len(s.text)) or r.freqs)
        ):
            return [d.at(0, 0) for d in st.question[1].drugs[:1]]
        change = _BARE_CHANGE.match(s.text)
        said = dose_after(s.text, 0, len(s.text)) or r.freqs or change
        if said and len(topic) == 1 and st.drugs_age == 1 and st.drugs_turn == s.turn:
            # "Furosemide. I'm on 80 now, two of the 40s"; "Lantus, 10 units at bedtime.
            # Started on the 1st of June.": the drug the sentence before named (after the
            # change word, which reaches what follows it)
            at = change.end() if change else 0
            return [topic[0].at(at, at)]
        return []
