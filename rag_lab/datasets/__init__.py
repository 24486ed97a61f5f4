"""Dataset registry: shipped folders under ``data/`` and loaders for public datasets.

``load_dataset("italian_cuisine")`` reads a shipped folder; ``load_dataset(path)``
reads any folder in the generic form; a registered loader name (``qasper`` …)
calls that loader, which reads a local copy — by default from the data cache that
``python -m rag_lab download NAME`` fills (``$RAG_LAB_DATA``, see ``cache.py``) —
and says how to get one if absent. An explicit ``path=`` always wins. Installed packages add
loaders through the entry-point group ``rag_lab.datasets`` (``rag_lab.core.plugins``): a function
that calls ``register_loader``, loaded on the first lookup.

May import: caching, core, reasoning, evaluation.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ..core import plugins
from ..core.generic_form import read_dataset
from ..core.types import Dataset
from .cache import SHIPPED_DIR, data_root, dataset_dir  # noqa: F401  (re-exported for loaders and users)

# The corpora shipped with the repository (a constant: downloads go to data_root(), not here).
DATA_DIR = SHIPPED_DIR

# name -> (loader(limit=..., **kw) -> Dataset, one-line description); filled by loader modules.
LOADERS: dict[str, tuple[Callable[..., Dataset], str]] = {}


def register_loader(name: str, description: str):
    def deco(fn):
        LOADERS[name] = (fn, description)
        return fn
    return deco


def shipped_datasets() -> dict[str, str]:
    """Folders under data/ that hold a dataset, with their first README line as description."""
    out = {}
    if DATA_DIR.is_dir():
        for folder in sorted(DATA_DIR.iterdir()):
            if (folder / "documents.jsonl").exists() or list(folder.glob("*.txt")) or (folder / "loader.txt").exists():
                readme = folder / "README.md"
                desc = readme.read_text(encoding="utf-8").strip().splitlines()[0].lstrip("# ") if readme.exists() else ""
                out[folder.name] = desc
    return out


def available_datasets() -> dict[str, str]:
    _import_loaders()
    out = dict(shipped_datasets())
    out.update({name: desc for name, (_, desc) in LOADERS.items()})
    return out


def _import_loaders() -> None:
    from . import loaders  # noqa: F401  (registers the public-dataset loaders)
    dataset_plugins()


def dataset_plugins() -> list[plugins.Plugin]:
    """The installed data-set plugins (loaded on first call), broken ones with their error; a plugin
    may not take the name of a shipped data set or of the lab's loaders."""
    from . import loaders  # noqa: F401  (the lab's own loaders first: their names are taken)
    return plugins.load_plugins(plugins.DATASETS, LOADERS, reserved=shipped_datasets())


def load_dataset(name_or_path: str | os.PathLike, limit: int | None = None, strict: bool = False,
                 **kwargs) -> Dataset:
    """Load a shipped dataset by name, a folder in the generic form, or a registered public dataset.
    ``strict``: a generic-form line with a field the format does not know is an error, not a warning."""
    _import_loaders()
    key = str(name_or_path)
    if key in LOADERS:
        dataset = LOADERS[key][0](**kwargs)
    elif (DATA_DIR / key).is_dir() and key in shipped_datasets():
        dataset = _folder_subset(read_dataset(DATA_DIR / key, name=key, strict=strict), key, kwargs)
    elif Path(key).is_dir():
        dataset = _folder_subset(read_dataset(Path(key), strict=strict), key, kwargs)
    else:
        known = ", ".join(sorted(available_datasets()))
        tried = Path(key).expanduser().resolve()
        raise ValueError(f"unknown dataset {key!r}: no folder at {tried} and not one of: {known}")
    return dataset.limit(limit) if limit else dataset


def _folder_subset(dataset: Dataset, key: str, kwargs: dict) -> Dataset:
    """A folder in the generic form takes one option, ``documents=N`` (``Dataset.first_documents``)."""
    unknown = sorted(set(kwargs) - {"documents"})
    if unknown:
        raise TypeError(f"dataset {key!r} (a folder in the generic form) takes only documents=N, got {unknown}")
    n = kwargs.get("documents")
    return dataset.first_documents(n) if n is not None else dataset


@dataclass(frozen=True)
class DataSource:
    """What a notebook's data parameter names: ``label`` (how tables and options name it), ``key`` (what
    ``load_dataset`` takes) and the loader arguments the value itself carries."""
    label: str
    key: str
    arguments: dict = field(default_factory=dict)

    def load(self, options: Mapping[str, Any] | None = None, limit: int | None = None) -> Dataset:
        """The data set, ``options`` over the value's own arguments."""
        return load_dataset(self.key, limit=limit, **{**self.arguments, **(options or {})})


EXPECTED = ("a registered data set name, a folder in the generic form (documents.jsonl or *.txt files, and "
            "questions.jsonl) or a loader with arguments ({'loader': NAME, ...its arguments})")


def data_source(value) -> DataSource:
    """Every notebook's data parameter, read the same way: a registered name (shipped or a loader), a folder
    in the generic form, or a mapping ``{"loader": NAME, **arguments}``. Anything else is an error naming the
    value and what was expected, so nothing a user names is silently dropped."""
    _import_loaders()
    if isinstance(value, DataSource):
        return value
    if isinstance(value, Mapping):
        name = value.get("loader")
        if not isinstance(name, str) or name not in available_datasets():
            raise ValueError(f"data set {dict(value)!r}: 'loader' must name a registered data set "
                             f"({', '.join(sorted(available_datasets()))}); expected {EXPECTED}")
        return DataSource(name, name, {k: v for k, v in value.items() if k != "loader"})
    if isinstance(value, (str, os.PathLike)) and str(value):
        key = str(value)
        if key in available_datasets():
            return DataSource(key, key)
        folder = Path(key).expanduser()
        texts = (folder / "documents.jsonl").is_file() or any(folder.glob("*.txt"))
        if texts and (folder / "questions.jsonl").is_file():
            return DataSource(folder.resolve().name, str(folder.resolve()))
        where = f"{folder.resolve()} holds no documents.jsonl or *.txt and questions.jsonl" if folder.is_dir() \
            else f"no folder at {folder.resolve()}"
        raise ValueError(f"data set {key!r}: not a registered name and {where}; expected {EXPECTED}; "
                         f"registered: {', '.join(sorted(available_datasets()))}")
    raise ValueError(f"data set {value!r}: expected {EXPECTED}")
