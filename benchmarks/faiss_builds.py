"""Flat-search latency of FAISS builds side by side (issue 18, target 3), one fresh process each.

    python benchmarks/faiss_builds.py [--sizes 100000,1000000] [--repeats 3] [--other-faiss DIR]

faiss-cpu from 1.14.2 on ships one library with dynamic SIMD dispatch: its Python loader still
looks for the old separate ``swigfaiss_avx2``/``swigfaiss_avx512`` modules and logs that they
are missing, but the library itself picks AVX2 or AVX-512 kernels at run time
(``faiss.SIMDConfig``); ``FAISS_SIMD_LEVEL=NONE|AVX2|AVX512`` forces a level. Older wheels
(1.13.2 and before) carry separate generic/AVX2/AVX-512 modules chosen by ``FAISS_OPT_LEVEL``:
install one beside the project with ``pip install --no-deps --target DIR faiss-cpu==1.13.2``
and pass ``--other-faiss DIR`` to time it in the same run.

Each variant runs in its own process (the level is fixed at import); variants take turns for
``--repeats`` rounds and the median of the rounds is kept. Measured per size: the median of
100 single-query searches (k=10, the SIMD scan: one thread, one pass over the vectors) and
256 queries in one call (FAISS's BLAS path), per query; at the first size also 4,096 queries
for 37 results each (what the SSG edge build asks) and an HNSW32 index (efConstruction 80,
efSearch 256): build seconds and single-query latency.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

DIM = 384


def variants(other_faiss: Path | None) -> list[tuple[str, dict]]:
    """(label, environment changes) of every build to time; the installed faiss first."""
    out = [("installed, generic (FAISS_SIMD_LEVEL=NONE)", {"FAISS_SIMD_LEVEL": "NONE"}),
           ("installed, AVX2 (FAISS_SIMD_LEVEL=AVX2)", {"FAISS_SIMD_LEVEL": "AVX2"}),
           ("installed, as loaded (best level the CPU has)", {})]
    if other_faiss:
        path = {"PYTHONPATH": os.pathsep.join([str(other_faiss), os.environ.get("PYTHONPATH", "")])}
        out += [(f"{other_faiss.name}, generic module (FAISS_OPT_LEVEL=generic)", {**path, "FAISS_OPT_LEVEL": "generic"}),
                (f"{other_faiss.name}, AVX2 module (FAISS_OPT_LEVEL=AVX2)", {**path, "FAISS_OPT_LEVEL": "AVX2"}),
                (f"{other_faiss.name}, AVX-512 module (FAISS_OPT_LEVEL=AVX512)", {**path, "FAISS_OPT_LEVEL": "AVX512"})]
    return out


def worker(sizes: list[int]) -> dict:
    """Time flat search at each size in this process; report the faiss version and SIMD level."""
    import numpy as np
    import faiss

    level = faiss.SIMDConfig.get_level_name() if hasattr(faiss, "SIMDConfig") else faiss.get_compile_options().strip()
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        x = rng.standard_normal((n, DIM), dtype=np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        q = x[:256] + 0.1 * rng.standard_normal((256, DIM), dtype=np.float32)
        index = faiss.IndexFlatIP(DIM)
        index.add(x)
        index.search(q[:1], 10)
        single = []
        for i in range(100):
            t0 = time.perf_counter()
            index.search(q[i:i + 1], 10)
            single.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        index.search(q, 10)
        batch = time.perf_counter() - t0
        row = {"n": n, "single_ms": statistics.median(single) * 1000, "batch_ms_per_query": batch * 1000 / 256}
        if n == sizes[0]:                   # the SSG edge build's pattern, and HNSW, at the first size only
            t0 = time.perf_counter()
            index.search(x[:4096], 37)
            row["batch4096_k37_ms_per_query"] = (time.perf_counter() - t0) * 1000 / 4096
            t0 = time.perf_counter()
            hnsw = faiss.index_factory(DIM, "HNSW32", faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction, hnsw.hnsw.efSearch = 80, 256
            hnsw.add(x)
            row["hnsw_build_s"] = time.perf_counter() - t0
            times = []
            for i in range(100):
                t0 = time.perf_counter()
                hnsw.search(q[i:i + 1], 10)
                times.append(time.perf_counter() - t0)
            row["hnsw_single_ms"] = statistics.median(times) * 1000
            del hnsw
        rows.append(row)
        del index, x
    return {"faiss": faiss.__version__, "level": level, "omp_threads": faiss.omp_get_max_threads(), "rows": rows}


def compare(sizes: list[int], other_faiss: Path | None = None, repeats: int = 3) -> list[dict]:
    """Every variant's median (over ``repeats`` interleaved rounds) single-query and batched
    latency at each size."""
    found: dict[str, list[dict]] = {}
    meta: dict[str, dict] = {}
    for _ in range(repeats):
        for label, env in variants(other_faiss):
            cmd = [sys.executable, __file__, "--worker", "--sizes", ",".join(map(str, sizes))]
            done = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            meta[label] = {k: result[k] for k in ("faiss", "level", "omp_threads")}
            found.setdefault(label, []).append(result)
    out = []
    for label, runs in found.items():
        for i, n in enumerate(sizes):
            keys = runs[0]["rows"][i].keys() - {"n"}
            out.append({"build": label, **meta[label], "n": n, "rounds": len(runs),
                        **{k: statistics.median(r["rows"][i][k] for r in runs) for k in sorted(keys)}})
    return out


def describe(row: dict) -> str:
    """One printed line per build and size."""
    extra = (f"  4096x37 {row['batch4096_k37_ms_per_query']:5.2f} ms/query  HNSW build {row['hnsw_build_s']:5.1f} s, "
             f"{row['hnsw_single_ms']:5.2f} ms" if "hnsw_build_s" in row else "")
    return (f"{row['build']:58s} {row['faiss']:7s} {row['level']:16s} n={row['n']:>9,}  single "
            f"{row['single_ms']:6.2f} ms  batched {row['batch_ms_per_query']:5.2f} ms/query{extra}")


def loaded_level() -> str:
    """The SIMD level the installed faiss runs at in this process."""
    import faiss

    return faiss.SIMDConfig.get_level_name() if hasattr(faiss, "SIMDConfig") else faiss.get_compile_options().strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--other-faiss", type=Path, default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker:
        print(json.dumps(worker(sizes)))
        return 0
    for row in compare(sizes, args.other_faiss, args.repeats):
        print(describe(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
