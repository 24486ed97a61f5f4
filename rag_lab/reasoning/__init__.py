"""Reasoning: the LLM jobs of the papers (entities, triples, query entities, themes, answers,
choose-or-stop, summaries) behind one interface (``base``), done offline by classical NLP
(``offline``) or by a chat model (``llm``, ``backends``, ``prompts``), with their caches, token
counts and cost estimates, the ragas judge (``judge``), and many calls at once within a provider's
limits (``batch``, ``rate_limit``); ``replies`` reads a model's JSON reply.

May import: caching, core.
"""
from .base import JOBS, Choice, Entity, Reasoner, Triple, Usage, similarity_choice  # noqa: F401

import os

OFFLINE = "offline"


def get_reasoner(spec: str | None = None, **kwargs) -> Reasoner:
    """A reasoner from a spec string; ``None`` reads ``RAG_LAB_LLM`` and defaults to the offline one.

    Specs: ``offline``, ``openai:MODEL``, ``ollama:MODEL``, ``openai-compatible:MODEL@URL``,
    ``gguf:/path/model.gguf``.
    """
    spec = spec or os.environ.get("RAG_LAB_LLM") or OFFLINE
    if spec == OFFLINE:
        from .offline import OfflineReasoner
        return OfflineReasoner(**kwargs)
    from .llm import LLMReasoner
    return LLMReasoner.from_spec(spec, **kwargs)


def resolve_reasoner(reasoner: "Reasoner | str | None" = None, embedder=None) -> Reasoner:
    """A Reasoner from an object or a spec (None: ``RAG_LAB_LLM``, else offline). The offline
    reasoner embeds too, so it is handed the caller's embedder instead of loading a second model."""
    if isinstance(reasoner, Reasoner):
        return reasoner
    spec = reasoner or os.environ.get("RAG_LAB_LLM") or OFFLINE
    return get_reasoner(spec, embedder=embedder) if spec == OFFLINE and embedder is not None else get_reasoner(spec)
