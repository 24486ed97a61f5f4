"""The ONNX Runtime encoder backends against the torch one: same vectors within a stated tolerance,
separate cache keys, an export made once and remade when damaged, clear errors for bad names."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from rag_lab.core import onnx_encoder
from rag_lab.core.embedding import Embedder, default_model_path
from rag_lab.core.onnx_encoder import BACKENDS, pooling_plan, resolve_backend

SENTENCES = [
    "Pasta is cooked in salted boiling water until al dente.",
    "Gradient descent updates the weights against the gradient of the loss.",
    "ok",
    # longer than the model's 256 word pieces: truncated alike by both backends
    " ".join(f"Risotto step {i}: stir the rice and add a ladle of warm broth." for i in range(40)),
]
# fp32: the same graph in another runtime, so only float summation order differs (measured: smallest
# cosine 0.9999999 over 256 passages). int8: every weight matrix rounded to 8 bits per output channel
# and activations quantised on the fly; the error builds up over six layers: measured smallest
# cosine 0.9875 (mean 0.9936) over 256 passages, 0.986 for single tokens and 0.962 for the two-letter
# text "ok" above (a short text has few tokens to average the rounding over), so 0.99 would fail on sound
# exports; 0.95 still catches a broken graph or wrong pooling (those give cosines far lower).
FP32_COSINE, INT8_COSINE = 0.999, 0.95


@pytest.fixture(scope="module")
def export_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx_cache")


@pytest.fixture(scope="module")
def torch_embedder(embedder):
    return embedder if embedder.backend == "torch" else Embedder(backend="torch", use_cache=False)


def onnx_embedder(backend, cache_dir):
    return Embedder(backend=backend, cache_dir=cache_dir, use_cache=False)


def test_unknown_backend_names_the_known_ones(monkeypatch):
    with pytest.raises(ValueError, match="unknown embedding backend 'tensorrt'.*torch, onnx, onnx-int8"):
        Embedder(backend="tensorrt", use_cache=False)
    monkeypatch.setenv("RAG_LAB_EMBED_BACKEND", "openvino")
    with pytest.raises(ValueError, match=r"'openvino' \(from \$RAG_LAB_EMBED_BACKEND\)"):
        Embedder(use_cache=False)


def test_backend_comes_from_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv("RAG_LAB_EMBED_BACKEND", "ONNX-int8")
    assert Embedder(use_cache=False).backend == "onnx-int8"
    assert Embedder(backend="torch", use_cache=False).backend == "torch"
    monkeypatch.delenv("RAG_LAB_EMBED_BACKEND")
    assert resolve_backend() == onnx_encoder.DEFAULT_BACKEND


def test_model_key_differs_by_backend():
    keys = {b: Embedder(backend=b, use_cache=False).model_key for b in BACKENDS}
    assert len(set(keys.values())) == len(BACKENDS)
    base = keys["torch"]                      # the reference backend keeps the key it had before backends
    assert keys["onnx"] == base + "+onnx" and keys["onnx-int8"] == base + "+onnx-int8.r7"


def test_pooling_is_read_from_the_model_folder(tmp_path):
    plan = pooling_plan(default_model_path())
    assert plan == {"max_seq_length": 256, "normalize": True, "dim": 384}   # MiniLM's own config files
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 8, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}))
    with pytest.raises(ValueError, match="mean pooling only"):
        pooling_plan(tmp_path)


@pytest.mark.parametrize("backend, tolerance", [("onnx", FP32_COSINE), ("onnx-int8", INT8_COSINE)])
def test_onnx_vectors_match_torch(torch_embedder, export_cache, backend, tolerance):
    ref = torch_embedder.model.encode(SENTENCES, batch_size=2, normalize_embeddings=True, convert_to_numpy=True)
    e = onnx_embedder(backend, export_cache)
    got = e.encode(SENTENCES)
    assert got.shape == ref.shape and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert (got * ref).sum(axis=1).min() > tolerance
    assert e.max_tokens == torch_embedder.max_tokens and e.dim == torch_embedder.dim


@pytest.mark.parametrize("backend, tolerance", [("onnx", FP32_COSINE), ("onnx-int8", INT8_COSINE)])
def test_onnx_token_embeddings_match_torch(torch_embedder, export_cache, backend, tolerance):
    """Late chunking's per-token vectors (GraLC) come from the same backend."""
    ids, _ = torch_embedder.tokenize_with_offsets(SENTENCES[1])
    ref = torch_embedder.token_embeddings_for_ids(ids)
    got = onnx_embedder(backend, export_cache).token_embeddings_for_ids(ids)
    assert got.shape == ref.shape == (len(ids), 384)
    cos = (got * ref).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1))
    assert cos.min() > tolerance


def test_export_is_made_once_and_reused(export_cache, monkeypatch):
    onnx_embedder("onnx", export_cache).model
    path = next(export_cache.glob("onnx/*/model.onnx"))
    mtime = path.stat().st_mtime_ns

    def no_export(*args):
        raise AssertionError("exported again although a sound export was cached")
    monkeypatch.setattr(onnx_encoder, "_export", no_export)
    monkeypatch.setattr(onnx_encoder, "_quantise", no_export)
    second = onnx_embedder("onnx", export_cache)
    assert second.encode(["reused"]).shape == (1, 384)
    assert path.stat().st_mtime_ns == mtime


