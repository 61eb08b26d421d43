"""Prompt preview: the exact memory section an agent would be given for a session context, why
each candidate was (not) included, the whole system prompt, and an optional side-by-side reply
from a configured chat model. Previews never record accesses."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core import context as ctx
from pages import charts, common

DEFAULT_CONTEXT = (
    "Patient asks whether the new diabetes medication could upset their stomach again."
)
DEFAULT_MODEL = "gpt-4o-mini"


def _setting(name: str) -> str | None:
    """An endpoint setting from the environment, else from st.secrets (which raises when no
    secrets file exists at all)."""
    value = os.environ.get(name)
    if value:
        return value
    try:
        found = st.secrets.get(name)
    except Exception:  # no secrets file, or an unreadable one: treat as not configured
        return None
    return str(found) if found else None


def _configured() -> bool:
    return bool(_setting("OPENAI_API_KEY") or _setting("AZURE_OPENAI_ENDPOINT"))


NOT_IN_SECTION = "—"


def section_order(items: list[mc.ContextItem]) -> list[mc.ContextItem]:
    """The section's lines in order, then every other candidate by score."""
    inc = sorted((i for i in items if i.included), key=lambda i: i.position or 0)
    return inc + [i for i in items if not i.included]


def _ranking_frame(items: list[mc.ContextItem]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "line": str(i.position) if i.position is not None else NOT_IN_SECTION,
                "included": i.included,
                "reason": i.rule.removeprefix("in the section: ").removeprefix(
                    "not in the section: "
                ),
                "rule": i.rule,
                "content": i.scored.memory.content,
                "annotations": " ".join(i.annotations),
                "type": i.scored.memory.memory_type,
                "cosine": i.scored.similarity,
                "BM25": i.scored.bm25,
                "relevance": i.scored.relevance,
                "current importance": i.scored.current_importance,
                "score": i.scored.score,
                "tokens": i.tokens,
                "safety": i.scored.safety,
            }
            for i in section_order(items)
        ],
        columns=[
            "line",
            "included",
            "rule",
            "content",
            "annotations",
            "type",
            "cosine",
            "BM25",
            "relevance",
            "current importance",
            "score",
            "tokens",
            "safety",
            "reason",
        ],
    )


def _flag_reason(engine: mc.MemoryEngine, flag: mc.StaleFlag) -> str:
    """Why a memory is flagged, in plain words (memory content is shown as plain text)."""
    try:
        changed = engine.get(flag.changed_id, patient_id=flag.patient_id).content
        newer = engine.get(flag.new_id, patient_id=flag.patient_id).content
    except mc.NotFoundError:  # purged since: the flag still names the change
        changed, newer = flag.changed_id, flag.new_id
    return (
        f"names {flag.subject}; the {flag.kind} memory “{changed}” was replaced on "
        f"{flag.since.date().isoformat()} by “{newer}”"
    )


def _flags_section(engine: mc.MemoryEngine, pid: str, items: list[mc.ContextItem], by: str) -> None:
    st.subheader("Possibly stale")
    flags = common.run(lambda: engine.stale_flags(pid)) or []
    if not flags:
        st.caption(
            "No flags: no medication or condition this patient's other memories name has "
            "been replaced."
        )
        return
    st.caption(
        "A memory naming a drug (or condition) whose medication (or condition) memory was "
        "replaced stays in the section, marked “may be outdated”, until a reviewer keeps it "
        "(flag cleared) or confirms it is outdated (archived; Restore undoes it). Both are audited."
    )
    lines = {i.scored.memory.id: i.position for i in items if i.included}
    rows = []
    for f in flags:
        try:
            content = engine.get(f.memory_id, patient_id=pid).content
        except mc.NotFoundError:
            continue
        at = lines.get(f.memory_id)
        rows.append(
            {
                "memory": content,
                "in section": f"line {at}" if at else NOT_IN_SECTION,
                "flag": f.annotation,
                "why": _flag_reason(engine, f),
                "since": f.since.date().isoformat(),
                "memory id": f.memory_id,
                "change id": f.change_id,
            }
        )
    st.dataframe(pd.DataFrame(rows), key="stale_flags_table", hide_index=True)
    labels = {f"{r['memory'][:70]} · {r['flag']}": r for r in rows}
    choice = st.selectbox("Flag to review", list(labels), key="stale_flag_choice")
    if choice is None:
        return
    row = labels[choice]
    keep, confirm = st.columns(2)
    if keep.button("Keep it (clear the flag)", key="keep_flagged") and common.run(
        lambda: engine.keep_flagged(row["memory id"], row["change id"], by, patient_id=pid),
        "Flag cleared.",
    ):
        st.rerun()
    if confirm.button("Confirm outdated (archive)", key="confirm_flagged") and common.run(
        lambda: engine.confirm_flagged(row["memory id"], row["change id"], by, patient_id=pid),
        "Archived (Memories → Restore undoes it).",
    ):
        st.rerun()


