"""RAPTOR's clustering of one tree layer: UMAP, global then local Gaussian mixtures chosen by BIC,
soft membership, and re-clustering of clusters too long for the summariser.

After Sarthi et al., "RAPTOR: Recursive Abstractive Processing for Tree-Organized Retrieval" (§3,
"Clustering Algorithm"), with the settings of the authors' reference code (parthsarthi03/raptor,
``cluster_utils.py``) where the paper gives none:

1. global stage: the layer's embeddings are reduced by UMAP (cosine metric) to ``reduce_dim``
   dimensions (at most n - 2) with n_neighbors = int(sqrt(n - 1)), a wide view of the layer;
2. a Gaussian mixture (full covariances) is fitted for every k = 1 .. min(max_clusters, n) - 1 and
   the k with the lowest BIC is kept;
3. soft membership: a node belongs to every component whose posterior exceeds
   ``membership_threshold``;
4. local stage: each global cluster of more than ``reduce_dim + 1`` nodes is reduced again by
   UMAP from its original embeddings with ``local_neighbors`` neighbours (a close view) and
   clustered the same way; a smaller global cluster stays one local cluster;
5. a local cluster of several nodes whose texts together exceed ``max_cluster_tokens`` (the
   summariser's input limit) is clustered again on its own, recursively.

What is ours, and why:
- a node always belongs to its most likely component as well, so no node is left without a
  parent (with more than ten components every posterior can be below 0.1);
- a layer of one or two nodes is one cluster without reduction (UMAP needs three points);
  UMAP's n_neighbors is kept in [2, n - 1], since tiny layers give int(sqrt(n - 1)) < 2;
- one seed (``seed``) drives UMAP and every mixture, so a build is repeatable (UMAP then runs
  single-threaded); the reference code seeds only its mixtures;
- UMAP's seed does not reach all of it: its spectral start (``umap.spectral``) asks SciPy's ARPACK
  (``eigsh``) for the graph Laplacian's lowest eigenvectors from the all-ones start vector. When an
  eigenvalue repeats (a small tight cluster, e.g. a dozen nodes with n_neighbors 10, is nearly a
  complete graph, whose Laplacian has one eigenvalue many times over), the Lanczos iteration runs out
  of new directions and ARPACK asks for a random vector, which SciPy draws from an unseeded
  generator (fresh OS entropy on every call). The start then differs, UMAP's layout and the
  mixtures follow, and the same corpus gave another tree in every run. ``seeded_arpack`` gives
  ARPACK the seed while UMAP runs, so a clustering depends only on its input
  (tests/test_raptor_determinism.py checks this across processes). umap-learn's open issue
  #1277 reports the same cause with duplicated rows;
- an oversized cluster that clustering would return whole (BIC prefers one component) is split
  by the best mixture of at least two components with hard assignment, and kept whole only if
  even that cannot divide it. The reference code would recurse forever there.
- the same tree on every machine (docs/reproducibility.md). UMAP's layout is chaotic: sentence
  vectors moved by 1e-9 gave another global k (13-16 on italian_cuisine), and so does another
  CPU, whose kernels round the vectors' last bits differently. Three choices make it depend only
  on what is stable: (a) UMAP gets its neighbour graph from us (``knn_graph``): cosine distances
  in float64, rounded to ``KNN_DISTANCE_STEP`` (0.01), neighbours ordered by rounded distance and
  then row, so noise changes the graph only where a distance lies within noise of a rounding
  boundary (noted as a near-tie, core/ties.py); the paper's method is unchanged (UMAP on the
  cosine kNN graph), only its inputs have a stated precision; (b) UMAP starts from seeded random
  coordinates (``init="random"``), not from the spectral layout, whose eigenvectors come from
  BLAS/ARPACK arithmetic that differs per CPU (RAPTOR's paper does not name an initialisation);
  (c) numba compiles UMAP for the generic x86-64 CPU (``NUMBA_CPU_NAME=generic``, set when
  rag_lab is imported): compiled for the host, the same inputs gave another layout on AVX-512
  than on AVX2 (measured: global k 10 vs 14). Mixtures then compare BIC at ``core.ties``'
  precision (ties: the smaller k) and soft membership notes posteriors within noise of the
  threshold. Measured on italian_cuisine's 85 leaves: 8 of 8 runs with vectors moved by
  N(0, 1e-6) gave the identical layer clustering (before: 6 different ones in 6 runs);
- numba's on-disk cache is switched on for UMAP's compiled functions (``enable_numba_cache``):
  the first UMAP call of a process otherwise spends ~10 s compiling them again.
"""
from __future__ import annotations

