"""The drug dictionary read as an exact-match map (memory_core.drugs): the same matches as the
package's own finder without fuzzy matching, so dropping its n-gram index changes no answer."""

from __future__ import annotations

import pytest

from memory_core import drugs
from memory_core.facts import decide_texts

TEXTS = [
    "Patient switched from Glucophage XR to metformin 1000 mg",
    "Ozempic weekly, then Jardiance added",
    "Patient's cholesterol is treated with atorvastatin 20mg nightly",
    "Dry cough on lisinopril; switched to losartan",
    "insulin glargine 20 units at night",
    "Penicillin allergy with hives; sulfa drugs cause rash",
    "LDL cholesterol 131 and vitamin D low",
    "Patient walks after dinner",
]


def test_the_map_finds_what_the_package_finds() -> None:
    find_drugs = pytest.importorskip("drug_named_entity_recognition").find_drugs
    for text in TEXTS:
        words = [w for w, _, _ in drugs._tokens(text)]
        want = [
            (str(info.get("name") or words[a]), a, b)
            for info, a, b in find_drugs(words, is_ignore_case=True)
        ]
        assert sorted(drugs._find(words)) == sorted(want), text


def test_brands_resolve_to_generics() -> None:
    names = drugs.canonical_names("Glucophage XR, Ozempic, Lipitor and Zestril")
    assert {"metformin", "semaglutide", "atorvastatin", "lisinopril"} <= names
    assert drugs.canonical_names("Patient walks after dinner") == frozenset()


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # one name per combination, whatever order or separator the writer chose
        ("Bactrim DS BID", "sulfamethoxazole/trimethoprim"),
        ("sulfamethoxazole/trimethoprim allergy", "sulfamethoxazole/trimethoprim"),
        ("trimethoprim/sulfamethoxazole allergy", "sulfamethoxazole/trimethoprim"),
        ("co-trimoxazole 960 mg BD", "sulfamethoxazole/trimethoprim"),
        ("TMP-SMX for the UTI", "sulfamethoxazole/trimethoprim"),
        ("amoxicillin/clavulanate 875 mg", "amoxicillin/clavulanic acid"),
        ("amoxicillin-clavulanate 875 mg", "amoxicillin/clavulanic acid"),
        ("sulfamethoxazole-trimethoprim 800/160", "sulfamethoxazole/trimethoprim"),
        ("Augmentin 875 mg", "amoxicillin/clavulanic acid"),
        ("Advair 250/50 one puff BID", "fluticasone/salmeterol"),
        ("Seretide 250 inhaler", "fluticasone/salmeterol"),
        ("losartan/HCTZ 50/12.5", "hydrochlorothiazide/losartan"),
        ("Hyzaar 100/25", "hydrochlorothiazide/losartan"),
    ],
)
def test_a_combination_has_one_name(text: str, want: str) -> None:
    assert drugs.canonical_names(text) == {want}


def test_a_slash_between_numbers_or_words_is_no_combination() -> None:
    assert drugs.canonical_names("BP 120/80 and/or HR 72") == frozenset()
    # a drug joined to a word that is none is that drug alone, not a combination (the facts
    # reader needs "lisinopril-induced cough" to name lisinopril)
    assert drugs.canonical_names("Lisinopril-induced cough, follow-up x-ray") == {"lisinopril"}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("I take cod liver oil every day", "cod liver oil"),  # a spelling of three words
        ("Still on the nicotine patches, one a day", "nicotine patch"),  # its plural
        ("She's on the nicotine lozenges", "nicotine"),
        ("And the nicotine inhalator for the cravings", "nicotine"),
        ("Thiamine, one tablet three times a day", "thiamine"),
        ("vitamin B1 100 mg", "thiamine"),
        ("Started iron tablets last month", "iron"),
        ("Takes magnesium supplements at night", "magnesium"),
        # herbal products the dictionary lacks
        ("Black seed oil, one spoon in the morning", "nigella sativa"),
        ("Omega 3 capsules daily", "omega-3 fatty acids"),
        ("Garlic capsules for her blood pressure", "garlic"),
        ("Started probiotics after the antibiotics", "probiotics"),
        # night-time products are another product than the painkiller they are named after
        ("Tylenol PM 2 tabs at bedtime", "acetaminophen/diphenhydramine"),
        ("Nytol one at night", "diphenhydramine"),
    ],
)
def test_over_the_counter_products_people_name_resolve(text: str, want: str) -> None:
    """Supplements and over-the-counter products as people name them (issue 31: "over-the-counter
    and herbal products are medications"): a spelling of any length, a product's plural, a
    nutrient named as a tablet or a supplement."""
    assert want in [m.name for m in drugs.resolve(text)]


