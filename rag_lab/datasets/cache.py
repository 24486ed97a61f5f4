"""Where data lives: the corpora shipped in the repository, and the cache that downloads go to.

Shipped corpora (``data/`` beside the package) are part of the source tree and never move.
Public data sets downloaded by ``python -m rag_lab download NAME`` go to the data cache,
``$RAG_LAB_DATA``, else ``<rag_lab cache>/data`` (``$RAG_LAB_CACHE``, default
``~/.cache/rag_lab``), one folder per data set; every loader looks there by default, so a
download is found without a path. The cache also holds ``checksums.json``: the SHA-256 of
every file fetched, which is how files without a published checksum are checked on later
downloads (trust on first use).
"""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from ..caching.locked_json import read_object, update
from ..caching.sqlite_cache import default_cache_dir

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "data"
DATA_ENV = "RAG_LAB_DATA"
CHECKSUMS = "checksums.json"


def data_root() -> Path:
    """The folder downloads go to and loaders look in (``$RAG_LAB_DATA`` or ``<cache>/data``)."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV]).expanduser()
    return default_cache_dir() / "data"


def dataset_dir(name: str, env_var: str | None = None) -> Path:
    """One data set's folder: ``$env_var`` when set (a per-data-set override), else ``<data root>/name``."""
    if env_var and os.environ.get(env_var):
        return Path(os.environ[env_var]).expanduser()
    return data_root() / name


def download_hint(name: str, args: str = "") -> str:
    """The sentence every 'not found' message ends with."""
    command = f"python -m rag_lab download {name}" + (f" {args}" if args else "")
    return f"Run `{command}` (it writes under {data_root()}; see docs/data.md)"


class ChecksumStore:
    """The SHA-256 of every downloaded file by source URL, kept in ``<root>/checksums.json``.

    A URL seen for the first time is recorded; a later download of the same URL is compared
    with the record (trust on first use) unless the source says the file changes upstream.
    Records are merged under a lock (``rag_lab.caching.locked_json``): two downloads at once keep both."""

    FIX = "fix or delete it (it only holds checksums recorded on earlier downloads)"

    def __init__(self, root: str | os.PathLike):
        self.path = Path(root) / CHECKSUMS
        self._entries: dict[str, dict] | None = None

    def entries(self) -> dict[str, dict]:
        if self._entries is None:
            self._entries = read_object(self.path, self.FIX)
        return self._entries

    def get(self, url: str) -> dict | None:
        return self.entries().get(url)

    def record(self, url: str, sha256: str, size: int, file: str) -> None:
        entry = {"sha256": sha256, "size": size, "file": file,
                 "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        self._entries, _ = update(self.path, lambda entries: entries.__setitem__(url, entry), self.FIX)
