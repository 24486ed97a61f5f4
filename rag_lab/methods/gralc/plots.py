"""Plotly figures for the GraLC-RAG notebook (the paper's Figures 2–7, a boundary-score trace
and a λ sweep). Inputs are the tables of ``rag_lab.methods.gralc.tables``; "paper-reported"
series are always drawn dashed or hatched and labelled as such."""
from __future__ import annotations

from typing import Sequence

import pandas as pd

PAPER_STYLE = {"dash": "dash"}
STRATEGY_ORDER = ["Naive", "Semantic", "Late Chunking", "Structure-Aware", "GraLC-RAG (KG)", "GraLC-RAG (+Graph)"]


def colour(strategy: str) -> str:
    """One colour per strategy, shared by our series and the paper-reported one."""
    import plotly.express as px

    palette = px.colors.qualitative.Plotly
    i = STRATEGY_ORDER.index(strategy) if strategy in STRATEGY_ORDER else len(STRATEGY_ORDER) + hash(strategy) % 4
    return palette[i % len(palette)]


def _subtitle(reasoner: str | None, note: str | None) -> str:
    parts = [p for p in (f"reasoner: {reasoner}" if reasoner else None, note) if p]
    return f"<br><sup>{' · '.join(parts)}</sup>" if parts else ""


def _error(values: Sequence, low: pd.Series | None, high: pd.Series | None, names: Sequence[str]) -> dict | None:
    """plotly error bars from our 95% interval (None without one)."""
    if low is None or high is None:
        return None
    return {"type": "data", "symmetric": False, "array": [high.get(n, float("nan")) - v for n, v in zip(names, values)],
            "arrayminus": [v - low.get(n, float("nan")) for n, v in zip(names, values)]}


def ours_vs_paper_bars(ours: pd.Series, paper: pd.Series, title: str, yaxis: str, note: str | None = None,
                       low: pd.Series | None = None, high: pd.Series | None = None):
    """One bar per strategy for our run (with its 95% interval when ``low``/``high`` are given) and
    one, hatched, for the paper-reported value; the axis starts at zero."""
    import plotly.graph_objects as go

    names = list(dict.fromkeys([*ours.index, *paper.index]))
    values = [ours.get(n) for n in names]
    fig = go.Figure([
        go.Bar(name="ours" + (" (95% interval)" if low is not None else ""), x=names, y=values,
               text=[_fmt(v) for v in values], error_y=_error(values, low, high, names)),
        go.Bar(name="paper-reported", x=names, y=[paper.get(n) for n in names], marker_pattern_shape="/",
               opacity=0.6, text=[_fmt(paper.get(n)) for n in names]),
    ])
    fig.update_layout(barmode="group", title=title + _subtitle(None, note), yaxis={"title": yaxis, "rangemode": "tozero"})
    return fig


def _fmt(v) -> str:
    return "" if v is None or pd.isna(v) else f"{v:.3f}"


def _dodge(i: int, count: int, width: float) -> float:
    """The x offset of series ``i`` of ``count`` drawn side by side, so their error bars do not stack."""
    return (i - (count - 1) / 2) * width


def _paper_legend(fig) -> None:
    """One legend entry for the line style of every paper-reported series (they share their strategy's
    colour and legend group), instead of one entry per paper series."""
    import plotly.graph_objects as go

    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="paper-reported (dashed)",
                             line={**PAPER_STYLE, "color": "#7f7f7f"}))


