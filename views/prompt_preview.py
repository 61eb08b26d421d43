"""Prompt preview: the exact memory section an agent would be given for a session context, why
each candidate was (not) included, the whole system prompt, and an optional side-by-side reply
from a configured chat model. Previews never record accesses."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core import context as ctx
from memory_core.labels import age_label, matched_words, type_label
from memory_core.question import analyse, described
from memory_core.validation import MAX_QUERY_CHARS
from views import charts, common, flag_review

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
NEAREST_SHOWN = 5  # candidates left out that are listed before the "all others" expander


def section_order(items: list[mc.ContextItem]) -> list[mc.ContextItem]:
    """The section's lines in order, then every other candidate by score."""
    inc = sorted((i for i in items if i.included), key=lambda i: i.position or 0)
    return inc + [i for i in items if not i.included]


#: The numbers behind each line, in the table's order.
SCORE_COLUMNS = [
    "line",
    "memory",
    "meaning",
    "keywords",
    "relevance",
    "importance now",
    "age",
    "score",
    "tokens",
]


def _scores_frame(items: list[mc.ContextItem], now: datetime) -> pd.DataFrame:
    """The numbers behind the list, one row per candidate (in an expander)."""
    return pd.DataFrame(
        [
            {
                "line": str(i.position) if i.position is not None else NOT_IN_SECTION,
                "memory": i.scored.memory.content,
                "meaning": i.scored.similarity,
                "keywords": i.scored.bm25,
                "relevance": i.scored.relevance,
                "importance now": i.scored.current_importance,
                "age": age_label(i.scored.memory, now),
                "score": i.scored.score,
                "tokens": i.tokens,
            }
            for i in section_order(items)
        ],
        columns=SCORE_COLUMNS,
    )


def _matches(s: mc.ScoredMemory) -> list[str]:
    """What the memory matched of the question, in words (memory_core.labels.matched_words):
    its words ("asks (as asked)"), the question's concepts ("kidney function (eGFR)") and the
    clinical keys they share."""
    return matched_words(s.keyword_words, s.keyword_via, s.keys, s.memory.content)


def _why_line(i: mc.ContextItem) -> str:
    """One candidate in words: its line (or not in the section), type, statement, annotations,
    what it matched of the question, then the rule and its numbers in grey (the memory's text
    is escaped: plain text)."""
    m = i.scored.memory
    where = f"**Line {i.position}**" if i.position is not None else "**Not in the section**"
    rule = i.rule.removeprefix("in the section: ").removeprefix("not in the section: ")
    notes = f" {_plain(' '.join(i.annotations))}" if i.annotations else ""
    matched = _matches(i.scored)
    said = f"  \n  :blue[Matched {_plain(' · '.join(matched))}]" if matched else ""
    numbers = (
        f"relevance {i.scored.relevance:.2f} · importance now "
        f"{i.scored.current_importance:.1f} · score {i.scored.score:.2f}"
    )
    return (
        f"- {where} · {type_label(m.memory_type)} · “{_plain(m.content)}”{notes}{said}  \n"
        f"  :gray[{_plain(rule)} · {numbers}]"
    )


def _why(items: list[mc.ContextItem]) -> tuple[str, str, str]:
    """Every candidate as lists in words: the section's lines in order; the closest
    :data:`NEAREST_SHOWN` left out; the rest (for an expander)."""
    ordered = section_order(items)
    inc = [i for i in ordered if i.included]
    out = [i for i in ordered if not i.included]
    return (
        "\n".join(_why_line(i) for i in inc),
        "\n".join(_why_line(i) for i in out[:NEAREST_SHOWN]),
        "\n".join(_why_line(i) for i in out[NEAREST_SHOWN:]),
    )


_MD = str.maketrans({c: f"\\{c}" for c in "\\`*_{}[]()#+-.!|<>~:$"})


def _plain(text: str) -> str:
    """Memory text inside markdown: every markdown character escaped, so it shows as typed."""
    return " ".join(str(text).split()).translate(_MD)


