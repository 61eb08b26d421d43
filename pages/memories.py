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
from memory_core.importance import KNOWN_TYPES, default_importance
from memory_core.values import Status, SupersessionState
from pages import common

STATUSES = [s.value for s in Status]
TIERS = [t.value for t in mc.Tier]
ACTION_FLASH = "memories_action_flash"
ADD_FLASH = "memories_add_flash"
COLUMNS = [
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
    "id",
]


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
            "type": [m.memory_type for m in view.memories],
            "status": [s.value for s in view.status],
            "tier": [m.tier.value for m in view.memories],
            "base importance": [float(m.importance) for m in view.memories],
            "current importance": [float(x) for x in view.current_importance],
            "pinned": [bool(m.pinned) for m in view.memories],
            "accesses": [int(x) for x in view.access_count],
            "created": pd.to_datetime([m.created_at for m in view.memories], utc=True),
            "last accessed": pd.to_datetime([m.last_accessed for m in view.memories], utc=True),
            "id": [m.id for m in view.memories],
        },
        columns=COLUMNS,
    )
    # newest first: what a reviewer looks for most often
    return df.iloc[::-1].reset_index(drop=True)


def _actor() -> str:
    """Who acts, read inside callbacks: the signed-in identity with [auth], else the name typed
    in the sidebar (the same rule as common.reviewer(), without creating the widget)."""
    if common.auth_configured():
        return common.identity()
    return str(st.session_state.get("reviewer") or "").strip() or "reviewer"


def _attempt(slot: str, action: Any, success: str) -> Any:
    """Run an engine call from a callback; remember the outcome for the next render."""
    if not common.can_edit():  # checked again here, not only by disabling the buttons
        st.session_state[slot] = ("error", "Read-only: your account may not change memories.", [])
        return None
    try:
        result = action()
    except Exception as exc:
        # by class name too: a dev server that reloaded memory_core keeps the old engine
        if not any(c.__name__ == "MemoryCoreError" for c in type(exc).__mro__):
            raise
        st.session_state[slot] = ("error", f"{type(exc).__name__}: {exc}", [])
        return None
    st.session_state[slot] = ("success", success, [])
    return result


def _show_flash(slot: str) -> None:
    flash = st.session_state.pop(slot, None)
    if not flash:
        return
    kind, text, lines = flash
    (st.error if kind == "error" else st.success)(text)
    for line in lines:
        st.text(line)


# --- callbacks: run before the rerun, with the version read when the page was rendered --------
def _toggle_pin(memory_id: str, pinned: bool, version: int) -> None:
    eng = common.engine()
    if pinned:
        _attempt(
            ACTION_FLASH,
            lambda: eng.unpin(memory_id, _actor(), expected_version=version),
            "Unpinned: the memory decays again.",
        )
    else:
        _attempt(
            ACTION_FLASH,
            lambda: eng.pin(memory_id, _actor(), expected_version=version),
            "Pinned: the memory no longer decays and cleanup will not archive it.",
        )


def _toggle_archive(memory_id: str, archived: bool, version: int) -> None:
    eng = common.engine()
    if archived:
        _attempt(
            ACTION_FLASH,
            lambda: eng.restore(memory_id, _actor(), expected_version=version),
            "Restored.",
        )
    else:
        _attempt(
            ACTION_FLASH,
            lambda: eng.archive(memory_id, _actor(), expected_version=version),
            "Archived (kept, and can be restored).",
        )


def _save_importance(memory_id: str, version: int) -> None:
    value = st.session_state.get("edit_importance")
    _attempt(
        ACTION_FLASH,
        lambda: common.engine().set_importance(
            memory_id, float(value), _actor(), expected_version=version
        ),
        f"Base importance saved: {value}.",
    )


