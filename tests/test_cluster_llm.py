"""An LLM reasoner's limits on a Dask cluster, and a cluster that cannot finish (issue 37): a SKETCH build
on 2 worker processes x 2 threads never shows the server more requests at once than the concurrency
setting and builds the local graph; a cluster with no worker, or one whose partitions never finish, is
given up with a warning and the build is done here instead of hanging."""
from __future__ import annotations

import logging
import threading

import pytest
from fake_openai_server import fake_openai  # noqa: F401  (fixture)
from schema_responder import responder
from conftest import SESSION_CACHE
from test_cluster_build import DATA, fresh_cache, structure

from rag_lab.evaluation import harness
from rag_lab.core.embedding import Embedder
from rag_lab.evaluation import cluster as cluster_module
from rag_lab.evaluation import cluster_worker
from rag_lab.evaluation.cluster import NO_WORKER_ENV, STALL_ENV, cluster_address
from rag_lab.methods import get_retriever
from rag_lab.reasoning.llm import LLMReasoner
from rag_lab.reasoning.offline import OfflineReasoner


def sketch(server, folder, monkeypatch, address=None, concurrency=3):
    fresh_cache(folder, monkeypatch)
    embedder = Embedder()
    reasoner = LLMReasoner.from_spec(f"openai-compatible:fake-model@{server.base_url}", concurrency=concurrency,
                                     retry_base_delay=0.01, timeout=30)
    retriever = get_retriever("sketch", reasoner=reasoner, embedder=embedder)
    with cluster_address(address):
        harness.build(retriever, DATA.documents)
    return retriever


def test_two_workers_of_two_threads_keep_to_the_concurrency_setting(fake_openai, tmp_path, monkeypatch, embedder):
    from distributed import LocalCluster

    embedder.model  # noqa: B018 - the session's ONNX export exists before the caches share it
    fake_openai.responder, fake_openai.delay = responder, 0.05
    here = sketch(fake_openai, tmp_path / "local", monkeypatch)
    fake_openai.peak_in_flight, sent_here = 0, len(fake_openai.requests)
    with LocalCluster(n_workers=2, threads_per_worker=2, host="127.0.0.1", dashboard_address=None, processes=True,
                      env={"RAG_LAB_REUSE": "1", "RAG_LAB_QUIET": "1", "RAG_LAB_CACHE": str(SESSION_CACHE)}) as c:
        try:
            there = sketch(fake_openai, tmp_path / "cluster", monkeypatch, c.scheduler_address)
        finally:
            cluster_module.close_clients()
    record = there.cluster_build
    assert record["failed"] == [] and record["replies"] > 0 and record["workers"] == 2
    assert len(fake_openai.requests) > sent_here            # the workers asked the server themselves
    assert 1 <= fake_openai.peak_in_flight <= 3             # 2 processes x 2 threads, setting 3: never more
    assert structure(there) == structure(here)


def test_the_share_of_each_worker_process_by_hand():
    recipe = {"kind": "llm", "options": {"concurrency": 3, "tokens_per_minute": 900.0}}
    workers = {"tcp://b": 2, "tcp://a": 2, "tcp://c": 2}
    # three processes, setting 3: one call each, a third of the tokens each
    chosen, share = cluster_module.llm_share(recipe, workers)
    assert chosen == ["tcp://a", "tcp://b", "tcp://c"] and share["options"] == {"concurrency": 1,
                                                                                 "tokens_per_minute": 300.0}
    # setting 2 on three processes: only two take part, so 1 + 1 <= 2
    chosen, share = cluster_module.llm_share({"kind": "llm", "options": {"concurrency": 2}}, workers)
    assert chosen == ["tcp://a", "tcp://b"] and share["options"]["concurrency"] == 1
    offline = {"kind": "offline"}
    assert cluster_module.llm_share(offline, workers) == (["tcp://a", "tcp://b", "tcp://c"], offline)


def sketch_built_on(address: str, folder, monkeypatch, release: threading.Event | None = None):
    """SKETCH over two documents, in a fresh cache, with ``address`` as its cluster; ``release`` is set
    before the clients close (a partition waiting on it can end)."""
    fresh_cache(folder, monkeypatch)
    retriever = get_retriever("sketch", reasoner=OfflineReasoner(Embedder()), embedder=Embedder())
    try:
        with cluster_address(address):
            harness.build(retriever, DATA.documents[:2])
    finally:
        if release is not None:
            release.set()
        cluster_module.close_clients()
    return retriever


