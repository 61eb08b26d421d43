"""Shared dashboard plumbing: the engine (once per server), the one guarded path for every
change (:func:`acting`: the signed-in user's role checked by the engine), the patient picker
(session state + URL query string), the reviewer's name, metrics that wrap instead of cutting
their labels, and error display. Layout only: every number, rule and word comes from
memory_core."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

import memory_core as mc
from memory_core.access import ROLE_LABELS, AccessRule, Role
from memory_core.store import default_store_url

T = TypeVar("T")


def store_url() -> str:
    return default_store_url()


def embedder_spec() -> str:
    return os.environ.get("MEMORY_CORE_EMBEDDER", "minilm")


def _warm_up() -> None:
    """Read the drug dictionary (about 1 s from its compressed file) off the page's thread: the
    first page paints while it loads, and the possibly-out-of-date check then finds it ready."""
    from memory_core import drugs

    # without the dictionary package the check itself says so when it runs
    with contextlib.suppress(mc.MemoryCoreError):
        drugs.canonical_names("metformin")


@st.cache_resource(show_spinner="Opening the memory store…")
def _engine(url: str, embedder: str) -> mc.MemoryEngine:
    engine = mc.open_engine(url, embedder)
    threading.Thread(target=_warm_up, name="memory-core-warm-up", daemon=True).start()
    return engine


def engine() -> mc.MemoryEngine:
    """The engine for this server's store (created once, shared by every session)."""
    return _engine(store_url(), embedder_spec())


READ_ONLY = "Read-only: your account is not on the reviewer list, so nothing was changed."


def error_words(exc: Exception) -> str:
    """An engine error as a sentence for the reviewer ("Nothing was changed: ...")."""
    if isinstance(exc, mc.PermissionDeniedError):
        return READ_ONLY
    if isinstance(exc, mc.ValidationError):
        if exc.field in ("by", "reviewer", "actor"):
            return "Nothing was changed: enter your name in the sidebar first."
        return f"Nothing was changed: {exc.field.replace('_', ' ')} {exc.message}."
    if isinstance(exc, mc.ConflictError):
        return f"Nothing was changed: {exc} Someone else changed it; reload and try again."
    return f"Nothing was changed: {exc}"


def run(action: Callable[[], T], success: str | None = None) -> T | None:
    """Run an engine call; show its error as st.error (never a traceback)."""
    try:
        result = action()
    except mc.PermissionDeniedError:
        st.error(READ_ONLY, icon=":material/lock:")
        return None
    except mc.ValidationError as exc:
        if exc.field in ("by", "reviewer", "actor"):
            st.error("Nothing was changed: enter your name in the sidebar first.")
        else:
            st.error(f"Nothing was changed: {exc.field.replace('_', ' ')} {exc.message}.")
        return None
    except mc.MemoryCoreError as exc:
        st.error(f"Nothing was changed: {exc}")
        with st.expander("Technical detail"):
            st.code(f"{type(exc).__name__}: {exc}", language=None)
        return None
    if success:
        st.toast(success)
    return result


def seed_button() -> None:
    """Empty state: offer to load the synthetic demo patients, with a progress bar (a write:
    reviewers only, through the guarded path)."""
    st.info(
        "This store has no patients yet. Load the synthetic Northwind Health demo patients, "
        "or add memories from the **Memories** page or `python -m memory_core import`."
    )
    read_only_note()
    if st.button("Load demo data", key="seed_demo", type="primary", disabled=not can_edit()):
        bar = st.progress(0.0, text="Embedding demo memories…")

        def progress(done: int, total: int) -> None:
            bar.progress(done / max(total, 1), text=f"Embedding demo memories… {done}/{total}")

        summary = run(lambda: acting().seed_demo(progress=progress))
        if summary:
            st.success(f"Loaded {summary['memories']} memories for {summary['patients']} patients.")
            st.rerun()


#: a table row this tall lets the grid wrap a memory's text onto three lines (the grid wraps
#: text only in rows taller than 4 rem): the whole statement is read without hovering. Each
#: table's column widths add up to at most MAIN_1024 pixels, the main column of a 1,024 px
#: screen, and stretch to fill a wider one.
WRAP_ROW_HEIGHT = 72
WRAP_ROW_HEIGHT_4 = 94  # four lines, for the longest texts (two statements in one cell)
MAIN_1024 = 560