def _flags_summary(engine: mc.MemoryEngine, pid: str, items: list[mc.ContextItem]) -> None:
    """The patient's possibly-out-of-date flags, and the link to where they are decided."""
    flags = common.run(lambda: engine.stale_flags(pid)) or []
    if not flags:
        return
    lines = {i.scored.memory.id: i.position for i in items if i.included}
    st.subheader("Possibly out of date")
    for f in flags:
        try:
            content = engine.get(f.memory_id, patient_id=pid).content
        except mc.NotFoundError:
            continue
        at = lines.get(f.memory_id)
        st.text(f"{'line ' + str(at) if at else 'not in the section'}: {content}")
        st.caption(flag_review.reason(engine, f))
    st.page_link(
        "views/contradictions.py",
        label="Keep or archive them on Contradictions → Possibly out of date",
        icon=":material/open_in_new:",
        query_params={"patient": pid, "review": "flags"},
    )


def _annotations_section(items: list[mc.ContextItem], engine: mc.MemoryEngine) -> None:
    noted = [i for i in section_order(items) if i.annotations and i.included]
    if not noted:
        return
    pol = engine.policy.context
    st.subheader("Annotations")
    on = [
        name
        for name, flag in (
            ("pending review", pol.annotate_pending),
            ("may be outdated", pol.annotate_stale),
            ("lab history", pol.annotate_lab_history),
        )
        if flag
    ]
    if pol.dated_types:
        on.append("when last confirmed (" + ", ".join(type_label(t) for t in pol.dated_types) + ")")
    st.caption(
        "Written on the memory's own line and counted in the token budget. On in the policy: "
        + ", ".join(on)
        + "."
    )
    st.markdown(
        "\n".join(
            f"- **Line {i.position}** "
            f"“{_plain(i.scored.memory.content)}” {_plain(a)}  \n  :gray[{_annotation_reason(a)}]"
            for i in noted
            for a in i.annotations
        )
    )


