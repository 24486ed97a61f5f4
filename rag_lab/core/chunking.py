"""Chunkers. Every chunk is an exact span of its document: ``chunk.text == doc.text[start:end]``.

- ``fixed_token_chunks``: windows of N word-piece tokens with overlap (own code: a slice over
  the tokenizer's offsets; no library keeps char spans for token windows).
- ``recursive_token_chunks``: LangChain's RecursiveCharacterTextSplitter measured in MiniLM tokens.
- ``semantic_chunks``: LangChain's SemanticChunker (breakpoints where neighbouring sentence
  windows drift apart beyond a percentile of the distances).
- ``sentence_windows``: windows of ``size`` sentences moved by ``stride`` (spaCy's rule sentencizer).

Libraries that return re-joined text (SemanticChunker joins sentences with one space) are
mapped back to the source with ``locate``, which tolerates whitespace differences only.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable

from .types import Chunk, Document

if TYPE_CHECKING:
    from .embedding import Embedder

Span = tuple[int, int]


def locate(text: str, piece: str, start_from: int = 0) -> Span:
    """Char span of ``piece`` in ``text`` at or after ``start_from``, ignoring whitespace differences."""
    piece = piece.strip()
    if not piece:
        raise ValueError("cannot locate an empty piece of text")
    i = text.find(piece, start_from)
    if i >= 0:
        return i, i + len(piece)
    pattern = r"\s+".join(re.escape(w) for w in piece.split())
    m = re.compile(pattern).search(text, start_from)
    if m is None:
        raise ValueError(f"chunk text not found in the source after offset {start_from}: {piece[:60]!r}…")
    return m.start(), m.end()


def trim_span(text: str, start: int, end: int) -> Span:
    """Shrink a span so it neither starts nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def make_chunks(doc: Document, spans: Iterable[Span], kind: str, **meta) -> list[Chunk]:
    """Chunk objects for spans of ``doc``, each tagged with the innermost section holding its start."""
    chunks = []
    for i, (s, e) in enumerate(spans):
        section = doc.section_at(s)
        chunks.append(Chunk(id=f"{doc.id}#{kind}-{i}", doc_id=doc.id, text=doc.text[s:e], start=s, end=e,
                            section_id=section.id if section else None, meta={"chunker": kind, **meta}))
    return chunks


