"""Built indexes kept on disk and in memory, so no run builds the same index twice.

Why: building is the expensive part of every notebook (chunking, spaCy parsing, clustering, graphs, GAT
infusion), notebook 10 builds every method over the data sets notebooks 01–04 already indexed, and a
rerun builds them all again. ``harness.build`` asks it first (through ``index_reuse.build_or_reuse``).

The key (``key_parts``) is sha256 over the method's name, class and index knobs, the documents
(``dataset_fingerprint``), the embedder's ``model_key``, the build-time reasoner's fingerprint, and the
format, Python, package and code versions: a code change makes old entries unreachable.
``$RAG_LAB_CACHE/indexes/<method>/<key>/`` holds ``state.pkl`` (the retriever's attributes, its embedder,
reasoner and ``index_transient`` helpers left out), ``meta.json`` and ``COMPLETE`` (the state's sha256 and
signature, written last; its mtime is the entry's last use, for ``rag_lab cache prune``). An entry is
written beside its place and renamed in, so a reader sees all of it or nothing; a broken one is moved
aside with a warning and rebuilt.

Pickle runs code when it loads, so nothing is unpickled unless it is certainly what this user's rag_lab
wrote (``rag_lab.caching.trust``: private folders, and an HMAC of the entry under the user's key). The
in-process copy (``_MEMO``) keeps the most recently used states up to ``RAG_LAB_INDEX_MEMO_MB`` MB.

A build whose LLM calls fell back is used but never stored (its holes would be replayed for ever); a state
that cannot be pickled is built every time. ``RAG_LAB_REUSE=0`` or ``build(docs, reuse=False)`` turns reuse
off (timings must pay for the build they time).
"""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
import os
import pickle
import re
import shutil
import sys
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any, Sequence

from ..caching.code_version import class_code_fingerprint, code_fingerprint
from ..caching.sqlite_cache import default_cache_dir
from ..caching.trust import check_private, sign, verify
from .provenance import NONE, index_reasoner_name

log = logging.getLogger(__name__)
FORMAT = 2                       # 2: the marker carries a signature (rag_lab.caching.trust)
FOLDER = "indexes"
STATE, META, MARKER = "state.pkl", "meta.json", "COMPLETE"
# attributes of a retriever that are not its built index: kept from the object being built
NOT_STATE = ("_embedder", "_reasoner", "name", "config", "index_reuse",
             "build_near_ties_dataset")   # the data set this process noted its build near-ties under: not the index
MEMO_ENV = "RAG_LAB_INDEX_MEMO_MB"
_MEMO: "OrderedDict[str, bytes]" = OrderedDict()   # key -> pickled state, most recently used last


def memo_budget() -> int:
    """Bytes of pickled states kept in memory (``$RAG_LAB_INDEX_MEMO_MB``, default 512 MB)."""
    raw = os.environ.get(MEMO_ENV, "512")
    try:
        mb = float(raw)
    except ValueError:
        raise ValueError(f"{MEMO_ENV} must be a number of megabytes, got {raw!r}") from None
    return max(0, int(mb * 2 ** 20))


def _memo_get(key: str) -> bytes | None:
    blob = _MEMO.get(key)
    if blob is not None:
        _MEMO.move_to_end(key)
    return blob


def _memo_put(key: str, blob: bytes) -> None:
    """Keep ``blob``, dropping the least recently used states while the total is over the budget."""
    budget = memo_budget()
    _MEMO.pop(key, None)
    if len(blob) > budget:
        return
    _MEMO[key] = blob
    total = sum(len(b) for b in _MEMO.values())
    while total > budget:
        _, dropped = _MEMO.popitem(last=False)
        total -= len(dropped)


