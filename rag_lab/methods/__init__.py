"""Retrieval methods. Each module here registers its methods by name in
``rag_lab.retrievers.REGISTRY`` when imported; this package imports them all, so a new
method is a new module and nothing else. Module imports stay light: heavy libraries are
imported when a method is built."""
import importlib
import pkgutil

from ..retrievers import REGISTRY, Retriever, available_methods, get_retriever, register  # noqa: F401

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")
