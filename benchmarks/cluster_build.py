"""Per-document cost of the long presets' index builds, locally and with a Dask LocalCluster of 1 and 2
workers, for the estimates in docs/reproducing.md.

    python benchmarks/cluster_build.py [--copies N] [--presets sketch,unweaver,gralc] [--out cluster_build.json]

Each preset's notebook methods (the set ``benchmarks/per_item_costs.py`` uses) are built one after
another, as the notebook builds them, over a corpus of distinct copies of a shipped one
(``distinct_copies``: same tokens, new texts, so no cache helps), three times: locally, on a
LocalCluster with one worker process, and with two (one thread each, on this machine's two cores).
Every setting starts from empty caches, the driver's and the workers'; models and spaCy are loaded
in every process before anything is timed. Reported per 1,000 MiniLM tokens of corpus: the whole
build, and for the cluster settings its two parts, the workers' share (``prepare``: partitions
sent, per-document work, values written into the driver's caches) and the driver's (the build
that follows, from those caches). Timing, not a test: run it alone, under the model lock.
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
BASE = Path(tempfile.gettempdir())
if __name__ == "__main__":   # Dask's worker processes import this file again: they keep the env they were given
    os.environ["RAG_LAB_QUIET"] = "1"
    os.environ["RAG_LAB_REUSE"] = "1"
    BASE = Path(tempfile.mkdtemp(prefix="rag_lab_cluster_bench_"))
    os.environ["RAG_LAB_CACHE"] = str(BASE / "model")    # holds the ONNX export every setting shares
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_lab.caching.atomic import write_text  # noqa: E402
from rag_lab.compare.benchmarking import distinct_copies  # noqa: E402
from rag_lab.core.embedding import Embedder  # noqa: E402
from rag_lab.datasets import load_dataset  # noqa: E402
from rag_lab.evaluation import cluster  # noqa: E402
from rag_lab.evaluation.harness import build  # noqa: E402
from rag_lab.evaluation.index_store import clear_memo  # noqa: E402
from rag_lab.methods import get_retriever  # noqa: E402
from rag_lab.methods.gralc.encoding import clear_memory_cache  # noqa: E402
from rag_lab.reasoning import linguistics  # noqa: E402
from rag_lab.reasoning.offline import OfflineReasoner  # noqa: E402

PRESETS = {  # preset -> (shipped corpus, copies of it (12 documents each), its notebook's methods)
    "sketch": ("italian_cuisine", 4, ["naive", "semantic", "kg", "raptor", "sketch"]),
    "unweaver": ("italian_cuisine", 4, ["unweaver", "naive", "raptor", "kg"]),
    "gralc": ("biomed_articles", 1, ["gralc-naive", "gralc-semantic", "gralc-late", "gralc-structure", "gralc-kg",
                                     "gralc-graph"]),
}


def empty_cache(name: str) -> str:
    folder = BASE / name
    folder.mkdir()
    (folder / "onnx").symlink_to(BASE / "model" / "onnx")
    return str(folder)


def load_models() -> None:
    """The encoder, its tokenizer and spaCy, loaded in this process (run on every worker too)."""
    embedder = Embedder()
    embedder.encode(["warm up the encoder"])
    linguistics.parse("Warm up the parser.")


def build_all(methods: list[str], documents, address: str | None) -> dict:
    """Build the methods one after another from an empty driver cache; seconds per method and in all."""
    os.environ["RAG_LAB_CACHE"] = empty_cache(f"driver-{address is not None}-{time.monotonic_ns()}")
    clear_memo()
    clear_memory_cache()
    linguistics.parse.cache_clear()
    embedder = Embedder()
    reasoner = OfflineReasoner(embedder)
    out = {"methods": {}, "seconds": 0.0, "workers_seconds": 0.0}
    for name in methods:
        kwargs = {} if name.startswith(("gralc", "naive", "semantic")) else {"reasoner": reasoner}
        retriever = get_retriever(name, embedder=embedder, **kwargs)
        t0 = time.perf_counter()
        with cluster.cluster_address(address):
            build(retriever, documents)
        seconds = time.perf_counter() - t0
        record = getattr(retriever, "cluster_build", None) or {}
        out["methods"][name] = {"seconds": round(seconds, 2), "workers_seconds": round(record.get("seconds", 0.0), 2),
                                "failed_partitions": len(record.get("failed", []))}
        out["seconds"] += seconds
        out["workers_seconds"] += record.get("seconds", 0.0)
    return out


def measure(preset: str, copies: int | None) -> dict:
    from distributed import LocalCluster

    corpus, default_copies, methods = PRESETS[preset]
    copies = copies or default_copies
    originals = load_dataset(corpus).documents
    documents = distinct_copies(originals, copies * len(originals))
    tokens = sum(Embedder().count_tokens([d.text]) for d in documents)
    result = {"corpus": corpus, "documents": len(documents), "tokens": tokens, "methods": methods, "settings": {}}
    result["settings"]["local"] = build_all(methods, documents, None)
    for workers in (1, 2):
        env = {"RAG_LAB_CACHE": empty_cache(f"workers-{preset}-{workers}"), "RAG_LAB_REUSE": "1",
               "RAG_LAB_QUIET": "1", "HF_HUB_OFFLINE": "1"}
        with LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                          processes=True, env=env) as c:
            cluster.client_for(c.scheduler_address).run(load_models)
            result["settings"][f"cluster-{workers}"] = build_all(methods, documents, c.scheduler_address)
            cluster.close_clients()
    per_k = tokens / 1000
    for setting in result["settings"].values():
        setting["s_per_1k_tokens"] = round(setting["seconds"] / per_k, 3)
        setting["workers_s_per_1k"] = round(setting["workers_seconds"] / per_k, 3)
        setting["driver_s_per_1k"] = round((setting["seconds"] - setting["workers_seconds"]) / per_k, 3)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=None,
                        help="copies of each shipped corpus (distinct texts; default: 12 documents a preset)")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    load_models()
    report = {}
    for preset in args.presets.split(","):
        report[preset] = measure(preset, args.copies)
        r = report[preset]
        print(f"{preset}: {r['documents']} documents of {r['corpus']}, {r['tokens']} tokens; methods {r['methods']}")
        for name, s in r["settings"].items():
            print(f"  {name:10s} {s['seconds']:8.1f} s  {s['s_per_1k_tokens']:.3f} s per 1k tokens  (workers "
                  f"{s['workers_s_per_1k']:.3f}, driver {s['driver_s_per_1k']:.3f})")
    if args.out:
        write_text(args.out, json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
