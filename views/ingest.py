"""Ingest: memories proposed from a session transcript (pasted, uploaded or a demo one) or
imported from a FHIR R4 bundle. Nothing is written until the reviewer saves: the proposals are
a compact editable table (accept, type, statement, importance) numbered like the evidence
marks in the transcript, with each proposal's evidence, confidence and what it would replace
listed under it; one Save writes the accepted ones in one transaction. Buttons act in their
callbacks, so an error shows on the click that caused it. The FHIR preview and the import are
one engine computation (the import's dry run), so they report the same counts. Every write
goes through the guarded path (``common.acting()``). Layout and widgets only: every rule is in
memory_core.ingest."""

from __future__ import annotations

import html
import json
import os
from importlib.resources import files
from typing import Any

import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core.ingest import FhirImportReport, Proposal
from memory_core.ingest.fhir import bundle_patients
from memory_core.ingest.service import MAX_TRANSCRIPT_CHARS
from memory_core.labels import (
    decision_words,
    offered_types,
    state_label,
    type_label,
    whose_label,
)
from views import common

STATE = "ingest_state"  # {"patient", "transcript", "proposals", "rejected"}
FHIR_STATE = "fhir_state"  # {"target", "bundle", "report"}
FLASH = "ingest_flash"  # transcript tab: (kind, text)
FHIR_FLASH = "fhir_flash"  # FHIR tab: (kind, text)
NONE = "(paste or upload below)"
EDITOR_COLUMNS = ["accept", "type", "whose", "statement", "importance"]


def demo_files(suffix: str) -> list[str]:
    folder = files("memory_core").joinpath("data/demo")
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(suffix))


def demo_text(name: str) -> str:
    return files("memory_core").joinpath(f"data/demo/{name}").read_text(encoding="utf-8")


def _is_core_error(exc: BaseException) -> bool:
    # by class name too: a dev server that reloaded memory_core keeps the old engine
    return any(c.__name__ == "MemoryCoreError" for c in type(exc).__mro__)


def _load_demo() -> None:
    name = st.session_state.get("ingest_demo")
    if name and name != NONE:
        st.session_state["ingest_transcript"] = demo_text(str(name))
        st.session_state["ingest_name"] = str(name)


def _extractors() -> list[str]:
    out = ["rule"]
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("AZURE_OPENAI_ENDPOINT"):
        out.append("openai:" + os.environ.get("MEMORY_CORE_EXTRACT_MODEL", "gpt-4o-mini"))
    return out


def transcript_problem(text: str) -> str | None:
    if not text.strip():
        return "Paste, upload or pick a transcript first: the transcript is empty."
    if len(text) > MAX_TRANSCRIPT_CHARS:
        return (
            f"The transcript has {len(text):,} characters; the limit is "
            f"{MAX_TRANSCRIPT_CHARS:,}. Nothing was cut: split it into sessions."
        )
    return None


def _propose(pid: str) -> None:
    """Propose button's callback: runs before the page is drawn, so the result (or the error)
    shows on this click."""
    text = str(st.session_state.get("ingest_transcript") or "")
    problem = transcript_problem(text)
    if problem:
        st.session_state[FLASH] = ("error", f"Nothing was proposed. {problem}")
        st.session_state.pop(STATE, None)
        return
    spec = str(st.session_state.get("ingest_extractor") or "rule")
    extractor: Any = None
    try:
        if spec.startswith("openai:"):
            extractor = mc.LLMExtractor(spec.split(":", 1)[1])
        props = common.engine().extract_memories(
            pid, text, extractor=extractor, name=st.session_state.get("ingest_name")
        )
    except Exception as exc:
        if not _is_core_error(exc):
            raise
        st.session_state[FLASH] = ("error", f"Nothing was proposed: {exc}")
        st.session_state.pop(STATE, None)
        return
    st.session_state[STATE] = {
        "patient": pid,
        "transcript": text,
        "proposals": list(props),
        "rejected": [f"item {r.index + 1}: {r.reason}" for r in props.rejected],
    }
    st.session_state.pop("ingest_editor", None)
    st.session_state.pop(FLASH, None)


