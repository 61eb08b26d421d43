"""Every plotly figure of the dashboard, built from memory_core values (no Streamlit here)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import numpy as np
import plotly.graph_objects as go

import memory_core as mc
from memory_core import decay
from memory_core.labels import status_label, type_label

STATUS_COLOURS = {"active": "#1f6f8b", "superseded": "#c77d2e", "archived": "#8a949b"}
FONT = {"family": "sans-serif", "size": 13, "color": "#1b2a33"}


def _text(content: str) -> str:
    """Memory content is untrusted: plotly renders a subset of HTML in hover labels and legend
    names, so escape it to show as plain text."""
    return html.escape(content, quote=False)


def _layout(fig: go.Figure, title: str, x: str, y: str, height: int = 420) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0.0},
        xaxis_title=x,
        yaxis_title=y,
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        font=FONT,
        plot_bgcolor="#ffffff",
        paper_bgcolor="#ffffff",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def timeline(view: mc.PatientView) -> go.Figure:
    """Time on x, memory type (in words) on y, marker size = current importance, colour =
    status; a superseded memory's hover names what replaced it."""
    fig = go.Figure()
    content_of = {m.id: m.content for m in view.memories}
    for status, colour in STATUS_COLOURS.items():
        idx = [i for i, s in enumerate(view.status) if s.value == status]
        if not idx:
            continue
        mems = [view.memories[i] for i in idx]
        cur = [float(view.current_importance[i]) for i in idx]

        def replaced(m: mc.Memory, status: str = status) -> str:
            newer = content_of.get(m.superseded_by or "")
            if status != "superseded" or not m.superseded_by:
                return ""
            shown = newer if newer is not None else "a newer memory (not visible at this date)"
            return "<br>replaced by: " + _text(shown if len(shown) <= 90 else shown[:89] + "…")

        fig.add_trace(
            go.Scatter(
                x=[m.created_at for m in mems],
                y=[type_label(m.memory_type) for m in mems],
                mode="markers",
                name=status_label(status),
                marker={
                    "size": [6 + 3 * c for c in cur],
                    "color": colour,
                    "opacity": 0.8,
                    "line": {"width": 1, "color": "#ffffff"},
                },
                customdata=[
                    [
                        _text(m.content),
                        m.created_at.strftime("%d %b %Y"),
                        m.last_accessed.strftime("%d %b %Y"),
                        int(view.access_count[i]),
                        c,
                        m.importance,
                        replaced(m),
                    ]
                    for m, i, c in zip(mems, idx, cur, strict=True)
                ],
                hovertemplate=(
                    "%{customdata[0]}<br>written %{customdata[1]} · last given to the agent "
                    "%{customdata[2]}<br>used %{customdata[3]} times · importance now "
                    "%{customdata[4]:.1f} (set to %{customdata[5]})%{customdata[6]}<extra>"
                    + status_label(status)
                    + "</extra>"
                ),
            )
        )
    return _layout(
        fig,
        "Memory timeline (marker size = current importance)",
        "Written (UTC date)",
        "Type",
        height=460,
    )


def decay_curves(
    memories: Sequence[mc.Memory],
    policy: mc.DecayPolicy,
    now: datetime,
    access_times: Mapping[str, Sequence[datetime]],
    *,
    months_ahead: int = 12,
    points: int = 120,
    marker: str = "now",
) -> go.Figure:
    """Each memory's current importance from creation to ``months_ahead`` after now, with
    markers for now and each recorded access, and the cleanup threshold as a line (on the
    importance scale: threshold × 10)."""
    fig = go.Figure()
    end = now + timedelta(days=30 * months_ahead)
    for m in memories:
        span = (end - m.created_at).total_seconds()
        times = [m.created_at + timedelta(seconds=span * k / (points - 1)) for k in range(points)]
        acc = list(access_times.get(m.id, []))
        values = decay.curve(m, policy, times, acc)
        label = _text(m.content if len(m.content) <= 48 else m.content[:47] + "…")
        fig.add_trace(
            go.Scatter(
                x=times,
                y=values,
                mode="lines",
                name=label,
                legendgroup=m.id,
                hovertemplate="%{x|%Y-%m-%d}: %{y:.2f}<extra>" + label + "</extra>",
            )
        )
        if acc:
            fig.add_trace(
                go.Scatter(
                    x=acc,
                    y=decay.curve(m, policy, acc, acc),
                    mode="markers",
                    marker={"symbol": "circle-open", "size": 8},
                    name="access",
                    legendgroup=m.id,
                    showlegend=False,
                    hovertemplate="access %{x|%Y-%m-%d}<extra>" + label + "</extra>",
                )
            )
    fig.add_hline(
        y=policy.cleanup_threshold * 10,
        line_dash="dash",
        line_color="#b03a2e",
        annotation_text=f"cleanup threshold (strength {policy.cleanup_threshold:.2f})",
    )
    fig.add_vline(x=now.timestamp() * 1000, line_dash="dot", line_color="#1b2a33")
    fig.add_annotation(x=now, y=10.4, text=marker, showarrow=False, xanchor="left", xshift=4)
    fig.update_yaxes(range=[0, 10.8])
    return _layout(
        fig, "Current importance over time", "Date (UTC)", "Current importance (1–10)", height=480
    )


