"""Evaluation: what makes methods comparable. The Retriever contract and the method registry
(``retrievers``) with the persisted-index store (``index_store``, which also says which methods build
the same index and hands one built index to another), the per-document work of a build
done on a Dask cluster (``cluster``, ``cluster_worker``) and the LangChain face (``langchain``); the
retrieval metrics (``metrics``), ragas' answer metrics (``answer_metrics``; ``string_match``: when its
non-LLM context metrics cannot exceed zero; ``worked``: a worked example's gold passages and answer, read),
the harness that runs retrievers over a question set into one tidy table (``harness``), and where a
result came from (``provenance``: reasoners, parameters, git revision, package versions).

``evaluate``, ``evaluate_retrieval`` and ``summarize`` are this layer's public entry points.

May import: caching, core, reasoning.
"""
from .harness import evaluate, evaluate_retrieval, summarize  # noqa: F401  (the layer's public entry points)
