"""Integration: the edge-proxy topology with real mitmproxy, nginx, Chromium and
namespaces. Seed 000's page (20 images of 2544 B) at 70 ms and 1.544 Mbit/s."""

from __future__ import annotations

import os
import statistics

import pytest
from playwright.sync_api import sync_playwright

from pagebench.core.modes import H2, KEEPALIVE, PIPELINING
from pagebench.core.servers import plan as serverplan
from pagebench.core.servers.accesslog import AccessRecord
from pagebench.core.profiles import Profile
from pagebench.edge.proxy import RT_PRIORITY, EdgeProxy
from pagebench.edge.strategy import Strategy
from pagebench.lab import sites as sitefiles, tls
from pagebench.lab.browser import Driver, Setup
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.nginx import NginxServer, with_certificate
from pagebench.link.emulator import Link
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store
from tests.helpers import needs_root, pagebench, run_id_of, write_spec

pytestmark = needs_root
RTT_MS = 70
T1 = {"name": "t1", "rtt_ms": RTT_MS, "down_mbit": 1.544, "up_mbit": 1.544}


def _starts_after_previous_end(records: list[AccessRecord]) -> list[float]:
    """Per request after the first on one connection: ms from the end of the previous
    response (nginx wrote its last byte) to the start of this request (nginx read its
    first byte). A client that waits for a response before asking again cannot make this
    shorter than a round trip."""
    ordered = sorted(records, key=lambda r: r.connection_requests)
    return [((r.end - r.request_time) - previous.end) * 1000 for previous, r in zip(ordered, ordered[1:])]


def test_pipelined_requests_reach_nginx_before_the_previous_response_could_have_arrived(layout, tmp_path):
    site = sitefiles.materialize(sitefiles.resolve("seed000-small-n20"))
    plan = with_certificate(serverplan.plan([site], [KEEPALIVE], ["1.3"]))
    addresses = {b.origin: b.ip for b in plan.select(KEEPALIVE, "1.3", site.name)}
    gaps: dict[str, list[float]] = {}
    with NamespaceBed(layout) as bed, sync_playwright() as pw:
        link = Link(bed, "userspace")
        link.apply(Profile.model_validate(T1))
        with NginxServer(bed, plan, bed.state_dir / "nginx") as nginx, \
                EdgeProxy(bed, bed.state_dir / "proxy", plan.leaf, tls.ca_path()) as proxy:
            # real-time priority below the delay program's, so the link still preempts it
            assert proxy.process is not None and os.sched_getscheduler(proxy.process.pid) == os.SCHED_FIFO
            assert os.sched_getparam(proxy.process.pid).sched_priority == RT_PRIORITY < 50
            assert proxy.scheduling == f"SCHED_FIFO {RT_PRIORITY}"
            driver = Driver(pw, bed.state_dir / "browser", layout.client)
            setup = Setup("MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", tls.spki_list(), proxies=proxy.servers)
            try:
                for mode in (PIPELINING, KEEPALIVE):
                    proxy.configure(Strategy(mode, connections=1, depth=20), addresses)
                    offset = nginx.log_offset()
                    raw = driver.cold(setup, site.entry, 60)[0]
                    assert raw.error is None
                    link.wait_settled()
                    records = list(nginx.connections_since(offset).records)
                    assert len(records) == 21 and len({r.connection for r in records}) == 1
                    stats = proxy.stats()
                    [in_flight] = [c["max_in_flight"] for c in stats.connections]
                    # the browser's 20 image requests reach the proxy within a few ms, not at once
                    assert in_flight >= 10 if mode is PIPELINING else in_flight == 1
                    gaps[mode.name] = _starts_after_previous_end(records)
            finally:
                driver.close()
    # The HTML comes first alone; then the 20 image requests were already waiting at nginx.
    early = [gap for gap in gaps["pipelining"] if gap < RTT_MS / 2]
    assert len(early) >= 15, gaps["pipelining"]
    assert min(gaps["keepalive"]) > 0.9 * RTT_MS, gaps["keepalive"]