def highlighted(text: str, proposals: list[Proposal]) -> str:
    """The transcript as HTML with each proposal's evidence marked and numbered 1..N, the
    numbers of the table's rows."""
    spans: dict[tuple[int, int], list[int]] = {}
    for i, p in enumerate(proposals, start=1):
        spans.setdefault((p.start, p.end), []).append(i)
    out: list[str] = []
    pos = 0
    for (start, end), rows in sorted(spans.items()):
        if start < pos:
            continue  # overlapping evidence: the first span is marked
        out.append(html.escape(text[pos:start]))
        tag = ",".join(str(r) for r in rows)
        out.append(
            f'<mark style="background:#ffe08a;padding:0 2px">{html.escape(text[start:end])}'
            f"<sup><b>{tag}</b></sup></mark>"
        )
        pos = end
    out.append(html.escape(text[pos:]))
    body = "".join(out).replace("\n", "<br>")
    return (
        '<div style="font-family:monospace;font-size:0.9rem;line-height:1.6;border:1px solid '
        f'#ddd;border-radius:6px;padding:0.75rem;max-height:420px;overflow:auto">{body}</div>'
    )


def supersede_words(p: Proposal) -> str:
    """What a proposal would replace, when and why, in words ("“…” (at once. Why: the same drug
    stopped — same drug metformin: the older note says 500 mg; the newer note says stopped)")."""
    return "; ".join(
        f"“{s.content}” ({'at once' if s.mode == 'auto' else 'after review'}"
        f"{'. ' + decision_words(s.rule, s.evidence) if s.rule or s.evidence else ''})"
        for s in p.supersedes
    )


def proposal_frame(proposals: list[Proposal]) -> pd.DataFrame:
    """The compact editor's rows, numbered 1..N like the evidence marks."""
    return pd.DataFrame(
        {
            "accept": [True] * len(proposals),
            "type": [p.memory_type for p in proposals],
            "whose": [whose_label(p.whose) for p in proposals],
            "statement": [p.content for p in proposals],
            "importance": [float(p.importance) for p in proposals],
        },
        columns=EDITOR_COLUMNS,
        index=pd.RangeIndex(1, len(proposals) + 1, name="#"),
    )


def _accepted(proposals: list[Proposal], edited: pd.DataFrame) -> list[dict[str, Any]]:
    """The accepted rows as the reviewer edited them (statement, type, importance)."""
    out: list[dict[str, Any]] = []
    for p, (_, row) in zip(proposals, edited.iterrows(), strict=True):
        if not bool(row["accept"]):
            continue
        imp = row["importance"]
        out.append(
            {
                **p.__dict__,
                "content": str(row["statement"]),
                "memory_type": str(row["type"]),
                "importance": None if pd.isna(imp) else float(imp),
            }
        )
    return out


def _details(proposals: list[Proposal]) -> None:
    """Evidence, confidence and what it would replace, per numbered proposal (the columns that
    did not fit a laptop's table)."""
    with st.expander("Evidence and what each would replace", expanded=True):
        for i, p in enumerate(proposals, start=1):
            whose = (
                "the patient's own fact"
                if p.whose == "patient"
                else f"{whose_label(p.whose).lower()}: a relative's, not the patient's condition"
            )
            st.markdown(
                f"**{i}.** {type_label(p.memory_type)} · {whose} · confidence {p.confidence:.0%}"
            )
            st.text(f"From the words: “{p.evidence}”")
            if p.dated_by:
                st.text(f"Dated by: “{p.dated_by}”")
            if p.supersedes:
                st.text(f"Would replace: {supersede_words(p)}")


