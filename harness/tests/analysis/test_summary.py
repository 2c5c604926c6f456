"""The one summary: statistics, what is left out (and counted), the JSON contract."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from pagebench.analysis.stats import holm, mann_whitney
from pagebench.analysis.summary import (
    METRICS, MachineSummary, Stats, describe, halves, label, summarize, without_twins)
from pagebench.core.encodings import GZIP
from pagebench.core import modes
from pagebench.core.quantiles import percentile
from pagebench.core.records import Condition, PlannedLoad
from pagebench.results.rows import LoadRow
from tests.helpers import load_row

H2 = Condition("demo", modes.H2, "direct", "3g", "cold")
KEEPALIVE = Condition("demo", modes.KEEPALIVE, "direct", "3g", "cold")


NONE = {"median": None, "p90": None, "min": None, "max": None}


def plan_for(*counts: tuple[Condition, int, int]) -> list[PlannedLoad]:
    """(condition, warm-ups, measured) -> a plan."""
    plan: list[PlannedLoad] = []
    for condition, warmups, measured in counts:
        plan += [PlannedLoad(len(plan) + i, condition, -1 - i, True) for i in range(warmups)]
        plan += [PlannedLoad(len(plan) + i, condition, i, False) for i in range(measured)]
    return plan


def test_percentile_interpolates_linearly_like_numpy():
    assert percentile([10, 20, 30, 40], 50) == 25
    assert percentile([10, 20, 30, 40], 90) == pytest.approx(37)  # rank 2.7: 30 + 0.7 * 10
    assert percentile([40, 10, 30, 20], 90) == pytest.approx(37)  # order does not matter
    assert percentile(list(range(1, 11)), 90) == pytest.approx(9.1)  # rank 8.1
    assert percentile([7.5], 90) == 7.5
    assert percentile([1, 2, 3], 0) == 1 and percentile([1, 2, 3], 100) == 3
    with pytest.raises(ValueError):
        percentile([], 50)


def test_describe_skips_none_and_is_null_when_nothing_is_left():
    assert describe([1200.0, None, 1000.0, 1400.0, None]) == Stats(1200.0, pytest.approx(1360.0), 1000.0, 1400.0)
    assert describe([None, None]) == Stats(None, None, None, None) == describe([])


def test_load_over_bound_is_the_median_ratio_of_usable_loads():
    loads = [load_row(H2, 1000.0 + 100 * i, bound_ms=800.0) for i in range(5)]
    loads.append(load_row(H2, 9000.0, bound_ms=800.0, flagged=True))
    [condition] = summarize("r1", loads, plan_for((H2, 1, 6))).conditions
    assert condition.load_over_bound.median == pytest.approx(1200 / 800)
    assert condition.load_over_bound.max == pytest.approx(1400 / 800)


def test_json_contract_keys_exactly():
    loads = [load_row(H2, 1000.0 + i) for i in range(5)]
    result = summarize("r1", loads, plan_for((H2, 1, 5))).as_json()
    assert set(result) == {"run", "conditions"} and result["run"] == "r1"
    [condition] = result["conditions"]
    assert set(condition) == {"site", "mode", "topology", "profile", "cache", "tls", "encoding", "version", "device",
                              "planned", "n", "flagged", "failed", "metrics", "load_over_bound"}
    assert (condition["encoding"], condition["version"], condition["device"]) == ("identity", 1, "desktop")
    assert condition["load_over_bound"] == NONE  # no bounds
    assert set(condition["metrics"]) == {"load_ms", "ttfb_ms", "dcl_ms", "fcp_ms", "lcp_ms", "first_visual_change_ms",
                                         "speed_index_ms", "visual_complete_85_ms", "visual_complete_95_ms",
                                         "visual_complete_99_ms", "last_visual_change_ms", "cls", "tbt_ms",
                                         "long_tasks", "inp_ms", "connections_browser",
                                         "connections_link", "connections_server", "connections_proxy",
                                         "connections_proxy_reused", "cache_hits", "requests",
                                         "bytes"} == set(METRICS)
    for stats in condition["metrics"].values():
        assert set(stats) == {"median", "p90", "min", "max"}
    json.dumps(result, allow_nan=False)  # plain JSON
    assert condition["metrics"]["dcl_ms"] == NONE
    assert condition["metrics"]["connections_browser"] == {"median": 1.0, "p90": 1.0, "min": 1, "max": 1}
    assert json.dumps(condition["metrics"]["connections_browser"]) == '{"median": 1.0, "p90": 1.0, "min": 1, "max": 1}'


def test_flagged_and_failed_loads_are_excluded_and_counted():
    loads = [load_row(H2, v) for v in (1000.0, 1100.0, 1200.0, 1300.0)]
    loads += [load_row(H2, 9000.0, flagged=True), load_row(H2, 50.0, flagged=True), load_row(H2, None, ok=False)]
    [condition] = summarize("r1", loads, plan_for((H2, 0, 7))).conditions
    assert (condition.n, len(condition.flagged), len(condition.failed), condition.planned) == (4, 2, 1, 7)
    assert condition.metrics["load_ms"] == Stats(1150.0, pytest.approx(1270.0), 1000.0, 1300.0)
    assert [r.load_ms for r in condition.flagged] == [9000.0, 50.0] and condition.failed[0].ok is False
    assert condition.values("load_ms") == [1000.0, 1100.0, 1200.0, 1300.0]


def test_warmups_are_excluded_from_counts_and_statistics():
    loads = [load_row(H2, 5000.0, warmup=True), load_row(H2, 4000.0, warmup=True, flagged=True)]
    loads += [load_row(H2, v, connections_browser=c) for v, c in ((1000.0, 2), (2000.0, 2), (3000.0, 3))]
    [condition] = summarize("r1", loads, plan_for((H2, 2, 3))).conditions
    assert (condition.n, len(condition.flagged), condition.planned) == (3, 0, 3)
    assert condition.metrics["load_ms"].max == 3000.0
    assert condition.metrics["connections_browser"] == Stats(2, pytest.approx(2.8), 2, 3)


def test_conditions_are_grouped_and_in_a_stable_order():
    cable_warm = Condition("demo", modes.H2, "direct", "cable", "warm")
    proxy = Condition("demo", modes.KEEPALIVE, "proxy", "3g", "cold")
    other_site = Condition("alpha", modes.H3, "direct", "3g", "cold")
    conditions = [cable_warm, H2, proxy, KEEPALIVE, other_site]
    loads = [load_row(c, 1000.0 * (i + 1)) for i, c in enumerate(conditions)]
    result = summarize("r1", reversed(loads), plan_for(*[(c, 0, 1) for c in conditions]))
    assert [(c.condition.site, c.condition.mode.name, c.condition.topology, c.condition.profile, c.condition.cache)
            for c in result.conditions] == [
        ("alpha", "h3", "direct", "3g", "cold"),
        ("demo", "keepalive", "direct", "3g", "cold"),  # modes in MODES order: http1.0, keepalive, ..., h2, h3
        ("demo", "keepalive", "proxy", "3g", "cold"),
        ("demo", "h2", "direct", "3g", "cold"),
        ("demo", "h2", "direct", "cable", "warm"),
    ]
    assert [c.metrics["load_ms"].median for c in result.conditions] == [5000.0, 4000.0, 3000.0, 2000.0, 1000.0]


def test_planned_conditions_without_loads_are_shown_empty():
    result = summarize("r1", [load_row(H2, 1000.0)], plan_for((H2, 1, 5), (KEEPALIVE, 1, 5)))
    empty = next(c for c in result.as_json()["conditions"] if c["mode"] == "keepalive")
    assert (empty["n"], empty["flagged"], empty["failed"], empty["planned"]) == (0, 0, 0, 5)
    assert empty["metrics"]["load_ms"] == NONE


def test_warnings_say_incomplete_and_cant_tell():
    loads = [load_row(H2, 1000.0 + i) for i in range(5)]
    loads += [load_row(KEEPALIVE, 900.0), load_row(KEEPALIVE, 1.0, flagged=True)]
    summary = summarize("r1", loads, plan_for((H2, 0, 5), (KEEPALIVE, 0, 5)))
    assert summary.warnings() == [
        "demo keepalive direct 3g cold tls1.3: 2 of 5 planned loads recorded: resume the run; "
        "n=1 (1 flagged or failed left out): can't tell: n too small (want at least 5)"
    ]


def test_label():
    assert label(Condition("demo", modes.H2, "proxy", "3g", "warm", "1.2")) == "demo h2 proxy 3g warm tls1.2"


def test_what_varies_and_what_every_condition_shares():
    cable = Condition("demo", modes.H2, "direct", "cable", "cold", encoding=GZIP)
    summary = summarize("r1", [load_row(H2, 1000.0), load_row(cable, 900.0)])
    assert summary.varying() == ["profile", "encoding"]
    assert summary.constant() == ["site demo", "mode h2", "topology direct", "cache cold", "tls 1.3"]
    same = summarize("r1", [load_row(H2, 1000.0), load_row(H2, 900.0)])
    assert same.varying() == ["mode"] and "mode h2" not in same.constant()  # the mode names the rows
    assert summarize("r1", []).constant() == []


def test_encodings_and_versions_are_conditions_of_their_own():
    gzip = Condition("demo", modes.H2, "direct", "3g", "warm", encoding=GZIP, version=2)
    identity = Condition("demo", modes.H2, "direct", "3g", "warm", version=2)
    loads = [load_row(gzip, 800.0), load_row(identity, 1000.0), load_row(H2, 1200.0)]
    result = summarize("r1", loads, plan_for((gzip, 0, 1), (identity, 0, 1), (H2, 0, 1)))
    assert [(c.condition.cache, c.condition.encoding.name, c.condition.version, c.metrics["load_ms"].median)
            for c in result.conditions] == [("cold", "identity", 1, 1200.0), ("warm", "identity", 2, 1000.0),
                                             ("warm", "gzip", 2, 800.0)]
    assert [label(c.condition) for c in result.conditions] == [
        "demo h2 direct 3g cold tls1.3", "demo h2 direct 3g warm tls1.3 v2", "demo h2 direct 3g warm tls1.3 gzip v2"]


def test_devices_are_conditions_of_their_own_desktop_first_and_named_when_not_desktop():
    phone = replace(H2, device="moto-g-power")
    result = summarize("r1", [load_row(phone, 2400.0), load_row(H2, 1200.0)], plan_for((phone, 0, 1), (H2, 0, 1)))
    assert [(c.condition.device, c.metrics["load_ms"].median) for c in result.conditions] == [
        ("desktop", 1200.0), ("moto-g-power", 2400.0)]
    assert [label(c.condition) for c in result.conditions] == [
        "demo h2 direct 3g cold tls1.3", "demo h2 direct 3g cold tls1.3 moto-g-power"]
    assert result.varying() == ["device"] and "device desktop" not in result.constant()
    only = summarize("r1", [load_row(phone, 2400.0)])
    assert only.constant()[-1] == "device moto-g-power"  # the one device, not the default: said once


def test_a_run_with_an_interleaved_baseline_halves_into_its_baseline_and_its_own_sites():
    twin, other = replace(H2, site="demo.baseline"), replace(H2, site="modern")
    loads = ([load_row(H2, 1000.0 + i) for i in range(5)] + [load_row(twin, 900.0 + i) for i in range(5)]
             + [load_row(other, 500.0)])
    summary = summarize("r1", loads, plan_for((H2, 0, 5), (twin, 0, 5), (other, 0, 1)))
    base, own = halves(summary, {"demo.baseline": "demo"})
    assert (base.run, own.run) == ("r1", "r1")
    assert [c.condition for c in base.conditions] == [c.condition for c in own.conditions] == [H2]
    assert (base.conditions[0].metrics["load_ms"].median, own.conditions[0].metrics["load_ms"].median) == (902, 1002)
    assert [c.condition.site for c in without_twins(summary, {"demo.baseline": "demo"}).conditions] == [
        "demo", "modern"]


def test_loads_stopped_early_are_not_owed_and_loads_missing_still_are(tmp_path):
    from pagebench.analysis.summary import of_run
    from pagebench.results.store import Store
    from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan

    plan = make_plan(reps=3, warmups=0)  # 4 conditions x 3
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as store:
        store.create_experiment("auto", SPEC, META, plan, PROFILES)
        for planned in plan[:8]:
            store.record_loads("auto", planned, [fake_load(planned)], started_at=1.0)
        assert any("planned loads recorded: resume the run" in w for w in of_run(store, "auto").warnings())
        store.stop("auto", [p.seq for p in plan[8:]])
        summary = of_run(store, "auto")
    assert {c.planned for c in summary.conditions} == {2} and not any("resume" in w for w in summary.warnings())


# A run measured by several lab machines (a sharded run) ----------------------------------


def on_machines(condition: Condition, times: dict[str, list[float]]) -> list[LoadRow]:
    """Used loads of `condition`, each machine's times measured by it (machine None: the run's host)."""
    return [load_row(condition, float(t), machine=machine, ttfb_ms=300.0 + (machine == "lab-b"))
            for machine, values in times.items() for t in values]


def lognormal(seed: int, n: int = 30, shifts: tuple[float, ...] = (0.0, 0.0)) -> list[list[float]]:
    """n load times per machine around 480 ms (8 % spread), each machine's moved by its shift."""
    rng = np.random.default_rng(seed)
    return [list(rng.lognormal(math.log(480 * (1 + shift)), 0.08, n)) for shift in shifts]


