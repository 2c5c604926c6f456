"""The seeds' claims catalogue: the verdict rule, and seeds it knows."""

from __future__ import annotations

import pytest

from pagebench.analysis.reproduce import claims
from pagebench.analysis.reproduce.claims import Rule
from pagebench.analysis.stats import Interval


@pytest.mark.parametrize("interval,verdict", [
    (Interval(0.55, 0.52, 0.58), "reproduced"), (Interval(0.3, 0.25, 0.35), "differs"),
    (Interval(0.5, 0.45, 0.56), "can't tell")])
def test_the_verdict_needs_the_whole_interval_on_one_side(interval, verdict):
    assert Rule(low=0.5).verdict(interval) == verdict


def test_unknown_seeds_are_one_line_errors():
    assert claims.unknown_seed(["000", "004"]) is None
    assert claims.unknown_seed(["005"]) == "unknown seed '005'; known: 000, 001, 002, 004"
    assert "same paper as 000" in claims.unknown_seed(["003"])


def test_every_claim_names_a_scenario_of_its_seed():
    assert all(claims.scenarios_of([c.seed]) and c.scenario in {s.name for s in claims.scenarios_of([c.seed])}
               for c in claims.CLAIMS)
    assert [s.name for s in claims.scenarios_of(["004"])] == ["004-window", "004-pool"]