def transcript_tab(pid: str) -> None:
    demos = demo_files(".txt")
    st.selectbox(
        "Demo transcript (synthetic)",
        [NONE, *demos],
        key="ingest_demo",
        on_change=_load_demo,
    )
    upload = st.file_uploader("…or upload a transcript (.txt)", type=["txt"], key="ingest_upload")
    if upload is not None and st.session_state.get("ingest_uploaded") != upload.name:
        st.session_state["ingest_transcript"] = upload.getvalue().decode("utf-8", "replace")
        st.session_state["ingest_name"] = upload.name
        st.session_state["ingest_uploaded"] = upload.name
    text = st.text_area(
        "Session transcript",
        key="ingest_transcript",
        height=220,
        placeholder="Clinician: …\nPatient: …",
    )
    if len(text or "") > MAX_TRANSCRIPT_CHARS:
        st.error(transcript_problem(text or ""), icon=":material/error:")
    c1, c2 = st.columns([1, 3])
    c1.selectbox(
        "Extractor",
        _extractors(),
        key="ingest_extractor",
        format_func=lambda x: "Rules (offline)" if x == "rule" else f"Chat model ({x[7:]})",
    )
    c2.caption(
        "The rule extractor works offline; a chat-model extractor appears when an endpoint is "
        "configured (OPENAI_API_KEY or AZURE_OPENAI_ENDPOINT). Nothing is written until Save."
    )
    st.button(
        "Propose memories", key="ingest_propose", type="primary", on_click=_propose, args=(pid,)
    )
    flash = st.session_state.pop(FLASH, None)
    if flash:
        (st.error if flash[0] == "error" else st.success)(flash[1])

    state = st.session_state.get(STATE)
    if not state or state["patient"] != pid:
        return
    proposals: list[Proposal] = state["proposals"]
    for line in state["rejected"]:
        st.warning(f"Not proposed ({line})")
    if not proposals:
        st.info("No memories proposed from this transcript.")
        return
    st.subheader(f"{len(proposals)} proposed memories for {pid}")
    st.caption("The numbers in the transcript are the table's rows.")
    st.markdown(highlighted(state["transcript"], proposals), unsafe_allow_html=True)
    types = list(dict.fromkeys([*offered_types(common.engine().policy.importance_rules)]))
    types += [p.memory_type for p in proposals if p.memory_type not in types]
    # Fits 1,024 px (issue 35: the table scrolled sideways there, its headers cut to "Acce" and
    # "Import"): the widths and the row numbers add up to less than the page's column, each
    # header whole beside its edit mark. "Whose" is a column only when a proposal is a
    # relative's (family history), and the statements then wrap onto four lines.
    relatives = any(p.whose != "patient" for p in proposals)
    row_height = common.WRAP_ROW_HEIGHT_4 if relatives else common.WRAP_ROW_HEIGHT
    edited = st.data_editor(
        proposal_frame(proposals),
        key="ingest_editor",
        hide_index=False,
        width="stretch",
        num_rows="fixed",
        row_height=row_height,
        height=38 + row_height * min(len(proposals), 12),  # every row, up to 12
        column_order=[c for c in EDITOR_COLUMNS if relatives or c != "whose"],
        column_config={
            "accept": st.column_config.CheckboxColumn(
                "Accept", width=80, help="Untick to leave it out"
            ),
            "type": st.column_config.SelectboxColumn(
                "Type", options=types, format_func=type_label, width=112, required=True
            ),
            "whose": st.column_config.TextColumn(
                "Whose", width=62, disabled=True, help="The patient's own fact, or family history"
            ),
            "statement": st.column_config.TextColumn("Statement", width=134 if relatives else 196),
            "importance": st.column_config.NumberColumn(
                "Importance", min_value=1, max_value=10, width=112, help="Base importance, 1–10"
            ),
        },
    )
    _details(proposals)
    accepted = _accepted(proposals, edited)
    common.read_only_note()
    if st.button(
        f"Save {len(accepted)} accepted",
        key="ingest_save",
        type="primary",
        disabled=not accepted or not common.can_edit(),
    ):
        results = common.run(lambda: common.acting().accept_proposals(pid, accepted))
        if results is None:
            return
        sups = sum(len(r.supersessions) for r in results)
        st.session_state[FLASH] = (
            "success",
            f"Saved {len(results)} memories for {pid}; {sups} older memories replaced or sent "
            "for review.",
        )
        st.session_state.pop(STATE, None)
        st.session_state.pop("ingest_editor", None)
        st.rerun()


