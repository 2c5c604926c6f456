"""Seed 000's claims at the measure level: loads inside each rule give "reproduced",
loads on the far side of its falsifier "differs" (pure: hand-made loads, no lab)."""

from __future__ import annotations

from typing import Any

import pytest

from pagebench.analysis.reproduce import seed000
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.measures import transfer_name
from pagebench.analysis.reproduce.scenarios import CLAIM_IMAGES, ERA, MODERATE_IMAGES, TODAY
from pagebench.core.modes import HTTP10, KEEPALIVE, PIPELINING, Mode
from tests.analysis.reproduce.loads import Page, data, fetched, load, resource

T1 = {"rtt_ms": 70.0, "down_mbit": 1.544}
PROFILES = {"remote": T1, "remote-mss536": T1, "local": {"rtt_ms": 0.5, "down_mbit": 10.0}}
SPREAD = (0.99, 1.0, 1.01)


def verdict(key: str, pages: dict[tuple[str, str], list[Page]], variant: str = ERA) -> str:
    claim = CLAIM_BY_KEY[key]
    measured = claim.measure(data(pages, PROFILES), variant)
    assert measured is not None, key
    return claim.rule.verdict(measured)


def transfers(profile: str, rates: dict[int, float]) -> list[Page]:
    """Three HTTP/1.0 transfers of each size at about `rates[size]` Mbit/s."""
    pages = []
    for nbytes, mbit in rates.items():
        for k in SPREAD:
            ms = nbytes * 8 / (mbit * k) / 1000
            pages.append(load(HTTP10, ms + 200, site=transfer_name(nbytes), profile=profile,
                              resources=[resource(0, 300, 0, 140, 141), resource(1, nbytes, 150, 290, 150 + ms)]))
    return pages


def timed(site: str, **by_mode: float) -> list[Page]:
    """Three loads of `site` per mode, retrieval times about `by_mode[mode]` ms."""
    modes = {"http10": HTTP10, "keepalive": KEEPALIVE, "pipelining": PIPELINING}
    return [fetched(modes[name], ms * k, site=site) for name, ms in by_mode.items() for k in SPREAD]


@pytest.mark.parametrize("key,inside,outside", [
    ("000-3.2-remote-2k", 0.08, 0.15), ("000-3.2-remote-20k", 0.5, 0.3)])
def test_a_remote_transfer_is_read_against_the_512_kb_one(key, inside, outside):
    size = 2_048 if key.endswith("2k") else 20_480
    for share, expect in ((inside, "reproduced"), (outside, "differs")):
        pages = transfers("remote", {size: share * 1.2, 512_000: 1.2})
        assert verdict(key, {(ERA, ""): pages}) == expect, (key, share)


@pytest.mark.parametrize("key,size,inside,outside", [
    ("000-3.2-local-2k", 2_048, 2.5, 5.0), ("000-3.2-local-20k", 20_480, 7.0, 9.0)])
def test_a_lan_transfer_is_read_against_the_links_10_mbit(key, size, inside, outside):
    for mbit, expect in ((inside, "reproduced"), (outside, "differs")):
        assert verdict(key, {(ERA, "lan"): transfers("local", {size: mbit})}) == expect, (key, mbit)
    assert CLAIM_BY_KEY[key].measure(data({(ERA, ""): transfers("local", {size: inside})}, PROFILES), ERA) is None


def test_past_500_kb_the_536_byte_goodput_must_decline():
    for long, expect in ((0.9, "reproduced"), (1.1, "differs")):
        pages = transfers("remote-mss536", {512_000: 1.0, 1_048_576: long})
        assert verdict("000-3.2-decline", {(ERA, ""): pages}) == expect


def test_the_larger_mss_must_be_somewhat_faster_for_1_mb():
    for fast, expect in ((1.1, "reproduced"), (0.95, "differs"), (1.7, "differs")):
        pages = transfers("remote", {1_048_576: fast}) + transfers("remote-mss536", {1_048_576: 1.0})
        assert verdict("000-3.2-mss", {(ERA, ""): pages}) == expect, fast


