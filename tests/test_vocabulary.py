"""The clinical vocabulary (memory_core.vocabulary) and the weighted keyword query it feeds
(through the analysed question, memory_core.question): a clinician's concept words add the
terms a record uses, at a lower weight, never in place of the query's own words; the
explanations say which expansion a memory matched through."""

from __future__ import annotations

import numpy as np
import pytest

import memory_core as mc
from memory_core import vocabulary as voc
from memory_core.lexical import LexicalIndex, form, query_terms, stopwords, tokens
from memory_core.question import analyse

KIDNEY = "Is the patient's kidney function getting worse?"
DIABETES_MEDS = "Any problems with the diabetes medication?"


def _only(expansions: tuple[voc.Expansion, ...]) -> voc.Expansion:
    assert len(expansions) == 1, expansions
    return expansions[0]


def expand(query: str) -> tuple[voc.Expansion, ...]:
    return analyse(query).expansions


def weighted_terms(query: str) -> tuple[tuple[float, tuple[str, ...]], ...]:
    return analyse(query).groups


# --- the vocabulary itself ---------------------------------------------------------------------


def test_every_phrase_and_term_is_made_of_lexical_tokens() -> None:
    for c in voc.concepts():
        assert c.terms, c.name
        for t in c.terms:  # one searchable token each, as a record's text is tokenised
            assert tokens(t) == [t] and len(t) > 1 and t not in stopwords(), (c.name, t)
        for p in c.phrases:
            assert 1 <= len(tokens(p)) <= voc.MAX_PHRASE_WORDS, (c.name, p)
            assert any(w not in stopwords() and len(w) > 1 for w in tokens(p)), (c.name, p)


def test_the_groups_the_brief_names_are_there() -> None:
    by_name = {c.name: set(c.terms) for c in voc.concepts()}
    assert {"egfr", "creatinine"} <= by_name["kidney function"]
    assert {"egfr", "creatinine", "albumin", "uacr", "ckd"} <= by_name["kidney disease"]
    assert {"hba1c", "a1c", "glucose"} <= by_name["glucose control"]
    assert {"ldl", "hdl", "triglycerides"} <= by_name["lipids"]
    assert {"alt", "ast"} <= by_name["liver"]
    assert "tsh" in by_name["thyroid"]
    diabetes = {
        "metformin",
        "insulin",
        "glargine",
        "lispro",
        "empagliflozin",
        "dapagliflozin",
        "semaglutide",
        "liraglutide",
        "tirzepatide",
        "sitagliptin",
        "glipizide",
        "glimepiride",
        "pioglitazone",
    }
    assert diabetes <= by_name["diabetes medication"]
    bp = {"lisinopril", "losartan", "amlodipine", "metoprolol", "hydrochlorothiazide"}
    assert bp <= by_name["blood pressure medication"]
    assert {"atorvastatin", "rosuvastatin", "simvastatin"} <= by_name["cholesterol medication"]
    assert {"phone", "email", "text", "message", "portal"} <= by_name["contact"]
    # issue 32: the social history's slots, and drug classes by their lay names
    for slot in ("household", "job and working hours", "travel", "transport", "caregiver"):
        assert slot in by_name, slot
    assert {"ramadan", "fasting"} <= by_name["religious practice and fasting"]
    assert "language" in by_name and "alcohol" in by_name
    assert {"glargine", "detemir", "degludec"} <= by_name["basal insulin"]
    assert "lispro" not in by_name["basal insulin"]
    assert {"warfarin", "apixaban"} <= by_name["blood thinner"]
    assert {"furosemide", "hydrochlorothiazide"} <= by_name["diuretic"]
    assert "donepezil" in by_name["dementia medication"]


def test_a_two_word_concept_is_found_before_its_first_word() -> None:
    (via, concept), *rest = voc.find_concepts(KIDNEY)
    assert (via, concept.name, rest) == ("kidney function", "kidney function", [])
    (via, concept), *rest = voc.find_concepts("Any kidney damage?")
    assert (via, concept.name, rest) == ("kidney damage", "kidney disease", [])
    (via, concept), *rest = voc.find_concepts("How are the kidneys?")
    assert (via, concept.name, rest) == ("kidneys", "kidney disease", [])
    # a medication phrase is a drug class, not the body system of its qualifier
    (via, concept), *rest = voc.find_concepts(DIABETES_MEDS)
    assert (via, concept.name, rest) == ("diabetes medication", "diabetes medication", [])
    (via, concept), *rest = voc.find_concepts("Is the blood pressure medicine working?")
    assert (via, concept.name, rest) == ("blood pressure medicine", "blood pressure medication", [])
    names = [c.name for _, c in voc.find_concepts("kidney and liver and kidneys")]
    assert names == ["kidney disease", "liver"]  # each concept once


def test_a_phrase_is_found_whatever_the_form_of_its_words() -> None:
    # "lives with", "living with" and "live with" are one phrase: their words' forms
    for q in ("Who does she live with?", "Who is he living with?", "Anyone who lives with her?"):
        assert [c.name for _, c in voc.find_concepts(q)] == ["household"], q
    assert [c.name for _, c in voc.find_concepts("Is she on blood thinners?")] == ["blood thinner"]


def test_words_outside_the_vocabulary_add_nothing() -> None:
    assert expand("When did Sarah go to the beach with her dog?") == ()
    assert weighted_terms("beach dog") == ((1.0, ("beach",)), (1.0, ("dog",)))
    assert expand("") == ()


