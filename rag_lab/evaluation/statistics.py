"""How sure a mean over questions is, and whether a difference between two methods is real.

Every score the project prints is a mean over a few dozen questions. The procedures themselves live in
``paired_tests``; this module is the face the rest of the package uses: ``mean_ci`` (a mean's interval,
chosen by the metric's kind, ``metric_specs``), ``paired_difference`` (``a - b`` with one procedure's p at
the claim's threshold, its interval, the smallest p this design can give and the MDE), ``holm`` (scipy
has only Benjamini-Hochberg, and statsmodels would be a new dependency for six lines) and
``verdict_and_reason``, the one place a comparison is called decided: only when p < ``ALPHA``, else
inconclusive or "cannot be decided" with its reason.

Scores closer than ``paired_tests.TOLERANCE`` are equal (floating-point noise is never a difference).
Intervals and p-values are analytic or over fixed seeded weights, so a table is identical run to run.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from .metric_specs import MetricKind, check_kind
from .paired_tests import (TOLERANCE, BoundedMean, TTest, count_interval, critical, in_unit_range, is_binary, snapped,
                           spread, unit_interval, varies, wilson, without_noise)

ALPHA = 0.05                    # written out: 1 - 0.95 is 0.05000000000000004 in floating point
CONFIDENCE = 1 - ALPHA
POWER = 0.80
NON_INFERIORITY_MARGIN = 0.05   # "at least as good as": no worse than this on a 0-1 metric (UnWeaver's claim)
SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"
UNDECIDABLE = "cannot be decided"     # always with its reason (``verdict_and_reason``)
UNADJUSTED = "unadjusted"             # an interval printed beside a Holm verdict: not simultaneous for its family
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE)
NONE = "none"


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` questions (``n_dropped`` unscored) in ``units`` units, its interval and
    ``interval``, the name of the method that gave it ("none: why" when there is none)."""
    mean: float
    n: int
    n_dropped: int
    ci_low: float
    ci_high: float
    interval: str
    units: int
    design_effect: float

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return format_ci(self.mean, self.ci_low, self.ci_high)


@dataclass(frozen=True)
class Difference:
    """``a - b`` on the ``n`` questions both scored (``n_dropped`` left out) in ``units`` units: the mean
    difference, its interval (``interval``: the procedure), p at ``threshold`` (over ``resamples`` seeded
    weight vectors; 0 for the t-test), the smallest p these units can give there (``p_floor``), the design
    effect and the minimum detectable effect at 80% power of this test (``mde``; NaN where it cannot decide)."""
    diff: float
    n: int
    n_dropped: int
    units: int
    design_effect: float
    ci_low: float
    ci_high: float
    interval: str
    threshold: float
    p: float
    resamples: int
    p_floor: float
    mde: float

    def as_dict(self) -> dict:
        return asdict(self)

    def verdict(self) -> str:
        """This comparison's verdict on its own (a family of one): ``verdict_and_reason``'s word on its p."""
        return verdict(self.diff, self.p, self.threshold, self.p_floor, self.mde)


WHOLE_RANGE = "(interval: the whole range, -1 to 1)"


def format_ci(mean: float, low: float, high: float, digits: int = 3) -> str:
    """``0.612 [0.480, 0.741]``; the mean alone when there is no interval; an interval of every value a
    difference of [0, 1] scores can take (too few units) in words (``WHOLE_RANGE``): [-1, 1] tells nothing."""
    if math.isnan(mean):
        return "n/a"
    def shown(x: float) -> str:
        return f"{round(x, digits) + 0.0:.{digits}f}"      # + 0.0: never "-0.000"

    if math.isnan(low) or math.isnan(high):
        return shown(mean)
    if shown(low) == shown(-1.0) and shown(high) == shown(1.0):
        return f"{shown(mean)} {WHOLE_RANGE}"
    return f"{shown(mean)} [{shown(low)}, {shown(high)}]"


