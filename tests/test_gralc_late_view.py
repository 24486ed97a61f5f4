"""rag_lab.methods.gralc.late_view on three sentences with a stand-in encoder whose vector for the
token at position j of whatever it reads is (1, j): read alone, a sentence of L tokens averages to
(1, (L-1)/2); pooled late from the whole text, to (1, mean of its positions in the text). Every
cosine, rank and neighbour below is worked out by hand. The real MiniLM tokenizer cuts the text
(word pieces listed); no model is loaded."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rag_lab.core.embedding import Embedder
from rag_lab.core.types import Document
from rag_lab.methods.gralc import late_view as lv
from rag_lab.methods.gralc.encoding import clear_memory_cache

TEXT = "Pesto comes from Genoa. Risotto alla milanese uses saffron. It is yellow."
# word pieces: 0-5 "pest ##o comes from genoa ." | 6-16 "ri ##so ##tto alla milan ##ese uses sa ##ff ##ron ." |
# 17-20 "it is yellow ."
SPANS = [(0, 23), (24, 59), (60, 73)]
QUERY = "Genoa"       # one word piece: (1, 0)


class PositionEncoder(Embedder):
    def __init__(self):
        super().__init__(use_cache=False)

    @property
    def max_tokens(self) -> int:
        return 256

    def token_embeddings_for_ids(self, ids):
        return np.array([[1.0, float(j)] for j in range(len(ids))], dtype=np.float32)

    def encode(self, texts, show_progress=None):
        return np.stack([self.token_embeddings_for_ids(self.tokenize_with_offsets(t)[0]).mean(axis=0) for t in texts])


def cos(a, b) -> float:
    return (1 + a * b) / math.sqrt((1 + a * a) * (1 + b * b))


@pytest.fixture()
def view():
    clear_memory_cache()
    yield lv.late_view(Document("d", TEXT), QUERY, PositionEncoder(), spans=SPANS, k=1)
    clear_memory_cache()   # the stand-in's token vectors must not stay in the shared in-process cache


def test_alone_and_late_cosines_to_the_query(view):
    # alone: (1, 2.5), (1, 5), (1, 1.5); late: (1, 2.5), (1, 11), (1, 18.5); the query is (1, 0)
    t = view.spans
    assert t["cos_query_alone"].tolist() == pytest.approx([cos(2.5, 0), cos(5, 0), cos(1.5, 0)])
    assert t["cos_query_late"].tolist() == pytest.approx([cos(2.5, 0), cos(11, 0), cos(18.5, 0)])
    assert t["rank_alone"].tolist() == [2, 3, 1] and t["rank_late"].tolist() == [1, 2, 3]
    assert t["text"].tolist() == [TEXT[s:e] for s, e in SPANS]


def test_the_focus_is_the_sentence_that_moves_most_and_its_neighbour_changes(view):
    assert view.focus == 2                 # rank 1 alone -> 3 late; the others move by one
    row = view.neighbours.loc[1]
    assert row["alone: span"] == 0 and row["alone: cosine"] == pytest.approx(cos(1.5, 2.5))
    assert row["late: span"] == 1 and row["late: cosine"] == pytest.approx(cos(18.5, 11))
    assert view.spans["cos_focus_late"].tolist() == pytest.approx([cos(18.5, 2.5), cos(18.5, 11), 1.0])
    # pairs alone: (2.5, 5), (2.5, 1.5), (5, 1.5); late: (2.5, 11), (2.5, 18.5), (11, 18.5)
    assert view.pairwise_median["alone"] == pytest.approx(float(np.median([cos(2.5, 5), cos(2.5, 1.5), cos(5, 1.5)])))
    assert view.pairwise_median["late"] == pytest.approx(float(np.median([cos(2.5, 11), cos(2.5, 18.5), cos(11, 18.5)])))


def test_the_sentence_quotes_the_view(view):
    text = view.sentence
    assert text.startswith("Sentence 2 of d ranks 1 of 3 for the query embedded alone (cosine 0.55) and 3 pooled late (0.05).")
    assert "alone: [0]; late: [1] (0 shared; 1 of the late ones within 1 sentences of it)" in text


def test_pooling_ranks_and_bad_input():
    offsets = np.array([[0, 2], [3, 5], [6, 8]])
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 3.0]])
    # span (3, 8) holds tokens 1 and 2: mean (0, 2) -> unit (0, 1)
    assert lv.pooled_spans(vectors, offsets, [(0, 2), (3, 8)]).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="holds no token"):
        lv.pooled_spans(vectors, offsets, [(2, 3)])
    assert lv.ranks(np.array([0.2, 0.9, 0.2])).tolist() == [2, 1, 3]
    with pytest.raises(ValueError, match="more than k"):
        lv.late_view(Document("d", TEXT), QUERY, PositionEncoder(), spans=SPANS, k=3)
    with pytest.raises(ValueError, match="focus"):
        lv.late_view(Document("d", TEXT), QUERY, PositionEncoder(), spans=SPANS, k=1, focus=5)
    clear_memory_cache()
