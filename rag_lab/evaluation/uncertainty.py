"""Intervals and paired comparisons over ``evaluate``'s tidy table (one row per method, question,
metric and k), built on ``statistics``: ``summary_with_ci`` (means with intervals), ``paired_differences``
(each method minus a baseline) and ``decided_pairs`` (the pairs a notebook names), each table one declared
family decided by ``decide`` (Holm within it; each interval is the comparison's own, labelled
"unadjusted": docs/statistics.md). A (method, question) pair with two rows for one metric@k is refused:
it would count the question twice in one mean and once in a paired table.
"""
from __future__ import annotations

from typing import Mapping, Sequence, Union

import numpy as np
import pandas as pd

from ..core.types import Dataset
from .ledger import record
from .metric_specs import declared_kind
from .statistics import (ALPHA, UNADJUSTED, Difference, format_ci, format_p, holm, holm_floors, mean_ci,
                         paired_difference, verdict_and_reason, why_none)

SUMMARY_COLUMNS = ["method", "metric", "mean", "n", "n_dropped", "ci_low", "ci_high", "interval", "units",
                   "design_effect"]
TEST_COLUMNS = ["threshold", "diff", "n", "n_dropped", "units", "design_effect", "ci_low", "ci_high", "interval", "p",
                "resamples", "p_floor", "mde", "family", "family_size", "p_holm", "verdict", "reason"]
DIFFERENCE_COLUMNS = ["method", "baseline", "metric", *TEST_COLUMNS]
# Each paper's methods against the baseline of their family (the registry's names): the SSG traversals
# against basic retrieval, the GraLC-RAG strategies against fixed-size chunks, every other against naive.
FAMILY_BASELINES = (("ssg-", "ssg-basic-retrieval"), ("gralc-", "gralc-naive"), ("", "naive"))
Units = Mapping[str, str]    # question id -> its unit (the document it targets)
# ``eval --baseline``'s declared family unless the user names another: the headline metrics at the
# headline k (the k every paper claim of compare/claims.py reads), Holm-adjusted across the methods.
HEADLINE_METRICS = ("doc_mrr", "ctx_recall")
HEADLINE_K = 5


def headline_family(ks: Sequence[int]) -> list[str]:
    """The metric@k columns ``eval --baseline`` tests by default: ``HEADLINE_METRICS`` at ``HEADLINE_K``,
    or at the largest k run when 5 is not among ``ks``."""
    k = HEADLINE_K if HEADLINE_K in ks else max(ks)
    return [f"{m}@{k}" for m in HEADLINE_METRICS]


def testable_family(columns: Sequence[str]) -> list[str]:
    """``columns`` as a family to test, or a ValueError naming any that is never tested: a column without
    k (token counts, latency: the bill, not a finding) or a judge's spread (``*_judge_sd``)."""
    bad = [c for c in columns if "@" not in c or c.split("@")[0].endswith("_judge_sd")]
    if bad or not columns:
        raise ValueError(f"a tested family holds metric@k columns of findings, not token counts, latency or judge "
                         f"spreads; got {list(columns)} ({bad or 'empty'} not testable)")
    return list(dict.fromkeys(columns))


def question_units(dataset: Dataset) -> dict[str, str]:
    """question id -> its unit for clustered resampling: the first of its gold documents (the one
    the question was written from; the datasets list it first). Questions about one document share
    its wording and its chunks, so their scores are not independent. A question that names several
    documents is counted with its first only: joining every question that shares any gold document
    would merge italian_cuisine's 20 questions into one unit. A question without gold documents is
    its own unit."""
    return {q.id: (q.gold_doc_ids[0] if q.gold_doc_ids else f"question:{q.id}") for q in dataset.questions}


def unit_labels(question_ids: Sequence[str], units: Units | None) -> list[str] | None:
    """Each question's unit (a question the mapping lacks is its own), or None without ``units``."""
    if units is None:
        return None
    return [units.get(q, f"question:{q}") for q in question_ids]


