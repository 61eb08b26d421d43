""":class:`RuleExtractor`: one pass over a transcript read as a dialogue -- its sentences shaped,
dated, and followed from question to answer and from topic to topic -- that calls each subject's
rules (the package docstring says what it reads)."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from ...facts.spoken import spoken_numbers
from ..dates import (
    DateSpan,
    dates_in,
    day_alone,
    day_planned,
    month_named,
    narrowest,
    session_date,
    told_as_done,
)
from ..dialogue import (
    AFFIRM,
    DECLARED,
    DONE_THEN_ASKED,
    RECORD_THAT,
    REQUEST,
    Sentence,
    State,
    about_other,
    moment,
    split,
)
from ..proposals import Candidate, Extraction
from ..sentence import Named, dose_after
from ..statements import (
    FAMILY,
    FIRST_PERSON,
    PATIENT,
    as_request,
    as_statement,
    asserted_in,
    disorders_named,
    family_history,
    proxy_self,
    relative_answered,
    stated,
    third_party,
    third_person,
)
from ..stays import referred, told_days
from .allergies import AllergyRules, _dated_as_told
from .answers import (
    _AGREED,
    _ASKS_FOR,
    _BACK_REF,
    _BARE_NO,
    _BARE_YES,
    _CONTRAST_CUT,
    _ECHOED,
    _HOW_WORKING,
    _NO_PLAN,
    _NOT_CLINICAL,
    _SAYS_ITSELF,
    _STILL_ASKED,
    _dated_answer,
    _effect_told,
    _gerund,
    _yes_alone,
)
from .base import Item
from .doses import _amend_dose, _date_the_dose, _drug_alone
from .medicines import MedicationRules, _since
from .results import _NO_JAB, _TESTS, ReadingRules, _uncorrected
from .shaping import _recap_items, _statement_then_question, _untagged, _untold
from .social import _HABITS, SocialRules
from .telling import (
    _COMPARED_CLAUSE,
    _SINCE_ALONE,
    _SINCE_NEXT,
    _SINCE_THEN,
    _THAT_DAY,
    _THAT_DAY_TURNS,
    TOLD_TURNS,
    Story,
    _at,
    _date_alone,
    _refine_days,
    _sent_day,
    _stay_alone,
    _story,
    _told_before,
)
from .topics import TopicRules, _governed
from .whose import (
    _OWN_SAID,
    _SUBJECTLESS,
    _THIRD,
    _TO_RELATIVE,
    _VOCATIVE,
    _relatives_age,
    _your_relative,
)

#: a change told as made, not as one the speaker makes now ("the ramipril's gone up", "they've
#: stopped the bendroflumethiazide", "was reduced"; not "I'm going to stop it today")
_MADE = re.compile(
    r"\b(?:(?:'s|has|have|'ve|had|was|were)\s+(?:been\s+)?(?:gone up|gone down|stopped|started|"
    r"increased|reduced|decreased|doubled|halved|changed|switched|cut|put up|upped)|(?:they|the "
    r"hospital|the ward|the doctors?|the consultant|the team)\s+(?:\w+\s+){0,2}?(?:stopped|"
    r"started|increased|reduced|decreased|doubled|halved|changed|switched|cut|put|upped))\b",
    re.I,
)
_MADE_NOW = re.compile(
    r"\b(?:i'll|we'll|i will|we will|i'm going to|we're going to|i am going to|let's|today|"
    r"tomorrow|from now)\b",
    re.I,
)


def _made_on_the_stay(s: Sentence, r: Named) -> bool:
    """Whether a sentence tells a medicine's change as made before now (the stay's), not as
    one the speaker makes today."""
    if not r.drugs or r.dates:
        return False
    return _MADE.search(s.text) is not None and _MADE_NOW.search(s.text) is None


#: the day another medicine was started, said as when ("the same day I started the new tablet",
#: "when I began the apixaban")
_STARTED_ON = re.compile(
    r"\b(?:(?:on\s+)?the\s+(?:same\s+)?day|when|as soon as)\s+(?:i|you|he|she|we|they)\s+"
    r"(?:started|began)\s+(?P<what>(?:the|my|his|her|your|their|that)?\s*(?:new\s+)?[\w' -]{2,30}?)"
    r"(?=\s*(?:[.,;!?]|$|\band\b|\bbut\b))",
    re.I,
)
#: a medicine named by being the new one ("the new tablet", "the new blood thinner")
_THE_NEW_ONE = re.compile(r"\bnew\b|\bblood thinner\b|\banticoagulant\b", re.I)


def _started_on(s: Sentence, r: Named, st: State) -> tuple[Story, tuple[int, int]] | None:
    """The start of another medicine a sentence dates a change by, where that start's day was
    told before (its date, turn and place), and where the words that say it are."""
    m = _STARTED_ON.search(s.text)
    if m is None or not st.drug_dates:
        return None
    named = [d for d in r.drugs if m.start("what") <= d.start < m.end()]
    if named:
        told = st.drug_dates.get(named[0].name)
    elif _THE_NEW_ONE.search(m.group("what")):
        told = max(st.drug_dates.values(), key=lambda t: (t[1], t[2]))  # the latest told
    else:
        return None
    return (told, (m.start(), m.end())) if told is not None else None


def _date_medicines(out: Extraction, ks: Iterable[int], day: Story, since: bool = False) -> None:
    """Date the undated medicines among ``out.candidates[k]`` for ``k`` in ``ks`` by ``day``
    (its date, and where it was said); ``since``: the content says from when it holds."""
    for k in ks:
        c = out.candidates[k]
        if c.memory_type == "medication" and c.created_at is None:
            content = f"{c.content} ({_since(day[0])})" if since else c.content
            by = (day[2], day[3])
            out.candidates[k] = replace(c, content=content, created_at=day[0].at, dated_by=by)


def _since_after(out: Extraction, prev: Sentence, since: Story) -> None:
    """ "Forty in the morning and forty at two. Since he came home on the 15th.": a sentence
    that is only a "since" and its date dates the medicines the sentence before said, undated."""
    said = [k for k, c in enumerate(out.candidates) if c.start == prev.start]
    _date_medicines(out, said, since, since=True)


#: how far ahead a booking the patient tells of may lie (a day said without its year that
#: would be further off is one gone by: "on the 4th of October" told in November)
_BOOKED_AHEAD_DAYS = 183


class RuleExtractor(TopicRules, AllergyRules, MedicationRules, ReadingRules, SocialRules):
    """Offline, deterministic extraction (see the package docstring for what it understands)."""

    method = "rule"

    def extract(self, patient_id: str, transcript: str, *, now: datetime) -> Extraction:
        out = Extraction(method=self.method)
        transcript = spoken_numbers(transcript)  # "ninety-four kilos": 94, in place
        header, sents = split(transcript)
        sents = [part for x in sents for part in _statement_then_question(x)]
        sents = [part for x in sents for part in _recap_items(_untold(x))]
        session = session_date(header, now) or now
        seen: set[tuple[str, str]] = set()
        undated: list[int] = []  # the candidates dated by nothing said
        st = State()
        last_med: list[tuple[int, str]] = []  # the last medication proposed, and who said it

        def emit(
            items: Iterator[Item],
            speaker: str,
            whose: str = PATIENT,
            check: bool = False,
            relation: str = "",
            default_at: datetime | None = None,
            story: Story | None = None,
        ) -> set[str]:
            """Add the items; ``check``: drop an item whose thing the evidence does not assert
            of the patient (another person's, hypothetical, negated, asked -- the assertion
            step). The types added."""
            added: set[str] = set()
            for mtype, content, conf, created, start, end, *more in items:
                dated_by = more[0] if more else None
                key = (mtype, content.lower())
                if key in seen:
                    continue
                side = speaker != "clinician"
                said = transcript[start:end]
                if check and not asserted_in(
                    said, content, mtype, relation, side, pronouns=_governed(said)
                ):
                    continue
                seen.add(key)
                if speaker == "unknown":
                    conf -= 0.1
                if created is None and story is not None and mtype != "care_plan":
                    created, dated_by = story[0].at, (story[2], story[3])  # a story's date
                if created is None and mtype != "care_plan":
                    undated.append(len(out.candidates))
                if created is None:
                    created = default_at  # a message's fact: its send date, if not the session's
                added.add(mtype)
                if mtype == "medication" and created is not None and last_med:
                    k = last_med[0][0]
                    said_at = (start, end)
                    _date_the_dose(out, transcript, undated, k, content, said_at, created, dated_by)
                if mtype == "medication":
                    last_med[:] = [(len(out.candidates), speaker)]
                out.candidates.append(
                    Candidate(
                        content=content,
                        memory_type=mtype,
                        start=start,
                        end=end,
                        confidence=round(max(0.1, min(conf, 0.99)), 2),
                        created_at=created,
                        whose=whose,
                        dated_by=dated_by,
                    )
                )
            return added

        def clause_date(r: Named, a: int, b: int) -> DateSpan | None:
            """A clause's date: the one date said in it, else the one date of its sentence
            said before it ("you came in on July 13th with chest pain, and it turned out you'd
            had an NSTEMI"); none where a value is compared ("from 44 in August to 38")."""
            if _COMPARED_CLAUSE.search(r.text[a:b]):
                return None
            inside = [d for d in r.dates if a <= d.start < b]
            if len(inside) > 1 and narrowest(inside) is None:
                # "Flu jab on the 2nd of October, and the Covid booster on the 16th": the date
                # of the first clause, whose thing the proposal opens with
                breaks = r.clause_breaks
                k = bisect_left(breaks, inside[0].start)
                if k < len(breaks):
                    inside = [d for d in inside if d.start < breaks[k]]
            if inside:
                return narrowest(inside)  # one date, or one inside the others' periods
            before = [d for d in r.dates if d.end <= a]
            if len(before) == 1:
                # "you came in on the 28th with the fluid -- the heart failure flaring up --
                # and went home on the 4th": the one date said before it, whatever follows
                return before[0]
            after = [d for d in r.dates if d.start >= b]
            if len(r.dates) == 1 and after and _SINCE_NEXT.match(r.text[b : after[0].start]):
                return after[0]  # "I'm her carer really - since her diagnosis in February"
            return None

        def general(
            s: Sentence,
            r: Named,
            done: set[str],
            default_at: datetime | None = None,
            skip: frozenset[str] = frozenset(),
            story: Story | None = None,
        ) -> None:
            """What the specific rules did not read: plans, conditions, observations, ..."""
            items = []
            if st.others_drugs & {d.name for d in r.drugs}:
                return  # a drug this conversation gave another person stays theirs
            for x in stated(
                s,
                done_types=frozenset(done),
                drugs_done="medication" in done,
                patient_name=st.names(),
                skip=skip,
                pronoun=st.patient_pronoun,
            ):
                d = clause_date(r, x.start, x.end)
                # a day to come: said without a direction ("the 10th of August"), or ahead of the
                # session ("on Monday the 9th"); a record's date may not lie in the future
                ahead = (
                    d is not None and x.type == "care_plan" and (d.guessed_past or d.at > r.session)
                )
                said = r.text[x.start : x.end]
                if ahead and not told_as_done(said):
                    d = None  # "see you Friday", "scan on the 10th of August": the next one
                content = x.content
                booked = x.type == "care_plan" and s.speaker != "clinician"  # told by the patient
                if booked and d is not None and d.at <= r.session:
                    continue  # "I make blood test on 03.10.2026": a day gone by, no booking
                if x.type == "care_plan" and d is None and not told_as_done(said):
                    # the day it is for, written as a date ("Kidney bloods on Monday
                    # (2026-05-11)"); the plan is dated the day it was made
                    due = day_planned(said, r.session)
                    if booked and due is not None and (due - r.session).days > _BOOKED_AHEAD_DAYS:
                        continue  # "on the 4th of October" told in November: gone by
                    content += f" ({due:%Y-%m-%d})" if due is not None else ""
                at = d.at if d is not None else None
                conf = 0.7 if x.type == "care_plan" else 0.65
                items.append((x.type, content, conf, at, s.start, s.end))
            emit(iter(items), s.speaker, default_at=default_at, story=story)

        st.proxy_names = frozenset(
            x.label.split()[0] for x in sents if x.relation and x.label[:1].isupper()
        )
        prev: Sentence | None = None
        tale: Story | None = None  # the story being told, and its date
        last_tale: Story | None = None  # the last story told, for an answer about it
        dated: Story | None = None  # the last date said in the turn, and where
        last_day: Story | None = None  # the last date said, whatever the turn
        since_said: Story | None = None  # a sentence that is only a "since" and its date
        after_date: Story | None = None  # the sentence before was only a date
        took_turn = -1  # the turn whose last reading was of a medicine taken
        asked_of: str | None = None  # the relative the clinician's question asked after
        named_in_turn: tuple[int, str] = (-1, "")  # a relative the clinician's turn named
        asked_before = False  # ... whom a later question of the turn asks of as "she"
        turn_starts: list[tuple[int, int]] = []  # each turn, and its first candidate's index
        asked_for: Sentence | None = None  # the patient's side asked for something of the care
        sents_by_turn: dict[int, list[Sentence]] = {}
        for x in sents:
            sents_by_turn.setdefault(x.turn, []).append(x)
        follows_other = -1  # the turn whose last sentence was about someone else
        for s in sents:
            s = _untagged(s)  # "You're booked for the 7th of April, is that right?": said
            month_told = st.told_day if s.turn - st.told_turn <= TOLD_TURNS else None
            r = Named(s, moment(s, session, now), month_told, st.days_alone)
            named = [d.at for d in r.dates if month_named(s.text, d) and d.at <= session]
            if named:
                st.told_day, st.told_turn = named[-1], s.turn
            st.days_alone.update({n: d.at for d in r.dates if (n := day_alone(s.text, d))})
            asked_past = (
                s.speaker != "clinician"
                and st.question is not None
                and told_as_done(st.question[0].text)
            )
            for event, at in told_days(s.text, r.dates).items():
                st.stays[event] = (at, s.turn, s.start, s.end)
            ref = referred(s.text) if not r.dates else None
            st.stay = st.stays.get(ref[0]) if ref else None  # "by the day you went home"
            alone = _date_alone(s, r)
            alone_by = (s.start, s.end)
            if alone is None and st.stay is not None and ref and _stay_alone(s, *ref[1:]):
                # "They lowered it on the day you went home.": the day the stay told
                alone, alone_by = st.stay[0], (st.stay[2], st.stay[3])
            befores = _told_before(s, prev, st.question, sents_by_turn) if alone else ()
            for before in befores:
                # "I stopped the amlodipine. The 3rd of May.": the date of what was just told
                dated_now = False
                for k in reversed(undated):  # the latest first: the ones before end it
                    c = out.candidates[k]  # told in that sentence, or ending in it
                    if c.end <= before.start:
                        break
                    if alone and before.start < c.end <= before.end and c.whose == PATIENT:
                        out.candidates[k] = replace(
                            c, created_at=alone.at, dated_by=alone_by, end=max(c.end, s.end)
                        )
                        dated_now = True
                if dated_now:
                    break
            if asked_past and tale is None and last_tale is not None and st.question is not None:
                # "... came out on the 13th." -- "They gave you prednisolone?" -- "Yes, ...":
                # asked in the past, of a treatment or a finding, right after the story the
                # turn before told, the answer goes on in it
                q, qr = st.question
                of_care = bool(qr.drugs or qr.findings or qr.analytes)
                if of_care and last_tale[1] + 1 == q.turn == s.turn - 1 and not r.dates:
                    tale = (last_tale[0], s.turn, last_tale[2], last_tale[3])
            near = last_day is not None and s.turn - last_day[1] <= _THAT_DAY_TURNS
            if last_day is not None and near and not r.dates and _THAT_DAY.search(s.text):
                # "On the 14th of April." -- "They also did bloods that day. Your potassium
                # was 4.9": a story told under the day just named
                tale = (last_day[0], s.turn, last_day[2], last_day[3])
            tale, story = _story(tale, s, r, asked_past or alone is not None)
            last_tale = tale or last_tale
            if story is None and st.stay is not None:
                story = st.stay
            if story is None and after_date is not None and after_date[1] == s.turn:
                story = after_date  # "August, yes. I live at my daughter's now.": since then
            after_date = (alone, s.turn, s.start, s.end) if alone is not None else None
            if dated is not None and dated[1] != s.turn:
                dated = None
            if not r.dates and dated is not None and _SINCE_THEN.search(s.text):
                story = dated  # "January. Living alone since then": that date
            own = [d for d in r.dates if not d.guessed_past]  # "cans Friday and Saturday": habit
            if not own and since_said is not None and since_said[1] == s.turn:
                story = since_said  # "Since my birthday, the 12th of September. I'm about ..."
            since_said = None
            if r.dates:
                dated = (r.dates[-1], s.turn, s.start, s.end)
                last_day = dated
                if _SINCE_ALONE.match(s.text):
                    since_said = dated
                    if prev is not None and (prev.turn, prev.speaker) == (s.turn, s.speaker):
                        _since_after(out, prev, dated)
            new_turn = prev is None or s.turn != prev.turn
            if new_turn:
                turn_starts.append((s.turn, len(out.candidates)))
            if asked_of is not None and asked_before and s.relation:
                asked_of = None  # a relative answers of "your mum": the patient is the mum
            if new_turn and s.speaker != "clinician" and asked_of is not None:
                # "... your mum's - are you looking after her?" -- "She's got dementia."
                st.other_turn, st.other_relation = s.turn, asked_of
                st.other_named_by_patient = s.speaker == "patient" and not s.relation
            if new_turn:
                asked_of, asked_before = None, False
            opens_turn = s in sents_by_turn.get(s.turn, [])[:2]  # the turn's first words
            if s.speaker == "clinician" and len(turn_starts) >= 2 and opens_turn:
                _refine_days(out, r, s, range(turn_starts[-2][1], turn_starts[-1][1]))
            if asked_for is not None and s.speaker == "clinician" and new_turn:
                if asked_for.turn == s.turn - 1 and _AGREED.match(s.text):
                    # "Could I have my tablets in a dosette box?" -- "Yes, we can do that":
                    # what the patient asked for, agreed, is how they want their care
                    request = third_person(
                        asked_for.text.rstrip(" ?"), "patient", asked_for.relation
                    )
                    content = f'Preference: asked "{request}" (agreed)'
                    item = ("preference", content, 0.8, None, asked_for.start, s.end)
                    emit(iter([item]), "patient")
                asked_for = None
            if s.speaker != "clinician" and s.question and _ASKS_FOR.match(s.text):
                asked_for = None if r.drugs or disorders_named(s.text) else s
            switched = prev is None or s.speaker != prev.speaker
            if switched and s.speaker == "clinician":
                emit(self._flush_allergy(st), "patient")
                st.allergy = st.appointments = st.contact = False
                st.allergens = []
                st.question = None
                st.side_effects_of = []
                st.reactions_asked = False
                st.family_asked = None
            if s.speaker == "clinician":
                self._clinician_topics(s, r, st)
                kin = _your_relative().search(s.text)
                if kin and not s.question:
                    named_in_turn = (s.turn, kin.group(1).lower())  # "Oh -- your sister, ..."
                if s.question and kin:
                    asked_of = kin.group(1).lower()  # whom "she" or "he" in the answer is
                elif s.question and named_in_turn[0] == s.turn and _THIRD.search(s.low):
                    asked_of = named_in_turn[1]  # "... Is she on a blood thinner too?"
                    asked_before = True
                back = prev is not None and prev.turn == s.turn and not prev.question
                if s.question and back and prev is not None and _BACK_REF.match(s.text):
                    # "The letter says apixaban 5 mg twice a day. Is that how you've been
                    # taking it?": what a "yes" confirms is the sentence before
                    st.question = (prev, Named(prev, moment(prev, session, now)))
                if new_turn:  # whom the clinician turns to: the patient, or a relative
                    st.addressed_other = False
                    st.habit_raised = ""
                if any(topic.search(s.low) for topic, _habit in _HABITS):
                    st.habit_raised = s.low  # "Now, smoking. Last time you were on ten a day."
                if _TO_RELATIVE.search(s.low):
                    st.addressed_other = True
                called = _VOCATIVE.match(s.text)
                if called and called.group(1) in st.proxy_names:
                    st.addressed_other = True  # "Maria, are you still on your inhaler?"
                elif called and st.given_name is None:
                    st.given_name = called.group(1)  # "Ernest, I'd like you to ..."
            elif s.relation and st.addressed_other:
                st.others_drugs |= {d.name for d in r.drugs}  # "And my metformin's low": hers
                prev = s
                continue  # a relative answering of their own health ("How is your own ...?")
            elif switched and st.question is not None and new_turn and st.other_turn != s.turn:
                q, qr = st.question
                # "One with breakfast, one at night. Yes.": a "yes" that ends the answer too
                yes_last = any(_yes_alone(x.text) for x in sents_by_turn.get(s.turn, [])[1:])
                if (
                    AFFIRM.match(s.text.strip())
                    or _ECHOED.match(s.text)
                    or _dated_answer(s, r, q)
                    or yes_last
                ):
                    done = emit(self._confirmed(q, qr, s, r, st), "patient")
                    told = as_statement(q.text)
                    if told:  # "Have you had your flu jab?" -- "Yes, on the 2nd of October."
                        # the answer's own words up to a contrast ("Yes, though Mrs Okafor in
                        # the next room has had a cough"): what follows is another statement
                        bare = _BARE_YES.match(s.text)  # "I do.": the question says it all
                        answer = "" if bare else _CONTRAST_CUT.split(s.text, maxsplit=1)[0]
                        both = f"{told} {answer}".strip()
                        said = Sentence(both, q.start, s.end, "clinician", q.turn, sent=q.sent)
                        # a question about a medicine, a dose or a test is the rules' to read;
                        # an answer that says it itself ("Yes, I live alone") is read as said
                        clinical = qr.drugs or qr.analytes or dose_after(q.text, 0, len(q.text))
                        itself = _SAYS_ITSELF.search(s.text) and not bare
                        skip = _NO_PLAN | (
                            _NOT_CLINICAL if clinical or itself or _TESTS.search(q.low) else set()
                        )
                        general(said, Named(said, moment(q, session, now)), done, skip=skip)
                elif qr.drugs and _HOW_WORKING.search(q.low) and _effect_told(s.text):
                    # "How's the carbocisteine going?" -- "It's helped. The phlegm's easier to
                    # shift": the drug asked about, the effect the answer tells
                    body = third_person(s.text, s.speaker, s.relation)
                    item = ("treatment_response",
                            f"Response to treatment: {qr.drugs[-1].phrase}: {body}",
                            0.75, None, q.start, s.end)  # fmt: skip
                    emit(iter([item]), "patient", check=True)
                elif _BARE_NO.match(s.text) and (still := _STILL_ASKED.match(q.text)):
                    # "Are you still managing the allotment?" -- "No.": no longer; its date is
                    # the answer turn's first ("No. ... I gave it up in March.")
                    when = next(
                        (
                            x
                            for x in sents
                            if x.turn == s.turn and dates_in(x.text, moment(x, session, now))
                        ),
                        s,
                    )
                    text = f"{still['who'].capitalize()} stopped {_gerund(still['rest'])}."
                    if when is not s:  # the answer's words, as the clinician would say them
                        text += " " + third_person(when.text, when.speaker, when.relation)
                    said = Sentence(text.strip(), q.start, max(s.end, when.end), "clinician",
                                    q.turn, sent=q.sent)  # fmt: skip
                    general(said, Named(said, moment(q, session, now)), set(), skip=_NO_PLAN)
            st.drugs_age += 1
            st.analyte_age += 1
            prev = s
            # "My dad had lung cancer. Smoked sixty a day.", "She's got dementia. Alzheimer's,
            # they said, last year.": still the other person -- a sentence without a subject
            # of its own, or naming a disorder with no word of the speaker's own
            went_on = follows_other == s.turn and (
                _SUBJECTLESS.match(s.text) is not None
                or (
                    s.speaker != "clinician"
                    and bool(disorders_named(s.text))
                    and not FIRST_PERSON.search(s.text)
                )
            )
            follows_other = -1
            if (
                about_other(patient_id, s, st)
                or st.refers_to_other(s)
                or third_party(s.text, s.speaker, s.relation, st.names())
                or went_on  # "My dad had lung cancer. Smoked sixty a day.": still the dad
            ):
                follows_other = s.turn
                st.others_drugs |= {d.name for d in r.drugs}  # theirs, for the conversation
                emit(self._family(s), s.speaker)  # "my son stays with me": the patient's support
                # "My neighbour Sue can collect my prescriptions": who may know or collect
                emit(self._names_others(s, st), s.speaker)
                fh = [
                    (x.type, x.content, 0.7, _at(clause_date(r, x.start, x.end)), s.start, s.end)
                    for x in family_history(s, st.other_relation if st.other_turn == s.turn else "")
                ]  # "my mom had a stroke last Tues": when the relative's illness was
                if not fh and st.family_asked and s.speaker != "clinician":
                    fh = list(self._family_answer(s, st.family_asked))  # "Yes, my mum."
                if not fh and (age := _relatives_age(s.text)) and out.candidates:
                    last = out.candidates[-1]  # "My father, heart attack. He was fifty-two."
                    if last.whose == FAMILY and last.end <= s.start and "(aged" not in last.content:
                        content = f"{last.content} (aged {age})"
                        out.candidates[-1] = replace(last, content=content, end=s.end)
                emit(iter(fh), s.speaker, FAMILY, default_at=_sent_day(s, session, now))
                continue
            if proxy_self(s.text, s.relation):
                st.others_drugs |= {d.name for d in r.drugs}
                continue  # a relative speaking of themself
            record = RECORD_THAT.match(s.text) if s.question and s.speaker != "clinician" else None
            if record:  # "Please can you put on my record that I'm allergic to penicillin?"
                a, b = record.span("said")
                s = replace(s, text=s.text[a:b] + ".", start=s.start + a, end=s.start + b)
                r = Named(s, moment(s, session, now))
            declared = None
            if s.question and s.speaker == "clinician":
                # "I'll refer her to the dietitian, and can you keep a food chart?"
                declared = DONE_THEN_ASKED.match(s.text)
            elif s.question and not REQUEST.match(s.text):
                declared = DECLARED.match(
                    s.text
                )  # "I'm still on lansoprazole 15 mg, is that okay?"
            if declared:
                s = Sentence(
                    declared.group(1) + ".",
                    s.start,
                    s.start + len(declared.group(1)),
                    s.speaker,
                    s.turn,
                    s.relation,
                )
                r = Named(s, moment(s, session, now))
            if s.question and not (s.speaker != "clinician" and REQUEST.match(s.text)):
                asked = as_request(s.text) if s.speaker == "clinician" else None
                if asked:  # "Can you keep a note of his mood?": an instruction, a plan
                    general(replace(s, text=asked), Named(replace(s, text=asked), session), set())
                self._note_topics(r, st)
                self._test_asked(s, r, st)
                continue
            default_at = _sent_day(s, session, now)
            theirs = st.others_drugs & {d.name for d in r.drugs}
            if theirs and not _OWN_SAID.search(s.low):
                self._note_topics(r, st)
                continue  # a drug this conversation gave another person, not said to be hers
            if (
                not r.drugs
                and not r.analytes
                and _amend_dose(out, last_med, s, r, transcript, st.dose_units)
            ):
                continue  # "It's 5 milligrams at night": the dose of the drug just proposed
            if took_turn == s.turn and r.drugs and _drug_alone(s, r):
                # "I take the St John's wort, for my mood. And cod liver oil capsules."
                d = r.drugs[0]
                item = ("medication", f"Patient takes {d.phrase}", 0.75, None, s.start, s.end)
                if emit(iter([item]), s.speaker, check=True, relation=s.relation, story=story):
                    self._note_topics(r, st)
                    prev = s
                    continue
            started_on = _started_on(s, r, st)
            if started_on is not None:
                # "I stopped it the same day I started the new tablet": the new tablet is when,
                # not what was stopped -- read without it, dated by it
                a, b = started_on[1]
                s = replace(s, text=s.text[:a] + " " * (b - a) + s.text[b:])
                r = Named(s, moment(s, session, now), month_told, st.days_alone)
            before_sentence = len(out.candidates)
            done = emit(
                self._sentence(s, r, st),
                s.speaker,
                check=True,
                relation=s.relation,
                default_at=default_at,
                story=story,
            )
            # a result read ("The COVID test was negative") is no immunisation of the same name
            no_jab = _NO_JAB if "lab_result" in done else frozenset()
            general(s, r, done, default_at, no_jab, story)
            these = range(before_sentence, len(out.candidates))
            if started_on is not None:
                _date_medicines(out, these, started_on[0])
            discharged = st.stays.get("discharge")
            if story is None and discharged is not None and _made_on_the_stay(s, r):
                # "you came home on Friday the 6th" ... "the ramipril's gone up to 10 mg, and
                # they've stopped the bendroflumethiazide": a change the stay made, of the day
                # the patient went home with it (a result told with it is of some day of the stay)
                _date_medicines(out, these, discharged)
            added = out.candidates[before_sentence:]  # this sentence's, not the whole list's
            if not added and turn_starts and turn_starts[-1][0] == s.turn:
                # "I retired in March. My last day was the thirty-first.": the day of the month
                # its turn told just before
                _refine_days(out, r, s, range(turn_starts[-1][1], len(out.candidates)))
            if any(c.memory_type == "medication" and c.start == s.start for c in added):
                took_turn = s.turn  # what the patient takes: a drug said alone next is too
            self._note_topics(r, st)
        emit(self._flush_allergy(st), "patient")
        out.candidates = _uncorrected(out.candidates, sents_by_turn)
        return out

    @staticmethod
    def _family_answer(s: Sentence, asked: tuple[int, tuple[str, ...]]) -> Iterator[Item]:
        """A relative named in answer to a question about the family, with nothing more said
        of them ("Does anyone in your family have diabetes?" -- "Yes, my mum."): family
        history of what the question asked of, its evidence the question and the answer."""
        rel = relative_answered(s.text, s.relation)
        if rel is None:
            return
        start, disorders = asked
        for disorder in disorders:
            yield "condition", f"Family history ({rel}): {disorder}", 0.7, None, start, s.end

    def _confirmed(
        self, q: Sentence, qr: Named, answer: Sentence, ar: Named, st: State
    ) -> Iterator[Item]:
        """A clinician's question the patient confirmed, read as the patient's statement."""
        stmt = Sentence(q.text.rstrip(" ?") + ".", q.start, q.end, "patient", q.turn, sent=q.sent)
        read = Named(stmt, ar.session)
        for mtype, content, conf, created, _s, _e, *rest in self._sentence(
            stmt, read, st, extra_dates=ar.dates, confirmed=True
        ):
            yield mtype, content, conf - 0.05, created, q.start, answer.end, *rest

    def _sentence(
        self,
        s: Sentence,
        r: Named,
        st: State,
        *,
        extra_dates: Sequence[DateSpan] = (),
        confirmed: bool = False,
    ) -> Iterator[Item]:
        found = self._with_pronouns(r.drugs, s, st, confirmed) if r.drugs else []
        found = found or self._implicit_drugs(s, r, st, confirmed)
        if st.reactions_asked and s.speaker != "clinician" and r.drugs:
            st.side_effects_of = r.drugs  # "Sitagliptin, years ago. My joints ached."
        allergy = list(self._allergy(s, r, found, st))
        yield from allergy
        if not allergy:
            adverse = (
                list(self._adverse(s, r, found))
                or list(self._side_effect(s, r, found, st))
                or list(self._side_effects_told(s, r, st))
            )
            if s.speaker == "clinician":
                adverse = [_dated_as_told(item, r, st) for item in adverse]
            yield from adverse
            yield from self._medication(s, r, found, st, extra_dates, adverse, confirmed)
        yield from self._readings(s, r, st)
        yield from self._preference(s, r, st)
        yield from self._social(s, r)
        yield from self._habit_answer(s, r, st)
