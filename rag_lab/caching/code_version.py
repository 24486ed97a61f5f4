"""A fingerprint of the code and shipped data a cached result was computed with.

Persisted indexes and the offline reasoner's cached results are keyed by it, so an edit to any
of the files that produced them (a chunker, a spaCy rule, the shipped concept vocabulary) makes
the old entries unreachable instead of silently reusing a result the new code would not give.
The package version alone would not do: it stays the same while the code on a branch changes.
Hashing a few hundred small files takes milliseconds and is done once per process and file set.
"""
from __future__ import annotations

import hashlib
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterable

PACKAGE = Path(__file__).resolve().parents[1]
ROOT = PACKAGE.parent
SHIPPED_DATA = ROOT / "data"
SOURCE_SUFFIXES = {".py", ".json", ".yaml", ".yml", ".txt", ".tsv", ".csv", ".xml", ".jsonl", ".gz"}


def files_under(folder: Path) -> list[Path]:
    """The source and data files under ``folder``, sorted (caches and compiled files left out)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES
                  and "__pycache__" not in p.parts)


def digest_files(paths: Iterable[Path], root: Path = ROOT) -> str:
    """sha256 over each file's path (relative to ``root`` when inside it) and bytes, in the given order."""
    h = hashlib.sha256()
    for p in paths:
        try:
            name = str(p.relative_to(root))
        except ValueError:
            name = str(p)
        h.update(name.encode("utf-8") + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@lru_cache(maxsize=None)
def code_fingerprint(*relative: str) -> str:
    """16 hex digits over the files at the ``relative`` paths (files or folders, relative to the
    package; ``data`` means the shipped data folder). No argument: the whole package and the data."""
    targets = relative or (".", "data")
    paths: list[Path] = []
    for rel in targets:
        p = SHIPPED_DATA if rel == "data" else (PACKAGE / rel).resolve()
        paths.extend(files_under(p) if p.is_dir() else [p] if p.is_file() else [])
    if not paths:
        raise ValueError(f"code_fingerprint: no files found for {targets}")
    return digest_files(paths)[:16]


def class_code_fingerprint(cls: type) -> str:
    """The code a class's cached results depend on: ``code_fingerprint()`` for rag_lab's own classes; for
    a class from outside rag_lab (a plugin's method) that and, after a "+", 16 hex digits over its top-level
    package's source, so an edit to the plugin makes its cached indexes unreachable too. A class with no
    source file (a class made in a notebook, whose ``__main__`` has none) adds nothing."""
    top = cls.__module__.split(".")[0]
    return code_fingerprint() + ("" if top == "rag_lab" else _package_digest(top))


@lru_cache(maxsize=None)
def _package_digest(top: str) -> str:
    package = sys.modules.get(top)
    folders = list(getattr(package, "__path__", None) or [])
    paths = [p for folder in folders for p in files_under(Path(folder))] if folders else \
        [Path(f) for f in [getattr(package, "__file__", None)] if f and Path(f).is_file()]
    return "+" + digest_files(paths)[:16] if paths else ""
