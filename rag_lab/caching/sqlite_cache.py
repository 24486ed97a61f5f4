"""An SQLite file used as a cache: shared by threads and processes, and never trusted blindly.

A cache only saves work, so a damaged one must never stop a run or feed it a wrong value:

- a file SQLite reports as damaged (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``: a truncated or
  overwritten file) is moved aside as ``<name>.corrupt-<time>-<pid>`` with a warning naming both
  paths, and an empty cache takes its place; the operation that found it is run again;
- a row its owner finds wrong (``reject``) is moved into the table ``rejected`` (kept for a
  post-mortem, never read again) with a warning, and the caller computes the value afresh.

Many processes may read and write at once (a Dask sweep with two workers): the journal is WAL, each write is one
transaction without an fsync (``synchronous=NORMAL``: 0.03 ms, not 0.2; a power cut loses the last writes, never
consistency) and a busy file is waited for (``timeout``, also while two processes create the file at the same moment),
never mistaken for a damaged one. WAL needs shared memory between the processes: keep the cache on a local disk (docs/sweeps.md).

Who may have written it: every cache is held to the index store's rule (``rag_lab.caching.trust``):
its folder and file (and the ``-wal``/``-shm`` files) must be the user's and not writable by others,
else ``UnsafeCacheError`` names them and the fix; a missing folder is made 0700 and the file 0600
(SQLite gives its journal files the file's mode), so what a cache holds is nobody else's to read. The standard library's
``sqlite3`` does the storage; this module only adds the recovery, which no installed library
offers for a plain SQLite file.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from .trust import PLANTS, check_private, private_file, private_folder

log = logging.getLogger(__name__)
T = TypeVar("T")
DAMAGED = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (primary result codes)
# other primary result codes a user can fix, and how
FIXES = {
    3: "make the file and its folder writable by you, or point RAG_LAB_CACHE at a folder you can write",
    5: "another process has held it locked too long; let it finish or stop it, then run again",
    6: "another process has held it locked too long; let it finish or stop it, then run again",
    8: "the file (or its -wal/-shm files) cannot be written: make them writable by you, or point RAG_LAB_CACHE "
       "at a folder you can write",
    10: "the disk reported an input/output error; check the disk, or move the file aside and run again",
    13: "the disk is full: free space, or point RAG_LAB_CACHE at a larger disk",
    14: "the file or its folder cannot be opened: make the folder exist and be writable by you, or point "
        "RAG_LAB_CACHE at a folder you can write",
}
REJECTED_TABLE = "CREATE TABLE IF NOT EXISTS rejected (tbl TEXT, key TEXT, reason TEXT, row TEXT, moved REAL)"


OFF = {"0", "false", "no", "off"}


def reuse_enabled() -> bool:
    """False when ``RAG_LAB_REUSE`` is 0/false/no/off: no persisted index or cached offline result
    is read or written (the embedding and LLM caches have their own switches)."""
    return os.environ.get("RAG_LAB_REUSE", "1").strip().lower() not in OFF


def default_cache_dir() -> Path:
    """rag_lab's cache folder: ``$RAG_LAB_CACHE``, else ``~/.cache/rag_lab``."""
    return Path(os.environ.get("RAG_LAB_CACHE", Path.home() / ".cache" / "rag_lab"))


def cache_file(directory: str | Path | None, filename: str, what: str) -> Path:
    """``directory / filename``; ``directory`` defaults to rag_lab's cache folder (``RAG_LAB_CACHE``
    or ``~/.cache/rag_lab``) and must be a folder if it exists (``what`` names the cache in the error)."""
    directory = default_cache_dir() if directory is None else Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"{what}: {directory} exists and is not a folder; expected a folder for {filename}")
    return directory / filename


class CacheFileError(RuntimeError):
    """A cache file SQLite cannot use for a reason the user must fix (permissions, a full disk, a lock
    held too long); the message names the file and the fix. Nothing was half-written: each write is
    one transaction."""

    def __init__(self, message: str, path: Path):
        super().__init__(message)
        self.path = path


def explain(error: sqlite3.Error, path: Path, what: str) -> Exception:
    """A ``CacheFileError`` naming the file and the fix, for errors a user can fix; else ``error`` itself."""
    code = getattr(error, "sqlite_errorcode", None)
    text = str(error).lower()
    if code is None:
        code = next((c for c, words in ((13, "disk is full"), (8, "readonly"), (14, "unable to open"),
                                        (5, "locked")) if words in text), None)
    fix = FIXES.get(code & 0xFF) if code is not None else None
    if fix is None:
        return error
    return CacheFileError(f"{what} {path}: {error}; {fix}", Path(path))


