"""Integration, end to end through the CLI: real nginx, real Chromium, real namespaces,
real SQLite. What the issue promises of every load is asserted on real loads."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

import pytest

from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

from tests.helpers import DELAY_SLACK_MS, HARNESS, needs_root, nothing_left, pagebench, run_id_of, tagged, write_spec
from tests.runner.runs import KilledRun, assert_resumed_exactly_the_plan

pytestmark = needs_root


@pytest.fixture(scope="module")
def modes_run(tmp_path_factory) -> tuple[Store, str]:
    """One small run of every direct mode, cold and warm, over three origins."""
    tmp = tmp_path_factory.mktemp("modes")
    spec = write_spec(tmp, name="modes", sites=[{"generate": {"images": 8, "origins": 3}}],
                      modes=["http1.0", "keepalive", "h2"],
                      profiles=[{"name": "t20", "rtt_ms": 20, "down_mbit": 50, "up_mbit": 50}],
                      cache=["cold", "warm"], repetitions=2, warmup=1, seed=3)
    db = f"sqlite:///{tmp}/runs.sqlite"
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    return Store(db), run


def _loads(store: Store, run: str, mode: str, cache: str) -> list[LoadRow]:
    loads = [row for row in store.loads(run) if row.condition.mode.name == mode and row.condition.cache == cache]
    assert len(loads) == 2
    return loads


def test_every_load_kept_its_promises(modes_run):
    store, run = modes_run
    loads = store.loads(run)
    assert len(loads) == 3 * 2 * 2
    for load in loads:
        assert load.ok and not load.flagged, (load.condition.mode, load.condition.cache, load.flags)
    (check,) = store.link_checks(run)  # stored with the run; its validity is test_cli's business
    assert check.profile == "t20" and 20.0 <= check.rtt_median_ms <= 20 + DELAY_SLACK_MS
    experiment = store.experiment(run)
    assert experiment.status == "complete"
    if experiment.backend == "userspace":  # natively, as root: real time and locked memory, recorded
        assert experiment.meta["delay_scheduling"] == "SCHED_FIFO 50, memory locked"
    assert nothing_left()


def test_cold_http10_opens_a_connection_per_request_counted_three_ways(modes_run):
    store, run = modes_run
    for load in _loads(store, run, "http1.0", "cold"):
        assert load.requests == 1 + 8
        assert load.connections_browser == load.requests
        assert load.connections_link == load.connections_browser
        assert load.connections_server == load.connections_browser


def test_cold_h2_uses_one_connection_per_origin(modes_run):
    store, run = modes_run
    for load in _loads(store, run, "h2", "cold"):
        origins = {r.resource.origin for r in store.resources(load.id)}
        assert load.connections_browser == len(origins) >= 3
        assert load.connections_server == len(origins)
        assert load.connections_link >= len(origins)  # an unused preconnect would show here, noted
        if load.connections_link > len(origins):
            assert any("carried no request" in note for note in load.notes)


def test_cold_keepalive_stays_within_six_per_origin(modes_run):
    store, run = modes_run
    for load in _loads(store, run, "keepalive", "cold"):
        per_origin: dict[str, set[int]] = {}
        for r in store.resources(load.id):
            per_origin.setdefault(r.resource.origin, set()).add(r.resource.connection_id)
        assert all(len(ids) <= 6 for ids in per_origin.values())
        assert load.connections_browser < load.requests


def test_warm_loads_come_from_the_disk_cache_and_revalidate_the_html(modes_run):
    store, run = modes_run
    for mode in ("http1.0", "keepalive", "h2"):
        for load in _loads(store, run, mode, "warm"):
            resources = store.resources(load.id)
            assert not resources[0].resource.from_cache  # the HTML is revalidated (a 304, checked in metrics)
            assert resources[0].resource.revalidated
            assert all(r.resource.from_cache for r in resources[1:])
            assert load.cache_hits == load.requests - 1


def test_next_hop_protocol_matches_the_mode(modes_run):
    store, run = modes_run
    expected = {"http1.0": "http/1.1", "keepalive": "http/1.1", "h2": "h2"}
    for load in store.loads(run):
        for r in store.resources(load.id):
            if not r.resource.from_cache:
                assert r.resource.protocol == expected[load.condition.mode.name], (load.condition.mode, r.resource.url)


def test_report_json_contract(modes_run):
    store, run = modes_run
    result = pagebench("report", run, "--json", "--db", str(store.url))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["run"] == run and len(data["conditions"]) == 6
    for condition in data["conditions"]:
        assert {"site", "mode", "topology", "profile", "cache", "n", "flagged", "metrics"} <= set(condition)
        assert set(condition["metrics"]) >= {"load_ms", "ttfb_ms", "dcl_ms", "fcp_ms", "connections_browser",
                                             "connections_link", "connections_server", "cache_hits",
                                             "requests", "bytes"}
        assert set(condition["metrics"]["load_ms"]) == {"median", "p90", "min", "max"}
        assert condition["n"] == 2
    table = pagebench("report", run, "--db", str(store.url))
    assert table.returncode == 0 and "h2" in table.stdout


def test_cold_ttfb_is_three_round_trips_with_tls13_and_tls12(tmp_path):
    """TCP (1 RTT) + TLS 1.3 (1 RTT) + request (1 RTT) = 3 RTT. TLS 1.2 is also 3 RTT in
    Chromium: it uses TLS False Start (RFC 7918: the request leaves with the client's
    Finished) whenever ALPN and an ECDHE AEAD suite are negotiated, and Chromium 156
    refuses every other suite (ERR_SSL_VERSION_OR_CIPHER_MISMATCH), so the textbook
    4-RTT TLS 1.2 handshake cannot occur with this browser."""
    spec = write_spec(tmp_path, name="physics", sites=["seed000-small-n1"], modes=["h2"],
                      profiles=[{"name": "r50", "rtt_ms": 50}, {"name": "r100", "rtt_ms": 100}],
                      tls=["1.2", "1.3"], repetitions=5, warmup=1, timeouts={"link_check": False})
    db = f"sqlite:///{tmp_path}/p.sqlite"
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    loads = Store(db).loads(run)
    for rtt, profile in ((50, "r50"), (100, "r100")):
        for tls, trips in (("1.3", 3), ("1.2", 3)):
            ttfb = statistics.median(l.ttfb_ms for l in loads
                                     if l.condition.profile == profile and l.condition.tls == tls)
            expected = trips * rtt
            assert expected - 2 <= ttfb < expected + rtt / 2, (profile, tls, ttfb, expected)


@pytest.mark.parametrize("rtt", [50, 100])
def test_the_lab_gives_tls12_its_two_round_trip_handshake_without_false_start(rtt):
    """The other half of the TTFB physics: the same lab, the same nginx, a client without
    False Start (curl on OpenSSL) waits for the server's Finished, so TLS 1.2 costs 4 RTT
    to the first byte and TLS 1.3 3 RTT. Chromium's 3 RTT over TLS 1.2 is its False Start."""
    script = ('sleep 0.2; for i in 1 2 3 4 5 6 7; do curl -sS -o /dev/null --cacert "$PAGEBENCH_CA" '
              '--resolve "$PAGEBENCH_CURL_RESOLVE" -w "%{time_starttransfer}\n" "$PAGEBENCH_URL"; done')
    for tls, trips in (("1.2", 4), ("1.3", 3)):
        result = pagebench("shell", "--rtt", str(rtt), "--tls", tls, "--site", "seed000-small-n1", "--",
                           "sh", "-c", script)
        assert result.returncode == 0, result.stderr
        ttfb = 1000 * statistics.median(float(line) for line in result.stdout.split())
        expected = trips * rtt
        assert expected - 2 <= ttfb < expected + rtt / 2, (tls, ttfb, expected)
    assert nothing_left()


