"""Speed and memory targets, measured in one process and one run (not part of the test suite).

    python benchmarks/run.py [--out report.json] [--methods naive,semantic,...] [--quick]

Targets:
- every non-LLM method builds its index in <= 1.5x the pure encoder time of what it embeds;
- GraLC's index time <= 3x naive's on the same corpus;
- query latency (median) of non-LLM methods <= 50 ms with 10,000 chunks in the index;
- the SSG graph build over 100,000 windows uses memory that grows linearly (peak at 100k
  windows <= 2.5x the peak at 50k).
Prints each target with its measured value and whether it holds, and writes a JSON report
shaped {"targets": {NAME: {"measured": x, "limit": y, "holds": bool}}, "details": {...}}.
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

from rag_lab import load_dataset  # noqa: E402
from rag_lab.atomic import write_text  # noqa: E402
from rag_lab.compare.benchmarking import query_latency_ms, replicate, time_index, warm_up  # noqa: E402
from rag_lab.embedding import Embedder  # noqa: E402
from rag_lab.methods import available_methods, get_retriever  # noqa: E402

ENCODER_RATIO_LIMIT = 1.5
GRALC_VS_NAIVE_LIMIT = 3.0
LATENCY_LIMIT_MS = 50.0
LATENCY_CHUNKS = 10_000
SSG_MEMORY_GROWTH_LIMIT = 2.5


def target(measured: float, limit: float) -> dict:
    return {"measured": round(float(measured), 4), "limit": limit, "holds": bool(measured <= limit)}


def uses_llm(name: str, documents) -> bool:
    return bool(get_retriever(name).planned_llm_calls(documents[:1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--methods", default=None, help="comma-separated; default every registered non-LLM method")
    parser.add_argument("--dataset", default="italian_cuisine")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run, targets still printed)")
    args = parser.parse_args(argv)

    docs = load_dataset(args.dataset).documents
    names = args.methods.split(",") if args.methods else [n for n in available_methods() if not uses_llm(n, docs)]
    model = Embedder(use_cache=False)
    warm_up(model)
    targets, details = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            result = time_index(lambda e, n=name: get_retriever(n, embedder=e), docs, model, Path(tmp) / name)
            details[name] = {k: v for k, v in result.items() if k != "retriever"}
            targets[f"index_vs_encoder[{name}]"] = target(result["ratio"], ENCODER_RATIO_LIMIT)
            print(f"{name:28s} index {result['index_seconds']:.2f}s  encoder {result['encoder_seconds']:.2f}s  "
                  f"ratio {result['ratio']:.2f}  chunks {result['chunks']}", flush=True)
        if "naive" in details:
            for name in (n for n in details if n.startswith("gralc")):
                ratio = details[name]["index_seconds"] / details["naive"]["index_seconds"]
                targets[f"gralc_index_vs_naive[{name}]"] = target(ratio, GRALC_VS_NAIVE_LIMIT)

        size = LATENCY_CHUNKS // (10 if args.quick else 1)
        queries = [q.question for q in load_dataset(args.dataset).questions][:20]
        for name in names:
            per_copy = max(details[name]["chunks"], 1)
            copies = max(1, -(-size // per_copy))
            retriever = get_retriever(name, embedder=Embedder(cache_dir=Path(tmp) / name))
            retriever._embedder._model = model.model
            retriever.build(replicate(docs, copies))
            lat = query_latency_ms(retriever, queries)
            details[name]["latency"] = {**lat, "chunks": len(retriever.chunks)}
            targets[f"query_latency_ms[{name}]"] = target(lat["median_ms"], LATENCY_LIMIT_MS)
            print(f"{name:28s} {len(retriever.chunks)} chunks: median {lat['median_ms']:.1f} ms, "
                  f"p95 {lat['p95_ms']:.1f} ms", flush=True)

        try:
            from rag_lab.compare.ssg_scale import memory_growth  # provided by the SSG method
        except ImportError:
            print("SSG memory target skipped: rag_lab.compare.ssg_scale.memory_growth not available")
        else:
            sizes = (5_000, 10_000) if args.quick else (50_000, 100_000)
            growth = memory_growth(sizes)
            details["ssg_memory"] = growth
            targets["ssg_memory_growth_100k_vs_50k"] = target(growth["ratio"], SSG_MEMORY_GROWTH_LIMIT)

    # section "encoder_backends": torch fp32 / ONNX fp32 / ONNX int8 (benchmarks/encoder_backends.py)
    from encoder_backends import encoder_targets, run as run_encoder_backends
    details["encoder_backends"] = run_encoder_backends(quick=args.quick)
    targets.update(encoder_targets(details["encoder_backends"], target))

    print("\nTARGETS")
    for name, t in targets.items():
        print(f"  {'holds ' if t['holds'] else 'MISSED'}  {name}: {t['measured']} (limit {t['limit']})")
    if args.out:
        write_text(args.out, json.dumps({"targets": targets, "details": details}, indent=2, default=str))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
