"""SKETCH: semantic chunks in FAISS merged with a knowledge graph's structured context.

After Mahalingam et al., "SKETCH: Structured Knowledge Enhanced Text Comprehension for Holistic
Retrieval". Indexing: each document is split by LangChain's SemanticChunker (sentence windows
merged while neighbouring windows stay close, breakpoints above a percentile of the distances),
each semantic chunk is split again by the recursive splitter into pieces of 100 MiniLM tokens
with 16 tokens of overlap (both splitters are rag_lab.core.chunking's), the pieces are embedded into
a FAISS index, and the reasoner's triples of every piece build the knowledge graph
(``knowledge_graph.py``; store: networkx or Kùzu).

Query: unstructured top-k pieces by cosine; the reasoner names the query's entities, they are
matched to graph nodes, the store returns their neighbourhood up to ``hops`` steps, and the
chunks its nodes point to are ranked (the structured retriever, ``kg`` on its own).

The hybrid merge (``merge_hybrid``), our reading of the paper's "confirmation signal": the
structured context holds the texts of the structured retriever's top-k chunks, so an
unstructured chunk is *confirmed* when it is one of them — all its tokens also appear in the
structured context. The merged ranking of k slots is

1. confirmed chunks, in unstructured (cosine) order;
2. then the other unstructured and the other structured chunks alternately, an unstructured
   one first (u1, s1, u2, s2, ...); when one list runs out the other fills the remaining slots.

With no matched entity the structured list is empty and SKETCH returns the unstructured
ranking. ``Hit.score`` is each chunk's cosine to the query (the order comes from the merge,
not from the score); ``Hit.via`` is "vector+graph" (confirmed), "vector" or "graph". The trace
records the query entities, their node matches, the neighbourhood, the facts and paths, the
structured context and where each merged chunk came from. The answering model is handed the
facts as one block, then the merged chunks (``context_blocks``, ``answer_contexts``), so the graph reaches the
answer; the LangChain face returns the block as a Document of its own.
"""
from __future__ import annotations

from dataclasses import asdict
from typing import Sequence

from ...reasoning.batch import batch_concurrency, run_batch
from ...evaluation.retrievers import Method, answer_contexts, register
from ...core.types import Chunk, Cost, Document, Hit, Retrieval
from .config import SketchConfig

CONFIRMED, VECTOR, GRAPH = "vector+graph", "vector", "graph"
GRAPH_FACTS = "graph facts"     # the kind of the facts block handed over before the chunks


