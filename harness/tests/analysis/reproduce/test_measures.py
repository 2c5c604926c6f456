"""What the claims measure, each on a small hand-made run (pure: no lab, no store)."""

from __future__ import annotations

import pytest

from pagebench.analysis.reproduce import scenarios
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import ERA, TODAY
from pagebench.analysis.stats import Interval
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2, HTTP10, KEEPALIVE, PIPELINING
from pagebench.results.rows import ResourceRow
from tests.analysis.reproduce.loads import data, load, resource

T1 = {"rtt_ms": 70.0, "down_mbit": 1.544}
LAN = {"rtt_ms": 0.5, "down_mbit": 10.0}


def measure(key: str, found: Data, variant: str = ERA) -> Interval:
    measured = CLAIM_BY_KEY[key].measure(found, variant)
    assert measured is not None
    return measured


def test_cuts_read_the_median_load_times_of_two_modes():
    site = f"seed000-small-n{scenarios.CLAIM_IMAGES}"
    loads = [load(HTTP10, ms, site=site) for ms in (1000, 1010, 990, 1000, 1005)]
    loads += [load(KEEPALIVE, ms, site=site) for ms in (700, 705, 695, 700, 702)]
    loads += [load(PIPELINING, ms, site=site) for ms in (400, 404, 396, 400, 401)]
    found = data({(ERA, ""): loads})
    small = measure("000-6-small-cut", found)
    assert small.estimate == pytest.approx(0.6) and small.low <= 0.6 <= small.high
    share = measure("000-6-pipelining-share", found)  # (700 - 400) / (1000 - 400)
    assert share.estimate == pytest.approx(0.5)
    assert CLAIM_BY_KEY["000-6-small-cut"].measure(found, TODAY) is None  # no loads of that variant


def test_throughput_is_the_objects_goodput_over_its_whole_fetch():
    html = resource(0, 300, 0, 140, 150)
    small = resource(1, 2048, 290.0, 560.0, 390.0)  # 2048 B in 100 ms: 0.164 Mbit/s
    large = resource(1, 512_000, 290.0, 560.0, 3290.0)  # 512000 B in 3 s: 1.365 Mbit/s
    loads = [load(HTTP10, 400, site="gen-i1-b2048-o1", resources=[html, small]) for _ in range(3)]
    loads += [load(HTTP10, 3400, site="gen-i1-b512000-o1", resources=[html, large]) for _ in range(3)]
    loads += [load(HTTP10, 400, site="gen-i1-b2048-o1", profile="local", resources=[html, small])]
    found = data({(ERA, ""): loads}, {"remote": T1, "local": LAN})
    best = measure("000-3.2-remote-2k", found)  # of the longest transfer's rate: seed 000's "best case"
    assert best.estimate == pytest.approx((2048 / 100) / (512_000 / 3000))
    of_link = measure("000-3.2-local-2k", found)  # of the link's rate
    assert of_link.estimate == pytest.approx(2048 * 8 / 100 / 1000 / 10)


def test_round_trips_to_the_first_image_from_navigation_and_on_an_open_connection():
    site = "gen-i1-b2048-o1"
    serial = [load(HTTP10, 300, site=site,
                   resources=[resource(0, 300, 0, 140, 141), resource(1, 2048, 150, 280, 282)])]
    persistent = [load(KEEPALIVE, 220, site=site,
                       resources=[resource(0, 300, 0, 140, 141), resource(1, 2048, 145, 210, 212)])]
    found = data({(ERA, ""): serial + persistent}, {"remote": T1})
    assert measure("000-3-first-image", found).estimate == pytest.approx(4.0)
    assert measure("000-4-first-image-open", found).estimate == pytest.approx(2.0)  # 3 RTT less the connect


def test_pool_and_window_measures():
    pool = {(ERA, "C=1"): [load(KEEPALIVE, 3000), load(HTTP10, 2000)],
            (ERA, "C=32"): [load(KEEPALIVE, 1500), load(HTTP10, 2000)]}
    assert measure("004-pool", data(pool)).estimate == pytest.approx(0.25)  # 1 - 1500 / 2000 at the largest C
    assert measure("004-pool-size", data(pool)).estimate == pytest.approx(1.0)  # 3000 / 1500 - 1
    bulk = [load(HTTP10, 8000, site="gen-i1-b2000000-o1", profile="us-nz",
                 resources=[resource(0, 300, 0, 240, 241), resource(1, 2_000_000, 250, 490, 7590)])]
    rate = measure("004-window", data({(ERA, ""): bulk}, {"us-nz": {"rtt_ms": 120}}))
    assert rate.estimate == pytest.approx(2_000_000 * 8 / 7340 / 1000)


def page(encoded: int) -> list[ResourceRow]:
    """A single-file page sent as `encoded` bytes of body."""
    return [resource(0, 0, 0.0, None, None, encoded=encoded, transfer=encoded + 300)]


def test_seed_001_measures_read_the_pages_bytes_and_times():
    sizes = {"a": (17545, 6177), "b": (6017, 2033), "c": (374144, 39200), "d": (97125, 10223)}
    loads = []
    for f, (stored, gz) in sizes.items():
        site = f"seed001-{f}"
        for profile, per_byte in (("modem", 0.28), ("local", 0.001)):
            loads += [load(HTTP10, stored * per_byte + 100 + d, site=site, profile=profile, encoding=IDENTITY,
                           resources=page(stored)) for d in (0, 1, 2)]
            loads += [load(HTTP10, gz * per_byte + 100 + d, site=site, profile=profile, encoding=GZIP,
                           resources=page(gz)) for d in (0, 1, 2)]
    found = data({(ERA, ""): loads})
    gzip = measure("001-5-gzip-html", found)  # bytes over the four pages together
    stored_sum, gz_sum = (sum(v[i] for v in sizes.values()) for i in (0, 1))
    assert gzip.estimate == pytest.approx(1 - gz_sum / stored_sum)
    modem = measure("001-7-modem", found)  # gzip's time over stored, C and D
    expect = ((39200 * 0.28 + 101) / (374144 * 0.28 + 101) + (10223 * 0.28 + 101) / (97125 * 0.28 + 101)) / 2
    assert modem.estimate == pytest.approx(expect)
    lan = measure("001-7-lan", found)  # B on the LAN: 6117 ms against 2133 ms scale: a cut, not "no gain"
    assert lan.estimate == pytest.approx(1 - (2033 * 0.001 + 101) / (6017 * 0.001 + 101))
    deltas = []
    for version, dcz in ((2, 120), (3, 400)):
        for f, (stored, _) in sizes.items():
            deltas.append(load(H2, 50, site=f"seed001-{f}", encoding=IDENTITY, version=version,
                               resources=page(stored)))
            deltas.append(load(H2, 40, site=f"seed001-{f}", encoding=DCZ, version=version, resources=page(dcz)))
    delta = measure("001-6-delta", data({(TODAY, ""): deltas}), TODAY)
    savings = sorted(1 - dcz / stored for dcz in (120, 400) for stored, _ in sizes.values())
    assert delta.estimate == pytest.approx((savings[3] + savings[4]) / 2) == delta.low == delta.high
