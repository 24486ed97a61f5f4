"""Full-document token embeddings (late chunking's first step) past the encoder's window.

Own code: the document's word pieces are cut into windows of the encoder's length that
overlap by ``overlap`` tokens; each window is encoded on its own and every token's final
embedding is the weighted mean of its embeddings from the windows that hold it, the weight
falling linearly with distance from the window's edge (``min(p + 1, L - p)`` at position
``p`` of a window of ``L`` tokens), so a token is represented mostly by the windows in which
it sits near the middle and has context on both sides. A document that fits in one window
is encoded in a single pass (exactly the encoder's output).

Results are cached in memory and on disk (``token_embeddings/`` beside the embedder's cache), keyed by
the model's fingerprint (``Embedder.model_key``), text hash, window size and overlap: four GraLC
strategies share one encoding. A stored file that cannot be read, or holds the wrong shape, is
moved aside (``.corrupt-<time>``) with a warning and encoded again.
"""
from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

log = logging.getLogger(__name__)
_MEMORY: "OrderedDict[str, tuple[np.ndarray, float]]" = OrderedDict()
MEMORY_ITEMS = 64


def window_starts(n: int, size: int, overlap: int) -> list[int]:
    """Start of every window; the last one is aligned to end at ``n`` (no short tail window)."""
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"need size > 0 and 0 <= overlap < size, got size={size} overlap={overlap}")
    if n <= size:
        return [0]
    step = size - overlap
    starts = list(range(0, n - size, step))
    starts.append(n - size)
    return starts


def window_weights(length: int) -> np.ndarray:
    """Linear weights, highest in the middle: ``min(p + 1, length - p)``."""
    p = np.arange(length)
    return np.minimum(p + 1, length - p).astype(np.float64)


def sliding_token_embeddings(ids: Sequence[int], embed: Callable[[Sequence[int]], np.ndarray], size: int,
                             overlap: int) -> tuple[np.ndarray, int]:
    """Token embeddings of a whole id sequence and the number of windows encoded."""
    ids = list(ids)
    n = len(ids)
    if n == 0:
        raise ValueError("cannot encode an empty token sequence")
    starts = window_starts(n, size, overlap)
    if len(starts) == 1:
        return np.asarray(embed(ids), dtype=np.float32), 1
    total = None
    weight_sum = np.zeros(n)
    for s in starts:
        part = np.asarray(embed(ids[s:s + size]), dtype=np.float64)
        w = window_weights(len(part))
        if total is None:
            total = np.zeros((n, part.shape[1]))
        total[s:s + len(part)] += part * w[:, None]
        weight_sum[s:s + len(part)] += w
    return (total / weight_sum[:, None]).astype(np.float32), len(starts)


@dataclass
class DocumentEncoding:
    """Word-piece ids, their char offsets (n, 2) and contextual embeddings (n, d) of one text."""

    ids: list[int]
    offsets: np.ndarray
    embeddings: np.ndarray
    windows: int = 1
    tokens_encoded: int = 0      # word pieces run through the encoder (overlaps count twice)
    seconds: float = 0.0         # time the encoding took when it was computed (also on a cache hit)
    cached: bool = False

    def __len__(self) -> int:
        return len(self.ids)


def _cache_key(model_id: str, text: str, size: int, overlap: int) -> str:
    h = hashlib.sha256(text.encode("utf-8")).hexdigest()
    model = hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:12]
    return f"{model}-{h}-{size}-{overlap}"


def _disk_path(key: str, embedder) -> Path | None:
    """Beside the embedder's own vector cache; None when the embedder caches nothing."""
    cache = getattr(embedder, "cache", None)
    return Path(cache.path).parent / "token_embeddings" / f"{key}.npz" if cache is not None else None


def cache_path(text: str, embedder, overlap: int, window: int | None = None) -> Path | None:
    """The file ``encode_document`` keeps ``text``'s token embeddings in (None: the embedder caches nothing)."""
    size = window or embedder.max_tokens - 2
    return _disk_path(_cache_key(getattr(embedder, "model_key", embedder.model_id), text, size, overlap), embedder)


