"""Query latency of ``VectorIndex`` at scale and the approximate index's recall@10 against flat
(issue 18, target 3).

    python benchmarks/index_scale.py [--size 1000000] [--queries 200] [--isotropic]

Chunks are synthetic window vectors (``rag_lab.compare.ssg_scale.synthetic_corpus``: the
similarity profile of MiniLM windows of the shipped corpora); queries are windows of further
documents not in the index. Both indexes hold the same vectors: the flat one (exact, the
reference for recall) and the default ``VectorIndex`` (approximate above
``IndexSettings.flat_max``). Latency is the median of single-query searches (k=10).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab.compare.ssg_scale import isotropic_windows, synthetic_corpus  # noqa: E402
from rag_lab.index import IndexSettings, VectorIndex, recall_at_k  # noqa: E402


def median_latency_ms(index: VectorIndex, queries, k: int = 10) -> float:
    index.search(queries[0], k)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, k)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def measure(n: int, n_queries: int = 200, settings: IndexSettings | None = None, isotropic: bool = False) -> dict:
    """Build seconds, median single-query latency (ms) and recall@10 of the default index
    against flat, over ``n`` vectors."""
    settings = settings or IndexSettings()
    spread = 100                                     # one query every 100 rows of the extra documents
    if isotropic:
        vectors = isotropic_windows(n + n_queries)
        base, queries = vectors[:n], vectors[n:]
    else:
        vectors, _ = synthetic_corpus(n + n_queries * spread)
        base, queries = vectors[:n], vectors[n::spread][:n_queries]
    ids = [str(i) for i in range(n)]
    t0 = time.perf_counter()
    flat = VectorIndex(base.shape[1], IndexSettings(kind="flat")).add(base, ids)
    flat_build = time.perf_counter() - t0
    flat_ms = median_latency_ms(flat, queries)
    _, exact = flat.search(queries, 10)
    del flat
    t0 = time.perf_counter()
    index = VectorIndex(base.shape[1], settings).add(base, ids)
    build = time.perf_counter() - t0
    ms = median_latency_ms(index, queries)
    _, found = index.search(queries, 10)
    return {"n": n, "vectors": "isotropic" if isotropic else "synthetic windows", "queries": len(queries),
            "flat_build_s": flat_build, "flat_median_ms": flat_ms,
            "index": "flat" if index.exact else settings.factory, "settings": f"{settings.build} {settings.search}".strip(),
            "build_s": build, "median_ms": ms, "recall_at_10": recall_at_k(found, exact)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--isotropic", action="store_true", help="uniformly random vectors (the worst case)")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.size, args.queries, isotropic=args.isotropic), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
