"""rag_lab: a reproducible lab for structure-aware retrieval-augmented generation."""
import os as _os

# numba (UMAP in RAPTOR) compiles for the generic x86-64 CPU, so a tree does not depend on the host's
# instruction set (methods/baselines/raptor_cluster.py); must be set before numba is first imported
_os.environ.setdefault("NUMBA_CPU_NAME", "generic")

from .datasets import data_source, load_dataset
from .evaluation.harness import evaluate_retrieval, summarize
from .methods import available_methods, get_retriever
from .core.types import Chunk, Cost, Dataset, Document, Hit, Question, Retrieval, Section

__all__ = ["Chunk", "Cost", "Dataset", "Document", "Hit", "Question", "Retrieval", "Section", "available_methods",
           "data_source", "evaluate_retrieval", "get_retriever", "load_dataset", "summarize"]
__version__ = "0.1.0"