def recall_curves(ours: pd.DataFrame, paper: pd.DataFrame | None, ks: Sequence[int], title: str,
                  note: str | None = None, intervals: dict[str, pd.DataFrame] | None = None):
    """Recall@k against k, one line per strategy (paper-reported dashed, one legend entry per strategy);
    with ``intervals`` (``tables.summary``) our points carry their 95% interval, the
    strategies drawn a little apart at each k so the bars do not stack."""
    import plotly.graph_objects as go

    fig = go.Figure()
    cols = [f"R@{k}" for k in ks]
    width = 0.08 * min((b - a for a, b in zip(ks, ks[1:])), default=1)
    for i, (name, row) in enumerate(ours.iterrows()):
        values = [row.get(c) for c in cols]
        error = None if intervals is None else _error(
            values, intervals["ci_low"].loc[name].reindex(cols), intervals["ci_high"].loc[name].reindex(cols), cols)
        fig.add_trace(go.Scatter(x=[k + _dodge(i, len(ours), width) for k in ks], y=values, mode="lines+markers",
                                 name=name, legendgroup=name, line={"color": colour(name)}, error_y=error))
    if paper is not None:
        pk = [k for k in ks if f"R@{k}" in paper.columns]
        for name, row in paper.iterrows():
            fig.add_trace(go.Scatter(x=pk, y=[row[f"R@{k}"] for k in pk], mode="lines", legendgroup=name,
                                     line={**PAPER_STYLE, "color": colour(name)}, showlegend=False,
                                     name=f"{name} (paper-reported)", opacity=0.6))
        _paper_legend(fig)
    fig.update_layout(title=title + _subtitle(None, note), xaxis={"title": "k", "tickvals": list(ks)},
                      yaxis={"title": "Recall@k (document level)" + (", 95% interval" if intervals else ""),
                             "rangemode": "tozero"})
    return fig


