"""Hand-written stand-ins for the SKETCH/RAPTOR tests: a reasoner whose triples, query entities
and summaries are looked up from tables, and an embedder whose vectors are given by hand."""
from __future__ import annotations

import numpy as np

from rag_lab.reasoning import Reasoner, Triple
from rag_lab.core.types import Cost


class TableReasoner(Reasoner):
    """triples(text): every table triple whose key sentence occurs in the text, in table order;
    query_entities(query): the listed names; summarize: "S(" + "|".join(texts) + ")"."""

    name = "table"

    def __init__(self, triples: dict[str, list[Triple]] | None = None, queries: dict[str, list[str]] | None = None):
        super().__init__()
        self.table = triples or {}
        self.queries = queries or {}

    def _count(self, job):
        self.usage.add(job, Cost(llm_calls=1))

    def triples(self, text):
        self._count("triples")
        return [t for key, ts in self.table.items() if key in text for t in ts]

    def query_entities(self, query):
        self._count("query_entities")
        return list(self.queries.get(query, []))

    def summarize(self, texts, max_words=100):
        self._count("summarize")
        return "S(" + "|".join(texts) + ")"

    def entities(self, text):
        raise NotImplementedError

    def themes(self, text, n=5):
        raise NotImplementedError

    def answer(self, question, contexts):
        raise NotImplementedError

    def choose_next(self, query, gathered, candidates, similarities, candidate_ids=None):
        raise NotImplementedError


class TableEmbedder:
    """encode: unit vectors from a table (unknown texts raise); count_tokens: words."""

    def __init__(self, vectors: dict[str, list[float]]):
        self.vectors = {k: np.asarray(v, np.float32) / np.linalg.norm(v) for k, v in vectors.items()}

    def encode(self, texts):
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            raise KeyError(f"no hand-made vector for {missing}")
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 2), np.float32)

    def encode_one(self, text):
        return self.encode([text])[0]

    def count_tokens(self, texts):
        return sum(len(t.split()) for t in ([texts] if isinstance(texts, str) else texts))
