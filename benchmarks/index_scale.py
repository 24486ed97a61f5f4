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
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab.compare.ssg_scale import isotropic_windows, synthetic_corpus  # noqa: E402
from rag_lab.core.index import IndexSettings, VectorIndex, recall_at_k  # noqa: E402


def median_latency_ms(index: VectorIndex, queries, k: int = 10) -> float:
    index.search(queries[0], k)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, k)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def trade_off(index: VectorIndex, queries, exact, searches: Sequence[str]) -> list[dict]:
    """Median latency and recall@10 of an approximate ``index`` under each search setting
    (``faiss.ParameterSpace`` strings such as "efSearch=512" or "nprobe=32"), one build."""
    import faiss

    rows = []
    for search in searches:
        faiss.ParameterSpace().set_index_parameters(index.index, search)
        ms = median_latency_ms(index, queries)
        _, found = index.search(queries, 10)
        rows.append({"search": search, "median_ms": ms, "recall_at_10": recall_at_k(found, exact)})
    return rows


def measure(n: int, n_queries: int = 200, settings: IndexSettings | None = None, isotropic: bool = False,
            sweep: Sequence[str] = (), others: Sequence[tuple[IndexSettings, Sequence[str]]] = ()) -> dict:
    """Build seconds, median single-query latency (ms) and recall@10 of the default index
    against flat, over ``n`` vectors; ``sweep``: further search settings of that same build;
    ``others``: further approximate indexes (settings, search settings to sweep) on the same vectors."""
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
    row = {"n": n, "vectors": "isotropic" if isotropic else "synthetic windows", "queries": len(queries),
           "flat_build_s": flat_build, "flat_median_ms": flat_ms,
           "index": "flat" if index.exact else settings.factory, "settings": f"{settings.build} {settings.search}".strip(),
           "build_s": build, "median_ms": ms, "recall_at_10": recall_at_k(found, exact),
           "sweep": trade_off(index, queries, exact, sweep) if sweep and not index.exact else []}
    del index
    row["others"] = []
    for other, searches in others:
        t0 = time.perf_counter()
        alt = VectorIndex(base.shape[1], other).add(base, ids)
        row["others"].append({"index": other.factory, "build": other.build, "build_s": time.perf_counter() - t0,
                              "sweep": trade_off(alt, queries, exact, searches)})
        del alt
    return row


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
