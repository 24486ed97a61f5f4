"""rag_lab: a reproducible lab for structure-aware retrieval-augmented generation."""
from .datasets import load_dataset
from .evaluation.harness import evaluate_retrieval, summarize
from .methods import available_methods, get_retriever
from .core.types import Chunk, Cost, Dataset, Document, Hit, Question, Retrieval, Section

__all__ = ["Chunk", "Cost", "Dataset", "Document", "Hit", "Question", "Retrieval", "Section", "available_methods",
           "evaluate_retrieval", "get_retriever", "load_dataset", "summarize"]
__version__ = "0.1.0"
