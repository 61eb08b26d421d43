"""What an extractor proposes and a reviewer accepts: values only, nothing is written here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import MemoryCoreError


class ExtractionError(MemoryCoreError):
    """The extractor as a whole failed (unreachable endpoint, timeout, unreadable answer);
    nothing was proposed."""


@dataclass(frozen=True)
class Supersedes:
    """One active memory a proposal would supersede if saved (the save's own dry run)."""

    memory_id: str
    content: str
    similarity: float
    mode: str  # "auto" (demoted on save) | "review" (waits for a reviewer)
    rule: str = ""  # the decision table's rule (memory_core.facts.rules)
    evidence: str = ""  # why, in plain words


@dataclass(frozen=True)
class Proposal:
    """A memory an extractor proposes from a transcript (or a FHIR resource): the statement,
    its type and importance, the evidence span ``transcript[start:end]`` (``evidence``), the
    extractor's confidence (0-1), what saving it would supersede, and the ``source`` it would
    be saved with."""

    patient_id: str
    content: str
    memory_type: str
    importance: float
    start: int
    end: int
    evidence: str
    confidence: float
    source: str
    created_at: datetime
    supersedes: tuple[Supersedes, ...] = ()
    extractor: str = "rule"
    #: the extraction it came from and its number there (1..N): its memory's id is derived
    #: from both, so saving the batch again (a double click) writes nothing new
    batch_id: str = ""
    number: int = 0
    #: whose fact it is: "patient", or "family history" (a relative's condition, kept in the
    #: patient's record as their family history -- never the patient's own condition)
    whose: str = "patient"
    #: the words that date it, when they are not in its evidence ("" when they are)
    dated_by: str = ""


@dataclass(frozen=True)
class Rejected:
    """An item an extractor returned that failed validation: reported, never written."""

    index: int
    reason: str
    item: str = ""


class Proposals(list[Proposal]):
    """The proposals of one extraction (a list), with ``rejected``: the items that failed
    validation and were dropped, each with its reason; ``batch_id``: the extraction's id, which
    each proposal carries."""

    def __init__(
        self,
        items: Iterable[Proposal] = (),
        rejected: Iterable[Rejected] = (),
        batch_id: str = "",
    ) -> None:
        super().__init__(items)
        self.rejected: list[Rejected] = list(rejected)
        self.batch_id = batch_id


@dataclass(frozen=True)
class Candidate:
    """An extractor's raw item, before validation: ``start``/``end`` index the transcript."""

    content: str
    memory_type: str
    start: int
    end: int
    confidence: float
    importance: float | None = None
    patient_id: str | None = None
    created_at: datetime | None = None
    whose: str = "patient"
    #: where the transcript says the date, when not in the evidence ("Your blood tests from the
    #: 12th of May" dates the potassium said three turns later)
    dated_by: tuple[int, int] | None = None


@dataclass
class Extraction:
    """What an extractor returns: candidates and the items it already had to reject."""

    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    method: str = "rule"
