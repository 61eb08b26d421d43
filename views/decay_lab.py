"""Decay lab: tune the decay policy against one patient's memories, as of any moment, compare it
with the saved policy, and save it explicitly (audited by the engine)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core.labels import CLOCK_LABELS, MODEL_LABELS, type_label
from memory_core.policy import (
    DecayModel,
    half_life_hours,
    half_life_months,
    loss_from_hourly_lambda,
    loss_from_monthly_rate,
)
from views import charts, common

MODELS = ("exponential", "linear", "strength")
CLOCKS = ("wall", "interactions", "hybrid")
FORM_LOSS = "% per period"
FORM_HALF_LIFE = "half-life"
TOP_N = 5
CHART_DEFAULT_N = 6
MOVERS_SHOWN = 8  # the rank chart labels the memories that moved most; the rest on request
AS_OF_KEPT = "_lab_as_of_kept"
MONTHLY_PERIOD = 6.0  # months: the loss form's default period for the monthly models
STRENGTH_PERIOD = 24.0  # hours: the loss form's default period for the strength model


def _fmt(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _family(model: str) -> str:
    return "strength" if model == "strength" else "monthly"


def _rate_defaults(saved: mc.DecayPolicy, model: str) -> dict[str, float]:
    """The rate widgets' values that express the saved policy's rates for ``model``."""
    if model == "strength":
        loss = loss_from_hourly_lambda(saved.lam, STRENGTH_PERIOD)
        half = half_life_hours(saved.lam)
        period = STRENGTH_PERIOD
    else:
        monthly = cast("DecayModel", model)  # exponential or linear here
        loss = loss_from_monthly_rate(monthly, saved.rate, MONTHLY_PERIOD)
        half = half_life_months(monthly, saved.rate)
        period = MONTHLY_PERIOD
    return {
        "lab_loss_pct": round(min(max(loss * 100, 0.1), 99.0), 1),
        "lab_period": period,
        "lab_half_life": round(min(half, 1e4), 1),
    }


def _family_defaults(saved: mc.DecayPolicy, model: str) -> dict[str, Any]:
    """Widget values whose meaning depends on the model family (units, boost scale)."""
    out: dict[str, Any] = dict(_rate_defaults(saved, model))
    if model == "strength":
        out |= {
            "lab_boost": float(saved.strength_boost),
            "lab_boost_cap": float(saved.strength_boost_cap),
            "lab_short_rate": float(saved.short_term_lam),
        }
    else:
        out |= {
            "lab_boost": float(saved.boost),
            "lab_boost_cap": float(saved.boost_cap),
            "lab_short_rate": float(saved.short_term_rate),
        }
    return out


def _init_state(saved: mc.DecayPolicy) -> None:
    """Initialise the controls from the saved policy (once; widgets keep their own state)."""
    ss = st.session_state
    ss.setdefault("lab_model", saved.model)
    ss.setdefault("lab_rate_form", FORM_LOSS)
    ss.setdefault("lab_clock", saved.clock)
    ss.setdefault("lab_floor", float(saved.floor))
    ss.setdefault("lab_cleanup", float(saved.cleanup_threshold))


def _sync_family(saved: mc.DecayPolicy, model: str) -> None:
    """When the model switches between monthly and hourly units, reset the unit-dependent
    controls to the saved policy's values in the new units."""
    ss = st.session_state
    defaults = _family_defaults(saved, model)
    switched = ss.get("_lab_family") not in (None, _family(model))
    for key, value in defaults.items():
        if switched:
            ss[key] = value
        else:
            ss.setdefault(key, value)
    ss["_lab_family"] = _family(model)


def _number(
    col: Any, label: str, lo: float, hi: float, key: str, step: float, fmt: str, **kw: Any
) -> float | None:
    """A number field without silent bounds: a value outside ``lo``..``hi`` is explained in
    words under the field and ``None`` is returned (the caller then computes nothing)."""
    value = col.number_input(label, step=step, key=key, format=fmt, **kw)
    if value is None or not lo <= float(value) <= hi:
        shown = "empty" if value is None else f"{float(value):g}"
        col.error(f"{label.split(' (')[0]}: enter a value from {lo:g} to {hi:g} ({shown} is not).")
        return None
    return float(value)


