"""How often ``statistics``' intervals hold the true value, and how often a verdict is decided when
there is nothing to find: seeded simulations on data whose truth is known, so the docs' coverage table
(docs/statistics.md) and the test that guards it (tests/test_interval_coverage.py) measure one thing. Outside
rag_lab: only benchmarks/paired_nulls.py and that test use it.

- ``SCENARIOS``: name -> a draw of one data set (a mean's scores, or a pair of methods' scores, with
  each question's document when clustered), the true value its interval should hold and the metric
  kind the package is told: 0/1, [0, 1] near the ceiling, mid and clustered (12 documents,
  intra-document correlation 0.3), counts, and paired nulls.
- ``coverage``: the share of ``draws`` seeded data sets whose interval holds the true value, and the
  share whose verdict is decided (supported or contradicted; under a null scenario, a false decision).
- ``paired_rates``: ``paired_difference``'s bounded-mean test vectorised over data sets (checked equal to it
  in tests/test_interval_coverage.py): which intervals hold the truth and which comparisons are decided,
  on ``PAIRED_NULLS`` (skewed, symmetric and clustered nulls, drawn many data sets at once), for
  benchmarks/paired_nulls.py's 4,000 data sets a cell.
- ``unit_candidates`` / ``unit_candidate_table``: the intervals considered for the mean of [0, 1]
  scores (t, Wilson at n, an interior-mass score, the quasi-binomial score with and without the
  unseen-share band), vectorised over data sets: the table that chose ``paired_tests.unit_interval``
  (the chosen one is checked equal to ``mean_ci``'s in tests/test_interval_coverage.py).

Each draw runs the package's own functions (``mean_ci``, ``paired_difference`` and its verdict), not a
re-implementation, so the numbers are the shipped procedure's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from rag_lab.evaluation.paired_tests import DRAWS, bounded_draws, order_statistic, score_roots
from rag_lab.evaluation.statistics import SUPPORTED, CONTRADICTED, mean_ci, paired_difference


@dataclass(frozen=True)
class Scenario:
    """``draw(rng, n)`` gives one data set: one array of scores (a mean) or two (a paired comparison),
    and each question's unit (its document) or None; ``truth``: the mean or mean difference it was drawn
    around; ``kind``: the metric kind the package is told (``metric_specs``)."""
    draw: Callable
    truth: float
    paired: bool
    kind: str | None = None


def _alone(draw):
    """A draw without units: every question its own document."""
    return lambda rng, n: (draw(rng, n), None)


def _normal_mean(rng, n):
    return rng.normal(0.5, 0.2, n)


def _binary_mean(rng, n):
    return (rng.random(n) < 0.3).astype(float)


def _discrete(values, probs):
    """Scores drawn from ``values`` with probabilities ``probs``; the truth is their mean."""
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    return (lambda rng, n: values[rng.choice(len(values), size=n, p=probs)]), float(values @ probs)


def _documents(n: int, docs: int) -> np.ndarray:
    return np.array([f"doc{i % docs}" for i in range(n)])


def _clustered(mean: float, icc: float, docs: int, parts: int = 2):
    """Each document a Beta-drawn success rate around ``mean``; each question the share of ``parts``
    Bernoulli draws at its document's rate (scores 0, 0.5, 1): intra-document correlation ``icc``
    (= parts / (parts + kappa) for a Beta of concentration kappa)."""
    kappa = parts * (1 - icc) / icc

    def draw(rng, n):
        labels = np.arange(n) % docs
        rate = rng.beta(mean * kappa, (1 - mean) * kappa, size=docs)
        return rng.binomial(parts, rate[labels]) / parts, _documents(n, docs)
    return draw


def _paired_clustered_null(mean: float, icc: float, docs: int, parts: int = 2):
    """Two methods drawn alike from each document's rate (``_clustered``): a true difference of 0."""
    kappa = parts * (1 - icc) / icc

    def draw(rng, n):
        labels = np.arange(n) % docs
        rate = rng.beta(mean * kappa, (1 - mean) * kappa, size=docs)[labels]
        return rng.binomial(parts, rate) / parts, rng.binomial(parts, rate) / parts, _documents(n, docs)
    return draw


