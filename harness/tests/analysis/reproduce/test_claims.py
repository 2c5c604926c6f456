"""The seeds' claims catalogue: each measurement on a small hand-made run, the verdict
rule, and the answer's rows and figures (pure: no lab)."""

from __future__ import annotations

import math

import pytest

from pagebench.runner.prepare import prepare
from pagebench.analysis.reproduce import claims, verdicts as reproduce
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY, ERA, TODAY, Data, Rule
from pagebench.analysis.stats import Interval

T1 = {"rtt_ms": 70.0, "down_mbit": 1.544}
LAN = {"rtt_ms": 0.5, "down_mbit": 10.0}


def load(mode: str, load_ms: float, **fields) -> dict:
    return {"mode": mode, "load_ms": load_ms, "site": "s", "profile": "remote", "cache": "cold",
            "connections_link": 1, **fields}


def resource(position: int, body: int, start: float, response_start: float, end: float) -> dict:
    return {"position": position, "body_bytes": body, "start_ms": start, "response_start_ms": response_start,
            "end_ms": end}


def measure(key: str, data: Data, variant: str = ERA) -> Interval:
    found = CLAIM_BY_KEY[key].measure(data, variant)
    assert found is not None
    return found


def test_cuts_read_the_median_load_times_of_two_modes():
    site = f"seed000-small-n{claims.CLAIM_IMAGES}"
    loads = [load("http1.0", ms, site=site) for ms in (1000, 1010, 990, 1000, 1005)]
    loads += [load("keepalive", ms, site=site) for ms in (700, 705, 695, 700, 702)]
    loads += [load("pipelining", ms, site=site) for ms in (400, 404, 396, 400, 401)]
    data = Data({(ERA, ""): loads})
    small = measure("000-6-small-cut", data)
    assert small.estimate == pytest.approx(0.6) and small.low <= 0.6 <= small.high
    share = measure("000-6-pipelining-share", data)  # (700 - 400) / (1000 - 400)
    assert share.estimate == pytest.approx(0.5)
    assert CLAIM_BY_KEY["000-6-small-cut"].measure(data, TODAY) is None  # no loads of that variant


def test_throughput_is_the_objects_goodput_over_its_whole_fetch():
    html = resource(0, 300, 0, 140, 150)
    small = resource(1, 2048, 290.0, 560.0, 390.0)  # 2048 B in 100 ms: 0.164 Mbit/s
    large = resource(1, 512_000, 290.0, 560.0, 3290.0)  # 512000 B in 3 s: 1.365 Mbit/s
    loads = [load("http1.0", 400, site="gen-i1-b2048-o1", resources=[html, small]) for _ in range(3)]
    loads += [load("http1.0", 3400, site="gen-i1-b512000-o1", resources=[html, large]) for _ in range(3)]
    loads += [load("http1.0", 400, site="gen-i1-b2048-o1", profile="local", resources=[html, small])]
    data = Data({(ERA, ""): loads}, {"remote": T1, "local": LAN})
    best = measure("000-3.2-remote-2k", data)  # of the longest transfer's rate: seed 000's "best case"
    assert best.estimate == pytest.approx((2048 / 100) / (512_000 / 3000))
    of_link = measure("000-3.2-local-2k", data)  # of the link's rate
    assert of_link.estimate == pytest.approx(2048 * 8 / 100 / 1000 / 10)


def test_round_trips_to_the_first_image_from_navigation_and_on_an_open_connection():
    site = "gen-i1-b2048-o1"
    serial = [load("http1.0", 300, site=site,
                   resources=[resource(0, 300, 0, 140, 141), resource(1, 2048, 150, 280, 282)])]
    persistent = [load("keepalive", 220, site=site,
                       resources=[resource(0, 300, 0, 140, 141), resource(1, 2048, 145, 210, 212)])]
    data = Data({(ERA, ""): serial + persistent}, {"remote": T1})
    assert measure("000-3-first-image", data).estimate == pytest.approx(4.0)
    assert measure("000-4-first-image-open", data).estimate == pytest.approx(2.0)  # 3 RTT less the connect