def format_p(p: float) -> str:
    """p with two significant digits (``0.049``, ``0.0031``, ``2.1e-05``, ``0.50``, ``1.0``), one more
    where two would round it across ``ALPHA`` (0.0496 is ``0.0496``, never "0.050" beside a decided
    word); ``n/a`` for no test."""
    if math.isnan(p):
        return "n/a"
    for digits in range(2, 17):
        text = f"{p:#.{digits}g}"
        if (float(text) < ALPHA) == (p < ALPHA):
            return text.rstrip(".") if "e" not in text else text
    return repr(p)


def estimand_sentence(n: int, units: int) -> str:
    """The one sentence saying what every interval of a notebook speaks of (docs/statistics.md): the
    mean over the population of questions like these, the documents being the sampled units."""
    if n < 1 or units < 1 or units > n:
        raise ValueError(f"expected n >= 1 questions in 1..n units, got n = {n}, units = {units}")
    level = f"{CONFIDENCE * 100:.0f}%"
    if units == n:
        who = f"with each question its own sampled unit (n = {n} question{'s' * (n != 1)})"
    else:
        who = f"with the {units} document{'s' * (units != 1)} as the sampled units (n = {n} questions)"
    return f"Every interval below is a {level} interval for the mean over questions like these, {who}."


def _flat(values: Sequence[float], what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"expected a flat sequence of per-question {what}, got shape {arr.shape}")
    return arr


def _labels(units: Sequence | None, length: int) -> np.ndarray | None:
    if units is None:
        return None
    labels = np.asarray(units, dtype=object)
    if labels.shape != (length,):
        raise ValueError(f"units must give one unit per question ({length}), got shape {labels.shape}")
    return labels.astype(str)


def _no_estimate(mean: float, n: int, dropped: int, why: str) -> Estimate:
    return Estimate(mean, n, dropped, math.nan, math.nan, f"{NONE}: {why}", n, math.nan)


def inferred_kind(x: np.ndarray) -> MetricKind:
    """The kind read off the values, for a caller that names none: 0/1, [0, 1], or unbounded."""
    return "binary" if is_binary(x) else "unit" if in_unit_range(x) else "unbounded"


def _checked(x: np.ndarray, kind: MetricKind) -> np.ndarray:
    """``x`` checked against its kind's range (a ValueError naming what was found) and cleaned of noise."""
    if kind in ("binary", "unit") and not in_unit_range(x):
        raise ValueError(f"{kind} scores must lie in [0, 1]; got values from {x.min():.6g} to {x.max():.6g}")
    if kind == "binary" and not is_binary(x):
        raise ValueError(f"binary scores must be 0 or 1; got {sorted(set(np.round(x, 6).tolist()))[:5]}")
    if kind == "count" and (x < -TOLERANCE).any():
        raise ValueError(f"counts must be >= 0; got a value of {x.min():.6g}")
    if kind == "count":
        return np.maximum(x, 0.0)
    return snapped(x, kind == "binary") if kind in ("binary", "unit") else x


def mean_ci(values: Sequence[float], units: Sequence | None = None, kind: MetricKind | None = None) -> Estimate:
    """Mean, n (NaN left out: an unscored question is not a miss; counted in ``n_dropped``) and a
    95% interval by the metric's ``kind`` (``metric_specs``; when None, read off the values:
    0/1, [0, 1] or unbounded); ``units``: each question's unit (its document), for clustered data."""
    x = _flat(values, "scores")
    labels = _labels(units, len(x))
    keep = ~np.isnan(x)
    dropped = int((~keep).sum())
    x = x[keep]
    labels = labels[keep] if labels is not None else None
    n = len(x)
    if n == 0:
        return _no_estimate(math.nan, 0, dropped, "no question scored")
    if not np.isfinite(x).all():
        return _no_estimate(math.nan, n, dropped, "an infinite score")
    kind = check_kind(kind) if kind is not None else inferred_kind(x)
    x = _checked(x, kind)
    mean = float(x.mean())
    if n == 1:
        return _no_estimate(mean, 1, dropped, "one question")
    s = spread(x, labels)
    if s.clustered and s.units < 2:
        return _no_estimate(mean, n, dropped, "one unit")
    crit = critical(CONFIDENCE, s.df if s.clustered else None)
    n_eff = n / s.inflation
    if kind == "binary":
        (low, high), label = wilson(mean, n_eff, crit), "wilson"
    elif kind == "unit":
        (low, high), label = unit_interval(mean, float(x.var(ddof=1)), n_eff, crit), "score in [0, 1]"
    elif kind == "count":
        (low, high), label = count_interval(mean, float(x.var(ddof=1)), float(x.max()), n_eff, crit), "count score"
    elif varies(x):
        half = critical(CONFIDENCE, s.df) * s.se
        low, high, label = mean - half, mean + half, "t"
    else:
        return _no_estimate(mean, n, dropped, "no spread")
    return Estimate(mean, n, dropped, min(low, mean), max(high, mean), _clustered(label, s), s.units, s.design_effect)


