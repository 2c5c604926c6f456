"""Unit: pagebench.stats against scipy/numpy on known data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from pagebench.analysis import stats

RNG = np.random.default_rng(7)
NORMAL = RNG.normal(300, 20, 200)
SKEWED = 250 + RNG.lognormal(3, 0.8, 60)
TIED = np.repeat([300.0, 310.0, 320.0, 350.0], [5, 7, 4, 4])


def test_iqr_matches_scipy():
    for data in (NORMAL, SKEWED, TIED):
        assert stats.iqr(data) == pytest.approx(sp.iqr(data))


@pytest.mark.parametrize("first,second", [
    (NORMAL[:20], NORMAL[20:45]),
    (NORMAL[:20], NORMAL[:20] + 15),
    (SKEWED[:30], SKEWED[30:]),
    (TIED[:10], TIED[10:]),
    (TIED, TIED + 10),
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]),
])
def test_mann_whitney_matches_scipy_asymptotic(first, second):
    expected = sp.mannwhitneyu(first, second, alternative="two-sided", method="asymptotic", use_continuity=True)
    got = stats.mann_whitney(first, second)
    assert got.u == pytest.approx(expected.statistic)
    assert got.p == pytest.approx(expected.pvalue, rel=1e-9)


def test_mann_whitney_of_identical_constants_says_no_difference():
    assert stats.mann_whitney([5.0] * 8, [5.0] * 8).p == 1.0


@pytest.mark.parametrize("first,second", [(NORMAL[:20], NORMAL[20:45]), (TIED[:10], TIED[10:]),
                                          (SKEWED[:5], SKEWED[5:9])])
def test_cliffs_delta_matches_its_definition(first, second):
    pairs = [(a, b) for a in first for b in second]
    expected = (sum(a > b for a, b in pairs) - sum(a < b for a, b in pairs)) / len(pairs)
    assert stats.cliffs_delta(first, second) == pytest.approx(expected)
    assert stats.cliffs_delta(second, first) == pytest.approx(-expected)


def test_cliffs_delta_extremes():
    assert stats.cliffs_delta([10.0, 11.0], [1.0, 2.0]) == 1.0
    assert stats.cliffs_delta([1.0, 2.0], [1.0, 2.0]) == 0.0


def test_median_ci_agrees_with_scipy_percentile_bootstrap():
    for data in (NORMAL, SKEWED):
        ours = stats.median_ci(data)
        theirs = sp.bootstrap((data,), np.median, method="percentile", n_resamples=20000,
                              random_state=np.random.default_rng(1)).confidence_interval
        spread = theirs.high - theirs.low
        assert ours.estimate == pytest.approx(np.median(data))
        assert ours.low == pytest.approx(theirs.low, abs=0.15 * spread)
        assert ours.high == pytest.approx(theirs.high, abs=0.15 * spread)
        assert ours.low <= ours.estimate <= ours.high


def test_median_ci_is_seeded_and_covers_the_true_median():
    assert stats.median_ci(SKEWED) == stats.median_ci(SKEWED)
    misses = 0
    for trial in range(200):
        sample = np.random.default_rng(100 + trial).normal(300, 20, 25)
        interval = stats.median_ci(sample, resamples=1000, seed=trial)
        misses += not interval.low <= 300 <= interval.high
    assert misses <= 20  # a 95 % interval misses about 10 of 200 (percentile bootstrap runs a little narrow)


def test_ratio_ci():
    base = RNG.normal(400, 10, 30)
    faster = base * 0.75
    interval = stats.ratio_ci(faster, base)
    assert interval.estimate == pytest.approx(np.median(faster) / np.median(base))
    assert interval.low < 0.75 < interval.high and interval.high - interval.low < 0.1
    with pytest.raises(ValueError):
        stats.ratio_ci([1.0], [0.0, 0.0])


def test_empty_input_is_an_error():
    with pytest.raises(ValueError):
        stats.median_ci([])
