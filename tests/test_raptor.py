"""RAPTOR on small synthetic inputs whose right answer is known: BIC on Gaussian blobs, a layer's
clusters following well separated blobs, the soft-membership threshold, re-clustering of
oversized clusters, the collapsed tree's token budget, the tree's levels, determinism."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluation import harness
from rag_lab.methods.baselines import raptor_tree
from rag_lab.methods.baselines.config import RaptorConfig
from rag_lab.methods.baselines.raptor import RaptorRetriever, collapsed_tree, summary_kind
from rag_lab.methods.baselines.raptor_cluster import (LayerClustering, best_mixture, cluster_layer, soft_clusters,
                                                      umap_reduce)
from rag_lab.methods.baselines.raptor_tree import build_tree
from rag_lab.reasoning.offline import OfflineReasoner
from rag_lab.core.types import Chunk, Document
from sketch_fakes import TableReasoner


def blobs(n_blobs: int, per: int, seed: int, dim: int = 32, spread: float = 0.05) -> np.ndarray:
    """``per`` points around each of the first ``n_blobs`` unit axes (pairwise distance ~1.41,
    spread 0.05 per coordinate, i.e. ~0.4 across a blob in 32 dimensions): well separated."""
    rng = np.random.default_rng(seed)
    return np.vstack([np.eye(dim)[b] + rng.normal(0, spread, (per, dim)) for b in range(n_blobs)])


@pytest.mark.parametrize("n_blobs", [2, 3])
def test_bic_counts_gaussian_blobs(n_blobs):
    # 50 points per blob, sd 0.1, centres 5 apart, in 2-D. Another component costs 6 parameters,
    # 6 ln(n) ~ 30 of BIC. One Gaussian over two blobs must stretch its variance along the line
    # between them from 0.01 to ~6, losing ~ (100 / 2) ln(600) ~ 320 nats (640 of BIC); splitting
    # a true Gaussian blob gains only noise. So the lowest BIC is at k = number of blobs.
    rng = np.random.default_rng(n_blobs)
    centres = [(0, 0), (5, 0), (0, 5)][:n_blobs]
    points = np.vstack([np.array(c) + rng.normal(0, 0.1, (50, 2)) for c in centres])
    mixture = best_mixture(points, max_clusters=50, seed=0)
    assert mixture.k == n_blobs
    assert list(mixture.bics) == list(range(1, 50))                  # k = 1 .. min(50, n) - 1, as RAPTOR's code
    assert sorted(soft_clusters(mixture.probs, 0.1)) == [list(range(50 * b, 50 * (b + 1))) for b in range(n_blobs)]
    with pytest.raises(ValueError, match="needs more than 2 points"):
        best_mixture(points[:2], 50, 0, min_k=2)


@pytest.mark.parametrize("n_blobs", [2, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_layer_clusters_are_the_blobs(n_blobs, seed):
    # Six points per blob: the global UMAP's kNN graph (n_neighbors = int(sqrt(n - 1)) = 3 or 4 < 6)
    # falls apart into one piece per blob, which UMAP lays out apart, and a global cluster of
    # 6 <= reduce_dim + 1 nodes is not split by a local stage. Every token count is below the
    # cluster limit, so nothing is re-clustered: the clusters are exactly the blobs.
    layer = cluster_layer(blobs(n_blobs, 6, seed), [100] * (6 * n_blobs), RaptorConfig(seed=seed))
    assert layer.clusters == [list(range(6 * b, 6 * (b + 1))) for b in range(n_blobs)]
    assert layer.global_k == n_blobs and layer.local_ks == [1] * n_blobs and layer.reclustered == 0


def test_soft_membership_threshold():
    probs = np.array([[0.85, 0.15, 0.00],
                      [0.50, 0.45, 0.05],
                      [0.10, 0.10, 0.80],     # exactly at the threshold: not a member ("exceeds")
                      [0.92, 0.08, 0.00]])
    # component 0: rows 0, 1, 3 (most likely there); component 1: rows 0 (0.15) and 1 (0.45);
    # component 2: row 2 only
    assert soft_clusters(probs, 0.1) == [[0, 1, 3], [0, 1], [2]]
    assert soft_clusters(probs, 0.1, hard=True) == [[0, 1, 3], [2]]     # component 1 is nobody's best: dropped
    # twelve equal posteriors (1/12 < 0.1): the node still joins its most likely component (the first)
    assert soft_clusters(np.full((1, 12), 1 / 12), 0.1) == [[0]]
    with pytest.raises(ValueError, match="matrix"):
        soft_clusters(np.array([0.5, 0.5]), 0.1)


def test_oversized_clusters_are_clustered_again():
    # two blobs of six 100-token nodes, limit 350: each blob (600 tokens) is too long for the
    # summariser and is clustered again until every cluster is one node or at most 3 nodes
    vectors = blobs(2, 6, seed=0)
    layer = cluster_layer(vectors, [100] * 12, RaptorConfig(max_cluster_tokens=350))
    assert layer.reclustered >= 2
    assert sorted({i for c in layer.clusters for i in c}) == list(range(12))
    for members in layer.clusters:
        assert len({i // 6 for i in members}) == 1, members            # never across the two blobs
        assert len(members) == 1 or 100 * len(members) <= 350, members


def test_indivisible_oversized_cluster_is_split_by_force():
    # two nodes: too few to reduce, so they are one cluster; 2 x 400 tokens > 500, and clustering
    # them again returns them whole, so the forced split gives one cluster each
    layer = cluster_layer(np.array([[1.0, 0.0], [0.0, 1.0]]), [400, 400], RaptorConfig(max_cluster_tokens=500))
    assert layer.clusters == [[0], [1]] and layer.forced_splits == 1
    assert cluster_layer(np.array([[1.0, 0.0], [0.0, 1.0]]), [400, 400], RaptorConfig()).clusters == [[0, 1]]
    with pytest.raises(ValueError, match="got 1 token counts for 2 vectors"):
        cluster_layer(np.zeros((2, 2)), [1], RaptorConfig())


def test_fixed_seed_gives_the_same_clusters():
    vectors = blobs(3, 8, seed=5)
    first = cluster_layer(vectors, [100] * 24, RaptorConfig(seed=7))
    again = cluster_layer(vectors, [100] * 24, RaptorConfig(seed=7))
    assert first.clusters == again.clusters and first.global_bics == again.global_bics
    np.testing.assert_array_equal(umap_reduce(vectors, 10, 4, seed=3), umap_reduce(vectors, 10, 4, seed=3))
    assert umap_reduce(vectors, 10, 4, seed=3).shape == (24, 10)
    assert umap_reduce(vectors[:5], 10, 4, seed=3).shape == (5, 3)     # at most n - 2 dimensions
    with pytest.raises(ValueError, match="at least 3 points"):
        umap_reduce(vectors[:2], 10, 4, seed=3)


def test_collapsed_tree_token_budget():
    tokens = [50, 60, 70, 30]
    assert collapsed_tree(tokens, 180, 10) == (3, "budget")   # 50 + 60 + 70 = 180 fits exactly; +30 would not
    assert collapsed_tree(tokens, 179, 10) == (2, "budget")   # 180 > 179: the third node ends the list
    assert collapsed_tree(tokens, 180, 2) == (2, "k")
    assert collapsed_tree(tokens, 1000, 10) == (4, "all nodes")
    assert collapsed_tree([200, 10], 180, 10) == (0, "budget")  # RAPTOR does not skip to shorter nodes
    with pytest.raises(ValueError, match="budget and k must be positive"):
        collapsed_tree(tokens, 0, 3)


# three blobs of six leaves; a summary sits on its blob's axis (all three summaries: one layer of
# 3 <= reduce_dim + 1 nodes, where the tree stops)
LEAVES = [Chunk(f"{g}{i}", f"doc-{g}", f"{g}{i} text", 10 * i, 10 * i + 7) for g in "abc" for i in range(6)]


def embed_summary(texts):
    return np.array([np.eye(32)["abc".index(t[2])] for t in texts])


def summarize(texts):
    return "S(" + "|".join(texts) + ")"


def words(text):
    return len(text.split())


def test_tree_levels_children_and_stop():
    tree = build_tree(LEAVES, blobs(3, 6, seed=0), embed_summary, summarize, words, RaptorConfig())
    assert [(s.id, s.meta["level"], s.meta["children"]) for s in tree.summaries] == [
        (f"raptor-L1-{b}", 1, [f"{g}{i}" for i in range(6)]) for b, g in enumerate("abc")]
    assert tree.summaries[0].text == "S(" + "|".join(f"a{i} text" for i in range(6)) + ")"
    assert [(s.start, s.end, s.doc_id, s.meta["doc_ids"]) for s in tree.summaries] == [
        (-1, -1, f"doc-{g}", [f"doc-{g}"]) for g in "abc"]
    assert tree.summaries[1].meta["source_chunk_ids"] == [f"b{i}" for i in range(6)]
    assert tree.vectors.shape == (3, 32) and len(tree.clusterings) == 1
    assert tree.stop_reason.startswith("level 1 has 3 node(s), at most reduce_dim + 1 = 11")
    rows = raptor_tree.levels_table(tree, len(LEAVES))
    assert rows[0] == {"level": 0, "nodes": 18, "global clusters (BIC)": 3, "local clusters": 3,
                       "re-clustered (too long)": 0, "clusters summarised": 3}
    assert rows[1] == {"level": 1, "nodes": 3}
    none = build_tree(LEAVES, blobs(3, 6, seed=0), embed_summary, summarize, words, RaptorConfig(levels=0))
    assert none.summaries == [] and none.vectors.shape == (0, 32) and none.stop_reason == "reached levels = 0"
    with pytest.raises(ValueError, match="got 3 vectors for 18 leaves"):
        build_tree(LEAVES, blobs(3, 1, seed=0), embed_summary, summarize, words, RaptorConfig())


def test_tree_stops_when_clustering_does_not_shrink_the_layer(monkeypatch):
    monkeypatch.setattr(raptor_tree, "cluster_layer",
                        lambda vectors, tokens, config: LayerClustering([[i] for i in range(len(vectors))]))
    tree = build_tree(LEAVES, blobs(3, 6, seed=0), embed_summary, summarize, words, RaptorConfig())
    assert tree.summaries == [] and tree.stop_reason == "clustering level 0 gave as many clusters as nodes (18)"


SENTENCES = {   # fourteen one-sentence documents on three topics (more than reduce_dim + 1 leaves)
    "p": ["Pesto comes from Genoa.", "Genoese pesto needs basil and pine nuts.", "Pecorino goes into pesto.",
          "Ligurian cooks pound pesto in a mortar.", "Trofie are served with pesto."],
    "r": ["Saffron colours risotto alla milanese.", "Risotto is stirred slowly with broth.",
          "Carnaroli rice suits risotto.", "Milanese risotto is finished with butter."],
    "m": ["Milan is the capital of Lombardy.", "Milan has a gothic cathedral.", "La Scala is an opera house in Milan.",
          "Milan hosts a large design fair.", "The Navigli are canals of Milan."],
}
DOCS = [Document(f"{t}{i}", text) for t, texts in SENTENCES.items() for i, text in enumerate(texts)]


def test_raptor_retriever_collapsed_tree(embedder):
    reasoner = TableReasoner()
    r = harness.build(RaptorRetriever(reasoner=reasoner, embedder=embedder, context_tokens=60), DOCS)
    leaves = [c for c in r.chunks if c.is_span]
    summaries = [c for c in r.chunks if not c.is_span]
    assert len(leaves) == 14 and summaries and r.tree_levels()[0] == 14
    assert sum(r.tree_levels()) == len(r.chunks) == len(r.index) == len(r.node_tokens)
    assert reasoner.usage.per_job["summarize"].llm_calls == len(summaries) == r.build_cost.llm_calls
    assert [job for job, _ in r.planned_llm_calls(DOCS)] == ["summarize"] * len(summaries)
    ret = harness.retrieve(r, "Where is pesto from?", len(r.chunks))
    scores = [h.score for h in ret.hits]
    assert scores == sorted(scores, reverse=True) and {h.via for h in ret.hits} <= {"leaf", "summary-L1", "summary-L2"}
    # the budget of 60 cl100k tokens ends the list where the next node in cosine order would pass it
    qvec = embedder.encode_one("Where is pesto from?")
    rank = sorted(range(len(r.chunks)), key=lambda i: -float(r.vectors[i] @ qvec))
    used, expected = 0, 0
    for i in rank:
        if used + r.node_tokens[i] > 60:
            break
        used, expected = used + r.node_tokens[i], expected + 1
    assert len(ret.hits) == expected and ret.trace["stopped_by"] == "budget" and ret.trace["context_tokens"] == used
    two = harness.retrieve(r, "Where is pesto from?", 2)
    assert [h.chunk.id for h in two.hits] == [h.chunk.id for h in ret.hits[:2]] and two.trace["stopped_by"] == "k"
    assert r.summary_kind() == "abstractive (table)"
    assert r.setting_note().endswith("summaries: abstractive (table) (RAPTOR: gpt-3.5-turbo, abstractive).")
    assert summary_kind(OfflineReasoner(embedder)) == "extractive (offline reasoner)"
    assert [row["level"] for row in r.tree_table()] == list(range(len(r.tree_levels())))


def test_raptor_config_checks():
    with pytest.raises(ValueError, match="local_neighbors must be an integer >= 2"):
        RaptorRetriever(local_neighbors=1)
    with pytest.raises(ValueError, match="max_clusters must be an integer >= 2"):
        RaptorRetriever(max_clusters=1)
    with pytest.raises(ValueError, match="context_tokens must be a positive number"):
        RaptorRetriever(context_tokens=0)


def long_documents(mark: bool) -> list[Document]:
    """Two documents of fourteen sentences each (more than reduce_dim + 1 leaves of 8 tokens apiece),
    marked by their loader as the sole targets of their questions when ``mark``."""
    meta = {"questions_target": "document"} if mark else {}
    return [Document(t, " ".join(SENTENCES[t] * 3), meta=dict(meta)) for t in ("p", "m")]


def test_one_tree_per_document_where_questions_target_one_document(embedder):
    docs = long_documents(mark=True)
    r = harness.build(RaptorRetriever(reasoner=TableReasoner(), embedder=embedder, chunk_size=8, levels=1), docs, reuse=False)
    assert r.tree_scope == "document" and r.tree_scope_note().startswith("one tree per document")
    summaries = [c for c in r.chunks if not c.is_span]
    assert summaries, "no tree grew"
    # every summary sits over the leaves of one document and is named after it
    for s in summaries:
        assert s.meta["doc_ids"] == [s.doc_id] and s.id.startswith(f"raptor-{s.doc_id}-L1-")
    assert {s.doc_id for s in summaries} == {"p", "m"}
    leaves = [c for c in r.chunks if c.is_span]
    table = r.tree_table()
    assert table[0]["nodes"] == len(leaves) and table[1]["nodes"] == len(summaries)
    assert table[0]["clusters summarised"] == len(summaries)       # both trees' clusters, added up
    assert r.tree.stop_reason.startswith("2 trees, one per document; stopped: 2 x reached levels = 1")
    # the same documents unmarked, or tree="corpus": one tree over both
    plain = RaptorRetriever(reasoner=TableReasoner(), embedder=embedder, chunk_size=8, levels=1)
    assert plain.resolved_tree(long_documents(mark=False)) == "corpus"
    assert RaptorRetriever(tree="corpus").resolved_tree(docs) == "corpus"
    assert RaptorRetriever(tree="document").resolved_tree(long_documents(mark=False)) == "document"
    with pytest.raises(ValueError, match="tree must be one of 'auto', 'document', 'corpus'"):
        RaptorRetriever(tree="chapter")


def test_knn_graph_rounds_distances_and_breaks_ties_by_row():
    from rag_lab.methods.baselines.raptor_cluster import KNN_DISTANCE_STEP, knn_graph

    assert KNN_DISTANCE_STEP == 0.01
    # rows 0 and 1 are the same direction (distance 0); row 2 is orthogonal to both (distance 1);
    # row 3 has cosine 0.996 with row 0 (distance 0.004, rounded to 0.00) and ~0.089 with row 2.
    a = np.array([1.0, 0.0, 0.0])
    d = np.array([0.996, np.sqrt(1 - 0.996 ** 2), 0.0])
    vectors = np.stack([a, a, [0.0, 1.0, 0.0], d]).astype(np.float32)
    indices, distances = knn_graph(vectors, 3)
    assert indices[0].tolist() == [0, 1, 3]           # itself, then 1 and 3 both at 0.00: by row
    assert indices[1].tolist() == [1, 0, 3]
    assert indices[2].tolist() == [2, 3, 0]           # 3 at 1 - 0.0896 = 0.91; 0 and 1 at 1.00: row 0
    assert distances[0].tolist() == [0.0, 0.0, 0.0]
    assert distances[2].tolist() == pytest.approx([0.0, 0.91, 1.0])


def test_umap_runs_on_our_graph_for_the_generic_cpu():
    import os

    from rag_lab.methods.baselines.raptor_cluster import umap_reduce

    assert os.environ["NUMBA_CPU_NAME"] == "generic"      # set when rag_lab was imported
    points = np.random.default_rng(0).normal(size=(30, 8)).astype(np.float32)
    first = umap_reduce(points, 3, 5, seed=0)
    assert first.shape == (30, 3) and np.array_equal(first, umap_reduce(points, 3, 5, seed=0))


def test_knn_graph_notes_a_node_that_rounding_could_bring_inside_the_cut_with_its_true_gap():
    from rag_lab.core import ties
    from rag_lab.methods.baselines.raptor_cluster import knn_graph

    # from row 0, at angle t with 1 - cos t = d: row 1 at d = 0.10, row 2 at 0.22 (both clearly rounded);
    # row 3 at 0.215 + 2e-6, rounded up to 0.22 and kept out by row order (k = 3: itself, 1, 2), but
    # 2e-6 from the 0.215 boundary: rounded down (0.21) it would come in before row 2 -> noted, gap 2e-6;
    # row 4 at 0.225 + 2e-6: rounded down it ties row 2 at 0.22 and stays out by row -> not noted.
    d = [0.0, 0.10, 0.22, 0.215 + 2e-6, 0.225 + 2e-6]
    vectors = np.array([[np.cos(np.arccos(1 - x)), np.sin(np.arccos(1 - x))] for x in d])
    ties.forget()
    with ties.collecting() as found:
        indices, _ = knn_graph(vectors, 3)
    assert indices[0].tolist() == [0, 1, 2]
    from_0 = [t for t in found if t.first == "node 0"]
    assert [(t.second, round(t.gap, 8)) for t in from_0] == [("node 3", 2e-6)]