def _clustered(label: str, s) -> str:
    return f"{label}, clustered" if s.clustered else label


def _no_difference(diff: float, n: int, dropped: int, threshold: float, why: str, units: int | None = None) -> Difference:
    return Difference(diff, n, dropped, n if units is None else units, math.nan, math.nan, math.nan, f"{NONE}: {why}",
                      threshold, math.nan, 0, math.nan, math.nan)


def paired_procedure(d: np.ndarray, bounded: bool, labels: np.ndarray | None = None):
    """(test, label, ``Spread``) for the differences ``d``, or (None, reason, None) when none applies:
    differences of scores in [0, 1] (``bounded``), the bounded-mean test with an unseen unit; otherwise
    the t-test (``paired_tests``' docstring says why)."""
    s = spread(d, labels)
    if s.clustered and s.units < 2:
        return None, "one unit", None
    if bounded:
        return BoundedMean(s.sums, s.counts), _clustered("bounded mean, unseen unit", s), s
    if not varies(d):
        return None, "no spread", None
    return TTest(s.mean, s.se, s.df), _clustered("t", s), s


def paired_difference(a: Sequence[float], b: Sequence[float], threshold: float = 0.0,
                      units: Sequence | None = None,
                      kind: MetricKind | None = None) -> Difference:
    """``a - b`` question by question (``a[i]`` and ``b[i]`` are the same question, ``units[i]`` its
    unit); a question either method left unscored (NaN) is dropped from both. ``p`` tests "the
    mean difference is ``threshold``". ``kind``: the metric's (``metric_specs``; None: read off the
    values): a difference of binary or [0, 1] scores stays inside [-1, 1]. Differences within
    ``TOLERANCE`` of 0 are 0."""
    a, b = _flat(a, "scores"), _flat(b, "scores")
    if a.shape != b.shape:
        raise ValueError(f"paired scores must be two flat sequences of one length, got shapes {a.shape} and {b.shape}")
    labels = _labels(units, len(a))
    keep = ~(np.isnan(a) | np.isnan(b))
    dropped = int((~keep).sum())
    a, b = a[keep], b[keep]
    labels = labels[keep] if labels is not None else None
    n = len(a)
    if n == 0:
        return _no_difference(math.nan, 0, dropped, threshold, "no question scored by both")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return _no_difference(math.nan, n, dropped, threshold, "an infinite score")
    both = np.concatenate([a, b])
    kind = check_kind(kind) if kind is not None else inferred_kind(both)
    bounded = kind in ("binary", "unit")
    if kind != "unbounded":
        a, b = _checked(a, kind), _checked(b, kind)
    d = without_noise(a - b, a, b)
    diff = float(d.mean())
    if n == 1:
        return _no_difference(diff, 1, dropped, threshold, "one question")
    test, label, s = paired_procedure(d, bounded, labels)
    if test is None:
        return _no_difference(diff, n, dropped, threshold, label, len(set(labels)) if labels is not None else None)
    low, high = test.interval(CONFIDENCE)
    mde = test.mde(threshold, CONFIDENCE, float(stats.t.ppf(POWER, s.df)) * s.se)
    return Difference(diff, n, dropped, s.units, s.design_effect, low, high, label, threshold, test.p(threshold),
                      test.resamples, test.floor(threshold), mde)


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


