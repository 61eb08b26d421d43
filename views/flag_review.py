"""Possibly-out-of-date flags as review cards (the Contradictions page's flags tab, where the
worklist's link for a flag opens): each flagged memory, why it is flagged, and the reviewer's
two decisions -- keep it (flag cleared) or confirm it is out of date (archived; Memories →
Restore undoes it). Both go through the guarded path and are audited. Layout only."""

from __future__ import annotations

import streamlit as st

import memory_core as mc
from memory_core.labels import type_label
from views import common


def reason(engine: mc.MemoryEngine, flag: mc.StaleFlag) -> str:
    """Why a memory is flagged, in plain words (memory content is shown as plain text)."""
    try:
        changed = engine.get(flag.changed_id, patient_id=flag.patient_id).content
        newer = engine.get(flag.new_id, patient_id=flag.patient_id).content
    except mc.NotFoundError:  # purged since: the flag still names the change
        changed, newer = flag.changed_id, flag.new_id
    return (
        f"It names {flag.subject}; the {flag.kind} memory “{changed}” was replaced on "
        f"{flag.since:%d %b %Y} by “{newer}”."
    )


def flag_cards(engine: mc.MemoryEngine, flags: list[mc.StaleFlag]) -> None:
    if not flags:
        st.info(
            "Nothing is flagged: no medication or condition that this patient's other memories "
            "name has been replaced."
        )
        return
    st.caption(
        "A memory naming a drug or condition whose medication or condition memory was replaced "
        "stays in the agent's section, marked “may be outdated”, until a reviewer keeps it or "
        "confirms it is out of date. Both are audited; Memories → Restore undoes an archive."
    )
    common.read_only_note()
    editable = common.can_edit()
    for f in flags:
        try:
            mem = engine.get(f.memory_id, patient_id=f.patient_id)
        except mc.NotFoundError:
            continue
        with st.container(border=True, key=f"flag_{f.memory_id}_{f.change_id}"):
            st.caption(f"{type_label(mem.memory_type)} · flagged since {f.since:%d %b %Y}")
            st.text(mem.content)
            st.caption(reason(engine, f))
            row = st.container(horizontal=True)
            if row.button(
                "Keep it",
                icon=":material/check:",
                key=f"keep_flagged_{f.memory_id}_{f.change_id}",
                help="Still true: the flag is cleared (audited)",
                disabled=not editable,
            ) and common.run(
                lambda f=f: common.acting().keep_flagged(
                    f.memory_id, f.change_id, patient_id=f.patient_id
                ),
                "Kept: the flag is cleared.",
            ):
                st.rerun()
            if row.button(
                "Out of date: archive",
                icon=":material/archive:",
                key=f"confirm_flagged_{f.memory_id}_{f.change_id}",
                help="Archive it (kept, and Memories → Restore undoes it)",
                disabled=not editable,
            ) and common.run(
                lambda f=f: common.acting().confirm_flagged(
                    f.memory_id, f.change_id, patient_id=f.patient_id
                ),
                "Archived (Memories → Restore undoes it).",
            ):
                st.rerun()
