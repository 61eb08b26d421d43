"""Worklist (the reviewer's first page): what waits for a person across all patients, most
urgent first -- reviews of safety facts, recent changes to safety facts, possibly out-of-date
memories, other reviews, and what the next cleanup would archive. Layout only: the list comes
from ``engine.worklist`` (memory_core/worklist.py), which reads supersessions and the audit
log, never every memory."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import streamlit as st

from memory_core.labels import decision_words, type_label
from memory_core.worklist import KIND_LABELS, WorkItem, WorkList
from views import common

if TYPE_CHECKING:
    import pandas as pd

LIMIT = 200
#: metric labels and the What column: short enough for 1,024 px
SHORT = {
    "review": "Review",
    "safety_change": "Safety change",
    "stale_flag": "Out of date?",
    "cleanup": "Cleanup",
}
#: where an item's link opens the patient: the place where it can be acted on (a review and a
#: possibly-out-of-date flag on Contradictions' queue and flags tabs; a demoted safety fact and
#: the cleanup preview on Memories, where Restore and Pin are)
TARGET = {
    "review": ("contradictions", "views/contradictions.py", ""),
    "stale_flag": ("contradictions", "views/contradictions.py", "flags"),
    "safety_change": ("memories", "views/memories.py", ""),
    "cleanup": ("memories", "views/memories.py", ""),
}
PLACE = {"contradictions": "Contradictions", "memories": "Memories"}
HELP = {
    "review": "A newer memory may replace an older one of a type a reviewer must confirm "
    "(allergies and adverse reactions first), or of any type set to review.",
    "safety_change": "Allergies and adverse reactions replaced, archived or given a lower "
    "importance in the last 7 days.",
    "stale_flag": "Memories naming a drug or condition that has since changed.",
    "cleanup": "Faded memories the next cleanup would archive (counted for the first patients "
    "on this list; open a patient to see theirs).",
}


def _ago(since: datetime, now: datetime) -> str:
    days = (now - since).total_seconds() / 86400
    if days < 1 / 24:
        return "just now"
    if days < 1:
        return f"{int(days * 24)} h ago"
    if days < 60:
        return f"{int(days)} days ago"
    return f"{int(days // 30)} months ago"


def link(w: WorkItem) -> str:
    """The URL path that opens the item's patient where it can be acted on."""
    page, _, tab = TARGET[w.kind]
    return f"/{page}{w.link}" + (f"&review={tab}" if tab else "")


def _rows(items: list[WorkItem], now: datetime) -> pd.DataFrame:
    import pandas as pd  # here, not at the top: the counts paint before pandas has loaded

    return pd.DataFrame(
        [
            {
                "patient": link(w),
                "what": SHORT[w.kind],
                "item": w.title,
                "type": type_label(w.memory_type) if w.memory_type else "—",
                "since": w.since.astimezone(UTC).strftime("%d %b %Y %H:%M"),
                "waiting": _ago(w.since, now),
                "what and since": f"{SHORT[w.kind]}, {_ago(w.since, now)}",
                "kind": w.kind_label,
            }
            for w in items
        ],
        columns=["patient", "what", "item", "type", "since", "waiting", "what and since", "kind"],
    )


PAINTED = "_worklist_painted"  # this session has seen the whole worklist once


def _quick_view(first: WorkList) -> None:
    """The worklist without its slower parts, shown while they are worked out."""
    common.metrics(
        [
            (SHORT["review"], f"{first.totals['review']:,}", None),
            (SHORT["safety_change"], f"{first.totals['safety_change']:,}", None),
            (SHORT["stale_flag"], "…", None),
            (SHORT["cleanup"], "…", None),
        ]
    )
    st.caption("Checking for possibly out-of-date memories and faded ones…")
    for w in first[:10]:
        st.text(f"{w.patient_id} · {w.title}")


common.header(
    "Worklist",
    "What waits for a reviewer across all patients, most urgent first. Times in UTC.",
)
pid = common.require_patient(common.patient_picker())
common.reviewer()
common.read_only_note()

