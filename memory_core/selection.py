"""Which lines enter the context section, and the reason for every candidate: allergies first,
then the other lines by score under ``max_memories`` places and the token budget, with a place
held for the answer to what the question names (:func:`select`). The lines themselves and their
fitting: :mod:`memory_core.lines`. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from .context import (
    HISTORY_MAX,
    PAIR_CHARS,
    WARN,
    LineKind,
    Note,
    Selection,
    Shared,
    render_line,
    render_section,
    sanitize_line,
    tiers_of,
)
from .lines import Fitter, Plan, Unit, allergies_unit, note_of, sanitized, shorten
from .tokens import DEFAULT_ENCODING, count_tokens
from .values import ContextItem, ScoredMemory


def select(
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
    (default: its text, shortened).

    ``held``: candidate -> what the question names that it answers (its best memory about a
    slot, a key, a class: docs/section.md, "The answer gets a place"). Each holds a place: the
    other lines take places in score order only while one is left for every held candidate not
    yet placed, so a held candidate is in the section whatever fills the places above it
    (within the token budget, like any line); it keeps its place in the score order. An
    allergy holds none (every allergy is in the section)."""
    tier = tiers_of(candidates) if tiers is None else tiers
    notes: dict[int, tuple[Note, ...]] = {}

    def note(i: int) -> tuple[Note, ...]:
        got = notes.get(i)
        if got is None:
            got = notes[i] = tuple(note_of(n) for n in annotate(i)) if annotate is not None else ()
        return got

    plan = Plan(candidates, tier, note, warn_threshold)
    claimed: dict[int, Unit] = {}
    units: list[Unit] = []
    for s in shared:
        u = plan.shared_unit(sanitized(s))
        units.append(u)
        claimed.update((i, u) for i in u.members)
    moved = order or {}
    run = Selector(plan, max_memories, max_tokens, encoding)
    for i, what in (held or {}).items():
        if tier[i] != 0:
            line = claimed.get(i)
            run.hold(i, what, i if line is None else id(line))
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


def _limit_reason(n: int, limit: int) -> str:
    other = "memory" if n == 1 else "memories"
    return f"not in the section: {n} other {other} scored higher (limit {limit})"


_BLOCKED = (
    "not in the section: a safety-critical memory did not fit the token budget, so nothing "
    "less important takes its place"
)
#: the reason of a candidate whose statement is a line of the section already (or one left out
#: above, reported there): never reported again
_SAME_PREFIX = "not in the section: the same statement"
_SAME_LEFT_OUT = (
    "not in the section: the same statement as a memory left out above (its reason and report "
    "stand for this one)"
)


def _held_out(names: str) -> str:
    return (
        "not in the section: the last places are held for the answer to what the question "
        f"names ({names})"
    )


