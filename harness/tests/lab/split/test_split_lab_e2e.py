"""Integration: the compose lab's three roles as separate processes, with namespaces
standing in for the containers. `pagebench serve router` runs in the router namespace,
`pagebench serve sites` in the server namespace, and `pagebench run --router --sites`
in the client namespace is the harness; they talk over a control network of their own
(veths client-router and client-server), never over the measured link. An app of one's
own given by `url` runs beside the sites role (as a compose service beside `sites`),
started and stopped by the test, never by pagebench."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pagebench.results.store import Store
from pagebench.lab.netns import STATE_ROOT, NamespaceBed
from pagebench.system.commands import run
from pagebench.system.process import ManagedProcess
from pagebench.core.layout import ORIGIN_NETWORK, Layout, new_prefix

from pagebench.lab.servers.apps import free_port
from tests.helpers import DELAY_SLACK_MS, HARNESS, RATE_FLOOR, REPO, needs_root, tagged

pytestmark = needs_root
# The compose file's own control addresses and commands (test_compose checks they agree).
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
ROUTER_LISTEN = COMPOSE["services"]["router"]["command"][-1].rsplit("--listen ", 1)[1]
SITES_LISTEN = COMPOSE["services"]["sites"]["command"][-1].rsplit("--listen ", 1)[1]
ROUTER_URL, SITES_URL = f"http://{ROUTER_LISTEN}", f"http://{SITES_LISTEN}"
CLIENT_CTL = COMPOSE["services"]["harness"]["networks"]["control"]["ipv4_address"]


def control_network(topology: Layout) -> list[tuple[str, ...]]:
    """Point-to-point control links client-router and client-server with the compose
    `control` network's addresses, so control calls never cross the emulated link."""
    c, r, s = topology.namespaces
    cmds: list[tuple[str, ...]] = []
    for peer, dev, listen in ((r, "ctlr", ROUTER_LISTEN), (s, "ctls", SITES_LISTEN)):
        theirs = listen.split(":")[0]
        cmds += [
            ("ip", "-n", c, "link", "add", dev, "type", "veth", "peer", "name", "ctl", "netns", peer),
            ("ip", "-n", c, "addr", "add", CLIENT_CTL, "peer", theirs, "dev", dev),
            ("ip", "-n", peer, "addr", "add", theirs, "peer", CLIENT_CTL, "dev", "ctl"),
            ("ip", "-n", c, "link", "set", dev, "up"),
            ("ip", "-n", peer, "link", "set", "ctl", "up"),
        ]
    return cmds


def start_role(bed: NamespaceBed, ns: str, role: str, *args: str) -> ManagedProcess:
    argv = bed.exec_argv(ns, [sys.executable, "-m", "pagebench", "serve", role, *args])
    process = ManagedProcess(f"the {role} role", argv, bed.state_dir / f"{role}.log", bed=bed, cwd=HARNESS,
                             env=tagged())
    process.start(lambda: "listening on" in process.output(), 30)
    return process


def stop_role(process: ManagedProcess) -> str:
    """SIGTERM: it takes back what it changed, then exits 0. Returns what it said."""
    process.stop(grace=30)
    assert process.returncode == 0, process.output()
    return process.output()


def text(*cmd: str) -> str:
    return run(cmd).stdout


