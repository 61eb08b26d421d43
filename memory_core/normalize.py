"""The one text normaliser every reader (the facts reader, the transcript extractor, the
question reader) and the sanitiser read through (issue 30). Pure: no I/O.

What a reader sees of a text, never what is stored or shown (the original text is kept):

* **invisible characters removed** -- format characters (Unicode category ``Cf``: the soft
  hyphen, zero-width space and joiners, the byte-order mark, word joiner, bidi embeddings,
  overrides and isolates), variation selectors and the combining grapheme joiner:
  "co\\u00addeine" and "code\\u200bine" read as "codeine";
* **compatibility forms folded** (NFKD, per character): fullwidth letters and punctuation
  ("ＳＹＳＴＥＭ：" -> "SYSTEM:"), mathematical alphanumerics ("𝐒𝐘𝐒𝐓𝐄𝐌"), ligatures ("ﬁ"),
  superscripts ("m²" -> "m2"), "℃" -> "°C"; accents dropped ("Ménière" -> "Meniere");
* **look-alike letters folded** to the Latin letters they imitate (:data:`LOOK_ALIKES`: the
  Cyrillic "Ѕ" of "Ѕystem", Greek capitals, the micro sign's mu -> "u" so "µg" reads "ug"),
  and look-alike signs to ASCII (the minus sign, the fraction and division slashes, the
  angle brackets and bars of a chat template's special tokens).

Each output character comes from one input character, so :func:`fold_with_map` can give, for
any span of the folded text, the span of the original it was read from (the sanitiser keeps
the original words; a transcript's evidence points into the transcript as written).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

#: Letters and signs that imitate ASCII ones, by what they imitate (Unicode's confusables for
#: Latin letters in the Cyrillic, Greek and Armenian blocks, and the signs a number is written
#: with). Greek small letters used as themselves in clinical text (alpha, beta, gamma, kappa)
#: are not folded: "β-blocker" stays as written.
_IMITATES: dict[str, str] = {
    "A": "АΑ",
    "B": "ВΒ",
    "C": "СϹ",
    "E": "ЕΕ",
    "H": "НΗ",
    "I": "ІΙӀ",
    "J": "Ј",
    "K": "КΚ",
    "M": "МΜ",
    "N": "Ν",
    "O": "ОΟՕ",
    "P": "РΡ",
    "S": "Ѕ",
    "T": "ТΤ",
    "X": "ХΧ",
    "Y": "ҮΥ",
    "Z": "Ζ",
    "a": "а",
    "c": "сϲ",
    "d": "ԁ",
    "e": "е",
    "h": "һհ",
    "i": "іι",
    "j": "ј",
    "n": "ո",
    "o": "оοօ",
    "p": "рρ",
    "q": "ԛ",
    "s": "ѕ",
    "u": "μυս",  # the micro sign reads as NFKD's mu: "µg" -> "ug", "µmol/L" -> "umol/L"
    "v": "ν",
    "w": "ԝ",
    "x": "хχ×",  # and the multiplication sign ("×10⁹/L")
    "y": "уү",
    "-": "\u2212\u2010\u2011",  # minus sign, hyphen, non-breaking hyphen
    "/": "\u2044\u2215",  # fraction slash, division slash
    # the brackets and bars a chat template's special token is written with (DeepSeek's
    # "<｜User｜>" and its look-alikes; the fullwidth forms fold through NFKD already)
    "<": "\u2039\u3008\u27e8",  # ‹ 〈 ⟨
    ">": "\u203a\u3009\u27e9",  # › 〉 ⟩
    "|": "\u2223\u01c0\u2502\u2758\u23d0\ufe31",  # ∣ ǀ │ ❘ ⏐ ︱
}
LOOK_ALIKES: dict[str, str] = {ch: plain for plain, chars in _IMITATES.items() for ch in chars}

#: Characters a reader never sees besides the ``Cf`` category: variation selectors, the
#: combining grapheme joiner, Mongolian free variation selectors, Hangul fillers.
_ALSO_INVISIBLE = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE10)]
    + [chr(c) for c in range(0x180B, 0x1810)]
    + ["\u034f", "\u115f", "\u1160", "\u3164", "\uffa0"]
)


def invisible(ch: str) -> bool:
    """A character that shows nothing and joins or separates nothing a reader should see."""
    return ch in _ALSO_INVISIBLE or unicodedata.category(ch) == "Cf"


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """What one character reads as: "" when invisible, else its compatibility decomposition
    without combining marks, each look-alike folded."""
    if invisible(ch):
        return ""
    if ch in LOOK_ALIKES:  # before NFKD, which would make "︱" an em dash
        return LOOK_ALIKES[ch]
    out = []
    for c in unicodedata.normalize("NFKD", ch):
        if unicodedata.combining(c) or invisible(c):
            continue
        out.append(LOOK_ALIKES.get(c, c))
    return "".join(out)


#: Vulgar fractions read as decimals ("1½ tablets" is 1.5, "½ tablet" 0.5), not as NFKD's
#: "1⁄2" (which after a digit would read "11/2").
FRACTIONS: dict[str, str] = {
    "½": ".5", "¼": ".25", "¾": ".75", "⅓": ".33", "⅔": ".67", "⅛": ".125", "⅜": ".375",
    "⅝": ".625", "⅞": ".875", "⅕": ".2", "⅖": ".4", "⅗": ".6", "⅘": ".8",
}  # fmt: skip


def _pieces(text: str) -> list[str]:
    """What each character of ``text`` reads as (aligned with ``text``)."""
    out = []
    for i, ch in enumerate(text):
        frac = FRACTIONS.get(ch)
        if frac is not None:
            out.append(frac if i and text[i - 1].isdigit() else "0" + frac)
        else:
            out.append(_fold_char(ch))
    return out


def fold(text: str) -> str:
    """``text`` as the readers read it (the module docstring). ASCII text is returned as it
    is."""
    if text.isascii():
        return text
    return _fold(text)


@lru_cache(maxsize=65_536)
def _fold(text: str) -> str:
    return "".join(_pieces(text))


def fold_with_map(text: str) -> tuple[str, tuple[int, ...]]:
    """``(fold(text), origin)``: ``origin[i]`` is the index in ``text`` of the character that
    folded character ``i`` was read from, and ``origin[len(folded)] == len(text)``;
    :func:`source_span` turns a span of the folded text into one of ``text``."""
    if text.isascii():
        return text, tuple(range(len(text) + 1))
    pieces = _pieces(text)
    origin = [i for i, piece in enumerate(pieces) for _ch in piece]
    origin.append(len(text))
    return "".join(pieces), tuple(origin)


def source_span(origin: tuple[int, ...], start: int, end: int) -> tuple[int, int]:
    """The span of the original text that folded characters ``start``..``end`` were read
    from (whole source characters: "㎎" folded to "mg" is one character of the source)."""
    if start >= end:
        return origin[start], origin[start]
    return origin[start], origin[end - 1] + 1


__all__ = ["FRACTIONS", "LOOK_ALIKES", "fold", "fold_with_map", "invisible", "source_span"]
