"""Plotly figures of notebook 02 (UnWeaver): the chunk-class matrix, one query's votes, the alignment."""
from __future__ import annotations

from typing import Sequence

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


def votes_bar(retrieval, title: str = ""):
    """Approvals per approved chunk; elected chunks coloured and labelled with their rank."""
    import plotly.graph_objects as go

    elected = {cid: i + 1 for i, cid in enumerate(retrieval.trace["elected"])}
    chunks = list(retrieval.trace["approvals"])
    approvals = [retrieval.trace["approvals"][c] for c in chunks]
    colours = ["#d62728" if c in elected else "#9aa5b1" for c in chunks]
    labels = [f"#{elected[c]}" if c in elected else "" for c in chunks]
    fig = go.Figure(go.Bar(x=chunks, y=approvals, marker_color=colours, text=labels, textposition="outside"))
    fig.update_layout(title=title or f"Votes of the top classes (rule: {retrieval.trace['rule']}); red = elected",
                      xaxis={"title": "chunk", "tickangle": -45}, yaxis={"title": "approvals"})
    return fig


def alignment_bars(chunk_labels: Sequence[str], budgets: np.ndarray, loads: dict[str, np.ndarray], title: str):
    """Per chunk: its budget and the load R x each solver puts on it."""
    import plotly.graph_objects as go

    fig = go.Figure([go.Bar(name="budget c", x=list(chunk_labels), y=list(budgets), marker_color="#cccccc")]
                    + [go.Bar(name=f"load R x ({name})", x=list(chunk_labels), y=list(v)) for name, v in loads.items()])
    fig.update_layout(barmode="group", title=title, yaxis={"title": "idea strength in the chunk"})
    return fig
