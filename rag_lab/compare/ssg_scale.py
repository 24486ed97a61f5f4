"""Memory growth of the SSG edge build on synthetic windows (for benchmarks/run.py).

Random unit vectors stand in for window embeddings (the encoder is measured elsewhere); the
corpus is cut into documents of ``windows_per_doc`` windows, as the graph builder sees it.
Peak Python/NumPy heap (tracemalloc) is taken at each size; linear growth means the peak at
twice the windows is about twice the peak.
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from .benchmarking import peak_memory_mb
from ..methods.ssg.config import SSGConfig
from ..methods.ssg.edges import sparse_neighbours


def synthetic_windows(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def memory_growth(sizes: Sequence[int], windows_per_doc: int = 100, config: SSGConfig | None = None) -> dict:
    """Peak heap and seconds of ``sparse_neighbours`` at each size (edges per window: ``config``'s
    ``top_k`` and ``top_x``, the defaults when None); ``ratio`` = last peak / previous peak."""
    config = config or SSGConfig()
    top_k, top_x = config.top_k, config.top_x
    rows = []
    for n in sizes:
        vectors = synthetic_windows(n)
        blocks = [(lo, min(lo + windows_per_doc, n)) for lo in range(0, n, windows_per_doc)]
        t0 = time.perf_counter()
        edges, peak = peak_memory_mb(lambda: sparse_neighbours(vectors, blocks, top_k, top_x))
        rows.append({"windows": n, "edges": len(edges), "peak_mb": peak, "seconds": time.perf_counter() - t0})
        del edges
    size_ratio = rows[-1]["windows"] / rows[-2]["windows"] if len(rows) > 1 else 1.0
    ratio = rows[-1]["peak_mb"] / rows[-2]["peak_mb"] if len(rows) > 1 else float("nan")
    return {"sizes": rows, "ratio": ratio, "size_ratio": size_ratio}
