"""Seeded simulations that hold each interval procedure's coverage and the null false-decision rate
of ``paired_difference`` + its verdict (``evaluation.coverage``: the package's own functions on data
whose truth is known). docs/statistics.md has the full table (2,000 data sets per cell); here 1,000 per
cell keep the file to seconds, and a 93-97% band is about +-3 standard errors of a 95% share."""
import pytest

from rag_lab.evaluation.coverage import coverage

COVERED = [  # scenario, n: the 95% interval must hold the truth 93-97% of the time
    ("mean, 0/1 scores (p = 0.3)", 50),
    ("mean, [0, 1] near the ceiling (85% ones)", 20),
    ("mean, [0, 1] near the ceiling (85% ones)", 50),
    ("mean, [0, 1] MRR-like near the ceiling", 20),
    ("mean, [0, 1] mid (0.6)", 20),
    ("mean, [0, 1] clustered mid (12 documents, ICC 0.3)", 20),
    ("mean, counts (0-5, mean 1.5)", 50),
    ("mean, normal scores", 20),
    ("paired, normal differences (+0.1)", 20),
    ("paired, 0/1 (win 20%, loss 10%)", 20),
]
NULLS = ["null, normal differences", "null, 0/1 (win 10%, loss 10%)", "null, [0, 1] clustered (15 documents, ICC 0.3)"]


@pytest.mark.parametrize("name,n", COVERED)
def test_coverage_within_the_band_and_never_outside_the_range(name, n):
    result = coverage(name, n, draws=1000, seed=0)
    assert 0.93 <= result["covered"] <= 0.97, result
    assert result["outside"] == 0.0, result


def test_clustered_near_the_ceiling_is_conservative_not_short():
    # 12 documents at intra-document correlation 0.3 around 0.93: the score interval with the design effect
    # covers about 98% (docs/statistics.md); the t interval it replaces covered 85-90%
    result = coverage("mean, [0, 1] clustered near the ceiling (12 documents, ICC 0.3)", 20, draws=1000, seed=0)
    assert 0.93 <= result["covered"] <= 0.99 and result["outside"] == 0.0, result


@pytest.mark.parametrize("name", NULLS)
def test_false_decisions_under_a_true_null_are_about_five_percent(name):
    result = coverage(name, 20, draws=1000, seed=0)
    assert 0.02 <= result["decided"] <= 0.08, result


def test_the_chosen_candidate_is_the_shipped_interval():
    # the docs' candidates table computes the chosen interval vectorised; it must be mean_ci's, alone and clustered
    import numpy as np

    from rag_lab.evaluation.coverage import unit_candidates
    from rag_lab.evaluation.statistics import mean_ci

    rng = np.random.default_rng(1)
    x = rng.choice([0.0, 0.5, 0.8, 1.0], size=(30, 24), p=[0.1, 0.1, 0.2, 0.6])
    x[0] = 1.0                                                        # a constant sample among them
    units = np.array([f"d{i % 8}" for i in range(24)])
    for labels in (None, units):
        low, high = unit_candidates(x, labels)["quasi-binomial score + band (chosen)"]
        for row, lo, hi in zip(x, low, high):
            e = mean_ci(row, kind="unit", units=labels)
            assert (e.ci_low, e.ci_high) == pytest.approx((lo, hi), abs=1e-9)
