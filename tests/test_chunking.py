import pytest

from rag_lab.core.chunking import (chunk_documents, fixed_token_spans, locate, recursive_token_chunks, sentence_spans,
                              sentence_window_spans)
from rag_lab.core.types import Document

TEXT = ("Risotto alla milanese is a dish from Lombardy.  Saffron gives it a golden colour!\n"
        "Carnaroli rice holds its shape. Is butter added at the end? Yes, during mantecatura.\n\n"
        "Pesto comes from Genoa. It needs basil, pine nuts and pecorino.")


@pytest.mark.parametrize("name, params", [
    ("fixed", {"size": 12, "overlap": 3}), ("recursive", {"chunk_size": 20, "chunk_overlap": 5}),
    ("semantic", {"threshold": 50}), ("window", {"size": 3, "stride": 1})])
def test_every_chunk_is_an_exact_span(embedder, name, params):
    doc = Document("d", TEXT)
    chunks = chunk_documents([doc], name, embedder, **params)
    assert chunks
    for c in chunks:
        assert c.text == TEXT[c.start:c.end] and c.doc_id == "d" and c.text.strip() == c.text


def test_fixed_windows_by_hand(embedder):
    # 10 word pieces: "a b c d e f g h i j" -> size 4, overlap 1 -> step 3: tokens 0-3, 3-6, 6-9 (last reaches the end)
    text = "a b c d e f g h i j"
    assert fixed_token_spans(text, embedder, 4, 1) == [(0, 7), (6, 13), (12, 19)]
    with pytest.raises(ValueError, match="overlap must be in"):
        fixed_token_spans(text, embedder, 4, 4)


def test_recursive_split_respects_100_16(embedder):
    # 300 two-token words ("w" + "##3") repeating every 10 words: pieces of at most 100 tokens,
    # overlapping by at most 16 tokens, located at their true place despite the repetition.
    words = [f"w{i % 10}" for i in range(300)]
    text = " ".join(words)
    chunks = recursive_token_chunks(Document("d", text), embedder)
    assert all(embedder.count_tokens(c.text) <= 100 for c in chunks)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for a, b in zip(chunks, chunks[1:]):
        assert b.start <= a.end  # consecutive pieces touch or overlap
        assert embedder.count_tokens(text[b.start:a.end]) <= 16


def test_remembered_token_length_splits_as_langchains_own(embedder, tmp_path):
    # the splitter with the embedder's remembered token count gives exactly the pieces LangChain's
    # from_huggingface_tokenizer gives (same length, the tokenizer asked once per distinct text)
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from rag_lab.core.embedding import Embedder
    from rag_lab.datasets import load_dataset

    text = load_dataset("italian_cuisine").documents[0].text
    theirs = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(embedder.tokenizer, chunk_size=100, chunk_overlap=16)
    fresh = Embedder(cache_dir=tmp_path)
    tokenized, calls = [], []
    fresh._tokenizer = lambda texts, **kw: tokenized.extend(texts) or embedder.tokenizer(texts, **kw)
    counted = lambda t: calls.append(t) or fresh.count_tokens(t)   # noqa: E731
    ours = RecursiveCharacterTextSplitter(length_function=counted, chunk_size=100, chunk_overlap=16)
    assert ours.split_text(text) == theirs.split_text(text)
    assert sorted(tokenized) == sorted(set(calls)) and len(tokenized) < len(calls)   # each distinct text once


def test_sentences_and_windows_by_hand():
    text = "One. Two two.\n\nThree three three. Four."
    assert [text[s:e] for s, e in sentence_spans(text)] == ["One.", "Two two.", "Three three three.", "Four."]
    windows = sentence_window_spans(text, size=3, stride=1)
    assert [idx for _, idx in windows] == [[0, 1, 2], [1, 2, 3]]
    assert [idx for _, idx in sentence_window_spans(text, size=2, stride=2)] == [[0, 1], [2, 3]]
    assert [idx for _, idx in sentence_window_spans("Only one.", size=3)] == [[0]]


def test_locate_tolerates_whitespace_only():
    assert locate("a  b\nc d", "b c", 0) == (3, 6)
    with pytest.raises(ValueError, match="not found"):
        locate("abc", "abd")


def test_section_ids_follow_the_innermost_section(embedder):
    from rag_lab.core.types import Section

    cut = TEXT.index("Pesto")
    doc = Document("d", TEXT, sections=[Section("s1", "A", "section", 0, cut), Section("s1p", "", "paragraph", 0, 50),
                                        Section("s2", "B", "section", cut, len(TEXT))])
    chunks = chunk_documents([doc], "window", size=1, stride=1)
    assert chunks[0].section_id == "s1p" and chunks[-1].section_id == "s2"


def test_semantic_chunker_notes_a_gap_within_noise_of_its_breakpoint_threshold():
    from rag_lab.core import ties
    from rag_lab.core.chunking import _noted_semantic_chunker

    class NoEmbeddings:                      # the threshold needs no vectors, only the distances
        pass

    chunker = _noted_semantic_chunker()(NoEmbeddings(), breakpoint_threshold_type="percentile",
                                        breakpoint_threshold_amount=50)
    # the median of [0, 0.5, 0.5 + 2e-6, 1] is 0.5 + 1e-6: the two middle gaps lie 1e-6 either side of it
    with ties.collecting() as found:
        threshold, _ = chunker._calculate_breakpoint_threshold([0.0, 0.5, 0.5 + 2e-6, 1.0])
    assert threshold == pytest.approx(0.5 + 1e-6)
    assert [(t.first, round(t.gap, 8)) for t in found] == [("sentence gap 1", -1e-6), ("sentence gap 2", 1e-6)]
