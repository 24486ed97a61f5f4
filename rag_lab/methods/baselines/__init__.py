"""The baselines the papers compare against: Naive and Semantic-only vector RAG (``vector``),
KG-only (``kg``, SKETCH's structured retriever alone) and RAPTOR (``raptor``); and the two every
retrieval benchmark runs: BM25 over naive's windows (``lexical``) and the BM25 + dense hybrid by
reciprocal rank fusion (``hybrid``; the orderings both use are in ``fusion``).

Importing the package registers them."""
from . import vector, lexical, hybrid, kg, raptor  # noqa: F401,I001  (registers naive, semantic, bm25, hybrid, then kg and raptor)
