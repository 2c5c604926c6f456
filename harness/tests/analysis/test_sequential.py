"""The generic stopping rule of `repetitions: auto` (a plain run): decisive early for a
clear effect, to the cap for one no larger than its interval, and, with its looks at the
Bonferroni level, wrong at most about alpha of the time at the edge of the tolerance,
where looking at 95 % after every round is wrong far more often (a seeded simulation)."""

import numpy as np
import pytest

from pagebench.analysis.sequential import decisive, run_settled, settled
from pagebench.analysis.stats import Interval
from pagebench.core.modes import H2, HTTP10
from pagebench.core.records import Condition
from pagebench.core.spec.sequential import Sequential
from pagebench.results.store import Store
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan

BASE = Condition("s", HTTP10, "direct", "cable", "cold")
NEW = Condition("s", H2, "direct", "cable", "cold")


def sequence(rng: np.random.Generator, ratio: float, rule: Sequential, every: bool = False,
             level: float | None = None) -> int | None:
    """Load both conditions round by round (log-normal times, 10 % spread) and look at the
    rule's looks (or every round from 2, at `level`): the round it stopped at, or None
    when it reached the cap undecided."""
    new: list[float] = []
    base: list[float] = []
    for rounds in range(1, rule.cap + 1):
        new.append(1000 * ratio * float(np.exp(0.1 * rng.standard_normal())))
        base.append(1000 * float(np.exp(0.1 * rng.standard_normal())))
        looks = rounds >= 2 if every else rounds in rule.schedule
        if looks and settled({NEW: new, BASE: base}, HTTP10, rule.tolerance, level or rule.level):
            return rounds
    return None


@pytest.mark.parametrize(("interval", "expected"), [
    (Interval(1.0, 0.97, 1.04), True),  # inside 1 +- 0.05: the same
    (Interval(1.2, 1.1, 1.3), True),  # wholly outside: different
    (Interval(1.04, 1.01, 1.07), False),  # straddles the edge
    (Interval(1.0, float("nan"), 1.1), False),
    (None, False),
])
def test_an_interval_is_decisive_wholly_inside_or_wholly_outside(interval, expected):
    assert decisive(interval, 0.95, 1.05) is expected


def test_a_clear_effect_stops_at_the_first_look_and_none_within_the_spread_reaches_the_cap():
    rule = Sequential(cap=10)
    rng = np.random.default_rng(3)
    stops = [sequence(rng, 1.5, rule) for _ in range(9)]
    assert None not in stops and sorted(stops)[4] == 3  # decisive, mostly at the first look
    undecided = [sequence(rng, 1.03, rule) for _ in range(5)]
    assert undecided.count(None) >= 4  # 3 % against 5 %: closer than ten loads can tell


def test_one_load_settles_nothing_and_a_lone_mode_needs_its_median_within_the_tolerance():
    assert not settled({NEW: [1000.0], BASE: [2000.0]}, HTTP10, 0.05, 0.95)
    assert settled({BASE: [1000.0, 1001, 999, 1000, 1002]}, HTTP10, 0.05, 0.95)
    assert not settled({BASE: [1000.0, 1500, 700, 1200, 900]}, HTTP10, 0.05, 0.95)


def test_the_error_rate_at_the_edge_of_the_tolerance_stays_near_alpha_despite_the_looks():
    rule = Sequential(cap=8)  # looks after rounds 3, 5 and 8, each at 1 - 0.05 / 3
    runs = 80
    rng = np.random.default_rng(20261126)
    corrected = sum(sequence(rng, 1.05, rule) is not None for _ in range(runs)) / runs
    rng = np.random.default_rng(20261126)
    naive = sum(sequence(rng, 1.05, rule, every=True, level=0.95) is not None for _ in range(runs)) / runs
    # at exactly 1 + tolerance, any decisive verdict is an error: at most alpha (+ 2 sd of the simulation)
    assert corrected <= rule.alpha + 2 * (rule.alpha * (1 - rule.alpha) / runs) ** 0.5
    assert naive > 2 * max(corrected, rule.alpha)  # looking at 95 % after every round inflates it


def test_a_stored_run_is_judged_on_its_ok_unflagged_loads(tmp_path):
    plan = make_plan()
    store = Store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    spec = {**SPEC, "repetitions": {"cap": 3}}
    store.create_experiment("auto", spec, META, plan, PROFILES)
    measured = [p for p in plan if not p.warmup]
    assert not run_settled(store, "auto")  # nothing loaded yet
    for k, planned in enumerate(measured):
        slow = planned.condition.mode == H2 and planned.repetition == 2  # flagged: left out
        store.record_loads("auto", planned, [fake_load(planned, 5000.0 if slow else 1000.0 + k % 2, flagged=slow)],
                           started_at=float(k))
    assert run_settled(store, "auto")  # h2 the same as keep-alive within 5 %, in every profile
    store.close()