def is_damaged(error: sqlite3.DatabaseError) -> bool:
    """True when SQLite says the file itself is broken (not merely busy or locked)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in DAMAGED
    text = str(error).lower()
    return "malformed" in text or "not a database" in text


class SQLiteCache:
    """One SQLite file with ``schema`` (``CREATE TABLE IF NOT EXISTS`` statements); ``what`` names
    the cache in warnings ("embedding cache", "LLM cache")."""

    def __init__(self, path: str | Path, schema: Sequence[str], what: str = "cache", timeout: float = 60.0):
        self.path = Path(path)
        self.what = what
        self._make_private()
        self.schema = (*schema, REJECTED_TABLE)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._inode: tuple[int, int] | None = None
        with self._lock:
            self._call(lambda db: None)

    # -- the connection -------------------------------------------------------------------------
    def _make_private(self) -> None:
        """The folder and file only this user can change and read (module docstring)."""
        private_folder(self.path.parent, f"{self.what} folder")
        private_file(self.path, self.what)
        check_private([self.path.with_name(self.path.name + s) for s in ("-wal", "-shm")], self.what, risk=PLANTS)

    def _connect(self) -> sqlite3.Connection:
        self._make_private()
        db = sqlite3.connect(self.path, timeout=self.timeout, check_same_thread=False)
        try:
            self._while_busy(lambda: self._set_up(db))
        except BaseException:
            db.close()
            raise
        st = os.stat(self.path)
        self._inode = (st.st_dev, st.st_ino)
        return db

    def _set_up(self, db: sqlite3.Connection) -> None:
        if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        for statement in self.schema:
            db.execute(statement)
        db.commit()

    def _while_busy(self, fn: Callable[[], T]) -> T:
        """Retry ``fn`` while the file is locked. Switching a new file to WAL while another process
        creates it fails at once with "database is locked" (SQLite's busy timeout does not cover it)."""
        deadline, delay = time.monotonic() + self.timeout, 0.01
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(2 * delay, 0.5)

    def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)``; on a damaged file: move it aside, start an empty one, run ``fn`` again."""
        for attempt in range(2):
            try:
                if self._db is None:
                    self._db = self._connect()
                return fn(self._db)
            except sqlite3.DatabaseError as e:
                if attempt or not is_damaged(e):
                    clear = explain(e, self.path, self.what)
                    if clear is e:
                        raise
                    raise clear from e
                self._move_aside(e)
        raise AssertionError("unreachable")  # pragma: no cover

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` under this object's lock (one thread at a time per connection)."""
        with self._lock:
            return self._call(fn)

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` as one transaction: all of it is stored or none."""
        def transaction(db):
            with db:
                return fn(db)
        return self.run(transaction)

    def _move_aside(self, error: Exception) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if self._inode is not None and (st.st_dev, st.st_ino) != self._inode:
            return  # another process already replaced it: use the new file
        stamp = f"{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        os.replace(self.path, target)
        for suffix in ("-wal", "-shm"):  # the journal belongs to the damaged file
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                os.replace(side, target.with_name(target.name + suffix))
        log.warning("%s %s is damaged (%s); moved it aside to %s and started an empty one",
                    self.what, self.path, error, target)

    # -- rows that fail their owner's check -------------------------------------------------------
    def reject(self, db: sqlite3.Connection, table: str, where: str, params: Sequence, key: str,
               reason: str) -> None:
        """Inside a transaction: copy the matching rows of ``table`` into ``rejected`` and delete them."""
        for row in db.execute(f"SELECT * FROM {table} WHERE {where}", params).fetchall():
            shown = repr(tuple(r if not isinstance(r, bytes) else f"<{len(r)} bytes>" for r in row))
            db.execute("INSERT INTO rejected VALUES (?, ?, ?, ?, julianday('now'))", (table, key, reason, shown))
        db.execute(f"DELETE FROM {table} WHERE {where}", params)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"


class KeyedCache:
    """Base of the caches that keep one table of rows by ``key`` in their own file (LLM replies,
    offline results): opening it, moving a bad row aside, counting, closing.
    A subclass sets ``FILENAME``, ``SCHEMA``, ``TABLE``, ``WHAT`` (named in warnings and errors)
    and ``AGAIN`` (what the caller does after a row is moved aside)."""

    FILENAME = SCHEMA = TABLE = WHAT = AGAIN = ""

    def __init__(self, directory: str | Path | None = None):
        self.store = SQLiteCache(cache_file(directory, self.FILENAME, self.WHAT), self.SCHEMA, what=self.WHAT)
        self.path = self.store.path

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    def discard(self, key: str, reason: str) -> None:
        """Move the entry for ``key`` to the ``rejected`` table so no run reads it again."""
        self.store.write(lambda db: self.store.reject(db, self.TABLE, "key=?", (key,), key, reason))
        log.warning("%s %s: entry %s… moved to its 'rejected' table: %s; %s",
                    self.WHAT, self.path, key[:12], reason, self.AGAIN)

    def __len__(self) -> int:
        return self.store.run(lambda db: db.execute(f"SELECT COUNT(*) FROM {self.TABLE}").fetchone()[0])

    def close(self) -> None:
        self.store.close()
