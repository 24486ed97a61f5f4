"""The Retriever contract and the registry that finds methods by name.

A retriever is built once over documents and answers ``retrieve(query, k)`` with a
``Retrieval``. The registry maps a name to ``"module:Class"`` and the method's config (a
frozen ``rag_lab.configs.Config`` holding every knob), so listing methods imports nothing
heavy; a method's class is imported only when one is made.
"""
from __future__ import annotations

import importlib
import time
from typing import Sequence

from .configs import Config
from .progress import building
from .types import Chunk, Cost, Document, Retrieval

# name -> (import path "module:Class", the method's config, one-line description)
REGISTRY: dict[str, tuple[str, Config, str]] = {}
SHARED = ("reasoner", "embedder")   # handed to the retriever as they are; every other keyword is a knob


def register(name: str, target: str, description: str, config: Config) -> None:
    """Register a method: ``target`` is ``"module:Class"``, ``config`` its knobs (the class's
    defaults, or those with the one field that tells this name from its siblings)."""
    if not isinstance(config, Config):
        raise TypeError(f"register({name!r}): config must be a Config instance, got {type(config).__name__}")
    REGISTRY[name] = (target, config, description)


def available_methods() -> dict[str, str]:
    return {name: desc for name, (_, _, desc) in REGISTRY.items()}


def registered_config(name: str) -> Config:
    """The config ``name`` was registered with (its knobs and their defaults)."""
    if name not in REGISTRY:
        raise ValueError(f"unknown method {name!r}; registered: {', '.join(REGISTRY)}")
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

    def __init__(self):
        self.build_cost = Cost()
        self.chunks: list[Chunk] = []

    def build(self, documents: Sequence[Document]) -> "Retriever":
        if not documents:
            raise ValueError(f"{self.name}: cannot build an index over no documents")
        t0 = time.perf_counter()
        with building(self.name, len(documents), reasoner=lambda: self._reasoner):   # progress.py
            self._build(list(documents))
        self.build_cost.seconds += time.perf_counter() - t0
        return self

    def retrieve(self, query: str, k: int = 5) -> Retrieval:
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"{self.name}: the query must be a non-empty string, got {query!r}")
        if k <= 0:
            raise ValueError(f"{self.name}: k must be positive, got {k}")
        t0 = time.perf_counter()
        result = self._retrieve(query, k)
        result.cost.seconds = time.perf_counter() - t0
        return result

    @property
    def embedder(self):
        """The embedder, made on first use: the shared default unless one was handed in."""
        if self._embedder is None:
            from .embedding import shared_embedder
            self._embedder = shared_embedder()
        return self._embedder

    @property
    def reasoner(self):
        """The reasoner, resolved on first use from an object or a spec string."""
        if self._reasoner is None or isinstance(self._reasoner, str):
            from .reasoning import resolve_reasoner
            self._reasoner = resolve_reasoner(self._reasoner, self.embedder)
        return self._reasoner

    def as_langchain(self, k: int = 5):
        """This built retriever as a LangChain ``BaseRetriever`` giving ``k`` Documents a query, with
        chunk id, doc id, score, via, rank and span in their metadata (see rag_lab/langchain.py)."""
        from .langchain import as_langchain_retriever
        return as_langchain_retriever(self, k)

    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]:
        """(job, input text) for every reasoner call ``build`` would make, without making any.

        Used by ``python -m rag_lab estimate``; methods that call a reasoner override it."""
        return []

    def _build(self, documents: list[Document]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _retrieve(self, query: str, k: int) -> Retrieval:  # pragma: no cover - abstract
        raise NotImplementedError
