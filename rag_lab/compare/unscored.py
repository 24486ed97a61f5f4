"""Metric rows that say nothing because no answer model ran, taken out of a comparison's tables.

With the offline reasoner (``reasoning.offline``: no language model) every answer is a few retrieved
sentences joined together, so it never equals a reference answer word for word: ``exact_match`` is 0
for every method and question, and ``answer_llm_tokens`` counts no model call. Such a column is not a
finding about any method; a heatmap or table showing it spends a row on a constant. ``unscored``
finds them from the run (only metrics that depend on the answering model, only when every value is 0
and every row was answered without a model: the reason holds, not merely the zero); ``without_unscored``
drops them for notebook 10 and says what is absent and why.
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ..evaluation.provenance import NONE

NO_MODEL = ("offline", NONE)          # answer reasoners that are no language model
# metric -> why it is 0 everywhere when no answer model ran
NEEDS_ANSWER_MODEL = {
    "exact_match": "the offline reasoner joins retrieved sentences into its answer, which never equals a "
                   "reference answer word for word",
    "answer_llm_tokens": "the offline reasoner calls no language model",
}


def unscored(results: Mapping[str, pd.DataFrame]) -> list[str]:
    """The metrics of ``NEEDS_ANSWER_MODEL`` (in its order) that are present in some table of
    ``results`` (dataset -> ``evaluate``'s tidy table) and, in every table holding them, are 0 on every
    row, each row answered by no language model (column ``answer_reasoner`` in ``NO_MODEL``)."""
    out = []
    for metric in NEEDS_ANSWER_MODEL:
        parts = [df[df["metric"] == metric] for df in results.values()]
        parts = [p for p in parts if not p.empty]
        if not parts:
            continue
        for p in parts:
            if "answer_reasoner" not in p.columns:
                raise ValueError(f"the {metric} rows carry no answer_reasoner column: cannot tell why they are 0")
        if all((p["value"] == 0).all() and p["answer_reasoner"].isin(NO_MODEL).all() for p in parts):
            out.append(metric)
    return out


def unscored_sentence(metrics: list[str]) -> str:
    """Why ``metrics`` (from ``unscored``) are not shown; empty when none is left out."""
    if not metrics:
        return ""
    named = " and ".join(metrics)
    reasons = "; ".join(f"{m}: {NEEDS_ANSWER_MODEL[m]}" for m in metrics)
    verb = "is" if len(metrics) == 1 else "are"
    return (f"Not shown: {named}, which {verb} 0 for every method and question because no answer model ran "
            f"({reasons}).")


def without_unscored(results: Mapping[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], str]:
    """``results`` without the rows of its ``unscored`` metrics (the CSVs written before keep them), and
    ``unscored_sentence`` of them: what a comparison's tables leave out, and why."""
    dead = unscored(results)
    kept = {name: df[~df["metric"].isin(dead)].reset_index(drop=True) for name, df in results.items()}
    return kept, unscored_sentence(dead)
