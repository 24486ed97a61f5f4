"""UnWeaver's election: the top classes approve the chunks they occur in; k chunks are elected.

Rules (the paper names Approval, Proportional Approval and Chamberlin-Courant), computed with the
maintained ``abcvoting`` library (Lackner & Skowron's reference implementation):

- ``approval``: Approval Voting, the k chunks with the most approvals (abcvoting rule "av"; AV is
  separable, so its greedy and exact forms coincide).
- ``pav``: Proportional Approval Voting, maximise sum over voters of 1 + 1/2 + ... + 1/|approved
  chunks elected|. ``exact=True``: the optimum, rule "pav" solved as an integer program by
  HiGHS through PuLP ("pulp-highs"); ``exact=False``: the greedy sequential variant "seqpav".
- ``cc``: Chamberlin-Courant, maximise the number of voters with at least one approved chunk
  elected; ``exact=True``: rule "cc" with "pulp-highs"; ``exact=False``: "seqcc".

The exact solvers take about 50 ms on elections of 60 candidates (measured here), fast enough per
query. Ties are broken deterministically, always towards the candidate with the *smaller index*:
abcvoting's sequential rules and AV do this by construction, and the exact rules are called with
``lexicographic_tiebreaking=True``, which returns the lexicographically first optimal committee.
The caller therefore numbers candidates in its order of preference (UnWeaver: most query
similarity among the approving classes first, then document order).

The elected committee is returned ranked: greedily by marginal score of the rule's Thiele function
within the committee (for the sequential rules this is exactly the order of election), ties again
to the smaller index; each winner carries that marginal gain as its score.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...core import ties

RULES = ("approval", "pav", "cc")
_SCORE_FCT = {"approval": "av", "pav": "pav", "cc": "cc"}
_EXACT_ID = {"approval": "av", "pav": "pav", "cc": "cc"}
_SEQUENTIAL_ID = {"approval": "av", "pav": "seqpav", "cc": "seqcc"}
EXACT_ALGORITHM = "pulp-highs"


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
    if exact and rule != "approval":
        rule_id, algorithm = _EXACT_ID[rule], EXACT_ALGORITHM
        committees = abcrules.compute(rule_id, profile, size, algorithm=algorithm, resolute=True,
                                      lexicographic_tiebreaking=True)
    else:
        rule_id, algorithm = _SEQUENTIAL_ID[rule], "standard"
        committees = abcrules.compute(rule_id, profile, size, algorithm=algorithm, resolute=True)
    winners, gains = rank_committee(profile, sorted(committees[0]), rule)
    return Election(winners, gains, rule, rule_id, algorithm)
