"""RAPTOR's clustering gives the same clusters in every process (raptor_cluster's docstring).

The cause pinned here: UMAP's spectral start asks SciPy's ARPACK for the Laplacian's lowest
eigenvectors from the all-ones vector; when an eigenvalue repeats, ARPACK needs random vectors,
which SciPy draws from fresh OS entropy unless it is handed a generator. Points that are all
equally far apart give such a graph (nearly complete). Before ``seeded_arpack``, a layer of twelve
such points came out as 3 clusters in one process and 4 in the next.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.linalg

from rag_lab.methods.baselines.config import RaptorConfig
from rag_lab.methods.baselines.raptor_cluster import cluster_layer, seeded_arpack, umap_reduce

ROOT = Path(__file__).resolve().parents[1]


def near_complete_laplacian(n: int) -> np.ndarray:
    """Normalised Laplacian L = I - D^-1/2 W D^-1/2 of the complete graph K_n without the edge 0-1.
    Worked out by hand: vectors on nodes 2 .. n-1 that sum to zero give W x = -x there and 0 at
    nodes 0 and 1, so L x = (1 + 1/(n-1)) x: the eigenvalue n/(n-1), n - 3 times; x = e0 - e1 gives
    W x = 0, eigenvalue 1; sqrt(degrees) gives 0; the trace (n) leaves the last one.
    For n = 6: 0, 1, 1.2, 1.2, 1.2, 1.4."""
    weights = np.ones((n, n)) - np.eye(n)
    weights[0, 1] = weights[1, 0] = 0.0
    scale = 1.0 / np.sqrt(weights.sum(axis=1))
    return np.eye(n) - scale[:, None] * weights * scale[None, :]


def lowest_eigenpairs(laplacian: np.ndarray, **kwargs):
    """What UMAP's spectral start asks of ARPACK (umap/spectral.py): the smallest eigenpairs, from
    the all-ones vector, with as many Lanczos vectors as the graph has nodes."""
    n = len(laplacian)
    return scipy.sparse.linalg.eigsh(laplacian, n - 1, which="SM", ncv=n, v0=np.ones(n), tol=1e-4, **kwargs)


def test_arpack_restarts_at_random_unless_seeded():
    laplacian = near_complete_laplacian(6)
    values, first = lowest_eigenpairs(laplacian)
    np.testing.assert_allclose(np.sort(values), [0.0, 1.0, 1.2, 1.2, 1.2], atol=1e-8)
    _, again = lowest_eigenpairs(laplacian)
    # from the all-ones start the Lanczos vectors span too little to hold the repeated eigenvalue's
    # three eigenvectors: ARPACK adds random vectors, and an unseeded call picks another basis
    assert not np.array_equal(first, again)
    with seeded_arpack(0):
        _, seeded = lowest_eigenpairs(laplacian)
        _, seeded_again = lowest_eigenpairs(laplacian)
    np.testing.assert_array_equal(seeded, seeded_again)
    with seeded_arpack(0):      # a new generator per call: the same result however many calls came before
        _, later = lowest_eigenpairs(laplacian)
    np.testing.assert_array_equal(seeded, later)


def test_seeded_arpack_is_scoped_to_its_block_and_thread():
    original = scipy.sparse.linalg.eigsh
    laplacian = near_complete_laplacian(6)
    _, explicit = lowest_eigenpairs(laplacian, rng=np.random.default_rng(5))
    other_thread = []
    with seeded_arpack(0):
        with seeded_arpack(1):
            _, inner = lowest_eigenpairs(laplacian)
        _, outer = lowest_eigenpairs(laplacian)
        _, caller_rng = lowest_eigenpairs(laplacian, rng=np.random.default_rng(5))
        worker = threading.Thread(target=lambda: other_thread.extend(lowest_eigenpairs(laplacian)[1]
                                                                     for _ in range(2)))
        worker.start()
        worker.join()
    assert scipy.sparse.linalg.eigsh is original                  # SciPy's own function is back
    with seeded_arpack(0):
        np.testing.assert_array_equal(lowest_eigenpairs(laplacian)[1], outer)   # the inner block's seed ended with it
    assert not np.array_equal(inner, outer)
    np.testing.assert_array_equal(caller_rng, explicit)          # a caller's own generator is kept
    assert not np.array_equal(other_thread[0], other_thread[1])  # another thread is not seeded
    with pytest.raises(ValueError, match="seed must be an integer, got 0.5"):
        with seeded_arpack(0.5):
            pass
    assert scipy.sparse.linalg.eigsh is original


def test_umap_of_equidistant_points_repeats():
    # twelve points all sqrt(2) apart: a nearly complete neighbour graph, the case ARPACK restarts on
    points = np.eye(12)
    np.testing.assert_array_equal(umap_reduce(points, 10, 10, seed=0), umap_reduce(points, 10, 10, seed=0))


LAYER_SCRIPT = """
import hashlib, json
import numpy as np
from rag_lab.methods.baselines.config import RaptorConfig
from rag_lab.methods.baselines.raptor_cluster import cluster_layer, umap_reduce
layer = cluster_layer(np.eye(12), [100] * 12, RaptorConfig())
layout = hashlib.sha256(umap_reduce(np.eye(12), 10, 10, seed=0).tobytes()).hexdigest()
print(json.dumps([layer.clusters, layer.global_k, layer.local_ks, layer.global_bics, layout]))
"""


def layer_in_subprocess(hash_seed: int) -> list:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", LAYER_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_layer_clusters_are_the_same_in_other_processes():
    # this process and two others with other hash seeds: the same UMAP layout to the last bit, and
    # so the same mixtures and clusters (before the fix: 3 global clusters in one, 4 in another)
    here = cluster_layer(np.eye(12), [100] * 12, RaptorConfig())
    layout = hashlib.sha256(umap_reduce(np.eye(12), 10, 10, seed=0).tobytes()).hexdigest()
    ours = json.loads(json.dumps([here.clusters, here.global_k, here.local_ks, here.global_bics, layout]))
    first, second = layer_in_subprocess(1), layer_in_subprocess(2)
    assert first == second == ours
    assert {i for c in ours[0] for i in c} == set(range(12))    # every node has a cluster
