"""The split lab's pure parts and its control channel (a real HTTP server on loopback):
commands run "here" are the native ones minus where they run, the router restores the
firewall it found, the endpoints set what the native endpoint commands set."""

from __future__ import annotations

import dataclasses
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagebench.core.modes import H2, KEEPALIVE
from pagebench.core.servers import plan as serverplan
from pagebench.core.layout import Layout
from pagebench.core.profiles import make_profile
from pagebench.core.servers.plan import binding_rows
from pagebench.lab import sites as sitefiles
from pagebench.lab.split.control import Client, ControlError, parse_listen, server
from pagebench.lab.split.endpoint import CLIENT_SIDE, SERVER_SIDE, route_command
from pagebench.lab.split.local import LocalLayout, Route, localize, parse_addresses, parse_route
from pagebench.lab.split.remote import counters_from
from pagebench.lab.split.router import restore_document
from pagebench.lab.split.sites import address_batch
from pagebench.link.counters import LinkCounters
from pagebench.link.plan import endpoint_commands, netem_plan, reset_commands, sysctl_values, userspace_plan
from pagebench.system.commands import LabError
from tests.helpers import HARNESS

PROFILE = make_profile({"name": "p", "rtt_ms": 40, "down_mbit": 10, "up_mbit": 2, "initcwnd": 20,
                        "tcp_rmem": [4096, 65536, 1048576]})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def channel() -> Iterator[Client]:
    def fails(_: dict) -> dict:
        raise LabError("tc: something\nsecond line")

    port = free_port()
    httpd = server(f"127.0.0.1:{port}", {"POST /echo": lambda args: {"got": args},
                                         "GET /query": lambda args: {"got": args}, "POST /fails": fails})
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Client(f"http://127.0.0.1:{port}", "router")
    httpd.shutdown()
    httpd.server_close()


def test_calls_round_trip_json(channel):
    assert channel.post("/echo", {"profile": {"rtt_ms": 40}}) == {"got": {"profile": {"rtt_ms": 40}}}
    assert channel.get("/query", since=120) == {"got": {"since": "120"}}


def test_failures_come_back_as_one_line_naming_role_and_endpoint(channel):
    with pytest.raises(ControlError, match=r"^router http://127\.0\.0\.1:\d+: /fails: tc: something$"):
        channel.post("/fails")
    with pytest.raises(ControlError, match="no endpoint POST /nope; endpoints: GET /query, POST /echo"):
        channel.post("/nope")


def test_an_absent_role_is_one_line():
    client = Client(f"http://127.0.0.1:{free_port()}", "sites", timeout=5)
    with pytest.raises(ControlError, match=r"^sites http://127\.0\.0\.1:\d+: /health: cannot reach it"):
        client.get("/health")


@pytest.mark.parametrize("bad", ["198.18.2.1", "198.18.2.1:", ":8700", "198.18.2.1:http", "198.18.2.1:70000"])
def test_listen_address_errors_name_the_option(bad):
    with pytest.raises(ValueError, match=r"^--listen: want ADDR:PORT"):
        parse_listen(bad)
    assert parse_listen("[2001:2::1]:8700") == ("2001:2::1", 8700)


def test_bad_urls_are_refused():
    with pytest.raises(ControlError, match="router URL: want http://ADDR:PORT"):
        Client("198.18.2.1:8700", "router")


def test_localize_drops_exactly_where_the_command_runs():
    topo = LocalLayout("pbtest", router_client_if="eth1", router_server_if="eth0")
    here = {topo.router}
    assert localize(("tc", "-n", topo.router, "qdisc", "del", "dev", "eth0", "root"), here) == (
        "tc", "qdisc", "del", "dev", "eth0", "root")
    assert localize(("ip", "-n", topo.router, "-6", "route", "show"), here) == ("ip", "-6", "route", "show")
    assert localize(("ip", "netns", "exec", topo.router, "iptables-restore"), here) == ("iptables-restore",)
    assert localize(("ethtool", "-K", "eth0"), here) == ("ethtool", "-K", "eth0")
    with pytest.raises(LabError, match="namespace pbtest-client is not in this process's network namespace"):
        localize(("ip", "netns", "exec", topo.client, "sysctl", "-qw", "x=1"), here)


