"""GraLC-RAG full-document encoding: sliding windows with linear distance weights."""
import numpy as np
import pytest

from rag_lab.methods.gralc.encoding import char_span_to_tokens, encode_document, sliding_token_embeddings, \
    window_starts, window_weights


def test_window_layout_and_weights():
    # 10 tokens, windows of 4 overlapping by 2: starts 0, 2, 4 and the last aligned to the end, 6
    assert window_starts(10, 4, 2) == [0, 2, 4, 6]
    assert window_starts(4, 4, 2) == [0]
    assert window_weights(4).tolist() == [1, 2, 2, 1]
    with pytest.raises(ValueError, match="overlap"):
        window_starts(10, 4, 4)


def test_weighted_average_by_hand():
    # Every window returns its start id on every row, so a token's value is the weighted mean of the
    # starts of the windows holding it. Weights by position in a window of 4: 1, 2, 2, 1.
    #   token 0: window 0 only -> 0;  token 2: (0*2 + 2*1)/3 = 2/3;  token 3: (0*1 + 2*2)/3 = 4/3
    #   token 6: (4*2 + 6*1)/3 = 14/3; token 7: (4*1 + 6*2)/3 = 16/3; token 9: window 6 only -> 6
    out, n = sliding_token_embeddings(list(range(10)), lambda ids: np.full((len(ids), 1), ids[0]), 4, 2)
    assert n == 4
    assert out[[0, 2, 3, 6, 7, 9], 0] == pytest.approx([0, 2 / 3, 4 / 3, 14 / 3, 16 / 3, 6])


def test_sliding_equals_single_pass_when_the_document_fits(embedder):
    text = "Empagliflozin slowed the decline of eGFR in adults with chronic kidney disease."
    ids, _ = embedder.tokenize_with_offsets(text)
    single = embedder.token_embeddings_for_ids(ids)
    slid, windows = sliding_token_embeddings(ids, embedder.token_embeddings_for_ids, embedder.max_tokens - 2, 64)
    assert windows == 1 and np.array_equal(slid, single)
    enc = encode_document(text, embedder, overlap=64, use_cache=False)
    assert np.array_equal(enc.embeddings, single) and enc.tokens_encoded == len(ids)


def test_long_document_is_covered_by_overlapping_windows(embedder):
    text = " ".join(f"Sentence {i} mentions kidney function and blood pressure." for i in range(60))
    enc = encode_document(text, embedder, overlap=32, window=100, use_cache=True)
    n = len(enc)
    assert n > 100 and enc.embeddings.shape == (n, embedder.dim)
    assert enc.windows == len(window_starts(n, 100, 32))
    # the first 68 tokens are seen by the first window only: identical to encoding that window alone
    first = embedder.token_embeddings_for_ids(enc.ids[:100])
    assert np.allclose(enc.embeddings[:68], first[:68], atol=1e-5)
    again = encode_document(text, embedder, overlap=32, window=100, use_cache=True)
    assert again.cached and np.array_equal(again.embeddings, enc.embeddings)


def test_char_span_to_tokens():
    offsets = np.array([[0, 3], [4, 7], [7, 9], [10, 14]])
    assert char_span_to_tokens(offsets, 4, 9) == (1, 3)
    assert char_span_to_tokens(offsets, 5, 11) == (1, 4)
