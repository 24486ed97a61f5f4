"""Cold against warm index builds, the timing tests/test_notebook_11.py no longer asserts: per method,
``repeats`` pairs of builds made as notebook 11 makes them (``rag_lab.compare.costs.timed_builds``: a
cold build in an empty cache, then a warm rebuild in the same cache), and the ratio of the mean cold to
the mean warm seconds, taken within this one run. The test checks what the two measure (a cold build
encodes its texts, a warm one finds them cached); this says by how much the first costs more.

    python benchmarks/cold_warm.py [--methods naive,semantic] [--dataset italian_cuisine] [--repeats 3] [--out FILE]

Timing, not a test: run it alone on an idle machine, under the model lock.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab import load_dataset  # noqa: E402
from rag_lab.caching.atomic import write_text  # noqa: E402
from rag_lab.compare.benchmarking import warm_up  # noqa: E402
from rag_lab.compare.costs import t_interval, timed_builds  # noqa: E402
from rag_lab.core.embedding import shared_embedder  # noqa: E402
from rag_lab.methods import get_retriever  # noqa: E402


def measure(methods: list[str], dataset: str, repeats: int) -> dict:
    model = shared_embedder()
    warm_up(model)
    documents = load_dataset(dataset).documents
    out = {}
    for name in methods:
        seconds = timed_builds(lambda e: get_retriever(name, embedder=e), documents, model, repeats)
        (cold, *_), (warm, *_) = t_interval(seconds["cold"]), t_interval(seconds["warm"])
        out[name] = {"cold_seconds": seconds["cold"], "warm_seconds": seconds["warm"],
                     "cold_over_warm": cold / warm if warm > 0 else float("inf")}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="naive,semantic", help="comma-separated registered method names")
    parser.add_argument("--dataset", default="italian_cuisine")
    parser.add_argument("--repeats", type=int, default=3, help="cold/warm pairs per method (at least 1)")
    parser.add_argument("--out", type=Path, default=None, help="write the measurements here as JSON")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    results = measure([m.strip() for m in args.methods.split(",") if m.strip()], args.dataset, args.repeats)
    for name, r in results.items():
        print(f"{name}: cold / warm = {r['cold_over_warm']:.2f} (means over {args.repeats} pairs; "
              f"cold {sum(r['cold_seconds']) / args.repeats:.2f} s, warm {sum(r['warm_seconds']) / args.repeats:.2f} s)")
    if args.out:
        write_text(args.out, json.dumps({"dataset": args.dataset, "repeats": args.repeats, "methods": results},
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
