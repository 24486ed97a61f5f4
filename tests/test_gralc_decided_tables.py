"""Notebook 04's comparisons through the one entry (``uncertainty.decided_pairs``) with GraLC's sides and pairs
(``paper``), the tables made of the decided rows, and the interval columns of its tables, on hand-made tidy
rows whose answers are worked out by hand in the comments."""
import math

import pandas as pd
import pytest

from rag_lab.evaluation.uncertainty import decided_pairs, pairwise_differences
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


def test_the_groups_are_the_papers_two_sides_and_their_means_are_shown():
    # per question: structure mean − content mean = (3 − 1, 5 − 1, 4 − 1) = (2, 4, 3): mean 3
    data = pd.DataFrame(seccov_rows("full", [1, 1, 1], [3, 5, 4], [2, 2, 2], [2, 2, 2]))
    d = decided_pairs(data, f"{tb.SECCOV}@5", [paper.GROUPS], "F", sides=paper.SIDES).iloc[0]
    assert (d["method"], d["baseline"], d["diff"], d["n"]) == ("structure-aware", "content-only", 3.0, 3)
    assert tb.group_means(data, f"{tb.SECCOV}@5") == {"structure-aware": 4.0, "content-only": 1.0}
    # the paired t on (2, 4, 3): 3 ± 4.303 · 1 / sqrt(3) = [0.516, 5.484], p = 0.0351
    assert d["ci_low"] == pytest.approx(0.5159, abs=1e-4) and d["p"] == pytest.approx(0.0351, abs=1e-4)


def test_table5c_both_readings_beside_the_papers_difference():
    data = pd.DataFrame(seccov_rows("full", [1, 1, 1], [3, 5, 4], [2, 3, 2], [2, 2, 2]))
    decided = decided_pairs(data[data["condition"].isin(["introduction", "full"])],     # introduction did not run: no row
                            [f"{m}@5" for m in tb.READINGS.values()], [paper.GROUPS], "F", sides=paper.SIDES, by="condition")
    contrast = tb.table5c(decided, data)
    pattern, fair = list(tb.READINGS)
    assert list(contrast.index) == [(pattern, 5, "full"), (fair, 5, "full")]
    assert contrast.loc[(pattern, 5, "full"), "diff"] == 3.0 and contrast.loc[(pattern, 5, "full"), "content-only"] == 1.0
    # fair: structure 2 on each question, content (2, 3, 2): differences (0, −1, 0), mean −1/3
    assert contrast.loc[(fair, 5, "full"), "diff"] == pytest.approx(-1 / 3)
    assert contrast.loc[(fair, 5, "full"), "content-only"] == pytest.approx(7 / 3)
    # the paper's full SecCov@5: structure (4.26 + 4.46 + 4.36) / 3 = 4.36, content 1.00: +3.36
    assert contrast.loc[(pattern, 5, "full"), "paper-reported diff"] == pytest.approx(3.36)
    assert math.isnan(contrast.loc[(fair, 5, "full"), "paper-reported diff"])
    assert (contrast["p_holm"] >= contrast["p"] - 1e-12).all() and (contrast["family_size"] == 2).all()
    assert tb.table5c(decided.iloc[:0], data).empty


def test_ablation_and_order_pair_by_question():
    data = []
    for name, mrr in [("gralc-late", [1.0, 1.0, 0.5, 0.5]), ("gralc-structure", [1.0, 1.0, 0.5, 0.5]),
                      ("gralc-kg", [0.5, 0.5, 0.5, 0.5]), ("gralc-graph", [1.0, 1.0, 1.0, 1.0])]:
        data += rows(name, "doc_mrr", 10, mrr)
    data = pd.DataFrame(data)
    diffs = paper.labelled(decided_pairs(data, "doc_mrr@10", paper.ABLATION_PAIRS, "F"))
    assert diffs[["method", "baseline"]].values.tolist() == [["Structure-Aware", "Late Chunking"], ["GraLC-RAG (KG)", "Late Chunking"],
                                                             ["GraLC-RAG (+Graph)", "Late Chunking"]]
    # step minus the late base per question: structure (0, 0, 0, 0), kg (−.5, −.5, 0, 0), graph (0, 0, .5, .5)
    assert diffs["diff"].tolist() == [0.0, -0.25, 0.25] and (diffs["n"] == 4).all()
    side = tb.table2_beside(tb.summary(data, {"MRR": "doc_mrr@10"})["ours"], diffs)    # by step
    assert side[("ΔMRR", "ours")].tolist()[1:] == [0.0, -0.25, 0.25] and (side[("ΔMRR", "n")].tolist()[1:] == [4, 4, 4])
    order = paper.labelled(pairwise_differences(data, "doc_mrr@10"))
    assert order.iloc[0][["method", "below"]].tolist() == ["GraLC-RAG (+Graph)", "Late Chunking"]   # 1.0 vs 0.75 first
    assert len(order) == 6 and (order["diff"] >= 0).all()
    assert paper.strategy("Late Chunking") == "gralc-late" and paper.strategy(paper.label("gralc-kg")) == "gralc-kg"


