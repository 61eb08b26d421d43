"""The injected "Patient Context from Previous Interactions" section and the system prompt.

Memory content and the session context are untrusted text: :func:`sanitize_line` makes each
one plain line that cannot forge the section's structure (newlines, headers, bold markers,
list markers, control and bidi characters, the ⚠️ marker, markup tags, special tokens).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property, lru_cache

import numpy as np
import numpy.typing as npt

from .importance import SAFETY_TYPES
from .tokens import DEFAULT_ENCODING, count_tokens
from .values import ContextItem, ScoredMemory

HEADER = "**Patient Context from Previous Interactions:**"
CLOSING = "Use this context to personalize your responses and maintain continuity of care."
WARN = "⚠️ "
SESSION_HEADER = "**Current Session:**"
DEFAULT_ROLE = (
    "You are a care assistant for Northwind Health's diabetes-care program, "
    "supporting patients between clinic visits."
)
GUIDANCE = (
    "Provide evidence-based guidance and reference relevant patient memories "
    "when they inform your answer."
)
MAX_LINE_CHARS = 400
MAX_SESSION_CHARS = 8000  # the session context's cap (validation.MAX_QUERY_CHARS, as a query)

_WARNING_SIGNS = {"\u26a0", "\ufe0f", "\ufe0e"}  # ⚠ and emoji/text variation selectors
_LEADING_BLOCK = re.compile(r"^(?:\s*(?:#{1,6}|>|[-*+•]|\d{1,3}[.)])(?=\s))+\s*")
_WS = re.compile(r"\s+")
# markup: what is hidden whole (comments, script and style elements), then any tag
_HIDDEN = re.compile(r"<!--|<(script|style)\b[^<>]*>", re.IGNORECASE)
_HIDDEN_END = {
    "": re.compile(r"-->"),
    "script": re.compile(r"</script\s*>", re.IGNORECASE),
    "style": re.compile(r"</style\s*>", re.IGNORECASE),
}
_TAG = re.compile(r"<[!?/]?[A-Za-z][^<>]*>")
_EMPHASIS = re.compile(r"[*_]{2,}")  # bold/italic markers and rules (``**``, ``__``, ``***``)
_READ_FACTOR = 8  # input beyond 8 x max_chars is not read (memory content is <= 2,000 anyway)


def _drop_hidden(text: str) -> str:
    """Comments and script/style elements (their bodies too) become a space; an opener with no
    closer after it stays, to be removed as a tag. Linear: a kind whose closer is missing is not
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


def _plain(content: str, max_chars: int) -> str:
    """The rule behind :func:`sanitize_line` (uncached, for one-off text)."""
    content = content[: _READ_FACTOR * max_chars]
    out: list[str] = []
    for ch in content:
        if ch in _WARNING_SIGNS:
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Zl", "Zp") or ch in "\u0085":
            out.append(" ")
        elif cat in ("Cf", "Cs", "Co", "Cn"):
            continue
        else:
            out.append(ch)
    text = "".join(out)
    # Markup goes as spaces, which join nothing; removing emphasis joins its neighbours and may
    # assemble a tag (``<**b>``) but never a new emphasis run, so the second pass is the last
    # that can change anything (the loop checks it).
    prev = None
    while text != prev:
        prev = text
        if "<" in text:
            text = _TAG.sub(" ", _drop_hidden(text))
        text = _EMPHASIS.sub("", text)
    text = text.replace("`", "'")
    text = _WS.sub(" ", text).strip()
    text = _LEADING_BLOCK.sub("", text).strip()
    text = text.replace("<|", "< |").replace("|>", "| >")  # neither pair can be rebuilt
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text


