"""Maximal Marginal Relevance (Carbonell and Goldstein, SIGIR 1998): take the top ``fetch_k`` windows by
cosine to the query, then pick greedily the window maximising

    lambda * cos(window, query) - (1 - lambda) * max over the windows already picked of cos(window, picked)

so a window that repeats one already picked gives way to one that adds something. The picks from a
fixed pool do not depend on k, so the top k is the prefix of the top K (``nested_ranking``).
"""
from __future__ import annotations

import numpy as np

from rag_lab.core.chunking import chunk_documents
from rag_lab.core.types import Cost, Hit, Retrieval
from rag_lab.evaluation.retrievers import Method

from .config import MMRConfig


def mmr_order(query: np.ndarray, vectors: np.ndarray, ids: list[str], lambda_: float, fetch_k: int):
    """(row, MMR score at its pick) in pick order; unit vectors; equal scores go to the smaller id."""
    relevance = vectors @ query
    pool = sorted(range(len(ids)), key=lambda r: (-relevance[r], ids[r]))[:fetch_k]
    picked: list[tuple[int, float]] = []
    redundancy = np.full(len(ids), -np.inf)          # max cosine to a picked window
    while pool:
        novelty = np.where(np.isinf(redundancy[pool]), 0.0, redundancy[pool])
        scores = lambda_ * relevance[pool] - (1 - lambda_) * novelty
        best = min(range(len(pool)), key=lambda i: (-scores[i], ids[pool[i]]))
        row = pool.pop(best)
        picked.append((row, float(scores[best])))
        redundancy = np.maximum(redundancy, vectors @ vectors[row])
    return picked


class MMRRetriever(Method):
    nested_ranking = True
    config_class = MMRConfig

    def __init__(self, config: MMRConfig | None = None, *, reasoner=None, embedder=None, **overrides):
        super().__init__(config, reasoner=reasoner, embedder=embedder, **overrides)   # the lab's encoder by default
        self.vectors = None

    def build(self, documents):
        self.chunks = chunk_documents(documents, "fixed", self.embedder, size=self.config.size,
                                      overlap=self.config.overlap)
        texts = [c.text for c in self.chunks]
        self.vectors = self.embedder.encode(texts)                # cached by the lab, L2-normalised
        self.build_cost.embedding_tokens += self.embedder.count_tokens(texts)
        return self

    def retrieve(self, query: str, k: int) -> Retrieval:
        self._check_built(self.vectors)
        order = mmr_order(self.embedder.encode_one(query), self.vectors, [c.id for c in self.chunks],
                          self.config.lambda_, self.config.fetch_k)
        hits = [Hit(self.chunks[row], score, "mmr") for row, score in order[:k]]
        cost = Cost(embedding_tokens=self.embedder.count_tokens(query))
        return Retrieval(query, hits, {"pool": min(self.config.fetch_k, len(self.chunks))}, cost)
