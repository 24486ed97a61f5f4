"""The verdict words every paper folder says (evaluation/decisions.py): the side, the relation before
the other method's name and the verb before a verdict word, each worked by hand."""
import pytest

from rag_lab.evaluation.decisions import copula, relation, side
from rag_lab.evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE


def test_side_and_relation_say_each_verdict():
    assert [side(v) for v in (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE)] == \
        ["ahead", "behind", INCONCLUSIVE, UNDECIDABLE]
    assert side(SUPPORTED, "above", "below") == "above" and side(CONTRADICTED, "above", "below") == "below"
    assert [relation(v) for v in (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE)] == \
        ["ahead of", "behind", f"{INCONCLUSIVE} against", f"{UNDECIDABLE} against"]
    with pytest.raises(ValueError, match="verdict must be one of"):
        side("better")


def test_copula_is_is_except_before_cannot_be_decided():
    assert copula("inconclusive") + "inconclusive" == "is inconclusive"
    assert copula("supported") == "is " and copula("cannot be decided") == ""

