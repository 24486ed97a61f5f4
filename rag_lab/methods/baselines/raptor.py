"""RAPTOR baseline: a tree of cluster summaries over the leaf chunks, searched as one collapsed layer.

After Sarthi et al., "RAPTOR: Recursive Abstractive Processing for Tree-Organized Retrieval", as the
SKETCH paper uses it. Leaves are recursive-splitter chunks of 100 MiniLM tokens (no overlap, as
RAPTOR). Then, up to ``levels`` times: the current layer's embeddings are reduced, clustered by
a Gaussian mixture whose number of components minimises BIC (scikit-learn, seeded), every
cluster is summarised by the reasoner, and the summaries are embedded as the next layer.
Retrieval is RAPTOR's "collapsed tree": leaves and summaries in one FAISS index, top-k by cosine.

Where we differ from RAPTOR, and why:
- reduction: RAPTOR reduces with UMAP, which is not installed here (umap-learn is not in the
  pinned environment). We use PCA to ``reduce_dim`` = 10 dimensions (RAPTOR's target
  dimension), capped at n // 4 for a layer of n nodes (at least four points per dimension, so
  a full-covariance mixture on an upper layer of a dozen summaries is not fitted in 10-D).
- number of clusters: on PCA-reduced MiniLM vectors of one small corpus BIC alone picks a
  single component (one summary of everything), because PCA does not pull neighbours into
  tight clumps the way UMAP does. RAPTOR handles oversized clusters by re-clustering them; we
  instead let BIC choose among k in [ceil(n / max_cluster_size), min(max_clusters, n - 1)]
  (max_cluster_size 10; max_clusters 50 as RAPTOR's), one stage instead of RAPTOR's global then
  local clustering. k is scanned upwards and the scan stops once ``patience`` (5) k in a row
  have not improved the best BIC (the curve rises steadily past its minimum; this saves most
  of the fits).
- admissible mixtures: a mixture whose most-likely assignment leaves a component with fewer
  than two nodes is not chosen. With few points in many dimensions such a collapsed
  component's covariance shrinks to the regulariser and its likelihood explodes, so BIC would
  reward it, and a one-node cluster would only be summarised into a near copy of that node.
  If no k is admissible the BIC-best k is used as it is.
- a cluster of one node is not summarised (its summary would be a near copy): the node moves
  up to the next layer unchanged.
- membership is soft as in RAPTOR: a node joins every cluster whose posterior is at least
  ``membership_threshold`` (0.1), and always its most likely one.
- collapsed-tree retrieval takes the top k nodes rather than filling a token budget, so every
  method is compared at the same k.

A layer stops the tree when it has fewer than two nodes, or when the next layer would not be
smaller. Summary chunks are derived: ``start == end == -1``,
``meta["source_chunk_ids"]`` the leaf chunks under them, ``meta["children"]`` the nodes one
level down, ``meta["level"]``; ``doc_id`` is the document most of their leaves come from
(ties: the first), ``meta["doc_ids"]`` all of them.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ...progress import track
from ...retrievers import Retriever, register
from ...types import Chunk, Cost, Document, Hit, Retrieval
from .config import RaptorConfig

Embed = Callable[[list[str]], np.ndarray]
Summarize = Callable[[list[str]], str]


@dataclass
class Clustering:
    """One layer's clustering: member rows per cluster, the k chosen and the BIC of every k tried."""

    clusters: list[list[int]]
    k: int
    bics: dict[int, float] = field(default_factory=dict)
    dim: int = 0


