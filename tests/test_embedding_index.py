import numpy as np
import pytest

from rag_lab.core.embedding import Embedder
from rag_lab.core.index import VectorIndex


def test_cache_second_run_encodes_nothing(tmp_path, embedder):
    texts = ["Pesto comes from Genoa.", "Risotto uses Carnaroli rice.", "Pesto comes from Genoa."]
    first = Embedder(cache_dir=tmp_path)
    first._model = embedder.model  # share the loaded weights; the cache is what is under test
    a = first.encode(texts)
    assert first.stats["encoded"] == 2  # the duplicate text is encoded once
    second = Embedder(cache_dir=tmp_path)
    second._model = embedder.model
    b = second.encode(texts)
    assert second.stats == {"encoded": 0, "cache_hits": 3}
    assert np.array_equal(a, b) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)


def test_encode_rejects_a_bare_string(embedder):
    with pytest.raises(TypeError, match="list of texts"):
        embedder.encode("one text")


def test_token_embeddings_align_with_offsets(embedder):
    text = "Saffron colours risotto."
    ids, offsets = embedder.tokenize_with_offsets(text)
    vectors = embedder.token_embeddings_for_ids(ids)
    assert vectors.shape == (len(ids), 384)
    assert text[offsets[0][0]:offsets[0][1]].lower() == "saffron"[: offsets[0][1] - offsets[0][0]]
    with pytest.raises(ValueError, match="exceeds the model's limit"):
        embedder.token_embeddings_for_ids([ids[0]] * 600)


def test_index_search_save_load(tmp_path):
    vecs = np.eye(4, dtype=np.float32)
    index = VectorIndex(4).add(vecs, ["a", "b", "c", "d"])
    q = np.array([0.1, 0.9, 0.0, 0.4], dtype=np.float32)
    scores, rows = index.search(q, 2)
    assert [index.ids[r] for r in rows[0]] == ["b", "d"] and scores[0][0] == pytest.approx(0.9)
    loaded = VectorIndex.load(index.save(tmp_path / "idx"))
    assert loaded.ids == index.ids
    assert np.array_equal(loaded.search(q, 4)[1], index.search(q, 4)[1])
    with pytest.raises(ValueError, match=r"shape \(n, 4\)"):
        index.add(np.zeros((1, 3), np.float32), ["x"])
