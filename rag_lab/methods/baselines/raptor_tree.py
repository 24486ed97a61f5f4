"""RAPTOR's tree: layer after layer, cluster the nodes and summarise every cluster into a parent.

After Sarthi et al., "RAPTOR: Recursive Abstractive Processing for Tree-Organized Retrieval" (§3):
the leaves are the first layer; each further layer holds one summary per cluster of the layer
below (``raptor_cluster.cluster_layer``), embedded by the same model. As in the authors' code
(``cluster_tree_builder.py``) the tree stops after ``levels`` summary layers, or earlier when a
layer has at most ``reduce_dim + 1`` nodes (too few to reduce and cluster); and every cluster,
a one-node cluster too, gets a summary, so each upper layer consists of summaries only.

Ours: the tree also stops when clustering would not make the next layer smaller (as many
clusters as nodes), since another layer would only restate this one; a cluster whose summary
comes back empty gets no parent.

One tree per document (``merge_trees``) is RAPTOR's own setting for QASPER, NarrativeQA and QuALITY;
the retriever chooses (``RaptorConfig.tree``).

Summary chunks are derived: ``start == end == -1``, ``meta["source_chunk_ids"]`` the leaves
under them, ``meta["children"]`` the nodes one level down, ``meta["level"]``; ``doc_id`` is the
document most of their leaves come from (ties: the first), ``meta["doc_ids"]`` all of them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ...core.types import Chunk
from ...reasoning.batch import run_batch
from .config import RaptorConfig
from .raptor_cluster import LayerClustering, cluster_layer

Embed = Callable[[list[str]], np.ndarray]
Summarize = Callable[[list[str]], str]
CountTokens = Callable[[str], int]


@dataclass
class Tree:
    """What ``build_tree`` made: the summary chunks of every level, their vectors, each level's
    clustering, and why the tree stopped growing."""

    summaries: list[Chunk]
    vectors: np.ndarray
    clusterings: list[LayerClustering] = field(default_factory=list)
    stop_reason: str = ""


def main_doc(leaves: Sequence[Chunk]) -> tuple[str, list[str]]:
    """The document most of the leaves come from (ties: the first seen) and all of them in order."""
    counts = Counter(c.doc_id for c in leaves)
    order = list(dict.fromkeys(c.doc_id for c in leaves))
    return max(order, key=lambda d: (counts[d], -order.index(d))), order


def build_tree(leaves: Sequence[Chunk], leaf_vectors: np.ndarray, embed: Embed, summarize: Summarize,
               count_tokens: CountTokens, config: RaptorConfig, id_prefix: str = "raptor") -> Tree:
    """The summary layers above ``leaves`` (rules in the module docstring). ``count_tokens``
    measures texts against ``config.max_cluster_tokens``; summaries are named ``<id_prefix>-L<level>-<j>``."""
    leaf_vectors = np.asarray(leaf_vectors)
    if len(leaves) != len(leaf_vectors):
        raise ValueError(f"got {len(leaf_vectors)} vectors for {len(leaves)} leaves")
    leaf_row = {c.id: i for i, c in enumerate(leaves)}
    layer, vectors = list(leaves), leaf_vectors
    tokens = [count_tokens(c.text) for c in layer]
    summaries: list[Chunk] = []
    summary_vectors: list[np.ndarray] = []
    clusterings: list[LayerClustering] = []
    stop = f"reached levels = {config.levels}"
    for level in range(1, config.levels + 1):
        if len(layer) <= config.reduce_dim + 1:
            stop = (f"level {level - 1} has {len(layer)} node(s), at most reduce_dim + 1 = {config.reduce_dim + 1}: "
                    "too few to cluster")
            break
        clustering = cluster_layer(vectors, tokens, config)
        if len(clustering.clusters) >= len(layer):
            stop = f"clustering level {level - 1} gave as many clusters as nodes ({len(layer)})"
            break
        made: list[Chunk] = []
        texts = run_batch(lambda members: summarize([layer[i].text for i in members]), clustering.clusters,
                          f"RAPTOR level {level} summaries")
        for j, (members, text) in enumerate(zip(clustering.clusters, texts)):
            children = [layer[i] for i in members]
            if not text.strip():
                continue
            sources = sorted({s for c in children for s in (c.meta.get("source_chunk_ids") or [c.id])},
                             key=leaf_row.__getitem__)
            doc_id, doc_ids = main_doc([leaves[leaf_row[s]] for s in sources])
            made.append(Chunk(id=f"{id_prefix}-L{level}-{j}", doc_id=doc_id, text=text, start=-1, end=-1,
                              meta={"chunker": "raptor", "level": level, "children": [c.id for c in children],
                                    "source_chunk_ids": sources, "doc_ids": doc_ids}))
        clusterings.append(clustering)
        if not made:
            stop = f"every summary of level {level} came back empty"
            break
        vectors = np.asarray(embed([c.text for c in made]))
        summaries += made
        summary_vectors += list(vectors)
        layer, tokens = made, [count_tokens(c.text) for c in made]
    dim = leaf_vectors.shape[1] if leaf_vectors.ndim == 2 else 0
    stacked = np.stack(summary_vectors) if summary_vectors else np.zeros((0, dim), np.float32)
    return Tree(summaries, stacked, clusterings, stop)


def merge_trees(trees: Sequence[Tree], dim: int) -> Tree:
    """Several trees (one per document) as one: their summaries and vectors in order, each level's
    clusterings added up (a level's cluster lists are each tree's own), and how many trees stopped
    for each reason."""
    summaries = [c for t in trees for c in t.summaries]
    vectors = np.concatenate([t.vectors for t in trees]) if summaries else np.zeros((0, dim), np.float32)
    clusterings = []
    for level in range(max((len(t.clusterings) for t in trees), default=0)):
        parts = [t.clusterings[level] for t in trees if len(t.clusterings) > level]
        clusterings.append(LayerClustering([c for p in parts for c in p.clusters], sum(p.global_k for p in parts),
                                           local_ks=[k for p in parts for k in p.local_ks],
                                           reclustered=sum(p.reclustered for p in parts),
                                           forced_splits=sum(p.forced_splits for p in parts)))
    reasons = Counter(t.stop_reason.split(":")[0] for t in trees)
    stop = f"{len(trees)} trees, one per document; stopped: " + "; ".join(f"{n} x {r}" for r, n in reasons.items())
    return Tree(summaries, vectors, clusterings, stop)


def levels_table(tree: Tree, leaves: int) -> list[dict]:
    """One row per level for display: nodes, and for the levels that were clustered the global
    k, the local cluster counts, the re-clustered oversized clusters and the clusters made."""
    per_level = Counter(c.meta["level"] for c in tree.summaries)
    rows = [{"level": 0, "nodes": leaves}] + [{"level": lv, "nodes": per_level[lv]} for lv in sorted(per_level)]
    for row, clustering in zip(rows, tree.clusterings):
        row.update({"global clusters (BIC)": clustering.global_k,
                    "local clusters": sum(clustering.local_ks),
                    "re-clustered (too long)": clustering.reclustered,
                    "clusters summarised": len(clustering.clusters)})
    return rows
