"""How often ``paired_difference`` decides when there is nothing to find, and how often its interval holds the
truth: the table in docs/statistics.md ("How often the interval holds the truth").

4,000 seeded data sets a cell, each run through the package's own test (``interval_coverage.paired_rates``, the
bounded-mean test of ``paired_tests`` vectorised; ``mean_ci`` and ``paired_difference`` themselves for the
means and the t-test): skewed nulls (two methods with the same true mean and the shapes retrieval scores
have) at n = 20 and 50 with two seeds, symmetric nulls, clustered nulls over 12 and 44 documents, and the
coverage of differences on fenwold_gazetteer's per-question scores (figures/10_compare_retrieval) resampled
by document. Also Wilson's interval for a 0/1 mean, where it under-covers.

    PYTHONPATH=. python benchmarks/paired_nulls.py [--draws 4000] > /tmp/paired_nulls.md
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from interval_coverage import PAIRED_NULLS, by_unit, paired_rates  # noqa: E402
from rag_lab.evaluation.statistics import SUPPORTED, CONTRADICTED, mean_ci, paired_difference  # noqa: E402


def bounded_rows(draws: int) -> list[dict]:
    rows = []
    for name, (draw, docs, truth, ns, seeds) in PAIRED_NULLS.items():
        for n in ns:
            for seed in seeds:
                a, b = draw(np.random.default_rng(seed), draws, n)
                sums, counts = by_unit(a - b, docs)
                rows.append({"scenario": name, "n": n, "seed": seed, **paired_rates(sums, counts, truth)})
    return rows


def t_rows(draws: int) -> list[dict]:
    """Unbounded differences (normal, sd 0.2): the t-test, ``paired_difference`` itself."""
    rows = []
    for n in (20, 50):
        rng = np.random.default_rng(0)
        hits = decided = 0
        for _ in range(draws):
            base = rng.normal(0.5, 0.2, n)
            d = paired_difference(base + rng.normal(0.0, 0.2, n), base, kind="unbounded")
            hits += d.ci_low <= 0 <= d.ci_high
            decided += d.verdict() in (SUPPORTED, CONTRADICTED)
        rows.append({"scenario": "symmetric null: normal differences (t-test)", "n": n, "seed": 0,
                     "covered": hits / draws, "decided": decided / draws, "width": np.nan})
    return rows


def fenwold_rows(draws: int, metrics=("doc_mrr@5", "doc_recall@5", "ctx_recall@5")) -> list[dict]:
    """Every paper pair (``uncertainty.paper_pairs``) on ``metrics``: the 44 documents and their questions taken
    as the population, 44 documents drawn with replacement per data set, the truth the population's mean
    difference over questions."""
    from rag_lab.datasets import load_dataset
    from rag_lab.evaluation.uncertainty import paper_pairs, per_question, question_units

    units = question_units(load_dataset("fenwold_gazetteer"))
    results = pd.read_csv(ROOT / "figures/10_compare_retrieval/results_fenwold_gazetteer.csv")
    rows = []
    for metric in metrics:
        table = per_question(results, metric).dropna()
        labels = np.array([units[str(q)] for q in table.index])
        docs, inverse = np.unique(labels, return_inverse=True)
        counts = np.bincount(inverse).astype(float)
        for a, b in paper_pairs(list(table.columns)):
            d = table[a].to_numpy() - table[b].to_numpy()
            doc_sums = np.bincount(inverse, weights=d)
            pick = np.random.default_rng(0).integers(0, len(docs), (draws, len(docs)))
            rows.append({"scenario": f"fenwold_gazetteer by document: {a} - {b} {metric}", "n": len(d), "seed": 0,
                         "truth": d.mean(), **paired_rates(doc_sums[pick], counts[pick], d.mean())})
    return rows


def wilson_rows(draws: int) -> list[dict]:
    """``mean_ci`` on 0/1 scores (Wilson's interval), alone and over 12 documents: where it under-covers."""
    rows = []
    for p in (0.3, 0.5, 0.8, 0.9, 0.95):
        for n in (20, 50):
            rng = np.random.default_rng(0)
            x = (rng.random((draws, n)) < p).astype(float)
            hits = sum(e.ci_low <= p <= e.ci_high for e in (mean_ci(row, kind="binary") for row in x))
            rows.append({"scenario": f"mean, 0/1 (p = {p})", "n": n, "seed": 0, "covered": hits / draws,
                         "decided": np.nan, "width": np.nan})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--only", choices=("bounded", "t", "fenwold", "wilson"), action="append")
    args = parser.parse_args()
    parts = {"bounded": bounded_rows, "t": t_rows, "fenwold": fenwold_rows, "wilson": wilson_rows}
    for part in args.only or parts:
        start = time.perf_counter()
        table = pd.DataFrame(parts[part](args.draws))
        print(f"\n## {part} ({args.draws:,} data sets a cell, {time.perf_counter() - start:.0f} s)\n")
        print(table.to_markdown(index=False, floatfmt=".4f"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
