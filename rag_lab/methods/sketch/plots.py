"""Plotly figures for the SKETCH notebook: the knowledge graph as an interactive network (the
paper's Figure 3) and a worked query's neighbourhood with its relations written on the edges."""
from __future__ import annotations

from typing import Sequence

from .graph_stores import Edge, Node

PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#EECA3B", "#B279A2", "#FF9DA6",
           "#9D755D", "#BAB0AC"]


def _layout(nodes: Sequence[Node], edges: Sequence[Edge], seed: int) -> dict[str, tuple[float, float]]:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(n.key for n in nodes)
    g.add_edges_from((e.source, e.target) for e in edges if e.source in g and e.target in g)
    return {k: (float(x), float(y)) for k, (x, y) in nx.spring_layout(g, seed=seed).items()}


def _snippet(node: Node, chars: int = 140) -> str:
    text = node.texts[0] if node.texts else ""
    return (text[:chars] + "…") if len(text) > chars else text


def kg_network(nodes: Sequence[Node], edges: Sequence[Edge], title: str, highlight: dict[str, int] | None = None,
               label_top: int = 25, label_all: bool = False, edge_labels: bool = False, seed: int = 0):
    """The graph as a network: marker size by degree, colour by entity type, hover = name, type,
    chunks and the first node context. ``highlight`` (key -> hop distance) rings the nodes a
    query reached; ``label_top`` names the best-connected nodes (``label_all`` names every one);
    ``edge_labels`` writes each relation at its edge's midpoint (for small graphs)."""
    import plotly.graph_objects as go

    nodes = list(nodes)
    pos = _layout(nodes, edges, seed)
    degree = {n.key: 0 for n in nodes}
    for e in edges:
        if e.source in degree and e.target in degree:
            degree[e.source] += 1
            degree[e.target] += 1
    labelled = set(degree) if label_all else set(sorted(degree, key=lambda k: (-degree[k], k))[:label_top])
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
    for i, type_ in enumerate(types):
        group = [n for n in nodes if (n.type or "untyped") == type_]
        traces.append(go.Scatter(
            x=[pos[n.key][0] for n in group], y=[pos[n.key][1] for n in group], mode="markers+text", name=type_,
            text=[n.name if n.key in labelled else "" for n in group], textposition="top center",
            textfont={"size": 10},
            marker={"size": [6 + 2.5 * min(degree[n.key], 12) for n in group], "color": PALETTE[i % len(PALETTE)],
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
