"""The offline extractor: hand-written rules over a session transcript read as a dialogue (no
model, no network).

Reading a dialogue (:mod:`.dialogue` has the turns and speakers), in one pass:

- a clinician's question the patient confirms ("You're on dapagliflozin 10 mg now?" / "That's
  right") is read as the patient's statement; its evidence spans question and answer, and a
  date said in the answer ("Yes, since August") belongs to it;
- "it", "that", "them" governed by a medication verb ("stopped it", "it gave me") refer to the
  drug talked about last, "it was 2.6" to the measurement; an answer that names only a dose or
  a value ("5 mg every evening", "82.5 kg this morning") is about what the question asked;
- a reaction named in answer to a question about allergies (hives, swelling, anaphylaxis, a
  rash: the lexicon's allergic reactions) is an allergy to the substance the answer names,
  even when the substance and the reaction are two sentences ("Penicillin. It gave her a
  rash."); another finding there (vomiting) is an intolerance, an adverse reaction;
- values and dates are paired by place (:mod:`.sentence`): "7.4 % last week, down from 8.1 % in
  June" is two readings, each with its own date; a date said once after a list of results
  dates them all;
- a sentence about another person (:func:`.dialogue.about_other`) proposes nothing for this
  patient, nor does a sentence that opens with its verb right after one ("My dad had lung
  cancer. Smoked sixty a day."); negated and hypothetical talk proposes nothing; decimal commas
  are decimals;
- a story told in the past under one date dates the undated sentences after it in the turn
  ("I went to A&E on Saturday. They stopped the ramipril."), "since then" the date said last;
- a clinician's statement with a question tag ("..., is that right?") is a statement; a dose
  said right after the drug alone ("Furosemide. I'm on 80 mg now.") is that drug's;
- a start, stop or dose change said for a later day ("next Monday I stop the aspirin", "On
  Monday, reduce the prednisolone to 20 mg": a day with no direction in a sentence that tells
  nothing done is the next one) is a plan, with the day in its words; a drug's start or change
  told with its date dates the dose said of it in the next two turns.

What it proposes: allergies (with reaction and severity), medications (taking, started, stopped
with the reason and date, switched, re-dosed), adverse reactions, lab results and vital signs
(every analyte and vital the lexicon knows, with value, unit and date), preferences
(appointment times, contact channel, written instructions, language) and social facts
(household, smoking, work, family help), each a statement in the product's style ("Patient
..."), the sentence (or question and answer) as its evidence. Vocabulary: drugs through the drug
dictionary and its supplement; analytes, findings, frequencies, dose units and the chart slots
from the clinical lexicon. Time: every rule reads a bounded window of one sentence, so
extraction is linear in the transcript's length.

Its modules, by subject (the words each rule reads are grammar; the clinical vocabulary is the
lexicon's): :mod:`.extractor` (:class:`RuleExtractor`, the pass over the dialogue),
:mod:`.topics` (what the talk is about, and the drugs said without a name), :mod:`.allergies`
(allergies and reactions), :mod:`.medicines` (medications), :mod:`.changes` (the words of a
medicine taken or changed), :mod:`.doses` (a dose or a drug said alone), :mod:`.results`
(results and vital signs, and the numbers taken back), :mod:`.social` (preferences and social
history), :mod:`.shaping` (a sentence as the rules read it), :mod:`.telling` (when what is told
happened), :mod:`.whose` (whom a sentence is of), :mod:`.answers` (what an answer confirms),
:mod:`.base` (what the modules share).
"""

from __future__ import annotations

from ..dialogue import Sentence, sentences
from .base import Item as Item
from .extractor import RuleExtractor
from .medicines import MAX_REASON_WORDS as MAX_REASON_WORDS
from .telling import TOLD_TURNS as TOLD_TURNS
from .telling import Story as Story
from .topics import _governed as _governed

__all__ = ["RuleExtractor", "Sentence", "sentences"]
