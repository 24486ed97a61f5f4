"""GraLC-RAG's Tables 1-6 in the paper's layout, from the tidy per-question rows of ``experiment``'s runs:
the means (rows labelled with the paper's strategy names), their n and 95% intervals over questions
(``evaluation.uncertainty``), and ours set beside the paper's numbers (with a difference only where the
setting is like-for-like)."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from ...evaluation.metrics import coverage_metric
from ...evaluation.uncertainty import interval_frames
from . import paper
from .method import STRATEGIES
from .seccov import PAPER_READING_WORDS, PAPER_SECCOV

ALL = list(STRATEGIES)
SECCOV = PAPER_SECCOV                        # the reading whose pattern matches the paper's (seccov.py)
SOURCE_SECCOV = coverage_metric("section")    # ours: top-level sections of the question's source article
TABLE5_READING = (f"SecCov = distinct {PAPER_READING_WORDS} (the reading that reproduces the paper's pattern, "
                  "docs/metrics.md)")


def metric_means(df: pd.DataFrame, metric: str, k: int | None = None, by: Sequence[str] = ("method",)) -> pd.Series:
    d = df[df["metric"] == metric]
    d = d[d["k"].isna()] if k is None else d[d["k"] == k]
    return d.groupby(list(by), sort=False)["value"].mean()


def _relabel(frame: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    frame = frame.reindex([n for n in order if n in frame.index])
    frame.index = [paper.label(n) for n in frame.index]
    return frame


def table1(df: pd.DataFrame, ks: Sequence[int] = (1, 3, 5, 10)) -> pd.DataFrame:
    """MRR (at the deepest k) and Recall@k at document level."""
    ks = sorted(ks)
    cols = {"MRR": metric_means(df, "doc_mrr", ks[-1])}
    cols.update({f"R@{k}": metric_means(df, "doc_recall", k) for k in ks})
    return _relabel(pd.DataFrame(cols), ALL)


def table1_columns(ks: Sequence[int] = (1, 3, 5, 10)) -> dict[str, str]:
    """Table 1's column labels -> the metric@k each is the mean of."""
    ks = sorted(ks)
    return {"MRR": f"doc_mrr@{ks[-1]}", **{f"R@{k}": f"doc_recall@{k}" for k in ks}}


def table1_intervals(df: pd.DataFrame, ks: Sequence[int] = (1, 3, 5, 10)) -> dict[str, pd.DataFrame]:
    """``ci_low``, ``ci_high`` and ``n`` of Table 1's cells (95% bootstrap over questions)."""
    return {part: _relabel(frame, ALL) for part, frame in interval_frames(df, table1_columns(ks)).items()}


def table2(t1: pd.DataFrame) -> pd.DataFrame:
    """The ablation rows of Table 1, ΔMRR against the late-chunking base (as the paper computes it);
    empty when the base did not run (no ΔMRR without it)."""
    steps = dict(zip(paper.ABLATION_STRATEGIES, paper.ABLATION))
    cols = [c for c in ("MRR", "R@1", "R@5") if c in t1.columns]
    names = [n for n in steps if paper.label(n) in t1.index]
    if not names or names[0] != paper.ABLATION_STRATEGIES[0]:
        return pd.DataFrame(columns=cols + ["ΔMRR"], dtype=float)
    out = t1.loc[[paper.label(n) for n in names], cols].copy()
    out["ΔMRR"] = out["MRR"] - out["MRR"].iloc[0]
    out.iloc[0, out.columns.get_loc("ΔMRR")] = math.nan
    out.index = [steps[n] for n in names]
    return out


def table2_beside(t2: pd.DataFrame, diffs: pd.DataFrame) -> pd.DataFrame:
    """Table 2 beside the paper: MRR, R@1, R@5 (ours and paper-reported; their intervals are Table 1's,
    the same cells), then ΔMRR with the paired interval of each step against the base (``diffs``:
    ``comparisons.ablation``), its Holm p and the paper's ΔMRR."""
    reported = paper.table2()
    parts = {}
    for c in [c for c in t2.columns if c != "ΔMRR"]:
        parts[(c, "ours")] = t2[c]
        parts[(c, "paper-reported")] = reported[c].reindex(t2.index)
    parts[("ΔMRR", "ours")] = t2["ΔMRR"]
    for part, name in (("n", "n"), ("ci_low", "ci_low"), ("ci_high", "ci_high"), ("p_holm", "Holm p")):
        parts[("ΔMRR", name)] = diffs[part].reindex(t2.index) if part in diffs else math.nan
    parts[("ΔMRR", "paper-reported")] = reported["ΔMRR"].reindex(t2.index)
    return pd.DataFrame(parts, index=t2.index)


