"""Notebook 10's tables with their uncertainty: leaderboards with 95% intervals (clustered by document
when each question's unit is given), each method minus a baseline (for the forest plots), and the
questions that flip between a paper's method and its baseline. Built on ``evaluation.uncertainty``
over ``evaluate``'s per-question tables; how sure the order itself is: ``ranks``."""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ..core.types import Dataset
from ..datasets import load_dataset
from ..evaluation.metric_specs import LEADERBOARD, RANKED_BY, declared, rank_metric
from ..evaluation.statistics import format_ci
from ..evaluation.flips import found_flip_counts, found_flips, found_within, without_attrs
from ..evaluation.uncertainty import DIFFERENCE_COLUMNS, Units, paired_differences, paper_pairs, summary_with_ci

# declared (metric_specs): the budget beside every row; ranked by context recall, else (PubMedQA) document recall
LEADERBOARD_METRICS, RANK_METRIC = LEADERBOARD, RANKED_BY[0]


def leaderboard_ci(results: pd.DataFrame, k: int, metrics: Sequence[str] = LEADERBOARD_METRICS,
                   units: Units | None = None) -> pd.DataFrame:
    """Per method and metric@k: mean, n, ci_low, ci_high and how the interval was made; methods ordered
    by mean context recall at k (``rank_metric``: document recall without gold passages), best first
    (ties keep the run's order). The order is a ranking of
    means: the intervals (and ``ranks.rank_uncertainty``) say which places are distinguishable.
    ``units``: question id -> the document it targets, for intervals clustered by document."""
    wanted = [f"{m}@{k}" for m in metrics]
    d = without_attrs(results)             # the provenance is not copied into every group
    return ranked(summary_with_ci(d, metrics=wanted, units=units), wanted, f"{rank_metric(d['metric'])}@{k}")


def ranked(long: pd.DataFrame, wanted: Sequence[str], rank_col: str) -> pd.DataFrame:
    """``summary_with_ci`` rows ranked: methods by mean ``rank_col`` (else the first metric present), best
    first, ties in the run's order; metrics in ``wanted``'s order within a method."""
    rank_col = rank_col if rank_col in set(long["metric"]) else long["metric"].iloc[0]
    order = long[long["metric"] == rank_col].sort_values("mean", ascending=False, kind="stable")["method"].tolist()
    order += [m for m in dict.fromkeys(long["method"]) if m not in order]
    long["rank"] = long["method"].map({m: i + 1 for i, m in enumerate(order)})
    long["metric"] = pd.Categorical(long["metric"], [c for c in wanted if c in set(long["metric"])], ordered=True)
    out = long.sort_values(["rank", "metric"]).reset_index(drop=True)
    out["metric"] = out["metric"].astype(str)
    return out[["rank", "method", "metric", "mean", "n", "ci_low", "ci_high", "n_dropped", "interval", "units",
                "design_effect"]]


def leaderboard_shown(board: pd.DataFrame, same: Mapping[str, str] | None = None) -> pd.DataFrame:
    """``leaderboard_ci`` as a reader sees it: a row per method (best first), a column per metric headed
    with its n, cells ``mean [ci_low, ci_high]``; a method of ``same`` (``Run.same``: it retrieves exactly
    as another) shown once, under the first (``shown_once``)."""
    whole = [getattr(declared(metric), "group", "") == "budget" for metric in board["metric"]]   # tokens
    cells = board.assign(cell=[format_ci(m, lo, hi, 0 if w else 3) for w, m, lo, hi in
                               zip(whole, board["mean"], board["ci_low"], board["ci_high"])])
    metrics = list(dict.fromkeys(board["metric"]))
    header = {}
    for metric in metrics:
        ns = sorted({int(n) for n in board.loc[board["metric"] == metric, "n"]})
        header[metric] = f"{metric} (n={ns[0]})" if len(ns) == 1 else f"{metric} (n={min(ns)}-{max(ns)})"
    table = cells.pivot(index="method", columns="metric", values="cell")
    table = table.reindex(index=list(dict.fromkeys(board["method"])), columns=metrics)
    return shown_once(table.rename(columns=header), same or {})


