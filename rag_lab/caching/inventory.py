"""What rag_lab keeps in its cache folder, how much of it, and what can go (``rag_lab cache``).

Why: nothing ever removed a cache entry. Index keys include a fingerprint of the code, so every
edit or upgrade leaves all built indexes unreachable; a killed save leaves a ``.tmp-*`` folder; a
damaged SQLite file is moved aside and kept; GraLC's token embeddings for a paper-scale run fill
tens of gigabytes. This module lists each kind of entry with its size (``info``), finds what can be
removed (``prune_candidates``: entries the current code can no longer look up, leftovers of killed
saves and moved-aside damaged files, and with ``older_than`` entries not used for that many days)
and removes it (``remove``), or empties one kind (``clear``). It knows file names only; whether an
index entry is current is the caller's predicate (the index store's ``is_current``).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from .sqlite_cache import SQLiteCache, explain

LEFTOVER_AGE = 3600.0           # seconds: a temporary file younger than this may belong to a live writer
DAY = 86400.0


@dataclass(frozen=True)
class Kind:
    name: str
    path: str                     # relative to the cache folder
    what: str
    table: str = ""               # SQLite: the table of entries
    dated: bool = False           # SQLite: rows carry ``created`` (seconds since the epoch)
    pattern: str = ""             # folders: the files that are entries


KINDS = {k.name: k for k in [
    Kind("embeddings", "embeddings.sqlite", "sentence vectors", table="vectors"),
    Kind("llm", "llm.sqlite", "LLM replies", table="replies", dated=True),
    Kind("judge", "judge.sqlite", "ragas judge replies", table="replies", dated=True),
    Kind("offline_reasoner", "offline_reasoner.sqlite", "offline reasoner results", table="results", dated=True),
    Kind("token_embeddings", "token_embeddings", "GraLC token embeddings", pattern="*.npz"),
    Kind("onnx", "onnx", "ONNX exports of the encoder", pattern="*.onnx"),
    Kind("indexes", "indexes", "built indexes"),
]}
_ATOMIC_TMP = re.compile(r"^\..+\.tmp(\.[^./]+)?$")       # caching.atomic.atomic_path's temporary names
_SAVE_TMP = re.compile(r"^\.(tmp|broken)-[^-]+-(\d+)-[0-9a-f]+$")   # the index store's temporary folders


@dataclass
class Row:
    kind: str
    path: Path
    entries: int | None
    size: int
    note: str = ""


@dataclass
class Candidate:
    kind: str
    path: Path
    reason: str
    size: int
    rows_before: float | None = None     # SQLite: delete rows created before this time (not the file)
    rows: int = 0


def size_of(path: Path) -> int:
    """Bytes of a file (with its SQLite -wal/-shm) or of everything under a folder."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    sides = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    return sum(p.stat().st_size for p in sides if p.is_file())


