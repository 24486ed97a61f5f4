"""Retrieval methods: one folder per paper (``sketch``, ``unweaver``, ``ssg``, ``gralc``) plus the
``baselines`` they are compared with. Each folder's ``method`` module (the baselines: ``vector``,
``lexical``, ``hybrid``, ``kg``, ``raptor``) registers its retrievers by name in
``rag_lab.evaluation.retrievers.REGISTRY`` with their configs (``config.py``); this package imports
them all, in the order ``available_methods()`` lists them (naive, semantic, bm25, hybrid, sketch, kg,
raptor, unweaver, ssg-*, gralc-*: ``baselines.kg`` builds on ``sketch.method``); installed plugins'
methods follow (``rag_lab.core.plugins``). The folders' ``__init__`` modules import nothing, so
importing a config never registers a method out of that order. Module imports stay light: heavy
libraries are imported when a method is built.

May import: caching, core, reasoning, evaluation, datasets.
"""
import importlib

from ..evaluation.retrievers import REGISTRY, Retriever, available_methods, get_retriever, register  # noqa: F401

MODULES = ("baselines", "sketch.method", "unweaver.method", "ssg.method", "gralc.method")

for _m in MODULES:
    importlib.import_module(f"{__name__}.{_m}")
