"""Plotly figures the notebooks share (the notebooks only call these and save the result)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd


def similarity_heatmap(vectors: np.ndarray, labels: Sequence[str], title: str):
    """Cosine similarity of every pair of (normalised) vectors."""
    import plotly.graph_objects as go

    sim = vectors @ vectors.T
    fig = go.Figure(go.Heatmap(z=sim, x=list(labels), y=list(labels), colorscale="Viridis", zmin=float(sim.min()),
                               zmax=1.0, colorbar={"title": "cosine"}))
    fig.update_layout(title=title, xaxis={"showticklabels": len(labels) <= 40},
                      yaxis={"showticklabels": len(labels) <= 40, "autorange": "reversed"})
    return fig


def grouped_bars(summary: pd.DataFrame, columns: Sequence[str], title: str, reasoner: str | None = None):
    """One group per metric, one bar per method (rows of ``summary`` are methods)."""
    import plotly.graph_objects as go

    fig = go.Figure([go.Bar(name=str(method), x=list(columns), y=[summary.loc[method, c] for c in columns])
                     for method in summary.index])
    subtitle = f" (reasoner: {reasoner})" if reasoner else ""
    fig.update_layout(barmode="group", title=title + subtitle, yaxis={"title": "mean over questions"})
    return fig


def question_metric_heatmap(df: pd.DataFrame, method: str, metrics: Sequence[str], k: int | None, title: str):
    """Per-question × metric values of one method (the SKETCH paper's Figures 4–8 layout)."""
    import plotly.graph_objects as go

    d = df[(df["method"] == method) & df["metric"].isin(metrics)]
    if k is not None:
        d = d[(d["k"] == k) | d["k"].isna()]
    table = d.pivot_table(index="question_id", columns="metric", values="value", aggfunc="mean")
    table = table.reindex(columns=[m for m in metrics if m in table.columns])
    fig = go.Figure(go.Heatmap(z=table.values, x=list(table.columns), y=list(table.index), colorscale="RdYlGn",
                               zmin=0, zmax=1, text=np.round(table.values, 2), texttemplate="%{text}"))
    fig.update_layout(title=title, yaxis={"autorange": "reversed"})
    return fig


def with_paper(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Ours beside the paper's numbers (same index and columns), plus the difference.

    Columns come out as ``(metric, "ours" | "paper-reported" | "difference")``.
    """
    common = [c for c in paper.columns if c in ours.columns]
    parts = {}
    for c in common:
        parts[(c, "ours")] = ours[c]
        parts[(c, "paper-reported")] = paper[c]
        parts[(c, "difference")] = ours[c] - paper[c]
    return pd.DataFrame(parts, index=ours.index.union(paper.index, sort=False))


def method_metric_heatmap(summary: pd.DataFrame, columns: Sequence[str], title: str):
    """Methods × metrics, one colour scale per column range [0, 1] (section coverage is a count)."""
    import plotly.graph_objects as go

    table = summary[list(columns)]
    fig = go.Figure(go.Heatmap(z=table.values, x=list(table.columns), y=list(table.index), colorscale="Viridis",
                               text=np.round(table.values, 2), texttemplate="%{text}"))
    fig.update_layout(title=title, yaxis={"autorange": "reversed"}, height=max(400, 28 * len(table)))
    return fig


def log_log_lines(df: pd.DataFrame, x: str, y: str, title: str):
    """One line per method of ``y`` against ``x`` on log axes (growth with corpus size)."""
    import plotly.express as px

    fig = px.line(df, x=x, y=y, color="method", markers=True, log_x=True, log_y=True, title=title)
    return fig
