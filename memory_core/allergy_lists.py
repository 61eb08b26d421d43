"""An allergy list read as a list: an empty one ("NKDA", "Allergies: none"), what it says there
is none of (drugs, foods, everything), and whether it covers a given allergy. Read by the
offline verdict (:mod:`memory_core.adjudicate`): "NKDA" and an allergy it covers are one
subject whatever their cosine."""

from __future__ import annotations

from functools import lru_cache

from . import drugs
from . import statement as st
from .verdict_words import FOOD_ALLERGENS, LIST_SCOPES, NO_ALLERGIES


@lru_cache(maxsize=65_536)
def no_allergies(text: str) -> bool:
    """The statement is an empty allergy list ("NKDA", "No known drug allergies", "Allergies:
    none", "Allergies reviewed at triage: NKDA"), its last clause whole (not "no known allergy
    to latex")."""
    return bool(NO_ALLERGIES.search(text.strip()))


def list_scope(text: str) -> str:
    """ "drug", "food" or "all": what an empty allergy list says there is none of."""
    return next((scope for rx, scope in LIST_SCOPES if rx.search(text)), "all")


def _allergy_scope(text: str) -> str:
    """ "drug", "food" or "other" (latex, dander, venom, nickel): what an allergy is to."""
    names = st.agents(st.drug_names(text))
    if not names:
        return "other"
    if names <= FOOD_ALLERGENS:
        return "food"
    return "drug" if names - frozenset(drugs.non_drug_allergens()) else "other"


def lists_cover(older: str, newer: str) -> bool:
    """The empty list of one of the two covers the allergy of the other ("NKDA" covers a
    codeine allergy, not a latex or a peanut one)."""
    empty, allergy = (older, newer) if no_allergies(older) else (newer, older)
    scope = list_scope(empty)
    return scope == "all" or scope == _allergy_scope(allergy)