def test_a_truncated_export_is_made_again(torch_embedder, tmp_path, caplog):
    first = onnx_embedder("onnx", tmp_path)
    first.model
    path = next(tmp_path.glob("onnx/*/model.onnx"))
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 3)                       # an export cut short (disk full, killed copy)
    with caplog.at_level(logging.WARNING, logger="rag_lab.core.onnx_encoder"):
        again = onnx_embedder("onnx", tmp_path)
        vec = again.encode([SENTENCES[0]])
    assert "unusable" in caplog.text and f"{size // 3} bytes" in caplog.text
    assert path.stat().st_size == size
    ref = torch_embedder.model.encode([SENTENCES[0]], normalize_embeddings=True, convert_to_numpy=True)
    assert float(vec[0] @ ref[0]) > FP32_COSINE


def test_an_int8_export_quantised_with_other_settings_is_made_again(export_cache, caplog):
    """An int8 file quantised before reduce_range (8-bit weights, which saturate on CPUs without VNNI) is
    re-quantised, not reused: its record names the settings it was made with."""
    onnx_embedder("onnx-int8", export_cache).model
    path = next(export_cache.glob("onnx/*/model.int8.onnx"))
    record_path = path.with_name(path.name + ".json")
    record = json.loads(record_path.read_text())
    assert {k: record[k] for k in onnx_encoder.QUANTISATION} == {"per_channel": True, "reduce_range": True}
    record["reduce_range"] = False                   # what an export of the older code wrote
    record_path.write_text(json.dumps(record))
    with caplog.at_level(logging.WARNING, logger="rag_lab.core.onnx_encoder"):
        onnx_embedder("onnx-int8", export_cache).model
    assert "made with other settings" in caplog.text
    assert json.loads(record_path.read_text())["reduce_range"] is True


def test_manifests_and_sidecars_name_the_backend(monkeypatch):
    from rag_lab.evaluation.provenance import embedder_record
    from rag_lab.evaluation.provenance import embedding_backend

    class Method:  # what provenance reads of a retriever: its embedder, if it made one
        _embedder = None
    assert embedder_record(Method()) == {"embedder": "none", "embedding_backend": "none"}
    Method._embedder = Embedder(backend="onnx-int8", use_cache=False)
    record = embedder_record(Method())
    assert record["embedding_backend"] == "onnx-int8" and record["embedder"].endswith("+onnx-int8.r7")
    monkeypatch.setenv("RAG_LAB_EMBED_BACKEND", "onnx")
    assert embedding_backend() == "onnx"             # what run_notebooks writes into manifest.json


def test_the_export_leaves_no_warning_for_a_reader(tmp_path):
    """The tracer's notes on this model (TracerWarning, aten::index) are filtered around the export
    itself (a notebook that exports on first use showed them), not globally."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnx_embedder("onnx", tmp_path).model
    shown = [f"{type(w.message).__name__}: {w.message}" for w in caught
             if not issubclass(w.category, DeprecationWarning) or "ONNX export" in str(w.message)]
    assert shown == []            # other DeprecationWarnings are hidden outside __main__ by Python's defaults
    assert not any(f[0] == "ignore" and f[2] is UserWarning and f[1] is None for f in warnings.filters)


@pytest.mark.parametrize(("raw", "threads"), [("", None), ("1", 1), (" 3 ", 3)])
def test_threads_come_from_the_environment(monkeypatch, raw, threads):
    from rag_lab.core.onnx_encoder import THREADS_ENV, _threads_from_env

    monkeypatch.setenv(THREADS_ENV, raw)
    assert _threads_from_env() == threads


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_a_bad_thread_count_names_the_variable(monkeypatch, raw):
    from rag_lab.core.onnx_encoder import THREADS_ENV, _threads_from_env

    monkeypatch.setenv(THREADS_ENV, raw)
    with pytest.raises(ValueError, match=f"RAG_LAB_THREADS={raw!r}: expected a whole number"):
        _threads_from_env()


def test_an_export_is_usable_only_when_it_matches_its_record(tmp_path, caplog):
    path = tmp_path / "model.onnx"
    with caplog.at_level(logging.WARNING, logger="rag_lab.core.onnx_encoder"):
        assert not onnx_encoder._usable(path)               # missing: made, nothing to warn about
        assert caplog.records == []
        path.write_bytes(b"0123456789")
        onnx_encoder._write_record(path, **onnx_encoder.QUANTISATION)
        assert onnx_encoder._usable(path)
        assert onnx_encoder._usable(path, onnx_encoder.QUANTISATION)
        assert caplog.records == []
        assert not onnx_encoder._usable(path, {"reduce_range": False})   # made with other settings
        path.write_bytes(b"01234567")                                     # 8 bytes, its record says 10
        assert not onnx_encoder._usable(path)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and "made with other settings" in said[0] and "8 bytes, its record says 10" in said[1]
    assert all("exporting it again" in s for s in said)
