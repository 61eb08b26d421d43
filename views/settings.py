"""Settings & audit: the live store, embedder and policy, how to switch backends, and the
append-only audit log."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from typing import Any

import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core.importance import KNOWN_TYPES
from memory_core.labels import (
    action_label,
    actor_label,
    audit_ids,
    audit_sentence,
    changed_in_words,
    type_label,
    visible_types,
)
from memory_core.values import AuditAction
from views import common

ALL = "(all actions)"
AUDIT_COLUMNS = [
    "time",
    "actor",
    "action",
    "patient",
    "what happened",
    "what changed",
    "entity",
    "entity id",
    "before",
    "after",
]


def _compact(value: dict[str, Any] | None) -> str:
    return "" if value is None else json.dumps(value, separators=(",", ":"), default=str)


def audit_frame(engine: mc.MemoryEngine, entries: list[mc.AuditEntry]) -> pd.DataFrame:
    """The audit rows as a clinician reads them: who, what (in words), a sentence quoting the
    memories' statements, what changed; the raw record one toggle away."""
    ids = sorted({i for e in entries for i in audit_ids(e)})
    content_of = {m.id: m.content for m in engine.store.get_memories(ids)} if ids else {}
    return pd.DataFrame(
        {
            "time": pd.to_datetime([e.at for e in entries], utc=True),
            "actor": [actor_label(e.actor) for e in entries],
            "action": [action_label(e.action) for e in entries],
            "entity": [e.entity for e in entries],
            "entity id": [e.entity_id for e in entries],
            "patient": [e.patient_id or "" for e in entries],
            "what happened": [  # the patient first: the log may list every patient
                (f"{e.patient_id} · " if e.patient_id else "") + audit_sentence(e, content_of)
                for e in entries
            ],
            "what changed": [changed_in_words(e.before, e.after) for e in entries],
            "before": [_compact(e.before) for e in entries],
            "after": [_compact(e.after) for e in entries],
        },
        columns=AUDIT_COLUMNS,
    )


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def cosmos_support() -> str:
    """``"missing"`` (this build has no Cosmos DB store), ``"no-sdk"`` (the store is there but
    the azure-cosmos package is not installed) or ``"ready"``."""
    if not _found("memory_core.store.cosmos"):
        return "missing"
    return "ready" if _found("azure.cosmos") else "no-sdk"


common.header("Settings & audit", "What this dashboard is connected to, and who changed what.")
pid = common.patient_picker()
common.reviewer()
engine = common.engine()

# --- live configuration ------------------------------------------------------------------------
st.subheader("Store, embedder and policy")
desc = engine.embedder.describe()
c1, c2 = st.columns(2)
with c1:
    st.caption("Store (MEMORY_CORE_STORE, or built from COSMOS_ENDPOINT)")
    st.code(engine.store.url, language=None, wrap_lines=True)
    st.caption(f"Embedder (MEMORY_CORE_EMBEDDER = {common.embedder_spec()})")
    st.code(str(desc["model_id"]), language=None, wrap_lines=True)
with c2:
    common.metrics(
        [
            (
                "Dimensions",
                int(desc["dimensions"]),  # type: ignore[call-overload]
                "Numbers per embedding (the vector that stands for a statement's meaning).",
            ),
            (
                "Default threshold",
                f"{float(desc['default_contradiction_threshold']):.2f}",  # type: ignore[arg-type]
                "The similarity (cosine of two embeddings, −1…1) this embedder was measured at "
                "for contradiction candidates.",
            ),
            (
                "Threshold in use",
                f"{engine.contradiction_threshold:.2f}",
                "The policy's contradiction threshold, or the embedder's default when unset.",
            ),
        ]
    )
    st.caption(f"Embedder class: {desc['class']}")

policy = engine.policy
embedder_types: dict[str, float] = dict(desc["default_type_thresholds"])  # type: ignore[call-overload]
types = visible_types(
    dict.fromkeys([*KNOWN_TYPES, *policy.contradiction.type_thresholds, *embedder_types]),
    policy.importance_rules,
)


def _source(t: str) -> str:
    if t in policy.contradiction.type_thresholds:
        return "policy (per type)"
    if policy.contradiction.threshold is None and t in embedder_types:
        return "embedder default (per type)"
    if policy.contradiction.threshold is not None:
        return "policy (global)"
    return "embedder default (global)"


