"""Figures of the SSG-traversal notebook (the paper's Figures A-F), as plotly figures.

- ``window_similarity_heatmap``: one document's window-to-window cosine matrix (Figure A).
- ``traversal_neighbourhood``: one traversal over the similarity matrix of the documents it visits,
  with the stored edges of every window it visited (Figure B).
- ``multilayer_graph``: documents / windows / sentences as three stacked layers (Figure D).
- ``traversal_3d``: windows in the graph's 3-D PCA space with one traversal path per algorithm (E/F);
  ``traversal_paths_2d`` is its static face (one panel per algorithm, on the plane the paths spread in).
- ``sequential_path``: per step, the document and sentence position reached (Figure C).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ...core.plots import wrap_title

LAYER_Z = {"document": 2.0, "window": 1.0, "sentence": 0.0}
EDGE_STYLE = {"theme": ("#d62728", 4), "intra": ("#1f77b4", 2), "inter": ("#ff7f0e", 2), "child": ("#bbbbbb", 1)}


def doc_colors(doc_ids: Sequence[str]) -> dict[str, str]:
    from plotly.colors import qualitative

    palette = qualitative.D3 + qualitative.Dark24
    return {d: palette[i % len(palette)] for i, d in enumerate(doc_ids)}


def _segments(pairs: Sequence[tuple[np.ndarray, np.ndarray]], lift: float = 0.0) -> tuple[list, list, list]:
    """x, y, z lists for many 3-D line segments in one trace (None between segments). With ``lift``,
    each segment bends up through a midpoint raised by ``lift`` x its length (arcs that stay visible
    when both ends lie on one line)."""
    xs, ys, zs = [], [], []
    for a, b in pairs:
        if lift:
            mid = (np.asarray(a) + np.asarray(b)) / 2.0
            mid[2] += lift * float(np.linalg.norm(np.asarray(a) - np.asarray(b)))
            xs += [a[0], mid[0], b[0], None]
            ys += [a[1], mid[1], b[1], None]
            zs += [a[2], mid[2], b[2], None]
        else:
            xs += [a[0], b[0], None]
            ys += [a[1], b[1], None]
            zs += [a[2], b[2], None]
    return xs, ys, zs


def window_similarity_heatmap(matrix: np.ndarray, window_ids: Sequence[str], title: str):
    """Cosine of every pair of one document's windows; red = similar, blue = dissimilar (as the paper)."""
    import plotly.graph_objects as go

    labels = [w.rsplit("#", 1)[-1] for w in window_ids]
    fig = go.Figure(go.Heatmap(z=matrix, x=labels, y=labels, colorscale="RdBu_r", zmin=float(np.min(matrix)),
                               zmax=1.0, colorbar={"title": "cosine"}))
    fig.update_layout(title=title, xaxis={"title": "window (window i starts at sentence i)"},
                      yaxis={"title": "window", "autorange": "reversed"})
    return fig