def test_connections_pool_and_window_measures():
    page = [load("keepalive", 5000, connections_link=7), load("h2", 3500, connections_link=2)]
    assert measure("002-connections", Data({(TODAY, ""): page}), TODAY).estimate == pytest.approx(1 - 2 / 7)
    pool = {(ERA, "C=1"): [load("keepalive", 3000), load("http1.0", 2000)],
            (ERA, "C=32"): [load("keepalive", 1500), load("http1.0", 2000)]}
    assert measure("004-pool", Data(pool)).estimate == pytest.approx(0.25)  # 1 - 1500 / 2000 at the largest C
    assert measure("004-pool-size", Data(pool)).estimate == pytest.approx(1.0)  # 3000 / 1500 - 1
    bulk = [load("http1.0", 8000, site="gen-i1-b2000000-o1", profile="us-nz",
                 resources=[resource(0, 300, 0, 240, 241), resource(1, 2_000_000, 250, 490, 7590)])]
    rate = measure("004-window", Data({(ERA, ""): bulk}, {"us-nz": {"rtt_ms": 120}}))
    assert rate.estimate == pytest.approx(2_000_000 * 8 / 7340 / 1000)


def test_the_sweep_counts_the_cells_inside_the_reports_range():
    loads, profiles = [], {}
    for name, rtt, h2 in (("a", 20, 950), ("b", 200, 700)):
        profiles[name] = {"rtt_ms": rtt, "down_mbit": 12}
        for site in claims.SWEEP_SITES:
            loads += [load("keepalive", 1000, site=site, profile=name), load("h2", h2, site=site, profile=name)]
    found = measure("002-sweep", Data({(TODAY, ""): loads}, profiles), TODAY)
    assert found.estimate == pytest.approx(0.5)  # the 200 ms cells cut 30 %, the 20 ms ones 5 %


@pytest.mark.parametrize("interval,verdict", [
    (Interval(0.55, 0.52, 0.58), "reproduced"), (Interval(0.3, 0.25, 0.35), "differs"),
    (Interval(0.5, 0.45, 0.56), "can't tell")])
def test_the_verdict_needs_the_whole_interval_on_one_side(interval, verdict):
    assert Rule(low=0.5).verdict(interval) == verdict


def test_rows_give_a_reason_where_a_variant_differs():
    site = f"seed000-small-n{claims.CLAIM_IMAGES}"
    loads = {(ERA, ""): [load("http1.0", ms, site=site) for ms in (1000, 1001, 999)]
             + [load("pipelining", ms, site=site) for ms in (400, 401, 399)],
             (TODAY, ""): [load("http1.0", ms, site=site) for ms in (1000, 1001, 999)]
             + [load("pipelining", ms, site=site) for ms in (700, 701, 699)]}
    rows = reproduce.evaluate([CLAIM_BY_KEY["000-6-small-cut"], CLAIM_BY_KEY["001-5-gzip-html"]],
                              {"000-latency": Data(loads)})
    era, today, *unmeasured = rows
    assert (era.variant, era.verdict, era.reason) == (ERA, "reproduced", "")
    assert today.verdict == "differs" and today.reason.startswith("era 60 % [")
    assert "TLS" in today.reason
    assert [r.verdict for r in unmeasured] == ["no data", "no data"]
    assert reproduce.show(Interval(0.524, 0.48, 0.551), "%") == "52 % [48, 55]"
    assert reproduce.show(Interval(4.018, 3.981, 4.05), "RTT") == "4.02 RTT [3.98, 4.05]"


def test_unknown_seeds_are_one_line_errors():
    assert claims.unknown_seed(["000", "004"]) is None
    assert claims.unknown_seed(["005"]) == "unknown seed '005'; known: 000, 001, 002, 004"
    assert "same paper as 000" in claims.unknown_seed(["003"])