def test_a_nutrient_alone_is_no_medicine() -> None:
    """ "Iron 8 umol/L", "magnesium 0.6": a nutrient named alone is a result, not a drug."""
    assert drugs.resolve("Iron 8 umol/L, ferritin 12") == []
    assert drugs.resolve("Magnesium 0.6 mmol/L") == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("So the furosemide's gone up, from 40 to 80 in the morning.", "furosemide"),
        ("Correct, the amlodipine\u2019s stopped.", "amlodipine"),
        ("Paracetamol's the safer one for you.", "acetaminophen"),
        # the supplement's names too (products the dictionary does not list)
        ("Cod liver oil's fine to carry on with.", "cod liver oil"),
        ("The glucosamine’s been helping.", "glucosamine"),
    ],
)
def test_a_drug_named_with_a_contracted_is_or_has_is_that_drug(text: str, name: str) -> None:
    """ "the furosemide's gone up": the drug's name with "'s" (is, has, or a possessive) is the
    drug; its span is the name alone."""
    got = drugs.resolve(text)
    assert [d.name for d in got] == [name]
    assert got[0].text.lower() in (
        "furosemide",
        "amlodipine",
        "paracetamol",
        "cod liver oil",
        "glucosamine",
    )


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Ferrous sulphate 200 mg TDS", "ferrous sulfate"),  # British spelling, not listed
        ("Oestrogen patch twice weekly", "estrogen"),
        ("Colecalciferol 800 units daily", "cholecalciferol"),  # the INN and the USAN: one drug
        ("Magnesium sulphate infusion", "magnesium sulfate"),  # listed as written: unchanged
    ],
)
def test_british_spellings_resolve_to_the_drug(text: str, want: str) -> None:
    """A British spelling the dictionary lacks is looked up in American letters (drugs.json's
    uk_spellings): 'ferrous sulphate' had named no drug at all."""
    assert [m.name for m in drugs.resolve(text)] == [want]


@pytest.mark.parametrize(
    ("older", "newer", "stop"),
    [
        ("Alendronic acid 70 mg once weekly", "Alendronate 70mg weekly",  # UK and US names
         "Alendronate stopped."),
        ("Risedronate 35 mg weekly", "risedronic acid 35 mg once a week",
         "Risedronic acid stopped."),
        ("Aspirin 75 mg daily", "Low-dose aspirin 75 mg daily",  # a dose word in the name
         "Low-dose aspirin stopped."),
        ("Aspirin 75 mg daily", "Nu-Seals 75 mg daily", "Nu-Seals stopped."),  # its brand
    ],
)  # fmt: skip
def test_one_drugs_two_dictionary_names_are_one_drug(older: str, newer: str, stop: str) -> None:
    """The dictionary files some drugs under two names: "-ic acid" and "-ate" (one has a
    MedlinePlus page: that is the name of both), and "low-dose aspirin". "Alendronate
    stopped" had superseded nothing of "Alendronic acid 70 mg once weekly": the agent was still
    told she takes it."""
    assert {m.name for m in drugs.resolve(older)} == {m.name for m in drugs.resolve(newer)}
    d = decide_texts(older, stop, "medication")
    assert d.supersedes and d.rule == "drug.stop", d


def test_two_names_are_one_only_where_medlineplus_names_one() -> None:
    """Nitric acid and nitrate (no medicine page for either) stay apart; the pairs joined are
    those the dictionary gives, as data (drugs.json's same_moiety)."""
    drugs.resolve("aspirin")  # loads the dictionary
    assert drugs._moiety["alendronic acid"] == "alendronate"
    assert "nitric acid" not in drugs._moiety and "nitrate" not in drugs._moiety
    assert "valproic acid" not in drugs._moiety  # "valproate" resolves to it already


@pytest.mark.parametrize("text", ["the St John's wort", "st johns wort", "Saint John's wort"])
def test_st_johns_wort_is_named_with_its_saint(text: str) -> None:
    """'There's the St John's wort': the name as written is the whole name (it had been
    "John's wort", and proposals read "Patient stopped john's wort")."""
    (m,) = drugs.resolve(text)
    assert m.name == "st john's wort" and m.text.lower().startswith(("st", "saint"))


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Trelegy Ellipta one puff daily", {"fluticasone furoate", "umeclidinium", "vilanterol"}),
        ("Relvar 92/22 one puff daily", {"fluticasone furoate", "vilanterol"}),
        ("Spiolto Respimat two puffs daily", {"olodaterol", "tiotropium"}),
        ("Flutiform 125 two puffs twice daily", {"fluticasone", "formoterol"}),
        ("DuoResp Spiromax 160/4.5", {"budesonide", "formoterol"}),
        ("Incruse Ellipta", {"umeclidinium"}),
    ],
)
def test_common_inhaler_brands_name_their_ingredients(text: str, want: set[str]) -> None:
    """Inhalers a UK respiratory review names every day that the dictionary lacks (a dev
    transcript's "switch you from the Anoro to Trelegy" proposed nothing): their ingredients,
    by the dictionary's own names (an ingredient's salt as the dictionary writes Anoro's)."""
    (m,) = drugs.resolve(text)
    got = {drugs._canonical(i).split(" bromide")[0] for i in drugs.ingredients(m.name)}
    assert got == want, m.name


def test_beclometasone_and_beclomethasone_are_one_drug() -> None:
    """The INN and the USAN of one steroid (Fostair's "beclometasone", Clenil's
    "beclomethasone"): one canonical name, so a switch from Clenil to Fostair is read as one."""
    assert drugs.canonical_names("beclometasone") == drugs.canonical_names("Clenil")
    assert "beclomethasone" in drugs.ingredients(next(iter(drugs.canonical_names("Fostair"))))


@pytest.mark.parametrize(
    "text",
    [
        "Donepezil stays at 10 milligrams, but moves to the morning.",
        "Take it at 10 each night.",
    ],
)
def test_a_spelling_of_function_words_and_numbers_names_no_drug(text: str) -> None:
    """The dictionary lists the brand AT-10 (dihydrotachysterol) as "at 10": in free text those
    words are a time or a dose ("stays at 10 milligrams"), never the drug. A dictionary spelling
    made only of the lexicon's function words and numbers names no drug; a real name beside it
    still does."""
    assert "dihydrotachysterol" not in drugs.canonical_names(text), text
    assert "donepezil" in drugs.canonical_names("Donepezil at 10 mg")
