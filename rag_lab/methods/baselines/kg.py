"""KG-only: SKETCH's structured retriever on its own (the paper's "KG" baseline).

The same pieces and knowledge graph as ``sketch`` (semantic -> recursive 100/16 pieces, triples
per piece through the reasoner; knobs: ``KGConfig``, SKETCH's), but no vector index: the query's entities are matched to
nodes, their neighbourhood up to ``hops`` steps is read from the graph store, and the chunks
those nodes point to are returned in the graph's ranking (``KnowledgeGraph.rank_chunks``:
1 per matched node mentioning the chunk plus 1/2 per neighbour, ties in corpus order).
``Hit.score`` is that graph score. A query whose entities match no node retrieves nothing.
"""
from __future__ import annotations

from ...evaluation.retrievers import register
from ...core.types import Hit, Retrieval
from ..sketch.method import GRAPH, SketchRetriever
from .config import KGConfig


class KGRetriever(SketchRetriever):
    uses_vectors = False
    config_class = KGConfig
    nested_ranking = True   # the graph's chunk ranking cut at k (SKETCH's merge is not nested)

    def retrieve(self, query: str, k: int) -> Retrieval:
        self._check_built(self.graph)
        ranked, trace, cost = self.structured(query, k)
        hits = [Hit(chunk, score, GRAPH) for chunk, score in ranked]
        return Retrieval(query, hits, trace, cost)


register("kg", "rag_lab.methods.baselines.kg:KGRetriever",
         "KG-only: query entities -> graph nodes -> neighbourhood (networkx or Kùzu/Cypher) -> the chunks "
         "its nodes came from, ranked by graph score", KGConfig())
