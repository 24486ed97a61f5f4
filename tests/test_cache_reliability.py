"""Caches never poison a run: keyed by what the model is, damaged files and rows moved aside and
rebuilt, invalid LLM replies never stored as good, and two processes writing at once lose nothing."""
from __future__ import annotations

import json
import logging
import multiprocessing
import os
import re
import sqlite3

import numpy as np
import pytest
from cache_fakes import (CREATION_RACES, fake_embedder, fake_vector, llm_rows_for, make_model_folder, texts_for,
                         write_caches)
from fake_openai_server import fake_openai  # noqa: F401  (a fixture)

from rag_lab.core import embedding
from rag_lab.core.embedding import Embedder, model_fingerprint, text_key
from rag_lab.reasoning.llm import LLMReasoner
from rag_lab.reasoning.llm_cache import CachedReply, LLMCache
from rag_lab.reasoning.prompts import PROMPTS

TEXTS = [f"Recipe {i}: basil, garlic and pine nuts." for i in range(50)]


@pytest.fixture
def model_folder(tmp_path):
    return make_model_folder(tmp_path / "model")


def expected(texts, salt="v1"):
    return np.stack([fake_vector(salt, t) for t in texts])


# --- keyed by the model's fingerprint ----------------------------------------------------------------

def test_new_weights_at_the_same_path_do_not_reuse_vectors(model_folder, tmp_path):
    first = fake_embedder(model_folder, tmp_path / "cache", salt="v1")
    assert np.array_equal(first.encode(["pesto"]), expected(["pesto"], "v1"))
    (model_folder / "model.safetensors").write_bytes(b"weights-2" * 1000)  # same path, same size, new weights
    second = fake_embedder(model_folder, tmp_path / "cache", salt="v2")
    assert np.array_equal(second.encode(["pesto"]), expected(["pesto"], "v2"))
    assert second.stats == {"encoded": 1, "cache_hits": 0}
    assert first.model_key != second.model_key and first.model_key.startswith(str(model_folder) + "#")


def test_the_fingerprint_is_hashed_once_per_folder_and_file_times(model_folder, monkeypatch):
    hashed = []
    real = embedding._file_sha256
    monkeypatch.setattr(embedding, "_file_sha256", lambda p: hashed.append(p.name) or real(p))
    (model_folder / "README.md").write_text("not part of the model", encoding="utf-8")
    a = model_fingerprint(model_folder)
    assert sorted(hashed) == ["config.json", "model.safetensors"]  # README left out
    assert model_fingerprint(model_folder) == a and len(hashed) == 2   # memoised: nothing hashed again
    os.utime(model_folder / "config.json", ns=(1, 1))                    # same bytes, new time: hashed again
    assert model_fingerprint(model_folder) == a and len(hashed) == 4
    (model_folder / "config.json").write_text('{"hidden_size": 9}', encoding="utf-8")
    assert model_fingerprint(model_folder) != a


def test_the_shipped_model_has_a_stable_key():
    key = Embedder(use_cache=False).model_key   # the backend's name follows the fingerprint, torch's excepted
    assert re.fullmatch(r"all-MiniLM-L6-v2#[0-9a-f]{16}(\+onnx(-int8\.r7)?)?", key), key
    assert Embedder(use_cache=False).model_key == key


# --- damaged embedding caches --------------------------------------------------------------------

@pytest.mark.parametrize("keep_bytes", [50, 3000])  # header cut / pages missing
def test_a_truncated_embedding_cache_is_moved_aside_and_rebuilt(model_folder, tmp_path, keep_bytes, caplog):
    cache_dir = tmp_path / "cache"
    first = fake_embedder(model_folder, cache_dir)
    first.encode(TEXTS)
    first.cache.close()
    path = cache_dir / "embeddings.sqlite"
    assert path.stat().st_size > keep_bytes
    with open(path, "r+b") as fh:
        fh.truncate(keep_bytes)
    again = fake_embedder(model_folder, cache_dir)
    with caplog.at_level(logging.WARNING):
        vectors = again.encode(TEXTS)
    assert np.array_equal(vectors, expected(TEXTS))
    aside = list(cache_dir.glob("embeddings.sqlite.corrupt-*"))
    assert len(aside) == 1 and str(path) in caplog.text and str(aside[0]) in caplog.text
    third = fake_embedder(model_folder, cache_dir)
    third.encode(TEXTS)
    assert third.stats == {"encoded": 0, "cache_hits": 50}  # rebuilt


