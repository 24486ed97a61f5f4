"""Plotly figures for the SKETCH notebook: the knowledge graph as an interactive network (the
paper's Figure 3) and a worked query's neighbourhood with its relations written on the edges."""
from __future__ import annotations

from typing import Sequence

from .graph_stores import Edge, Node

PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#EECA3B", "#B279A2", "#FF9DA6",
           "#9D755D", "#BAB0AC", "#17BECF", "#222222", "#BCBD22", "#9467BD", "#1F3A93", "#8CD17D"]
# label boxes, in pixels of a figure about this size (font size 10): for choosing labels that do not overlap
LABEL_FONT_PX, LABEL_CHAR_PX, LABEL_LINE_PX, PLOT_PX = 10, 6.5, 16, (1000, 720)


def type_colors(types: Sequence[str]) -> dict[str, str]:
    """One distinct colour per entity type, in the order given: ``PALETTE`` first, then evenly spaced hues
    (a graph with more types than the palette must not give two types one colour)."""
    import colorsys

    types = list(dict.fromkeys(types))
    extra = max(0, len(types) - len(PALETTE))
    hues = ["#%02x%02x%02x" % tuple(int(255 * v) for v in colorsys.hsv_to_rgb((i + 0.5) / extra, 0.55, 0.75))
            for i in range(extra)]
    return dict(zip(types, PALETTE + hues))


def non_overlapping_labels(pos: dict[str, tuple[float, float]], names: dict[str, str], order: Sequence[str],
                           limit: int, plot_px: tuple[int, int] = PLOT_PX) -> set[str]:
    """Up to ``limit`` keys from ``order`` (best first) whose labels, drawn centred above their markers,
    overlap no label already chosen: a key whose label would collide is skipped for the next one."""
    if not pos or limit <= 0:
        return set()
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    per_px = ((max(xs) - min(xs) or 1.0) / plot_px[0], (max(ys) - min(ys) or 1.0) / plot_px[1])
    boxes: list[tuple[float, float, float, float]] = []
    chosen: set[str] = set()
    for key in order:
        if len(chosen) >= limit:
            break
        x, y = pos[key]
        half = len(names[key]) * LABEL_CHAR_PX / 2 * per_px[0]
        box = (x - half, x + half, y + 4 * per_px[1], y + (4 + LABEL_LINE_PX) * per_px[1])
        if all(box[1] < b[0] or b[1] < box[0] or box[3] < b[2] or b[3] < box[2] for b in boxes):
            boxes.append(box)
            chosen.add(key)
    return chosen


def _layout(nodes: Sequence[Node], edges: Sequence[Edge], seed: int) -> dict[str, tuple[float, float]]:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(n.key for n in nodes)
    g.add_edges_from((e.source, e.target) for e in edges if e.source in g and e.target in g)
    return {k: (float(x), float(y)) for k, (x, y) in nx.spring_layout(g, seed=seed).items()}


def packed_layout(keys: Sequence[str], edges: Sequence[Edge], seed: int, gap: float = 0.3
                  ) -> dict[str, tuple[float, float]]:
    """Each connected component laid out on its own (spring layout), fitted into a unit cell and the
    cells packed in a near-square grid, largest component first. One spring layout of a disconnected
    graph pushes its components to the far corners and leaves the figure mostly white space."""
    import math

    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(keys)
    g.add_edges_from((e.source, e.target) for e in edges if e.source in g and e.target in g)
    parts = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0]))
    if not parts:
        return {}
    cols = math.ceil(math.sqrt(len(parts)))
    pos: dict[str, tuple[float, float]] = {}
    for i, part in enumerate(parts):
        raw = nx.spring_layout(g.subgraph(part), seed=seed) if len(part) > 1 else {part[0]: (0.0, 0.0)}
        xs, ys = [float(p[0]) for p in raw.values()], [float(p[1]) for p in raw.values()]
        span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
        scale = max(0.5, math.sqrt(len(part) / len(parts[0])))     # a pair need not fill a whole cell
        row, col = divmod(i, cols)
        cx, cy = col * (1 + gap) + 0.5, -(row * (1 + gap) + 0.5)
        for key, (x, y) in raw.items():
            pos[key] = (cx + (float(x) - (max(xs) + min(xs)) / 2) / span * scale,
                        cy + (float(y) - (max(ys) + min(ys)) / 2) / span * scale)
    return pos


def _snippet(node: Node, chars: int = 140) -> str:
    text = node.texts[0] if node.texts else ""
    return (text[:chars] + "…") if len(text) > chars else text


