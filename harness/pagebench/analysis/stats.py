"""Statistics for comparing conditions and runs, on scipy's. Pure: numbers in, numbers out.

Page-load times are skewed and sometimes bimodal (a straggler waits one more round
trip), so everything here is rank- or resampling-based: medians with percentile-bootstrap
confidence intervals (`scipy.stats.bootstrap`; a run measured by several lab machines:
the machines resampled too, `machines_bootstrap_ci`), the Mann-Whitney U test
(`scipy.stats.mannwhitneyu`, exact at the small n a CI gate runs) with Cliff's delta and
Holm's correction, and what a test at a given n could have seen at all
(`detectable_slowdown`). Resampling is seeded: the same loads always give the same interval.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType

import numpy as np

#: Bootstrap resamples: the 95 % interval's ends move by < 1 % of the spread between seeds.
RESAMPLES = 4000
SEED = 20260
#: Up to this many loads on the larger side, and no ties, the p of Mann-Whitney is exact
#: (scipy's exact distribution of U); above, the normal approximation, which is close there
#: and does not cost scipy a quarter of a second per new pair of sizes (200 loads each).
EXACT_MAX = 50
#: With ties (counts such as `requests`; load times rounded alike), scipy's exact
#: distribution is wrong (it assumes none): the p is then a permutation test over every
#: split of the pooled loads, as long as there are at most this many splits (6 loads each:
#: 924, ~10 ms); beyond, the normal approximation with scipy's tie correction.
PERMUTATIONS_MAX = 1000


#: A group's values by the lab machine that measured them (a sharded run;
#: `summary.ConditionSummary.by_machine`): each machine one cluster of loads.
ByMachine = Mapping[str, Sequence[float]]
#: What `median_ci` and `ratio_ci` take: values, or values by machine.
Sample = Sequence[float] | ByMachine


#: The level of the intervals computed where none is given: 95 %, or a sequential rule's
#: per-look level while it judges (`confidence`), so that the claims' measures, which call
#: `bootstrap_ci` without a level, are judged at it without a parameter each.
LEVEL: ContextVar[float] = ContextVar("LEVEL", default=0.95)


@contextmanager
def confidence(level: float) -> Iterator[None]:
    """Intervals computed inside are at `level` unless a call names its own."""
    if not 0 < level < 1:
        raise ValueError(f"an interval's level is between 0 and 1, not {level}")
    token = LEVEL.set(level)
    try:
        yield
    finally:
        LEVEL.reset(token)


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval."""

    estimate: float
    low: float
    high: float


@functools.cache
def _scipy_stats() -> ModuleType:
    """scipy.stats, imported on first use: importing it takes 1-2 s, which every command
    importing this module (`pagebench run`, for its stopping rule) paid before its first load."""
    from scipy import stats

    return stats