def test_every_scenario_is_a_valid_spec_in_both_variants_and_quick_is_smaller():
    for scenario in claims.SCENARIOS:
        for variant in scenario.variants:
            full = [prepare(spec, scenario.name) for _, spec in scenario.runs(variant, False)]
            quick = [prepare(spec, scenario.name) for _, spec in scenario.runs(variant, True)]
            assert sum(len(p.loads) for p in quick) < sum(len(p.loads) for p in full), scenario.name
            for prepared in full:
                tls = prepared.spec.tls
                if scenario.seed in ("000", "004"):
                    assert tls == (["none"] if variant == ERA else ["1.3"])
    era = dict(claims.SCENARIO_BY_NAME["004-window"].runs(ERA, False))[""]
    assert era["profiles"][0]["rwnd_bytes"] == 32767
    assert all(c.scenario in claims.SCENARIO_BY_NAME for c in claims.CLAIMS)


def page(encoded: int) -> list[dict]:
    return [{"position": 0, "from_cache": False, "encoded_bytes": encoded, "transfer_bytes": encoded + 300}]


def test_seed_001_measures_read_the_pages_bytes_and_times():
    sizes = {"a": (17545, 6177), "b": (6017, 2033), "c": (374144, 39200), "d": (97125, 10223)}
    loads = []
    for f, (stored, gz) in sizes.items():
        site = f"seed001-{f}"
        for profile, per_byte in (("modem", 0.28), ("local", 0.001)):
            loads += [load("http1.0", stored * per_byte + 100 + d, site=site, profile=profile, encoding="identity",
                           resources=page(stored)) for d in (0, 1, 2)]
            loads += [load("http1.0", gz * per_byte + 100 + d, site=site, profile=profile, encoding="gzip",
                           resources=page(gz)) for d in (0, 1, 2)]
    data = Data({(ERA, ""): loads})
    gzip = measure("001-5-gzip-html", data)  # bytes over the four pages together
    stored_sum, gz_sum = (sum(v[i] for v in sizes.values()) for i in (0, 1))
    assert gzip.estimate == pytest.approx(1 - gz_sum / stored_sum)
    modem = measure("001-7-modem", data)  # gzip's time over stored, C and D
    expect = ((39200 * 0.28 + 101) / (374144 * 0.28 + 101) + (10223 * 0.28 + 101) / (97125 * 0.28 + 101)) / 2
    assert modem.estimate == pytest.approx(expect)
    lan = measure("001-7-lan", data)  # B on the LAN: 6117 ms against 2133 ms scale: a cut, not "no gain"
    assert lan.estimate == pytest.approx(1 - (2033 * 0.001 + 101) / (6017 * 0.001 + 101))
    deltas = []
    for version, dcz in ((2, 120), (3, 400)):
        for f, (stored, _) in sizes.items():
            deltas.append(load("h2", 50, site=f"seed001-{f}", encoding="identity", version=version,
                               resources=page(stored)))
            deltas.append(load("h2", 40, site=f"seed001-{f}", encoding="dcz", version=version, resources=page(dcz)))
    delta = measure("001-6-delta", Data({(TODAY, ""): deltas}), TODAY)
    savings = sorted(1 - dcz / stored for dcz in (120, 400) for stored, _ in sizes.values())
    assert delta.estimate == pytest.approx((savings[3] + savings[4]) / 2) == delta.low == delta.high


def test_the_html_answer_draws_the_seeds_figure_shapes():
    loads = []
    for n in claims.IMAGE_COUNTS:
        for mode, per in (("http1.0", 200), ("pipelining", 80)):
            loads += [load(mode, per * n + d, site=f"seed000-small-n{n}") for d in (0, 5, 10)]
    data = {"000-latency": Data({(ERA, ""): loads, (TODAY, ""): loads})}
    rows = reproduce.evaluate([CLAIM_BY_KEY["000-6-small-cut"]], data)
    page = reproduce.html(rows, data, "seeds 000", {"command": "pagebench reproduce 000"})
    assert page.startswith("<!DOCTYPE html>") and 'data-chart="fig-6-1"' in page
    assert "<script" not in page and "pagebench reproduce 000" in page
    assert not math.isnan(rows[0].measured.estimate)