def ablation_steps(ours: pd.DataFrame, paper: pd.DataFrame, title: str, note: str | None = None,
                   low: pd.Series | None = None, high: pd.Series | None = None):
    """MRR after each component is added; dotted lines mark each base (late chunking). The axis starts
    at zero, so steps of a few hundredths look as small as they are; ``low``/``high`` (indexed like
    ``ours``) draw our 95% intervals, which show whether a step is larger than the noise."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for label, frame, style in (("ours", ours, {}), ("paper-reported", paper, PAPER_STYLE)):
        if frame.empty:
            continue
        names, values = list(frame.index), list(frame["MRR"])
        error = _error(values, low, high, names) if label == "ours" else None
        fig.add_trace(go.Scatter(x=names, y=values, mode="lines+markers", line=style, error_y=error,
                                 name=label + (" (95% interval)" if error else "")))
        fig.add_hline(y=float(frame["MRR"].iloc[0]), line_dash="dot", opacity=0.4,
                      annotation_text=f"{label}: late chunking base",
                      annotation_position="bottom right" if label == "ours" else "top right")
    axis = "MRR (axis from 0)" + (", 95% interval over questions" if low is not None else "")
    fig.update_layout(title=title + _subtitle(None, note), yaxis={"title": axis, "rangemode": "tozero"})
    return fig


def efficiency_chart(table: pd.DataFrame, title: str, paper: pd.DataFrame | None = None, note: str | None = None):
    """Chunk count (top row) and indexing seconds (bottom row) per strategy: our run on the left, the
    paper-reported numbers (200 PMC articles) on the right. Each quantity has its own axis from zero
    (no second y-axis, whose ticks would follow the first axis's grid)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    panels = [("ours", table)] + ([("paper-reported", paper)] if paper is not None else [])
    fig = make_subplots(rows=2, cols=len(panels), shared_xaxes=True, vertical_spacing=0.1, horizontal_spacing=0.12,
                        subplot_titles=[f"{what} ({label})" for what in ("chunks", "indexing seconds")
                                        for label, _ in panels])
    for col, (label, frame) in enumerate(panels, 1):
        opacity = 1.0 if col == 1 else 0.5
        fig.add_trace(go.Bar(x=list(frame.index), y=frame["Chunks"], marker_color="#636efa", opacity=opacity,
                             text=[f"{v:,.0f}" for v in frame["Chunks"]], textangle=0, showlegend=False), row=1, col=col)
        fig.add_trace(go.Bar(x=list(frame.index), y=frame["Time (s)"], marker_color="#ef553b", opacity=opacity,
                             text=[f"{v:,.1f}" for v in frame["Time (s)"]], textangle=0, showlegend=False), row=2, col=col)
        fig.update_yaxes(title_text="chunks", row=1, col=col, rangemode="tozero")
        fig.update_yaxes(title_text="seconds", row=2, col=col, rangemode="tozero")
    fig.update_layout(title=title + _subtitle(None, note), height=650)
    return fig


def metric_by_condition(ours: pd.Series, paper: pd.Series | None, title: str, yaxis: str,
                        conditions: Sequence[str], note: str | None = None,
                        low: pd.Series | None = None, high: pd.Series | None = None):
    """A metric across document-length conditions, one line per strategy (one legend entry each; the
    paper-reported series dashed in the same colour). ``ours``/``paper``/``low``/``high``: Series
    indexed by (condition, strategy); with ``low``/``high`` our points carry their 95% interval and
    the strategies are drawn a little apart at each condition so the bars do not stack."""
    import plotly.graph_objects as go

    fig = go.Figure()
    x_of = {c: i for i, c in enumerate(conditions)}
    strategies = list(dict.fromkeys(ours.index.get_level_values(1)))
    for i, strategy in enumerate(strategies):
        xs = [c for c in conditions if (c, strategy) in ours.index]
        values = [ours[(c, strategy)] for c in xs]
        error = None
        if low is not None and high is not None:
            keys = [(c, strategy) for c in xs]
            error = _error(values, pd.Series(low.reindex(keys).to_numpy(), index=xs),
                           pd.Series(high.reindex(keys).to_numpy(), index=xs), xs)
        fig.add_trace(go.Scatter(x=[x_of[c] + _dodge(i, len(strategies), 0.05 if error else 0) for c in xs], y=values,
                                 mode="lines+markers", name=strategy, legendgroup=strategy,
                                 line={"color": colour(strategy)}, error_y=error))
    if paper is not None:
        for strategy in dict.fromkeys(paper.index.get_level_values(1)):
            xs = [c for c in conditions if (c, strategy) in paper.index]
            fig.add_trace(go.Scatter(x=[x_of[c] for c in xs], y=[paper[(c, strategy)] for c in xs], mode="lines+markers",
                                     name=f"{strategy} (paper-reported)", legendgroup=strategy, showlegend=False,
                                     line={**PAPER_STYLE, "color": colour(strategy)}, opacity=0.55))
        _paper_legend(fig)
    fig.update_layout(title=title + _subtitle(None, note),
                      xaxis={"title": "document-length condition", "tickvals": list(range(len(conditions))),
                             "ticktext": list(conditions)},
                      yaxis={"title": yaxis + (", 95% interval" if low is not None else ""), "rangemode": "tozero"})
    return fig


def boundary_trace(trace: pd.DataFrame, markers: pd.DataFrame, tau: float, title: str, alphas: Sequence[float]):
    """The combined boundary score over one article's tokens, its weighted signals (entity dips
    hidden until clicked in the legend), τ, the chosen boundaries (triangles) and where sections
    (solid, labelled) and subsections (dotted) start."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(go.Scatter(x=trace["token"], y=trace["score"], mode="lines", name="b_i (combined)",
                             line={"width": 1}))
    for col, weight, dash, shown in (("structural", alphas[0], "dot", True), ("semantic", alphas[1], "dash", True),
                                     ("entity", alphas[2], "dashdot", False)):
        fig.add_trace(go.Scatter(x=trace["token"], y=weight * trace[col], mode="lines", name=f"{weight:g} × {col}",
                                 line={"dash": dash, "width": 1}, opacity=0.5,
                                 visible=True if shown else "legendonly"))
    chosen = trace[trace["boundary"]]
    fig.add_trace(go.Scatter(x=chosen["token"], y=chosen["score"], mode="markers", name="chosen boundary",
                             marker={"symbol": "triangle-down", "size": 11}))
    fig.add_hline(y=tau, line_dash="dash", annotation_text=f"τ = {tau}")
    for _, m in markers.iterrows():
        if m["kind"] == "section":
            fig.add_vline(x=m["token"], line_dash="solid", opacity=0.4, annotation_text=m["title"],
                          annotation_textangle=-90)
        else:
            fig.add_vline(x=m["token"], line_dash="dot", opacity=0.3)
    fig.update_layout(title=title, xaxis={"title": "token position"}, yaxis={"title": "score", "range": [-0.6, 0.9]})
    return fig


def lambda_curve(sweep: pd.DataFrame, title: str, note: str | None = None, paper_lam: float = 0.1):
    """The λ ablation (``experiment.lambda_sweep``) in three panels, each on its own honest scale
    from zero: retrieval scores and shares (0-1), SecCov in sections, and the mean cosine between
    infused and original token vectors. A dashed line marks the paper's λ. (A second y-axis on
    one panel would stretch a 0.02-section wiggle over the whole height.)"""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=3, subplot_titles=["retrieval (0-1)", "sections covered", "token vectors: cos(infused, original)"])
    x = list(sweep.index)
    panel = {"MRR@": 1, "R@": 1, "top ": 1, "SecCov@": 2, "cos(": 3}
    for c in sweep.columns:
        col = next((v for prefix, v in panel.items() if c.startswith(prefix)), None)
        if col is not None:
            fig.add_trace(go.Scatter(x=x, y=sweep[c], mode="lines+markers", name=c), row=1, col=col)
    for col in (1, 2, 3):
        fig.add_vline(x=paper_lam, line_dash="dash", annotation_text=f"paper λ = {paper_lam:g}", row=1, col=col)
        fig.update_xaxes(title_text="λ", row=1, col=col)
    fig.update_yaxes(title_text="score / share of questions", range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(title_text="sections", rangemode="tozero", row=1, col=2)
    fig.update_yaxes(title_text="mean cosine", range=[0, 1.05], row=1, col=3)
    fig.update_layout(title=title + _subtitle(None, note), legend={"orientation": "h", "y": -0.25})
    return fig


def late_chunking_view(view, title: str):
    """``late_view.LateView`` in two panels over the document's sentences: the cosine of each to the
    query (left) and to the focus sentence (right), embedded alone (grey) and pooled late from the
    whole document's token vectors (blue); the focus is marked and its top-k neighbours ringed.
    Both axes run from 0 (or the lowest cosine, if negative) to 1."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    t = view.spans
    fig = make_subplots(rows=1, cols=2, subplot_titles=["cosine to the query", f"cosine to sentence {view.focus}"])
    style = {"alone": ("embedded alone", "#7f7f7f"), "late": ("pooled late (whole-document tokens)", "#1f77b4")}
    for col, what in ((1, "query"), (2, "focus")):
        for kind, (name, colour_) in style.items():
            fig.add_trace(go.Scatter(x=list(t.index), y=t[f"cos_{what}_{kind}"], mode="lines+markers", name=name,
                                     line={"color": colour_, "width": 1}, marker={"size": 5}, showlegend=col == 1,
                                     customdata=t["text"].str.slice(0, 90), hovertemplate="%{x}: %{y:.2f}<br>%{customdata}"),
                          row=1, col=col)
        fig.add_vline(x=view.focus, line_dash="dot", opacity=0.6, row=1, col=col)
    for kind, (name, colour_) in style.items():
        near = [int(i) for i in view.neighbours[f"{kind}: span"]]
        fig.add_trace(go.Scatter(x=near, y=t.loc[near, f"cos_focus_{kind}"], mode="markers", showlegend=kind == "late",
                                 name=f"top {len(near)} neighbours of sentence {view.focus}",
                                 marker={"size": 13, "color": "rgba(0,0,0,0)", "line": {"color": colour_, "width": 2}}),
                      row=1, col=2)
    low = min(0.0, float(t.filter(like="cos_").min().min()))
    for col in (1, 2):
        fig.update_xaxes(title_text="sentence (document order)", row=1, col=col)
        fig.update_yaxes(title_text="cosine", range=[low, 1.02], row=1, col=col)
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.22})
    return fig
