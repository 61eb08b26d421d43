"""Contradictions: the review queue of pending supersessions, the possibly-out-of-date flags,
their history (every decision with its Undo), a threshold tuner over the patient's same-type
similarities, and a back-scan for new candidate pairs. Every change goes through the guarded
path (``common.acting()``: the engine checks the reviewer's role)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core.labels import (
    decision_words,
    state_label,
    status_label,
    type_label,
    verdict_label,
)
from memory_core.worklist import newest_decisions_first
from views import charts, common, flag_review

READ_ONLY = common.READ_ONLY
HISTORY_STATES = ("auto", "confirmed", "rejected", "undone")
#: decisions a reviewer can take back from the history, and what the Undo says it does
UNDO_HELP = {
    "auto": "Make the older memory active again",
    "confirmed": "Make the older memory active again; the pair goes back to the review queue",
    "rejected": "Reopen the review: the pair goes back to the review queue",
}
UNDONE = {
    "auto": "Undone: the older memory is active again.",
    "confirmed": "Undone: the older memory is active again. The pair is back in the review queue.",
    "rejected": "Undone: the review is open again, back in the queue.",
}
FLAGS_TAB = "flags"  # ?review=flags opens the possibly-out-of-date tab (the worklist's link)
STATE_ICONS = {
    "pending": ":material/hourglass_top:",
    "auto": ":material/bolt:",
    "confirmed": ":material/check_circle:",
    "rejected": ":material/block:",
    "undone": ":material/undo:",
}
HISTORY_LIMIT_MAX = 500


def _fmt(dt: datetime | None) -> str:
    return dt.astimezone(UTC).strftime("%d %b %Y %H:%M") if dt else "—"


@st.cache_data(show_spinner=False, max_entries=32)
def _importance(patient_id: str, version: str) -> dict[str, tuple[float, str]]:
    """memory id -> (current importance, status) now, keyed on the store's data version only
    (issue 16: keyed on the minute, a confirmation made later in that minute was not yet "in
    effect" as of the minute's start, and the card said "active" for up to a minute)."""
    view = common.engine().view(patient_id)
    return {
        m.id: (float(view.current_importance[i]), view.status[i].value)
        for i, m in enumerate(view.memories)
    }


@st.cache_data(show_spinner=False, max_entries=32)
def _similarities(patient_id: str, version: str) -> dict[str, np.ndarray]:
    """Per type, the cosine of every same-type pair of active memories (arrays, not rows: a
    patient with thousands of memories has millions of pairs); keyed on the data version."""
    return common.engine().similarity_values(patient_id)


@st.cache_data(show_spinner=False, max_entries=64)
def _pairs(patient_id: str, version: str, min_similarity: float) -> pd.DataFrame:
    """The same-type pairs at or above ``min_similarity``, older first (keyed on the data
    version)."""
    engine = common.engine()
    pairs = engine.similarity_pairs(patient_id, min_similarity=min_similarity)
    known = {(s.old_id, s.new_id): s.state.value for s in engine.supersessions(patient_id)}
    return pd.DataFrame(
        [
            {
                "older": a.content,
                "newer": b.content,
                "type": type_label(a.memory_type),
                "similarity": float(sim),
                "type threshold": engine.threshold_for(a.memory_type),
                "older created (UTC)": _fmt(a.created_at),
                "newer created (UTC)": _fmt(b.created_at),
                "record": state_label(known.get((a.id, b.id)) or known.get((b.id, a.id)) or "")
                if (a.id, b.id) in known or (b.id, a.id) in known
                else "",
            }
            for a, b, sim in pairs
        ],
        columns=[
            "older",
            "newer",
            "type",
            "similarity",
            "type threshold",
            "older created (UTC)",
            "newer created (UTC)",
            "record",
        ],
    )


def _memory_side(
    label: str, mem: mc.Memory | None, current: dict[str, tuple[float, str]], mid: str
) -> None:
    st.caption(label)
    if mem is None:
        st.text(f"(memory {mid} not found)")
        return
    st.text(mem.content)
    imp, status = current.get(mem.id, (float("nan"), mem.status.value))
    st.caption(
        f"{type_label(mem.memory_type)} · written {_fmt(mem.created_at)} · "
        f"importance now {imp:.1f} of 10 · {status_label(status)}"
    )


def _card(
    engine: mc.MemoryEngine,
    sup: mc.Supersession,
    mems: dict[str, mc.Memory],
    current: dict[str, tuple[float, str]],
    reviewer: str,
) -> None:
    state = sup.state.value
    editable = common.can_edit()
    with st.container(border=True, key=f"card_{sup.id}"):
        reopened = state == "pending" and sup.decided_by is not None
        again = (
            f" again: {sup.decided_by} undid the earlier decision on {_fmt(sup.decided_at)}"
            if reopened
            else ""
        )
        st.caption(
            f"{STATE_ICONS.get(state, '')} {state_label(state)}{again}"
            + f" · the newer memory {verdict_label(sup.verdict)} the older one"
            + (
                f" · decided by {sup.decided_by} on {_fmt(sup.decided_at)}"
                if sup.decided_by and state not in ("auto", "pending")
                else ""
            )
        )
        rule, evidence = getattr(sup, "rule", ""), getattr(sup, "evidence", "")
        if rule or evidence:  # the decision's rule and its evidence, in plain words
            st.caption(decision_words(rule, evidence))
        older, newer = st.columns(2)
        with older:
            _memory_side("Older", mems.get(sup.old_id), current, sup.old_id)
        with newer:
            _memory_side("Newer", mems.get(sup.new_id), current, sup.new_id)
        with st.expander("Technical detail"):
            st.text(
                f"record {sup.id} · state {state} · verdict {sup.verdict} · method {sup.method} "
                f"· similarity (cosine of the two statements' embeddings, −1…1) "
                f"{sup.similarity:.3f} · detected {_fmt(sup.detected_at)} UTC"
            )
        if state == "pending":
            row = st.container(horizontal=True)
            if row.button(
                "Confirm",
                icon=":material/check:",
                key=f"confirm_{sup.id}",
                help="The newer one replaces it",
                disabled=not editable,
            ):
                _act(
                    lambda: common.acting().confirm_supersession(sup.id, patient_id=sup.patient_id),
                    "Confirmed: the older memory is superseded.",
                )
            if row.button(
                "Keep both",
                icon=":material/block:",
                key=f"reject_{sup.id}",
                help="Both memories stand (History → Undo reopens the review)",
                disabled=not editable,
            ):
                _act(
                    lambda: common.acting().reject_supersession(sup.id, patient_id=sup.patient_id),
                    "Both kept: both memories stay active. History → Undo reopens the review.",
                )
        elif state in UNDO_HELP and st.button(
            "Undo",
            icon=":material/undo:",
            key=f"undo_{sup.id}",
            help=UNDO_HELP[state],
            disabled=not editable,
        ):
            _act(
                lambda: common.acting().undo_supersession(sup.id, patient_id=sup.patient_id),
                UNDONE[state],
                check=lambda: engine.store.get_supersession(sup.id).state.value != state,
            )


def _act(
    action: Callable[[], object], message: str, check: Callable[[], bool] | None = None
) -> None:
    """Run a reviewer action; report success only when it happened (``check`` re-reads the
    store)."""
    if not common.can_edit():  # a disabled button can still be clicked by a crafted request
        st.error(READ_ONLY)
        return
    if common.run(action) is not None and (check is None or check()):
        st.session_state["contra_msg"] = message
        st.rerun()


def main() -> None:
    common.header(
        "Contradictions",
        "When a newer memory contradicts, updates or duplicates an older one of the same type, "
        "the older one is superseded (kept, never deleted). Review pending ones here.",
    )
    pid = common.patient_picker()
    reviewer = common.reviewer()
    pid = common.require_patient(pid)
    open_flags = st.query_params.get("review") == FLAGS_TAB
    engine = common.engine()
    common.read_only_note()
    msg = st.session_state.pop("contra_msg", None)
    if msg:
        st.success(msg)

    version = common.data_version(pid)  # names the store, covers content and accesses
    current = _importance(pid, version)
    sups = engine.supersessions(pid)
    ids = {s.old_id for s in sups} | {s.new_id for s in sups}
    mems = {m.id: m for m in engine.list_memories(pid) if m.id in ids}

    pending = [s for s in sups if s.state.value == "pending"]
    # allergies first (as on the worklist), then the longest waiting
    pending.sort(
        key=lambda s: (
            getattr(mems.get(s.old_id), "memory_type", "") != "allergy",
            s.detected_at,
        )
    )
    history_all = [s for s in sups if s.state.value != "pending"]
    flags = common.run(lambda: engine.stale_flags(pid)) or []
    labels = [
        f":material/hourglass_top: Review queue ({len(pending)})",
        f":material/schedule: Possibly out of date ({len(flags)})",
        f":material/history: History ({len(history_all)})",
        ":material/tune: Threshold tuner & scan",
    ]
    queue_tab, flags_tab, history_tab, tuner_tab = st.tabs(
        labels, default=labels[1] if open_flags else None
    )
    with queue_tab:
        if not pending:
            st.info(
                "Nothing waits for review. Review-gated types (allergies, adverse reactions) "
                "land here when a new memory looks like it replaces an older one; use **Scan "
                "for contradictions** in the threshold tab to check existing memories."
            )
        for sup in pending:
            _card(engine, sup, mems, current, reviewer)
    with flags_tab:
        flag_review.flag_cards(engine, flags)
    with history_tab:
        _history(engine, history_all, mems, current, reviewer)
    with tuner_tab:
        _tuner(engine, pid, version)
        _scan(engine, pid, reviewer)


def _history(
    engine: mc.MemoryEngine,
    history_all: list[mc.Supersession],
    mems: dict[str, mc.Memory],
    current: dict[str, tuple[float, str]],
    reviewer: str,
) -> None:
    c1, c2 = st.columns([3, 1])
    states = c1.multiselect(
        "States",
        HISTORY_STATES,
        default=list(HISTORY_STATES),
        key="history_states",
        format_func=state_label,
    )
    raw = c2.number_input("Show at most", value=10, step=5, key="history_limit")
    problem = common.count_problem(raw, 1, HISTORY_LIMIT_MAX)
    if problem:
        c2.error(problem)
        return
    limit = int(raw)
    history = newest_decisions_first([s for s in history_all if s.state.value in states], mems)
    if not history:
        st.info("No supersessions in the chosen states yet.")
        return
    st.caption(f"Newest decision first · showing {min(len(history), limit)} of {len(history)}")
    for sup in history[:limit]:
        _card(engine, sup, mems, current, reviewer)


def _tuner(engine: mc.MemoryEngine, pid: str, version: str) -> None:
    sims = _similarities(pid, version)
    default = float(engine.contradiction_threshold)
    threshold = st.slider(
        "Contradiction threshold (similarity)",
        min_value=0.0,
        max_value=1.0,
        value=round(default, 2),
        step=0.01,
        key="contra_threshold",
        help="How alike two statements of the same type must be (the cosine of their "
        "embeddings, −1…1) to be compared for a replacement. Preview only: this does not "
        "change the engine's policy (Settings & audit does).",
    )
    types = sorted(sims)
    per_type = ", ".join(
        f"{type_label(t).lower()} {engine.threshold_for(t):.2f}"
        for t in types
        if engine.threshold_for(t) != engine.contradiction_threshold
    )
    st.caption(
        f"Engine's global threshold {default:.2f}. "
        f"Per-type thresholds that differ from it for this patient's types: {per_type or 'none'}. "
        "The slider previews one threshold for every type; the **type threshold** column shows "
        "what the engine uses."
    )
    if not sims:
        st.info("This patient has no two active memories of the same type to compare.")
        return
    if getattr(sims, "sampled", False):  # past 2,000,000 pairs the histogram is a sample
        st.caption(
            f"{sims.describe()} The flagged pairs below are exact (the 100,000 most similar "
            "at most)."
        )
    everything = np.concatenate(list(sims.values()))
    st.plotly_chart(charts.similarity_histogram(everything, threshold), key="sim_hist")
    flagged = _pairs(pid, version, float(threshold))
    common.metrics(
        [
            ("Same-type pairs", f"{everything.size:,}", None),
            (f"Flagged at {threshold:.2f}", len(flagged), None),
            (
                "Flagged by the engine's thresholds",
                int(sum((vals >= engine.threshold_for(t)).sum() for t, vals in sims.items())),
                "Pairs at or above each type's own threshold (the table in Settings & audit).",
            ),
        ]
    )
    st.dataframe(
        flagged,
        key="flagged_pairs",
        hide_index=True,
        row_height=common.WRAP_ROW_HEIGHT_4,
        column_order=["older", "newer", "similarity", "record"],
        column_config={
            "older": st.column_config.TextColumn("Older", width=195),
            "newer": st.column_config.TextColumn("Newer", width=195),
            "similarity": st.column_config.NumberColumn(
                "Similarity",
                format="%.2f",
                width=75,
                help="Cosine of the two statements' embeddings (−1…1); the type's own "
                "threshold is in Settings & audit.",
            ),
            "record": st.column_config.TextColumn(
                "Decision", width=90, help="The existing supersession, if any"
            ),
        },
    )


def _scan(engine: mc.MemoryEngine, pid: str, reviewer: str) -> None:
    st.subheader("Scan")
    st.caption(
        "Checks every same-type pair of active memories at or above the engine's thresholds "
        "that has no supersession yet; review-gated types go to the queue, others apply "
        "automatically (and can be undone)."
    )
    if st.button(
        "Scan for contradictions",
        icon=":material/manage_search:",
        key="scan",
        disabled=not common.can_edit(),
    ):
        if not common.can_edit():
            st.error(READ_ONLY)
            return
        with st.spinner("Comparing this patient's memories…"):
            found = common.run(lambda: common.acting().scan_contradictions(pid))
        if found is not None:
            n_pending = sum(s.state.value == "pending" for s in found)
            st.session_state["contra_msg"] = (
                f"Scan found {len(found)} new supersession(s): {n_pending} pending review, "
                f"{len(found) - n_pending} applied automatically."
                if found
                else "Scan found no new candidate pairs."
            )
            st.rerun()


main()
