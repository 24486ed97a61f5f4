"""The seven SSG algorithms as retrievers ``ssg-<algorithm>`` (underscores become hyphens).

A retriever builds (or is given) a ``SimilarityGraph``, embeds each query once, places it in
the graph (``QueryContext``: similarities to every node, cached for the traversal) and runs its
algorithm. Its hits are the gathered sentences, in the order gathered, as span chunks of their
documents, so the shared metrics score them against gold sentences; the trace holds the anchor,
the path, every step and the stop reason. Knobs: ``SSGConfig`` (``config.py``), one registered
config per algorithm.
"""
from __future__ import annotations

from typing import Sequence

from ...evaluation.retrievers import Method, register
from ...core.types import Chunk, Cost, Document, Hit, Retrieval
from .algorithms import TraversalResult, run_algorithm
from .config import ALGORITHM_NAMES, SSGConfig
from .graph import SimilarityGraph, build_graph, first_words
from .query import QueryContext


def method_name(algorithm: str) -> str:
    """``llm_guided_traversal`` -> ``ssg-llm-guided-traversal``."""
    return "ssg-" + algorithm.replace("_", "-")


def sentence_chunks(graph: SimilarityGraph, documents: Sequence[Document] | None = None) -> list[Chunk]:
    """Every sentence node as a span chunk (section from the document when it has sections)."""
    docs = {d.id: d for d in documents or ()}
    out = []
    for s in graph.sentences:
        section = docs[s.doc_id].section_at(s.start) if s.doc_id in docs else None
        out.append(Chunk(s.id, s.doc_id, s.text, s.start, s.end, section.id if section else None,
                         {"unit": "sentence", "index": s.index}))
    return out


def stored_graph(documents: Sequence[Document], embedder, reasoner, config: SSGConfig) -> SimilarityGraph:
    """The graph every SSG retriever with ``config``'s graph knobs builds over ``documents``, through the
    index store: one a retriever built before (an earlier notebook of the run) is reused, and one built
    here is kept for the notebooks after (notebook 03 draws the graph notebook 10 then queries)."""
    from ...evaluation.harness import build

    return build(SSGRetriever(config, reasoner=reasoner, embedder=embedder), list(documents)).graph


def saved_graph(documents: Sequence[Document], embedder, reasoner, path, **knobs) -> tuple[SSGConfig, SimilarityGraph, SimilarityGraph]:
    """The graph notebook 03 draws: ``SSGConfig`` with the ``knobs`` given (None keeps a default), the graph
    built through the index store (``stored_graph``), and that graph saved to ``path`` and loaded back, so the
    notebook can check that the saved file holds the same graph."""
    from ...core.configs import drop_none

    config = SSGConfig(**drop_none(**knobs))
    built = stored_graph(documents, embedder, reasoner, config)
    return config, built, SimilarityGraph.load(built.save(path))