@pytest.fixture(scope="module")
def split_run(tmp_path_factory, session_tag: str) -> Iterator[dict]:
    tmp = tmp_path_factory.mktemp("split")
    spec = tmp / "spec.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "split", "sites": ["seed000-small-n20"], "modes": ["keepalive", "h2"],
        "profiles": [{"name": "r40", "rtt_ms": 40, "down_mbit": 50, "up_mbit": 50}], "cache": ["cold"], "repetitions": 2, "warmup": 1, "seed": 2,
    }))
    db = f"sqlite:///{tmp}/split.sqlite"
    topology = Layout(new_prefix(session_tag), server_ips=1)  # the sites role adds the plan's other addresses
    with NamespaceBed(topology) as bed:
        for cmd in control_network(topology):
            bed.run(cmd)
        router = start_role(bed, topology.router, "router", "--listen", ROUTER_LISTEN)
        sites = start_role(bed, topology.server, "sites", "--listen", SITES_LISTEN)
        harness = subprocess.run(
            bed.exec_argv(topology.client, [sys.executable, "-m", "pagebench", "run", str(spec), "--db", db,
                                            "--router", ROUTER_URL, "--sites", SITES_URL]),
            capture_output=True, text=True, timeout=900, cwd=HARNESS, env=tagged())
        during = {"server_addresses": text("ip", "-n", topology.server, "-4", "addr", "show"),
                  "client_pids": text("ip", "netns", "pids", topology.client).split()}
        stopped = {"router": stop_role(router), "sites": stop_role(sites)}
        after = {
            "qdiscs": text("tc", "-n", topology.router, "qdisc", "show"),
            "rules": [text("ip", "netns", "exec", topology.router, tool) for tool in ("iptables-save", "ip6tables-save")],
            "router_pids": text("ip", "netns", "pids", topology.router).split(),
            "server_pids": text("ip", "netns", "pids", topology.server).split(),
            "server_addresses": text("ip", "-n", topology.server, "addr", "show"),
            "state": sorted(p.name for p in STATE_ROOT.iterdir() if p.name.startswith(f"pb{session_tag}")
                            and p.name != topology.prefix),
        }
        yield {"harness": harness, "db": db, "during": during, "after": after, "stopped": stopped,
               "topology": topology}


def test_the_harness_runs_the_experiment_through_the_roles(split_run):
    result = split_run["harness"]
    assert result.returncode == 0, result.stderr[-3000:]
    run_id = next(line for line in result.stdout.splitlines() if line.startswith("run ")).split()[1]
    store = Store(split_run["db"])
    assert store.experiment(run_id).status == "complete"
    loads = store.loads(run_id)
    assert len(loads) == 2 * 2
    for load in loads:
        assert load.ok and not load.flagged, (load.condition.mode, load.flags)
    (check,) = store.link_checks(run_id)  # its validity depends on the VM's quiet (test_cli)
    assert check.profile == "r40" and 40.0 <= check.rtt_median_ms <= 40 + DELAY_SLACK_MS
    # The check ran through the roles and measured the shaped link. Its accuracy is the
    # link-accuracy benchmark's (docs/benchmarks.md); goodput here drops with the VM's
    # noise (30 Mbit/s once in a busy minute, when native checks were invalid too).
    assert 50 * RATE_FLOOR <= check.down_mbit <= 50 and 50 * RATE_FLOOR <= check.up_mbit <= 50
    assert check.backend == store.experiment(run_id).backend


def test_connections_counted_three_ways_agree_as_in_native_runs(split_run):
    result = split_run["harness"]
    run_id = next(line for line in result.stdout.splitlines() if line.startswith("run ")).split()[1]
    store = Store(split_run["db"])
    for load in store.loads(run_id):
        origins = {r.resource.origin for r in store.resources(load.id)}
        browser, link, server = load.connections_browser, load.connections_link, load.connections_server
        assert browser == server >= len(origins), load.condition  # nginx saw every connection the browser used
        assert link >= browser  # SYNs at the router: one more is an unused preconnect, noted
        if link > browser:
            assert any("carried no request" in note for note in load.notes)
        if load.condition.mode.name == "h2":
            assert browser == len(origins)
        else:
            assert browser <= 6 * len(origins) and browser < load.requests


def test_each_mode_was_served_on_its_own_address_and_given_back_when_the_run_ended(split_run):
    """keepalive and h2 need two server addresses; the namespace had one, the sites role
    added the other, and took it back when the harness stopped the sites (role still up)."""
    result = split_run["harness"]
    run_id = next(line for line in result.stdout.splitlines() if line.startswith("run ")).split()[1]
    store = Store(split_run["db"])
    expected = {"keepalive": "http/1.1", "h2": "h2"}
    for load in store.loads(run_id):
        assert {r.resource.protocol for r in store.resources(load.id)} == {expected[load.condition.mode.name]}
    assert "198.19.0.1/32" in split_run["during"]["server_addresses"]
    assert "198.19.0.2/32" not in split_run["during"]["server_addresses"]
    assert not split_run["during"]["client_pids"]  # the harness left no browser behind


