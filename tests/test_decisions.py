"""The verdict words every paper folder says (evaluation/decisions.py): the side, the relation before
the other method's name, one difference's standing, a ranking's leader and order, and how many of a
paper's numbers our intervals hold, each worked by hand."""
import math

import pandas as pd
import pytest

from rag_lab.core.plots import IN_CI
from rag_lab.evaluation.decisions import (copula, inside_counts, leader, order_said, pair, relation, row_verdict, side,
                                          standing)
from rag_lab.evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE, format_p


def diff(d, lo, hi, n=59, p_holm=math.nan):
    """A hand-made row; without a Holm p its verdict is given (as ``decide`` would have written it)."""
    row = {"diff": d, "ci_low": lo, "ci_high": hi, "n": n, "p_holm": p_holm}
    if math.isnan(p_holm) and not math.isnan(lo):
        row["verdict"] = SUPPORTED if lo > 0 else CONTRADICTED if hi < 0 else INCONCLUSIVE
    return row


def test_side_and_relation_say_each_verdict():
    assert [side(v) for v in (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE)] == \
        ["ahead", "behind", INCONCLUSIVE, UNDECIDABLE]
    assert side(SUPPORTED, "above", "below") == "above" and side(CONTRADICTED, "above", "below") == "below"
    assert [relation(v) for v in (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE)] == \
        ["ahead of", "behind", f"{INCONCLUSIVE} against", f"{UNDECIDABLE} against"]
    with pytest.raises(ValueError, match="verdict must be one of"):
        side("better")


def test_row_verdict_reads_the_given_word_else_the_p():
    assert row_verdict({"verdict": UNDECIDABLE, "diff": 0.5, "p": 0.001}) == UNDECIDABLE
    assert row_verdict({"diff": 0.5, "p": 0.001}) == SUPPORTED
    assert row_verdict({"diff": -0.5, "p": 0.2, "p_holm": 0.01}) == CONTRADICTED    # the Holm p decides
    assert row_verdict({"diff": 0.5, "p": 0.001, "p_floor": 0.06}) == UNDECIDABLE  # no p below 0.05 attainable
    assert row_verdict({"diff": 0.5}) == UNDECIDABLE


def test_standing_reads_the_interval_not_a_threshold():
    assert standing(diff(0.057, -0.026, 0.142, p_holm=1.0), "ahead", "behind") == \
        f"+0.057 [-0.026, +0.142], n = 59, Holm p = 1.0: {INCONCLUSIVE}"
    assert standing(diff(0.05, 0.01, 0.09, p_holm=0.001), "ahead", "behind") == \
        f"+0.050 [+0.010, +0.090], n = 59, Holm p = {format_p(0.001)}: ahead"
    assert standing(diff(-0.3, -0.4, -0.2, p_holm=0.02), "ahead", "behind").endswith(": behind")
    # the verdict reads the test's (Holm) p: p 0.2 decides nothing, whatever an interval beside it says
    assert standing(diff(0.05, 0.01, 0.09, p_holm=0.2), "ahead", "behind").endswith(f": {INCONCLUSIVE}")
    # no test at all (one question): no p, and an interval alone would decide nothing either
    assert standing(diff(0.1, math.nan, math.nan, n=1), "a", "b") == f"n = 1: {UNDECIDABLE}"
    # the verdict decide gave, with its reason, is what is said, and no interval or p beside it
    given = {**diff(0.3, 0.1, 0.5, p_holm=0.3), "verdict": UNDECIDABLE, "reason": "3 documents"}
    assert standing(given, "a", "b") == f"n = 59: {UNDECIDABLE} (3 documents)"
    assert standing(diff(0.001, -0.0002, 0.004), "a", "b").startswith("+0.001 [+0.000, +0.004]")   # no "-0.000"
    # every question's difference 0: said as such, not "cannot decide"
    assert standing(diff(0.0, 0.0, 0.0, n=10, p_holm=1.0), "a", "b") == \
        "+0.000 [+0.000, +0.000], n = 10, Holm p = 1.0: the same on every question"


def test_copula_is_is_except_before_cannot_be_decided():
    assert copula("inconclusive") + "inconclusive" == "is inconclusive"
    assert copula("supported") == "is " and copula("cannot be decided") == ""


def series(values, names=("Naive", "Semantic", "Late Chunking")):
    return pd.Series(values, index=list(names)[:len(values)], dtype=float)


def order_table(*rows):
    """A pairwise table (uncertainty.pairwise_differences) from (method, below, diff, lo, hi, p_holm) rows; each
    verdict as ``decide`` gives it at Holm p < 0.05."""
    return pd.DataFrame([{"method": a, "below": b, "diff": d, "n": 59, "ci_low": lo, "ci_high": hi, "p_holm": p,
                          "mde": math.nan, "verdict": (SUPPORTED if d > 0 else CONTRADICTED) if p < 0.05 else INCONCLUSIVE}
                         for a, b, d, lo, hi, p in rows])


