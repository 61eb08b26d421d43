"""OpenAI / Azure OpenAI embeddings through the ``openai`` package (the LLM adjudicator,
:mod:`memory_core.adjudicate_llm`, uses the same client). Nothing is sent anywhere unless a
user configures an endpoint (key from the environment or ``.streamlit/secrets.toml``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConfigurationError
from .base import F32, Embedder, l2_normalize

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def schema_request(
    model: str, name: str, schema: dict[str, Any], system: str, user: str
) -> dict[str, Any]:
    """A chat-completions request body (kwargs of ``chat.completions.create``) whose answer
    must follow ``schema`` strictly, at temperature 0: the form both LLM calls use (the
    adjudicator's verdict, the transcript extractor's proposals)."""
    return {
        "model": model,
        "temperature": 0,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": schema},
        },
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    }


def make_client(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    azure_endpoint: str | None = None,
    api_version: str | None = None,
) -> Any:
    """An ``openai.OpenAI`` or ``openai.AzureOpenAI`` client from arguments or environment
    (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``; ``AZURE_OPENAI_ENDPOINT``, ``AZURE_OPENAI_API_KEY``,
    ``OPENAI_API_VERSION``)."""
    import openai

    azure_endpoint = azure_endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT")
    if azure_endpoint:
        key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
        if not key:
            raise ConfigurationError("AZURE_OPENAI_ENDPOINT is set but AZURE_OPENAI_API_KEY is not")
        return openai.AzureOpenAI(
            azure_endpoint=azure_endpoint,
            api_key=key,
            api_version=api_version or os.environ.get("OPENAI_API_VERSION", "2024-10-21"),
        )
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ConfigurationError(
            "no OpenAI endpoint configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an "
            "OpenAI-compatible server) or AZURE_OPENAI_ENDPOINT + AZURE_OPENAI_API_KEY"
        )
    return openai.OpenAI(api_key=key, base_url=base_url or os.environ.get("OPENAI_BASE_URL"))


class OpenAIEmbedder(Embedder):
    default_contradiction_threshold = 0.85  # ada-era models; measure for yours

    def __init__(self, model: str, dimensions: int | None = None, client: Any = None) -> None:
        self.model = model
        dims = dimensions or KNOWN_DIMENSIONS.get(model)
        if dims is None:
            raise ConfigurationError(f"unknown dimensions for embedding model {model!r}")
        self.dimensions = dims
        self.model_id = f"openai:{model}"
        self._client = client if client is not None else make_client()

    def embed_batch(self, texts: Sequence[str]) -> F32:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        kwargs: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self.model.startswith("text-embedding-3"):
            kwargs["dimensions"] = self.dimensions
        resp = self._client.embeddings.create(**kwargs)
        rows = sorted(resp.data, key=lambda d: d.index)
        matrix = np.array([r.embedding for r in rows], dtype=np.float32)
        return l2_normalize(matrix)
