"""Overview (home): one patient's memory counts, the cleanup risk and the memory timeline."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from memory_core.labels import injection_sentence, type_label
from memory_core.values import Status
from views import charts, common

RECENT_INJECTIONS = 5


def _fmt(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


@st.cache_data(show_spinner=False, max_entries=64)
def _overview(
    store_url: str, patient_id: str, version: int, policy_json: str, minute: str
) -> tuple[dict[str, int], go.Figure]:
    """KPIs and the timeline for one patient, recomputed when the store, the patient's data,
    the policy or the minute changes (current importance moves with time)."""
    eng = common.engine()
    view = eng.view(patient_id)
    # compare values, not identity: the dev server may reload memory_core under a live engine
    status = [str(x.value) for x in view.status]
    kpis = {
        "memories": len(view.memories),
        "active": status.count(Status.ACTIVE.value),
        "superseded": status.count(Status.SUPERSEDED.value),
        "archived": status.count(Status.ARCHIVED.value),
        "pending": len(eng.supersessions(patient_id, state="pending")),
        # dry run: computes what cleanup would archive now, writes nothing
        "at_risk": len(eng.cleanup(dry_run=True, patient_id=patient_id).archived),
    }
    return kpis, charts.timeline(view)


common.header(
    "Overview",
    "Counts, cleanup risk and the timeline of one patient's memories (times in UTC).",
)
pid = common.require_patient(common.patient_picker())
common.reviewer()

engine = common.engine()
policy: dict[str, Any] = engine.policy.to_dict()
now = datetime.now(UTC)
with st.spinner("Computing current importance…"):
    kpis, fig = _overview(
        common.store_url(),
        pid,
        common.data_version(pid),
        json.dumps(policy, sort_keys=True, default=str),
        now.strftime("%Y-%m-%d %H:%M"),
    )

st.caption(f"Patient {pid} · as of {_fmt(now)} UTC")

threshold = engine.policy.decay.cleanup_threshold
common.metrics(
    [
        ("Memories", kpis["memories"], "Every stored memory of this patient."),
        ("Active", kpis["active"], "Used for retrieval and the agent's context."),
        (
            "Replaced",
            kpis["superseded"],
            "Replaced by a newer memory; kept as history and can be undone.",
        ),
        ("Archived", kpis["archived"], "Archived by a reviewer or by cleanup."),
        (
            "Pending reviews",
            kpis["pending"],
            "Replacements waiting for a reviewer on the Contradictions page.",
        ),
        (
            "At risk of cleanup",
            kpis["at_risk"],
            f"Active memories, not pinned and not "
            f"{' / '.join(type_label(t).lower() for t in engine.policy.review_gated_types)}, "
            f"whose strength is below the cleanup threshold ({threshold:.2f}).",
        ),
    ]
)

if kpis["memories"] == 0:
    st.info("This patient has no memories yet: add one on the **Memories** page.")
else:
    st.plotly_chart(fig, key="timeline", width="stretch")
    st.caption(
        "Marker size is the current importance under the saved decay policy; "
        "superseded memories sit at the floor. Hover a marker for its content."
    )
with st.expander("Technical detail"):
    st.text(f"store {engine.store.url} · embedder {engine.embedder.model_id}")

st.subheader("Recent agent injections")
injections = engine.injections(pid, limit=RECENT_INJECTIONS)
if not injections:
    st.info(
        "No agent has been given this patient's memories yet. Each time an agent is given "
        "memories it is recorded here; dashboard previews record nothing."
    )
else:
    for inj in injections:
        with st.container(border=True):
            st.text(f"{_fmt(inj.at)} UTC · query: {inj.query}")
            st.caption(injection_sentence(inj))
            with st.expander("Injected text"):
                st.code(inj.text or "(empty section)", language=None, wrap_lines=True)
