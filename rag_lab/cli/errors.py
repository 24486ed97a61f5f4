"""What the command line prints when a command fails for a reason the user can fix: one line naming
the file and the fix, never a traceback. Secrets (in URLs, and every key the process holds: ``core.redact.scrub``) are masked in every such line."""
from __future__ import annotations

import errno
import sqlite3

from ..core.redact import scrub as redact_text

CLEAR = (ValueError, FileNotFoundError, RuntimeError)   # their messages already say what and why
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def _where(error: OSError) -> str:
    names = [n for n in (error.filename, error.filename2) if n is not None]
    return " -> ".join(str(n) for n in names) or "a file"


def describe(error: BaseException) -> str | None:
    """The one-line message for ``error``, or None when it is a bug (the traceback is then worth seeing)."""
    if isinstance(error, CLEAR):
        return redact_text(str(error))
    if isinstance(error, OSError) and getattr(error, "explained", False):
        return redact_text(f"{_where(error)}: {error.strerror}")
    if isinstance(error, PermissionError):
        return (f"permission denied: {_where(error)} ({error.strerror}); make it (and its folder) readable and "
                "writable by you, or choose another place (RAG_LAB_CACHE for caches, RAG_LAB_DATA or --dest for "
                "downloads, --out for results)")
    if isinstance(error, OSError) and error.errno in DISK_FULL:
        return (f"no space left on the disk holding {_where(error)} ({error.strerror}); free space there or point "
                "RAG_LAB_CACHE / RAG_LAB_DATA at a larger disk")
    if isinstance(error, OSError) and error.errno == errno.EROFS:
        return f"{_where(error)} is on a read-only file system; choose a writable place for it"
    if isinstance(error, OSError) and error.errno is not None:
        return f"{_where(error)}: {error.strerror}"
    if isinstance(error, sqlite3.Error):
        return (f"SQLite: {error} (a cache file under RAG_LAB_CACHE); if it persists, move that file aside and run "
                "again")
    return None
