"""How often ``statistics``' intervals hold the true value, and how often a verdict is decided when
there is nothing to find: seeded simulations on data whose truth is known, so the docs' coverage table
(docs/statistics.md) and the test that guards it (tests/test_statistics.py) measure one thing.

- ``SCENARIOS``: name -> a draw of one data set (a mean's scores, or a pair of methods' scores) and
  the true value its interval should hold.
- ``coverage``: the share of ``draws`` seeded data sets whose interval holds the true value, and the
  share whose verdict is decided (supported or contradicted; under a null scenario, a false decision).

Each draw runs the package's own functions (``mean_ci``, ``paired_difference`` and its verdict), not a
re-implementation, so the numbers are the shipped procedure's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .statistics import SUPPORTED, CONTRADICTED, mean_ci, paired_difference


@dataclass(frozen=True)
class Scenario:
    """``draw(rng, n)`` gives one data set: one array of scores (a mean) or two (a paired comparison);
    ``truth``: the mean or mean difference it was drawn around."""
    draw: Callable
    truth: float
    paired: bool


def _normal_mean(rng, n):
    return rng.normal(0.5, 0.2, n)


def _binary_mean(rng, n):
    return (rng.random(n) < 0.3).astype(float)


def _paired_normal(shift):
    def draw(rng, n):
        base = rng.normal(0.5, 0.2, n)
        return base + rng.normal(shift, 0.2, n), base
    return draw


def _paired_binary(win, loss):
    """Per question: the first method alone right with probability ``win``, the second alone ``loss``,
    both right otherwise half the time (ties do not move the difference)."""
    def draw(rng, n):
        u = rng.random(n)
        tie = (rng.random(n) < 0.5).astype(float)
        a = np.where(u < win, 1.0, np.where(u < win + loss, 0.0, tie))
        b = np.where(u < win, 0.0, np.where(u < win + loss, 1.0, tie))
        return a, b
    return draw


SCENARIOS = {
    "mean, normal scores": Scenario(_normal_mean, 0.5, False),
    "mean, 0/1 scores (p = 0.3)": Scenario(_binary_mean, 0.3, False),
    "paired, normal differences (+0.1)": Scenario(_paired_normal(0.1), 0.1, True),
    "paired, 0/1 (win 20%, loss 10%)": Scenario(_paired_binary(0.2, 0.1), 0.1, True),
    "null, normal differences": Scenario(_paired_normal(0.0), 0.0, True),
    "null, 0/1 (win 10%, loss 10%)": Scenario(_paired_binary(0.1, 0.1), 0.0, True),
}


def coverage(name: str, n: int, draws: int = 1000, seed: int = 0) -> dict:
    """Scenario ``name`` at ``n`` questions over ``draws`` seeded data sets: ``covered`` (share of intervals
    holding the truth; a data set with no interval counts as not covering) and ``decided`` (share of paired
    comparisons with a decided verdict; NaN for a mean)."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; expected one of {list(SCENARIOS)}")
    if n < 2 or draws < 1:
        raise ValueError(f"coverage needs n >= 2 questions and draws >= 1, got n = {n}, draws = {draws}")
    s = SCENARIOS[name]
    rng = np.random.default_rng(seed)
    covered = decided = 0
    for _ in range(draws):
        if s.paired:
            a, b = s.draw(rng, n)
            d = paired_difference(a, b)
            low, high = d.ci_low, d.ci_high
            decided += d.verdict() in (SUPPORTED, CONTRADICTED)
        else:
            e = mean_ci(s.draw(rng, n))
            low, high = e.ci_low, e.ci_high
        covered += bool(low <= s.truth <= high)
    return {"scenario": name, "n": n, "draws": draws, "covered": covered / draws,
            "decided": decided / draws if s.paired else float("nan")}
