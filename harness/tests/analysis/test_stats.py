"""Unit: pagebench.stats on known data: exact p-values worked by hand, scipy's methods
where they apply, the bootstrap's intervals, and what a test at a given n can see."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sp

from pagebench.analysis import stats

RNG = np.random.default_rng(7)
NORMAL = RNG.normal(300, 20, 200)
SKEWED = 250 + RNG.lognormal(3, 0.8, 60)
TIED = np.repeat([300.0, 310.0, 320.0, 350.0], [5, 7, 4, 4])


def exact_p(first: list[float], second: list[float]) -> Fraction:
    """The two-sided p of U by brute force: every split of the pooled values into groups of
    the first's and the second's sizes, ties counting a half (the permutation distribution),
    the smaller tail doubled (scipy's two-sided p)."""
    pooled, n1 = list(first) + list(second), len(first)

    def u(group: list[float], rest: list[float]) -> Fraction:
        return sum((Fraction(a > b) + Fraction(a == b, 2) for a in group for b in rest), Fraction(0))

    observed = u(first, second)
    splits = [u([pooled[i] for i in chosen], [pooled[i] for i in range(len(pooled)) if i not in chosen])
              for chosen in itertools.combinations(range(len(pooled)), n1)]
    tail = min(sum(value <= observed for value in splits), sum(value >= observed for value in splits))
    return min(Fraction(1), Fraction(2 * tail, len(splits)))


def test_iqr_matches_scipy():
    for data in (NORMAL, SKEWED, TIED):
        assert stats.iqr(data) == pytest.approx(np.subtract(*np.percentile(data, [75, 25])))


@pytest.mark.parametrize("first,second,p", [
    ([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0], Fraction(2, 252)),  # complete separation: 2 / C(10, 5)
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], Fraction(2, 20)),  # 3 each can never reach 0.05
    ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], Fraction(2, 70)),
    ([1.0, 2.0, 3.0, 5.0, 4.5], [4.0, 6.0, 7.0, 8.0, 9.0], None),  # U = 2: 2 x P(U <= 2)
    ([300.0, 305.0, 310.0, 320.0, 330.0, 331.0], [290.0, 299.0, 301.0, 304.0, 311.0], None),
])
def test_exact_p_values_of_small_samples_without_ties(first, second, p):
    expected = exact_p(first, second) if p is None else p
    got = stats.mann_whitney(first, second)
    assert got.method == "exact"
    assert got.p == pytest.approx(float(expected), rel=1e-12)
    assert got.p == pytest.approx(sp.mannwhitneyu(first, second, method="exact").pvalue, rel=1e-12)


def test_hand_worked_u_and_p():
    """Candidate 1..5 below 4.5..9 shares 2 of 25 pairs: U = 2; the splits of 10 values into
    5 and 5 with U <= 2 are 1 (U 0) + 1 (U 1) + 2 (U 2), each tail: p = 2 x 4 / 252."""
    got = stats.mann_whitney([1.0, 2.0, 3.0, 5.0, 4.5], [4.0, 6.0, 7.0, 8.0, 9.0])
    assert got.u == 2 and got.pairs == 25 and got.p == pytest.approx(8 / 252)
    assert got.delta == pytest.approx(2 * 2 / 25 - 1)


@pytest.mark.parametrize("first,second", [
    ([300.0, 300.0, 310.0, 320.0, 330.0], [300.0, 310.0, 310.0, 340.0, 350.0]),
    ([6.0, 6.0, 6.0, 7.0], [6.0, 7.0, 7.0, 7.0, 7.0]),  # request counts: ties everywhere
    ([1.0, 2.0, 2.0], [2.0, 3.0, 4.0, 4.0]),
])
def test_with_ties_at_small_n_the_p_is_the_exact_permutation_p(first, second):
    got = stats.mann_whitney(first, second)
    assert got.method == "permutation"
    assert got.p == pytest.approx(float(exact_p(first, second)), rel=1e-9)
    # scipy's "exact" ignores the ties: a different (wrong) p here
    assert sp.mannwhitneyu(first, second, method="exact").pvalue != pytest.approx(got.p, rel=1e-6)


