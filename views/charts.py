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


#: what a move means, most telling first (the order of the labels a reader sees)
MOVE_ORDER = ("enters top", "leaves top", "falls below cleanup", "rises above cleanup")
OTHER_MOVE = "#c77d2e"  # a rank change within the top or outside it
MOVE_COLOURS = {
    "enters top": "#1f7a4d",
    "leaves top": "#b03a2e",
    "falls below cleanup": "#8a949b",
    "rises above cleanup": "#1f6f8b",
}


def most_moved(rows: Sequence[Mapping[str, object]]) -> list[Mapping[str, object]]:
    """The changed memories, those that matter most first: entering or leaving the top, then
    crossing the cleanup threshold, then by how many places they move."""

    def key(r: Mapping[str, object]) -> tuple[int, int]:
        change = str(r.get("change", ""))
        group = MOVE_ORDER.index(change) if change in MOVE_ORDER else len(MOVE_ORDER)
        jump = abs(int(str(r["rank (saved)"])) - int(str(r["rank (tuned)"])))
        return (group, -jump)

    return sorted(rows, key=key)


#: room under the rank chart's axis title for its legend (five entries, one line each where
#: they wrap: the page's column at 1,024 px)
LEGEND_ROOM = 110


def rank_moves(rows: Sequence[Mapping[str, object]], top_n: int) -> go.Figure:
    """One labelled row per memory: its rank under the saved policy (open circle) and under the
    tuned one (filled), joined by a line in the colour of what the move means. ``rows`` carry
    "rank (saved)", "rank (tuned)", "content" and "change"; rank 1 is the most important now."""
    fig = go.Figure()
    labels: list[str] = []
    for r in rows:
        a, b = int(str(r["rank (saved)"])), int(str(r["rank (tuned)"]))
        content = str(r["content"])
        label = _text(content if len(content) <= 46 else content[:45] + "…")
        while label in labels:  # two memories that start alike keep their own rows
            label += "\u200b"
        labels.append(label)
        change = str(r.get("change", ""))
        colour = MOVE_COLOURS.get(change, OTHER_MOVE)
        fig.add_trace(
            go.Scatter(
                x=[a, b],
                y=[label, label],
                mode="lines+markers",
                line={"color": colour, "width": 3},
                marker={
                    "size": 11,
                    "color": ["#ffffff", colour],
                    "line": {"color": colour, "width": 2},
                },
                showlegend=False,
                hovertemplate=(
                    f"{_text(content)}<br>rank {a} (saved) → {b} (tuned)<br>{_text(change)}"
                    "<extra></extra>"
                ),
            )
        )
    worst = max([1, *(int(str(r[k])) for r in rows for k in ("rank (saved)", "rank (tuned)"))])
    fig.add_vrect(x0=0.5, x1=top_n + 0.5, fillcolor="#e8f1f4", line_width=0, layer="below")
    fig.add_annotation(
        x=top_n + 0.5,
        y=1.0,
        yref="paper",
        text=f"top {top_n}",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
    )
    for change, colour in (*MOVE_COLOURS.items(), ("other moves", OTHER_MOVE)):  # the legend
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines", name=change, line={"color": colour, "width": 3}
            )
        )
    fig.update_xaxes(range=[0.5, worst + 0.5], dtick=max(1, worst // 10))
    fig.update_yaxes(autorange="reversed", automargin=True)
    _layout(
        fig,
        "Rank under the saved (○) and the tuned (●) policy",
        "Rank (1 = most important now)",
        "",
        height=max(260, 70 + 34 * len(rows)) + LEGEND_ROOM,
    )
    # the legend at the foot of the figure, below the axis title: placed under the plot area
    # (the default), a short chart's legend covered "Rank (1 = most important now)" at 1,024 px
    # (issue 35), where its five entries wrap onto five lines
    fig.update_layout(
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
        margin={"b": LEGEND_ROOM},
    )
    return fig


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
    return _layout(fig, "Tokens in the injected section", "Tokens", "", 180)


def importance_histogram(values: np.ndarray) -> go.Figure:
    fig = go.Figure(go.Histogram(x=values, xbins={"start": 0, "end": 10.5, "size": 0.5}))
    return _layout(
        fig,
        "Current importance of active memories",
        "Current importance (1–10)",
        "Memories (count)",
        300,
    )
