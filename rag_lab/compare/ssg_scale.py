"""The SSG edge build at scale, on synthetic window vectors (for benchmarks/run.py).

No encoder runs here (it is measured elsewhere): ``synthetic_corpus`` draws unit vectors whose
similarity profile imitates MiniLM window embeddings of the shipped corpora. Each window is a
sum of a direction shared by the whole corpus, its topic's, its document's, and a random walk
along the document (consecutive windows share two of their three sentences); every component
but the first is Gaussian with a power-law spectrum (real embeddings use few directions). The
shares below were fitted by hand to what the shipped biomed_articles, ml_encyclopedia and
italian_cuisine windows show (measured: cosine of windows in different documents 0.23-0.35,
in one document 0.42-0.49, of neighbouring windows 0.80, participation ratio of the spectrum
33-38); the generator gives 0.25-0.36, 0.46, 0.80 and 40-60. Isotropic random vectors
(``isotropic_windows``) would be an unfair worst case for approximate search: every point's
nearest neighbours are barely nearer than the rest.

``build_once`` measures one size: seconds, Python heap peak (tracemalloc: NumPy's arrays, not
FAISS's C++ allocations) and the resident memory the build adds at its peak (peak RSS minus RSS
before the build), which does see FAISS: run it in a fresh process per size
(``benchmarks/ssg_scale.py``) so one size's peak is not another's.
"""
from __future__ import annotations

import resource
import time
import tracemalloc
from typing import Sequence

import numpy as np

from ..core.index import IndexSettings
from ..methods.ssg.config import SSGConfig
from ..methods.ssg.edges import Neighbours, neighbour_table, reference_inter

GLOBAL_SHARE, TOPIC_SHARE, DOC_SHARE, WALK_SHARE = 0.25, 0.10, 0.10, 0.55  # of each window's squared norm
WALK_CORRELATION = 0.64     # cosine of consecutive walk steps: neighbouring windows end near 0.80
SPECTRUM_DECAY = 0.8        # variance of the i-th direction ~ i**-0.8 (participation ratio ~65 in 384-d)


def power_law_scales(dim: int, decay: float = SPECTRUM_DECAY) -> np.ndarray:
    """Per-direction standard deviations with variance ~ i**-decay, scaled to unit total variance."""
    s = np.arange(1, dim + 1, dtype=np.float64) ** (-decay / 2)
    return s / np.sqrt((s ** 2).sum())


def synthetic_corpus(n_windows: int, windows_per_doc: int = 100, docs_per_topic: int = 20, dim: int = 384,
                     seed: int = 0) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """``n_windows`` unit vectors (float32) in documents of ``windows_per_doc`` windows (the last
    may be shorter), ``docs_per_topic`` documents a topic, and the documents' row blocks."""
    if n_windows < 1 or windows_per_doc < 1 or docs_per_topic < 1:
        raise ValueError(f"n_windows, windows_per_doc and docs_per_topic must be >= 1, got "
                         f"{n_windows}, {windows_per_doc}, {docs_per_topic}")
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    scales = power_law_scales(dim).astype(np.float32)
    rotation = rotation.astype(np.float32)

    def draw(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape + (dim,), dtype=np.float32) * scales) @ rotation.T

    common = rng.standard_normal(dim).astype(np.float32)
    common /= np.linalg.norm(common)
    n_docs = -(-n_windows // windows_per_doc)
    topics = draw(-(-n_docs // docs_per_topic))
    out = np.empty((n_docs * windows_per_doc, dim), np.float32)
    per_batch = max(1, 20_000 // windows_per_doc)         # documents generated together: bounded temporaries
    rho = WALK_CORRELATION
    for d0 in range(0, n_docs, per_batch):
        docs = np.arange(d0, min(n_docs, d0 + per_batch))
        base = (np.sqrt(GLOBAL_SHARE) * common + np.sqrt(TOPIC_SHARE) * topics[docs // docs_per_topic]
                + np.sqrt(DOC_SHARE) * draw(len(docs)))
        step = draw(len(docs))
        for p in range(windows_per_doc):
            if p:
                step = rho * step + np.sqrt(1 - rho ** 2) * draw(len(docs))
            out[docs * windows_per_doc + p] = base + np.sqrt(WALK_SHARE) * step
    out = out[:n_windows]
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    blocks = [(lo, min(lo + windows_per_doc, n_windows)) for lo in range(0, n_windows, windows_per_doc)]
    return out, blocks


def isotropic_windows(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    """Uniformly random unit vectors: no structure at all (the hardest case for approximate search)."""
    v = np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


MIB = 2 ** 20


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, MiB: VmHWM of /proc/self/status, which starts
    afresh at exec (``getrusage``'s ru_maxrss would carry the peak of the parent that forked a
    worker process)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    """This process's resident memory now, MiB (Linux: /proc/self/statm counts pages)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / MIB


def edge_recall(found: Neighbours, exact: np.ndarray, rows: np.ndarray) -> float:
    """Share of the exact inter-document neighbours of ``rows`` (``exact``: len(rows) x top_x,
    -1 = none) that ``found`` also gives those rows."""
    hits = total = 0
    for row, truth in zip(rows, exact):
        truth = set(int(t) for t in truth if t >= 0)
        hits += len(truth & set(int(t) for t in found.inter[row] if t >= 0))
        total += len(truth)
    return hits / total if total else 1.0


def build_once(n: int, config: SSGConfig | None = None, windows_per_doc: int = 100, sample: int = 0,
               ann: IndexSettings | None = None, seed: int = 0) -> dict:
    """One edge build over ``n`` synthetic windows with ``config``'s top_k, top_x and ann_above.

    ``sample`` > 0: that many random rows get their exact inter-document neighbours (a flat
    search over all ``n``) and ``recall`` compares the build's edges with them."""
    config = config or SSGConfig()
    vectors, blocks = synthetic_corpus(n, windows_per_doc, seed=seed)
    rss_before = current_rss_mib()
    tracemalloc.start()
    t0 = time.perf_counter()
    table = neighbour_table(vectors, blocks, config.top_k, config.top_x, ann_above=config.ann_above, ann=ann)
    seconds = time.perf_counter() - t0
    _, heap_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    row = {"windows": n, "documents": len(blocks), "approximate": table.approximate, "seconds": seconds,
           "edges": int((table.intra >= 0).sum() + (table.inter >= 0).sum()),
           "vectors_mib": vectors.nbytes / MIB, "heap_peak_mib": heap_peak / MIB,
           "rss_before_build_mib": rss_before, "peak_rss_mib": peak_rss_mib()}
    row["build_rss_mib"] = row["peak_rss_mib"] - rss_before
    row["bytes_per_window"] = row["build_rss_mib"] * MIB / n
    if sample:
        rows = np.sort(np.random.default_rng(seed + 1).choice(n, size=min(sample, n), replace=False))
        t0 = time.perf_counter()
        exact = reference_inter(vectors, blocks, config.top_x, rows)
        row.update(recall=edge_recall(table, exact, rows), sample=len(rows),
                   reference_seconds=time.perf_counter() - t0)
    return row


def memory_growth(rows: Sequence[dict]) -> float:
    """Resident memory the build added at its peak, per window, at the last size over the first:
    about 1 when memory grows linearly with the number of windows."""
    return rows[-1]["bytes_per_window"] / rows[0]["bytes_per_window"]
