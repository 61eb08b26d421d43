"""The drug dictionary read as an exact-match map (memory_core.drugs): the same matches as the
package's own finder without fuzzy matching, so dropping its n-gram index changes no answer."""

from __future__ import annotations

import pytest

from memory_core import drugs

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
