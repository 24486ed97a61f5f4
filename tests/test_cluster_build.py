"""One run's index built with the session's Dask LocalCluster (2 worker processes on 127.0.0.1, conftest's
``dask_cluster``), on a tiny corpus (``tiny_corpus``: italian_cuisine's three documents cut to their first
paragraphs, still three partitions; this tests the plumbing, not retrieval quality): for one method of each paper (each built once here, without it, as the reference) the chunks, vectors, graph and evaluation table equal a local build's, the driver computed none of
the per-document work itself, what the workers returned stays in the driver's caches for a later local
run, a failing partition is computed here instead, and timed builds never leave the machine."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

from conftest import empty_cache
from rag_lab.evaluation import harness
from rag_lab.core.embedding import Embedder
from rag_lab.core.types import Dataset, Document
from rag_lab.datasets import load_dataset
from rag_lab.evaluation import cluster as cluster_module
from rag_lab.evaluation import cluster_worker
from rag_lab.evaluation.cluster import ADDRESS_ENV, cluster_address, partition
from rag_lab.evaluation.harness import evaluate
from rag_lab.evaluation.index_store import clear_memo
from rag_lab.methods import get_retriever
from rag_lab.methods.gralc.encoding import clear_memory_cache
from rag_lab.reasoning import linguistics, offline
from rag_lab.reasoning.offline import OfflineReasoner

PARAGRAPHS = 3          # title and two paragraphs of each document: about 1,300-1,700 characters


def tiny_corpus(paragraphs: int = PARAGRAPHS) -> Dataset:
    """italian_cuisine with each document cut to its first ``paragraphs`` paragraphs, and the questions
    with a gold passage inside what is left: three short documents, so three partitions, at a sixth of the
    full corpus's parse and encode work."""
    full = load_dataset("italian_cuisine")
    docs = [Document(d.id, "\n\n".join(d.text.split("\n\n")[:paragraphs]), d.title) for d in full.documents]
    texts = " ".join(d.text for d in docs)
    questions = [q for q in full.questions if any(c in texts for c in q.gold_contexts)]
    return Dataset("italian_cuisine_tiny", docs, questions)


DATA = tiny_corpus()
pytestmark = pytest.mark.heavy


def test_the_tiny_corpus_is_three_short_documents_with_questions():
    assert len(DATA.documents) == 3 and all(1000 < len(d.text) < 2000 for d in DATA.documents)
    assert [q.id for q in DATA.questions] == ["ic-q01", "ic-q04", "ic-q10", "ic-q14"]     # worked out by hand


def test_partition_by_hand():
    docs = [Document(str(i), "x" * n) for i, n in enumerate([10, 10, 10, 10])]
    assert [[d.id for d in p] for p in partition(docs, 2)] == [["0", "1"], ["2", "3"]]
    big = [Document(str(i), "x" * n) for i, n in enumerate([100, 1, 1, 1])]   # the first passes two cut points
    assert [[d.id for d in p] for p in partition(big, 3)] == [["0"], ["1", "2", "3"]]
    assert [len(p) for p in partition(docs, 10)] == [1, 1, 1, 1]               # never an empty slice
    assert partition(docs, 1) == [docs] and partition([], 3) == []
    with pytest.raises(ValueError, match="parts must be at least 1"):
        partition(docs, 0)


def test_cluster_address_is_set_for_the_block_and_checked(monkeypatch):
    monkeypatch.delenv(ADDRESS_ENV, raising=False)
    with cluster_address("tcp://127.0.0.1:1"):
        assert os.environ[ADDRESS_ENV] == "tcp://127.0.0.1:1"
    assert ADDRESS_ENV not in os.environ
    with cluster_address(None):
        assert ADDRESS_ENV not in os.environ
    with pytest.raises(ValueError, match="expected a Dask scheduler address"):
        with cluster_address("localhost"):
            pass


def fresh_cache(folder: Path, monkeypatch) -> Path:
    """An empty rag_lab cache (sharing the session's ONNX export, which is not what is compared)."""
    empty_cache(folder)
    monkeypatch.setenv("RAG_LAB_CACHE", str(folder))
    monkeypatch.setenv("RAG_LAB_REUSE", "1")
    clear_memo()                       # no in-process copy of an index, a token encoding or a parse is reused
    clear_memory_cache()
    linguistics.parse.cache_clear()
    return folder


def build(name: str, folder: Path, monkeypatch, address: str | None = None, reuse=None):
    fresh_cache(folder, monkeypatch)
    embedder = Embedder()
    kwargs = {"reasoner": OfflineReasoner(embedder)} if not name.startswith(("gralc", "naive")) else {}
    retriever = get_retriever(name, embedder=embedder, **kwargs)
    with cluster_address(address):
        harness.build(retriever, DATA.documents, reuse=reuse)
    return retriever, embedder


def structure(r) -> dict:
    """What the build made, beyond chunks and vectors: the method's graph or classes."""
    if r.name == "sketch":
        return {"nodes": sorted(map(repr, r.graph.store.nodes())), "edges": sorted(map(repr, r.graph.store.edges()))}
    if r.name == "unweaver":
        return {"classes": [(c.name, c.mentions, c.chunks, c.text) for c in r.classes],
                "incidence": r.incidence.toarray().tolist(), "class_vectors": r.class_vectors.tobytes()}
    if r.name.startswith("ssg"):
        g = r.graph.graph
        return {"edges": sorted((u, v, d["kind"], d["weight"]) for u, v, d in g.edges(data=True)),
                "windows": r.graph.window_vecs.tobytes()}
    return {}