@pytest.fixture(scope="module")
def seed000_runs(tmp_path_factory) -> tuple[Store, str, str]:
    """Every proxy mode with N = 1 (D = 20); then pipelining with D = 1 beside keep-alive."""
    tmp = tmp_path_factory.mktemp("edge")
    db = f"sqlite:///{tmp}/runs.sqlite"
    common = dict(sites=["seed000-small-n20"], topology="proxy", profiles=[T1], warmup=1, seed=5,
                  timeouts={"link_check": False})
    (tmp / "a").mkdir()
    spec = write_spec(tmp / "a", name="seed000-proxy", modes=["http1.0", "keepalive", "pipelining", "h2"],
                      proxy={"connections": 1, "depth": 20}, repetitions=3, **common)
    first = run_id_of(pagebench("run", str(spec), "--db", db))
    (tmp / "b").mkdir()
    spec = write_spec(tmp / "b", name="depth1", modes=["keepalive", "pipelining"],
                      proxy={"connections": 1, "depth": 1}, repetitions=5, **common)
    second = run_id_of(pagebench("run", str(spec), "--db", db))
    return Store(db), first, second


def _by_mode(store: Store, run: str) -> dict[str, list[LoadRow]]:
    rows: dict[str, list[LoadRow]] = {}
    for row in store.loads(run):
        rows.setdefault(row.condition.mode.name, []).append(row)
    return rows


def test_seed000_pipelining_beats_keepalive_beats_http10(seed000_runs):
    store, run, _ = seed000_runs
    rows = _by_mode(store, run)
    assert all(r.ok and not r.flagged for mode in rows for r in rows[mode]), \
        [r.flags for mode in rows for r in rows[mode] if r.flagged]
    median = {mode: statistics.median(r.load_ms for r in rows[mode]) for mode in rows}
    assert median["pipelining"] < median["keepalive"] < median["http1.0"], median
    # Seed 000's round-trip accounting: on one connection keep-alive pays a round trip per
    # image, pipelining only their transmission (20 x 2544 B at 1.544 Mbit/s, about 0.26 s):
    # about 20 RTT - 0.26 s = 1.1 s apart; measured 1.0 s.
    assert median["keepalive"] - median["pipelining"] > 12 * RTT_MS, median


def test_upstream_connections_counted_three_ways(seed000_runs):
    store, run, _ = seed000_runs
    for row in store.loads(run):
        assert row.connections_proxy == row.connections_link == row.connections_server, row
        expected = row.requests if row.condition.mode.name == "http1.0" else 1
        assert row.connections_proxy == expected, (row.condition.mode, row.connections_proxy)


def test_resources_carry_the_upstream_protocol(seed000_runs):
    store, run, _ = seed000_runs
    wanted = {"http1.0": "http/1.0", "keepalive": "http/1.1", "pipelining": "http/1.1", "h2": "h2"}
    loads = {row.id: row.condition.mode.name for row in store.loads(run)}
    for load_id, mode in loads.items():
        assert {r.resource.protocol for r in store.resources(load_id)} == {wanted[mode]}


def test_pipelining_with_depth_one_is_keepalive(seed000_runs):
    store, _, run = seed000_runs
    rows = _by_mode(store, run)
    keepalive = statistics.median(r.load_ms for r in rows["keepalive"])
    depth1 = statistics.median(r.load_ms for r in rows["pipelining"])
    assert abs(depth1 - keepalive) <= 0.1 * keepalive, (depth1, keepalive)  # pipelining is 60 % below


def test_the_proxy_overhead_is_stored_with_the_run(seed000_runs):
    store, run, _ = seed000_runs
    [overhead] = store.proxy_overheads(run)
    assert overhead.requests == 21 and len(overhead.direct_ms) == len(overhead.proxy_ms) == 5
    assert overhead.per_request_ms is not None and overhead.scheduling == f"SCHED_FIFO {RT_PRIORITY}"


def test_aggregated_clients_share_the_pool(tmp_path):
    """Three clients at once through one proxy with one upstream connection: one row per
    client, every page complete, and one connection for all of them."""
    spec = write_spec(tmp_path, name="aggregate", sites=["seed000-small-n20"], modes=["pipelining", "h2"],
                      topology="proxy", proxy={"connections": 1, "depth": 8}, clients=3,
                      profiles=[{"name": "t40", "rtt_ms": 40, "down_mbit": 10, "up_mbit": 10}],
                      repetitions=2, warmup=0, timeouts={"link_check": False})
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    store = Store(db)
    rows = store.loads(run)
    assert sorted((r.seq, r.client) for r in rows) == [(s, k) for s in range(4) for k in range(3)]
    assert all(r.ok and r.requests == 21 for r in rows), [r.errors for r in rows]
    assert {r.connections_proxy for r in rows} == {1}
    assert {r.connections_link for r in rows} == {1} and {r.connections_server for r in rows} == {1}
    assert store.experiment(run).recorded == 4


