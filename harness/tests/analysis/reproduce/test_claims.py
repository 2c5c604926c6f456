"""The seeds' claims catalogue: the verdict rule, and seeds it knows."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from pathlib import Path

import pytest

from pagebench.analysis.reproduce import claims, verdicts
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.rules import Rule
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
    assert [s.name for s in claims.scenarios_of(["004"])] == ["004-window", "004-pool", "004-load", "004-deep"]


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



#: The seeds' texts sit beside the repository on the development machines (../shared/seeds);
#: elsewhere (a fresh CI clone) the quotes cannot be checked and the test says so.
SEEDS_DIR = Path(os.environ.get("PAGEBENCH_SEEDS", Path(__file__).resolve().parents[4] / ".." / "shared" / "seeds"))


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason=f"the seeds' texts are not at {SEEDS_DIR}")
@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.key)
def test_every_claim_quotes_its_paper_at_its_line(claim):
    """The words are the paper's, verbatim but for " ... " elisions, starting at `line`."""
    [path] = SEEDS_DIR.glob(f"{claim.seed}_*.txt")
    lines = path.read_text().splitlines()
    assert claim.line > 0, f"{claim.key}: no line"
    near = _flat(" ".join(lines[claim.line - 1:claim.line + 40]))
    for fragment in re.split(r"\s*\.\.\.\s*", claim.words):
        assert _flat(fragment) in near, f"{claim.key}: {fragment!r} is not at line {claim.line} of {path.name}"
    assert _flat(re.split(r"\s*\.\.\.\s*", claim.words)[0])[:40] in _flat(" ".join(lines[claim.line - 1:claim.line + 2]))


def test_every_claim_states_its_conditions_and_falsifier():
    for claim in claims.CLAIMS:
        assert claim.condition and claim.ours and claim.falsifier(), claim.key
