"""How often ``paired_difference`` decides when there is nothing to find, and how often its interval holds the
truth: the table in docs/statistics.md ("How often the interval holds the truth").

4,000 seeded data sets a cell, each run through the package's own test (``interval_coverage.paired_rates``, the
bounded-mean test of ``paired_tests`` vectorised; ``mean_ci`` and ``paired_difference`` themselves for the
means and the t-test): skewed nulls (two methods with the same true mean and the shapes retrieval scores
have) at n = 20 and 50 with two seeds, symmetric nulls, clustered nulls over 12 and 44 documents, and the
coverage of differences on fenwold_gazetteer's per-question scores (figures/10_compare_retrieval) resampled
by document. Also Wilson's interval for a 0/1 mean, where it under-covers; whether the test decides 80% of the time
at the MDE ``paired_difference`` reports (``--only mde``), and what a call costs (``--only cost``; under the lock).

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

from interval_coverage import PAIRED_NULLS, by_unit, paired_rates, win_loss  # noqa: E402
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


def _shift(spread_docs: float = 0.0):
    """Differences delta + U(-0.3, 0.3) (+ a document's U(-spread_docs, spread_docs)), as a = 0.5 + d/2, b = 0.5 - d/2:
    the shape does not move with delta, so the MDE is the same at every delta."""
    def draw(rng, delta, n, docs):
        d = delta + rng.uniform(-0.3, 0.3, n)
        if docs:
            d = d + rng.uniform(-spread_docs, spread_docs, docs)[np.arange(n) % docs]
        return 0.5 + d / 2, 0.5 - d / 2
    return draw


def _win_loss(rng, delta, n, docs):
    """0/1 scores, the first method alone right with probability loss + delta, the second alone with probability
    loss = max(0, 0.15 - delta / 2) (30% of questions discordant at no difference)."""
    loss = max(0.0, 0.15 - delta / 2)
    a, b = win_loss(loss + delta, loss)(rng, 1, n)
    return a[0], b[0]


def _normal(rng, delta, n, docs):
    base = rng.normal(0.5, 0.2, n)
    return base + rng.normal(delta, 0.2, n), base


MDE_SCENARIOS = {  # name -> (draw(rng, delta, n, docs) -> (a, b), kind, documents or None, ns)
    "shift: d = delta + U(-0.3, 0.3)": (_shift(), "unit", None, (20, 50)),
    "0/1, 30% discordant": (_win_loss, "binary", None, (20, 50)),
    "clustered shift, 12 documents (+ U(-0.15, 0.15) a document)": (_shift(0.15), "unit", 12, (60,)),
    "clustered shift, 44 documents (+ U(-0.15, 0.15) a document)": (_shift(0.15), "unit", 44, (88,)),
    "unbounded: normal differences (t-test)": (_normal, "unbounded", None, (20, 50)),
}


def _decide_at(draw, kind, docs, n, delta, draws, seed):
    """The median MDE ``paired_difference`` reports, the share decided on the true side (supported) and, for
    bounded kinds, the median MDE of the t formula on the same data sets, over ``draws`` data sets at ``delta``."""
    rng = np.random.default_rng(seed)
    units = None if docs is None else np.arange(n) % docs
    mde, t_mde, found = [], [], 0
    for _ in range(draws):
        a, b = draw(rng, delta, n, docs)
        d = paired_difference(a, b, units=units, kind=kind)
        mde.append(d.mde)
        found += d.verdict() == SUPPORTED
        if kind != "unbounded":
            t_mde.append(paired_difference(a, b, units=units, kind="unbounded").mde)
    return float(np.nanmedian(mde)), found / draws, float(np.nanmedian(t_mde)) if t_mde else np.nan


def mde_rows(draws: int) -> list[dict]:
    """At the MDE the package reports, does the test it reports it for decide 80% of the time? Per scenario: the
    median MDE over data sets drawn at no difference, then data sets drawn with that true difference (another
    seed): the share supported and the MDE reported there; beside it the t formula's MDE (the old one) and how
    often the bounded-mean test finds a true difference of that size."""
    rows = []
    for name, (draw, kind, docs, ns) in MDE_SCENARIOS.items():
        for n in ns:
            mde, _, t_mde = _decide_at(draw, kind, docs, n, 0.0, draws, 0)
            mde_there, power, _ = _decide_at(draw, kind, docs, n, mde, draws, 1)
            old_power = _decide_at(draw, kind, docs, n, t_mde, draws, 2)[1] if kind != "unbounded" else np.nan
            rows.append({"scenario": name, "n": n, "mde (median)": mde, "decided at the mde": power,
                         "mde reported there": mde_there, "t formula's mde": t_mde,
                         "decided at the t formula's mde": old_power})
    return rows


def cost_rows(draws: int, repeat: int = 200) -> list[dict]:
    """Seconds per ``paired_difference`` call (the MDE included) and per ``BoundedMean.mde`` alone, on 20
    questions and on 259 questions in 44 documents (fenwold_gazetteer's shape). Time it under the lock."""
    from rag_lab.evaluation.paired_tests import BoundedMean, spread

    rows = []
    rng = np.random.default_rng(0)
    for n, docs in ((20, None), (259, 44)):
        a, b = rng.random(n), rng.random(n)
        units = None if docs is None else np.arange(n) % docs
        paired_difference(a, b, units=units)            # the weights for these units, made once and cached
        start = time.perf_counter()
        for _ in range(repeat):
            paired_difference(a, b, units=units)
        per_call = (time.perf_counter() - start) / repeat
        s = spread(a - b, None if units is None else units.astype(str))
        test = BoundedMean(s.sums, s.counts)
        start = time.perf_counter()
        for _ in range(repeat):
            test.mde(0.0, 0.95, 0.0)
        rows.append({"scenario": f"{n} questions" + (f" in {docs} documents" if docs else ""), "n": n,
                     "paired_difference, ms a call": 1e3 * per_call,
                     "BoundedMean.mde alone, ms": 1e3 * (time.perf_counter() - start) / repeat})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--only", choices=("bounded", "t", "fenwold", "wilson", "mde", "cost"), action="append")
    args = parser.parse_args()
    parts = {"bounded": bounded_rows, "t": t_rows, "fenwold": fenwold_rows, "wilson": wilson_rows, "mde": mde_rows,
             "cost": cost_rows}
    for part in args.only or parts:
        start = time.perf_counter()
        table = pd.DataFrame(parts[part](args.draws))
        print(f"\n## {part} ({args.draws:,} data sets a cell, {time.perf_counter() - start:.0f} s)\n")
        print(table.to_markdown(index=False, floatfmt=".4f"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