def rank_slope(
    rows: Sequence[Mapping[str, object]], top_n: int, height: int | None = None
) -> go.Figure:
    """Saved rank (left) to tuned rank (right), one line per memory: a line that climbs moved
    up the ranking under the tuned policy. ``rows`` carry "rank (saved)", "rank (tuned)",
    "content" and "change"; rank 1 is at the top."""
    fig = go.Figure()
    colours = {
        "enters top": "#1f7a4d",
        "leaves top": "#b03a2e",
        "falls below cleanup": "#8a949b",
        "rises above cleanup": "#1f6f8b",
    }
    worst = 1
    for r in rows:
        a, b = int(str(r["rank (saved)"])), int(str(r["rank (tuned)"]))
        worst = max(worst, a, b)
        content = str(r["content"])
        label = _text(content if len(content) <= 60 else content[:59] + "…")
        change = str(r.get("change", ""))
        fig.add_trace(
            go.Scatter(
                x=["Saved policy", "Tuned policy"],
                y=[a, b],
                mode="lines+markers",
                line={"color": colours.get(change, "#c77d2e"), "width": 2},
                marker={"size": 8},
                name=label,
                showlegend=False,
                hovertemplate=f"{label}<br>rank %{{y}}<br>{_text(change)}<extra></extra>",
            )
        )
    fig.add_hrect(y0=0.5, y1=top_n + 0.5, fillcolor="#e8f1f4", line_width=0, layer="below")
    fig.add_annotation(
        x="Saved policy",
        y=0.5,
        text=f"top {top_n}",
        showarrow=False,
        yanchor="bottom",
        xanchor="right",
        xshift=-8,
    )
    fig.update_yaxes(autorange="reversed", dtick=max(1, worst // 10), range=[worst + 0.5, 0.5])
    return _layout(
        fig,
        "Rank under the saved and the tuned policy",
        "",
        "Rank (1 = most important now)",
        height=height or max(320, min(900, 24 * worst)),
    )


def similarity_histogram(similarities: Sequence[float] | np.ndarray, threshold: float) -> go.Figure:
    """The patient's same-type pairwise cosine similarities (binned here, so millions of pairs
    cost a few dozen bars; cosines below -0.2 are counted in the first bar), with the
    threshold line."""
    edges = np.arange(-0.2, 1.0 + 1e-9, 0.025)
    values = np.clip(np.asarray(similarities, dtype=np.float64), -0.2, 1.0)
    counts, _ = np.histogram(values, bins=edges)
    fig = go.Figure(
        go.Bar(
            x=(edges[:-1] + edges[1:]) / 2,
            y=counts,
            width=0.025,
            marker_color="#1f6f8b",
            name="pairs",
            hovertemplate="cosine %{x:.3f} ± 0.0125: %{y} pairs<extra></extra>",
        )
    )
    fig.add_vline(
        x=threshold,
        line_dash="dash",
        line_color="#b03a2e",
        annotation_text=f"threshold {threshold:.2f}",
    )
    return _layout(
        fig, "Same-type pairwise similarity", "Cosine similarity (−1…1)", "Pairs (count)", 360
    )


def token_gauge(tokens: int, budget: int) -> go.Figure:
    """Injected-section tokens against the budget."""
    fig = go.Figure(
        go.Bar(
            x=[tokens],
            y=["section"],
            orientation="h",
            marker_color="#1f6f8b" if tokens <= budget else "#b03a2e",
        )
    )
    fig.add_vline(
        x=budget,
        line_dash="dash",
        annotation_text=f"budget {budget}",
        annotation_position="top left",
    )
    fig.update_xaxes(range=[0, max(budget, tokens) * 1.15 + 1])
    return _layout(fig, "Tokens in the injected section", "Tokens (o200k_base)", "", 180)


def importance_histogram(values: np.ndarray) -> go.Figure:
    fig = go.Figure(go.Histogram(x=values, xbins={"start": 0, "end": 10.5, "size": 0.5}))
    return _layout(
        fig,
        "Current importance of active memories",
        "Current importance (1–10)",
        "Memories (count)",
        300,
    )
