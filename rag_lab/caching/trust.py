"""Whether a cached file can be trusted: folders only the user can write, entries signed with a key
only the user can read.

Why: the index store unpickles what it finds, and unpickling runs code; and what the SQLite caches
hold (LLM replies, offline results, vectors, judge replies) is built into indexes that
the user's key then signs. A checksum stored beside a file proves nothing against a person who can
write the folder: they rewrite both. One rule for every cache, and a signature:

- ``check_private``: a folder (or file) must belong to the user running rag_lab and must not be
  writable by other users (group-writable is accepted only for the user's own private group, the
  usual ``umask 002`` setup). A shared, group- or world-writable cache folder is refused with an
  error naming it and the fix. ``private_folder`` / ``private_file`` apply it to a cache's folder
  and file and create what is missing private (folders 0700, files 0600: prompts, replies and corpus
  text are nobody else's to read); an existing file of the user's that others can read is made 0600.
- ``sign`` / ``verify``: an HMAC-SHA256 with a per-user secret kept in
  ``<config>/cache.key`` (``$RAG_LAB_CONFIG``, else ``$XDG_CONFIG_HOME/rag_lab``, else
  ``~/.config/rag_lab``), created on first use with mode 0600 in a folder held to the rule above,
  and read through a descriptor opened without following a symbolic link whose owner and mode are
  checked on that descriptor (no gap between the check and the read). An entry whose signature does
  not match was not written by this user's rag_lab and is never loaded. The key never leaves that file.
"""
from __future__ import annotations

import errno
import grp
import hashlib
import hmac
import logging
import os
import pwd
import secrets
import stat
from pathlib import Path
from typing import Iterable

log = logging.getLogger(__name__)
CONFIG_ENV = "RAG_LAB_CONFIG"
RUNS_CODE = "could make rag_lab run their code when it loads a cached index"
PLANTS = "could plant values that rag_lab would build into your indexes and sign as yours"
KEY_FILE = "cache.key"
_KEYS: dict[str, bytes] = {}


class UnsafeCacheError(RuntimeError):
    """A cache folder or the key file can be written (or read) by other users; nothing was loaded."""