@pytest.mark.parametrize("bad, reason", [
    ((np.ones(3) / np.sqrt(3)).astype(np.float32), "12 bytes, expected 32 bytes"),
    (np.full(8, np.nan, np.float32), "non-finite"),
    (np.ones(8, np.float32), "norm 2.8284, expected 1"),
    (b"\x00\x01\x02", "3 bytes, expected 32 bytes"),
])
def test_a_stored_vector_that_is_not_sound_is_never_returned(model_folder, tmp_path, bad, reason, caplog):
    e = fake_embedder(model_folder, tmp_path / "cache")
    e.encode(TEXTS[:2])
    blob = bad if isinstance(bad, bytes) else bad.tobytes()
    with sqlite3.connect(e.cache.path) as db:
        db.execute("UPDATE vectors SET vec=? WHERE model=? AND key=?", (blob, e.model_key, text_key(TEXTS[0])))
    fresh = fake_embedder(model_folder, tmp_path / "cache")
    with caplog.at_level(logging.WARNING):
        vectors = fresh.encode(TEXTS[:2])
    assert np.array_equal(vectors, expected(TEXTS[:2]))
    assert fresh.stats == {"encoded": 1, "cache_hits": 1}
    assert reason in caplog.text and str(e.cache.path) in caplog.text
    with sqlite3.connect(e.cache.path) as db:
        assert db.execute("SELECT tbl, key FROM rejected").fetchall() == [("vectors", text_key(TEXTS[0]))]


# --- the GraLC token cache --------------------------------------------------------------------------

class TokenEmbedder:
    """Enough of an Embedder for encode_document: one id per word, a vector per id."""

    model_id = "fake-token-model"
    max_tokens = 16

    def __init__(self, cache_dir):
        self.cache = type("VectorCache", (), {"path": cache_dir / "embeddings.sqlite"})()  # where the files go

    def tokenize_with_offsets(self, text):
        words, offsets, pos = text.split(), [], 0
        for w in words:
            start = text.index(w, pos)
            offsets.append((start, start + len(w)))
            pos = start + len(w)
        return list(range(len(words))), np.array(offsets)

    def token_embeddings_for_ids(self, ids):
        return np.stack([np.full(4, float(i), np.float32) for i in ids])


def test_a_corrupt_token_cache_file_is_moved_aside_and_recomputed(tmp_path, caplog):
    from rag_lab.methods.gralc.encoding import clear_memory_cache, encode_document

    text = "basil garlic pine nuts olive oil cheese salt"
    e = TokenEmbedder(tmp_path)
    first = encode_document(text, e, overlap=4)
    files = list((tmp_path / "token_embeddings").glob("*.npz"))
    assert len(files) == 1 and not first.cached
    files[0].write_bytes(b"PK\x03\x04 not really a zip")
    clear_memory_cache()
    with caplog.at_level(logging.WARNING):
        again = encode_document(text, e, overlap=4)
    assert not again.cached and np.array_equal(again.embeddings, first.embeddings)
    assert str(files[0]) in caplog.text
    assert len(list((tmp_path / "token_embeddings").glob("*.corrupt-*"))) == 1
    clear_memory_cache()
    assert encode_document(text, e, overlap=4).cached  # rebuilt


# --- damaged LLM caches and invalid replies ------------------------------------------------------

QUESTION = "Who was Ada Lovelace?"
GOOD = json.dumps({"entities": ["Ada Lovelace"]})


