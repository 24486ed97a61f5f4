"""How often ``paired_difference`` decides when there is nothing to find, and how often its interval holds the
truth: the table in docs/statistics.md ("How often the interval holds the truth").

4,000 seeded data sets a cell, each run through the package's own test (``coverage.paired_rates``, the
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

from rag_lab.evaluation.coverage import paired_rates  # noqa: E402
from rag_lab.evaluation.statistics import SUPPORTED, CONTRADICTED, mean_ci, paired_difference  # noqa: E402


def by_unit(d: np.ndarray, docs: int | None):
    """Per-unit sums and counts of differences ``d`` (data sets x questions), question i in document i % docs."""
    if docs is None:
        return d, np.ones(d.shape[1])
    labels = np.arange(d.shape[1]) % docs
    onehot = np.eye(docs)[labels]
    return d @ onehot, onehot.sum(axis=0)


def hit_or_miss_vs_rank_two(rng, sets, n):
    """1 or 0 (mean 0.9) against 1 or 0.5 (mean 0.9): the same true mean."""
    return (rng.random((sets, n)) < 0.9).astype(float), np.where(rng.random((sets, n)) < 0.8, 1.0, 0.5)


def binary_vs_graded(rng, sets, n):
    """0/1 with p 0.9 against a graded Beta(9, 1) score (mean 0.9)."""
    return (rng.random((sets, n)) < 0.9).astype(float), rng.beta(9, 1, (sets, n))


def win_loss(win, loss):
    def draw(rng, sets, n):
        u = rng.random((sets, n))
        tie = (rng.random((sets, n)) < 0.5).astype(float)
        return (np.where(u < win, 1.0, np.where(u < win + loss, 0.0, tie)),
                np.where(u < win, 0.0, np.where(u < win + loss, 1.0, tie)))
    return draw


MID = np.array([0, 0.25, 0.5, 0.75, 1.0]), np.array([0.15, 0.1, 0.2, 0.2, 0.35])


def alike_mid(rng, sets, n):
    """Both methods drawn alike from a discrete [0, 1] score with mean 0.6."""
    values, probs = MID
    return values[rng.choice(5, (sets, n), p=probs)], values[rng.choice(5, (sets, n), p=probs)]


def clustered_alike(docs, mean=0.6, icc=0.3, parts=2):
    """Each document a Beta-drawn rate (intra-document correlation ``icc``); both methods the share of
    ``parts`` draws at it."""
    kappa = parts * (1 - icc) / icc

    def draw(rng, sets, n):
        rate = rng.beta(mean * kappa, (1 - mean) * kappa, (sets, docs))[:, np.arange(n) % docs]
        return rng.binomial(parts, rate) / parts, rng.binomial(parts, rate) / parts
    return draw


def clustered_skewed(docs):
    """Each document a rate r = 0.5 + 0.5 Beta(4, 1) (mean 0.9); one method 1 or 0 with P(1) = r, the other 1
    or 0.5 with P(1) = 2r - 1: the same mean r in every document, the shapes of the skewed null."""
    def draw(rng, sets, n):
        rate = (0.5 + 0.5 * rng.beta(4, 1, (sets, docs)))[:, np.arange(n) % docs]
        return ((rng.random((sets, n)) < rate).astype(float),
                np.where(rng.random((sets, n)) < 2 * rate - 1, 1.0, 0.5))
    return draw


BOUNDED = [  # name, draw, docs, truth, ns, seeds
    ("skewed null: hit-or-miss (1/0) vs rank 1 or 2 (1/0.5), mean 0.9", hit_or_miss_vs_rank_two, None, 0.0,
     (20, 50), (0, 1)),
    ("skewed null: 0/1 (p 0.9) vs graded Beta(9, 1)", binary_vs_graded, None, 0.0, (20, 50), (0, 1)),
    ("symmetric null: 0/1 (win 10%, loss 10%)", win_loss(0.1, 0.1), None, 0.0, (20, 50), (0,)),
    ("symmetric null: [0, 1] alike (mid, mean 0.6)", alike_mid, None, 0.0, (20, 50), (0,)),
    ("clustered null: alike, 12 documents (ICC 0.3)", clustered_alike(12), 12, 0.0, (20, 60), (0,)),
    ("clustered null: alike, 44 documents (ICC 0.3)", clustered_alike(44), 44, 0.0, (88, 264), (0,)),
    ("clustered skewed null: 12 documents", clustered_skewed(12), 12, 0.0, (20, 60), (0,)),
    ("clustered skewed null: 44 documents", clustered_skewed(44), 44, 0.0, (88, 264), (0,)),
    ("difference: 0/1 (win 20%, loss 10%)", win_loss(0.2, 0.1), None, 0.1, (20, 50), (0,)),
]


def bounded_rows(draws: int) -> list[dict]:
    rows = []
    for name, draw, docs, truth, ns, seeds in BOUNDED:
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