PICKER_SHOWN = 30  # options in the patient list at once (never a list of every id)
RECENT_KEPT = 8


@st.cache_data(show_spinner=False, max_entries=4)
def _patients(url: str, n_memories: int) -> tuple[list[str], dict[str, str]]:
    """Every patient id (sorted) and the labels known for them (the synthetic demo's), read
    again whenever the store's memory count moves (a new patient always adds memories)."""
    from memory_core.demo import demo_labels

    ids = engine().list_patients()
    labels = demo_labels()
    return ids, {p: labels[p] for p in ids if p in labels}


def patients() -> tuple[list[str], dict[str, str]]:
    return _patients(store_url(), engine().store.count_memories())


def pending_by_patient() -> dict[str, int]:
    """Pending reviews per patient: one query over supersessions (not over memories)."""
    out: dict[str, int] = {}
    for s in engine().store.list_supersessions(state="pending"):
        out[s.patient_id] = out.get(s.patient_id, 0) + 1
    return out


def search_patients(
    ids: list[str],
    labels: dict[str, str],
    query: str,
    recent: list[str],
    pending: dict[str, int],
    limit: int = PICKER_SHOWN,
) -> tuple[list[str], int]:
    """The patients to offer: matches of ``query`` in the id or label (case-insensitive), or
    without a query the recent ones, then those with pending reviews (most first), then the
    rest; recent first in both cases. Returns ``(at most limit ids, number of matches)``."""
    q = query.strip().lower()
    known = set(ids)
    recent = list(dict.fromkeys(recent))  # the current patient is often also a recent one
    if q:
        matches = [p for p in ids if q in p.lower() or q in labels.get(p, "").lower()]
        first = [p for p in recent if p in set(matches)]
        rest = [p for p in matches if p not in set(first)]
        return (first + rest)[:limit], len(matches)
    busy = sorted(pending, key=lambda p: (-pending[p], p))
    order = [p for p in recent if p in known]
    order += [p for p in busy if p in known and p not in set(order)]
    if len(order) < limit:
        taken = set(order)
        order += [p for p in ids[: limit * 2] if p not in taken]
    return order[:limit], len(ids)


def patient_label(pid: str, labels: dict[str, str], pending: dict[str, int]) -> str:
    """``NW-1001 · 4 to review · T2 diabetes, 58``: the id and the badge first, so a narrow
    picker cuts the description, never the count of reviews waiting."""
    n = pending.get(pid, 0)
    badge = f" · {n} to review" if n else ""
    label = labels.get(pid, "")
    detail = label.removeprefix("Synthetic patient ").removeprefix(pid).strip(" ()")
    return f"{pid}{badge}" + (f" · {detail}" if detail else "")


def require_patient(pid: str | None) -> str:
    """The picked patient, or the empty state (offer the demo data) and the page stops."""
    if pid is None:
        seed_button()
        st.stop()
    return pid


def patient_picker() -> str | None:
    """Sidebar patient picker shared by every page: a search by id or label, recent patients
    first, a badge with each patient's pending reviews. The choice is kept in session state and
    in the URL (``?patient=NW-1001``) so a link opens the same patient. Scales to 100,000
    patients: at most :data:`PICKER_SHOWN` options are drawn."""
    require_access()
    ids, labels = patients()
    if not ids:
        return None
    known = set(ids)
    url_pid = st.query_params.get("patient")
    wanted = st.session_state.get("patient")
    if url_pid and url_pid in known and url_pid != st.session_state.get("_url_patient"):
        wanted = url_pid  # a link (or the worklist) named a patient
    st.session_state["_url_patient"] = url_pid
    if wanted not in known:
        wanted = ids[0]
    recent: list[str] = list(st.session_state.get("recent_patients", []))
    pending = pending_by_patient()
    query = st.sidebar.text_input(
        "Find a patient",
        key="patient_search",
        placeholder="id or label, e.g. NW-1003 or diabetes",
    )
    shown, matches = search_patients(ids, labels, query, [wanted, *recent], pending)
    if query.strip() and not shown:
        st.sidebar.warning(f"No patient id or label contains “{query.strip()}”.")
    if wanted not in shown:
        shown = [wanted, *shown]
    shown = list(dict.fromkeys(shown))
    if st.session_state.get("patient_select") not in shown:
        st.session_state["patient_select"] = wanted
    choice = st.sidebar.selectbox(
        "Patient",
        shown,
        key="patient_select",
        format_func=lambda p: patient_label(p, labels, pending),
        help="Recent patients first; the badge counts reviews waiting for this patient.",
    )
    if query.strip() and matches > len(shown):
        st.sidebar.caption(f"{matches:,} matches; showing {len(shown)}. Type more to narrow.")
    elif not query.strip():
        st.sidebar.caption(f"{len(ids):,} patients · type to search")
    choice = str(choice)
    st.session_state["patient"] = choice
    st.session_state["recent_patients"] = [choice, *[p for p in recent if p != choice]][
        :RECENT_KEPT
    ]
    if st.query_params.get("patient") != choice:
        st.query_params["patient"] = choice
        st.session_state["_url_patient"] = choice
    return choice


