"""Memories: one patient's memories as a filterable table, per-memory reviewer actions (pin,
archive, base importance with a version check) and adding a memory with a preview of what it
would supersede."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core.importance import default_importance
from memory_core.labels import (
    TIER_LABELS,
    decision_words,
    offered_types,
    state_label,
    status_label,
    type_label,
)
from memory_core.validation import MAX_CONTENT_CHARS
from memory_core.values import Status, SupersessionState
from views import common

STATUSES = [s.value for s in Status]
TIERS = [t.value for t in mc.Tier]
#: the columns that fit from 1,024 px (the rest one toggle away)
COLUMNS_NARROW = ["content", "type and status", "current importance"]
COLUMNS_WIDE = [
    "content",
    "type",
    "status",
    "current importance",
    "base importance",
    "pinned",
    "accesses",
    "created",
    "last accessed",
    "tier",
]
ACTION_FLASH = "memories_action_flash"
REPLACE = "replace"
KEEP = "keep"
ADD_FLASH = "memories_add_flash"
COLUMNS = [*COLUMNS_WIDE, "type and status", "id"]


@st.cache_data(show_spinner=False, max_entries=64)
def _frame(
    store_url: str, patient_id: str, version: int, policy_json: str, minute: str
) -> pd.DataFrame:
    """The patient's memories with current importance, as of this minute (the store URL is
    part of the key: the patient version alone does not identify a store)."""
    view = common.engine().view(patient_id)
    df = pd.DataFrame(
        {
            "content": [m.content for m in view.memories],
            "type": [type_label(m.memory_type) for m in view.memories],
            "status": [status_label(s.value) for s in view.status],
            "tier": [TIER_LABELS[m.tier.value] for m in view.memories],
            "base importance": [float(m.importance) for m in view.memories],
            "current importance": [float(x) for x in view.current_importance],
            "pinned": [bool(m.pinned) for m in view.memories],
            "accesses": [int(x) for x in view.access_count],
            "created": pd.to_datetime([m.created_at for m in view.memories], utc=True),
            "last accessed": pd.to_datetime([m.last_accessed for m in view.memories], utc=True),
            "id": [m.id for m in view.memories],
        },
        columns=[c for c in COLUMNS if c != "type and status"],
    )
    df["type and status"] = df["type"] + " · " + df["status"]
    # newest first: what a reviewer looks for most often
    return df.iloc[::-1].reset_index(drop=True)


def _attempt(slot: str, action: Any, success: str) -> Any:
    """Run a change through the guarded path from a callback; remember the outcome for the next
    render (the engine refuses a viewer: nothing written, the reason shown)."""
    try:
        result = action()
    except Exception as exc:
        # by class name too: a dev server that reloaded memory_core keeps the old engine
        if not any(c.__name__ == "MemoryCoreError" for c in type(exc).__mro__):
            raise
        st.session_state[slot] = ("error", common.error_words(exc), [])
        return None
    st.session_state[slot] = ("success", success, [])
    return result


def importance_problem(value: Any, optional: bool = False) -> str | None:
    """What is wrong with a base importance typed in a form, in words (None: fine)."""
    if value is None:
        return None if optional else "Enter a base importance from 1 to 10."
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "Enter a number from 1 to 10."
    if not 1.0 <= x <= 10.0:
        return f"Base importance must be from 1 to 10; {x:g} is outside that range."
    return None


def content_problem(text: str) -> str | None:
    if not text.strip():
        return "Write the memory first: the content is empty."
    if len(text) > MAX_CONTENT_CHARS:
        return (
            f"Too long: a memory is one short statement of at most {MAX_CONTENT_CHARS:,} "
            f"characters; this has {len(text):,}. Nothing was cut: shorten it, or split it."
        )
    return None


def _show_flash(slot: str) -> None:
    flash = st.session_state.pop(slot, None)
    if not flash:
        return
    kind, text, lines = flash
    (st.error if kind == "error" else st.success)(text)
    for line in lines:
        st.text(line)


# --- callbacks: run before the rerun, with the version read when the page was rendered --------
def _toggle_pin(memory_id: str, pinned: bool, version: int, pid: str) -> None:
    if pinned:
        _attempt(
            ACTION_FLASH,
            lambda: common.acting().unpin(memory_id, expected_version=version, patient_id=pid),
            "Unpinned: the memory decays again.",
        )
    else:
        _attempt(
            ACTION_FLASH,
            lambda: common.acting().pin(memory_id, expected_version=version, patient_id=pid),
            "Pinned: the memory no longer decays and cleanup will not archive it.",
        )


def _toggle_archive(memory_id: str, archived: bool, version: int, pid: str) -> None:
    if archived:
        _attempt(
            ACTION_FLASH,
            lambda: common.acting().restore(memory_id, expected_version=version, patient_id=pid),
            "Restored.",
        )
    else:
        _attempt(
            ACTION_FLASH,
            lambda: common.acting().archive(memory_id, expected_version=version, patient_id=pid),
            "Archived (kept, and can be restored).",
        )


def _save_importance(memory_id: str, version: int, pid: str) -> None:
    value = st.session_state.get("edit_importance")
    problem = importance_problem(value)
    if problem:  # the field shows it; nothing is written and nothing says "saved"
        st.session_state[ACTION_FLASH] = ("error", f"Nothing was saved. {problem}", [])
        return
    saved = _attempt(
        ACTION_FLASH,
        lambda: common.acting().set_importance(
            memory_id, float(value), expected_version=version, patient_id=pid
        ),
        "",
    )
    if saved is not None:
        st.session_state[ACTION_FLASH] = (
            "success",
            f"Base importance saved: {saved.importance:g}.",
            [],
        )


def _save_new(patient_id: str) -> None:
    """Save the new memory. When it would replace two or more older memories, nothing is saved
    on the first click: the panel lists each with a choice (replace it, or keep both), and the
    next Save saves with those choices."""
    eng = common.engine()
    content = str(st.session_state.get("new_content") or "")
    mtype = str(st.session_state.get("new_type") or "")
    importance = st.session_state.get("new_importance")
    problems = {
        "content": content_problem(content),
        "importance": importance_problem(importance, optional=True),
    }
    st.session_state["add_problems"] = {k: v for k, v in problems.items() if v}
    if st.session_state["add_problems"]:
        st.session_state[ADD_FLASH] = ("error", "Nothing was saved: see the fields above.", [])
        return
    preview = st.session_state.get("memories_preview")
    current = preview and (preview["patient_id"], preview["content"], preview["type"]) == (
        patient_id,
        content,
        mtype,
    )
    if not current:
        try:
            preview = _preview(patient_id, content, mtype, eng.clock())
        except Exception as exc:
            if not any(c.__name__ == "MemoryCoreError" for c in type(exc).__mro__):
                raise
            st.session_state[ADD_FLASH] = ("error", common.error_words(exc), [])
            return
        st.session_state["memories_preview"] = preview
        if len(preview["hits"]) >= 2:
            st.session_state[ADD_FLASH] = (
                "error",
                f"Nothing was saved yet: this memory would replace {len(preview['hits'])} "
                "older ones. Choose for each below whether it replaces it or both stay, then "
                "press Save memory again.",
                [],
            )
            return
    assert preview is not None
    keep = {h["id"] for h in preview["hits"] if st.session_state.get(f"choice_{h['id']}") == KEEP}
    result = _attempt(
        ADD_FLASH,
        lambda: common.acting().add_memory(
            patient_id, content, mtype, importance=importance, source="dashboard", keep=keep
        ),
        "Memory added.",
    )
    if result is None:
        return
    lines = []
    for sup in result.supersessions:
        older = eng.get(sup.old_id, patient_id=patient_id)
        what = {
            SupersessionState.AUTO.value: "replaced by it now",
            SupersessionState.PENDING.value: "waiting for review on the Contradictions page",
            SupersessionState.UNDONE.value: "kept: both stay (your choice)",
            SupersessionState.REJECTED.value: "kept: both stay (your choice)",
        }.get(sup.state.value, state_label(sup.state.value))
        lines.append(f"“{older.content}”: {what}")
    text = (
        f"Memory added ({type_label(result.memory.memory_type)}, base importance "
        f"{result.memory.importance:g}). "
        + (
            f"It concerns {len(lines)} older memor{'y' if len(lines) == 1 else 'ies'}:"
            if lines
            else "It replaced nothing."
        )
    )
    st.session_state[ADD_FLASH] = ("success", text, lines)
    st.session_state["new_content"] = ""
    st.session_state["new_importance"] = None
    st.session_state.pop("memories_preview", None)


def _preview(patient_id: str, content: str, mtype: str, now: datetime) -> dict[str, Any]:
    """What adding this memory would supersede, computed once per click (writes nothing).
    The engine's preview makes the same decision as saving (threshold, exempt types and the
    adjudicator, which may be an LLM -- hence once per click, not per rerun)."""
    eng = common.engine()
    hits = eng.preview_supersessions(patient_id, content, mtype, now=now)
    importance = st.session_state.get("new_importance")
    base = float(
        importance
        if importance is not None
        else default_importance(mtype, content, eng.policy.importance_rules)
    )
    out = []
    for hit in hits:
        outcome = "would be replaced at once" if hit.mode == "auto" else "would wait for a reviewer"
        out.append(
            {
                "id": hit.memory.id,
                "content": hit.memory.content,
                "similarity": float(hit.similarity),
                "mode": hit.mode,
                "outcome": outcome,
                "evidence": hit.evidence,
                "rule": hit.rule,
                "created": f"{hit.memory.created_at.astimezone(UTC):%Y-%m-%d %H:%M}",
            }
        )
    return {
        "patient_id": patient_id,
        "content": content,
        "type": mtype,
        "importance": base,
        "threshold": eng.threshold_for(mtype),
        "hits": out,
    }


def _label(row: pd.Series) -> str:
    content = str(row["content"])
    short = content[:60] + ("…" if len(content) > 60 else "")
    return f"{short} · {row['type']}"


def _pick_from_table(shown: pd.DataFrame, rows: list[int]) -> None:
    """A row selected in the table selects that memory below (once per new selection, so the
    Memory picker can still be changed while a row stays selected)."""
    picked = str(shown.iloc[rows[0]]["id"]) if rows and rows[0] < len(shown) else None
    if picked is not None and picked != st.session_state.get("_table_pick"):
        st.session_state["action_memory"] = picked
    st.session_state["_table_pick"] = picked


# --- page --------------------------------------------------------------------------------------
common.header(
    "Memories",
    "Everything stored about one patient. Importance is on the 1–10 scale; current importance "
    "is the base after decay and access boost. Times in UTC.",
)
pid = common.require_patient(common.patient_picker())
who = common.reviewer()
editable = common.can_edit()
engine = common.engine()

now = datetime.now(UTC)
with st.spinner("Loading memories…"):
    df = _frame(
        common.store_url(),
        pid,
        common.data_version(pid),
        json.dumps(engine.policy.to_dict(), sort_keys=True, default=str),
        now.strftime("%Y-%m-%d %H:%M"),
    )

f1, f2, f3, f4 = st.columns([1, 1, 1, 2])
labels_by_type = {m.memory_type: type_label(m.memory_type) for m in engine.list_memories(pid)}
types_present = sorted(labels_by_type, key=lambda t: labels_by_type[t])
sel_types = f1.multiselect(
    "Type", types_present, key="filter_type", placeholder="All types", format_func=type_label
)
sel_status = f2.multiselect(
    "Status",
    STATUSES,
    key="filter_status",
    placeholder="All statuses",
    format_func=status_label,
)
sel_tier = f3.multiselect(
    "Tier",
    TIERS,
    key="filter_tier",
    placeholder="All tiers",
    format_func=lambda t: TIER_LABELS[t],
    help="Short-term memories fade fast until used often enough to become long-term.",
)
search = f4.text_input(
    "Search content", key="search", placeholder="e.g. metformin (case-insensitive)"
)

shown = df
if sel_types:
    shown = shown[shown["type"].isin([type_label(t) for t in sel_types])]
if sel_status:
    shown = shown[shown["status"].isin([status_label(x) for x in sel_status])]
if sel_tier:
    shown = shown[shown["tier"].isin([TIER_LABELS[x] for x in sel_tier])]
if search.strip():
    shown = shown[shown["content"].str.contains(search.strip(), case=False, regex=False)]
shown = shown.reset_index(drop=True)

st.caption(f"Patient {pid} · showing {len(shown)} of {len(df)} memories, newest first")
if df.empty:
    st.info("This patient has no memories yet: add the first one below.")
elif shown.empty:
    st.info("No memory matches these filters: clear a filter or the search text.")
else:
    wide = st.toggle(
        "More columns (base importance, pinned, uses, written, tier)",
        key="memories_wide",
        help="The extra columns may need scrolling sideways on a narrow screen.",
    )
    cols_shown = COLUMNS_WIDE if wide else COLUMNS_NARROW
    table = st.dataframe(
        shown,
        key="memories_table",
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        column_order=cols_shown,
        height=480,
        row_height=common.WRAP_ROW_HEIGHT,  # the statement wraps: read whole, no hovering
        column_config={
            "content": st.column_config.TextColumn("Memory", width=330),
            "type and status": st.column_config.TextColumn("Type · status", width=120),
            "type": st.column_config.TextColumn("Type", width=100),
            "status": st.column_config.TextColumn("Status", width=110),
            "tier": st.column_config.TextColumn("Tier", width="small"),
            "base importance": st.column_config.ProgressColumn(
                "Base",
                width="small",
                min_value=0,
                max_value=10,
                format="%.1f",
                help="Base importance (1–10) as set; decay never overwrites it.",
            ),
            "current importance": st.column_config.ProgressColumn(
                "Current",
                width=72,
                min_value=0,
                max_value=10,
                format="%.2f",
                help="Base importance after decay and access boost, now (1–10).",
            ),
            "pinned": st.column_config.CheckboxColumn(
                "Pinned", help="Pinned memories never decay.", width="small"
            ),
            "accesses": st.column_config.NumberColumn("Accesses", format="%d", width="small"),
            "created": st.column_config.DatetimeColumn(
                "Written", format="YYYY-MM-DD", timezone="UTC", width="small"
            ),
            "last accessed": st.column_config.DatetimeColumn(
                "Last used", format="YYYY-MM-DD", timezone="UTC", width="small"
            ),
        },
    )
    _pick_from_table(shown, list(table.selection.rows) if table is not None else [])
    st.caption("Select a row to act on that memory below.")

# --- per-memory actions --------------------------------------------------------------------------
st.subheader("Act on one memory")
st.caption(
    f"Every action is written to the audit log with your name ({who})."
    if who
    else "Enter your name in the sidebar: every action is written to the audit log under it."
)
common.read_only_note()
if shown.empty:
    st.info("Pick a memory from the table above: nothing matches the current filters.")
else:
    labels = dict(zip(shown["id"], shown.apply(_label, axis=1), strict=True))
    mid = st.selectbox(
        "Memory",
        list(labels),
        format_func=lambda i: labels.get(i, i),
        key="action_memory",
    )
    mem = common.run(lambda: engine.get(mid, patient_id=pid)) if mid else None
    if mem is not None:
        if (
            st.session_state.get("_edit_importance_for") != mem.id
            or "edit_importance" not in st.session_state  # dropped when another page ran
        ):
            st.session_state["edit_importance"] = float(mem.importance)
            st.session_state["_edit_importance_for"] = mem.id
        with st.container(border=True):
            st.text(mem.content)
            st.caption(
                f"{type_label(mem.memory_type)} · {status_label(mem.status.value)} · "
                f"base importance {mem.importance:g} · "
                f"{'pinned' if mem.pinned else 'not pinned'} · "
                f"created {mem.created_at.astimezone(UTC):%d %b %Y %H:%M} UTC"
            )
            if mem.superseded_by:
                newer = common.run(lambda: engine.get(str(mem.superseded_by), patient_id=pid))
                if newer is not None:
                    st.caption(f"Replaced by: {newer.content}")
            with st.expander("Technical detail"):
                st.text(
                    f"id {mem.id} · version {mem.version} · tier {mem.tier.value} · "
                    f"source {mem.source or '—'}"
                )
        archived = mem.status.value == Status.ARCHIVED.value
        a1, a2, a3, a4 = st.columns([1, 1, 1, 1], vertical_alignment="bottom")
        a1.button(
            "Unpin" if mem.pinned else "Pin",
            icon=":material/keep_off:" if mem.pinned else ":material/keep:",
            key="pin_toggle",
            disabled=not editable,
            on_click=_toggle_pin,
            args=(mem.id, mem.pinned, mem.version, pid),
            width="stretch",
        )
        a2.button(
            "Restore" if archived else "Archive",
            icon=":material/unarchive:" if archived else ":material/archive:",
            key="archive_toggle",
            disabled=not editable,
            on_click=_toggle_archive,
            args=(mem.id, archived, mem.version, pid),
            width="stretch",
        )
        a3.number_input(  # no min/max: a bad value is explained below, never silently kept
            "Base importance (1–10)",
            step=0.5,
            format="%.1f",
            key="edit_importance",
            disabled=not editable,
        )
        edit_problem = importance_problem(st.session_state.get("edit_importance"))
        if edit_problem:
            a3.error(edit_problem)
        a4.button(
            "Save",
            icon=":material/save:",
            key="save_importance",
            disabled=not editable or edit_problem is not None,
            on_click=_save_importance,
            args=(mem.id, mem.version, pid),
            width="stretch",
        )
_show_flash(ACTION_FLASH)

# --- adding a memory -----------------------------------------------------------------------------
st.subheader("Add memory")
st.caption(
    "Check first: a new memory may supersede older ones of the same type (automatically, or "
    "after review for allergies and adverse reactions)."
)
types = offered_types(engine.policy.importance_rules)
if st.session_state.get("new_type") not in types:
    st.session_state["new_type"] = "observation" if "observation" in types else types[0]
problems: dict[str, str] = st.session_state.get("add_problems", {})
with st.container(border=True):
    text = st.text_area(
        "Content",
        key="new_content",
        placeholder="One short statement, e.g. Patient now prefers evening appointments",
        height=80,
        # no max_chars: the browser would drop a longer paste silently (the field stayed
        # empty); the text is kept and refused with the reason instead
    )
    n_chars = len(text or "")
    if n_chars > MAX_CONTENT_CHARS:
        st.error(content_problem(text or ""), icon=":material/error:")
    else:
        st.caption(f"{n_chars:,} / {MAX_CONTENT_CHARS:,} characters")
        if problems.get("content") and content_problem(text or ""):
            st.error(content_problem(text or ""))
    c1, c2 = st.columns(2)
    c1.selectbox("Type", types, key="new_type", format_func=type_label)
    c2.number_input(  # no min/max: a bad value is explained next to it, never silently kept
        "Base importance (optional, 1–10)",
        value=None,
        step=0.5,
        format="%.1f",
        key="new_importance",
        placeholder="type default",
    )
    new_problem = importance_problem(st.session_state.get("new_importance"), optional=True)
    if new_problem:
        c2.error(new_problem)
    row = st.container(horizontal=True)
    preview_clicked = row.button("Check", key="preview_add", icon=":material/search:")
    row.button(
        "Save memory",
        key="save_new",
        type="primary",
        icon=":material/save:",
        on_click=_save_new,
        args=(pid,),
        disabled=not editable,
    )

if preview_clicked:
    content = str(st.session_state.get("new_content") or "")
    mtype = str(st.session_state.get("new_type") or "")
    wrong = content_problem(content) or new_problem
    if wrong:
        st.error(f"Nothing was checked. {wrong}")
        st.session_state.pop("memories_preview", None)
    else:
        with st.spinner("Embedding and comparing…"):
            checked = common.run(lambda: _preview(pid, content, mtype, now))
        if checked is not None:
            st.session_state["memories_preview"] = checked

preview = st.session_state.get("memories_preview")
if preview and preview["patient_id"] == pid:
    with st.container(border=True):
        st.markdown("**Before saving: what this memory would do**")
        st.text(f"New {type_label(preview['type']).lower()}: {preview['content']}")
        st.caption(f"Base importance {preview['importance']:g}")
        with st.expander("Technical detail"):
            st.caption(
                f"Comparison threshold {preview['threshold']:.2f} (cosine similarity of the "
                "embeddings; same type; this patient's active memories)"
            )
        if preview["hits"]:
            st.caption(
                f"It would replace {len(preview['hits'])} older "
                f"memor{'y' if len(preview['hits']) == 1 else 'ies'}. Choose for each, then "
                "Save memory:"
            )
        for hit in preview["hits"]:
            with st.container(border=True):
                st.text(hit["content"])
                if hit.get("evidence") or hit.get("rule"):
                    st.text(decision_words(hit.get("rule", ""), hit.get("evidence", "")))
                st.caption(
                    f"{hit['outcome']} · similarity {hit['similarity']:.2f} · "
                    f"written {hit['created']} UTC"
                )
                st.radio(
                    "Choice",
                    (REPLACE, KEEP),
                    key=f"choice_{hit['id']}",
                    horizontal=True,
                    label_visibility="collapsed",
                    format_func=lambda c, mode=hit["mode"]: (
                        ("The new memory replaces it" if mode == "auto" else "Send for review")
                        if c == REPLACE
                        else "Keep both"
                    ),
                )
        if not preview["hits"]:
            st.caption("No older active memory of this type would be replaced.")
_show_flash(ADD_FLASH)
