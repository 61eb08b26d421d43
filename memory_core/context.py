"""The injected "Patient Context from Previous Interactions" section and the system prompt.

Memory content and the session context are untrusted text: :func:`sanitize_line` makes each
one plain line that cannot forge the section's structure (newlines, headers, bold markers,
list markers, control and bidi characters, the ⚠️ marker, markup tags, special tokens, role
labels, links) and keeps what it says (the rules: :mod:`memory_core.sanitize`).
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from .importance import SAFETY_TYPES
from .sanitize import plain_line
from .tokens import DEFAULT_ENCODING
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


class LineKind(enum.StrEnum):
    """What a line of the section stands for."""

    MEMORY = ""  # one memory, as the seed writes it
    LIST = "list"  # every current fact of a kind the question asks for ("Current medications")
    HISTORY = "history"  # what ended, of one memory type ("Stopped or completed medications")
    PAIR = "pair"  # an allergy and the newer, unconfirmed statements that would change it
    ALLERGIES = "allergies"  # every allergy, when the budget holds no line for each
    SAME = "same"  # one statement several memories make word for word (issue 25): one line


@dataclass(frozen=True, slots=True)
class Note:
    """An annotation of a line: its ``text``, a ``short`` form a safety line may use to fit the
    token budget ("" : it may be dropped there instead) and what it says (``kind``: "pending",
    "stale", "history"; "" unnamed)."""

    text: str
    short: str = ""
    kind: str = ""


@dataclass(frozen=True, slots=True)
class Entry:
    """One item of a shared line: its text and the candidates (indices) it stands for."""

    text: str
    members: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Shared:
    """A line several candidates share, as the caller proposes it.

    ``LIST``: ``title``: the entries (in score order), one place; ``HISTORY``: likewise, newest
    first, at most :data:`HISTORY_MAX` entries; ``PAIR``: the first entry is an allergy, the
    others the newer statements pending review against it, written on its line. ``why``: the
    reason, in words, for the explanations ("the question asks for the current medications").
    ``order``: where the line goes among the others (a candidate's index is its own place; a
    list the question asks for leads, below 0; a history line follows the current memories of
    its type); default its best candidate's place."""

    kind: LineKind
    entries: tuple[Entry, ...]
    title: str = ""
    why: str = ""
    order: float | None = None


#: A history line lists at most this many ended facts (newest first).
HISTORY_MAX = 5
#: A pending statement on its allergy's line, shortened to this many characters (as the
#: pending-review annotation shortens it, memory_core.flags.PENDING_CHARS).
PAIR_CHARS = 80
ALLERGIES_TITLE = "Allergies"


class Selection:
    """What :func:`select_and_render` chose: the section, its token count, the chosen
    candidates (indices, in section order), the places used and -- built on first access,
    since an agent call needs only the section -- one explained item per candidate
    (``items``), or only the safety-critical ones left out (``omitted``: what an agent's call
    must surface, without explaining every other candidate)."""

    def __init__(
        self,
        text: str,
        tokens: int,
        chosen: tuple[int, ...],
        build: Callable[[], tuple[ContextItem, ...]],
        places: int,
        omitted: Callable[[], tuple[ContextItem, ...]],
    ) -> None:
        self.text = text
        self.tokens = tokens
        self.chosen = chosen
        self.places = places
        self._build = build
        self._omitted = omitted

    @cached_property
    def items(self) -> tuple[ContextItem, ...]:
        return self._build()

    def omitted(self) -> tuple[ContextItem, ...]:
        """The safety-critical candidates left out and reported (``ContextItem.reported``)."""
        return self._omitted()


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


@lru_cache(maxsize=65_536)
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


def facts_key(memory: Any) -> tuple[tuple[str, ...], ...] | None:
    """What a memory's clinical facts say, as a comparable value: each fact's key, value,
    state, contexts, role and date (not its words as written); None when the facts were not
    read. Two memories state the same fact only when these agree too (two coded records of one
    text with another status or date are two statements)."""
    read = getattr(memory, "facts", None)
    if read is None:
        return None
    return tuple(
        sorted(
            (
                f.key,
                f.value,
                str(f.state),
                ",".join(sorted(str(c) for c in f.contexts)),
                str(f.role),
                f.date,
            )
            for f in read.facts
        )
    )


def select_and_render(
    candidates: Sequence[ScoredMemory],
    *,
    max_memories: int,
    max_tokens: int | None,
    warn_threshold: float,
    encoding: str = DEFAULT_ENCODING,
    tiers: Sequence[int] | None = None,
    annotate: Callable[[int], tuple[Note | str, ...]] | None = None,
    shared: Sequence[Shared] = (),
    order: Mapping[int, float] | None = None,
    allergy_entries: Callable[[int], tuple[str, str]] | None = None,
    held: Mapping[int, str] | None = None,
) -> Selection:
    """Choose which candidates enter the section and write it (domain.md, "Injected context
    format"): :func:`memory_core.selection.select`, which says how."""
    from .selection import select

    return select(
        candidates,
        max_memories=max_memories,
        max_tokens=max_tokens,
        warn_threshold=warn_threshold,
        encoding=encoding,
        tiers=tiers,
        annotate=annotate,
        shared=shared,
        order=order,
        allergy_entries=allergy_entries,
        held=held,
    )


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