def config_dir() -> Path:
    """rag_lab's per-user settings folder: ``$RAG_LAB_CONFIG``, ``$XDG_CONFIG_HOME/rag_lab`` or
    ``~/.config/rag_lab``."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV]).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "rag_lab"


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return f"gid {gid}"


def private_group(gid: int, uid: int) -> bool:
    """True when ``gid`` is the user's own group (same name, the user's primary group, no other member)."""
    try:
        user, group = pwd.getpwuid(uid), grp.getgrgid(gid)
    except KeyError:
        return False
    return group.gr_name == user.pw_name and gid == user.pw_gid and set(group.gr_mem) <= {user.pw_name}


def unsafe_reason(path: str | os.PathLike) -> str | None:
    """Why another user could change ``path`` (owner or write bits), or None when only this user can."""
    uid = os.geteuid()
    st = os.stat(path)
    if st.st_uid != uid:
        return f"owned by {_user_name(st.st_uid)}, not by you ({_user_name(uid)})"
    mode = stat.S_IMODE(st.st_mode)
    if mode & stat.S_IWOTH:
        return f"writable by every user (mode {mode:04o})"
    if mode & stat.S_IWGRP and not private_group(st.st_gid, uid):
        return f"writable by the group {_group_name(st.st_gid)} (mode {mode:04o})"
    return None


def check_private(paths: Iterable[str | os.PathLike], what: str, risk: str = RUNS_CODE,
                  fix: str = "point RAG_LAB_CACHE at a folder only you can write; RAG_LAB_REUSE=0 builds every "
                             "index instead") -> None:
    """Raise ``UnsafeCacheError`` naming the first existing path another user could change, what they
    could do with it (``risk``) and the fix."""
    for path in paths:
        if not os.path.exists(path):
            continue
        reason = unsafe_reason(path)
        if reason:
            raise UnsafeCacheError(
                f"{what} {path} is {reason}: whoever can write there {risk}, so it is not used. Fix: "
                f"`chmod go-w {path}` (and make it yours with chown if it is not), or {fix}")


def private_folder(path: str | os.PathLike, what: str, risk: str = PLANTS,
                   fix: str = "point RAG_LAB_CACHE at a folder only you can write") -> Path:
    """``path`` as a folder only the user can change: the missing folders are made 0700, the folder
    itself is checked (``check_private``)."""
    path = Path(path)
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
    path = missing[0] if missing else path
    if not path.is_dir():
        raise ValueError(f"{what}: {path} exists and is not a folder")
    check_private([path], what, risk=risk, fix=fix)
    return path


def private_file(path: str | os.PathLike, what: str, risk: str = PLANTS,
                 fix: str = "point RAG_LAB_CACHE at a folder only you can write") -> Path:
    """``path`` as a file only the user can read or change: created empty with mode 0600 when missing; an
    existing one must pass ``check_private`` and is made 0600 when others could read it."""
    path = Path(path)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        return path
    except FileExistsError:
        pass
    check_private([path], what, risk=risk, fix=fix)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        os.chmod(path, mode & 0o700)
        log.info("%s %s was readable by other users (mode %04o); made it %04o", what, path, mode, mode & 0o700)
    return path


def cache_key() -> bytes:
    """The user's secret for signing cache entries; made (0600, 32 random bytes) on first use."""
    path = config_dir() / KEY_FILE
    memo = _KEYS.get(str(path))
    if memo is not None:
        return memo
    fix = f"{CONFIG_ENV} names another folder for it"
    private_folder(path.parent, "rag_lab's settings folder", "could replace the key that signs your cached indexes",
                   f"set {CONFIG_ENV} to a folder only you can write")
    if not os.path.lexists(path):
        # written whole under a temporary name, then linked into place: a process that starts at the same
        # moment finds either no key or the whole of it, and the first link wins
        tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:      # another process made it first: read theirs
            pass
        finally:
            os.unlink(tmp)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)   # never blocks on a planted FIFO
    except OSError as e:
        if e.errno != errno.ELOOP:
            raise
        raise UnsafeCacheError(f"the cache signing key {path} is a symbolic link, so whoever made it chose the key; "
                               f"it is not read. Fix: delete it (a new key is made and every cached index is built "
                               f"again); {fix}") from None
    with os.fdopen(fd, "r", encoding="ascii") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeCacheError(f"the cache signing key {path} is not a regular file; delete it; {fix}")
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise UnsafeCacheError(
                f"the cache signing key {path} is {'not yours' if st.st_uid != os.geteuid() else 'readable or writable'}"
                f" by other users (mode {stat.S_IMODE(st.st_mode):04o}), so cached indexes cannot be trusted. Fix: "
                f"`chmod 600 {path}` if only you could ever reach it, else delete it (a new key is made and every "
                f"cached index is built again); {fix}")
        text = fh.read().strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise UnsafeCacheError(f"the cache signing key {path} is not 32 hex-encoded bytes; delete it (a new one is "
                               "made and every cached index is built again)")
    _KEYS[str(path)] = key
    return key


def sign(*parts: str) -> str:
    """Hex HMAC-SHA256 of the parts (joined with NUL) under the user's key."""
    return hmac.new(cache_key(), "\0".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()


def verify(signature: object, *parts: str) -> bool:
    """True when ``signature`` is ``sign(*parts)`` (constant-time comparison)."""
    return isinstance(signature, str) and hmac.compare_digest(signature, sign(*parts))


def forget_keys() -> None:
    """Drop the in-process copies of keys (tests that point ``RAG_LAB_CONFIG`` elsewhere)."""
    _KEYS.clear()
