"""Summaries: statistics, what is left out (and counted), the JSON contract."""

from __future__ import annotations

import json

import pytest

from pagebench.analysis.summary import METRICS, describe, label, summarize, warnings
from pagebench.core.quantiles import percentile
from pagebench.core.records import Condition, PlannedLoad

H2 = Condition("demo", "h2", "direct", "3g", "cold")
KEEPALIVE = Condition("demo", "keepalive", "direct", "3g", "cold")


def row(condition: Condition, load_ms: float | None, *, warmup: bool = False, flagged: bool = False,
        ok: bool = True, **values: object) -> dict:
    """A load row as Store.loads returns it (only the keys the summary reads, plus a few)."""
    base = {
        "seq": 0, "url": "https://demo.test/", "site": condition.site, "mode": condition.mode,
        "topology": condition.topology, "profile": condition.profile, "cache": condition.cache,
        "tls": condition.tls, "warmup": warmup, "flagged": flagged, "ok": ok, "load_ms": load_ms,
        "ttfb_ms": 300.0, "dcl_ms": None, "fcp_ms": 900.0, "connections_browser": 1, "connections_link": 1,
        "connections_server": 1, "cache_hits": 0, "requests": 6, "bytes": 325_000,
    }
    return {**base, **values}


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
    assert describe([1200.0, None, 1000.0, 1400.0, None]) == {
        "median": 1200.0, "p90": pytest.approx(1360.0), "min": 1000.0, "max": 1400.0}
    assert describe([None, None]) == {"median": None, "p90": None, "min": None, "max": None}
    assert describe([]) == {"median": None, "p90": None, "min": None, "max": None}


def test_load_over_bound_is_the_median_ratio_of_usable_loads():
    loads = [{**row(H2, 1000.0 + 100 * i), "bound_ms": 800.0} for i in range(5)]
    loads.append({**row(H2, 9000.0), "bound_ms": 800.0, "flagged": True})
    [condition] = summarize("r1", loads, plan_for((H2, 1, 6)))["conditions"]
    assert condition["load_over_bound"]["median"] == pytest.approx(1200 / 800)
    assert condition["load_over_bound"]["max"] == pytest.approx(1400 / 800)


def test_json_contract_keys_exactly():
    loads = [row(H2, 1000.0 + i) for i in range(5)]
    result = summarize("r1", loads, plan_for((H2, 1, 5)))
    assert set(result) == {"run", "conditions"} and result["run"] == "r1"
    [condition] = result["conditions"]
    assert set(condition) == {"site", "mode", "topology", "profile", "cache", "tls", "encoding", "version", "planned",
                              "n", "flagged", "failed", "metrics", "load_over_bound"}
    assert (condition["encoding"], condition["version"]) == ("identity", 1)  # rows stored before encodings
    assert condition["load_over_bound"] == {"median": None, "p90": None, "min": None, "max": None}  # no bounds
    assert set(condition["metrics"]) == {"load_ms", "ttfb_ms", "dcl_ms", "fcp_ms", "connections_browser",
                                         "connections_link", "connections_server", "connections_proxy",
                                         "connections_proxy_reused", "cache_hits", "requests",
                                         "bytes"} == set(METRICS)
    for stats in condition["metrics"].values():
        assert set(stats) == {"median", "p90", "min", "max"}
    json.dumps(result, allow_nan=False)  # plain JSON
    assert condition["metrics"]["dcl_ms"] == {"median": None, "p90": None, "min": None, "max": None}


def test_flagged_and_failed_loads_are_excluded_and_counted():
    loads = [row(H2, v) for v in (1000.0, 1100.0, 1200.0, 1300.0)]
    loads += [row(H2, 9000.0, flagged=True), row(H2, 50.0, flagged=True), row(H2, None, ok=False)]
    [condition] = summarize("r1", loads, plan_for((H2, 0, 7)))["conditions"]
    assert (condition["n"], condition["flagged"], condition["failed"], condition["planned"]) == (4, 2, 1, 7)
    assert condition["metrics"]["load_ms"] == {"median": 1150.0, "p90": pytest.approx(1270.0),
                                              "min": 1000.0, "max": 1300.0}


