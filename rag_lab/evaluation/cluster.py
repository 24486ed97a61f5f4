"""One run's index built with the help of a Dask cluster: per-document work on the workers, the index here.

Why: a long preset (SKETCH on NarrativeQA, UnWeaver on RAGBench, GraLC's Tables 4-5) spends hours
chunking, embedding and extracting, one document after another, and all of it is per document.
A grid of runs already goes to Dask (``rag_lab.runs.grid``); this sends one run's documents.

How, when an address is set (``$RAG_LAB_DASK_ADDRESS``; ``rag_lab run/eval --address``) and
``harness.build`` is about to build (not reuse) an index: the documents are cut into partitions of about
equal text (``partition``); each worker (``cluster_worker.run_partition``) makes the same method with an
embedder and reasoner like the driver's (fingerprints checked) and runs its ``document_work``, its caches
recording every value used; the driver writes those values into its own caches (``receive``); then the
ordinary build runs here over all documents and finds every per-document value cached: same code, same values.

Results therefore never depend on the cluster: a partition that fails is logged and computed here, and so
are all of them when the cluster has no worker (``$RAG_LAB_DASK_NO_WORKER_TIMEOUT``, 60 s) or none finishes
for ``$RAG_LAB_DASK_STALL_TIMEOUT`` (1800 s). An LLM reasoner's limits hold for the whole cluster
(``llm_share``). A file a worker sends back is written only inside the driver's cache folder. The
cross-document stages (graphs, clustering, summaries, pooling) stay on the driver; a method without
``document_work``, an embedder without a cache or a reasoner whose results cannot be stored here is not
distributed (``_why_not``), and neither is a timed build (``build(..., reuse=False)``).
"""
from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Iterator, Sequence

from ..caching.atomic import inside, write_bytes
from ..core.environment import env_number, environment
from ..core.progress import progress_bar
from .retrievers import DocumentWork

log = logging.getLogger(__name__)
ADDRESS_ENV = "RAG_LAB_DASK_ADDRESS"
PARTS_PER_THREAD = 2
CONNECT_TIMEOUT = "30s"   # how long to keep trying to reach the scheduler
NO_WORKER_ENV, NO_WORKER_TIMEOUT = "RAG_LAB_DASK_NO_WORKER_TIMEOUT", 60.0   # seconds without a worker
STALL_ENV, STALL_TIMEOUT = "RAG_LAB_DASK_STALL_TIMEOUT", 1800.0           # seconds with no partition done
POLL = 2.0                # seconds between looks at the cluster while partitions run
_CLIENTS: dict[str, object] = {}
_CLIENTS_LOCK = threading.Lock()


def configured_address() -> str | None:
    """The Dask scheduler a build should use: ``$RAG_LAB_DASK_ADDRESS``, or None for a local build."""
    return os.environ.get(ADDRESS_ENV, "").strip() or None


@contextlib.contextmanager
def cluster_address(address: str | None) -> Iterator[None]:
    """Within the block, builds in this process (and notebook kernels it starts) use ``address``;
    None changes nothing."""
    if not address:
        yield
        return
    if "://" not in address:
        raise ValueError(f"--address {address!r}: expected a Dask scheduler address such as tcp://host:8786")
    with environment({ADDRESS_ENV: address}):
        yield


def partition(documents: Sequence, parts: int) -> list[list]:
    """At most ``parts`` contiguous, non-empty slices of ``documents`` in order, cut where the running
    total of text length crosses each multiple of total / parts (balanced by characters, not count)."""
    if parts < 1:
        raise ValueError(f"partition: parts must be at least 1, got {parts}")
    documents = list(documents)
    sizes = [max(1, len(getattr(d, "text", "") or "")) for d in documents]
    total, out, current, running = sum(sizes), [], [], 0
    target = 1
    for doc, size in zip(documents, sizes):
        current.append(doc)
        running += size
        if running >= total * target / parts and len(out) < parts - 1:
            out.append(current)
            current = []
            while running >= total * target / parts:
                target += 1
    if current:
        out.append(current)
    return out


def client_for(address: str):
    """One ``distributed.Client`` per scheduler address for this process, closed when it exits."""
    with _CLIENTS_LOCK:
        if address not in _CLIENTS:
            from distributed import Client
            try:
                client = Client(address, set_as_default=False, timeout=CONNECT_TIMEOUT)
            except OSError as e:
                raise RuntimeError(f"could not reach the Dask scheduler at {address} ({e}); start one "
                                   "(`dask scheduler`, `dask worker ...`) or leave out --address") from None
            _CLIENTS[address] = client
            atexit.register(client.close)
        return _CLIENTS[address]