def _controls(saved: mc.DecayPolicy) -> mc.DecayPolicy | None:
    """The tuning controls; returns the tuned policy (None after showing a validation error)."""
    _init_state(saved)
    with st.container(border=True):
        st.subheader("Tuned policy")
        c1, c2, c3 = st.columns(3)
        model = c1.radio(
            "Decay model",
            MODELS,
            key="lab_model",
            horizontal=True,
            format_func=lambda m: MODEL_LABELS[m],
        )
        form = c2.radio(
            "Give the long-term rate as",
            (FORM_LOSS, FORM_HALF_LIFE),
            key="lab_rate_form",
            horizontal=True,
        )
        clock = c3.radio(
            "Clock",
            CLOCKS,
            key="lab_clock",
            horizontal=True,
            format_func=lambda c: CLOCK_LABELS[c],
            help="How age is counted: in real time, in the patient's sessions since the memory "
            "was last used (a patient away for months keeps their memories), or the smaller of "
            "the two.",
        )
        _sync_family(saved, model)
        hourly = model == "strength"
        unit = "hours" if hourly else "months"
        c1, c2, c3 = st.columns(3)
        if form == FORM_LOSS:
            loss_pct = c1.slider(
                "Long-term loss per period (%)", 0.1, 99.0, step=0.1, key="lab_loss_pct"
            )
            period = _number(c2, f"Period ({unit})", 0.1, 10_000.0, "lab_period", 1.0, "%.1f")
        else:
            half = _number(
                c1, f"Long-term half-life ({unit})", 0.1, 10_000.0, "lab_half_life", 1.0, "%.1f"
            )
        if hourly:
            short = _number(
                c3,
                "Short-term memories: loss per hour",
                0.0,
                5.0,
                "lab_short_rate",
                0.005,
                "%.4f",
                help="The short-term tier's hourly rate (λ).",
            )
        else:
            short = _number(
                c3,
                "Short-term memories: share lost per month",
                0.0,
                0.99,
                "lab_short_rate",
                0.01,
                "%.3f",
            )
        c1, c2, c3, c4 = st.columns(4)
        if hourly:
            boost = _number(
                c1, "Boost per use (on the 0–1 scale)", 0.0, 1.0, "lab_boost", 0.01, "%.2f"
            )
            cap = _number(
                c2, "Boost cap (on the 0–1 scale)", 0.0, 1.0, "lab_boost_cap", 0.05, "%.2f"
            )
        else:
            boost = _number(
                c1, "Boost per use (importance points)", 0.0, 5.0, "lab_boost", 0.1, "%.2f"
            )
            cap = _number(
                c2, "Boost cap (importance points)", 0.0, 10.0, "lab_boost_cap", 0.5, "%.2f"
            )
        floor = c3.slider("Floor (importance)", 0.0, 10.0, step=0.5, key="lab_floor")
        cleanup = c4.slider(
            "Cleanup threshold (how faded, 0–1)",
            0.0,
            1.0,
            step=0.01,
            key="lab_cleanup",
            help="Active memories whose strength falls below this are archived by cleanup "
            "(never pinned ones or review-gated types). 0.05 is the default; 0.2 is aggressive.",
        )
        wrong = [x for x in (boost, cap, short, period if form == FORM_LOSS else half) if x is None]
        if wrong:
            st.warning(
                "Nothing below is computed until the fields marked in red are fixed: the saved "
                "policy is unchanged."
            )
            return None
        assert boost is not None and cap is not None and short is not None
        try:
            boosts = (
                {"strength_boost": float(boost), "strength_boost_cap": float(cap)}
                if hourly
                else {"boost": float(boost), "boost_cap": float(cap)}
            )
            shorts = (
                {"short_term_lam": float(short)} if hourly else {"short_term_rate": float(short)}
            )
            tuned = dataclasses.replace(
                saved,
                model=model,
                clock=clock,
                floor=float(floor),
                cleanup_threshold=float(cleanup),
                **boosts,
                **shorts,
            )
            defaults = _rate_defaults(saved, model)
            if form == FORM_LOSS:
                untouched = (
                    model == saved.model
                    and loss_pct == defaults["lab_loss_pct"]
                    and period == defaults["lab_period"]
                )
                if not untouched:
                    tuned = tuned.with_loss(loss_pct / 100.0, float(period or 0.0))
            else:
                untouched = model == saved.model and half == defaults["lab_half_life"]
                if not untouched:
                    tuned = tuned.with_half_life(float(half or 0.0))
        except mc.MemoryCoreError as exc:
            st.error(f"Nothing is computed: {exc}")
            return None
        if hourly:
            hl = half_life_hours(tuned.lam)
            st.caption(f"A long-term memory keeps half its strength for {hl:,.1f} hours unused.")
            with st.expander("Technical detail"):
                st.caption(
                    f"Long-term λ = {tuned.lam:.5f} per hour · short-term λ = "
                    f"{tuned.short_term_lam:.4f} per hour · saved: {saved.model}, "
                    f"λ = {saved.lam:.5f}, r = {saved.rate:.4f}/month"
                )
        else:
            hl = half_life_months(tuned.model, tuned.rate)
            st.caption(f"A long-term memory loses half its importance in {hl:,.1f} months.")
            with st.expander("Technical detail"):
                st.caption(
                    f"Long-term r = {tuned.rate:.4f} per month · short-term r = "
                    f"{tuned.short_term_rate:.3f} per month · saved: {saved.model}, "
                    f"r = {saved.rate:.4f}/month, λ = {saved.lam:.5f}/h"
                )
    return tuned