@lru_cache(maxsize=65_536)
def sanitize_line(content: str, max_chars: int = MAX_LINE_CHARS) -> str:
    """One plain line of text: control, format (zero-width, bidi) and line/paragraph separator
    characters become spaces or vanish, markup tags become spaces (their text stays; script and
    style elements and comments go whole), markdown emphasis and leading block markers go, a
    forged ⚠️ is removed, special-token delimiters (``<|``, ``|>``) are broken up so that no
    special token such as ``<|endoftext|>`` reaches the agent, whitespace is collapsed and the
    result is cut at ``max_chars``. No removal can assemble a new tag, ``**`` or special token
    from the pieces around it; the work is linear in the text's length, and text beyond
    8 x ``max_chars`` is not read."""
    return _plain(content, max_chars)


def render_line(position: int, text: str, warn: bool) -> str:
    return f"{position}. {WARN if warn else ''}{text}"


def render_section(lines: Sequence[tuple[str, bool]]) -> str:
    """The exact section for already-sanitised (text, warn) pairs; '' when there are none."""
    if not lines:
        return ""
    body = "\n".join(render_line(i, t, w) for i, (t, w) in enumerate(lines, start=1))
    return f"{HEADER}\n\n{body}\n\n{CLOSING}"


class Selection:
    """What :func:`select_and_render` chose: the section, its token count, the chosen
    candidates (indices, in section order) and -- built on first access, since an agent call
    needs only the section -- one explained item per candidate."""

    def __init__(
        self,
        text: str,
        tokens: int,
        chosen: tuple[int, ...],
        build: Callable[[], tuple[ContextItem, ...]],
    ) -> None:
        self.text = text
        self.tokens = tokens
        self.chosen = chosen
        self._build = build

    @cached_property
    def items(self) -> tuple[ContextItem, ...]:
        return self._build()


def tiers_of(candidates: Sequence[ScoredMemory]) -> list[int]:
    """0 = allergy, 1 = other safety-critical (``ScoredMemory.safety``: a type, never an
    importance), 2 = the rest."""
    return [0 if c.memory.memory_type == "allergy" else 1 if c.safety else 2 for c in candidates]


def type_tiers(types: npt.NDArray[np.str_]) -> npt.NDArray[np.int8]:
    """:func:`tiers_of` by type alone, for many memories at once: 0 allergy, 1 another
    safety-critical type (an adverse reaction), 2 the rest. A current importance never changes
    a tier (the ⚠️ marker is a display rule)."""
    tiers: npt.NDArray[np.int8] = np.where(
        types == "allergy", 0, np.where(np.isin(types, list(SAFETY_TYPES)), 1, 2)
    ).astype(np.int8)
    return tiers


def with_annotations(text: str, annotations: Sequence[str]) -> str:
    """The memory's line text followed by its annotations, each already plain text."""
    return " ".join((text, *annotations)) if annotations else text


def _limit_reason(n: int, limit: int) -> str:
    other = "memory" if n == 1 else "memories"
    return f"not in the section: {n} other {other} scored higher (limit {limit})"