@pytest.mark.parametrize("first,second", [(NORMAL[:60], NORMAL[60:130]), (TIED[:10], TIED[10:]), (TIED, TIED + 10)])
def test_large_or_tied_beyond_the_split_limit_is_the_normal_approximation(first, second):
    expected = sp.mannwhitneyu(first, second, alternative="two-sided", method="asymptotic", use_continuity=True)
    got = stats.mann_whitney(first, second)
    assert got.method == "asymptotic" and got.u == pytest.approx(expected.statistic)
    assert got.p == pytest.approx(expected.pvalue, rel=1e-9)


def test_identical_constants_say_no_difference():
    got = stats.mann_whitney([5.0] * 8, [5.0] * 8)
    assert got.p == 1.0 and got.delta == 0.0


@pytest.mark.parametrize("first,second", [(NORMAL[:20], NORMAL[20:45]), (TIED[:10], TIED[10:]),
                                          (SKEWED[:5], SKEWED[5:9])])
def test_cliffs_delta_matches_its_definition(first, second):
    pairs = [(a, b) for a in first for b in second]
    expected = (sum(a > b for a, b in pairs) - sum(a < b for a, b in pairs)) / len(pairs)
    assert stats.mann_whitney(first, second).delta == pytest.approx(expected)
    assert stats.mann_whitney(second, first).delta == pytest.approx(-expected)
    assert stats.mann_whitney([10.0, 11.0], [1.0, 2.0]).delta == 1.0


def test_median_ci_agrees_with_a_long_percentile_bootstrap():
    for data in (NORMAL, SKEWED):
        ours = stats.median_ci(data)
        theirs = sp.bootstrap((data,), np.median, method="percentile", n_resamples=20000,
                              rng=np.random.default_rng(1)).confidence_interval
        spread = theirs.high - theirs.low
        assert ours.estimate == pytest.approx(np.median(data))
        assert ours.low == pytest.approx(theirs.low, abs=0.15 * spread)
        assert ours.high == pytest.approx(theirs.high, abs=0.15 * spread)
        assert ours.low <= ours.estimate <= ours.high


def test_median_ci_is_seeded_and_covers_the_true_median():
    assert stats.median_ci(SKEWED) == stats.median_ci(SKEWED)
    assert stats.median_ci(SKEWED, seed=1) != stats.median_ci(SKEWED, seed=2)
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


def test_bootstrap_of_one_load_and_of_an_undefined_statistic():
    assert stats.median_ci([7.0]) == stats.Interval(7.0, 7.0, 7.0)
    assert stats.ratio_ci([2.0], [1.0, 1.0, 1.0]) == stats.Interval(2.0, 2.0, 2.0)
    # (a - 3) / (b - 3) is undefined wherever b's resampled median is 3: those are left out
    interval = stats.bootstrap_ci(lambda a, b: (a - 3) / (b - 3) if b != 3 else math.nan,
                                  [[5.0, 6.0, 7.0, 8.0], [3.0, 4.0, 5.0]])
    assert interval.estimate == pytest.approx((6.5 - 3) / (4 - 3)) and 0 < interval.low <= interval.high


def _loads(effect_sd: float, seed: int, n: int = 12, clients: int = 4) -> list[list[float]]:
    """n loads of `clients` pages each: a load's shared effect (its link, proxy and moment;
    sd `effect_sd`) plus each page's own noise (sd 10)."""
    rng = np.random.default_rng(seed)
    return [list(1000 + rng.normal(0, effect_sd) + rng.normal(0, 10, clients)) for _ in range(n)]


def _widths(clusters: list[list[float]]) -> tuple[float, float]:
    naive = stats.median_ci([v for cluster in clusters for v in cluster])
    clustered = stats.clustered_bootstrap_ci(lambda m: m, [clusters])
    assert clustered.estimate == naive.estimate
    return naive.high - naive.low, clustered.high - clustered.low


def test_the_clustered_bootstrap_is_wider_when_a_loads_pages_move_together():
    ratios = [clustered / naive for naive, clustered in (_widths(_loads(50, seed)) for seed in range(6))]
    assert min(ratios) > 1.4  # four pages of one load are about one page's worth of evidence


def test_the_clustered_bootstrap_is_as_wide_as_the_naive_one_on_independent_pages():
    ratios = [clustered / naive for naive, clustered in (_widths(_loads(0, seed)) for seed in range(6))]
    assert 0.8 < float(np.median(ratios)) < 1.25
    singles = [[v] for v in NORMAL[:40]]  # clusters of one page: the ordinary bootstrap's resamples
    naive, clustered = _widths(singles)
    assert clustered == pytest.approx(naive, rel=0.2)


