"""Persisted indexes (rag_lab/evaluation/index_store.py): a reloaded index answers exactly as the built one,
for every registered method; the key changes with what built the index; a damaged or partial
entry is ignored with a warning and rebuilt; RAG_LAB_REUSE=0 turns reuse off."""
from __future__ import annotations

import logging

import pytest

from rag_lab.evaluation import harness
from rag_lab.caching.trust import sign
from rag_lab.evaluation import index_store
from rag_lab.datasets import load_dataset
from rag_lab.methods import available_methods, get_retriever
from rag_lab.evaluation.provenance import method_record

QUERIES = 3


@pytest.fixture()
def reuse_on(monkeypatch, tmp_path):
    """Reuse on, an empty store in tmp_path, no in-process copies left over."""
    monkeypatch.setenv("RAG_LAB_REUSE", "1")
    monkeypatch.setattr(index_store, "default_root", lambda: tmp_path / "indexes")
    index_store.clear_memo()
    yield tmp_path / "indexes"
    index_store.clear_memo()


@pytest.fixture(scope="module")
def small():
    data = load_dataset("italian_cuisine")
    return data.documents[:3], [q.question for q in data.questions[:QUERIES]]


def answers(retriever, queries, k=5):
    out = []
    for q in queries:
        r = harness.retrieve(retriever, q, k)
        out.append(([(h.chunk.id, h.chunk.text, h.chunk.start, h.chunk.end, round(float(h.score), 6), h.via)
                     for h in r.hits], r.trace, r.cost.embedding_tokens, r.cost.llm_prompt_tokens))
    return out


@pytest.mark.parametrize("method", list(available_methods()))
def test_reloaded_index_answers_exactly_as_built(method, reuse_on, small, embedder):
    docs, queries = small
    built = harness.build(get_retriever(method, embedder=embedder), docs)
    assert built.index_reuse["reused"] is False
    entry = built.index_reuse["entry"]
    assert entry is not None, f"{method}: its index was not persisted"
    index_store.clear_memo()                     # the next build must come from disk, not memory
    loaded = harness.build(get_retriever(method, embedder=embedder), docs)
    assert loaded.index_reuse == {"reused": True, "key": built.index_reuse["key"], "entry": entry,
                                  "bytes": built.index_reuse["bytes"]}   # the size of the one stored state
    assert built.index_reuse["bytes"] == len(index_store.dump_state(built))
    assert [c.id for c in loaded.chunks] == [c.id for c in built.chunks]
    assert loaded.build_cost == built.build_cost           # the cost of the build that made it
    assert answers(loaded, queries) == answers(built, queries)
    assert method_record(loaded) == method_record(built)  # same params, same reasoner named as builder


def test_reasoner_of_a_reused_index_is_named(reuse_on, small, embedder):
    docs, _ = small
    built = harness.build(get_retriever("unweaver", embedder=embedder), docs)
    index_store.clear_memo()
    loaded = harness.build(get_retriever("unweaver", embedder=embedder), docs)
    assert loaded.index_reuse["reused"] and method_record(loaded)["index_reasoner"] == "offline"
    assert method_record(built)["index_reasoner"] == "offline"
    naive = harness.build(get_retriever("naive", embedder=embedder), docs)
    index_store.clear_memo()
    assert method_record(harness.build(get_retriever("naive", embedder=embedder), docs))["index_reasoner"] == "none"
    assert method_record(naive)["index_reasoner"] == "none"


def test_reasoner_handed_to_a_method_that_builds_without_one(reuse_on, small, embedder, caplog):
    """naive given a reasoner (to answer with, as notebook 02 does) builds without it: its index is credited
    to none, persisted, and reloads from disk with no warning (it used to be refused as "built by 'none'
    but would be credited to 'offline'" and rebuilt, then left unpersisted)."""
    from rag_lab.reasoning.offline import OfflineReasoner

    docs, _ = small
    harness.build(get_retriever("naive", embedder=embedder), docs)          # an entry built with no reasoner at all
    index_store.clear_memo()
    with caplog.at_level(logging.WARNING, logger="rag_lab.evaluation.index_store"):
        given = harness.build(get_retriever("naive", embedder=embedder, reasoner=OfflineReasoner(embedder)), docs)
        index_store.clear_memo()
        fresh = harness.build(get_retriever("naive", embedder=embedder, reasoner=OfflineReasoner(embedder), size=64), docs)
    assert given.index_reuse["reused"] and method_record(given)["index_reasoner"] == "none"
    assert fresh.index_reuse["entry"] is not None and method_record(fresh)["index_reasoner"] == "none"
    assert not [r.getMessage() for r in caplog.records]