def _check_window(size: int, overlap: int) -> None:
    if size <= 0:
        raise ValueError(f"chunk size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"chunk overlap must be in [0, size), got overlap={overlap} for size={size}")


# -- fixed token windows -------------------------------------------------------------------
def fixed_token_spans(text: str, embedder: "Embedder", size: int = 128, overlap: int = 16,
                      start: int = 0, end: int | None = None) -> list[Span]:
    _check_window(size, overlap)
    end = len(text) if end is None else end
    _, offsets = embedder.tokenize_with_offsets(text[start:end])
    step = size - overlap
    spans = []
    for i in range(0, len(offsets), step):
        window = offsets[i:i + size]
        spans.append((start + int(window[0, 0]), start + int(window[-1, 1])))
        if i + size >= len(offsets):
            break
    return spans


def fixed_token_chunks(doc: Document, embedder: "Embedder", size: int = 128, overlap: int = 16) -> list[Chunk]:
    return make_chunks(doc, fixed_token_spans(doc.text, embedder, size, overlap), "fixed", size=size, overlap=overlap)


# -- recursive token splitter -------------------------------------------------------------
def recursive_token_spans(text: str, embedder: "Embedder", chunk_size: int = 100, chunk_overlap: int = 16,
                          start: int = 0, end: int | None = None) -> list[Span]:
    """LangChain's recursive splitter with MiniLM token length, mapped to spans of ``text[start:end]``."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    _check_window(chunk_size, chunk_overlap)
    end = len(text) if end is None else end
    splitter = RecursiveCharacterTextSplitter(length_function=embedder.count_tokens,   # remembered per text
                                              chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    spans, cursor = [], start
    for piece in splitter.split_text(text[start:end]):
        if not piece.strip():
            continue
        s, e = locate(text, piece, cursor)
        spans.append((s, e))
        # The next piece overlaps this one by at most chunk_overlap tokens, so it starts no
        # earlier than this piece's last chunk_overlap tokens: search from there.
        _, offsets = embedder.tokenize_with_offsets(text[s:e])
        cursor = s + int(offsets[max(len(offsets) - chunk_overlap, 0)][0]) if len(offsets) and chunk_overlap else e
    return spans


def recursive_token_chunks(doc: Document, embedder: "Embedder", chunk_size: int = 100,
                           chunk_overlap: int = 16) -> list[Chunk]:
    spans = recursive_token_spans(doc.text, embedder, chunk_size, chunk_overlap)
    return make_chunks(doc, spans, "recursive", chunk_size=chunk_size, chunk_overlap=chunk_overlap)


# -- semantic chunking --------------------------------------------------------------------
def langchain_embeddings(embedder: "Embedder"):
    """Our cached Embedder behind LangChain's ``Embeddings`` interface."""
    from langchain_core.embeddings import Embeddings

    class _Cached(Embeddings):
        def embed_documents(self, texts):
            return embedder.encode(list(texts)).tolist()

        def embed_query(self, text):
            return embedder.encode_one(text).tolist()

    return _Cached()


@lru_cache(maxsize=1)
def _noted_semantic_chunker():
    """LangChain's SemanticChunker, its breakpoint test noted (core/ties.py): a distance within noise
    of the breakpoint threshold (a percentile of the distances) is a cut that another CPU's
    rounding can add or drop. Equal to the threshold exactly (the percentile falls on that very
    distance) is not noted: both move together, so ``>`` stays false."""
    from langchain_experimental.text_splitter import SemanticChunker

    from . import ties

    class NotedSemanticChunker(SemanticChunker):
        def _calculate_breakpoint_threshold(self, distances):
            threshold, values = super()._calculate_breakpoint_threshold(distances)
            for i, x in enumerate(values):
                if x != threshold:
                    ties.above(x, threshold, what="SemanticChunker breakpoint", name=f"sentence gap {i}")
            return threshold, values

    return NotedSemanticChunker


def semantic_spans(text: str, embedder: "Embedder", threshold_type: str = "percentile",
                   threshold: float | None = 95.0, buffer_size: int = 1) -> list[Span]:
    splitter = _noted_semantic_chunker()(langchain_embeddings(embedder), buffer_size=buffer_size,
                                         breakpoint_threshold_type=threshold_type,
                                         breakpoint_threshold_amount=threshold)
    spans, cursor = [], 0
    for piece in splitter.split_text(text):
        if piece.strip():
            s, e = locate(text, piece, cursor)
            spans.append((s, e))
            cursor = e
    return spans


def semantic_chunks(doc: Document, embedder: "Embedder", threshold_type: str = "percentile",
                    threshold: float | None = 95.0, buffer_size: int = 1) -> list[Chunk]:
    spans = semantic_spans(doc.text, embedder, threshold_type, threshold, buffer_size)
    return make_chunks(doc, spans, "semantic", threshold_type=threshold_type, threshold=threshold)


# -- sentences and sentence windows ------------------------------------------------------
@lru_cache(maxsize=1)
def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.max_length = 5_000_000
    return nlp


@lru_cache(maxsize=1 << 16)
def sentence_spans(text: str) -> tuple[Span, ...]:
    """Sentences as spans; paragraph breaks (blank lines) always end a sentence. Each text is split once a process."""
    spans = []
    for para in re.finditer(r"\S(?:.*?\S)?(?=\n\s*\n|\s*\Z)", text, flags=re.S):
        for sent in _sentencizer()(para.group()).sents:
            s, e = trim_span(text, para.start() + sent.start_char, para.start() + sent.end_char)
            if e > s:
                spans.append((s, e))
    return tuple(spans)


def sentence_window_spans(text: str, size: int = 3, stride: int = 1) -> list[tuple[Span, list[int]]]:
    """Windows of ``size`` consecutive sentences every ``stride`` sentences, with their sentence indices.

    A text shorter than one window gives one window of all its sentences.
    """
    if size <= 0 or stride <= 0:
        raise ValueError(f"window size and stride must be positive, got size={size} stride={stride}")
    sents = sentence_spans(text)
    out = []
    last_start = max(len(sents) - size, 0)
    for i in range(0, last_start + 1, stride):
        idx = list(range(i, min(i + size, len(sents))))
        if idx:
            out.append(((sents[idx[0]][0], sents[idx[-1]][1]), idx))
    return out


def sentence_windows(doc: Document, size: int = 3, stride: int = 1) -> list[Chunk]:
    windows = sentence_window_spans(doc.text, size, stride)
    chunks = make_chunks(doc, [span for span, _ in windows], "window", size=size, stride=stride)
    for chunk, (_, idx) in zip(chunks, windows):
        chunk.meta["sentence_indices"] = idx
    return chunks


CHUNKERS = {
    "fixed": fixed_token_chunks,
    "recursive": recursive_token_chunks,
    "semantic": semantic_chunks,
    "window": sentence_windows,
}


def chunk_documents(docs: Iterable[Document], chunker: str, embedder: "Embedder | None" = None, **params) -> list[Chunk]:
    """Chunk every document with one of ``CHUNKERS`` (by name)."""
    if chunker not in CHUNKERS:
        raise ValueError(f"unknown chunker {chunker!r}; expected one of {sorted(CHUNKERS)}")
    fn = CHUNKERS[chunker]
    out: list[Chunk] = []
    for doc in docs:
        out.extend(fn(doc, **params) if chunker == "window" else fn(doc, embedder, **params))
    return out


def over_encoder_limit(texts: Iterable[str], embedder: "Embedder") -> tuple[int, int]:
    """(texts longer than the encoder reads, texts): the encoder truncates those silently, so their
    vectors come from their first ``embedder.max_tokens - 2`` word pieces only."""
    texts = list(texts)
    limit = embedder.max_tokens - 2
    return sum(1 for t in texts if embedder.count_tokens(t) > limit), len(texts)


def chunk_stats(chunks: list[Chunk], embedder: "Embedder") -> dict[str, float]:
    """Count and token-size summary of a chunking (for the notebooks' comparison tables)."""
    import numpy as np

    sizes = np.array([embedder.count_tokens(c.text) for c in chunks]) if chunks else np.zeros(1)
    return {"chunks": len(chunks), "mean_tokens": float(sizes.mean()), "min_tokens": int(sizes.min()),
            "max_tokens": int(sizes.max()), "over_model_limit": int((sizes > embedder.max_tokens - 2).sum())}