def test_the_clustered_bootstrap_of_a_cut_resamples_each_group_and_keeps_a_single_cluster():
    base, new = _loads(50, 1), _loads(50, 2)
    new = [[v * 0.8 for v in cluster] for cluster in new]
    cut = stats.clustered_bootstrap_ci(lambda b, n: 1 - n / b, [base, new])
    assert cut.estimate == pytest.approx(1 - np.median(np.concatenate(new)) / np.median(np.concatenate(base)))
    assert cut.low < cut.estimate < cut.high
    assert stats.clustered_bootstrap_ci(lambda b, n: n / b, [[[2.0, 4.0]], [[3.0]]]) == stats.Interval(1.0, 1.0, 1.0)
    assert stats.clustered_bootstrap_ci(lambda m: m, [base]) == stats.clustered_bootstrap_ci(lambda m: m, [base])
    with pytest.raises(ValueError):
        stats.clustered_bootstrap_ci(lambda m: m, [[]])


# A run measured by several lab machines ------------------------------------------------


def _machines(shifts: list[float], seed: int, n: int = 30) -> dict[str, np.ndarray]:
    """n loads of each machine: the same spread (8 %), each machine's median moved by its shift."""
    rng = np.random.default_rng(seed)
    return {f"lab-{chr(97 + i)}": rng.lognormal(math.log(480 * (1 + shift)), 0.08, n) for i, shift in enumerate(shifts)}


def _width(interval: stats.Interval) -> float:
    return interval.high - interval.low


def test_one_machine_is_todays_interval_to_the_last_digit():
    assert stats.median_ci({"lab-a": SKEWED}) == stats.median_ci(SKEWED) == stats.bootstrap_ci(lambda m: m, [SKEWED])
    base, faster = NORMAL[:40], NORMAL[40:80] * 0.8
    assert stats.ratio_ci({"lab-a": faster}, {"lab-b": base}) == stats.ratio_ci(faster, base)  # one machine a side
    assert stats.median_ci({"lab-a": [7.0]}) == stats.Interval(7.0, 7.0, 7.0)


def test_two_machines_whose_medians_differ_widen_the_interval():
    for seed in range(4):
        machines = _machines([0.0, 0.1], seed)
        pooled = np.concatenate(list(machines.values()))
        naive, both = stats.median_ci(pooled), stats.median_ci(machines)
        assert both.estimate == naive.estimate == np.median(pooled)  # the estimate is the pooled median
        assert _width(both) > 1.4 * _width(naive)
        assert both.low < np.median(machines["lab-a"]) < np.median(machines["lab-b"]) < both.high


def test_machines_that_agree_widen_it_little():
    ratios = []
    for seed in range(6):
        machines = _machines([0.0, 0.0, 0.0], seed, n=20)
        ratios.append(_width(stats.median_ci(machines)) / _width(stats.median_ci(np.concatenate(list(machines.values())))))
    assert 0.8 < float(np.median(ratios)) < 1.4  # two stages count the loads' noise a little twice


def test_groups_of_the_same_machines_draw_them_alike_so_a_common_machine_effect_cancels():
    """h2 and http1.0 both measured on lab-a and lab-b, lab-b 10 % slower at both: their
    ratio does not depend on the machine, and its interval stays as narrow as the pooled
    one; drawn apart (machines named differently), it would carry lab-b's 10 %."""
    h1 = _machines([0.0, 0.1], 1)
    h2 = {name: values * 0.75 for name, values in _machines([0.0, 0.1], 2).items()}
    pooled = stats.ratio_ci(np.concatenate(list(h2.values())), np.concatenate(list(h1.values())))
    alike = stats.ratio_ci(h2, h1)
    apart = stats.ratio_ci({f"other-{name}": values for name, values in h2.items()}, h1)
    assert alike.estimate == apart.estimate == pooled.estimate
    assert alike.low < 0.75 < alike.high
    assert _width(alike) < 1.3 * _width(pooled) and _width(apart) > 1.5 * _width(alike)


def test_the_machines_bootstrap_is_seeded_and_refuses_nothing_to_draw():
    machines = _machines([0.0, 0.1], 5, n=8)
    assert stats.median_ci(machines) == stats.median_ci(machines)
    assert stats.median_ci(machines, seed=1) != stats.median_ci(machines, seed=2)
    uneven = stats.median_ci({"lab-a": [480.0] * 12, "lab-b": [530.0]})  # a machine of one load is drawn too
    assert (uneven.estimate, uneven.low, uneven.high) == (480.0, 480.0, 530.0)
    with pytest.raises(ValueError):
        stats.median_ci({})
    with pytest.raises(ValueError):
        stats.median_ci({"lab-a": [1.0], "lab-b": []})


