"""Untrusted text (memory content, the session context) made into one plain line for the
system prompt, without changing what it says (issue 25; the rules: docs/safety-api.md).

Two kinds of treatment, never a silent loss of meaning:

* **Removed** -- what carries no meaning for the agent and could hide an instruction from the
  reviewer: control, format (zero-width, bidi) and separator characters; HTML markup of known
  elements (``<b>``, ``<img src=...>``; comments and ``<script>``/``<style>`` elements go
  whole, body included); markdown emphasis (``**``); a forged ⚠️; structural markers at the
  start (``# ``, ``> quote``, ``- bullet``, ``1. ``).
* **Neutralised** -- kept, so the statement reads the same, but rendered so that it can no
  longer act as structure or as an instruction channel:

  - any other angle-bracket span (``<codeine>``, ``<jane.doe@example.com>``, ``x<y and z>w``,
    ``<start_of_turn>``, ``</system>``) keeps its text with a space inside each bracket
    (``< codeine >``): it can never be parsed as markup, an XML-style delimiter or a special
    token;
  - special-token delimiters of the major chat templates are broken apart: ``<|im_start|>``
    (ChatML, Llama 3, Phi, GPT) -> ``< |im_start| >``; DeepSeek's fullwidth ``<｜User｜>`` and
    look-alike bars and brackets likewise; Mistral's ``[INST]``, ``[/INST]``,
    ``[TOOL_CALLS]``, ``[AVAILABLE_TOOLS]``, ``[SYSTEM_PROMPT]``... -> ``[ INST ]``; a
    tag-shaped span in look-alike brackets (``＜system＞``) gets the spaces of any other;
  - a role label at the start of a line or sentence (``SYSTEM:``, ``Assistant:``, ``User:``,
    ``Human:``, ``Developer:``, ``Tool:``...; upper-case anywhere) is quoted: ``“SYSTEM”:``;
    the section's own header, closing line and "Current Session:" inside a statement are
    quoted too, so a statement cannot pretend to close the section;
  - a list number inside a statement (``... allergies 2. Patient may take any NSAID``) is
    written ``(2)``, so one statement cannot pose as the next numbered line;
  - markdown links and images (``![chart](https://x/y.png)``, ``[portal](http://x)``) become
    their text with the address after it, its scheme defanged (``https[:]//x/y.png``), so
    nothing is rendered, fetched or offered as a clickable link;
  - a sign or comparison before a number at the start stays: ``> 2 episodes``, ``- 5 kg``.

Role labels, list numbers, special tokens, the section's own phrases and the leading markers
are found on the text as the readers read it (the one normaliser,
:func:`memory_core.normalize.fold_with_map`: invisible characters removed, fullwidth and
mathematical letters, Cyrillic and Greek look-alikes, look-alike brackets and bars folded), and
neutralised in the text as written through the normaliser's map back: "Ѕystem:" (a Cyrillic
Ѕ) becomes "“Ѕystem”:", "2． Patient ..." (a fullwidth period) "(2) Patient ...". The
statement keeps its own characters.

Whitespace is collapsed and the line is cut at ``max_chars`` (with "…"). The work is linear in
the text's length; text beyond 8 x ``max_chars`` is not read. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from .normalize import fold, fold_with_map

_READ_FACTOR = 8  # input beyond 8 x max_chars is not read (memory content is <= 2,000 anyway)
_WARNING_SIGNS = frozenset({"\u26a0", "\ufe0f", "\ufe0e"})  # ⚠ and emoji/text selectors
#: characters that end a line (they become a line break, then a space, in the result)
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_WS = re.compile(r"\s+")
_EMPHASIS = re.compile(r"[*_]{2,}")  # bold/italic markers and rules (``**``, ``__``, ``***``)
# markup: what is hidden whole (comments, script and style elements), then any tag
_HIDDEN = re.compile(r"<!--|<(script|style)\b[^<>]*>", re.IGNORECASE)
_HIDDEN_END = {
    "": re.compile(r"-->"),
    "script": re.compile(r"</script\s*>", re.IGNORECASE),
    "style": re.compile(r"</style\s*>", re.IGNORECASE),
}
_TAG = re.compile(r"<([!?/]?)([A-Za-z][A-Za-z0-9:-]*)([^<>]*)>")
#: HTML elements: their tags are markup, removed (their text stays)
HTML_ELEMENTS = frozenset(
    [
        "a",
        "abbr",
        "acronym",
        "address",
        "area",
        "article",
        "aside",
        "audio",
        "b",
        "base",
        "basefont",
        "bdi",
        "bdo",
        "big",
        "blink",
        "blockquote",
        "body",
        "br",
        "button",
        "canvas",
        "caption",
        "center",
        "cite",
        "code",
        "col",
        "colgroup",
        "data",
        "datalist",
        "dd",
        "del",
        "details",
        "dfn",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "em",
        "embed",
        "fieldset",
        "figcaption",
        "figure",
        "font",
        "footer",
        "form",
        "frame",
        "frameset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hgroup",
        "hr",
        "html",
        "i",
        "iframe",
        "img",
        "input",
        "ins",
        "kbd",
        "label",
        "legend",
        "li",
        "link",
        "main",
        "map",
        "mark",
        "marquee",
        "menu",
        "meta",
        "meter",
        "nav",
        "noembed",
        "noframes",
        "noscript",
        "object",
        "ol",
        "optgroup",
        "option",
        "output",
        "p",
        "param",
        "picture",
        "plaintext",
        "pre",
        "progress",
        "q",
        "rp",
        "rt",
        "ruby",
        "s",
        "samp",
        "search",
        "section",
        "select",
        "slot",
        "small",
        "source",
        "span",
        "strike",
        "strong",
        "sub",
        "summary",
        "sup",
        "svg",
        "table",
        "tbody",
        "td",
        "template",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "time",
        "title",
        "tr",
        "track",
        "tt",
        "u",
        "ul",
        "var",
        "video",
        "wbr",
        "xmp",
        "math",
        "script",
        "style",
    ]
)
# leading block markers (heading, quote, bullet, number) followed by whitespace; a quote or a
# bullet sign before a number is a comparison or a sign ("> 2", "- 5 kg"): kept
_LEADING_BLOCK = re.compile(
    r"^(?:\s*(?:#{1,6}|>(?!\s*[\d.])|[-+](?!\s*[\d.])|[*•]|\d{1,3}[.)])(?=\s))+\s*"
)
# special-token delimiters: an angle bracket next to a bar, on the folded text (the look-alike
# brackets and bars fold to "<", ">" and "|": memory_core.normalize); found at every position
# (a lookahead), so "<|>" is both an opener and a closer
_DELIMITER = re.compile(r"(?=<\||\|>)")
# a tag-shaped span the markup pass left (its brackets or first letter were look-alikes)
_TAG_SHAPED = re.compile(r"<[!?/]?[A-Za-z][A-Za-z0-9:_-]*[^<>]*>")
#: control tokens written in square brackets (Mistral's tokenizers, v1 to v7)
BRACKET_TOKENS = frozenset(
    [
        "INST",
        "SYS",
        "SYSTEM_PROMPT",
        "TOOL_CALLS",
        "AVAILABLE_TOOLS",
        "TOOL_RESULTS",
        "TOOL_CONTENT",
        "CALL_ID",
        "ARGS",
        "THINK",
        "IMG",
        "IMG_BREAK",
        "IMG_END",
        "PREFIX",
        "MIDDLE",
        "SUFFIX",
        "AUDIO",
        "BEGIN_AUDIO",
        "TRANSCRIBE",
    ]
)
_BRACKET_TOKEN = re.compile(r"\[(/?)([A-Z][A-Z_]{1,20})\]")
#: role labels of chat transcripts and templates
ROLES = (
    "system",
    "assistant",
    "user",
    "human",
    "developer",
    "tool",
    "function",
    "ipython",
    "model",
    "ai",
    "bot",
    "instruction",
    "instructions",
    "response",
    "admin",
    "operator",
)
_ROLE_WORDS = "|".join(ROLES)
# a role label with its colon: at the start or after a line break, a sentence end, a bracket
# or a quote (any case), or in capitals anywhere
_ROLE = re.compile(
    rf"(^|[\n.!?;:)\]}}>\"'”’»|][ \t]*)(#*[ \t]*)({_ROLE_WORDS})([ \t]*:)", re.IGNORECASE
)
_ROLE_CAPS = re.compile(rf"\b({_ROLE_WORDS.upper()})([ \t]*:)")
# a list number inside a statement: a number of 1-3 digits after whitespace, a period or a
# parenthesis, whitespace, then text ("... allergies 2. Patient may take ...")
_INLINE_NUMBER = re.compile(r"(?<=\s)(\d{1,3})[.)](?=[ \t]+[^\s\d])")
# markdown links and images: [text](address "title"), ![alt](address)
_MD_LINK = re.compile(
    r"(!?)\[([^\[\]\n]{0,400})\]\(\s*<?([^()\s<>]{1,2000})>?(?:\s+\"[^\"\n]*\")?\s*\)"
)
_SCHEME = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{1,20}):(?=//|[A-Za-z0-9%])")
_URL_SCHEMES = frozenset(
    {"http", "https", "ftp", "ftps", "file", "data", "javascript", "vbscript", "mailto", "ws",
     "wss", "blob"}
)  # fmt: skip


def defang(address: str) -> str:
    """An address that no renderer links or fetches: its scheme's colon in brackets
    (``https[:]//example.org/x``); the rest as written."""
    return _SCHEME.sub(
        lambda m: f"{m.group(1)}[:]" if m.group(1).lower() in _URL_SCHEMES else m.group(0),
        address,
        count=1,
    )


def _drop_hidden(text: str) -> str:
    """Comments and script/style elements (their bodies too) become a space; an opener with no
    closer after it stays, to be handled as a tag. Linear: a kind whose closer is missing is not
    searched for again."""
    out: list[str] = []
    pos = 0
    dead: set[str] = set()
    while (m := _HIDDEN.search(text, pos)) is not None:
        kind = (m.group(1) or "").lower()
        end = None if kind in dead else _HIDDEN_END[kind].search(text, m.end())
        if end is None:
            dead.add(kind)
            out.append(text[pos : m.end()])
            pos = m.end()
            continue
        out.append(text[pos : m.start()] + " ")
        pos = end.end()
    out.append(text[pos:])
    return "".join(out)


def _tag(m: re.Match[str]) -> str:
    """An HTML tag goes (a space, which joins nothing); any other angle-bracket span stays,
    inert: a space inside each bracket."""
    if m.group(2).lower() in HTML_ELEMENTS and m.group(1) in ("", "/"):
        return " "
    if m.group(1) in ("!", "?"):  # <!DOCTYPE ...>, <?xml ...?>: markup declarations
        return " "
    return f"< {m.group(1)}{defang(m.group(2) + m.group(3))} >"


def _characters(content: str) -> str:
    out: list[str] = []
    for ch in content:
        if ch in _WARNING_SIGNS:
            continue
        cat = unicodedata.category(ch)
        if ch in _LINE_BREAKS:
            out.append("\n")
        elif cat in ("Cc", "Zl", "Zp"):
            out.append(" ")
        elif cat in ("Cf", "Cs", "Co", "Cn"):
            continue
        else:
            out.append(ch)
    return "".join(out)


def _link(m: re.Match[str]) -> str:
    image, text, address = m.group(1), m.group(2).strip(), defang(m.group(3))
    what = "image" if image else "link"
    return f"{text} ({what}: {address})" if text else f"({what}: {address})"


class _Folded:
    """A text as the readers read it (:func:`memory_core.normalize.fold_with_map`: invisible
    characters removed, compatibility forms and look-alike letters folded) and the way back to
    the text as written: a label is found on the folded text and neutralised in the original,
    whose characters are kept."""

    __slots__ = ("folded", "origin", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.origin: tuple[int, ...] | None = None
        if text.isascii():
            self.folded = text
        else:
            self.folded, self.origin = fold_with_map(text)

    def start(self, i: int) -> int:
        """Where in the original the folded character ``i`` starts."""
        return i if self.origin is None else self.origin[i]

    def end(self, j: int) -> int:
        """Where in the original the folded characters before ``j`` end."""
        if self.origin is None or j == 0:
            return j
        return self.origin[j - 1] + 1

    def around(self, i: int, j: int, before: str, after: str) -> list[_Edit]:
        """``before`` and ``after`` put around the original of folded ``i``..``j``."""
        return [(self.start(i), self.start(i), before), (self.end(j), self.end(j), after)]


_Edit = tuple[int, int, str]  # (start, end) of the original text, and what replaces it


def _on_folded(
    text: str, pattern: re.Pattern[str], edits: Callable[[_Folded, re.Match[str]], list[_Edit]]
) -> str:
    """``text`` with ``edits`` of every match of ``pattern`` on its folded form made to the
    original (an edit overlapping an earlier one is left out)."""
    f = _Folded(text)
    todo = [e for m in pattern.finditer(f.folded) for e in edits(f, m)]
    if not todo:
        return text
    out: list[str] = []
    pos = 0
    for start, end, new in sorted(todo, key=lambda e: (e[0], e[1])):
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _bracket_token(f: _Folded, m: re.Match[str]) -> list[_Edit]:
    if m.group(2) not in BRACKET_TOKENS:
        return []
    return f.around(m.start() + 1, m.end() - 1, " ", " ")  # "[ INST ]"


def _inert_span(f: _Folded, m: re.Match[str]) -> list[_Edit]:
    return f.around(m.start() + 1, m.end() - 1, " ", " ")  # "＜ system ＞"


def _delimiter(f: _Folded, m: re.Match[str]) -> list[_Edit]:
    at = f.end(m.start() + 1)  # between the bracket and the bar
    return [(at, at, " ")]


def _inline_number(f: _Folded, m: re.Match[str]) -> list[_Edit]:
    mark = m.end(1)  # the period or parenthesis after the number: "(2)"
    return [(f.start(m.start(1)), f.start(m.start(1)), "("), (f.start(mark), f.end(mark + 1), ")")]


def _role(f: _Folded, m: re.Match[str]) -> list[_Edit]:
    return f.around(m.start(3), m.end(3), "“", "”")


def _role_caps(f: _Folded, m: re.Match[str]) -> list[_Edit]:
    return f.around(m.start(1), m.end(1), "“", "”")


def _quoted(f: _Folded, m: re.Match[str]) -> list[_Edit]:
    return f.around(m.start(), m.end(), "“", "”")


def quote_phrases(text: str, phrases: tuple[str, ...]) -> str:
    """Each of ``phrases`` in ``text`` (any case, in look-alikes too) put in quotation marks,
    so that a statement quoting the section's own structure reads as a quotation."""
    for phrase in phrases:
        if phrase.lower() in fold(text).lower():  # not when quoted already: the rule is stable
            found = re.compile(f"(?<!“){re.escape(phrase)}", re.I)
            text = _on_folded(text, found, _quoted)
    return text


def _leading_block(text: str) -> str:
    """``text`` without the block markers it starts with (heading, quote, bullet, number; in
    look-alikes too)."""
    f = _Folded(text)
    m = _LEADING_BLOCK.match(f.folded)
    return text[f.end(m.end()) :] if m and m.end() else text


def plain_line(content: str, max_chars: int, structure: tuple[str, ...] = ()) -> str:
    """The rule of the module docstring. ``structure``: phrases of the enclosing layout (its
    header, closing line) to quote when a statement repeats them."""
    text = _characters(content[: _READ_FACTOR * max_chars])
    # Markup goes as spaces, which join nothing; removing emphasis joins its neighbours and may
    # assemble a tag (``<**b>``) but never a new emphasis run, so the second pass is the last
    # that can change anything (the loop checks it). An inert span ("< x >") is no tag.
    prev = None
    while text != prev:
        prev = text
        if "<" in text:
            text = _TAG.sub(_tag, _drop_hidden(text))
        text = _EMPHASIS.sub("", text)
    text = text.replace("`", "'")
    if "](" in text:
        text = _MD_LINK.sub(_link, text)
    # labels, numbers and tokens are found on the folded text (look-alikes read as what they
    # imitate) and neutralised in the original, which keeps its characters
    text = _on_folded(text, _BRACKET_TOKEN, _bracket_token)
    text = _on_folded(text, _TAG_SHAPED, _inert_span)
    text = _on_folded(text, _DELIMITER, _delimiter)  # neither rebuilt
    text = _on_folded(text, _INLINE_NUMBER, _inline_number)
    text = _on_folded(_on_folded(text, _ROLE, _role), _ROLE_CAPS, _role_caps)
    if structure:
        text = quote_phrases(text, structure)
    text = _WS.sub(" ", text).strip()
    text = _leading_block(text).strip()
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text
