"""The injected "Patient Context from Previous Interactions" section and the system prompt.

Memory content and the session context are untrusted text: :func:`sanitize_line` makes each
one plain line that cannot forge the section's structure (newlines, headers, bold markers,
list markers, control and bidi characters, the ⚠️ marker, markup tags, special tokens, role
labels, links) and keeps what it says (the rules: :mod:`memory_core.sanitize`).
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any

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
    since an agent call needs only the section -- one explained item per candidate."""

    def __init__(
        self,
        text: str,
        tokens: int,
        chosen: tuple[int, ...],
        build: Callable[[], tuple[ContextItem, ...]],
        places: int = 0,
    ) -> None:
        self.text = text
        self.tokens = tokens
        self.chosen = chosen
        self.places = places
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


def _limit_reason(n: int, limit: int) -> str:
    other = "memory" if n == 1 else "memories"
    return f"not in the section: {n} other {other} scored higher (limit {limit})"


def _note(n: Note | str) -> Note:
    return n if isinstance(n, Note) else Note(n)


class _Unit:
    """One line the section may hold: the candidates it stands for, its tier, whether it uses a
    place, and its forms from the fullest to the shortest (``forms()[level]``: the text and the
    candidates that form names)."""

    def __init__(
        self,
        kind: LineKind,
        members: tuple[int, ...],
        tier: int,
        order: float,
        forms: list[tuple[str, tuple[int, ...]]],
        warn: bool,
        shared: Shared | None = None,
    ) -> None:
        self.kind = kind
        self.members = members
        self.tier = tier
        self.order = order
        self.forms = forms
        self.warn = warn
        self.shared = shared
        self.places = 0 if tier == 0 else 1

    def line(self, level: int) -> tuple[str, bool]:
        return self.forms[level][0], self.warn


def _list_forms(
    title: str, entries: Sequence[Entry], cap: int | None, more: str
) -> list[tuple[str, tuple[int, ...]]]:
    """ "Title: a; b; c" and the forms cut from the end ("Title: a; b (+1 more)"), down to one
    entry; at most ``cap`` entries in the fullest."""
    shown = list(entries[:cap]) if cap is not None else list(entries)
    out = []
    for n in range(len(shown), 0, -1):
        rest = len(entries) - n
        text = f"{title}: " + "; ".join(e.text for e in shown[:n])
        if rest:
            text += f" (+{rest} {more})"
        out.append((text, tuple(i for e in shown[:n] for i in e.members)))
    return out