def auth_configured() -> bool:
    """True when ``.streamlit/secrets.toml`` (or the test's secrets) has an ``[auth]`` section."""
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all: Streamlit raises
        return False


def access_rule() -> AccessRule:
    """Who is a reviewer: without ``[auth]`` everyone (a local dashboard); with it, the
    e-mails listed in ``[access] reviewers`` (the rule itself is memory_core.access's)."""
    if not auth_configured():
        return AccessRule(None)
    try:
        emails = st.secrets.get("access", {}).get("reviewers", [])
    except Exception:
        emails = []
    return AccessRule.from_list(emails or [])


def role() -> Role:
    if not auth_configured():
        return Role.REVIEWER
    if not st.user.is_logged_in:
        return Role.VIEWER
    return access_rule().role_of(identity())


def gate() -> None:
    """Called by app.py before any page: with ``[auth]`` configured, only signed-in users get
    past it (Streamlit's built-in OIDC ``st.login``); without it the dashboard is local-only
    (bound to 127.0.0.1) and whoever uses it is a reviewer."""
    if not auth_configured():
        return
    if not st.user.is_logged_in:
        st.title(":material/stethoscope: Clinical memory dashboard")
        st.info("Sign in with your organisation account to view patient memories.")
        st.button("Log in", key="login", type="primary", on_click=st.login)
        st.stop()
    st.sidebar.caption(f"Signed in as {identity()} · {ROLE_LABELS[role()]}")
    st.sidebar.button("Log out", key="logout", icon=":material/logout:", on_click=st.logout)


def require_access() -> None:
    """Defence in depth, called by every page through the patient picker: if Streamlit serves a
    page file directly (its folder discovery, before app.py's navigation has run), the login
    gate still holds."""
    if auth_configured() and not st.user.is_logged_in:
        st.info("Sign in from the dashboard's home page to view patient memories.")
        st.stop()


def identity() -> str:
    """The signed-in user's e-mail (or name)."""
    email = st.user.get("email") or st.user.get("name") or "unknown"
    return str(email)


def can_edit() -> bool:
    """Reviewers may change things; viewers only look. Without [auth] the local user is a
    reviewer; with it, only e-mails listed in ``[access] reviewers`` are. Pages use it to
    disable their write widgets; the engine's guard (:func:`acting`) enforces it."""
    return role() is Role.REVIEWER


def actor_name() -> str:
    """Who acts: the signed-in identity with [auth], else the name typed in the sidebar (read
    from session state, so callbacks that run before the sidebar is drawn get it too). "" when
    no valid name is typed: every engine write then refuses and says so."""
    if auth_configured():
        return identity()
    name = str(st.session_state.get("_reviewer_name", st.session_state.get("reviewer", "")) or "")
    return "" if name_problem(name) else name.strip()


def acting() -> mc.Acting:
    """The one guarded path for every change a page offers: the engine checks the role of the
    signed-in user (a viewer is refused, nothing written) and audits the change under their
    name."""
    return engine().acting_as(actor_name(), role())


def read_only_note() -> None:
    if not can_edit():
        st.caption(":material/lock: Read-only: your account is not on the reviewer list.")


def metrics(items: Sequence[tuple[str, Any, str | None]]) -> None:
    """Metrics in a row that wraps onto the next line when the screen is narrow, each as wide
    as its label: a label is never cut ("Pendin…")."""
    row = st.container(horizontal=True, gap="medium")
    for label, value, help_text in items:
        row.metric(label, value, help=help_text, width="content", border=True)


