"""Speed and memory targets, measured in one process and one run (not part of the test suite).

    python benchmarks/run.py [--out report.json] [--only SECTION,...] [--quick] [--paper-scale]

Sections and their targets (``--only`` picks sections; every ratio is taken within one run):
- encoder: every non-LLM method builds its index in <= 1.5x the pure encoder time of what it
  embeds (the second cold build in the process: the first pays its code path's imports);
  GraLC's index time <= 3x naive's on the same corpus;
- latency: query latency (median) of non-LLM methods <= 50 ms with 10,000 chunks in the index;
- index: at 1,000,000 synthetic chunks the default VectorIndex (approximate above
  IndexSettings.flat_max) answers a query in <= 10 ms (median) with recall@10 >= 0.95 against
  flat (benchmarks/index_scale.py); the same build is also searched at other efSearch values,
  and an IVF index is built and swept beside it (the trade-off table of docs/performance.md);
- faiss: the installed faiss runs AVX2 kernels or better; flat-search latency of its generic,
  AVX2 and as-loaded levels side by side (benchmarks/faiss_builds.py; ``--other-faiss DIR`` adds
  an older wheel installed in DIR);
- ssg: the SSG edge build over 1,000,000 synthetic windows finishes in <= 30 min, its edges
  recall >= 0.95 of the exact top-x on a 50,000-window sample, and its memory per window at
  1M is <= 1.25x that at 100k (benchmarks/ssg_scale.py, one fresh process per size);
- gralc: GraLC's six strategies on ``--gralc-articles`` full-text articles (default 24,
  ``--paper-scale`` = 200 like the paper's Table 3), each <= 1.5x the pure encoder time of
  its tokens (benchmarks/gralc_scale.py); below 200 articles it also prints the time at 200
  estimated linearly from the measured one (each article is chunked, linked and encoded alone);
- reproduce: every notebook run cold (empty RAG_LAB_CACHE) in <= 10 min, then warm in <= 3 min,
  with the same tables (benchmarks/reproduce_timing.py; about 15 minutes);
- encoder_backends: tokens/s of torch fp32, ONNX fp32 and ONNX int8 in one run, and the MRR and
  Recall@5 each backend gives per method on the shipped data sets (benchmarks/encoder_backends.py).
``--quick`` shrinks every size (a smoke run; targets are still printed, against the same limits).
Prints each target with its measured value, its limit and whether it holds, and writes a JSON
report shaped {"targets": {NAME: {"measured": x, "limit": y, "holds": bool}}, "details": {...}}.
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
from rag_lab.caching.atomic import write_text  # noqa: E402
from rag_lab.compare.benchmarking import query_latency_ms, replicate, time_index, warm_up  # noqa: E402
from rag_lab.core.embedding import Embedder  # noqa: E402
from rag_lab.evaluation.harness import build  # noqa: E402
from rag_lab.evaluation.retrievers import planned_llm_calls  # noqa: E402
from rag_lab.methods import available_methods, get_retriever  # noqa: E402

SECTIONS = ("encoder", "latency", "index", "faiss", "ssg", "gralc", "reproduce", "encoder_backends")
ENCODER_RATIO_LIMIT = 1.5
GRALC_VS_NAIVE_LIMIT = 3.0
LATENCY_LIMIT_MS = 50.0
LATENCY_CHUNKS = 10_000
INDEX_CHUNKS = 1_000_000
INDEX_LATENCY_LIMIT_MS = 10.0
RECALL_FLOOR = 0.95
SSG_SIZES = (100_000, 300_000, 1_000_000)
SSG_SAMPLE = 50_000
SSG_SECONDS_LIMIT = 1800.0
SSG_MEMORY_GROWTH_LIMIT = 1.25
GRALC_ARTICLES, PAPER_ARTICLES = 24, 200


def target(measured: float, limit: float, at_least: bool = False) -> dict:
    """A target that holds when ``measured`` <= ``limit`` (>= with ``at_least``)."""
    holds = measured >= limit if at_least else measured <= limit
    return {"measured": round(float(measured), 4), "limit": limit, "holds": bool(holds),
            "sense": ">=" if at_least else "<="}


def uses_llm(name: str, documents) -> bool:
    return bool(planned_llm_calls(get_retriever(name), documents[:1]))


def encoder_section(args, docs, names, model, tmp: Path, targets: dict, details: dict) -> None:
    for name in names:
        # an untimed build first: the once-per-process imports and set-up of a method's code path
        # (networkx, the concept linker, ...) would otherwise dominate a corpus this small
        time_index(lambda e, n=name: get_retriever(n, embedder=e), docs, model, tmp / f"{name}-untimed")
        result = time_index(lambda e, n=name: get_retriever(n, embedder=e), docs, model, tmp / name)
        details[name] = {k: v for k, v in result.items() if k != "retriever"}
        targets[f"index_vs_encoder[{name}]"] = target(result["ratio"], ENCODER_RATIO_LIMIT)
        print(f"{name:28s} index {result['index_seconds']:.2f}s  encoder {result['encoder_seconds']:.2f}s  "
              f"ratio {result['ratio']:.2f}  chunks {result['chunks']}", flush=True)
    if "naive" in details:
        for name in (n for n in details if n.startswith("gralc")):
            ratio = details[name]["index_seconds"] / details["naive"]["index_seconds"]
            targets[f"gralc_index_vs_naive[{name}]"] = target(ratio, GRALC_VS_NAIVE_LIMIT)


def latency_section(args, docs, names, model, tmp: Path, targets: dict, details: dict) -> None:
    size = LATENCY_CHUNKS // (10 if args.quick else 1)
    queries = [q.question for q in load_dataset(args.dataset).questions][:20]
    for name in names:
        retriever = get_retriever(name, embedder=Embedder(cache_dir=tmp / f"latency-{name}"))
        retriever._embedder._model = model.model
        per_copy = max(len(build(retriever, docs, reuse=False).chunks), 1)
        build(retriever, replicate(docs, max(1, -(-size // per_copy))), reuse=False)
        lat = query_latency_ms(retriever, queries)
        details.setdefault("latency", {})[name] = {**lat, "chunks": len(retriever.chunks)}
        targets[f"query_latency_ms[{name}]"] = target(lat["median_ms"], LATENCY_LIMIT_MS)
        print(f"{name:28s} {len(retriever.chunks)} chunks: median {lat['median_ms']:.1f} ms, "
              f"p95 {lat['p95_ms']:.1f} ms", flush=True)


HNSW_SWEEP = ("efSearch=128", "efSearch=256", "efSearch=512", "efSearch=1024", "efSearch=2048")
IVF_SETTINGS, IVF_SWEEP = ("IVF1024,Flat", ""), ("nprobe=4", "nprobe=8", "nprobe=16", "nprobe=32", "nprobe=64")


def index_section(args, targets: dict, details: dict) -> None:
    from index_scale import measure
    from rag_lab.core.index import IndexSettings

    n = INDEX_CHUNKS // (10 if args.quick else 1)
    ivf = IndexSettings(kind="ann", factory=IVF_SETTINGS[0], build=IVF_SETTINGS[1], search=IVF_SWEEP[0])
    row = measure(n, sweep=HNSW_SWEEP, others=[(ivf, IVF_SWEEP)])
    worst = measure(min(n, 100_000), isotropic=True, settings=IndexSettings(kind="ann"),  # below flat_max: forced
                    sweep=HNSW_SWEEP)
    details["index"] = {"synthetic": row, "isotropic": worst}
    for r in (row, worst):
        print(f"index {r['n']:,} {r['vectors']}: flat {r['flat_median_ms']:.2f} ms | {r['index']} ({r['settings']}) "
              f"build {r['build_s']:.1f} s, {r['median_ms']:.2f} ms, recall@10 {r['recall_at_10']:.3f}", flush=True)
        for name, build_s, sweep in [(r["index"], r["build_s"], r["sweep"])] + [
                (o["index"], o["build_s"], o["sweep"]) for o in r["others"]]:
            for t in sweep:
                print(f"    {name:14s} build {build_s:6.1f} s  {t['search']:14s} {t['median_ms']:6.2f} ms  "
                      f"recall@10 {t['recall_at_10']:.3f}", flush=True)
    targets[f"index_query_ms[{row['index']}, {n:,} chunks]"] = target(row["median_ms"], INDEX_LATENCY_LIMIT_MS)
    targets[f"index_recall@10_vs_flat[{row['index']}, {n:,} chunks]"] = target(row["recall_at_10"], RECALL_FLOOR,
                                                                                at_least=True)


def faiss_section(args, targets: dict, details: dict) -> None:
    from faiss_builds import compare, describe, loaded_level

    sizes = [100_000] if args.quick else [100_000, 1_000_000]
    rows = compare(sizes, args.other_faiss, repeats=1 if args.quick else args.faiss_repeats)
    level = loaded_level()
    details["faiss"] = {"loaded_level": level, "builds": rows}
    for r in rows:
        print("faiss", describe(r), flush=True)
    targets[f"faiss_runs_avx2_or_better[{level}]"] = target(float(level.startswith(("AVX2", "AVX512"))), 1.0,
                                                            at_least=True)


def ssg_section(args, targets: dict, details: dict) -> None:
    from ssg_scale import run_size
    from rag_lab.compare.ssg_scale import memory_growth

    sizes = (20_000, 50_000, 100_000) if args.quick else SSG_SIZES
    sample = SSG_SAMPLE // (10 if args.quick else 1)
    rows = []
    for i, n in enumerate(sizes):
        rows.append(run_size(n, sample if i == len(sizes) - 1 else sample // 5))
        r = rows[-1]
        print(f"ssg {n:>9,} windows: {r['seconds']:7.1f} s  approximate {r['approximate']}  build adds "
              f"{r['build_rss_mib']:.0f} MiB at peak ({r['bytes_per_window']:.0f} B/window)  heap peak "
              f"{r['heap_peak_mib']:.0f} MiB  recall {r['recall']:.4f} on {r['sample']:,} windows", flush=True)
    details["ssg"] = rows
    last = rows[-1]
    targets[f"ssg_edges_seconds[{last['windows']:,} windows]"] = target(last["seconds"], SSG_SECONDS_LIMIT)
    targets[f"ssg_edge_recall[{last['windows']:,} windows, {last['sample']:,} sampled]"] = target(
        last["recall"], RECALL_FLOOR, at_least=True)
    targets[f"ssg_memory_per_window[{last['windows']:,} vs {rows[0]['windows']:,}]"] = target(
        memory_growth(rows), SSG_MEMORY_GROWTH_LIMIT)


def gralc_section(args, model, targets: dict, details: dict) -> None:
    from gralc_scale import measure

    n = PAPER_ARTICLES if args.paper_scale else (args.gralc_articles or (12 if args.quick else GRALC_ARTICLES))
    rows = measure(n, model)
    for r in rows:       # linear in articles: every strategy chunks, links and encodes each article on its own
        r["estimated_seconds_at_paper_scale"] = r["index_seconds"] * PAPER_ARTICLES / n
    details["gralc_scale"] = rows
    if n != PAPER_ARTICLES:
        print(f"estimated at {PAPER_ARTICLES} articles (x{PAPER_ARTICLES / n:.2f}, linear): " + ", ".join(
            f"{r['strategy']} {r['estimated_seconds_at_paper_scale']:.0f} s" for r in rows), flush=True)
    for r in rows:
        targets[f"gralc_vs_encoder[{r['strategy']}, {n} articles]"] = target(r["ratio"], ENCODER_RATIO_LIMIT)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}")
    parser.add_argument("--methods", default=None, help="comma-separated; default every registered non-LLM method")
    parser.add_argument("--dataset", default="italian_cuisine")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run, targets still printed)")
    parser.add_argument("--gralc-articles", type=int, default=None, help=f"articles for the gralc section "
                        f"(default {GRALC_ARTICLES}, 12 with --quick)")
    parser.add_argument("--paper-scale", action="store_true", help=f"gralc section on {PAPER_ARTICLES} articles")
    parser.add_argument("--other-faiss", type=Path, default=None,
                        help="a folder holding another faiss-cpu (pip install --target), timed beside the installed one")
    parser.add_argument("--faiss-repeats", type=int, default=3, help="interleaved rounds of the faiss builds (median)")
    args = parser.parse_args(argv)
    sections = args.only.split(",")
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {SECTIONS}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))

    targets, details = {}, {}
    model = None
    if {"encoder", "latency", "gralc"} & set(sections):
        model = Embedder(use_cache=False)
        warm_up(model)
    with tempfile.TemporaryDirectory() as tmp:
        if {"encoder", "latency"} & set(sections):
            docs = load_dataset(args.dataset).documents
            names = args.methods.split(",") if args.methods else [n for n in available_methods() if not uses_llm(n, docs)]
            if "encoder" in sections:
                encoder_section(args, docs, names, model, Path(tmp), targets, details)
            if "latency" in sections:
                latency_section(args, docs, names, model, Path(tmp), targets, details)
    if "index" in sections:
        index_section(args, targets, details)
    if "faiss" in sections:
        faiss_section(args, targets, details)
    if "ssg" in sections:
        ssg_section(args, targets, details)
    if "gralc" in sections:
        gralc_section(args, model, targets, details)
    if "reproduce" in sections:
        from reproduce_timing import reproduce_section
        reproduce_targets, details["reproduce"] = reproduce_section()
        targets.update(reproduce_targets)

    if "encoder_backends" in sections:
        from encoder_backends import encoder_targets, run as run_encoder_backends
        details["encoder_backends"] = run_encoder_backends(quick=args.quick)
        targets.update(encoder_targets(details["encoder_backends"], target))

    print("\nTARGETS")
    for name, t in targets.items():
        print(f"  {'holds ' if t['holds'] else 'MISSED'}  {name}: {t['measured']} (limit {t['sense']} {t['limit']})")
    if args.out:
        write_text(args.out, json.dumps({"targets": targets, "details": details}, indent=2, default=str))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
