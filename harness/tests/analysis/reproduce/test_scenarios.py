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


def test_seed_004_runs_the_per_request_and_multiplexed_pools_where_the_pool_limits_neither():
    for name in ("004-pool", "004-load"):
        scenario = scenarios.SCENARIO_BY_NAME[name]
        for variant in scenario.variants:
            runs = scenario.runs(variant, False)
            largest = max(scenarios.pool_of(label)[1] for label, _ in runs)
            for label, spec in runs:
                assert spec["proxy"]["pool"] == "warm" and spec["warmup"] >= 1  # a warm-up opens the pool
                everything = scenarios.pool_of(label)[1] == largest
                assert spec["modes"] == (["http1.0", "keepalive", "h2"] if everything else ["keepalive"]), label
    load = scenarios.SCENARIO_BY_NAME["004-load"]
    assert load.variants == (ERA,)
    heaviest = [scenarios.pool_of(label) for label, _ in load.runs(ERA, False)
                if scenarios.pool_of(label)[0] == scenarios.LOAD_CLIENTS[-1]]
    assert sorted(c for _, c in heaviest) == [*scenarios.LOAD_SMALL_POOLS, scenarios.LOAD_POOL]