def cache_files(documents, embedder, config) -> list[Path]:
    """The files ``encode_document`` keeps these documents' token embeddings in, for a late-chunking config
    that caches them (``cache_tokens``); none for other strategies or an embedder without a cache."""
    if not getattr(config, "cache_tokens", False):
        return []
    paths = (cache_path(d.text, embedder, config.window_overlap) for d in documents)
    return [p for p in paths if p is not None]


def clear_memory_cache() -> None:
    """Forget the in-process encodings (benchmarks time cold builds)."""
    _MEMORY.clear()


def encode_document(text: str, embedder, overlap: int, window: int | None = None,
                    use_cache: bool = True) -> DocumentEncoding:
    """Contextual token embeddings of a whole text (sliding windows past the model's limit)."""
    if not text.strip():
        raise ValueError("cannot encode an empty document")
    ids, offsets = embedder.tokenize_with_offsets(text)
    size = window or embedder.max_tokens - 2
    starts = window_starts(len(ids), size, overlap)
    tokens = sum(min(size, len(ids) - s) for s in starts)
    key = _cache_key(getattr(embedder, "model_key", embedder.model_id), text, size, overlap)
    if use_cache and key in _MEMORY:
        _MEMORY.move_to_end(key)
        emb, seconds = _MEMORY[key]
        return DocumentEncoding(ids, offsets, emb, len(starts), tokens, seconds, True)
    path = _disk_path(key, embedder)
    if use_cache and path is not None and path.exists():
        stored = _load(path, len(ids))
        if stored is not None:
            emb, seconds = stored
            _remember(key, emb, seconds)
            return DocumentEncoding(ids, offsets, emb, len(starts), tokens, seconds, True)
    t0 = time.perf_counter()
    emb, _ = sliding_token_embeddings(ids, embedder.token_embeddings_for_ids, size, overlap)
    seconds = time.perf_counter() - t0
    if use_cache:
        if path is not None:
            from ...caching.atomic import atomic_path
            with atomic_path(path) as tmp:
                with open(tmp, "wb") as fh:
                    np.savez(fh, embeddings=emb, seconds=np.float64(seconds))
        _remember(key, emb, seconds)
    return DocumentEncoding(ids, offsets, emb, len(starts), tokens, seconds, False)


def _load(path: Path, n_tokens: int) -> tuple[np.ndarray, float] | None:
    """A stored encoding, or None after moving an unreadable or wrong one aside (with a warning)."""
    try:
        with np.load(path) as stored:
            emb, seconds = stored["embeddings"], float(stored["seconds"])
        problem = (None if emb.ndim == 2 and emb.shape[0] == n_tokens and np.all(np.isfinite(emb))
                   else f"holds {emb.shape} values, expected ({n_tokens}, d) finite")
    except Exception as e:  # zip, pickle, key or shape errors: any unreadable file is just recomputed
        problem = f"unreadable ({type(e).__name__}: {e})"
    if problem is None:
        return emb, seconds
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        os.replace(path, aside)
    except FileNotFoundError:  # another process moved it first
        pass
    log.warning("token-embedding cache file %s %s; moved it aside to %s and encoding again", path, problem, aside)
    return None


def _remember(key: str, emb: np.ndarray, seconds: float) -> None:
    _MEMORY[key] = (emb, seconds)
    while len(_MEMORY) > MEMORY_ITEMS:
        _MEMORY.popitem(last=False)


def char_span_to_tokens(offsets: np.ndarray, start: int, end: int) -> tuple[int, int]:
    """Token range ``[a, b)`` of the tokens overlapping chars ``[start, end)``."""
    a = int(np.searchsorted(offsets[:, 1], start, side="right"))
    b = int(np.searchsorted(offsets[:, 0], end, side="left"))
    return a, max(a, b)


def token_span_to_chars(offsets: np.ndarray, a: int, b: int) -> tuple[int, int]:
    return int(offsets[a, 0]), int(offsets[b - 1, 1])
