"""Notebook 00's calls on chunkings (compare.chunkings), on hand-made chunks, vectors and scores: no model is
loaded. The chunk table's numbers, the similarity sentence's means and the decided pair's sentences are
worked out by hand."""
import numpy as np
import pandas as pd
import pytest

from rag_lab.compare.chunkings import chunk_similarity, chunk_table, semantic_against_naive
from rag_lab.core.types import Chunk, Dataset, Document, Question


class Words:
    """An embedder stand-in: a word is a word piece; each chunk's vector is fixed by its first word."""

    max_tokens = 5                      # two special tokens: a chunk of more than 3 words is cut
    model_id = "words"
    VECTORS = {"a": [1.0, 0.0], "b": [0.6, 0.8], "c": [0.0, 1.0]}

    def count_tokens(self, text):
        return len(text.split())

    def encode(self, texts):
        return np.array([self.VECTORS[t.split()[0]] for t in texts])


def chunk(cid, doc, text):
    return Chunk(cid, doc, text, 0, len(text))


def test_chunk_table_counts_and_sizes_each_chunking_and_saves_it(tmp_path):
    chunkings = {"fixed": [chunk("f1", "d", "a b"), chunk("f2", "d", "a b c d")], "one": [chunk("o1", "d", "a")]}
    shown = chunk_table(chunkings, Words(), tmp_path)
    # by hand: fixed has 2 chunks of 2 and 4 words (mean 3), one over the 3 the encoder reads; one has 1 of 1 word
    assert shown.loc["fixed"].tolist() == ["2", "3", "2", "4", "1"] and shown.loc["one"].tolist() == ["1", "1", "1", "1", "0"]
    assert list(shown.columns) == ["chunks", "mean_tokens", "min_tokens", "max_tokens", "over_model_limit"]
    saved = (tmp_path / "chunk_stats.md").read_text(encoding="utf-8")
    assert saved.startswith("Chunk counts and sizes (MiniLM word pieces; index built without a reasoner, answers by: none)")


def test_chunk_similarity_draws_the_pairs_and_says_inside_against_across():
    chunks = [chunk("x1", "x", "a"), chunk("x2", "x", "b"), chunk("y1", "y", "c")]
    figure, said = chunk_similarity(chunks, Words(), "t")
    # by hand: inside x, a·b = 0.6 (one pair); across, a·c = 0 and b·c = 0.8: mean 0.4 over two pairs
    assert np.allclose(figure.data[0].z, [[1, 0.6, 0], [0.6, 1, 0.8], [0, 0.8, 1]])
    assert said == ("Mean cosine of two chunks of one document (inside the white squares): 0.600 over 1 pairs; of two "
                    "chunks from different documents: 0.400 over 2 pairs; difference +0.200.")


def test_semantic_against_naive_says_the_means_the_family_and_the_cut():
    data = Dataset("toy", [Document("d1", "one"), Document("d2", "two")],
                   [Question("q1", "?", gold_doc_ids=["d1"]), Question("q2", "?", gold_doc_ids=["d2"])])
    rows = [(m, q, metric, k, v) for m, q, metric, k, v in (
        ("naive", "q1", "ctx_recall", 5, 1.0), ("naive", "q2", "ctx_recall", 5, 0.0),
        ("semantic", "q1", "ctx_recall", 5, 1.0), ("semantic", "q2", "ctx_recall", 5, 1.0),
        ("naive", "q1", "token_f1", 5, 0.5), ("naive", "q2", "token_f1", 5, 0.5),
        ("semantic", "q1", "token_f1", 5, 0.25), ("semantic", "q2", "token_f1", 5, 0.75))]
    decided = pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])
    semantic = type("Built", (), {"chunks": [chunk("s1", "d1", "a b c d"), chunk("s2", "d2", "a")]})()
    lines = semantic_against_naive(decided, data, semantic, Words(), 5, 5)
    # by hand: naive's mean recall (1 + 0) / 2 = 0.5, semantic's 1.0; two questions from two documents decide nothing;
    # one of semantic's two chunks is longer than the 3 words the encoder reads
    assert lines[0].startswith("toy: Every interval below")
    assert lines[1].startswith("toy: context recall@5, mean [95% interval] over 2 questions: naive 0.500 [")
    assert ", semantic 1.000 [" in lines[1]
    assert lines[2].startswith("Paired, question by question: 2 comparisons cannot be decided")
    assert lines[3].startswith("Why semantic chunks are at a disadvantage here — semantic: 1 of 2 chunks")
    with pytest.raises(ValueError, match="no rows of semantic"):
        semantic_against_naive(decided[decided["method"] == "naive"], data, semantic, Words(), 5, 5)
