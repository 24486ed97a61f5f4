"""Small JSON records that several processes update at once (``checksums.json``, a download's
``manifest.json``), without losing anyone's change.

Why: each writer used to read the file, change its copy and write it back whole; two ``download``
runs at the same time each wrote their own copy and the records of one were lost. Here every
change is read-modify-write under an exclusive ``flock`` on a lock file beside the record
(``<name>.lock``, left in place: removing it would let a third process lock a different file), and
the write itself is atomic (temporary file, then rename), so a reader never sees half a file.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Callable, TypeVar

from .atomic import write_text

T = TypeVar("T")


@contextlib.contextmanager
def locked(path: str | os.PathLike):
    """Hold an exclusive lock for ``path`` (on ``<path>.lock``) while the block runs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                     # closing releases the lock


def read_object(path: str | os.PathLike, fix: str) -> dict:
    """The JSON object in ``path`` ({} when absent); a clear ValueError naming the file and ``fix`` otherwise."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg}); {fix}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}; {fix}")
    return data


def update(path: str | os.PathLike, change: Callable[[dict], T], fix: str) -> tuple[dict, T]:
    """Under the lock: read the object, let ``change`` edit it in place, write it back atomically.
    Returns (the object as written, what ``change`` returned)."""
    with locked(path):
        data = read_object(path, fix)
        result = change(data)
        write_text(path, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        return data, result