def _policy_json(p: mc.DecayPolicy) -> str:
    return json.dumps(dataclasses.asdict(p), sort_keys=True)


@st.cache_data(show_spinner=False, max_entries=64)
def _lab_frames(
    patient_id: str, version: str, saved_json: str, tuned_json: str, as_of_iso: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table of active memories as of the moment, comparison rows) — keyed on values only."""
    engine = common.engine()
    saved = mc.DecayPolicy(**json.loads(saved_json))
    tuned = mc.DecayPolicy(**json.loads(tuned_json))
    # "" = now: keyed on the data version, not on the minute (a change made later in the minute
    # must show at once)
    as_of = engine.clock() if not as_of_iso else datetime.fromisoformat(as_of_iso)
    view = engine.view(patient_id, now=as_of, policy=tuned)
    pos = {m.id: i for i, m in enumerate(view.memories)}
    deltas = engine.compare_policies(patient_id, saved, tuned, now=as_of, top_n=TOP_N)
    rows = []
    for d in deltas:
        m = d.memory
        i = pos[m.id]
        rows.append(
            {
                "id": m.id,
                "content": m.content,
                "type": type_label(m.memory_type),
                "code": m.memory_type,
                "current (tuned)": d.tuned_importance,
                "current (saved)": d.saved_importance,
                "change": d.tuned_importance - d.saved_importance,
                "rank (tuned)": d.tuned_rank,
                "rank (saved)": d.saved_rank,
                "strength (tuned)": float(view.strength[i]),
                "below cleanup (tuned)": d.tuned_cleanup,
                "created (UTC)": _fmt(m.created_at),
                "base": m.importance,
                "accesses": int(view.access_count[i]),
                "pinned": m.pinned,
                "tier": m.tier.value,
            }
        )
    table = pd.DataFrame(rows)
    compare = pd.DataFrame(
        [
            {
                "change": d.change,
                "rank (saved)": d.saved_rank,
                "rank (tuned)": d.tuned_rank,
                "importance (saved)": d.saved_importance,
                "importance (tuned)": d.tuned_importance,
                "content": d.memory.content,
                "type": type_label(d.memory.memory_type),
                "below cleanup (saved)": d.saved_cleanup,
                "below cleanup (tuned)": d.tuned_cleanup,
            }
            for d in deltas
            if d.change
        ],
        columns=[
            "change",
            "rank (saved)",
            "rank (tuned)",
            "importance (saved)",
            "importance (tuned)",
            "content",
            "type",
            "below cleanup (saved)",
            "below cleanup (tuned)",
        ],
    )
    return table, compare


def _keep_as_of() -> None:
    st.session_state[AS_OF_KEPT] = st.session_state.get("lab_as_of")


def _as_of(first: date, now: datetime) -> datetime:
    """The As-of control. Its value is kept outside the widget (updated by its own change
    callback) and given back on every run, so an edit elsewhere on the page -- a field typed
    wrong and fixed, which stops the page below the controls -- never moves it."""
    today = now.date()
    lo = min(first, today - timedelta(days=1))
    kept = st.session_state.get(AS_OF_KEPT)
    if not isinstance(kept, date) or not lo <= kept <= today:
        kept = today
    st.session_state["lab_as_of"] = kept
    chosen = st.slider(
        "As of (UTC date): everything below is computed as of the end of this day",
        min_value=lo,
        max_value=today,
        step=timedelta(days=1),
        format="YYYY-MM-DD",
        key="lab_as_of",
        on_change=_keep_as_of,
    )
    st.session_state[AS_OF_KEPT] = chosen
    if chosen >= today:
        return now
    return datetime.combine(chosen, time(23, 59), tzinfo=UTC)


def _chart_selection(table: pd.DataFrame, always_types: Collection[str]) -> list[str]:
    """The memory multiselect; default: the top memories by tuned importance plus every memory
    of a type the context always includes (``always_types``, the ranking policy's: allergies)."""
    options = table["id"].tolist()
    labels = {
        mid: f"{text[:70]}{'…' if len(text) > 70 else ''} · {mtype} · {created[:10]}"
        for mid, text, mtype, created in zip(
            table["id"], table["content"], table["type"], table["created (UTC)"], strict=True
        )
    }
    default = list(options[:CHART_DEFAULT_N])
    default += [i for i, t in zip(table["id"], table["code"], strict=True) if t in always_types]
    default = list(dict.fromkeys(default))
    ss = st.session_state
    current = ss.get("lab_memories")
    if current is None:
        ss["lab_memories"] = default
    else:
        kept = [i for i in current if i in labels]
        ss["lab_memories"] = kept if kept or not current else default
    return st.multiselect(
        "Memories to chart",
        options,
        key="lab_memories",
        format_func=lambda i: labels.get(i, i),
        help="Default: the active memories with the highest current importance, plus those of "
        f"the types every context includes ({', '.join(always_types)}).",
    )


def main() -> None:
    common.header(
        "Decay lab",
        "Tune the decay policy and see what it does to this patient's memories, as of any "
        "moment. Nothing changes until you press Save.",
    )
    pid = common.patient_picker()
    reviewer = common.reviewer()
    pid = common.require_patient(pid)
    engine = common.engine()
    saved = engine.policy.decay
    msg = st.session_state.pop("lab_saved_msg", None)
    if msg:
        st.success(msg)

    memories = engine.list_memories(pid)
    if not memories:
        st.info("This patient has no memories yet: add some on the **Memories** page.")
        st.stop()
    now = engine.clock()
    first = min(m.created_at for m in memories).date()
    as_of = _as_of(first, now)

    tuned = _controls(saved)
    if tuned is None:
        st.stop()
    st.caption(f"As of {_fmt(as_of)} UTC · patient {pid}")

    table, compare = _lab_frames(
        pid,
        common.data_version(pid),
        _policy_json(saved),
        _policy_json(tuned),
        "" if as_of >= now else as_of.isoformat(),
    )
    if table.empty:
        st.info(
            "No active memories as of this date: move the **As of** slider later, or add "
            "memories on the **Memories** page."
        )
        st.stop()

    counts = compare["change"].value_counts()
    common.metrics(
        [
            ("Active", len(table), "Active memories as of this moment."),
            (f"Enter top {TOP_N}", int(counts.get("enters top", 0)), None),
            (f"Leave top {TOP_N}", int(counts.get("leaves top", 0)), None),
            (
                "Cleanup",
                int(counts.get("falls below cleanup", 0) + counts.get("rises above cleanup", 0)),
                "Memories that fall below or rise above the cleanup threshold under the tuned "
                "policy compared with the saved one.",
            ),
            (
                "Other moves",
                int(counts.get("rank changes", 0)),
                "Other memories whose rank changes.",
            ),
        ]
    )

    selected = _chart_selection(table, engine.policy.ranking.always_include_types)
    if selected:
        visible = {mm.id: mm for mm in memories}
        chosen = [visible[i] for i in selected if i in visible]
        access = {
            k: [t for t in ts if t <= as_of]
            for k, ts in engine.access_times(pid).items()
            if k in set(selected)
        }
        live = as_of >= now.replace(second=0, microsecond=0)
        fig = charts.decay_curves(
            chosen, tuned, as_of, access, marker="now" if live else f"as of {as_of:%d %b %Y}"
        )
        st.plotly_chart(fig, key="decay_chart")
        if tuned.clock != "wall":
            st.caption(
                "Curves count age in real time; the table counts it in "
                f"{CLOCK_LABELS[tuned.clock]}."
            )
    else:
        st.info("Pick one or more memories above to draw their decay curves.")

    st.subheader("Active memories under the tuned policy")
    wide = st.toggle(
        "More columns (strength, cleanup, written, base, uses, pinned, tier)",
        key="lab_wide",
        help="The extra columns may need scrolling sideways on a narrow screen.",
    )
    narrow = ["content", "current (tuned)", "current (saved)", "change"]
    st.dataframe(
        table.drop(columns=["id", "code"]),
        key="lab_table",
        hide_index=True,
        column_order=None if wide else narrow,
        row_height=common.WRAP_ROW_HEIGHT,  # the statement wraps: read whole, no hovering
        column_config={
            "content": st.column_config.TextColumn("Memory", width=340),
            "type": st.column_config.TextColumn("Type", width="small"),
            "rank (tuned)": st.column_config.NumberColumn("Rank", width="small"),
            "current (tuned)": st.column_config.NumberColumn(
                "Tuned", format="%.2f", width=65, help="Importance now, tuned policy"
            ),
            "current (saved)": st.column_config.NumberColumn(
                "Saved", format="%.2f", width=65, help="Importance now, saved policy"
            ),
            "change": st.column_config.NumberColumn("Change", format="%+.2f", width=70),
            "strength (tuned)": st.column_config.NumberColumn(format="%.3f"),
        },
    )

    st.subheader("Saved vs tuned")
    if compare.empty:
        st.info(
            "The tuned policy gives the same ranking and cleanup outcome as the saved one. "
            "Change a control above to compare."
        )
    else:
        moved = charts.most_moved(compare.to_dict("records"))
        show_all = len(moved) > MOVERS_SHOWN and st.toggle(
            f"Show all {len(moved)} memories that move",
            key="lab_moves_all",
            help=f"The chart shows the {MOVERS_SHOWN} that move most; the table below has all.",
        )
        drawn = moved if show_all else moved[:MOVERS_SHOWN]
        st.caption(
            f"Rank by importance now under the saved policy (○) and the tuned one (●), for the "
            f"{'' if show_all else f'{len(drawn)} of {len(moved)} '}memories that move most "
            f"(entering or leaving the top {TOP_N} or crossing the cleanup threshold first)."
        )
        st.plotly_chart(charts.rank_moves(drawn, TOP_N), key="lab_slope", width="stretch")
        with st.expander(f"The {len(compare)} changes as a table"):
            st.dataframe(
                compare,
                key="lab_compare",
                hide_index=True,
                row_height=common.WRAP_ROW_HEIGHT,
                column_order=["content", "change", "rank (saved)", "rank (tuned)"],
                column_config={
                    "content": st.column_config.TextColumn("Memory", width=300),
                    "change": st.column_config.TextColumn("Move", width=110),
                    "rank (saved)": st.column_config.NumberColumn("Rank, saved", width=70),
                    "rank (tuned)": st.column_config.NumberColumn("Rank, tuned", width=70),
                },
            )

    same = tuned == saved
    editable = common.can_edit()
    st.caption(
        "Saving makes the tuned policy the engine's decay policy for every patient "
        "(recorded in the audit log with before and after)."
    )
    common.read_only_note()
    if st.button(
        "Save tuned policy",
        icon=":material/save:",
        key="lab_save",
        type="primary",
        disabled=same or not editable,
        help="The tuned policy equals the saved one." if same else None,
    ):
        if not editable:  # a disabled button can still be clicked by a crafted request
            st.error("Read-only: your account is not on the reviewer list, so nothing was saved.")
            st.stop()
        new_policy = dataclasses.replace(engine.policy, decay=tuned)

        def save() -> bool:
            common.acting().save_policy(new_policy)  # the guarded path: reviewers only
            return True

        if common.run(save):
            st.session_state["lab_saved_msg"] = (
                f"Saved the tuned decay policy ({MODEL_LABELS[tuned.model]}, age in "
                f"{CLOCK_LABELS[tuned.clock]}) as "
                f"{reviewer}; it is in the audit log."
            )
            st.rerun()


main()
