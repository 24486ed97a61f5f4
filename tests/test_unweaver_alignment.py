"""The alignment solvers of UnWeaver's appendix on our own 4-chunk / 3-idea example.

Ideas A, B, C; chunks hold      chunk 1: A, B   chunk 2: B   chunk 3: B, C   chunk 4: C
R (chunks x ideas) = [[1,1,0],[0,1,0],[0,1,1],[0,0,1]], weights w = (2, 1, 1), budgets c = (1, 1/4, 1, 1/2).

Kelly, by hand: guess chunks 1, 2, 4 full and chunk 3 slack (lam_3 = 0). Chunk 2 full: x_B = 1/4;
chunk 4 full: x_C = 1/2; chunk 1 full: x_A = 1 - 1/4 = 3/4. Chunk 3 load 1/4 + 1/2 = 3/4 < 1, slack.
Stationarity x_e = w_e / sum_{j holds e} lam_j: A: 2 / lam_1 = 3/4 -> lam_1 = 8/3; C: 1 / (lam_3 + lam_4)
= 1/2 -> lam_4 = 2; B: 1 / (lam_1 + lam_2 + lam_3) = 1/4 -> lam_2 = 4 - 8/3 = 4/3 >= 0. All KKT
conditions hold, and the log objective is strictly concave, so x = (3/4, 1/4, 1/2) is the optimum.
Chunk strengths R x = (1, 1/4, 3/4, 1/2): the two strongest are chunks 1 and 3.

Least squares with b = c and 0 <= x <= upper, upper_e = tightest budget holding e = (1, 1/4, 1/2):
normal equations without bounds give x = (2/3, 1/3, 7/12) (x_A + x_B = 1, 2 x_B + x_C = 5/4,
x_B + 2 x_C = 3/2), which breaks x_B <= 1/4 and x_C <= 1/2. With x_B = 1/4 and x_C = 1/2 at their
bounds, x_A = 3/4 zeroes chunk 1's residual; residual R x - c = (0, 0, -1/4, 0), gradient
g = R^T r = (0, -1/4, -1/4): g_A = 0 inside, g_B, g_C <= 0 at upper bounds -> optimal, and the
same x as Kelly here.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import minimize

from rag_lab.methods.unweaver.alignment import (bounded_least_squares, chunk_strengths, idea_upper_bounds,
                                                kelly_allocation, kelly_kkt, lsq_kkt, select_chunks)

R = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=float)
W = np.array([2.0, 1.0, 1.0])
C = np.array([1.0, 0.25, 1.0, 0.5])


def test_kelly_price_iteration_reaches_the_hand_solution():
    sol = kelly_allocation(sparse.csr_matrix(R), W, C)
    assert sol.converged
    np.testing.assert_allclose(sol.x, [3 / 4, 1 / 4, 1 / 2], atol=1e-8)
    np.testing.assert_allclose(sol.prices, [8 / 3, 4 / 3, 0, 2], atol=1e-7)
    report = kelly_kkt(R, W, C, sol.x, sol.prices)
    assert report.satisfied(1e-9), report
    # the hand solution itself satisfies KKT exactly; a wrong price breaks stationarity: with
    # lam_2 = 1, idea B's price sum is 8/3 + 1 = 11/3 against w_B / x_B = 4, off by 1/3 = 4/12
    assert kelly_kkt(R, W, C, [0.75, 0.25, 0.5], [8 / 3, 4 / 3, 0, 2]).worst < 1e-12
    assert kelly_kkt(R, W, C, [0.75, 0.25, 0.5], [8 / 3, 1.0, 0, 2]).stationarity == pytest.approx(1 / 12)
    # and an infeasible allocation breaks primal feasibility
    assert kelly_kkt(R, W, C, [0.9, 0.25, 0.5], [8 / 3, 4 / 3, 0, 2]).primal_feasibility > 0.1
    np.testing.assert_allclose(chunk_strengths(R, sol.x), [1, 0.25, 0.75, 0.5], atol=1e-8)
    assert select_chunks(chunk_strengths(R, sol.x), 2) == [0, 2]


def test_bounded_least_squares_by_hand():
    upper = idea_upper_bounds(R, C)
    np.testing.assert_allclose(upper, [1, 0.25, 0.5])
    sol = bounded_least_squares(R, C, 0.0, upper)
    np.testing.assert_allclose(sol.x, [0.75, 0.25, 0.5], atol=1e-10)
    np.testing.assert_allclose(sol.residual, [0, 0, -0.25, 0], atol=1e-10)
    assert lsq_kkt(R, C, sol.x, sol.lower, sol.upper).satisfied(1e-9)
    free = bounded_least_squares(R, C)                      # only x >= 0
    np.testing.assert_allclose(free.x, [2 / 3, 1 / 3, 7 / 12], atol=1e-10)
    assert lsq_kkt(R, C, free.x, free.lower, free.upper).satisfied(1e-9)
    # a point that is not optimal fails the check
    assert not lsq_kkt(R, C, [0.5, 0.25, 0.5], sol.lower, sol.upper).satisfied(1e-3)


def test_kelly_agrees_with_a_general_solver_on_random_problems():
    rng = np.random.default_rng(7)
    for _ in range(3):
        Rr = (rng.random((6, 4)) < 0.4).astype(float)
        Rr[rng.integers(0, 6, 4), np.arange(4)] = 1          # every idea in some chunk
        w, c = rng.random(4) + 0.2, rng.random(6) + 0.3
        sol = kelly_allocation(Rr, w, c)
        assert sol.converged and kelly_kkt(Rr, w, c, sol.x, sol.prices).satisfied(1e-8)
        ref = minimize(lambda x: -w @ np.log(x), np.full(4, 1e-3), method="SLSQP",
                       bounds=[(1e-9, None)] * 4, constraints=[{"type": "ineq", "fun": lambda x: c - Rr @ x}],
                       options={"ftol": 1e-14, "maxiter": 1000})
        np.testing.assert_allclose(sol.x, ref.x, rtol=1e-4, atol=1e-6)


def test_bad_problems_are_refused():
    with pytest.raises(ValueError, match="one weight per idea"):
        kelly_allocation(R, [1, 1], C)
    with pytest.raises(ValueError, match="one budget per chunk"):
        kelly_allocation(R, W, [1, 1])
    with pytest.raises(ValueError, match="weights must be positive"):
        kelly_allocation(R, [1, 0, 1], C)
    with pytest.raises(ValueError, match="occur in no chunk"):
        kelly_allocation(np.array([[1, 0], [1, 0]]), [1, 1], [1, 1])
    with pytest.raises(ValueError, match="bounds cross"):
        bounded_least_squares(R, C, 1.0, 0.5)
    with pytest.raises(ValueError, match="k must be positive"):
        select_chunks([1, 2], 0)
    assert select_chunks([0.0, 2.0, 2.0, 1.0], 5) == [1, 2, 3]   # ties to the smaller index, zeros never


def test_near_equal_strengths_tie_and_break_by_similarity_then_index():
    # chunks 0-2 sit at a budget of 1 up to solver noise (1e-12); by raw value the order would be
    # 1, 0, 2. Within the tolerance they tie, and the most query-similar goes first: 2 (0.3),
    # 0 (0.2), 1 (0.1); chunk 3 (0.5) is weaker whatever its similarity, chunk 4 (0) is never chosen.
    s = [1.0, 1.0 + 1e-12, 1.0 - 1e-12, 0.5, 0.0]
    sim = [0.2, 0.1, 0.3, 0.9, 1.0]
    assert select_chunks(s, 5, sim) == [2, 0, 1, 3]
    assert select_chunks(s, 2, sim) == [2, 0]
    # equal similarity too: the smaller index first, whatever the noise says
    assert select_chunks([1.0 - 1e-12, 1.0 + 1e-12, 1.0], 3, [0.5, 0.5, 0.5]) == [0, 1, 2]
    # no tolerance: the raw order
    assert select_chunks(s, 3, sim, tie_tol=0.0) == [1, 0, 2]
    # a real difference (1e-3 relative, above the 1e-6 tolerance) is not a tie
    assert select_chunks([1.0, 1.001], 1, [1.0, 0.0]) == [1]
    with pytest.raises(ValueError, match="one similarity per chunk"):
        select_chunks([1, 2], 1, [0.5])


def _random_problem(seed: int):
    rng = np.random.default_rng(seed)
    Rr = (rng.random((12, 6)) < 0.3).astype(float)
    Rr[rng.integers(0, 12, 6), np.arange(6)] = 1            # every idea in some chunk
    Rr = Rr[Rr.sum(axis=1) > 0]                              # every chunk holds an idea
    return Rr, rng.random(6) + 0.2, np.ones(len(Rr)), rng


def test_selection_is_stable_under_a_tiny_perturbation():
    """Uniform budgets saturate many chunks at exactly 1; a 1e-12 change of the budgets must not
    change which chunks are chosen. (Before the tie tolerance, a plain sort of the strengths chose
    differently on 2 of these 20 problems with bounded least squares and on 5 with the constrained
    form, k from 2 to 4.)"""
    from rag_lab.methods.unweaver.alignment import chunk_similarity
    from rag_lab.methods.unweaver.constrained_lsq import constrained_least_squares, demand_constraints

    def strengths(solver, Rr, w, c):
        if solver == "kelly":
            return chunk_strengths(Rr, kelly_allocation(Rr, w, c).x)
        if solver == "bounded":
            return chunk_strengths(Rr, bounded_least_squares(Rr, c, 0.0, idea_upper_bounds(Rr, c)).x)
        demand = demand_constraints(Rr, w, c)
        return chunk_strengths(Rr, constrained_least_squares(Rr, c, demand.C, demand.d).x)

    for seed in range(20):
        Rr, w, c, rng = _random_problem(seed)
        nudged = c + 1e-12 * rng.standard_normal(len(c))
        sim = chunk_similarity(Rr, w)
        for solver in ("kelly", "bounded", "constrained"):
            before, after = strengths(solver, Rr, w, c), strengths(solver, Rr, w, nudged)
            for k in (2, 3, 4):
                assert select_chunks(before, k, sim) == select_chunks(after, k, sim), (seed, solver, k)