def first_image(mode: Mode, trips: float) -> list[Page]:
    """Loads whose HTML and image requests wait `trips` RTT in all (the HTML a fifth of
    it), after 30 ms of the browser's own work before each (not counted)."""
    pages = []
    for k in SPREAD:
        html, image = trips * 70 * k / 5, trips * 70 * k * 4 / 5
        pages.append(load(mode, 400, site=transfer_name(2_048), resources=[
            resource(0, 300, 0, 30 + html, 31 + html, timing={"sendStart": 30, "receiveHeadersEnd": 30 + html}),
            resource(1, 2_048, 60 + html, 90 + html + image, 92 + html + image,
                     timing={"sendStart": 30, "receiveHeadersEnd": 30 + image})]))
    return pages


@pytest.mark.parametrize("key,mode,inside,outside", [
    ("000-3-first-image", HTTP10, 4.1, 6.1), ("000-4-first-image-open", KEEPALIVE, 2.1, 3.1)])
def test_round_trips_to_the_first_image_are_what_the_two_requests_waited(key, mode, inside, outside):
    for trips, expect in ((inside, "reproduced"), (outside, "differs")):
        assert verdict(key, {(ERA, ""): first_image(mode, trips)}) == expect, trips
    measured = CLAIM_BY_KEY[key].measure(data({(ERA, ""): first_image(mode, inside)}, PROFILES), ERA)
    assert measured is not None and measured.estimate == pytest.approx(inside)  # the browser's 60 ms not counted
    assert seed000.waiting_ms(resource(1, 1, 0, 1, 2).resource) is None  # no timing phases: nothing to read


def test_each_extra_image_costs_http10_two_round_trips():
    for per, expect in ((2.2, "reproduced"), (1.5, "differs"), (3.1, "differs")):
        pages = timed(seed000.page("small", 1), http10=300) + timed(seed000.page("small"), http10=300 + 19 * per * 70)
        assert verdict("000-3-per-image", {(ERA, ""): pages}) == expect, per


@pytest.mark.parametrize("key,site,inside,outside", [
    ("000-6-small-cut", "small", 400, 600), ("000-6-large-cut", "large", 780, 500)])
def test_pipelinings_cut_reads_the_network_retrieval_time(key, site, inside, outside):
    for piped, expect in ((inside, "reproduced"), (outside, "differs")):
        pages = timed(seed000.page(site), http10=1000, pipelining=piped)
        assert verdict(key, {(ERA, ""): pages}) == expect, piped


@pytest.mark.parametrize("key,site,inside,outside", [
    ("000-6-small-cut-load", "small", 400, 600), ("000-6-large-cut-load", "large", 780, 500)])
def test_the_load_event_rows_read_the_load_event(key, site, inside, outside):
    for piped, expect in ((inside, "reproduced"), (outside, "differs")):
        pages = [fetched(mode, 900, ms * k, site=seed000.page(site))  # one retrieval time: the load events differ
                 for mode, ms in ((HTTP10, 1000), (PIPELINING, piped)) for k in SPREAD]
        assert verdict(key, {(ERA, ""): pages}) == expect, piped


@pytest.mark.parametrize("window", [4_096, 8_192])
def test_the_window_rows_read_their_own_profile(window):
    for piped, expect in ((780, "reproduced"), (500, "differs")):
        pages = [fetched(mode, ms * k, site=seed000.page("large"), profile=f"remote-w{window}")
                 for mode, ms in ((HTTP10, 1000), (PIPELINING, piped)) for k in SPREAD]
        assert verdict(f"000-6-large-cut-w{window}", {(ERA, ""): pages}) == expect
    other = [fetched(mode, 900, site=seed000.page("large"), profile="remote-w1") for mode in (HTTP10, PIPELINING)]
    assert CLAIM_BY_KEY[f"000-6-large-cut-w{window}"].measure(data({(ERA, ""): other}, PROFILES), ERA) is None