def table3(builds: pd.DataFrame) -> pd.DataFrame:
    """Chunks and indexing seconds per strategy (from ``efficiency`` for cold timings)."""
    wide = builds.pivot_table(index="method", columns="metric", values="value", aggfunc="sum", sort=False)
    out = pd.DataFrame({"Chunks": wide["chunks"], "Time (s)": wide["build_seconds"]})
    return _relabel(out, ALL)


def table4_columns(ks: Sequence[int] = (1, 5, 20)) -> dict[str, str]:
    """Table 4's column labels -> the metric@k each is the mean of (MRR at the deepest k)."""
    ks = sorted(ks)
    return {"MRR": f"doc_mrr@{ks[-1]}", **{f"R@{k}": f"doc_recall@{k}" for k in ks[:-1]}}


def _means(df: pd.DataFrame, columns: Mapping[str, str]) -> pd.DataFrame:
    """Means per method of the metric@k columns named in ``columns`` (label -> metric@k)."""
    return pd.DataFrame({label: metric_means(df, column.rsplit("@", 1)[0], int(column.rsplit("@", 1)[1]))
                         for label, column in columns.items()})


def _by_condition(grad: pd.DataFrame, frame_of) -> list[pd.DataFrame]:
    parts = []
    for cond, d in grad.groupby("condition", sort=False):
        t = _relabel(frame_of(d), ALL)
        t.index = pd.MultiIndex.from_product([[cond], t.index], names=["condition", "strategy"])
        parts.append(t)
    return parts


def table4(grad: pd.DataFrame, ks: Sequence[int] = (1, 5, 20)) -> pd.DataFrame:
    columns = table4_columns(ks)
    parts = _by_condition(grad, lambda d: _means(d, columns))
    if not parts:  # no condition in the data (PubMedQA: abstracts only)
        return pd.DataFrame(columns=list(columns), index=pd.MultiIndex.from_tuples([], names=["condition", "strategy"]),
                            dtype=float)
    return pd.concat(parts)


def table4_intervals(grad: pd.DataFrame, ks: Sequence[int] = (1, 5, 20)) -> dict[str, pd.DataFrame]:
    """``ci_low``, ``ci_high`` and ``n`` of Table 4's cells (95% bootstrap over each condition's questions),
    indexed (condition, strategy) like ``table4``."""
    columns = table4_columns(ks)
    out = {}
    for part in INTERVAL_PARTS:
        parts = _by_condition(grad, lambda d: interval_frames(d, columns)[part])
        out[part] = pd.concat(parts) if parts else pd.DataFrame(columns=list(columns), dtype=float)
    return out


def table5_columns(ks: Sequence[int] = (5, 20)) -> dict[str, str]:
    """Table 5's labels -> metric@k: SecCov in the reading that matches the paper's pattern at the
    smallest and largest k, CS Recall at the largest, then our source-article SecCov (ours only)."""
    lo, hi = min(ks), max(ks)
    return {paper.seccov_label(lo): f"{SECCOV}@{lo}", paper.seccov_label(hi): f"{SECCOV}@{hi}",
            f"CS Recall@{hi}": f"cs_recall@{hi}", paper.source_seccov_label(lo): f"{SOURCE_SECCOV}@{lo}",
            paper.source_seccov_label(hi): f"{SOURCE_SECCOV}@{hi}"}


def table5(grad: pd.DataFrame, ks: Sequence[int] = (5, 20), conditions: Sequence[str] = ("introduction", "partial",
                                                                                           "full")) -> pd.DataFrame:
    """Columns "<label> <condition>" for every label of ``table5_columns``."""
    cols = {}
    for name, column in table5_columns(ks).items():
        for cond in conditions:
            d = grad[grad["condition"] == cond]
            if not d.empty:
                cols[f"{name} {cond}"] = _means(d, {name: column})[name]
    return _relabel(pd.DataFrame(cols), ALL)


def table5_intervals(grad: pd.DataFrame, ks: Sequence[int] = (5, 20),
                     conditions: Sequence[str] = ("introduction", "partial", "full")) -> dict[str, pd.DataFrame]:
    """``ci_low``, ``ci_high`` and ``n`` frames shaped like ``table5`` (95% bootstrap over each
    condition's questions)."""
    parts: dict[str, dict[str, pd.Series]] = {p: {} for p in INTERVAL_PARTS}
    columns = table5_columns(ks)
    for cond in conditions:
        d = grad[grad["condition"] == cond]
        if d.empty:
            continue
        frames = interval_frames(d, columns)
        for part in INTERVAL_PARTS:
            for label in columns:
                parts[part][f"{label} {cond}"] = frames[part][label]
    return {part: _relabel(pd.DataFrame(cols), ALL) for part, cols in parts.items()}