def test_a_one_machine_run_reports_as_before_byte_for_byte():
    times = [1000.0 + 7 * i for i in range(6)]
    unnamed = summarize("r1", on_machines(H2, {None: times}), plan_for((H2, 0, 6)))
    named = summarize("r1", on_machines(H2, {"lab-a": times}), plan_for((H2, 0, 6)))
    assert json.dumps(named.as_json()) == json.dumps(unnamed.as_json())
    assert "machines" not in unnamed.as_json()["conditions"][0]
    assert unnamed.conditions[0].machine_medians() == {} and unnamed.machine_warnings() == []
    assert named.conditions[0].by_machine("load_ms") == {"lab-a": times}
    assert unnamed.conditions[0].by_machine("load_ms") == {"(run host)": times}


def test_two_machines_add_their_medians_beside_the_metrics():
    loads = on_machines(H2, {"lab-b": [500.0, 510.0, 520.0], "lab-a": [400.0, 420.0]})
    loads.append(load_row(H2, 9000.0, machine="lab-c", flagged=True))  # flagged: not a machine of the used loads
    [condition] = summarize("r1", loads, plan_for((H2, 0, 6))).as_json()["conditions"]
    assert list(condition)[list(condition).index("metrics") + 1] == "machines"  # beside `metrics`, whose shape stays
    assert list(condition["machines"]) == ["lab-a", "lab-b"]  # by name
    a, b = condition["machines"]["lab-a"], condition["machines"]["lab-b"]
    assert set(a) == {"n", "medians"} and set(a["medians"]) == set(METRICS)
    assert (a["n"], a["medians"]["load_ms"], a["medians"]["ttfb_ms"], a["medians"]["lcp_ms"]) == (2, 410.0, 300.0, None)
    assert (b["n"], b["medians"]["load_ms"], b["medians"]["ttfb_ms"]) == (3, 510.0, 301.0)
    assert condition["metrics"]["load_ms"]["median"] == 500.0 and condition["n"] == 5  # all machines together
    json.dumps(condition, allow_nan=False)
    [summary] = summarize("r1", loads).conditions
    assert summary.machine_medians()["lab-a"] == MachineSummary(2, a["medians"])


