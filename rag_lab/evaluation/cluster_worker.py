"""The worker's side of a distributed build (``cluster.py``): one partition of documents, its
per-document work done with caches that record every value used, and that record sent back.

A task gets a ``PartitionJob``: the method (class, registered name, config), recipes for an
embedder and a reasoner like the driver's (with the driver's ``model_key`` and reasoner
fingerprint, checked here so a worker with another model, backend or code never delivers values
the driver would not have computed), the documents, and the names of cache files the driver
already holds. It makes the method with that embedder and reasoner, runs
``DocumentWork.document_work`` and returns a ``Delivery``: every vector, LLM reply and offline
result its caches handed out or stored (read or computed), and the extra cache files the method
names (GraLC's token embeddings) that the driver lacks.

The worker's caches are its own (``$RAG_LAB_CACHE`` on that machine, or the job's ``cache_dir``),
so a worker that computed a value before serves it again; a worker process keeps one loaded model
per embedder recipe and each task gets a copy of that embedder with a recording cache of its own.
Progress bars are off while a task runs (``core.progress.quiet``, for that task's thread only, so a
driver sharing the process keeps its bars): nobody would see them.
"""
from __future__ import annotations

import contextlib
import copy
import importlib
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..core.embedding import Embedder, EmbeddingCache
from ..core.progress import quiet
from ..reasoning.llm_cache import CachedReply, LLMCache
from ..reasoning.offline_cache import OfflineResultCache

log = logging.getLogger(__name__)


# -- caches that remember what they handed out ----------------------------------------------------
class RecordingEmbeddingCache(EmbeddingCache):
    """An embedding cache that also keeps, per model key, every vector it returned or stored."""

    def __init__(self, path):
        super().__init__(path)
        self.recorded: dict[str, dict[str, np.ndarray]] = {}
        self._record_lock = threading.Lock()

    def _note(self, model: str, items: dict) -> None:
        with self._record_lock:
            self.recorded.setdefault(model, {}).update(items)

    def get_many(self, model, keys):
        found = super().get_many(model, keys)
        self._note(model, found)
        return found

    def put_many(self, model, items):
        super().put_many(model, items)
        self._note(model, dict(items))


class RecordingLLMCache(LLMCache):
    """An LLM reply cache that also keeps every reply it returned or stored, by key."""

    def __init__(self, directory=None):
        super().__init__(directory)
        self.recorded: dict[str, tuple[str | None, CachedReply]] = {}
        self._record_lock = threading.Lock()

    def get(self, key):
        hit = super().get(key)
        if hit is not None:
            with self._record_lock:
                self.recorded.setdefault(key, (None, hit))
        return hit

    def put(self, key, model, reply):
        stored = super().put(key, model, reply)     # the first reply stored for the key is the one kept
        with self._record_lock:
            self.recorded[key] = (model, stored)
        return stored

    def discard(self, key, reason):
        super().discard(key, reason)
        with self._record_lock:   # a reply found invalid is never delivered
            self.recorded.pop(key, None)


class RecordingOfflineCache(OfflineResultCache):
    """An offline-result cache that also keeps every result it returned or stored, by key."""

    def __init__(self, directory=None):
        super().__init__(directory)
        self.recorded: dict[str, tuple[str, Any, int]] = {}
        self._record_lock = threading.Lock()

    def get(self, key, job):
        hit = super().get(key, job)
        if hit is not None:
            with self._record_lock:
                self.recorded[key] = (job, hit[0], hit[1])
        return hit

    def put(self, key, job, result, tokens):
        super().put(key, job, result, tokens)
        with self._record_lock:
            self.recorded[key] = (job, result, int(tokens))


# -- what travels -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PartitionJob:
    method_class: str                 # "module:Class"
    name: str                         # the registered name the driver's retriever carries
    config: Any                       # its Config
    embedder: dict                    # embedder_recipe(...)
    reasoner: dict | None             # reasoner_recipe(...) or None (the method calls none while indexing)
    cache_dir: str | None = None      # None: the worker's own rag_lab cache folder
    known_files: frozenset = frozenset()   # cache files (relative paths) the driver already has


