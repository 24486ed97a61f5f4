"""The paired comparisons behind the GraLC-RAG notebook's verdicts, from the tidy per-question tables.

Every verdict the notebook prints (``findings``) reads one of these tables: differences paired by
question with a 95% bootstrap interval, a permutation p and its Holm adjustment across the table
(``evaluation.uncertainty`` / ``evaluation.statistics``), never a threshold of our own. Rows carry
the paper's strategy labels. The structure-aware vs content-only contrast compares, question by
question, the mean of the three structure-aware strategies with the mean of the three content-only
ones, so each question counts once.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...evaluation.statistics import holm, paired_difference
from ...evaluation.uncertainty import pairwise_differences, paired_differences, per_question
from . import paper
from .experiment import Sweep, sweep_columns, sweep_label
from .tables import ALL, SOURCE_SECCOV
from .seccov import CONTENT_ONLY, PAPER_SECCOV, STRUCTURE_AWARE

# the two SecCov readings Table 5 shows: the one whose pattern matches the paper's, and the fair one
READINGS = {"pattern: any-level, content-only unlabelled": PAPER_SECCOV,   # short: table index labels print whole
            "fair: source article's sections": SOURCE_SECCOV}
DIFF_COLUMNS = ["diff", "n", "ci_low", "ci_high", "p", "p_holm", "mde"]


def _present(scores: pd.DataFrame, methods: Sequence[str]) -> list[str]:
    have = set(scores["method"])
    return [m for m in methods if m in have]


def order(scores: pd.DataFrame, column: str, methods: Sequence[str] = ALL) -> pd.DataFrame:
    """Every pair of strategies on one metric@k (``column``), the better first, paired by question,
    Holm across the pairs (``uncertainty.pairwise_differences``), with the paper's labels."""
    out = pairwise_differences(scores, column, _present(scores, methods))
    return out.assign(method=out["method"].map(paper.label), below=out["below"].map(paper.label))


def against(scores: pd.DataFrame, column: str, base: str, methods: Sequence[str]) -> pd.DataFrame:
    """Each of ``methods`` minus ``base`` on ``column``, paired by question, Holm across the rows,
    with the paper's labels (``uncertainty.paired_differences``)."""
    present = _present(scores, methods)
    if base not in set(scores["method"]) or not present:
        return pd.DataFrame(columns=["method", "baseline", "metric", *DIFF_COLUMNS])
    out = paired_differences(scores, base, present, [column])
    return out.assign(method=out["method"].map(paper.label), baseline=out["baseline"].map(paper.label))


def ablation(scores: pd.DataFrame, column: str) -> pd.DataFrame:
    """Table 2's ΔMRR with intervals: each added component minus the late-chunking base, paired by
    question; rows named by the ablation steps (``paper.ABLATION``)."""
    base, *steps = paper.ABLATION_STRATEGIES
    out = against(scores, column, base, steps)
    names = dict(zip(map(paper.label, paper.ABLATION_STRATEGIES), paper.ABLATION))
    return out.assign(step=out["method"].map(names)).set_index("step")[DIFF_COLUMNS]


def group_difference(scores: pd.DataFrame, column: str, first: Sequence[str] = STRUCTURE_AWARE,
                     second: Sequence[str] = CONTENT_ONLY) -> dict:
    """Per question, the mean of the ``first`` strategies minus the mean of the ``second`` on
    ``column``; the paired difference (``statistics.paired_difference``) and both groups' means."""
    table = per_question(scores, column)
    a = [m for m in first if m in table.columns]
    b = [m for m in second if m in table.columns]
    if not a or not b:
        return {"first": np.nan, "second": np.nan, **dict.fromkeys(DIFF_COLUMNS, np.nan)}
    fa, fb = table[a].mean(axis=1, skipna=False).to_numpy(), table[b].mean(axis=1, skipna=False).to_numpy()
    d = paired_difference(fa, fb)
    return {"first": float(np.nanmean(fa)), "second": float(np.nanmean(fb)), **d.as_dict(), "p_holm": np.nan}


def seccov_contrast(grad: pd.DataFrame, ks: Sequence[int], conditions: Sequence[str]) -> pd.DataFrame:
    """Structure-aware minus content-only SecCov@k in both readings (``READINGS``), per condition and
    k, paired by question; Holm across the table's rows; beside the paper's difference of the same group
    means (its printed SecCov, which only the pattern reading reproduces)."""
    reported = paper.table5()
    labels = lambda names: [paper.label(n) for n in names]     # noqa: E731 - the paper's rows
    rows = []
    for reading, metric in READINGS.items():
        for k in ks:
            for cond in conditions:
                d = grad[grad["condition"] == cond]
                if d.empty:
                    continue
                row = group_difference(d, f"{metric}@{k}")
                col = f"{paper.seccov_label(k)} {cond}"
                paper_diff = (reported.loc[labels(STRUCTURE_AWARE), col].mean() - reported.loc[labels(CONTENT_ONLY), col].mean()
                              if metric == PAPER_SECCOV and col in reported.columns else np.nan)
                rows.append({"reading": reading, "k": k, "condition": cond, "structure-aware": row["first"],
                             "content-only": row["second"], **{c: row[c] for c in DIFF_COLUMNS},
                             "paper-reported diff": paper_diff})
    out = pd.DataFrame(rows, columns=["reading", "k", "condition", "structure-aware", "content-only", *DIFF_COLUMNS,
                                      "paper-reported diff"])
    out["p_holm"] = holm(out["p"].to_numpy()) if len(out) else []
    return out.set_index(["reading", "k", "condition"])


def sweep_differences(sweep: Sweep) -> pd.DataFrame:
    """The λ ablation's retrieval columns at each λ minus the first λ, paired by question, Holm across
    the rows; rows (column label, λ)."""
    lams = list(sweep.table.index)
    columns = {v: k for k, v in sweep_columns(sweep).items()}
    if len(lams) < 2 or not columns:
        return pd.DataFrame(columns=DIFF_COLUMNS, index=pd.MultiIndex.from_tuples([], names=["column", "lambda"]))
    out = paired_differences(sweep.scores, sweep_label(lams[0]), [sweep_label(x) for x in lams[1:]], list(columns))
    label_to_lam = {sweep_label(x): x for x in lams}
    out = out.assign(column=out["metric"].map(columns), **{"lambda": out["method"].map(label_to_lam)})
    return out.set_index(["column", "lambda"])[DIFF_COLUMNS]