def test_pair_turns_a_row_round():
    order = order_table(("A", "B", 0.1, 0.02, 0.2, 0.01))
    assert pair(order, "A", "B")["ci_low"] == 0.02 and pair(order, "A", "B")["verdict"] == SUPPORTED
    back = pair(order, "B", "A")           # B − A = −0.1 [−0.2, −0.02], and the verdict turned round with it
    assert (back["diff"], back["ci_low"], back["ci_high"], back["verdict"]) == (-0.1, -0.2, -0.02, CONTRADICTED)
    assert pair(order, "A", "C") is None


def test_leader_says_when_the_questions_cannot_decide():
    ours = series([0.773, 0.764, 0.821])          # Late Chunking best, then Naive, then Semantic
    order = order_table(("Late Chunking", "Naive", 0.048, -0.002, 0.111, 1.0),
                        ("Late Chunking", "Semantic", 0.057, -0.026, 0.142, 1.0),
                        ("Naive", "Semantic", 0.009, -0.06, 0.08, 1.0))
    s = leader("T", ours, order, "MRR", series([0.979, 0.980, 0.977]))
    assert s.startswith("T: the best MRR is Late Chunking (0.821), then Naive (0.773); Late Chunking minus Naive is "
                        f"+0.048 [-0.002, +0.111], n = 59, Holm p = 1.0: {INCONCLUSIVE}")
    # the paper's best (Semantic) is 0.057 behind ours, but Holm p = 1: not called "behind"
    assert ("paper-reported: Semantic best (0.980); here Semantic (0.764) is behind our best by +0.057 [-0.026, "
            f"+0.142], n = 59, Holm p = 1.0: {INCONCLUSIVE}.") in s


def test_leader_clear_lead_tie_and_single():
    order = order_table(("Naive", "Semantic", 0.2, 0.1, 0.3, 0.01))
    assert "Naive minus Semantic is +0.200 [+0.100, +0.300], n = 59, Holm p = 0.010: a clear lead" in \
        leader("T", series([0.8, 0.6]), order, "MRR")
    same = leader("T", series([0.8, 0.6]), order, "MRR", series([0.9, 0.1]))
    assert same.endswith("paper-reported: Naive best (0.900), the same strategy as ours.")
    runner = leader("T", series([0.8, 0.6]), order, "MRR", series([0.1, 0.9]))
    assert runner.endswith("paper-reported: Semantic best (0.900), our runner-up (above).")
    tie = leader("T", series([0.9, 0.9, 0.5]), order, "MRR", series([0.1, 0.95]))
    assert tie == ("T: the best MRR, 0.900, is shared by Naive, Semantic (a tie: no winner); paper-reported: "
                   "Semantic best (0.950), one of our best.")
    assert leader("T", series([math.nan]), order, "MRR") is None
    assert "only Naive has a MRR (0.500), so there is no ranking" in leader("T", series([0.5]), order, "MRR")


def test_order_said_counts_the_pairs_told_apart_and_the_papers_reversals():
    # ours: A > B > C; A − B decided (Holm p 0.01), the other two not. The paper ranks C above A and B above A:
    # it reverses A > C (undecided here) and A > B (decided here: a contradiction, quoted with its interval)
    order = order_table(("A", "B", 0.2, 0.1, 0.3, 0.01), ("A", "C", 0.1, -0.05, 0.25, 0.4),
                        ("B", "C", 0.05, -0.1, 0.2, 0.6))
    said = order_said(order, "T", "MRR", pd.Series({"A": 0.5, "B": 0.6, "C": 0.7}))
    assert said == ("T: our MRR order is A > B > C (n = 59 questions); 1 of its 3 pairs are told apart (Holm-adjusted "
                    "p < 0.05 across the pairs). The paper-reported order reverses 3 of these pairs; 1 of them are "
                    "decided here (A > B by 0.200 [0.100, 0.300]).")
    agree = order_said(order, "T", "MRR", pd.Series({"A": 0.7, "B": 0.6, "C": 0.5}))
    assert agree.endswith("across the pairs).")                 # the same order: no reversal to speak of
    undecided = order_said(order.iloc[1:], "T", "MRR", pd.Series({"A": 0.5, "B": 0.6, "C": 0.7}))
    assert undecided.endswith("none is decided here, so the two orders do not contradict each other.")
    assert order_said(order.iloc[:0], "T", "MRR", pd.Series(dtype=float)) == ""


def test_inside_counts_reads_the_yes_and_no_of_each_metric():
    side_table = pd.DataFrame({("MRR", "ours"): [0.9, 0.8, 0.7], ("MRR", IN_CI): ["yes", "no", "yes"],
                               ("R@1", IN_CI): ["no", "", "no"], ("R@3", IN_CI): ["", "", ""]})
    # MRR: 2 of 3 inside; R@1: 0 of the 2 that could be said; R@3: none could be said, left out
    assert inside_counts(side_table) == "MRR 2/3, R@1 0/2"
    assert inside_counts(side_table[[("MRR", "ours")]]) == ""