def traversal_neighbourhood(graph, path: Sequence[str], title: str, doc_ids: Sequence[str] | None = None):
    """The paper's Figure B: one traversal's path over the window similarity matrix of the documents
    it visits (their windows in document order, so each document's Figure A matrix sits on the
    diagonal and the cross-document cosines off it; dense only for these few documents).

    Row r holds the stored edges of window r where r was visited (its ``top_k`` intra-document and
    ``top_x`` inter-document neighbours: the candidates the traversal chose from there), as crosses;
    the path runs along the diagonal, numbered from the anchor, so a jump to another block is a
    hop to another document. ``doc_ids``: the documents shown (default: those the path visits)."""
    import plotly.graph_objects as go

    if not path:
        raise ValueError("traversal_neighbourhood: the path is empty (expected the windows of one traversal)")
    docs = list(doc_ids or dict.fromkeys(graph.window(w).doc_id for w in path))
    windows = [w for d in docs for w in graph.windows_of(d)]
    missing = [w for w in path if w not in set(windows)]
    if missing:
        raise ValueError(f"traversal_neighbourhood: path windows {missing} are not in the documents shown {docs}")
    pos = {w: i for i, w in enumerate(windows)}
    vecs = graph.window_vecs[[graph.window_row[w] for w in windows]]
    traces = [go.Heatmap(z=vecs @ vecs.T, x=list(range(len(windows))), y=list(range(len(windows))),
                         colorscale="RdBu_r", zmax=1.0, colorbar={"title": "cosine"}, name="window cosine",
                         customdata=[[f"{a} / {b}" for b in windows] for a in windows],
                         hovertemplate="%{customdata}: %{z:.2f}<extra></extra>")]
    for kind in ("intra", "inter"):
        edges = [(w, n, float(a["weight"])) for w in dict.fromkeys(path) for n, a in graph.graph[w].items()
                 if a["kind"] == kind]
        shown = [(w, n, c) for w, n, c in edges if n in pos]
        hidden = len(edges) - len(shown)
        traces.append(go.Scatter(
            x=[pos[n] for _, n, _ in shown], y=[pos[w] for w, _, _ in shown], mode="markers",
            name=f"{kind} edges of visited windows ({len(shown)}" + (f"; {hidden} to documents not shown)" if hidden else ")"),
            text=[f"{w} -> {n}: {c:.2f}" for w, n, c in shown], hoverinfo="text",
            marker={"symbol": "x-thin", "size": 9, "line": {"width": 2, "color": EDGE_STYLE[kind][0]}}))
    steps = [pos[w] for w in path]
    traces.append(go.Scatter(x=steps, y=steps, mode="lines+markers+text", name="path (step numbers)",
                             text=[str(i) for i in range(len(path))], textposition="top right",
                             hovertext=list(path), line={"color": "black", "width": 2},
                             marker={"size": 9, "color": "yellow", "line": {"color": "black", "width": 1}}))
    starts = np.cumsum([0] + [len(graph.windows_of(d)) for d in docs])
    fig = go.Figure(traces)
    for edge in starts[1:-1]:  # document borders
        fig.add_vline(x=edge - 0.5, line={"color": "black", "width": 1})
        fig.add_hline(y=edge - 0.5, line={"color": "black", "width": 1})
    mids = [(a + b - 1) / 2.0 for a, b in zip(starts[:-1], starts[1:])]
    span = [-0.5, len(windows) - 0.5]
    fig.update_layout(title=wrap_title(title), margin={"t": 110}, # a long title wraps, never cut off
                      xaxis={"title": "window (edge target)", "tickvals": mids, "ticktext": docs, "range": span},
                      yaxis={"title": "window (visited)", "tickvals": mids, "ticktext": docs, "range": span[::-1]},
                      legend={"orientation": "h", "y": -0.15})
    return fig


