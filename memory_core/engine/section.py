"""The context section built from a ranking (:mod:`.retrieval`): its tiers (an adverse reaction
is safety-critical when it concerns a drug in play), the lines several memories share (a list
the question asks for, what ended, an allergy and the statement pending against it), the place
held for the answer to what the question names, each line's annotations, and the selection
under the places and the token budget (:mod:`memory_core.selection`); the system prompt around
it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from .. import context as ctx
from .. import flags, standing, vocabulary
from .. import validation as v
from ..contradictions import facts_of
from ..errors import ValidationError
from ..facts.model import KeyKind
from ..policy import ContextPolicy, EnginePolicy
from ..question import Question, Target
from ..values import ContextResult, InjectionRecord, Memory, StaleFlag, SupersessionState
from . import derived, flagging, retrieval
from .asof import active_indices
from .core import Core, new_id
from .derived import reading_of
from .retrieval import F32, Ranked
from .snapshot import Snapshot


def build_context(
    core: Core,
    patient_id: str,
    query: str,
    now: datetime | None,
    max_memories: int,
    max_tokens: int | None,
    record: bool,
    query_vector: F32 | None,
    policy: EnginePolicy | None,
    agent: str | None = None,
) -> ContextResult:
    """The exact "Patient Context from Previous Interactions" section for this query, with
    every candidate explained (``policy``: default the engine's). ``record`` (an agent call)
    refreshes the included memories and appends an injection record (naming ``agent``, the
    agent principal told, when given)."""
    v.patient_id(patient_id)
    v.query(query)
    max_memories = v.positive_int(max_memories, "max_memories")
    if max_tokens is not None:
        max_tokens = v.positive_int(max_tokens, "max_tokens")
    query_vector = retrieval.query_vec(core, query_vector)
    agent = None if agent is None else v.actor(agent, "agent")
    present = now is None
    now = core.now(now)
    if record:
        now = retrieval.access_moment(core, now)
    pol = policy or core.policy
    ranked = retrieval.rank(core, patient_id, query, now, query_vector, pol, present=present)
    snap = ranked.snapshot
    layout = section_layout(snap, ranked, now, pol.context)
    held = held_places(snap, ranked, max_memories) if pol.context.answer_places else None
    sel = ctx.select_and_render(
        ranked,
        max_memories=max_memories,
        max_tokens=max_tokens,
        warn_threshold=pol.decay.warn_threshold,
        encoding=core.encoding,
        tiers=section_tiers(snap, ranked, now),
        annotate=annotator(core, snap, patient_id, ranked, now, pol.context),
        shared=layout.shared,
        order=layout.order,
        allergy_entries=lambda i: standing.allergy_label(ranked[i].memory),
        held=held,
    )
    injection_id = None
    if record:
        included = [ranked[i] for i in sel.chosen]  # in section order
        injection = InjectionRecord(
            id=new_id("inj"),
            at=now,
            patient_id=patient_id,
            query=query,
            items=tuple((s.memory.id, s.score) for s in included),
            tokens=sel.tokens,
            text=sel.text,
            agent=agent,
        )
        retrieval.record_access(core, patient_id, [s.memory.id for s in included], now, injection)
        injection_id = injection.id
    return ContextResult(
        text=sel.text,
        tokens=sel.tokens,
        encoding=core.encoding,
        injection_id=injection_id,
        explain=lambda: tuple(replace(i, scored=ranked.matched(i.scored)) for i in sel.items),
        places=sel.places,
        omit=lambda: tuple(replace(i, scored=ranked.matched(i.scored)) for i in sel.omitted()),
    )


# --- the section's tiers and shared lines ------------------------------------------------------
def current_drugs(snap: Snapshot, now: datetime) -> frozenset[str]:
    """The drugs the patient's current medications name at ``now``, with their ingredients
    and allergy classes (:func:`vocabulary.drug_family`)."""
    active = active_indices(snap, now)
    names: list[str] = []
    for row in active[snap.types_arr[active] == "medication"].tolist():  # numpy picks the few
        r = reading_of(snap, row)
        if r.standing is standing.Standing.CURRENT:
            names += [f.name for f in r.facts if f.kind.value == "drug"]
    return vocabulary.drug_family(names)


def section_tiers(snap: Snapshot, ranked: Ranked, now: datetime) -> list[int]:
    """The context tiers of the candidates: 0 allergy; 1 an adverse reaction concerning a drug
    the question or one of the patient's current medications names -- the same drug, one of
    its ingredients or a class it belongs to, by the drug dictionary (co-codamol: codeine;
    amoxicillin: penicillins) -- or any adverse reaction when the question asks about
    allergies and reactions; 2 the rest (never by importance)."""
    tiers = list(ranked.tiers)
    if 1 not in tiers:
        return tiers
    question = ranked.question
    if question.asks_for("adverse_reaction") is not None:
        return tiers
    drugs = set(question.drugs) | current_drugs(snap, now)
    for j, t in enumerate(tiers):
        if t != 1:
            continue
        facts = facts_of(ranked[j].memory)
        names = [f.name for f in facts.facts if f.kind.value == "drug"]
        if not (vocabulary.drug_family(names) & drugs):
            tiers[j] = 2
    return tiers


class Layout:
    """The shared lines of a section (:class:`context.Shared`) and the candidates whose own
    line moves (``order``: what ended, after the current memories of its type; a memory of a
    kind the question asks for that no list can say, right after the lists)."""

    def __init__(self) -> None:
        self.shared: list[ctx.Shared] = []
        self.order: dict[int, float] = {}


def _about_drug(question: Question, r: standing.Reading) -> bool:
    """The question names a class this memory's drug belongs to ("the diabetes medication")."""
    return any(question.about_drug(f.name) for f in r.facts if f.kind.value == "drug")


def section_layout(
    snap: Snapshot, ranked: Ranked, now: datetime, policy: ContextPolicy | None = None
) -> Layout:
    """What the section says on shared lines (domain.md, "Injected context format"):

    - **lists**: when the question asks for a kind ("what medications", "active problems",
      "latest labs"), every current candidate of its types on one line from its facts, one
      entry per label (a result: the newest of its analyte);
    - **history**: what ended (a drug stopped, a condition resolved, an order completed), unless
      the question is about it, goes after the current memories of its type; two or more of a
      type share one line, newest first;
    - **pairs**: an allergy and the newer allergy statements pending review against it, on one
      line (the documented one in force, the newer one unconfirmed).

    Each is switched by the ``policy`` (``lists``, ``history_last``, ``allergy_pairs``)."""
    pol = policy or ContextPolicy()
    out = Layout()
    question = ranked.question if pol.lists else replace(ranked.question, kinds=())
    # the types that can have a history line, and those of a kind asked for with a list line
    wanted = standing.ENDING_TYPES | {
        t for k in question.kinds for t in k.types if vocabulary.line_title(t, "current")
    }
    by_type: dict[str, list[int]] = {}
    types = snap.types
    for j, row in enumerate(ranked.rows.tolist()):
        if types[row] in wanted:
            by_type.setdefault(types[row], []).append(j)
    for t, js in by_type.items():
        dated = now if t in pol.dated_types else None
        _type_lines(snap, ranked, question, t, js, out, pol.history_last, dated)
    if pol.allergy_pairs:
        _pairs(snap, ranked, now, out)
    return out


def _type_lines(
    snap: Snapshot,
    ranked: Ranked,
    question: Question,
    t: str,
    js: list[int],
    out: Layout,
    history: bool,
    dated: datetime | None = None,
) -> None:
    """The list line of type ``t`` (when the question asks for it) and its history (``history``:
    what ended goes last); ``dated``: the list's entries say when they were last asserted as of
    this moment (the policy's ``dated_types``)."""
    rows = ranked.rows.tolist()
    n = len(ranked)
    read = {j: reading_of(snap, rows[j]) for j in js}
    wanted = question.asks_for_ended(t)  # "past medications": what ended, in score order
    ended = [
        j
        for j in js
        if read[j].standing is standing.Standing.ENDED
        and (wanted or not (read[j].keys & question.keys or _about_drug(question, read[j])))
    ]
    kind = question.asks_for(t)
    title = vocabulary.line_title(t, "current")
    if kind is not None and title:
        current = [j for j in js if read[j].standing is standing.Standing.CURRENT]
        entries = _entries(ranked, current, read, t, dated)
        listed = {i for e in entries for i in e.members}
        if entries:
            # the question asks for it: the list leads the other lines
            lead = -1.0 + question.kinds.index(kind) / 100
            why = f"the question asks for the {kind.name}"
            out.shared.append(ctx.Shared(ctx.LineKind.LIST, entries, title, why, lead))
        for j in js:  # what no list can say follows the lists, in score order
            if j not in listed and read[j].standing is not standing.Standing.ENDED:
                out.order[j] = -0.5 + j / (2 * n)
    last = max((j for j in js if read[j].standing is not standing.Standing.ENDED), default=None)
    if not history:
        return
    if len(ended) >= 2 or (wanted and ended):
        ended.sort(key=lambda j: -ranked[j].memory.created_at.timestamp())
        entries = tuple(
            ctx.Entry(standing.ended_label(ranked[j].memory, read[j].facts), (j,)) for j in ended
        )
        title = vocabulary.line_title(t, "ended") or f"Ended ({t.replace('_', ' ')})"
        if wanted:
            why, after = "the question asks for what ended", None
        else:
            why = "what ended is history"
            after = None if last is None else max(last, min(ended)) + 0.5
        out.shared.append(ctx.Shared(ctx.LineKind.HISTORY, entries, title, why, after))
    elif ended and last is not None and last > ended[0]:
        out.order[ended[0]] = last + 0.5


def _entries(
    ranked: Ranked,
    current: list[int],
    read: dict[int, standing.Reading],
    t: str,
    dated: datetime | None = None,
) -> tuple[ctx.Entry, ...]:
    """One entry per label, in score order; a result or vital sign only the newest of its
    analyte (the older ones keep their own lines). ``dated``: each entry ends with when it was
    last asserted as of that moment -- of the memories saying its label, the latest."""
    if t in ("lab_result", "vital_sign"):
        newest: dict[frozenset[str], int] = {}
        for j in current:
            k = read[j].keys
            if k not in newest or ranked[j].memory.created_at > ranked[newest[k]].memory.created_at:
                newest[k] = j
        current = [j for j in current if newest.get(read[j].keys) == j]
    groups: dict[str, list[int]] = {}
    for j in current:
        groups.setdefault(standing.label(ranked[j].memory, read[j].facts), []).append(j)
    if dated is not None:
        return tuple(
            ctx.Entry(f"{text} {_latest_date(ranked, js, dated)}", tuple(js))
            for text, js in groups.items()
            if text
        )
    return tuple(ctx.Entry(text, tuple(js)) for text, js in groups.items() if text)


def _latest_date(ranked: Ranked, js: list[int], now: datetime) -> str:
    """The date annotation of the memory among ``js`` last asserted as of ``now``."""
    latest = max((ranked[j].memory for j in js), key=lambda m: m.age_start(now))
    return flags.dated_annotation(latest, now)


def _pairs(snap: Snapshot, ranked: Ranked, now: datetime, out: Layout) -> None:
    """An allergy and the newer allergies pending review against it, as one line. Only the
    allergies with a supersession record as the older memory are looked at (every active
    allergy is a candidate)."""
    index = snap.flag_index()
    by_old = index.by_old
    mems = snap.memories
    rows = ranked.rows.tolist()
    allergies = {mems[rows[j]].id: j for j, t in enumerate(ranked.tiers) if t == 0}
    if len(allergies) < 2 or not any(mid in by_old for mid in allergies):
        return
    taken: set[int] = set()
    for mid, j in sorted(allergies.items(), key=lambda kv: kv[1]):
        sups = index.by_old.get(mid, ())
        if j in taken or not sups:
            continue
        newer = [
            allergies[s.new_id]
            for s in sups
            if s.state is SupersessionState.PENDING and s.new_id in allergies
        ]
        newer = [n for n in dict.fromkeys(newer) if n not in taken and n != j]
        older = mems[rows[j]]
        if not newer or index.pending_annotation(older, now, snap.memory_of) is None:
            continue  # nothing pending against it at ``now`` (the flags' clock)
        newer.sort(key=lambda n: -mems[rows[n]].created_at.timestamp())
        taken.update((j, *newer))
        entries = (
            ctx.Entry(ctx.sanitize_line(older.content), (j,)),
            *(ctx.Entry(ctx.sanitize_line(mems[rows[n]].content), (n,)) for n in newer),
        )
        out.shared.append(ctx.Shared(ctx.LineKind.PAIR, entries, why="pending review"))


#: The memo key of the lab results' history lines kept with a snapshot (see :func:`annotator`).
LAB_HISTORY = "lab-history"


def annotator(
    core: Core,
    snap: Snapshot,
    patient_id: str,
    ranked: Ranked,
    now: datetime,
    policy: ContextPolicy,
) -> Callable[[int], tuple[ctx.Note, ...]]:
    """Candidate index -> the annotations of its line, as the policy switches them on
    (:mod:`memory_core.flags`): when it was last asserted (a type the policy dates), pending
    review, possibly stale, lab history -- each with the short form a safety line may use
    under the token budget (a pending review and a possible staleness are shortened, never
    dropped; a lab history and a date may go). Each is looked up for the line's own memory
    in the snapshot's flag index (never every flag of the patient); the reviewers' keep
    decisions are read once, and only when a line has a flag."""
    index = snap.flag_index()
    kept: dict[tuple[str, str], datetime] | None = None
    # once every record's moments are past, a lab's history is the same at any later moment:
    # kept with the snapshot (it walks the analyte's whole chain: 1,700 links at 10,000)
    settled = bool(snap.memories) and now.timestamp() >= max(
        snap.settled_s, float(snap.created_s.max())
    )

    def lab_history(m: Memory) -> str | None:
        limit = policy.lab_history_max
        if not settled:
            return index.lab_history(m, now, snap.memory_of, limit=limit)
        lines: dict[tuple[str, int], str | None] = snap.memoized(LAB_HISTORY, dict)
        key = (m.id, limit)
        if key not in lines:
            lines[key] = index.lab_history(m, now, snap.memory_of, limit=limit)
        return lines[key]

    def flag_of(m: Memory) -> StaleFlag | None:
        nonlocal kept
        if not flags.flagged_by(m.memory_type) or not index.flags_of(m, now, newest=True):
            return None
        if kept is None:
            kept = flagging.kept(core, patient_id)
        found = index.flags_of(m, now, kept, newest=True)
        return found[0] if found else None

    def annotate(i: int) -> tuple[ctx.Note, ...]:
        m = ranked[i].memory
        out: list[ctx.Note] = []
        if m.memory_type in policy.dated_types:  # may go from a safety line to fit the budget
            out.append(ctx.Note(flags.dated_annotation(m, now), "", "dated"))
        if policy.annotate_pending:
            pending = index.pending_annotation(m, now, snap.memory_of)
            if pending:
                out.append(ctx.Note(pending, "(pending review)", "pending"))
        if policy.annotate_stale:
            f = flag_of(m)
            if f is not None:
                out.append(ctx.Note(f.annotation, f"(may be outdated: {f.subject})", "stale"))
        if policy.annotate_lab_history and m.memory_type == "lab_result":
            hist = lab_history(m)
            if hist:
                out.append(ctx.Note(hist, "", "history"))
        return tuple(out)

    return annotate


# --- the answer gets a place -----------------------------------------------------------------
def held_places(snap: Snapshot, ranked: Ranked, max_memories: int) -> dict[int, str]:
    """Candidate -> what the question names that it answers: for each of the question's
    targets (a slot, a body system, a drug class, a drug or result it names), in order, its
    best memory holds a place in the section (:func:`memory_core.selection.select`) -- the
    first candidate in score order about one of its keys, else about a drug of its class, else
    (a slot's words) a social-history memory holding one of them. An allergy holds none (every
    allergy is in the section); at most ``max_memories - 1`` are held (one place stays with the
    score order), and at least one."""
    targets = ranked.question.targets
    if not targets or len(ranked) == 0:
        return {}
    rows = ranked.rows.tolist()
    open_ = [j for j, t in enumerate(ranked.tiers) if t != 0]
    out: dict[int, str] = {}
    for t in targets:
        if len(out) >= max(1, max_memories - 1):
            break
        for how in (_by_key, _by_class, _by_words):
            j = next((j for j in open_ if j not in out and how(snap, rows[j], t)), None)
            if j is not None:
                out[j] = t.name
                break
    return out


def _by_key(snap: Snapshot, row: int, t: Target) -> bool:
    """The row's memory is about one of ``t``'s keys (a key match of its type)."""
    keys = reading_of(snap, row).keys & t.keys
    return bool(keys) and retrieval.keyed(snap.types[row], keys)


def _by_class(snap: Snapshot, row: int, t: Target) -> bool:
    """The row's memory (of a type keyed by drugs) is about a drug of ``t``'s class."""
    if not t.members or snap.types[row] not in retrieval.keyed_types(KeyKind.DRUG):
        return False
    keys = reading_of(snap, row).keys
    return any(t.about_drug(k.partition(":")[2]) for k in keys if k.startswith("drug:"))


def _by_words(snap: Snapshot, row: int, t: Target) -> bool:
    """The row's memory is of the social history, preferences or plans and holds one of the
    word forms of ``t``'s slot (a slot the facts reader does not key: travel, fasting)."""
    if not t.forms or snap.types[row] not in retrieval.SLOT_TYPES:
        return False
    return not t.forms.isdisjoint(derived.word_forms(snap, row))


def build_system_prompt(
    core: Core,
    patient_id: str,
    session_context: str,
    query: str | None,
    now: datetime | None,
    max_memories: int,
    max_tokens: int | None,
    record: bool,
) -> str:
    """The memory section for ``query`` in the system prompt. Without a query the session
    context is the query: its first :data:`validation.MAX_QUERY_CHARS` characters (a longer
    session context is not refused -- the prompt shows it cut at its cap, README)."""
    if not isinstance(session_context, str):
        raise ValidationError(
            "session_context", f"must be a string, got {type(session_context).__name__}"
        )
    q = v.session_query(session_context) if query is None else query
    result = build_context(core, patient_id, q, now, max_memories, max_tokens, record, None, None)
    return ctx.build_system_prompt(result.text, session_context, core.role)
