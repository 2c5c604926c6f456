"""Seed 004's measures on hand-made loads of several clients (pure: no lab, no store):
each claim reproduced by loads inside its rule and turned to "differs" by loads on the
far side of its falsifier; intervals that resample whole loads; the figures drawn."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from pagebench.analysis.reproduce import scenarios, verdicts
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.measures import Data, cut
from pagebench.analysis.reproduce.scenarios import (ERA, LOAD_CLIENTS, LOAD_POOL, LOAD_SMALL_POOLS, POOL_SIZES,
                                                    TODAY, pool_label, pool_of)
from pagebench.analysis.reproduce.seed004 import carried_mbit, clusters, figures, per_load
from pagebench.core.modes import H2, HTTP10, KEEPALIVE, Mode
from pagebench.results.rows import LoadRow
from tests.analysis.reproduce.loads import Page, data, load, resource

CLIENTS = 4
SMALLEST, LARGEST = pool_label(POOL_SIZES[0]), pool_label(POOL_SIZES[-1])
_seqs = iter(range(10_000))


def loads_of(mode: Mode, median_ms: float, *, n: int = 8, shared: float = 0.05, own: float = 0.01,
             seed: int = 0, **fields: Any) -> list[Page]:
    """n planned loads of CLIENTS pages each: a load's shared factor (its link, proxy and
    moment) times each page's own, around `median_ms`."""
    rng = np.random.default_rng(seed)
    pages = []
    for _ in range(n):
        seq, common = next(_seqs), rng.normal(1, shared)
        pages += [load(mode, median_ms * common * rng.normal(1, own), seq=seq, client=k, **fields)
                  for k in range(CLIENTS)]
    return pages


def verdict(key: str, found: Data, variant: str = ERA) -> str:
    claim = CLAIM_BY_KEY[key]
    [row] = [r for r in verdicts.evaluate([claim], {claim.scenario: found}) if r.variant == variant]
    return row.verdict


def pool(serial: float, pooled: float, multiplexed: float, smallest: float) -> Data:
    return data({(ERA, LARGEST): loads_of(HTTP10, serial, seed=1) + loads_of(KEEPALIVE, pooled, seed=2)
                 + loads_of(H2, multiplexed, seed=3),
                 (ERA, SMALLEST): loads_of(KEEPALIVE, smallest, seed=4)})


@pytest.mark.parametrize("pooled, expected", [(2500, "reproduced"), (1800, "differs"), (2950, "differs")])
def test_the_pools_cut_reproduces_about_17_percent_and_no_more_or_less(pooled, expected):
    assert verdict("004-pool", pool(3000, pooled, 1500, 6000)) == expected


@pytest.mark.parametrize("smallest, expected", [(6000, "reproduced"), (2600, "differs")])
def test_latency_rises_at_the_smallest_pool_by_more_than_the_pools_gain(smallest, expected):
    assert verdict("004-pool-size", pool(3000, 2500, 1500, smallest)) == expected


@pytest.mark.parametrize("multiplexed, expected", [(2000, "reproduced"), (3100, "differs")])
def test_one_multiplexed_connection_must_cut_significantly(multiplexed, expected):
    assert verdict("004-multiplexed", pool(3000, 2500, multiplexed, 6000)) == expected


def heaviest(twenty: tuple[float, float], fifty: tuple[float, float]) -> Data:
    """The offered-load scenario's heaviest loads: (Mbit/s carried, load ms) per pool."""
    clients = LOAD_CLIENTS[-1]
    runs = {}
    for size, (mbit, ms) in ((LOAD_SMALL_POOLS[-1], twenty), (LOAD_POOL, fifty)):
        pages = loads_of(KEEPALIVE, ms, seed=size)
        slowest: dict[int, float] = {}  # each load's counters: what it carried in its slowest client's time
        for page in pages:
            slowest[page.load.seq] = max(slowest.get(page.load.seq, 0.0), page.load.load_ms or 0.0)
        runs[(ERA, pool_label(size, clients))] = [
            Page(dataclasses.replace(p.load, link={"bytes_down": mbit * 1000 * slowest[p.load.seq] / 8,
                                                   "tcp_conns": 0, "drops_queue_down": 3}))
            for p in pages]
    return data(runs)


@pytest.mark.parametrize("key", ["004-twenty", "004-twenty-deep"])
@pytest.mark.parametrize("twenty, expected", [(30.0, "reproduced"), (20.0, "differs")])
def test_twenty_connections_must_carry_what_fifty_carry(key, twenty, expected):
    assert verdict(key, heaviest((twenty, 2000), (31.0, 1900))) == expected