engine = common.engine()
now = engine.clock()
if PAINTED not in st.session_state:
    # a session's first view: the reviews and safety changes at once, while the possibly-out-
    # of-date check (the drug dictionary, read once per server) and the cleanup counts follow
    quick = st.empty()
    with quick.container():
        _quick_view(engine.worklist(now=now, limit=LIMIT, cleanup_patients=0, flag_patients=0))
    items = engine.worklist(now=now, limit=LIMIT)
    quick.empty()
    st.session_state[PAINTED] = True
else:
    items = engine.worklist(now=now, limit=LIMIT)

common.metrics(
    [
        *[
            (SHORT[kind], f"{items.totals[kind]:,}", f"{KIND_LABELS[kind]}. {HELP[kind]}")
            for kind in KIND_LABELS
        ],
        ("Patients", f"{items.patients:,}", "Patients with at least one item."),
    ]
)

if not items:
    st.success(
        "Nothing is waiting: no reviews pending and no safety facts changed in the last 7 days."
    )
    st.stop()

shown = len(items)
if items.total > shown:
    st.caption(f"Showing the {shown} most urgent of {items.total:,} items.")
kinds = st.pills(
    "Show",
    list(KIND_LABELS),
    selection_mode="multi",
    default=[k for k in KIND_LABELS if items.totals[k]],
    format_func=lambda k: KIND_LABELS[k],
    key="worklist_kinds",
)
visible = [w for w in items if w.kind in set(kinds or [])]
table = st.dataframe(
    _rows(visible, now),
    key="worklist_table",
    hide_index=True,
    on_select="rerun",
    selection_mode="single-row",
    width="stretch",
    # every row up to 12 without scrolling inside the table (the page scrolls instead)
    height=38 + common.WRAP_ROW_HEIGHT_4 * max(1, min(len(visible), 12)),
    # fits 1,024 px (the widths add up to less than its main column, and stretch on a wider
    # screen): the type is the item's first word, the exact time is in the row's card; the
    # item wraps onto four lines (both statements, no hovering)
    column_order=["patient", "item", "what and since"],
    row_height=common.WRAP_ROW_HEIGHT_4,
    column_config={
        "patient": st.column_config.LinkColumn(
            "Patient",
            display_text=r"patient=([A-Za-z0-9-]+)",
            width=75,
            help="Opens the patient where the item can be acted on",
        ),
        "item": st.column_config.TextColumn("Item", width=330),
        "what and since": st.column_config.TextColumn("What, waiting", width=110),
    },
)
rows = table.selection.rows if table is not None else []
if rows:
    chosen = visible[rows[0]]
    label, page, tab = TARGET[chosen.kind]
    with st.container(border=True):
        st.markdown(f"**{chosen.patient_id}** · {chosen.kind_label}")
        st.text(chosen.title)
        sup = engine.store.get_supersession(chosen.ref) if chosen.kind == "review" else None
        rule, evidence = getattr(sup, "rule", ""), getattr(sup, "evidence", "")
        if rule or evidence:  # the decision's rule and its evidence, in plain words
            st.caption(decision_words(rule, evidence))
        st.caption(
            f"Since {chosen.since.astimezone(UTC):%d %b %Y %H:%M} UTC ({_ago(chosen.since, now)})"
        )
        where = PLACE[label] + (" (possibly out of date)" if tab else "")
        if st.button(
            f"Open {chosen.patient_id} on {where}",
            key="worklist_open",
            icon=":material/open_in_new:",
            type="primary",
        ):
            st.session_state["patient"] = chosen.patient_id
            params = {"patient": chosen.patient_id} | ({"review": tab} if tab else {})
            st.switch_page(page, query_params=params)
        with st.expander("Technical detail"):
            st.text(chosen.detail or "—")
else:
    st.caption("Select a row to open that patient, or use the link in the Patient column.")
