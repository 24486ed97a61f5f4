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
from typing import Any, Protocol, Sequence, runtime_checkable

from ..core import plugins
from ..core.configs import Config
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


@runtime_checkable
class Retriever(Protocol):
    """The contract every method honours, and all a comparison needs: a ``name``, its ``config`` (the knobs),
    ``build(documents)`` (returns the retriever, built) and ``retrieve(query, k)`` (a ``Retrieval``).
    Timing, index reuse and near-tie recording are the harness's (``harness.build``/``harness.retrieve``)."""

    name: str
    config: Any

    def build(self, documents: Sequence[Document]) -> "Retriever": ...

    def retrieve(self, query: str, k: int) -> Retrieval: ...


# Optional abilities: a method may have any of them; whatever calls it asks with isinstance.
@runtime_checkable
class DocumentWork(Protocol):
    """The part of ``build`` that looks at one document at a time (chunking, embedding the chunks, the per-chunk
    reasoner jobs), run on Dask workers for what it leaves in the caches (cluster.py). It must make the same
    embedder and reasoner calls ``build`` makes for those documents; may return paths of further cache files."""

    def document_work(self, documents: Sequence[Document]) -> list | None: ...


@runtime_checkable
class BatchedQueries(Protocol):
    """Asked before a question set is retrieved: a method whose queries call a reasoner may ask it for all of
    them at once (``rag_lab.reasoning.batch``). Results must not change."""

    def prepare_queries(self, queries: Sequence[str]) -> None: ...


@runtime_checkable
class PlannedCalls(Protocol):
    """(job, input text) for every reasoner call ``build`` would make, without making any (``rag_lab estimate``)."""

    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]: ...


@runtime_checkable
class ContextBlocks(Protocol):
    """(kind, text) of what a method hands the answering model before its hits (SKETCH's "graph facts")."""

    def context_blocks(self, retrieval: Retrieval) -> list[tuple[str, str]]: ...


@runtime_checkable
class NestedRanking(Protocol):
    """``nested_ranking`` True: the top k is always the prefix of the top K (k <= K), so ``evaluate`` queries once
    at the deepest k and scores prefixes. A method that declares it has a test proving it on a shipped data set
    (tests/test_evaluation_at_k.py)."""

    nested_ranking: bool


def check_contract(retriever) -> None:
    """Refuse, naming what is missing, an object that does not honour the Retriever contract."""
    missing = [m for m in ("name", "config") if not hasattr(retriever, m)]
    missing += [f"{m}()" for m in ("build", "retrieve") if not callable(getattr(retriever, m, None))]
    if missing:
        raise TypeError(f"{getattr(retriever, 'name', type(retriever).__name__)!r} ({type(retriever).__name__}) does "
                        f"not honour the Retriever contract (name, config, build(documents), retrieve(query, k)): "
                        f"missing {', '.join(missing)}")


def nested(retriever) -> bool:
    """Whether ``retriever`` declares a nested ranking (``NestedRanking``)."""
    return bool(getattr(retriever, "nested_ranking", False))


def context_blocks(retriever, retrieval: Retrieval) -> list[tuple[str, str]]:
    """The method's context blocks for ``retrieval`` (``ContextBlocks``), none for a method without them."""
    return retriever.context_blocks(retrieval) if isinstance(retriever, ContextBlocks) else []


def answer_contexts(retriever, retrieval: Retrieval) -> list[str]:
    """The contexts handed to the answering model for ``retrieval``, in order: the method's context blocks,
    then the hits' texts."""
    return [text for _, text in context_blocks(retriever, retrieval)] + [h.chunk.text for h in retrieval.hits]


def planned_llm_calls(retriever, documents: Sequence[Document]) -> list[tuple[str, str]]:
    """The reasoner calls ``retriever``'s build would make (``PlannedCalls``); none for a method without them."""
    return retriever.planned_llm_calls(documents) if isinstance(retriever, PlannedCalls) else []


class Method:
    """What the lab's own methods share, none of it the contract: the build's cost and chunks, the embedder and
    reasoner made on first use, and how the index store files the built index."""

    name = "retriever"
    config = None      # the method's knobs (a Config); None for one without any
    _embedder = None   # an Embedder, or None for the process-wide default
    _reasoner = None   # a Reasoner, a spec string, or None for RAG_LAB_LLM / offline
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

    def index_knobs(self) -> dict:
        """The config knobs the built index depends on: all of them, unless a method's other knobs act
        only at query time (then its variants share one persisted index, as SSG's algorithms share a graph)."""
        return self.config.as_dict()

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