def multilayer_graph(graph, doc_ids: Sequence[str] | None = None, title: str = "Multi-layer semantic similarity graph"):
    """Documents (top), windows (middle) and sentences (bottom) of some documents, with their edges.

    x = position in the document (windows and sentences by index, a document at its middle),
    y = document, z = layer. Inter-document edges are drawn only between the documents shown."""
    import plotly.graph_objects as go

    doc_ids = list(doc_ids or graph.doc_ids[:3])
    colors = doc_colors(graph.doc_ids)
    pos: dict[str, np.ndarray] = {}
    for row, d in enumerate(doc_ids):
        windows = graph.windows_of(d)
        sentences = [s for s in graph.sentences if s.doc_id == d]
        pos[f"doc:{d}"] = np.array([len(sentences) / 2.0, 3.0 * row, LAYER_Z["document"]])
        for w in windows:
            pos[w] = np.array([graph.window(w).index + 1.0, 3.0 * row, LAYER_Z["window"]])
        for s in sentences:
            pos[s.id] = np.array([float(s.index), 3.0 * row, LAYER_Z["sentence"]])
    traces = []
    by_kind: dict[str, list] = {k: [] for k in EDGE_STYLE}
    for a, b, attrs in graph.graph.edges(data=True):
        if a in pos and b in pos and attrs["kind"] in by_kind:
            by_kind[attrs["kind"]].append((pos[a], pos[b]))
    for kind, pairs in by_kind.items():
        if pairs:
            color, width = EDGE_STYLE[kind]
            xs, ys, zs = _segments(pairs, lift=0.03 if kind == "intra" else 0.0)
            traces.append(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", name=f"{kind} edges ({len(pairs)})",
                                       line={"color": color, "width": width}, opacity=0.5, hoverinfo="skip"))
    for layer, size in (("document", 12), ("window", 4), ("sentence", 3)):
        for d in doc_ids:
            nodes = [n for n in pos if graph.graph.nodes[n]["kind"] == layer and graph.graph.nodes[n]["doc_id"] == d]
            p = np.array([pos[n] for n in nodes])
            text = [graph.graph.nodes[n].get("title") or n for n in nodes]
            traces.append(go.Scatter3d(x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="markers", name=d,
                                       legendgroup=d, showlegend=layer == "document", text=text,
                                       marker={"size": size, "color": colors[d]}, hoverinfo="text"))
    fig = go.Figure(traces)
    fig.update_layout(title=title, scene={"xaxis": {"title": "position in document"},
                                          "yaxis": {"title": "document", "showticklabels": False},
                                          "zaxis": {"title": "layer", "tickvals": [0, 1, 2],
                                                    "ticktext": ["sentences", "windows", "documents"]}})
    return fig


