"""The paper's second alignment form (appendix A.2): min ||R x - b||^2 subject to C x = d, solved from
its KKT system (Boyd & Vandenberghe, Introduction to Applied Linear Algebra, ch. 16).

Worked example, by hand (the paper's A.3 lost its numbers in our copy; this is ours, the EXAMPLE of
``alignment``): ideas A, B, C; chunk 1 holds A and B, chunk 2 B, chunk 3 B and C, chunk 4 C.

    R = [[1,1,0],[0,1,0],[0,1,1],[0,0,1]],  b = budgets = (1, 1/4, 1, 1/2),  w = (2, 1, 1).

Demand (our rule, ``demand_constraints`` with one demanded idea): A is the idea nearest the query
(w_A = 2); its only chunk has budget 1, so d_A = w_A / max w * 1 = 1. B and C stay free: their
columns (1,1,1,0) and (0,0,1,1) are independent. So C = [1 0 0], d = (1).

Normal equations of the unconstrained problem, R^T R x = R^T b:
    R^T R = [[1,1,0],[1,3,1],[0,1,2]],  R^T b = (1, 1 + 1/4 + 1, 1 + 1/2) = (1, 9/4, 3/2)
    -> x_A + x_B = 1, x_A + 3 x_B + x_C = 9/4, x_B + 2 x_C = 3/2 -> x = (2/3, 1/3, 7/12).
That x has x_A = 2/3, not the demanded 1, so the constraint binds. KKT system
[[2 R^T R, C^T], [C, 0]] [x; z] = [2 R^T b; d]:
    2 x_A + 2 x_B          + z = 2
    2 x_A + 6 x_B + 2 x_C      = 9/2
            2 x_B + 4 x_C      = 3
      x_A                      = 1
Row 4: x_A = 1. Row 2 halved: 3 x_B + x_C = 9/4 - 1 = 5/4, so x_C = 5/4 - 3 x_B. Row 3 halved:
x_B + 2 x_C = 3/2, so x_B + 5/2 - 6 x_B = 3/2, x_B = 1/5 and x_C = 5/4 - 3/5 = 13/20.
Row 1: z = 2 - 2 x_A - 2 x_B = 2 - 2 - 2/5 = -2/5.
Solution x = (1, 1/5, 13/20), z = -2/5. Loads R x = (6/5, 1/5, 17/20, 13/20), residual R x - b =
(1/5, -1/20, -3/20, 3/20), objective 1/25 + 1/400 + 9/400 + 9/400 = 7/80. Check of stationarity:
R^T r = (1/5, 1/5 - 1/20 - 3/20, -3/20 + 3/20) = (1/5, 0, 0); 2 R^T r + C^T z = (2/5 - 2/5, 0, 0) = 0.
The multiplier prices the demand: raising d by h raises the optimal objective by -z h = 2h/5.
The two strongest chunks are chunks 1 (6/5) and 3 (17/20).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import lstsq, null_space

from rag_lab.methods.unweaver.alignment import EXAMPLE, chunk_similarity, chunk_strengths, select_chunks
from rag_lab.methods.unweaver.constrained_lsq import (check_uniqueness, constrained_least_squares,
                                                      demand_constraints, kkt_residual, kkt_system)

R, W, B = EXAMPLE["R"], EXAMPLE["w"], EXAMPLE["c"]


def test_worked_example_by_hand():
    demand = demand_constraints(R, W, B)
    assert demand.C.tolist() == [[1, 0, 0]] and demand.d.tolist() == [1.0]
    assert demand.demanded == [0] and demand.forced == []
    K, rhs = kkt_system(R, B, demand.C, demand.d)
    assert K.tolist() == [[2, 2, 0, 1], [2, 6, 2, 0], [0, 2, 4, 0], [1, 0, 0, 0]]
    assert rhs.tolist() == [2, 4.5, 3, 1]
    sol = constrained_least_squares(R, B, demand.C, demand.d)
    np.testing.assert_allclose(sol.x, [1, 1 / 5, 13 / 20], atol=1e-14)
    np.testing.assert_allclose(sol.z, [-2 / 5], atol=1e-14)
    np.testing.assert_allclose(sol.residual, [1 / 5, -1 / 20, -3 / 20, 3 / 20], atol=1e-14)
    assert sol.residual @ sol.residual == pytest.approx(7 / 80, abs=1e-14)
    assert sol.kkt.satisfied(1e-12)
    strengths = chunk_strengths(R, sol.x)
    np.testing.assert_allclose(strengths, [6 / 5, 1 / 5, 17 / 20, 13 / 20], atol=1e-14)
    assert select_chunks(strengths, 2, chunk_similarity(R, W)) == [0, 2]
    # -z is the marginal cost of the demand: objective(d = 1 + h) - objective(1) = 2h/5 + O(h^2)
    h = 1e-6
    moved = constrained_least_squares(R, B, demand.C, demand.d + h).residual
    assert (moved @ moved - 7 / 80) / h == pytest.approx(2 / 5, abs=1e-5)


def test_kkt_residual_measures_the_distance_from_the_system():
    C, d = np.array([[1.0, 0, 0]]), np.array([1.0])
    exact = kkt_residual(R, B, C, d, [1, 0.2, 0.65], [-0.4])
    assert exact.worst < 1e-15
    # x_B off by 0.1: stationarity rows change by 0.1 x column B of K = (2, 6, 2) -> largest 0.6
    off = kkt_residual(R, B, C, d, [1, 0.3, 0.65], [-0.4])
    assert off.stationarity == pytest.approx(0.6) and off.primal_feasibility == 0
    # x_A = 0.9 breaks C x = d by 0.1
    assert kkt_residual(R, B, C, d, [0.9, 0.2, 0.65], [-0.4]).primal_feasibility == pytest.approx(0.1)


def test_agrees_with_the_null_space_method_on_random_problems():
    # independent route: x = x0 + N y with C x0 = d and N a basis of C's null space, y by least squares
    rng = np.random.default_rng(3)
    for _ in range(5):
        Rr = (rng.random((8, 5)) < 0.5).astype(float)
        Rr[rng.integers(0, 8, 5), np.arange(5)] = 1
        w, b = rng.random(5) + 0.1, rng.random(8) + 0.5
        demand = demand_constraints(Rr, w, b, demanded=2)
        sol = constrained_least_squares(Rr, b, demand.C, demand.d)
        x0 = lstsq(demand.C, demand.d)[0]
        N = null_space(demand.C)
        y = lstsq(Rr @ N, b - Rr @ x0)[0]
        np.testing.assert_allclose(sol.x, x0 + N @ y, atol=1e-10)
        assert sol.kkt.satisfied(1e-10)


def test_demand_forces_ideas_the_budgets_cannot_tell_apart():
    # ideas A, B, C, D over three chunks: A = (1,0,0), B = C = (0,1,1), D = (1,1,1) = A + B.
    # Similarities 0.8, 0.6, 0.5, 0.4; budgets (1, 1/2, 2). A is demanded (nearest). Least similar
    # first: D free, C free (independent of D), B = C -> demanded to keep the solution unique.
    Rd = np.array([[1, 0, 0, 1], [0, 1, 1, 1], [0, 1, 1, 1]], dtype=float)
    w, b = np.array([0.8, 0.6, 0.5, 0.4]), np.array([1.0, 0.5, 2.0])
    demand = demand_constraints(Rd, w, b)
    assert demand.demanded == [0, 1] and demand.forced == [1]
    # d_A = 0.8/0.8 * 1 (its chunk's budget); d_B = 0.6/0.8 * min(1/2, 2) = 3/8
    np.testing.assert_allclose(demand.d, [1, 3 / 8])
    # free C, D: loads (1 + x_D, 3/8 + x_C + x_D, same) against (1, 1/2, 2): x_D = 0 and
    # 3/8 + x_C = (1/2 + 2)/2 = 5/4, so x_C = 7/8; x = (1, 3/8, 7/8, 0)
    sol = constrained_least_squares(Rd, b, demand.C, demand.d)
    np.testing.assert_allclose(sol.x, [1, 3 / 8, 7 / 8, 0], atol=1e-12)
    # demanding A alone leaves B and C indistinguishable: refused, naming the condition
    with pytest.raises(ValueError, match=r"columns of \[R; C\] are linearly dependent \(rank 3 < 4 ideas\)"):
        constrained_least_squares(Rd, b, np.eye(4)[[0]], [1.0])


def test_uniqueness_conditions_and_bad_input():
    with pytest.raises(ValueError, match=r"rows of C are linearly dependent \(rank 1 < 2 rows\)"):
        check_uniqueness(R, [[1, 0, 0], [2, 0, 0]])
    with pytest.raises(ValueError, match=r"columns of \[R; C\] are linearly dependent"):
        check_uniqueness(np.array([[1, 1], [1, 1]]), np.zeros((0, 2)))
    check_uniqueness(R, np.zeros((0, 3)))          # R alone has independent columns: unconstrained is unique
    with pytest.raises(ValueError, match="C must have one column per idea"):
        constrained_least_squares(R, B, [[1, 0]], [1])
    with pytest.raises(ValueError, match=r"b needs 4 entries \(one budget per chunk"):
        constrained_least_squares(R, [1, 1], [[1, 0, 0]], [1])
    with pytest.raises(ValueError, match=r"d needs 1 entries"):
        constrained_least_squares(R, B, [[1, 0, 0]], [1, 2])
    with pytest.raises(ValueError, match="demanded must be an integer from 1 to the number of ideas"):
        demand_constraints(R, W, B, demanded=4)
    with pytest.raises(ValueError, match="must be positive"):
        demand_constraints(R, [1, 0, 1], B)