def _annotations_section(items: list[mc.ContextItem], engine: mc.MemoryEngine) -> None:
    noted = [i for i in section_order(items) if i.annotations]
    if not noted:
        return
    pol = engine.policy.context
    st.subheader("Annotations")
    st.caption(
        "Written on the memory's own line and counted in the token budget: a pending "
        "supersession (“pending review”), a possibly-stale flag (“may be outdated”), a lab "
        "result's earlier values (“was …”). On in the policy: "
        + ", ".join(
            name
            for name, on in (
                ("pending review", pol.annotate_pending),
                ("may be outdated", pol.annotate_stale),
                ("lab history", pol.annotate_lab_history),
            )
            if on
        )
        + "."
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "line": str(i.position) if i.position is not None else NOT_IN_SECTION,
                    "memory": i.scored.memory.content,
                    "annotation": a,
                    "why": _annotation_reason(a),
                }
                for i in noted
                for a in i.annotations
            ]
        ),
        key="annotations_table",
        hide_index=True,
    )


def _annotation_reason(note: str) -> str:
    if note.startswith("(pending review:"):
        return "a newer memory would replace this one; a reviewer has not decided yet"
    if note.startswith("(may be outdated:"):
        return "a drug or condition it names has changed since it was written"
    return "earlier values of the same test, newest first, that this result replaced"


def _chat(client: Any, model: str, system: str, user: str) -> str:
    resp = client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
    )
    return str(resp.choices[0].message.content or "")


