"""``uncertainty.decided_pairs``, the one entry from per-question rows, the pairs, a family and the units to
decided (and recorded) rows: a side may be a method, the per-question mean of several, or a constant; on
hand-made tidy rows whose answers are worked out by hand in the comments."""
import pandas as pd
import pytest

from rag_lab.evaluation import ledger
from rag_lab.evaluation.uncertainty import decided_pairs, paired_differences, pairwise_differences

GROUPS = {"ab": ("a", "b"), "cd": ("c", "d"), "the 0.95 ceiling": 0.95}


def tidy(values: dict, metric="doc_mrr", k=10, condition=None) -> list[dict]:
    """Tidy rows: method -> its score on questions q0, q1, …"""
    out = [{"method": m, "question_id": f"q{i}", "metric": metric, "k": k, "value": v}
           for m, vs in values.items() for i, v in enumerate(vs)]
    return [{**r, "condition": condition} for r in out] if condition else out


def test_a_group_side_is_its_methods_mean_on_each_question():
    # per question: ab's mean (3, 5, 4), cd's (1, 1, 1): differences (2, 4, 3), mean 3. Section counts
    # (unbounded): the paired t on (2, 4, 3): 3 ± 4.303 · 1 / sqrt(3) = [0.516, 5.484]; t = 5.196 on 2 df, p = 0.0351
    df = pd.DataFrame(tidy({"a": [2, 4, 3], "b": [4, 6, 5], "c": [1, 1, 1], "d": [1, 1, 1]}, "seccov[x]", 5))
    row = decided_pairs(df, "seccov[x]@5", [("ab", "cd")], "one", sides=GROUPS).iloc[0]
    assert (row["method"], row["baseline"], row["diff"], row["n"]) == ("ab", "cd", 3.0, 3)
    assert row["ci_low"] == pytest.approx(0.5159, abs=1e-4) and row["ci_high"] == pytest.approx(5.4841, abs=1e-4)
    assert row["p"] == pytest.approx(0.0351, abs=1e-4) and row["family"] == "one" and row["verdict"] == "supported"
    # both groups the same on every question: no spread, no interval claimed, nothing decided
    same = decided_pairs(df, "seccov[x]@5", [("cd", "d")], "one", sides=GROUPS).iloc[0]
    assert same["diff"] == 0 and not (same["ci_low"] > 0 or same["ci_high"] < 0) and not same["p"] < 0.05


def test_a_constant_side_is_a_test_against_a_bound():
    # per question: b 0.97 ± 0.01 on 200 questions: its scores minus 0.95 are +0.03 or +0.01. The bounded-mean
    # test: P(D_low <= 0) = 1.03^-100 * 1.01^-100 = 0.0193, p = 0.0386: decided above the bound
    df = pd.DataFrame(tidy({"b": [0.97 + 0.01 * (-1) ** i for i in range(200)]}))
    above = decided_pairs(df, "doc_mrr@10", [("b", "the 0.95 ceiling")], "bound", sides=GROUPS).iloc[0]
    assert above["verdict"] == "supported" and above["diff"] == pytest.approx(0.02)
    assert above["p"] == pytest.approx(2 * 1.03 ** -100 * 1.01 ** -100, abs=0.004)
    # the same scores in two documents: no clustered test can decide, whatever the interval of the mean says
    two = decided_pairs(df, "doc_mrr@10", [("b", "the 0.95 ceiling")], "bound", {f"q{i}": f"doc{i % 2}" for i in range(200)},
                        GROUPS).iloc[0]
    assert two["units"] == 2 and two["verdict"] == "cannot be decided"


def test_method_pairs_are_paired_differences_and_an_absent_side_is_left_out():
    df = pd.DataFrame(tidy({"base": [1.0, 0.5, 0.5, 1.0], "x": [1.0, 1.0, 1.0, 1.0], "y": [0.5, 0.5, 0.5, 0.5]}))
    mine = decided_pairs(df, "doc_mrr@10", [("x", "base"), ("y", "base"), ("z", "base")], "each minus base")
    theirs = paired_differences(df, "base", ["x", "y"], ["doc_mrr@10"], family="each minus base")
    # x − base (0, .5, .5, 0): +0.25; y − base (−.5, 0, 0, −.5): −0.25; z never ran: no row
    assert mine["diff"].tolist() == [0.25, -0.25]
    pd.testing.assert_frame_equal(mine, theirs)
    assert decided_pairs(df, "doc_mrr@10", [("x", "naive")], "f").empty


def test_by_splits_the_texts_and_every_row_is_one_family():
    # two conditions of the same two questions: "short" x − base (0, 1) = 0.5, "long" (1, 1) = 1; the rows carry
    # their condition, metric-major, and Holm runs across all four (two metrics x two conditions)
    df = pd.DataFrame(tidy({"base": [1, 0], "x": [1, 1]}, "doc_recall", 5, "short") + tidy({"base": [0, 0], "x": [1, 1]}, "doc_recall", 5, "long")
                      + tidy({"base": [1, 0], "x": [1, 1]}, "doc_recall", 1, "short") + tidy({"base": [0, 0], "x": [1, 1]}, "doc_recall", 1, "long"))
    rows = decided_pairs(df, ["doc_recall@5", "doc_recall@1"], [("x", "base")], "F", by="condition")
    assert rows[["condition", "metric"]].values.tolist() == [["short", "doc_recall@5"], ["long", "doc_recall@5"],
                                                            ["short", "doc_recall@1"], ["long", "doc_recall@1"]]
    assert rows["diff"].tolist() == [0.5, 1.0, 0.5, 1.0] and (rows["family_size"] == 4).all()
    assert (rows["p_holm"] >= rows["p"] - 1e-12).all()


def test_the_rows_go_to_the_ledger_under_their_condition(tmp_path, monkeypatch):
    path = tmp_path / "04_gralc_rag.csv"
    monkeypatch.setenv(ledger.LEDGER_ENV, str(path))
    df = pd.DataFrame(tidy({"base": [1.0, 0.5], "x": [1.0, 1.0]}))
    shown = decided_pairs(df, "doc_mrr@10", [("x", "base")], "F", ledger=("biomed", "abstract"))
    assert "condition" not in shown.columns                           # the table shown is the decided rows alone
    order = pairwise_differences(df, "doc_mrr@10", ledger=("biomed", "full"))
    assert order[["method", "below"]].values.tolist() == [["x", "base"]]
    kept = ledger.read(path)
    assert kept["setting"].tolist() == ["k=10; abstract", "k=10; full"] and (kept["baseline"] == "base").all()
    assert kept["family"].tolist() == ["F", "every pair on doc_mrr@10"] and kept["diff"].tolist() == [0.25, 0.25]
