"""The six retrieval strategies of the GraLC-RAG paper behind the Retriever contract.

==================  =================================================================
gralc-naive         fixed windows of 256 word pieces, 32 overlap, chunk-then-embed
gralc-semantic      consecutive sentences merged while their cosine stays >= 0.75
gralc-late          late chunking: whole-document token embeddings, sentence boundaries
gralc-structure     late chunking with structure-aware boundaries (no KG)
gralc-kg            + KG infusion of the token embeddings before pooling
gralc-graph         + graph-guided score β·cos + (1 − β)·kg_prox at query time
==================  =================================================================

All six label each chunk with the innermost section/subsection that holds most of it, so
section coverage is measured the same way for every strategy. Any Document works: without
sections the structural signal falls back to paragraphs (blank-line blocks) and, for a
single-block text, to sentences (see ``structure.structure_units``).

MiniLM reads at most 254 word pieces per input: the 256-token naive chunks and long
semantic chunks are embedded from their first 254 (as sentence-transformers truncates);
the late-chunking family reads every token through sliding windows. Each strategy's knobs are
its config (``config.py``), a class hierarchy parallel to the retrievers'.
"""
from __future__ import annotations

import time
from typing import Iterable, Sequence

import numpy as np

from ...core import ties
from ...evaluation.retrievers import Method, register
from ...core.types import Chunk, Cost, Document, Hit, Retrieval
from .boundaries import BoundaryTrace, select_boundaries, spans_from_boundaries, structure_aware_boundaries
from .config import (GraphGuidedConfig, GralcConfig, KGInfusedConfig, LateChunksConfig, NaiveChunksConfig,
                     SemanticChunksConfig, StructureAwareConfig)
from ...datasets.structure import section_for_span, structure_units