import math
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache, wraps
from typing import Iterator, Sequence

import numpy as np

from ...core import ties
from .config import RaptorConfig


@lru_cache(maxsize=1)
def enable_numba_cache() -> int:
    """Turn on numba's file cache for every compiled function of umap-learn's modules that lacks
    it (numba's ``Dispatcher.enable_caching``); returns how many were switched on. Compiled code
    goes where numba keeps its cache (beside the module, or NUMBA_CACHE_DIR)."""
    import importlib

    from numba.core.registry import CPUDispatcher

    switched = 0
    for name in ("umap.umap_", "umap.distances", "umap.layouts", "umap.utils", "umap.spectral", "umap.sparse"):
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher) and type(obj._cache).__name__ == "NullCache":
                obj.enable_caching()
                switched += 1
    return switched


_ARPACK_SEED = threading.local()     # the seed of the seeded_arpack block this thread is in, if any
_ARPACK_LOCK = threading.Lock()
_ARPACK_USERS = 0                    # seeded_arpack blocks open in this process (all threads)


def _eigsh_with_thread_seed(eigsh):
    """``eigsh`` that, inside a ``seeded_arpack`` block of the calling thread and when the caller
    passes no ``rng``, gives ARPACK a generator made from that block's seed (a new one per call,
    so a result does not depend on how many calls came before); elsewhere it is ``eigsh`` itself."""
    @wraps(eigsh)
    def seeded(*args, **kwargs):
        seed = getattr(_ARPACK_SEED, "seed", None)
        if seed is not None and kwargs.get("rng") is None:
            kwargs["rng"] = np.random.default_rng(seed)
        return eigsh(*args, **kwargs)
    seeded.unseeded = eigsh
    return seeded


@contextmanager
def seeded_arpack(seed: int) -> Iterator[None]:
    """Within the block, ``scipy.sparse.linalg.eigsh`` called without ``rng`` by this thread draws
    ARPACK's restart vectors from ``seed`` instead of fresh OS entropy (module docstring: UMAP's
    spectral start). SciPy's function is swapped for a pass-through wrapper while any block is
    open, in any thread, and put back when the last one closes; other threads' calls, and calls
    that pass ``rng``, are unchanged."""
    global _ARPACK_USERS
    import scipy.sparse.linalg as sparse_linalg

    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seeded_arpack: seed must be an integer, got {seed!r}")
    with _ARPACK_LOCK:
        if _ARPACK_USERS == 0:
            sparse_linalg.eigsh = _eigsh_with_thread_seed(sparse_linalg.eigsh)
        _ARPACK_USERS += 1
    outer = getattr(_ARPACK_SEED, "seed", None)
    _ARPACK_SEED.seed = int(seed)
    try:
        yield
    finally:
        _ARPACK_SEED.seed = outer
        with _ARPACK_LOCK:
            _ARPACK_USERS -= 1
            if _ARPACK_USERS == 0 and hasattr(sparse_linalg.eigsh, "unseeded"):   # unless replaced meanwhile
                sparse_linalg.eigsh = sparse_linalg.eigsh.unseeded


KNN_DISTANCE_STEP = 0.01    # the stated precision of the cosine distances UMAP's neighbour graph is built from


