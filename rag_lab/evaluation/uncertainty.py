"""Intervals and paired comparisons over ``evaluate``'s tidy table (one row per method, question,
metric and k), built on ``statistics``.

- ``summary_with_ci``: per method and metric@k the mean, n (questions scored) and a 95% interval.
- ``paired_differences``: each method minus a named baseline on the questions both scored, with
  the difference's interval, the permutation p, the Holm-adjusted p across the table's comparisons,
  and the minimum detectable effect (MDE).
- ``flips``: the questions one method gets right (gold found at k) and the other does not.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..core.types import Dataset
from .statistics import format_ci, holm, mean_ci, paired_difference

SUMMARY_COLUMNS = ["method", "metric", "mean", "n", "ci_low", "ci_high"]
DIFFERENCE_COLUMNS = ["method", "baseline", "metric", "diff", "n", "ci_low", "ci_high", "p", "p_holm", "mde"]
FOUND_METRICS = ("ctx_mrr", "doc_mrr")   # a question is answered right at k when its first gold item is within k
# Each paper's methods against the baseline of their family (the registry's names): the SSG traversals
# against basic retrieval, the GraLC-RAG strategies against fixed-size chunks, every other against naive.
FAMILY_BASELINES = (("ssg-", "ssg-basic-retrieval"), ("gralc-", "gralc-naive"), ("", "naive"))


def family_baseline(method: str) -> str | None:
    """The baseline a method is compared with (``FAMILY_BASELINES``); None for a baseline itself."""
    baseline = next(b for prefix, b in FAMILY_BASELINES if method.startswith(prefix))
    return None if method == baseline else baseline


def paper_pairs(methods: Sequence[str]) -> list[tuple[str, str]]:
    """(method, its family's baseline) for every method whose baseline is among ``methods`` too."""
    present = set(methods)
    return [(m, b) for m in methods if (b := family_baseline(m)) is not None and b in present]


def metric_column(metric: str, k) -> str:
    """``metric@k``, or the metric's bare name for a row without k (costs)."""
    return metric if pd.isna(k) else f"{metric}@{int(k)}"


def _labelled(df: pd.DataFrame) -> pd.DataFrame:
    missing = {"method", "question_id", "metric", "k", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"expected evaluate()'s tidy table (method, question_id, metric, k, value); missing {sorted(missing)}")
    return df.assign(column=[metric_column(m, k) for m, k in zip(df["metric"], df["k"])])


def summary_with_ci(df: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per method and metric@k (``metrics``: only these columns): mean, n, ci_low, ci_high.
    NaN values are not scored questions: they count in neither the mean nor n. Rows without k
    (latency, tokens: the machine and the bill, not findings) are left out unless named in ``metrics``."""
    d = _labelled(df)
    if metrics is None:
        d = d[d["k"].notna()]
    else:
        d = d[d["column"].isin(list(metrics))]
    rows = []
    for (method, column), values in d.groupby(["method", "column"], sort=False)["value"]:
        est = mean_ci(values.to_numpy())
        rows.append((method, column, est.mean, est.n, est.ci_low, est.ci_high))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def labelled_summary(df: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """``summary_with_ci`` of the metric@k columns named in ``columns`` (label -> metric@k), the metric
    column holding the labels (e.g. a paper's column names)."""
    summary = summary_with_ci(df, metrics=list(columns.values()))
    return summary.assign(metric=summary["metric"].map({v: k for k, v in columns.items()}))


def interval_frames(df: pd.DataFrame, columns: dict[str, str]) -> dict[str, pd.DataFrame]:
    """For a table of means whose columns are labels of metric@k columns (``{"MRR": "doc_mrr@10"}``):
    ``ci_low``, ``ci_high`` and ``n`` frames of the same shape (rows: methods), for ``plots.with_paper``."""
    summary = summary_with_ci(df, metrics=list(columns.values())).set_index(["method", "metric"])
    methods = list(dict.fromkeys(summary.index.get_level_values("method")))
    out = {}
    for part in ("ci_low", "ci_high", "n"):
        out[part] = pd.DataFrame({label: [summary[part].get((m, metric), np.nan) for m in methods]
                                  for label, metric in columns.items()}, index=methods)
    return out


def formatted_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary_with_ci``'s rows as a reading table: metric@k rows, method columns, cells
    ``0.612 [0.480, 0.741]`` and an ``n`` column per method where the metrics' n differ."""
    cells = summary.assign(cell=[format_ci(m, lo, hi) for m, lo, hi in
                                 zip(summary["mean"], summary["ci_low"], summary["ci_high"])])
    table = cells.pivot(index="metric", columns="method", values="cell")
    table = table.reindex(index=list(dict.fromkeys(summary["metric"])), columns=list(dict.fromkeys(summary["method"])))
    n = summary.pivot(index="metric", columns="method", values="n").reindex_like(table)
    table.insert(0, "n", [_n_label(n.loc[m]) for m in table.index])
    return table


def _n_label(row: pd.Series) -> str:
    values = sorted({int(v) for v in row.dropna()})
    return str(values[0]) if len(values) == 1 else "/".join(map(str, values))


def per_question(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """question_id x method scores of one metric@k (NaN where a method has no score)."""
    d = _labelled(df)
    d = d[d["column"] == column]
    return d.pivot_table(index="question_id", columns="method", values="value", aggfunc="first", sort=False,
                         dropna=False)


def paired_differences(df: pd.DataFrame, baseline: str, methods: Sequence[str] | None = None,
                       metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Each method (``methods``, default every other one) minus ``baseline`` on each metric@k
    (``metrics``, default every metric@k the baseline has), paired by question. ``p_holm`` is adjusted
    across every row of this table."""
    d = _labelled(df)
    known = list(dict.fromkeys(d["method"]))
    if baseline not in known:
        raise ValueError(f"baseline {baseline!r} is not among the evaluated methods {known}")
    methods = [m for m in (methods or known) if m != baseline]
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise ValueError(f"methods {unknown} are not among the evaluated methods {known}")
    at_k = d.loc[(d["method"] == baseline) & d["k"].notna(), "column"]
    columns = list(metrics) if metrics is not None else list(dict.fromkeys(at_k))
    rows = []
    for column in columns:
        table = per_question(d, column)
        if baseline not in table.columns:
            continue
        for m in methods:
            if m in table.columns:
                diff = paired_difference(table[m].to_numpy(), table[baseline].to_numpy())
                rows.append({"method": m, "baseline": baseline, "metric": column, **diff.as_dict()})
    out = pd.DataFrame(rows, columns=[c for c in DIFFERENCE_COLUMNS if c != "p_holm"])
    out.insert(out.columns.get_loc("p") + 1, "p_holm", holm(out["p"].to_numpy()) if len(out) else [])
    return out


def difference_sentence(df: pd.DataFrame, a: str, b: str, column: str, threshold: float = 0.0) -> str:
    """``a - b on metric@k = d [lo, hi] (n = .., p = .., MDE ..): verdict`` for one paired comparison, the
    verdict as ``statistics.verdict`` reads the interval against ``threshold``."""
    from .statistics import verdict

    table = per_question(df, column)
    if a not in table.columns or b not in table.columns:
        return f"{a} - {b} on {column}: not both scored in this run"
    d = paired_difference(table[a].to_numpy(), table[b].to_numpy())
    return (f"{a} - {b} on {column}: {format_ci(d.diff, d.ci_low, d.ci_high)} (n = {d.n}, p = {d.p:.2f}, "
            f"MDE {d.mde:.3f}): {verdict(d.ci_low, d.ci_high, threshold)}")


def pairwise_differences(df: pd.DataFrame, column: str, methods: Sequence[str] | None = None) -> pd.DataFrame:
    """Every pair of methods on one metric@k, the higher mean first (so ``diff`` >= 0), paired by
    question, Holm across the pairs: which places of a ranking the questions can tell apart."""
    table = per_question(df, column)
    methods = [m for m in (methods or table.columns) if m in table.columns]
    ranked = sorted(methods, key=lambda m: -np.nanmean(table[m].to_numpy()) if table[m].notna().any() else np.inf)
    rows = []
    for i, a in enumerate(ranked):
        for b in ranked[i + 1:]:
            d = paired_difference(table[a].to_numpy(), table[b].to_numpy())
            rows.append({"method": a, "below": b, "metric": column, **d.as_dict()})
    out = pd.DataFrame(rows, columns=["method", "below", "metric", "diff", "n", "ci_low", "ci_high", "p", "mde"])
    out.insert(out.columns.get_loc("p") + 1, "p_holm", holm(out["p"].to_numpy()) if len(out) else [])
    return out


def _found(d: pd.DataFrame, method: str, k: int) -> pd.Series:
    """question_id -> gold found within k (first gold at rank <= k), from the first of FOUND_METRICS the
    question has a score for."""
    found = pd.Series(dtype=object)
    for metric in FOUND_METRICS:
        rows = d[(d["method"] == method) & (d["metric"] == metric) & (d["k"] == k)].dropna(subset=["value"])
        values = rows.set_index("question_id")["value"] > 0
        found = pd.concat([found, values[~values.index.isin(found.index)]])
    return found


def flips(df: pd.DataFrame, a: str, b: str, k: int, dataset: Dataset | None = None) -> pd.DataFrame:
    """Questions where exactly one of ``a`` and ``b`` finds gold within ``k``: ``question_id``,
    ``question`` (with ``dataset``), ``winner``. Ties (both or neither) are left out; see ``flip_counts``."""
    d = _labelled(df)
    fa, fb = _found(d, a, k), _found(d, b, k)
    both = [q for q in fa.index if q in fb.index]
    texts = {q.id: q.question for q in dataset.questions} if dataset is not None else {}
    rows = [{"question_id": q, "question": texts.get(q, ""), "winner": a if fa[q] else b}
            for q in both if bool(fa[q]) != bool(fb[q])]
    return pd.DataFrame(rows, columns=["question_id", "question", "winner"])


def flip_counts(df: pd.DataFrame, a: str, b: str, k: int) -> dict[str, int]:
    """Of the questions both methods were scored on: ``a`` finds gold and ``b`` not (wins), the
    reverse (losses), and the same outcome (ties)."""
    d = _labelled(df)
    fa, fb = _found(d, a, k), _found(d, b, k)
    both = [q for q in fa.index if q in fb.index]
    wins = int(sum(bool(fa[q]) and not bool(fb[q]) for q in both))
    losses = int(sum(bool(fb[q]) and not bool(fa[q]) for q in both))
    return {"wins": wins, "losses": losses, "ties": len(both) - wins - losses, "n": len(both)}


def judge_spread(repeats: Sequence[Sequence[float]]) -> float:
    """The judge's own noise: the mean over samples of the standard deviation of a sample's repeated
    scores (``repeats[r][i]``: repeat r of sample i); NaN with fewer than two repeats."""
    arr = np.asarray(repeats, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 2:
        return float("nan")
    with np.errstate(all="ignore"):
        per_sample = np.nanstd(arr, axis=0, ddof=1)
    return float(np.nanmean(per_sample)) if np.isfinite(per_sample).any() else float("nan")
