"""A query placed in the SSG: its similarity to every window and sentence, computed once.

The SSG paper keeps traversal fast by "adding the query to the graph": one vectorised product
against all window and sentence embeddings when the query arrives, then cached lookups while
the traversal moves. Nothing here re-embeds or recomputes during a traversal.
"""
from __future__ import annotations

import numpy as np

from ...core import ties

from .graph import SimilarityGraph


class QueryContext:
    """Query text, unit vector and cached similarities (``window_sims``, ``sentence_sims``)."""

    def __init__(self, graph: SimilarityGraph, text: str, vector: np.ndarray):
        vector = np.asarray(vector, np.float32).reshape(-1)
        if vector.shape[0] != graph.window_vecs.shape[1]:
            raise ValueError(f"query vector has {vector.shape[0]} dimensions, the graph's vectors "
                             f"{graph.window_vecs.shape[1]}")
        self.graph = graph
        self.text = text
        self.vector = vector
        self.window_sims = graph.window_vecs @ vector
        self.sentence_sims = graph.sentence_vecs @ vector
        self._coords3: np.ndarray | None = None

    def window_sim(self, wid: str) -> float:
        return float(self.window_sims[self.graph.window_row[wid]])

    def sentence_sim(self, sid: str) -> float:
        return float(self.sentence_sims[self.graph.sentence_row[sid]])

    def sim(self, node: str) -> float:
        """Query similarity of a window or sentence node."""
        row = self.graph.window_row.get(node)
        return float(self.window_sims[row]) if row is not None else self.sentence_sim(node)

    @property
    def coords3(self) -> np.ndarray:
        """The query in the graph's 3-D PCA space (projected once)."""
        if self._coords3 is None:
            self._coords3 = self.graph.project3(self.vector)[0]
        return self._coords3

    def anchor(self) -> str:
        """The window most similar to the query (the first on ties): every traversal starts here."""
        return self.graph.window_ids[ties.best(self.window_sims, what="SSG anchor", names=self.graph.window_ids)]
