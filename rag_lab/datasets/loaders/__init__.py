"""Loaders for public datasets that cannot be downloaded here: each module registers a name
with ``rag_lab.datasets.register_loader`` and reads a local copy in the upstream format,
failing with a message that says what to download and where to put it."""
import importlib
import pkgutil

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")
