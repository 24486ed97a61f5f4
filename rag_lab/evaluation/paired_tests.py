"""The procedures behind ``statistics``' intervals and p-values, each a p-value function p(δ) of a
hypothesised mean (or mean difference) δ. A comparison's p is p at its claim's threshold and its
interval is every δ with p(δ) >= alpha, so a verdict read from p cannot disagree with the interval.

Which procedure (paired differences ``a - b``, one row per question or per unit of questions):

- both methods' scores are 0/1: **Tango's score test** for paired proportions (Tango 1998: the
  discordant pairs, the variance at the restricted maximum-likelihood estimate under δ). At δ = 0
  it is McNemar's test. Scores in [0, 1] that agree on every question (no spread) use the same
  statistic on the soft counts Σ max(d, 0) and Σ max(-d, 0): for differences of [0, 1] scores its
  variance bounds the true one (d² <= |d|), so "the methods agree on 20 questions" gives an interval
  of honest width, not a point.
- otherwise: the **paired t-test** and its interval.
- with at most ``EXACT_UNITS`` units, p(δ) is also bounded below by the **exact paired sign-flip
  test** (every one of the 2^units sign patterns of the units' shifted sums enumerated): the larger
  of the two p-values is still a valid p, and it is exact-level where the asymptotic one is not
  trustworthy (``[1, 1, 1]`` against ``[0, 0, 0]``: p = 0.25).

Why not the sign-flip test inverted into an interval everywhere (the first plan): shifting 0/1
differences to a δ != 0 breaks the symmetry it needs, and its interval then under-covers badly.
Computed exactly over every outcome at n = 20 (wins/losses per question): win 10% / loss 5%
covers 87%, win 5% / loss 0% covers 64%; Tango covers 95-100% in the same cases, and its false
decisions under a true null (10% / 10%) are 4.4%. docs/statistics.md has the table.

Questions that share a document are not independent: with ``labels`` (the unit of each
question, ``units.question_units``) the variance is the cluster-robust one over units (a design
effect below 1 counts as 1), the reference distribution is t with units - 1 degrees of freedom, and
the sign-flip flips whole units. When every unit holds one question the computation is the
unclustered one, exactly.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

EXACT_UNITS = 13          # 2^13 = 8,192 sign patterns: enumerated, never sampled
_BISECTIONS = 80
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
        """The design effect a procedure applies: at least 1; when nothing varies, n / units (every
        question of a unit taken as one)."""
        if not self.clustered:
            return 1.0
        return max(1.0, self.design_effect) if math.isfinite(self.design_effect) else self.n / self.units


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
    deff = var_cr / var_iid if var_iid > 0 else math.nan
    se = math.sqrt(max(var_cr, var_iid)) if m > 1 else math.nan
    return Spread(n, m, mean, se, m - 1, deff, True, sums, counts)


def critical(confidence: float, df: float | None = None) -> float:
    """The two-sided critical value: normal, or t with ``df`` degrees of freedom."""
    q = 1 - (1 - confidence) / 2
    return float(stats.norm.ppf(q) if df is None else stats.t.ppf(q, df))


def two_sided_p(z: float, df: float | None = None) -> float:
    if math.isnan(z):
        return math.nan
    return float(min(1.0, 2 * (stats.norm.sf(abs(z)) if df is None else stats.t.sf(abs(z), df))))


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
    phi * mu, phi = variance / mean the sample's; Poisson's when every count is 0), joined with the
    unseen-share band (a share w scoring 0, or one more than the ``largest`` count seen). Never below 0."""
    phi = variance / mean if mean > TOLERANCE else 1.0
    low, high = (float(v) for v in score_roots(n_eff, mean, crit, phi, 0.0))
    w = unseen_share(n_eff, crit)
    return max(0.0, min(low, mean - mean * w)), max(high, mean + (largest + 1 - mean) * w)


class TangoScore:
    """Tango's score statistic for a paired difference of proportions: ``wins`` questions where the
    first method alone scores, ``losses`` where the second alone does, of ``n``; the variance times
    ``inflation`` (the design effect), referred to the normal or, clustered, to t with ``df``."""
    domain = (-1.0, 1.0)

    def __init__(self, wins: float, losses: float, n: int, inflation: float = 1.0, df: float | None = None):
        self.b, self.c, self.n, self.inflation, self.df = wins, losses, n, inflation, df

    def z(self, delta: float) -> float:
        b, c, n = self.b, self.c, self.n
        A = 2 * n
        B = -b - c + (2 * n - b + c) * delta
        C = -c * delta * (1 - delta)
        p21 = (math.sqrt(max(B * B - 4 * A * C, 0.0)) - B) / (2 * A)   # restricted MLE of P(second alone)
        var = n * (2 * p21 + delta * (1 - delta)) * self.inflation
        num = b - c - n * delta
        if var <= 1e-15 * n:
            return 0.0 if abs(num) <= 1e-12 * n else math.copysign(math.inf, num)
        return num / math.sqrt(var)

    def p(self, delta: float) -> float:
        return two_sided_p(self.z(delta), self.df)

    def floor(self, delta: float) -> float:
        """The smallest p this n can give at ``delta``: every question won, or every one lost."""
        extremes = (TangoScore(self.n, 0, self.n, self.inflation, self.df),
                    TangoScore(0, self.n, self.n, self.inflation, self.df))
        return min(e.p(delta) for e in extremes)

    def interval(self, confidence: float) -> tuple[float, float]:
        crit = critical(confidence, self.df)
        estimate = (self.b - self.c) / self.n
        accepts = lambda d: abs(self.z(d)) <= crit * (1 + 1e-12)    # noqa: E731  (p(d) >= alpha)
        return bisect(accepts, estimate, -1.0), bisect(accepts, estimate, 1.0)