def close_clients() -> None:
    """Close this process's clients (a cluster is going away; a later build connects again)."""
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            client.close()
        _CLIENTS.clear()


def _why_not(retriever, embedder_recipe, reasoner_recipe) -> str | None:
    """Why ``retriever`` cannot take part (None: it can)."""
    if not isinstance(retriever, DocumentWork):
        return "it has no document_work"
    if embedder_recipe is None or getattr(retriever.embedder, "cache", None) is None:
        return "its embedder keeps no cache to receive the workers' vectors"
    if getattr(retriever, "reasoner_at_build", False):
        from ..caching.sqlite_cache import reuse_enabled
        reasoner = retriever.reasoner
        if reasoner_recipe is None:
            return f"its reasoner {getattr(reasoner, 'name', reasoner)!r} cannot be made again on a worker"
        if reasoner_recipe["kind"] == "llm" and reasoner.cache is None:
            return "its LLM reasoner keeps no reply cache to receive the workers' replies"
        if reasoner_recipe["kind"] == "offline" and not reuse_enabled():
            return "RAG_LAB_REUSE=0 turns off the offline reasoner's result cache that would receive the results"
    return None


def _token_files(root: Path) -> frozenset:
    folder = root / "token_embeddings"
    return frozenset(f"token_embeddings/{p.name}" for p in folder.iterdir()) if folder.is_dir() else frozenset()


def timeout_setting(name: str, default: float) -> float:
    """Seconds from the environment variable ``name`` (a positive number), else ``default``."""
    return env_number(name, float, "a positive number of seconds") or default


def receive(delivery, retriever) -> None:
    """Write a worker's values into the driver's caches (the embedder's, the reasoner's, cache files)."""
    cache = retriever.embedder.cache
    for model, items in delivery.vectors.items():
        cache.put_many(model, items)
    if delivery.replies or delivery.results:
        reasoner = retriever.reasoner
        if delivery.replies:
            identity = reasoner.backend.identity(reasoner.model)
            for key, (model, reply) in delivery.replies.items():
                reasoner.cache.put(key, model or identity, reply)
        for key, (job, result, tokens) in delivery.results.items():
            reasoner.result_cache.put(key, job, result, tokens)
    root = Path(cache.path).parent
    for rel, data in delivery.files.items():
        target = inside(root, rel)
        if target is None:
            log.warning("%s: a worker (%s) sent a file named %r, which would be written outside the cache folder "
                        "%s; ignored", retriever.name, delivery.worker, rel, root)
            continue
        if not target.exists():
            write_bytes(target, data)