def pieces_of(doc: Document, semantic: Sequence[tuple[int, int]], embedder, chunk_size: int,
              chunk_overlap: int) -> list[Chunk]:
    """Second stage of SKETCH's indexing: every semantic span split recursively (SKETCH: 100/16) into pieces.

    Piece ids are ``{doc}#sketch-{i}``; ``meta["semantic_chunk"]`` is the index of the semantic
    span the piece lies in, and ``meta["semantic_span"]`` that span."""
    from ...core.chunking import make_chunks, recursive_token_spans

    spans, owners = [], []
    for j, (start, end) in enumerate(semantic):
        for piece in recursive_token_spans(doc.text, embedder, chunk_size, chunk_overlap, start, end):
            spans.append(piece)
            owners.append(j)
    chunks = make_chunks(doc, spans, "sketch", chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    for chunk, j in zip(chunks, owners):
        chunk.meta["semantic_chunk"] = j
        chunk.meta["semantic_span"] = list(semantic[j])
    return chunks


def sketch_chunks(documents: Sequence[Document], embedder, config: SketchConfig) -> list[Chunk]:
    """SKETCH's indexing split: SemanticChunker spans, each split recursively into pieces."""
    from ...core.chunking import semantic_spans

    out: list[Chunk] = []
    for doc in documents:
        if not doc.text.strip():
            continue
        spans = semantic_spans(doc.text, embedder, threshold=config.semantic_threshold,
                               buffer_size=config.semantic_buffer_size)
        out.extend(pieces_of(doc, spans, embedder, config.chunk_size, config.chunk_overlap))
    return out


def merge_hybrid(unstructured: Sequence[str], structured: Sequence[str], k: int) -> list[tuple[str, str]]:
    """(chunk id, source) in merged order, at most ``k``: the rule in the module docstring."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    graph_ids = set(structured)
    confirmed = [c for c in dict.fromkeys(unstructured) if c in graph_ids]
    taken = set(confirmed)
    vector_only = [c for c in dict.fromkeys(unstructured) if c not in taken]
    graph_only = [c for c in dict.fromkeys(structured) if c not in taken]
    merged = [(c, CONFIRMED) for c in confirmed]
    for i in range(max(len(vector_only), len(graph_only))):
        if i < len(vector_only):
            merged.append((vector_only[i], VECTOR))
        if i < len(graph_only):
            merged.append((graph_only[i], GRAPH))
    return merged[:k]


class SketchRetriever(Method):
    """SKETCH's hybrid retriever; ``KGRetriever`` (kg.py) is its structured half alone."""

    reasoner_at_build = True   # persisted indexes are keyed by the reasoner too (index_store.py)

    uses_vectors = True
    config_class = SketchConfig
    index_transient = ("_prepared_queries",)   # query entities asked ahead of a question set
    nested_ranking = False  # a deeper k confirms more chunks, which the merge moves to the front

    def __init__(self, config: SketchConfig | None = None, *, reasoner=None, embedder=None, **overrides):
        super().__init__(config, reasoner=reasoner, embedder=embedder, **overrides)
        self.graph = None
        self.index = None
        self.vectors = None

    # -- indexing ---------------------------------------------------------------------------
    def make_chunks(self, documents: Sequence[Document]) -> list[Chunk]:
        return sketch_chunks(documents, self.embedder, self.config)

    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]:
        """One triples call per piece (the graph is built from the pieces)."""
        return [("triples", c.text) for c in self.make_chunks(documents)]

    def document_work(self, documents: list[Document]) -> None:
        """Per document: the pieces, their vectors and their triples (DocumentWork)."""
        texts = [c.text for c in self.make_chunks(documents)]
        if self.uses_vectors:
            self.embedder.encode(texts)
        run_batch(self.reasoner.triples, texts, f"{self.name}: triples", reasoner=self.reasoner)

    def build(self, documents: list[Document]):
        from .knowledge_graph import KnowledgeGraph

        self.chunks = self.make_chunks(documents)
        if not self.chunks:
            raise ValueError(f"{self.name}: the documents gave no text to index")
        texts = [c.text for c in self.chunks]
        if self.uses_vectors:
            from ...core.index import VectorIndex
            self.vectors = self.embedder.encode(texts)
            self.build_cost.embedding_tokens += self.embedder.count_tokens(texts)
            self.index = VectorIndex(self.vectors.shape[1]).add(self.vectors, [c.id for c in self.chunks])
        before = self.reasoner.usage.copy()
        triples = run_batch(self.reasoner.triples, texts, f"{self.name}: triples", reasoner=self.reasoner)
        self.build_cost = self.build_cost + self.reasoner.usage_since(before)
        cfg = self.config
        store_params = {"path": cfg.graph_path} if cfg.graph_store == "kuzu" and cfg.graph_path else {}
        if self.graph is not None:
            self.graph.close()
        self.graph = KnowledgeGraph.from_triples(self.chunks, triples, self.embedder, cfg.graph_store,
                                                 **store_params)
        self.build_cost.embedding_tokens += self.graph.embedding_tokens
        self._row = {c.id: i for i, c in enumerate(self.chunks)}
        return self

    def index_stats(self) -> dict[str, float]:
        """Sizes of what ``build`` made: semantic chunks, pieces (and their mean tokens), graph nodes and relations."""
        self._check_built(self.graph)
        semantic = {(c.doc_id, c.meta["semantic_chunk"]) for c in self.chunks}
        tokens = [self.embedder.count_tokens(c.text) for c in self.chunks]
        return {"semantic chunks": len(semantic), "pieces": len(self.chunks),
                "mean piece tokens": sum(tokens) / len(tokens), "max piece tokens": max(tokens),
                "graph nodes": len(self.graph), "graph relations": len(self.graph.store.edges()),
                "build seconds": round(self.build_cost.seconds, 2)}

    # -- querying ---------------------------------------------------------------------------
    def structured(self, query: str, k: int) -> tuple[list[tuple[Chunk, float]], dict, Cost]:
        """The structured retriever: top-k graph chunks, the trace of how they were found, the cost."""
        prepared = getattr(self, "_prepared_queries", {}).pop(query, None)
        if prepared is not None:
            entities, cost = prepared
        else:
            before = self.reasoner.usage.copy()
            entities = self.reasoner.query_entities(query)
            cost = self.reasoner.usage_since(before)
        cfg = self.config
        matches, tokens = self.graph.match(entities, cfg.match_threshold, cfg.max_matches_per_entity)
        cost.embedding_tokens += tokens
        seeds = list(dict.fromkeys(m.node for m in matches))
        sub = self.graph.neighbourhood(seeds, cfg.hops)
        ranked = self.graph.rank_chunks(sub)[:k]
        trace = {
            "query_entities": entities,
            "matches": [asdict(m) for m in matches],
            "nodes": [{"key": key, "name": sub.nodes[key].name, "type": sub.nodes[key].type, "distance": d}
                      for key, d in sub.distances.items()],
            "facts": self.graph.facts(sub, cfg.max_facts),
            "paths": self.graph.paths(sub),
            "graph_chunk_ids": [c.id for c, _ in ranked],
            "graph_chunk_scores": [round(s, 6) for _, s in ranked],
            "structured_context": self.graph.structured_context(sub, [c for c, _ in ranked], cfg.max_facts),
            "graph_store": self.graph.store.name,
            "graph_queries": sub.queries,      # the Cypher (and parameters) Kùzu ran; [] on networkx
            "hops": cfg.hops,
        }
        return ranked, trace, cost

    def prepare_queries(self, queries: Sequence[str]) -> None:
        """With a reasoner that runs calls concurrently, ask it for every query's entities as one batch;
        each query's next ``structured`` call uses that answer and its cost (a later call for the same
        query asks again, as it would have). A one-at-a-time reasoner gains nothing: left to the queries."""
        reasoner = self.reasoner
        if batch_concurrency(reasoner) <= 1:
            return
        unique = list(dict.fromkeys(q for q in queries if isinstance(q, str) and q.strip()))
        found = run_batch(reasoner.query_entities, unique, f"{self.name}: query entities", reasoner=reasoner,
                          with_costs=True)
        self._prepared_queries = dict(zip(unique, found))

    def _cosines(self, qvec, chunks: Sequence[Chunk]) -> list[float]:
        return [float(self.vectors[self._row[c.id]] @ qvec) for c in chunks]

    def retrieve(self, query: str, k: int) -> Retrieval:
        self._check_built(self.graph)
        qvec = self.embedder.encode_one(query)
        cost = Cost(embedding_tokens=self.embedder.count_tokens(query))
        scores, rows = self.index.search(qvec, k)
        vector_hits = [(self.chunks[r], float(s)) for s, r in zip(scores[0], rows[0])]
        graph_hits, trace, graph_cost = self.structured(query, k)
        merged = merge_hybrid([c.id for c, _ in vector_hits], [c.id for c, _ in graph_hits], k)
        by_id = {c.id: c for c, _ in [*vector_hits, *graph_hits]}
        chunks = [by_id[cid] for cid, _ in merged]
        hits = [Hit(c, s, via) for c, s, (_, via) in zip(chunks, self._cosines(qvec, chunks), merged)]
        trace.update({"vector_chunk_ids": [c.id for c, _ in vector_hits],
                      "confirmed": [cid for cid, via in merged if via == CONFIRMED],
                      "merge": [{"chunk_id": cid, "source": via} for cid, via in merged]})
        return Retrieval(query, hits, trace, cost + graph_cost)

    def context_blocks(self, retrieval: Retrieval) -> list[tuple[str, str]]:
        """What SKETCH (and KG-only) hand to the answering model before the retrieved chunks: the
        structured context's facts (the graph relations of the query's neighbourhood) as one block."""
        facts = retrieval.trace.get("facts", [])
        return [(GRAPH_FACTS, "Facts:\n" + "\n".join(facts))] if facts else []

    def merged_context(self, retrieval: Retrieval) -> str:
        """The answer contexts as one text: the facts, then the merged chunks."""
        return "\n\n".join(answer_contexts(self, retrieval))


register("sketch", "rag_lab.methods.sketch.method:SketchRetriever",
         "SKETCH: semantic -> recursive {c.chunk_size}/{c.chunk_overlap} pieces in FAISS, merged with knowledge-graph "
         "chunks (confirmed chunks first, then vector and graph chunks alternately)".format(c=SketchConfig()),
         SketchConfig())
