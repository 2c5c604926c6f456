"""The seeds' claims catalogue: the verdict rule, and seeds it knows."""

from __future__ import annotations

import dataclasses
import math

import pytest

from pagebench.analysis.reproduce import claims, verdicts
from pagebench.analysis.reproduce.measures import Data
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
    assert [s.name for s in claims.scenarios_of(["004"])] == ["004-window", "004-pool", "004-load"]


def test_a_rule_states_its_falsifier():
    assert Rule(0.4, 0.6).falsifier("%") == "the whole interval under 40 % or over 60 %"
    assert Rule(high=2.4).falsifier("Mbit/s") == "the whole interval over 2.4 Mbit/s"
    assert Rule().falsifier("x").startswith("nothing")


def test_every_claim_can_come_out_differs():
    """A synthetic interval just past each bound of the rule turns the row to "differs"."""
    for claim in claims.CLAIMS:
        bounds = [b for b in (claim.rule.low, claim.rule.high) if math.isfinite(b)]
        assert bounds, claim.key
        for bound in bounds:
            past = bound - 0.01 if bound == claim.rule.low else bound + 0.01
            assert claim.rule.verdict(Interval(past, past, past)) == "differs", claim.key


def test_a_demonstrated_claim_never_says_reproduced():
    inside = Interval(2.1, 2.05, 2.15)
    claim = dataclasses.replace(claims.CLAIM_BY_KEY["004-window"], demonstrated="it measures the clamp it set",
                                measure=lambda data, variant: inside)
    [row, _] = verdicts.evaluate([claim], {"004-window": Data({})})
    assert (row.verdict, row.reason) == ("demonstrated", "it measures the clamp it set")