def test_undeclared_reasoner_call_while_indexing_is_not_persisted(reuse_on, small, embedder, caplog):
    from rag_lab.methods.baselines.vector import NaiveRetriever
    from rag_lab.reasoning.offline import OfflineReasoner

    class Caller(NaiveRetriever):          # calls its reasoner while indexing but does not declare it
        def build(self, documents):
            super().build(documents)
            self.reasoner.query_entities("saffron")
            return self

    docs, _ = small
    r = Caller(embedder=embedder, reasoner=OfflineReasoner(embedder))
    r.name = "caller"
    with caplog.at_level(logging.WARNING, logger="rag_lab.evaluation.index_store"):
        harness.build(r, docs)
    assert r.index_reuse["entry"] is None
    assert any("does not declare reasoner_at_build" in m.getMessage() for m in caplog.records)


def test_same_index_is_built_once_per_process(reuse_on, small, embedder, monkeypatch):
    docs, _ = small
    harness.build(get_retriever("naive", embedder=embedder), docs)
    calls = []
    monkeypatch.setattr(index_store.IndexStore, "load", lambda *a: calls.append(a))  # memory first, disk never
    again = harness.build(get_retriever("naive", embedder=embedder), docs)
    assert again.index_reuse["reused"] and again.index_reuse["entry"] == "memory" and calls == []


def test_key_changes_with_config_documents_and_reasoner(reuse_on, small, embedder):
    from rag_lab.reasoning.offline import OfflineReasoner

    docs, _ = small
    key = lambda r, d: index_store.index_key(index_store.key_parts(r, d))  # noqa: E731
    base = key(get_retriever("naive", embedder=embedder), docs)
    assert key(get_retriever("naive", embedder=embedder), docs) == base
    assert key(get_retriever("naive", embedder=embedder, size=64), docs) != base
    assert key(get_retriever("naive", embedder=embedder), docs[:2]) != base
    assert key(get_retriever("semantic", embedder=embedder), docs) != base
    offline = key(get_retriever("sketch", embedder=embedder, reasoner=OfflineReasoner(embedder)), docs)
    assert key(get_retriever("sketch", embedder=embedder, reasoner=OfflineReasoner(embedder)), docs) == offline
    assert key(get_retriever("sketch", embedder=embedder, reasoner=OfflineReasoner(embedder, answer_words=30)),
               docs) != offline
    # naive calls no reasoner while indexing: its key holds none
    assert index_store.key_parts(get_retriever("naive", embedder=embedder), docs)["reasoner"] is None
    # two configs, two entries on disk
    harness.build(get_retriever("naive", embedder=embedder), docs)
    harness.build(get_retriever("naive", embedder=embedder, size=64), docs)
    assert len([p for p in (reuse_on / "naive").iterdir() if not p.name.startswith(".")]) == 2


@pytest.mark.parametrize("damage", ["state", "marker", "partial"])
def test_damaged_entry_is_rebuilt_with_a_warning(damage, reuse_on, small, embedder, caplog):
    docs, queries = small
    built = harness.build(get_retriever("naive", embedder=embedder), docs)
    entry = reuse_on / "naive" / built.index_reuse["key"]
    if damage == "state":
        (entry / "state.pkl").write_bytes((entry / "state.pkl").read_bytes()[:100])   # truncated
    elif damage == "marker":
        (entry / "COMPLETE").write_text("{not json", encoding="utf-8")
    else:
        (entry / "COMPLETE").unlink()                                                 # never finished
    index_store.clear_memo()
    with caplog.at_level(logging.WARNING, logger="rag_lab.evaluation.index_store"):
        again = harness.build(get_retriever("naive", embedder=embedder), docs)
    assert again.index_reuse["reused"] is False
    assert any("ignoring it and building the index again" in r.getMessage() for r in caplog.records)
    assert answers(again, queries) == answers(built, queries)
    index_store.clear_memo()                     # the rebuilt entry is whole again
    assert harness.build(get_retriever("naive", embedder=embedder), docs).index_reuse["reused"] is True


