"""Every knob of ``mmr`` with its default, in one frozen dataclass (rag_lab's Config: it validates,
prints and hashes itself; ``get_retriever("mmr", lambda_=0.7)`` overrides a knob)."""
from dataclasses import dataclass

from rag_lab.core.configs import Config


@dataclass(frozen=True)
class MMRConfig(Config):
    size: int = 128         # naive's windows (MiniLM tokens), so the two differ only in the ranking
    overlap: int = 16
    lambda_: float = 0.5    # relevance against novelty; LangChain's max_marginal_relevance_search default
    fetch_k: int = 20       # candidates re-ranked: the top 20 by cosine (LangChain's default too)

    def validate(self) -> None:
        self.check_overlap("size", "overlap")
        self.check_range("lambda_", 0.0, 1.0)
        self.check_integer("fetch_k")
        self.check_positive("fetch_k")