def _count(path: Path, table: str, where: str = "", params: tuple = ()) -> int:
    """Rows of ``table`` (read only); an error a user can fix becomes a ``CacheFileError`` naming the file."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            return db.execute(f"SELECT COUNT(*) FROM {table} {where}", params).fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error as e:
        raise explain(e, path, "cache file") from e


def index_entries(folder: Path) -> Iterable[Path]:
    """Entry folders of the index store (``<method>/<key>``), temporary ones left out."""
    if folder.is_dir():
        for method in sorted(p for p in folder.iterdir() if p.is_dir()):
            yield from sorted(p for p in method.iterdir() if p.is_dir() and not p.name.startswith("."))


def info(root: Path, data: Path | None = None) -> list[Row]:
    """One row per kind present (and the data folder, if given): entries and bytes."""
    rows = []
    for kind in KINDS.values():
        path = root / kind.path
        if not path.exists():
            continue
        entries, note = None, ""
        try:
            if kind.table:
                entries = _count(path, kind.table)
            elif kind.name == "indexes":
                entries = len(list(index_entries(path)))
            else:
                entries = len(list(path.rglob(kind.pattern)))
        except (sqlite3.Error, RuntimeError) as e:
            note = f"not readable ({e})"
        rows.append(Row(kind.name, path, entries, size_of(path), note))
    if data is not None and data.is_dir():
        sets = [p for p in data.iterdir() if p.is_dir()]
        rows.append(Row("data", data, len(sets), size_of(data), "downloaded data sets (never pruned)"))
    return rows


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:      # alive, and another user's
        pass
    return True


def _leftovers(root: Path, data: Path | None, now: float) -> list[Candidate]:
    out = []
    for path in root.rglob("*"):
        if data is not None and (path == data or data in path.parents):
            continue
        name, age = path.name, now - path.lstat().st_mtime
        match = _SAVE_TMP.match(name)
        if match and path.is_dir() and (not _pid_alive(int(match.group(2))) or age > DAY):
            out.append(Candidate("indexes", path, "left by a save or discard that was killed", size_of(path)))
        elif _ATOMIC_TMP.match(name) and path.is_file() and age > LEFTOVER_AGE:
            out.append(Candidate(_kind_of(root, path), path, "a temporary file left by a killed write",
                                 path.stat().st_size))
        elif ".corrupt-" in name and path.is_file():
            out.append(Candidate(_kind_of(root, path), path, "a damaged file moved aside (kept for a post-mortem)",
                                 path.stat().st_size))
    return out


def _kind_of(root: Path, path: Path) -> str:
    first = path.relative_to(root).parts[0]
    return next((k.name for k in KINDS.values() if first == k.path or first.startswith(k.path + ".")), "other")


def prune_candidates(root: Path, is_current: Callable[[dict], bool], older_than: float | None = None,
                     data: Path | None = None, now: float | None = None) -> list[Candidate]:
    """What ``prune`` removes: index entries the current code cannot look up (or without a readable
    ``meta.json``), leftovers of killed saves and damaged files moved aside; with ``older_than`` (days)
    also index entries and token embeddings not used, and SQLite rows not written, for that long."""
    now = time.time() if now is None else now
    out = _leftovers(root, data, now) if root.is_dir() else []
    for entry in index_entries(root / KINDS["indexes"].path):
        try:
            meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            meta = None
        if not isinstance(meta, dict):
            out.append(Candidate("indexes", entry, "no readable meta.json (a partial entry)", size_of(entry)))
        elif not is_current(meta):
            out.append(Candidate("indexes", entry, "built by other code or package versions: the current code "
                                                   "never looks it up", size_of(entry)))
        elif older_than is not None and _last_use(entry) < now - older_than * DAY:
            out.append(Candidate("indexes", entry, f"not used for {(now - _last_use(entry)) / DAY:.0f} days",
                                 size_of(entry)))
    if older_than is not None:
        out += _old_files(root / KINDS["token_embeddings"].path, now - older_than * DAY, now)
        out += _old_rows(root, now - older_than * DAY, older_than)
    return out


def _last_use(entry: Path) -> float:
    marker = entry / "COMPLETE"
    return (marker if marker.exists() else entry).stat().st_mtime


def _old_files(folder: Path, before: float, now: float) -> list[Candidate]:
    if not folder.is_dir():
        return []
    return [Candidate("token_embeddings", p, f"written {(now - p.stat().st_mtime) / DAY:.0f} days ago",
                      p.stat().st_size) for p in sorted(folder.rglob("*.npz")) if p.stat().st_mtime < before]


def _old_rows(root: Path, before: float, days: float) -> list[Candidate]:
    out = []
    for kind in KINDS.values():
        path = root / kind.path
        if not (kind.dated and path.is_file()):
            continue
        old, total = _count(path, kind.table, "WHERE created < ?", (before,)), _count(path, kind.table)
        if old:
            out.append(Candidate(kind.name, path, f"{old:,} of {total:,} entries written more than {days:g} days ago",
                                 int(size_of(path) * old / max(total, 1)), rows_before=before, rows=old))
    return out


def remove(candidates: Iterable[Candidate]) -> tuple[int, int]:
    """Remove each candidate (files, folders, or old SQLite rows then ``VACUUM``); (items removed, bytes)."""
    removed = freed = 0
    for c in candidates:
        if c.rows_before is not None:
            kind = KINDS[c.kind]
            store = SQLiteCache(c.path, (), what=f"{kind.what} cache")
            try:
                before = size_of(c.path)
                store.write(lambda db: db.execute(f"DELETE FROM {kind.table} WHERE created < ?", (c.rows_before,)))
                store.run(lambda db: db.execute("VACUUM"))
                store.run(lambda db: db.execute("PRAGMA wal_checkpoint(TRUNCATE)"))
            finally:
                store.close()
            freed += max(0, before - size_of(c.path))
        elif c.path.is_dir():
            freed += size_of(c.path)
            shutil.rmtree(c.path)
        elif c.path.exists():
            freed += c.path.stat().st_size
            c.path.unlink()
        else:
            continue
        removed += 1
    return removed, freed


def clear(root: Path, kind: str) -> list[Path]:
    """Delete every entry of one kind (a SQLite file with its journal and moved-aside copies, or a folder)."""
    if kind not in KINDS:
        raise ValueError(f"unknown cache kind {kind!r}; kinds: {', '.join(KINDS)}")
    path = root / KINDS[kind].path
    gone = []
    for p in [path, *path.parent.glob(path.name + "-*"), *path.parent.glob(path.name + ".corrupt-*")]:
        if p.is_dir():
            shutil.rmtree(p)
            gone.append(p)
        elif p.exists():
            p.unlink()
            gone.append(p)
    return gone


def human(size: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"  # pragma: no cover