def test_warmups_are_excluded_from_counts_and_statistics():
    loads = [row(H2, 5000.0, warmup=True), row(H2, 4000.0, warmup=True, flagged=True)]
    loads += [row(H2, v, connections_browser=c) for v, c in ((1000.0, 2), (2000.0, 2), (3000.0, 3))]
    [condition] = summarize("r1", loads, plan_for((H2, 2, 3)))["conditions"]
    assert (condition["n"], condition["flagged"], condition["planned"]) == (3, 0, 3)
    assert condition["metrics"]["load_ms"]["max"] == 3000.0
    assert condition["metrics"]["connections_browser"] == {"median": 2, "p90": pytest.approx(2.8), "min": 2,
                                                          "max": 3}


def test_conditions_are_grouped_and_in_a_stable_order():
    cable_warm = Condition("demo", "h2", "direct", "cable", "warm")
    proxy = Condition("demo", "keepalive", "proxy", "3g", "cold")
    other_site = Condition("alpha", "h3", "direct", "3g", "cold")
    conditions = [cable_warm, H2, proxy, KEEPALIVE, other_site]
    loads = [row(c, 1000.0 * (i + 1)) for i, c in enumerate(conditions)]
    result = summarize("r1", reversed(loads), plan_for(*[(c, 0, 1) for c in conditions]))
    assert [(c["site"], c["mode"], c["topology"], c["profile"], c["cache"]) for c in result["conditions"]] == [
        ("alpha", "h3", "direct", "3g", "cold"),
        ("demo", "keepalive", "direct", "3g", "cold"),  # modes in MODES order: http1.0, keepalive, ..., h2, h3
        ("demo", "keepalive", "proxy", "3g", "cold"),
        ("demo", "h2", "direct", "3g", "cold"),
        ("demo", "h2", "direct", "cable", "warm"),
    ]
    assert [c["metrics"]["load_ms"]["median"] for c in result["conditions"]] == [5000.0, 4000.0, 3000.0,
                                                                                 2000.0, 1000.0]


def test_planned_conditions_without_loads_are_shown_empty():
    result = summarize("r1", [row(H2, 1000.0)], plan_for((H2, 1, 5), (KEEPALIVE, 1, 5)))
    empty = next(c for c in result["conditions"] if c["mode"] == "keepalive")
    assert (empty["n"], empty["flagged"], empty["failed"], empty["planned"]) == (0, 0, 0, 5)
    assert empty["metrics"]["load_ms"] == {"median": None, "p90": None, "min": None, "max": None}


def test_warnings_say_incomplete_and_cant_tell():
    loads = [row(H2, 1000.0 + i) for i in range(5)] + [row(KEEPALIVE, 900.0), row(KEEPALIVE, 1.0, flagged=True)]
    summary = summarize("r1", loads, plan_for((H2, 0, 5), (KEEPALIVE, 0, 5)))
    assert warnings(summary) == [
        "demo keepalive direct 3g cold tls1.3: 2 of 5 planned loads recorded: resume the run; "
        "n=1 (1 flagged or failed left out): can't tell: n too small (want at least 5)"
    ]


def test_label():
    assert label({"site": "demo", "mode": "h2", "topology": "proxy", "profile": "3g", "cache": "warm",
                  "tls": "1.2"}) == "demo h2 proxy 3g warm tls1.2"


def test_encodings_and_versions_are_conditions_of_their_own():
    gzip = Condition("demo", "h2", "direct", "3g", "warm", encoding="gzip", version=2)
    identity = Condition("demo", "h2", "direct", "3g", "warm", version=2)
    loads = [row(gzip, 800.0, encoding="gzip", version=2), row(identity, 1000.0, encoding="identity", version=2),
             row(H2, 1200.0)]  # a row without the columns: identity, version 1
    result = summarize("r1", loads, plan_for((gzip, 0, 1), (identity, 0, 1), (H2, 0, 1)))
    assert [(c["cache"], c["encoding"], c["version"], c["metrics"]["load_ms"]["median"])
            for c in result["conditions"]] == [("cold", "identity", 1, 1200.0), ("warm", "identity", 2, 1000.0),
                                              ("warm", "gzip", 2, 800.0)]
    assert [label(c) for c in result["conditions"]] == [
        "demo h2 direct 3g cold tls1.3", "demo h2 direct 3g warm tls1.3 v2", "demo h2 direct 3g warm tls1.3 gzip v2"]