tcol = st.container()
pcol = st.expander("The saved policy as stored (JSON)")
with tcol:
    st.caption(
        "Contradiction threshold per memory type (higher = stricter)",
        help="How alike two statements of a type must be to be compared for a replacement: "
        "the cosine similarity of their embeddings, from −1 to 1.",
    )
    st.dataframe(
        pd.DataFrame(
            {
                "memory type": [type_label(t) for t in types],
                "type": types,
                "threshold": [engine.threshold_for(t) for t in types],
                "source": [_source(t) for t in types],
                "on a match": [
                    "replace at once"
                    if policy.contradiction.mode_for(t) == "auto"
                    else "wait for a reviewer"
                    for t in types
                ],
            }
        ),
        key="threshold_table",
        hide_index=True,
        column_order=["memory type", "threshold", "source", "on a match"],
        column_config={
            "memory type": st.column_config.TextColumn("Memory type", width=150),
            "threshold": st.column_config.NumberColumn("Threshold", format="%.2f", width=85),
            "source": st.column_config.TextColumn("Set by", width=170),
            "on a match": st.column_config.TextColumn("On a match", width=140),
        },
        height=35 * (len(types) + 1) + 3,
    )

# --- the injected section: which lines say when they were last confirmed (issue 35) ---------
st.caption(
    "Say when last confirmed",
    help="The memory types whose lines in the injected context end with the date their fact "
    "was last asserted: “(recorded 3 Mar 2026)”, or “(last confirmed 14 May 2026)” when it was "
    "stated again, kept by a reviewer or asserted by its record since. The words count in the "
    "token budget.",
)
dated_now = policy.context.dated_types
dated_options = list(
    dict.fromkeys([*visible_types(KNOWN_TYPES, policy.importance_rules), *dated_now])
)
dated_pick = st.multiselect(
    "Say when last confirmed",
    dated_options,
    default=list(dated_now),
    format_func=type_label,
    key="dated_types",
    label_visibility="collapsed",
)
common.read_only_note()
if st.button(
    "Save",
    icon=":material/save:",
    key="dated_save",
    disabled=tuple(dated_pick) == dated_now or not common.can_edit(),
):
    if not common.can_edit():  # a disabled button can still be clicked by a crafted request
        st.error("Read-only: your account is not on the reviewer list, so nothing was saved.")
        st.stop()
    dated_policy = dataclasses.replace(
        policy, context=dataclasses.replace(policy.context, dated_types=tuple(dated_pick))
    )

    def _save_dated() -> bool:
        common.acting().save_policy(dated_policy)  # the guarded path: reviewers only
        return True

    if common.run(_save_dated):
        st.rerun()

with pcol:
    st.caption(
        "Current policy, saved in the store (the Decay lab and Contradictions pages change "
        "it; every change is audited)"
    )
    st.json(policy.to_dict(), expanded=2)

# --- audit log -----------------------------------------------------------------------------
st.subheader("Audit log")
st.caption(
    "Append-only: every change with who made it, when, and what it did, in words; the raw "
    "record before and after is one toggle away."
)
f1, f2, f3, f4 = st.columns([1, 1, 1, 1])
scope = f1.selectbox(
    "Patient",
    ["all", "current"],
    format_func=lambda s: "All patients" if s == "all" else f"Current patient ({pid or '—'})",
    key="audit_patient_scope",
)
actor = f2.text_input(
    "Who (exact name)",
    key="audit_actor",
    placeholder="e.g. Dr. Rivera, or agent:ward-assistant",
    help="A person as they signed in; an agent as agent:<its name> (the server's --agent).",
)
# every audited action, from the core's one list of them
action = f3.selectbox(
    "Action",
    [ALL, *(a.value for a in AuditAction)],
    key="audit_action",
    format_func=lambda a: "All actions" if a == ALL else action_label(a),
)
limit = f4.number_input("Rows (newest first)", value=500, step=100, key="audit_limit")
limit_problem = common.count_problem(limit, 1, 10_000)
if limit_problem:
    f4.error(limit_problem)