def test_kill9_then_cleanup_and_resume_completes_exactly_the_plan(killed_run: KilledRun):
    """The session's killed run (`runs.kill_cleanup_resume`; how it reads once killed is
    the fault matrix's test, on the same run)."""
    assert_resumed_exactly_the_plan(killed_run)


def test_shell_runs_a_command_in_the_lab_and_returns_its_status():
    script = ('set -e; for r in $PAGEBENCH_CURL_RESOLVE; do set -- "$@" --resolve "$r"; done; '
              'curl -sS -o /dev/null -w "%{http_version} %{http_code}\\n" --cacert "$PAGEBENCH_CA" "$@" '
              '"$PAGEBENCH_URL"; exit 7')
    result = pagebench("shell", "--profile", "lte", "--site", "seed000-small-n2", "--mode", "h2", "--",
                       "sh", "-c", script)
    assert result.returncode == 7, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "2 200"
    assert nothing_left()


#: Runs in the router's namespace: what crossed the link, told apart by the first bytes of
#: each TCP payload. Prints a JSON tally when terminated.
SNIFFER = r"""
import json, signal, socket, sys
tally = {"payloads": 0, "tls_records": 0, "http_requests": 0, "h2_prefaces": 0}
def done(*_):
    print(json.dumps(tally), flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(3))  # ETH_P_ALL, no link header
print("ready", flush=True)
while True:
    packet = sock.recv(65535)
    if packet[0] >> 4 == 4 and packet[9] == 6:
        tcp = packet[(packet[0] & 15) * 4:]
    elif packet[0] >> 4 == 6 and packet[6] == 6:
        tcp = packet[40:]
    else:
        continue
    payload = tcp[(tcp[12] >> 4) * 4:]
    if not payload:
        continue
    tally["payloads"] += 1
    tally["tls_records"] += payload[0] in (20, 21, 22, 23) and payload[1] == 3 and payload[2] <= 4
    tally["http_requests"] += payload.startswith(b"GET /") and b" HTTP/1." in payload[:200]
    tally["h2_prefaces"] += payload.startswith(b"PRI * HTTP/2.0")
"""


