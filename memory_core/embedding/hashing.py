"""A dependency-free hashing embedder (character n-grams). For fast unit tests only: it is
lexical, so a paraphrase scores far lower than under a real sentence model."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

from .base import F32, Embedder, l2_normalize

_TOKEN = re.compile(r"[a-z0-9%.]+")


class HashingEmbedder(Embedder):
    default_contradiction_threshold = 0.75

    def __init__(self, dimensions: int = 384, ngram: tuple[int, int] = (3, 5)) -> None:
        self.dimensions = dimensions
        self.ngram = ngram
        self.model_id = f"hashing-{ngram[0]}{ngram[1]}-{dimensions}"

    def embed_batch(self, texts: Sequence[str]) -> F32:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        lo, hi = self.ngram
        for row, text in enumerate(texts):
            for word in _TOKEN.findall(text.lower()):
                w = f" {word} "
                # the whole word counts double: exact drug names dominate
                out[row, zlib.crc32(w.encode()) % self.dimensions] += 2.0
                for n in range(lo, hi + 1):
                    for i in range(max(1, len(w) - n + 1)):
                        h = zlib.crc32(w[i : i + n].encode())
                        out[row, h % self.dimensions] += 1.0 if h & 1 << 31 else -1.0
        return l2_normalize(out)
