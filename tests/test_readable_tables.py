"""Wide tables shown whole: a test table narrowed to what a reader decides by, and the ours-vs-paper table long,
one block of rows per metric (hand-made inputs)."""
import numpy as np
import pandas as pd
import pytest

from rag_lab.core.plots import left_out_note, per_metric, with_paper, without_empty
from rag_lab.evaluation.uncertainty import DIFFERENCE_COLUMNS, readable_decisions


def test_readable_decisions_keeps_what_is_compared_and_the_decision():
    row = {c: 0 for c in DIFFERENCE_COLUMNS} | {"method": "sketch", "baseline": "naive", "metric": "ctx_recall@5",
                                                "diff": 0.1, "verdict": "inconclusive", "reason": ""}
    shown = readable_decisions(pd.DataFrame([row]))
    assert list(shown.columns) == ["method", "baseline", "metric", "diff", "n", "ci_low", "ci_high", "p_holm", "verdict",
                                   "reason"]
    assert shown.iloc[0]["verdict"] == "inconclusive"
    with pytest.raises(ValueError, match=r"missing \['p_holm', 'verdict'\]"):
        readable_decisions(pd.DataFrame([row]).drop(columns=["p_holm", "verdict"]))


def test_per_metric_splits_and_names_the_metrics_we_did_not_score():
    ours = pd.DataFrame({"faithfulness": [np.nan, np.nan], "f1": [0.5, 0.25]}, index=["naive", "sketch"])
    paper = pd.DataFrame({"faithfulness": [0.8, 0.9], "f1": [0.4, 0.5]}, index=["naive", "sketch"])
    ours["recall"], paper["recall"] = [1.0, 0.5], [0.5, 0.5]
    long, unscored = per_metric(with_paper(ours, paper))
    assert unscored == ["faithfulness"]
    assert list(long.index) == [("f1", "naive"), ("f1", "sketch"), ("recall", "naive"), ("recall", "sketch")]
    assert list(long.columns) == ["ours", "paper-reported", "difference"]
    assert long["difference"].tolist() == pytest.approx([0.1, -0.25, 0.5, 0.0])

    assert left_out_note(unscored, None, "their paper-reported numbers are in t.csv") == (
        "Left out above, with no score of ours in this run (judge: none): faithfulness; their paper-reported numbers "
        "are in t.csv.\n")
    assert left_out_note([], "openai:m", "anything") == ""


def test_without_empty_drops_columns_with_no_value_and_names_them_by_their_group():
    table = pd.DataFrame({("FC", "mean"): [np.nan, np.nan], ("FC", "spread"): [np.nan, np.nan],
                          ("tokens", "index"): [10, np.nan]}, index=["unweaver", "naive"])
    shown, empty = without_empty(table)
    assert empty == ["FC"] and list(shown.columns) == [("tokens", "index")]
    assert left_out_note(empty, "none") == "Left out above, with no score of ours in this run (judge: none): FC.\n"