def test_cleartext_loads_carry_no_tls_on_the_link_and_count_connections_three_ways(tmp_path, session_tag):
    """`tls: none`: HTTP/1.x straight from the browser, every strategy from the edge proxy
    (h2 with prior knowledge); the link's bytes hold HTTP, never a TLS record."""
    spec = write_spec(tmp_path, name="cleartext", sites=["seed000-small-n4"], modes=["http1.0", "keepalive", "h2"],
                      topology=["direct", "proxy"], profiles=[{"name": "t20", "rtt_ms": 20}], tls=["none"],
                      repetitions=2, warmup=0, timeouts={"link_check": False})
    db = f"sqlite:///{tmp_path}/clear.sqlite"
    run = subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(spec), "--db", db], cwd=HARNESS,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tagged())
    sniffer = None
    try:
        deadline = time.monotonic() + 60
        while sniffer is None and time.monotonic() < deadline and run.poll() is None:
            names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
            router = next((n for n in names if n.startswith(f"pb{session_tag}") and n.endswith("-router")), None)
            if router is None:
                time.sleep(0.05)
                continue
            sniffer = subprocess.Popen(["ip", "netns", "exec", router, sys.executable, "-c", SNIFFER],
                                       stdout=subprocess.PIPE, text=True)
            assert sniffer.stdout is not None and sniffer.stdout.readline().strip() == "ready"
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
        if sniffer is not None and sniffer.poll() is None:
            sniffer.terminate()
    assert run.returncode == 0, err[-3000:]
    assert sniffer is not None, "the run's router namespace never appeared"
    tally = json.loads(sniffer.communicate(timeout=30)[0].strip().splitlines()[-1])
    assert tally["tls_records"] == 0, tally
    assert tally["http_requests"] >= 4 * 5 and tally["h2_prefaces"] >= 1, tally  # seen on both veths

    store = Store(db)
    loads = store.loads(run_id_of(subprocess.CompletedProcess([], 0, out, err)))
    assert "tls none: skipped for h2 direct" in err
    assert {(l.condition.mode.name, l.condition.topology) for l in loads} == {
        ("http1.0", "direct"), ("keepalive", "direct"), ("http1.0", "proxy"), ("keepalive", "proxy"), ("h2", "proxy")}
    for load in loads:
        assert load.ok and not load.flagged, (load.condition.mode, load.condition.topology, load.flags)
        assert load.url.startswith("http://" if load.condition.topology == "direct" else "https://")
        if load.condition.mode.name == "http1.0":  # a connection per request, counted by browser/proxy, router and nginx
            counted = load.connections_proxy if load.condition.topology == "proxy" else load.connections_browser
            assert counted == load.connections_link == load.connections_server == load.requests == 5
        else:  # the router also sees sockets Chromium opened and never used; nginx logs those with requests
            counted = load.connections_proxy if load.condition.topology == "proxy" else load.connections_browser
            assert load.connections_link >= counted == load.connections_server >= 1
    assert nothing_left()


def test_repetitions_auto_stops_at_a_decisive_look_and_marks_the_rest_stopped_early(tmp_path):
    """One condition, its median wanted within +-50 %: decisive at the look after round 3
    (about 15 s); the plan stays the cap's. A warm-up first: a fresh browser's first load
    is slower, and one slow load of three is the interval's end."""
    spec = write_spec(tmp_path, name="auto", sites=["seed000-small-n1"], modes=["h2"], seed=4,
                      profiles=[{"name": "r5", "rtt_ms": 5}], warmup=1, timeouts={"link_check": False},
                      repetitions={"cap": 8, "looks": [3], "tolerance": 0.5})
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    result = pagebench("run", str(spec), "--db", db)
    assert result.returncode == 0, result.stderr[-2000:]
    run = run_id_of(result)
    with Store(db) as store:
        experiment = store.experiment(run)
        assert (experiment.status, experiment.planned, experiment.recorded, experiment.stopped) == (
            "complete", 9, 4, 5)  # the warm-up, 3 rounds; 5 stopped
        assert [load.repetition for load in store.loads(run)] == [0, 1, 2]
        assert store.stopped_seqs(run) == set(range(4, 9))
    report = pagebench("report", run, "--db", db)
    assert "5 stopped early" in report.stdout, report.stdout
    assert nothing_left()