def _normalise(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    return (v / np.maximum(norm, 1e-12)).astype(np.float32)


class GralcRetriever(Method):
    """Shared build/search: subclasses return (char start, char end, vector) per chunk of a document."""

    strategy = "base"
    config_class: type[GralcConfig] = GralcConfig
    nested_ranking = True   # exact FAISS top-k (gralc-graph re-scores a pool and is queried per k)

    def __init__(self, config: GralcConfig | None = None, *, reasoner=None, embedder=None, **overrides):
        super().__init__(config, reasoner=reasoner, embedder=embedder, **overrides)   # no strategy calls a reasoner
        self.index = None
        self.vectors = None
        self.doc_info: dict[str, dict] = {}
        self.timings: dict[str, float] = {}

    def _time(self, key: str, t0: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - t0

    def document_chunks(self, doc: Document) -> list[tuple[int, int, np.ndarray]]:  # pragma: no cover
        raise NotImplementedError

    def all_document_chunks(self, documents: list[Document]) -> Iterable[list[tuple[int, int, np.ndarray]]]:
        """``document_chunks`` of each document, in order; a strategy whose encoder calls batch
        better across documents than within one overrides this."""
        return (self.document_chunks(doc) for doc in documents)

    def build(self, documents: list[Document]):
        from ...core.index import VectorIndex

        for doc in documents:
            if not doc.text.strip():
                raise ValueError(f"{self.name}: document {doc.id!r} has no text")
        chunks, vectors = [], []
        for doc, parts in zip(documents, self.all_document_chunks(documents)):
            for i, (s, e, vec) in enumerate(parts):
                chunks.append(Chunk(id=f"{doc.id}#{self.strategy}-{i}", doc_id=doc.id, text=doc.text[s:e],
                                    start=s, end=e, section_id=section_for_span(doc, s, e, self.config.section_level),
                                    meta={"chunker": f"gralc-{self.strategy}"}))
                vectors.append(vec)
        if not chunks:
            raise ValueError(f"{self.name}: chunking produced no chunks")
        self.chunks, self.vectors = chunks, _normalise(np.stack(vectors))
        self.index = VectorIndex(self.vectors.shape[1]).add(self.vectors, [c.id for c in chunks])
        self._after_build(documents)
        return self

    def _after_build(self, documents: list[Document]) -> None:
        pass

    def document_work(self, documents: list[Document]) -> list:
        """Chunks and vectors as ``build`` makes them, and the late family's token files (DocumentWork)."""
        from .encoding import cache_files
        list(self.all_document_chunks(documents))
        return cache_files(documents, self.embedder, self.config)

    def _query(self, query: str) -> tuple[np.ndarray, Cost]:
        return self.embedder.encode_one(query), Cost(embedding_tokens=self.embedder.count_tokens(query))

    def retrieve(self, query: str, k: int) -> Retrieval:
        self._check_built(self.index)
        qvec, cost = self._query(query)
        scores, rows = self.index.search(qvec, k)
        hits = [Hit(self.chunks[r], float(s), "vector") for s, r in zip(scores[0], rows[0])]
        return Retrieval(query, hits, {"strategy": self.strategy}, cost)


# -- content-only baselines ------------------------------------------------------------------
class NaiveChunks(GralcRetriever):
    """Fixed token windows embedded one by one (chunk-then-embed)."""

    strategy = "naive"
    config_class = NaiveChunksConfig

    def document_chunks(self, doc):
        from ...core.chunking import fixed_token_spans

        spans = fixed_token_spans(doc.text, self.embedder, self.config.size, self.config.overlap)
        texts = [doc.text[s:e] for s, e in spans]
        self.build_cost.embedding_tokens += self.embedder.count_tokens(texts)
        return [(s, e, v) for (s, e), v in zip(spans, self.embedder.encode(texts))]


def similarity_threshold_spans(sentences: Sequence[tuple[int, int]], vectors: np.ndarray,
                               threshold: float) -> list[tuple[int, int]]:
    """Merge consecutive sentences while cos(previous, next) >= threshold, noted near it (core/ties.py).
    Own code: LangChain's SemanticChunker only offers relative, percentile-style breakpoints."""
    if not sentences:
        return []
    spans, start = [], sentences[0][0]
    for i in range(1, len(sentences)):
        if not ties.at_least(float(vectors[i - 1] @ vectors[i]), threshold, what="GraLC merge", name=f"sentence {i}"):
            spans.append((start, sentences[i - 1][1]))
            start = sentences[i][0]
    spans.append((start, sentences[-1][1]))
    return spans


class SemanticChunks(GralcRetriever):
    """Sentences grouped by an absolute embedding-similarity threshold (the paper's 0.75)."""

    strategy = "semantic"
    config_class = SemanticChunksConfig

    def document_chunks(self, doc):
        return self.all_document_chunks([doc])[0]

    def all_document_chunks(self, documents):
        """Every document's sentences in one encoder call, then every chunk in one: a document
        alone gives the encoder a few dozen short sentences, batched and padded badly."""
        from ...core.chunking import sentence_spans

        sentences = [sentence_spans(doc.text) for doc in documents]
        sent_texts = [doc.text[s:e] for doc, sents in zip(documents, sentences) for s, e in sents]
        sent_vecs = self.embedder.encode(sent_texts)
        spans, at = [], 0
        for sents in sentences:
            spans.append(similarity_threshold_spans(sents, sent_vecs[at:at + len(sents)], self.config.threshold))
            at += len(sents)
        texts = [doc.text[s:e] for doc, doc_spans in zip(documents, spans) for s, e in doc_spans]
        vecs = self.embedder.encode(texts)
        self.build_cost.embedding_tokens += self.embedder.count_tokens(sent_texts) + self.embedder.count_tokens(texts)
        out, at = [], 0
        for doc_spans in spans:
            out.append([(s, e, v) for (s, e), v in zip(doc_spans, vecs[at:at + len(doc_spans)])])
            at += len(doc_spans)
        return out


# -- the late-chunking family --------------------------------------------------------------
class LateChunks(GralcRetriever):
    """Late chunking: encode the whole document, then mean-pool token spans.

    Boundaries here are sentence starts, packed so each chunk has ``min_tokens``..``max_tokens``.
    ``cache_tokens=False`` encodes every document afresh (for cold indexing-time measurements);
    otherwise the four late-chunking strategies share one encoding per text."""

    strategy = "late"
    config_class: type[LateChunksConfig] = LateChunksConfig

    def encode(self, doc: Document):
        from .encoding import encode_document

        t0 = time.perf_counter()
        enc = encode_document(doc.text, self.embedder, overlap=self.config.window_overlap,
                              use_cache=self.config.cache_tokens)
        self._time("encode", t0)
        self.build_cost.embedding_tokens += enc.tokens_encoded
        self.doc_info.setdefault(doc.id, {}).update(tokens=len(enc), windows=enc.windows)
        return enc

    def token_embeddings(self, doc: Document, enc) -> np.ndarray:
        return enc.embeddings

    def boundaries(self, doc: Document, enc, embeddings: np.ndarray) -> list[int]:
        from .encoding import char_span_to_tokens
        from ...core.chunking import sentence_spans

        starts = sorted({char_span_to_tokens(enc.offsets, s, e)[0] for s, e in sentence_spans(doc.text)})
        scores = np.zeros(len(enc))
        scores[[p for p in starts if p < len(enc)]] = 1.0
        return select_boundaries(scores, 0.5, self.config.min_tokens, self.config.max_tokens, candidates=starts)

    def document_chunks(self, doc):
        from .encoding import token_span_to_chars

        enc = self.encode(doc)
        emb = self.token_embeddings(doc, enc)
        t0 = time.perf_counter()
        cuts = self.boundaries(doc, enc, emb)
        self._time("boundaries", t0)
        out = []
        for a, b in spans_from_boundaries(len(enc), cuts):
            s, e = token_span_to_chars(enc.offsets, a, b)
            out.append((s, e, emb[a:b].mean(axis=0)))
        self.doc_info[doc.id]["chunks"] = len(out)
        return out


class StructureAwareChunks(LateChunks):
    """Late chunking with GraLC-RAG's boundary score (structure + semantic + entity coherence)."""

    strategy = "structure"
    config_class: type[StructureAwareConfig] = StructureAwareConfig

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._vocabulary = self._linker = None
        self.traces: dict[str, BoundaryTrace] = {}

    @property
    def vocabulary(self):
        if self._vocabulary is None:
            from ...datasets.vocabulary import load_vocabulary
            self._vocabulary = load_vocabulary(self.config.concepts)
        return self._vocabulary

    @property
    def linker(self):
        if self._linker is None:
            from ...datasets.linking import ConceptLinker
            self._linker = ConceptLinker(self.vocabulary)
        return self._linker

    def mentions(self, doc: Document, enc) -> list[tuple[int, int, str]]:
        """Linked concept mentions as token spans (a, b, concept id); char spans go to ``doc_info``."""
        from .encoding import char_span_to_tokens

        t0 = time.perf_counter()
        found = self.linker.link(doc.text)
        out = []
        for m in found:
            a, b = char_span_to_tokens(enc.offsets, m.start, m.end)
            if b > a:
                out.append((a, b, m.concept_id))
        self._time("link", t0)
        self.doc_info.setdefault(doc.id, {})["mentions"] = [(m.start, m.end, m.concept_id) for m in found]
        return out

    def token_embeddings(self, doc, enc):
        self._mentions = self.mentions(doc, enc)
        return enc.embeddings

    def boundaries(self, doc, enc, embeddings):
        units, fallback = structure_units(doc)
        spans = [(a, b) for a, b, _ in self._mentions]
        trace = structure_aware_boundaries(enc.offsets, embeddings, units, spans, self.config)
        self.traces[doc.id] = trace
        self.doc_info[doc.id]["structure_fallback"] = fallback
        return trace.boundaries

    def boundary_trace(self, doc: Document) -> BoundaryTrace:
        """The boundary signals for one document (computed now if the document was not built)."""
        if doc.id not in self.traces:
            self.document_chunks(doc)
        return self.traces[doc.id]


class KGInfusedChunks(StructureAwareChunks):
    """Structure-aware late chunking over KG-infused token embeddings."""

    strategy = "kg"
    config_class: type[KGInfusedConfig] = KGInfusedConfig
    index_transient = ("_infuser",)   # a persisted index leaves the seeded GAT + MLP out: made again on use

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._infuser = None

    def get_infuser(self, dim: int):
        """The seeded GAT + MLP, built on first use for token vectors of ``dim`` dimensions."""
        if self._infuser is None:
            from .infusion import ConceptEmbeddings, KGInfuser

            cfg = self.config
            names = [c.name for c in self.vocabulary.concepts.values()] if cfg.concept_model else ()
            self.concept_vectors = ConceptEmbeddings(self.embedder, dim, cfg.concept_model, names)
            self._infuser = KGInfuser(self.concept_vectors, dim, cfg.lam, cfg.seed, concept_norm=cfg.concept_norm)
        return self._infuser

    def token_embeddings(self, doc, enc):
        from .concept_graph import concept_subgraph
        from .infusion import token_shift

        super().token_embeddings(doc, enc)
        mentions = self._mentions
        t0 = time.perf_counter()
        graph = concept_subgraph([c for _, _, c in mentions], self.vocabulary)
        infuser = self.get_infuser(enc.embeddings.shape[1])
        before = infuser.concepts.tokens
        out = infuser.infuse(enc.embeddings, mentions, graph)
        self.build_cost.embedding_tokens += infuser.concepts.tokens - before
        self._time("infuse", t0)
        self.doc_info[doc.id].update(concepts=graph.number_of_nodes(), relations=graph.number_of_edges(),
                                     linked=len({c for _, _, c in mentions}),
                                     shift=token_shift(enc.embeddings, out, mentions))
        return out


class GraphGuidedChunks(KGInfusedChunks):
    """KG-infused chunks ranked by β·cos(q, c) + (1 − β)·kg_prox(E_q, E_c).

    kg_prox is the mean over query concepts of the best cosine to a concept of the chunk (0
    when either side has none). The dense top ``pool`` candidates are re-scored."""

    strategy = "graph"
    config_class = GraphGuidedConfig
    nested_ranking = False  # the re-scored pool is max(k, pool): top K > pool is not an extension of top k

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.chunk_concepts: list[list[str]] = []

    def _after_build(self, documents):
        """The concepts mentioned inside each chunk (E_C), for kg_prox at query time."""
        self.chunk_concepts = []
        for c in self.chunks:
            mentions = self.doc_info[c.doc_id]["mentions"]
            self.chunk_concepts.append(list(dict.fromkeys(cid for s, e, cid in mentions
                                                          if s >= c.start and e <= c.end)))

    def kg_prox(self, query_concepts: Sequence[str], chunk_concepts: Sequence[str]) -> float:
        if not query_concepts or not chunk_concepts:
            return 0.0
        vecs = self.concept_vectors    # the infuser's concept vectors (kept when the index is persisted)
        q = vecs.vectors([self.vocabulary[c].name for c in query_concepts])
        c = vecs.vectors([self.vocabulary[x].name for x in chunk_concepts])
        return float((q @ c.T).max(axis=1).mean())

    def retrieve(self, query, k):
        self._check_built(self.index)
        qvec, cost = self._query(query)
        query_concepts = self.linker.concepts_in(query)
        beta = self.config.beta
        scores, rows = self.index.search(qvec, max(k, self.config.pool))
        ranked = []
        for s, r in zip(scores[0], rows[0]):
            prox = self.kg_prox(query_concepts, self.chunk_concepts[r])
            ranked.append((beta * float(s) + (1 - beta) * prox, float(s), prox, int(r)))
        ranked = [ranked[i] for i in ties.order([t[0] for t in ranked], keys=[t[3] for t in ranked], what="GraLC score")]
        hits = [Hit(self.chunks[r], score, "graph" if prox > 0 else "vector") for score, _, prox, r in ranked[:k]]
        trace = {"strategy": self.strategy, "query_concepts": query_concepts,
                 "kg_prox": [round(p, 4) for _, _, p, _ in ranked[:k]], "cosine": [round(c, 4) for _, c, _, _ in ranked[:k]]}
        return Retrieval(query, hits, trace, cost)


# name -> (retriever class, description from its config's defaults)
STRATEGIES: dict[str, tuple[type[GralcRetriever], str]] = {
    "gralc-naive": (NaiveChunks, "GraLC-RAG baseline: fixed {c.size}-token chunks ({c.overlap} overlap), "
                                 "chunk-then-embed"),
    "gralc-semantic": (SemanticChunks, "GraLC-RAG baseline: sentences merged while cosine >= {c.threshold}"),
    "gralc-late": (LateChunks, "Late chunking: whole-document token embeddings (sliding windows), sentence "
                               "boundaries, {c.min_tokens}-{c.max_tokens} tokens"),
    "gralc-structure": (StructureAwareChunks, "GraLC-RAG structure-aware late chunking (boundary score: structure "
                                              "{c.alphas[0]}, semantic {c.alphas[1]}, entity {c.alphas[2]}; "
                                              "tau {c.tau}), no KG"),
    "gralc-kg": (KGInfusedChunks, "GraLC-RAG: structure-aware late chunking over KG-infused tokens (GAT + MLP, "
                                  "lambda {c.lam})"),
    "gralc-graph": (GraphGuidedChunks, "GraLC-RAG full: KG infusion + graph-guided score "
                                       "{c.beta} cos + {rest:.1f} kg_prox"),
}
PAPER_LABELS = {"gralc-naive": "Naive", "gralc-semantic": "Semantic", "gralc-late": "Late Chunking",
                "gralc-structure": "Structure-Aware", "gralc-kg": "GraLC-RAG (KG)", "gralc-graph": "GraLC-RAG (+Graph)"}


def strategy_config(name: str) -> GralcConfig:
    """The default config of a strategy (``gralc-...``)."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown GraLC-RAG strategy {name!r}; expected one of {', '.join(STRATEGIES)}")
    return STRATEGIES[name][0].config_class()


for _name, (_cls, _desc) in STRATEGIES.items():
    _config = _cls.config_class()
    register(_name, f"{__name__}:{_cls.__name__}",
             _desc.format(c=_config, rest=1 - getattr(_config, "beta", 0.0)), _config)
