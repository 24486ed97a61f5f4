"""rag_lab.compare.benchmarking, the measurements behind benchmarks/run.py: what ``time_index``
records and returns for a cold build, what ``pure_encoder_seconds`` sends to the model, and the
copies ``distinct_copies`` makes. Small inputs, expected values worked out by hand; timings are
checked only from below (never against a wall-clock limit)."""
from __future__ import annotations

import time

import numpy as np
import pytest

from rag_lab.compare import benchmarking
from rag_lab.compare.benchmarking import corpus_pass_seconds, distinct_copies, distinct_text, pure_encoder_seconds, time_index
from rag_lab.core.embedding import Embedder
from rag_lab.core.types import Document

# twelve words, each one MiniLM word piece
TWELVE = "red green blue one two three cats dogs birds north south east"


class SlowModel:
    """Stands in for the encoder: remembers its calls and takes at least 0.05 s for each."""

    max_seq_length = 256

    def __init__(self):
        self.encoded: list[list[str]] = []
        self.windows: list[list[int]] = []

    def encode(self, texts, batch_size, normalize_embeddings, convert_to_numpy, show_progress_bar):
        assert normalize_embeddings and convert_to_numpy and batch_size == 7
        self.encoded.append(list(texts))
        time.sleep(0.05)
        return np.ones((len(texts), 2), np.float32)

    def token_embeddings(self, ids):
        self.windows.append(list(ids))
        time.sleep(0.05)
        return np.ones((len(ids), 2), np.float32)


def test_pure_encoder_seconds_runs_each_distinct_text_once_and_every_window():
    embedder = Embedder(use_cache=False, batch_size=7)
    embedder._model = SlowModel()
    embedder._tokenizer = type("Tok", (), {"cls_token_id": 101, "sep_token_id": 102})()
    seconds = pure_encoder_seconds(embedder, ["b", "a", "b"], [[5, 6], [7]])
    # one encode call with the distinct texts in first-seen order; each window framed by CLS and SEP
    assert embedder.model.encoded == [["b", "a"]]
    assert embedder.model.windows == [[101, 5, 6, 102], [101, 7, 102]]
    assert seconds >= 3 * 0.05                                  # the three model calls are inside the timing
    assert pure_encoder_seconds(embedder, [], []) < 0.05 and embedder.model.encoded == [["b", "a"]]


def test_time_index_builds_cold_and_counts_what_the_method_encoded(embedder, tmp_path):
    from rag_lab.methods import get_retriever

    # naive windows of 6 word pieces overlapping by 2 over 12: starts 0, 4, 8 -> 6 + 6 + 4 = 16 tokens encoded
    docs = [Document("d", TWELVE)]
    made = []

    def make(rec):
        made.append(rec)
        return get_retriever("naive", embedder=rec, size=6, overlap=2)

    out = time_index(make, docs, embedder, tmp_path / "cold")
    (rec,) = made
    assert [c.text for c in out["retriever"].chunks] == ["red green blue one two three", "two three cats dogs birds north",
                                                        "birds north south east"]
    assert out["chunks"] == 3 and out["tokens"] == 16
    assert rec.recorded_texts == [c.text for c in out["retriever"].chunks] and rec.recorded_windows == []
    assert rec.stats["encoded"] == 3 and rec.stats["cache_hits"] == 0     # an empty cache: every chunk encoded
    assert rec.model is embedder.model                                    # the weights were not loaded again
    assert out["index_seconds"] > 0 and out["encoder_seconds"] > 0
    assert out["ratio"] == pytest.approx(out["index_seconds"] / out["encoder_seconds"])


def test_time_index_records_the_token_windows_of_late_chunking(embedder, tmp_path):
    from rag_lab.methods import get_retriever

    docs = [Document("d", TWELVE + ". " + TWELVE + ".")]
    ids, _ = embedder.tokenize_with_offsets(docs[0].text)
    made = []
    out = time_index(lambda rec: made.append(rec) or get_retriever("gralc-late", embedder=rec), docs, embedder,
                     tmp_path / "cold")
    # a 26-piece document fits one window: late chunking sends exactly its ids once, and no text
    assert made[0].recorded_windows == [ids] and len(ids) == 26
    assert out["tokens"] == 26 + embedder.count_tokens(list(dict.fromkeys(made[0].recorded_texts)))


def test_distinct_copies_flip_the_last_letter_of_words_by_the_bits_of_the_copy(embedder):
    doc = Document("d", "Pesto from Genoa uses basil.", "t")
    copies = distinct_copies([doc], 3)
    # 3 copies of 1 article: copy numbers 0, 1, 2 need 2 bits; words of 4+ letters are numbered
    # 0 Pesto, 1 from, 2 Genoa, 3 uses, 4 basil; copy c flips word w when bit (w mod 2) of c is set:
    #   c = 1 (01): words 0, 2, 4        c = 2 (10): words 1, 3
    assert [c.id for c in copies] == ["d", "d~1", "d~2"]
    assert [c.text for c in copies] == ["Pesto from Genoa uses basil.", "PestO from GenoA uses basiL.",
                                        "Pesto froM Genoa useS basil."]
    # the uncased tokenizer sees the original: the same word pieces at the same offsets
    ids, offsets = embedder.tokenize_with_offsets(doc.text)
    for c in copies[1:]:
        c_ids, c_offsets = embedder.tokenize_with_offsets(c.text)
        assert c_ids == ids and np.array_equal(c_offsets, offsets)


def test_distinct_copies_cycle_through_the_articles_and_refuse_bad_input():
    docs = [Document("a", "Alpha beta."), Document("b", "Gamma delta.")]
    out = distinct_copies(docs, 5)
    # article i % 2, copy i // 2; copies 0..2 need 2 bits: copy 1 flips word 0, copy 2 flips word 1
    assert [(d.id, d.text) for d in out] == [("a", "Alpha beta."), ("b", "Gamma delta."), ("a~1", "AlphA beta."),
                                             ("b~1", "GammA delta."), ("a~2", "Alpha betA.")]
    with pytest.raises(ValueError, match="n >= 1"):
        distinct_copies(docs, 0)
    with pytest.raises(ValueError, match="needs documents"):
        distinct_copies([], 2)


def test_one_corpus_pass_cuts_each_document_at_sentence_ends_within_the_window(embedder, monkeypatch):
    sent: list = []
    monkeypatch.setattr(benchmarking, "pure_encoder_seconds", lambda e, texts, windows: sent.append((texts, windows)) or 1.5)
    monkeypatch.setattr(Embedder, "max_tokens", property(lambda self: 10))     # a window of 8 word pieces
    docs = [Document("a", "red green blue. one two three. cats dogs birds."), Document("b", "north south east.")]
    # each sentence is 4 word pieces (3 words and the full stop): 4 + 4 fit in 8, a third does not
    assert corpus_pass_seconds(embedder, docs) == 1.5
    assert sent == [(["red green blue. one two three.", "cats dogs birds.", "north south east."], [])]


def test_distinct_text_leaves_copy_zero_alone():
    assert distinct_text("Pesto from Genoa.", 0, 2) == "Pesto from Genoa."
    assert distinct_text("Pesto from Genoa.", 1, 2) == "PestO from GenoA."