def _array(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError("need at least one value")
    return array


def iqr(values: Sequence[float]) -> float:
    """Interquartile range (linear percentiles)."""
    return float(_scipy_stats().iqr(_array(values)))


def bootstrap_ci(statistic: Callable[..., float], groups: Sequence[Sequence[float]], level: float | None = None,
                 resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """statistic(median of group 1, median of group 2, ...), e.g. a cut 1 - new / old, with
    a percentile-bootstrap interval (scipy's, every group resampled on its own). Percentile,
    not scipy's default BCa: BCa's jackknife is known to fail for the median, a step
    function of the data. A group of one load has one median (scipy resamples groups of
    two or more); resamples where the statistic is undefined (nan, a zero divisor) are
    left out of the interval. `level`: 95 % unless `confidence` says otherwise."""
    level = LEVEL.get() if level is None else level
    arrays = [_array(group) for group in groups]
    estimate = float(statistic(*(float(np.median(array)) for array in arrays)))
    varying = [i for i, array in enumerate(arrays) if array.size > 1]
    if not varying:
        return Interval(estimate, estimate, estimate)
    scalar = np.vectorize(statistic, otypes=[float])

    def of_medians(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        medians: list[np.ndarray | float] = [float(np.median(array)) for array in arrays]
        for i, sample in zip(varying, samples):
            medians[i] = np.median(sample, axis=axis)
        return scalar(*medians)

    with warnings.catch_warnings():  # equal values or undefined resamples: handled below
        warnings.simplefilter("ignore", _scipy_stats().DegenerateDataWarning)
        result = _scipy_stats().bootstrap([arrays[i] for i in varying], of_medians, n_resamples=resamples,
                              method="percentile", confidence_level=level, vectorized=True,
                              rng=np.random.default_rng(seed))
    values = np.asarray(result.bootstrap_distribution)
    if np.isfinite(values).all():
        return Interval(estimate, float(result.confidence_interval.low), float(result.confidence_interval.high))
    return _percentiles(estimate, values, level)


def _percentiles(estimate: float, values: np.ndarray, level: float) -> Interval:
    """The percentile interval of a bootstrap distribution, its undefined resamples left out."""
    values = values[np.isfinite(values)]
    if values.size == 0:
        return Interval(estimate, math.nan, math.nan)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(estimate, float(low), float(high))


def clustered_bootstrap_ci(statistic: Callable[..., float], groups: Sequence[Sequence[Sequence[float]]],
                           level: float | None = None, resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """statistic(median of group 1, ...) as `bootstrap_ci`, each group given as clusters
    (the pages several clients loaded at once: one planned load) and resampled whole: a
    resample draws clusters with replacement and takes the median of all their values.
    Pages of one load share its link, proxy and moment, so they are not independent; the
    pages-as-independent interval is too narrow when they move together, and this one is
    as wide as the naive one when they do not. A group of one cluster keeps its median.
    `level`: 95 % unless `confidence` says otherwise."""
    level = LEVEL.get() if level is None else level
    padded = []
    for group in groups:
        clusters = [_array(cluster) for cluster in group]
        if not clusters:
            raise ValueError("need at least one cluster")
        array = np.full((len(clusters), max(c.size for c in clusters)), np.nan)
        for i, cluster in enumerate(clusters):
            array[i, :cluster.size] = cluster
        padded.append(array)
    estimate = float(statistic(*(float(np.nanmedian(array)) for array in padded)))
    if all(array.shape[0] == 1 for array in padded):
        return Interval(estimate, estimate, estimate)
    rng = np.random.default_rng(seed)
    medians = []
    for array in padded:
        if array.shape[0] == 1:
            medians.append(np.full(resamples, np.nanmedian(array)))
            continue
        drawn = array[rng.integers(0, array.shape[0], (resamples, array.shape[0]))]
        medians.append(np.nanmedian(drawn.reshape(resamples, -1), axis=1))
    return _percentiles(estimate, np.vectorize(statistic, otypes=[float])(*medians), level)


def machines_bootstrap_ci(statistic: Callable[..., float], groups: Sequence[ByMachine], level: float | None = None,
                           resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """statistic(median of group 1, ...) as `bootstrap_ci`, each group its values by the lab
    machine that measured them. Where every group is one machine's: `bootstrap_ci` of the
    values, the same numbers. Else a two-stage bootstrap: a resample draws as many machines
    as the group has, with replacement, then each drawn machine's loads, with replacement,
    and takes the median of all it drew; so the interval carries how much the machines
    differ as well as how much loads do (loads resampled alone take the machines' mix as
    fixed). Two stages, not clusters alone (`clustered_bootstrap_ci`): a run has a handful
    of machines, and medians of two machines drawn whole take three values. Groups measured
    by the same machines draw the same machines in each resample: a sharded run spreads
    every condition over all its machines, so a machine's effect is common to them and
    cancels in their ratio (drawn apart, it would not). Undefined resamples are left out.
    `level`: 95 % unless `confidence` says otherwise."""
    level = LEVEL.get() if level is None else level
    named = [sorted(group) for group in groups]
    if not all(named):
        raise ValueError("need at least one machine's values")
    if all(len(names) == 1 for names in named):
        return bootstrap_ci(statistic, [group[names[0]] for group, names in zip(groups, named)], level, resamples, seed)
    clusters = [[_array(group[name]) for name in names] for group, names in zip(groups, named)]
    estimate = float(statistic(*(float(np.median(np.concatenate(group))) for group in clusters)))
    rng = np.random.default_rng(seed)
    shared = all(names == named[0] for names in named)
    draws = rng.integers(0, len(named[0]), (resamples, len(named[0]))) if shared else None
    medians = [_two_stage_medians(group, rng, resamples, draws) for group in clusters]
    return _percentiles(estimate, np.vectorize(statistic, otypes=[float])(*medians), level)


def _two_stage_medians(clusters: Sequence[np.ndarray], rng: np.random.Generator, resamples: int,
                       draws: np.ndarray | None) -> np.ndarray:
    """The median of each two-stage resample of `clusters` (`machines_bootstrap_ci`):
    `draws` are the clusters drawn (resamples x clusters), else drawn here."""
    sizes = np.array([cluster.size for cluster in clusters])
    padded = np.full((len(clusters), sizes.max()), np.inf)  # past a cluster's size: sorted last, never a median
    for i, cluster in enumerate(clusters):
        padded[i, :cluster.size] = cluster
    if draws is None:
        draws = rng.integers(0, len(clusters), (resamples, len(clusters)))
    counts = sizes[draws]  # each drawn cluster's size: resamples x clusters
    within = (rng.random((*draws.shape, sizes.max())) * counts[..., None]).astype(int)
    drawn = padded[draws[..., None], within]
    drawn[np.arange(sizes.max()) >= counts[..., None]] = np.inf
    drawn = np.sort(drawn.reshape(resamples, -1), axis=1)
    total, rows = counts.sum(axis=1), np.arange(resamples)
    return (drawn[rows, (total - 1) // 2] + drawn[rows, total // 2]) / 2


def _by_machine(sample: Sample) -> ByMachine:
    """A sample as values by machine: plain values are one machine's."""
    return sample if isinstance(sample, Mapping) else {"": sample}


def median_ci(values: Sample, level: float | None = None, resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """The median with a percentile-bootstrap confidence interval; values by machine: the
    machines resampled too (`machines_bootstrap_ci`)."""
    return machines_bootstrap_ci(lambda median: median, [_by_machine(values)], level, resamples, seed)


def ratio_ci(numerator: Sample, denominator: Sample, level: float | None = None, resamples: int = RESAMPLES,
             seed: int = SEED) -> Interval:
    """median(numerator) / median(denominator), e.g. h2 over http1.0, with a bootstrap
    interval that resamples both groups independently (values by machine: the machines
    too, drawn alike where both groups have the same, `machines_bootstrap_ci`)."""
    groups = [_by_machine(numerator), _by_machine(denominator)]
    if np.median(np.concatenate([_array(values) for values in groups[1].values()])) == 0:
        raise ValueError("ratio over a zero median")
    return machines_bootstrap_ci(lambda top, bottom: top / bottom if bottom else math.nan, groups,
                                 level, resamples, seed)


@dataclass(frozen=True)
class MannWhitney:
    """The Mann-Whitney U test's statistic, two-sided p and how the p was found."""

    u: float  # U of the first sample: pairs where it is larger, ties counting a half
    pairs: int  # n1 n2
    p: float  # two-sided
    method: str  # "exact", "permutation" (ties, every split) or "asymptotic"

    @property
    def delta(self) -> float:
        """Cliff's delta, P(first > second) - P(first < second), from -1 to 1: how often one
        sample's loads beat the other's, whatever the distributions' shapes (2 U / n1 n2 - 1)."""
        return 2 * self.u / self.pairs - 1


def _method(n1: int, n2: int, ties: bool) -> str:
    if not ties:
        return "exact" if max(n1, n2) <= EXACT_MAX else "asymptotic"
    return "permutation" if math.comb(n1 + n2, n1) <= PERMUTATIONS_MAX else "asymptotic"


def mann_whitney(first: Sequence[float], second: Sequence[float]) -> MannWhitney:
    """Two-sided Mann-Whitney U test, its p exact wherever that is affordable: scipy's
    exact distribution of U without ties (up to EXACT_MAX loads a side), an exact
    permutation test with ties (up to PERMUTATIONS_MAX splits), else the normal
    approximation with tie and continuity correction."""
    a, b = _array(first), _array(second)
    pooled = np.concatenate([a, b])
    if np.all(pooled == pooled[0]):  # every value equal: no evidence of any difference
        return MannWhitney(a.size * b.size / 2, a.size * b.size, 1.0, "exact")
    method = _method(a.size, b.size, ties=np.unique(pooled).size < pooled.size)
    how: object = method
    if method == "permutation":  # as many resamples as splits: scipy enumerates them all
        how = _scipy_stats().PermutationMethod(n_resamples=math.comb(a.size + b.size, a.size))
    result = _scipy_stats().mannwhitneyu(a, b, alternative="two-sided", method=how)
    return MannWhitney(float(result.statistic), a.size * b.size, min(1.0, float(result.pvalue)), method)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1)."""
    ranked = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [0.0] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(ranked):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# What a test at this n can see ------------------------------------------------------


def _arrangement(u: int, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """Two tie-free samples of n1 and n2 values whose U (of the first) is `u`."""
    below = np.minimum(n2, np.maximum(0, u - n2 * np.arange(n1)))  # each first value: how many seconds below it
    return below - 0.5, np.arange(n2, dtype=float)


@functools.lru_cache(maxsize=256)
def needed_u(n1: int, n2: int, alpha: float) -> int | None:
    """The smallest U of the first sample for which the test, on tie-free samples of
    these sizes, gives a two-sided p below `alpha`; None when no U does (the smallest p
    these sizes can give, complete separation, is not below it)."""
    method = _method(n1, n2, ties=False)

    def p(u: int) -> float:
        first, second = _arrangement(u, n1, n2)
        return float(_scipy_stats().mannwhitneyu(first, second, alternative="two-sided", method=method).pvalue)

    top = n1 * n2
    if p(top) >= alpha:
        return None
    low = math.ceil(top / 2)  # p falls as U moves up from its mean: the first U past alpha
    while low < top:
        middle = (low + top) // 2
        low, top = (middle + 1, top) if p(middle) >= alpha else (low, middle)
    return top


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p the test can give at these sizes: complete separation
    (2 / C(n1 + n2, n1) where the p is exact)."""
    first, second = _arrangement(n1 * n2, n1, n2)
    method = _method(n1, n2, ties=False)
    return float(_scipy_stats().mannwhitneyu(first, second, alternative="two-sided", method=method).pvalue)


def detectable_slowdown(candidate: Sequence[float], base: Sequence[float], alpha: float) -> float | None:
    """The smallest slowdown s that the Mann-Whitney test could have found (p < alpha),
    with these sizes and the spread each side measured: each side is divided by its
    median (what is left is its spread), the candidate's is made 1 + s times slower, and
    s is the least for which U reaches `needed_u` (the exact test's attainable p-values at
    these sizes). Over the n1 n2 pairs, the candidate's i-th load beats the base's j-th once
    1 + s > base_j / candidate_i: s is the `needed_u`-th smallest of those ratios, less 1.
    None: no slowdown at all could have been found at these sizes (or a median is 0)."""
    c, b = _array(candidate), _array(base)
    c_median, b_median = float(np.median(c)), float(np.median(b))
    u = needed_u(c.size, b.size, alpha)
    if u is None or c_median <= 0 or b_median <= 0:
        return None
    with np.errstate(divide="ignore"):  # a candidate load of 0 never beats a base load: inf
        ratios = np.sort(((b / b_median)[None, :] / (c / c_median)[:, None]).ravel())
    needed = float(ratios[u - 1])
    return max(0.0, needed - 1) if math.isfinite(needed) else None
