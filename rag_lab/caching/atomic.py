"""Write files so a reader never sees half of one: write a temp file beside it, then rename;
hash a file's bytes (to check a file written before is still whole); and keep a path someone else
named (a Dask worker's result) inside the folder it is meant for (``inside``)."""
from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path, PurePosixPath


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temp path in the target's folder; on success rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.errno is not None and e.filename is None:
            # a writer that does not say which file (a full disk inside a library's save): name the target
            raise OSError(e.errno, e.strerror, str(path)) from e
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_text(path: str | os.PathLike, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of the file's bytes, read a megabyte at a time (bounded memory for large files)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def inside(root: str | os.PathLike, rel: str) -> Path | None:
    """``root / rel`` when ``rel`` is a relative path that stays inside ``root`` (no ``..``, not absolute,
    no symlink out of it), else None."""
    root = Path(root)
    if not isinstance(rel, str) or not rel or "\\" in rel or "\0" in rel:
        return None
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts:
        return None
    target = root / path
    try:
        target.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return target