def test_the_router_role_runs_the_native_plan_on_its_own_interfaces():
    topo = LocalLayout("pbtest", router_client_if="eth1", router_server_if="eth0")
    native = netem_plan(Layout("pbtest"), PROFILE)
    here = netem_plan(topo, PROFILE)
    swap = {"rc": "eth1", "rs": "eth0"}
    assert [localize(c, {topo.router}) for c in here.router_tc] == [
        tuple(swap.get(w, w) for w in localize(c, {topo.router})) for c in native.router_tc]
    assert here.rules_v4 == native.rules_v4.replace(" rc", " eth1").replace(" rs", " eth0")
    spaced = userspace_plan(topo, PROFILE, Path("/x/pagebench-delay"), Path("/s"), 1)
    assert spaced.delay_argv is not None and localize(spaced.delay_argv, {topo.router})[0] == "/x/pagebench-delay"
    assert [localize(c, {topo.router}) for c in reset_commands(topo)] == [
        ("tc", "qdisc", "del", "dev", "eth0", "root"), ("tc", "qdisc", "del", "dev", "eth1", "root")]


def test_endpoints_set_what_the_native_endpoint_commands_set():
    topo = Layout("pbtest")
    native = endpoint_commands(topo, PROFILE)
    sysctl = native[0]
    assert [f"{k}={v}" for k, v in sysctl_values(PROFILE).items()] == list(sysctl[6:])
    route = Route("198.19.0.1", "eth0", topo.router_client_ip, "198.18.0.2")
    here = route_command(SERVER_SIDE[0], route, PROFILE)  # the harness's route to the origins' range
    assert here == ("ip", "-4", "route", "replace", "198.19.0.0/16", "via", "198.18.0.1", "dev", "eth0",
                    "initcwnd", "20", "congctl", "cubic")
    options = native[1][native[1].index(topo.endpoint_if) + 1:]
    assert here[-len(options):] == options
    assert CLIENT_SIDE[0].router == topo.router_server_ip and SERVER_SIDE[1].router == topo.router_client_ip6


def test_restore_puts_back_what_was_there_and_empties_the_rest():
    saved = "# Generated\n*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n" \
            "-A INPUT -i lo -j ACCEPT\nCOMMIT\n# Completed\n*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n"
    document = restore_document(saved)
    assert "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -i lo -j ACCEPT\n" \
           "COMMIT\n" in document
    assert "*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n" in document
    assert document.count("COMMIT") == 3 and "*nat" not in document  # Docker's DNS rules are not ours
    assert restore_document("").count(" ACCEPT ") == 2 + 5 + 3


def test_interfaces_and_routes_parse_from_ip_json():
    text = ('[{"ifname":"eth0","addr_info":[{"family":"inet","local":"198.18.1.253","prefixlen":24},'
            '{"family":"inet6","local":"fe80::1","prefixlen":64}]},{"ifname":"lo","addr_info":[]}]')
    assert [(a.interface, a.address, a.family) for a in parse_addresses(text)] == [
        ("eth0", "198.18.1.253", 4), ("eth0", "fe80::1", 6)]
    route = parse_route("198.18.0.2", '[{"dst":"198.18.0.2","gateway":"198.18.1.1","dev":"eth0",'
                                      '"prefsrc":"198.18.1.253"}]')
    assert route == Route("198.18.0.2", "eth0", "198.18.1.1", "198.18.1.253")


def test_both_sides_compare_the_same_plan_and_add_only_missing_addresses(tmp_path):
    site = sitefiles.materialize(sitefiles.resolve("seed000-small-n1"), tmp_path)  # not the machine's data directory
    server_plan = serverplan.plan([site], [KEEPALIVE, H2], ["1.3"])
    rows = binding_rows(server_plan)
    assert [row[1] for row in rows] == ["keepalive", "h2"] and [row[4] for row in rows] == [0, 1]
    present = {"198.19.0.1", "2001:2:0:100::1"}
    assert address_batch(server_plan, "eth0", present) == (
        "address add 198.19.0.2/32 dev eth0\naddress add 2001:2:0:100::2/128 dev eth0 nodad\n")
    assert address_batch(server_plan, "eth0", present, "del") == (
        "address del 198.19.0.2/32 dev eth0\naddress del 2001:2:0:100::2/128 dev eth0\n")


def test_counters_survive_the_channel():
    counters = LinkCounters(tcp_conns=3, bytes_up=1000, lateness_hist=(1, 2, 3))
    assert counters_from(json.loads(json.dumps(dataclasses.asdict(counters)))) == counters


def test_router_and_sites_go_together_on_the_command_line(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("sites: [seed000-small-n1]\nmodes: [h2]\n")
    result = subprocess.run([sys.executable, "-m", "pagebench", "run", str(spec), "--router", "http://198.18.2.1:8700",
                             "--db", f"sqlite:///{tmp_path}/x.sqlite"], capture_output=True, text=True, cwd=HARNESS)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --router and --sites go together: give both, or neither to build the lab here"]
