"""Statistics for comparing conditions and runs. Pure: numbers in, numbers out.

Page-load times are skewed and sometimes bimodal (a straggler waits one more round
trip), so everything here is rank- or resampling-based: medians with bootstrap
confidence intervals, the Mann-Whitney U test, Cliff's delta. Resampling is seeded:
the same loads always give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Bootstrap resamples: the 95 % interval's ends move by < 1 % of the spread between seeds.
RESAMPLES = 4000
SEED = 20260


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval."""

    estimate: float
    low: float
    high: float


def _array(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError("need at least one value")
    return array


def iqr(values: Sequence[float]) -> float:
    """Interquartile range, numpy's default (linear) percentiles."""
    q1, q3 = np.percentile(_array(values), [25, 75])
    return float(q3 - q1)


def _resampled_medians(array: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    picks = rng.integers(0, array.size, size=(resamples, array.size))
    return np.median(array[picks], axis=1)


def median_ci(values: Sequence[float], level: float = 0.95, resamples: int = RESAMPLES,
              seed: int = SEED) -> Interval:
    """The median with a percentile-bootstrap confidence interval."""
    array = _array(values)
    medians = _resampled_medians(array, np.random.default_rng(seed), resamples)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(medians, [tail, 100 - tail])
    return Interval(float(np.median(array)), float(low), float(high))


def ratio_ci(numerator: Sequence[float], denominator: Sequence[float], level: float = 0.95,
             resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """median(numerator) / median(denominator), e.g. h2 over http1.0, with a bootstrap
    interval that resamples both groups independently."""
    top, bottom = _array(numerator), _array(denominator)
    if np.median(bottom) == 0:
        raise ValueError("ratio over a zero median")
    rng = np.random.default_rng(seed)
    ratios = _resampled_medians(top, rng, resamples) / _resampled_medians(bottom, rng, resamples)
    ratios = ratios[np.isfinite(ratios)]
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return Interval(float(np.median(top) / np.median(bottom)), float(low), float(high))


def bootstrap_ci(statistic: Callable[..., float], groups: Sequence[Sequence[float]], level: float = 0.95,
                 resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """statistic(median of group 1, median of group 2, ...), e.g. a cut 1 - new / old, with
    a bootstrap interval that resamples every group independently."""
    arrays = [_array(group) for group in groups]
    rng = np.random.default_rng(seed)
    medians = [_resampled_medians(array, rng, resamples) for array in arrays]
    values = np.array([statistic(*column) for column in zip(*medians)], dtype=float)
    values = values[np.isfinite(values)]
    estimate = float(statistic(*(float(np.median(array)) for array in arrays)))
    if values.size == 0:
        return Interval(estimate, math.nan, math.nan)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(estimate, float(low), float(high))


@dataclass(frozen=True)
class MannWhitney:
    """The Mann-Whitney U test's statistic and two-sided p."""

    u: float  # U of the first sample
    p: float  # two-sided


def mann_whitney(first: Sequence[float], second: Sequence[float]) -> MannWhitney:
    """Two-sided Mann-Whitney U test, normal approximation with tie and continuity
    correction (scipy's method="asymptotic"): fine from about 8 loads per side."""
    a, b = _array(first), _array(second)
    n1, n2 = a.size, b.size
    combined = np.concatenate([a, b])
    ranks = _ranks(combined)
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2)
    mean = n1 * n2 / 2
    _, counts = np.unique(combined, return_counts=True)
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - float((counts**3 - counts).sum()) / (n * (n - 1)))
    if variance <= 0:  # every value equal: no evidence of any difference
        return MannWhitney(u1, 1.0)
    z = (abs(u1 - mean) - 0.5) / math.sqrt(variance)
    p = math.erfc(max(z, 0.0) / math.sqrt(2))
    return MannWhitney(u1, min(1.0, p))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their average rank."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(values.size, dtype=float)
    ordered = values[order]
    start = 0
    while start < values.size:
        end = start
        while end + 1 < values.size and ordered[end + 1] == ordered[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def cliffs_delta(first: Sequence[float], second: Sequence[float]) -> float:
    """P(first > second) - P(first < second), from -1 to 1: how often one sample's
    loads beat the other's, whatever the distributions' shapes."""
    a, b = _array(first), _array(second)
    greater = (a[:, None] > b[None, :]).sum()
    less = (a[:, None] < b[None, :]).sum()
    return float((greater - less) / (a.size * b.size))