def table(r):
    df = evaluate([r], DATA, ks=[1, 3, 5], progress=False)
    return df[df.metric != "latency_seconds"].reset_index(drop=True)


def counting_parses(monkeypatch) -> list:
    """The texts the offline reasoner parses from now on (for as long as ``monkeypatch`` holds)."""
    parses, real_parse = [], offline.parse
    monkeypatch.setattr(offline, "parse", lambda text: parses.append(text) or real_parse(text))
    return parses


@pytest.fixture(scope="module")
def local_build(tmp_path_factory, embedder):
    """``local_build(name)``: the method built here, without a cluster, in an empty cache, once for the
    module (the reference its cluster builds are compared with), and the texts parsed while building it."""
    embedder.model  # noqa: B018 - the session's ONNX export exists before the caches share it
    built = {}

    def get(name: str):
        if name not in built:
            with pytest.MonkeyPatch.context() as mp:
                parses = counting_parses(mp)
                retriever, _ = build(name, tmp_path_factory.mktemp("local") / "cache", mp)
                built[name] = retriever, len(parses)
        return built[name]
    return get


@pytest.mark.parametrize("name", ["sketch", "unweaver", "ssg-query-traversal", "gralc-kg"])
def test_each_paper_builds_the_same_index_on_a_local_cluster(name, dask_cluster, local_build, tmp_path, monkeypatch):
    here, parsed_locally = local_build(name)
    parses = counting_parses(monkeypatch)
    there, driver_embedder = build(name, tmp_path / "cluster", monkeypatch, dask_cluster.address)
    parsed_by_driver, encoded_by_driver = len(parses), driver_embedder.stats["encoded"]

    record = there.cluster_build
    # what the workers sent back: vectors, reasoner results or (GraLC) token-embedding files
    assert record["partitions"] == 3 and record["failed"] == [] and record["vectors"] + record["results"] + record["files"] > 0
    assert [(c.id, c.text, c.start, c.end) for c in there.chunks] == [(c.id, c.text, c.start, c.end) for c in here.chunks]
    if getattr(here, "vectors", None) is not None:
        assert np.array_equal(there.vectors, here.vectors)
    assert structure(there) == structure(here)
    assert table(there).equals(table(here))
    # the driver did none of the per-document work: no chunk parsed, no token window encoded
    if name in ("sketch", "unweaver", "ssg-query-traversal"):
        assert parsed_locally > 0 and parsed_by_driver == 0
    if name == "gralc-kg":
        assert record["files"] == len(DATA.documents) and encoded_by_driver == 0


def test_what_the_workers_returned_serves_a_later_local_run(dask_cluster, tmp_path, monkeypatch):
    there, _ = build("naive", tmp_path / "cache", monkeypatch, dask_cluster.address)
    assert there.cluster_build["vectors"] == len(there.chunks)
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "cache"))    # the same driver cache, no cluster
    again = Embedder()
    local = harness.build(get_retriever("naive", embedder=again), DATA.documents, reuse=False)
    assert again.stats["encoded"] == 0 and np.array_equal(local.vectors, there.vectors)


def test_timed_builds_never_use_the_cluster(dask_cluster, tmp_path, monkeypatch):
    timed, _ = build("naive", tmp_path / "timed", monkeypatch, dask_cluster.address, reuse=False)
    assert timed.cluster_build is None


def test_a_failing_partition_is_computed_here(dask_cluster, local_build, tmp_path, monkeypatch, caplog):
    here, _ = local_build("sketch")
    real = cluster_worker.reasoner_recipe

    def wrong(reasoner):      # a worker that would make another reasoner refuses the partition
        recipe = real(reasoner)
        return {**recipe, "fingerprint": "0" * 16} if recipe else recipe
    monkeypatch.setattr(cluster_worker, "reasoner_recipe", wrong)
    there, _ = build("sketch", tmp_path / "cluster", monkeypatch, dask_cluster.address)
    assert sorted(there.cluster_build["failed"]) == [0, 1, 2]
    assert "differs from the driver's" in caplog.text and "are computed here" in caplog.text
    assert structure(there) == structure(here) and np.array_equal(there.vectors, here.vectors)


def test_methods_that_cannot_take_part_are_built_here(tmp_path, monkeypatch, caplog):
    from rag_lab.evaluation.retrievers import DocumentWork, Method

    class Opaque(Method):          # no document_work
        name = "opaque"

    caplog.set_level(logging.INFO, logger="rag_lab.evaluation.cluster")
    fresh_cache(tmp_path / "c", monkeypatch)
    nowhere = "tcp://127.0.0.1:1"     # never contacted: each is refused before a client is made
    assert isinstance(get_retriever("kg"), DocumentWork) and not isinstance(Opaque(), DocumentWork)
    assert cluster_module.prepare(Opaque(), DATA.documents, address=nowhere) is None
    monkeypatch.setenv("RAG_LAB_REUSE", "0")     # the offline reasoner's results would have nowhere to go
    assert cluster_module.prepare(get_retriever("sketch"), DATA.documents, address=nowhere) is None
    assert "it has no document_work" in caplog.text and "RAG_LAB_REUSE=0 turns off" in caplog.text


def test_an_unreachable_scheduler_is_named(tmp_path, monkeypatch, refused_port):
    port = refused_port                      # a port nothing listens on
    monkeypatch.setattr(cluster_module, "_CLIENTS", {})
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", "1s")
    with pytest.raises(RuntimeError, match=f"could not reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        cluster_module.client_for(f"tcp://127.0.0.1:{port}")
