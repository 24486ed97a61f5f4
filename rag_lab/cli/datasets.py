"""``python -m rag_lab datasets``: the data sets that load by name (shipped folders, the lab's loaders,
installed plugins' loaders), each marked with whether it is on this machine; a data-set plugin that
failed to load is listed with its error.

"On this machine" is read from where ``download`` puts a data set (``sources.py``): a downloadable
set is here when a file of its default split (any file, for the API sources) is in its folder under
the data cache; a shipped folder always is; a loader with no download source (a plugin's, or one
reading a folder you give it) is marked "path given", since only its caller knows.
"""
from __future__ import annotations


def add_arguments(parser):
    pass


def presence(name: str, shipped: set[str]) -> str:
    """``shipped``, ``downloaded``, ``not here`` or ``path given`` (the loader reads a folder its caller names)."""
    from ..datasets.cache import data_root
    from ..datasets.sources import SOURCES

    if name in shipped:
        return "shipped"
    source = SOURCES.get(name)
    if source is None:
        return "path given"
    folder = data_root() / source.dir_name
    files = [f for f in source.files if not source.default_splits or not f.splits
             or set(f.splits) & set(source.default_splits)]
    found = any((folder / f.name).is_file() for f in files) if files else \
        folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))
    return "downloaded" if found else "not here"


def run(args) -> int:
    from ..datasets import DATA_DIR, available_datasets, dataset_plugins, shipped_datasets
    from ..datasets.cache import data_root

    shipped = set(shipped_datasets()) | {"biomed_articles"}   # its loader reads data/biomed_articles/ (shipped)
    rows = [(name, presence(name, shipped), desc) for name, desc in available_datasets().items()]
    width = max(len(name) for name, _, _ in rows)
    marks = max(len(mark) for _, mark, _ in rows)
    for name, mark, desc in rows:
        print(f"{name:{width}s}  {mark:{marks}s}  {desc}".rstrip())
    for plugin in dataset_plugins():
        if plugin.broken:
            print(f"{plugin.name}\tBROKEN plugin {plugin.target} (package {plugin.package}): {plugin.error}")
    print(f"shipped: in {DATA_DIR}; downloaded: in {data_root()} (RAG_LAB_DATA); "
          "not here: fetch it with `python -m rag_lab download NAME`")
    return 0
