"""UnWeaver's election: the top classes approve the chunks they occur in; k chunks are elected.

Rules (the paper names Approval, Proportional Approval and Chamberlin-Courant), computed with the
maintained ``abcvoting`` library (Lackner & Skowron's reference implementation):

- ``approval``: Approval Voting, the k chunks with the most approvals (abcvoting rule "av"; AV is
  separable, so its greedy and exact forms coincide).
- ``pav``: Proportional Approval Voting, maximise sum over voters of 1 + 1/2 + ... + 1/|approved
  chunks elected|. ``exact=True``: the optimum, rule "pav" (abcvoting solves it as an integer
  program by HiGHS through PuLP, "pulp-highs"); ``exact=False``: the greedy sequential variant "seqpav".
- ``cc``: Chamberlin-Courant, maximise the number of voters with at least one approved chunk
  elected; ``exact=True``: rule "cc" with "pulp-highs"; ``exact=False``: "seqcc".

With one vote each (UnWeaver's default) the exact rules do not call the solver: ``optimal_committee``
finds the same committee by a depth-first search in integer arithmetic, about 1 ms on UnWeaver's
elections where the integer program took 30 ms (its model is rebuilt in PuLP for every solve, and the
lexicographic tie-break solves it again for every ten candidates). Weighted votes (float scores) still
go to the solver, and so does an election the search cannot settle within ``SEARCH_NODES`` branches
(many near-equal committees: the bound is loose, and branch and bound can take exponential time).
Ties are broken deterministically, always towards the candidate with the *smaller index*:
abcvoting's sequential rules and AV do this by construction, and the exact rules are called with
``lexicographic_tiebreaking=True``, which returns the lexicographically first optimal committee
(``optimal_committee`` returns that one too). The caller therefore numbers candidates in its order of
preference (UnWeaver: most query similarity among the approving classes first, then document order).

The elected committee is returned ranked: greedily by marginal score of the rule's Thiele function
within the committee (for the sequential rules this is exactly the order of election), ties again
to the smaller index; each winner carries that marginal gain as its score.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...core import ties

RULES = ("approval", "pav", "cc")
_SCORE_FCT = {"approval": "av", "pav": "pav", "cc": "cc"}
_EXACT_ID = {"approval": "av", "pav": "pav", "cc": "cc"}
_SEQUENTIAL_ID = {"approval": "av", "pav": "seqpav", "cc": "seqcc"}
EXACT_ALGORITHM = "pulp-highs"     # weighted votes
EXACT_SEARCH = "branch-and-bound"   # one vote each: ``optimal_committee``
SEARCH_NODES = 5_000   # branches before the search gives way to the solver (UnWeaver on fenwold: at most 1,399)


@dataclass(frozen=True)
class Election:
    """Winners (candidate indices, ranked), their marginal gains, and how they were computed."""

    winners: list[int]
    gains: list[float]
    rule: str
    abc_rule_id: str
    algorithm: str


def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ValueError(f"unknown voting rule {rule!r}; expected one of {', '.join(RULES)}")
    return rule


def _profile(ballots: Sequence[Sequence[int]], num_cand: int, weights: Sequence[float] | None):
    from abcvoting.preferences import Profile, Voter

    if weights is not None and len(weights) != len(ballots):
        raise ValueError(f"got {len(weights)} voter weights for {len(ballots)} ballots")
    profile = Profile(num_cand)
    for v, ballot in enumerate(ballots):
        approved = sorted(set(int(c) for c in ballot))
        if approved and (approved[0] < 0 or approved[-1] >= num_cand):
            raise ValueError(f"ballot {v} approves {approved}, but candidates are 0..{num_cand - 1}")
        if not approved:
            continue                                   # an empty ballot changes no score
        weight = 1 if weights is None else float(weights[v])
        if weight <= 0:
            raise ValueError(f"voter weights must be positive, voter {v} has {weight}")
        profile.add_voter(Voter(approved, weight=weight))
    return profile


def rank_committee(profile, committee: Sequence[int], rule: str) -> tuple[list[int], list[float]]:
    """Committee members ordered greedily by marginal Thiele score (ties to the smaller index)."""
    from abcvoting import scores

    marginal = scores.get_marginal_scorefct(_SCORE_FCT[rule], len(committee))
    remaining, ranked, gains = sorted(committee), [], []
    while remaining:
        added = scores.marginal_thiele_scores_add(marginal, profile, ranked)
        best = remaining[ties.best([added[c] for c in remaining], what="committee order")]
        ranked.append(best)
        gains.append(float(added[best]))
        remaining.remove(best)
    return ranked, gains


def elect(ballots: Sequence[Sequence[int]], num_cand: int, k: int, rule: str, exact: bool,
          weights: Sequence[float] | None = None) -> Election:
    """Elect ``min(k, num_cand)`` of candidates ``0..num_cand-1`` from approval ballots (one per voter).

    ``weights``: optional positive weight per voter (default: one vote each)."""
    from abcvoting import abcrules

    check_rule(rule)
    if k <= 0:
        raise ValueError(f"committee size k must be positive, got {k}")
    if num_cand <= 0:
        raise ValueError(f"an election needs at least one candidate, got num_cand={num_cand}")
    profile = _profile(ballots, num_cand, weights)
    size = min(k, num_cand)
    committee = None
    if exact and rule != "approval" and weights is None:
        if not len(profile):
            raise ValueError("an election needs at least one non-empty ballot")
        rule_id, algorithm = _EXACT_ID[rule], EXACT_SEARCH
        committee = optimal_committee([sorted(v.approved) for v in profile], num_cand, size, rule)
    if committee is None and exact and rule != "approval":      # weighted, or a search past its budget
        rule_id, algorithm = _EXACT_ID[rule], EXACT_ALGORITHM
        committee = abcrules.compute(rule_id, profile, size, algorithm=algorithm, resolute=True,
                                     lexicographic_tiebreaking=True)[0]
    elif committee is None:
        rule_id, algorithm = _SEQUENTIAL_ID[rule], "standard"
        committee = abcrules.compute(rule_id, profile, size, algorithm=algorithm, resolute=True)[0]
    winners, gains = rank_committee(profile, sorted(committee), rule)
    return Election(winners, gains, rule, rule_id, algorithm)


def optimal_committee(ballots: Sequence[Sequence[int]], num_cand: int, size: int, rule: str,
                      max_nodes: int | None = None) -> list[int] | None:
    """The lexicographically first committee of ``size`` with the highest PAV / CC score, one vote each
    (what abcvoting's integer program with ``lexicographic_tiebreaking`` returns), sorted; None when the
    search would visit more than ``max_nodes`` (default ``SEARCH_NODES``) branches, and the solver is asked.

    Depth-first over the candidates in index order, each taken before it is left out, so the first
    committee that reaches the optimum is the lexicographically first. A branch is cut when its score
    plus the largest marginal gains still open (a bound: Thiele scores are submodular) cannot pass the
    greedy committee's score, or, once a committee is found, cannot beat it. Leaving a candidate out
    leaves out the later ones with the same ballots too (swapping two such candidates keeps the score
    and the earlier one comes first). Scores are integers (PAV's 1/x times lcm(1..size)): exact."""
    approval = np.zeros((len(ballots), num_cand), dtype=np.int64)
    for v, ballot in enumerate(ballots):
        approval[v, list(ballot)] = 1
    if rule == "pav":
        scale = math.lcm(*range(1, size + 1))
        gain_at = np.array([scale // (x + 1) for x in range(size)] + [0], dtype=np.int64)
    else:
        gain_at = np.array([1] + [0] * size, dtype=np.int64)
    kind = np.unique(approval.T, axis=0, return_inverse=True)[1].ravel().tolist()   # same ballots, same kind
    held, floor, taken = np.zeros(len(ballots), dtype=np.int64), 0, []
    for _ in range(size):                                    # greedy: a score the optimum reaches
        gains = gain_at[held] @ approval
        gains[taken] = -1
        j = int(np.argmax(gains))
        taken.append(j)
        floor += int(gains[j])
        held = held + approval[:, j]
    best: list = [None, []]
    budget = [SEARCH_NODES if max_nodes is None else max_nodes]

    def search(start: int, held, score: int, left: int, chosen: list[int], dropped: frozenset) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise _PastBudget
        if left == 0:
            if score >= floor if best[0] is None else score > best[0]:
                best[0], best[1] = score, list(chosen)
            return
        still = [j for j in range(start, num_cand) if kind[j] not in dropped]
        if len(still) < left:
            return
        gains = gain_at[held] @ approval
        bound = score + int(np.sort(gains[still])[-left:].sum())
        if bound < floor or (best[0] is not None and bound <= best[0]):
            return
        j = still[0]
        chosen.append(j)
        search(j + 1, held + approval[:, j], score + int(gains[j]), left - 1, chosen, dropped)
        chosen.pop()
        search(j + 1, held, score, left, chosen, dropped | {kind[j]})

    try:
        search(0, np.zeros(len(ballots), dtype=np.int64), 0, size, [], frozenset())
    except _PastBudget:
        return None
    return best[1]


class _PastBudget(Exception):
    """The search has visited ``SEARCH_NODES`` branches."""
