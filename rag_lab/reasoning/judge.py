"""A ragas judge (LLM + embeddings) from the same spec strings the LLM reasoner takes.

ragas drives the judge through LangChain, so HTTP specs become a ``ChatOpenAI`` pointed at
the right endpoint; embeddings for answer relevancy are our cached MiniLM embedder. The API
key is read from the environment and handed to the client only.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

KEY_ENV = {"openai": "OPENAI_API_KEY", "ollama": None, "openai-compatible": "RAG_LAB_LLM_API_KEY"}


@dataclass
class Judge:
    name: str
    llm: Any
    embeddings: Any

    @classmethod
    def from_spec(cls, spec: str, embedder=None, timeout: float = 120.0) -> "Judge":
        from langchain_openai import ChatOpenAI
        from ragas.embeddings import LangchainEmbeddingsWrapper
        from ragas.llms import LangchainLLMWrapper

        from ..chunking import langchain_embeddings
        from ..embedding import shared_embedder
        from .backends import DUMMY_KEY, parse_spec

        parsed = parse_spec(spec)
        if parsed.kind not in KEY_ENV:
            raise ValueError(f"judge spec {spec!r}: ragas needs an HTTP chat model (openai:, ollama: or "
                             "openai-compatible:); serve a GGUF with llama.cpp's server and use openai-compatible:")
        env = KEY_ENV[parsed.kind]
        key = (os.environ.get(env) if env else None) or (None if parsed.kind == "openai" else DUMMY_KEY)
        if not key:
            raise ValueError(f"judge {parsed.name}: set the API key in the environment variable {env}")
        chat = ChatOpenAI(model=parsed.model, base_url=parsed.base_url, api_key=key, temperature=0,
                          timeout=timeout, max_retries=2)
        emb = LangchainEmbeddingsWrapper(langchain_embeddings(embedder or shared_embedder()))
        return cls(parsed.name, LangchainLLMWrapper(chat), emb)


def get_judge(spec: str | None, embedder=None) -> Judge | None:
    """None (no LLM-judged metrics) unless a spec is given."""
    return Judge.from_spec(spec, embedder) if spec else None
