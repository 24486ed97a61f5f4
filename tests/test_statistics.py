"""Known answers for the uncertainty layer: intervals, paired differences, permutation p, Holm, MDE,
verdicts, and the tidy-table functions built on them (summaries with CIs, differences, flips)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rag_lab.core.types import Dataset, Document, Question
from rag_lab.evaluation.statistics import (CONTRADICTED, INCONCLUSIVE, SUPPORTED, format_ci, holm, mean_ci,
                                           minimum_detectable_effect, paired_difference, permutation_p, verdict)
from rag_lab.evaluation.uncertainty import (difference_sentence, family_baseline, flip_counts, flips, formatted_summary, judge_spread,
                                            paired_differences, summary_with_ci)


def test_identical_methods_differ_by_zero_with_interval_zero_and_p_one():
    a = [0.2, 0.9, 0.4, 1.0, 0.0, 0.6]
    d = paired_difference(a, list(a))
    assert (d.diff, d.n, d.ci_low, d.ci_high, d.p, d.mde) == (0.0, 6, 0.0, 0.0, 1.0, 0.0)


def test_a_constant_shift_has_exactly_that_interval():
    a = np.array([0.25, 0.5, 0.75, 0.125, 0.375])      # dyadic: a + c - a == c with no rounding
    d = paired_difference(a + 0.25, a)
    assert (d.diff, d.ci_low, d.ci_high) == (0.25, 0.25, 0.25)
    noisy = np.random.default_rng(3).random(30)
    d = paired_difference(noisy + 0.1, noisy)
    assert d.ci_low == pytest.approx(0.1, abs=1e-12) and d.ci_high == pytest.approx(0.1, abs=1e-12)


def test_the_95_percent_interval_covers_the_true_mean_about_95_percent_of_the_time():
    # 400 seeded draws of 50 questions; with 400 draws the share is known to about +-1 point.
    rng = np.random.default_rng(1)
    covered = sum(e.ci_low <= 0.5 <= e.ci_high for e in (mean_ci(rng.normal(0.5, 0.2, 50)) for _ in range(400)))
    assert 0.93 <= covered / 400 <= 0.97


def test_mean_ci_leaves_out_nan_and_handles_tiny_samples():
    e = mean_ci([1.0, 0.0, float("nan"), 1.0, 0.0])
    assert (e.mean, e.n) == (0.5, 4) and e.ci_low <= 0.5 <= e.ci_high
    assert mean_ci([]).n == 0 and math.isnan(mean_ci([]).mean)
    one = mean_ci([0.7])
    assert (one.mean, one.n) == (0.7, 1) and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    same = mean_ci([0.4] * 5)
    assert (same.ci_low, same.ci_high, same.ci) == (0.4, 0.4, "exact")
    assert mean_ci([0.0, 1.0] * 10, seed=7) == mean_ci([0.0, 1.0] * 10, seed=7)      # seeded: identical


def test_exact_permutation_p_of_three_questions():
    # Three questions, a beats b by 1 on each: 2**3 = 8 ways to swap; only "all as observed" and "all
    # swapped" reach |mean difference| >= 1, so p = 2/8.
    assert permutation_p(np.array([1.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.0])) == pytest.approx(0.25)
    assert permutation_p(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == 1.0


def test_holm_step_down_by_hand():
    # sorted: 0.005*4 = 0.02; 0.01*3 = 0.03; 0.03*2 = 0.06; 0.04*1 = 0.04 -> kept monotone at 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    out = holm([0.2, float("nan"), 0.9])               # NaN is no test: m = 2
    assert out[0] == pytest.approx(0.4) and math.isnan(out[1]) and out[2] == pytest.approx(0.9)
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])


def test_minimum_detectable_effect_by_hand():
    # d = [1, -1, 1, -1]: sd = sqrt(4/3) = 1.1547, n = 4, t(0.975; 3) = 3.1824, t(0.80; 3) = 0.9785
    # -> (3.1824 + 0.9785) * 1.1547 / 2 = 2.4023
    assert minimum_detectable_effect([1, -1, 1, -1]) == pytest.approx(2.4023, rel=1e-3)
    assert math.isnan(minimum_detectable_effect([0.3]))
    # four times the questions, same spread: about half the MDE (t quantiles shrink a little too)
    assert minimum_detectable_effect([1, -1] * 8) < 0.5 * minimum_detectable_effect([1, -1, 1, -1])


def test_verdicts_from_intervals():
    assert verdict(0.01, 0.2) == SUPPORTED
    assert verdict(-0.3, -0.02) == CONTRADICTED
    assert verdict(-0.1, 0.1) == INCONCLUSIVE
    assert verdict(-0.04, 0.1, threshold=-0.05) == SUPPORTED          # non-inferior within a 0.05 margin
    assert verdict(-0.2, -0.06, threshold=-0.05) == CONTRADICTED
    assert verdict(float("nan"), float("nan")) == INCONCLUSIVE


def test_format_ci():
    assert format_ci(0.6123, 0.48, 0.7409) == "0.612 [0.480, 0.741]"
    assert format_ci(0.5, float("nan"), float("nan")) == "0.500"


def tidy(rows):
    return pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])


# Two methods, three questions, two ks; B's q3 at k=1 was not scored (NaN).
TABLE = tidy([
    ("A", "q1", "ctx_recall", 1, 1.0), ("A", "q2", "ctx_recall", 1, 0.0), ("A", "q3", "ctx_recall", 1, 1.0),
    ("B", "q1", "ctx_recall", 1, 0.0), ("B", "q2", "ctx_recall", 1, 0.0), ("B", "q3", "ctx_recall", 1, float("nan")),
    ("A", "q1", "ctx_recall", 5, 1.0), ("A", "q2", "ctx_recall", 5, 1.0), ("A", "q3", "ctx_recall", 5, 1.0),
    ("B", "q1", "ctx_recall", 5, 1.0), ("B", "q2", "ctx_recall", 5, 0.5), ("B", "q3", "ctx_recall", 5, 1.0),
    ("A", "q1", "latency_seconds", float("nan"), 0.5),
])


def test_summary_with_ci_by_hand():
    s = summary_with_ci(TABLE).set_index(["method", "metric"])
    assert s.loc[("A", "ctx_recall@1"), "mean"] == pytest.approx(2 / 3) and s.loc[("A", "ctx_recall@1"), "n"] == 3
    assert s.loc[("B", "ctx_recall@1"), "mean"] == 0.0 and s.loc[("B", "ctx_recall@1"), "n"] == 2   # NaN not a miss
    assert s.loc[("B", "ctx_recall@5"), "mean"] == pytest.approx(2.5 / 3)
    assert (s.loc[("A", "ctx_recall@5"), "ci_low"], s.loc[("A", "ctx_recall@5"), "ci_high"]) == (1.0, 1.0)
    assert ("A", "latency_seconds") not in s.index                   # costs are not findings
    assert summary_with_ci(TABLE, metrics=["latency_seconds"])["n"].tolist() == [1]
    ok = s.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-12) & (ok["mean"] <= ok["ci_high"] + 1e-12)).all()
    shown = formatted_summary(summary_with_ci(TABLE, metrics=["ctx_recall@1", "ctx_recall@5"]))
    assert list(shown.columns) == ["n", "A", "B"] and shown.loc["ctx_recall@1", "n"] == "2/3"
    assert shown.loc["ctx_recall@5", "A"] == "1.000 [1.000, 1.000]"


def test_paired_differences_by_hand():
    d = paired_differences(TABLE, baseline="B", metrics=["ctx_recall@1", "ctx_recall@5"]).set_index("metric")
    # k=1: pairs on q1, q2 only (B's q3 unscored): A - B = [1, 0] -> mean 0.5, n 2
    assert (d.loc["ctx_recall@1", "diff"], d.loc["ctx_recall@1", "n"]) == (0.5, 2)
    # k=5: A - B = [0, 0.5, 0] -> mean 1/6
    assert d.loc["ctx_recall@5", "diff"] == pytest.approx(1 / 6) and d.loc["ctx_recall@5", "n"] == 3
    assert (d["p_holm"] >= d["p"]).all() and list(d["method"]) == ["A", "A"]
    with pytest.raises(ValueError, match="baseline 'C'"):
        paired_differences(TABLE, baseline="C")


def test_flips_name_the_questions_one_method_gets_right():
    t = tidy([("A", "q1", "ctx_mrr", 5, 1.0), ("A", "q2", "ctx_mrr", 5, 0.0), ("A", "q3", "ctx_mrr", 5, 0.5),
              ("B", "q1", "ctx_mrr", 5, 0.0), ("B", "q2", "ctx_mrr", 5, 0.25), ("B", "q3", "ctx_mrr", 5, 1.0),
              ("A", "q4", "doc_mrr", 5, 0.0), ("B", "q4", "doc_mrr", 5, 1.0)])   # q4 has only doc gold
    data = Dataset("d", [Document("x", "text")], [Question(f"q{i}", f"question {i}") for i in range(1, 5)])
    f = flips(t, "A", "B", 5, data)
    assert list(f["question_id"]) == ["q1", "q2", "q4"] and list(f["winner"]) == ["A", "B", "B"]
    assert f.loc[0, "question"] == "question 1"
    assert flip_counts(t, "A", "B", 5) == {"wins": 1, "losses": 2, "ties": 1, "n": 4}


def test_judge_spread_is_the_mean_per_sample_standard_deviation():
    # sample 1 scored 1, 0 (sd 0.7071); sample 2 scored 0.5, 0.5 (sd 0)
    assert judge_spread([[1.0, 0.5], [0.0, 0.5]]) == pytest.approx(0.7071 / 2, rel=1e-3)
    assert math.isnan(judge_spread([[1.0, 0.5]]))


def test_each_paper_method_has_its_family_baseline():
    assert [family_baseline(m) for m in ("sketch", "unweaver", "raptor", "naive")] == ["naive", "naive", "naive", None]
    assert family_baseline("ssg-query-traversal") == "ssg-basic-retrieval" and family_baseline("ssg-basic-retrieval") is None
    assert family_baseline("gralc-graph") == "gralc-naive" and family_baseline("gralc-naive") is None


def test_difference_sentence_reads_the_interval():
    # A - B at k=5 on q1..q3: [0, 0.5, 0] -> mean 1/6; the interval touches 0 -> inconclusive
    text = difference_sentence(TABLE, "A", "B", "ctx_recall@5")
    assert text.startswith("A - B on ctx_recall@5: 0.167 [0.000, ") and text.endswith("): inconclusive")
    assert "(n = 3, p = " in text
    assert "not both scored" in difference_sentence(TABLE, "A", "C", "ctx_recall@5")
