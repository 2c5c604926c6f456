"""A reproduction's stopping rule at a look (`repetitions: auto`): the claims a scenario
serves, measured by their own measures on the loads stored so far, at the look's level
(`core/spec/sequential.py`: Bonferroni over the schedule's looks); the scenario's
`stopping` says whether their verdicts settle it (`scenarios.every_claim_decisive`).
Read-only: the runner asks it after a look's round and marks the rest stopped early.
"""

from __future__ import annotations

from collections.abc import Sequence

from pagebench.analysis.reproduce.claims import CLAIMS
from pagebench.analysis.reproduce.rules import Claim
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import SCENARIO_BY_NAME, Scenario
from pagebench.analysis.reproduce.verdicts import RunMap, gather, verdict
from pagebench.analysis.stats import Interval, confidence
from pagebench.results.store import Store


def settled(store: Store, runs: RunMap, scenario: str, variant: str, level: float) -> bool:
    """Whether the scenario's rule stops a run of `variant` now: `runs` are the scenario's
    runs so far, the one loading included."""
    data = gather(store, {key: run for key, run in runs.items() if key[0] == scenario}).get(scenario)
    served = [claim for claim in CLAIMS if claim.scenario == scenario]
    return data is not None and settles(SCENARIO_BY_NAME[scenario], served, data, variant, level)


def settles(scenario: Scenario, served: Sequence[Claim], data: Data, variant: str, level: float) -> bool:
    """The scenario's rule on the claims it serves, measured on `data` at `level`. A claim
    whose measure needs a run not yet made (a label to come: 004-pool's pool sizes) has
    no value yet, so it keeps the run loading."""
    if not served:
        return False
    with confidence(level):
        verdicts = [verdict(claim, _measured(claim, data, variant)) for claim in served]
    return scenario.stopping(verdicts)


def _measured(claim: Claim, data: Data, variant: str) -> Interval | None:
    """The claim's value on partial data; a measure that cannot make one yet (a lookup of
    a label or profile not yet loaded) has none, as when it returns None."""
    try:
        return claim.measure(data, variant)
    except (LookupError, ValueError, ZeroDivisionError):
        return None
