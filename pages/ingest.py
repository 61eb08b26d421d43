"""Ingest: memories proposed from a session transcript (pasted, uploaded or a demo one) or
imported from a FHIR R4 bundle. Nothing is written until the reviewer saves: the proposals are
a table (type, statement, importance, evidence, what each would supersede), each row editable
and accepted or rejected; one Save writes the accepted ones in one transaction. Layout and
widgets only: every rule is in memory_core.ingest."""

from __future__ import annotations

import html
import json
import os
from importlib.resources import files
from typing import Any

import pandas as pd
import streamlit as st

import memory_core as mc
from memory_core.importance import KNOWN_TYPES
from memory_core.ingest import FhirImportReport, Proposal
from memory_core.ingest.fhir import bundle_patients
from pages import common

STATE = "ingest_state"  # {"patient", "transcript", "name", "proposals", "rejected"}
FHIR_STATE = "fhir_state"  # {"patient", "bundle", "name", "report"}
FLASH = "ingest_flash"
NONE = "(paste or upload below)"
EDITOR_COLUMNS = [
    "accept",
    "type",
    "statement",
    "importance",
    "would supersede",
    "confidence",
    "evidence",
]


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


def _propose(pid: str, text: str, name: str | None, spec: str) -> None:
    eng = common.engine()
    extractor: Any = None
    try:
        if spec.startswith("openai:"):
            extractor = mc.LLMExtractor(spec.split(":", 1)[1])
        props = eng.extract_memories(pid, text, extractor=extractor, name=name)
    except Exception as exc:
        if not _is_core_error(exc):
            raise
        st.session_state[FLASH] = ("error", f"{type(exc).__name__}: {exc}")
        st.session_state.pop(STATE, None)
        return
    st.session_state[STATE] = {
        "patient": pid,
        "transcript": text,
        "proposals": list(props),
        "rejected": [f"item {r.index}: {r.reason}" for r in props.rejected],
    }
    st.session_state.pop("ingest_editor", None)


def highlighted(text: str, proposals: list[Proposal]) -> str:
    """The transcript as HTML with each proposal's evidence marked and numbered."""
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


def proposal_frame(proposals: list[Proposal]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "accept": [True] * len(proposals),
            "type": [p.memory_type for p in proposals],
            "statement": [p.content for p in proposals],
            "importance": [float(p.importance) for p in proposals],
            "confidence": [float(p.confidence) for p in proposals],
            "evidence": [p.evidence for p in proposals],
            "would supersede": [
                "; ".join(f"{s.content} ({s.mode}, {s.similarity:.2f})" for s in p.supersedes)
                or "—"
                for p in proposals
            ],
        },
        columns=EDITOR_COLUMNS,
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


def transcript_tab(pid: str, who: str) -> None:
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
    c1, c2 = st.columns([1, 3])
    spec = c1.selectbox("Extractor", _extractors(), key="ingest_extractor")
    c2.caption(
        "The rule extractor works offline; an `openai:` extractor appears when an endpoint is "
        "configured (OPENAI_API_KEY or AZURE_OPENAI_ENDPOINT). Nothing is written until Save."
    )
    if st.button("Propose memories", key="ingest_propose", type="primary"):
        _propose(pid, text, st.session_state.get("ingest_name"), str(spec))

    state = st.session_state.get(STATE)
    if not state or state["patient"] != pid:
        return
    proposals: list[Proposal] = state["proposals"]
    for line in state["rejected"]:
        st.warning(f"Rejected (not proposed): {line}")
    if not proposals:
        st.info("No memories proposed from this transcript.")
        return
    st.subheader(f"{len(proposals)} proposed memories for {pid}")
    st.markdown(highlighted(state["transcript"], proposals), unsafe_allow_html=True)
    edited = st.data_editor(
        proposal_frame(proposals),
        key="ingest_editor",
        hide_index=False,
        width="stretch",
        num_rows="fixed",
        disabled=["confidence", "evidence", "would supersede"],
        column_config={
            "accept": st.column_config.CheckboxColumn("accept", help="untick to reject"),
            "type": st.column_config.SelectboxColumn("type", options=sorted(KNOWN_TYPES)),
            "statement": st.column_config.TextColumn("statement", width="large"),
            "importance": st.column_config.NumberColumn("importance", min_value=1, max_value=10),
            "confidence": st.column_config.ProgressColumn("confidence", min_value=0, max_value=1),
            "evidence": st.column_config.TextColumn("evidence", width="medium"),
            "would supersede": st.column_config.TextColumn("would supersede", width="medium"),
        },
    )
    accepted = _accepted(proposals, edited)
    common.read_only_note()
    if st.button(
        f"Save {len(accepted)} accepted",
        key="ingest_save",
        type="primary",
        disabled=not accepted or not common.can_edit(),
    ):
        try:
            results = common.engine().accept_proposals(pid, accepted, by=who)
        except Exception as exc:
            if not _is_core_error(exc):
                raise
            st.error(f"{type(exc).__name__}: {exc}")
            return
        sups = sum(len(r.supersessions) for r in results)
        st.session_state[FLASH] = (
            "success",
            f"Saved {len(results)} memories for {pid} ({sups} supersessions).",
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
                    "type": [i.memory_type for i in report.created],
                    "statement": [i.content for i in report.created],
                    "source": [i.source for i in report.created],
                    "note": [i.reason for i in report.created],
                }
            ),
            hide_index=True,
            width="stretch",
            key="fhir_created",
        )
    if report.superseded:
        st.caption("Memories it supersedes (auto) or sends to review")
        st.dataframe(
            pd.DataFrame(
                {
                    "older memory": [s.old_content for s in report.superseded],
                    "newer": [s.new_content for s in report.superseded],
                    "mode": [s.state for s in report.superseded],
                    "similarity": [round(s.similarity, 3) for s in report.superseded],
                }
            ),
            hide_index=True,
            width="stretch",
            key="fhir_superseded",
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
        )
    if report.other_patients:
        st.caption(
            f"Left out: {len(report.other_patients)} other patient(s) of the bundle "
            f"({', '.join(report.other_patients[:5])})"
        )
    if report.unchanged:
        st.caption(f"{len(report.unchanged)} resources unchanged since the last import")


