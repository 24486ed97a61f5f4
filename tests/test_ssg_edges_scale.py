"""SSG edges past the size threshold: exact below it (the same edges as the exact build),
approximate above it with high edge recall, the exact reference, the synthetic corpus and the
scale harness. Small inputs only; speeds and the million-window build are in benchmarks/."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.compare.ssg_scale import (GLOBAL_SHARE, DOC_SHARE, TOPIC_SHARE, WALK_CORRELATION, WALK_SHARE,
                                       build_once, edge_recall, memory_growth, synthetic_corpus)
from rag_lab.methods.ssg.config import SSGConfig
from rag_lab.methods.ssg.edges import neighbour_table, reference_inter, sparse_neighbours


def random_corpus(n=240, dim=16, per_doc=30, seed=11):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)          # random directions: no ties
    return v, [(lo, lo + per_doc) for lo in range(0, n, per_doc)]


def brute_inter(v, blocks, rows, top_x):
    """Each row's top_x windows of other documents by a full sort (the hand-checkable truth)."""
    sims = v @ v.T
    out = []
    for i in rows:
        lo, hi = next(b for b in blocks if b[0] <= i < b[1])
        others = sorted((j for j in range(len(v)) if not lo <= j < hi), key=lambda j: -sims[i, j])
        out.append(others[:top_x])
    return np.array(out)


def test_below_the_threshold_the_edges_are_the_exact_ones():
    v, blocks = random_corpus()
    exact = sparse_neighbours(v, blocks, 5, 4)                        # never approximate
    below = sparse_neighbours(v, blocks, 5, 4, ann_above=240)         # 240 windows: not above 240
    assert below == exact
    assert not neighbour_table(v, blocks, 5, 4, ann_above=240).approximate


def test_reference_inter_equals_a_brute_force_sort():
    v, blocks = random_corpus()
    rows = np.array([0, 29, 30, 100, 239])
    assert np.array_equal(reference_inter(v, blocks, 4, rows), brute_inter(v, blocks, rows, 4))


def test_above_the_threshold_edges_are_approximate_with_high_recall():
    v, blocks = synthetic_corpus(3000, windows_per_doc=30, dim=64, seed=2)
    table = neighbour_table(v, blocks, 5, 5, ann_above=1000)
    exact = neighbour_table(v, blocks, 5, 5)
    assert table.approximate and not exact.approximate
    assert np.array_equal(table.intra, exact.intra)                   # intra-document edges stay exact
    doc_of = np.repeat(np.arange(len(blocks)), 30)
    assert (table.inter >= 0).all()                                   # every window keeps top_x = 5 neighbours
    assert (doc_of[table.inter] != doc_of[:, None]).all()             # ... all in other documents
    rows = np.arange(0, 3000, 7)
    assert edge_recall(table, reference_inter(v, blocks, 5, rows), rows) >= 0.95


def test_edge_recall_counts_the_exact_neighbours_found():
    v, blocks = random_corpus()
    table = neighbour_table(v, blocks, 0, 2)
    rows = np.array([0, 1])
    truth = table.inter[rows].copy()
    assert edge_recall(table, truth, rows) == 1.0
    truth[0, 0] = 239 if truth[0, 0] != 239 else 238                  # one of the 4 exact edges missed
    assert edge_recall(table, truth, rows) == pytest.approx(3 / 4)


def test_synthetic_corpus_has_the_intended_similarity_profile():
    v, blocks = synthetic_corpus(4000, windows_per_doc=100, docs_per_topic=4, seed=1)
    assert v.shape == (4000, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert blocks[0] == (0, 100) and blocks[-1] == (3900, 4000) and len(blocks) == 40
    # the shares add to 1, so neighbouring windows should meet near
    # G + T + D + rho * W = 0.25 + 0.10 + 0.10 + 0.64 * 0.55 = 0.80 (norms vary a little around 1)
    expected_adjacent = GLOBAL_SHARE + TOPIC_SHARE + DOC_SHARE + WALK_CORRELATION * WALK_SHARE
    adjacent = np.mean([v[i] @ v[i + 1] for lo, hi in blocks for i in range(lo, hi - 1)])
    assert adjacent == pytest.approx(expected_adjacent, abs=0.03)
    sims = v[::10] @ v[::10].T
    doc = np.repeat(np.arange(40), 10)
    same, other = sims[(doc[:, None] == doc[None, :]) & ~np.eye(400, dtype=bool)], sims[doc[:, None] != doc[None, :]]
    assert same.mean() > other.mean() + 0.1                          # documents hang together
    short, _ = synthetic_corpus(250, windows_per_doc=100)
    assert short.shape == (250, 384)
    with pytest.raises(ValueError, match="must be >= 1"):
        synthetic_corpus(0)


def test_build_once_reports_time_memory_and_recall_on_a_small_build():
    row = build_once(3000, SSGConfig(ann_above=1000), windows_per_doc=30, sample=300)
    assert row["approximate"] and row["windows"] == 3000 and row["documents"] == 100
    assert row["edges"] == 3000 * (5 + 5) and row["sample"] == 300
    assert row["recall"] >= 0.9 and row["seconds"] > 0
    assert row["peak_rss_mib"] >= row["rss_before_build_mib"] > 0
    assert memory_growth([{"bytes_per_window": 100.0}, {"bytes_per_window": 120.0}]) == pytest.approx(1.2)


def test_ann_above_is_a_checked_config_knob():
    assert SSGConfig().ann_above == 100_000 and "ann_above" in SSGConfig().graph_knobs()
    with pytest.raises(ValueError, match="ann_above"):
        SSGConfig(ann_above=-1)
    v, blocks = random_corpus()
    with pytest.raises(ValueError, match="ann_above must be >= 0"):
        neighbour_table(v, blocks, 1, 1, ann_above=-5)