def _paired_normal(shift):
    def draw(rng, n):
        base = rng.normal(0.5, 0.2, n)
        return base + rng.normal(shift, 0.2, n), base, None
    return draw


def _paired_binary(win, loss):
    """Per question: the first method alone right with probability ``win``, the second alone ``loss``,
    both right otherwise half the time (ties do not move the difference)."""
    def draw(rng, n):
        u = rng.random(n)
        tie = (rng.random(n) < 0.5).astype(float)
        a = np.where(u < win, 1.0, np.where(u < win + loss, 0.0, tie))
        b = np.where(u < win, 0.0, np.where(u < win + loss, 1.0, tie))
        return a, b, None
    return draw


_CEILING, CEILING_MEAN = _discrete([1, 0.5, 0.67, 0.8], [0.85, 0.05, 0.05, 0.05])
_CEILING_MRR, CEILING_MRR_MEAN = _discrete([1, 0.5, 1 / 3, 0], [0.9, 0.05, 0.03, 0.02])
_MID, MID_MEAN = _discrete([0, 0.25, 0.5, 0.75, 1], [0.15, 0.1, 0.2, 0.2, 0.35])
_SECCOV = lambda rng, n: rng.binomial(5, 0.3, n).astype(float)      # noqa: E731  sections among the top 5
_SPARSE = lambda rng, n: rng.poisson(0.3, n).astype(float)           # noqa: E731  mostly 0

SCENARIOS = {
    "mean, normal scores": Scenario(_alone(_normal_mean), 0.5, False, "unbounded"),
    "mean, 0/1 scores (p = 0.3)": Scenario(_alone(_binary_mean), 0.3, False, "binary"),
    "mean, [0, 1] near the ceiling (85% ones)": Scenario(_alone(_CEILING), CEILING_MEAN, False, "unit"),
    "mean, [0, 1] MRR-like near the ceiling": Scenario(_alone(_CEILING_MRR), CEILING_MRR_MEAN, False, "unit"),
    "mean, [0, 1] mid (0.6)": Scenario(_alone(_MID), MID_MEAN, False, "unit"),
    "mean, [0, 1] clustered mid (12 documents, ICC 0.3)": Scenario(_clustered(0.6, 0.3, 12), 0.6, False, "unit"),
    "mean, [0, 1] clustered near the ceiling (12 documents, ICC 0.3)":
        Scenario(_clustered(0.93, 0.3, 12), 0.93, False, "unit"),
    "mean, counts (0-5, mean 1.5)": Scenario(_alone(_SECCOV), 1.5, False, "count"),
    "mean, counts near 0 (mean 0.3)": Scenario(_alone(_SPARSE), 0.3, False, "count"),
    "paired, normal differences (+0.1)": Scenario(_paired_normal(0.1), 0.1, True),
    "paired, 0/1 (win 20%, loss 10%)": Scenario(_paired_binary(0.2, 0.1), 0.1, True),
    "null, normal differences": Scenario(_paired_normal(0.0), 0.0, True),
    "null, 0/1 (win 10%, loss 10%)": Scenario(_paired_binary(0.1, 0.1), 0.0, True),
    "null, [0, 1] clustered (15 documents, ICC 0.3)":
        Scenario(_paired_clustered_null(0.6, 0.3, 15), 0.0, True, "unit"),
}


