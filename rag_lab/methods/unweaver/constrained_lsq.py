"""The appendix's second alignment form (A.2): equality-constrained least squares, in the sense of
the reference the paper cites for it (Boyd & Vandenberghe, "Introduction to Applied Linear
Algebra", ch. 16).

    minimise ||R x - b||^2   subject to   C x = d

R is the retrieval matrix (chunks x ideas), x the strength of each idea, b the budget of each chunk
(the load R x should come as close to it as it can), and C x = d the ideas that must be kept in the
context at their demanded strength. The optimum and its multipliers z solve the KKT linear system

    [[2 R^T R, C^T], [C, 0]] [x; z] = [2 R^T b; d],

whose matrix is invertible — so the solution exists and is unique — exactly when C has linearly
independent rows and the stacked matrix [R; C] has linearly independent columns (independent rows
also make every d reachable). ``constrained_least_squares`` checks both conditions, naming the one
that fails, and solves the system with ``scipy.linalg.solve``; ``kkt_residual`` says how far a pair
(x, z) is from it. Unlike Kelly's form there is no sign constraint: an idea may come out with a
negative strength (it then lowers the load of the chunks it is in).

How C and d are formed for a real query is ours (the paper says only that d is a demand of ideas to
keep; its worked example lost its numbers in our copy): ``demand_constraints`` demands the
``demanded`` ideas nearest the query, each at its similarity relative to the nearest idea's times
the tightest budget of a chunk holding it, so the nearest idea alone could fill that chunk. The
other ideas are free and fit the budgets, except that an idea whose column of R is a linear
combination of free, less query-similar ideas' columns is demanded too: otherwise [R; C] would lose
independent columns and the solution would not be unique (R restricted to free ideas must have
independent columns). C is then the identity's rows of the demanded ideas.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import ties


def _matrix(value, name: str) -> np.ndarray:
    value = value.toarray() if hasattr(value, "toarray") else value
    out = np.asarray(value, dtype=float)
    if out.ndim != 2:
        raise ValueError(f"{name} must be a 2-d matrix, got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must hold finite numbers")
    return out


def _vector(value, size: int, name: str, what: str) -> np.ndarray:
    out = np.asarray(value, dtype=float).ravel()
    if out.shape != (size,):
        raise ValueError(f"{name} needs {size} entries ({what}), got {out.size}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must hold finite numbers")
    return out


def check_uniqueness(R, C) -> None:
    """Raise ValueError unless C has linearly independent rows and [R; C] linearly independent
    columns (the conditions under which the KKT matrix is invertible)."""
    R, C = _matrix(R, "R"), _matrix(C, "C")
    if C.shape[1] != R.shape[1]:
        raise ValueError(f"C must have one column per idea: R has {R.shape[1]} ideas (columns), C has {C.shape[1]}")
    p, m = C.shape
    if p and np.linalg.matrix_rank(C) < p:
        raise ValueError(f"no unique solution: the rows of C are linearly dependent (rank {np.linalg.matrix_rank(C)} "
                         f"< {p} rows); drop a redundant constraint")
    stacked = np.vstack([R, C])
    rank = np.linalg.matrix_rank(stacked)
    if rank < m:
        raise ValueError(f"no unique solution: the columns of [R; C] are linearly dependent (rank {rank} < {m} ideas); "
                         "some ideas occur in the same chunks in a way the budgets cannot tell apart — constrain them in C")


def kkt_system(R, b, C, d) -> tuple[np.ndarray, np.ndarray]:
    """The KKT matrix [[2 R^T R, C^T], [C, 0]] and right-hand side [2 R^T b; d]."""
    R, C = _matrix(R, "R"), _matrix(C, "C")
    n, m = R.shape
    p = C.shape[0]
    if C.shape[1] != m:
        raise ValueError(f"C must have one column per idea: R has {m} ideas (columns), C has {C.shape[1]}")
    b = _vector(b, n, "b", "one budget per chunk, a row of R")
    d = _vector(d, p, "d", "one demand per row of C")
    K = np.block([[2 * R.T @ R, C.T], [C, np.zeros((p, p))]])
    return K, np.concatenate([2 * R.T @ b, d])


@dataclass
class LinearKKTResidual:
    """Largest absolute violation of each block of the KKT system (0 at the exact solution):
    stationarity 2 R^T (R x - b) + C^T z = 0 and primal feasibility C x = d. An equality
    constraint has no sign condition on z and no slack, so there is no dual-feasibility or
    complementary-slackness condition to violate."""

    stationarity: float
    primal_feasibility: float

    @property
    def worst(self) -> float:
        return max(self.stationarity, self.primal_feasibility)

    def satisfied(self, tol: float = 1e-9) -> bool:
        return self.worst <= tol

    def as_dict(self) -> dict[str, float]:
        return {"stationarity": self.stationarity, "primal_feasibility": self.primal_feasibility}


def kkt_residual(R, b, C, d, x, z) -> LinearKKTResidual:
    """How far (x, z) is from solving the KKT system of min ||R x - b||^2 s.t. C x = d."""
    R, C = _matrix(R, "R"), _matrix(C, "C")
    K, rhs = kkt_system(R, b, C, d)
    m, p = R.shape[1], C.shape[0]
    point = np.concatenate([_vector(x, m, "x", "one strength per idea"), _vector(z, p, "z", "one multiplier per row of C")])
    gap = K @ point - rhs
    return LinearKKTResidual(float(np.abs(gap[:m]).max(initial=0.0)), float(np.abs(gap[m:]).max(initial=0.0)))


@dataclass
class ConstrainedLsqSolution:
    x: np.ndarray              # idea strengths
    z: np.ndarray              # multipliers of C x = d (the demand's marginal cost is -z)
    residual: np.ndarray       # R x - b
    kkt: LinearKKTResidual


def constrained_least_squares(R, b, C, d) -> ConstrainedLsqSolution:
    """min ||R x - b||^2 subject to C x = d, from its KKT system (module docstring); refuses a problem
    without a unique solution, naming the condition that fails."""
    from scipy.linalg import solve

    K, rhs = kkt_system(R, b, C, d)
    check_uniqueness(R, C)
    R = _matrix(R, "R")
    m = R.shape[1]
    solution = solve(K, rhs, assume_a="sym")
    x, z = solution[:m], solution[m:]
    return ConstrainedLsqSolution(x, z, R @ x - np.asarray(b, dtype=float).ravel(), kkt_residual(R, b, C, d, x, z))


@dataclass
class Demand:
    C: np.ndarray              # one identity row per demanded idea
    d: np.ndarray              # their demanded strengths
    demanded: list[int]        # the demanded ideas (columns of R), in order of the rows of C
    forced: list[int]          # those demanded only to keep the solution unique


def demand_constraints(R, w, b, demanded: int = 1) -> Demand:
    """Our C and d for a query (module docstring): the ``demanded`` ideas most similar to the query
    (weights ``w``, ties to the earlier idea), plus any idea needed for a unique solution, each
    demanded at w_e / max(w) times the tightest budget of a chunk holding it."""
    R = _matrix(R, "R")
    n, m = R.shape
    w = _vector(w, m, "w", "one weight per idea, a column of R")
    b = _vector(b, n, "b", "one budget per chunk, a row of R")
    if not isinstance(demanded, (int, np.integer)) or not 1 <= demanded <= m:
        raise ValueError(f"demanded must be an integer from 1 to the number of ideas ({m}), got {demanded!r}")
    if np.any(w <= 0) or np.any(b <= 0):
        raise ValueError("idea weights w and chunk budgets b must be positive")
    if np.any(np.abs(R).sum(axis=0) == 0):
        raise ValueError(f"ideas {np.flatnonzero(np.abs(R).sum(axis=0) == 0).tolist()} occur in no chunk")
    by_similarity = ties.order(w, what="ideas demanded")
    chosen = set(by_similarity[:demanded])
    free: list[int] = []
    forced = []
    for e in reversed(by_similarity[demanded:]):           # least similar first stay free
        if np.linalg.matrix_rank(R[:, free + [e]]) == len(free) + 1:
            free.append(e)
        else:
            forced.append(e)
    rows = sorted(chosen | set(forced))
    tightest = np.where(R != 0, b[:, None], np.inf).min(axis=0)
    C = np.eye(m)[rows]
    d = np.array([w[e] / w.max() * tightest[e] for e in rows])
    return Demand(C, d, rows, sorted(forced))