def test_stopping_the_roles_leaves_their_namespaces_as_found(split_run):
    after = split_run["after"]
    assert "stopped" in split_run["stopped"]["router"] and "stopped" in split_run["stopped"]["sites"]
    for kind in ("htb", "netem", "bfifo"):
        assert kind not in after["qdiscs"]
    for saved in after["rules"]:
        assert "-A " not in saved and " DROP" not in saved, saved
    assert not after["router_pids"] and not after["server_pids"]  # delay program, nginx, probes, roles
    assert "198.19.0.2/32" not in after["server_addresses"] and "2001:2:0:100::2/" not in after["server_addresses"]
    assert "198.19.0.1/32" in after["server_addresses"]  # what was there before stays
    assert not after["state"]  # the roles' and the harness's state directories


CONTROL_SCRIPT = """
import json, sys
from pagebench.lab.split.control import Client
router, sites = Client(sys.argv[1], "router"), Client(sys.argv[2], "sites")
print(json.dumps(router.post("/link/open", {"backend": None, "seed": 1})))
router.post("/link/apply", {"profile": {"name": "t", "rtt_ms": 20, "down_mbit": 10, "up_mbit": 5,
                                         "rwnd_bytes": 32767}})
sites.post("/sites/start", {"sites": ["seed000-small-n1"], "modes": ["keepalive", "h2"], "tls": ["1.3"]})
sites.post("/probe/start", {"host": "198.19.0.1", "port": 5201})
"""


def test_sigterm_while_the_link_is_applied_and_sites_served_leaves_nothing(session_tag: str):
    topology = Layout(new_prefix(session_tag), server_ips=1)
    with NamespaceBed(topology) as bed:
        for cmd in control_network(topology):
            bed.run(cmd)
        router = start_role(bed, topology.router, "router", "--listen", ROUTER_LISTEN)
        sites = start_role(bed, topology.server, "sites", "--listen", SITES_LISTEN)
        bed.run(bed.exec_argv(topology.client, [sys.executable, "-c", CONTROL_SCRIPT, ROUTER_URL, SITES_URL]))
        assert "htb" in text("tc", "-n", topology.router, "qdisc", "show")
        assert "pb:up" in text("ip", "netns", "exec", topology.router, "iptables-save")
        assert "--queue-num 2" in text("ip", "netns", "exec", topology.router, "ip6tables-save")  # the clamp
        assert "198.19.0.2/32" in text("ip", "-n", topology.server, "addr", "show")
        assert len(text("ip", "netns", "pids", topology.server).split()) >= 3  # role, nginx, probe server
        stop_role(router)
        stop_role(sites)
        assert "htb" not in text("tc", "-n", topology.router, "qdisc", "show")
        for tool in ("iptables-save", "ip6tables-save"):
            saved = text("ip", "netns", "exec", topology.router, tool)
            assert "-A " not in saved and " DROP" not in saved
        assert not text("ip", "netns", "pids", topology.router).split()
        assert not text("ip", "netns", "pids", topology.server).split()
        assert "198.19.0.2/32" not in text("ip", "-n", topology.server, "addr", "show")


def test_a_router_without_a_route_to_the_origins_says_how_to_add_one(session_tag: str):
    """The origins' range is routed (compose adds the route in the router's command): a
    router role started without it stops at once with one line, having changed nothing."""
    topology = Layout(new_prefix(session_tag), server_ips=1)
    with NamespaceBed(topology) as bed:
        bed.run(("ip", "-n", topology.router, "route", "del", ORIGIN_NETWORK))
        before = text("ip", "netns", "exec", topology.router, "iptables-save")
        argv = bed.exec_argv(topology.router, [sys.executable, "-m", "pagebench", "serve", "router",
                                               "--listen", "127.0.0.1:8799"])
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=HARNESS, env=tagged())
        assert text("ip", "netns", "exec", topology.router, "iptables-save") == before
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: origins {ORIGIN_NETWORK}: the router has no route, not via the sites' address on rs: "
        f"ip route add {ORIGIN_NETWORK} via <the sites' address on the server side>")


SHOPAPP = HARNESS / "tests" / "runner" / "shopapp.py"


