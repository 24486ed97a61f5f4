"""Per-item costs of each paper notebook's methods on this machine, for the time estimates in
docs/reproducing.md: build seconds per 1,000 MiniLM tokens of corpus, and seconds per question
(retrieve the top k, then answer from them with the offline reasoner, as the notebooks do).

    python benchmarks/per_item_costs.py [--out per_item_costs.json] [--papers sketch,unweaver,ssg,gralc]

Each paper's methods are built on a shipped corpus with empty caches (a fresh RAG_LAB_CACHE), so
every text is encoded and every offline extraction runs, as on a first run over new data. The
model and the sentence splitter are loaded before anything is timed. Timing, not a test: run it
alone, under the model lock.
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
os.environ["RAG_LAB_CACHE"] = tempfile.mkdtemp(prefix="rag_lab_cold_")   # before rag_lab is imported
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab import load_dataset  # noqa: E402
from rag_lab.compare.benchmarking import warm_up  # noqa: E402
from rag_lab.core.embedding import shared_embedder  # noqa: E402
from rag_lab.reasoning import resolve_reasoner  # noqa: E402
from rag_lab.evaluation.harness import build, retrieve  # noqa: E402
from rag_lab.evaluation.retrievers import get_retriever  # noqa: E402

PAPERS = {  # paper -> (shipped corpus, the methods its notebook builds)
    "sketch": ("italian_cuisine", ["naive", "semantic", "kg", "raptor", "sketch"]),
    "unweaver": ("italian_cuisine", ["unweaver"]),
    "ssg": ("ml_encyclopedia", ["ssg-basic-retrieval", "ssg-query-traversal", "ssg-ssg-traversal",
                                "ssg-triangulation-average", "ssg-triangulation-geometric-3d",
                                "ssg-triangulation-fulldim", "ssg-llm-guided-traversal"]),
    "gralc": ("biomed_articles", ["gralc-naive", "gralc-semantic", "gralc-late", "gralc-structure", "gralc-kg",
                                  "gralc-graph"]),
}


def measure(dataset: str, methods: list[str], k: int, max_questions: int) -> dict:
    data = load_dataset(dataset)
    embedder = shared_embedder()
    reasoner = resolve_reasoner("offline", embedder)
    tokens = sum(embedder.count_tokens([d.text]) for d in data.documents)
    questions = data.questions[:max_questions]
    out = {"dataset": dataset, "documents": len(data.documents), "corpus_tokens": tokens,
           "questions_timed": len(questions), "methods": {}}
    for name in methods:
        kwargs = {"embedder": embedder} if not name.startswith("gralc") else {}
        retriever = get_retriever(name, **kwargs)
        t0 = time.perf_counter()
        build(retriever, data.documents, reuse=False)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in questions:
            hits = retrieve(retriever, q.question, k).hits
            reasoner.answer(q.question, [h.chunk.text for h in hits])
        per_q = (time.perf_counter() - t0) / max(len(questions), 1)
        out["methods"][name] = {"build_s": round(build_s, 2), "build_s_per_1k_tokens": round(1000 * build_s / tokens, 3),
                                "s_per_question": round(per_q, 3)}
        print(f"{dataset:16s} {name:32s} build {build_s:7.1f}s ({1000 * build_s / tokens:6.3f} s/1k tok)  "
              f"{per_q:6.3f} s/question", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", default=",".join(PAPERS))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-questions", type=int, default=20)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    warm_up(shared_embedder())
    report = {"cpu_count": os.cpu_count(), "cache": os.environ["RAG_LAB_CACHE"], "papers": {}}
    for paper in args.papers.split(","):
        dataset, methods = PAPERS[paper]
        report["papers"][paper] = measure(dataset, methods, args.k, args.max_questions)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
