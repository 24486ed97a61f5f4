"""Concurrent reasoner calls, measured: SKETCH, UnWeaver, SSG and RAPTOR built over italian_cuisine with
an LLM reasoner whose "model" is the fake OpenAI-compatible server answering after an injected latency,
at concurrency 1, 4, 8 and 16.

    python benchmarks/llm_concurrency.py [--latency 0.3] [--levels 1,4,8,16] [--out llm_concurrency.json]

For every method and level a fresh LLMReasoner with no reply cache (every call reaches the server)
builds the index (``reuse=False``). Measured: wall seconds of the whole build and of its reasoner
batches alone (time inside ``run_batch``), requests the server received, and the most requests it
was answering at one moment. Speed-ups are against concurrency 1 in the same run. What was built
(chunks, graph, classes, tree) is hashed: the script exits non-zero if it differs between levels or
if the server ever saw more requests at once than the level. Embeddings come from a warm cache (one
untimed build of each method first), so the encoder is not what is timed. The server is
tests/fake_openai_server.py replying through tests/schema_responder.py (a deterministic reply
computed from each prompt). Timing, not a test: run it alone, under the model lock.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["RAG_LAB_CACHE"] = tempfile.mkdtemp(prefix="rag_lab_llm_concurrency_")   # before rag_lab is imported
os.environ["RAG_LAB_QUIET"] = "1"
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_openai_server import FakeOpenAIServer  # noqa: E402
from schema_responder import responder  # noqa: E402

from rag_lab.caching.atomic import write_text  # noqa: E402
from rag_lab.core.embedding import shared_embedder  # noqa: E402
from rag_lab.datasets import load_dataset  # noqa: E402
from rag_lab.evaluation import harness  # noqa: E402
from rag_lab.methods import get_retriever  # noqa: E402
from rag_lab.reasoning.llm import LLMReasoner  # noqa: E402

METHODS = ("sketch", "unweaver", "ssg-query-traversal", "raptor")
# the modules whose reasoner loops go through run_batch: their name for it is wrapped to time the batches
BATCH_USERS = ("rag_lab.methods.sketch.method", "rag_lab.methods.unweaver.method", "rag_lab.methods.ssg.graph",
               "rag_lab.methods.baselines.raptor_tree")


class BatchClock:
    """Seconds spent inside run_batch (the reasoner calls of a build), summed."""

    def __init__(self):
        self.seconds = 0.0
        for name in BATCH_USERS:
            module = sys.modules[name]
            module.run_batch = self.wrap(module.run_batch)

    def wrap(self, run_batch):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return run_batch(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
        return timed


def digest(r) -> str:
    """A hash of what the build made: chunks and the method's graph, classes or tree."""
    parts = [[(c.id, c.text) for c in r.chunks]]
    if r.name == "sketch":
        parts += [sorted(map(repr, r.graph.store.nodes())), sorted(map(repr, r.graph.store.edges()))]
    elif r.name == "unweaver":
        parts += [[(c.name, c.mentions, c.chunks, c.text) for c in r.classes], r.class_vectors.tobytes().hex()]
    elif r.name.startswith("ssg"):
        parts += [sorted((u, v, d["kind"], round(d["weight"], 6)) for u, v, d in r.graph.graph.edges(data=True))]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def build(name: str, server: FakeOpenAIServer, concurrency: int, documents, clock: BatchClock) -> dict:
    reasoner = LLMReasoner.from_spec(f"openai-compatible:fake-model@{server.base_url}", cache=False,
                                     concurrency=concurrency, timeout=60)
    retriever = get_retriever(name, reasoner=reasoner, embedder=shared_embedder())
    before_requests = len(server.requests)
    server.peak_in_flight = 0
    clock.seconds = 0.0
    t0 = time.perf_counter()
    harness.build(retriever, documents, reuse=False)
    seconds = time.perf_counter() - t0
    return {"seconds": round(seconds, 2), "batch_seconds": round(clock.seconds, 2),
            "requests": len(server.requests) - before_requests, "peak_in_flight": server.peak_in_flight,
            "digest": digest(retriever)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the server waits before each reply")
    parser.add_argument("--levels", default="1,4,8,16", help="concurrency levels; the first is the baseline")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    levels = [int(x) for x in args.levels.split(",")]
    methods = [m for m in args.methods.split(",") if m]
    documents = load_dataset("italian_cuisine").documents
    clock = None
    report = {"latency": args.latency, "levels": levels, "documents": len(documents), "methods": {}}
    ok = True
    with FakeOpenAIServer(responder=responder) as server:
        for name in methods:                       # warm the embedding cache; imports; nothing timed
            server.delay = 0.0
            harness.build(get_retriever(name, reasoner=LLMReasoner.from_spec(f"openai-compatible:m@{server.base_url}",
                                                                             cache=False), embedder=shared_embedder()),
                          documents, reuse=False)
        clock = BatchClock()
        server.delay = args.latency
        for name in methods:
            runs = {c: build(name, server, c, documents, clock) for c in levels}
            base = runs[levels[0]]
            for c, run in runs.items():
                run["speedup"] = round(base["seconds"] / run["seconds"], 2)
                run["batch_speedup"] = round(base["batch_seconds"] / run["batch_seconds"], 2)
                run["same_index"] = run["digest"] == base["digest"]
                run["peak_within_level"] = run["peak_in_flight"] <= c
                ok &= run["same_index"] and run["peak_within_level"]
            report["methods"][name] = runs
    print(f"italian_cuisine ({len(documents)} documents), server latency {args.latency:g} s a call, no reply cache")
    print("| method | concurrency | calls | build (s) | speed-up | reasoner batches (s) | speed-up | peak in flight | "
          "same index |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, runs in report["methods"].items():
        for c, r in runs.items():
            print(f"| {name} | {c} | {r['requests']} | {r['seconds']:.2f} | {r['speedup']:.2f} | "
                  f"{r['batch_seconds']:.2f} | {r['batch_speedup']:.2f} | {r['peak_in_flight']} | "
                  f"{'yes' if r['same_index'] else 'NO'} |")
    totals = {c: sum(runs[c]["seconds"] for runs in report["methods"].values()) for c in levels}
    report["total_seconds"] = totals
    print(f"all {len(methods)} methods together: " + ", ".join(f"{totals[c]:.1f} s at {c} ({totals[levels[0]] / totals[c]:.2f}x)"
                                            for c in levels))
    if args.out:
        write_text(args.out, json.dumps(report, indent=2))
    if not ok:
        print("FAILED: an index differed between levels or the server saw more requests at once than the level")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
