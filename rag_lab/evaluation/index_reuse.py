"""Give a retriever its index: from this process's memo, else from the index store, else built here and
kept in both (``build_or_reuse``, which ``harness.build`` calls). The store itself (keys, entries,
signatures, the memo) is rag_lab/evaluation/index_store.py; this is the order of the look-ups and the
build, and the lock that lets one process build an index while the others that need it wait and load it.
"""
from __future__ import annotations

import pickle
import time
from contextlib import contextmanager

from ..caching.locked_json import locked
from ..caching.sqlite_cache import reuse_enabled
from .index_store import (_MEMO, IndexStore, _folder_name, _memo_get, _memo_put, dump_state, family, index_key,
                          key_parts, log, restore_state)
from .provenance import index_reasoner_name
from ..core import ties
from ..core.progress import building
from ..core.types import Cost

# ``log``: the index store's logger, so what the store does is logged under one name wherever it runs


def build_or_reuse(retriever, documents: list, reuse: bool | None = None, store: IndexStore | None = None) -> bool:
    """Give ``retriever`` its index over ``documents``: from this process's memo, else from the
    store, else built (``_build_here``) and kept in both. True when reused. Records
    ``retriever.index_reuse`` (reused or not, key, entry folder)."""
    distribute = reuse is not False          # a timed build (reuse=False) measures this machine alone
    parts = None
    if reuse or (reuse is None and reuse_enabled()):
        try:
            parts = key_parts(retriever, documents)
        except AttributeError as e:   # no config (a method without knobs) or an embedder without a model_key
            log.info("%s: index not reusable (%s); building it", retriever.name, e)
    if parts is None:
        _build_here(retriever, documents, distribute)
        retriever.index_reuse = {"reused": False, "key": None, "entry": None}
        return False
    store = store or IndexStore()
    key = index_key(parts)
    blob = _memo_get(key)
    if blob is not None and _restored(retriever, blob, key, "memory", store):
        return True
    with _one_builder(store, family(retriever), key):
        blob = store.load(family(retriever), key)
        if blob is not None and _restored(retriever, blob, key, str(store.entry(family(retriever), key)), store):
            return True
        _build_and_keep(retriever, documents, distribute, parts, key, store)
    return False


def _restored(retriever, blob: bytes, key: str, source: str, store: IndexStore) -> bool:
    """Give ``retriever`` the kept state ``blob`` (from ``source``: "memory" or the entry folder); False (the
    copy forgotten, an entry discarded) when it does not load."""
    try:
        restore_state(retriever, blob)
    except Exception as e:  # noqa: BLE001 - any failure to load means: build it again
        _MEMO.pop(key, None)
        if source != "memory":
            store.discard(family(retriever), key, f"unloadable ({type(e).__name__}: {e})")
        return False
    retriever.index_reuse = {"reused": True, "key": key, "entry": source, "bytes": len(blob)}
    _memo_put(key, blob)
    log.info("%s: reused its index (%s)", retriever.name, source)
    return True


@contextmanager
def _one_builder(store: IndexStore, method: str, key: str):
    """While the block runs no other process looks up or builds the same entry: a second process that
    needs the index (a notebook beside it, ``rag_lab run --jobs``) waits and then loads what the first
    saved instead of building it too. The lock file (``.<key>.lock`` beside the entry) is never an entry."""
    store.check_folders(method)
    store.root.mkdir(parents=True, exist_ok=True, mode=0o700)
    (store.root / _folder_name(method)).mkdir(exist_ok=True, mode=0o700)
    store.check_folders(method)
    with locked(store.root / _folder_name(method) / f".{key}"):
        yield


def _build_and_keep(retriever, documents: list, distribute: bool, parts: dict, key: str, store: IndexStore) -> None:
    """Build the index here and keep its state in memory and in ``store`` (when it can be pickled)."""
    entry = store.entry(family(retriever), key)
    before = _reasoner_usage(retriever)
    _build_here(retriever, documents, distribute)
    retriever.index_reuse = {"reused": False, "key": key, "entry": None}
    if not parts["reasoner"] and _called_reasoner(retriever, before):
        log.warning("%s called a reasoner while indexing but does not declare reasoner_at_build: not persisted",
                    retriever.name)
        return
    fell_back = _fallbacks_since(retriever, before)
    if fell_back:
        retriever.index_reuse["not_stored"] = f"{fell_back} LLM call(s) fell back while indexing"
        log.warning("%s: %d LLM call(s) fell back while indexing: the index serves this run but is not stored; "
                    "the next run asks the model again for exactly those inputs (valid replies are cached)",
                    retriever.name, fell_back)
        return
    try:
        blob = dump_state(retriever)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        log.info("%s: index not persisted (its state cannot be pickled: %s)", retriever.name, e)
        return
    _memo_put(key, blob)
    retriever.index_reuse["bytes"] = len(blob)
    try:
        retriever.index_reuse["entry"] = str(store.save(family(retriever), key, blob, {**parts, "bytes": len(blob),
                                                        "index_reasoner": index_reasoner_name(retriever)}))
    except OSError as e:
        log.warning("%s: could not write its index to %s (%s); kept in memory only", retriever.name, entry, e)


def _reasoner_usage(retriever):
    """Before a build: the retriever's reasoner and a copy of its usage counters (None: unresolved)."""
    r = getattr(retriever, "_reasoner", None)
    return None if r is None or isinstance(r, str) else (r, r.usage.copy() if hasattr(r, "usage") else None)


def _fallbacks_since(retriever, before) -> int:
    """How many of the build's reasoner calls fell back (``before``: ``_reasoner_usage`` before it)."""
    r = getattr(retriever, "_reasoner", None)
    if r is None or isinstance(r, str) or not hasattr(r, "usage"):
        return 0
    if before is not None and before[0] is r and before[1] is not None:
        return r.usage_since(before[1]).llm_fallbacks
    return r.usage.total().llm_fallbacks


def _called_reasoner(retriever, before) -> bool:
    """Whether the build called the reasoner: resolved during it (methods resolve it on first use) or
    its counters moved. A reasoner handed to a method that builds without one (naive) was not called."""
    r = getattr(retriever, "_reasoner", None)
    if r is None or isinstance(r, str):
        return False
    return before is None or before[0] is not r or (before[1] is not None and r.usage_since(before[1]) != Cost())


def _build_here(retriever, documents: list, distribute: bool) -> None:
    """``retriever.build(documents)``, after the cluster (if one is configured, ``cluster.py``) has done the
    documents' per-document work into this process's caches. Both are timed into ``build_cost.seconds``; the
    build's near-ties are kept as ``build_near_ties`` (with the persisted index, so a reuse names them again:
    core/ties.py) and what the cluster did as ``retriever.cluster_build``."""
    from .cluster import configured_address, prepare

    record = prepare(retriever, documents) if distribute and configured_address() else None
    if getattr(retriever, "build_cost", None) is None:
        retriever.build_cost = Cost()
    t0 = time.perf_counter()
    with building(retriever.name, len(documents), reasoner=lambda: getattr(retriever, "_reasoner", None)), \
            ties.collecting() as found:
        retriever.build(documents)
    retriever.build_near_ties = list(found)
    retriever.build_cost.seconds += time.perf_counter() - t0
    if record is not None:
        retriever.build_cost.seconds += record["seconds"]
    retriever.cluster_build = record