class _Plan:
    """The units of a selection and the lines they say (the work of :func:`select_and_render`)."""

    def __init__(
        self,
        candidates: Sequence[ScoredMemory],
        tier: Sequence[int],
        note: Callable[[int], tuple[Note, ...]],
        warn_threshold: float,
    ) -> None:
        self.candidates = candidates
        self.tier = tier
        self.note = note
        self.warn_threshold = warn_threshold
        self._text: dict[int, str] = {}

    def text(self, i: int) -> str:
        got = self._text.get(i)
        if got is None:
            got = self._text[i] = sanitize_line(self.candidates[i].memory.content)
        return got

    def warn(self, members: Sequence[int]) -> bool:
        t = self.warn_threshold
        return any(self.candidates[i].current_importance >= t for i in members)

    def memory_forms(self, i: int) -> list[tuple[str, tuple[int, ...]]]:
        """A memory's own line: with its annotations; a safety line also with their short forms,
        then without the droppable ones (annotations go before the safety line does)."""
        notes = self.note(i)
        text = self.text(i)
        if not notes:
            return [(text, (i,))]
        forms = [with_annotations(text, [n.text for n in notes])]
        if self.tier[i] < 2:
            forms.append(with_annotations(text, [n.short or n.text for n in notes]))
            forms.append(with_annotations(text, [n.short for n in notes if n.short]))
        return [(t, (i,)) for t in dict.fromkeys(forms)]

    def unit(self, i: int, order: float) -> _Unit:
        warn = self.candidates[i].current_importance >= self.warn_threshold
        return _Unit(LineKind.MEMORY, (i,), self.tier[i], order, self.memory_forms(i), warn)

    def key(self, i: int) -> tuple[object, ...]:
        """Candidates with one key state the same fact: the same type and line (see
        :func:`statement_key`: annotations and the ⚠️ marker included) and the same facts."""
        m = self.candidates[i].memory
        warn = self.candidates[i].current_importance >= self.warn_threshold
        line = self.memory_forms(i)[0][0]
        return statement_key(m.memory_type, line, warn), facts_key(m)

    @staticmethod
    def same(u: _Unit, i: int) -> None:
        """Candidate ``i`` states what ``u``'s memory line states: it joins the line (no place,
        no token; every form of the line names it)."""
        u.kind = LineKind.SAME
        u.members = (*u.members, i)
        u.forms = [(text, u.members) for text, _ in u.forms]

    def shared_unit(self, s: Shared) -> _Unit:
        members = tuple(i for e in s.entries for i in e.members)
        if s.kind is LineKind.PAIR:
            lead, *pending = s.entries
            notes = self.note(lead.members[0])
            said = [n.text for n in notes]
            if not any(n.kind == "pending" for n in notes):  # the policy writes no such note
                said.insert(0, f"(pending review: {_shorten(pending[0].text, PAIR_CHARS)})")
            # the newest pending statement is the note; any other one follows it
            said += [f"(also pending review: {_shorten(e.text, PAIR_CHARS)})" for e in pending[1:]]
            short = [n.short or n.text for n in notes if n.kind != "pending"]
            forms = [
                (with_annotations(lead.text, said), members),
                (with_annotations(lead.text, ["(pending review)", *short]), lead.members),
                (lead.text, lead.members),
            ]
            tier = min(self.tier[i] for i in members)
            order = float(min(members))
            return _Unit(s.kind, members, tier, order, forms, self.warn(lead.members), s)
        cap = HISTORY_MAX if s.kind is LineKind.HISTORY else None
        more = "earlier" if s.kind is LineKind.HISTORY else "more"
        forms = _list_forms(s.title, s.entries, cap, more)
        order = float(min(members)) if s.order is None else s.order
        return _Unit(s.kind, members, 2, order, forms, self.warn(members), s)