def _import(
    pid: str | None, bundle: dict[str, Any], who: str, dry_run: bool, fhir_patient: str | None
) -> None:
    try:
        report = common.engine().import_fhir(
            bundle, patient_id=pid, fhir_patient=fhir_patient, by=who, dry_run=dry_run
        )
    except Exception as exc:
        if not _is_core_error(exc):
            raise
        st.session_state[FLASH] = ("error", f"{type(exc).__name__}: {exc}")
        st.session_state.pop(FHIR_STATE, None)
        return
    st.session_state[FHIR_STATE] = {
        "patient": pid,
        "bundle": bundle,
        "report": report,
        "fhir_patient": fhir_patient,
    }
    if not dry_run:
        st.session_state[FLASH] = ("success", report.summary())


def fhir_tab(pid: str, who: str) -> None:
    demo = demo_files(".json")
    source = st.radio(
        "Bundle",
        ["Demo bundle (synthetic)", "Upload"],
        horizontal=True,
        key="fhir_source",
    )
    bundle: dict[str, Any] | None = None
    if source == "Upload":
        upload = st.file_uploader("FHIR R4 Bundle (.json)", type=["json"], key="fhir_upload")
        if upload is not None:
            try:
                bundle = json.loads(upload.getvalue())
            except json.JSONDecodeError as exc:
                st.error(f"{upload.name} is not valid JSON: {exc.msg}")
    elif demo:
        name = st.selectbox("Demo bundle", demo, key="fhir_demo")
        bundle = json.loads(demo_text(str(name)))
    for_selected = st.toggle(
        f"Map to the selected patient ({pid}) instead of the bundle's Patient",
        value=False,
        key="fhir_for_selected",
        help="Off (safer): the memories belong to the bundle's own Patient resource.",
    )
    target = pid if for_selected else None
    found = bundle_patients(bundle) if bundle is not None else []
    chosen: str | None = None
    if len(found) > 1:
        st.warning(
            f"This bundle holds {len(found)} patients; an import is about one. Choose which "
            "Patient to take: the others are left out and counted."
        )
        chosen = st.selectbox("Patient in the bundle", found, key="fhir_patient")
    c1, c2 = st.columns(2)
    if c1.button("Preview import", key="fhir_preview", disabled=bundle is None):
        assert bundle is not None
        _import(target, bundle, who, dry_run=True, fhir_patient=chosen)
    state = st.session_state.get(FHIR_STATE)
    if state and state["patient"] == target and state.get("fhir_patient") == chosen:
        report: FhirImportReport = state["report"]
        _report_frames(report)
        if report.dry_run and c2.button(
            f"Import {len(report.created)} memories",
            key="fhir_apply",
            type="primary",
            disabled=not report.created or not common.can_edit(),
        ):
            _import(target, state["bundle"], who, dry_run=False, fhir_patient=chosen)
            st.rerun()


common.header(
    "Ingest",
    "Memories from where they come from: a session transcript or a FHIR R4 bundle. Proposals "
    "are reviewed here; nothing is written until you save.",
)
patient = common.require_patient(common.patient_picker())
reviewer = common.reviewer()
flash = st.session_state.pop(FLASH, None)
if flash:
    (st.error if flash[0] == "error" else st.success)(flash[1])
tab_t, tab_f = st.tabs(["Session transcript", "FHIR R4 bundle"])
with tab_t:
    transcript_tab(patient, reviewer)
with tab_f:
    fhir_tab(patient, reviewer)