def test_more_than_half_of_the_gain_must_come_from_pipelining():
    for persistent, expect in ((800, "reproduced"), (550, "differs")):  # (k - 400) / (1000 - 400)
        pages = timed(seed000.page("small"), http10=1000, keepalive=persistent, pipelining=400)
        assert verdict("000-6-pipelining-share", {(ERA, ""): pages}) == expect


def test_figure_6_3_small_images_and_a_moderate_number_gain_most():
    small, large = seed000.page("small"), seed000.page("large")
    for large_piped, expect in ((800, "reproduced"), (300, "differs")):  # small cuts 60 %; large 20 % or 70 %
        pages = timed(small, http10=1000, pipelining=400) + timed(large, http10=1000, pipelining=large_piped)
        assert verdict("000-6-3-size", {(ERA, ""): pages}) == expect
    one, moderate = seed000.page("small", 1), seed000.page("small", MODERATE_IMAGES)
    for one_piped, expect in ((80, "reproduced"), (30, "differs")):  # ten cut 60 %; one 20 % or 70 %
        pages = timed(moderate, http10=1000, pipelining=400) + timed(one, http10=100, pipelining=one_piped)
        assert verdict("000-6-3-count", {(ERA, ""): pages}) == expect


@pytest.mark.parametrize("key", ["000-6-local-keepalive", "000-6-local-keepalive-load"])
def test_the_lan_rows_read_the_direct_run(key):
    for persistent, expect in ((90, "reproduced"), (60, "differs")):
        pages = [fetched(mode, ms * k, ms * k + 10, site=seed000.page("small"), profile="local")
                 for mode, ms in ((HTTP10, 100), (KEEPALIVE, persistent)) for k in SPREAD]
        assert verdict(key, {(ERA, "direct"): pages}) == expect
        assert CLAIM_BY_KEY[key].measure(data({(ERA, "proxy"): pages}, PROFILES), ERA) is None


def test_retrieval_is_first_request_to_last_byte_without_the_cache():
    cached = resource(2, 100, 1, None, 9999, from_cache=True)
    page = load(HTTP10, 800, [resource(0, 300, 12, 50, 60), resource(1, 2544, 70, 300, 650), cached])
    found = data({(TODAY, ""): [page]})
    assert seed000.retrieval_ms(found, found.loads[(TODAY, "")][0]) == 638
    assert seed000.times(found, TODAY) == [638] and seed000.times(found, TODAY, seed000.LOAD) == [800]


def test_every_seed_000_claim_states_its_conditions_and_falsifier():
    for claim in (c for c in CLAIM_BY_KEY.values() if c.seed == "000"):
        assert claim.condition and claim.ours and claim.line and claim.falsifies and not claim.demonstrated, claim.key
        assert claim.falsifier().startswith("the whole interval "), claim.key


def pages_of(**fields: Any) -> list[Page]:  # for the figures: N small images, HTTP/1.0 and pipelining
    return [page for n in (1, MODERATE_IMAGES, CLAIM_IMAGES)
            for page in timed(seed000.page("small", n), http10=200 * n, pipelining=80 * n + 50)]


def test_the_figures_are_drawn_from_the_retrieval_times():
    latency = data({(ERA, ""): pages_of(), (TODAY, ""): pages_of()}, PROFILES)
    local = data({(ERA, "direct"): [fetched(mode, ms, site=seed000.page("small"), profile="local")
                                   for mode, ms in ((HTTP10, 100), (KEEPALIVE, 90))]}, PROFILES)
    names = [figure.name for figure in seed000.figures({"000-latency": latency, "000-local": local})]
    assert names == ["fig-6-1", "fig-6-3", "fig-6-4"]