class Selector:
    """The placing of :func:`select`, and the reason of every candidate."""

    def __init__(
        self, plan: Plan, max_memories: int, max_tokens: int | None, encoding: str
    ) -> None:
        self.plan = plan
        self.max_memories = max_memories
        self.max_tokens = max_tokens
        self.encoding = encoding
        self.fit = Fitter(max_tokens, encoding)
        self.rules: dict[int, str] = {}
        self.reported: set[int] = set()
        self.places = 0
        self.blocked = False
        rest = [i for i, t in enumerate(plan.tier) if t != 0]
        self.higher = {i: k for k, i in enumerate(rest)}  # other memories with a higher score
        # identical statements (issue 25): a memory line by its key, and the candidates that
        # joined a line stating the same (they use no place and no token)
        self.by_key: dict[tuple[object, ...], Unit] = {}
        self.dups: set[int] = set()
        # what the question names: candidate -> its name, and the held candidates not yet
        # placed -> the line they wait on (their own, or the id of the shared unit they are on)
        self.held: dict[int, str] = {}
        self.waiting: dict[int, int] = {}

    def hold(self, i: int, what: str, line: int) -> None:
        """Candidate ``i`` answers ``what`` the question names: a place is held for its line."""
        self.held[i] = what
        self.waiting[i] = line

    def _pending(self) -> int:
        """Places still held: one per line a held candidate waits on."""
        return len(set(self.waiting.values()))

    def _settled(self, members: Sequence[int]) -> None:
        """These candidates were placed or left out for good: their places are no longer held."""
        for i in members:
            self.waiting.pop(i, None)

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

    def _placed(self, u: Unit, level: int, pos: int) -> None:
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
            if i in self.held and i in shown:
                self.rules[i] += (
                    f"; the question names {self.held[i]}: its best memory, a place held for it"
                )

    def _own_rule(self, i: int, u: Unit) -> str:
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

    def _shared_rule(self, u: Unit) -> str:
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

    def _cut(self, u: Unit, i: int) -> None:
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
    def allergies(self, units: list[Unit], entry: Callable[[int], tuple[str, str]] | None) -> None:
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
                name, reactions = shorten(self.plan.text(lead), PAIR_CHARS), ""
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
        self, units: list[Unit], claimed: Mapping[int, Unit], moved: Mapping[int, float]
    ) -> None:
        seq: list[tuple[float, int, Unit | int]] = [(u.order, 0, u) for u in units]
        for i, t in enumerate(self.plan.tier):
            if t != 0 and i not in claimed:
                seq.append((moved.get(i, float(i)), 1, i))
        seq.sort(key=lambda x: (x[0], x[1]))
        placed: set[int] = set()  # ids of the units placed
        for order, _, x in seq:
            members = (x,) if isinstance(x, int) else x.members
            uses = isinstance(x, int) or bool(x.places)
            holder = any(i in self.waiting for i in members)
            if uses and self.places >= self.max_memories:
                break  # so is every later line: their reason is the places' limit
            if uses and not holder and self.places + self._pending() >= self.max_memories:
                names = ", ".join(dict.fromkeys(self.held[i] for i in self.waiting))
                for i in members:
                    self.rules[i] = _held_out(names)
                continue
            self._other(x, order, placed)
            self._settled(members)

    def _other(self, x: Unit | int, order: float, placed: set[int]) -> None:
        """Place one line (a candidate's own, or a shared unit) if it fits."""
        if isinstance(x, int):
            key = self.plan.key(x)
            first = self.by_key.get(key)
            if first is not None:  # the same statement as a line tried before
                self.dups.add(x)
                if id(first) in placed:
                    self.plan.same(first, x)
                else:
                    self.rules[x] = _SAME_LEFT_OUT
                return
            u = self.by_key[key] = self.plan.unit(x, order)
        else:
            u = x
        if self.blocked and u.tier == 2:
            for i in u.members:
                self.rules[i] = _BLOCKED
            return
        level = self.fit.place_shrinking(u) if u.tier < 2 else self.fit.place(u)
        if level is None:
            self._over_budget(u.members, safety=u.tier < 2)
            self.blocked = self.blocked or u.tier < 2
            return
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
        at: dict[int, tuple[int, Unit, int]] = {}
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

        def item(i: int) -> ContextItem:
            c = plan.candidates[i]
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
            why, reported = rule(i), i in self.reported
            if (
                safety
                and where is None
                and not reported
                and i not in self.dups
                and not why.startswith(_SAME_PREFIX)
            ):  # left out by the places (or held places): reported as the budget's are
                why += "; safety-critical, reported to the reviewer"
                reported = True
            return ContextItem(
                scored=c if c.safety == safety else replace(c, safety=safety),
                included=where is not None,
                position=where[0] if where is not None else None,
                line=line,
                tokens=count_tokens(line_text, self.encoding),
                rule=why,
                annotations=tuple(n.text for n in notes),
                reported=reported,
                part_of=part,
            )

        def build() -> tuple[ContextItem, ...]:
            return tuple(item(i) for i in range(len(plan.candidates)))

        def omitted() -> tuple[ContextItem, ...]:
            # only the safety candidates are explained: an agent's call needs these, not all
            safety = (item(i) for i, t in enumerate(plan.tier) if t < 2)
            return tuple(it for it in safety if it.reported)

        tokens = count_tokens(text, self.encoding)
        return Selection(text, tokens, tuple(chosen), build, self.places, omitted)
