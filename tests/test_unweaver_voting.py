"""Approval, PAV and Chamberlin-Courant elections whose winners were computed by hand."""
from __future__ import annotations

import pytest

from rag_lab.methods.unweaver.voting import elect

A, B, C, D, E = range(5)
# 6 voters approve {a, b, c}, 3 approve {d}, 1 approves {e}; committee of 3.
BALLOTS = [[A, B, C]] * 6 + [[D]] * 3 + [[E]]


@pytest.mark.parametrize("exact", [True, False])
def test_three_rules_elect_different_committees(exact):
    # Approval: scores a=b=c=6, d=3, e=1 -> {a, b, c}, each adds 6.
    av = elect(BALLOTS, 5, 3, "approval", exact)
    assert av.winners == [A, B, C] and av.gains == [6, 6, 6]
    # PAV: {a,b,c} = 6*(1 + 1/2 + 1/3) = 11; {a,b,d} = 6*(1 + 1/2) + 3 = 12; {a,d,e} = 6 + 3 + 1 = 10.
    # {a,b,d}, {a,c,d}, {b,c,d} tie at 12: ties go to smaller indices -> {a,b,d}. Ranked: a (+6),
    # then b and d both add 3 -> b (smaller index), then d (+3).
    pav = elect(BALLOTS, 5, 3, "pav", exact)
    assert pav.winners == [A, B, D] and pav.gains == [6, 3, 3]
    # CC: {a,d,e} covers all 10 voters; anything else at most 9. Ranked a (+6), d (+3), e (+1).
    cc = elect(BALLOTS, 5, 3, "cc", exact)
    assert cc.winners == [A, D, E] and cc.gains == [6, 3, 1]
    assert (pav.abc_rule_id, cc.abc_rule_id) == (("pav", "cc") if exact else ("seqpav", "seqcc"))


def test_sequential_pav_can_miss_the_optimum():
    ballots = [[1, 2], [3], [3, 0], [1, 0]]
    # approvals: 0, 1, 3 have two each. Greedy: 0 first (tie -> smallest), then 1 and 3 both add
    # 1 + 1/2 -> 1; {0,1} scores 1 + 0 + 1 + 1.5 = 3.5. Exact: {1,3} scores 1 + 1 + 1 + 1 = 4.
    assert sorted(elect(ballots, 4, 2, "pav", exact=False).winners) == [0, 1]
    assert sorted(elect(ballots, 4, 2, "pav", exact=True).winners) == [1, 3]


def test_voter_weights_and_committee_larger_than_candidates():
    # one vote each: 0 and 1 tie -> 0; weighted 0.2 vs 0.9 -> 1
    assert elect([[0], [1]], 2, 1, "approval", True).winners == [0]
    assert elect([[0], [1]], 2, 1, "approval", True, weights=[0.2, 0.9]).winners == [1]
    # k larger than the number of candidates: everyone is elected, ranked by approvals
    assert elect([[1], [1], [0]], 2, 5, "approval", True).winners == [1, 0]


def test_bad_elections_are_refused():
    with pytest.raises(ValueError, match="unknown voting rule"):
        elect([[0]], 1, 1, "borda", True)
    with pytest.raises(ValueError, match="committee size"):
        elect([[0]], 1, 0, "pav", True)
    with pytest.raises(ValueError, match="candidates are 0..1"):
        elect([[2]], 2, 1, "pav", True)
    with pytest.raises(ValueError, match="weights must be positive"):
        elect([[0]], 1, 1, "pav", True, weights=[0.0])
    with pytest.raises(ValueError, match="1 voter weights for 2 ballots"):
        elect([[0], [0]], 1, 1, "pav", True, weights=[1.0])
