"""The embedder interface: only :meth:`Embedder.embed_batch` is abstract."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]


class Embedder(ABC):
    """Turns texts into float32 vectors of a fixed dimension.

    ``model_id`` is stored with every vector: a store refuses vectors of another model.
    ``default_contradiction_threshold`` is the cosine at or above which two same-type memories
    are treated as the same subject: it is a property of the model, measured per model.
    """

    model_id: str
    dimensions: int
    default_contradiction_threshold: float = 0.85
    #: Measured per-type overrides of the threshold (types with free-text statements that
    #: share a topic without replacing each other need a higher cut).
    default_type_thresholds: dict[str, float] = {}  # noqa: RUF012 - read-only class default

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``; returns an array of shape ``(len(texts), dimensions)``."""

    def embed(self, text: str) -> F32:
        out: F32 = self.embed_batch([text])[0]
        return out

    def describe(self) -> dict[str, object]:
        return {
            "model_id": self.model_id,
            "dimensions": self.dimensions,
            "default_contradiction_threshold": self.default_contradiction_threshold,
            "default_type_thresholds": dict(self.default_type_thresholds),
            "class": type(self).__name__,
        }


def l2_normalize(matrix: npt.NDArray[np.floating]) -> F32:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: F32 = (matrix / norms).astype(np.float32)
    return out