def clustering_note(row) -> str:
    """``, 12 documents, design effect 1.40`` for a clustered row (``units`` < ``n``), else ""."""
    units, n, deff = row["units"], row["n"], row["design_effect"]
    if pd.isna(units) or units >= n:
        return ""
    documents = f", {int(units)} document{'s' if int(units) != 1 else ''}"
    return f"{documents}, design effect {deff:.2f}" if pd.notna(deff) else documents


def decide(rows: pd.DataFrame, family: str) -> pd.DataFrame:
    """``rows`` (``Difference`` columns) as one declared family of comparisons: ``family`` (its id),
    ``family_size`` (the comparisons with a p), ``p_holm`` (Holm within the family), ``verdict`` and
    ``reason`` (``statistics.verdict_and_reason`` on ``p_holm``, with the floor Holm puts under every
    adjusted p); where that floor leaves no p below ``ALPHA`` the row's MDE is NaN. In a family of more than one, each interval is labelled ``unadjusted`` (it is the
    comparison's own 95% interval, not simultaneous for the family)."""
    tested = rows["p"].notna()
    size = int(tested.sum())
    p_holm = holm(rows["p"].to_numpy(dtype=float)) if len(rows) else np.array([])
    floors = holm_floors(rows["p_floor"].where(tested).to_numpy(dtype=float)) if len(rows) else np.array([])
    out = rows.assign(family=family, family_size=size, p_holm=p_holm)
    out["mde"] = out["mde"].where(~(floors >= ALPHA))     # a design that cannot decide detects nothing: no MDE
    if size > 1:
        out["interval"] = [i if str(i).startswith("none") or str(i).endswith(UNADJUSTED) else f"{i}, {UNADJUSTED}"
                           for i in out["interval"]]
    words = [verdict_and_reason(r["diff"], r["p_holm"], r["threshold"], f, r["mde"], n=r["n"], units=r["units"],
                                family_size=size, own_floor=r["p_floor"], no_test=why_none(r["interval"]))
             for (_, r), f in zip(out.iterrows(), floors)]
    out["verdict"] = [w for w, _ in words]
    out["reason"] = [why for _, why in words]
    return out


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
    metric, k = df["metric"].astype(str).to_numpy(dtype=object), df["k"].to_numpy(dtype=float)
    at = ~np.isnan(k)                  # metric_column on every row at once: no walk over the long table
    column = metric.copy()
    column[at] = metric[at] + "@" + k[at].astype(np.int64).astype(str).astype(object)
    return df.assign(column=column)


def refuse_duplicates(d: pd.DataFrame) -> pd.DataFrame:
    """``d`` (``_labelled``) unchanged, or a ValueError naming each method, metric@k and the question ids
    that have more than one row: one question counted twice would make n differ between a mean and a
    paired table, silently."""
    dup = d.duplicated(["method", "column", "question_id"], keep=False)
    if dup.any():
        named = d[dup].groupby(["method", "column"], sort=False)["question_id"].agg(
            lambda q: ", ".join(map(str, dict.fromkeys(q))))
        listed = "; ".join(f"{m} {c}: {ids}" for (m, c), ids in named.items())
        raise ValueError(f"several rows for one (method, question) on one metric@k ({listed}); split the table by "
                         "its other columns (e.g. a condition) so each question has one row")
    return d


