"""SSG graph building: windows, sparse FAISS edges vs brute force, sentence children, themes,
theme bridges, save/load. Expected values are worked out by hand (see ssg_handmade.py)."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.methods.ssg.edges import sparse_neighbours, theme_bridges
from rag_lab.methods.ssg.config import SSGConfig
from rag_lab.methods.ssg.graph import SimilarityGraph, build_graph, doc_node, fit_pca3, segment
from ssg_handmade import A, B, ThemeReasoner, WordEmbedder, documents, main_graph, unit


# -- windows -------------------------------------------------------------------------------
def test_windows_of_three_sentences_stride_one_are_exact_spans():
    doc = documents({"A": 5})[0]          # five sentences "Document A states fact zero." ...
    sentences, windows = segment([doc], window=3, stride=1)
    assert [s.id for s in sentences] == [f"A#s{j}" for j in range(5)]
    assert all(doc.text[s.start:s.end] == s.text for s in sentences)
    # 5 sentences, size 3, stride 1 -> starts 0, 1, 2
    assert [w.sentence_ids for w in windows] == [("A#s0", "A#s1", "A#s2"), ("A#s1", "A#s2", "A#s3"),
                                                ("A#s2", "A#s3", "A#s4")]
    for w in windows:
        first, last = sentences[int(w.sentence_ids[0][3:])], sentences[int(w.sentence_ids[-1][3:])]
        assert (w.start, w.end) == (first.start, last.end) and w.text == doc.text[w.start:w.end]


@pytest.mark.parametrize("window,stride,expected", [
    (3, 2, [(0, 1, 2), (2, 3, 4)]),                 # starts 0, 2 (4 would leave a short window)
    (2, 1, [(0, 1), (1, 2), (2, 3), (3, 4)]),
    (4, 3, [(0, 1, 2, 3)]),                         # next start 3 > 5 - 4
    (7, 1, [(0, 1, 2, 3, 4)]),                      # longer than the document: one window of all
])
def test_window_and_stride_are_parameters(window, stride, expected):
    _, windows = segment(documents({"A": 5}), window=window, stride=stride)
    assert [tuple(int(s[3:]) for s in w.sentence_ids) for w in windows] == expected


def test_sentences_are_children_of_their_windows_only():
    g, _ = main_graph()
    for sid in g.sentence_ids:
        holders = {w.id for w in g.windows if sid in w.sentence_ids}
        assert set(g.graph.predecessors(sid)) == holders
        assert all(g.graph.edges[w, sid]["kind"] == "child" for w in holders)
        assert list(g.graph.successors(sid)) == []
    # A#s0 is only in A0; A#s2 in A0, A1, A2
    assert set(g.graph.predecessors("A#s0")) == {A(0)}
    assert set(g.graph.predecessors("A#s2")) == {A(0), A(1), A(2)}


# -- sparse edges ------------------------------------------------------------------------------
def test_hand_worked_edges_of_the_main_graph():
    g, _ = main_graph()
    # windows at A0 10, A1 25, A2 60, A3 80, B0 -20, B1 -50, B2 100 degrees; top_k=2 intra, top_x=1 inter
    expected = {A(0): {A(1), A(2), B(0)}, A(1): {A(0), A(2), B(0)}, A(2): {A(3), A(1), B(2)},
                A(3): {A(2), A(1), B(2)}, B(0): {B(1), B(2), A(0)}, B(1): {B(0), B(2), A(0)},
                B(2): {B(0), B(1), A(3)}}
    for w, nbrs in expected.items():
        assert {n for n, _ in g.neighbours(w)} == nbrs
    assert g.graph.edges[A(2), B(2)]["kind"] == "inter"
    assert g.graph.edges[A(2), B(2)]["weight"] == pytest.approx(np.cos(np.deg2rad(40)), abs=1e-6)
    # edges are directed top-k choices: B2 picked A3, but A3's own inter choice is B2 too; B1 picked A0, A0 did not pick B1
    assert g.graph.has_edge(B(1), A(0)) and not g.graph.has_edge(A(0), B(1))


def brute_force(vectors, blocks, top_k, top_x):
    sims = vectors @ vectors.T
    out = set()
    for lo, hi in blocks:
        for i in range(lo, hi):
            same = [j for j in range(lo, hi) if j != i]
            other = [j for j in range(len(vectors)) if not lo <= j < hi]
            out |= {(i, j, "intra") for j in sorted(same, key=lambda j: -sims[i, j])[:top_k]}
            out |= {(i, j, "inter") for j in sorted(other, key=lambda j: -sims[i, j])[:top_x]}
    return out


@pytest.mark.parametrize("top_k,top_x", [(1, 1), (2, 3), (3, 0), (0, 2), (10, 10)])
def test_sparse_edges_equal_a_brute_force_top_k(top_k, top_x):
    rng = np.random.default_rng(7)
    v = rng.normal(size=(12, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)       # random directions: no ties
    blocks = [(0, 4), (4, 7), (7, 12)]
    edges = sparse_neighbours(v, blocks, top_k, top_x)
    assert {(e.source, e.target, e.kind) for e in edges} == brute_force(v, blocks, top_k, top_x)
    assert len(edges) == len({(e.source, e.target) for e in edges})
    for e in edges:
        assert e.weight == pytest.approx(float(v[e.source] @ v[e.target]), abs=1e-5)


def test_sparse_edges_reject_bad_blocks():
    v = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="tile the rows"):
        sparse_neighbours(v, [(0, 1), (2, 3)], 1, 1)
    with pytest.raises(ValueError, match="cover rows 0..2 but there are 3"):
        sparse_neighbours(v, [(0, 2)], 1, 1)


def test_theme_bridges_top_t():
    # themes at 0, 30 and 100 degrees, the last document has no themes (zero row)
    t = np.stack([unit(0), unit(30), unit(100), np.zeros(2, np.float32)])
    # top_t=1: doc0 -> doc1 (cos30 .866 > cos100); doc1 -> doc0 (cos30 > cos70); doc2 -> doc1 (cos70 .342 > cos100 -.174)
    assert [(i, j) for i, j, _ in theme_bridges(t, 1)] == [(0, 1), (1, 0), (2, 1)]
    assert [(i, j) for i, j, _ in theme_bridges(t, 5)] == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 1), (2, 0)]


# -- themes through the reasoner, building with an embedder -------------------------------------
def test_build_graph_themes_from_first_words_inherited_and_bridged():
    from rag_lab.core.types import Document

    docs = [Document("x", "Alpha alpha beta here. Alpha is first. Beta is second. Gamma ends it."),
            Document("y", "Gamma gamma delta. Delta again here. Gamma closes."),
            Document("z", "Beta beta alpha now. Alpha beta more. Alpha again.")]
    reasoner = ThemeReasoner([["alpha", "beta"], ["gamma", "delta"], ["alpha beta", "beta"]])
    g = build_graph(docs, WordEmbedder(), reasoner, SSGConfig(top_k=1, top_x=1, top_t=1, theme_words=4))
    # the reasoner saw each document's first four words and was asked for five themes
    assert reasoner.seen == [("Alpha alpha beta here.", 5), ("Gamma gamma delta. Delta", 5),
                             ("Beta beta alpha now.", 5)]
    assert g.themes("y") == ["gamma", "delta"]
    for node, attrs in g.graph.nodes(data=True):
        if attrs["kind"] in ("window", "sentence"):
            assert attrs["themes"] == g.themes(attrs["doc_id"])
    # theme texts "alpha, beta" / "gamma, delta" / "alpha beta, beta": x and z share alpha/beta words
    assert g.bridged_docs("x") == ["z"] and g.bridged_docs("z") == ["x"]
    assert g.graph.edges[doc_node("x"), doc_node("z")]["kind"] == "theme"
    assert g.build_cost.embedding_tokens > 0


def test_window_similarity_matrix_is_per_document():
    g, _ = main_graph()
    m, ids = g.window_similarity_matrix("B")
    assert ids == [B(0), B(1), B(2)]
    # B at -20, -50, 100 degrees
    expected = np.cos(np.deg2rad(np.array([[0, 30, 120], [30, 0, 150], [120, 150, 0]])))
    assert np.allclose(m, expected, atol=1e-6)
    with pytest.raises(KeyError, match="no document 'C'"):
        g.window_similarity_matrix("C")


def test_pca_coordinates_preserve_distances_of_planar_data():
    g, _ = main_graph()
    # 2-D vectors: the PCA is a rotation plus a shift, so 3-D distances equal the original ones
    d_orig = np.linalg.norm(g.window_vecs[0] - g.window_vecs[4])
    d_pca = np.linalg.norm(g.window_coords3[0] - g.window_coords3[4])
    assert d_pca == pytest.approx(d_orig, abs=1e-5)
    # collinear points: the first component is the line's direction, the others are zero rows
    mean, comps = fit_pca3(np.array([[0, 0, 0], [1, 1, 0], [2, 2, 0]], np.float32))
    assert np.allclose(np.abs(comps[0]), [2 ** -0.5, 2 ** -0.5, 0], atol=1e-6)


def test_save_and_load_round_trip(tmp_path):
    g, _ = main_graph()
    g.save(tmp_path / "ssg")
    h = SimilarityGraph.load(tmp_path / "ssg")
    assert h.window_ids == g.window_ids and h.sentence_ids == g.sentence_ids and h.doc_ids == g.doc_ids
    assert sorted(h.graph.edges(data=True)) == sorted(g.graph.edges(data=True))
    assert dict(h.graph.nodes(data=True)) == dict(g.graph.nodes(data=True))
    assert np.array_equal(h.window_vecs, g.window_vecs) and np.allclose(h.window_coords3, g.window_coords3)
    assert h.config == g.config and h.neighbours(A(2)) == g.neighbours(A(2))
    with pytest.raises(FileNotFoundError, match="missing graph.json, vectors.npz, config.json"):
        SimilarityGraph.load(tmp_path / "nothing")


@pytest.mark.parametrize("margin", [0, 4, 32])
def test_sparse_edges_equal_brute_force_on_a_larger_corpus(margin):
    # 240 windows in 8 documents: the batched search covers most rows, the selector fallback the rest
    # (margin 0 forces the fallback for every row whose top hits include its own document).
    rng = np.random.default_rng(11)
    v = rng.normal(size=(240, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    blocks = [(lo, lo + 30) for lo in range(0, 240, 30)]
    sims = v @ v.T
    expected = set()
    for lo, hi in blocks:
        for i in range(lo, hi):
            same = sorted((j for j in range(lo, hi) if j != i), key=lambda j: -sims[i, j])[:5]
            other = sorted((j for j in range(240) if not lo <= j < hi), key=lambda j: -sims[i, j])[:4]
            expected |= {(i, j, "intra") for j in same} | {(i, j, "inter") for j in other}
    edges = sparse_neighbours(v, blocks, 5, 4, margin=margin)
    assert {(e.source, e.target, e.kind) for e in edges} == expected
