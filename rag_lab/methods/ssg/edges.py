"""Sparse similarity edges of the SSG, found with FAISS (never a dense corpus-wide matrix).

The SSG paper keeps, for every 3-sentence window, only its ``top_k`` most similar windows in
the same document and its ``top_x`` most similar windows in other documents. Windows of one
document occupy one contiguous block of rows: intra-document neighbours come from each
document's own window similarity matrix (small: windows of one document squared), and
inter-document neighbours from one batched exact FAISS search over all windows (BLAS), with a
FAISS ID selector excluding the document for the rows whose nearest hits were all their own.
Memory stays O(n_windows x (top_k + top_x)) plus one document's matrix at a time.

Documents get ``top_t`` theme bridges: the other documents whose theme embedding is most
similar (a documents x documents product, tiny next to the window level).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Edge:
    """Window ``source`` keeps ``target`` (row numbers) as a neighbour of ``kind`` with cosine ``weight``."""

    source: int
    target: int
    weight: float
    kind: str  # "intra" | "inter"


def _check_blocks(n_rows: int, blocks: Sequence[tuple[int, int]]) -> None:
    cursor = 0
    for lo, hi in blocks:
        if lo != cursor or hi <= lo:
            raise ValueError(f"document blocks must tile the rows 0..{n_rows} in order with no empty block; "
                             f"got {list(blocks)}")
        cursor = hi
    if cursor != n_rows:
        raise ValueError(f"document blocks cover rows 0..{cursor} but there are {n_rows} windows")


def _intra(vectors: np.ndarray, lo: int, hi: int, top_k: int) -> list[list[tuple[int, float]]]:
    """Each row's top_k others in its own document, from the document's own similarity matrix."""
    block = vectors[lo:hi]
    sims = block @ block.T
    np.fill_diagonal(sims, -np.inf)
    order = np.argsort(-sims, axis=1, kind="stable")[:, :top_k]
    return [[(lo + int(j), float(sims[i, j])) for j in order[i] if np.isfinite(sims[i, j])] for i in range(hi - lo)]


def _inter(index, vectors: np.ndarray, blocks: Sequence[tuple[int, int]], doc_of: np.ndarray,
           top_x: int, margin: int) -> list[list[tuple[int, float]]]:
    """Each row's top_x windows of other documents.

    One batched search over the whole index (FAISS uses BLAS) for ``top_x + margin`` results,
    same-document hits dropped; the rows that lose too many (their nearest windows are their own
    document's) are searched again exactly with an ID selector excluding their document."""
    import faiss

    n = len(vectors)
    k = min(n, top_x + margin)
    scores, ids = index.search(vectors, k)
    out: list[list[tuple[int, float]]] = []
    short: list[int] = []
    for row in range(n):
        keep = [(int(t), float(s)) for s, t in zip(scores[row], ids[row]) if t >= 0 and doc_of[t] != doc_of[row]]
        out.append(keep[:top_x])
        lo, hi = blocks[doc_of[row]]
        if len(keep) < min(top_x, n - (hi - lo)):
            short.append(row)
    for d in sorted({int(doc_of[r]) for r in short}):
        lo, hi = blocks[d]
        rows = [r for r in short if doc_of[r] == d]
        params = faiss.SearchParameters(sel=faiss.IDSelectorNot(faiss.IDSelectorRange(lo, hi)))
        s2, t2 = index.search(vectors[rows], min(top_x, n - (hi - lo)), params=params)
        for i, row in enumerate(rows):
            out[row] = [(int(t), float(s)) for s, t in zip(s2[i], t2[i]) if t >= 0]
    return out


def sparse_neighbours(vectors: np.ndarray, blocks: Sequence[tuple[int, int]], top_k: int, top_x: int,
                      margin: int = 32) -> list[Edge]:
    """Top-``top_k`` intra-document and top-``top_x`` inter-document neighbours of every row.

    ``vectors``: unit-length rows (inner product = cosine). ``blocks``: ``[lo, hi)`` row ranges,
    one per document, in order. A window never neighbours itself; a document with fewer other
    windows than ``top_k`` gives what it has. Edges come out per source row, intra then inter,
    best first. ``margin``: extra results fetched per row in the batched inter-document search
    (only speed depends on it: rows it does not cover are searched exactly).
    """
    import faiss

    if top_k < 0 or top_x < 0:
        raise ValueError(f"top_k and top_x must be >= 0, got top_k={top_k} top_x={top_x}")
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array (windows x dim), got shape {vectors.shape}")
    _check_blocks(len(vectors), blocks)
    n = len(vectors)
    doc_of = np.empty(n, dtype=np.int64)
    for d, (lo, hi) in enumerate(blocks):
        doc_of[lo:hi] = d
    intra: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    if top_k:
        for lo, hi in blocks:
            intra[lo:hi] = _intra(vectors, lo, hi, top_k)
    inter: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    if top_x and len(blocks) > 1:
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        inter = _inter(index, vectors, blocks, doc_of, top_x, margin)
    edges: list[Edge] = []
    for row in range(n):
        edges += [Edge(row, t, s, "intra") for t, s in intra[row]]
        edges += [Edge(row, t, s, "inter") for t, s in inter[row]]
    return edges


def theme_bridges(theme_vectors: np.ndarray, top_t: int) -> list[tuple[int, int, float]]:
    """(document, other document, cosine) for each document's ``top_t`` most theme-similar others.

    Documents without themes (an all-zero row) neither give nor receive bridges. Ties go to the
    earlier document."""
    if top_t < 0:
        raise ValueError(f"top_t must be >= 0, got {top_t}")
    v = np.asarray(theme_vectors, dtype=np.float32)
    has = np.linalg.norm(v, axis=1) > 0
    sims = v @ v.T
    out = []
    for i in np.flatnonzero(has):
        others = [j for j in np.flatnonzero(has) if j != i]
        others.sort(key=lambda j: (-sims[i, j], j))
        out += [(int(i), int(j), float(sims[i, j])) for j in others[:top_t]]
    return out