def kg_network(nodes: Sequence[Node], edges: Sequence[Edge], title: str, highlight: dict[str, int] | None = None,
               label_top: int = 25, label_all: bool = False, edge_labels: bool = False, seed: int = 0,
               packed: bool = False):
    """The graph as a network: marker size by degree, colour by entity type, hover = name, type,
    chunks and the first node context; one distinct colour per type (``type_colors``), named in the
    legend. ``highlight`` (key -> hop distance) rings the nodes a query reached; ``label_top`` names up
    to that many of the best-connected nodes whose labels do not overlap (``label_all`` names every one);
    ``edge_labels`` writes each relation at its edge's midpoint (for small graphs); ``packed`` lays each
    connected component out apart and packs them (``packed_layout``), for a small graph in pieces."""
    import plotly.graph_objects as go

    nodes = list(nodes)
    pos = packed_layout([n.key for n in nodes], edges, seed) if packed else _layout(nodes, edges, seed)
    degree = {n.key: 0 for n in nodes}
    for e in edges:
        if e.source in degree and e.target in degree:
            degree[e.source] += 1
            degree[e.target] += 1
    best = sorted(degree, key=lambda k: (-degree[k], k))
    labelled = set(degree) if label_all else non_overlapping_labels(pos, {n.key: n.name for n in nodes}, best, label_top)
    xs, ys, mids = [], [], []
    for e in edges:
        if e.source in pos and e.target in pos:
            (x0, y0), (x1, y1) = pos[e.source], pos[e.target]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
            mids.append(((x0 + x1) / 2, (y0 + y1) / 2, e.relation))
    traces = [go.Scatter(x=xs, y=ys, mode="lines", line={"width": 0.6, "color": "#999"}, hoverinfo="none",
                         showlegend=False)]
    types = sorted({n.type or "untyped" for n in nodes}, key=lambda t: (-sum((n.type or "untyped") == t for n in nodes), t))
    colors = type_colors(types)
    for type_ in types:
        group = [n for n in nodes if (n.type or "untyped") == type_]
        traces.append(go.Scatter(
            x=[pos[n.key][0] for n in group], y=[pos[n.key][1] for n in group], mode="markers+text", name=type_,
            text=[n.name if n.key in labelled else "" for n in group], textposition="top center",
            textfont={"size": LABEL_FONT_PX},
            marker={"size": [6 + 2.5 * min(degree[n.key], 12) for n in group], "color": colors[type_],
                    "line": {"width": 0.5, "color": "#333"}},
            hovertext=[f"<b>{n.name}</b> ({type_})<br>degree {degree[n.key]}, chunks: {', '.join(n.chunk_ids[:4])}"
                       f"{' …' if len(n.chunk_ids) > 4 else ''}<br>{_snippet(n)}" for n in group],
            hoverinfo="text"))
    if highlight:
        keys = [k for k in highlight if k in pos]
        traces.append(go.Scatter(
            x=[pos[k][0] for k in keys], y=[pos[k][1] for k in keys], mode="markers", name="reached by the query",
            marker={"size": 22, "color": "rgba(0,0,0,0)", "line": {"width": 2.5, "color": "#d62728"}},
            hovertext=[f"{k}: {highlight[k]} hop(s) from a matched entity" for k in keys], hoverinfo="text"))
    fig = go.Figure(traces)
    if edge_labels:
        for x, y, rel in mids:
            fig.add_annotation(x=x, y=y, text=rel, showarrow=False, font={"size": 9, "color": "#555"})
    fig.update_layout(title=title, showlegend=True, hovermode="closest", plot_bgcolor="white",
                      xaxis={"visible": False}, yaxis={"visible": False}, legend={"title": "entity type"})
    return fig


def heatmaps(results, methods, data, answer_k: int, reasoner: str, judge: str | None, out) -> tuple[list, list[str]]:
    """The paper's Figures 4-8: a per-question heatmap of each approach at ``answer_k``, saved into ``out``, and
    the sentence under each all-zero column's title ("naive: ..."), for the approaches that have one."""
    from ...core.figures import save_figure
    from ...core.plots import question_metric_heatmap
    from ...evaluation.string_match import all_zero_note

    ragas = "nonllm" if judge is None else "llm"   # ragas' context P/R: string matching without a judge
    metrics = [f"{ragas}_context_precision", f"{ragas}_context_recall", "faithfulness", "answer_relevancy",
               "ctx_recall", "token_f1"]
    gold = [g for q in data.questions for g in q.gold_contexts]
    figures, notes = [], []
    for name, method in methods.items():
        note = all_zero_note(results, name, metrics, answer_k, [c.text for c in method.chunks], gold)
        fig = question_metric_heatmap(results, name, metrics, answer_k,
                                      f"{name} on {data.name} (reasoner: {reasoner}, judge: {judge or 'none'})", note)
        if note:
            notes.append(f"{name}: {note}")
        save_figure(fig, out, f"heatmap_{name}", height=max(400, 28 * len(data.questions) + 200))
        figures.append(fig)
    return figures, notes


def approaches_bars(bars, results, columns: dict[str, str], title: str, reasoner: str, judged: bool, units):
    """The paper's Figure 1: every approach's means in ``bars`` (a column per bar), each with the 95% interval
    of its metric (``columns``: label -> metric@k; a column without one, as F1 of the means, has none); no
    judge: the context columns named as ragas' string matching. Columns no approach scored are left out."""
    from ...core.plots import grouped_bars
    from ...evaluation.uncertainty import summary_with_ci

    renamed = {} if judged else {c: f"string-match {c}" for c in ("context_precision", "context_recall", "f1")}
    named, named_metrics = bars.rename(columns=renamed), {renamed.get(c, c): m for c, m in columns.items()}
    shown = [c for c in named.columns if named[c].notna().any()]
    intervals = summary_with_ci(results, list(named_metrics.values()), units=units)
    return grouped_bars(named, shown, title, reasoner=reasoner,
                        intervals=intervals.assign(metric=lambda s: s["metric"].map({m: c for c, m in named_metrics.items()})))
