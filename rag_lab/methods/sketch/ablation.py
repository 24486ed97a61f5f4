"""SKETCH's graph radius: the same built index queried with ``hops`` = 1, 2, ... (the paper stresses
multi-hop retrieval over the graph but gives no depth; ``SketchConfig.hops`` defaults to 1).

``hops_ablation`` makes a variant of each graph method per radius (``SketchRetriever.variant``:
the pieces, vectors and graph are shared, nothing is rebuilt), queries every question at k and
reports the retrieval metrics beside what the radius changed in the graph query: facts and graph
chunks per question, and the share of questions whose top k differs from the first radius's.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ...core.types import Dataset

METRICS = ("doc_mrr", "doc_recall", "ctx_recall", "ctx_precision", "ctx_ndcg")


def hops_ablation(retrievers: Mapping[str, object], dataset: Dataset, hops: Sequence[int] = (1, 2),
                  k: int = 5) -> pd.DataFrame:
    """Rows (method, hops); columns: the retrieval ``METRICS`` at k (those the data has gold for),
    mean facts and graph chunks per question, and the share of questions whose top k changed
    against ``hops[0]``."""
    from ...evaluation.harness import run_queries, score_retrievals, summarize

    hops = [int(h) for h in hops]
    if not hops or len(set(hops)) < len(hops) or min(hops) < 0:
        raise ValueError(f"hops must be distinct non-negative integers, got {list(hops)}")
    rows, index = [], []
    for name, r in retrievers.items():
        variants = {f"{name}@hops={h}": r.variant(name=f"{name}@hops={h}", hops=h) for h in hops}
        queried = run_queries(variants, dataset, k, progress=False)
        table = summarize(score_retrievals({k: queried}, dataset, pools={n: v.chunks for n, v in variants.items()}))
        first = {q: [h.chunk.id for h in ret.hits] for q, ret in queried[f"{name}@hops={hops[0]}"].items()}
        for h in hops:
            by_q = queried[f"{name}@hops={h}"]
            row = {m: table.loc[f"{name}@hops={h}", f"{m}@{k}"] for m in METRICS if f"{m}@{k}" in table.columns}
            row["facts per question"] = sum(len(ret.trace["facts"]) for ret in by_q.values()) / len(by_q)
            row["graph chunks per question"] = sum(len(ret.trace["graph_chunk_ids"]) for ret in by_q.values()) / len(by_q)
            row[f"top {k} changed vs hops = {hops[0]}"] = sum(
                [hit.chunk.id for hit in ret.hits] != first[q] for q, ret in by_q.items()) / len(by_q)
            rows.append(row)
            index.append((name, h))
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["method", "hops"]))

