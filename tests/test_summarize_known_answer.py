"""``summarize`` (the mean behind every leaderboard) and ``leaderboard`` on a hand-written tidy table:
two methods, two ks, one unscored (NaN) question, a cost row without k. Every expected value is
worked out below by hand, so a mean that counts NaN as 0, a ``metric@k`` column holding another k's
values or a mean over the wrong axis each fails here (values would still be rates in [0, 1])."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from rag_lab.compare.comparison import leaderboard
from rag_lab.evaluation.harness import COLUMNS, nan_counts, summarize

NAN = math.nan
ROWS = [
    # method, question, metric, k, value
    ("a", "q1", "doc_recall", 1, 1.0), ("a", "q2", "doc_recall", 1, 0.0), ("a", "q3", "doc_recall", 1, NAN),
    ("a", "q1", "doc_recall", 5, 1.0), ("a", "q2", "doc_recall", 5, 0.5), ("a", "q3", "doc_recall", 5, 1.0),
    ("b", "q1", "doc_recall", 1, 0.0), ("b", "q2", "doc_recall", 1, 1.0), ("b", "q3", "doc_recall", 1, 1.0),
    ("b", "q1", "doc_recall", 5, 1.0), ("b", "q2", "doc_recall", 5, 0.0), ("b", "q3", "doc_recall", 5, 0.0),
    ("a", "q1", "ctx_recall", 5, 0.25), ("a", "q2", "ctx_recall", 5, 0.75), ("a", "q3", "ctx_recall", 5, 0.5),
    ("b", "q1", "ctx_recall", 5, 1.0), ("b", "q2", "ctx_recall", 5, 0.5), ("b", "q3", "ctx_recall", 5, 0.0),
    ("a", "q1", "latency_seconds", NAN, 0.2), ("a", "q2", "latency_seconds", NAN, 0.4),
    ("b", "q1", "latency_seconds", NAN, 1.0), ("b", "q2", "latency_seconds", NAN, 3.0),
]
# By hand (mean over the questions that have a value):
#   a doc_recall@1 = (1 + 0) / 2 = 0.5       (q3 unscored; counting it as 0 would give 1/3)
#   a doc_recall@5 = (1 + 0.5 + 1) / 3 = 5/6
#   b doc_recall@1 = (0 + 1 + 1) / 3 = 2/3    b doc_recall@5 = (1 + 0 + 0) / 3 = 1/3
#   a ctx_recall@5 = (0.25 + 0.75 + 0.5) / 3 = 0.5     b ctx_recall@5 = (1 + 0.5 + 0) / 3 = 0.5
#   latency (no k): a (0.2 + 0.4) / 2 = 0.3, b (1 + 3) / 2 = 2.0
EXPECTED = {("a", "doc_recall@1"): 0.5, ("a", "doc_recall@5"): 5 / 6, ("b", "doc_recall@1"): 2 / 3,
            ("b", "doc_recall@5"): 1 / 3, ("a", "ctx_recall@5"): 0.5, ("b", "ctx_recall@5"): 0.5,
            ("a", "latency_seconds"): 0.3, ("b", "latency_seconds"): 2.0}


@pytest.fixture
def tidy() -> pd.DataFrame:
    return pd.DataFrame(ROWS, columns=COLUMNS)


def test_summarize_means_by_hand(tidy):
    table = summarize(tidy)
    assert sorted(table.index) == ["a", "b"]
    for (method, column), value in EXPECTED.items():
        assert table.loc[method, column] == pytest.approx(value), (method, column)
    # one column per metric and k that occurs, and none for a (metric, k) pair that does not
    assert "ctx_recall@1" not in table.columns and "latency_seconds@0" not in table.columns


def test_summarize_leaves_the_unscored_question_out_and_counts_it(tidy):
    counts = nan_counts(tidy)
    assert counts.loc["a", "doc_recall"] == 1 and counts.loc["b", "doc_recall"] == 0
    # the same table with the NaN row removed summarises identically: the NaN was left out, not zeroed
    dropped = summarize(tidy.dropna(subset=["value"]))
    assert summarize(tidy).loc["a", "doc_recall@1"] == dropped.loc["a", "doc_recall@1"] == 0.5


def test_summarize_keeps_a_method_whose_only_value_is_unscored():
    only_nan = pd.DataFrame([("c", "q1", "faithfulness", 5, NAN), ("c", "q1", "doc_recall", 5, 1.0)], columns=COLUMNS)
    table = summarize(only_nan)
    assert table.loc["c", "doc_recall@5"] == 1.0
    assert "faithfulness@5" not in table.columns or math.isnan(table.loc["c", "faithfulness@5"])


def test_leaderboard_holds_the_hand_worked_means_at_its_k(tidy):
    board = leaderboard(tidy, 5)
    assert board.loc["a", "doc_recall@5"] == pytest.approx(5 / 6) and board.loc["b", "doc_recall@5"] == pytest.approx(1 / 3)
    assert board.loc["a", "ctx_recall@5"] == pytest.approx(0.5) == board.loc["b", "ctx_recall@5"]
    assert not any(c.endswith("@1") for c in board.columns)