def shown_once(table: pd.DataFrame, same: Mapping[str, str]) -> pd.DataFrame:
    """A table indexed by method with every method of ``same`` (``Run.same``) left out and named beside
    the method it retrieves exactly as: ``gralc-structure (= gralc-kg, gralc-graph)``."""
    names = {kept: [m for m, twin in same.items() if twin == kept] for kept in set(same.values())}
    out = table.drop(index=[m for m in same if m in table.index])
    return out.rename(index={kept: f"{kept} (= {', '.join(twins)})" for kept, twins in names.items()})


def differences_table(results: pd.DataFrame, baseline: str, k: int,
                      metrics: Sequence[str] = ("doc_recall", "ctx_recall", "ctx_precision"),
                      units: Units | None = None) -> pd.DataFrame:
    """Every method minus ``baseline`` at k on each of ``metrics``, paired by question (clustered by
    document with ``units``): one declared family, Holm across the table; empty when the baseline did
    not run."""
    if baseline not in methods_of(results):
        return pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    columns = [f"{m}@{k}" for m in metrics]
    return paired_on_columns(results, baseline, columns, units, f"each method minus {baseline} on {', '.join(columns)}")


def paired_on_columns(results: pd.DataFrame, baseline: str, columns: Sequence[str], units: Units | None,
                      family: str) -> pd.DataFrame:
    """``paired_differences`` of every method minus ``baseline`` on ``columns`` (one family), read from
    those columns' rows only (``rows_of``); the methods in the run's order. The same table as on the whole
    long table, which ``paired_differences`` would label row by row."""
    d = rows_of(results, columns)
    present = set(methods_of(d))
    if baseline not in present:                 # no row of the baseline here: the whole table says so as before
        return paired_differences(results, baseline, metrics=columns, units=units, family=family)
    methods = [m for m in methods_of(results) if m != baseline and m in present]
    return paired_differences(d, baseline, methods=methods, metrics=columns, units=units, family=family)


def rows_of(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The rows of ``df`` (a tidy table) that ``uncertainty.metric_column`` may label as one of ``columns``: a
    metric named as the column, or as the column before its last ``@`` (``ctx_recall`` for ``ctx_recall@5``).
    Taken before a per-question table labels and pivots them, so the long table is not labelled whole for
    each column; its ``attrs`` are not copied."""
    names = set(columns) | {c.rsplit("@", 1)[0] for c in columns if "@" in c}
    d = without_attrs(df)
    return d[d["metric"].isin(names)]


def methods_of(df: pd.DataFrame) -> list[str]:
    """The methods of a tidy table in the run's order: ``pd.unique`` on the column's array, where a loop
    over a long table's Arrow strings (``dict.fromkeys``, ``set``) costs one Python object per row."""
    return list(pd.unique(without_attrs(df)["method"]))


def flip_summary(results: Mapping[str, pd.DataFrame], k: int) -> pd.DataFrame:
    """Per dataset and paper method: questions it finds gold for and its baseline does not (wins), the
    reverse (losses), and ties, at k."""
    rows = []
    for name, df in results.items():
        found = found_within(df, k)           # the long table read once per data set, every pair on its arrays
        for method, baseline in paper_pairs(methods_of(df)):
            rows.append({"dataset": name, "method": method, "baseline": baseline, "k": k,
                         **found_flip_counts(found, method, baseline)})
    return pd.DataFrame(rows, columns=["dataset", "method", "baseline", "k", "wins", "losses", "ties", "n"])


def flipped_questions(results: pd.DataFrame, dataset: "str | Dataset", k: int, limit: int | None = None) -> pd.DataFrame:
    """Every flipped question of every paper method against its baseline on one dataset (a name to load, or the
    loaded ``Dataset`` the results were scored on), with its text."""
    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, limit=limit)
    found, texts = found_within(results, k), {q.id: q.question for q in data.questions}
    frames = [found_flips(found, m, b, texts).assign(method=m, baseline=b) for m, b in paper_pairs(methods_of(results))]
    cols = ["method", "baseline", "question_id", "winner", "question"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)
