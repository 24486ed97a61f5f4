"""The plain vector-RAG baselines: chunk every document, embed the chunks, search by cosine.

``naive`` uses fixed token windows, ``semantic`` LangChain's SemanticChunker; both are the
same retriever with a different chunker (``rag_lab.core.chunking``), named by the config class
(``NaiveConfig``, ``SemanticConfig`` in ``config.py``), whose knobs are the chunker's parameters.
"""
from __future__ import annotations

import numpy as np

from ...evaluation.retrievers import Method, register
from ...core.types import Chunk, Cost, Document, Hit, Retrieval
from .config import NaiveConfig, SemanticConfig


def config_chunks(config: NaiveConfig | SemanticConfig, documents: list[Document], embedder) -> list[Chunk]:
    """The chunks of ``documents`` by the config's chunker, given the knobs it reads (``chunk_knobs``)."""
    from ...core.chunking import chunk_documents
    return chunk_documents(documents, config.chunker, embedder, **{k: getattr(config, k) for k in config.chunk_knobs})


class ChunkVectorRetriever(Method):
    """Chunk every document, embed the chunks, search them by cosine (the plain vector RAG).
    Subclasses name the config class; its ``chunker`` says which chunker its knobs are for."""

    nested_ranking = True   # exact FAISS top-k: the top k is the prefix of the top K

    config_class: type[NaiveConfig] | type[SemanticConfig]

    def __init__(self, config: NaiveConfig | SemanticConfig | None = None, *, reasoner=None, embedder=None,
                 **overrides):
        super().__init__(config, reasoner=reasoner, embedder=embedder, **overrides)   # no LLM job here
        self.index = None

    @property
    def chunker(self) -> str:
        return self.config.chunker

    def make_chunks(self, documents: list[Document]) -> list[Chunk]:
        return config_chunks(self.config, documents, self.embedder)

    def document_work(self, documents: list[Document]) -> None:
        """Per document: the chunks and their vectors (the cluster's share, see DocumentWork)."""
        self.embedder.encode([c.text for c in self.make_chunks(documents)])

    def build(self, documents: list[Document]):
        from ...core.index import VectorIndex

        self.chunks = self.make_chunks(documents)
        if not self.chunks:
            raise ValueError(f"{self.name}: chunking produced no chunks")
        texts = [c.text for c in self.chunks]
        vectors = self.embedder.encode(texts)
        self.build_cost.embedding_tokens += self.embedder.count_tokens(texts)
        self.index = VectorIndex(vectors.shape[1]).add(vectors, [c.id for c in self.chunks])
        self.vectors = vectors
        return self

    def query_vector(self, query: str) -> tuple[np.ndarray, Cost]:
        return self.embedder.encode_one(query), Cost(embedding_tokens=self.embedder.count_tokens(query))

    def retrieve(self, query: str, k: int) -> Retrieval:
        self._check_built(self.index)
        qvec, cost = self.query_vector(query)
        scores, rows = self.index.search(qvec, k)
        hits = [Hit(self.chunks[r], float(s), "vector") for s, r in zip(scores[0], rows[0])]
        return Retrieval(query, hits, {"chunker": self.chunker}, cost)


class NaiveRetriever(ChunkVectorRetriever):
    config_class = NaiveConfig


class SemanticRetriever(ChunkVectorRetriever):
    config_class = SemanticConfig


register("naive", "rag_lab.methods.baselines.vector:NaiveRetriever",
         "Naive RAG: fixed windows of {c.size} MiniLM tokens ({c.overlap} overlap), cosine top-k over FAISS"
         .format(c=NaiveConfig()), NaiveConfig())
register("semantic", "rag_lab.methods.baselines.vector:SemanticRetriever",
         "Semantic-only: LangChain SemanticChunker chunks (breakpoints past the {c.threshold:g}th percentile), "
         "cosine top-k".format(c=SemanticConfig()), SemanticConfig())
