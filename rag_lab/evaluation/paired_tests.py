"""The procedures behind ``statistics``' intervals and p-values. A comparison's p is p(δ) at its claim's
threshold and its interval is every δ with p(δ) >= alpha, so a verdict read from p cannot disagree with the
interval. docs/statistics.md gives each choice, the rejected candidates and the simulations.

Paired differences of scores in [0, 1]: **the bounded-mean test with an unseen unit** (``BoundedMean``;
Learned-Miller and Thomas 2019, the same bound as Gaffke 2005). Why this one: it needs only the bounds (the
sign-flip test is not valid for the shapes retrieval scores have); its smallest p follows from the design
(2 / 2^units: 3 documents never give less than 0.25); it is continuous in the data (no case for "no
spread"), reduces to the exact McNemar test for 0/1 differences, and stays inside [-1, 1]. Clustered, the
units are the documents, weighted by their questions; the probabilities are over ``DRAWS`` fixed
quasi-random weight vectors (``weights``), so they are identical run to run.

Unbounded differences (latency, tokens, counts): the paired **t-test** (cluster-robust standard error,
units - 1 degrees of freedom). Means: Wilson's interval for 0/1 scores, score intervals with the
unseen-share band for [0, 1] scores and counts (``unit_interval``, ``count_interval``), clustered through
the design effect (``Spread.inflation``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

# Two scores closer than this (relative to their size, at least 1) are equal: floating-point noise
# (0.1 + 0.2 - 0.3 = 5.6e-17) is never a difference, a spread, or a score outside [0, 1].
TOLERANCE = 1e-12


def scale(x: np.ndarray) -> float:
    """The size the tolerance is taken relative to: the largest |value|, at least 1."""
    return max(1.0, float(np.abs(x).max())) if len(x) else 1.0


def varies(x: np.ndarray) -> bool:
    """Whether ``x`` has a spread beyond ``TOLERANCE``."""
    return len(x) > 0 and float(np.ptp(x)) > TOLERANCE * scale(x)


def is_binary(x: np.ndarray) -> bool:
    """Every value 0 or 1 within ``TOLERANCE``."""
    return bool(((np.abs(x) <= TOLERANCE) | (np.abs(x - 1) <= TOLERANCE)).all())


def in_unit_range(x: np.ndarray) -> bool:
    """Every value in [0, 1] within ``TOLERANCE``."""
    return bool(((x >= -TOLERANCE) & (x <= 1 + TOLERANCE)).all())


def snapped(x: np.ndarray, binary: bool) -> np.ndarray:
    """``x`` in [0, 1] with the noise taken out: 0/1 values made exact (``binary``), the rest clipped."""
    return np.round(x) if binary else np.clip(x, 0.0, 1.0)


def without_noise(d: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Differences ``d = a - b`` with the ones within ``TOLERANCE`` of 0 (relative to the scores) set to 0."""
    size = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return np.where(np.abs(d) <= TOLERANCE * size, 0.0, d)


@dataclass(frozen=True)
class Spread:
    """The mean of ``x`` over ``n`` questions in ``units`` units, its standard error (cluster-robust
    when ``clustered``) with ``df`` degrees of freedom, the design effect (the clustered variance over
    the independent one; NaN when the values do not vary) and the per-unit sums and sizes."""
    n: int
    units: int
    mean: float
    se: float
    df: int
    design_effect: float
    clustered: bool
    sums: np.ndarray
    counts: np.ndarray

    @property
    def inflation(self) -> float:
        """The design effect a procedure applies: at least 1, and 1 when nothing varies (no spread shows no
        clustering; taking it as n / units gave 20 constant questions in 3 documents [0.139, 1] and the same
        with one question at 0.999999 [0.519, 1]: certainty inverted)."""
        if not self.clustered:
            return 1.0
        return max(1.0, self.design_effect) if math.isfinite(self.design_effect) else 1.0