# -- the key ----------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dataset_fingerprint(documents: Sequence[Any]) -> str:
    """sha256 over the documents in order: every field (id, title, text, sections, metadata)."""
    h = hashlib.sha256()
    for doc in documents:
        h.update(json.dumps(_plain(doc), sort_keys=True, ensure_ascii=False, default=repr).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _packages() -> dict[str, str | None]:
    from .provenance import package_versions
    return package_versions()


def key_parts(retriever, documents: Sequence[Any]) -> dict[str, Any]:
    """What identifies ``retriever``'s index over ``documents`` (module docstring). Resolves the
    retriever's reasoner only for a method that calls it while indexing (it would anyway)."""
    cls = type(retriever)
    knobs = _plain(retriever.index_knobs() if hasattr(retriever, "index_knobs") else retriever.config.as_dict())
    canonical = json.dumps(knobs, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # the same digest as config.config_id when every knob counts
    config_id = hashlib.sha256(f"{type(retriever.config).__name__}:{canonical}".encode()).hexdigest()[:10]
    reasoner = retriever.reasoner.fingerprint() if getattr(retriever, "reasoner_at_build", False) else None
    return {"format": FORMAT, "method": family(retriever), "class": f"{cls.__module__}:{cls.__qualname__}",
            "config_id": config_id, "config": knobs, "dataset": dataset_fingerprint(documents),
            "documents": len(documents), "embedder": retriever.embedder.model_key, "reasoner": reasoner,
            "code": class_code_fingerprint(cls), "python": "%d.%d" % sys.version_info[:2], "packages": _packages()}


def family(retriever) -> str:
    """The folder a retriever's index is filed in: its ``index_family``, else its method name."""
    return getattr(retriever, "index_family", None) or retriever.name


def index_key(parts: dict[str, Any]) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


# -- the state ----------------------------------------------------------------------------------
class _Pickler(pickle.Pickler):
    """Pickles a retriever's attributes with its embedder and reasoner replaced by placeholders."""

    def __init__(self, file, retriever):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.retriever = retriever

    def persistent_id(self, obj):
        from ..core.embedding import Embedder
        from ..reasoning import Reasoner

        if isinstance(obj, Embedder):
            if obj is not self.retriever.embedder and obj.model_key != self.retriever.embedder.model_key:
                raise pickle.PicklingError(f"holds a second embedder ({obj.model_key})")
            return "embedder"
        if isinstance(obj, Reasoner):
            if obj is not self.retriever._reasoner:
                raise pickle.PicklingError(f"holds a reasoner other than its own ({obj.name})")
            return "reasoner"
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, retriever):
        super().__init__(file)
        self.retriever = retriever

    def persistent_load(self, pid):
        if pid == "embedder":
            return self.retriever.embedder
        if pid == "reasoner":
            return self.retriever.reasoner
        raise pickle.UnpicklingError(f"unknown placeholder {pid!r}")


def dump_state(retriever) -> bytes:
    """The built retriever's attributes (not its embedder, reasoner, name or config) and the name of
    the reasoner that built it, pickled."""
    skip = (*NOT_STATE, *getattr(retriever, "index_transient", ()))
    state = {k: v for k, v in vars(retriever).items() if k not in skip}
    buffer = io.BytesIO()
    _Pickler(buffer, retriever).dump({"state": state, "index_reasoner": index_reasoner_name(retriever)})
    return buffer.getvalue()


def restore_state(retriever, blob: bytes) -> None:
    """Give ``retriever`` the index in ``blob``; a method built with a reasoner gets its own reasoner
    resolved (same fingerprint, as the key says), so provenance names the one that built the index."""
    record = _Unpickler(io.BytesIO(blob), retriever).load()
    if not isinstance(record, dict) or not isinstance(record.get("state"), dict):
        raise pickle.UnpicklingError("not a pickled retriever state")
    built_by = record.get("index_reasoner", NONE)
    if built_by != NONE:
        retriever.reasoner  # noqa: B018 - resolves it, as building did
    if index_reasoner_name(retriever) != built_by:
        raise pickle.UnpicklingError(f"built by reasoner {built_by!r} but would be credited to "
                                     f"{index_reasoner_name(retriever)!r}")
    retriever.__dict__.update(record["state"])   # only once everything checked out



def index_identity(retriever, documents: Sequence[Any]) -> str:
    """``<family>/<key>``: the entry ``retriever``'s index over ``documents`` is filed under. Two
    retrievers with the same identity build the same index (SSG's seven algorithms share one graph)."""
    return f"{family(retriever)}/{index_key(key_parts(retriever, documents))}"


def share_index(built, other, documents: Sequence[Any]) -> None:
    """Give ``other`` the index ``built`` holds (the state the store would persist, copied), as a reuse
    from the store would, so notebook 11 builds and times each distinct index once; both must have the
    same ``index_identity`` over ``documents``."""
    mine, theirs = index_identity(built, documents), index_identity(other, documents)
    if mine != theirs:
        raise ValueError(f"{other.name} cannot share the index of {built.name}: they build different indexes "
                         f"({theirs} vs {mine})")
    restore_state(other, dump_state(built))
    other.index_reuse = {"reused": True, "key": mine.rsplit("/", 1)[1], "entry": f"shared from {built.name}"}

# -- the folder -----------------------------------------------------------------------------------
def default_root() -> Path:
    return default_cache_dir() / FOLDER


def _folder_name(method: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", method) or "method"


class IndexStore:
    """Entries under ``root`` (default ``$RAG_LAB_CACHE/indexes``), one folder per method and key."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()

    def entry(self, method: str, key: str) -> Path:
        return self.root / _folder_name(method) / key

    def check_folders(self, method: str) -> None:
        """Refuse (``UnsafeCacheError``) when the cache folder, the index folder or the method's folder
        could be changed by another user: nothing from there is unpickled or written."""
        check_private([self.root.parent, self.root, self.root / _folder_name(method)], "cache folder")

    def load(self, method: str, key: str) -> bytes | None:
        """The pickled state stored for (method, key); None when absent. A partial, damaged or unsigned
        entry is moved aside with a warning (and None returned, so the index is rebuilt)."""
        folder = self.entry(method, key)
        self.check_folders(method)
        if not folder.exists():
            return None
        try:
            marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
            blob = (folder / STATE).read_bytes()
            sha = hashlib.sha256(blob).hexdigest()
            if marker.get("format") != FORMAT or marker.get("sha256") != sha:
                raise ValueError("its state does not match the checksum in its completion marker")
            if not verify(marker.get("hmac"), *self._signed(method, key, sha)):
                raise ValueError("its signature does not match your cache key: it was not written by your "
                                 "rag_lab (copied from elsewhere, or tampered with), so it is not unpickled")
        except (OSError, ValueError, AttributeError) as e:
            self.discard(method, key, f"partial, damaged or unsigned ({type(e).__name__}: {e})")
            return None
        try:
            os.utime(folder / MARKER)           # last use, for `rag_lab cache prune --older-than`
        except OSError:
            pass
        return blob

    @staticmethod
    def _signed(method: str, key: str, sha256: str) -> tuple[str, ...]:
        return (f"index-store/{FORMAT}", method, key, sha256)

    def save(self, method: str, key: str, blob: bytes, meta: dict[str, Any]) -> Path:
        """Write the entry in a temporary folder (state, meta, signed marker last) and rename it into
        place. If another process placed the same entry first, its copy is kept."""
        final = self.entry(method, key)
        self.check_folders(method)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        final.parent.mkdir(exist_ok=True, mode=0o700)
        self.check_folders(method)
        tmp = final.parent / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir(mode=0o700)
        try:
            sha = hashlib.sha256(blob).hexdigest()
            (tmp / STATE).write_bytes(blob)
            (tmp / META).write_text(json.dumps(meta, indent=1, ensure_ascii=False, default=str) + "\n",
                                    encoding="utf-8")
            (tmp / MARKER).write_text(json.dumps({"format": FORMAT, "sha256": sha, "bytes": len(blob),
                                                  "written": time.time(),
                                                  "hmac": sign(*self._signed(method, key, sha))}), encoding="utf-8")
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.exists():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return final

    def discard(self, method: str, key: str, reason: str) -> None:
        """Move an entry aside (``.broken-<key>-<pid>``, then removed) with a warning naming it."""
        folder = self.entry(method, key)
        log.warning("index cache entry %s is %s; ignoring it and building the index again", folder, reason)
        aside = folder.parent / f".broken-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(folder, aside)
        except OSError:
            return
        shutil.rmtree(aside, ignore_errors=True)


def is_current(meta: dict[str, Any]) -> bool:
    """True when an entry's ``meta.json`` could still be looked up: same format, code (rag_lab's; a plugin's
    own part is not checked), Python and package versions as now (the rest name data and configs)."""
    return (meta.get("format") == FORMAT and str(meta.get("code")).split("+")[0] == code_fingerprint()
            and meta.get("python") == "%d.%d" % sys.version_info[:2] and meta.get("packages") == _packages())


def clear_memo() -> None:
    """Forget the in-process copies (tests; a long session that wants memory back)."""
    _MEMO.clear()
