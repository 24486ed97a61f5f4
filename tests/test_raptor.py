"""RAPTOR on a toy set: tree levels, cluster membership and summary chunks, with hand-made vectors
(two tight groups far apart) and a table reasoner whose summary is "S(" + texts joined + ")"."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.methods.baselines.config import RaptorConfig
from rag_lab.methods.baselines.raptor import RaptorRetriever, build_tree, cluster_layer
from rag_lab.types import Chunk, Document
from sketch_fakes import TableReasoner

# five points around (1, 0) and five around (0, 1), each a plus-shaped spread of 0.05
OFFSETS = [(0, 0), (0.05, 0), (-0.05, 0), (0, 0.05), (0, -0.05)]
LEAVES = [Chunk(f"{g}{i}", f"doc-{g}", f"{g}{i} text", 10 * i, 10 * i + 7) for g in "ab" for i in range(5)]
VECTORS = np.array([(1 + dx, dy) for dx, dy in OFFSETS] + [(dx, 1 + dy) for dx, dy in OFFSETS])


def embed_summary(texts):
    """A summary sits on its group's centre: "S(a…" at (1, 0), "S(b…" at (0, 1), the root between."""
    centre = {"S(a": (1.0, 0.0), "S(b": (0.0, 1.0)}
    return np.array([centre.get(t[:3], (0.5, 0.5)) for t in texts])


def summarize(texts):
    return "S(" + "|".join(texts) + ")"


def test_bic_picks_the_two_groups():
    c = cluster_layer(VECTORS, RaptorConfig(seed=0))
    # 10 points in 2-D (dim = min(10, 10 // 4, 2) = 2); k from ceil(10/10) = 1 upwards.
    # One Gaussian must stretch over both groups (variance ~0.25 along the line between them);
    # two fit the two groups with variance ~0.001 each, a far higher likelihood for 6 more
    # parameters (BIC -42.2 against -7.7). Splitting a group further gains less than its 6
    # parameters cost (k = 3, clusters of 5, 3 and 2: BIC -41.4); from k = 4 on the mixtures
    # owe their lower BIC (-52.0) to one-point components, which are inadmissible. The scan
    # stops 5 k after the last improvement (k = 7).
    assert c.dim == 2 and c.k == 2
    assert c.bics[2] < c.bics[1] and c.bics[2] < c.bics[3] and c.bics[4] < c.bics[2]
    assert max(c.bics) == 7
    assert c.clusters == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_tree_levels_and_membership():
    summaries, vectors, clusterings = build_tree(LEAVES, VECTORS, embed_summary, summarize, RaptorConfig(levels=3))
    # level 1: the two groups; level 2: two nodes -> k can only be 1 -> one root; level 3: one node, stop
    assert [(s.id, s.meta["level"], s.meta["children"]) for s in summaries] == [
        ("raptor-L1-0", 1, ["a0", "a1", "a2", "a3", "a4"]),
        ("raptor-L1-1", 1, ["b0", "b1", "b2", "b3", "b4"]),
        ("raptor-L2-0", 2, ["raptor-L1-0", "raptor-L1-1"]),
    ]
    assert summaries[0].text == "S(a0 text|a1 text|a2 text|a3 text|a4 text)"
    assert summaries[2].meta["source_chunk_ids"] == [c.id for c in LEAVES]
    assert [(s.start, s.end) for s in summaries] == [(-1, -1)] * 3
    assert summaries[1].doc_id == "doc-b" and summaries[1].meta["doc_ids"] == ["doc-b"]
    # the root's leaves tie 5-5 between the documents: the first document wins
    assert summaries[2].doc_id == "doc-a" and summaries[2].meta["doc_ids"] == ["doc-a", "doc-b"]
    assert vectors.shape == (3, 2) and [c.k for c in clusterings] == [2, 1]
    # levels=1 stops after the first layer of summaries
    one, _, _ = build_tree(LEAVES, VECTORS, embed_summary, summarize, RaptorConfig(levels=1))
    assert [s.id for s in one] == ["raptor-L1-0", "raptor-L1-1"]


def test_singletons_move_up_unsummarised():
    # three points: two together, one far away. dim = max(1, min(10, 3 // 4)) = 1; k in 1..2.
    # k = 2 gives [0, 1] and [2]: a one-point component, inadmissible, so k = 1 (all three together).
    c = cluster_layer(np.array([(1.0, 0.0), (0.99, 0.01), (0.0, 1.0)]), RaptorConfig(seed=0))
    assert c.k == 1 and c.clusters == [[0, 1, 2]]
    with pytest.raises(ValueError, match="got 3 vectors for 10 leaves"):
        build_tree(LEAVES, VECTORS[:3], embed_summary, summarize, RaptorConfig())


def test_raptor_retriever_collapsed_tree(embedder):
    docs = [Document("a", "Saffron colours risotto alla milanese. Cooks in Milan stir it slowly."),
            Document("b", "Milan is the capital of Lombardy. The city has many old trattorias."),
            Document("c", "Pesto comes from Genoa. It needs basil, pine nuts and pecorino.")]
    reasoner = TableReasoner()
    r = RaptorRetriever(reasoner=reasoner, embedder=embedder, levels=2).build(docs)
    # three one-piece leaves -> dim 1, k in 1..2; whatever k is chosen, every summary is a derived
    # chunk over leaves, indexed together with the leaves
    leaves = [c for c in r.chunks if c.is_span]
    summaries = [c for c in r.chunks if not c.is_span]
    assert [c.doc_id for c in leaves] == ["a", "b", "c"] and summaries
    assert r.tree_levels()[0] == 3 and sum(r.tree_levels()) == len(r.chunks) == len(r.index)
    assert reasoner.usage.per_job["summarize"].llm_calls == len(summaries) == r.build_cost.llm_calls
    ret = r.retrieve("Where is pesto from?", 10)
    assert len(ret.hits) == len(r.chunks)                              # collapsed tree: every node
    assert [h.score for h in ret.hits] == sorted((h.score for h in ret.hits), reverse=True)
    assert {h.via for h in ret.hits} <= {"leaf", "summary-L1", "summary-L2"}
    planned = r.planned_llm_calls(docs)
    assert [job for job, _ in planned] == ["summarize"] * len(summaries)
    with pytest.raises(ValueError, match="max_cluster_size must be a positive number"):
        RaptorRetriever(max_cluster_size=0)
