"""The paired comparisons behind notebook 04's verdicts and the interval columns of its tables, on hand-made
tidy rows whose answers are worked out by hand in the comments."""
import math

import pandas as pd
import pytest

from rag_lab.methods.gralc import comparisons as cmp
from rag_lab.methods.gralc import experiment as ex
from rag_lab.methods.gralc import tables as tb
from rag_lab.methods.gralc import paper
from test_gralc_experiment import rows

CONTENT = ["gralc-naive", "gralc-semantic", "gralc-late"]
STRUCTURE = ["gralc-structure", "gralc-kg", "gralc-graph"]


def seccov_rows(cond, pattern_content, pattern_structure, fair_content, fair_structure, k=5):
    data = []
    for m in CONTENT:
        data += rows(m, tb.SECCOV, k, pattern_content, cond) + rows(m, tb.SOURCE_SECCOV, k, fair_content, cond)
    for m in STRUCTURE:
        data += rows(m, tb.SECCOV, k, pattern_structure, cond) + rows(m, tb.SOURCE_SECCOV, k, fair_structure, cond)
    return data


def test_group_difference_pairs_each_questions_group_means():
    # per question: structure mean − content mean = (3 − 1, 5 − 1, 4 − 1) = (2, 4, 3): mean 3
    data = pd.DataFrame(seccov_rows("full", [1, 1, 1], [3, 5, 4], [2, 2, 2], [2, 2, 2]))
    d = cmp.group_difference(data, f"{tb.SECCOV}@5")
    assert (d["first"], d["second"], d["diff"], d["n"]) == (4.0, 1.0, 3.0, 3)
    # section coverage counts sections (unbounded): the paired t on (2, 4, 3): 3 ± 4.303 · 1 / sqrt(3) =
    # [0.516, 5.484]; t = 3 / (1 / sqrt(3)) = 5.196 on 2 df, two-sided p = 0.0351
    assert d["ci_low"] == pytest.approx(0.5159, abs=1e-4) and d["ci_high"] == pytest.approx(5.4841, abs=1e-4)
    assert d["p"] == pytest.approx(0.0351, abs=1e-4)
    same = cmp.group_difference(data, f"{tb.SOURCE_SECCOV}@5")            # both groups 2 on every question
    # no spread at all: no interval is claimed (never a point), and nothing is decided
    assert same["diff"] == 0 and not (same["ci_low"] > 0 or same["ci_high"] < 0) and not same["p"] < 0.05


def test_seccov_contrast_both_readings_beside_the_papers_difference():
    data = pd.DataFrame(seccov_rows("full", [1, 1, 1], [3, 5, 4], [2, 3, 2], [2, 2, 2]))
    contrast = cmp.seccov_contrast(data, (5,), ["introduction", "full"])    # introduction did not run: no row
    pattern, fair = list(cmp.READINGS)
    assert list(contrast.index) == [(pattern, 5, "full"), (fair, 5, "full")]
    assert contrast.loc[(pattern, 5, "full"), "diff"] == 3.0 and contrast.loc[(pattern, 5, "full"), "content-only"] == 1.0
    # fair: structure 2 on each question, content (2, 3, 2): differences (0, −1, 0), mean −1/3
    assert contrast.loc[(fair, 5, "full"), "diff"] == pytest.approx(-1 / 3)
    # the paper's full SecCov@5: structure (4.26 + 4.46 + 4.36) / 3 = 4.36, content 1.00: +3.36
    assert contrast.loc[(pattern, 5, "full"), "paper-reported diff"] == pytest.approx(3.36)
    assert math.isnan(contrast.loc[(fair, 5, "full"), "paper-reported diff"])
    assert (contrast["p_holm"] >= contrast["p"] - 1e-12).all()


def test_ablation_and_order_pair_by_question():
    data = []
    for name, mrr in [("gralc-late", [1.0, 1.0, 0.5, 0.5]), ("gralc-structure", [1.0, 1.0, 0.5, 0.5]),
                      ("gralc-kg", [0.5, 0.5, 0.5, 0.5]), ("gralc-graph", [1.0, 1.0, 1.0, 1.0])]:
        data += rows(name, "doc_mrr", 10, mrr)
    data = pd.DataFrame(data)
    diffs = cmp.ablation(data, "doc_mrr@10")
    assert list(diffs.index) == paper.ABLATION[1:]
    # step minus the late base per question: structure (0, 0, 0, 0), kg (−.5, −.5, 0, 0), graph (0, 0, .5, .5)
    assert diffs["diff"].tolist() == [0.0, -0.25, 0.25] and (diffs["n"] == 4).all()
    order = cmp.order(data, "doc_mrr@10")
    assert order.iloc[0][["method", "below"]].tolist() == ["GraLC-RAG (+Graph)", "Late Chunking"]   # 1.0 vs 0.75 first
    assert len(order) == 6 and (order["diff"] >= 0).all()
    assert cmp.against(data, "doc_mrr@10", "gralc-naive", ["gralc-kg"]).empty        # no naive rows: no comparison


def test_sweep_differences_each_lambda_against_the_first():
    scores = pd.DataFrame(rows("λ = 0", "doc_mrr", 5, [1.0, 0.5, 0.5]) + rows("λ = 0.5", "doc_mrr", 5, [1.0, 1.0, 1.0])
                          + rows("λ = 0", "doc_recall", 5, [1, 1, 1]) + rows("λ = 0.5", "doc_recall", 5, [1, 1, 1]))
    table = pd.DataFrame({"MRR@5": [2 / 3, 1.0], "R@5": [1.0, 1.0]}, index=pd.Index([0.0, 0.5], name="lambda"))
    diffs = cmp.sweep_differences(ex.Sweep(table, scores))
    # MRR: (0, .5, .5) → +1/3; recall unchanged → 0 with p = 1
    assert diffs.loc[("MRR@5", 0.5), "diff"] == pytest.approx(1 / 3)
    assert diffs.loc[("R@5", 0.5), "diff"] == 0 and diffs.loc[("R@5", 0.5), "p"] == 1.0
    assert cmp.sweep_differences(ex.Sweep(table.iloc[:1], scores)).empty


