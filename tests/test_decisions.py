"""The verdict words every paper folder says (evaluation/decisions.py): the side, the relation before
the other method's name, and one difference's standing, each worked by hand."""
import math

import pytest

from rag_lab.evaluation.decisions import copula, relation, row_verdict, side, standing
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
    assert standing(diff(0.1, math.nan, math.nan, n=1), "a", "b") == f"+0.100, n = 1: {UNDECIDABLE}"
    # the verdict decide gave, with its reason, is what is said
    given = {**diff(0.3, 0.1, 0.5, p_holm=0.3), "verdict": UNDECIDABLE, "reason": "3 documents"}
    assert standing(given, "a", "b").endswith(f": {UNDECIDABLE} (3 documents)")
    assert standing(diff(0.001, -0.0002, 0.004), "a", "b").startswith("+0.001 [+0.000, +0.004]")   # no "-0.000"
    # every question's difference 0: said as such, not "cannot decide"
    assert standing(diff(0.0, 0.0, 0.0, n=10, p_holm=1.0), "a", "b") == \
        "+0.000 [+0.000, +0.000], n = 10, Holm p = 1.0: the same on every question"


def test_copula_is_is_except_before_cannot_be_decided():
    assert copula("inconclusive") + "inconclusive" == "is inconclusive"
    assert copula("supported") == "is " and copula("cannot be decided") == ""
