"""The Retriever contract and the registry that finds methods by name.

A retriever is built once over documents and answers ``retrieve(query, k)`` with a
``Retrieval``. The registry maps a name to ``"module:Class"`` and the method's config (a
frozen ``rag_lab.core.configs.Config`` holding every knob), so listing methods imports nothing
heavy; a method's class is imported only when one is made. The lab's own methods register when
``rag_lab.methods`` is imported; installed packages register theirs through the entry-point group
``rag_lab.methods`` (``rag_lab.core.plugins``), loaded on the first lookup below.
"""
from __future__ import annotations

import importlib
import time
from typing import Sequence

from ..core import plugins, ties
from ..core.configs import Config
from ..core.progress import building
from ..core.types import Chunk, Cost, Document, Retrieval

# name -> (import path "module:Class", the method's config, one-line description)
REGISTRY: dict[str, tuple[str, Config, str]] = {}
SHARED = ("reasoner", "embedder")   # handed to the retriever as they are; every other keyword is a knob


def register(name: str, target: str, description: str, config: Config) -> None:
    """Register a method: ``target`` is ``"module:Class"``, ``config`` its knobs (the class's
    defaults, or those with the one field that tells this name from its siblings)."""
    if not isinstance(config, Config):
        raise TypeError(f"register({name!r}): config must be a Config instance, got {type(config).__name__}")
    REGISTRY[name] = (target, config, description)


def method_plugins() -> list[plugins.Plugin]:
    """The installed method plugins (loaded on first call), broken ones with their error."""
    return plugins.load_plugins(plugins.METHODS, REGISTRY)


def method_source(name: str) -> str:
    """The package ``name`` comes from: a plugin's distribution ("name version"), else "rag_lab"."""
    method_plugins()
    return plugins.source_of(plugins.METHODS, name) or "rag_lab"


def available_methods() -> dict[str, str]:
    """Every registered method and its description: the lab's own, then the plugins'."""
    method_plugins()
    return {name: desc for name, (_, _, desc) in REGISTRY.items()}


def registered_config(name: str) -> Config:
    """The config ``name`` was registered with (its knobs and their defaults)."""
    broken = [p for p in method_plugins() if p.broken]
    if name not in REGISTRY:
        hint = "".join(f"; broken plugin {p.describe()}" for p in broken)
        raise ValueError(f"unknown method {name!r}; registered: {', '.join(REGISTRY)}{hint}")
    return REGISTRY[name][1]


def get_retriever(name: str, **params) -> "Retriever":
    """A fresh, unbuilt retriever registered as ``name``. ``reasoner`` and ``embedder`` are handed
    through; every other keyword overrides a knob of the registered config (an unknown knob is
    an error that lists the method's knobs)."""
    config = registered_config(name)
    shared = {key: params.pop(key) for key in SHARED if key in params}
    try:
        config = config.replace(**params)
    except ValueError as e:
        raise ValueError(f"method {name!r}: {e}") from e
    module, cls_name = REGISTRY[name][0].split(":")
    cls = getattr(importlib.import_module(module), cls_name)
    retriever = cls(config, **shared)
    retriever.name = name
    return retriever