def knn_graph(vectors: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``n_neighbors`` nearest rows (itself first) and their cosine distances, computed in
    float64 and rounded to ``KNN_DISTANCE_STEP``; ties by row. Near-ties are noted (core/ties.py) on
    both sides of the neighbour cut: a kept neighbour whose distance lies within noise of a rounding
    boundary (its rounded distance reaches UMAP either way), and a node outside the cut — at any
    position — that rounding the other way would bring inside; the gap is the distance to the boundary."""
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    if not np.all(norms > 0):
        raise ValueError("knn_graph: every vector must be non-zero (cosine distance)")
    v = v / norms
    n = len(v)
    k = min(n_neighbors, n)
    raw = np.clip(1.0 - v @ v.T, 0.0, 2.0)
    np.fill_diagonal(raw, 0.0)
    steps = raw / KNN_DISTANCE_STEP
    rounded = np.round(steps) * KNN_DISTANCE_STEP
    to_boundary = raw - (np.floor(steps) + 0.5) * KNN_DISTANCE_STEP       # signed distance to the nearest .5 step
    near_boundary = np.abs(to_boundary) <= ties.NOISE
    indices = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float32)
    for i in range(n):
        others = np.lexsort((np.arange(n), rounded[i], np.arange(n) != i))   # itself, then distance, then row
        indices[i], distances[i] = others[:k], rounded[i, others[:k]]
        for place, j in enumerate(others[1:], start=1):
            if near_boundary[i, j] and (place < k or (to_boundary[i, j] > 0 and _would_enter(rounded[i], others, k, j))):
                ties.note("RAPTOR kNN distance rounding", f"node {i}", f"node {j}", float(to_boundary[i, j]))
    return indices, distances


def _would_enter(distances: np.ndarray, others: np.ndarray, k: int, j: int) -> bool:
    """Whether node ``j``, outside the first ``k`` of ``others`` (ordered by rounded distance, then row),
    comes inside when its distance, just above a rounding boundary, rounds one step down instead."""
    last = others[k - 1]
    lowered = distances[j] - KNN_DISTANCE_STEP
    return bool(lowered < distances[last] - 1e-12 or (abs(lowered - distances[last]) <= 1e-12 and j < last))


def check_numba_target() -> None:
    """Warn when numba compiles for the host CPU rather than the generic one (module docstring, (c))."""
    from numba.core import config

    if str(config.CPU_NAME).lower() != "generic":
        warnings.warn(f"numba compiles for CPU {config.CPU_NAME or 'host'!r}, not 'generic': RAPTOR's trees may "
                      "differ from other machines' (import rag_lab before numba, or set NUMBA_CPU_NAME=generic)",
                      RuntimeWarning, stacklevel=3)


def umap_reduce(vectors: np.ndarray, dim: int, n_neighbors: int, seed: int) -> np.ndarray:
    """UMAP (cosine) of ``vectors`` to min(dim, n - 2) dimensions, n_neighbors kept in [2, n - 1],
    on our neighbour graph (``knn_graph``) from seeded random coordinates; ``seed`` drives UMAP
    (and ARPACK, should UMAP call it: ``seeded_arpack``)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(vectors)
    if n < 3:
        raise ValueError(f"UMAP needs at least 3 points, got {n}")
    check_numba_target()
    enable_numba_cache()
    import umap

    neighbors = max(2, min(n_neighbors, n - 1))
    indices, distances = knn_graph(vectors, neighbors)
    reducer = umap.UMAP(n_neighbors=neighbors, n_components=max(1, min(dim, n - 2)), metric="cosine",
                        random_state=seed, n_jobs=1, init="random", precomputed_knn=(indices, distances, None))
    with warnings.catch_warnings(), seeded_arpack(seed):
        # UMAP warns that without its search index it cannot transform new points: RAPTOR never does
        warnings.filterwarnings("ignore", message=".*knn_search_index.*")
        warnings.filterwarnings("ignore", message=".*precomputed_knn.*")
        warnings.filterwarnings("ignore", message=".*k >= N.*")
        return reducer.fit_transform(vectors)


@dataclass
class Mixture:
    """The BIC-best mixture of one clustering call: its k, BIC per k tried, posteriors per point."""

    k: int
    bics: dict[int, float]
    probs: np.ndarray


def best_mixture(points: np.ndarray, max_clusters: int, seed: int, min_k: int = 1) -> Mixture:
    """Gaussian mixtures for k = min_k .. min(max_clusters, n) - 1 (RAPTOR's code's range); the
    lowest BIC wins (ties: the smaller k). Needs at least min_k + 1 points."""
    from sklearn.mixture import GaussianMixture

    points = np.asarray(points, dtype=np.float64)
    k_max = min(max_clusters, len(points)) - 1
    if k_max < min_k:
        raise ValueError(f"a mixture of at least {min_k} component(s) needs more than {min_k} points "
                         f"(and max_clusters > {min_k}); got {len(points)} points, max_clusters {max_clusters}")
    bics, models = {}, {}
    for k in range(min_k, k_max + 1):
        models[k] = GaussianMixture(n_components=k, covariance_type="full", random_state=seed).fit(points)
        bics[k] = float(models[k].bic(points))
    ks = sorted(bics)
    best = ks[ties.best([-bics[k] for k in ks], what="RAPTOR BIC", names=lambda i: f"k={ks[i]}")]
    return Mixture(best, bics, models[best].predict_proba(points))


def soft_clusters(probs: np.ndarray, threshold: float, hard: bool = False) -> list[list[int]]:
    """Members (row numbers) of each component: rows whose posterior exceeds ``threshold``, plus
    the rows for which it is the most likely component; ``hard``: the latter only. Empty
    components are dropped; order = component order."""
    probs = np.asarray(probs)
    if probs.ndim != 2:
        raise ValueError(f"probs must be a (points, components) matrix, got shape {probs.shape}")
    top = [ties.best(row, what="RAPTOR most likely component", names=lambda j, i=i: f"node {i} component {j}")
           for i, row in enumerate(probs)]
    clusters = []
    for j in range(probs.shape[1]):
        members = [i for i in range(len(probs)) if top[i] == j or (
            not hard and ties.above(probs[i, j], threshold, what="RAPTOR soft membership", name=f"node {i} component {j}"))]
        if members:
            clusters.append(members)
    return clusters


@dataclass
class LayerClustering:
    """One layer's clusters (row numbers into the layer) and how they came about."""

    clusters: list[list[int]]
    global_k: int = 0                                           # the layer's own global stage
    global_bics: dict[int, float] = field(default_factory=dict)
    local_ks: list[int] = field(default_factory=list)           # local clusters per global cluster
    reclustered: int = 0        # oversized clusters clustered again
    forced_splits: int = 0      # of which BIC preferred one component (split with k >= 2)


def global_then_local(vectors: np.ndarray, config: RaptorConfig, force_split: bool = False,
                      record: LayerClustering | None = None) -> list[list[int]]:
    """Steps 1-4 of the module docstring for one set of nodes; ``force_split``: at least two
    global components, hard assignment (the guard against an indivisible oversized cluster).
    ``record`` receives the global k, its BICs and the local cluster counts."""
    n = len(vectors)
    if n == 0:
        return []
    if force_split and min(config.max_clusters, n) - 1 < 2:     # no mixture of two components fits
        return [[i] for i in range(n)]
    if n <= 2:
        return [list(range(n))]
    dim, seed = config.reduce_dim, config.seed
    reduced = umap_reduce(vectors, dim, int(math.sqrt(n - 1)), seed)
    mixture = best_mixture(reduced, config.max_clusters, seed, min_k=2 if force_split else 1)
    global_clusters = soft_clusters(mixture.probs, config.membership_threshold, hard=force_split)
    if record is not None:
        record.global_k, record.global_bics = mixture.k, mixture.bics
    out: list[list[int]] = []
    for members in global_clusters:
        if len(members) <= dim + 1:
            local = [list(range(len(members)))]
        else:
            local_reduced = umap_reduce(vectors[members], dim, config.local_neighbors, seed)
            local_mixture = best_mixture(local_reduced, config.max_clusters, seed)
            local = soft_clusters(local_mixture.probs, config.membership_threshold)
        if record is not None:
            record.local_ks.append(len(local))
        out += [[members[i] for i in group] for group in local]
    return list(map(list, dict.fromkeys(tuple(c) for c in out)))   # a repeated member set once


def cluster_layer(vectors: np.ndarray, tokens: Sequence[int], config: RaptorConfig) -> LayerClustering:
    """All five steps of the module docstring: clusters of a layer (ascending rows; clusters in
    the order of their members), each within ``max_cluster_tokens`` unless it is one node or
    cannot be divided."""
    vectors = np.asarray(vectors, dtype=np.float32)
    tokens = np.asarray(tokens, dtype=np.int64)
    if len(vectors) != len(tokens):
        raise ValueError(f"got {len(tokens)} token counts for {len(vectors)} vectors")
    record = LayerClustering([])

    def divide(rows: list[int], force: bool, top: bool = False) -> list[list[int]]:
        found = global_then_local(vectors[rows], config, force, record if top else None)
        groups = [[rows[i] for i in g] for g in found]
        out = []
        for g in groups:
            if len(g) == 1 or tokens[g].sum() <= config.max_cluster_tokens:
                out.append(g)
            elif len(g) < len(rows):
                record.reclustered += 1
                out += divide(g, False)
            elif not force:
                record.forced_splits += 1
                out += divide(g, True)
            else:
                out.append(g)       # even a forced split left it whole: keep it
        return out

    clusters = divide(list(range(len(vectors))), False, top=True) if len(vectors) else []
    record.clusters = sorted(clusters)      # mixture components come in no meaningful order
    return record