def test_the_expansion_weight_is_half_of_the_words_that_name_it() -> None:
    one = _only(expand("How are the kidneys?"))
    assert one.weight == voc.EXPANSION_WEIGHT == 0.5
    two = _only(expand(KIDNEY))
    assert (two.via, two.concept, two.weight) == ("kidney function", "kidney function", 1.0)
    # word forms, shown as the record writes them
    assert two.terms == ("egfr", "gfr", "creatinin", "cystatin", "urea", "bun")
    assert two.shown == ("egfr", "gfr", "creatinine", "cystatin", "urea", "bun")
    meds = _only(expand(DIABETES_MEDS))
    assert meds.weight == 1.0 and "metformin" in meds.terms
    assert meds.label("metformin") == "diabetes medication → metformin"


def test_expansion_adds_to_the_query_and_never_repeats_its_words() -> None:
    q = "Is the metformin or another diabetes medication upsetting the kidney function?"
    groups = weighted_terms(q)
    literal = [(1.0, (t,)) for t in query_terms(q)]
    assert list(groups[: len(literal)]) == literal  # the query's own words, as before
    added = groups[len(literal) :]
    assert added
    own = set(query_terms(q))
    for _, terms in added:
        assert not own & set(terms)
    meds = next(e for e in expand(q) if e.concept == "diabetes medication")
    assert "metformin" not in meds.terms and "insulin" in meds.terms


def test_a_brand_name_adds_its_generic_name() -> None:
    e = _only(expand("Is the Ozempic working?"))
    assert (e.via, e.concept, e.terms, e.weight) == (
        "ozempic",
        "semaglutide",
        ("semaglutid",),
        1.0,
    )
    assert e.label("semaglutid") == "ozempic → semaglutide"
    assert expand("Is the semaglutide working?") == ()  # a generic name is itself


def test_matched_names_the_expansion_and_the_term() -> None:
    q = analyse(KIDNEY)
    assert q.via("Patient's eGFR was 89 mL/min in November") == ("kidney function → egfr",)
    assert q.via("Creatinine 1.1") == ("kidney function → creatinine",)
    assert q.via("Patient walks a large dog") == ()
    assert analyse("beach dog").via("Patient's eGFR was 89") == ()


def test_the_question_names_the_words_a_memory_holds_in_another_form() -> None:
    q = analyse("Does the patient's job involve driving?")
    assert q.words_in("Patient drives a long-haul truck for work") == ("driving → drives",)
    assert analyse("Who does the patient live with?").words_in(
        "Patient lives with a spouse who cooks most meals"
    ) == ("live → lives",)
    assert analyse("insulin dose").words_in("Insulin doses were cut") == (
        "insulin",
        "dose → doses",
    )
    assert form("fasts") == form("fasting") == "fast"


# --- the weighted keyword query ----------------------------------------------------------------

DOCS = [
    "Patient to repeat kidney function tests in three months",
    "Patient's eGFR was 89 mL/min in November",
    "Patient's urine albumin-to-creatinine ratio was 102 mg/g",
    "Patient walks a large dog twice a day",
    "Patient's eGFR and creatinine were stable",
]


def test_weight_one_single_term_groups_are_the_plain_query() -> None:
    idx = LexicalIndex.build(DOCS)
    terms = query_terms("kidney function dog egfr")
    plain = idx.scores(terms)
    assert idx.weighted_scores([(1.0, (t,)) for t in terms]).tolist() == plain.tolist()
    assert (
        idx.search("kidney function dog egfr", 10)[0].tolist()
        == np.flatnonzero(plain > 0)[np.argsort(-plain[plain > 0], kind="stable")].tolist()
    )


def test_a_group_counts_once_through_its_best_term() -> None:
    idx = LexicalIndex.build(DOCS)  # the index holds word forms: "creatinine" is "creatinin"
    egfr, creat = idx.scores(["egfr"]), idx.scores([form("creatinine")])
    got = idx.weighted_scores([(0.5, ("egfr", form("creatinine"), "absent"))])
    assert got.tolist() == pytest.approx((0.5 * np.maximum(egfr, creat)).tolist(), abs=1e-15)
    assert got[4] < 0.5 * (egfr[4] + creat[4])  # both terms in row 4: the best one, not the sum
    assert idx.weighted_scores([(0.0, ("egfr",))]).tolist() == [0.0] * len(DOCS)
    assert idx.weighted_scores([(0.5, ("absent",))]).tolist() == [0.0] * len(DOCS)


def test_an_exact_word_beats_the_same_match_through_an_expansion() -> None:
    # "kidney" and "egfr" each in one document of the same length: a literal word counts
    # whole, the expansion of a one-word concept half
    idx = LexicalIndex.build(["kidney results", "egfr results", "dog walks", "cat naps"])
    rows, scores = idx.search_weighted(weighted_terms("kidney"), 10)
    assert rows.tolist() == [0, 1]
    assert scores[1] == pytest.approx(0.5 * scores[0])


def test_the_engine_finds_a_lab_by_its_body_system_and_explains_it(
    engine: mc.MemoryEngine,
) -> None:
    ids = [
        engine.add_memory("NW-9", text, mtype).memory.id
        for text, mtype in [
            ("Patient's eGFR was 58 mL/min in October", "lab_result"),
            ("Patient walks a large dog twice a day", "social"),
            ("Patient prefers morning appointments", "preference"),
        ]
    ]
    [(hit, bm25)] = engine.keyword_search("NW-9", KIDNEY)
    assert hit.id == ids[0] and bm25 > 0
    got = engine.retrieve("NW-9", KIDNEY, k=3, record_access=False)
    top = got[0]
    assert top.memory.id == ids[0] and top.keyword_rank == 1 and top.bm25 == bm25
    assert top.keyword_via == ("kidney function → egfr",)
    assert all(s.keyword_via == () for s in got[1:])
    items = engine.build_context("NW-9", KIDNEY, record_access=False).items
    assert items[0].scored.keyword_via == ("kidney function → egfr",)