def coverage(name: str, n: int, draws: int = 1000, seed: int = 0) -> dict:
    """Scenario ``name`` at ``n`` questions over ``draws`` seeded data sets: ``covered`` (share of intervals
    holding the truth; a data set with no interval counts as not covering), ``outside`` (share of
    intervals leaving the kind's range) and ``decided`` (share of paired comparisons with a decided
    verdict; NaN for a mean)."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; expected one of {list(SCENARIOS)}")
    if n < 2 or draws < 1:
        raise ValueError(f"coverage needs n >= 2 questions and draws >= 1, got n = {n}, draws = {draws}")
    s = SCENARIOS[name]
    rng = np.random.default_rng(seed)
    covered = decided = outside = 0
    low_end, high_end = _range(s)
    for _ in range(draws):
        if s.paired:
            a, b, units = s.draw(rng, n)
            d = paired_difference(a, b, units=units, kind=s.kind)
            low, high = d.ci_low, d.ci_high
            decided += d.verdict() in (SUPPORTED, CONTRADICTED)
        else:
            x, units = s.draw(rng, n)
            e = mean_ci(x, units=units, kind=s.kind)
            low, high = e.ci_low, e.ci_high
        covered += bool(low <= s.truth <= high)
        outside += bool(low < low_end or high > high_end)
    return {"scenario": name, "n": n, "draws": draws, "seed": seed, "covered": covered / draws,
            "outside": outside / draws, "decided": decided / draws if s.paired else float("nan")}


def _range(s: Scenario) -> tuple[float, float]:
    """The range an interval of this scenario's kind must stay in."""
    if s.kind in ("binary", "unit"):
        return (-1.0, 1.0) if s.paired else (0.0, 1.0)
    return (0.0, np.inf) if s.kind == "count" else (-np.inf, np.inf)


def coverage_table(names=None, ns=(20, 50), draws: int = 2000, seed: int = 0) -> pd.DataFrame:
    """``coverage`` of each scenario (default every one) at each n: the rows docs/statistics.md shows."""
    return pd.DataFrame([coverage(name, n, draws, seed) for name in (names or SCENARIOS) for n in ns])


# --- How the [0, 1] interval was chosen: the candidates, vectorised over data sets (docs/statistics.md) ---

def _with_band(low, high, mean, n_eff, z2):
    w = z2 / (n_eff + z2)
    return np.minimum(low, mean - mean * w), np.maximum(high, mean + (1 - mean) * w)


