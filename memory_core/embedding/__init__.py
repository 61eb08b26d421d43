"""Embedders: MiniLM on onnxruntime (default), OpenAI/Azure OpenAI, and hashing (tests)."""

from __future__ import annotations

from .base import Embedder
from .hashing import HashingEmbedder

__all__ = ["Embedder", "HashingEmbedder", "make_embedder"]


def make_embedder(spec: str | Embedder) -> Embedder:
    """``"minilm"`` | ``"hashing"`` | ``"openai:<model>"`` (or an Embedder instance)."""
    from ..errors import ConfigurationError

    if isinstance(spec, Embedder):
        return spec
    if not isinstance(spec, str):
        raise ConfigurationError(
            f"embedder must be 'minilm', 'hashing', 'openai:<model>' or an Embedder, got "
            f"{type(spec).__name__}"
        )
    if spec == "minilm":
        from .minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if spec == "hashing":
        return HashingEmbedder()
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder(spec.split(":", 1)[1])
    raise ConfigurationError(
        f"unknown embedder {spec!r}: use 'minilm', 'hashing' or 'openai:<model>'"
    )