def summary_with_ci(df: pd.DataFrame, metrics: Sequence[str] | None = None, units: Units | None = None) -> pd.DataFrame:
    """One row per method and metric@k (``metrics``: only these columns): ``SUMMARY_COLUMNS``. NaN
    values are not scored questions: they count in neither the mean nor n (``n_dropped`` counts them).
    Rows without k (latency, tokens: the machine and the bill, not findings) are left out unless named
    in ``metrics``. ``units``: question id -> unit, for intervals clustered by document. Each interval is
    the one of the metric's declared kind (``metric_specs``; a name without one: read off the values)."""
    d = _labelled(df)
    if metrics is None:
        d = d[d["k"].notna()]
    else:
        d = d[d["column"].isin(list(metrics))]
    refuse_duplicates(d)
    rows = []
    for (method, column), g in d.groupby(["method", "column"], sort=False):
        est = mean_ci(g["value"].to_numpy(dtype=float), units=unit_labels(g["question_id"].tolist(), units),
                      kind=declared_kind(column))
        rows.append({"method": method, "metric": column, **est.as_dict()})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def interval_frames(df: pd.DataFrame, columns: dict[str, str], units: Units | None = None) -> dict[str, pd.DataFrame]:
    """For a table of means whose columns are labels of metric@k columns (``{"MRR": "doc_mrr@10"}``):
    ``ci_low``, ``ci_high`` and ``n`` frames of the same shape (rows: methods), for ``plots.with_paper``."""
    summary = summary_with_ci(df, metrics=list(columns.values()), units=units).set_index(["method", "metric"])
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
    d = refuse_duplicates(d[d["column"] == column])
    return d.pivot_table(index="question_id", columns="method", values="value", aggfunc="first", sort=False,
                         dropna=False)


def paired_on(table: pd.DataFrame, a: str, b: str, threshold: float = 0.0, units: Units | None = None,
              kind=None) -> Difference:
    """``a - b`` on ``per_question``'s ``table`` (questions as rows), paired by question; ``kind``: the
    metric's (``metric_specs``), None to read it off the values."""
    return paired_difference(table[a].to_numpy(dtype=float), table[b].to_numpy(dtype=float), threshold,
                             units=unit_labels([str(q) for q in table.index], units), kind=kind)


def paired_differences(df: pd.DataFrame, baseline: str, methods: Sequence[str] | None = None,
                       metrics: Sequence[str] | None = None, units: Units | None = None,
                       family: str | None = None) -> pd.DataFrame:
    """Each method (``methods``, default every other one) minus ``baseline`` on each metric@k
    (``metrics``, default every metric@k the baseline has but a judge's spread), paired by question:
    ``DIFFERENCE_COLUMNS``.
    The rows are one family (``family``, default "each method minus <baseline>"): ``p_holm`` and the
    verdicts are adjusted across them."""
    d = _labelled(df)
    known = list(dict.fromkeys(d["method"]))
    if baseline not in known:
        raise ValueError(f"baseline {baseline!r} is not among the evaluated methods {known}")
    methods = [m for m in (methods or known) if m != baseline]
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise ValueError(f"methods {unknown} are not among the evaluated methods {known}")
    at_k = d.loc[(d["method"] == baseline) & d["k"].notna() & ~d["metric"].str.endswith("_judge_sd"), "column"]
    columns = list(metrics) if metrics is not None else list(dict.fromkeys(at_k))
    return decided_pairs(d, columns, [(m, baseline) for m in methods], family or f"each method minus {baseline}", units)


Side = Union[str, Sequence[str], float]    # a method; the per-question mean of several; a constant