def _shorten(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def allergies_unit(
    entries: Sequence[tuple[str, str, str]], members: tuple[int, ...], warn: bool
) -> _Unit:
    """Every allergy on one line (the budget holds no line for each): each ``(name, reactions,
    note)`` entry in full, then without the notes, then by name only."""

    def line(parts: Iterable[str]) -> str:
        return f"{ALLERGIES_TITLE}: " + "; ".join(parts)

    full = line(f"{n}{r}{note}" for n, r, note in entries)
    plain = line(f"{n}{r}" for n, r, _ in entries)
    names = line(n for n, _, _ in entries)
    shown = tuple(members)
    forms = [(t, shown) for t in dict.fromkeys((full, plain, names))]
    return _Unit(LineKind.ALLERGIES, members, 0, -1.0, forms, warn)


class _Fitter:
    """Places units under the token budget: each at its fullest form that fits."""

    def __init__(self, max_tokens: int | None, encoding: str) -> None:
        self.max_tokens = max_tokens
        self.encoding = encoding
        self.placed: list[list[Any]] = []  # [unit, level]
        self.need = 0  # tokens of the last form tried that did not fit

    def lines(self, extra: tuple[_Unit, int] | None = None) -> list[tuple[str, bool]]:
        out = [u.line(lv) for u, lv in self.placed]
        if extra is not None:
            out.append(extra[0].line(extra[1]))
        return out

    def fits(self, unit: _Unit, level: int) -> bool:
        if self.max_tokens is None:
            return True
        need = count_tokens(render_section(self.lines((unit, level))), self.encoding)
        if need > self.max_tokens:
            self.need = need
            return False
        return True

    def place(self, unit: _Unit, start: int = 0) -> int | None:
        """The level ``unit`` was placed at (None: no form fits)."""
        for level in range(start, len(unit.forms)):
            if self.fits(unit, level):
                self.placed.append([unit, level])
                return level
        return None

    def place_shrinking(self, unit: _Unit) -> int | None:
        """:meth:`place`, else with the placed safety lines shortened -- first the annotations
        of memories' own lines, then, to fit an allergy, an allergy's pending statement --
        (annotations go before a safety line does); undone when it does not help."""
        got = self.place(unit)
        if got is not None:
            return got
        saved = [p[1] for p in self.placed]
        steps: list[tuple[LineKind, ...]] = [(LineKind.MEMORY, LineKind.SAME)]
        if unit.tier == 0:
            steps.append((LineKind.MEMORY, LineKind.SAME, LineKind.PAIR))
        for kinds in steps:
            for p in self.placed:
                if p[0].tier < 2 and p[0].kind in kinds:
                    p[1] = len(p[0].forms) - 1
            got = self.place(unit)
            if got is not None:
                return got
        for p, lv in zip(self.placed, saved, strict=True):
            p[1] = lv
        return None

    def cut_safety(self) -> bool:
        """A placed line no longer names a safety-critical memory it stands for (only a shared
        safety line can: a memory's own line names its memory in every form)."""
        return any(
            len(p[0].forms[p[1]][1]) < len(p[0].members)
            for p in self.placed
            if p[0].tier < 2 and p[0].kind is not LineKind.MEMORY
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
) -> Selection:
    """Choose which candidates enter the section and write it (domain.md, "Injected context
    format").

    ``candidates`` come ranked by score. Every allergy (tier 0) is placed first, in score order,
    and uses none of the ``max_memories`` places; the places go to the other lines in score
    order. A line is one candidate's own, or a :class:`Shared` line several candidates share
    (a list of the current ones of a kind the question asks for, the history of a type, an
    allergy with the unconfirmed statements pending against it), which uses one place (an
    allergy's none). ``order``: candidate -> where its own line goes instead of its score's
    place (what ended is history: after the current memories of its type; a memory of a kind
    the question asks for that no list can say: right after the list).

    Under ``max_tokens`` (exact count of the whole section, annotations included) a line that
    does not fit is left out; a safety line (tier 0 or 1, see :func:`tiers_of`) first sheds the
    annotations of safety lines (their short forms, then without the droppable ones), and a
    pair its pending statement; when the allergies still do not fit one line each, they share
    one line ("Allergies: penicillins (anaphylaxis); sulfonamides (rash)", then by name only);
    a safety line left out is reported (``ContextItem.reported``) and no non-safety line is
    added after it. ``annotate(i)``: the annotations of candidate ``i``'s line (plain text or
    :class:`Note`, see :mod:`memory_core.flags`). ``tiers`` may be given when the caller has
    them already; the candidates are then only read where a line is needed.
    ``allergy_entries(i)``: allergy ``i``'s name and reactions on a shared allergies line
    (default: its text, shortened)."""
    tier = tiers_of(candidates) if tiers is None else tiers
    notes: dict[int, tuple[Note, ...]] = {}

    def note(i: int) -> tuple[Note, ...]:
        got = notes.get(i)
        if got is None:
            got = notes[i] = tuple(_note(n) for n in annotate(i)) if annotate is not None else ()
        return got

    plan = _Plan(candidates, tier, note, warn_threshold)
    claimed: dict[int, _Unit] = {}
    units: list[_Unit] = []
    for s in shared:
        u = plan.shared_unit(_sanitized(s))
        units.append(u)
        claimed.update((i, u) for i in u.members)
    moved = order or {}
    run = _Selector(plan, max_memories, max_tokens, encoding)
    # every allergy first (in score order); then the rest by order, where the candidates are read
    # only until the places run out
    allergy_units = [u for u in units if u.tier == 0]
    for i, t in enumerate(tier):
        if t == 0 and i not in claimed:
            key = plan.key(i)
            first = run.by_key.get(key)
            if first is not None:  # the same allergy again: one line
                plan.same(first, i)
                run.dups.add(i)
                continue
            u = run.by_key[key] = plan.unit(i, float(i))
            allergy_units.append(u)
    allergy_units.sort(key=lambda u: u.order)
    entries = None
    if allergy_entries is not None:
        given = allergy_entries

        def entries(i: int) -> tuple[str, str]:
            name, reactions = given(i)
            return sanitize_line(name), sanitize_line(reactions)

    run.allergies(allergy_units, entries)
    rest = sorted((u for u in units if u.tier != 0), key=lambda u: u.order)
    run.others(rest, claimed, moved)
    return run.selection()


def _sanitized(s: Shared) -> Shared:
    """``s`` with its title and entries through :func:`sanitize_line`: every text of a memory
    that reaches the section passes the same sanitiser, whoever wrote the line (a label read
    from a coded record's display name is as untrusted as a statement)."""
    entries = tuple(Entry(sanitize_line(e.text), e.members) for e in s.entries)
    return replace(s, entries=entries, title=sanitize_line(s.title))


_BLOCKED = (
    "not in the section: a safety-critical memory did not fit the token budget, so nothing "
    "less important takes its place"
)
_SAME_LEFT_OUT = (
    "not in the section: the same statement as a memory left out above (its reason and report "
    "stand for this one)"
)


class _Selector:
    """The placing of :func:`select_and_render`, and the reason of every candidate."""

    def __init__(
        self, plan: _Plan, max_memories: int, max_tokens: int | None, encoding: str
    ) -> None:
        self.plan = plan
        self.max_memories = max_memories
        self.max_tokens = max_tokens
        self.encoding = encoding
        self.fit = _Fitter(max_tokens, encoding)
        self.rules: dict[int, str] = {}
        self.reported: set[int] = set()
        self.places = 0
        self.blocked = False
        rest = [i for i, t in enumerate(plan.tier) if t != 0]
        self.higher = {i: k for k, i in enumerate(rest)}  # other memories with a higher score
        # identical statements (issue 25): a memory line by its key, and the candidates that
        # joined a line stating the same (they use no place and no token)
        self.by_key: dict[tuple[object, ...], _Unit] = {}
        self.dups: set[int] = set()

    # --- reasons ---------------------------------------------------------------------------
    def _over_budget(self, members: Sequence[int], safety: bool) -> None:
        rule = (
            f"not in the section: the token budget ({self.max_tokens}) would be exceeded "
            f"({self.fit.need} tokens with it)"
        )
        for i in members:
            if i in self.dups:
                self.rules[i] = _SAME_LEFT_OUT
                continue
            self.rules[i] = rule
            if safety:
                self.reported.add(i)
                self.rules[i] += "; safety-critical, reported to the reviewer"

    def _placed(self, u: _Unit, level: int, pos: int) -> None:
        shown = set(u.forms[level][1])
        s = u.shared
        for i in u.members:
            if i not in shown:
                self._cut(u, i)
            elif u.kind is LineKind.MEMORY:
                self.rules[i] = self._own_rule(i, u)
            elif u.kind is LineKind.SAME and i == u.members[0]:
                n = len(u.members) - 1
                self.rules[i] = (
                    f"{self._own_rule(i, u)}; {n} identical statement{'s' if n > 1 else ''} "
                    "collapsed into this line"
                )
            elif u.kind is LineKind.SAME:
                self.rules[i] = (
                    f"in the section, on line {pos}: the same statement as its first memory, "
                    "collapsed into it (no place, no token)"
                )
            elif u.kind is LineKind.PAIR and s is not None and i == s.entries[0].members[0]:
                self.rules[i] = (
                    "in the section: every active allergy is included, first; the newer, "
                    "unconfirmed statement that would change it is written on its line"
                    if level == 0
                    else "in the section: every active allergy is included, first (the "
                    "statement pending against it shortened to fit the token budget)"
                )
            else:
                self.rules[i] = self._shared_rule(u)

    def _own_rule(self, i: int, u: _Unit) -> str:
        if u.tier == 0:
            return "in the section: every active allergy is included, first"
        rule = (
            f"in the section: score #{self.higher[i] + 1} of the other memories "
            f"(limit {self.max_memories})"
        )
        if u.order > i:
            rule += "; what ended is history: placed after the current memories of its type"
        elif u.order < i:
            rule += (
                "; the question asks for its kind and its facts do not say it is current, so "
                "it has its own line, after the list"
            )
        return rule

    def _shared_rule(self, u: _Unit) -> str:
        s = u.shared
        why = f" ({s.why})" if s is not None and s.why else ""
        if u.kind is LineKind.LIST:
            return (
                f"in the section, on one line with the other current ones{why}: listed from "
                "its clinical facts, the line uses one place"
            )
        if u.kind is LineKind.HISTORY:
            where = "" if s is not None and s.order is None else ", after the current ones"
            return (
                f"in the section, on one line with what else ended of its type{why}{where}: "
                "listed from its clinical facts, newest first, the line uses one place"
            )
        if u.kind is LineKind.PAIR:
            return (
                "in the section, on the line of the allergy it would change: unconfirmed "
                "until a reviewer decides, so the documented allergy stays in force"
            )
        return (
            "in the section, on one line with every other allergy: the token budget holds no "
            "line for each"
        )

    def _cut(self, u: _Unit, i: int) -> None:
        if u.kind is LineKind.HISTORY and self.max_tokens is None:
            self.rules[i] = f"not in the section: the history line lists the {HISTORY_MAX} newest"
            return
        self.rules[i] = (
            f"not in the section: its line was shortened to fit the token budget "
            f"({self.max_tokens})"
        )
        if self.plan.tier[i] < 2:
            self.reported.add(i)
            self.rules[i] += "; safety-critical, reported to the reviewer"

    # --- placing ---------------------------------------------------------------------------
    def allergies(self, units: list[_Unit], entry: Callable[[int], tuple[str, str]] | None) -> None:
        """Every allergy line first; when they do not all fit, one line for them all."""
        for u in units:
            if self.fit.place_shrinking(u) is None:
                break
        else:
            self.blocked = self.fit.cut_safety()
            return
        self.fit.placed = []
        entries: list[tuple[str, str, str]] = []
        leads: list[int] = []
        for u in units:
            lead = u.shared.entries[0].members[0] if u.shared is not None else u.members[0]
            # an allergy's line names its identical statements too (they are one entry)
            leads.extend(u.members if u.kind is LineKind.SAME else (lead,))
            name, reactions = entry(lead) if entry is not None else ("", "")
            if not name:
                name, reactions = _shorten(self.plan.text(lead), PAIR_CHARS), ""
            note = (
                " (a newer, unconfirmed statement awaits review)" if u.kind is LineKind.PAIR else ""
            )
            entries.append((name, f" ({reactions})" if reactions else "", note))
        whole = allergies_unit(entries, tuple(leads), any(u.warn for u in units))
        whole.members = tuple(i for u in units for i in u.members)
        if self.fit.place(whole) is None:
            self._over_budget(whole.members, safety=True)
            self.blocked = True
        else:
            self.blocked = self.fit.cut_safety()

    def others(
        self, units: list[_Unit], claimed: Mapping[int, _Unit], moved: Mapping[int, float]
    ) -> None:
        seq: list[tuple[float, int, _Unit | int]] = [(u.order, 0, u) for u in units]
        for i, t in enumerate(self.plan.tier):
            if t != 0 and i not in claimed:
                seq.append((moved.get(i, float(i)), 1, i))
        seq.sort(key=lambda x: (x[0], x[1]))
        placed: set[int] = set()  # ids of the units placed
        for order, _, x in seq:
            if self.places >= self.max_memories and (isinstance(x, int) or x.places):
                break  # so is every later line: their reason is the places' limit
            if isinstance(x, int):
                key = self.plan.key(x)
                first = self.by_key.get(key)
                if first is not None:  # the same statement as a line tried before
                    self.dups.add(x)
                    if id(first) in placed:
                        self.plan.same(first, x)
                    else:
                        self.rules[x] = _SAME_LEFT_OUT
                    continue
                u = self.by_key[key] = self.plan.unit(x, order)
            else:
                u = x
            if self.blocked and u.tier == 2:
                for i in u.members:
                    self.rules[i] = _BLOCKED
                continue
            level = self.fit.place_shrinking(u) if u.tier < 2 else self.fit.place(u)
            if level is None:
                self._over_budget(u.members, safety=u.tier < 2)
                self.blocked = self.blocked or u.tier < 2
                continue
            self.places += u.places
            placed.add(id(u))
            # a safety-critical memory shortened out of its line: nothing less important after
            self.blocked = self.blocked or self.fit.cut_safety()

    # --- the result ------------------------------------------------------------------------
    def selection(self) -> Selection:
        plan = self.plan
        for pos, (u, level) in enumerate(self.fit.placed, start=1):  # at their final forms
            self._placed(u, level, pos)
        lines = self.fit.lines()
        text = render_section(lines)
        at: dict[int, tuple[int, _Unit, int]] = {}
        chosen: list[int] = []
        for pos, (u, level) in enumerate(self.fit.placed, start=1):
            for i in u.forms[level][1]:
                at[i] = (pos, u, level)
                chosen.append(i)

        line_of: dict[tuple[object, ...], int] = {}  # a placed memory line's key -> its place

        def rule(i: int) -> str:
            got = self.rules.get(i)
            if got is not None:
                return got
            # past the places' limit: one that repeats a line of the section names it (only
            # for the explanations: the agent's call reads no candidate past the limit)
            if not line_of:
                for key, u in self.by_key.items():
                    got_at = at.get(u.members[0])
                    if got_at is not None and got_at[1] is u:
                        line_of[key] = got_at[0]
                line_of.setdefault(("",), 0)  # done, even when none
            pos = line_of.get(self.plan.key(i)) if plan.tier[i] != 0 else None
            if pos:
                return f"not in the section: the same statement as line {pos} (collapsed into it)"
            return _limit_reason(self.higher.get(i, 0), self.max_memories)

        def build() -> tuple[ContextItem, ...]:
            items = []
            for i, c in enumerate(plan.candidates):
                safety = plan.tier[i] < 2
                where = at.get(i)
                if where is not None:
                    pos, u, level = where
                    line_text, warn = u.line(level)
                    line = render_line(pos, line_text, warn)
                    own = u.kind in (LineKind.MEMORY, LineKind.SAME)
                    notes = plan.note(i) if own or i == u.members[0] else ()
                    part = u.kind.value
                else:
                    form = plan.memory_forms(i)[0][0]
                    line_text, warn = form, plan.warn((i,))
                    line = (WARN if warn else "") + line_text
                    notes, part = plan.note(i), ""
                items.append(
                    ContextItem(
                        scored=c if c.safety == safety else replace(c, safety=safety),
                        included=where is not None,
                        position=where[0] if where is not None else None,
                        line=line,
                        tokens=count_tokens(line_text, self.encoding),
                        rule=rule(i),
                        annotations=tuple(n.text for n in notes),
                        reported=i in self.reported,
                        part_of=part,
                    )
                )
            return tuple(items)

        tokens = count_tokens(text, self.encoding)
        return Selection(text, tokens, tuple(chosen), build, self.places)


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