def prepare(retriever, documents: Sequence, address: str | None = None, cache_dir: str | None = None) -> dict | None:
    """Fill the driver's caches with ``documents``' per-document work done on the cluster at ``address``
    (default: ``configured_address()``) before ``retriever`` builds (module docstring). ``cache_dir``:
    the workers' cache folder (default: their own). Returns a record of what was done, or None when
    nothing was sent (no address, a cluster with no worker, or the method cannot take part: logged)."""
    from .cluster_worker import PartitionJob, embedder_recipe, reasoner_recipe, run_partition

    address = address or configured_address()
    if not address or not documents:
        return None
    cls = type(retriever)
    emb = embedder_recipe(retriever.embedder) if isinstance(retriever, DocumentWork) else None   # else: _why_not
    rsn = reasoner_recipe(retriever.reasoner) if getattr(retriever, "reasoner_at_build", False) else None
    reason = _why_not(retriever, emb, rsn)
    if reason:
        log.info("%s: built here, not on %s: %s", retriever.name, address, reason)
        return None
    t0 = time.perf_counter()
    client = client_for(address)
    workers = _live_workers(client, timeout_setting(NO_WORKER_ENV, NO_WORKER_TIMEOUT))
    if not workers:
        log.warning("%s: the Dask cluster at %s has no worker; building here instead", retriever.name, address)
        return None
    chosen, rsn = llm_share(rsn, workers)
    threads = sum(workers[w] for w in chosen) or 1
    parts = partition(documents, PARTS_PER_THREAD * threads)
    job = PartitionJob(f"{cls.__module__}:{cls.__qualname__}", retriever.name, retriever.config, emb, rsn, cache_dir,
                       _token_files(Path(retriever.embedder.cache.path).parent))
    where = {} if len(chosen) == len(workers) else {"workers": chosen, "allow_other_workers": False}
    futures = {client.submit(run_partition, job, part, pure=False, retries=1, **where): i
               for i, part in enumerate(parts)}
    record = {"address": address, "partitions": len(parts), "failed": [], "worker_seconds": 0.0,
              "vectors": 0, "replies": 0, "results": 0, "files": 0, "workers": len(chosen)}
    with progress_bar(len(parts), f"{retriever.name}: partitions on the cluster") as bar:
        for future, error in _finished(client, list(futures), retriever.name):
            i = futures[future]
            try:
                if error is not None:
                    raise error
                delivery = future.result()
                receive(delivery, retriever)
            except Exception as e:  # noqa: BLE001 - the local build computes what is missing
                record["failed"].append(i)
                log.warning("%s: partition %d of %d (%d documents) failed on the cluster (%s: %s); its documents "
                            "are computed here", retriever.name, i + 1, len(parts), len(parts[i]), type(e).__name__, e)
                bar.advance(failed=1)
                continue
            for what, n in delivery.size().items():
                record[what] += n
            record["worker_seconds"] += delivery.seconds
            bar.advance()
    record["seconds"] = time.perf_counter() - t0
    log.info("%s: %d partitions on %s in %.1f s (%s)", retriever.name, len(parts), address, record["seconds"],
             {k: record[k] for k in ("vectors", "replies", "results", "files")})
    return record


class ClusterGaveUp(RuntimeError):
    """A partition that never finished: the cluster lost its workers or stalled."""


def _live_workers(client, timeout: float) -> dict[str, int]:
    """Worker address -> threads, waiting up to ``timeout`` seconds for at least one worker."""
    workers = dict(client.nthreads())
    if not workers:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (TimeoutError, OSError):
            return {}
        workers = dict(client.nthreads())
    return workers


def llm_share(recipe: dict | None, workers: dict[str, int]) -> tuple[list[str], dict | None]:
    """The workers to use and the reasoner recipe each gets: for an LLM reasoner at most ``concurrency``
    worker processes, each with an equal share of the calls in flight and of the tokens per minute, so
    the cluster together never exceeds the setting; else every worker and the recipe unchanged."""
    names = sorted(workers)
    if recipe is None or recipe.get("kind") != "llm":
        return names, recipe
    options = dict(recipe["options"])
    chosen = names[:max(1, min(len(names), options["concurrency"]))]
    options["concurrency"] = max(1, options["concurrency"] // len(chosen))
    if options.get("tokens_per_minute"):
        options["tokens_per_minute"] = options["tokens_per_minute"] / len(chosen)
    return chosen, {**recipe, "options": options}


def _finished(client, futures: list, name: str):
    """Yield ``(future, None)`` as each finishes, then ``(future, ClusterGaveUp)`` for each left when the
    cluster has had no worker for the no-worker timeout or no partition finished for the stall timeout."""
    from distributed import wait as dask_wait

    no_worker, stall = timeout_setting(NO_WORKER_ENV, NO_WORKER_TIMEOUT), timeout_setting(STALL_ENV, STALL_TIMEOUT)
    left, last_done, empty_since = set(futures), time.monotonic(), None
    while left:
        try:
            with client.as_current():      # distributed.wait looks its client up in the current context
                done = dask_wait(list(left), timeout=min(POLL, stall, no_worker), return_when="FIRST_COMPLETED").done
        except TimeoutError:
            done = set()
        now = time.monotonic()
        for future in done:
            left.discard(future)
            last_done = now
            yield future, None
        if not left or done:
            continue
        empty_since = (empty_since or now) if not client.nthreads() else None
        reason = (f"the cluster has had no worker for {no_worker:g} s" if empty_since and now - empty_since >= no_worker
                  else f"no partition finished in {stall:g} s" if now - last_done >= stall else None)
        if reason:
            log.warning("%s: %s (%s=%s, %s=%s); the %d partition(s) left are computed here", name, reason,
                        NO_WORKER_ENV, no_worker, STALL_ENV, stall, len(left))
            client.cancel(list(left))
            for future in futures:
                if future in left:
                    yield future, ClusterGaveUp(reason)
            return