@dataclass
class Delivery:
    vectors: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)   # model key -> text key -> vector
    replies: dict[str, tuple[str | None, CachedReply]] = field(default_factory=dict)
    results: dict[str, tuple[str, Any, int]] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)                      # relative path -> content
    documents: int = 0
    seconds: float = 0.0
    worker: str = ""

    def size(self) -> dict[str, int]:
        return {"vectors": sum(len(v) for v in self.vectors.values()), "replies": len(self.replies),
                "results": len(self.results), "files": len(self.files)}


# -- recipes: the driver's embedder and reasoner, made again on a worker --------------------------------
def embedder_recipe(embedder) -> dict | None:
    """How to make ``embedder`` again elsewhere, or None for an embedder that is not rag_lab's."""
    from ..core.embedding import DEFAULT_MODEL_ID

    if not isinstance(embedder, Embedder):
        return None
    return {"model": None if embedder.model_id == DEFAULT_MODEL_ID else embedder.model_id,
            "backend": embedder.backend, "batch_size": embedder.batch_size, "model_key": embedder.model_key}


def reasoner_recipe(reasoner) -> dict | None:
    """How to make ``reasoner`` again elsewhere (its spec and knobs, never a key), or None."""
    from ..reasoning.llm import LLMReasoner
    from ..reasoning.offline import OfflineReasoner

    if isinstance(reasoner, OfflineReasoner):
        return {"kind": "offline", "fingerprint": reasoner.fingerprint(),
                "options": {"answer_words": reasoner.answer_words, "min_sentences": reasoner.min_sentences,
                            "mmr_lambda": reasoner.mmr_lambda, "choice_lambda": reasoner.choice_lambda}}
    if isinstance(reasoner, LLMReasoner):
        options = {"temperature": reasoner.temperature, "timeout": reasoner.timeout,
                   "max_retries": reasoner.max_retries, "retry_base_delay": reasoner.retry_base_delay,
                   "max_retry_delay": reasoner.max_retry_delay, "max_tokens": reasoner.max_tokens,
                   "concurrency": reasoner.concurrency, "tokens_per_minute": reasoner.tokens_per_minute,
                   "max_retry_after": reasoner.max_retry_after}
        if hasattr(reasoner.backend, "requested_format"):
            options["response_format"] = reasoner.backend.requested_format
        return {"kind": "llm", "spec": reasoner.name, "fingerprint": reasoner.fingerprint(), "options": options,
                "identity": reasoner.backend.identity(reasoner.model)}
    return None


_MODELS: dict[tuple, Embedder] = {}
_MODELS_LOCK = threading.Lock()


def _embedder(recipe: dict, cache_dir: str | None) -> Embedder:
    """A per-task copy of this process's embedder for ``recipe`` (the model is loaded once per process)
    whose vector cache records what it hands out; its ``model_key`` must be the driver's."""
    key = (recipe["model"], recipe["backend"], recipe["batch_size"], cache_dir)
    with _MODELS_LOCK:
        if key not in _MODELS:
            base = Embedder(recipe["model"], cache_dir=cache_dir, batch_size=recipe["batch_size"],
                            backend=recipe["backend"])
            base.model, base.tokenizer   # noqa: B018 - loaded here, shared by every copy
            _MODELS[key] = base
        base = _MODELS[key]
    if base.model_key != recipe["model_key"]:
        raise RuntimeError(f"worker {socket.gethostname()}: its embedder is {base.model_key}, the driver's "
                           f"{recipe['model_key']} (another model or encoder backend installed here)")
    task = copy.copy(base)
    task.cache = RecordingEmbeddingCache(base.cache.path if base.cache is not None else
                                         Path(base.cache_dir) / "embeddings.sqlite")
    task.stats = {"encoded": 0, "cache_hits": 0}
    return task