def _save_new(patient_id: str) -> None:
    eng = common.engine()
    content = str(st.session_state.get("new_content") or "")
    mtype = str(st.session_state.get("new_type") or "")
    importance = st.session_state.get("new_importance")
    result = _attempt(
        ADD_FLASH,
        lambda: eng.add_memory(
            patient_id,
            content,
            mtype,
            importance=importance,
            by=_actor(),
            source="dashboard",
        ),
        "Memory added.",
    )
    if result is None:
        return
    lines = []
    for sup in result.supersessions:
        older = eng.get(sup.old_id)
        what = (
            "superseded now"
            if sup.state.value == SupersessionState.AUTO.value
            else "waiting for review on the Contradictions page"
        )
        lines.append(f"{older.content}  →  {what} (similarity {sup.similarity:.2f})")
    text = (
        f"Memory added ({result.memory.memory_type}, base importance "
        f"{result.memory.importance:g}). "
        + (f"It triggered {len(lines)} supersession(s):" if lines else "It superseded nothing.")
    )
    st.session_state[ADD_FLASH] = ("success", text, lines)
    st.session_state["new_content"] = ""
    st.session_state.pop("new_importance", None)
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
    for older, sim, mode in hits:
        outcome = (
            "would be superseded automatically (auto)"
            if mode == "auto"
            else "would wait for a reviewer's confirmation (review)"
        )
        out.append(
            {
                "id": older.id,
                "content": older.content,
                "similarity": float(sim),
                "mode": mode,
                "outcome": outcome,
                "created": f"{older.created_at.astimezone(UTC):%Y-%m-%d %H:%M}",
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


# --- page --------------------------------------------------------------------------------------
common.header(
    "Memories",
    "Everything stored about one patient. Importance is on the 1–10 scale; current importance "
    "is the base after decay and access boost. Times in UTC.",
)
pid = common.patient_picker()
if pid is None:
    common.seed_button()
    st.stop()
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
types_present = sorted(set(df["type"]))
sel_types = f1.multiselect("Type", types_present, key="filter_type", placeholder="All types")
sel_status = f2.multiselect("Status", STATUSES, key="filter_status", placeholder="All statuses")
sel_tier = f3.multiselect("Tier", TIERS, key="filter_tier", placeholder="All tiers")
search = f4.text_input(
    "Search content", key="search", placeholder="e.g. metformin (case-insensitive)"
)

shown = df
if sel_types:
    shown = shown[shown["type"].isin(sel_types)]
if sel_status:
    shown = shown[shown["status"].isin(sel_status)]
if sel_tier:
    shown = shown[shown["tier"].isin(sel_tier)]
if search.strip():
    shown = shown[shown["content"].str.contains(search.strip(), case=False, regex=False)]
shown = shown.reset_index(drop=True)

st.caption(f"Patient {pid} · showing {len(shown)} of {len(df)} memories, newest first")
if df.empty:
    st.info("This patient has no memories yet: add the first one below.")
elif shown.empty:
    st.info("No memory matches these filters: clear a filter or the search text.")
else:
    st.dataframe(
        shown,
        key="memories_table",
        hide_index=True,
        column_order=[c for c in COLUMNS if c != "id"],
        height=420,
        column_config={
            "content": st.column_config.TextColumn(
                "Content", width=320, help="Hover or widen the column to read all of it."
            ),
            "type": st.column_config.TextColumn("Type", width="small"),
            "status": st.column_config.TextColumn("Status", width="small"),
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
                width="small",
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
                "Created (UTC)", format="YYYY-MM-DD HH:mm", timezone="UTC"
            ),
            "last accessed": st.column_config.DatetimeColumn(
                "Last accessed (UTC)", format="YYYY-MM-DD HH:mm", timezone="UTC"
            ),
        },
    )

# --- per-memory actions --------------------------------------------------------------------------
st.subheader("Act on one memory")
st.caption(f"Every action is written to the audit log with your name ({who}).")
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
    mem = common.run(lambda: engine.get(mid)) if mid else None
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
                f"{mem.memory_type} · {mem.status.value} · {mem.tier.value} · "
                f"base importance {mem.importance:g} · "
                f"{'pinned' if mem.pinned else 'not pinned'} · "
                f"created {mem.created_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC · "
                f"version {mem.version} · id {mem.id}"
            )
        archived = mem.status.value == Status.ARCHIVED.value
        a1, a2, a3, a4 = st.columns([1, 1, 1, 1], vertical_alignment="bottom")
        a1.button(
            "📍 Unpin" if mem.pinned else "📌 Pin",
            key="pin_toggle",
            disabled=not editable,
            on_click=_toggle_pin,
            args=(mem.id, mem.pinned, mem.version),
            width="stretch",
        )
        a2.button(
            "♻️ Restore" if archived else "🗄️ Archive",
            key="archive_toggle",
            disabled=not editable,
            on_click=_toggle_archive,
            args=(mem.id, archived, mem.version),
            width="stretch",
        )
        a3.number_input(
            "Base importance (1–10)",
            min_value=1.0,
            max_value=10.0,
            step=0.5,
            format="%.1f",
            key="edit_importance",
            disabled=not editable,
        )
        a4.button(
            "💾 Save importance",
            key="save_importance",
            disabled=not editable,
            on_click=_save_importance,
            args=(mem.id, mem.version),
            width="stretch",
        )
_show_flash(ACTION_FLASH)

# --- adding a memory -----------------------------------------------------------------------------
st.subheader("Add memory")
st.caption(
    "Check first: a new memory may supersede older ones of the same type (automatically, or "
    "after review for allergies and adverse reactions)."
)
if st.session_state.get("new_type") not in KNOWN_TYPES:
    st.session_state["new_type"] = "observation"
with st.form("add_form", border=True):
    st.text_area(
        "Content",
        key="new_content",
        placeholder="One short statement, e.g. Patient now prefers evening appointments",
        height=80,
    )
    c1, c2 = st.columns(2)
    c1.selectbox("Type", KNOWN_TYPES, key="new_type")
    c2.number_input(
        "Base importance (optional, 1–10)",
        min_value=1.0,
        max_value=10.0,
        value=None,
        step=0.5,
        format="%.1f",
        key="new_importance",
        placeholder="type default",
    )
    row = st.container(horizontal=True)
    preview_clicked = row.form_submit_button("🔍 Check", key="preview_add")
    row.form_submit_button(
        "💾 Save memory",
        key="save_new",
        type="primary",
        on_click=_save_new,
        args=(pid,),
        disabled=not editable,
    )

if preview_clicked:
    content = str(st.session_state.get("new_content") or "")
    mtype = str(st.session_state.get("new_type") or "")
    with st.spinner("Embedding and comparing…"):
        checked = common.run(lambda: _preview(pid, content, mtype, now))
    if checked is not None:
        st.session_state["memories_preview"] = checked

preview = st.session_state.get("memories_preview")
if preview and preview["patient_id"] == pid:
    with st.container(border=True):
        st.markdown("**Before saving: what this memory would do**")
        st.text(f"New {preview['type']}: {preview['content']}")
        st.caption(
            f"Base importance {preview['importance']:g} · comparison threshold "
            f"{preview['threshold']:.2f} (cosine; same type; this patient's active memories)"
        )
        for hit in preview["hits"]:
            with st.container(border=True):
                st.text(hit["content"])
                st.caption(
                    f"{hit['outcome']} · similarity {hit['similarity']:.2f} · created "
                    f"{hit['created']} UTC"
                )
        if not preview["hits"]:
            st.caption("No older active memory of this type would be superseded.")
_show_flash(ADD_FLASH)
