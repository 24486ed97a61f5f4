"""When ragas' non-LLM context metrics cannot score above zero, and the sentence that says why.

ragas' ``NonLLMContextPrecisionWithReference`` and ``NonLLMContextRecall`` call a retrieved context a
match for a gold passage when their string similarity reaches ``THRESHOLD`` (0.5), and the similarity
is ``1 - Levenshtein distance / length of the longer string``. The distance is at least the difference
of the two lengths, so the similarity is at most ``shorter / longer``: a context more than
``1 / THRESHOLD`` (twice) as long as the longest gold passage matches none, whatever it says. Chunkers
with long chunks (semantic segments of whole sections) then score 0 on both metrics for every
question, which a per-question heatmap shows as all-zero columns; ``all_zero_note`` says so beside it.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from .answer_metrics import THRESHOLD    # ragas' default for both non-LLM context metrics: one number for both modules
STRING_METRICS = ("nonllm_context_precision", "nonllm_context_recall")


def unreachable(texts: Sequence[str], gold: Sequence[str], threshold: float = THRESHOLD) -> int:
    """How many of ``texts`` are too long to reach ``threshold`` string similarity with any of ``gold``
    (longest gold passage / text length < threshold; module docstring)."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    longest = max((len(g) for g in gold), default=0)
    return sum(1 for t in texts if longest < threshold * len(t))


def all_zero_columns(df: pd.DataFrame, method: str, metrics: Sequence[str], k: int | None = None) -> list[str]:
    """The metrics of ``method`` (rows of a tidy result table: method, metric, k, value) that are 0 for
    every question scored (NaN rows, never scored, do not count either way); k-less metrics count at any k."""
    d = df[(df["method"] == method) & df["metric"].isin(metrics)]
    if k is not None:
        d = d[(d["k"] == k) | d["k"].isna()]
    values = d.dropna(subset=["value"]).groupby("metric")["value"]
    return [m for m in metrics if m in values.groups and (values.get_group(m) == 0).all()]


def all_zero_note(df: pd.DataFrame, method: str, metrics: Sequence[str], k: int | None, texts: Sequence[str],
                  gold: Sequence[str]) -> str:
    """A sentence for a per-question heatmap of ``method``: which columns are 0 for every question and, for
    the non-LLM string-match ones, why (``texts``: the method's chunk texts; ``gold``: the gold passages).
    Empty when no column is all zero."""
    zero = all_zero_columns(df, method, metrics, k)
    if not zero:
        return ""
    n = df.loc[df["method"] == method, "question_id"].nunique()
    note = f"{' and '.join(zero)} {'is' if len(zero) == 1 else 'are'} 0 for all {n} questions"
    if any(m in STRING_METRICS for m in zero):
        bad, longest = unreachable(texts, gold), max((len(g) for g in gold), default=0)
        if bad:
            note += (f": ragas' non-LLM match needs a string similarity of {THRESHOLD:g}, which is at most the "
                     f"shorter over the longer length, and {bad} of {method}'s {len(texts)} chunks are more than "
                     f"{1 / THRESHOLD:g}x the longest gold passage ({longest} characters), so they can match none")
        else:
            note += (f"; none of {method}'s chunks is too long to match a gold passage "
                     f"(the longest is {longest} characters), so its retrieved chunks simply differ from them")
    return note + "."
