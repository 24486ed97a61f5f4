"""The baselines the papers compare against: Naive and Semantic-only vector RAG (``vector``),
KG-only (``kg``, SKETCH's structured retriever alone) and RAPTOR (``raptor``).

Importing the package registers them."""
from . import vector, kg, raptor  # noqa: F401,I001  (registers naive, semantic, then kg and raptor)
