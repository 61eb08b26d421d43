"""Memories from where they come from: session transcripts (proposed, reviewed, then saved)
and FHIR R4 bundles. Uses only the engine's public API."""

from __future__ import annotations

from .fhir import FhirImportReport, FhirItem, FhirSupersession
from .llm import LLMExtractor
from .proposals import ExtractionError, Proposal, Proposals, Rejected, Supersedes
from .rules import RuleExtractor
from .service import accept_proposals, extract_memories, import_fhir

__all__ = [
    "ExtractionError",
    "FhirImportReport",
    "FhirItem",
    "FhirSupersession",
    "LLMExtractor",
    "Proposal",
    "Proposals",
    "Rejected",
    "RuleExtractor",
    "Supersedes",
    "accept_proposals",
    "extract_memories",
    "import_fhir",
]