def _reasoner(recipe: dict | None, embedder: Embedder, cache_dir: str | None):
    """(reasoner, its recording cache) like the driver's, or (None, None)."""
    if recipe is None:
        return None, None
    if recipe["kind"] == "offline":
        from ..caching.sqlite_cache import reuse_enabled
        from ..reasoning.offline import OfflineReasoner
        if not reuse_enabled():
            raise RuntimeError(f"worker {socket.gethostname()}: RAG_LAB_REUSE=0 here turns the offline reasoner's "
                               "result cache off, so its results could not be sent back")
        cache = RecordingOfflineCache(cache_dir)
        reasoner = OfflineReasoner(embedder, cache=cache, **recipe["options"])
    else:
        from ..reasoning.llm import LLMReasoner
        cache = RecordingLLMCache(cache_dir)
        reasoner = LLMReasoner.from_spec(recipe["spec"], cache=cache, **recipe["options"])
        if reasoner.backend.identity(reasoner.model) != recipe["identity"]:
            raise RuntimeError(f"worker {socket.gethostname()}: {recipe['spec']} reaches "
                               f"{reasoner.backend.identity(reasoner.model)} here, {recipe['identity']} on the driver")
    if reasoner.fingerprint() != recipe["fingerprint"]:
        raise RuntimeError(f"worker {socket.gethostname()}: the reasoner {reasoner.name} differs from the driver's "
                           "(another rag_lab version, spaCy model or embedder here)")
    return reasoner, cache


CANCEL_POLL = 0.2      # seconds between looks at whether this task was cancelled


@contextlib.contextmanager
def stop_when_cancelled(reasoner) -> Iterator[None]:
    """Stop ``reasoner``'s calls (``stop_calls``) once the Dask task running this block is cancelled.

    Why: ``client.cancel`` cannot end a task that is running (Dask never kills a thread); the worker
    only marks the task cancelled and drops its result, so a partition the driver gave up on kept calling
    the model to the end (1,018 requests against 687 needed, issue 48). A thread looks at this task's
    state on its worker every ``CANCEL_POLL`` s; outside a Dask task, or for a reasoner that makes no
    calls, nothing is watched."""
    stop = getattr(reasoner, "stop_calls", None)
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        worker, key = get_worker(), getattr(thread_state, "key", None)
    except (ImportError, ValueError):
        worker = key = None
    if stop is None or worker is None or key is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(CANCEL_POLL):
            task = worker.state.tasks.get(key)
            if task is None or task.state in ("cancelled", "released", "forgotten"):
                log.info("partition %s was cancelled: its reasoner calls stop", key)
                stop()
                return

    watcher = threading.Thread(target=watch, name="rag_lab-cancel-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()


def run_partition(job: PartitionJob, documents: list) -> Delivery:
    """Do ``documents``' per-document work for ``job``'s method; return what the caches recorded."""
    with quiet():
        return _run_partition(job, documents)


def _run_partition(job: PartitionJob, documents: list) -> Delivery:
    t0 = time.perf_counter()
    embedder = _embedder(job.embedder, job.cache_dir)
    reasoner, recording = _reasoner(job.reasoner, embedder, job.cache_dir)
    module, cls_name = job.method_class.split(":")
    retriever = getattr(importlib.import_module(module), cls_name)(job.config, reasoner=reasoner, embedder=embedder)
    retriever.name = job.name
    try:
        with stop_when_cancelled(reasoner):
            extra = retriever.document_work(list(documents)) or []
        root = Path(embedder.cache.path).parent.resolve()
        files = {}
        for path in map(Path, extra):
            rel = path.resolve().relative_to(root).as_posix() if path.resolve().is_relative_to(root) else None
            if rel is not None and rel not in job.known_files and path.is_file():
                files[rel] = path.read_bytes()
        replies = recording.recorded if isinstance(recording, RecordingLLMCache) else {}
        results = recording.recorded if isinstance(recording, RecordingOfflineCache) else {}
        return Delivery(embedder.cache.recorded, replies, results, files, len(documents), time.perf_counter() - t0,
                        f"{socket.gethostname()}:{os.getpid()}")
    finally:
        embedder.cache.close()
        if recording is not None:
            recording.close()