def test_holm_adjustment():
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5]) == [0.5]
    assert stats.holm([0.9, 0.8]) == [1.0, 1.0]


def test_empty_input_is_an_error():
    with pytest.raises(ValueError):
        stats.median_ci([])


# What a test at a given n can see ----------------------------------------------------


def test_needed_u_is_the_first_u_whose_exact_p_is_below_alpha():
    for n1, n2, alpha in ((5, 5, 0.05), (4, 6, 0.05), (10, 10, 0.05), (10, 10, 0.05 / 40), (8, 12, 0.01)):
        u = stats.needed_u(n1, n2, alpha)
        below, at = (sp.mannwhitneyu(*stats._arrangement(k, n1, n2), method="exact").pvalue for k in (u - 1, u))
        assert at < alpha <= below
    assert stats.needed_u(5, 5, 0.05) == 23  # U = 23: p = 2 x 4/252 = 0.032; U = 22: 2 x 7/252 = 0.056
    assert stats.needed_u(3, 3, 0.05) is None and stats.smallest_p(3, 3) == pytest.approx(0.1)
    assert stats.needed_u(5, 5, 0.05 / 40) is None and stats.smallest_p(5, 5) == pytest.approx(2 / 252)


def test_the_detectable_slowdown_is_where_a_slowed_copy_becomes_significant():
    """Made `s` times slower (with each side's own spread), the candidate turns significant
    just above the detectable slowdown, and not just below it."""
    rng = np.random.default_rng(11)
    for n1, n2, alpha in ((5, 5, 0.05), (10, 10, 0.05), (7, 12, 0.01)):
        candidate, base = rng.lognormal(6, 0.05, n1), rng.lognormal(6, 0.05, n2)
        s = stats.detectable_slowdown(candidate, base, alpha)
        assert s is not None and 0 < s < 0.5
        shape = candidate / np.median(candidate) * np.median(base)
        assert stats.mann_whitney(shape * (1 + s) * 1.0001, base).p < alpha
        assert stats.mann_whitney(shape * (1 + s) * 0.9999, base).p >= alpha


def test_the_detectable_slowdown_grows_with_the_spread_and_shrinks_with_n():
    rng = np.random.default_rng(3)
    quiet, noisy = rng.normal(1, 0.02, 40), rng.normal(1, 0.10, 40)
    assert stats.detectable_slowdown(quiet[:5], quiet[5:10], 0.05) < stats.detectable_slowdown(
        noisy[:5], noisy[5:10], 0.05)
    assert stats.detectable_slowdown(noisy[:20], noisy[20:], 0.05) < stats.detectable_slowdown(
        noisy[:5], noisy[5:10], 0.05)
    assert stats.detectable_slowdown([300.0] * 3, [300.0] * 3, 0.05) is None  # 3 each: no p below 0.05
    assert stats.detectable_slowdown([300.0] * 5, [300.0] * 5, 0.05) == 0.0  # no spread: any slowdown separates


def test_intervals_take_the_level_a_sequential_look_sets_unless_a_call_names_its_own():
    values = [100.0, 104, 97, 110, 93, 101, 99, 120, 95, 102]
    usual = stats.median_ci(values)
    with stats.confidence(0.999):
        wide = stats.median_ci(values)
        named = stats.median_ci(values, level=0.95)
    assert wide.low <= usual.low and wide.high >= usual.high and (wide.low, wide.high) != (usual.low, usual.high)
    assert named == usual == stats.median_ci(values)  # the level is back to 95 % after the look
    with pytest.raises(ValueError, match="between 0 and 1"):
        with stats.confidence(1.0):
            pass


def test_a_run_starts_without_importing_scipy_stats():
    """scipy.stats takes 1-2 s to import: `pagebench run` (and every other command that
    imports this module but compares nothing) must not pay it before its first load."""
    code = ("import sys, pagebench.cli.main, pagebench.cli.run, pagebench.runner.run; "
            "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert stats.iqr([1.0, 2.0, 3.0, 4.0]) == 1.5  # imported on first use
