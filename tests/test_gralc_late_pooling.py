"""Late-chunk pooling on a short text with hand-picked token spans: each chunk's vector is the mean
of exactly its tokens' vectors, and its character span is exactly its tokens' characters.

The text is tokenised by the real MiniLM tokenizer (word pieces written out below); the token
vectors come from a stand-in encoder whose vector for the token at position j is (j, 1), so every
mean is worked out by hand. No model is loaded."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluation import harness
from rag_lab.core.embedding import Embedder
from rag_lab.core.types import Document
from rag_lab.methods.gralc.encoding import token_span_to_chars
from rag_lab.methods.gralc.method import LateChunks

TEXT = "Pesto comes from Genoa. Risotto alla milanese uses saffron."
# MiniLM word pieces and their character offsets (uncased WordPiece):
#   0 pest (0,4)  1 ##o (4,5)  2 comes (6,11)  3 from (12,16)  4 genoa (17,22)  5 . (22,23)
#   6 ri (24,26)  7 ##so (26,28)  8 ##tto (28,31)  9 alla (32,36)  10 milan (37,42)  11 ##ese (42,45)
#   12 uses (46,50)  13 sa (51,53)  14 ##ff (53,55)  15 ##ron (55,58)  16 . (58,59)
N_TOKENS = 17


class PositionEncoder(Embedder):
    """The real tokenizer; the contextual vector of the token at position j is (j, 1)."""

    def __init__(self):
        super().__init__(use_cache=False)
        self.windows: list[list[int]] = []

    @property
    def max_tokens(self) -> int:
        return 256          # MiniLM's limit, without loading the model to ask it

    def token_embeddings_for_ids(self, ids):
        self.windows.append(list(ids))
        return np.array([[float(j), 1.0] for j in range(len(ids))], dtype=np.float32)


class HandCut(LateChunks):
    """Late chunking with boundaries picked by hand instead of sentence starts."""

    def __init__(self, cuts, **kw):
        super().__init__(**kw)
        self.cuts = cuts

    def boundaries(self, doc, enc, embeddings):
        return list(self.cuts)


@pytest.fixture(scope="module")
def encoder():
    return PositionEncoder()


def chunks_for(cuts, encoder):
    r = HandCut(cuts, embedder=encoder, cache_tokens=False)
    return r, r.document_chunks(Document("d", TEXT))


def test_the_tokens_are_the_ones_written_out(encoder):
    ids, offsets = encoder.tokenize_with_offsets(TEXT)
    assert len(ids) == N_TOKENS
    assert encoder.tokenizer.convert_ids_to_tokens(ids[6:9]) == ["ri", "##so", "##tto"]
    assert offsets[[0, 5, 6, 12, 16]].tolist() == [[0, 4], [22, 23], [24, 26], [46, 50], [58, 59]]


def test_each_sentence_chunk_is_the_mean_of_its_tokens(encoder):
    # cut at token 6: tokens 0..5 pool to ((0+1+...+5)/6, 1) = (2.5, 1); tokens 6..16 to ((6+...+16)/11, 1) = (11, 1)
    _, parts = chunks_for([6], encoder)
    assert [(s, e) for s, e, _ in parts] == [(0, 23), (24, 59)]
    assert [TEXT[s:e] for s, e, _ in parts] == ["Pesto comes from Genoa.", "Risotto alla milanese uses saffron."]
    assert parts[0][2].tolist() == pytest.approx([2.5, 1.0]) and parts[1][2].tolist() == pytest.approx([11.0, 1.0])


def test_a_span_inside_a_word_maps_to_its_word_pieces_characters(encoder):
    # cuts 7 and 12: tokens 7..11 (##so ##tto alla milan ##ese) are chars 26..45 "sotto alla milanese",
    # pooled to ((7+8+9+10+11)/5, 1) = (9, 1); the chunks before and after are tokens 0..6 and 12..16
    _, parts = chunks_for([7, 12], encoder)
    assert [TEXT[s:e] for s, e, _ in parts] == ["Pesto comes from Genoa. Ri", "sotto alla milanese",
                                                "uses saffron."]
    assert [v.tolist() for _, _, v in parts] == [pytest.approx([3.0, 1.0]), pytest.approx([9.0, 1.0]),
                                                 pytest.approx([14.0, 1.0])]


def test_a_chunk_span_re_tokenises_to_exactly_its_tokens(encoder):
    ids, offsets = encoder.tokenize_with_offsets(TEXT)
    for a, b in [(0, 6), (6, 17), (2, 5), (9, 13)]:       # spans that start and end on whole words
        s, e = token_span_to_chars(offsets, a, b)
        assert encoder.tokenize_with_offsets(TEXT[s:e])[0] == ids[a:b], (a, b, TEXT[s:e])
    assert token_span_to_chars(offsets, 16, 17) == (58, 59)     # the last token alone: the final full stop


def test_built_chunks_carry_the_spans_and_the_normalised_means(encoder):
    r, _ = chunks_for([6], encoder)
    harness.build(r, [Document("d", TEXT)], reuse=False)
    assert [(c.start, c.end, c.text) for c in r.chunks] == [(0, 23, "Pesto comes from Genoa."),
                                                             (24, 59, "Risotto alla milanese uses saffron.")]
    # (2.5, 1) / |(2.5, 1)| and (11, 1) / |(11, 1)|
    assert r.vectors[0].tolist() == pytest.approx((np.array([2.5, 1.0]) / np.hypot(2.5, 1.0)).tolist(), abs=1e-6)
    assert r.vectors[1].tolist() == pytest.approx((np.array([11.0, 1.0]) / np.hypot(11.0, 1.0)).tolist(), abs=1e-6)
    assert encoder.windows[-1] == encoder.tokenize_with_offsets(TEXT)[0]   # the whole text in one window
