"""Plotly figures the notebooks share (the notebooks only call these and save the result)."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd


def wrap_title(title: str, width: int = 95) -> str:
    """``title`` broken into lines of at most ``width`` characters (plotly's ``<br>``) at spaces, so a long
    title (a caption with the reasoners) is not cut off at the figure's right edge."""
    import textwrap

    return "<br>".join("<br>".join(textwrap.wrap(part, width, break_long_words=False, break_on_hyphens=False)
                                   or [""]) for part in title.split("<br>"))


def group_boundaries(groups: Sequence[str]) -> list[tuple[str, int, int]]:
    """Runs of equal consecutive labels (a chunk's document, in document order) as (label, first, last)
    positions; a label that comes back after another starts a new run."""
    runs: list[tuple[str, int, int]] = []
    for i, g in enumerate(groups):
        if runs and runs[-1][0] == g:
            runs[-1] = (g, runs[-1][1], i)
        else:
            runs.append((g, i, i))
    return runs


def block_sentence(vectors: np.ndarray, groups: Sequence[str]) -> str:
    """What the heatmap's document squares hold, in numbers: the mean cosine of distinct chunk pairs
    inside one document and of pairs from two documents (the diagonal of ones left out)."""
    groups = list(groups)
    if len(groups) != len(vectors):
        raise ValueError(f"groups: expected one per vector ({len(vectors)}), got {len(groups)}")
    sim = vectors @ vectors.T
    same = np.equal.outer(np.array(groups, dtype=object), np.array(groups, dtype=object))
    off = ~np.eye(len(groups), dtype=bool)
    inside, across = sim[same & off], sim[~same]
    if not inside.size or not across.size:
        return "One document only, or one chunk per document: no inside/across comparison to make."
    a, b = float(inside.mean()), float(across.mean())
    return (f"Mean cosine of two chunks of one document (inside the white squares): {a:.3f} over {inside.size // 2} "
            f"pairs; of two chunks from different documents: {b:.3f} over {across.size // 2} pairs; difference "
            f"{a - b:+.3f}.")


def similarity_heatmap(vectors: np.ndarray, labels: Sequence[str], title: str, groups: Sequence[str] | None = None):
    """Cosine similarity of every pair of (normalised) vectors, cells at positions 0..n-1 in the given
    order (hover names the chunk). With ``groups`` (each vector's document) a white line is drawn
    between documents and each document is named at the middle of its block, so that a bright block
    on the diagonal can be read as "one document" and an off-diagonal bright cell as "two documents"."""
    import plotly.graph_objects as go

    labels = list(labels)
    if groups is not None and len(groups) != len(labels):
        raise ValueError(f"groups: expected one per vector ({len(labels)}), got {len(groups)}")
    sim = vectors @ vectors.T
    n = len(labels)
    hover = [[f"{labels[i]} × {labels[j]}" for j in range(n)] for i in range(n)]
    fig = go.Figure(go.Heatmap(z=sim, x=list(range(n)), y=list(range(n)), text=hover, colorscale="Viridis",
                               hovertemplate="%{text}<br>cosine %{z:.3f}<extra></extra>", zmin=float(sim.min()),
                               zmax=1.0, colorbar={"title": "cosine"}))
    axis = {"title": "chunk position (document order)", "showgrid": False, "zeroline": False}
    if groups is not None:
        runs = group_boundaries(groups)
        axis = {**axis, "title": "chunks, grouped by document (lines: document boundaries)",
                "tickvals": [(first + last) / 2 for _, first, last in runs], "ticktext": [g for g, _, _ in runs]}
        line = {"color": "white", "width": 1.5}
        for _, first, _ in runs[1:]:
            edge = first - 0.5
            fig.add_shape(type="line", x0=edge, x1=edge, y0=-0.5, y1=n - 0.5, line=line)
            fig.add_shape(type="line", x0=-0.5, x1=n - 0.5, y0=edge, y1=edge, line=line)
    elif n <= 40:
        axis = {**axis, "title": "chunk", "tickvals": list(range(n)), "ticktext": labels}
    fig.update_layout(title=title, xaxis=axis, yaxis={**axis, "autorange": "reversed"})
    return fig


def _error_bars(intervals: pd.DataFrame | None, method, columns: Sequence[str], means: Sequence[float]) -> dict | None:
    """plotly ``error_y`` from a long table of intervals (method, metric, ci_low, ci_high); None without one."""
    if intervals is None:
        return None
    ci = intervals.set_index(["method", "metric"])
    low = [ci["ci_low"].get((method, c), float("nan")) for c in columns]
    high = [ci["ci_high"].get((method, c), float("nan")) for c in columns]
    return {"type": "data", "symmetric": False, "array": [h - m for h, m in zip(high, means)],
            "arrayminus": [m - lo for lo, m in zip(low, means)], "thickness": 1.2}


def grouped_bars(summary: pd.DataFrame, columns: Sequence[str], title: str, reasoner: str | None = None,
                 intervals: pd.DataFrame | None = None):
    """One group per metric, one bar per method (rows of ``summary`` are methods); with ``intervals``
    (``uncertainty.summary_with_ci``'s long table) each bar carries its 95% interval."""
    import plotly.graph_objects as go

    bars = []
    for method in summary.index:
        means = [summary.loc[method, c] for c in columns]
        bars.append(go.Bar(name=str(method), x=list(columns), y=means,
                           error_y=_error_bars(intervals, method, columns, means)))
    fig = go.Figure(bars)
    subtitle = f" (reasoner: {reasoner})" if reasoner else ""
    axis = "mean over questions" + (" (bars: 95% interval)" if intervals is not None else "")
    fig.update_layout(barmode="group", title=title + subtitle, yaxis={"title": axis, "rangemode": "tozero"})
    return fig


def _unit_range(low: pd.Series, high: pd.Series) -> list[float] | None:
    """[0, 1] for a metric whose intervals lie in [0, 1] (rates, recall): its axis shows the whole scale."""
    return [0.0, 1.0] if len(low) and low.min() >= 0 and high.max() <= 1 else None


def interval_bars(board: pd.DataFrame, metric: str, title: str):
    """One bar per method for one metric, with its 95% interval, from a long table (method, metric, mean,
    ci_low, ci_high, n), in the table's order; the axis starts at zero and a [0, 1] metric's axis ends at 1.
    Each method's n is in its tick label (text inside thin bars cannot be read)."""
    import plotly.graph_objects as go

    rows = board[board["metric"] == metric]
    labels = [f"{m} (n={int(n)})" if pd.notna(n) else str(m) for m, n in zip(rows["method"], rows["n"])]
    fig = go.Figure(go.Bar(x=labels, y=rows["mean"].tolist(),
                           error_y={"type": "data", "symmetric": False, "array": (rows["ci_high"] - rows["mean"]).tolist(),
                                    "arrayminus": (rows["mean"] - rows["ci_low"]).tolist()}))
    yaxis = {"title": f"{metric}: mean over questions, 95% interval", "rangemode": "tozero"}
    span = _unit_range(rows["ci_low"], rows["ci_high"])
    if span:
        yaxis["range"] = span
    fig.update_layout(title=wrap_title(title), yaxis=yaxis, xaxis={"tickangle": -35, "title": "method (questions scored)"})
    return fig


def _undecidable(d: pd.DataFrame) -> list[bool]:
    """Rows whose verdict is "cannot be decided" (whatever reason follows): they get no interval bar, which
    at such n spans the whole range and says nothing."""
    if "verdict" not in d:
        return [False] * len(d)
    return d["verdict"].astype(str).str.startswith("cannot be decided").tolist()


def _forest_panel(fig, d: pd.DataFrame, y: Sequence[str], row: int, col: int) -> None:
    """One panel of a forest plot: each row of ``d`` (its dot, interval and decided colour) at ``y``; a row
    that cannot be decided is an open dot without a bar, and a panel of nothing but those says so in words."""
    import plotly.graph_objects as go

    decided = (d["verdict"].isin(["supported", "contradicted"]).tolist() if "verdict" in d else
               [lo > 0 or hi < 0 for lo, hi in zip(d["ci_low"], d["ci_high"])])
    open_ = _undecidable(d)
    high = [math.nan if o else h - m for o, h, m in zip(open_, d["ci_high"], d["diff"])]
    low = [math.nan if o else m - lo for o, lo, m in zip(open_, d["ci_low"], d["diff"])]
    fig.add_trace(go.Scatter(
        x=d["diff"], y=list(y), mode="markers", showlegend=False,
        marker={"size": 9, "color": ["#1f77b4" if s else "#999999" for s in decided],
                "symbol": ["circle-open" if o else "circle" for o in open_]},
        error_x={"type": "data", "symmetric": False, "array": high, "arrayminus": low},
        customdata=list(zip(d["n"], d["p_holm"], d["mde"])),
        hovertemplate="%{y}: %{x:.3f}<br>n=%{customdata[0]}, p Holm=%{customdata[1]:.3f}, "
                      "MDE=%{customdata[2]:.3f}<extra></extra>"), row=row, col=col)
    fig.add_vline(x=0, line_dash="dash", line_color="black", row=row, col=col)
    fig.update_xaxes(title_text="difference (method − baseline)", title_font_size=10, row=row, col=col)
    if len(d) and all(open_):
        reason = str(d["reason"].iloc[0]) if "reason" in d and str(d["reason"].iloc[0]) not in ("", "nan") else ""
        fig.add_annotation(text="cannot be decided" + (f":<br>{reason}" if reason else ""), showarrow=False,
                           xref=f"x{_axis_number(fig, row, col)} domain", yref=f"y{_axis_number(fig, row, col)} domain",
                           x=0.5, y=0.5, font={"size": 11, "color": "#555555"}, bgcolor="rgba(255,255,255,0.8)")


def _axis_number(fig, row: int, col: int) -> str:
    """The suffix of the axes of panel (row, col) in a make_subplots figure ("" for the first)."""
    ref = fig.get_subplot(row, col).xaxis.plotly_name        # "xaxis", "xaxis2", …
    return ref[len("xaxis"):]


def _forest_title(differences: pd.DataFrame, title: str) -> str:
    baseline = differences["baseline"].iloc[0] if len(differences) else "baseline"
    grey = "not decided at Holm p < 0.05" if "verdict" in differences else "crosses zero"
    return f"{title}: each method minus {baseline}, 95% interval (grey: {grey})"


def forest_plot(differences: pd.DataFrame, title: str):
    """Each method minus the baseline with its 95% interval, one panel per metric, and the zero line. A
    point is coloured when its verdict is decided (the ``verdict`` column: Holm-adjusted p < 0.05 in the
    table's family), else when its interval excludes zero (a table without verdicts); grey otherwise."""
    from plotly.subplots import make_subplots

    metrics = list(dict.fromkeys(differences["metric"]))
    fig = make_subplots(rows=1, cols=max(1, len(metrics)), shared_yaxes=True, subplot_titles=metrics)
    for col, metric in enumerate(metrics, start=1):
        d = differences[differences["metric"] == metric]
        _forest_panel(fig, d, d["method"], 1, col)
    fig.update_layout(title=_forest_title(differences, title),
                      height=max(350, 26 * differences["method"].nunique() + 150))
    fig.update_yaxes(autorange="reversed")
    return fig


def forest_grid(differences: pd.DataFrame, title: str):
    """``forest_plot`` with one row of panels per ``setting`` (e.g. two equal budgets, then k) and one
    column per metric (its name before ``@``): each method is labelled with the tokens it hands over in
    that setting and each panel title names the baseline's, so no difference is read without its budgets."""
    from plotly.subplots import make_subplots

    settings = list(dict.fromkeys(differences["setting"]))
    bases = list(dict.fromkeys(differences["metric"].str.split("@").str[0]))
    baseline = differences["baseline"].iloc[0] if len(differences) else "baseline"
    titles = []
    for setting in settings:
        tokens = differences.loc[differences["setting"] == setting, "baseline_tokens"]
        short = setting.split(" (")[0]           # "smallest equal budget: 136 tokens", "at k=5, unequal budgets"
        titles += [f"{base}<br>{short} · {baseline} {tokens.mean():.0f} tok" for base in bases]
    fig = make_subplots(rows=len(settings), cols=len(bases), shared_yaxes=True, subplot_titles=titles,
                        vertical_spacing=0.5 / max(1, len(settings)), horizontal_spacing=0.06)
    for row, setting in enumerate(settings, start=1):
        for col, base in enumerate(bases, start=1):
            d = differences[(differences["setting"] == setting) & (differences["metric"].str.split("@").str[0] == base)]
            _forest_panel(fig, d, [f"{m} ({t:.0f} tok)" for m, t in zip(d["method"], d["method_tokens"])], row, col)
    fig.update_annotations(font_size=10)
    fig.update_layout(title=_forest_title(differences, title),
                      height=max(450, len(settings) * (24 * differences["method"].nunique() + 110) + 120))
    fig.update_yaxes(autorange="reversed")
    return fig


def with_note(title: str, note: str = "", width: int = 95) -> tuple[str, int]:
    """``title`` wrapped (``wrap_title``) with ``note`` below it in small type, and the top margin in pixels
    that fits them both."""
    import textwrap

    lines = textwrap.wrap(note, int(width * 1.6)) if note else []   # small type: more per line
    text = wrap_title(title, width) + "".join(f"<br><sup>{line}</sup>" for line in lines)
    return text, 80 + 22 * text.count("<br>")


def question_metric_heatmap(df: pd.DataFrame, method: str, metrics: Sequence[str], k: int | None, title: str,
                            note: str = ""):
    """Per-question × metric values of one method (the SKETCH paper's Figures 4–8 layout). ``note``: a
    sentence under the title (e.g. why a column is all zero: ``evaluation.string_match.all_zero_note``)."""
    import plotly.graph_objects as go

    d = df[(df["method"] == method) & df["metric"].isin(metrics)]
    if k is not None:
        d = d[(d["k"] == k) | d["k"].isna()]
    table = d.pivot_table(index="question_id", columns="metric", values="value", aggfunc="mean")
    table = table.reindex(columns=[m for m in metrics if m in table.columns])
    fig = go.Figure(go.Heatmap(z=table.values, x=list(table.columns), y=list(table.index), colorscale="RdYlGn",
                               zmin=0, zmax=1, text=np.round(table.values, 2), texttemplate="%{text}"))
    text, top = with_note(title, note)
    fig.update_layout(title=text, margin={"t": top}, yaxis={"autorange": "reversed"})
    return fig


IN_CI = "paper in our 95% CI"
NOT_LIKE_FOR_LIKE = "not like-for-like"


def with_paper(ours: pd.DataFrame, paper: pd.DataFrame, intervals: dict[str, pd.DataFrame] | None = None,
               like_for_like: bool | Sequence[str] = False) -> pd.DataFrame:
    """Ours beside the paper's numbers (same index and columns), plus the difference.

    Columns come out as ``(metric, "ours" | "paper-reported" | "difference")``. With ``intervals``
    (``uncertainty.interval_frames``: ``ci_low``, ``ci_high`` and ``n`` frames shaped like ``ours``) each
    metric also gets ``n``, ``ci_low``, ``ci_high`` and ``paper in our 95% CI``: "yes"/"no" for the
    like-for-like columns (``like_for_like``: True for all, or their names), "not like-for-like"
    for the others (other data, metric or model: the interval says nothing about the paper's number).
    """
    common = [c for c in paper.columns if c in ours.columns]
    comparable = set(common) if like_for_like is True else set(like_for_like or ())
    index = ours.index.union(paper.index, sort=False)
    parts = {}
    for c in common:
        parts[(c, "ours")] = ours[c]
        if intervals is not None:
            for part in ("n", "ci_low", "ci_high"):
                parts[(c, part)] = intervals[part][c].reindex(index) if c in intervals[part] else np.nan
        parts[(c, "paper-reported")] = paper[c]
        parts[(c, "difference")] = ours[c] - paper[c]
        if intervals is not None:
            parts[(c, IN_CI)] = _inside(paper[c].reindex(index), parts[(c, "ci_low")], parts[(c, "ci_high")],
                                        c in comparable)
    return pd.DataFrame(parts, index=index)


def per_metric(side: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``with_paper``'s wide table turned long, one block of rows per metric (``(metric, method)`` rows,
    the ``ours`` / ``n`` / … / ``difference`` columns once), so it is shown whole instead of cut; and the
    metrics left out because we have no score of our own for them (every "ours" empty: e.g. judge metrics
    when no judge ran), whose paper-reported numbers stay in the saved CSV."""
    blocks, unscored = {}, []
    for metric in dict.fromkeys(side.columns.get_level_values(0)):
        part = side[metric]
        if "ours" in part and part["ours"].isna().all():
            unscored.append(metric)
        else:
            blocks[metric] = part
    long = pd.concat(blocks, names=["metric", side.index.name or "method"]) if blocks else side.iloc[:0, :0]
    return long, unscored


def left_out_note(unscored: Sequence[str], judge: str | None, kept: str = "") -> str:
    """The line after a table that left out metrics with no score of ours (``per_metric``,
    ``without_empty``), naming them and the judge setting; ``kept``: where what was left out can still be
    read. "" when nothing was left out (print it with ``end=""``)."""
    if not unscored:
        return ""
    return (f"Left out above, with no score of ours in this run (judge: {judge or 'none'}): {', '.join(unscored)}"
            f"{'; ' + kept if kept else ''}.\n")


def without_empty(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``table`` without its columns that hold no value at all (e.g. a judge's metric when no judge ran),
    and what they were (a multi-level column by its first level)."""
    empty = [c for c in table.columns if table[c].isna().all()]
    names = list(dict.fromkeys(str(c[0] if isinstance(c, tuple) else c) for c in empty))
    return table.drop(columns=empty), names


def _inside(reported: pd.Series, low, high, comparable: bool) -> list[str]:
    """Per row: "yes" / "no" when the paper's number is inside / outside our interval, "" where either is
    missing, "not like-for-like" for a column whose setting differs from the paper's."""
    low = pd.Series(low, index=reported.index) if not isinstance(low, pd.Series) else low
    high = pd.Series(high, index=reported.index) if not isinstance(high, pd.Series) else high
    out = []
    for r, lo, hi in zip(reported, low, high):
        if not comparable:
            out.append(NOT_LIKE_FOR_LIKE)
        elif pd.isna(r) or pd.isna(lo) or pd.isna(hi):
            out.append("")
        else:
            out.append("yes" if lo <= r <= hi else "no")
    return out


def method_metric_heatmap(summary: pd.DataFrame, columns: Sequence[str], title: str):
    """Methods × metrics, one colour scale per column range [0, 1] (section coverage is a count)."""
    import plotly.graph_objects as go

    table = summary[list(columns)].apply(pd.to_numeric, errors="coerce")   # an all-missing column is NaN, not object
    fig = go.Figure(go.Heatmap(z=table.values, x=list(table.columns), y=list(table.index), colorscale="Viridis",
                               text=np.round(table.values, 2), texttemplate="%{text}"))
    fig.update_layout(title=title, yaxis={"autorange": "reversed"}, height=max(400, 28 * len(table)))
    return fig


def log_log_lines(df: pd.DataFrame, x: str, y: str, title: str, *, x_title: str, y_title: str,
                  legend_title: str = "method"):
    """One line per method of ``y`` against ``x`` on log axes (growth with corpus size). The axis titles
    are required: a column name such as ``index_seconds`` is no title for a reader (say the unit)."""
    import plotly.express as px

    for name, text in (("x_title", x_title), ("y_title", y_title)):
        if not str(text).strip():
            raise ValueError(f"log_log_lines: {name} must be a readable axis title with its unit, got {text!r}")
    fig = px.line(df, x=x, y=y, color="method", markers=True, log_x=True, log_y=True, title=title,
                  labels={x: x_title, y: y_title, "method": legend_title})
    return fig