MAX_NAME = 120
_MARKUP = re.compile(r"[<>&`*_\[\]{}|#]|://")


def name_problem(name: str) -> str | None:
    """What is wrong with a reviewer name, in words, or None when it is acceptable: printable,
    at most :data:`MAX_NAME` characters, no markup; empty is an error (never "reviewer")."""
    text = name.strip()
    if not text:
        return "Enter your name: changes are recorded under it."
    if len(text) > MAX_NAME:
        return f"Use at most {MAX_NAME} characters (this name has {len(text)})."
    if not text.isprintable():
        return "Use letters, digits, spaces and ordinary punctuation only (no control characters)."
    if _MARKUP.search(text):
        return "Leave out markup: no <, >, &, `, *, _, [, ], {, }, |, # or links."
    return None


def _keep_name() -> None:
    name = str(st.session_state.get("reviewer", ""))
    st.session_state["_reviewer_name"] = name
    st.session_state["_reviewer_touched"] = True
    _name_to_url(name)


def _name_to_url(name: str) -> None:
    """The name rides in the URL (``?reviewer=``), as the patient does: a reload starts a new
    Streamlit session, and the browser session keeps its URL."""
    if name.strip() and name_problem(name) is None:
        if st.query_params.get("reviewer") != name.strip():
            st.query_params["reviewer"] = name.strip()
    elif "reviewer" in st.query_params:
        del st.query_params["reviewer"]


def reviewer() -> str:
    """Who is acting, recorded as the actor in the audit log: the signed-in identity with
    [auth], otherwise the name typed in the sidebar. An invalid or empty name returns "" (every
    engine action then refuses, nothing is written); what is wrong shows under the field once
    the reviewer has typed in it (the first paint says only what the name is for);
    :func:`reviewer_ok` says whether it is usable. The name is kept for the browser session:
    in session state across pages, and in the URL across a reload."""
    if auth_configured():
        return identity()
    # a widget's value does not survive a page switch: keep a copy outside the widget (updated
    # by the change callback) and give it back to the widget on every run
    if "_reviewer_name" not in st.session_state:
        typed = str(st.session_state.get("reviewer", "") or "")
        from_url = str(st.query_params.get("reviewer", "") or "")
        if not typed.strip() and from_url and name_problem(from_url) is None:
            typed = from_url  # a reload: the same browser session, a new Streamlit one
        st.session_state["_reviewer_name"] = typed
    st.session_state["reviewer"] = st.session_state["_reviewer_name"]
    name = st.sidebar.text_input(
        "Your name (for the audit log)",
        key="reviewer",
        on_change=_keep_name,
        # no max_chars: a longer name is kept and refused with a message, never cut silently
        placeholder="e.g. Dr. Rivera",
    )
    _name_to_url(name)
    problem = name_problem(name)
    if problem:
        if name.strip() or st.session_state.get("_reviewer_touched"):
            st.sidebar.error(problem)
        else:  # the first paint: what the name is for, not an error yet
            st.sidebar.caption("Type your name to make changes: they are recorded under it.")
        return ""
    return name.strip()


def count_problem(value: object, lo: int, hi: int) -> str | None:
    """What is wrong with a whole number typed in a row-limit field, in words (None: fine)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"Enter a whole number from {lo} to {hi}."
    x = float(value)
    if x != int(x):
        return f"Enter a whole number ({x:g} has a fraction)."
    if not lo <= x <= hi:
        return f"Enter a number from {lo} to {hi}; {x:g} is outside that range."
    return None


def reviewer_ok() -> bool:
    """True when the actor is usable (signed in, or a valid name typed)."""
    if auth_configured():
        return True
    return name_problem(str(st.session_state.get("reviewer", ""))) is None


def data_version(patient_id: str) -> str:
    """Cache key for derived frames: names the store and changes whenever anything of the
    patient changes, accesses and sessions included."""
    content, usage = engine().store.versions(patient_id)
    return f"{store_url()}|{content}|{usage}"


def header(title: str, caption: str | None = None) -> None:
    st.title(title)
    if caption:
        st.caption(caption)


def kv(label: str, value: Any) -> None:
    st.markdown(f"**{label}:** {value}")
