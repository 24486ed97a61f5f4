"""Sparse similarity edges of the SSG, found with FAISS (never a dense corpus-wide matrix).

The SSG paper keeps, for every 3-sentence window, only its ``top_k`` most similar windows in
the same document and its ``top_x`` most similar windows in other documents. Windows of one
document occupy one contiguous block of rows, so both searches run on one exact inner-product
index restricted by a FAISS ID selector: a range selector for the document's own block
(intra) and its complement (inter). Memory stays O(n_windows x (top_k + top_x)).

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


def sparse_neighbours(vectors: np.ndarray, blocks: Sequence[tuple[int, int]], top_k: int, top_x: int) -> list[Edge]:
    """Top-``top_k`` intra-document and top-``top_x`` inter-document neighbours of every row.

    ``vectors``: unit-length rows (inner product = cosine). ``blocks``: ``[lo, hi)`` row ranges,
    one per document, in order. A window never neighbours itself; a document with fewer other
    windows than ``top_k`` gives what it has. Edges come out per source row, best first.
    """
    import faiss

    if top_k < 0 or top_x < 0:
        raise ValueError(f"top_k and top_x must be >= 0, got top_k={top_k} top_x={top_x}")
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array (windows x dim), got shape {vectors.shape}")
    _check_blocks(len(vectors), blocks)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    n = len(vectors)
    edges: list[Edge] = []
    for lo, hi in blocks:
        queries = vectors[lo:hi]
        intra = inter = None
        if top_k and hi - lo > 1:
            # one extra result because the window itself is in its own block
            params = faiss.SearchParameters(sel=faiss.IDSelectorRange(lo, hi))
            intra = index.search(queries, min(top_k + 1, hi - lo), params=params)
        if top_x and n - (hi - lo) > 0:
            params = faiss.SearchParameters(sel=faiss.IDSelectorNot(faiss.IDSelectorRange(lo, hi)))
            inter = index.search(queries, min(top_x, n - (hi - lo)), params=params)
        for i in range(hi - lo):
            row = lo + i
            if intra is not None:
                kept = [(int(t), float(s)) for s, t in zip(intra[0][i], intra[1][i]) if t >= 0 and t != row]
                edges += [Edge(row, t, s, "intra") for t, s in kept[:top_k]]
            if inter is not None:
                edges += [Edge(row, int(t), float(s), "inter") for s, t in zip(inter[0][i], inter[1][i]) if t >= 0]
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