class Retriever:
    """Base class: subclasses implement ``_build`` and ``_retrieve``; timing and costs are kept here."""

    name = "retriever"
    _embedder = None   # an Embedder, or None for the process-wide default
    _reasoner = None   # a Reasoner, a spec string, or None for RAG_LAB_LLM / offline
    # True only when a method's top k is always the prefix of its top K (k <= K):
    # retrieve(q, k).hits == retrieve(q, K).hits[:k]. evaluate() then queries once at the deepest
    # k and scores prefixes; otherwise every k is a query of its own. A method that declares it
    # has a test proving it on a shipped data set (tests/test_evaluation_at_k.py).
    nested_ranking = False
    # True for a method that calls its reasoner while indexing: its persisted index is then keyed by
    # the reasoner's fingerprint too (rag_lab/evaluation/index_store.py)
    reasoner_at_build = False
    # where a persisted index is filed (None: the method's name); variants sharing one index share it
    index_family: str | None = None
    # attributes a persisted index leaves out (helpers made again on first use, e.g. an unpicklable model)
    index_transient: tuple[str, ...] = ()

    def __init__(self):
        self.build_cost = Cost()
        self.chunks: list[Chunk] = []

    def build(self, documents: Sequence[Document], reuse: bool | None = None) -> "Retriever":
        """Build the index over ``documents``, or reuse the same index built before (in this process or
        persisted under ``$RAG_LAB_CACHE/indexes``; see rag_lab/evaluation/index_store.py). ``reuse``: None follows
        ``RAG_LAB_REUSE`` (on unless 0/false/no/off); False always builds (what timing measurements need).
        A reused index keeps the cost of the build that made it (``build_cost``)."""
        if not documents:
            raise ValueError(f"{self.name}: cannot build an index over no documents")
        from .index_reuse import build_or_reuse

        # a build's scope: none of the questions (core/ties.py) — which questions a build decision
        # reaches is not traced, so its near-ties excuse no question's move
        with ties.deciding(method=self.name, step="build", **{ties.BUILD_SCOPE: ""}):
            if build_or_reuse(self, list(documents), reuse):
                ties.replay(getattr(self, "build_near_ties", []))   # a reused index names its build's near-ties
        self.build_near_ties_dataset = ties.current_labels().get("dataset")
        return self

    def name_build_near_ties(self, dataset: str) -> None:
        """Note the build's near-ties again under ``dataset`` unless already noted under it (an index
        built outside the harness, which knows no data set: ``harness.build_all``)."""
        if getattr(self, "build_near_ties_dataset", None) != dataset:
            with ties.deciding(dataset=dataset):
                ties.replay(getattr(self, "build_near_ties", []))
            self.build_near_ties_dataset = dataset

    def index_knobs(self) -> dict:
        """The config knobs the built index depends on: all of them, unless a method's other knobs act
        only at query time (then its variants share one persisted index, as SSG's algorithms share a graph)."""
        return self.config.as_dict()

    def _timed_build(self, documents: list[Document]) -> None:
        t0 = time.perf_counter()
        with building(self.name, len(documents), reasoner=lambda: self._reasoner), ties.collecting() as found:
            self._build(documents)
        self.build_near_ties = list(found)         # kept with the persisted index (core/ties.py)
        self.build_cost.seconds += time.perf_counter() - t0

    def retrieve(self, query: str, k: int = 5) -> Retrieval:
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"{self.name}: the query must be a non-empty string, got {query!r}")
        if k <= 0:
            raise ValueError(f"{self.name}: k must be positive, got {k}")
        t0 = time.perf_counter()
        with ties.deciding(method=self.name), ties.reading(k):   # near-ties only where the top k is decided
            result = self._retrieve(query, k)
        result.cost.seconds = time.perf_counter() - t0
        return result

    @property
    def embedder(self):
        """The embedder, made on first use: the shared default unless one was handed in."""
        if self._embedder is None:
            from ..core.embedding import shared_embedder
            self._embedder = shared_embedder()
        return self._embedder

    @property
    def reasoner(self):
        """The reasoner, resolved on first use from an object or a spec string."""
        if self._reasoner is None or isinstance(self._reasoner, str):
            from ..reasoning import resolve_reasoner
            self._reasoner = resolve_reasoner(self._reasoner, self.embedder)
        return self._reasoner

    def as_langchain(self, k: int = 5):
        """This built retriever as a LangChain ``BaseRetriever`` giving ``k`` Documents a query, with
        chunk id, doc id, score, via, rank and span in their metadata (see rag_lab/evaluation/langchain.py)."""
        from .langchain import as_langchain_retriever
        return as_langchain_retriever(self, k)

    def context_blocks(self, retrieval: Retrieval) -> list[tuple[str, str]]:
        """(kind, text) of what the method hands the answering model before its hits: none by default;
        a method whose paper hands over more (SKETCH's graph facts, kind "graph facts") overrides it."""
        return []

    def answer_contexts(self, retrieval: Retrieval) -> list[str]:
        """The contexts handed to the answering model for ``retrieval``, in order: the method's context
        blocks (``context_blocks``), then the hits' texts."""
        return [text for _, text in self.context_blocks(retrieval)] + [h.chunk.text for h in retrieval.hits]

    def document_work(self, documents: Sequence[Document]) -> list | None:
        """The part of ``build`` that looks at one document at a time (chunking, embedding the chunks, the
        per-chunk reasoner jobs), run for what it leaves in the embedder's and reasoner's caches. A Dask
        worker runs it over a partition of the documents before the driver builds (cluster.py); it must
        make the same embedder and reasoner calls ``_build`` makes for those documents, or the driver
        simply computes what is missing. May return paths of further cache files it used (GraLC's token
        embeddings) for the driver to copy. A method without it is always built where it runs."""
        raise NotImplementedError(f"{self.name}: no per-document work to distribute")

    def distributable(self) -> bool:
        """True when the method has ``document_work`` (its per-document work can run on a cluster)."""
        return type(self).document_work is not Retriever.document_work

    def prepare_queries(self, queries: Sequence[str]) -> None:
        """Called by ``evaluate`` before it retrieves for a question set: a method whose queries call a
        reasoner may ask it for all of them at once (one concurrent batch, ``rag_lab.reasoning.batch``)
        instead of one call per retrieval. Results must not change. Default: nothing to prepare."""

    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]:
        """(job, input text) for every reasoner call ``build`` would make, without making any.

        Used by ``python -m rag_lab estimate``; methods that call a reasoner override it."""
        return []

    def _build(self, documents: list[Document]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _retrieve(self, query: str, k: int) -> Retrieval:  # pragma: no cover - abstract
        raise NotImplementedError
