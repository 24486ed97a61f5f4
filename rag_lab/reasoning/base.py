"""The Reasoner interface: the jobs the four papers hand to an LLM, behind one API.

Jobs (method -> paper that needs it):
- ``entities(text)``            entities of a chunk, each with a description (UnWeaver)
- ``triples(text)``             (subject, relation, object) with entity types (SKETCH)
- ``query_entities(query)``     entity names mentioned in a query (SKETCH)
- ``themes(text, n=5)``         a document's themes (SSG traversal)
- ``answer(question, contexts)`` an answer grounded in retrieved contexts (all)
- ``choose_next(query, gathered, candidates, similarities, candidate_ids)`` next step or stop (SSG)
- ``summarize(texts, max_words)`` a summary (RAPTOR clusters; UnWeaver's over-long descriptions)

Two implementations: ``OfflineReasoner`` (classical NLP, deterministic, the default) and
``LLMReasoner`` (a chat model from a spec string). Every job's usage is counted per job in
``usage`` so methods can report build and query costs separately (``usage_since``).

Jobs may run on several threads at once (``rag_lab.reasoning.batch``): ``Usage`` is updated under
a lock, and ``costs_of`` gives the cost of the calls one thread made, which ``usage_since``
cannot tell apart while other threads add to the same counters.
"""
from __future__ import annotations

from ..core import ties

import contextlib
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from ..core.types import Cost

JOBS = ("entities", "triples", "query_entities", "themes", "answer", "choose_next", "summarize")


@dataclass(frozen=True)
class Entity:
    name: str
    type: str = ""
    description: str = ""


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    object: str
    subject_type: str = ""
    object_type: str = ""


@dataclass(frozen=True)
class Choice:
    """A traversal decision: ``action`` is "next" (take ``candidate``, an index) or "stop"."""

    action: str
    candidate: int | None = None
    reason: str = ""
    fallback: bool = False


_USAGE_LOCK = threading.Lock()       # one lock for every Usage: additions are tiny and rare next to a call
_THREAD = threading.local()          # .sinks: the per-thread cost collectors of ``costs_here``


@dataclass
class Usage:
    """Per-job counters, summed over calls; safe to add to from several threads."""

    per_job: dict[str, Cost] = field(default_factory=lambda: {j: Cost() for j in JOBS})

    def add(self, job: str, cost: Cost) -> None:
        with _USAGE_LOCK:
            self.per_job[job] = self.per_job.get(job, Cost()) + cost
        for sink in getattr(_THREAD, "sinks", ()):
            sink.append(cost)

    def total(self) -> Cost:
        return sum(self.copy().per_job.values(), Cost())

    def copy(self) -> "Usage":
        with _USAGE_LOCK:
            return Usage(dict(self.per_job))


@contextlib.contextmanager
def costs_here() -> Iterator[list[Cost]]:
    """Collect the cost of every job this thread runs inside the block (other threads' calls are not
    counted, unlike ``usage_since``)."""
    sinks = getattr(_THREAD, "sinks", None)
    if sinks is None:
        sinks = _THREAD.sinks = []
    sink: list[Cost] = []
    sinks.append(sink)
    try:
        yield sink
    finally:
        sinks.remove(sink)


def costs_of(fn: Callable[..., Any], *args, **kwargs) -> tuple[Any, Cost]:
    """``fn(*args, **kwargs)`` and the summed cost of the reasoner jobs it ran on this thread."""
    with costs_here() as sink:
        result = fn(*args, **kwargs)
    return result, sum(sink, Cost())


class Reasoner(ABC):
    """Base class. ``name`` says which reasoner produced a result (shown in every table)."""

    name = "reasoner"
    # how many jobs ``rag_lab.reasoning.batch.run_batch`` runs at once with this reasoner: 1 unless a
    # subclass is safe to call from several threads and gains from it (a remote LLM does; local models
    # competing for two cores do not)
    concurrency = 1

    def __init__(self):
        self.usage = Usage()

    def identity(self) -> dict:
        """What makes this reasoner's results what they are (subclasses add their knobs and models);
        never a key, URL credential or header."""
        return {"name": self.name}

    def fingerprint(self) -> str:
        """16 hex digits over the class and ``identity()``: keys cached results and persisted indexes
        built with this reasoner."""
        import hashlib
        import json

        cls = type(self)
        text = json.dumps({"class": f"{cls.__module__}:{cls.__qualname__}", **self.identity()}, sort_keys=True,
                          default=str, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def usage_since(self, before: Usage) -> Cost:
        """Cost of the calls made since ``before = reasoner.usage.copy()``."""
        total = Cost()
        for job, cost in self.usage.copy().per_job.items():
            prev = before.per_job.get(job, Cost())
            total = total + Cost(*(getattr(cost, f) - getattr(prev, f) for f in cost.__dataclass_fields__))
        return total

    @abstractmethod
    def entities(self, text: str) -> list[Entity]: ...

    @abstractmethod
    def triples(self, text: str) -> list[Triple]: ...

    @abstractmethod
    def query_entities(self, query: str) -> list[str]: ...

    @abstractmethod
    def themes(self, text: str, n: int = 5) -> list[str]: ...

    @abstractmethod
    def answer(self, question: str, contexts: Sequence[str]) -> str: ...

    @abstractmethod
    def choose_next(self, query: str, gathered: Sequence[str], candidates: Sequence[str],
                    similarities: Sequence[float], candidate_ids: Sequence[str] | None = None) -> Choice:
        """Pick the index of the next candidate (texts, with their query similarities) or stop."""

    @abstractmethod
    def summarize(self, texts: Sequence[str], max_words: int = 100) -> str: ...


def similarity_choice(similarities: Sequence[float], fallback: bool = False) -> Choice:
    """The SSG paper's fallback for an invalid LLM reply: take the most query-similar candidate (the
    earlier on ties), which keeps the traversal moving; it never stops while there are candidates. The
    offline reasoner decides differently (``offline.marginal_relevance_choice``), so it does not repeat
    query_traversal."""
    if not similarities:
        return Choice("stop", None, "no candidates", fallback)
    return Choice("next", ties.best(similarities, what="similarity choice"), "highest query similarity", fallback)