def unit_candidates(x: np.ndarray, units: np.ndarray | None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The candidate intervals for the mean of [0, 1] scores ``x`` (data sets x questions; ``units``: each
    question's document, shared by every data set), each clipped to [0, 1]: name -> (low, high)."""
    from scipy import stats

    sets, n = x.shape
    mean, var = x.mean(axis=1), x.var(axis=1, ddof=1)
    if units is None:
        deff, z2, t2 = np.ones(sets), stats.norm.ppf(0.975) ** 2, stats.t.ppf(0.975, n - 1) ** 2
    else:
        _, inverse = np.unique(units, return_inverse=True)
        m = inverse.max() + 1
        sums = np.stack([x[:, inverse == u].sum(axis=1) for u in range(m)], axis=1)
        counts = np.bincount(inverse)
        robust = m / (m - 1) * ((sums - counts * mean[:, None]) ** 2).sum(axis=1) / n ** 2
        with np.errstate(all="ignore"):
            deff = np.where(var > 0, np.maximum(1.0, robust / (var / n)), 1.0)   # no spread: 1 (Spread.inflation)
        z2 = t2 = stats.t.ppf(0.975, m - 1) ** 2
    n_eff = n / deff
    with np.errstate(all="ignore"):
        phi = np.where(mean * (1 - mean) > 1e-12, var / (mean * (1 - mean)), 1.0)
    interior = (x * (1 - x)).mean(axis=1)
    half = np.sqrt(t2 * var / n_eff)
    out = {"t (cut to [0, 1])": (mean - half, mean + half),
           "wilson at n": score_roots(n_eff, mean, np.sqrt(z2), 1.0, 1.0),
           "score, interior mass + band": _with_band(*_interior(n_eff, mean, z2, interior), mean, n_eff, z2),
           "quasi-binomial score": score_roots(n_eff, mean, np.sqrt(z2), phi, phi),
           "quasi-binomial score + band (chosen)": _with_band(*score_roots(n_eff, mean, np.sqrt(z2), phi, phi), mean,
                                                              n_eff, z2)}
    return {k: (np.clip(lo, 0, 1), np.clip(hi, 0, 1)) for k, (lo, hi) in out.items()}


def _interior(n_eff, mean, z2, interior):
    """The score interval with the variance at mu taken as mu (1 - mu) minus the sample's mean x (1 - x)."""
    a, b, c = n_eff + z2, 2 * n_eff * mean + z2, n_eff * mean ** 2 + z2 * interior
    root = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
    return np.minimum((b - root) / (2 * a), mean), np.maximum((b + root) / (2 * a), mean)


_TIGHT = lambda rng, n: rng.beta(30, 20, n)      # noqa: E731  mid, little spread
_CEILING_97, CEILING_97_MEAN = _discrete([1, 0.5], [0.94, 0.06])
CANDIDATE_SCENARIOS = {
    "near the ceiling (85% ones)": (_alone(_CEILING), CEILING_MEAN),
    "MRR-like near the ceiling": (_alone(_CEILING_MRR), CEILING_MRR_MEAN),
    "near the ceiling (94% ones, else 0.5)": (_alone(_CEILING_97), CEILING_97_MEAN),
    "mid (0.6)": (_alone(_MID), MID_MEAN),
    "mid, little spread (Beta(30, 20))": (_alone(_TIGHT), 0.6),
    "clustered mid (12 documents, ICC 0.3)": (_clustered(0.6, 0.3, 12), 0.6),
    "clustered near the ceiling (12 documents, ICC 0.3)": (_clustered(0.93, 0.3, 12), 0.93),
}


def unit_candidate_table(ns=(20, 50), draws: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Coverage and mean width of each ``unit_candidates`` interval in each ``CANDIDATE_SCENARIOS`` at each n."""
    rows = []
    for name, (draw, truth) in CANDIDATE_SCENARIOS.items():
        for n in ns:
            rng = np.random.default_rng(seed)
            sets = [draw(rng, n) for _ in range(draws)]
            x, units = np.stack([s[0] for s in sets]), sets[0][1]
            for method, (low, high) in unit_candidates(x, units).items():
                rows.append({"scenario": name, "n": n, "method": method, "draws": draws, "seed": seed,
                             "covered": float(np.mean((low <= truth) & (truth <= high))),
                             "width": float(np.mean(high - low))})
    return pd.DataFrame(rows)


# --- Paired nulls, drawn many data sets at once (benchmarks/paired_nulls.py; docs/statistics.md) ---

def by_unit(d: np.ndarray, docs: int | None):
    """Per-unit sums and counts of differences ``d`` (data sets x questions), question i in document i % docs."""
    if docs is None:
        return d, np.ones(d.shape[1])
    labels = np.arange(d.shape[1]) % docs
    onehot = np.eye(docs)[labels]
    return d @ onehot, onehot.sum(axis=0)


def hit_or_miss_vs_rank_two(rng, sets, n):
    """1 or 0 (mean 0.9) against 1 or 0.5 (mean 0.9): the same true mean."""
    return (rng.random((sets, n)) < 0.9).astype(float), np.where(rng.random((sets, n)) < 0.8, 1.0, 0.5)


def binary_vs_graded(rng, sets, n):
    """0/1 with p 0.9 against a graded Beta(9, 1) score (mean 0.9)."""
    return (rng.random((sets, n)) < 0.9).astype(float), rng.beta(9, 1, (sets, n))


def win_loss(win, loss):
    def draw(rng, sets, n):
        u = rng.random((sets, n))
        tie = (rng.random((sets, n)) < 0.5).astype(float)
        return (np.where(u < win, 1.0, np.where(u < win + loss, 0.0, tie)),
                np.where(u < win, 0.0, np.where(u < win + loss, 1.0, tie)))
    return draw


def alike_mid(rng, sets, n):
    """Both methods drawn alike from a discrete [0, 1] score with mean 0.6."""
    return _MID(rng, (sets, n)), _MID(rng, (sets, n))


def clustered_alike(docs, mean=0.6, icc=0.3, parts=2):
    """Each document a Beta-drawn rate (intra-document correlation ``icc``); both methods the share of
    ``parts`` draws at it."""
    kappa = parts * (1 - icc) / icc

    def draw(rng, sets, n):
        rate = rng.beta(mean * kappa, (1 - mean) * kappa, (sets, docs))[:, np.arange(n) % docs]
        return rng.binomial(parts, rate) / parts, rng.binomial(parts, rate) / parts
    return draw


def clustered_skewed(docs):
    """Each document a rate r = 0.5 + 0.5 Beta(4, 1) (mean 0.9); one method 1 or 0 with P(1) = r, the other 1
    or 0.5 with P(1) = 2r - 1: the same mean r in every document, the shapes of the skewed null."""
    def draw(rng, sets, n):
        rate = (0.5 + 0.5 * rng.beta(4, 1, (sets, docs)))[:, np.arange(n) % docs]
        return ((rng.random((sets, n)) < rate).astype(float),
                np.where(rng.random((sets, n)) < 2 * rate - 1, 1.0, 0.5))
    return draw


PAIRED_NULLS = {  # name -> (draw(rng, sets, n) -> (a, b), documents or None, true difference, ns, seeds)
    "skewed null: hit-or-miss (1/0) vs rank 1 or 2 (1/0.5), mean 0.9": (hit_or_miss_vs_rank_two, None, 0.0, (20, 50),
                                                                       (0, 1)),
    "skewed null: 0/1 (p 0.9) vs graded Beta(9, 1)": (binary_vs_graded, None, 0.0, (20, 50), (0, 1)),
    "symmetric null: 0/1 (win 10%, loss 10%)": (win_loss(0.1, 0.1), None, 0.0, (20, 50), (0,)),
    "symmetric null: [0, 1] alike (mid, mean 0.6)": (alike_mid, None, 0.0, (20, 50), (0,)),
    "clustered null: alike, 12 documents (ICC 0.3)": (clustered_alike(12), 12, 0.0, (20, 60), (0,)),
    "clustered null: alike, 44 documents (ICC 0.3)": (clustered_alike(44), 44, 0.0, (88, 264), (0,)),
    "clustered skewed null: 12 documents": (clustered_skewed(12), 12, 0.0, (20, 60), (0,)),
    "clustered skewed null: 44 documents": (clustered_skewed(44), 44, 0.0, (88, 264), (0,)),
    "difference: 0/1 (win 20%, loss 10%)": (win_loss(0.2, 0.1), None, 0.1, (20, 50), (0,)),
}


def paired_rates(sums: np.ndarray, counts: np.ndarray, truth: float, alpha: float = 0.05,
                 chunk: int = 100) -> dict:
    """``paired_difference``'s test of differences of [0, 1] scores on many data sets at once: ``sums`` and
    ``counts`` (data sets x units) of each unit's differences and questions. Returns ``covered`` (share of
    intervals holding ``truth``), ``decided`` (share whose p at 0 is below ``alpha`` with a floor below it:
    supported or contradicted) and ``width`` (mean interval width)."""
    sums, counts = np.atleast_2d(sums).astype(float), np.atleast_2d(counts).astype(float)
    if counts.shape[0] == 1:
        counts = np.repeat(counts, len(sums), axis=0)
    k = order_statistic(alpha, DRAWS)
    covered = decided = width = 0.0
    for start in range(0, len(sums), chunk):
        d_low, d_high, f_low, f_high = bounded_draws(sums[start:start + chunk], counts[start:start + chunk])
        low = np.partition(d_low, k, axis=1)[:, k]
        high = -np.partition(-d_high, k, axis=1)[:, k]
        floor = 2 * np.minimum(((f_low <= 0).sum(1) + 1), ((f_high >= 0).sum(1) + 1)) / (DRAWS + 1)
        covered += float(((low <= truth) & (truth <= high)).sum())
        decided += float((((low > 0) | (high < 0)) & (floor < alpha)).sum())
        width += float((high - low).sum())
    sets = len(sums)
    return {"covered": covered / sets, "decided": decided / sets, "width": width / sets}