def test_interval_columns_sit_after_ours_and_no_difference_is_printed():
    data = pd.DataFrame(rows("gralc-naive", "doc_mrr", 20, [1.0, 0.0], "full") + rows("gralc-naive", "doc_recall", 1, [1, 0], "full")
                        + rows("gralc-naive", "doc_recall", 5, [1, 1], "full"))
    ci = tb.summary(data, {"MRR": "doc_mrr@20", "R@1": "doc_recall@1", "R@5": "doc_recall@5"}, by="condition")
    side = tb.ours_with_intervals(ci["ours"], ci, paper.table4())
    assert list(side["MRR"].columns) == ["ours", "n", "ci_low", "ci_high", "paper-reported"]
    assert side.loc[("full", "Naive"), ("MRR", "ours")] == 0.5 and side.loc[("full", "Naive"), ("MRR", "n")] == 2
    assert side.loc[("full", "Naive"), ("MRR", "paper-reported")] == 0.344
    # recall@5 is 1 on both questions: Wilson's interval for 2 of 2, (0.6712 - 0.3288, 1) = [0.342, 1], never a point
    assert side.loc[("full", "Naive"), ("R@5", "ci_low")] == pytest.approx(0.3424, abs=1e-4)
    assert side.loc[("full", "Naive"), ("R@5", "ci_high")] == 1.0
    assert "difference" not in set(side.columns.get_level_values(1))


def test_table2_beside_carries_the_paired_interval_of_each_step():
    t2 = pd.DataFrame({"MRR": [0.8, 0.7], "R@1": [0.5, 0.5], "R@5": [0.9, 0.9], "ΔMRR": [math.nan, -0.1]},
                      index=paper.ABLATION[:2])
    diffs = pd.DataFrame({"diff": [-0.1], "n": [4], "ci_low": [-0.2], "ci_high": [0.0], "p": [0.5], "p_holm": [0.5],
                          "mde": [0.1]}, index=paper.ABLATION[1:2])
    side = tb.table2_beside(t2, diffs)
    assert list(side["ΔMRR"].columns) == ["ours", "n", "ci_low", "ci_high", "Holm p", "paper-reported"]
    assert side.loc[paper.ABLATION[1], ("ΔMRR", "ci_low")] == -0.2
    assert side.loc[paper.ABLATION[1], ("ΔMRR", "paper-reported")] == -0.0003
    assert math.isnan(side.loc[paper.ABLATION[0], ("ΔMRR", "n")])


def test_summary_by_condition_reads_one_label_across_conditions():
    # naive 1 and 0 in introduction (mean 0.5), 1 and 1 in full; semantic only in full (0 and 1: 0.5)
    data = pd.DataFrame(rows("gralc-naive", "doc_recall", 5, [1, 0], "introduction") + rows("gralc-naive", "doc_recall", 5, [1, 1], "full")
                        + rows("gralc-semantic", "doc_recall", 5, [0, 1], "full"))
    parts = tb.summary(data, {"R@5": "doc_recall@5"}, by="condition")
    assert parts["ours"]["R@5"].to_dict() == {("introduction", "Naive"): 0.5, ("full", "Naive"): 1.0, ("full", "Semantic"): 0.5}
    assert parts["ours"].index.names == ["condition", "strategy"] and (parts["n"]["R@5"] == 2).all()
    # a question in two conditions is two rows of one question: the summary splits by condition first
    assert parts["ci_low"].loc[("full", "Naive"), "R@5"] < 1.0 == parts["ci_high"].loc[("full", "Naive"), "R@5"]


def test_ceiling_test_is_the_lowest_strategy_minus_the_papers_bound():
    # per question: semantic 0.97 +- 0.01 on 200 questions, naive 1.0: its scores minus 0.95 are +0.03 or +0.01.
    # The bounded-mean test: P(D_low <= 0) = 1.03^-100 * 1.01^-100 = 0.0193, p = 0.0386: decided above the
    # ceiling (on 20 such questions p = 1: one unseen question at the bound could undo 20 small wins)
    data = [(m, f"q{i}", "doc_mrr", 10, v) for i in range(200)
            for m, v in (("gralc-naive", 1.0), ("gralc-semantic", 0.97 + 0.01 * (-1) ** i))]
    scores = pd.DataFrame(data, columns=["method", "question_id", "metric", "k", "value"])
    above = cmp.ceiling_test(scores, "doc_mrr@10")
    assert above["method"] == "gralc-semantic" and above["label"] == "Semantic" and above["verdict"] == "supported"
    assert above["diff"] == pytest.approx(0.02) and above["baseline"] == f"the {paper.CEILING:g} ceiling"
    assert above["p"] == pytest.approx(2 * 1.03 ** -100 * 1.01 ** -100, abs=0.004)
    # the same scores in two documents: no clustered test can decide, whatever the interval of the mean says
    two = cmp.ceiling_test(scores, "doc_mrr@10", where=cmp.Where("d", "abstract", {f"q{i}": f"doc{i % 2}" for i in range(200)}))
    assert two["units"] == 2 and two["verdict"] == "cannot be decided"
    assert cmp.ceiling_test(scores.iloc[:0], "doc_mrr@10") is None
