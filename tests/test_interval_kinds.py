"""Intervals chosen by the metric's kind, inputs at a stated tolerance, duplicate rows refused, the
reasons beside "cannot be decided", and the estimand sentence: known answers worked out by hand."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rag_lab.evaluation.metric_specs import declared_kind
from rag_lab.evaluation.statistics import (INCONCLUSIVE, SUPPORTED, UNDECIDABLE, estimand_sentence, mean_ci,
                                           paired_difference, verdict, verdict_and_reason)
from rag_lab.evaluation.uncertainty import TEST_COLUMNS, decide, paired_differences, per_question, summary_with_ci

Z2 = 1.959963984540054 ** 2      # the normal 97.5% quantile, squared


def tidy(rows):
    return pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])


def test_kinds_are_declared_by_name_not_read_off_values():
    assert [declared_kind(m) for m in ("ctx_recall@5", "doc_mrr@10", "section_coverage_source@5",
                                       "section_coverage_source_share@5", "cs_recall@5", "latency_seconds",
                                       "faithfulness@5", "seccov[all]@20", "faithfulness_judge_sd@5")] == \
        ["unit", "unit", "count", "unit", "binary", "unbounded", "unit", "count", "unbounded"]
    assert declared_kind("my_new_metric@5") is None
    # the kind, not the values, picks the interval: a declared [0, 1] metric whose scores are all 0 or 1
    # gets the [0, 1] score interval, an undeclared one Wilson's (read off the values)
    rows = pd.DataFrame([("A", f"q{i}", m, 5, float(i % 2)) for i in range(6) for m in ("ctx_recall", "my_new_metric")],
                        columns=["method", "question_id", "metric", "k", "value"])
    assert summary_with_ci(rows).set_index("metric")["interval"].to_dict() == \
        {"ctx_recall@5": "score in [0, 1]", "my_new_metric@5": "wilson"}


def test_a_unit_mean_near_the_ceiling_by_hand():
    # the issue's `0.975 [0.923, 1.027]`: 19 ones and one 0.5 (t: 0.975 +- 2.093 * 0.025). Now: variance
    # (19 * 0.025^2 + 0.475^2) / 19 = 0.0125, phi = 0.0125 / (0.975 * 0.025) = 0.51282; the score interval
    # solves (20 + z^2 phi) mu^2 - (39 + z^2 phi) mu + 20 * 0.975^2 = 0; the band w = z^2 / (20 + z^2) = 0.16113
    # gives [0.975 * (1 - w), 0.975 + 0.025 w] = [0.81790, 0.97903]; the interval is their union
    e = mean_ci([1.0] * 19 + [0.5], kind="unit")
    phi = 0.0125 / (0.975 * 0.025)
    a, b, c = 20 + Z2 * phi, 39 + Z2 * phi, 20 * 0.975 ** 2
    high = (b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    w = Z2 / (20 + Z2)
    assert e.ci_low == pytest.approx(0.975 * (1 - w), abs=1e-6) and e.ci_high == pytest.approx(high, abs=1e-6)
    assert 0.9955 < e.ci_high < 1 and e.interval == "score in [0, 1]"


def test_a_unit_mean_in_the_middle_by_hand():
    # [0, 0.5, 1, 0.5]: mean 0.5, variance 1/6, phi = (1/6) / 0.25 = 2/3; (4 + z^2 2/3) mu^2 - (4 + z^2 2/3) mu + 1
    # = 0 -> mu = 0.5 +- sqrt(a^2 - 4a) / (2a) with a = 6.56098: [0.18761, 0.81239]; the band (w = 0.48990,
    # [0.2551, 0.7449]) lies inside it
    e = mean_ci([0.0, 0.5, 1.0, 0.5], kind="unit")
    a = 4 + Z2 * 2 / 3
    half = math.sqrt(a * a - 4 * a) / (2 * a)
    assert (e.ci_low, e.ci_high) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-6)


def test_a_constant_sample_is_never_wider_than_a_near_constant_one():
    # a constant sample gets the band alone (width w = z^2 / (n + z^2)); every other sample's interval holds
    # the band, so it is at least as wide. Checked at both ends and inside, nudged either way.
    for n in (5, 20, 50):
        w = Z2 / (n + Z2)
        for c in (0.0, 0.2, 0.5, 0.9, 1.0):
            const = mean_ci([c] * n, kind="unit")
            assert const.ci_high - const.ci_low == pytest.approx(w, abs=1e-9) and 0 <= const.ci_low <= const.ci_high <= 1
            for nudge in (-0.1, -1e-3, 1e-3, 0.1):
                if 0 <= c + nudge <= 1:
                    near = mean_ci([c] * (n - 1) + [c + nudge], kind="unit")
                    assert near.ci_high - near.ci_low >= const.ci_high - const.ci_low - 1e-12, (n, c, nudge)
    # all ones: Wilson's interval at a bound, [n / (n + z^2), 1]
    assert mean_ci([1.0] * 20, kind="unit").ci_low == pytest.approx(20 / (20 + Z2), abs=1e-9)


def test_a_clustered_constant_sample_is_never_wider_than_a_near_constant_one():
    # the case: 20 questions in 3 documents, all 1.0, gave [0.139, 1] (design effect taken as
    # n / units = 6.67) and the same with one question at 0.999999 [0.519, 1]. A sample without spread shows
    # no clustering: design effect 1, so with t(0.975; 2) = 4.3027 the lower end is 20 / (20 + 4.3027^2) = 0.5193
    t2 = 4.302652729911275 ** 2
    for kind in ("unit", "binary"):
        ones = mean_ci([1.0] * 20, units=[f"d{i % 3}" for i in range(20)], kind=kind)
        assert ones.ci_low == pytest.approx(20 / (20 + t2), abs=1e-6) and ones.ci_high == 1.0
    rng = np.random.default_rng(6)
    for docs in (3, 5, 12):
        for n in (20, 36):
            units = [f"d{i % docs}" for i in range(n)]
            for c in (0.0, 0.3, 0.9, 1.0):
                const = mean_ci([c] * n, units=units, kind="unit")
                for nudge in (1e-6, 1e-3, 0.1):
                    for where in rng.choice(n, 3, replace=False):
                        x = np.full(n, c)
                        x[where] = c - nudge if c + nudge > 1 else c + nudge
                        near = mean_ci(x, units=units, kind="unit")
                        assert near.ci_high - near.ci_low >= const.ci_high - const.ci_low - 1e-12, (docs, n, c, nudge)


def test_clustered_counts_and_paired_differences_have_no_jump_at_no_spread():
    # counts in 6 documents: a constant sample's interval is never wider than the same with one count moved
    units = [f"d{i % 6}" for i in range(20)]
    for c in (0.0, 0.5, 2.0):
        const = mean_ci([c] * 20, units=units, kind="count")
        near = mean_ci([c] * 19 + [c + 1e-3], units=units, kind="count")
        assert near.ci_high - near.ci_low >= const.ci_high - const.ci_low - 1e-12, c
    # paired, 20 questions in 3 and in 6 documents: a constant difference and the same with one question moved
    # by 0.001 give intervals, p and MDE within 0.001 of each other (the mean moves by 0.001 / 20), and the same
    # verdict: the bounded-mean test has no case for "no spread". (The old procedure: p 0.655, then 4e-33.)
    for docs in (3, 6):
        units = [f"d{i % docs}" for i in range(20)]
        for shift in (0.0, 0.01, 0.3):
            flat = paired_difference([0.5 + shift] * 20, [0.5] * 20, units=units, kind="unit")
            moved = paired_difference([0.5 + shift] * 19 + [0.501 + shift], [0.5] * 20, units=units, kind="unit")
            for name in ("ci_low", "ci_high", "p"):
                assert getattr(moved, name) == pytest.approx(getattr(flat, name), abs=1e-3), (docs, shift, name)
            assert moved.verdict() == flat.verdict()
            assert (math.isnan(flat.mde) and math.isnan(moved.mde)) if docs == 3 else \
                moved.mde == pytest.approx(flat.mde, abs=1e-3)          # 3 documents cannot decide: no MDE
    # the tidy-table path, with the dataset's units: 20 questions in 3 documents all 1.0 and one at 0.999999
    # get one interval, [20 / (20 + t(0.975; 2)^2), 1] = [0.519, 1]
    rows = [("A", f"q{i}", "doc_mrr", 5, 1.0) for i in range(20)] + \
        [("B", f"q{i}", "doc_mrr", 5, 0.999999 if i == 0 else 1.0) for i in range(20)]
    summary = summary_with_ci(tidy(rows), units={f"q{i}": f"d{i % 3}" for i in range(20)}).set_index("method")
    assert summary.loc["A", "ci_low"] == pytest.approx(0.5193, abs=1e-4)
    assert summary.loc["B", "ci_low"] == pytest.approx(summary.loc["A", "ci_low"], abs=1e-5)
    assert (summary["units"] == 3).all()


def test_unit_and_count_intervals_stay_in_range():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        x = rng.choice([0, 0.25, 0.5, 1.0], size=n, p=[0.05, 0.05, 0.1, 0.8])
        e = mean_ci(x, kind="unit", units=[f"d{i % 5}" for i in range(n)] if n > 5 else None)
        assert math.isnan(e.ci_low) or 0 <= e.ci_low <= e.mean <= e.ci_high <= 1
        counts = rng.poisson(0.2, n).astype(float)
        c = mean_ci(counts, kind="count")
        assert c.ci_low >= 0 and c.ci_low <= c.mean <= c.ci_high
    # ten zeros: the band alone, a share z^2 / (n + z^2) = 0.2775 scoring one more than the largest seen (1);
    # Poisson's bound z^2 / n = 0.384 was wider than ten zeros with one count at 0.001 get (the band)
    zeros = mean_ci([0.0] * 10, kind="count")
    assert (zeros.ci_low, zeros.ci_high) == pytest.approx((0.0, Z2 / (10 + Z2)), abs=1e-6)


def test_kind_range_is_checked():
    with pytest.raises(ValueError, match=r"unit scores must lie in \[0, 1\]"):
        mean_ci([0.2, 1.5], kind="unit")
    with pytest.raises(ValueError, match="binary scores must be 0 or 1"):
        mean_ci([0.0, 0.5], kind="binary")
    with pytest.raises(ValueError, match="counts must be >= 0"):
        mean_ci([1.0, -2.0], kind="count")
    with pytest.raises(ValueError, match="kind must be one of"):
        mean_ci([1.0, 0.0], kind="fraction")
    # noise at the ends is not out of range: 1 + 2e-16 is 1
    assert mean_ci([1.0 + 2e-16, 0.0], kind="binary").interval == "wilson"


def test_differences_of_unit_scores_stay_inside_minus_one_one_on_every_path():
    rng = np.random.default_rng(2)
    for trial in range(150):
        n = int(rng.integers(2, 30))
        a = rng.choice([0.0, 0.5, 1.0], size=n) if trial % 3 else rng.random(n)
        b = rng.choice([0.0, 1.0], size=n) if trial % 2 else np.clip(a - rng.choice([0, 0.9], n), 0, 1)
        units = [f"d{i % 3}" for i in range(n)] if trial % 5 == 0 else None      # few units: sign-flip union
        d = paired_difference(a, b, units=units, kind="unit")
        assert math.isnan(d.ci_low) or -1 <= d.ci_low <= d.ci_high <= 1, (trial, d)
    # no spread (every question +0.9) and the whole range (three questions): still inside
    assert paired_difference([1.0] * 8, [0.1] * 8, kind="unit").ci_high <= 1
    # three questions all +1: P(D_low <= delta) = ((1 + delta) / 2)^3 >= 0.025 from delta = 2 * 0.025^(1/3) - 1
    assert paired_difference([1, 1, 1], [0, 0, 0], kind="binary").ci_low == pytest.approx(2 * 0.025 ** (1 / 3) - 1,
                                                                                          abs=0.01)


def test_floating_point_noise_is_no_difference():
    # 20 pairs that differ by at most 5.6e-17 (0.1 + 0.2 against 0.3): no difference, p = 1, never supported
    a = [0.1 + 0.2] * 10 + [0.7] * 10
    b = [0.3] * 10 + [0.7] * 10
    d = paired_difference(a, b)
    assert d.diff == 0.0 and d.p == 1.0 and d.verdict() == INCONCLUSIVE and d.ci_low < 0 < d.ci_high
    assert d.interval == "bounded mean, unseen unit"      # every difference 0: the test, not a special case
    same = mean_ci([0.3] * 10 + [0.1 + 0.2] * 10, kind="unit")        # a constant sample, not a spread of 1e-17
    assert same.ci_high - same.ci_low == pytest.approx(Z2 / (20 + Z2), abs=1e-9)
    assert mean_ci([0.3] * 10 + [0.1 + 0.2] * 10 + [5.0], kind="unbounded").interval == "t"


def test_duplicate_question_rows_are_refused_with_the_ids():
    rows = [("A", f"q{i}", "ctx_recall", 5, 1.0) for i in range(4)] + [("B", f"q{i}", "ctx_recall", 5, 0.0)
                                                                      for i in range(4)]
    dup = tidy(rows + [("A", "q2", "ctx_recall", 5, 0.0)])
    for call in (lambda: summary_with_ci(dup), lambda: per_question(dup, "ctx_recall@5"),
                 lambda: paired_differences(dup, baseline="B")):
        with pytest.raises(ValueError, match=r"A ctx_recall@5: q2"):
            call()
    assert summary_with_ci(tidy(rows))["n"].tolist() == [4, 4]      # one row each: accepted


def test_one_word_cannot_be_decided_with_its_reason():
    assert UNDECIDABLE == "cannot be decided"
    assert verdict_and_reason(0.5, 0.25, p_floor=0.25, n=3, units=3) == \
        (UNDECIDABLE, "3 questions: no test at 0.05 is possible")
    assert verdict_and_reason(0.5, 0.25, p_floor=0.25, n=20, units=3)[1] == "3 documents: no test at 0.05 is possible"
    # its own floor allows a decision (8 documents: 2/256), the family's Holm floor does not (60 * 2/256)
    assert verdict_and_reason(0.08, 0.96, p_floor=0.46875, n=40, units=8, family_size=60, own_floor=2 / 256) == \
        (UNDECIDABLE, "a family of 60 over 8 documents: Holm's smallest p is 0.47")
    assert verdict_and_reason(-0.01, 0.3, threshold=-0.05, mde=0.29) == (UNDECIDABLE, "MDE 0.29 above the margin 0.05")
    assert verdict_and_reason(float("nan"), float("nan"), no_test="no question scored by both") == \
        (UNDECIDABLE, "no question scored by both")
    assert verdict_and_reason(0.1, 0.01) == (SUPPORTED, "") and verdict_and_reason(0.1, 0.2) == (INCONCLUSIVE, "")
    assert verdict(0.1, 0.01, p_floor=0.0625) == UNDECIDABLE                  # the word alone, as before


def test_decide_gives_reasons_and_labels_intervals_unadjusted_in_a_family():
    assert TEST_COLUMNS[TEST_COLUMNS.index("verdict") + 1] == "reason"
    rng = np.random.default_rng(4)
    rows = [paired_difference(rng.normal(0.3, 0.3, 30), rng.normal(0, 0.3, 30)).as_dict() for _ in range(3)]
    rows.append(paired_difference([1.0], [0.0]).as_dict())                  # one question: no test
    out = decide(pd.DataFrame(rows), "three methods")
    assert out["family_size"].tolist() == [3] * 4
    assert out["interval"].iloc[:3].str.endswith(", unadjusted").all() and out["interval"].iloc[3] == "none: one question"
    assert out["reason"].iloc[3] == "one question" and out["verdict"].iloc[3] == UNDECIDABLE
    assert (out["reason"].iloc[:3] == "").all()
    one = decide(pd.DataFrame(rows[:1]), "one comparison")                 # a family of one: its own interval
    assert not one["interval"].iloc[0].endswith("unadjusted")


def test_estimand_sentence():
    assert estimand_sentence(59, 12) == ("Every interval below is a 95% interval for the mean over questions like "
                                         "these, with the 12 documents as the sampled units (n = 59 questions).")
    assert estimand_sentence(20, 20).endswith("with each question its own sampled unit (n = 20 questions).")
    with pytest.raises(ValueError, match="units"):
        estimand_sentence(5, 9)
