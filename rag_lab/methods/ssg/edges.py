"""Sparse similarity edges of the SSG, found with FAISS (never a dense corpus-wide matrix).

The SSG paper keeps, for every 3-sentence window, only its ``top_k`` most similar windows in
the same document and its ``top_x`` most similar windows in other documents. Windows of one
document occupy one contiguous block of rows: intra-document neighbours come from each
document's own window similarity matrix (in slices of rows, so a long document never needs its
whole square), and inter-document neighbours from a batched FAISS search over all windows, with
a FAISS ID selector excluding the document for the rows whose nearest hits were all their own.

Up to ``ann_above`` windows that search is exact (``IndexFlatIP``, BLAS); above it, an
approximate FAISS index (HNSW by default, ``rag_lab.core.index.IndexSettings``) answers the same
two passes, so the build stays near n log n instead of n squared. Results are kept in
fixed-width arrays (``Neighbours``): memory is O(n_windows x (top_k + top_x)) besides the
vectors and the index.

Documents get ``top_t`` theme bridges: the other documents whose theme embedding is most
similar (a documents x documents product, tiny next to the window level).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...core import ties

from ...core.index import IndexSettings, approximate_index

EDGE_ANN = IndexSettings(kind="ann", search="efSearch=512")  # a query per window: half of VectorIndex's
#          efSearch; 1M windows in 24 min with edge recall 0.972 (256: 18 min, 0.933; docs/performance.md)
SEARCH_BATCH = 65_536    # rows per batched search: bounds the temporary (rows x (top_x + margin)) results
SLICE_CELLS = 1 << 24    # similarity cells per slice of a document's own matrix (64 MB of float32)


@dataclass(frozen=True)
class Edge:
    """Window ``source`` keeps ``target`` (row numbers) as a neighbour of ``kind`` with cosine ``weight``."""

    source: int
    target: int
    weight: float
    kind: str  # "intra" | "inter"


@dataclass(frozen=True)
class Neighbours:
    """Each row's neighbours, best first: ``intra``/``inter`` hold row numbers (n x top_k and
    n x top_x, -1 where a row has fewer), ``*_weight`` their cosines; ``approximate`` says
    whether the inter-document search was approximate."""

    intra: np.ndarray
    intra_weight: np.ndarray
    inter: np.ndarray
    inter_weight: np.ndarray
    approximate: bool

    def edges(self) -> list[Edge]:
        """Per source row, intra then inter, best first."""
        out: list[Edge] = []
        for row in range(len(self.intra)):
            out += [Edge(row, int(t), float(w), "intra")
                    for t, w in zip(self.intra[row], self.intra_weight[row]) if t >= 0]
            out += [Edge(row, int(t), float(w), "inter")
                    for t, w in zip(self.inter[row], self.inter_weight[row]) if t >= 0]
        return out


def _check_blocks(n_rows: int, blocks: Sequence[tuple[int, int]]) -> None:
    cursor = 0
    for lo, hi in blocks:
        if lo != cursor or hi <= lo:
            raise ValueError(f"document blocks must tile the rows 0..{n_rows} in order with no empty block; "
                             f"got {list(blocks)}")
        cursor = hi
    if cursor != n_rows:
        raise ValueError(f"document blocks cover rows 0..{cursor} but there are {n_rows} windows")


def _intra(vectors: np.ndarray, blocks: Sequence[tuple[int, int]], top_k: int,
           targets: np.ndarray, weights: np.ndarray) -> None:
    """Each row's top_k others in its own document (ties: the earlier row), written in place."""
    for lo, hi in blocks:
        block = vectors[lo:hi]
        step = max(1, SLICE_CELLS // (hi - lo))
        for a in range(0, hi - lo, step):
            sims = block[a:a + step] @ block.T
            sims[np.arange(len(sims)), np.arange(a, a + len(sims))] = -np.inf
            order = ties.top_k_rows(sims, top_k, what="SSG intra-document edge")
            w = np.where(order >= 0, np.take_along_axis(sims, np.maximum(order, 0), axis=1), -np.inf)
            t = np.where(np.isfinite(w), order + lo, -1)
            targets[lo + a:lo + a + len(sims), :t.shape[1]] = t
            weights[lo + a:lo + a + len(sims), :t.shape[1]] = np.where(t >= 0, w, 0.0)


def _selector_params(index, sel):
    """Search parameters carrying ``sel`` of the type ``index`` expects (IVF needs its own)."""
    import faiss

    ivf = faiss.try_extract_index_ivf(index)
    if ivf is not None:
        return faiss.SearchParametersIVF(sel=sel, nprobe=ivf.nprobe)
    if isinstance(index, faiss.IndexHNSW):
        return faiss.SearchParametersHNSW(sel=sel, efSearch=index.hnsw.efSearch)
    return faiss.SearchParameters(sel=sel)


def _inter(index, vectors: np.ndarray, blocks: Sequence[tuple[int, int]], doc_of: np.ndarray,
           top_x: int, margin: int, targets: np.ndarray, weights: np.ndarray,
           queries: np.ndarray | None = None) -> None:
    """Each row's top_x windows of other documents, written in place (only the rows in
    ``queries`` when given).

    Batched searches over the whole index for ``top_x + margin`` results, same-document hits
    dropped; the rows that lose too many (their nearest windows are their own document's) are
    searched again with an ID selector excluding their document."""
    import faiss

    n = len(vectors)
    queries = np.arange(n) if queries is None else np.asarray(queries, dtype=np.int64)
    sizes = np.array([hi - lo for lo, hi in blocks])
    need = np.minimum(top_x, n - sizes[doc_of])
    k = min(n, top_x + margin)
    short: list[np.ndarray] = []
    for a in range(0, len(queries), SEARCH_BATCH):
        rows = queries[a:a + SEARCH_BATCH]
        scores, ids = index.search(vectors[rows], k)
        valid = (ids >= 0) & (doc_of[np.maximum(ids, 0)] != doc_of[rows][:, None])
        rank = np.cumsum(valid, axis=1) - 1
        keep = valid & (rank < top_x)
        r, c = np.nonzero(keep)
        targets[rows[r], rank[r, c]] = ids[r, c]
        weights[rows[r], rank[r, c]] = scores[r, c]
        short.append(rows[keep.sum(axis=1) < need[rows]])
    short_rows = np.concatenate(short) if short else np.empty(0, np.int64)
    for d in np.unique(doc_of[short_rows]):
        lo, hi = blocks[d]
        rows = short_rows[doc_of[short_rows] == d]
        params = _selector_params(index, faiss.IDSelectorNot(faiss.IDSelectorRange(lo, hi)))
        s2, t2 = index.search(vectors[rows], int(need[rows[0]]), params=params)
        targets[rows] = -1
        weights[rows] = 0.0
        targets[rows, :t2.shape[1]] = t2
        weights[rows, :t2.shape[1]] = np.where(t2 >= 0, s2, 0.0)


def neighbour_table(vectors: np.ndarray, blocks: Sequence[tuple[int, int]], top_k: int, top_x: int,
                    margin: int = 32, ann_above: int | None = None, ann: IndexSettings | None = None) -> Neighbours:
    """Top-``top_k`` intra-document and top-``top_x`` inter-document neighbours of every row.

    ``vectors``: unit-length rows (inner product = cosine). ``blocks``: ``[lo, hi)`` row ranges,
    one per document, in order. A window never neighbours itself; a document with fewer other
    windows than ``top_k`` gives what it has. ``margin``: extra results fetched per row in the
    batched inter-document search (only speed depends on it: rows it does not cover are searched
    again with their document excluded). ``ann_above``: past this many windows the
    inter-document search is approximate, with ``ann`` (default ``EDGE_ANN``: HNSW32, efSearch 512);
    None keeps it exact at any size. Intra-document neighbours are always exact.
    """
    import faiss

    if top_k < 0 or top_x < 0:
        raise ValueError(f"top_k and top_x must be >= 0, got top_k={top_k} top_x={top_x}")
    if ann_above is not None and ann_above < 0:
        raise ValueError(f"ann_above must be >= 0 or None, got {ann_above}")
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array (windows x dim), got shape {vectors.shape}")
    _check_blocks(len(vectors), blocks)
    n = len(vectors)
    doc_of = np.repeat(np.arange(len(blocks)), [hi - lo for lo, hi in blocks])
    intra = np.full((n, top_k), -1, np.int64)
    intra_w = np.zeros((n, top_k), np.float32)
    if top_k:
        _intra(vectors, blocks, top_k, intra, intra_w)
    inter = np.full((n, top_x), -1, np.int64)
    inter_w = np.zeros((n, top_x), np.float32)
    approximate = ann_above is not None and n > ann_above
    if top_x and len(blocks) > 1:
        if approximate:
            index = approximate_index(vectors, ann or EDGE_ANN)
        else:
            index = faiss.IndexFlatIP(vectors.shape[1])
            index.add(vectors)
        _inter(index, vectors, blocks, doc_of, top_x, margin, inter, inter_w)
    return Neighbours(intra, intra_w, inter, inter_w, approximate)


def reference_inter(vectors: np.ndarray, blocks: Sequence[tuple[int, int]], top_x: int,
                    rows: np.ndarray) -> np.ndarray:
    """The exact top-``top_x`` inter-document neighbours of ``rows`` (len(rows) x top_x, -1 =
    none): one batched flat search deep enough that no row needs the selector pass (a row's
    own document can take at most its size of the results)."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    _check_blocks(len(vectors), blocks)
    doc_of = np.repeat(np.arange(len(blocks)), [hi - lo for lo, hi in blocks])
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    targets = np.full((len(vectors), top_x), -1, np.int64)
    weights = np.zeros((len(vectors), top_x), np.float32)
    deepest = max(hi - lo for lo, hi in blocks)
    _inter(index, vectors, blocks, doc_of, top_x, deepest, targets, weights, queries=rows)
    return targets[np.asarray(rows, dtype=np.int64)]


def sparse_neighbours(vectors: np.ndarray, blocks: Sequence[tuple[int, int]], top_k: int, top_x: int,
                      margin: int = 32, ann_above: int | None = None, ann: IndexSettings | None = None) -> list[Edge]:
    """``neighbour_table`` as a list of edges: per source row, intra then inter, best first."""
    return neighbour_table(vectors, blocks, top_k, top_x, margin, ann_above, ann).edges()


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
        others = [others[x] for x in ties.order([sims[i, j] for j in others], keys=others, k=top_t, what="SSG theme edge")]
        out += [(int(i), int(j), float(sims[i, j])) for j in others[:top_t]]
    return out
