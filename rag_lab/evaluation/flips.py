"""Flips: the questions one method gets right (its first gold item within k) and another does not, read
on arrays. ``found_within`` reads one data set's long table once (per method: the questions it was scored
on and whether it found gold there), so every pair of methods is compared on numpy arrays
(``found_flips``, ``found_flip_counts``) instead of filtering the long table per pair; ``flips`` and
``flip_counts`` are the one-pair calls. ``without_attrs``: a tidy table
without the provenance pandas would deep-copy into every frame an operation makes.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from ..core.types import Dataset

FOUND_METRICS = ("ctx_mrr", "doc_mrr")   # a question is answered right at k when its first gold item is within k


def without_attrs(df: pd.DataFrame) -> pd.DataFrame:
    """``df``'s columns (not copied) without its ``attrs``: pandas deep-copies ``attrs`` (evaluate's
    provenance, one record per method) into every frame and column an operation makes, which costs
    more than the operation on a long table read many times."""
    out = pd.DataFrame(df)
    out.attrs = {}
    return out


class Found:
    """Per method, the questions it was scored on within one k and whether it found gold there (first
    gold at rank <= k), from the first of ``FOUND_METRICS`` each question has a score for; each method's
    questions in the table's order, those of the first metric first. Read once from the long table, so
    every pair of methods is compared on arrays (``found_within``)."""

    def __init__(self, by_method: Mapping[str, tuple[np.ndarray, np.ndarray]], refused: Mapping[str, str]):
        self.by_method, self.refused = dict(by_method), dict(refused)

    def of(self, method: str) -> tuple[np.ndarray, np.ndarray]:
        """(question ids, found) of ``method``, empty when it has no score; a ValueError when one of its
        questions has several rows of one metric (it would be counted twice)."""
        if method in self.refused:
            raise ValueError(self.refused[method])
        return self.by_method.get(method, (np.array([], dtype=object), np.array([], dtype=bool)))

    def paired(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(questions both were scored on, in ``a``'s order; ``a`` found; ``b`` found)."""
        qa, fa = self.of(a)
        qb, fb = self.of(b)
        pos = pd.Index(qb).get_indexer(qa)
        both = pos >= 0
        return qa[both], fa[both], fb[pos[both]]


def found_within(df: pd.DataFrame, k) -> Found:
    """``Found`` of every method of ``df`` (``evaluate``'s tidy table) at ``k``: the long table's rows read
    once, as arrays."""
    missing = {"method", "question_id", "metric", "k", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"expected evaluate()'s tidy table (method, question_id, metric, k, value); missing {sorted(missing)}")
    d = without_attrs(df)
    at = (d["metric"].isin(FOUND_METRICS) & (d["k"] == k) & d["value"].notna()).to_numpy()
    method = d["method"].to_numpy(dtype=object)[at]
    qid = d["question_id"].to_numpy(dtype=object)[at]
    metric = d["metric"].to_numpy(dtype=object)[at]
    found = np.asarray(d["value"].to_numpy()[at] > 0, dtype=bool)
    rank = np.zeros(len(metric), dtype=np.int64)
    for i, m in enumerate(FOUND_METRICS):
        rank[metric == m] = i
    codes, names = pd.factorize(method)               # methods in the table's order
    # by method, then the first metric's rows before the fallback's, each in the table's order
    order = np.lexsort((np.arange(len(codes)), rank, codes))
    order = order[codes[order] >= 0]                  # a row without a method names none
    codes, qid, rank, found = codes[order], qid[order], rank[order], found[order]
    twice = pd.DataFrame({"c": codes, "r": rank, "q": qid}).duplicated().to_numpy()
    first = ~pd.DataFrame({"c": codes, "q": qid}).duplicated().to_numpy()   # the first metric scored it: that score
    bounds = np.searchsorted(codes, np.arange(len(names) + 1))
    by_method, refused = {}, {}
    for i, name in enumerate(names):
        lo, hi = bounds[i], bounds[i + 1]
        if twice[lo:hi].any():
            refused[name] = (f"{name}: several {FOUND_METRICS[int(rank[lo:hi][twice[lo:hi]].min())]}@{k} rows for one "
                             "question; split the table by its other columns (e.g. a condition) so each question has one row")
        keep = first[lo:hi]
        by_method[name] = (qid[lo:hi][keep], found[lo:hi][keep])
    return Found(by_method, refused)


def found_flips(found: Found, a: str, b: str, texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """``flips`` read from ``found`` (``found_within``); ``texts``: question id -> its question."""
    qs, fa, fb = found.paired(a, b)
    texts = texts or {}
    rows = [{"question_id": q, "question": texts.get(q, ""), "winner": a if x else b}
            for q, x in zip(qs[fa != fb], fa[fa != fb])]
    return pd.DataFrame(rows, columns=["question_id", "question", "winner"])


def found_flip_counts(found: Found, a: str, b: str) -> dict[str, int]:
    """``flip_counts`` read from ``found`` (``found_within``)."""
    qs, fa, fb = found.paired(a, b)
    wins, losses = int((fa & ~fb).sum()), int((fb & ~fa).sum())
    return {"wins": wins, "losses": losses, "ties": len(qs) - wins - losses, "n": len(qs)}


def flips(df: pd.DataFrame, a: str, b: str, k: int, dataset: Dataset | None = None) -> pd.DataFrame:
    """Questions where exactly one of ``a`` and ``b`` finds gold within ``k``: ``question_id``,
    ``question`` (with ``dataset``), ``winner``. Ties (both or neither) are left out; see ``flip_counts``."""
    texts = {q.id: q.question for q in dataset.questions} if dataset is not None else {}
    return found_flips(found_within(df, k), a, b, texts)


def flip_counts(df: pd.DataFrame, a: str, b: str, k: int) -> dict[str, int]:
    """Of the questions both methods were scored on: ``a`` finds gold and ``b`` not (wins), the
    reverse (losses), and the same outcome (ties)."""
    return found_flip_counts(found_within(df, k), a, b)
