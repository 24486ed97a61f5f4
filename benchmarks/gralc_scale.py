"""GraLC's six strategies indexing full-text articles at the paper's scale (issue 18, target 5).

    python benchmarks/gralc_scale.py [--articles 200] [--strategies gralc-naive,...] [--out table.json]

The paper's Table 3 timed 200 full-text PMC articles. The project ships 12 full-text articles
(biomed_articles, ~2,200 words each); they are cycled to ``--articles`` with
``distinct_copies``, whose copies differ only in letter case: identical word pieces, chunks and
concepts, so each copy costs what an article of that length costs, but no cache or duplicate
check can skip it. Per strategy: index seconds (cold caches), chunks, word pieces encoded, the
pure encoder time of exactly those inputs replayed through the model, and their ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STRATEGIES = ("gralc-naive", "gralc-semantic", "gralc-late", "gralc-structure", "gralc-kg", "gralc-graph")


def measure(n_articles: int, model, strategies=STRATEGIES, log=print) -> list[dict]:
    """One row per strategy, each built once over the same ``n_articles`` articles."""
    from rag_lab import load_dataset
    from rag_lab.compare.benchmarking import distinct_copies, time_index
    from rag_lab.methods import get_retriever

    docs = distinct_copies(load_dataset("biomed_articles").documents, n_articles)
    words = sum(len(d.text.split()) for d in docs)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in strategies:
            r = time_index(lambda e, n=name: get_retriever(n, embedder=e), docs, model, Path(tmp) / name)
            row = {"strategy": name, "articles": len(docs), "words": words, "chunks": r["chunks"],
                   "tokens": r["tokens"], "index_seconds": r["index_seconds"],
                   "encoder_seconds": r["encoder_seconds"], "ratio": r["ratio"]}
            rows.append(row)
            log(f"{name:16s} {len(docs)} articles: {row['chunks']:6d} chunks  {row['tokens']:8d} word pieces  "
                f"index {row['index_seconds']:8.1f} s  encoder {row['encoder_seconds']:8.1f} s  ratio {row['ratio']:.2f}")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=200)
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated (default all six)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.strategies.split(",")) - set(STRATEGIES))
    if unknown:
        parser.error(f"unknown strategies {unknown}; choose from {STRATEGIES}")
    from rag_lab.caching.atomic import write_text
    from rag_lab.compare.benchmarking import warm_up
    from rag_lab.core.embedding import Embedder

    model = Embedder(use_cache=False)
    warm_up(model)
    rows = measure(args.articles, model, strategies=args.strategies.split(","))
    if args.out:
        write_text(args.out, json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
