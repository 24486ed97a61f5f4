"""The sparse + dense hybrid most production RAG systems run (``hybrid``): bm25 and naive over the same
fixed windows, their rankings fused by reciprocal rank fusion with k = 60 (Cormack et al. 2009).

Built once: naive's windows, their MiniLM vectors in FAISS (``ChunkVectorRetriever``) and a BM25 index over
the same windows (``lexical.BM25Index``). A query takes each ranking's first ``depth`` windows (the dense
one by cosine, ties by chunk id; the sparse one as bm25 ranks), fuses them and cuts the fused list at k.
The fused list does not depend on k (equal fused scores are ordered by chunk id), so the ranking is
nested. Costs are naive's: the windows' embedding tokens to build, the query's to query.
"""
from __future__ import annotations

import numpy as np

from ...core.types import Document, Hit, Retrieval
from ...evaluation.retrievers import register
from .config import HybridConfig
from .fusion import by_score_then_id, reciprocal_rank_fusion
from .lexical import BM25Index
from .vector import ChunkVectorRetriever


class HybridRetriever(ChunkVectorRetriever):
    """Reciprocal rank fusion of bm25 and naive (module docstring)."""

    nested_ranking = True   # the fused list is made at a fixed depth, whatever k
    config_class = HybridConfig

    def build(self, documents: list[Document]):
        super().build(documents)
        self.bm25 = BM25Index([c.text for c in self.chunks], [c.id for c in self.chunks], self.config)
        return self

    def index_knobs(self) -> dict:
        """The fusion's knobs act at query time: variants differing only in them share one index."""
        return {k: v for k, v in self.config.as_dict().items() if k not in ("rrf_k", "depth")}

    def retrieve(self, query: str, k: int) -> Retrieval:
        self._check_built(self.index)
        depth = self.config.depth
        qvec, cost = self.query_vector(query)
        found, rows = self.index.search(qvec, depth)
        ids = [c.id for c in self.chunks]
        cosine = np.full(len(ids), -np.inf)
        cosine[rows[0]] = found[0]
        dense = [ids[r] for r in by_score_then_id(cosine, ids, rows[0].tolist())]
        sparse = [ids[r] for r in self.bm25.ranking(query)[0][:depth]]
        fused = reciprocal_rank_fusion([dense, sparse], self.config.rrf_k)
        ranks = {"vector": {c: i for i, c in enumerate(dense, 1)}, "bm25": {c: i for i, c in enumerate(sparse, 1)}}
        by_id = {c.id: c for c in self.chunks}
        hits = [Hit(by_id[cid], score, "+".join(name for name, r in ranks.items() if cid in r)) for cid, score in fused[:k]]
        trace = {"chunker": self.config.chunker, "vector_ranks": [ranks["vector"].get(h.chunk.id) for h in hits],
                 "bm25_ranks": [ranks["bm25"].get(h.chunk.id) for h in hits], "fused": len(fused)}
        return Retrieval(query, hits, trace, cost)


register("hybrid", "rag_lab.methods.baselines.hybrid:HybridRetriever",
         "Hybrid: bm25 and naive over the same windows fused by reciprocal rank fusion (k={c.rrf_k}, "
         "top {c.depth} of each)".format(c=HybridConfig()), HybridConfig())
