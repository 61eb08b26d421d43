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
    ``[TOOL_CALLS]``, ``[AVAILABLE_TOOLS]``, ``[SYSTEM_PROMPT]``... -> ``[ INST ]``;
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

Whitespace is collapsed and the line is cut at ``max_chars`` (with "…"). The work is linear in
the text's length; text beyond 8 x ``max_chars`` is not read. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata

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
# special-token delimiters: an angle bracket (or a look-alike) next to a bar (or a look-alike)
_OPEN_ANGLES = "<\u2039\uff1c\u3008\u27e8\ufe64"  # < ‹ ＜ 〈 ⟨ ﹤
_CLOSE_ANGLES = ">\u203a\uff1e\u3009\u27e9\ufe65"  # > › ＞ 〉 ⟩ ﹥
_BARS = "|\uff5c\uffe8\u2223\u01c0\u2502\u2758\u23d0\ufe31"  # | ｜ ￨ ∣ ǀ │ ❘ ⏐ ︱
_TOKEN_OPEN = re.compile(f"([{_OPEN_ANGLES}])([{_BARS}])")
_TOKEN_CLOSE = re.compile(f"([{_BARS}])([{_CLOSE_ANGLES}])")
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


def _role(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2)}“{m.group(3)}”{m.group(4)}"


def quote_phrases(text: str, phrases: tuple[str, ...]) -> str:
    """Each of ``phrases`` in ``text`` (any case) put in quotation marks, so that a statement
    quoting the section's own structure reads as a quotation."""
    lowered = text.lower()
    for phrase in phrases:
        if phrase.lower() in lowered:  # not when quoted already: the rule is stable
            text = re.sub(
                f"(?<!“){re.escape(phrase)}", lambda m: f"“{m.group(0)}”", text, flags=re.I
            )
    return text


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
    text = _BRACKET_TOKEN.sub(
        lambda m: f"[ {m.group(1)}{m.group(2)} ]" if m.group(2) in BRACKET_TOKENS else m.group(0),
        text,
    )
    text = _TOKEN_CLOSE.sub(r"\1 \2", _TOKEN_OPEN.sub(r"\1 \2", text))  # neither rebuilt
    text = _INLINE_NUMBER.sub(r"(\1)", text)
    text = _ROLE_CAPS.sub(r"“\1”\2", _ROLE.sub(_role, text))
    if structure:
        text = quote_phrases(text, structure)
    text = _WS.sub(" ", text).strip()
    text = _LEADING_BLOCK.sub("", text).strip()
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text
