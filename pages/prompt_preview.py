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


def _ranking_frame(items: list[mc.ContextItem]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "position": i.position,
                "included": i.included,
                "content": i.scored.memory.content,
                "type": i.scored.memory.memory_type,
                "similarity": i.scored.similarity,
                "current importance": i.scored.current_importance,
                "score": i.scored.score,
                "tokens": i.tokens,
                "safety": i.scored.safety,
                "rule": i.rule,
            }
            for i in items
        ],
        columns=[
            "position",
            "included",
            "rule",
            "content",
            "type",
            "similarity",
            "current importance",
            "score",
            "tokens",
            "safety",
        ],
    ).astype({"position": "Int64"})


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
    common.reviewer()
    if pid is None:
        common.seed_button()
        st.stop()
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
    m2.metric("Memories injected", f"{len(res.included)} / {n}")
    with m3:
        st.plotly_chart(charts.token_gauge(res.tokens, budget), key="token_gauge")

    st.subheader("Injected section")
    if res.safety_omitted:
        st.warning(
            f"⚠️ {len(res.safety_omitted)} safety-critical memory(ies) did not fit (budget or "
            "max memories) and would NOT reach the agent. Raise the budget or max memories."
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
    st.subheader("Ranking")
    st.caption(
        "Every candidate: allergies are taken first, then the other safety-critical items "
        f"(adverse reactions, current importance ≥ {engine.policy.decay.warn_threshold:g}), then "
        "the rest by score (similarity × current importance / 10), until max memories or the "
        "budget is reached; once a safety item misses the budget nothing else is added."
    )
    st.dataframe(
        _ranking_frame(items),
        key="ranking_table",
        hide_index=True,
        column_config={
            "rule": st.column_config.TextColumn(width=260),
            "content": st.column_config.TextColumn(width=320),
            "similarity": st.column_config.NumberColumn(format="%.3f"),
            "current importance": st.column_config.NumberColumn(format="%.2f"),
            "score": st.column_config.NumberColumn(format="%.3f"),
        },
    )

    st.subheader("Whole system prompt")
    prompt = ctx.build_system_prompt(res.text, session_context, engine.role)
    st.code(prompt, language=None, wrap_lines=True)

    _model_section(engine, prompt, session_context)


main()