def condition_series(frame: pd.DataFrame, label: str, conditions: Sequence[str]) -> pd.Series:
    """One label of a "<label> <condition>" table (``table5`` or one of its interval frames) as a Series
    indexed (condition, strategy), for the by-condition figure."""
    return pd.Series({(c, s): frame.loc[s, f"{label} {c}"] for c in conditions if f"{label} {c}" in frame.columns
                      for s in frame.index}, dtype=float)


EVIDENCE_KS = (5, 20)


def evidence_columns(ks: Sequence[int] = EVIDENCE_KS) -> dict[str, str]:
    return {f"ctx MRR@{max(ks)}": f"ctx_mrr@{max(ks)}", **{f"ctx R@{k}": f"ctx_recall@{k}" for k in ks}}


def evidence_table(grad: pd.DataFrame, ks: Sequence[int] = EVIDENCE_KS) -> pd.DataFrame:
    """Ours only: how well each strategy finds the two evidence paragraphs of a template question
    (context-level MRR and recall; a chunk matches a paragraph it overlaps by half of the shorter),
    one row per (condition, strategy), with n and a 95% interval per metric."""
    d = grad[grad["metric"] == "ctx_recall"]
    grad = grad[grad["condition"].isin(set(d["condition"]))]
    columns = evidence_columns(ks)
    parts = _by_condition(grad, lambda d: _means(d, columns))
    if not parts:
        return pd.DataFrame()
    means = pd.concat(parts)
    intervals = {part: pd.concat(_by_condition(grad, lambda d: interval_frames(d, columns)[part]))
                 for part in INTERVAL_PARTS}
    return ours_with_intervals(means, intervals)


def table6(gen: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({"Avg F1": metric_means(gen, "proxy_f1"),
                        "Sec Diversity": metric_means(gen, "section_diversity"),
                        "Tokens": gen[gen["metric"] == "context_tokens"].groupby("method", sort=False)["value"].sum()})
    if (gen["metric"] == "answer_f1").any():
        out["Answer F1 (reference)"] = metric_means(gen, "answer_f1")
    return _relabel(out, ALL)


TABLE6_INTERVALS = {"Avg F1": "proxy_f1", "Sec Diversity": "section_diversity", "Answer F1 (reference)": "answer_f1"}


def table6_intervals(gen: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """n and 95% intervals of Table 6's per-question means (Tokens is a sum over questions: none)."""
    have = set(gen["metric"])
    return {part: _relabel(frame, ALL) for part, frame in
            interval_frames(gen, {k: v for k, v in TABLE6_INTERVALS.items() if v in have}).items()}


def beside_paper(ours: pd.DataFrame, reported: pd.DataFrame, intervals: dict[str, pd.DataFrame] | None = None,
                 like_for_like: bool = False) -> pd.DataFrame:
    """Ours | paper-reported | difference for the columns both have (rows: the union), with ``intervals``
    also n, our 95% interval and whether the paper's number lies inside it (``plots.with_paper``); then
    our columns the paper has no counterpart for, as (column, "ours") only. With intervals on data
    that is not like-for-like the paper's number is a reference only: no difference and no
    inside-the-interval column."""
    from ...core.plots import IN_CI, with_paper
    side = with_paper(ours, reported, intervals, like_for_like)
    if intervals is not None and not like_for_like:
        side = side.drop(columns=[c for c in side.columns if c[1] in ("difference", IN_CI)])
    for c in [c for c in ours.columns if c not in reported.columns]:
        side[(c, "ours")] = ours[c].reindex(side.index)
    return side


INTERVAL_PARTS = ("n", "ci_low", "ci_high")


def add_intervals(side: pd.DataFrame, intervals: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """``side`` (columns (metric, part), our means under part "ours") with n and our 95% interval
    (``intervals``: ``ci_low``, ``ci_high``, ``n`` frames shaped like the means) right after each
    metric's "ours" column; metrics without an interval are left as they are."""
    parts = {}
    for metric, part in side.columns:
        parts[(metric, part)] = side[(metric, part)]
        if part == "ours" and metric in intervals["n"].columns:
            for p in INTERVAL_PARTS:
                parts[(metric, p)] = intervals[p][metric].reindex(side.index)
    return pd.DataFrame(parts, index=side.index)


def ours_with_intervals(ours: pd.DataFrame, intervals: Mapping[str, pd.DataFrame],
                        reported: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per metric: ours, n, our 95% interval and (when ``reported`` has the metric) the paper-reported
    value, with no difference column: for tables whose values are not comparable with the paper's
    (other corpus, questions or model), where only direction and shape compare."""
    parts = {}
    for c in ours.columns:
        parts[(c, "ours")] = ours[c]
        if reported is not None and c in reported.columns:
            parts[(c, "paper-reported")] = reported[c].reindex(ours.index)
    return add_intervals(pd.DataFrame(parts, index=ours.index), intervals)
