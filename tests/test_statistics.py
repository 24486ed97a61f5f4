"""Known answers for the uncertainty layer: intervals, paired differences and their one procedure,
Holm within a family, MDE, verdicts read from p, clustering by document, coverage, and the tidy-table
functions built on them (summaries with CIs, differences, flips)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rag_lab.core.types import Dataset, Document, Question
from rag_lab.evaluation.paired_tests import spread
from rag_lab.evaluation.statistics import (CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE, decided, format_ci,
                                           format_p, holm, holm_floors, mean_ci, paired_difference, verdict)
from rag_lab.evaluation.flips import flip_counts, flips
from rag_lab.evaluation.uncertainty import (decide, family_baseline, formatted_summary, paired_differences, question_units,
                                            summary_with_ci)

Z = 1.959964      # the normal 97.5% quantile


# p of the bounded-mean test is over 2^14 quasi-random Dirichlet weights: within about 0.002 of the
# probability worked out by hand (the tolerance below), and identical run to run.
MC = 0.004


def test_identical_methods_differ_by_zero_with_p_one_and_an_interval_of_honest_width():
    a = [0.2, 0.9, 0.4, 1.0, 0.0, 0.6]
    d = paired_difference(a, list(a))
    assert (d.diff, d.n, d.p) == (0.0, 6, 1.0) and d.verdict() == INCONCLUSIVE
    # every difference 0: D_low = -U0 with U0 ~ Beta(1, 6), the unseen unit's weight among 7, so the lower
    # end is -(1 - 0.025^(1/6)) = -0.4593 and the upper +0.4593 (not a zero-width [0, 0])
    assert d.ci_low == pytest.approx(-(1 - 0.025 ** (1 / 6)), abs=0.01)
    assert d.ci_high == pytest.approx(1 - 0.025 ** (1 / 6), abs=0.01)


def test_all_ones_against_all_zeros_at_three_questions_cannot_be_decided():
    # every difference +1 over 3 questions: D_low <= 0 when the unseen unit (-1) weighs at least half, P(U0 >= 1/2)
    # = (1/2)^3 for U0 ~ Beta(1, 3): p = 2/8 = 0.25, the sign-flip floor, and no data of three questions give less
    d = paired_difference([1, 1, 1], [0, 0, 0])
    assert d.p == pytest.approx(0.25, abs=MC) and d.p_floor == pytest.approx(0.25, abs=MC)
    assert d.resamples == 2 ** 14 and d.verdict() == UNDECIDABLE
    # n = 4: 2/16 = 0.125; n = 5: 2/32 = 0.0625, still above 0.05; n = 6: 2/64 decides
    assert paired_difference([1] * 4, [0] * 4).p == pytest.approx(2 / 16, abs=MC)
    assert paired_difference([1] * 5, [0] * 5).verdict() == UNDECIDABLE
    six = paired_difference([1] * 6, [0] * 6)
    assert six.p == pytest.approx(2 / 64, abs=MC) and six.verdict() == SUPPORTED
    # four documents of five questions, every one +1: the units are the documents, so 2/16 again
    docs = paired_difference([1] * 20, [0] * 20, units=[f"d{i % 4}" for i in range(20)])
    assert docs.p == pytest.approx(2 / 16, abs=MC) and docs.units == 4 and docs.verdict() == UNDECIDABLE


def test_three_wins_and_seventeen_ties_is_not_supported():
    # 0/1 differences at 0: P(D_low <= 0) = P(Binomial(wins + losses, 1/2) >= wins), the exact sign (McNemar)
    # test: 3 wins, no loss -> p = 2 * (1/2)^3 = 0.25 (the BCa interval once said "supported")
    d = paired_difference([1] * 3 + [0] * 17, [0] * 20)
    assert d.p == pytest.approx(0.25, abs=MC) and d.ci_low < 0 < d.ci_high
    assert d.verdict() == INCONCLUSIVE
    # 8 wins, 1 loss: 2 * P(Bin(9, 1/2) >= 8) = 2 * 10/512 = 0.0391
    eight = paired_difference([1] * 8 + [0] * 12, [0] * 8 + [1] + [0] * 11)
    assert eight.p == pytest.approx(20 / 512, abs=MC) and eight.verdict() == SUPPORTED


def test_a_constant_shift_is_not_a_point_interval_and_no_spread_is_no_jump():
    a = np.array([0.25, 0.5, 0.75, 0.125, 0.375, 0.5, 0.25, 0.5, 0.625, 0.125, 0.375, 0.5, 0.25, 0.75])
    d = paired_difference(a + 0.25, a)            # 14 questions, every one +0.25
    # its MDE is the decision point of a constant sample of 14: q = 1 - 0.025^(1/14) = 0.23163, q / (1 - q) = 0.3015
    assert d.diff == 0.25 and d.ci_low < 0.25 < d.ci_high and d.mde == pytest.approx(0.3015, abs=0.003)
    # P(D_low <= 0) = P(E0 >= 0.25 (E1 + ... + E14)) = (1 / 1.25)^14 = 0.0440: p = 0.0880, not supported
    assert d.p == pytest.approx(2 * 0.8 ** 14, abs=MC) and d.verdict() == INCONCLUSIVE
    # the jump: +0.01 on 20 questions gave p = 0.655, one of them at +0.011 gave 4e-33. Now both
    # are 2 min(1, ...) with P(D_low <= 0) = (1 / 1.01)^20 = 0.82: p = 1, and nearly the same p either way
    flat = paired_difference([0.51] * 20, [0.5] * 20, kind="unit")
    nudged = paired_difference([0.51] * 19 + [0.511], [0.5] * 20, kind="unit")
    assert flat.p == nudged.p == 1.0 and abs(flat.ci_high - nudged.ci_high) < 1e-3
    tenth = paired_difference([0.6] * 20, [0.5] * 20, kind="unit")        # +0.1: 2 / 1.1^20 = 0.297
    assert tenth.p == pytest.approx(2 / 1.1 ** 20, abs=MC)


def test_the_interval_is_every_delta_the_test_does_not_reject():
    from rag_lab.evaluation.statistics import paired_procedure

    rng = np.random.default_rng(8)
    for trial in range(40):
        n = int(rng.integers(3, 40))
        a, b = rng.choice([0, 0.5, 1], n), rng.choice([0, 1], n)
        labels = np.array([f"d{i % 5}" for i in range(n)]) if trial % 2 else None
        d = paired_difference(a, b, units=labels, kind="unit")
        test, _, _ = paired_procedure(a - b, True, labels)
        for delta in np.r_[np.linspace(-1, 1, 41), d.ci_low, d.ci_high, d.ci_low - 1e-9, d.ci_high + 1e-9]:
            assert (test.p(delta) >= 0.05) == (d.ci_low <= delta <= d.ci_high), (trial, delta)
        assert test.p(d.diff) >= 0.05 and -1 <= d.ci_low <= d.ci_high <= 1
        assert d.p >= d.p_floor                     # no data of these units give less than the floor


def test_mean_ci_wilson_t_and_labelled_none():
    # all ones at n = 20, Wilson: centre (1 + z^2/40)/(1 + z^2/20) = 0.91944, half 1.64420*sqrt(z^2/1600)
    # = 0.08057 -> [0.8389, 1] (Clopper-Pearson would give 0.832; the old bootstrap gave [1, 1])
    ones = mean_ci([1.0] * 20)
    assert ones.ci_low == pytest.approx(0.8389, abs=1e-4) and ones.ci_high == 1.0 and ones.interval == "wilson"
    e = mean_ci([1.0, 0.0, float("nan"), 1.0, 0.0])
    assert (e.mean, e.n, e.n_dropped) == (0.5, 4, 1) and e.ci_low < 0.5 < e.ci_high
    t = mean_ci([2.0, 4.0, 6.0])                  # unbounded: t(0.975; 2) = 4.3027, se = 2/sqrt(3)
    assert (t.ci_low, t.ci_high) == pytest.approx((4 - 4.3027 * 2 / math.sqrt(3), 4 + 4.3027 * 2 / math.sqrt(3)),
                                                  abs=1e-3) and t.interval == "t"
    for values, why in (([], "no question scored"), ([0.7], "one question"), ([0.2, 0.3, math.inf], "an infinite score"),
                        ([3.0, 3.0], "no spread")):
        none = mean_ci(values)
        assert none.interval == f"none: {why}" and math.isnan(none.ci_low) and math.isnan(none.ci_high)
    same = mean_ci([0.4] * 5)                     # in [0, 1] without spread: Wilson at 0.4, never a point
    assert same.ci_low < 0.4 < same.ci_high


def test_paired_difference_on_one_question_or_none_is_labelled_not_a_crash():
    one = paired_difference([1.0], [0.0])
    assert one.interval == "none: one question" and math.isnan(one.p) and one.verdict() == UNDECIDABLE
    empty = paired_difference([float("nan")], [1.0])
    assert (empty.n, empty.n_dropped) == (0, 1) and empty.interval.startswith("none")
    assert paired_difference([0.1, math.inf], [0.0, 0.0]).interval == "none: an infinite score"
    with pytest.raises(ValueError, match="one length"):
        paired_difference([1, 2], [1])


def test_holm_step_down_by_hand():
    # sorted: 0.005*4 = 0.02; 0.01*3 = 0.03; 0.03*2 = 0.06; 0.04*1 = 0.04 -> kept monotone at 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    out = holm([0.2, float("nan"), 0.9])               # NaN is no test: m = 2
    assert out[0] == pytest.approx(0.4) and math.isnan(out[1]) and out[2] == pytest.approx(0.9)
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])
    # floors: two tests, the smaller floor 0.01 -> Holm's first step cannot go below 2 * 0.01
    f = holm_floors([0.25, 0.01, float("nan")])
    assert f[:2] == pytest.approx([0.25, 0.02]) and math.isnan(f[2])


def test_minimum_detectable_effect_is_the_deciding_tests_by_hand():
    # t (unbounded): d = [1, -1, 1, -1]: sd = sqrt(4/3) = 1.1547, n = 4, t(0.975; 3) = 3.1824, t(0.80; 3) = 0.9785
    # -> (3.1824 + 0.9785) * 1.1547 / 2 = 2.4023; no spread: no test, so no MDE (never a reassuring 0)
    assert paired_difference([1, -1, 1, -1], [0] * 4, kind="unbounded").mde == pytest.approx(2.4023, rel=1e-3)
    assert math.isnan(paired_difference([0.3, 0.3], [0, 0], kind="unbounded").mde)
    # the bounded-mean test, 20 questions all 0: se = 0, so the MDE is the decision point alone. Every value c:
    # D_low = c - (1 + c) W0, W0 ~ Beta(1, 20) the unseen unit's weight, so the lower end is c - (1 + c) q with
    # q = 1 - 0.025^(1/20) = 0.16843 its 97.5% point: 0 at c = q / (1 - q) = 0.2025
    flat = paired_difference([0.5] * 20, [0.5] * 20)
    assert flat.mde == pytest.approx(0.2025, abs=0.003)
    # and it is the test's: a constant difference just above it is decided, just below it is not
    above, below = ((flat.mde + s) / 2 for s in (0.005, -0.005))
    assert paired_difference([0.5 + above] * 20, [0.5 - above] * 20).verdict() == SUPPORTED
    assert paired_difference([0.5 + below] * 20, [0.5 - below] * 20).verdict() == INCONCLUSIVE
    # three documents cannot decide (p >= 2/2^3 = 0.25): no MDE; 16 questions alone can
    labels = [i % 3 for i in range(16)]
    spread_out = np.linspace(0, 1, 16)
    assert math.isnan(paired_difference(spread_out, spread_out[::-1], units=labels).mde)
    assert math.isfinite(paired_difference(spread_out, spread_out[::-1]).mde)
    # four times the questions, the same shape: a smaller MDE
    assert paired_difference([1, 0] * 40, [0, 1] * 40).mde < paired_difference([1, 0] * 10, [0, 1] * 10).mde


def test_verdicts_from_p_only():
    assert verdict(0.1, 0.01) == SUPPORTED and verdict(-0.1, 0.01) == CONTRADICTED
    assert verdict(0.1, 0.05) == INCONCLUSIVE and verdict(0.1, 0.2) == INCONCLUSIVE
    assert verdict(0.1, 0.01, p_floor=0.0625) == UNDECIDABLE        # n = 5: no p below 0.05 attainable
    assert verdict(float("nan"), float("nan")) == UNDECIDABLE
    # non-inferiority against the margin 0.05 (threshold -0.05): p tests "diff = -0.05"
    assert verdict(-0.01, 0.02, threshold=-0.05) == SUPPORTED
    assert verdict(-0.2, 0.001, threshold=-0.05) == CONTRADICTED
    assert verdict(-0.01, 0.3, threshold=-0.05, mde=0.2) == UNDECIDABLE   # MDE above the margin
    assert verdict(-0.01, 0.3, threshold=-0.05, mde=0.04) == INCONCLUSIVE


def test_decided_implies_p_below_alpha_on_random_comparisons():
    # the invariant the issue asks for: over many seeded comparisons (0/1 and continuous, 3 to 30
    # questions, families of up to 6), every decided verdict has (Holm) p < 0.05 and its interval
    # excludes the threshold.
    rng = np.random.default_rng(11)
    for trial in range(60):
        rows = []
        for _ in range(int(rng.integers(1, 7))):
            n = int(rng.integers(3, 31))
            if trial % 2:
                a, b = (rng.random(n) < 0.6).astype(float), (rng.random(n) < 0.4).astype(float)
            else:
                a, b = rng.normal(0.3, 0.3, n), rng.normal(0.0, 0.3, n)
            rows.append(paired_difference(a, b).as_dict())
        out = decide(pd.DataFrame(rows), "random")
        for _, r in out[out["verdict"].map(decided)].iterrows():
            assert r["p_holm"] < 0.05 and r["p"] < 0.05 and not (r["ci_low"] <= 0 <= r["ci_high"])


def test_clustered_by_document_by_hand():
    # d = [1, 1, 0, 0] in documents x, x, y, y: unit sums [2, 0], mean 0.5; cluster-robust variance
    # 2/1 * ((2 - 1)^2 + (0 - 1)^2) / 4^2 = 0.25 against the independent (1/3)/4 = 0.0833: design effect 3
    s = spread(np.array([1.0, 1.0, 0.0, 0.0]), np.array(["x", "x", "y", "y"]))
    assert (s.units, s.df) == (2, 1) and s.design_effect == pytest.approx(3.0) and s.se == pytest.approx(0.5)
    rng = np.random.default_rng(5)
    a, b = rng.random(24), rng.random(24)
    alone = paired_difference(a, b)
    own = paired_difference(a, b, units=[f"doc{i}" for i in range(24)])     # one question per document
    assert own == alone
    grouped = paired_difference(a + np.repeat([0.3, -0.3, 0.2, -0.2, 0.25, -0.25], 4), b,
                                units=np.repeat([f"doc{i}" for i in range(6)], 4))
    flat = paired_difference(a + np.repeat([0.3, -0.3, 0.2, -0.2, 0.25, -0.25], 4), b)
    assert grouped.units == 6 and grouped.design_effect > 1 and "clustered" in grouped.interval
    assert grouped.ci_high - grouped.ci_low > flat.ci_high - flat.ci_low      # shared documents: wider
    data = Dataset("d", [Document("x", "t"), Document("y", "t")],
                   [Question("q1", "?", gold_doc_ids=["x"]), Question("q2", "?", gold_doc_ids=["y", "x"]),
                    Question("q3", "?")])
    assert question_units(data) == {"q1": "x", "q2": "y", "q3": "question:q3"}


def test_format_p_two_significant_digits_never_rounded_across_alpha():
    assert [format_p(p) for p in (0.049, 0.0031, 2.1e-05, 0.034, 0.5, 1.0, 0.12)] == \
        ["0.049", "0.0031", "2.1e-05", "0.034", "0.50", "1.0", "0.12"]
    assert format_p(float("nan")) == "n/a"
    # 0.0496 at two digits is "0.050": printed beside "supported" it would read as p >= 0.05
    assert format_p(0.0496) == "0.0496" and format_p(0.04996) == "0.04996" and format_p(0.05) == "0.050"
    for p in np.random.default_rng(3).uniform(0.04, 0.06, 500):
        assert (float(format_p(p)) < 0.05) == (p < 0.05)


def test_format_ci():
    assert format_ci(0.6123, 0.48, 0.7409) == "0.612 [0.480, 0.741]"
    assert format_ci(0.5, float("nan"), float("nan")) == "0.500"
    assert format_ci(0.25, -1e-9, 0.5) == "0.250 [0.000, 0.500]"          # never "-0.000"


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
    # A scores 1 on all three: Wilson at n = 3, lower end n/(n + z^2) = 3/6.8415 = 0.4385, never [1, 1]
    assert s.loc[("A", "ctx_recall@5"), "ci_low"] == pytest.approx(3 / (3 + Z * Z), abs=1e-4)
    # ctx_recall is declared a [0, 1] fraction (metric_specs): its interval, Wilson's at a bound
    assert s.loc[("B", "ctx_recall@1"), "n_dropped"] == 1 and s.loc[("A", "ctx_recall@1"), "interval"] == "score in [0, 1]"
    assert ("A", "latency_seconds") not in s.index                   # costs are not findings
    assert summary_with_ci(TABLE, metrics=["latency_seconds"])["n"].tolist() == [1]
    ok = s.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-12) & (ok["mean"] <= ok["ci_high"] + 1e-12)).all()
    shown = formatted_summary(summary_with_ci(TABLE, metrics=["ctx_recall@1", "ctx_recall@5"]))
    assert list(shown.columns) == ["n", "A", "B"] and shown.loc["ctx_recall@1", "n"] == "2/3"
    assert shown.loc["ctx_recall@5", "A"] == "1.000 [0.439, 1.000]"     # 0.43850


def test_paired_differences_by_hand():
    d = paired_differences(TABLE, baseline="B", metrics=["ctx_recall@1", "ctx_recall@5"]).set_index("metric")
    # k=1: pairs on q1, q2 only (B's q3 unscored): A - B = [1, 0] -> mean 0.5, n 2
    assert (d.loc["ctx_recall@1", "diff"], d.loc["ctx_recall@1", "n"]) == (0.5, 2)
    # k=5: A - B = [0, 0.5, 0] -> mean 1/6
    assert d.loc["ctx_recall@5", "diff"] == pytest.approx(1 / 6) and d.loc["ctx_recall@5", "n"] == 3
    assert (d["p_holm"] >= d["p"]).all() and list(d["method"]) == ["A", "A"]
    # two and three questions: the floor (2/4, 2/8) is above 0.05 -> no verdict possible
    assert set(d["verdict"]) == {UNDECIDABLE} and set(d["family_size"]) == {2} and (d["p_floor"] > 0.2).all()
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


def test_each_paper_method_has_its_family_baseline():
    assert [family_baseline(m) for m in ("sketch", "unweaver", "raptor", "naive")] == ["naive", "naive", "naive", None]
    assert family_baseline("ssg-query-traversal") == "ssg-basic-retrieval" and family_baseline("ssg-basic-retrieval") is None
    assert family_baseline("gralc-graph") == "gralc-naive" and family_baseline("gralc-naive") is None

