"""Allergies and reactions: an allergy said or answered (its substance and reaction across
sentences), an adverse reaction to a drug, a disorder had on one, a symptom the clinician calls
a known side effect, and an answer to "any side effects?"."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...facts.lexicon import lexicon
from ..dates import DateSpan
from ..dialogue import Sentence, State
from ..sentence import Drug, Finding, Named, date_for
from ..statements import disorders_named
from .base import Item, _a
from .changes import _CANNOT, _HEDGE, _STOP, _SWITCH, _taken

_ALLERGY = re.compile(r"\ballerg(?:y|ic|ies)\b|\banaphyla\w*")
_ALLERGY_TOPIC = re.compile(r"\ballerg(?:y|ic|ies)\b|\breactions?\b")
_ALLERGY_NEG = re.compile(
    r"\bno (?:known |new |other |drug |food )*allerg|\bnkda\b|\bnka\b|"
    r"\bdenie[sd] (?:any |known |drug )*allerg|\bnot allergic\b|\bnever (?:been |had an? )?allerg|"
    r"\bno allergic reaction"
)
_NEGATIVE = re.compile(r"(?:no|none|never|not|nope|nothing)\b")
_SEVERITY = re.compile(r"\b(severe|serious|life-threatening|mild|moderate|fairly severe)\b")
_CAUSE = re.compile(
    r"\b(gave|gives|giving|caused|causes|causing|made|makes|making|got|get|gets|getting|"
    r"broke out|break out|side effects?|because of|due to|from|on|come out|came out)\b"
)
_NO_PROBLEM = re.compile(
    r"\b(without (?:any )?(?:problems?|issues?|side effects?)|no (?:problems?|issues?|side "
    r"effects?)|tolerat\w+ (?:it )?well|fine on|settled|went away|resolved)\b"
)
_SO_STOPPED = re.compile(r"\b(?:so|and so|which is why)\b[^.;]{0,25}\b(?:stop\w*|came off|quit)\b")


def _dated_as_told(item: Item, r: Named, st: State) -> Item:
    """A reaction the clinician names with no date of its own ("A dry cough is a well-known
    side effect of lisinopril"), dated when the patient's side said the symptom began ("I've
    had a dry cough for about 3 weeks")."""
    mtype, content, conf, at, start, end, *_by = item
    if at is not None:
        return item
    told = next(
        (st.reported_when[f.concept] for f in r.findings if f.concept in st.reported_when), None
    )
    if told is None:
        return item
    when, a, b = told
    return mtype, content, conf, when.at, start, end, (a, b)  # dated by the patient's words


def _reactions(r: Named) -> list[Finding]:
    """The allergic reactions the sentence tells of, not denied ("it gave me a rash")."""
    reactions = lexicon().allergic_reactions
    return [f for f in r.findings if f.concept in reactions and not r.negated(f.start)]


#: a symptom told from when a drug began or went up ("since starting the ramipril", "since
#: they increased the doxazosin")
_SINCE_DRUG = re.compile(
    r"\bsince (?:starting|taking|going (?:on|up)|being on|(?:i|we|they|you|he|she) "
    r"(?:started|increased|upped|changed|went up)|the (?:dose )?(?:increase|change)|"
    r"(?:the|my|his|her) dose (?:went|was put|was) (?:up|increased)|"
    r"it was (?:started|increased))\b"
)
#: a drug right after "with" ("heartburn with the naproxen")
_WITH_DRUG = re.compile(r"\bwith (?:the |my |his |her |their )?$")
#: a drug right after "on" or "with" ("on the Clenil", "heartburn with the naproxen"): what
#: was had was had while taking it
_ON_DRUG = re.compile(r"\b(?:on|with) (?:the |my |his |her |your |their )?$")
#: a reaction said to be to a drug ("a bad reaction to morphine")
_REACTION_TO = re.compile(r"\breaction (?:to|from|with) (?:the |my |his |her |their )?$")
#: words that make a disorder on a drug its response, not its reaction
_CONTROLLED = re.compile(
    r"\b(?:controlled|stable|better|improved|improving|well|settled|managed|remission)\b"
)


def _disorder_on_drug(s: Sentence, r: Named, found: list[Drug]) -> Iterator[Item]:
    """A disorder had "on" a drug ("You had oral thrush in April on the Clenil"): a reaction to
    it; not one said to be controlled on it ("diabetes well controlled on metformin")."""
    if _CONTROLLED.search(s.low) or _CANNOT.search(s.low):
        return  # controlled on it, or "no thrush on the Clenil"
    for d in found:
        if not _ON_DRUG.search(s.low[max(0, d.start - 12) : d.start]):
            continue
        named = disorders_named(s.text[: d.start])
        if named:
            when = date_for(r, 0, d.start)
            text = f"Patient reports {named[-1]} on {d.phrase}"
            yield "adverse_reaction", text, 0.75, when.at if when else None, s.start, s.end
            return


#: a clinician's word that a symptom is a drug's side effect ("a well-known side effect of")
_SIDE_EFFECT = re.compile(
    r"\b(?:is|'s|are)\s+(?:a\s+|an\s+)?(?:very\s+)?(?:well[- ]?)?(?:known|common|recogni[sz]ed|"
    r"typical|usual|classic)\s+side[- ]?effects?(?:\s+(?:of|with|from)\b|(?=\s*[,.;!?]|\s*$))"
)
#: a clinician's question about a drug's side effects ("Any side effects since the increase?")
_SIDE_EFFECTS_ASKED = re.compile(r"\bside[- ]?effects?\b")
#: a clinician's question about which medicines disagreed with the patient, naming none
_REACTIONS_ASKED = re.compile(
    r"\b(?:(?:didn't|did not|don't|do not) agree with|disagreed with|(?:couldn't|could not|"
    r"can't|cannot) (?:take|tolerate)|not tolerate|reactions? (?:to|with) any|problems? with any|"
    r"side[- ]?effects? (?:from|with|to) any)\b"
)
#: how many turns back the drug a side-effects question asks of may have been named ("we put
#: your sertraline up ..." / "Better, honestly." / "Any side effects since the increase?")
_SIDE_EFFECTS_TURNS = 2
#: "that", "this", "it" opening a sentence: what was just said
_PRONOUN_SUBJECT = re.compile(r"^\W*(?:(?:yes|yeah|ah|oh|ok|okay|right),?\s+)?(?:that|this|it)\b")


class AllergyRules:
    """The rules of allergies and reactions."""

    def _allergy(self, s: Sentence, r: Named, found: list[Drug], st: State) -> Iterator[Item]:
        low = s.low
        if _ALLERGY_NEG.search(low) or _NEGATIVE.match(low.strip()):
            return
        lex = lexicon()
        explicit = bool(_ALLERGY.search(low))
        answering = st.allergy and s.speaker != "clinician"
        reactions = _reactions(r)
        if not explicit and not answering:
            return
        if _NO_PROBLEM.search(low):
            return
        allergens = [d for d in found if not d.implicit] or (
            [d for d in found if d.implicit] if reactions else []
        )
        if not allergens and explicit:
            m = re.search(
                r"\ballergic to (?:the |a )?([a-z][a-z -]{2,30}?)\b(?:[,.;—-]|$| and)", low
            )
            if m:
                allergens = [Drug(m.group(1).strip(), m.group(1).strip(), m.start(1), m.end(1))]
        if not explicit:
            # in answer to "any allergies?": a substance with an allergic reaction, or named
            # alone (its reaction may follow in the next sentence)
            other = [f for f in r.findings if f.concept not in lex.allergic_reactions]
            if not reactions and (other or (_CAUSE.search(low) and found)):
                return  # an intolerance: an adverse reaction
            if allergens and not reactions:
                # "I've taken some Piriton I had in the cupboard": a medicine taken, no allergen
                # ("I can't take penicillin" still names one)
                named_alone = [d for d in allergens if not d.implicit and not _taken(low, d.start)]
                st.pending += [(d, s) for d in named_alone]
                return
            if not allergens and reactions and st.pending:
                done, st.pending = st.pending, []
                for d, first in done:
                    yield self._allergy_item(d, reactions, low, first.start, s.end, r, explicit)
                return
        if not allergens:
            return
        named = {d.name for d in allergens}
        # where the substance was named first ("Penicillin. It gave her a rash."): the evidence
        firsts = {d.name: first.start for d, first in st.pending if d.name in named}
        st.pending = [(d, first) for d, first in st.pending if d.name not in named]
        # a substance the talk of allergies named and the answer calls "it": from where it was
        # named, dated as it was there
        told = {d.name: (x, when) for d, x, when in st.allergens if d.name in named}
        for d in allergens:
            start = firsts.get(d.name, s.start)
            when = None
            if d.implicit and d.name in told:
                start, when = told[d.name][0].start, told[d.name][1]
            yield self._allergy_item(d, reactions, low, start, s.end, r, explicit, when)

    @staticmethod
    def _allergy_item(
        d: Drug,
        reactions: list[Finding],
        low: str,
        start: int,
        end: int,
        r: Named,
        explicit: bool,
        told: DateSpan | None = None,
    ) -> Item:
        shown = list(dict.fromkeys(f.shown for f in reactions))
        sev = _SEVERITY.search(low)
        severity = sev.group(1).replace("fairly ", "") if sev else None
        if "anaphylaxis" in {f.concept for f in reactions}:
            severity = "severe"
        text = f"Patient has {_a(d.phrase)} allergy"
        if shown:
            text += " causing " + " and ".join(shown)
        if severity:
            text += f" ({severity})"
        when = date_for(r, d.start, d.end) or told
        return "allergy", text, 0.9 if explicit else 0.8, when.at if when else None, start, end

    def _flush_allergy(self, st: State) -> Iterator[Item]:
        """Substances named in answer to "any allergies?" whose reaction never followed."""
        done, st.pending = st.pending, []
        for d, s in done:
            yield "allergy", f"Patient has {_a(d.phrase)} allergy", 0.75, None, s.start, s.end

    def _adverse(self, s: Sentence, r: Named, found: list[Drug]) -> Iterator[Item]:
        low = s.low
        if not found or _NO_PROBLEM.search(low) or _HEDGE.search(low):
            return
        reacted = next(
            (d for d in found if _REACTION_TO.search(low[max(0, d.start - 30) : d.start])), None
        )
        if reacted is not None:
            # "I had a bad reaction to morphine": a reaction, its symptom unnamed or denied
            when = date_for(r, 0, reacted.start)
            text = f"Patient reports a reaction to {reacted.phrase}"
            yield "adverse_reaction", text, 0.75, when.at if when else None, s.start, s.end
            return
        symptoms = [f for f in r.findings if not r.negated(f.start)]
        if not symptoms:
            yield from _disorder_on_drug(s, r, found)  # "oral thrush in April on the Clenil"
            return
        sym = symptoms[0]
        so = _SO_STOPPED.search(low)  # "I had diarrhoea every day so I stopped taking it"
        # "since starting the ramipril", "heartburn with the naproxen": with the drug, in time
        along = _SINCE_DRUG.search(low) or any(
            _WITH_DRUG.search(low[max(0, d.start - 10) : d.start]) for d in found
        )
        if along and _CONTROLLED.search(low):
            return  # "better with the naproxen": a response
        if not _CAUSE.search(low) and not (so and so.start() > sym.end) and not along:
            return
        sev = _SEVERITY.search(low)
        what = f"{sev.group(1).replace('fairly ', '')} {sym.shown}" if sev else sym.shown
        span = (s.start, s.end)
        before = [d for d in found if d.start < sym.start]
        drug = before[-1] if before else found[0]
        if _SWITCH.search(low) and len(found) >= 2:
            drug = found[0]  # "switched from A to B because of the cough on A"
        # "I had a rash from amoxicillin on Sunday": when it happened, said beside the symptom
        # -- not the date of a stop it led to ("It made me dizzy, so I stopped it in September")
        when = None if _STOP.search(low) else date_for(r, sym.start, sym.end)
        at = when.at if when is not None and when.at <= r.session else None
        yield "adverse_reaction", f"Patient reports {what} on {drug.phrase}", 0.8, at, *span

    @staticmethod
    def _side_effect(s: Sentence, r: Named, found: list[Drug], st: State) -> Iterator[Item]:
        """A clinician who calls what the patient told of a known side effect of a drug ("That's
        a known side effect of ticagrelor", "Irritability is a known side effect of
        levetiracetam"): the patient's reaction to it. A symptom the patient did not tell of is
        information, not theirs."""
        m = _SIDE_EFFECT.search(s.low)
        if s.speaker != "clinician" or m is None:
            return
        drugs = [d for d in found if d.start >= m.end() and not d.implicit]
        if not any(not d.implicit for d in found):
            # "That's a known side effect, so he can take it in the morning": of "it", the drug
            # being talked about
            drugs = [d for d in found if d.implicit][:1] or st.topic_drugs()[:1] or st.reported_on
            drugs = [d for d in drugs if d.name not in st.others_drugs]  # a relative's own
        named = [f for f in r.findings if f.end <= m.start() and not r.negated(f.start)]
        if named:
            symptoms = [f for f in named if f.concept in st.reported]
        elif _PRONOUN_SUBJECT.match(s.low[: m.start()]):
            symptoms = st.last_reported  # "That's a known side effect of ..."
        else:
            symptoms = []
        if drugs and symptoms:
            what = symptoms[0].shown
            yield (
                "adverse_reaction",
                f"Patient reports {what} on {drugs[0].phrase}",
                0.8,
                None,
                s.start,
                s.end,
            )

    @staticmethod
    def _side_effects_told(s: Sentence, r: Named, st: State) -> Iterator[Item]:
        """The patient's side answering the clinician's "Any side effects (from the patches |
        since the increase)?": a symptom it tells is a reaction to the drug asked about --
        named in the question, or else the drug being talked about ("Just the sweating at
        night"; "She's been having really vivid dreams since then")."""
        drugs = st.side_effects_of
        if s.speaker == "clinician" or not drugs or r.drugs:
            return
        if _NO_PROBLEM.search(s.low) or _HEDGE.search(s.low):
            return
        symptoms = [f for f in r.findings if not r.negated(f.start)]
        if symptoms:
            what = symptoms[0].shown
            yield (
                "adverse_reaction",
                f"Patient reports {what} on {drugs[0].phrase}",
                0.75,
                None,
                s.start,
                s.end,
            )
