"""Default base importance by memory type, plus permanence keywords (domain.md)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from .values import MemoryType

CLINICAL: dict[str, float] = {
    "allergy": 10,
    "adverse_reaction": 9,
    "medication": 7,
    "condition": 7,
    "treatment_response": 7,
    "care_plan": 7,
    "lab_result": 6,
    "vital_sign": 5,
    "preference": 5,
    "social": 4,
    "observation": 4,
    "immunization": 4,
    "procedure": 4,
    "intermediate_step": 2,
}
CLINICAL_DEFAULT = 5.0

#: The clinical memory types (about a patient, as a clinician would file them): the LLM
#: extractor may propose only these.
CLINICAL_TYPES: tuple[str, ...] = tuple(t for t in CLINICAL if t != "intermediate_step")

#: Types a coded record fills (FHIR vitals, immunizations, procedures; a transcript's vital
#: readings): decided by their codes and values, not covered by the labelled pair set.
RECORD_TYPES: tuple[str, ...] = ("vital_sign", "immunization", "procedure")

GENERAL: dict[str, float] = {  # 0-1 scale, x10 for storage
    "user_preference": 0.95,
    "explicit_instruction": 0.9,
    "task_result": 0.6,
    "observation": 0.4,
    "intermediate_step": 0.2,
}
GENERAL_DEFAULT = 0.5

#: Types pinned by default (clinical safety): they never decay unless a reviewer unpins them.
PINNED_BY_DEFAULT = frozenset({"allergy"})

#: Types that are safety-critical in the injected context (kept first under a budget).
SAFETY_TYPES = frozenset({"allergy", "adverse_reaction"})

#: History that stays true after a medication or condition changes (domain.md, "Flags and
#: annotations"): a reaction to the drug, an allergy, a past result. Never flagged possibly stale.
HISTORY_TYPES = frozenset({"adverse_reaction", "allergy", "lab_result"})

#: The memory types, in the enum's order (an unknown type is refused: validation.memory_type).
KNOWN_TYPES: tuple[str, ...] = tuple(t.value for t in MemoryType)

PERMANENCE_WORDS = ("always", "never", "prefer", "remember")
# a word that starts with one of them counts ("prefers", "remembered"), each word once
_PERMANENCE = re.compile(r"\b(" + "|".join(PERMANENCE_WORDS) + r")\w*", re.IGNORECASE)


@lru_cache(maxsize=65_536)
def permanence_hits(content: str) -> int:
    """How many distinct permanence words the content contains (prefix match); kept per text
    (a bulk add of 20,000 records holds 7,096 texts)."""
    if content.isascii():  # then a case-insensitive match is a match of the lower-cased text
        low = content.lower()
        if not any(w in low for w in PERMANENCE_WORDS):
            return 0
    return len({m.group(1).lower() for m in _PERMANENCE.finditer(content)})


def default_importance(
    memory_type: str, content: str, rules: Literal["clinical", "general"] = "clinical"
) -> float:
    """Base importance on the 1-10 scale: the type's default plus 1 (0.1 on the 0-1 scale) per
    permanence word, capped at 10."""
    bonus = permanence_hits(content)
    if rules == "general":
        base01 = GENERAL.get(memory_type, GENERAL_DEFAULT)
        return round(min(base01 + 0.1 * bonus, 1.0) * 10.0, 6)
    base = CLINICAL.get(memory_type, CLINICAL_DEFAULT)
    return float(min(base + bonus, 10.0))


def default_pinned(memory_type: str) -> bool:
    return memory_type in PINNED_BY_DEFAULT