def cluster_layer(vectors: np.ndarray, config: RaptorConfig) -> Clustering:
    """PCA, then the BIC-best admissible Gaussian mixture, then soft membership (module docstring);
    ``config`` gives the seed, ``reduce_dim``, ``max_cluster_size``, ``max_clusters``,
    ``membership_threshold`` and ``patience``."""
    from sklearn.decomposition import PCA
    from sklearn.mixture import GaussianMixture

    seed, patience = config.seed, config.patience
    vectors = np.asarray(vectors, dtype=np.float64)
    n = len(vectors)
    if n < 2:
        return Clustering([[0]] if n else [], n)
    dim = max(1, min(config.reduce_dim, n // 4, vectors.shape[1]))
    reduced = PCA(n_components=dim, random_state=seed).fit_transform(vectors)
    k_max = max(1, min(config.max_clusters, n - 1))
    k_min = min(max(1, math.ceil(n / config.max_cluster_size)), k_max)
    bics, models, best, since_best = {}, {}, None, 0
    for k in range(k_min, k_max + 1):
        gm = GaussianMixture(n_components=k, covariance_type="full", random_state=seed).fit(reduced)
        bics[k], models[k] = float(gm.bic(reduced)), gm
        admissible = np.bincount(gm.predict(reduced), minlength=k).min() >= 2
        if admissible and (best is None or bics[k] < bics[best]):
            best, since_best = k, 0
        else:
            since_best += 1
            if since_best >= patience:
                break
    k = min(bics, key=lambda c: (bics[c], c)) if best is None else best
    probs = models[k].predict_proba(reduced)
    top = probs.argmax(axis=1)
    clusters = [[i for i in range(n) if probs[i, j] >= config.membership_threshold or top[i] == j]
                for j in range(k)]
    clusters = sorted((c for c in clusters if c), key=lambda c: c[0])
    return Clustering(clusters, k, bics, dim)


def _main_doc(leaves: Sequence[Chunk]) -> tuple[str, list[str]]:
    counts = Counter(c.doc_id for c in leaves)
    order = list(dict.fromkeys(c.doc_id for c in leaves))
    return max(order, key=lambda d: (counts[d], -order.index(d))), order


def build_tree(leaves: Sequence[Chunk], leaf_vectors: np.ndarray, embed: Embed, summarize: Summarize,
               config: RaptorConfig) -> tuple[list[Chunk], np.ndarray, list[Clustering]]:
    """Summary chunks of every level above the leaves (at most ``config.levels``), their vectors,
    and each level's clustering."""
    if len(leaves) != len(leaf_vectors):
        raise ValueError(f"got {len(leaf_vectors)} vectors for {len(leaves)} leaves")
    leaf_ids = {c.id: i for i, c in enumerate(leaves)}
    layer, vectors = list(leaves), np.asarray(leaf_vectors)
    summaries: list[Chunk] = []
    summary_vectors: list[np.ndarray] = []
    clusterings: list[Clustering] = []
    for level in range(1, config.levels + 1):
        if len(layer) < 2:
            break
        clustering = cluster_layer(vectors, config)
        if len(clustering.clusters) >= len(layer):
            break
        new_layer: list[Chunk] = []
        new_vectors: list[np.ndarray] = []
        made: list[Chunk] = []
        for j, members in enumerate(track(clustering.clusters, f"RAPTOR level {level} summaries")):
            if len(members) == 1:                      # promoted unchanged, no summary
                if layer[members[0]].id not in {c.id for c in new_layer}:
                    new_layer.append(layer[members[0]])
                    new_vectors.append(vectors[members[0]])
                continue
            children = [layer[i] for i in members]
            text = summarize([c.text for c in children])
            if not text.strip():
                continue
            sources = sorted({s for c in children for s in (c.meta.get("source_chunk_ids") or [c.id])},
                             key=leaf_ids.__getitem__)
            doc_id, doc_ids = _main_doc([leaves[leaf_ids[s]] for s in sources])
            made.append(Chunk(id=f"raptor-L{level}-{j}", doc_id=doc_id, text=text, start=-1, end=-1,
                              meta={"chunker": "raptor", "level": level, "children": [c.id for c in children],
                                    "source_chunk_ids": sources, "doc_ids": doc_ids}))
        if not made:
            break
        clusterings.append(clustering)
        made_vectors = np.asarray(embed([c.text for c in made]))
        summaries += made
        summary_vectors += list(made_vectors)
        if len(new_layer) + len(made) >= len(layer):
            break
        layer = new_layer + made
        vectors = np.asarray(new_vectors + list(made_vectors))
    dim = np.asarray(leaf_vectors).shape[1] if len(leaf_vectors) else 0
    return summaries, (np.stack(summary_vectors) if summary_vectors else np.zeros((0, dim), np.float32)), clusterings


class RaptorRetriever(Retriever):
    """RAPTOR with collapsed-tree retrieval (module docstring)."""

    config_class = RaptorConfig

    def __init__(self, config: RaptorConfig | None = None, *, reasoner=None, embedder=None, **overrides):
        super().__init__()
        self.config = self.config_class.resolve(config, **overrides)
        self._reasoner, self._embedder = reasoner, embedder
        self.index = None
        self.clusterings: list[Clustering] = []

    def leaves(self, documents: Sequence[Document]) -> list[Chunk]:
        from ...chunking import chunk_documents
        return chunk_documents([d for d in documents if d.text.strip()], "recursive", self.embedder,
                               chunk_size=self.config.chunk_size, chunk_overlap=self.config.chunk_overlap)

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.build_cost.embedding_tokens += self.embedder.count_tokens(texts)
        return self.embedder.encode(texts)

    def _tree(self, leaves: list[Chunk], summarize: Summarize):
        vectors = self._embed([c.text for c in leaves])
        summaries, summary_vectors, clusterings = build_tree(leaves, vectors, self._embed, summarize, self.config)
        return vectors, summaries, summary_vectors, clusterings

    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]:
        """The summarize calls of a build in which every summary is its cluster's first
        ``summary_words`` words (the LLM prompt's own fallback): level 1 is exact, higher levels
        are an estimate of how many calls of what size follow. Costs embedding time, no LLM call."""
        from ...reasoning.prompts import leading_words

        calls = []

        def record(texts: list[str]) -> str:
            calls.append(("summarize", "\n\n".join(texts)))
            return leading_words(texts, self.config.summary_words)

        saved = self.build_cost
        self._tree(self.leaves(documents), record)
        self.build_cost = saved
        return calls

    def _build(self, documents: list[Document]) -> None:
        from ...index import VectorIndex

        leaves = self.leaves(documents)
        if not leaves:
            raise ValueError(f"{self.name}: the documents gave no text to index")
        before = self.reasoner.usage.copy()
        summarize = lambda texts: self.reasoner.summarize(texts, self.config.summary_words)  # noqa: E731
        vectors, summaries, summary_vectors, self.clusterings = self._tree(leaves, summarize)
        self.build_cost = self.build_cost + self.reasoner.usage_since(before)
        self.chunks = leaves + summaries
        self.vectors = np.concatenate([vectors, summary_vectors]) if len(summaries) else vectors
        self.index = VectorIndex(self.vectors.shape[1]).add(self.vectors, [c.id for c in self.chunks])

    def tree_levels(self) -> list[int]:
        """Number of nodes on each level, leaves first."""
        counts = Counter(c.meta.get("level", 0) for c in self.chunks)
        return [counts[level] for level in sorted(counts)]

    def _retrieve(self, query: str, k: int) -> Retrieval:
        if self.index is None:
            raise RuntimeError(f"{self.name}: call build(documents) before retrieve()")
        qvec = self.embedder.encode_one(query)
        scores, rows = self.index.search(qvec, k)
        hits = []
        for s, r in zip(scores[0], rows[0]):
            chunk = self.chunks[r]
            level = chunk.meta.get("level", 0)
            hits.append(Hit(chunk, float(s), f"summary-L{level}" if level else "leaf"))
        trace = {"levels": [h.chunk.meta.get("level", 0) for h in hits], "tree_levels": self.tree_levels()}
        return Retrieval(query, hits, trace, Cost(embedding_tokens=self.embedder.count_tokens(query)))


register("raptor", "rag_lab.methods.baselines.raptor:RaptorRetriever",
         "RAPTOR: {c.chunk_size}-token leaves, PCA + BIC-chosen Gaussian mixtures, reasoner summaries per cluster "
         "up to {c.levels} levels; collapsed-tree top-k over leaves and summaries".format(c=RaptorConfig()),
         RaptorConfig())