def test_a_machine_ten_percent_slower_is_named_with_both_medians_and_its_p():
    fast, slow = lognormal(1, shifts=(0.0, 0.1))
    summary = summarize("r1", on_machines(H2, {"lab-a": fast, "lab-b": slow}))
    p = mann_whitney(slow, fast).p
    assert p < 1e-4  # far beyond alpha 0.01: the test does not hang on this seed
    assert summary.warnings() == summary.machine_warnings() == [
        f"demo h2 direct 3g cold tls1.3: machine lab-b's load_ms differs from lab-a's (median "
        f"{np.median(slow):.0f} vs {np.median(fast):.0f} ms, p = {p:.2g}): its loads may not be one sample with theirs"]


def test_two_machines_drawn_from_one_distribution_are_not_flagged():
    first, second = lognormal(1)
    assert mann_whitney(first, second).p > 0.5  # nowhere near alpha on this seed
    summary = summarize("r1", on_machines(H2, {"lab-a": first, "lab-b": second}))
    assert summary.conditions[0].differing_machine() is None and summary.warnings() == []


def test_of_three_machines_the_one_off_is_named_after_holm():
    a, b, c = lognormal(2, shifts=(0.0, 0.0, 0.15))
    found = summarize("r1", on_machines(H2, {"lab-a": a, "lab-b": b, "lab-c": c})).conditions[0].differing_machine()
    assert found is not None and (found.machine, found.others, found.tested) == ("lab-c", ("lab-a", "lab-b"), 3)
    raw = [mann_whitney(mine, [*x, *y]).p for mine, x, y in ((a, b, c), (b, a, c), (c, a, b))]
    assert found.p == holm(raw)[2] and found.others_median == np.median(a + b)
    line = summarize("r1", on_machines(H2, {"lab-a": a, "lab-b": b, "lab-c": c})).machine_warnings()[0]
    assert f"machine lab-c's load_ms differs from the others' (median {np.median(c):.0f} vs " in line
    assert ", Holm over 3 machines): its loads may not be one sample with theirs" in line


def test_machines_with_too_few_loads_are_not_tested():
    b, c = lognormal(3, n=20)
    a = [2 * v for v in lognormal(4, n=4, shifts=(0.0,))[0]]  # twice as slow, but 4 loads: below MIN_N
    assert mann_whitney(a, b + c).p < 1e-4  # what a test of it would have said
    summary = summarize("r1", on_machines(H2, {"lab-a": a, "lab-b": b, "lab-c": c}))
    assert set(summary.conditions[0].machine_medians()) == {"lab-a", "lab-b", "lab-c"}
    assert summary.machine_warnings() == []