def test_a_warm_pool_survives_interleaved_conditions_and_a_cold_one_does_not(layout, tmp_path):
    """keep-alive (A) and h2 (B) loads interleaved through one proxy at 40 ms: with
    `pool: warm` each condition's second load opens no upstream connection (no SYN at the
    router, nothing opened by the proxy) and nginx serves it on the first load's; with
    `pool: cold` every load opens its own."""
    site = sitefiles.materialize(sitefiles.resolve("seed000-small-n20"))
    plan = with_certificate(serverplan.plan([site], [KEEPALIVE, H2], ["1.3"]))
    origins = {mode: {b.origin: b.ip for b in plan.select(mode, "1.3", site.name)} for mode in (KEEPALIVE, H2)}
    sequence = [(KEEPALIVE, "warm"), (H2, "warm"), (KEEPALIVE, "warm"), (H2, "warm"),
                (KEEPALIVE, "cold"), (KEEPALIVE, "cold")]
    seen = []  # per load: (SYNs at the router, proxy stats, nginx's connection serials)
    with NamespaceBed(layout) as bed, sync_playwright() as pw:
        link = Link(bed, "userspace")
        link.apply(Profile.model_validate({"name": "t40", "rtt_ms": 40, "down_mbit": 10, "up_mbit": 10}))
        with NginxServer(bed, plan, bed.state_dir / "nginx") as nginx, \
                EdgeProxy(bed, bed.state_dir / "proxy", plan.leaf, tls.ca_path()) as proxy:
            driver = Driver(pw, bed.state_dir / "browser", layout.client)
            setup = Setup("MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", tls.spki_list(), proxies=proxy.servers)
            try:
                for mode, pool in sequence:
                    proxy.configure(Strategy(mode, connections=2), origins[mode], pool)
                    link.wait_settled()
                    before, offset = link.counters(), nginx.log_offset()
                    raw = driver.cold(setup, site.entry, 60)[0]
                    assert raw.error is None, raw.error
                    link.wait_settled()
                    served = {r.connection for r in nginx.connections_since(offset).records}
                    seen.append(((link.counters() - before).tcp_conns, proxy.stats(), served))
            finally:
                driver.close()
    for (syns, stats, served), (mode, pool) in zip(seen, sequence):
        assert stats.pool == pool and syns == stats.connection_count, (mode, pool, syns, stats.connections)
        assert len(served) == stats.connection_count + len(stats.reused), (mode, pool, served)
    first_a, first_b, second_a, second_b, cold_a, cold_a_again = seen
    for first, second in ((first_a, second_a), (first_b, second_b)):
        assert first[0] >= 1 and first[1].reused == ()  # the warm-up opens the pool
        assert second[0] == 0 and second[1].connections == () and len(second[1].reused) >= 1
        assert second[2] <= first[2]  # nginx served the second load on the first load's connections
    for syns, stats, served in (cold_a, cold_a_again):
        assert syns >= 1 and stats.reused == () and stats.pooled == 0 and not served & first_a[2]


def test_a_warm_run_records_what_it_reused_and_says_so(tmp_path):
    """`pagebench run` with `pool: warm`: every measured load reuses its condition's pool
    (0 opened, 0 SYNs, nginx's count = the reused ones), nothing flagged, and the run
    stores and reports the pool it ran with."""
    spec = write_spec(tmp_path, name="warm-pool", sites=["seed000-small-n20"], modes=["keepalive", "h2"],
                      topology="proxy", proxy={"connections": 2, "pool": "warm"},
                      profiles=[{"name": "t40", "rtt_ms": 40, "down_mbit": 10, "up_mbit": 10}],
                      repetitions=2, warmup=1, seed=3, timeouts={"link_check": False})
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    result = pagebench("run", str(spec), "--db", db)
    run = run_id_of(result)
    assert "note: proxy.pool warm: the edge proxy's upstream connections stay open" in result.stderr
    store = Store(db)
    rows = store.loads(run)
    assert len(rows) == 4 and all(r.ok and not r.flagged for r in rows), [r.flags for r in rows]
    for row in rows:
        assert row.connections_proxy == row.connections_link == 0, row
        assert row.connections_proxy_reused == row.connections_server >= 1, row
    warmups = [r for r in store.loads(run, include_warmup=True) if r.warmup]
    assert all(r.connections_proxy == r.connections_link >= 1 for r in warmups)
    assert store.experiment(run).meta["proxy"] == {"connections": 2, "depth": 4, "pool": "warm"}
    table = pagebench("report", run, "--db", db)
    assert table.returncode == 0 and "edge proxy: pool warm" in table.stdout, table.stdout