def test_reported_gives_each_table_new():
    # Table 1's Semantic MRR as the paper prints it; a caller's change does not reach the next caller
    t1 = paper.reported(1)
    assert t1.loc["Semantic", "MRR"] == 0.9802 and list(t1.index) == paper.ORDER
    t1.loc["Semantic", "MRR"] = 0.0
    assert paper.reported(1).loc["Semantic", "MRR"] == 0.9802
    assert paper.reported(6).loc["GraLC-RAG (KG)", "Sec Diversity"] == 4.62 and len(paper.reported(4)) == 18
    with pytest.raises(ValueError, match="Tables 1-6"):
        paper.reported(7)


def test_sweep_by_lambda_each_lambda_against_the_first():
    scores = pd.DataFrame(rows("λ = 0", "doc_mrr", 5, [1.0, 0.5, 0.5]) + rows("λ = 0.5", "doc_mrr", 5, [1.0, 1.0, 1.0])
                          + rows("λ = 0", "doc_recall", 5, [1, 1, 1]) + rows("λ = 0.5", "doc_recall", 5, [1, 1, 1]))
    table = pd.DataFrame({"MRR@5": [2 / 3, 1.0], "R@5": [1.0, 1.0]}, index=pd.Index([0.0, 0.5], name="lambda"))
    sweep = ex.Sweep(table, scores)
    assert sweep.pairs == [("λ = 0.5", "λ = 0")] and sweep.metrics == ["doc_mrr@5", "doc_recall@5"]
    decided = pd.concat([decided_pairs(scores, m, sweep.pairs, f"F {m}") for m in sweep.metrics])
    diffs = sweep.by_lambda(decided)
    # MRR: (0, .5, .5) → +1/3; recall unchanged → 0 with p = 1; one family per column
    assert diffs.loc[("MRR@5", 0.5), "diff"] == pytest.approx(1 / 3) and diffs.loc[("MRR@5", 0.5), "family"] == "F doc_mrr@5"
    assert diffs.loc[("R@5", 0.5), "diff"] == 0 and diffs.loc[("R@5", 0.5), "p"] == 1.0
    assert ex.Sweep(table.iloc[:1], scores).pairs == [] and sweep.by_lambda(decided.iloc[:0]).empty


def test_interval_columns_sit_after_ours_and_no_difference_is_printed():
    data = pd.DataFrame(rows("gralc-naive", "doc_mrr", 20, [1.0, 0.0], "full") + rows("gralc-naive", "doc_recall", 1, [1, 0], "full")
                        + rows("gralc-naive", "doc_recall", 5, [1, 1], "full"))
    ci = tb.summary(data, {"MRR": "doc_mrr@20", "R@1": "doc_recall@1", "R@5": "doc_recall@5"}, by="condition")
    side = tb.ours_with_intervals(ci["ours"], ci, paper.reported(4))
    assert list(side["MRR"].columns) == ["ours", "n", "ci_low", "ci_high", "paper-reported"]
    assert side.loc[("full", "Naive"), ("MRR", "ours")] == 0.5 and side.loc[("full", "Naive"), ("MRR", "n")] == 2
    assert side.loc[("full", "Naive"), ("MRR", "paper-reported")] == 0.344
    # recall@5 is 1 on both questions: Wilson's interval for 2 of 2, (0.6712 - 0.3288, 1) = [0.342, 1], never a point
    assert side.loc[("full", "Naive"), ("R@5", "ci_low")] == pytest.approx(0.3424, abs=1e-4)
    assert side.loc[("full", "Naive"), ("R@5", "ci_high")] == 1.0
    assert "difference" not in set(side.columns.get_level_values(1))


def test_table2_beside_carries_the_paired_interval_of_each_step():
    # Table 1's means of the late base and the structure step: ΔMRR 0.7 − 0.8 = −0.1
    t1 = pd.DataFrame({"MRR": [0.8, 0.7], "R@1": [0.5, 0.5], "R@5": [0.9, 0.9]}, index=["Late Chunking", "Structure-Aware"])
    diffs = pd.DataFrame({"method": ["Structure-Aware"], "diff": [-0.1], "n": [4], "ci_low": [-0.2], "ci_high": [0.0],
                          "p": [0.5], "p_holm": [0.5], "mde": [0.1]})       # the decided row of that step, the paper's label
    side = tb.table2_beside(t1, diffs)
    assert list(side.index) == paper.ABLATION[:2] and side.loc[paper.ABLATION[1], ("ΔMRR", "ours")] == pytest.approx(-0.1)
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


def test_the_ceiling_is_the_lowest_strategy_minus_the_papers_bound():
    # per question: semantic 0.97 +- 0.01 on 200 questions: its scores minus 0.95 are +0.03 or +0.01; the
    # bounded-mean test: p = 2 * 1.03^-100 * 1.01^-100 = 0.0386: decided above the ceiling
    data = [(m, f"q{i}", "doc_mrr", 10, v) for i in range(200)
            for m, v in (("gralc-naive", 1.0), ("gralc-semantic", 0.97 + 0.01 * (-1) ** i))]
    scores = pd.DataFrame(data, columns=["method", "question_id", "metric", "k", "value"])
    above = decided_pairs(scores, "doc_mrr@10", [(paper.strategy("Semantic"), paper.CEILING_SIDE)], "F", sides=paper.SIDES).iloc[0]
    assert above["method"] == "gralc-semantic" and above["verdict"] == "supported"
    assert above["diff"] == pytest.approx(0.02) and above["baseline"] == f"the {paper.CEILING:g} ceiling"
    assert above["p"] == pytest.approx(2 * 1.03 ** -100 * 1.01 ** -100, abs=0.004)
