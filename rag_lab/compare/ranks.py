"""How sure a leaderboard's order is: each method's bootstrap share best, and a 95% interval on its
rank, from a joint paired bootstrap over the questions every method scored.

``share_best`` is the share of resamples a method is first on. It is not a calibrated probability
that the method is truly best: the bootstrap re-centres on the observed means, so the observed
leader gets more than its due (among 5 truly equal methods the observed leader's share averages
about 0.5, where the truth is 0.2; ``tests/test_ranks.py`` measures it). It is named and labelled a
bootstrap share, never "P(best)".

A ranking of means hides that two places may be indistinguishable. Resampling the common questions
(with replacement; whole documents when ``units`` says which document each question targets) and
re-ranking every method on each resample keeps the methods paired, as the per-question scores are:
a method that scores at least as well as another on every question is never ranked below it. Ties on
a resample share the first place equally. Written here (numpy, a few lines) because no kept library
ranks paired means under a joint resample; the draws are seeded, so the table is identical run to run.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..evaluation.uncertainty import per_question, unit_labels
from .intervals import rows_of

DRAWS = 4000
SEED = 0
RANK_COLUMNS = ["method", "mean", "n", "units", "share_best", "rank_low", "rank_high", "draws", "seed"]
SHARE_LABEL = "bootstrap share best"     # how a table or sentence names ``share_best``


def rank_uncertainty(results: pd.DataFrame, column: str, methods: Sequence[str] | None = None,
                     units: Mapping[str, str] | None = None, draws: int = DRAWS, seed: int = SEED) -> pd.DataFrame:
    """Per method (``methods``, default every one scored on ``column``, a metric@k of ``evaluate``'s tidy
    table): its mean over the questions every method scored (``n``), ``share_best`` (the share of
    resamples it is first on, ties split: a bootstrap share, not a probability; module docstring) and the
    2.5-97.5% range of its rank (1 = best; a tie takes the best place of its group), best mean first. Empty when no question is scored by every method."""
    if draws < 1:
        raise ValueError(f"draws must be a positive number of resamples, got {draws}")
    table = per_question(rows_of(results, [column]), column)     # the column's rows only, not the long table
    methods = [m for m in (methods or list(table.columns)) if m in table.columns]
    table = table[methods].dropna()
    if table.empty or not methods:
        return pd.DataFrame(columns=RANK_COLUMNS)
    scores = table.to_numpy(dtype=float)                           # questions x methods
    labels = unit_labels([str(q) for q in table.index], units) or [str(q) for q in table.index]
    _, inverse = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    sums = np.zeros((inverse.max() + 1, len(methods)))
    np.add.at(sums, inverse, scores)                               # per unit: each method's sum
    counts = np.bincount(inverse).astype(float)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(counts), size=(draws, len(counts)))
    means = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)[:, None]      # draws x methods
    top = means.max(axis=1, keepdims=True)
    first = np.isclose(means, top, rtol=0, atol=1e-12)
    share_best = (first / first.sum(axis=1, keepdims=True)).mean(axis=0)
    above = (means[:, None, :] > means[:, :, None] + 1e-12).sum(axis=2)     # methods strictly ahead
    ranks = 1 + above
    out = pd.DataFrame({"method": methods, "mean": scores.mean(axis=0), "n": len(scores), "units": len(counts),
                        "share_best": share_best, "rank_low": np.percentile(ranks, 2.5, axis=0, method="lower"),
                        "rank_high": np.percentile(ranks, 97.5, axis=0, method="higher"), "draws": draws,
                        "seed": seed})
    return out.sort_values("mean", ascending=False, kind="stable").reset_index(drop=True)[RANK_COLUMNS]


def save_rank_table(results: pd.DataFrame, column: str, units: Mapping[str, str] | None, folder, name: str):
    """``rank_uncertainty`` of ``column`` saved as ``ranks_<name>`` (rounded to 4 places, with its caption)
    and returned for display: the notebook's leaderboard cell shows it beside the leaderboard."""
    from ..core.figures import save_table
    from ..evaluation.provenance import caption_reasoners

    ranks = rank_uncertainty(results, column, units=units).round(4)
    draws, seed = (int(ranks["draws"].iloc[0]), int(ranks["seed"].iloc[0])) if len(ranks) else (DRAWS, SEED)
    shown = ranks.drop(columns=["draws", "seed"]).set_index("method")   # the same on every row: said once, in the caption
    save_table(ranks, folder, f"ranks_{name}", index=False, shown=shown,
               caption=f"{name}: {SHARE_LABEL} (share of resamples each method is first on, not a probability) on "
                       f"{column} and its 95% rank range (joint paired bootstrap over the common questions, by "
                       f"document; {draws} draws, seed {seed}; {caption_reasoners(results)})")
    return shown
