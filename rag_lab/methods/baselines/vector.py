"""The plain vector-RAG baselines: chunk every document, embed the chunks, search by cosine.

``naive`` uses fixed token windows, ``semantic`` LangChain's SemanticChunker; both are the
same retriever with a different chunker (``rag_lab.chunking``).
"""
from __future__ import annotations

import numpy as np

from ...retrievers import Retriever, register
from ...types import Chunk, Cost, Document, Hit, Retrieval


class ChunkVectorRetriever(Retriever):
    """Chunk every document, embed the chunks, search them by cosine (the plain vector RAG)."""

    nested_ranking = True   # exact FAISS top-k: the top k is the prefix of the top K

    def __init__(self, chunker: str = "fixed", embedder=None, **chunk_params):
        super().__init__()
        self.chunker = chunker
        self.chunk_params = chunk_params
        self._embedder = embedder
        self.index = None

    def make_chunks(self, documents: list[Document]) -> list[Chunk]:
        from ...chunking import chunk_documents
        return chunk_documents(documents, self.chunker, self.embedder, **self.chunk_params)

    def _build(self, documents: list[Document]) -> None:
        from ...index import VectorIndex

        self.chunks = self.make_chunks(documents)
        if not self.chunks:
            raise ValueError(f"{self.name}: chunking produced no chunks")
        texts = [c.text for c in self.chunks]
        vectors = self.embedder.encode(texts)
        self.build_cost.embedding_tokens += self.embedder.count_tokens(texts)
        self.index = VectorIndex(vectors.shape[1]).add(vectors, [c.id for c in self.chunks])
        self.vectors = vectors

    def query_vector(self, query: str) -> tuple[np.ndarray, Cost]:
        return self.embedder.encode_one(query), Cost(embedding_tokens=self.embedder.count_tokens(query))

    def _retrieve(self, query: str, k: int) -> Retrieval:
        if self.index is None:
            raise RuntimeError(f"{self.name}: call build(documents) before retrieve()")
        qvec, cost = self.query_vector(query)
        scores, rows = self.index.search(qvec, k)
        hits = [Hit(self.chunks[r], float(s), "vector") for s, r in zip(scores[0], rows[0])]
        return Retrieval(query, hits, {"chunker": self.chunker}, cost)


register("naive", "rag_lab.methods.baselines.vector:ChunkVectorRetriever",
         "Naive RAG: fixed windows of 128 MiniLM tokens (16 overlap), cosine top-k over FAISS",
         chunker="fixed", size=128, overlap=16)
register("semantic", "rag_lab.methods.baselines.vector:ChunkVectorRetriever",
         "Semantic-only: LangChain SemanticChunker chunks (percentile breakpoints), cosine top-k",
         chunker="semantic", threshold=90.0)
