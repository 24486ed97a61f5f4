"""The stages of a comparison, as notebook 10 runs them, in empty caches: each method's build as a multiple
of one encoder pass over the corpus, then ``evaluate`` with offline answers (ks 5 and 10, answer_k 5) in ms
per (method, question) pair per stage and each method's queries in ms a question; the result table kept so
two versions can be compared row for row.

    python benchmarks/evaluate_pass.py [--data fenwold_gazetteer] [--methods all] [--out results.pkl]
                                       [--against baseline.pkl]

``--data``: what ``datasets.data_source`` reads (a name, a generic-form folder, or a JSON loader spec such as
'{"loader": "pubmedqa", "limit_records": 300}'). Everything runs in a fresh temporary RAG_LAB_CACHE, so
builds, answers, their sentence vectors and their scores start from nothing, as on a first run over new
data. The methods build one after another in one process, in registry order, sharing what a run shares
(the embedding cache, the sentence splits), so each build's seconds are what it adds to a run. One
encoder pass: the corpus cut at sentence ends into pieces of at most the model's window, encoded once
with no cache (``benchmarking.corpus_pass_seconds``). ``--out`` pickles the tidy DataFrame and the near-ties the run noted; ``--against``
compares this run's table with a pickled one (``pandas.testing.assert_frame_equal``, floats at 1e-12),
leaving out the rows that are wall-clock measurements (latency, build seconds). Timing, not a test:
run it alone, under the heavy lock.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ["RAG_LAB_CACHE"] = tempfile.mkdtemp(prefix="rag_lab_evaluate_")   # before rag_lab is imported
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

from rag_lab.compare.benchmarking import corpus_pass_seconds, warm_up  # noqa: E402
from rag_lab.compare.comparison import resolve_methods  # noqa: E402
from rag_lab.core import ties  # noqa: E402
from rag_lab.core.embedding import shared_embedder  # noqa: E402
from rag_lab.datasets import data_source  # noqa: E402
from rag_lab.evaluation import harness  # noqa: E402
from rag_lab.evaluation.retrievers import get_retriever  # noqa: E402

DATASET, KS, ANSWER_K = "fenwold_gazetteer", (5, 10), 5
TIMED = ("latency_seconds",)      # rows that are wall-clock measurements, never equal across runs


def timed_stages() -> dict[str, float]:
    """Wrap harness' stages so each one's seconds are summed (names that do not exist are skipped)."""
    spent: dict[str, float] = {}
    for name in ("run_queries_at", "score_retrievals", "answer_rows", "answer_all", "score_answers"):
        fn = getattr(harness, name, None)
        if fn is None:
            continue

        def wrapped(*args, _fn=fn, _name=name, **kwargs):
            t0 = time.perf_counter()
            try:
                return _fn(*args, **kwargs)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - t0
        setattr(harness, name, wrapped)
    return spent


def timed_queries() -> dict[str, float]:
    """Wrap ``harness.retrieve`` so each method's query seconds (every k it runs) are summed by name."""
    spent: dict[str, float] = {}
    fn = harness.retrieve

    def wrapped(retriever, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(retriever, *args, **kwargs)
        finally:
            spent[retriever.name] = spent.get(retriever.name, 0.0) + time.perf_counter() - t0
    harness.retrieve = wrapped
    return spent


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    """The rows two runs must agree on, in one order."""
    d = df[~df["metric"].isin(TIMED)]
    return d.sort_values(["method", "question_id", "metric", "k"], na_position="first").reset_index(drop=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DATASET, help="a data set name, a generic-form folder or a JSON loader spec")
    parser.add_argument("--methods", default="all", help='"all" or comma-separated registered names')
    parser.add_argument("--out", type=Path, default=None, help="pickle {'df', 'near_ties'} here")
    parser.add_argument("--against", type=Path, default=None, help="a pickle from --out to compare with")
    args = parser.parse_args(argv)

    data = data_source(json.loads(args.data) if args.data.startswith("{") else args.data).load()
    embedder = shared_embedder()
    warm_up(embedder)
    one_pass = corpus_pass_seconds(embedder, data.documents)
    retrievers = harness.as_retrievers([get_retriever(m) for m in resolve_methods(args.methods)])
    builds = {}
    for name, retriever in retrievers.items():
        t0 = time.perf_counter()
        harness.build_all({name: retriever}, data)
        builds[name] = time.perf_counter() - t0
    built = sum(builds.values())
    spent, queries = timed_stages(), timed_queries()
    ties.forget()
    t0 = time.perf_counter()
    df = harness.evaluate(retrievers, data, KS, reasoner="offline", answer_k=ANSWER_K, progress=False)
    seconds = time.perf_counter() - t0
    near = sorted({(n.what, str(n.first), str(n.second), round(n.gap, 9), tuple(sorted(n.labels.items())))
                   for n in ties.recorded()}, key=str)
    pairs = len(retrievers) * len(data.questions)
    print(f"{data.name}: {len(data.documents)} documents ({sum(len(d.text) for d in data.documents):,} characters), "
          f"{len(data.questions)} questions, {len(retrievers)} methods, ks {list(KS)}, answer_k {ANSWER_K}, offline answers")
    print(f"one encoder pass over the corpus: {one_pass:.2f} s")
    print(f"build (all methods, not part of evaluate): {built:.1f} s = {built / one_pass:.1f} encoder passes")
    for name, s in builds.items():
        print(f"  {name}: {s:.1f} s = {s / one_pass:.1f} passes")
    print(f"evaluate: {seconds:.1f} s for {pairs} (method, question) pairs = {1000 * seconds / pairs:.2f} ms a pair")
    for name, s in spent.items():
        print(f"  {name}: {s:.1f} s ({1000 * s / pairs:.2f} ms a pair)")
    print("queries by method (ms a question, every k it runs):")
    for name, s in queries.items():
        print(f"  {name}: {1000 * s / len(data.questions):.2f}")
    print(f"rows: {len(df)}; near-ties noted: {len(near)}")
    if args.out:
        with open(args.out, "wb") as f:
            pickle.dump({"df": df, "near_ties": near, "seconds": seconds, "stages": spent, "queries": queries,
                         "builds": builds, "one_pass": one_pass}, f)
    if args.against:
        with open(args.against, "rb") as f:
            before = pickle.load(f)
        pd.testing.assert_frame_equal(comparable(df), comparable(before["df"]), check_exact=False, rtol=0, atol=1e-12)
        print(f"equal to {args.against} (all rows but {', '.join(TIMED)}; floats at 1e-12)")
        if near != before["near_ties"]:
            print(f"near-ties differ: {len(set(near) - set(before['near_ties']))} new, "
                  f"{len(set(before['near_ties']) - set(near))} gone")
        else:
            print("near-ties: the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
