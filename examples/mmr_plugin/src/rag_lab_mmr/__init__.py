"""A rag_lab plugin adding one method, ``mmr``. rag_lab finds ``register_methods`` through the entry point
in pyproject.toml and calls it once; it registers the method by name, class path, description and config,
the same call the lab's own methods make. Only the config is imported here: the method's module is
imported when a retriever is made."""
from rag_lab.evaluation.retrievers import register

from .config import MMRConfig


def register_methods() -> None:
    config = MMRConfig()
    register("mmr", "rag_lab_mmr.method:MMRRetriever",
             f"MMR (Carbonell & Goldstein 1998): lambda={config.lambda_:g} over the top {config.fetch_k} "
             f"windows of {config.size} MiniLM tokens by cosine", config)