def holm_floors(floors: Sequence[float]) -> np.ndarray:
    """The smallest Holm-adjusted p each comparison of a family can reach: its own floor, and never
    below the family's size times the family's smallest floor (Holm's first step)."""
    f = np.asarray(floors, dtype=float)
    tested = ~np.isnan(f)
    if not tested.any():
        return f
    first = tested.sum() * np.nanmin(f)
    return np.where(tested, np.maximum(f, min(1.0, first)), np.nan)


def verdict_and_reason(diff: float, p: float, threshold: float = 0.0, p_floor: float = 0.0, mde: float = math.nan,
                       *, n: int | None = None, units: int | None = None, family_size: int = 1,
                       own_floor: float | None = None, no_test: str = "") -> tuple[str, str]:
    """A claim that the mean difference exceeds ``threshold`` (0: better than; ``-margin``: at least as
    good as, within the margin), from ``p`` (Holm-adjusted within its family where one is declared):
    (word, reason). Supported / contradicted only when p < ``ALPHA``, on the side the difference lies;
    "cannot be decided" when there is no p (``no_test`` says why), when no p below ``ALPHA`` is
    attainable (``p_floor``: the comparison's own, ``own_floor``, or Holm's over a family of
    ``family_size``), or when a non-inferiority claim left undecided has an MDE above its margin (or none);
    inconclusive otherwise. The reason is "" for every word but "cannot be decided". ``n`` and
    ``units`` (questions, documents) only word the reason. Every decided word the package prints
    comes from here."""
    if math.isnan(p) or math.isnan(diff):
        return UNDECIDABLE, no_test or "no test"
    if p_floor >= ALPHA:
        return UNDECIDABLE, _floor_reason(p_floor, n, units, family_size, own_floor)
    if p < ALPHA and diff != threshold:
        return (SUPPORTED if diff > threshold else CONTRADICTED), ""
    if threshold < 0 and not mde <= -threshold:    # NaN: no difference inside the range is found with 80% power
        said = f"MDE {mde:.2f}" if math.isfinite(mde) else "an MDE beyond the range"
        return UNDECIDABLE, f"{said} above the margin {-threshold:.2f}"
    return INCONCLUSIVE, ""


def _sampled(n: int | None, units: int | None) -> str:
    """``8 documents`` (clustered), ``5 questions`` (one per unit), or "" when not known."""
    if units is None or (isinstance(units, float) and math.isnan(units)):
        return ""
    units = int(units)
    word = "document" if n is not None and units < n else "question"
    return f"{units} {word}{'s' * (units != 1)}"


def _floor_reason(p_floor: float, n, units, family_size: int, own_floor) -> str:
    sampled = _sampled(n, units)
    own_blocks = own_floor is None or (isinstance(own_floor, float) and math.isnan(own_floor)) or own_floor >= ALPHA
    if family_size > 1 and not own_blocks:
        over = f" over {sampled}" if sampled else ""
        return f"a family of {family_size}{over}: Holm's smallest p is {format_p(p_floor)}"
    return f"{sampled or 'these questions'}: no test at {ALPHA:g} is possible"


def verdict(diff: float, p: float, threshold: float = 0.0, p_floor: float = 0.0, mde: float = math.nan) -> str:
    """The word of ``verdict_and_reason`` alone (for callers that print no reason)."""
    return verdict_and_reason(diff, p, threshold, p_floor, mde)[0]


def why_none(interval) -> str:
    """``none: one question`` -> ``one question``; "" for an interval that exists."""
    return interval.split(":", 1)[1].strip() if isinstance(interval, str) and interval.startswith(f"{NONE}:") else ""


def decided(word: str) -> bool:
    return word in (SUPPORTED, CONTRADICTED)
