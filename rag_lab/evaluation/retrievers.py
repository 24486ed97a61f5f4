"""The Retriever contract (``name``, ``config``, ``build``, ``retrieve``), the optional abilities a method may add
(small protocols), ``Method`` (what the lab's own methods share) and the registry that finds methods by name.

The registry maps a name to ``"module:Class"`` and the method's config (a
frozen ``rag_lab.core.configs.Config`` holding every knob), so listing methods imports nothing
heavy; a method's class is imported only when one is made. The lab's own methods register when
``rag_lab.methods`` is imported; installed packages register theirs through the entry-point group
``rag_lab.methods`` (``rag_lab.core.plugins``), loaded on the first lookup below.
"""
from __future__ import annotations

import copy
import importlib
from typing import Any, Protocol, Sequence, runtime_checkable

from ..core import plugins
from ..core.configs import Config
from ..core.types import Cost, Document, Retrieval

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
    """The contract every method honours, and all a comparison needs: ``build(documents)`` returns the retriever
    built, ``retrieve(query, k)`` a ``Retrieval``. The harness times them, reuses indexes and records near-ties."""
    name: str
    config: Any   # the knobs (a Config), None for a method without any

    def build(self, documents: Sequence[Document]) -> "Retriever": ...

    def retrieve(self, query: str, k: int) -> Retrieval: ...


# Optional abilities (docs/plugins.md): a method may have any of them; their callers ask with isinstance.
@runtime_checkable
class DocumentWork(Protocol):
    """Build's per-document part, run on Dask workers for what it leaves in the caches (cluster.py)."""
    def document_work(self, documents: Sequence[Document]) -> list | None: ...


@runtime_checkable
class BatchedQueries(Protocol):
    """Asked before a question set is retrieved, to batch the queries' reasoner calls; results must not change."""
    def prepare_queries(self, queries: Sequence[str]) -> None: ...


@runtime_checkable
class PlannedCalls(Protocol):
    """(job, input text) of every reasoner call ``build`` would make, none made (``rag_lab estimate``)."""
    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]: ...


@runtime_checkable
class ContextBlocks(Protocol):
    """(kind, text) of what a method hands the answering model before its hits (SKETCH's "graph facts")."""
    def context_blocks(self, retrieval: Retrieval) -> list[tuple[str, str]]: ...


@runtime_checkable
class NestedRanking(Protocol):
    """True: top k is always the prefix of top K, so ``evaluate`` queries once at the deepest k (a test proves it)."""
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
    """The contexts handed to the answering model for ``retrieval``: the method's context blocks, then the hits."""
    return [text for _, text in context_blocks(retriever, retrieval)] + [h.chunk.text for h in retrieval.hits]


def planned_llm_calls(retriever, documents: Sequence[Document]) -> list[tuple[str, str]]:
    """The reasoner calls ``retriever``'s build would make (``PlannedCalls``); none for a method without them."""
    return retriever.planned_llm_calls(documents) if isinstance(retriever, PlannedCalls) else []


class Method:
    """What the lab's own methods share, none of it the contract: knobs from ``config_class``, the build's cost and
    chunks, the embedder and reasoner made on first use, and how the index store files the built index.
    ``index_knobs()``, when a method has it, names the knobs its index depends on (default: all of them)."""

    name = "retriever"
    config = None      # the method's knobs (a Config); None for one without any
    reasoner_at_build = False   # True: it calls its reasoner while indexing, so its stored index is keyed by it too
    index_family: str | None = None   # the folder its stored index is filed in (None: its name), shared by variants
    index_transient: tuple[str, ...] = ()   # attributes a stored index leaves out (made again on first use)
    config_class: type[Config] | None = None   # the knobs' class: ``config`` is made from it and the overrides

    def __init__(self, config: Config | None = None, *, reasoner=None, embedder=None, **overrides):
        if self.config_class is not None:
            self.config = self.config_class.resolve(config, **overrides)
        # a Reasoner or a spec string (None: RAG_LAB_LLM, else offline); an Embedder (None: the shared one)
        self._reasoner, self._embedder = reasoner, embedder
        self.build_cost, self.chunks = Cost(), []

    def variant(self, name: str | None = None, **changes) -> "Method":
        """A copy sharing this built index that queries with other query-time knobs (the config's ``QUERY_KNOBS``:
        SKETCH's hops, UnWeaver's rule or selection); it reports the same build cost, as it needs the same index."""
        allowed = getattr(self.config, "QUERY_KNOBS", ())
        if set(changes) - set(allowed):
            raise ValueError(f"variant can change only {sorted(allowed)}, not {sorted(set(changes) - set(allowed))}")
        other = copy.copy(self)
        other.config, other.build_cost = self.config.replace(**changes), copy.copy(self.build_cost)
        other.name = name or f"{self.name}[{','.join(f'{k}={v}' for k, v in changes.items())}]"
        return other

    def _check_built(self, index) -> None:
        """Refuse a query before ``build``: ``index`` is what the build makes (None until then)."""
        if index is None:
            raise RuntimeError(f"{self.name}: call build(documents) before retrieve()")

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