class SSGRetriever(Method):
    """One SSG algorithm over one graph. ``reasoner``: a Reasoner or a spec string (default: the
    configured reasoner, offline unless ``RAG_LAB_LLM`` says otherwise); it draws the document
    themes at build time and makes the choices of ``llm_guided_traversal``."""

    reasoner_at_build = True   # persisted indexes are keyed by the reasoner too (index_store.py)
    index_family = "ssg"       # the seven algorithms share one persisted graph (index_knobs)

    nested_ranking = True   # one traversal whatever k (it stops by its own rule); hits = its first k sentences
    config_class = SSGConfig

    def __init__(self, config: SSGConfig | None = None, *, reasoner=None, embedder=None, **overrides):
        super().__init__(config, reasoner=reasoner, embedder=embedder, **overrides)
        self.name = method_name(self.config.algorithm)
        self.graph: SimilarityGraph | None = None
        self._chunk_by_id: dict[str, Chunk] = {}

    @property
    def algorithm(self) -> str:
        return self.config.algorithm

    @classmethod
    def from_graph(cls, graph: SimilarityGraph, algorithm: str, max_sentences: int | None = None, reasoner=None,
                   embedder=None, documents: Sequence[Document] | None = None) -> "SSGRetriever":
        """A retriever over an already built graph (so seven algorithms share one build): the graph's
        knobs, ``algorithm``, and ``max_sentences`` (None: the config's default)."""
        config = SSGConfig(algorithm=algorithm, **graph.config.graph_knobs())
        if max_sentences is not None:
            config = config.replace(max_sentences=max_sentences)
        r = cls(config, reasoner=reasoner, embedder=embedder)
        r._use_graph(graph, documents)
        return r

    def _use_graph(self, graph: SimilarityGraph, documents: Sequence[Document] | None) -> None:
        self.graph = graph
        self.chunks = sentence_chunks(graph, documents)
        self._chunk_by_id = {c.id: c for c in self.chunks}

    def index_knobs(self) -> dict:
        """Only the graph's knobs: the algorithm and its budget act at query time, so every algorithm
        reuses the graph any of them built over the same documents."""
        return self.config.graph_knobs()

    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]:
        return [("themes", first_words(d.text, self.config.theme_words)) for d in documents]

    def document_work(self, documents: list[Document]) -> None:
        """Per document: window and sentence vectors, the themes and their vector (DocumentWork);
        edges span documents and are made where the graph is built."""
        from .graph import document_themes, segment

        sentences, windows = segment(documents, self.config.window, self.config.stride)
        self.embedder.encode([w.text for w in windows])
        self.embedder.encode([s.text for s in sentences])
        themes = document_themes(documents, self.reasoner, self.config)
        joined = [", ".join(themes[d.id]) for d in documents if themes[d.id]]
        if joined:
            self.embedder.encode(joined)

    def build(self, documents: list[Document]):
        graph = build_graph(documents, self.embedder, self.reasoner, self.config)
        # tokens and calls from the graph; seconds are timed by harness.build around all of this
        self.build_cost = self.build_cost + Cost(**{**graph.build_cost.as_dict(), "seconds": 0.0})
        self._use_graph(graph, documents)
        return self

    def query_context(self, query: str) -> tuple[QueryContext, Cost]:
        """The query embedded once and placed in the graph."""
        self._check_built(self.graph)
        vector = self.embedder.encode_one(query)
        return QueryContext(self.graph, query, vector), Cost(embedding_tokens=self.embedder.count_tokens(query))

    def traverse(self, query: str) -> tuple[TraversalResult, QueryContext, Cost]:
        """Run the algorithm for one query: its result, the query's context and the query's cost."""
        ctx, cost = self.query_context(query)
        reasoner = self.reasoner if self.algorithm == "llm_guided_traversal" else None
        before = reasoner.usage.copy() if reasoner is not None else None
        result = run_algorithm(self.algorithm, self.graph, ctx, self.config.max_sentences, reasoner)
        if reasoner is not None:
            cost = cost + reasoner.usage_since(before)
            cost.llm_fallbacks = result.llm_fallbacks
        return result, ctx, cost

    def retrieve(self, query: str, k: int) -> Retrieval:
        result, ctx, cost = self.traverse(query)
        hits = [Hit(self._chunk_by_id[s], ctx.sentence_sim(s), self.name) for s in result.sentences[:k]]
        trace = {"algorithm": self.algorithm, "anchor": result.path[0] if result.path else None,
                 "path": list(result.path), "stop_reason": result.stop_reason,
                 "sentences_gathered": len(result.sentences), "llm_choices": result.llm_choices,
                 "chooser": self.reasoner.name if self.algorithm == "llm_guided_traversal" else None,
                 "llm_fallbacks": result.llm_fallbacks,
                 "steps": [{"window": s.window, "score": s.score, "added": list(s.added), "candidates": s.candidates,
                            "fallback": s.fallback} for s in result.steps]}
        return Retrieval(query, hits, trace, cost)


_DESCRIPTIONS = {
    "basic_retrieval": "SSG control: sentence windows ranked by query cosine, sentences gathered until the early stop",
    "query_traversal": "SSG: from the anchor window, hop to the neighbour most similar to the query",
    "ssg_traversal": "SSG: from the anchor window, hop to the neighbour most similar to the current window",
    "triangulation_average": "SSG: hop by the mean of the query/current/candidate triangle similarities",
    "triangulation_geometric_3d": "SSG: hop to the triangle centroid closest to the query in 3-D PCA space",
    "triangulation_fulldim": "SSG: hop to the triangle centroid closest to the query in full embedding space",
    "llm_guided_traversal": "SSG: the reasoner picks the next window among five candidates, or stops",
}

for _algorithm in ALGORITHM_NAMES:
    register(method_name(_algorithm), "rag_lab.methods.ssg.method:SSGRetriever", _DESCRIPTIONS[_algorithm],
             SSGConfig(algorithm=_algorithm))
