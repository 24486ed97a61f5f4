"""The SKETCH, UnWeaver and GraLC-RAG figures checked by their data, without rendering (as
tests/test_ssg_plots.py does for SSG): small hand-made inputs, expected traces worked out from them."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from rag_lab.methods.gralc import plots as gralc_plots
from rag_lab.methods.sketch.graph_stores import Edge, Node
from rag_lab.methods.sketch.plots import PALETTE, kg_network, non_overlapping_labels, type_colors
from rag_lab.methods.unweaver.classes import EntityClass
from rag_lab.methods.unweaver.plots import alignment_bars, chunk_class_heatmap, votes_bar


def trace(fig, name):
    return next(t for t in fig.data if t.name == name)


# -- SKETCH: the knowledge graph -------------------------------------------------------------------
NODES = [Node("pesto", "Pesto", "food", ("c0", "c1"), ("Pesto is a sauce.",)), Node("basil", "Basil", "food", ("c0",)),
         Node("genoa", "Genoa", "place", ("c1",)), Node("lonely", "Lonely")]
EDGES = [Edge("pesto", "uses", "basil", "c0"), Edge("pesto", "comes_from", "genoa", "c1"),
         Edge("pesto", "mentions", "nowhere", "c1")]           # its target is not a node: not drawn


@pytest.fixture(scope="module")
def kg():
    return kg_network(NODES, EDGES, "KG", highlight={"pesto": 0, "genoa": 1, "absent": 2}, label_top=1,
                      edge_labels=True)


def test_kg_network_groups_nodes_by_type_and_sizes_them_by_degree(kg):
    # degrees: pesto 2 (the edge to "nowhere" does not count), basil 1, genoa 1, lonely 0
    # types by count, then name: food (2), place (1), untyped (1); size = 6 + 2.5 * degree
    food, place, untyped = trace(kg, "food"), trace(kg, "place"), trace(kg, "untyped")
    assert list(food.marker.size) == [11.0, 8.5] and list(place.marker.size) == [8.5]
    assert list(untyped.marker.size) == [6.0]
    # label_top = 1: only the best-connected node is named
    assert list(food.text) == ["Pesto", ""] and list(place.text) == [""] and list(untyped.text) == [""]
    assert food.hovertext[0].startswith("<b>Pesto</b> (food)<br>degree 2, chunks: c0, c1<br>Pesto is a sauce.")


def test_kg_network_draws_each_edge_between_its_nodes_and_labels_it(kg):
    pos = {n: (t.x[i], t.y[i]) for t in kg.data[1:4] for i, n in enumerate(
        [m.key for m in NODES if (m.type or "untyped") == t.name])}
    lines = kg.data[0]
    segments = [(lines.x[i], lines.y[i], lines.x[i + 1], lines.y[i + 1]) for i in range(0, len(lines.x), 3)]
    assert segments == [(*pos["pesto"], *pos["basil"]), (*pos["pesto"], *pos["genoa"])]
    assert lines.x[2] is None and len(lines.x) == 6                       # two segments, None between them
    labels = {a.text: (a.x, a.y) for a in kg.layout.annotations}
    assert set(labels) == {"uses", "comes_from"}
    assert labels["comes_from"] == pytest.approx(((pos["pesto"][0] + pos["genoa"][0]) / 2,
                                                  (pos["pesto"][1] + pos["genoa"][1]) / 2))


def test_kg_network_rings_the_nodes_the_query_reached(kg):
    ring = trace(kg, "reached by the query")
    assert list(ring.hovertext) == ["pesto: 0 hop(s) from a matched entity", "genoa: 1 hop(s) from a matched entity"]
    food, place = trace(kg, "food"), trace(kg, "place")
    assert (ring.x[1], ring.y[1]) == (place.x[0], place.y[0]) and (ring.x[0], ring.y[0]) == (food.x[0], food.y[0])


def test_every_entity_type_gets_its_own_colour():
    # notebook 01's offline graph has 12 spaCy types; the old 10-colour palette gave EVENT the colour of
    # CONCEPT and QUANTITY that of DATE
    types = ["CONCEPT", "DATE", "PERSON", "GPE", "ORG", "CARDINAL", "LOC", "FAC", "NORP", "TIME", "EVENT", "QUANTITY"]
    nodes = [Node(f"n{i}", f"n{i}", t) for i, t in enumerate(types)]
    fig = kg_network(nodes, [], "types")
    drawn = {t.name: t.marker.color for t in fig.data[1:]}
    assert set(drawn) == set(types) and len(set(drawn.values())) == len(types)
    assert fig.layout.showlegend and fig.layout.legend.title.text == "entity type"
    many = type_colors([f"T{i}" for i in range(len(PALETTE) + 15)])
    assert len(set(many.values())) == len(many) and list(many.values())[:len(PALETTE)] == PALETTE


def test_labels_that_would_overlap_are_skipped_for_the_next_best():
    pos = {"hub": (0.0, 0.0), "twin": (0.001, 0.0), "far": (1.0, 1.0), "near_far": (1.0, 1.002)}
    names = {k: k for k in pos}
    # twin sits on hub and near_far on far: each would print over a label already chosen
    assert non_overlapping_labels(pos, names, ["hub", "twin", "far", "near_far"], limit=4) == {"hub", "far"}
    assert non_overlapping_labels(pos, names, ["hub", "twin", "far"], limit=1) == {"hub"}
    assert non_overlapping_labels({}, {}, [], limit=3) == set()


# -- UnWeaver: chunk-class matrix, votes, alignment ---------------------------------------------------
def unweaver_index():
    # A (chunks x classes): pesto in c0; basil in c0, c1, c2; genoa in c1, c2
    classes = [EntityClass(0, "pesto", "pesto", [0], [0]), EntityClass(1, "basil", "basil", [1, 2, 3], [0, 1, 2]),
               EntityClass(2, "genoa", "Genoa", [4, 5], [1, 2])]
    a = sparse.csr_matrix(np.array([[1, 1, 0], [0, 1, 1], [0, 1, 1]]))
    return SimpleNamespace(classes=classes, chunk_class=a, chunks=[SimpleNamespace(id=f"c{j}") for j in range(3)])


def test_chunk_class_heatmap_keeps_the_most_widespread_classes():
    fig = chunk_class_heatmap(unweaver_index(), max_classes=2, title="A")
    heat = fig.data[0]
    # by chunks spanned: basil (3), genoa (2), pesto (1); the two kept are basil and genoa
    assert list(heat.x) == ["basil", "Genoa"] and list(heat.y) == ["c0", "c1", "c2"]
    assert np.asarray(heat.z).tolist() == [[1, 0], [1, 1], [1, 1]]


def test_votes_bar_marks_the_elected_chunks_with_their_rank():
    ret = SimpleNamespace(trace={"approvals": {"c0": 3, "c1": 1, "c2": 2}, "elected": ["c2", "c0"], "rule": "pav"})
    fig = votes_bar(ret)
    elected, other = trace(fig, "elected (label: its rank)"), trace(fig, "approved, not elected")
    assert list(elected.x) == ["c0", "c2"] and list(elected.y) == [3, 2] and list(elected.text) == ["#2", "#1"]
    assert list(other.x) == ["c1"] and list(other.y) == [1] and list(other.text) == [""]
    assert (elected.marker.color, other.marker.color) == ("#d62728", "#9aa5b1")
    # the bars stay in the trace's order, and the legend names both colours
    assert list(fig.layout.xaxis.categoryarray) == ["c0", "c1", "c2"] and fig.layout.barmode == "overlay"
    # the legend: one plain swatch per colour (its own empty bar), the data bars themselves left out of it
    assert fig.layout.showlegend and [(t.name, t.showlegend) for t in fig.data] == [
        ("elected (label: its rank)", False), ("approved, not elected", False),
        ("elected (label: its rank)", None), ("approved, not elected", None)]
    assert [t.marker.pattern.shape for t in fig.data[2:]] == [None, None]
    # chunks holding a gold passage are hatched, with a legend entry of their own
    hatched = votes_bar(ret, gold={"c1", "c2"})
    assert list(trace(hatched, "elected (label: its rank)").marker.pattern.shape) == ["", "/"]
    assert list(trace(hatched, "approved, not elected").marker.pattern.shape) == ["/"]
    assert trace(hatched, "holds a gold passage").marker.pattern.shape == "/"
    assert "holds a gold passage" not in [t.name for t in fig.data]
    # every approved chunk elected: no grey entry in the legend
    assert {t.name for t in votes_bar(SimpleNamespace(trace={**ret.trace, "elected": ["c0", "c1", "c2"]})).data} == {
        "elected (label: its rank)"}


def test_alignment_bars_one_budget_series_then_one_per_solver():
    fig = alignment_bars(["1", "2"], np.array([1.0, 0.25]), {"kelly": np.array([0.75, 0.25]),
                                                            "lsq": np.array([1.0, 0.2])}, "t")
    assert [t.name for t in fig.data] == ["budget c", "load R x (kelly)", "load R x (lsq)"]
    assert [list(t.y) for t in fig.data] == [[1.0, 0.25], [0.75, 0.25], [1.0, 0.2]]


# -- GraLC-RAG: the paper's figures, a boundary trace, the λ sweep ------------------------------------
def test_ours_vs_paper_bars_align_strategies_and_leave_gaps_empty():
    ours = pd.Series({"Naive": 0.5, "Late Chunking": 0.25})
    paper = pd.Series({"Naive": 0.6, "Structure-Aware": 0.7})
    mine, theirs = gralc_plots.ours_vs_paper_bars(ours, paper, "MRR", "MRR").data
    assert list(mine.x) == list(theirs.x) == ["Naive", "Late Chunking", "Structure-Aware"]
    assert list(mine.y) == [0.5, 0.25, None] and list(theirs.y) == [0.6, None, 0.7]
    assert list(mine.text) == ["0.500", "0.250", ""] and theirs.name == "paper-reported"
    assert theirs.marker.pattern.shape == "/"


def test_recall_curves_one_line_per_strategy_paper_dashed_at_its_ks():
    ours = pd.DataFrame({"R@1": [0.2, 0.4], "R@5": [0.6, 0.8]}, index=["Naive", "Structure-Aware"])
    paper = pd.DataFrame({"R@5": [0.7]}, index=["Naive"])
    fig = gralc_plots.recall_curves(ours, paper, [1, 5], "recall")
    # two strategies drawn side by side so their error bars do not stack: k -/+ 0.16
    assert list(trace(fig, "Naive").x) == pytest.approx([0.84, 4.84]) and list(trace(fig, "Structure-Aware").y) == [0.4, 0.8]
    assert list(trace(fig, "Structure-Aware").x) == pytest.approx([1.16, 5.16])
    reported = trace(fig, "Naive (paper-reported)")
    assert list(reported.x) == [5] and list(reported.y) == [0.7] and reported.line.dash == "dash"
    assert reported.line.color == trace(fig, "Naive").line.color       # one colour per strategy


def test_ablation_steps_skip_an_empty_paper_table_and_mark_the_base():
    ours = pd.DataFrame({"MRR": [0.4, 0.5, 0.45]}, index=["late", "+structure", "+KG"])
    fig = gralc_plots.ablation_steps(ours, pd.DataFrame(columns=["MRR"]), "ablation")
    assert [t.name for t in fig.data] == ["ours"] and list(fig.data[0].y) == [0.4, 0.5, 0.45]
    assert [s.y0 for s in fig.layout.shapes] == [0.4]                    # the base: the first step's MRR


def test_efficiency_chart_puts_ours_and_the_paper_in_two_panels():
    ours = pd.DataFrame({"Chunks": [10, 4], "Time (s)": [1.5, 3.0]}, index=["Naive", "GraLC-RAG (KG)"])
    paper = pd.DataFrame({"Chunks": [900], "Time (s)": [60.0]}, index=["Naive"])
    fig = gralc_plots.efficiency_chart(ours, "efficiency", paper)
    # a 2 x 2 grid: chunks on top, seconds below; ours left, the paper's right; each panel its own axis
    assert [a.text for a in fig.layout.annotations] == ["chunks (ours)", "chunks (paper-reported)",
                                                        "indexing seconds (ours)", "indexing seconds (paper-reported)"]
    assert list(fig.data[0].y) == [10, 4] and list(fig.data[1].y) == [1.5, 3.0]
    assert list(fig.data[2].y) == [900] and list(fig.data[3].y) == [60.0]
    assert [t.xaxis for t in fig.data] == ["x", "x3", "x2", "x4"]


def test_metric_by_condition_orders_conditions_and_skips_missing_ones():
    index = pd.MultiIndex.from_tuples([("full", "Naive"), ("abstract", "Naive"), ("abstract", "Late Chunking")])
    ours = pd.Series([0.3, 0.5, 0.6], index=index)
    fig = gralc_plots.metric_by_condition(ours, None, "MRR by length", "MRR", ["abstract", "partial", "full"])
    # conditions are positions 0, 1, 2 named by the axis ticks; "partial" did not run and is skipped
    assert list(fig.layout.xaxis.ticktext) == ["abstract", "partial", "full"]
    assert list(trace(fig, "Naive").x) == [0, 2] and list(trace(fig, "Naive").y) == [0.5, 0.3]
    assert list(trace(fig, "Late Chunking").x) == [0]


def test_boundary_trace_weights_each_signal_and_marks_the_chosen_boundaries():
    t = pd.DataFrame({"token": [0, 1, 2, 3], "structural": [1.0, 0, 0, 1], "semantic": [0.5, 0, 0.2, 0.1],
                      "entity": [0.0, 0, 1, 0], "score": [0.6, 0, 0.3, 0.5], "boundary": [False, False, True, True]})
    markers = pd.DataFrame({"token": [0, 3], "kind": ["section", "subsection"], "title": ["Intro", "Sub"]})
    fig = gralc_plots.boundary_trace(t, markers, 0.4, "trace", (0.5, 0.3, 0.2))
    assert list(trace(fig, "0.5 × structural").y) == [0.5, 0, 0, 0.5]
    assert list(trace(fig, "0.3 × semantic").y) == pytest.approx([0.15, 0, 0.06, 0.03])
    assert trace(fig, "0.2 × entity").visible == "legendonly"
    chosen = trace(fig, "chosen boundary")
    assert list(chosen.x) == [2, 3] and list(chosen.y) == [0.3, 0.5]
    lines = [(s.x0, s.y0, s.line.dash) for s in fig.layout.shapes]
    assert (0, 0.4, "dash") in lines                        # τ
    assert (0, 0, "solid") in lines and (3, 0, "dot") in lines   # a section start, a subsection start
    assert {a.text for a in fig.layout.annotations} == {"τ = 0.4", "Intro"}


def test_lambda_curve_sends_each_column_to_its_panel():
    # three panels, each its own scale from zero (a second y-axis on one panel would stretch a
    # 0.02-section wiggle over the whole height): scores 0-1, sections, cosines 0-1
    sweep = pd.DataFrame({"MRR@20": [0.5, 0.6], "SecCov@5": [2.0, 3.0], "cos(mentions)": [1.0, 0.9],
                          "chunks": [7, 7]}, index=[0.0, 0.1])
    fig = gralc_plots.lambda_curve(sweep, "λ")
    axes = {t.name: (t.xaxis, t.yaxis, list(t.y)) for t in fig.data}
    assert axes == {"MRR@20": ("x", "y", [0.5, 0.6]), "SecCov@5": ("x2", "y2", [2.0, 3.0]),
                    "cos(mentions)": ("x3", "y3", [1.0, 0.9])}             # chunk counts are not drawn
    assert [(s.x0, s.xref) for s in fig.layout.shapes] == [(0.1, "x"), (0.1, "x2"), (0.1, "x3")]   # the paper's λ
    assert list(fig.layout.yaxis.range) == [0, 1.05] and fig.layout.yaxis2.rangemode == "tozero"
    assert list(fig.layout.yaxis3.range) == [0, 1.05]


def test_packed_layout_puts_components_side_by_side_in_unit_cells():
    from rag_lab.methods.sketch.plots import packed_layout

    # by hand: components {a, b, c} (3 nodes), {d, e} (2), {f} (1) -> 2 columns; cells (gap 0.3) centred at
    # x 0.5 | 1.8 on the first row (y -0.5) and x 0.5 on the second (y -1.8); the triangle spans its whole
    # cell (scale 1), the pair sqrt(2/3) = 0.816 of it, the single node sits at its cell's centre (scale 0.577)
    edges = [Edge("a", "r", "b", "c0"), Edge("b", "r", "c", "c0"), Edge("c", "r", "a", "c0"), Edge("d", "r", "e", "c1")]
    pos = packed_layout(list("abcdef"), edges, seed=0)
    tri_x = [pos[k][0] for k in "abc"]
    assert max(tri_x) <= 1.0 + 1e-9 and min(tri_x) >= -1e-9
    assert all(1.3 - 1e-9 <= pos[k][0] <= 2.3 + 1e-9 and -1.0 - 1e-9 <= pos[k][1] <= 1e-9 for k in "de")
    span = max(abs(pos["d"][0] - pos["e"][0]), abs(pos["d"][1] - pos["e"][1]))
    assert span == pytest.approx((2 / 3) ** 0.5)
    assert pos["f"] == pytest.approx((0.5, -1.8))
    assert packed_layout([], [], seed=0) == {}
    fig = kg_network(NODES, EDGES, "KG", packed=True)      # the figure takes it when asked
    assert {n.key for n in NODES} <= set(packed_layout([n.key for n in NODES], EDGES, seed=0))
    assert len(fig.data) >= 2
