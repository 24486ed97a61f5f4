"""Approval, PAV and Chamberlin-Courant elections whose winners were computed by hand."""
from __future__ import annotations

import random

import pytest

from rag_lab.methods.unweaver.voting import EXACT_ALGORITHM, _profile, elect, optimal_committee

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


def test_exact_search_breaks_ties_to_the_lexicographically_first_committee():
    # 0 and 1 approve {1, 2}, 2 approves {0}, 3 approves {3}; committee of 2. PAV: {1,2} = 1.5 + 1.5 = 3,
    # {0,1} = {0,2} = {1,3} = {2,3} = 3, {0,3} = 2: five tie at 3, the first is {0,1}. CC covers at most 3
    # voters: {0,1}, {0,2}, {1,3}, {2,3}; again {0,1}. Ranked: 1 (+2), then 0 (+1). 1 and 2 share a ballot.
    ballots = [[1, 2], [1, 2], [0], [3]]
    for rule in ("pav", "cc"):
        assert optimal_committee(ballots, 4, 2, rule) == [0, 1]
        result = elect(ballots, 4, 2, rule, exact=True)
        assert (result.winners, result.gains, result.algorithm) == ([1, 0], [2, 1], "branch-and-bound")
    # one voter, CC: every committee holding 2 covers it; the first of size 3 is {0, 1, 2}; ranked 2 (+1), 0, 1
    assert optimal_committee([[2]], 4, 3, "cc") == [0, 1, 2]
    assert elect([[2]], 4, 3, "cc", exact=True).winners == [2, 0, 1]
    # PAV where the optimum needs two of the same ballot: 3 approve {0, 1}, 1 approves {2}; size 2:
    # {0,1} = 3 * 1.5 = 4.5 beats {0,2} = 3 + 1 = 4
    assert optimal_committee([[0, 1]] * 3 + [[2]], 3, 2, "pav") == [0, 1]
    with pytest.raises(ValueError, match="non-empty ballot"):
        elect([[], []], 2, 1, "pav", exact=True)


def test_a_search_past_its_budget_gives_way_to_the_solver(monkeypatch):
    from rag_lab.methods.unweaver import voting

    ballots = [[1, 2], [1, 2], [0], [3]]                 # the ties of the test above: {0, 1}, ranked 1, 0
    assert optimal_committee(ballots, 4, 2, "pav", max_nodes=2) is None
    monkeypatch.setattr(voting, "SEARCH_NODES", 2)
    result = elect(ballots, 4, 2, "pav", exact=True)
    assert (result.winners, result.gains, result.algorithm) == ([1, 0], [2, 1], EXACT_ALGORITHM)


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_search_agrees_with_the_integer_program(seed):
    """The committee ``elect`` finds without the solver is abcvoting's HiGHS optimum with lexicographic
    tie-breaking, on seeded random elections (many of them tied)."""
    from abcvoting import abcrules

    rng = random.Random(seed)
    for _ in range(40):
        n, voters, k = rng.randint(1, 16), rng.randint(1, 12), rng.randint(1, 8)
        p = rng.choice([0.15, 0.3, 0.6])
        ballots = [[c for c in range(n) if rng.random() < p] for _ in range(voters)]
        if not any(ballots):
            ballots[0] = [rng.randrange(n)]
        rule, size = rng.choice(["pav", "cc"]), min(k, n)
        solved = abcrules.compute(rule, _profile(ballots, n, None), size, algorithm=EXACT_ALGORITHM, resolute=True,
                                  lexicographic_tiebreaking=True)[0]
        assert optimal_committee(ballots, n, size, rule) == sorted(solved), (rule, n, size, ballots)