def decided_pairs(df: pd.DataFrame, columns: str | Sequence[str], pairs: Sequence[tuple[str, str]], family: str,
                  units: Units | None = None, sides: Mapping[str, Side] | None = None,
                  by: str | None = None, ledger: tuple[str, str] | None = None) -> pd.DataFrame:
    """Each (a, b) of ``pairs`` on each metric@k of ``columns``, a minus b paired by question, every row one
    declared family (``decide``): ``DIFFERENCE_COLUMNS``; a pair with a side nobody scored is left out. A name
    in ``sides`` is no method: a tuple of methods stands for their mean on each question (so each question
    counts once), a number for a constant (a test against a bound). Method against method is tested with the
    metric's declared kind; a mean or a constant is no score of that kind (a mean of counts is no count), so
    there the kind is read off the values. ``by``: a column of ``df`` (a document-length condition) whose
    values are other texts for the same questions: each is paired on its own, and its rows carry it (the
    ledger files them apart). ``ledger``: (data set, condition) to record the rows under in the run's ledger
    (``ledger.record``; the condition, "" for none, beside the rows' own)."""
    sides = sides or {}
    parts = [(None, df)] if by is None else [(v, df[df[by] == v]) for v in dict.fromkeys(df[by])]
    rows = []
    for column in [columns] if isinstance(columns, str) else columns:
        for value, part in parts:
            table = per_question(part, column)
            labels = unit_labels([str(q) for q in table.index], units)
            for a, b in pairs:
                left, right = _side(table, sides.get(a, a)), _side(table, sides.get(b, b))
                if left is None or right is None:
                    continue
                kind = declared_kind(column) if a not in sides and b not in sides else None
                rows.append({**({by: value} if by else {}), "method": a, "baseline": b, "metric": column,
                             **paired_difference(left, right, units=labels, kind=kind).as_dict()})
    head = [by] if by else []
    out = decide(pd.DataFrame(rows, columns=[*head, *DIFFERENCE_COLUMNS[:DIFFERENCE_COLUMNS.index("family")]]), family)
    if ledger is not None:
        record(out if by else out.assign(condition=ledger[1]), ledger[0])
    return out[[*head, *DIFFERENCE_COLUMNS]]


def _side(table: pd.DataFrame, side: Side) -> np.ndarray | None:
    """A side's score on each question of ``per_question``'s ``table``; None when no method of it scored."""
    if isinstance(side, (int, float)):
        return np.full(len(table), float(side))
    if isinstance(side, str):
        return table[side].to_numpy(dtype=float) if side in table.columns else None
    methods = [m for m in side if m in table.columns]
    return table[methods].mean(axis=1, skipna=False).to_numpy(dtype=float) if methods else None


def comparison_note(row) -> str:
    """``n = 20, 3 documents, design effect 1.40, p = 0.03, MDE 0.150`` for one comparison row."""
    mde = "" if pd.isna(row["mde"]) else f", MDE {row['mde']:.3f}"
    return f"n = {int(row['n'])}{clustering_note(row)}, p = {format_p(row['p'])}{mde}"


def pairwise_differences(df: pd.DataFrame, column: str, methods: Sequence[str] | None = None,
                         units: Units | None = None, ledger: tuple[str, str] | None = None) -> pd.DataFrame:
    """Every pair of methods on one metric@k, the higher mean first (so ``diff`` >= 0), paired by
    question; the pairs are one family (Holm across them): which places of a ranking the questions
    can tell apart. The other side is named ``below``; ``ledger`` as ``decided_pairs``'."""
    table = per_question(df, column)
    methods = [m for m in (methods or table.columns) if m in table.columns]
    ranked = sorted(methods, key=lambda m: -np.nanmean(table[m].to_numpy()) if table[m].notna().any() else np.inf)
    pairs = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1:]]
    out = decided_pairs(df, column, pairs, f"every pair on {column}", units, ledger=ledger)
    return out.rename(columns={"baseline": "below"})


READ_COLUMNS = ("diff", "n", "ci_low", "ci_high", "p_holm", "verdict", "reason")


def readable_decisions(table: pd.DataFrame) -> pd.DataFrame:
    """A table of tests (``TEST_COLUMNS`` after the columns naming what is compared) as a reader reads it:
    what is compared, the difference, n, its interval, the Holm p, the verdict and its reason. The other test
    columns (interval method, units, resamples, family …) stay in the saved CSV; shown whole they make the
    table too wide to show without cutting it."""
    missing = [c for c in READ_COLUMNS if c not in table.columns]
    if table.empty:
        return table             # no test ran (e.g. no condition to contrast): nothing to narrow
    if missing:
        raise ValueError(f"expected a table of tests with columns {list(READ_COLUMNS)}; missing {missing}")
    named = [c for c in table.columns if c not in TEST_COLUMNS]
    return table[[*named, *READ_COLUMNS]]
