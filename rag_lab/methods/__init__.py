"""Retrieval methods: one folder per paper (``sketch``, ``unweaver``, ``ssg``, ``gralc``) plus the
``baselines`` they are compared with. Each folder's ``method`` module registers its retrievers
by name in ``rag_lab.retrievers.REGISTRY`` when imported; this package imports them all, in
the order ``available_methods()`` lists them. Module imports stay light: heavy libraries are
imported when a method is built."""
import importlib

from ..retrievers import REGISTRY, Retriever, available_methods, get_retriever, register  # noqa: F401

PACKAGES = ("baselines", "sketch", "unweaver", "ssg", "gralc")

for _m in PACKAGES:
    importlib.import_module(f"{__name__}.{_m}")