def _app_spec(tmp: Path, name: str, port: int, **fields) -> Path:
    spec = tmp / f"{name}.yaml"
    spec.write_text(yaml.safe_dump({
        "name": name, "seed": 3, "warmup": 0, "cache": ["cold"], "profiles": [{"name": "lan", "rtt_ms": 4}],
        "timeouts": {"link_check": False},
        "sites": [{"name": "shop", "origins": ["shop.test", "static.shop.test"],
                   "app": {"url": f"http://localhost:{port}", "ready": "/health", "ready_timeout_s": 10}}],
    } | fields))
    return spec


def test_an_app_given_by_url_is_served_through_the_sites_role_and_its_failure_fails_the_run(session_tag, tmp_path):
    """The app listens where only the sites role reaches it (the server side's loopback:
    the harness cannot), so its health can only have been asked over the control channel."""
    topology = Layout(new_prefix(session_tag), server_ips=1)
    db = f"sqlite:///{tmp_path}/apps.sqlite"
    with NamespaceBed(topology) as bed:
        for cmd in control_network(topology):
            bed.run(cmd)
        router = start_role(bed, topology.router, "router", "--listen", ROUTER_LISTEN)
        sites = start_role(bed, topology.server, "sites", "--listen", SITES_LISTEN)

        def app(port: int, *flags: str) -> ManagedProcess:
            process = ManagedProcess(f"shop {port}", bed.exec_argv(topology.server, [sys.executable, str(SHOPAPP),
                                     str(port), *flags]), bed.state_dir / f"shop-{port}.log", bed=bed)
            process.start(lambda: "listening on" in process.output(), 30)
            return process

        def harness(spec: Path) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                bed.exec_argv(topology.client, [sys.executable, "-m", "pagebench", "run", str(spec), "--db", db,
                                                "--router", ROUTER_URL, "--sites", SITES_URL]),
                capture_output=True, text=True, timeout=600, cwd=HARNESS, env=tagged())

        well = app(port := free_port(topology.server))
        good = harness(_app_spec(tmp_path, "good", port, modes=["h2", "h3"], repetitions=2))
        well_after = well.running
        crashing = app(crash_port := free_port(topology.server), "--crash-after", "2")
        bad = harness(_app_spec(tmp_path, "bad", crash_port, modes=["h2"], repetitions=4))
        shop_log, crash_log = well.output(), crashing.output()
        well.stop()
        stopped = {"router": stop_role(router), "sites": stop_role(sites)}
        unreachable = subprocess.run(bed.exec_argv(topology.client, ["curl", "-sS", "-m", "2", "--noproxy", "*",
                                                                     f"http://localhost:{port}/health"]),
                                     capture_output=True, text=True)
    assert good.returncode == 0, good.stderr[-3000:]
    store = Store(db)
    good_id = next(line for line in good.stdout.splitlines() if line.startswith("run ")).split()[1]
    assert store.experiment(good_id).status == "complete"
    loads = store.loads(good_id)
    assert {load.condition.mode.name for load in loads} == {"h2", "h3"} and len(loads) == 4
    for load in loads:
        assert load.ok and load.requests == 3, (load.condition.label, load.errors, load.flags)
        by_url = {row.resource.url: row.resource for row in store.resources(load.id)}
        assert by_url["https://shop.test/app.js"].content_encoding == "gzip"  # the app's own, passed through
        assert {r.protocol for r in by_url.values()} == {load.condition.mode.browser_protocol}
    assert shop_log.count('shop: shop.test "GET / HTTP/1.1" 200') == 4  # every page through the sites role
    assert shop_log.count('"GET /health HTTP/1.1" 200') >= 1 + 4  # ready, then after each load
    assert well_after  # not pagebench's to stop
    assert unreachable.returncode != 0  # the harness's namespace cannot reach the app itself

    lines = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
    assert bad.returncode == 2 and len(lines) == 1, bad.stderr[-3000:]
    assert "Traceback" not in bad.stderr
    assert lines[0].startswith("error: app shop answered 502 for the page https://shop.test/ (the app runs on its "
                               "own: see its log"), lines[0]
    assert "crashing at page request 3" in crash_log
    bad_run = next(run for run in store.runs() if run.run_id != good_id)
    assert bad_run.status == "failed" and bad_run.reason.startswith("app shop answered 502")
    kept = store.loads(bad_run.run_id)
    assert len(kept) == 2 and all(load.ok for load in kept)  # none after the app's last good check
    assert "stopped" in stopped["sites"]
