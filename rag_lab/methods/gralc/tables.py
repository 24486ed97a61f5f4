"""GraLC-RAG's tables from the tidy per-question rows of ``experiment``'s runs: ``summary`` gives the means
(rows labelled with the paper's strategy names), their n and 95% intervals over questions
(``evaluation.uncertainty``) of the columns the notebook names; the rest sets ours beside the paper's numbers
(with a difference only where the setting is like-for-like) and shapes the tables the notebook cannot in a
few lines (Table 2's ablation steps, Table 5's SecCov readings by condition, Table 5c from its decided rows)."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...evaluation.metrics import coverage_metric
from ...evaluation.uncertainty import TEST_COLUMNS, interval_frames, per_question
from . import paper
from .method import STRATEGIES
from .seccov import PAPER_READING_WORDS, PAPER_SECCOV

ALL = list(STRATEGIES)
SECCOV = PAPER_SECCOV                        # the reading whose pattern matches the paper's (seccov.py)
SOURCE_SECCOV = coverage_metric("section")    # ours: top-level sections of the question's source article
TABLE5_READING = (f"SecCov = distinct {PAPER_READING_WORDS} (the reading that reproduces the paper's pattern, "
                  "docs/metrics.md)")
# the two SecCov readings Table 5c shows: the one whose pattern matches the paper's, and the fair one
READINGS = {"pattern: any-level, content-only unlabelled": SECCOV,   # short: table index labels print whole
            "fair: source article's sections": SOURCE_SECCOV}
DIFF_COLUMNS = ["diff", "n", "ci_low", "ci_high", "p", "p_holm", "mde"]
TAIL = [c for c in TEST_COLUMNS if c not in DIFF_COLUMNS]       # the test's other columns, in its order


def metric_means(df: pd.DataFrame, metric: str, k: int | None = None, by: Sequence[str] = ("method",)) -> pd.Series:
    d = df[df["metric"] == metric]
    d = d[d["k"].isna()] if k is None else d[d["k"] == k]
    return d.groupby(list(by), sort=False)["value"].mean()


def _relabel(frame: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    frame = frame.reindex([n for n in order if n in frame.index])
    frame.index = [paper.label(n) for n in frame.index]
    return frame


PARTS = ("ours", "n", "ci_low", "ci_high")


def summary(df: pd.DataFrame, columns: Mapping[str, str], by: str | None = None, units=None) -> dict[str, pd.DataFrame]:
    """Our mean (``ours``), n and 95% interval (``ci_low``, ``ci_high``, ``evaluation.uncertainty``) over
    questions of each metric@k in ``columns`` (label -> metric@k, or a bare metric name for rows without k),
    one frame per part: rows the strategies (the paper's labels and order), columns the labels. With ``by``
    (e.g. "condition") one block of rows per value, indexed (value, strategy). ``units`` (question id -> its
    document): intervals clustered by document, as the comparisons and notebook 10 are."""
    if by is not None:
        blocks = {value: summary(d, columns, units=units) for value, d in df.groupby(by, sort=False)}
        if not blocks:      # nothing to summarise (PubMedQA: no length condition)
            empty = pd.MultiIndex.from_tuples([], names=[by, "strategy"])
            return {part: pd.DataFrame(columns=list(columns), index=empty, dtype=float) for part in PARTS}
        return {part: pd.concat({value: b[part] for value, b in blocks.items()}, names=[by, "strategy"]) for part in PARTS}
    means = {}
    for label, column in columns.items():
        metric, _, k = column.partition("@")
        means[label] = metric_means(df, metric, int(k) if k else None)
    intervals = {part: _relabel(frame, ALL) for part, frame in interval_frames(df, dict(columns), units=units).items()}
    return {"ours": _relabel(pd.DataFrame(means), ALL), **intervals}


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


def table2_beside(t1: pd.DataFrame, decided: pd.DataFrame) -> pd.DataFrame:
    """Table 2 (``table2`` of Table 1's means ``t1``) beside the paper: MRR, R@1, R@5 (ours and paper-reported;
    their intervals are Table 1's, the same cells), then ΔMRR with the paired interval of each step against the
    base (``decided``: the rows of ``paper.ABLATION_PAIRS`` with the paper's labels), its Holm p and the paper's
    ΔMRR. Our part alone, Table 2 itself, is its "ours" columns."""
    t2 = table2(t1)
    reported = paper.reported(2)
    steps = dict(zip(map(paper.label, paper.ABLATION_STRATEGIES), paper.ABLATION))
    diffs = decided.assign(step=decided["method"].map(steps)).set_index("step")
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


def table5_columns(ks: Sequence[int] = (5, 20)) -> dict[str, str]:
    """Table 5's labels -> metric@k: SecCov in the reading that matches the paper's pattern at the
    smallest and largest k, CS Recall at the largest, then our source-article SecCov (ours only)."""
    lo, hi = min(ks), max(ks)
    return {paper.seccov_label(lo): f"{SECCOV}@{lo}", paper.seccov_label(hi): f"{SECCOV}@{hi}",
            f"CS Recall@{hi}": f"cs_recall@{hi}", paper.source_seccov_label(lo): f"{SOURCE_SECCOV}@{lo}",
            paper.source_seccov_label(hi): f"{SOURCE_SECCOV}@{hi}"}


def table5(grad: pd.DataFrame, ks: Sequence[int] = (5, 20),
           conditions: Sequence[str] = ("introduction", "partial", "full")) -> dict[str, pd.DataFrame]:
    """``summary``'s parts of ``table5_columns`` per condition, each a frame with columns
    "<label> <condition>" (label-major, conditions in the order given; a condition with no rows left out)."""
    per = {c: summary(grad[grad["condition"] == c], table5_columns(ks)) for c in conditions
           if (grad["condition"] == c).any()}
    return {part: pd.DataFrame({f"{label} {c}": per[c][part][label] for label in table5_columns(ks) for c in per},
                               index=_union([per[c][part].index for c in per])) for part in PARTS}


def group_means(df: pd.DataFrame, column: str) -> dict[str, float]:
    """Each group of ``paper.GROUPS`` (its strategies' mean on a question) averaged over the questions."""
    table = per_question(df, column)
    means = {}
    for group in paper.GROUPS:
        present = [m for m in paper.SIDES[group] if m in table.columns]
        means[group] = float(np.nanmean(table[present].mean(axis=1, skipna=False).to_numpy())) if present else math.nan
    return means


def table5c(decided: pd.DataFrame, grad: pd.DataFrame) -> pd.DataFrame:
    """Table 5c from the decided rows of structure-aware minus content-only SecCov (``READINGS`` at every k,
    by condition): rows (reading, k, condition), each group's mean, the difference's columns and the paper's
    difference of the same group means (its printed SecCov, which only the pattern reading reproduces), then
    the test's columns."""
    head = ["reading", "k", "condition", *paper.GROUPS]
    if decided.empty:
        return pd.DataFrame(columns=[*head, *DIFF_COLUMNS, "paper-reported diff"]).set_index(head[:3])
    reported, reading = paper.reported(5), {m: r for r, m in READINGS.items()}
    rows = []
    for _, r in decided.iterrows():
        metric, k = r["metric"].rsplit("@", 1)
        col = f"{paper.seccov_label(int(k))} {r['condition']}"
        paper_diff = (reported.loc[[paper.label(m) for m in paper.STRUCTURE_AWARE], col].mean()
                      - reported.loc[[paper.label(m) for m in paper.CONTENT_ONLY], col].mean()
                      if metric == SECCOV and col in reported.columns else math.nan)
        rows.append({"reading": reading[metric], "k": int(k), "condition": r["condition"],
                     **group_means(grad[grad["condition"] == r["condition"]], r["metric"]),
                     **r[DIFF_COLUMNS], "paper-reported diff": paper_diff, **r[TAIL]})
    return pd.DataFrame(rows).set_index(head[:3])


def _union(indexes) -> list[str]:
    """The strategies of several frames in the paper's order."""
    have = {s for index in indexes for s in index}
    return [paper.label(n) for n in ALL if paper.label(n) in have]


EVIDENCE_KS = (5, 20)


def evidence_table(grad: pd.DataFrame, ks: Sequence[int] = EVIDENCE_KS) -> pd.DataFrame:
    """Ours only: how well each strategy finds the two evidence paragraphs of a template question
    (context-level MRR and recall; a chunk matches a paragraph it overlaps by half of the shorter),
    one row per (condition, strategy), with n and a 95% interval per metric."""
    with_ctx = grad[grad["condition"].isin(set(grad.loc[grad["metric"] == "ctx_recall", "condition"]))]
    if with_ctx.empty:
        return pd.DataFrame()
    columns = {f"ctx MRR@{max(ks)}": f"ctx_mrr@{max(ks)}", **{f"ctx R@{k}": f"ctx_recall@{k}" for k in ks}}
    parts = summary(with_ctx, columns, by="condition")
    return ours_with_intervals(parts["ours"], parts)


def table6(gen: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({"Avg F1": metric_means(gen, "proxy_f1"),
                        "Sec Diversity": metric_means(gen, "section_diversity"),
                        "Tokens": gen[gen["metric"] == "context_tokens"].groupby("method", sort=False)["value"].sum()})
    if (gen["metric"] == "answer_f1").any():
        out["Answer F1 (reference)"] = metric_means(gen, "answer_f1")
    return _relabel(out, ALL)


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


def add_intervals(side: pd.DataFrame, intervals: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """``side`` (columns (metric, part), our means under part "ours") with n and our 95% interval
    (``intervals``: ``ci_low``, ``ci_high``, ``n`` frames shaped like the means) right after each
    metric's "ours" column; metrics without an interval are left as they are."""
    parts = {}
    for metric, part in side.columns:
        parts[(metric, part)] = side[(metric, part)]
        if part == "ours" and metric in intervals["n"].columns:
            for p in PARTS[1:]:
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
