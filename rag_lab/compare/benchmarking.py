"""Measurements behind benchmarks/run.py: what a method's index costs next to the bare encoder.

``RecordingEmbedder`` notes every text and token window a method sends to the encoder; replaying
exactly those through the model with no cache gives the method's *pure encoder time*, so the
ratio index time / encoder time shows how much the method adds around encoding. All timings
of one report come from one process and one run.
"""
from __future__ import annotations

import re
import statistics
import time
import tracemalloc
from pathlib import Path
from typing import Callable, Sequence

from ..core.embedding import Embedder
from ..core.types import Document
from ..evaluation.harness import build, retrieve


def warm_up(embedder: Embedder) -> None:
    """Pay the once-per-process start-up (model weights, spaCy import of the sentence splitter)
    before anything is timed, so no method's measurement carries it."""
    from ..core.chunking import sentence_spans

    embedder.model
    sentence_spans("Warm up. Once per process.")


class RecordingEmbedder(Embedder):
    """An Embedder that remembers what it was asked to encode (sentences and token windows)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.recorded_texts: list[str] = []
        self.recorded_windows: list[list[int]] = []

    def encode(self, texts, show_progress=None):
        self.recorded_texts.extend(texts)
        return super().encode(texts, show_progress)

    def token_embeddings_for_ids(self, ids):
        self.recorded_windows.append(list(ids))
        return super().token_embeddings_for_ids(ids)


def pure_encoder_seconds(embedder: Embedder, texts: Sequence[str], windows: Sequence[Sequence[int]]) -> float:
    """Time to run the model over exactly these inputs, no cache, no chunking, no bookkeeping."""
    t0 = time.perf_counter()
    unique = list(dict.fromkeys(texts))
    if unique:
        embedder.model.encode(unique, batch_size=embedder.batch_size, normalize_embeddings=True,
                              convert_to_numpy=True, show_progress_bar=False)
    for ids in windows:
        Embedder.token_embeddings_for_ids(embedder, ids)
    return time.perf_counter() - t0


def corpus_pass_seconds(embedder: Embedder, documents: Sequence[Document]) -> float:
    """One encoder pass over the corpus, the unit a build is measured in: every document cut at sentence ends
    into pieces of at most the model's window, encoded once, no cache (``pure_encoder_seconds``)."""
    from ..core.chunking import sentence_spans

    window = embedder.max_tokens - 2          # [CLS] and [SEP]
    pieces = []
    for doc in documents:
        piece, size = [], 0
        for a, b in sentence_spans(doc.text):
            n = embedder.count_tokens(doc.text[a:b])
            if piece and size + n > window:
                pieces.append(" ".join(piece))
                piece, size = [], 0
            piece.append(doc.text[a:b])
            size += n
        if piece:
            pieces.append(" ".join(piece))
    return pure_encoder_seconds(embedder, pieces, [])


def time_index(make_retriever: Callable[[Embedder], object], documents: list[Document], model_embedder: Embedder,
               cache_dir: Path) -> dict[str, float]:
    """Build once with an empty cache; return index seconds, encoder seconds and their ratio."""
    rec = RecordingEmbedder(cache_dir=cache_dir)
    rec._model, rec._tokenizer = model_embedder.model, model_embedder.tokenizer  # weights loaded once
    retriever = make_retriever(rec)
    from ..methods.gralc.encoding import clear_memory_cache
    clear_memory_cache()  # a cold build: no token embeddings left over from another method
    t0 = time.perf_counter()
    build(retriever, documents, reuse=False)   # timed: never a reused index
    index_s = time.perf_counter() - t0
    encoder_s = pure_encoder_seconds(model_embedder, rec.recorded_texts, rec.recorded_windows)
    return {"index_seconds": index_s, "encoder_seconds": encoder_s,
            "tokens": token_count(model_embedder, rec.recorded_texts, rec.recorded_windows),
            "ratio": index_s / encoder_s if encoder_s else float("nan"), "chunks": len(retriever.chunks),
            "retriever": retriever}


def query_latency_ms(retriever, queries: Sequence[str], k: int = 10, repeats: int = 1) -> dict[str, float]:
    """Median and p95 wall time of retrieve() in milliseconds (after one warm-up query)."""
    retrieve(retriever, queries[0], k)
    times = []
    for _ in range(repeats):
        for q in queries:
            t0 = time.perf_counter()
            retrieve(retriever, q, k)
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"median_ms": statistics.median(times), "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))]}


def peak_memory_mb(fn: Callable[[], object]) -> tuple[object, float]:
    """Run ``fn`` and return its result and the peak Python heap it allocated (tracemalloc, MB).
    tracemalloc counts only blocks allocated after it starts, so garbage left from earlier work
    cannot inflate the peak and is not collected first (a full collection took ~0.5 s a call)."""
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak / 1e6


def replicate(documents: list[Document], copies: int) -> list[Document]:
    """The corpus repeated ``copies`` times under new ids (texts repeat, so the embedding cache
    makes the build cheap; the index still holds every copy)."""
    return [Document(f"{d.id}~{i}", d.text, d.title, d.sections, d.meta) for i in range(copies) for d in documents]


_WORD = re.compile(r"[A-Za-z]{4,}")


def distinct_text(text: str, copy: int, bits: int) -> str:
    """``text`` with the last letter of its words (4+ letters) case-flipped by the bits of ``copy``: the
    uncased MiniLM tokenizer and the lowercasing concept linker see ``text``, every cache sees a new text."""
    if not copy:
        return text
    chars = list(text)
    for w, m in enumerate(_WORD.finditer(text)):
        if (copy >> (w % bits)) & 1:
            chars[m.end() - 1] = chars[m.end() - 1].swapcase()
    return "".join(chars)


def distinct_copies(documents: list[Document], n: int) -> list[Document]:
    """``n`` articles cycling through ``documents``, every copy textually distinct yet costing
    the encoder exactly what the original does (``distinct_text``; copy 0 is the original, so
    tokens, chunks and concepts are the same while every de-duplication by text sees new texts).
    Offsets are unchanged, so sections stay valid."""
    if n < 1 or not documents:
        raise ValueError(f"distinct_copies needs documents and n >= 1, got {len(documents)} documents, n={n}")
    bits = max(1, ((n - 1) // len(documents)).bit_length())
    out = []
    for i in range(n):
        doc, c = documents[i % len(documents)], i // len(documents)
        out.append(Document(f"{doc.id}~{c}" if c else doc.id, distinct_text(doc.text, c, bits), doc.title,
                            doc.sections, doc.meta))
    return out


def token_count(embedder: Embedder, texts: Sequence[str], windows: Sequence[Sequence[int]]) -> int:
    """Word pieces the encoder reads for these distinct texts and token windows."""
    return embedder.count_tokens(list(dict.fromkeys(texts))) + sum(len(w) for w in windows)
