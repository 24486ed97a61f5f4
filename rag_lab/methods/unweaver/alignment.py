"""UnWeaver's retrieval alignment (the paper's appendix A.2): how strongly each retrieved idea is
kept, given a budget per chunk, and which chunks that selects.

R is the retrieval matrix (chunks x ideas, R[j, e] = 1 iff idea e occurs in chunk j), w > 0 the
weight of each idea (its query similarity), c > 0 the budget of each chunk.

1. Proportional fairness (Kelly, Maulloo & Tan 1998): maximise sum_e w_e log x_e subject to
   R x <= c. Its KKT conditions: x_e = w_e / (R^T lam)_e with prices lam >= 0, R x <= c, and
   lam_j (c_j - (R x)_j) = 0. ``kelly_allocation`` reaches them by the price (dual) iteration:
   lam <- max(0, lam + step * (R x(lam) - c)) — a chunk over budget raises its price — which is
   projected gradient descent on the convex dual D(lam) = c.lam - sum_e w_e log (R^T lam)_e, with
   the step chosen by Armijo backtracking so it converges without a hand-tuned step (own code:
   scipy has no price iteration; ``scipy.optimize.minimize`` is used in the tests as an
   independent check). ``kelly_kkt`` reports how far a pair (x, lam) is from the conditions.
2. Bounded least squares (ours, not the paper's form): minimise ||R x - b||^2 with
   lower <= x <= upper, solved by ``scipy.optimize.lsq_linear``. By default b = c (fill every
   chunk's budget as closely as possible) and upper_e = min over the chunks holding e of c_j (an
   idea cannot be stronger than the tightest budget of a chunk it is in). ``lsq_kkt`` checks the
   bound-constrained optimality conditions on the gradient g = R^T (R x - b).

The paper's own second form, equality-constrained least squares solved from its KKT system, is in
``constrained_lsq``; the bounded form above is ours (a box instead of equality constraints).

Chunks are then chosen by their idea strength s = R x (``select_chunks``: the k largest; strengths
equal within a relative tolerance tie and go to the chunk more similar to the query, then to the
smaller index; chunks of no positive strength are never chosen).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import ties


def _dense(R) -> np.ndarray:
    R = R.toarray() if hasattr(R, "toarray") else np.asarray(R)
    R = np.asarray(R, dtype=float)
    if R.ndim != 2:
        raise ValueError(f"R must be a 2-d chunks x ideas matrix, got shape {R.shape}")
    if np.any(R < 0):
        raise ValueError("R must be non-negative (an incidence matrix)")
    return R


def _check_problem(R, w, c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    R = _dense(R)
    n, m = R.shape
    w, c = np.asarray(w, dtype=float).ravel(), np.asarray(c, dtype=float).ravel()
    if w.shape != (m,):
        raise ValueError(f"need one weight per idea: R has {m} ideas (columns), got {w.size} weights")
    if c.shape != (n,):
        raise ValueError(f"need one budget per chunk: R has {n} chunks (rows), got {c.size} budgets")
    if np.any(w <= 0):
        raise ValueError(f"idea weights must be positive (log utility), got {w.tolist()}")
    if np.any(c <= 0):
        raise ValueError(f"chunk budgets must be positive, got {c.tolist()}")
    empty = np.flatnonzero(R.sum(axis=0) == 0)
    if empty.size:
        raise ValueError(f"ideas {empty.tolist()} occur in no chunk: nothing bounds their strength")
    return R, w, c


@dataclass
class KellySolution:
    x: np.ndarray          # idea strengths
    prices: np.ndarray     # lam, one per chunk
    iterations: int
    converged: bool


@dataclass
class KKTReport:
    """Largest violation of each optimality condition (0 at an exact optimum)."""

    stationarity: float
    primal_feasibility: float
    dual_feasibility: float
    complementary_slackness: float

    @property
    def worst(self) -> float:
        return max(self.stationarity, self.primal_feasibility, self.dual_feasibility, self.complementary_slackness)

    def satisfied(self, tol: float = 1e-6) -> bool:
        return self.worst <= tol

    def as_dict(self) -> dict[str, float]:
        return {"stationarity": self.stationarity, "primal_feasibility": self.primal_feasibility,
                "dual_feasibility": self.dual_feasibility, "complementary_slackness": self.complementary_slackness}


def kelly_strengths(R: np.ndarray, w: np.ndarray, prices: np.ndarray) -> np.ndarray:
    """x_e = w_e / sum_{j holding e} lam_j (the stationarity condition solved for x)."""
    return w / (R.T @ prices)


def kelly_kkt(R, w, c, x, prices) -> KKTReport:
    """KKT residuals of (x, lam) for max sum w log x s.t. R x <= c. Stationarity and complementary
    slackness are relative (to w_e/x_e and to c_j); feasibility violations are relative to c."""
    R, w, c = _check_problem(R, w, c)
    x, lam = np.asarray(x, dtype=float), np.asarray(prices, dtype=float)
    if np.any(x <= 0):
        return KKTReport(float("inf"), float("inf"), max(0.0, float(-lam.min())), float("inf"))
    load = R @ x
    marginal = w / x
    return KKTReport(
        stationarity=float(np.max(np.abs(marginal - R.T @ lam) / marginal)),
        primal_feasibility=float(max(0.0, np.max((load - c) / c))),
        dual_feasibility=float(max(0.0, -lam.min())),
        complementary_slackness=float(np.max(np.abs(lam * (c - load)) / c)),
    )


def kelly_allocation(R, w, c, tol: float = 1e-10, max_iter: int = 100_000) -> KellySolution:
    """Proportional-fair idea strengths by the price iteration (module docstring).

    The step is backtracked until the dual's curvature along the move is at most 1/step, tested on
    gradients rather than on dual values (near the optimum, dual values differ by less than their
    rounding error and a value test would stall). Stops when every KKT residual of ``kelly_kkt`` is
    at most ``tol`` (stationarity holds exactly by construction of x); ``converged`` says whether
    that happened within ``max_iter``."""
    R, w, c = _check_problem(R, w, c)
    lam = (R @ w) / c                      # every idea starts with a positive price sum
    step = 1.0
    x = kelly_strengths(R, w, lam)
    grad = c - R @ x                       # gradient of the dual: budget minus load
    for it in range(1, max_iter + 1):
        while True:
            trial = np.maximum(lam - step * grad, 0.0)
            denom = R.T @ trial
            if np.all(denom > 0):
                trial_x = w / denom
                trial_grad = c - R @ trial_x
                move = trial - lam
                if (trial_grad - grad) @ move <= (move @ move) / step:
                    break
            step /= 2
            if step < 1e-300:              # pragma: no cover - cannot happen on a valid problem
                return KellySolution(x, lam, it, False)
        lam, x, grad = trial, trial_x, trial_grad
        if kelly_kkt(R, w, c, x, lam).worst <= tol:
            return KellySolution(x, lam, it, True)
        step *= 2                          # try a longer step next time
    return KellySolution(x, lam, max_iter, False)


def idea_upper_bounds(R, c) -> np.ndarray:
    """upper_e = min over chunks j holding idea e of c_j."""
    R = _dense(R)
    c = np.asarray(c, dtype=float).ravel()
    masked = np.where(R > 0, c[:, None], np.inf)
    return masked.min(axis=0)


@dataclass
class LsqSolution:
    x: np.ndarray
    residual: np.ndarray   # R x - b
    lower: np.ndarray
    upper: np.ndarray
    status: int
    message: str


def bounded_least_squares(R, b, lower=0.0, upper=None) -> LsqSolution:
    """min ||R x - b||^2 subject to lower <= x <= upper (scipy.optimize.lsq_linear, method "bvls",
    which is exact for these small dense problems)."""
    from scipy.optimize import lsq_linear

    R = _dense(R)
    n, m = R.shape
    b = np.asarray(b, dtype=float).ravel()
    if b.shape != (n,):
        raise ValueError(f"need one target per chunk: R has {n} chunks (rows), got {b.size} targets")
    lo = np.broadcast_to(np.asarray(lower, dtype=float), (m,)).copy()
    hi = np.full(m, np.inf) if upper is None else np.broadcast_to(np.asarray(upper, dtype=float), (m,)).copy()
    if np.any(lo > hi):
        raise ValueError(f"bounds cross: lower {lo.tolist()} > upper {hi.tolist()} somewhere")
    result = lsq_linear(R, b, bounds=(lo, hi), method="bvls", tol=1e-12)
    x = np.clip(result.x, lo, hi)
    return LsqSolution(x, R @ x - b, lo, hi, int(result.status), str(result.message))


def lsq_kkt(R, b, x, lower, upper, tol: float = 1e-9) -> KKTReport:
    """Optimality of a bounded least-squares solution: with g = R^T (R x - b), g_e = 0 where x_e is
    strictly inside its bounds, g_e >= 0 at the lower bound, g_e <= 0 at the upper bound.

    Reported as a ``KKTReport``: stationarity = the largest violation of those sign conditions,
    primal feasibility = the largest bound violation; the multipliers of the bounds are g's
    positive (lower) and negative (upper) parts, non-negative by construction, so dual
    feasibility is 0, and complementary slackness is the largest |multiplier x distance to its bound|."""
    R = _dense(R)
    x, b = np.asarray(x, dtype=float), np.asarray(b, dtype=float)
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    g = R.T @ (R @ x - b)
    at_lo, at_hi = x <= lo + tol, x >= hi - tol
    sign_violation = np.where(at_lo & at_hi, 0.0,
                              np.where(at_lo, np.maximum(0.0, -g), np.where(at_hi, np.maximum(0.0, g), np.abs(g))))
    mu_lo, mu_hi = np.maximum(g, 0.0), np.maximum(-g, 0.0)
    # an infinite bound has no multiplier; a wrong-signed gradient there is a stationarity violation
    gap_lo = np.where(np.isfinite(lo), x - lo, 0.0)
    gap_hi = np.where(np.isfinite(hi), hi - x, 0.0)
    slack = np.maximum(mu_lo * gap_lo, mu_hi * gap_hi)
    return KKTReport(
        stationarity=float(sign_violation.max(initial=0.0)),
        primal_feasibility=float(max(0.0, np.max(lo - x, initial=0.0), np.max(x - hi, initial=0.0))),
        dual_feasibility=0.0,
        complementary_slackness=float(slack.max(initial=0.0)),
    )


def chunk_strengths(R, x) -> np.ndarray:
    """s_j = (R x)_j: the total strength of the ideas a chunk holds."""
    return _dense(R) @ np.asarray(x, dtype=float)


TIE_TOL = 1e-6   # strengths this close (relative to the largest) are equal: above every solver's accuracy


def select_chunks(strengths, k: int, similarity=None, tie_tol: float = TIE_TOL) -> list[int]:
    """Indices of the ``k`` strongest chunks; chunks of no positive strength are never chosen.

    Strengths within ``tie_tol`` x the largest |strength| of a group's strongest chunk tie (a
    solver reaches saturated chunks' loads only to its tolerance, and the noise below it must not
    choose among them); tied chunks are ordered by ``similarity`` (the chunk's query similarity,
    higher first; none given: all equal), then by index."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if tie_tol < 0:
        raise ValueError(f"tie_tol must be non-negative, got {tie_tol}")
    s = np.asarray(strengths, dtype=float).ravel()
    sim = np.zeros(len(s)) if similarity is None else np.asarray(similarity, dtype=float).ravel()
    if sim.shape != s.shape:
        raise ValueError(f"need one similarity per chunk: {len(s)} strengths, {sim.size} similarities")
    scale = tie_tol * float(np.abs(s).max(initial=0.0))
    by_strength = sorted(range(len(s)), key=lambda j: (-s[j], j))
    groups: list[list[int]] = []
    for j in by_strength:
        if groups and s[groups[-1][0]] - s[j] <= scale:
            groups[-1].append(j)
        else:
            groups.append([j])
    order = [g[i] for g in groups for i in ties.order(sim[g], keys=g, what="alignment tie-break by similarity")]
    return [j for j in order if s[j] > scale][:k]


def chunk_similarity(R, w) -> np.ndarray:
    """A chunk's query similarity for breaking ties: the summed similarity w of the ideas it holds
    (UnWeaver embeds ideas, not chunks; the retriever numbers its candidates by the same sum)."""
    return _dense(R) @ np.asarray(w, dtype=float)


# Our worked example (the appendix's own numbers were lost in the paper's text copy): four chunks,
# three ideas A, B, C; chunk 1 holds A and B, chunk 2 B, chunk 3 B and C, chunk 4 C. Solutions by
# hand in tests/test_unweaver_alignment.py: Kelly x = (3/4, 1/4, 1/2), prices (8/3, 4/3, 0, 2); the
# paper's constrained least squares with b = c and A demanded at 1 (C = [1 0 0], d = 1, the rule of
# ``constrained_lsq.demand_constraints``): x = (1, 1/5, 13/20), z = -2/5.
EXAMPLE = {
    "R": np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=float),
    "w": np.array([2.0, 1.0, 1.0]),
    "c": np.array([1.0, 0.25, 1.0, 0.5]),
    "chunks": ["chunk 1", "chunk 2", "chunk 3", "chunk 4"],
    "ideas": ["A", "B", "C"],
}
