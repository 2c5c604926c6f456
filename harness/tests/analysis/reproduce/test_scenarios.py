"""The seeds' scenarios: valid specs in both variants, quick ones smaller."""

from __future__ import annotations

from pagebench.analysis.reproduce import claims, scenarios
from pagebench.analysis.reproduce.scenarios import ERA, TODAY
from pagebench.runner.prepare import prepare


def test_every_scenario_is_a_valid_spec_in_both_variants_and_quick_is_smaller():
    for scenario in scenarios.SCENARIOS:
        for variant in scenario.variants:
            full = [prepare(spec, scenario.name) for _, spec in scenario.runs(variant, False)]
            quick = [prepare(spec, scenario.name) for _, spec in scenario.runs(variant, True)]
            assert sum(len(p.loads) for p in quick) < sum(len(p.loads) for p in full), scenario.name
            for prepared in full:
                tls = prepared.spec.tls
                if scenario.seed in ("000", "004"):
                    assert tls == (["1.3"] if variant == TODAY else ["none"])  # era and the cleartext control
    era = dict(scenarios.SCENARIO_BY_NAME["004-window"].runs(ERA, False))[""]
    assert era["profiles"][0]["rwnd_bytes"] == 32767
    assert all(c.scenario in scenarios.SCENARIO_BY_NAME for c in claims.CLAIMS)