def _send(system_with: str, system_without: str, user: str) -> dict[str, str]:
    """Ask the configured chat model twice; each reply or error by name."""
    from memory_core.embedding.openai import make_client

    out: dict[str, str] = {}
    azure = _setting("AZURE_OPENAI_ENDPOINT")
    try:
        client = make_client(
            api_key=_setting("AZURE_OPENAI_API_KEY") if azure else _setting("OPENAI_API_KEY"),
            base_url=_setting("OPENAI_BASE_URL"),
            azure_endpoint=azure,
            api_version=_setting("OPENAI_API_VERSION"),
        )
    except Exception as exc:  # missing package, incomplete configuration
        return {"error": f"{type(exc).__name__}: {exc}"}
    model = _setting("OPENAI_CHAT_MODEL") or DEFAULT_MODEL
    for name, system in (("with", system_with), ("without", system_without)):
        try:
            out[name] = _chat(client, model, system, user)
        except Exception as exc:  # network, auth, rate limit: shown, never raised
            out[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
    out["model"] = model
    return out


def _model_section(engine: mc.MemoryEngine, prompt: str, session_context: str) -> None:
    st.subheader("Try it on a model")
    st.caption(
        "Sends the system prompt above (which contains patient memories) and the session context "
        "to the configured chat endpoint, once with and once without the memory section."
    )
    if st.button("📨 Send to model", key="send_to_model"):
        if not _configured():
            st.info(
                "No chat model endpoint is configured, so nothing was sent. To enable this, set "
                "`OPENAI_API_KEY` (and optionally `OPENAI_BASE_URL` for an OpenAI-compatible "
                "server and `OPENAI_CHAT_MODEL`, default `gpt-4o-mini`), or "
                "`AZURE_OPENAI_ENDPOINT` + `AZURE_OPENAI_API_KEY` (+ `OPENAI_API_VERSION`), as "
                "environment variables of the dashboard process or in `.streamlit/secrets.toml`, "
                "then restart the dashboard."
            )
        else:
            without = ctx.build_system_prompt("", session_context, engine.role)
            with st.spinner("Asking the model (twice)…"):
                replies = _send(prompt, without, session_context)
            st.session_state["prompt_replies"] = {"prompt": prompt, **replies}
    replies = st.session_state.get("prompt_replies")
    if not replies or replies.get("prompt") != prompt:
        return
    if "error" in replies:
        st.error(replies["error"])
        return
    left, right = st.columns(2)
    for col, name, title in (
        (left, "with", "With the memory section"),
        (right, "without", "Without memories"),
    ):
        with col, st.container(border=True):
            st.caption(f"{title} · {replies.get('model', '')}")
            if f"{name}_error" in replies:
                st.error(replies[f"{name}_error"])
            else:
                st.text(replies.get(name, ""))


def main() -> None:
    common.header(
        "💬 Prompt preview",
        "The exact memory section an agent would be given for this session, and why. "
        "Previews never count as accesses.",
    )
    pid = common.patient_picker()
    by = common.reviewer()
    pid = common.require_patient(pid)
    engine = common.engine()

    left, right = st.columns([2, 1])
    session_context = left.text_area(
        "Session context (what the patient says or asks now)",
        value=DEFAULT_CONTEXT,
        key="session_context",
        height=110,
    )
    budget = int(
        right.slider("Token budget", min_value=50, max_value=1000, value=400, key="token_budget")
    )
    n = int(
        right.number_input(
            "Max memories", min_value=1, max_value=50, value=5, step=1, key="max_memories"
        )
    )
    if not session_context.strip():
        st.info("Type a session context above to preview the memory section for it.")
        st.stop()

    res = common.run(
        lambda: engine.build_context(
            pid, session_context, max_tokens=budget, max_memories=n, record_access=False
        )
    )
    if res is None:
        st.stop()
    items = list(res.items)

    m1, m2, m3 = st.columns([1, 1, 3])
    m1.metric(
        "Section tokens",
        res.tokens,
        delta=f"{budget - res.tokens} of {budget} left",
        delta_color="off",
        delta_arrow="off",
        help=f"Exact count of the whole section ({res.encoding}).",
    )
    allergies = sum(i.scored.memory.memory_type == "allergy" for i in res.included)
    m2.metric(
        "Memories injected",
        f"{len(res.included) - allergies} / {n}",
        delta=f"+ {allergies} allerg{'y' if allergies == 1 else 'ies'}",
        delta_color="off",
        delta_arrow="off",
        help="Every active allergy is injected and uses none of the max-memories places.",
    )
    with m3:
        st.plotly_chart(charts.token_gauge(res.tokens, budget), key="token_gauge")

    st.subheader("Injected section")
    if res.safety_omitted:
        st.warning(
            f"⚠️ {len(res.safety_omitted)} safety-critical memory(ies) did not fit the token "
            "budget and would NOT reach the agent. Raise the budget."
        )
        for item in res.safety_omitted:  # content is untrusted: plain text, never markdown
            st.text(f"not injected: {item.line}")
    if res.text:
        st.code(res.text, language=None, wrap_lines=True)
    else:
        st.info(
            "No memory would be injected (the section is empty): the patient has no active "
            "memories, or none fits the token budget. Raise the budget or add memories."
        )
    _annotations_section(items, engine)
    st.subheader("Why each memory is in or out")
    st.caption(
        "Rows in section order, then every other candidate by score (— = not in the section). "
        "Every active allergy is in the section, first, and uses no place; the max-memories "
        "places go to the others by score (relevance × current importance / 10). ⚠️ marks a "
        f"current importance ≥ {engine.policy.decay.warn_threshold:g}; it does not move a "
        "memory up. Under the token budget allergies are placed first; a safety-critical "
        "memory (allergy, or an adverse reaction naming a drug the question or a current "
        "medication names) that does not fit is reported above, and nothing else takes its place."
    )
    st.dataframe(
        _ranking_frame(items),
        key="ranking_table",
        hide_index=True,
        column_order=[
            "line",
            "reason",
            "content",
            "annotations",
            "type",
            "cosine",
            "BM25",
            "relevance",
            "current importance",
            "score",
            "tokens",
            "safety",
        ],
        column_config={
            "reason": st.column_config.TextColumn(width=260),
            "content": st.column_config.TextColumn(width=320),
            "annotations": st.column_config.TextColumn(width=200),
            "cosine": st.column_config.NumberColumn(format="%.3f"),
            "BM25": st.column_config.NumberColumn(format="%.2f"),
            "relevance": st.column_config.NumberColumn(format="%.3f"),
            "current importance": st.column_config.NumberColumn(format="%.2f"),
            "score": st.column_config.NumberColumn(format="%.3f"),
        },
    )
    _flags_section(engine, pid, items, by)

    st.subheader("Whole system prompt")
    prompt = ctx.build_system_prompt(res.text, session_context, engine.role)
    st.code(prompt, language=None, wrap_lines=True)

    _model_section(engine, prompt, session_context)


main()
