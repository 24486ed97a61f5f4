"""Plotly figures of notebook 02 (UnWeaver): the chunk-class matrix, one query's votes, the alignment."""
from __future__ import annotations

from typing import Collection, Sequence

import numpy as np


def chunk_class_heatmap(retriever, max_classes: int = 40, title: str = ""):
    """A (chunks x classes) for the classes spread over most chunks: which chunks share an idea."""
    import plotly.graph_objects as go

    ranked = sorted(retriever.classes, key=lambda c: (-len(c.chunks), -c.size, c.index))[:max_classes]
    cols = [c.index for c in ranked]
    z = retriever.chunk_class.tocsc()[:, cols].toarray()
    fig = go.Figure(go.Heatmap(z=z, x=[c.name for c in ranked], y=[c.id for c in retriever.chunks],
                               colorscale=[[0, "white"], [1, "#1f4e79"]], showscale=False, xgap=1, ygap=1))
    fig.update_layout(title=title or f"Chunk-class matrix A, {len(cols)} most widespread classes",
                      xaxis={"title": "entity class", "tickangle": -60},
                      yaxis={"title": "chunk", "autorange": "reversed", "showticklabels": len(retriever.chunks) <= 80})
    return fig


ELECTED, NOT_ELECTED = "#d62728", "#9aa5b1"


def votes_bar(retrieval, title: str = "", gold: Collection[str] = ()):
    """Approvals per approved chunk (in the trace's order); elected chunks red and labelled with their rank,
    the others grey, one legend entry each; chunks in ``gold`` (those holding a gold passage) hatched."""
    import plotly.graph_objects as go

    elected = {cid: i + 1 for i, cid in enumerate(retrieval.trace["elected"])}
    chunks = list(retrieval.trace["approvals"])
    groups = [("elected (label: its rank)", ELECTED, [c for c in chunks if c in elected]),
              ("approved, not elected", NOT_ELECTED, [c for c in chunks if c not in elected])]
    groups = [g for g in groups if g[2]]
    bars = [go.Bar(name=name, x=members, y=[retrieval.trace["approvals"][c] for c in members], legendgroup=name,
                   showlegend=False, marker={"color": colour, "pattern": {"shape": ["/" if c in gold else "" for c in members]}},
                   text=[f"#{elected[c]}" if c in elected else "" for c in members], textposition="outside")
            for name, colour, members in groups]
    # the legend's swatches are bars of their own, so a hatched first bar does not hatch its colour's swatch
    swatches = [(name, {"color": colour}) for name, colour, _ in groups]
    if any(c in gold for c in chunks):
        swatches.append(("holds a gold passage", {"color": "white", "line": {"color": "black", "width": 1},
                                                  "pattern": {"shape": "/"}}))
    bars += [go.Bar(name=name, x=[None], y=[None], legendgroup=name, marker=marker) for name, marker in swatches]
    fig = go.Figure(bars)
    fig.update_layout(title=title or f"Votes of the top classes (rule: {retrieval.trace['rule']})", barmode="overlay",
                      showlegend=True, legend={"title": "chunk"},
                      xaxis={"title": "chunk", "tickangle": -45, "categoryorder": "array", "categoryarray": chunks},
                      yaxis={"title": "approvals (voting classes that occur in the chunk)"})
    return fig


def alignment_bars(chunk_labels: Sequence[str], budgets: np.ndarray, loads: dict[str, np.ndarray], title: str):
    """Per chunk: its budget and the load R x each solver puts on it."""
    import plotly.graph_objects as go

    fig = go.Figure([go.Bar(name="budget c", x=list(chunk_labels), y=list(budgets), marker_color="#cccccc")]
                    + [go.Bar(name=f"load R x ({name})", x=list(chunk_labels), y=list(v)) for name, v in loads.items()])
    fig.update_layout(barmode="group", title=title, yaxis={"title": "idea strength in the chunk"})
    return fig
