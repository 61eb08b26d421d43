"""Memories from where they come from: session transcripts (proposed, reviewed, then saved),
FHIR R4 bundles and FHIR Bulk Data exports. Uses only the engine's public API."""

from __future__ import annotations

from .fhir import FhirImportReport, FhirItem, FhirSupersession
from .fhir_bulk import BulkImportReport, PatientResult
from .llm import LLMExtractor
from .proposals import ExtractionError, Proposal, Proposals, Rejected, Supersedes
from .rules import RuleExtractor
from .service import accept_proposals, extract_memories, import_fhir, import_fhir_bulk

__all__ = [
    "BulkImportReport",
    "ExtractionError",
    "FhirImportReport",
    "FhirItem",
    "FhirSupersession",
    "LLMExtractor",
    "PatientResult",
    "Proposal",
    "Proposals",
    "Rejected",
    "RuleExtractor",
    "Supersedes",
    "accept_proposals",
    "extract_memories",
    "import_fhir",
    "import_fhir_bulk",
]