def spread(x: np.ndarray, labels: np.ndarray | None = None) -> Spread:
    """``Spread`` of ``x`` (finite values), grouped by ``labels`` (one per value) when given."""
    n = len(x)
    mean = float(x.mean())
    var_iid = float(x.var(ddof=1)) / n if n > 1 else math.nan
    if labels is not None:
        _, inverse = np.unique(labels, return_inverse=True)
        sums, counts = np.bincount(inverse, weights=x), np.bincount(inverse).astype(float)
    if labels is None or len(sums) == n:      # one question per unit: the unclustered procedure, exactly
        return Spread(n, n, mean, math.sqrt(var_iid) if n > 1 else math.nan, n - 1, 1.0, False, x, np.ones(n))
    m = len(sums)
    var_cr = m / (m - 1) * float(np.sum((sums - counts * mean) ** 2)) / n ** 2 if m > 1 else math.nan
    deff = var_cr / var_iid if var_iid > 0 and varies(x) else math.nan      # noise is no spread
    se = math.sqrt(max(var_cr, var_iid)) if m > 1 else math.nan
    return Spread(n, m, mean, se, m - 1, deff, True, sums, counts)


def critical(confidence: float, df: float | None = None) -> float:
    """The two-sided critical value: normal, or t with ``df`` degrees of freedom."""
    q = 1 - (1 - confidence) / 2
    return float(stats.norm.ppf(q) if df is None else stats.t.ppf(q, df))


