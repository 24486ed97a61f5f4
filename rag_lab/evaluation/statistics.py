"""How sure a mean over questions is, and whether a difference between two methods is real.

Every score the project prints is a mean over a few dozen questions, so the question is the unit
that varies and the unit resampled. Resampling is seeded: a table is identical run to run.

- ``mean_ci``: the mean, n and a 95% bootstrap interval (``scipy.stats.bootstrap``, BCa; the
  percentile interval where BCa is not defined, e.g. when every resample gives the same mean).
- ``paired_difference``: two methods on the questions both scored. The difference of means, its
  95% interval (the paired bootstrap: questions resampled with both methods' scores kept together,
  i.e. a bootstrap of the per-question differences), a two-sided paired permutation p-value
  (``scipy.stats.permutation_test``, each question's two scores swapped at random), and the minimum
  detectable effect: the smallest true difference a paired t-test at the same level would find with
  80% power, given this n and this spread of the differences.
- ``holm``: Holm's step-down correction across the comparisons of one table. scipy has none (it
  has Benjamini-Hochberg only) and statsmodels would be a new dependency for six lines.
- ``verdict``: a claim's three values from a difference's interval (supported, contradicted,
  inconclusive).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
POWER = 0.80
N_RESAMPLES = 9999
SEED = 0
NON_INFERIORITY_MARGIN = 0.05   # "at least as good as": no worse than this on a 0-1 metric (UnWeaver's claim)
SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` questions with its confidence interval; ``ci`` names the interval's method."""
    mean: float
    n: int
    ci_low: float
    ci_high: float
    ci: str

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return format_ci(self.mean, self.ci_low, self.ci_high)


@dataclass(frozen=True)
class Difference:
    """``a - b`` on the ``n`` questions both scored: mean difference, its interval, the permutation p
    and the minimum detectable effect (``mde``) at 80% power."""
    diff: float
    n: int
    ci_low: float
    ci_high: float
    p: float
    mde: float

    def as_dict(self) -> dict:
        return asdict(self)


def format_ci(mean: float, low: float, high: float, digits: int = 3) -> str:
    """``0.612 [0.480, 0.741]``; the mean alone when there is no interval."""
    if math.isnan(mean):
        return "n/a"
    if math.isnan(low) or math.isnan(high):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _finite(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"expected a flat sequence of per-question scores, got shape {arr.shape}")
    return arr[~np.isnan(arr)]


def mean_ci(values: Sequence[float], confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
            seed: int = SEED) -> Estimate:
    """Mean, n (NaN left out: an unscored question is not a miss) and a bootstrap interval.

    One value has no interval (NaN bounds); values that are all equal have the interval [v, v]."""
    x = _finite(values)
    n = len(x)
    if n == 0:
        return Estimate(math.nan, 0, math.nan, math.nan, "none")
    mean = float(x.mean())
    if n == 1:
        return Estimate(mean, 1, math.nan, math.nan, "none")
    if np.all(x == x[0]):
        return Estimate(mean, n, mean, mean, "exact")
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # BCa warns where it is undefined; the percentile interval follows
            res = stats.bootstrap((x,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
                                  method=method, vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (math.isnan(low) or math.isnan(high)):
            return Estimate(mean, n, min(low, mean), max(high, mean), method.lower())
    return Estimate(mean, n, math.nan, math.nan, "none")


def paired_difference(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE,
                      n_resamples: int = N_RESAMPLES, seed: int = SEED) -> Difference:
    """``a - b`` question by question (``a[i]`` and ``b[i]`` are the same question); a question either
    method left unscored (NaN) is dropped from both."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired scores must be two flat sequences of one length, got shapes {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    d = a - b
    est = mean_ci(d, confidence, n_resamples, seed)
    return Difference(est.mean, est.n, est.ci_low, est.ci_high, permutation_p(a, b, n_resamples, seed),
                      minimum_detectable_effect(d, 1 - confidence))


def permutation_p(a: np.ndarray, b: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """Two-sided p of the mean paired difference, swapping each question's two scores at random
    (exact when 2**n is within ``n_resamples``). No difference anywhere gives p = 1."""
    if len(a) == 0:
        return math.nan
    if np.array_equal(a, b):
        return 1.0
    res = stats.permutation_test((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis), vectorized=True,
                                 permutation_type="samples", n_resamples=n_resamples, alternative="two-sided",
                                 rng=np.random.default_rng(seed))
    return float(min(res.pvalue, 1.0))


def minimum_detectable_effect(differences: Sequence[float], alpha: float = 1 - CONFIDENCE,
                              power: float = POWER) -> float:
    """The smallest true mean difference a two-sided paired t-test at ``alpha`` detects with ``power``,
    for this n and the spread (sample standard deviation) of these differences:
    ``(t[1 - alpha/2] + t[power]) * sd / sqrt(n)`` with n - 1 degrees of freedom. NaN below n = 2."""
    d = _finite(differences)
    n = len(d)
    if n < 2:
        return math.nan
    df = n - 1
    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * d.std(ddof=1) / math.sqrt(n))


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values, in the input order (NaN stays NaN and does not count as a test)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, math.nan)
    idx = np.flatnonzero(~np.isnan(p))
    m = len(idx)
    order = idx[np.argsort(p[idx], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def verdict(ci_low: float, ci_high: float, threshold: float = 0.0) -> str:
    """A claim that a difference exceeds ``threshold`` (0: better than; ``-margin``: at least as good
    as, within the margin): supported when the whole interval lies above it, contradicted when the
    whole interval lies below it, inconclusive when the interval spans it (or there is none)."""
    if math.isnan(ci_low) or math.isnan(ci_high):
        return INCONCLUSIVE
    if ci_low > threshold:
        return SUPPORTED
    if ci_high < threshold:
        return CONTRADICTED
    return INCONCLUSIVE
