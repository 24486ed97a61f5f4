"""VectorIndex beyond flat: the size threshold, the approximate (FAISS HNSW / IVF) index, its
save/load, and the recall helper. Correctness only (speed lives in benchmarks/): small inputs, and
one 20,000-vector set large enough for a badly built graph to miss."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.compare.ssg_scale import synthetic_corpus
from rag_lab.core.index import IndexSettings, VectorIndex, recall_at_k


def unit_rows(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_recall_at_k_counts_shared_rows_and_ignores_empty_slots():
    # row 0 finds 1, 2 of {1, 2, 9}; row 1 finds 4, 5 of {4, 5, 6} (its -1 slot counts for nothing): 4 of 6
    found = np.array([[1, 2, 3], [4, 5, -1]])
    exact = np.array([[1, 2, 9], [4, 5, 6]])
    assert recall_at_k(found, exact) == pytest.approx(4 / 6)
    with pytest.raises(ValueError, match="2 rows but exact has 1"):
        recall_at_k(found, exact[:1])


def test_auto_index_is_flat_up_to_the_threshold_then_approximate():
    v = unit_rows(51)
    index = VectorIndex(16, IndexSettings(flat_max=50))
    index.add(v[:30], [f"r{i}" for i in range(30)])
    index.add(v[30:50], [f"r{i}" for i in range(30, 50)])
    assert index.exact and len(index) == 50             # 50 vectors: not above flat_max yet
    index.add(v[50:], ["r50"])
    assert not index.exact and len(index) == 51 and index.index.ntotal == 51
    # the vectors held before the switch keep their rows: each stored vector finds itself first
    # (HNSW with efSearch 256 over 51 points visits them all)
    _, rows = index.search(v, 1)
    assert rows[:, 0].tolist() == list(range(51))
    assert [index.ids[r] for r in rows[:3, 0]] == ["r0", "r1", "r2"]


def test_default_approximate_index_uses_the_measured_search_depth():
    # efSearch 1024: the smallest setting with recall@10 >= 0.95 at 1M windows (docs/performance.md)
    index = VectorIndex(16, IndexSettings(flat_max=10)).add(unit_rows(11), [str(i) for i in range(11)])
    assert not index.exact
    assert (index.index.hnsw.efSearch, index.index.hnsw.efConstruction) == (1024, 80)


def test_flat_kind_never_switches_and_ann_kind_starts_approximate():
    v = unit_rows(20)
    flat = VectorIndex(16, IndexSettings(kind="flat", flat_max=0)).add(v, [str(i) for i in range(20)])
    assert flat.exact
    ann = VectorIndex(16, IndexSettings(kind="ann")).add(v, [str(i) for i in range(20)])
    assert not ann.exact


@pytest.fixture(scope="module")
def clustered():
    """20,000 synthetic windows in 1,000 documents of 50 topics (dim 32) and 100 queries near stored
    windows, with their exact top 10. Big enough that efSearch 1024 is no exhaustive search: a graph
    built with too few links misses here (measured: HNSW4 built at efConstruction 8 recalls 0.88
    even at efSearch 1024; the default settings 1.00)."""
    vectors, _ = synthetic_corpus(20_000, windows_per_doc=20, dim=32, seed=5)
    queries = vectors[::200] + 0.05 * unit_rows(100, 32, seed=6)
    ids = [str(i) for i in range(len(vectors))]
    _, exact = VectorIndex(32, IndexSettings(kind="flat")).add(vectors, ids).search(queries, 10)
    return vectors, ids, queries, exact


def test_default_approximate_settings_recall_the_flat_top_10(clustered):
    vectors, ids, queries, exact = clustered
    ann = VectorIndex(32, IndexSettings(kind="ann")).add(vectors, ids)
    _, found = ann.search(queries, 10)
    assert found.shape == (100, 10)
    assert recall_at_k(found, exact) >= 0.98


def test_the_set_tells_a_badly_built_graph_from_a_good_one(clustered):
    # the control: 4 links a node and a shallow construction, searched at the default efSearch 1024
    vectors, ids, queries, exact = clustered
    bad = VectorIndex(32, IndexSettings(kind="ann", factory="HNSW4", build="efConstruction=8")).add(vectors, ids)
    assert bad.index.hnsw.efSearch == 1024
    assert recall_at_k(bad.search(queries, 10)[1], exact) < 0.95


def test_the_switch_at_its_threshold_keeps_every_vector_findable(clustered):
    # flat up to flat_max vectors, approximate from flat_max + 1: the vectors held before the switch are
    # moved into the graph, so the switched index recalls like one built approximate from the start
    vectors, ids, queries, exact = clustered
    n = len(vectors)
    index = VectorIndex(32, IndexSettings(flat_max=n - 1)).add(vectors[:n - 1], ids[:n - 1])
    assert index.exact and len(index) == n - 1
    index.add(vectors[n - 1:], ids[n - 1:])
    assert not index.exact and index.index.ntotal == n and index.index.hnsw.efSearch == 1024
    assert recall_at_k(index.search(queries, 10)[1], exact) >= 0.98
    assert index.search(vectors[n - 1], 1)[1][0, 0] == n - 1           # the vector that tipped it over
    # the shipped threshold: 200,000 vectors are searched exactly, one more turns the index approximate
    default = IndexSettings()
    assert default.flat_max == 200_000
    assert not default.approximate_at(200_000) and default.approximate_at(200_001)


def test_approximate_index_saves_and_loads_with_its_search_parameters(tmp_path):
    v = unit_rows(300)
    index = VectorIndex(16, IndexSettings(kind="ann", search="efSearch=64")).add(v, [str(i) for i in range(300)])
    loaded = VectorIndex.load(index.save(tmp_path / "idx"))
    assert not loaded.exact and loaded.index.hnsw.efSearch == 64
    assert np.array_equal(loaded.search(v[:5], 7)[1], index.search(v[:5], 7)[1])


def test_ivf_index_cuts_empty_slots_for_a_single_query():
    # 4 IVF cells over 200 vectors, 1 probed: a query sees one cell (< 150 vectors), so faiss
    # leaves trailing slots empty (-1); the index cuts them instead of returning bogus rows
    v = unit_rows(200, seed=3)
    index = VectorIndex(16, IndexSettings(kind="ann", factory="IVF4,Flat", build="", search="nprobe=1"))
    index.add(v, [str(i) for i in range(200)])
    scores, rows = index.search(v[0], 150)
    assert 0 < rows.shape[1] < 150 and (rows >= 0).all() and rows[0, 0] == 0
    assert np.all(np.diff(scores[0]) <= 1e-6)            # best first


@pytest.mark.parametrize("kwargs,message", [({"kind": "exact"}, "kind must be one of"),
                                            ({"flat_max": -1}, "flat_max must be an integer >= 0")])
def test_index_settings_reject_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        IndexSettings(**kwargs)
