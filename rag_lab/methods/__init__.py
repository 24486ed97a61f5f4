"""Retrieval methods. Each registers itself by name in ``rag_lab.retrievers.REGISTRY``;
importing this package registers them all (module imports stay light: heavy libraries
are imported when a method is built)."""
from ..retrievers import REGISTRY, Retriever, available_methods, get_retriever, register  # noqa: F401