def wilson(p_hat: float, n_eff: float, crit: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``p_hat`` over ``n_eff`` (effective) questions."""
    z2 = crit * crit
    centre = (p_hat + z2 / (2 * n_eff)) / (1 + z2 / n_eff)
    half = crit / (1 + z2 / n_eff) * math.sqrt(p_hat * (1 - p_hat) / n_eff + z2 / (4 * n_eff ** 2))
    return max(0.0, centre - half), min(1.0, centre + half)


def score_roots(n_eff, mean, crit, slope, curve):
    """Every mu with n_eff * (mean - mu)^2 <= crit^2 * (slope * mu - curve * mu^2): a score interval whose
    variance at mu is ``slope * mu - curve * mu^2`` per question (Wilson: slope = curve = 1). Numbers or
    numpy arrays (``coverage`` runs it over many data sets at once)."""
    z2 = crit * crit
    a, b, c = n_eff + z2 * curve, 2 * n_eff * mean + z2 * slope, n_eff * mean * mean
    root = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
    return np.minimum((b - root) / (2 * a), mean), np.maximum((b + root) / (2 * a), mean)


def unseen_share(n_eff: float, crit: float) -> float:
    """How large a share of the population could score unlike every question seen (Wilson's upper bound
    for 0 of ``n_eff``): crit^2 / (n_eff + crit^2), 0.161 at 20 questions."""
    return crit * crit / (n_eff + crit * crit)


def unit_interval(mean: float, variance: float, n_eff: float, crit: float) -> tuple[float, float]:
    """An interval for the mean of scores in [0, 1] (``mean``, sample ``variance``, ``n_eff`` effective
    questions): the quasi-binomial score interval (Wilson's, with the variance at mu taken as
    phi * mu * (1 - mu), phi = variance / (mean * (1 - mean)) the sample's; exactly Wilson's for 0/1 scores
    at a bound), joined with the unseen-share band [mean - mean * w, mean + (1 - mean) * w]: a share w
    (``unseen_share``) of questions unlike any seen, scoring 0 or 1. The band is what keeps a constant
    sample honest (never a point) and never wider than a near-constant one (they get the same band).
    Inside [0, 1] by construction. docs/statistics.md has the coverage this was chosen by."""
    spread_part = mean * (1 - mean)
    phi = variance / spread_part if spread_part > TOLERANCE else 1.0
    low, high = (float(v) for v in score_roots(n_eff, mean, crit, phi, phi))
    w = unseen_share(n_eff, crit)
    return max(0.0, min(low, mean - mean * w)), min(1.0, max(high, mean + (1 - mean) * w))


def count_interval(mean: float, variance: float, largest: float, n_eff: float, crit: float) -> tuple[float, float]:
    """An interval for the mean of non-negative counts: the quasi-Poisson score interval (variance at mu
    phi * mu, phi = variance / mean the sample's), joined with the unseen-share band (a share w scoring 0, or
    one more than the ``largest`` count seen). Never below 0. Every count 0: the band alone, the limit of zeros
    with one count moved up (phi -> 0); Poisson's phi = 1 there was wider than that near-constant sample's."""
    phi = variance / mean if mean > TOLERANCE else 0.0
    low, high = (float(v) for v in score_roots(n_eff, mean, crit, phi, 0.0))
    w = unseen_share(n_eff, crit)
    return max(0.0, min(low, mean - mean * w)), max(high, mean + (largest + 1 - mean) * w)


class TTest:
    """The (paired) t-test of a mean ``mean`` with standard error ``se`` and ``df`` degrees of freedom."""
    resamples = 0

    def __init__(self, mean: float, se: float, df: int):
        self.mean, self.se, self.df = mean, se, df

    def p(self, delta: float) -> float:
        z = (self.mean - delta) / self.se
        return math.nan if math.isnan(z) else float(min(1.0, 2 * stats.t.sf(abs(z), self.df)))

    def floor(self, delta: float) -> float:
        return 0.0

    def interval(self, confidence: float) -> tuple[float, float]:
        half = critical(confidence, self.df) * self.se
        return self.mean - half, self.mean + half

    def mde(self, delta: float, confidence: float, power_term: float) -> float:
        """The smallest true distance from ``delta`` decided with the power of ``power_term`` (t[power] * se):
        (t[1 - alpha/2] + t[power]) * se; NaN without spread (no test)."""
        return critical(confidence, self.df) * self.se + power_term if self.se > 0 else math.nan



class BoundedMean:
    """The test of a mean of values bounded in [``low``, ``high``] (differences of [0, 1] scores: [-1, 1]),
    one row per unit (``sums`` of its questions' values, ``counts`` of its questions): the sampled units
    weighted by Dirichlet(1, ..., 1) weights with one more **unseen unit** at the bound, of the mean unit
    size (Learned-Miller and Thomas 2019, after Gaffke 2005; module docstring). ``D_low``: the weighted mean
    with the unseen unit at ``low``; ``D_high``: at ``high``. p(δ) = 2 min(P(D_low <= δ), P(D_high >= δ))
    and the interval is [the α/2 quantile of D_low, the 1 - α/2 quantile of D_high]: every δ the test does
    not reject, so a verdict read from p cannot disagree with the interval. The probabilities are over
    ``DRAWS`` fixed seeded weight vectors (``weights``), the units taken in order of their means so the
    answer does not depend on the order or the names of the units."""
    def __init__(self, sums: np.ndarray, counts: np.ndarray, low: float = -1.0, high: float = 1.0):
        d_low, d_high, floor_low, floor_high = (a[0] for a in bounded_draws(sums[None, :], counts[None, :], low, high))
        self.low, self.high, self.mean = low, high, float(sums.sum() / counts.sum())
        self.slope = (floor_low - low) / (high - low)    # per draw, the seen units' share of the weight
        self.unsorted = d_low, d_high
        self.d_low, self.d_high = np.sort(d_low), np.sort(d_high)
        self.floor_low, self.floor_high = np.sort(floor_low), np.sort(floor_high)

    @property
    def resamples(self) -> int:
        return len(self.d_low)

    @staticmethod
    def _p(below: np.ndarray, above: np.ndarray, delta: float) -> float:
        """2 min(P(below <= δ), P(above >= δ)), capped at 1, over sorted draws, each share counted as
        (draws reaching δ + 1) / (draws + 1), so no p is 0 (the usual Monte Carlo p)."""
        draws = len(below)
        share_low = (np.searchsorted(below, delta, side="right") + 1) / (draws + 1)
        share_high = (draws - np.searchsorted(above, delta, side="left") + 1) / (draws + 1)
        return float(min(1.0, 2 * min(share_low, share_high)))

    def p(self, delta: float) -> float:
        return self._p(self.d_low, self.d_high, delta)

    def floor(self, delta: float) -> float:
        """The smallest p any data of these units can give at ``delta``: every unit at ``high`` (or every one at
        ``low``), on the same weights, so no p of these units falls below it (draw by draw, D_low is largest
        when every unit is at the upper bound)."""
        return self._p(self.floor_low, self.floor_high, delta)

    def interval(self, confidence: float) -> tuple[float, float]:
        k = order_statistic(1 - confidence, len(self.d_low))
        return float(self.d_low[k]), float(self.d_high[-1 - k])

    def mde(self, delta: float, confidence: float, power_term: float) -> float:
        """The smallest true distance from ``delta`` this test decides with the power of ``power_term`` (t[power]
        * se): the interval inverted, then moved. Shifting every value by t moves each draw of D_low by t times
        the seen units' share of its weight (``slope``), so the mean at which this sample's shape is just decided
        (its lower end at ``delta`` when the mean is above it, else its upper end) is exact on the same weights;
        that distance plus ``power_term`` (docs/statistics.md). NaN when these units cannot decide or the effect
        leaves the range."""
        alpha = 1 - confidence
        if self.floor(delta) >= alpha:
            return math.nan
        k = order_statistic(alpha, len(self.d_low))
        below, above = self.unsorted
        up = -np.partition(-(delta - below) / self.slope, k)[k]      # the (k+1)-th largest crossing shift
        down = np.partition((delta - above) / self.slope, k)[k]      # the (k+1)-th smallest
        above = self.mean >= delta
        reach = (self.mean + up - delta if above else delta - self.mean - down) + power_term
        return float(reach) if (delta + reach <= self.high if above else delta - reach >= self.low) else math.nan


DRAWS_LOG2 = 14
DRAWS = 2 ** DRAWS_LOG2    # Dirichlet weight vectors: p within about +-0.001 of its limit at 0.05
SEED = 54                  # fixed: every table is identical run to run


@lru_cache(maxsize=8)
def weights(units: int) -> np.ndarray:
    """``DRAWS`` x (``units`` + 1) standard exponentials from a scrambled Sobol sequence (seeded): each row,
    normalised, is a Dirichlet(1, ..., 1) weight vector (column 0 the unseen unit's). Quasi-random points
    put a probability of 0.04 within +-0.0007 at 14 units, where seeded pseudo-random ones of the same
    number are within +-0.0015. Cached: a table tests many pairs over the same units."""
    points = stats.qmc.Sobol(units + 1, scramble=True, seed=SEED).random_base2(DRAWS_LOG2)
    w = -np.log1p(-points)
    w.setflags(write=False)
    return w


def order_statistic(alpha: float, draws: int) -> int:
    """The index (0-based) of the sorted draws at the α/2 quantile as ``BoundedMean._p`` counts it: the
    fewest draws c with (c + 1) / (draws + 1) >= α/2, less one, so that p(δ) >= α exactly inside the interval."""
    return max(0, math.ceil(alpha / 2 * (draws + 1) - 1 - 1e-9) - 1)


def bounded_draws(sums: np.ndarray, counts: np.ndarray, low: float = -1.0, high: float = 1.0):
    """For data sets x units ``sums`` and ``counts`` (values bounded in [low, high]): the draws of D_low and
    D_high (``BoundedMean``), and of the same for data at the bound (every unit at ``high`` for D_low, at
    ``low`` for D_high: the floor), each data sets x ``DRAWS``. Vectorised over data sets (``coverage``
    simulates thousands at once)."""
    sums, counts = np.atleast_2d(np.asarray(sums, dtype=float)), np.atleast_2d(np.asarray(counts, dtype=float))
    sets, units = sums.shape
    order = np.lexsort((counts, sums / counts), axis=1)          # by unit mean, then size: order-free
    sums, counts = np.take_along_axis(sums, order, 1), np.take_along_axis(counts, order, 1)
    w = weights(units)
    unseen = w[:, 0][None, :] * (counts.sum(axis=1) / units)[:, None]      # the unseen unit, of the mean size
    total = sums @ w[:, 1:].T
    size = counts @ w[:, 1:].T
    whole = size + unseen
    return ((total + low * unseen) / whole, (total + high * unseen) / whole,
            (high * size + low * unseen) / whole, (low * size + high * unseen) / whole)