@pytest.fixture
def reasoner_for(fake_openai, tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_LAB_LLM_API_KEY", raising=False)

    def make(cache=None):
        return LLMReasoner.from_spec(f"openai-compatible:fake-model@{fake_openai.base_url}", retry_base_delay=0.01,
                                     timeout=5, cache=cache or tmp_path / "llm")
    return make


def test_a_truncated_llm_cache_is_moved_aside_and_rebuilt(tmp_path, caplog):
    cache = LLMCache(tmp_path)
    for i in range(200):
        cache.put(f"k{i}", "m", CachedReply("x" * 200, 1, 2))
    cache.close()
    with open(tmp_path / "llm.sqlite", "r+b") as fh:
        fh.truncate(5000)
    with caplog.at_level(logging.WARNING):
        again = LLMCache(tmp_path)
        assert again.get("k1") is None
        again.put("k1", "m", CachedReply("y", 1, 2))
    assert again.get("k1") == CachedReply("y", 1, 2)
    assert len(list(tmp_path.glob("llm.sqlite.corrupt-*"))) == 1 and str(tmp_path / "llm.sqlite") in caplog.text


@pytest.mark.parametrize("column, value", [("reply", None), ("reply", b"\xff\xfe"), ("prompt_tokens", "many"),
                                           ("completion_tokens", -3)])
def test_an_unreadable_llm_cache_entry_is_moved_aside_and_asked_again(fake_openai, reasoner_for, column, value,
                                                                      caplog):
    fake_openai.responder = lambda req: GOOD
    assert reasoner_for().query_entities(QUESTION) == ["Ada Lovelace"]
    first_request = fake_openai.requests[0]["messages"]
    r = reasoner_for()
    with sqlite3.connect(r.cache.path) as db:
        db.execute(f"UPDATE replies SET {column}=?", (value,))
    with caplog.at_level(logging.WARNING):
        assert r.query_entities(QUESTION) == ["Ada Lovelace"]
    assert len(fake_openai.requests) == 2 and fake_openai.requests[1]["messages"] == first_request  # asked afresh
    assert r.stats["invalid_replies"] == 0 and "unreadable" in caplog.text and str(r.cache.path) in caplog.text
    with sqlite3.connect(r.cache.path) as db:
        assert db.execute("SELECT COUNT(*) FROM rejected").fetchone()[0] == 1


def test_an_invalid_reply_is_not_cached_and_a_replay_asks_afresh(fake_openai, reasoner_for):
    fake_openai.queue("I cannot do that", GOOD)
    r = reasoner_for()
    assert r.query_entities(QUESTION) == ["Ada Lovelace"]
    assert r.stats["invalid_replies"] == 1 and len(r.cache) == 1      # only the valid retry was stored
    fake_openai.responder = lambda req: GOOD
    replay = reasoner_for()
    assert replay.query_entities(QUESTION) == ["Ada Lovelace"]
    assert len(fake_openai.requests) == 3                              # the first request went out again
    assert fake_openai.requests[2]["messages"] == fake_openai.requests[0]["messages"]
    assert replay.stats["invalid_replies"] == 0


def test_a_fallback_is_counted_logged_and_never_replayed(fake_openai, reasoner_for, caplog):
    fake_openai.queue("I cannot do that", "still no")
    r = reasoner_for()
    with caplog.at_level(logging.WARNING):
        got = r.query_entities(QUESTION)
    assert got == PROMPTS["query_entities"].fallback(query=QUESTION)
    assert r.stats["fallbacks"] == 1 and r.usage.total().llm_fallbacks == 1 and "fallback" in caplog.text
    assert len(r.cache) == 0
    fake_openai.responder = lambda req: GOOD                          # the model answers properly now
    replay = reasoner_for()
    assert replay.query_entities(QUESTION) == ["Ada Lovelace"]
    assert replay.stats["fallbacks"] == 0 and len(fake_openai.requests) == 3


def test_a_cached_reply_that_fails_validation_is_dropped_not_replayed(fake_openai, reasoner_for, caplog):
    """A cache written before replies were validated may hold an invalid one: it is removed and asked again."""
    fake_openai.responder = lambda req: GOOD
    r = reasoner_for()
    r.query_entities(QUESTION)
    with sqlite3.connect(r.cache.path) as db:
        db.execute("UPDATE replies SET reply='I cannot do that'")
    replay = reasoner_for()
    with caplog.at_level(logging.WARNING):
        assert replay.query_entities(QUESTION) == ["Ada Lovelace"]
    assert replay.stats["invalid_replies"] == 0 and len(fake_openai.requests) == 2
    assert fake_openai.requests[1]["messages"] == fake_openai.requests[0]["messages"]
    assert "fails validation" in caplog.text


# --- two processes writing one embedding cache and one LLM cache at once ----------------------------

def test_two_processes_writing_the_same_caches_lose_and_corrupt_nothing(model_folder, tmp_path):
    cache_dir = tmp_path / "cache"
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    workers = [ctx.Process(target=write_caches, args=(i, str(model_folder), str(cache_dir), barrier)) for i in (0, 1)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
    assert [w.exitcode for w in workers] == [0, 0]
    reader = fake_embedder(model_folder, cache_dir)
    texts = sorted(set(texts_for(0)) | set(texts_for(1)))
    assert np.array_equal(reader.encode(texts), expected(texts)) and reader.stats["encoded"] == 0
    llm = LLMCache(cache_dir)
    rows = dict(llm_rows_for(0)) | dict(llm_rows_for(1))
    assert len(llm) == len(rows) == 600
    assert all(llm.get(k) == CachedReply(v, 3, 4) for k, v in rows.items())
    assert not list(cache_dir.rglob("*.corrupt-*"))
    for race in range(CREATION_RACES):  # both workers' rows in every cache they created at once
        folder = cache_dir / f"race{race}"
        check = fake_embedder(model_folder, folder)
        check.encode(["race text 0", "race text 1"])
        assert check.stats["encoded"] == 0
        assert LLMCache(folder).get("race-0") and LLMCache(folder).get("race-1")
    with sqlite3.connect(cache_dir / "embeddings.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 600
        assert db.execute("SELECT COUNT(*) FROM rejected").fetchone()[0] == 0


def test_a_job_outside_the_prompts_module_retries_afresh_and_caches_only_valid_replies(fake_openai, reasoner_for):
    """SSG's question writing used to store every reply and retry with the same messages, so with a
    cache its retry replayed the invalid reply it was retrying."""
    schema = {"type": "object", "required": ["question"], "properties": {"question": {"type": "string"}}}
    messages = [{"role": "user", "content": "Write one question about pesto."}]
    fake_openai.queue("no", '{"question": "Where does pesto come from?"}')
    r = reasoner_for()
    assert r.complete_json("question", messages, schema) == {"question": "Where does pesto come from?"}
    assert len(r.cache) == 1 and r.usage.per_job["question"].llm_calls == 2
    fake_openai.queue("no", "still no")
    assert r.complete_json("question", [{"role": "user", "content": "Another?"}], schema) is None
    assert r.stats["fallbacks"] == 1 and len(r.cache) == 1
