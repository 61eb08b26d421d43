"""The injected "Patient Context from Previous Interactions" section and the system prompt.

Memory content and the session context are untrusted text: :func:`sanitize_line` makes each
one plain line that cannot forge the section's structure (newlines, headers, bold markers,
list markers, control and bidi characters, the ⚠️ marker, markup tags, special tokens, role
labels, links) and keeps what it says (the rules: :mod:`memory_core.sanitize`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property, lru_cache

import numpy as np
import numpy.typing as npt

from .importance import SAFETY_TYPES
from .sanitize import plain_line
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

_STRUCTURE = (HEADER.strip("*"), CLOSING, SESSION_HEADER.strip("*"))


def _plain(content: str, max_chars: int) -> str:
    """The rule behind :func:`sanitize_line` (uncached, for one-off text)."""
    return plain_line(content, max_chars, _STRUCTURE)


@lru_cache(maxsize=65_536)
def sanitize_line(content: str, max_chars: int = MAX_LINE_CHARS) -> str:
    """One plain line of text that says what ``content`` says and cannot forge the section's
    structure or speak as another role (:mod:`memory_core.sanitize`: what is removed, what is
    neutralised): control, format and separator characters, HTML markup, emphasis, a forged ⚠️
    and leading block markers go; other angle-bracket text, special-token delimiters of the
    major chat templates, role labels, inline list numbers, markdown links and copies of the
    section's own header and closing line are kept, rendered inert. Whitespace is collapsed and
    the result cut at ``max_chars``; the work is linear in the text's length, and text beyond
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


def statement_key(memory_type: str, line: str, warn: bool) -> tuple[str, str, bool]:
    """What makes two candidates' lines the same statement: the type, and the line (the
    sanitised text with its annotations) with case, whitespace and punctuation ignored --
    except punctuation before a number ("- 5 kg", "2.5 mg", "1,000" keep it: a sign or a
    decimal point is meaning)."""
    text = " ".join(line.casefold().split())
    kept = [
        ch
        for k, ch in enumerate(text)
        if not unicodedata.category(ch).startswith("P")
        or text[k + 1 : k + 3].lstrip()[:1].isdigit()  # a sign, a decimal point: meaning
    ]
    return memory_type, " ".join("".join(kept).split()), warn


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
    order. Identical statements (:func:`statement_key`: the same type and line but for case,
    whitespace and punctuation) are one line, the first standing for the rest, whose rule
    names it; its own rule says how many were collapsed into it. Under ``max_tokens`` (exact
    count of the whole section, annotations included) a candidate that does not fit is left
    out; a safety-critical one (tier 0 or 1, see :func:`tiers_of`) left out is reported
    (``ContextItem.reported``) and no non-safety item
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
    # identical statements (the same line, ignoring case, whitespace and punctuation, of the
    # same type) are one line: the first, best-placed one stands for the others
    first_of: dict[tuple[str, str, bool], int] = {}
    same_as: dict[int, int] = {}
    for i in [i for i, t in enumerate(tier) if t == 0] + rest:
        allergy = tier[i] == 0
        if not allergy and others >= max_memories:
            # so is every later one (allergies come first): their rule is the slot limit,
            # written only if the explanations are asked for (see ``rule`` below)
            break
        key = statement_key(candidates[i].memory.memory_type, *line(i))
        if key in first_of:
            same_as[i] = first_of[key]  # uses no slot and no token
            continue
        first_of[key] = i
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

    collapsed: dict[int, int] = {}

    def late_repeats() -> None:
        """Only for the explanations: the candidates the loop did not reach (past the slot
        limit) that repeat a statement already in the section are collapsed into it too."""
        if collapsed or not candidates:
            return
        firsts = set(first_of.values())
        for j in range(len(candidates)):
            if j in rules or j in same_as or j in firsts:
                continue
            first = first_of.get(statement_key(candidates[j].memory.memory_type, *line(j)))
            if first is not None:
                same_as[j] = first
        for first in same_as.values():
            collapsed[first] = collapsed.get(first, 0) + 1
        collapsed.setdefault(-1, 0)  # done, even when nothing was collapsed

    def rule(i: int) -> str:
        late_repeats()
        first = same_as.get(i)
        if first is not None:
            at = position.get(first)
            return (
                f"not in the section: the same statement as line {at} (collapsed into it)"
                if at is not None
                else "not in the section: the same statement as a memory left out above"
            )
        got = rules.get(i)
        got = _limit_reason(higher[i], max_memories) if got is None else got
        n = collapsed.get(i)
        if n:
            got += f"; {n} identical statement{'s' if n > 1 else ''} collapsed into this line"
        return got

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