entries = (
    None
    if limit_problem
    else common.run(
        lambda: engine.audit_log(
            patient_id=pid if scope == "current" and pid else None,
            actor=actor.strip() or None,
            action=None if action == ALL else action,
            limit=int(limit),
        )
    )
)
if entries is not None:
    audit = audit_frame(engine, entries)
    st.caption(f"{len(audit)} rows" + (" (limit reached)" if len(audit) >= int(limit) else ""))
    if audit.empty:
        st.info("No audit rows match these filters: widen the patient, actor or action filter.")
    else:
        wide = st.toggle(
            "More columns (record and its id, the full before and after)",
            key="audit_wide",
            help="The extra columns may need scrolling sideways on a narrow screen.",
        )
        st.dataframe(
            audit,
            key="audit_table",
            hide_index=True,
            row_height=common.WRAP_ROW_HEIGHT,
            column_order=(None if wide else ["time", "what happened", "what changed"]),
            column_config={
                "time": st.column_config.DatetimeColumn(
                    "Time (UTC)", format="D MMM YY HH:mm", timezone="UTC", width=105
                ),
                "action": st.column_config.TextColumn("Action", width=110),
                "actor": st.column_config.TextColumn("Who", width="small"),
                "entity": st.column_config.TextColumn("Record kind", width="small"),
                "entity id": st.column_config.TextColumn("Record id", width="medium"),
                "patient": st.column_config.TextColumn("Patient", width=75),
                "what happened": st.column_config.TextColumn("What happened", width=270),
                "what changed": st.column_config.TextColumn("What changed", width=180),
                "before": st.column_config.TextColumn("Before (JSON)", width="medium"),
                "after": st.column_config.TextColumn("After (JSON)", width="medium"),
            },
        )

# --- switching backends ----------------------------------------------------------------
st.subheader("Switching to Azure")
azure_box = st.expander("Environment variables for Azure Cosmos DB and (Azure) OpenAI")
azure_box.caption(
    "Settings come from environment variables. When the dashboard runs with `streamlit run`, "
    "root-level keys of `.streamlit/secrets.toml` become environment variables too; that file "
    "is git-ignored and must never be committed."
)
left, right = azure_box.columns(2)
with left:
    st.markdown("**Azure Cosmos DB for NoSQL (store)**")
    support = cosmos_support()
    if support == "missing":
        st.warning(
            "Planned: not available in this build. `open_store` accepts only `sqlite:///` URLs "
            "here; the settings below are what the Cosmos DB store reads."
        )
    elif support == "no-sdk":
        st.info(
            "Supported by this build, but the `azure-cosmos` package (and `azure-identity` for "
            "Entra ID) is not installed in this environment."
        )
    else:
        st.success("Supported by this build: set the variables below and restart the dashboard.")
    st.code(
        "# with MEMORY_CORE_STORE unset, the store is built from these\n"
        "export COSMOS_ENDPOINT=https://<account>.documents.azure.com:443/\n"
        "export COSMOS_DATABASE=memory_core\n"
        "export COSMOS_CONTAINER=memories   # partitioned by /patient_id\n"
        "# key authentication; leave COSMOS_KEY unset to use Microsoft Entra ID\n"
        "# (DefaultAzureCredential: managed identity, az login, ...)\n"
        "export COSMOS_KEY=<account key>\n"
        "# or name the store directly (never put a key in the URL)\n"
        "export MEMORY_CORE_STORE=cosmos://<account>.documents.azure.com/memory_core/memories",
        language="bash",
        wrap_lines=True,
    )
    st.caption(
        "Creating the database and container needs key authentication: Entra ID data-plane "
        "roles can read and write items but cannot create containers."
    )
with right:
    st.markdown("**OpenAI or Azure OpenAI (embeddings)**")
    st.code(
        "# OpenAI (or an OpenAI-compatible server)\n"
        "export OPENAI_API_KEY=<key>\n"
        "# optional, for an OpenAI-compatible server\n"
        "export OPENAI_BASE_URL=https://api.openai.com/v1\n"
        "# Azure OpenAI\n"
        "export AZURE_OPENAI_ENDPOINT=https://<resource>.openai.azure.com/\n"
        "export AZURE_OPENAI_API_KEY=<key>\n"
        "# then choose the embedding model\n"
        "export MEMORY_CORE_EMBEDDER=openai:text-embedding-3-small",
        language="bash",
        wrap_lines=True,
    )
    st.code(
        "# .streamlit/secrets.toml (git-ignored: never commit it)\n"
        'OPENAI_API_KEY = "<key>"\n'
        '# AZURE_OPENAI_ENDPOINT = "https://<resource>.openai.azure.com/"\n'
        '# AZURE_OPENAI_API_KEY = "<key>"',
        language="toml",
        wrap_lines=True,
    )
    st.caption(
        "A store keeps the embedding model it was created with: switching embedders needs a "
        "new store (or re-import), and the contradiction threshold must be measured again "
        "(`python -m memory_core calibrate`)."
    )