def path_box(points: np.ndarray, margin: float = 0.15, least: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per axis of ``points`` (the paths' windows and the query) widened by ``margin`` of
    their extent (at least ``least``): the axis ranges that zoom a figure onto the walks, which
    otherwise fill a few percent of a panel spanning the whole corpus."""
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = np.maximum(margin * (hi - lo), least)
    return lo - pad, hi + pad


def traversal_3d(graph, query_coords: np.ndarray, paths: Mapping[str, Sequence[str]], title: str,
                 show_edges: bool = True, focus: bool = False):
    """Windows at their 3-D PCA coordinates (one colour per document), the sparse edges faintly,
    the query as a black diamond and each algorithm's path as a numbered line; the axes are zoomed
    on the paths and the query (``path_box``; rotate or zoom out in the HTML for the rest).
    ``focus`` shows only the documents the paths visit (the paper's close-up, Figure F)."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    c = graph.window_coords3
    colors = doc_colors(graph.doc_ids)
    shown = ({graph.window(w).doc_id for p in paths.values() for w in p} if focus else set(graph.doc_ids))
    traces = []
    if show_edges:
        pairs = [(c[graph.window_row[a]], c[graph.window_row[b]]) for a, b, k in graph.graph.edges(data="kind")
                 if k in ("intra", "inter") and graph.window(a).doc_id in shown and graph.window(b).doc_id in shown]
        xs, ys, zs = _segments(pairs)
        traces.append(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", name="similarity edges",
                                   line={"color": "#cccccc", "width": 1}, opacity=0.25, hoverinfo="skip"))
    for d in (d for d in graph.doc_ids if d in shown):
        rows = [graph.window_row[w] for w in graph.windows_of(d)]
        traces.append(go.Scatter3d(x=c[rows, 0], y=c[rows, 1], z=c[rows, 2], mode="markers", name=d,
                                   text=[graph.window_ids[r] for r in rows], hoverinfo="text",
                                   marker={"size": 3, "color": colors[d], "opacity": 0.6}))
    q = np.asarray(query_coords).reshape(-1)
    traces.append(go.Scatter3d(x=[q[0]], y=[q[1]], z=[q[2]], mode="markers", name="query",
                               marker={"size": 8, "color": "black", "symbol": "diamond"}))
    palette = qualitative.Bold
    for i, (name, path) in enumerate(paths.items()):
        p = np.array([c[graph.window_row[w]] for w in path])
        traces.append(go.Scatter3d(x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="lines+markers+text", name=name,
                                   text=[str(j) for j in range(len(path))], textposition="top center",
                                   hovertext=list(path), line={"width": 6, "color": palette[i % len(palette)]},
                                   marker={"size": 4, "color": palette[i % len(palette)]}))
    fig = go.Figure(traces)
    visited = [graph.window_row[w] for p in paths.values() for w in p]
    lo, hi = path_box(np.vstack([c[visited], q[:3]])) if visited else (c.min(axis=0), c.max(axis=0))
    fig.update_layout(title=title, scene={f"{a}axis": {"title": f"PC{i + 1}", "range": [lo[i], hi[i]]}
                                          for i, a in enumerate("xyz")} | {"aspectmode": "cube"},
                      legend={"itemsizing": "constant"})
    return fig


def path_plane(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre, 2 x 3 axes) of the plane in which ``points`` (n x 3) spread most: their first two
    principal directions. Seen from its normal, no two of the points that differ in that plane overlap,
    which a fixed 3-D camera cannot promise."""
    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    centre = pts.mean(axis=0)
    if len(pts) < 3:
        return centre, np.eye(3)[:2]
    axes = np.linalg.svd(pts - centre, full_matrices=False)[2][:2]
    return centre, axes * np.where(axes.sum(axis=1, keepdims=True) < 0, -1.0, 1.0)   # a stable sign


# The 2-D panels' axes: the plane's two directions (path_plane), in the units of the 3-D PCA coordinates.
PLANE_AXES = ("plane axis 1 (PCA units)", "plane axis 2 (PCA units)")


def traversal_paths_2d(graph, query_coords: np.ndarray, paths: Mapping[str, Sequence[str]], title: str,
                       focus: bool = False, columns: int = 4):
    """The static face of ``traversal_3d`` (a PNG cannot be rotated): one panel per algorithm, the windows
    projected from the 3-D PCA space onto the plane the paths' windows and the query spread most in
    (``path_plane``), each path numbered from its anchor, its steps filled with their document's colour.
    Every panel is zoomed on the paths and the query (``path_box``) and draws the windows of every
    document with a window in view; ``focus`` draws only the visited documents' windows."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    if not paths:
        raise ValueError("traversal_paths_2d: no paths to draw")
    c = graph.window_coords3
    q = np.asarray(query_coords, dtype=float).reshape(-1)[:3]
    visited = [graph.window_row[w] for p in paths.values() for w in p]
    centre, axes = path_plane(np.vstack([c[visited], q]))
    flat, fq = (c - centre) @ axes.T, (q - centre) @ axes.T
    colors = doc_colors(graph.doc_ids)
    lo, hi = path_box(np.vstack([flat[visited], fq]))   # the paths and the query: where the algorithms differ
    in_view = np.all((flat[:, :2] >= lo) & (flat[:, :2] <= hi), axis=1)
    shown = ({graph.window(w).doc_id for p in paths.values() for w in p} if focus else
             {graph.windows[r].doc_id for r in np.flatnonzero(in_view)})   # the legend: documents one can see
    names = list(paths)
    rows = -(-len(names) // columns)
    fig = make_subplots(rows=rows, cols=min(columns, len(names)), subplot_titles=names, shared_xaxes=True,
                        shared_yaxes=True, horizontal_spacing=0.02, vertical_spacing=0.08)
    palette = qualitative.Bold
    for i, name in enumerate(names):
        at = {"row": i // columns + 1, "col": i % columns + 1}
        for d in (d for d in graph.doc_ids if d in shown):
            r = [graph.window_row[w] for w in graph.windows_of(d)]
            fig.add_trace(go.Scatter(x=flat[r, 0], y=flat[r, 1], mode="markers", name=d, legendgroup=d,
                                     showlegend=i == 0, text=[graph.window_ids[j] for j in r], hoverinfo="text",
                                     marker={"size": 4, "color": colors[d], "opacity": 0.45}), **at)
        fig.add_trace(go.Scatter(x=[fq[0]], y=[fq[1]], mode="markers", name="query", showlegend=i == 0,
                                 legendgroup="query", marker={"size": 13, "color": "black", "symbol": "diamond-open",
                                                              "line": {"width": 2}}), **at)
        p = flat[[graph.window_row[w] for w in paths[name]]]
        color = palette[i % len(palette)]
        fig.add_trace(go.Scatter(x=p[:, 0], y=p[:, 1], mode="lines+markers+text", showlegend=False,
                                 text=[str(j) for j in range(len(p))], textposition="top right",
                                 textfont={"size": 12, "color": "black"}, hovertext=list(paths[name]),
                                 line={"width": 2.5, "color": color},
                                 marker={"size": [13] + [9] * (len(p) - 1), "line": {"width": 1.5, "color": color},
                                         "color": [colors[graph.window(w).doc_id] for w in paths[name]]}), **at)
    fig.update_xaxes(zeroline=False, range=[lo[0], hi[0]])
    fig.update_yaxes(zeroline=False, range=[lo[1], hi[1]])
    for col in range(1, min(columns, len(names)) + 1):     # shared axes: the bottom row and first column say it
        fig.update_xaxes(title_text=PLANE_AXES[0], title_font_size=10, row=rows, col=col)
    for row in range(1, rows + 1):
        fig.update_yaxes(title_text=PLANE_AXES[1], title_font_size=10, row=row, col=1)
    fig.update_layout(title=title + "<br><sup>windows on the plane the paths spread most in, zoomed on the paths; "
                      "step 0 (larger) is the anchor; fill: the step's document; the HTML rotates in 3-D</sup>",
                      margin={"t": 110}, legend={"itemsizing": "constant"}, plot_bgcolor="#f7f7f7")
    return fig


def sequential_path(graph, paths: Mapping[str, Sequence[str]], title: str):
    """One panel per algorithm: step on x, the window's first-sentence position on y, colour = document."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    colors = doc_colors(graph.doc_ids)
    names = list(paths)
    fig = make_subplots(rows=len(names), cols=1, shared_xaxes=True, subplot_titles=names,
                        vertical_spacing=0.25 / max(len(names), 1))
    shown: set[str] = set()
    for row, name in enumerate(names, 1):
        path = list(paths[name])
        windows = [graph.window(w) for w in path]
        fig.add_trace(go.Scatter(x=list(range(len(path))), y=[w.index for w in windows], mode="lines",
                                 line={"color": "#999999", "width": 1}, showlegend=False, hoverinfo="skip"),
                      row=row, col=1)
        for d in dict.fromkeys(w.doc_id for w in windows):
            steps = [i for i, w in enumerate(windows) if w.doc_id == d]
            fig.add_trace(go.Scatter(x=steps, y=[windows[i].index for i in steps], mode="markers", name=d,
                                     legendgroup=d, showlegend=d not in shown, text=[path[i] for i in steps],
                                     marker={"size": 9, "color": colors[d]}), row=row, col=1)
            shown.add(d)
    fig.update_xaxes(dtick=1)
    fig.update_xaxes(title_text="step", row=len(names), col=1)
    fig.update_yaxes(title_text="sentence")
    fig.update_layout(title=title, height=170 * len(names) + 120)
    return fig


def traversal_paths(graph, query_coords: np.ndarray, paths: Mapping[str, Sequence[str]], title: str, focus: bool = False):
    """The paths both ways: ``traversal_3d`` to rotate (the HTML) and ``traversal_paths_2d`` under the same title,
    one panel per algorithm (the PNG)."""
    fig = traversal_3d(graph, query_coords, paths, title, focus=focus)
    return fig, traversal_paths_2d(graph, query_coords, paths, fig.layout.title.text, focus=focus)