def test_a_cluster_with_no_worker_is_given_up_and_built_here(tmp_path, monkeypatch, caplog):
    from distributed import LocalCluster

    monkeypatch.setenv(NO_WORKER_ENV, "1")
    with LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None, processes=False, protocol="tcp://") as c:
        retriever = sketch_built_on(c.scheduler_address, tmp_path / "c", monkeypatch)
    assert retriever.cluster_build is None and len(retriever.chunks) > 0
    assert "has no worker; building here instead" in caplog.text


RELEASE = threading.Event()


def never_finishes(job, documents):
    RELEASE.wait(60)
    raise RuntimeError("released")


def test_a_stalled_cluster_is_given_up_and_its_partitions_built_here(tmp_path, monkeypatch, caplog):
    from distributed import LocalCluster

    caplog.set_level(logging.WARNING)
    monkeypatch.setenv(STALL_ENV, "1")
    monkeypatch.setattr(cluster_worker, "run_partition", never_finishes)
    RELEASE.clear()
    try:
        with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                          processes=False, protocol="tcp://") as c:
            retriever = sketch_built_on(c.scheduler_address, tmp_path / "c", monkeypatch, release=RELEASE)
    finally:
        RELEASE.set()
    record = retriever.cluster_build
    assert sorted(record["failed"]) == list(range(record["partitions"])) and len(retriever.chunks) > 0
    assert "no partition finished in 1 s" in caplog.text and "are computed here" in caplog.text


@pytest.mark.parametrize("rel", ["../outside.npy", "/tmp/abs.npy", "token_embeddings/../../x.npy"])
def test_a_worker_file_outside_the_cache_folder_is_not_written(tmp_path, rel, caplog):
    from rag_lab.evaluation.cluster_worker import Delivery

    cache = tmp_path / "cache"
    cache.mkdir()

    class Cache:
        path = str(cache / "embeddings.sqlite")

        def put_many(self, *a):
            pass

    class R:
        name = "m"
        embedder = type("E", (), {"cache": Cache()})()
        reasoner = None

    delivery = Delivery(files={rel: b"planted", "token_embeddings/ok.npy": b"fine"}, worker="tcp://w")
    cluster_module.receive(delivery, R())
    assert not (tmp_path / "outside.npy").exists() and not (tmp_path / "x.npy").exists()
    assert (cache / "token_embeddings" / "ok.npy").read_bytes() == b"fine"
    assert "outside the cache folder" in caplog.text


def calls_until_stopped(spec: str, n: int) -> int:
    """A Dask task that asks the model ``n`` times, one after another, as a partition's build does."""
    from rag_lab.reasoning.llm import CallCancelled

    reasoner = LLMReasoner.from_spec(spec, concurrency=1, cache=False, retry_base_delay=0.01, timeout=10)
    asked = 0
    with cluster_worker.stop_when_cancelled(reasoner):
        for i in range(n):
            try:
                reasoner.answer(f"question {i}", ["context"])
            except CallCancelled:
                break
            asked += 1
    return asked


def test_a_cancelled_partition_stops_calling_the_model(fake_openai, tmp_path):
    """Issue 48: Dask cannot end a running task, so a cancelled partition went on calling to the end."""
    import time

    from distributed import Client, LocalCluster

    fake_openai.responder, fake_openai.delay = (lambda request: '{"answer": "ok"}'), 0.1
    spec = f"openai-compatible:fake-model@{fake_openai.base_url}"
    with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      processes=False, protocol="tcp://") as c, Client(c) as client:
        future = client.submit(calls_until_stopped, spec, 60, pure=False)
        while len(fake_openai.requests) < 3:
            time.sleep(0.02)
        client.cancel([future])
        time.sleep(1.0)
        after_cancel = len(fake_openai.requests)
        time.sleep(1.0)
        assert len(fake_openai.requests) == after_cancel              # nothing more was sent
    assert after_cancel <= 3 + 1 + int(1.0 / 0.1) // 2 and after_cancel < 60   # stopped within a poll or two