def select_and_render(
    candidates: Sequence[ScoredMemory],
    *,
    max_memories: int,
    max_tokens: int | None,
    warn_threshold: float,
    encoding: str = DEFAULT_ENCODING,
    tiers: Sequence[int] | None = None,
    annotate: Callable[[int], tuple[str, ...]] | None = None,
) -> Selection:
    """Choose which candidates enter the section and write it (domain.md, "Injected context
    format").

    ``candidates`` come ranked by score. Every allergy (tier 0) is placed first, in score order,
    and uses none of the ``max_memories`` slots; the slots go to the other candidates in score
    order. Under ``max_tokens`` (exact count of the whole section, annotations included) a
    candidate that does not fit is left out; a safety-critical one (tier 0 or 1, see
    :func:`tiers_of`) left out is reported (``ContextItem.reported``) and no non-safety item
    is added after it. The section lists allergies, then the others, in score order.
    ``annotate(i)``: the annotations of candidate ``i``'s line (plain text, see
    :mod:`memory_core.flags`). ``tiers`` may be given when the caller has them already; the
    candidates are then only read where a line is needed.
    """
    tier = tiers_of(candidates) if tiers is None else tiers
    lines: dict[int, tuple[str, bool]] = {}
    notes: dict[int, tuple[str, ...]] = {}

    def note(i: int) -> tuple[str, ...]:
        got = notes.get(i)
        if got is None:
            got = notes[i] = annotate(i) if annotate is not None else ()
        return got

    def line(i: int) -> tuple[str, bool]:
        got = lines.get(i)
        if got is None:
            c = candidates[i]
            text = with_annotations(sanitize_line(c.memory.content), note(i))
            got = (text, c.current_importance >= warn_threshold)
            lines[i] = got
        return got

    rules: dict[int, str] = {}
    reported: set[int] = set()
    chosen: list[int] = []
    others = 0  # slots used
    safety_left_out = False
    rest = [i for i, t in enumerate(tier) if t != 0]
    higher = {i: k for k, i in enumerate(rest)}  # other memories with a higher score
    for i in [i for i, t in enumerate(tier) if t == 0] + rest:
        allergy = tier[i] == 0
        if not allergy and others >= max_memories:
            # so is every later one (allergies come first): their rule is the slot limit,
            # written only if the explanations are asked for (see ``rule`` below)
            break
        if safety_left_out and tier[i] == 2:
            rules[i] = (
                "not in the section: a safety-critical memory did not fit the token budget, "
                "so nothing less important takes its place"
            )
            continue
        if max_tokens is not None:
            trial = render_section([line(j) for j in (*chosen, i)])
            need = count_tokens(trial, encoding)
            if need > max_tokens:
                rules[i] = (
                    f"not in the section: the token budget ({max_tokens}) would be exceeded "
                    f"({need} tokens with it)"
                )
                if tier[i] < 2:
                    safety_left_out = True
                    reported.add(i)
                    rules[i] += "; safety-critical, reported to the reviewer"
                continue
        chosen.append(i)
        if allergy:
            rules[i] = "in the section: every active allergy is included, first"
        else:
            others += 1
            rules[i] = (
                f"in the section: score #{higher[i] + 1} of the other memories "
                f"(limit {max_memories})"
            )
    text = render_section([line(j) for j in chosen])
    position = {j: p for p, j in enumerate(chosen, start=1)}

    def rule(i: int) -> str:
        got = rules.get(i)
        return _limit_reason(higher[i], max_memories) if got is None else got

    def build() -> tuple[ContextItem, ...]:
        items = []
        for i in range(len(candidates)):
            text_i, warn = line(i)
            at = position.get(i)
            c = candidates[i]
            safety = tier[i] < 2
            items.append(
                ContextItem(
                    scored=c if c.safety == safety else replace(c, safety=safety),
                    included=at is not None,
                    position=at,
                    line=render_line(at, text_i, warn)
                    if at is not None
                    else (WARN if warn else "") + text_i,
                    tokens=count_tokens(text_i, encoding),
                    rule=rule(i),
                    annotations=note(i),
                    reported=i in reported,
                )
            )
        return tuple(items)

    return Selection(text, count_tokens(text, encoding), tuple(chosen), build)


def build_system_prompt(
    section: str, session_context: str, role: str = DEFAULT_ROLE, guidance: str = GUIDANCE
) -> str:
    """Role line, the memory section (if any), the Current Session part, the guidance line.
    The session context is untrusted like memory content: it becomes one line by the same
    :func:`sanitize_line` (capped at ``MAX_SESSION_CHARS``), so it cannot add a section."""
    parts = [role.strip()]
    if section:
        parts.append(section)
    session = _plain(session_context, MAX_SESSION_CHARS)  # one-off text: not kept in the cache
    parts.append(f"{SESSION_HEADER}\n{session}")
    parts.append(guidance.strip())
    return "\n\n".join(parts)