def test_unpicklable_state_is_rebuilt_with_a_warning(reuse_on, small, embedder, caplog):
    docs, _ = small
    built = harness.build(get_retriever("naive", embedder=embedder), docs)
    entry = reuse_on / "naive" / built.index_reuse["key"]
    import hashlib
    import json
    junk = b"not a pickle"
    sha = hashlib.sha256(junk).hexdigest()
    (entry / "state.pkl").write_bytes(junk)      # checksum and signature right, content wrong
    (entry / "COMPLETE").write_text(json.dumps({"format": index_store.FORMAT, "sha256": sha, "hmac": sign(
        *index_store.IndexStore._signed("naive", built.index_reuse["key"], sha))}), encoding="utf-8")
    index_store.clear_memo()
    with caplog.at_level(logging.WARNING, logger="rag_lab.evaluation.index_store"):
        again = harness.build(get_retriever("naive", embedder=embedder), docs)
    assert again.index_reuse["reused"] is False and len(again.chunks) == len(built.chunks)
    assert any("unloadable" in r.getMessage() for r in caplog.records)


def test_reuse_off(reuse_on, small, embedder, monkeypatch):
    docs, _ = small
    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    r = harness.build(get_retriever("naive", embedder=embedder), docs)
    assert r.index_reuse == {"reused": False, "key": None, "entry": None} and not reuse_on.exists()
    monkeypatch.setenv("RAG_LAB_REUSE", "1")
    harness.build(get_retriever("naive", embedder=embedder), docs)
    assert harness.build(get_retriever("naive", embedder=embedder), docs, reuse=False).index_reuse["reused"] is False


def test_ssg_algorithms_share_one_graph(reuse_on, small, embedder):
    docs, queries = small
    first = harness.build(get_retriever("ssg-basic-retrieval", embedder=embedder), docs)
    other = harness.build(get_retriever("ssg-query-traversal", embedder=embedder), docs)   # the graph, not the algorithm
    assert other.index_reuse["reused"] and other.index_reuse["key"] == first.index_reuse["key"]
    assert other.graph is not first.graph            # its own copy
    fresh = harness.build(get_retriever("ssg-query-traversal", embedder=embedder), docs, reuse=False)
    assert answers(other, queries) == answers(fresh, queries)


def test_a_notebook_drawing_the_ssg_graph_stores_it_for_the_retrievers(reuse_on, small, embedder):
    from rag_lab.methods.ssg.config import SSGConfig
    from rag_lab.methods.ssg.graph import build_graph
    from rag_lab.methods.ssg.method import stored_graph

    docs, _ = small
    reasoner = get_retriever("ssg-basic-retrieval", embedder=embedder).reasoner
    graph = stored_graph(docs, embedder, reasoner, SSGConfig())
    assert sorted(graph.graph.edges(data=True)) == sorted(build_graph(docs, embedder, reasoner, SSGConfig()).graph.edges(data=True))
    later = harness.build(get_retriever("ssg-query-traversal", embedder=embedder), docs)     # notebook 10's retriever
    assert later.index_reuse["reused"] and sorted(later.graph.graph.edges(data=True)) == sorted(graph.graph.edges(data=True))


def test_share_index_gives_a_copy_only_between_methods_building_the_same_index(small, embedder):
    docs, queries = small
    built = harness.build(get_retriever("ssg-basic-retrieval", embedder=embedder), docs, reuse=False)
    other = get_retriever("ssg-query-traversal", embedder=embedder)
    assert index_store.index_identity(other, docs) == index_store.index_identity(built, docs)
    index_store.share_index(built, other, docs)
    assert other.index_reuse["reused"] and other.graph is not built.graph
    fresh = harness.build(get_retriever("ssg-query-traversal", embedder=embedder), docs, reuse=False)
    assert answers(other, queries) == answers(fresh, queries)
    with pytest.raises(ValueError, match="cannot share the index of ssg-basic-retrieval"):
        index_store.share_index(built, get_retriever("naive", embedder=embedder), docs)


def test_config_id_of_a_whole_config(reuse_on, small, embedder):
    naive = get_retriever("naive", embedder=embedder)
    assert index_store.key_parts(naive, small[0])["config_id"] == naive.config.config_id
