"""Figure B (``plots.traversal_neighbourhood``) on the hand-made graph of ssg_handmade.py: the
figure's data, checked without rendering. Expected cells and edges come from the edge table in
ssg_handmade's docstring (windows in document order: A0 A1 A2 A3 B0 B1 B2 -> positions 0..6)."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.methods.ssg import plots
from ssg_handmade import A, B, main_graph


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