def _annotation_reason(note: str) -> str:
    if note.startswith("(pending review:"):
        return "a newer memory would replace this one; a reviewer has not decided yet"
    if note.startswith("(may be outdated:"):
        return "a drug or condition it names has changed since it was written"
    if note.startswith(("(recorded ", "(last confirmed ")):
        return (
            "when its fact was last asserted: recorded, or confirmed since (stated again, kept "
            "by a reviewer, asserted by its record)"
        )
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
    if st.button("Send to model", key="send_to_model", icon=":material/send:"):
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
        "Prompt preview",
        "The exact memory section an agent would be given for this session, and why. "
        "Previews never count as accesses.",
    )
    pid = common.patient_picker()
    common.reviewer()
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
        right.slider(
            "Token budget",
            min_value=50,
            max_value=1000,
            value=400,
            key="token_budget",
            help="The most tokens (word pieces) the section may take in the agent's prompt.",
        )
    )
    # no min/max on the field: the browser kept 0, -2 or 51 typed with no message and no
    # effect; a value out of range is refused here, saying the range (issue 35)
    raw_n = right.number_input(
        "Max memories",
        value=5,
        step=1,
        key="max_memories",
        help="Places for memories other than allergies (every allergy is always included), "
        "1 to 50.",
    )
    n_problem = common.count_problem(raw_n, 1, 50)
    if n_problem:
        right.error(f"Max memories: {n_problem} Nothing is previewed until it is.")
        st.stop()
    n = int(raw_n)
    if not session_context.strip():
        st.info("Type a session context above to preview the memory section for it.")
        st.stop()
    if len(session_context) > MAX_QUERY_CHARS:  # kept whole, refused with the reason
        st.error(
            f"The session context has {len(session_context):,} characters; an agent's "
            f"question is at most {MAX_QUERY_CHARS:,}. Nothing was cut: shorten it to preview.",
            icon=":material/error:",
        )
        st.stop()

    res = common.run(
        lambda: engine.build_context(
            pid, session_context, max_tokens=budget, max_memories=n, record_access=False
        )
    )
    if res is None:
        st.stop()
    items = list(res.items)

    st.subheader("Injected section")
    if res.safety_omitted:
        k = len(res.safety_omitted)
        rules = " ".join(i.rule for i in res.safety_omitted)
        why = " and ".join(
            w
            for w, hit in (
                (f"the token budget of {budget}", "token budget" in rules),
                (f"the limit of {n} places", "limit" in rules or "places" in rules),
            )
            if hit
        )
        raise_ = " or ".join(
            w
            for w, hit in (
                ("the budget", "token budget" in rules),
                ("Max memories", "limit" in rules),
            )
            if hit
        )
        st.error(
            f"{k} safety-critical {'memory is' if k == 1 else 'memories are'} left out by "
            f"{why or 'the section limits'} and would NOT reach the agent. "
            f"Raise {raise_ or 'the limits'}:",
            icon=":material/warning:",
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
    allergies = sum(i.scored.memory.memory_type == "allergy" for i in res.included)
    common.metrics(
        [
            (
                "Section tokens",
                f"{res.tokens} of {budget}",
                f"Exact count of the whole section (tokenizer {res.encoding}).",
            ),
            (
                "Places used",
                f"{res.places} of {n} + {allergies} allerg{'y' if allergies == 1 else 'ies'}",
                "Every active allergy is injected and uses none of the max-memories places; a "
                "line listing several memories (the current medications, what ended) uses one.",
            ),
        ]
    )
    st.plotly_chart(charts.token_gauge(res.tokens, budget), key="token_gauge")

    st.subheader("Why each memory is in or out")
    read = described(analyse(session_context))
    if read:
        st.markdown(
            "**How the question was read:** "
            + " · ".join(f"{what}: {_plain(said)}" for what, said in read)
        )
    st.caption(
        "The section's lines in order, then every other candidate by score (relevance × "
        "importance now / 10). Every active allergy is in the section, first, and uses no "
        f"place. ⚠️ marks an importance now of {engine.policy.decay.warn_threshold:g} or more; "
        "it does not move a memory up. A safety-critical memory that does not fit the budget "
        "is reported above, and nothing else takes its place. A line may stand for several "
        "memories: a list of the current ones the question asks for, what ended of a type, an "
        "allergy with a statement pending review against it. The best memory about each thing "
        "the question names (a slot of the social history, a result, a drug or its class) holds "
        "a place. “Matched” names the question's words a memory holds (in any form: “live” "
        "as “lives”), the concepts it matched through and the clinical keys it is about."
    )
    in_section, nearest, others = _why(items)
    if in_section:
        st.markdown(in_section)
    if nearest:
        st.caption("The closest left out:")
        st.markdown(nearest)
    if others:
        with st.expander(f"The {len(items) - len(res.included) - NEAREST_SHOWN} other candidates"):
            st.markdown(others)
    with st.expander("The numbers behind each line, as a table"):
        st.dataframe(
            _scores_frame(items, engine.clock()),
            key="ranking_table",
            hide_index=True,
            row_height=common.WRAP_ROW_HEIGHT,
            column_config={
                "line": st.column_config.TextColumn("Line", width=45),
                "memory": st.column_config.TextColumn("Memory", width=170),
                "meaning": st.column_config.NumberColumn(
                    "Meaning",
                    format="%.2f",
                    width=70,
                    help="How close the memory's meaning is to the session context: the "
                    "cosine of their embeddings (−1…1).",
                ),
                "keywords": st.column_config.NumberColumn(
                    "Words",
                    format="%.1f",
                    width=60,
                    help="How well the memory's words match the question's (a BM25 score over "
                    "word forms: rare shared words count most).",
                ),
                "relevance": st.column_config.NumberColumn(
                    "Relevance",
                    format="%.2f",
                    width=75,
                    help="Meaning and words combined into one number from 0 to 1.",
                ),
                "importance now": st.column_config.NumberColumn(
                    "Importance", format="%.1f", width=80, help="Importance now (1–10)"
                ),
                "age": st.column_config.TextColumn(
                    "Age",
                    width=170,
                    help="Where the memory's decay counts from: its last confirmation (a "
                    "re-statement, a reviewer's keep, its record) or its creation.",
                ),
                "score": st.column_config.NumberColumn("Score", format="%.2f", width=55),
            },
            column_order=[c for c in SCORE_COLUMNS if c != "tokens"],
        )
    _annotations_section(items, engine)
    _flags_summary(engine, pid, items)

    st.subheader("Whole system prompt")
    prompt = ctx.build_system_prompt(res.text, session_context, engine.role)
    st.code(prompt, language=None, wrap_lines=True)

    _model_section(engine, prompt, session_context)


main()