def _report_frames(report: FhirImportReport) -> None:
    verb = "would create" if report.dry_run else "created"
    st.markdown(f"**{report.summary()}**")
    if report.created:
        st.caption(f"Memories the import {verb}")
        st.dataframe(
            pd.DataFrame(
                {
                    "type": [type_label(i.memory_type or "") for i in report.created],
                    "statement": [i.content for i in report.created],
                    "source": [i.source for i in report.created],
                    "note": [i.reason for i in report.created],
                }
            ),
            hide_index=True,
            width="stretch",
            key="fhir_created",
            row_height=common.WRAP_ROW_HEIGHT,
            column_order=["type", "statement", "note"],
            column_config={
                "type": st.column_config.TextColumn("Type", width=110),
                "statement": st.column_config.TextColumn("Statement", width=290),
                "note": st.column_config.TextColumn("Note", width=155),
            },
        )
    if report.superseded:
        st.caption(
            f"Older memories it {'would replace' if report.dry_run else 'replaced'} at once, or "
            "send for review"
        )
        st.dataframe(
            pd.DataFrame(
                {
                    "older memory": [s.old_content for s in report.superseded],
                    "newer": [s.new_content for s in report.superseded],
                    "what happens": [state_label(s.state) for s in report.superseded],
                }
            ),
            hide_index=True,
            width="stretch",
            key="fhir_superseded",
            row_height=common.WRAP_ROW_HEIGHT_4,
            column_config={
                "older memory": st.column_config.TextColumn("Older memory", width=205),
                "newer": st.column_config.TextColumn("Newer", width=205),
                "what happens": st.column_config.TextColumn("What happens", width=140),
            },
        )
    if report.skipped:
        st.caption("Skipped resources, counted by kind, reason and code")
        counts = report.skipped_counts()
        st.dataframe(
            pd.DataFrame(
                {
                    "resource": [t for t, _r, _c, _n in counts],
                    "reason": [r for _t, r, _c, _n in counts],
                    "code": [c for _t, _r, c, _n in counts],
                    "count": [n for _t, _r, _c, n in counts],
                }
            ),
            hide_index=True,
            width="stretch",
            key="fhir_skipped",
            row_height=common.WRAP_ROW_HEIGHT,
            column_config={
                "source": st.column_config.TextColumn("Resource", width=250),
                "reason": st.column_config.TextColumn("Why", width=300),
            },
        )
    if report.other_patients:
        st.caption(
            f"Left out: {len(report.other_patients)} other patient(s) of the bundle "
            f"({', '.join(report.other_patients[:5])})"
        )
    if report.unchanged:
        st.caption(f"{len(report.unchanged)} resources unchanged since the last import")


def _bundle(flash: bool = True) -> dict[str, Any] | None:
    """The chosen bundle, or None (with the reason in FHIR_FLASH when ``flash``)."""
    if st.session_state.get("fhir_source") == "Upload":
        upload = st.session_state.get("fhir_upload")
        why = None
        data: Any = None
        if upload is None:
            why = "Choose a bundle file to upload first."
        else:
            try:
                data = json.loads(upload.getvalue())
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                why = f"{upload.name} is not valid JSON: {exc}"
            else:
                if not isinstance(data, dict):
                    why = f"{upload.name} is not a FHIR Bundle."
        if why is not None:
            if flash:
                st.session_state[FHIR_FLASH] = ("error", why)
            return None
        return data
    name = st.session_state.get("fhir_demo") or (demo_files(".json") or [None])[0]
    return json.loads(demo_text(str(name))) if name else None


