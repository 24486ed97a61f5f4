"""Figure B (``plots.traversal_neighbourhood``) on the hand-made graph of ssg_handmade.py: the
figure's data, checked without rendering. Expected cells and edges come from the edge table in
ssg_handmade's docstring (windows in document order: A0 A1 A2 A3 B0 B1 B2 -> positions 0..6)."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.methods.ssg import plots
from ssg_handmade import A, B, main_graph, query_at


@pytest.fixture(scope="module")
def figure():
    graph = main_graph()[0]
    # the hand-worked query_traversal path of test_ssg_algorithms
    return plots.traversal_neighbourhood(graph, [A(0), B(0), B(1), B(2)], "Figure B")


def _trace(fig, prefix):
    return next(t for t in fig.data if (t.name or "").startswith(prefix))


def test_the_matrix_covers_the_visited_documents_windows(figure):
    z = np.array(_trace(figure, "window cosine").z)
    assert z.shape == (7, 7)
    # A0 at 10 degrees, B0 at -20: cos 30; A3 at 80, B2 at 100: cos 20; the diagonal is 1
    assert z[0, 4] == pytest.approx(np.cos(np.deg2rad(30)), abs=1e-5)
    assert z[3, 6] == pytest.approx(np.cos(np.deg2rad(20)), abs=1e-5)
    assert np.allclose(np.diag(z), 1.0, atol=1e-5)
    assert list(figure.layout.xaxis.ticktext) == ["A", "B"]
    assert [s.x0 for s in figure.layout.shapes if s.x0 == s.x1] == [3.5]   # the border between A and B


def test_the_path_runs_along_the_diagonal_numbered_from_the_anchor(figure):
    path = _trace(figure, "path")
    assert list(path.x) == list(path.y) == [0, 4, 5, 6]
    assert list(path.text) == ["0", "1", "2", "3"] and list(path.hovertext) == [A(0), B(0), B(1), B(2)]


def test_every_stored_edge_of_a_visited_window_is_drawn_in_its_row(figure):
    intra = _trace(figure, "intra edges")
    inter = _trace(figure, "inter edges")
    # intra (top_k = 2): A0 -> A1, A2; B0 -> B1, B2; B1 -> B0, B2; B2 -> B0, B1  as (column, row)
    assert sorted(zip(intra.x, intra.y)) == sorted([(1, 0), (2, 0), (5, 4), (6, 4), (4, 5), (6, 5), (4, 6), (5, 6)])
    # inter (top_x = 1): A0 -> B0, B0 -> A0, B1 -> A0, B2 -> A3
    assert sorted(zip(inter.x, inter.y)) == sorted([(4, 0), (0, 4), (0, 5), (3, 6)])
    assert intra.name == "intra edges of visited windows (8)"
    assert "B#w2 -> A#w3: 0.94" in inter.text


def test_edges_to_documents_not_shown_are_counted_and_bad_paths_refused():
    graph = main_graph()[0]
    fig = plots.traversal_neighbourhood(graph, [A(0), A(1)], "only A")
    inter = _trace(fig, "inter edges")
    # A0 -> B0 and A1 -> B0 lead out of the one document shown
    assert len(inter.x) == 0 and inter.name == "inter edges of visited windows (0; 2 to documents not shown)"
    assert np.array(_trace(fig, "window cosine").z).shape == (4, 4)
    with pytest.raises(ValueError, match="path is empty"):
        plots.traversal_neighbourhood(graph, [], "x")
    with pytest.raises(ValueError, match=r"path windows \['B#w0'\] are not in the documents shown \['A'\]"):
        plots.traversal_neighbourhood(graph, [A(0), B(0)], "x", doc_ids=["A"])


def test_a_long_title_wraps_instead_of_being_cut_off():
    graph = main_graph()[0]
    title = ("llm_guided_traversal over the visited articles' similarity matrices: ssg-q09 "
             "(index built by: offline, answers by: none, judge: none)")
    fig = plots.traversal_neighbourhood(graph, [A(0), B(0)], title)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) == 2 and max(map(len, lines)) <= 95 and " ".join(lines) == title
    assert lines[-1].endswith("judge: none)")


def test_path_plane_is_the_plane_the_points_spread_in():
    rng = np.random.default_rng(0)
    flat = np.c_[rng.normal(0, 3, 20), rng.normal(0, 1, 20), np.zeros(20)]   # in z = 0, wider along x
    tilt = np.array([[1, 0, 0], [0, np.cos(0.7), -np.sin(0.7)], [0, np.sin(0.7), np.cos(0.7)]])
    centre, axes = plots.path_plane(flat @ tilt.T + 5.0)
    assert np.allclose(axes @ axes.T, np.eye(2), atol=1e-9)
    normal = np.cross(axes[0], axes[1])
    assert abs(normal @ (tilt @ np.array([0, 0, 1.0]))) == pytest.approx(1.0)   # seen from the plane's normal
    assert abs(axes[0] @ np.array([1.0, 0, 0])) == pytest.approx(1.0, abs=0.05)  # first axis: the wide one


def test_the_static_paths_figure_has_a_panel_per_algorithm_and_keeps_distances():
    graph = main_graph()[0]
    q = query_at(graph, 0.0).coords3
    paths = {"query_traversal": [A(0), B(0), B(1), B(2)], "basic_retrieval": [A(0), A(1)]}
    fig = plots.traversal_paths_2d(graph, q, paths, "Paths", focus=True)
    assert [a.text for a in fig.layout.annotations] == list(paths)            # one panel each, titled
    drawn = [t for t in fig.data if t.mode == "lines+markers+text"]
    assert [list(t.hovertext) for t in drawn] == list(paths.values())
    assert list(drawn[0].text) == ["0", "1", "2", "3"]
    # the hand-made windows are 2-D, so the projection onto their plane keeps every distance: no overlap
    c = graph.window_coords3[[graph.window_row[w] for w in paths["query_traversal"]]]
    xy = np.c_[drawn[0].x, drawn[0].y]
    assert np.allclose(np.linalg.norm(xy[:, None] - xy[None], axis=-1), np.linalg.norm(c[:, None] - c[None], axis=-1),
                       atol=1e-6)
    lo, hi = fig.layout.xaxis.range                                           # zoomed on the paths
    assert lo < xy[:, 0].min() and xy[:, 0].max() < hi
    from rag_lab.core.figures import untitled_value_axes
    assert untitled_value_axes(fig) == []                                     # the plane's axes are named
    assert fig.layout.xaxis.title.text == plots.PLANE_AXES[0] and fig.layout.yaxis.title.text == plots.PLANE_AXES[1]
    with pytest.raises(ValueError, match="no paths"):
        plots.traversal_paths_2d(graph, q, {}, "x")


def test_the_path_figures_are_zoomed_on_the_paths():
    # every panel of the overview (focus=False) too, and the 3-D scene: ranges hug the paths and the query
    graph = main_graph()[0]
    q = query_at(graph, 0.0).coords3
    paths = {"query_traversal": [A(0), B(0)]}
    lo, hi = plots.path_box(np.array([[0.0, 0.0], [1.0, 2.0]]))
    assert lo.tolist() == pytest.approx([-0.15, -0.3]) and hi.tolist() == pytest.approx([1.15, 2.3])
    flat = plots.traversal_paths_2d(graph, q, paths, "Paths")
    drawn = next(t for t in flat.data if t.mode == "lines+markers+text")
    x_lo, x_hi = flat.layout.xaxis.range
    assert x_lo < min(drawn.x) and max(drawn.x) < x_hi
    everything = [x for t in flat.data for x in t.x]
    assert min(everything) < x_lo or x_hi < max(everything)     # some window of the corpus lies outside the zoom
    fig = plots.traversal_3d(graph, q, paths, "3-D")
    c = graph.window_coords3[[graph.window_row[w] for w in paths["query_traversal"]]]
    for i, axis in enumerate((fig.layout.scene.xaxis, fig.layout.scene.yaxis)):
        assert axis.range[0] < min(c[:, i].min(), q[i]) and max(c[:, i].max(), q[i]) < axis.range[1]
