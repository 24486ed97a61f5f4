"""Encoder backends side by side: torch fp32, ONNX Runtime fp32 and ONNX Runtime int8, one run.

    python benchmarks/encoder_backends.py [--out encoder_backends.json] [--quick]

1. Throughput: the same texts (passages of ~120 words cut from the shipped corpora), the same
   batch size (32) and 2 threads for every backend; one warm-up pass over the texts is not timed,
   then the best of ``REPEATS`` timed passes is kept. Tokens are the word pieces each text
   feeds the encoder (special tokens in, padding out), counted with the model's tokenizer.
2. Retrieval: every shipped data set, every non-LLM method that embeds (``--methods`` to narrow),
   MRR@10 and Recall@5 (document level) per backend, each backend in a fresh temporary RAG_LAB_CACHE so no
   cached vector or token embedding of one backend is read by another.
3. The pick: the fastest backend whose MRR@10 stays within ``MRR_TOLERANCE`` of torch fp32 (either way) for
   every method on every shipped data set (torch when none does).
Timing, not a test: run it alone, under the model lock.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab.core.onnx_encoder import BACKENDS  # noqa: E402

THREADS = 2
BATCH = 32
REPEATS = 2
MRR_TOLERANCE = 0.005
MRR, RECALL = "doc_mrr@10", "doc_recall@5"   # document-level: every shipped data set has gold documents
METHODS = ("naive", "semantic", "gralc-naive", "gralc-semantic", "gralc-late", "gralc-structure", "gralc-kg",
           "gralc-graph")


def passages(n: int, words: int = 120) -> list[str]:
    """``n`` passages of ``words`` words from the shipped corpora, in a fixed order."""
    from rag_lab import load_dataset
    from rag_lab.datasets import shipped_datasets

    out = []
    for name in sorted(shipped_datasets()):
        for doc in load_dataset(name).documents:
            w = doc.text.split()
            out += [" ".join(w[i:i + words]) for i in range(0, len(w), words)]
    if len(out) < n:
        out = (out * (n // max(len(out), 1) + 1))
    return out[:n]


def encoder_for(backend: str, cache_dir: Path):
    """The bare encoder of ``backend`` on ``THREADS`` threads (exported into ``cache_dir`` if need be)."""
    import torch

    from rag_lab.core.embedding import Embedder, model_fingerprint
    from rag_lab.core.onnx_encoder import OnnxEncoder, ensure_export

    torch.set_num_threads(THREADS)
    embedder = Embedder(backend=backend, cache_dir=cache_dir, use_cache=False)
    if backend == "torch":
        return embedder.model
    folder = embedder.model_path
    return OnnxEncoder(folder, ensure_export(folder, cache_dir, backend, model_fingerprint(folder)), threads=THREADS)


def throughput(texts: list[str], cache_dir: Path) -> dict[str, dict]:
    out = {}
    for backend in BACKENDS:
        encoder = encoder_for(backend, cache_dir)
        tok = encoder.tokenizer(texts, truncation=True, max_length=encoder.max_seq_length)["input_ids"]
        tokens = sum(len(ids) for ids in tok)
        encoder.encode(texts, batch_size=BATCH)                       # warm-up, not timed
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            encoder.encode(texts, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True)
            times.append(time.perf_counter() - t0)
        out[backend] = {"texts": len(texts), "tokens": tokens, "seconds": min(times), "all_seconds": times,
                        "tokens_per_s": tokens / min(times)}
        print(f"{backend:10s} {tokens / min(times):8.0f} tokens/s  ({len(texts)} texts, {tokens} tokens, "
              f"best of {REPEATS}: {min(times):.2f} s)", flush=True)
    return out


def similarity_to_torch(texts: list[str], cache_dir: Path) -> dict[str, dict]:
    """Cosine of each backend's sentence vectors to torch's on the same texts."""
    import numpy as np

    ref = encoder_for("torch", cache_dir).encode(texts, batch_size=BATCH, normalize_embeddings=True)
    out = {}
    for backend in BACKENDS[1:]:
        vecs = encoder_for(backend, cache_dir).encode(texts, batch_size=BATCH, normalize_embeddings=True)
        cos = (vecs * ref).sum(axis=1)
        out[backend] = {"min": float(cos.min()), "mean": float(cos.mean()), "p01": float(np.percentile(cos, 1))}
    return out


def retrieval(methods: list[str], datasets: list[str]) -> dict[str, dict]:
    """{backend: {dataset: {method: {MRR: x, RECALL: y}}}}, each backend on a fresh cache."""
    from rag_lab import load_dataset
    from rag_lab.core.embedding import Embedder
    from rag_lab.evaluation.harness import evaluate_retrieval, summarize
    from rag_lab.methods import get_retriever
    from rag_lab.methods.gralc.encoding import clear_memory_cache

    out: dict[str, dict] = {}
    before = os.environ.get("RAG_LAB_CACHE")
    for backend in BACKENDS:
        with tempfile.TemporaryDirectory(prefix=f"rag_lab_{backend}_") as tmp:
            os.environ["RAG_LAB_CACHE"] = tmp
            clear_memory_cache()
            embedder = Embedder(backend=backend, cache_dir=tmp)
            out[backend] = {}
            for name in datasets:
                data = load_dataset(name)
                t0 = time.perf_counter()
                table = summarize(evaluate_retrieval([get_retriever(m, embedder=embedder) for m in methods], data,
                                                     ks=(5, 10), progress=False))
                out[backend][name] = {m: {MRR: float(table.loc[m, MRR]), RECALL: float(table.loc[m, RECALL])}
                                      for m in table.index}
                print(f"{backend:10s} {name:18s} {time.perf_counter() - t0:6.1f} s  " + "  ".join(
                    f"{m} {v[MRR]:.3f}/{v[RECALL]:.3f}" for m, v in out[backend][name].items()), flush=True)
            embedder.cache.close()
    if before is None:
        os.environ.pop("RAG_LAB_CACHE", None)
    else:
        os.environ["RAG_LAB_CACHE"] = before
    return out


def pick_default(speed: dict[str, dict], quality: dict[str, dict]) -> tuple[str, dict[str, float]]:
    """The fastest backend whose MRR is within the tolerance of torch everywhere (either way: a
    higher MRR is a difference too), and each backend's largest |MRR difference| to torch over
    methods and data sets."""
    worst = {}
    for backend in BACKENDS:
        diffs = [abs(quality["torch"][d][m][MRR] - quality[backend][d][m][MRR])
                 for d in quality["torch"] for m in quality["torch"][d]]
        worst[backend] = max(diffs) if diffs else 0.0
    allowed = [b for b in BACKENDS if worst[b] <= MRR_TOLERANCE]
    return max(allowed, key=lambda b: speed[b]["tokens_per_s"]), worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--quick", action="store_true", help="64 texts and one data set (a smoke run)")
    parser.add_argument("--markdown", type=Path, default=None, help="print the tables of a saved report and stop")
    parser.add_argument("--speed-only", action="store_true", help="throughput and cosine only (no retrieval runs)")
    args = parser.parse_args(argv)
    from rag_lab.caching.atomic import write_text

    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text(encoding="utf-8"))))
        return 0
    if args.speed_only:
        texts = passages(64 if args.quick else 256)
        with tempfile.TemporaryDirectory(prefix="rag_lab_onnx_export_") as tmp:
            report = {"throughput": throughput(texts, Path(tmp)),
                      "cosine_to_torch": similarity_to_torch(texts, Path(tmp))}
        print(json.dumps(report["cosine_to_torch"], indent=1))
    else:
        report = run(args.methods.split(","), quick=args.quick)
        print("\n" + markdown(report))
    if args.out:
        write_text(args.out, json.dumps(report, indent=2))
        print(f"wrote {args.out}")
    return 0


def run(methods=METHODS, quick: bool = False) -> dict:
    """Everything above in one process; returns the report (benchmarks/run.py calls this too)."""
    from rag_lab.datasets import shipped_datasets

    texts = passages(64 if quick else 256)
    datasets = sorted(shipped_datasets())[:1 if quick else None]
    with tempfile.TemporaryDirectory(prefix="rag_lab_onnx_export_") as tmp:
        speed = throughput(texts, Path(tmp))
        similarity = similarity_to_torch(texts, Path(tmp))
    quality = retrieval(list(methods), datasets)
    default, worst = pick_default(speed, quality)
    print("largest |MRR@10 difference| to torch: " + ", ".join(f"{b} {w:.4f}" for b, w in worst.items()))
    print(f"fastest backend within {MRR_TOLERANCE} MRR of torch on every data set: {default}")
    return {"throughput": speed, "cosine_to_torch": similarity, "retrieval": quality, "worst_mrr_difference": worst,
            "mrr_tolerance": MRR_TOLERANCE, "pick": default, "threads": THREADS, "batch_size": BATCH,
            "datasets": datasets, "methods": list(methods)}


def markdown(report: dict) -> str:
    """The report's tables for docs/performance.md (throughput, cosine to torch, retrieval)."""
    speed, cos, quality = report["throughput"], report["cosine_to_torch"], report["retrieval"]
    lines = ["| backend | tokens/s | x torch | seconds (best of timed passes) | cosine to torch: min / mean |",
             "|---|---:|---:|---:|---|"]
    for b, v in speed.items():
        c = cos.get(b)
        lines.append(f"| {b} | {v['tokens_per_s']:,.0f} | {v['tokens_per_s'] / speed['torch']['tokens_per_s']:.2f} | "
                     f"{v['seconds']:.2f} | " + (f"{c['min']:.4f} / {c['mean']:.5f}" if c else "1 (reference)") + " |")
    backends = list(quality)
    lines += ["", "| data set | method | " + " | ".join(f"{b} MRR@10 | {b} R@5" for b in backends) + " |",
              "|---|---|" + "---:|---:|" * len(backends)]
    for d in quality["torch"]:
        for m in quality["torch"][d]:
            cells = []
            for b in backends:
                v, ref = quality[b][d][m], quality["torch"][d][m]
                delta = "" if b == "torch" else f" ({v[MRR] - ref[MRR]:+.3f})"
                cells += [f"{v[MRR]:.3f}{delta}", f"{v[RECALL]:.3f}"]
            lines.append(f"| {d} | {m} | " + " | ".join(cells) + " |")
    lines += ["", "Largest |MRR@10 difference| to torch over every method and data set: " +
              ", ".join(f"{b} {w:.4f}" for b, w in report["worst_mrr_difference"].items()) +
              f"; tolerance {report['mrr_tolerance']}; pick: **{report['pick']}**."]
    return "\n".join(lines)


def encoder_targets(report: dict, target) -> dict:
    """Issue 18's encoder targets from a report: the picked backend's time over torch's on the same
    texts (holds when <= 1: not slower) and its largest |MRR@10 difference| (holds within the tolerance)."""
    pick, speed = report["pick"], report["throughput"]
    return {f"encoder_seconds_vs_torch[{pick}]": target(speed[pick]["seconds"] / speed["torch"]["seconds"], 1.0),
            f"encoder_mrr_difference_vs_torch[{pick}]": target(report["worst_mrr_difference"][pick], MRR_TOLERANCE)}


if __name__ == "__main__":
    sys.exit(main())