@pytest.mark.parametrize("key", ["004-fifty", "004-fifty-deep"])
@pytest.mark.parametrize("twenty_ms, expected", [(2600, "reproduced"), (1950, "differs")])
def test_fifty_connections_must_be_faster_than_twenty(key, twenty_ms, expected):
    assert verdict(key, heaviest((30.0, twenty_ms), (31.0, 2000))) == expected


def test_the_control_runs_the_heaviest_load_with_a_queue_that_loses_nothing():
    """Only the queue differs from the conclusions' runs: same clients, pools, page, TCP."""
    load = dict(scenarios._load004(ERA, False))
    for label, spec in scenarios._deep004(ERA, False):
        [profile] = spec["profiles"]
        assert profile.pop("queue_bytes") >= LOAD_POOL * 32767
        assert {**spec, "name": "", "modes": []} == {**load[label], "name": "", "modes": []}
        assert spec["modes"] == ["keepalive"]


def bulk(ms: float) -> Page:
    body = resource(1, 2_000_000, 250, 490, 250 + ms)
    return load(HTTP10, ms + 300, site="gen-i1-b2000000-o1", profile="us-nz",
                resources=[resource(0, 300, 0, 240, 241), body])


def test_the_window_row_says_demonstrated_inside_and_differs_outside():
    window = 2_000_000 * 8 / 2.18 / 1000  # ms at 2.18 Mbit/s: the clamp's rate
    found = data({(ERA, ""): [bulk(window * f) for f in (0.99, 1.0, 1.01)],
                  (TODAY, ""): [bulk(window / 5.4 * f) for f in (0.99, 1.0, 1.01)]})
    assert verdict("004-window", found, ERA) == "demonstrated"
    assert verdict("004-window", found, TODAY) == "differs"


def test_the_pool_intervals_resample_whole_loads():
    """Four clients of one load moving together carry about one load's evidence: the
    interval is wider than the one that takes every page as independent."""
    found = pool(3000, 2500, 1500, 6000)
    clustered = CLAIM_BY_KEY["004-pool"].measure(found, ERA)
    naive = cut(found, ERA, {"mode": HTTP10}, {"mode": KEEPALIVE}, LARGEST)
    assert clustered is not None and naive is not None
    assert clustered.estimate == pytest.approx(naive.estimate)
    assert clustered.high - clustered.low > 1.5 * (naive.high - naive.low)


def test_loads_group_by_seq_and_carry_their_counters_once():
    pages = [load(KEEPALIVE, ms, seq=seq, client=k, link={"bytes_down": 1_000_000})
             for seq, times in ((1, (1000, 2000)), (0, (500, 400))) for k, ms in enumerate(times)]
    rows: list[LoadRow] = [p.load for p in pages]
    assert clusters(rows) == [[500, 400], [1000, 2000]]
    assert [len(group) for group in per_load(rows)] == [2, 2]
    assert carried_mbit(per_load(rows)[1]) == pytest.approx(1_000_000 * 8 / 2000 / 1000)  # the slowest client
    assert carried_mbit([load(KEEPALIVE, 1000).load]) is None  # no counters: nothing carried is known


def test_labels_name_the_offered_load_and_the_pool():
    assert pool_of(pool_label(32)) == (0, 32)
    assert pool_of(pool_label(20, 8)) == (8, 20)


def test_the_figures_of_the_pool_and_of_the_offered_load():
    load_runs = {}
    for clients in LOAD_CLIENTS:
        for mode, ms in ((HTTP10, 3000), (KEEPALIVE, 2000), (H2, 1500 * clients)):
            load_runs.setdefault((ERA, pool_label(LOAD_POOL, clients)), []).extend(
                Page(dataclasses.replace(p.load, link={"bytes_down": 10 ** 6 * clients, "tcp_conns": 20,
                                                       "drops_queue_down": clients}))
                for p in loads_of(mode, ms, n=3, seed=clients))
    drawn = figures({"004-pool": pool(3000, 2500, 1500, 6000), "004-load": data(load_runs)})
    assert [f.name for f in drawn] == ["fig-5b", "fig-5a", "fig-5b-load", "fig-6", "fig-7a"]
    assert all(f.svg.startswith("<svg") and f.caption for f in drawn)
    assert "h2, one multiplexed connection" in drawn[0].legend
    assert figures({}) == []

