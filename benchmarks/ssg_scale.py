"""The SSG edge build at 100k, 300k and 1M synthetic windows (issue 18, target 4), each size in
a fresh process so its peak resident memory is its own.

    python benchmarks/ssg_scale.py [--sizes 100000,300000,1000000] [--sample 50000] [--ann-above N] [--ef-search N]

Per size: seconds, edges, Python heap peak (tracemalloc), the resident memory the build added at
its peak (sees FAISS's C++ allocations, which tracemalloc does not) and, with ``--sample``, the
edge recall of that many random windows against their exact top-x inter-document neighbours
over the whole corpus (a flat search; it takes longer than the approximate build itself).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def run_size(n: int, sample: int = 0, ann_above: int | None = None, ef_search: int | None = None) -> dict:
    """``build_once`` at ``n`` windows in a fresh interpreter; its result row."""
    cmd = [sys.executable, __file__, "--worker", str(n), "--sample", str(sample)]
    if ann_above is not None:
        cmd += ["--ann-above", str(ann_above)]
    if ef_search is not None:
        cmd += ["--ef-search", str(ef_search)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"SSG build at {n} windows failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--sample", type=int, default=0, help="windows whose edges are checked against exact")
    parser.add_argument("--ann-above", type=int, default=None, help="override SSGConfig.ann_above")
    parser.add_argument("--ef-search", type=int, default=None, help="override the HNSW efSearch of the edge build")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        from rag_lab.compare.ssg_scale import build_once
        from rag_lab.core.index import IndexSettings
        from rag_lab.methods.ssg.config import SSGConfig
        from rag_lab.methods.ssg.edges import EDGE_ANN

        config = SSGConfig() if args.ann_above is None else SSGConfig(ann_above=args.ann_above)
        ann = EDGE_ANN if args.ef_search is None else IndexSettings(kind="ann", search=f"efSearch={args.ef_search}")
        print(json.dumps({**build_once(args.worker, config, sample=args.sample, ann=ann), "ann": ann.search}))
        return 0
    for n in (int(s) for s in args.sizes.split(",")):
        print(json.dumps(run_size(n, args.sample, args.ann_above, args.ef_search)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
