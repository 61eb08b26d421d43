"""The lines a context section may hold, and the fitting of lines under a token budget (the
work behind :func:`memory_core.context.select_and_render`; :mod:`memory_core.selection` decides
which of them enter the section and why).

A :class:`Unit` is one line: the candidates it stands for, its tier, whether it uses a place,
and its forms from the fullest to the shortest. :class:`Plan` makes the units of one selection
(a memory's own line with its annotations; a shared line: a list, a history, an allergy with the
statement pending against it; every allergy on one line); :class:`Fitter` places them under the
token budget, each at its fullest form that fits. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from .context import (
    ALLERGIES_TITLE,
    HISTORY_MAX,
    PAIR_CHARS,
    Entry,
    LineKind,
    Note,
    Shared,
    facts_key,
    render_section,
    sanitize_line,
    statement_key,
    with_annotations,
)
from .tokens import count_tokens
from .values import ScoredMemory


def note_of(n: Note | str) -> Note:
    return n if isinstance(n, Note) else Note(n)


class Unit:
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


def list_forms(
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


class Plan:
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

    def unit(self, i: int, order: float) -> Unit:
        warn = self.candidates[i].current_importance >= self.warn_threshold
        return Unit(LineKind.MEMORY, (i,), self.tier[i], order, self.memory_forms(i), warn)

    def key(self, i: int) -> tuple[object, ...]:
        """Candidates with one key state the same fact: the same type and line (see
        :func:`statement_key`: annotations and the ⚠️ marker included, except the date it was
        last asserted -- one statement recorded twice is still one line, dated by its lead)
        and the same facts."""
        m = self.candidates[i].memory
        warn = self.candidates[i].current_importance >= self.warn_threshold
        said = [n.text for n in self.note(i) if n.kind != "dated"]
        line = with_annotations(self.text(i), said)
        return statement_key(m.memory_type, line, warn), facts_key(m)

    @staticmethod
    def same(u: Unit, i: int) -> None:
        """Candidate ``i`` states what ``u``'s memory line states: it joins the line (no place,
        no token; every form of the line names it)."""
        u.kind = LineKind.SAME
        u.members = (*u.members, i)
        u.forms = [(text, u.members) for text, _ in u.forms]

    def shared_unit(self, s: Shared) -> Unit:
        members = tuple(i for e in s.entries for i in e.members)
        if s.kind is LineKind.PAIR:
            lead, *pending = s.entries
            notes = self.note(lead.members[0])
            said = [n.text for n in notes]
            if not any(n.kind == "pending" for n in notes):  # the policy writes no such note
                said.insert(0, f"(pending review: {shorten(pending[0].text, PAIR_CHARS)})")
            # the newest pending statement is the note; any other one follows it
            said += [f"(also pending review: {shorten(e.text, PAIR_CHARS)})" for e in pending[1:]]
            short = [n.short or n.text for n in notes if n.kind != "pending"]
            forms = [
                (with_annotations(lead.text, said), members),
                (with_annotations(lead.text, ["(pending review)", *short]), lead.members),
                (lead.text, lead.members),
            ]
            tier = min(self.tier[i] for i in members)
            order = float(min(members))
            return Unit(s.kind, members, tier, order, forms, self.warn(lead.members), s)
        cap = HISTORY_MAX if s.kind is LineKind.HISTORY else None
        more = "earlier" if s.kind is LineKind.HISTORY else "more"
        forms = list_forms(s.title, s.entries, cap, more)
        order = float(min(members)) if s.order is None else s.order
        return Unit(s.kind, members, 2, order, forms, self.warn(members), s)


def shorten(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def allergies_unit(
    entries: Sequence[tuple[str, str, str]], members: tuple[int, ...], warn: bool
) -> Unit:
    """Every allergy on one line (the budget holds no line for each): each ``(name, reactions,
    note)`` entry in full, then without the notes, then by name only."""

    def line(parts: Iterable[str]) -> str:
        return f"{ALLERGIES_TITLE}: " + "; ".join(parts)

    full = line(f"{n}{r}{note}" for n, r, note in entries)
    plain = line(f"{n}{r}" for n, r, _ in entries)
    names = line(n for n, _, _ in entries)
    shown = tuple(members)
    forms = [(t, shown) for t in dict.fromkeys((full, plain, names))]
    return Unit(LineKind.ALLERGIES, members, 0, -1.0, forms, warn)


class Fitter:
    """Places units under the token budget: each at its fullest form that fits."""

    def __init__(self, max_tokens: int | None, encoding: str) -> None:
        self.max_tokens = max_tokens
        self.encoding = encoding
        self.placed: list[list[Any]] = []  # [unit, level]
        self.need = 0  # tokens of the last form tried that did not fit

    def lines(self, extra: tuple[Unit, int] | None = None) -> list[tuple[str, bool]]:
        out = [u.line(lv) for u, lv in self.placed]
        if extra is not None:
            out.append(extra[0].line(extra[1]))
        return out

    def fits(self, unit: Unit, level: int) -> bool:
        if self.max_tokens is None:
            return True
        need = count_tokens(render_section(self.lines((unit, level))), self.encoding)
        if need > self.max_tokens:
            self.need = need
            return False
        return True

    def place(self, unit: Unit, start: int = 0) -> int | None:
        """The level ``unit`` was placed at (None: no form fits)."""
        for level in range(start, len(unit.forms)):
            if self.fits(unit, level):
                self.placed.append([unit, level])
                return level
        return None

    def place_shrinking(self, unit: Unit) -> int | None:
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


def sanitized(s: Shared) -> Shared:
    """``s`` with its title and entries through :func:`sanitize_line`: every text of a memory
    that reaches the section passes the same sanitiser, whoever wrote the line (a label read
    from a coded record's display name is as untrusted as a statement)."""
    entries = tuple(Entry(sanitize_line(e.text), e.members) for e in s.entries)
    return replace(s, entries=entries, title=sanitize_line(s.title))
