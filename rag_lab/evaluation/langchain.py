"""LangChain's face of every rag_lab method: a ``BaseRetriever`` over a built ``Retriever``.

``as_langchain_retriever(build(get_retriever("sketch"), docs), k=5)`` gives a retriever that drops into
LCEL chains (``retriever | format_docs``), agents and anything else that takes a LangChain
retriever. Each hit becomes a ``langchain_core.documents.Document``: ``page_content`` is the
chunk text, and ``metadata`` says where it came from — ``chunk_id``, ``doc_id``, ``score``,
``via`` (what in the method found it: vector, graph, vote, traversal...), ``rank`` (1 = best),
``method`` (the registered name), and for chunks that are spans of a document ``start``/``end``
(char offsets) and ``section_id``; derived units (RAPTOR summaries) carry ``source_chunk_ids``
instead. What a method hands its answering model besides its hits (``ContextBlocks``:
SKETCH's and KG-only's graph facts) comes first, one Document per block with ``kind`` and ``via``
naming it ("graph facts"), ``rank`` 0 and the graph's chunk ids as ``source_chunk_ids``, so a chain
gets what rag_lab's answers get: ``k`` hits plus those blocks. The method's trace and cost stay
with the retrieval (``harness.retrieve``, which the adapter calls): LangChain's documents have no place for them.

An adapter class (rather than building a LangChain vector store from our chunks) keeps every
method's own ranking — graph hops, elections, traversals — instead of reducing each to cosine.
"""
from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LangChainDocument
from langchain_core.retrievers import BaseRetriever

from .harness import retrieve
from .retrievers import check_contract, context_blocks


class RagLabRetriever(BaseRetriever):
    """A LangChain retriever answering each query with the top ``k`` hits of a built rag_lab retriever."""

    retriever: Any
    k: int = 5

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[LangChainDocument]:
        r = self.retriever
        result = retrieve(r, query, self.k)
        blocks = [block_document(kind, text, r.name, result.trace) for kind, text in context_blocks(r, result)]
        return blocks + [to_document(hit, rank, r.name) for rank, hit in enumerate(result.hits, start=1)]


def block_document(kind: str, text: str, method: str, trace: dict) -> LangChainDocument:
    """A context block (e.g. SKETCH's graph facts) as a LangChain ``Document`` marked with its kind."""
    meta = {"kind": kind, "via": kind, "rank": 0, "method": method,
            "source_chunk_ids": list(trace.get("graph_chunk_ids", []))}
    return LangChainDocument(page_content=text, metadata=meta, id=f"{method}:{kind}")


def to_document(hit, rank: int, method: str) -> LangChainDocument:
    """A rag_lab ``Hit`` as a LangChain ``Document`` with its provenance in the metadata."""
    chunk = hit.chunk
    meta: dict[str, Any] = {"chunk_id": chunk.id, "doc_id": chunk.doc_id, "score": float(hit.score), "via": hit.via,
                            "rank": rank, "method": method}
    if chunk.is_span:
        meta.update(start=chunk.start, end=chunk.end, section_id=chunk.section_id)
    elif chunk.meta.get("source_chunk_ids"):
        meta["source_chunk_ids"] = list(chunk.meta["source_chunk_ids"])
    return LangChainDocument(page_content=chunk.text, metadata=meta, id=chunk.id)


def as_langchain_retriever(retriever, k: int = 5) -> RagLabRetriever:
    """Wrap a built rag_lab retriever; an unbuilt one or a bad ``k`` is refused with a clear error."""
    check_contract(retriever)
    name = retriever.name
    if not getattr(retriever, "chunks", None):
        raise RuntimeError(f"{name}: the retriever is not built; build it (harness.build) before wrapping it")
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"{name}: as_langchain_retriever(k=...) needs a positive whole number of documents, got {k!r}")
    return RagLabRetriever(retriever=retriever, k=k, tags=[name], metadata={"rag_lab_method": name})
