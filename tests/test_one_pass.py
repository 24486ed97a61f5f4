"""Each distinct text is split, counted and embedded once per process, whichever method, k or answer
meets it again (issue 53), and what is remembered equals what is computed afresh."""
from __future__ import annotations

import numpy as np

from rag_lab.core import chunking
from rag_lab.core.embedding import Embedder
from rag_lab.reasoning.offline import OfflineReasoner


class CountingModel:
    """A stand-in encoder: a text's vector is fixed by its length; counts the texts it is given."""

    max_seq_length = 256
    tokenizer = None

    def __init__(self):
        self.texts: list[str] = []

    def encode(self, texts, **kwargs):
        self.texts += texts
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % 4] = 1.0
        return out

    def get_embedding_dimension(self):
        return 4


def counting_embedder(tmp_path) -> tuple[Embedder, CountingModel, list[str]]:
    embedder = Embedder(cache_dir=tmp_path)
    model, tokenized = CountingModel(), []
    embedder._model = model
    embedder._tokenizer = lambda texts, **kw: tokenized.extend(texts) or {"input_ids": [t.split() for t in texts]}
    return embedder, model, tokenized


def test_two_methods_at_two_ks_split_count_and_embed_each_text_once(tmp_path, monkeypatch):
    embedder, model, tokenized = counting_embedder(tmp_path)
    reasoner = OfflineReasoner(embedder=embedder, cache=False)
    nlp, split = chunking._sentencizer(), []
    monkeypatch.setattr(chunking, "_sentencizer", lambda: lambda text: split.append(text) or nlp(text))
    chunking.sentence_spans.cache_clear()
    a, b, c = "Alpha is first. Beta is second.", "Gamma is third.", "Delta is fourth. Alpha is first."
    method_one = {5: [a, b, c], 10: [a, b, c]}     # the same chunks at k 5 and 10
    method_two = {5: [c, a], 10: [c, a, b]}         # another method meeting them in another order
    answers = [reasoner.answer("Which is first?", contexts, max_words=4)
               for by_k in (method_one, method_two) for contexts in by_k.values()]
    assert sorted(split) == sorted([a, b, c])       # three distinct chunk texts (one paragraph each), split once
    # embedded and counted once each: the question and the four distinct sentences ("Alpha is first." is in a and c)
    distinct = ["Which is first?", "Alpha is first.", "Beta is second.", "Gamma is third.", "Delta is fourth."]
    assert sorted(model.texts) == sorted(tokenized) == sorted(distinct)
    # by hand: vectors are one-hot at len % 4, so the question (15 characters) scores 1 with every 15-character
    # sentence and 0 with "Delta is fourth." (16); 4 words fit one 3-word sentence: the first scoring 1, Alpha
    assert answers == ["Alpha is first."] * 4
    chunking.sentence_spans.cache_clear()      # the patched sentencizer's splits must not outlive the test


def test_remembered_vectors_and_counts_equal_fresh_ones(tmp_path):
    embedder, model, tokenized = counting_embedder(tmp_path)
    texts = ["one two", "three", "one two"]
    first, again = embedder.encode(texts), embedder.encode(texts[::-1])
    assert np.array_equal(first, again[::-1]) and model.texts == ["one two", "three"]
    assert embedder.count_tokens(texts) == embedder.count_tokens(texts) == 5 and tokenized == ["one two", "three"]
    first[0, :] = 7.0                      # a caller writing into its result does not change what is remembered
    assert np.array_equal(embedder.encode(["one two"])[0], again[2])


def test_memory_is_bounded_and_off_without_a_cache(tmp_path, monkeypatch):
    embedder, model, _ = counting_embedder(tmp_path)
    monkeypatch.setattr(Embedder, "REMEMBERED", 2)
    embedder.encode(["a", "bb", "ccc"])
    assert list(embedder._vectors) == ["bb", "ccc"]          # the oldest dropped first
    embedder.encode(["a"])                                    # dropped from memory, still in the SQLite cache
    assert model.texts == ["a", "bb", "ccc"]
    uncached = Embedder(use_cache=False)
    uncached._model, uncached._tokenizer = model, embedder._tokenizer
    uncached.encode(["a", "a"]), uncached.encode(["a"])
    assert model.texts[3:] == ["a", "a"] and not uncached._vectors   # once per call, nothing kept
