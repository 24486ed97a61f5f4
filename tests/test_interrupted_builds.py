"""Ctrl-C in the middle of a build (KeyboardInterrupt from inside the encoder, or while a graph or
an index is being saved) leaves nothing half-written that breaks or misleads the next run."""
from __future__ import annotations

import numpy as np
import pytest
from cache_fakes import fake_embedder, fake_vector, make_model_folder
from ssg_handmade import hand_graph, main_graph

from rag_lab.evaluation import harness
from rag_lab.datasets import load_dataset
from rag_lab.core.embedding import Embedder
from rag_lab.core.index import VectorIndex
from rag_lab.methods import get_retriever
from rag_lab.methods.ssg.graph import SimilarityGraph

TEXTS = [f"Step {i}: toast the pine nuts, then pound them with basil." for i in range(50)]


def test_an_interrupted_encoding_keeps_what_it_finished_and_the_rerun_does_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(Embedder, "SLICE", 10)
    folder = make_model_folder(tmp_path / "model")
    first = fake_embedder(folder, tmp_path / "cache", interrupt_after=2)   # Ctrl-C during the third slice
    with pytest.raises(KeyboardInterrupt):
        first.encode(TEXTS)
    again = fake_embedder(folder, tmp_path / "cache")
    vectors = again.encode(TEXTS)
    assert np.array_equal(vectors, np.stack([fake_vector("v1", t) for t in TEXTS]))
    assert again.stats == {"encoded": 30, "cache_hits": 20}                # two slices of 10 were kept
    assert {p.name for p in (tmp_path / "cache").iterdir()} <= {"embeddings.sqlite", "embeddings.sqlite-wal",
                                                                  "embeddings.sqlite-shm"}


class InterruptingModel:
    """The real MiniLM, but Ctrl-C arrives on the ``after + 1``-th encode call (mid build)."""

    def __init__(self, model, after: int):
        self.model, self.after, self.calls = model, after, 0

    def encode(self, *args, **kwargs):
        self.calls += 1
        if self.calls > self.after:
            raise KeyboardInterrupt
        return self.model.encode(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.model, name)


def test_a_build_interrupted_inside_the_encoder_builds_again(embedder, tmp_path, monkeypatch):
    monkeypatch.setattr(Embedder, "SLICE", 16)
    data = load_dataset("italian_cuisine", limit=3)

    def naive(model):
        e = Embedder(cache_dir=tmp_path / "cache")
        e._model = model
        return get_retriever("naive", embedder=e)

    with pytest.raises(KeyboardInterrupt):
        harness.build(naive(InterruptingModel(embedder.model, after=1)), data.documents)
    rebuilt = harness.build(naive(embedder.model), data.documents)
    assert 0 < rebuilt.embedder.stats["cache_hits"] < len(rebuilt.chunks)  # resumed, not restarted
    reference = get_retriever("naive", embedder=Embedder(cache_dir=tmp_path / "fresh"))
    reference.embedder._model = embedder.model
    harness.build(reference, data.documents)
    assert [c.id for c in rebuilt.chunks] == [c.id for c in reference.chunks]
    for q in data.questions:
        assert [h.chunk.id for h in harness.retrieve(rebuilt, q.question, 5).hits] == \
               [h.chunk.id for h in harness.retrieve(reference, q.question, 5).hits]


def _interrupt_while_writing(monkeypatch, module, name):
    """Make ``module.name`` raise KeyboardInterrupt as Ctrl-C would mid-write: a writer handed an open
    file (np.savez into atomic_path's temporary file) has written part of it; a writer handed a path
    (write_text, itself atomic) has left the target untouched."""
    def interrupted(target, *args, **kwargs):
        if hasattr(target, "write"):
            target.write(b"PK\x03\x04 half")
        raise KeyboardInterrupt
    monkeypatch.setattr(module, name, interrupted)


def test_a_graph_save_interrupted_midway_never_loads_as_a_mix_of_two_graphs(tmp_path, monkeypatch):
    old, _ = main_graph()
    new, _ = hand_graph({"A": [10, 25, 60, 80]}, {"A": [30, 40, 26, 35, 70, 85]})
    folder = tmp_path / "ssg"
    old.save(folder)
    with monkeypatch.context() as m:
        _interrupt_while_writing(m, np, "savez")  # graph.json of the new graph is written by then
        with pytest.raises(KeyboardInterrupt):
            new.save(folder)
    with pytest.raises(FileNotFoundError, match="missing config.json"):
        SimilarityGraph.load(folder)              # refused, not the old vectors under the new graph
    assert not [p.name for p in folder.iterdir() if ".tmp" in p.name]  # no temporary file left behind
    new.save(folder)
    loaded = SimilarityGraph.load(folder)
    assert loaded.window_ids == new.window_ids and np.array_equal(loaded.window_vecs, new.window_vecs)


def test_an_index_save_interrupted_midway_never_pairs_vectors_with_old_ids(tmp_path, monkeypatch):
    import json

    import rag_lab.core.index as index_module

    folder = tmp_path / "idx"
    VectorIndex(2).add(np.eye(2, dtype=np.float32), ["a", "b"]).save(folder)
    new = VectorIndex(2).add(np.eye(2, dtype=np.float32)[::-1].copy(), ["c", "d"])
    real_write_text = index_module.write_text
    with monkeypatch.context() as m:
        _interrupt_while_writing(m, index_module, "write_text")  # index.faiss is new by then
        with pytest.raises(KeyboardInterrupt):
            new.save(folder)
    assert real_write_text is index_module.write_text
    with pytest.raises(FileNotFoundError, match="missing ids.json"):
        VectorIndex.load(folder)
    new.save(folder)
    loaded = VectorIndex.load(folder)
    assert loaded.ids == ["c", "d"] and json.loads((folder / "ids.json").read_text()) == ["c", "d"]
