"""The stopping rule of a plain `pagebench run` with `repetitions: auto`, and the one
test every sequential rule shares: is an interval decisive against a range?

The rule's schedule and level are the spec's (`core/spec/sequential.py`: looks fixed in
advance, each at the Bonferroni level 1 - alpha / K). What it asks at a look, for a run
that is not a reproduction (`analysis/reproduce/stopping.py` asks the claims instead):
every mode against the spec's first mode, in the same other conditions (site, profile,
cache, ...), by the ratio of their median load times, must be decisively the same (the
whole interval within 1 +- tolerance) or decisively different (the whole interval
outside it); a condition with no such counterpart (a run of one mode) must have its
median known to within +- tolerance. A condition with fewer than two usable loads is
never decisive (one load's interval is a point).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pagebench.analysis.stats import Interval, confidence, median_ci, ratio_ci
from pagebench.core.modes import Mode
from pagebench.core.records import Condition
from pagebench.core.spec.model import parse
from pagebench.core.spec.sequential import FIRST_LOOK
from pagebench.results.store import Store


def decisive(interval: Interval | None, low: float, high: float) -> bool:
    """Whether an interval settles a range: wholly inside [low, high] or wholly outside.
    No interval, or an undefined end, settles nothing."""
    if interval is None or interval.low != interval.low or interval.high != interval.high:  # nan
        return False
    inside = low <= interval.low and interval.high <= high
    outside = interval.high < low or interval.low > high
    return inside or outside


def settled(times: Mapping[Condition, Sequence[float]], base: Mode, tolerance: float, level: float) -> bool:
    """The generic rule on each condition's load times (ms), at one look's `level`."""
    with confidence(level):
        for condition, mine in times.items():
            if len(mine) < FIRST_LOOK:  # one load's interval is a point: it settles nothing
                return False
            twin = replace(condition, mode=base)
            if condition.mode != base and twin in times:
                if len(times[twin]) < FIRST_LOOK or not decisive(ratio_ci(mine, times[twin]), 1 - tolerance, 1 + tolerance):
                    return False
            elif not any(c.mode != base and replace(c, mode=base) == condition for c in times):
                middle = median_ci(mine)  # alone: its median known to within +- tolerance
                if middle.estimate <= 0 or not decisive(
                        Interval(1.0, middle.low / middle.estimate, middle.high / middle.estimate),
                        1 - tolerance, 1 + tolerance):
                    return False
    return True


def run_settled(store: Store, run_id: str) -> bool:
    """The generic rule on a stored run's measured loads so far (ok and unflagged), at
    its spec's level."""
    spec = parse(store.experiment(run_id).spec, f"run {run_id}")
    if spec.sequential is None:
        raise ValueError(f"run {run_id}: its repetitions are a number: it has no stopping rule")
    times: dict[Condition, list[float]] = {c.condition: [] for c in store.conditions(run_id)}
    for load in store.loads(run_id):
        if load.ok and not load.flagged and load.load_ms is not None:
            times[load.condition].append(load.load_ms)
    return settled(times, spec.resolved_modes[0], spec.sequential.tolerance, spec.sequential.level)