class TTest:
    """The (paired) t-test of a mean ``mean`` with standard error ``se`` and ``df`` degrees of freedom."""
    domain = (-math.inf, math.inf)

    def __init__(self, mean: float, se: float, df: int):
        self.mean, self.se, self.df = mean, se, df

    def p(self, delta: float) -> float:
        return two_sided_p((self.mean - delta) / self.se, self.df)

    def floor(self, delta: float) -> float:
        return 0.0

    def interval(self, confidence: float) -> tuple[float, float]:
        half = critical(confidence, self.df) * self.se
        return self.mean - half, self.mean + half


class SignFlip:
    """The exact paired sign-flip test over units: under "no difference" each unit's two methods are
    exchangeable, so each unit's (shifted) sum of differences is as likely negated; p counts the
    2^units sign patterns whose |total| reaches the observed one."""

    def __init__(self, sums: np.ndarray, counts: np.ndarray):
        if len(sums) > EXACT_UNITS:
            raise ValueError(f"the exact sign-flip test enumerates at most {EXACT_UNITS} units, got {len(sums)}")
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(sums))))
        self.sums, self.counts = sums, counts
        self.a, self.b = signs @ sums, signs @ counts
        self.total, self.n = float(sums.sum()), float(counts.sum())
        self.patterns = len(signs)

    def p(self, delta: float) -> float:
        observed = abs(self.total - self.n * delta)
        tol = 1e-12 * (float(np.abs(self.sums - self.counts * delta).sum()) + 1.0)
        return float(np.count_nonzero(np.abs(self.a - self.b * delta) >= observed - tol)) / self.patterns

    def floor(self, delta: float) -> float:
        return 2.0 / self.patterns

    def interval(self, confidence: float) -> tuple[float, float]:
        alpha = 1 - confidence
        if self.floor(0.0) >= alpha:
            return -math.inf, math.inf
        means = self.sums / self.counts
        reach = float(means.max() - means.min()) + 1.0
        accepts = lambda d: self.p(d) >= alpha      # noqa: E731
        estimate = self.total / self.n
        return bisect(accepts, estimate, float(means.min()) - reach), bisect(accepts, estimate, float(means.max()) + reach)


def bisect(accepts, inside: float, outside: float) -> float:
    """The boundary between ``inside`` (accepted) and ``outside``, on the accepted side: the acceptance
    set of each test here is an interval around the estimate (its p falls monotonely either side), so
    the boundary is found by halving; ``outside`` itself when it is accepted too."""
    if accepts(outside):
        return outside
    for _ in range(_BISECTIONS):
        mid = (inside + outside) / 2
        if mid in (inside, outside):
            break
        if accepts(mid):
            inside = mid
        else:
            outside = mid
    return inside


class Procedure:
    """A score test (``TangoScore`` or ``TTest``), with the exact sign-flip test beside it for few
    units: p is the larger of their p-values, the interval the union of their acceptance intervals
    (both hold the estimate), cut to the score test's domain."""

    def __init__(self, label: str, score, signflip: SignFlip | None = None):
        self.label, self.score, self.signflip = label, score, signflip
        self.parts = [score] + ([signflip] if signflip is not None else [])

    @property
    def exact(self) -> bool:
        return self.signflip is not None

    @property
    def resamples(self) -> int:
        return self.signflip.patterns if self.signflip is not None else 0

    def p(self, delta: float) -> float:
        return max(part.p(delta) for part in self.parts)

    def floor(self, delta: float) -> float:
        """A lower bound on every p this n can give at ``delta`` (none below it is attainable)."""
        return max(part.floor(delta) for part in self.parts)

    def interval(self, confidence: float) -> tuple[float, float]:
        bounds = [part.interval(confidence) for part in self.parts]
        low, high = self.score.domain
        return max(low, min(b[0] for b in bounds)), min(high, max(b[1] for b in bounds))