def _import(target: str | None, dry_run: bool, fhir_patient: str | None = None) -> None:
    """Preview and Import buttons' callback: one engine call (the import, or its dry run), the
    result or the error shown on this click."""
    state = st.session_state.get(FHIR_STATE)
    bundle = state["bundle"] if not dry_run and state else _bundle()
    if bundle is None:
        st.session_state.pop(FHIR_STATE, None)
        return
    try:
        report = common.acting().import_fhir(
            bundle, patient_id=target, fhir_patient=fhir_patient, dry_run=dry_run
        )
    except Exception as exc:
        if not _is_core_error(exc):
            raise
        what = "previewed" if dry_run else "imported"
        st.session_state[FHIR_FLASH] = ("error", f"Nothing was {what}: {common.error_words(exc)}")
        st.session_state.pop(FHIR_STATE, None)
        return
    st.session_state[FHIR_STATE] = {
        "target": target,
        "bundle": bundle,
        "report": report,
        "fhir_patient": fhir_patient,
    }
    st.session_state[FHIR_FLASH] = ("success", report.summary()) if not dry_run else None


def fhir_tab(pid: str) -> None:
    demo = demo_files(".json")
    source = st.radio(
        "Bundle",
        ["Demo bundle (synthetic)", "Upload"],
        horizontal=True,
        key="fhir_source",
    )
    if source == "Upload":
        st.file_uploader("FHIR R4 Bundle (.json)", type=["json"], key="fhir_upload")
    elif demo:
        st.selectbox("Demo bundle", demo, key="fhir_demo")
    for_selected = st.toggle(
        f"Map to the selected patient ({pid}) instead of the bundle's Patient",
        value=False,
        key="fhir_for_selected",
        help="Off (safer): the memories belong to the bundle's own Patient resource.",
    )
    target = pid if for_selected else None
    peek = _bundle(flash=False)
    found = bundle_patients(peek) if peek is not None else []
    chosen: str | None = None
    if len(found) > 1:
        st.warning(
            f"This bundle holds {len(found)} patients; an import is about one. Choose which "
            "Patient to take: the others are left out and counted."
        )
        chosen = st.selectbox("Patient in the bundle", found, key="fhir_patient")
    c1, c2 = st.columns(2)
    c1.button(
        "Preview import",
        key="fhir_preview",
        on_click=_import,
        args=(target, True, chosen),
        # no file uploaded yet: nothing to preview (an invalid file is previewed: the click
        # says what is wrong with it)
        disabled=source == "Upload" and st.session_state.get("fhir_upload") is None,
    )
    state = st.session_state.get(FHIR_STATE)
    report: FhirImportReport | None = state["report"] if state else None
    shown = (
        state is not None
        and state["target"] == target
        and state.get("fhir_patient") == chosen
        and report is not None
    )
    if shown and report is not None and report.dry_run:
        common.read_only_note()
        named = common.reviewer_ok()
        c2.button(
            f"Import {len(report.created)} memories",
            key="fhir_apply",
            type="primary",
            # disabled until it can work: something to write, a reviewer, a name to record
            disabled=not report.created or not common.can_edit() or not named,
            on_click=_import,
            args=(target, False, chosen),
        )
        if common.can_edit() and not named:
            c2.caption("Type your name in the sidebar to import: the import is recorded under it.")
    flash = st.session_state.pop(FHIR_FLASH, None)
    if flash:
        (st.error if flash[0] == "error" else st.success)(flash[1])
    if shown and report is not None:
        _report_frames(report)


common.header(
    "Ingest",
    "Memories from where they come from: a session transcript or a FHIR R4 bundle. Proposals "
    "are reviewed here; nothing is written until you save.",
)
patient = common.require_patient(common.patient_picker())
common.reviewer()
tab_t, tab_f = st.tabs(["Session transcript", "FHIR R4 bundle"])
with tab_t:
    transcript_tab(patient)
with tab_f:
    fhir_tab(patient)
