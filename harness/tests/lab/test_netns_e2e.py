"""Integration: the testbed is built as specified and nothing survives it: not after
success, not after an exception, not after a failing test, not after SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pagebench.core.layout import MAX_SERVER_IPS, Layout, new_prefix
from pagebench.lab.netns import STATE_ROOT, NamespaceBed, cleanup, existing_namespaces, find_leftovers
from pagebench.link.check import serve_probe
from pagebench.system.commands import run
from pagebench.system.process import ManagedProcess
from pagebench.system.signals import Interrupted, signals_raise
from tests.helpers import HARNESS, leftovers, needs_root, nothing_left, probe, tagged

pytestmark = needs_root


def _gone(prefix: str) -> bool:
    return not any(ns.startswith(prefix) for ns in existing_namespaces()) and not (STATE_ROOT / prefix).exists()


def test_builds_three_namespaces_wired_through_the_router(layout: Layout):
    with NamespaceBed(layout) as bed:
        assert set(layout.namespaces) <= set(existing_namespaces())
        owner = json.loads((bed.state_dir / "owner.json").read_text())
        assert owner["pid"] == os.getpid()
        # offloads off on every veth: one skb is one wire packet
        for ns, dev in ((layout.client, "pb0"), (layout.router, "rc"), (layout.router, "rs"),
                        (layout.server, "pb0")):
            features = run(("ip", "netns", "exec", ns, "ethtool", "-k", dev)).stdout
            for feature in ("tcp-segmentation-offload", "generic-segmentation-offload",
                            "generic-receive-offload"):
                assert f"{feature}: off" in features, (ns, dev, feature)
        # every address valid at once: one turning valid later is a network change to Chromium
        for ns in layout.namespaces:
            addresses = run(("ip", "-n", ns, "-6", "addr", "show")).stdout
            assert "inet6" in addresses and "tentative" not in addresses, (ns, addresses)
        # every origin IP answers across the router, over IPv4 and IPv6
        server = serve_probe(bed, "::", 7000)
        for address in layout.server_addresses + layout.server_addresses6:
            samples = json.loads(probe(layout.client, "rtt", "--host", address, "--port", "7000",
                                       "--count", "3"))
            assert len(samples) == 3 and max(samples) < 20
    assert _gone(layout.prefix)
    assert not server.running


def test_the_full_origin_range_is_added_at_once_and_routed_not_a_neighbour_each(session_tag: str):
    """MAX_SERVER_IPS origins (IPv4 and IPv6) in one `ip -batch`: seconds, not the minutes of
    one `ip` per address; the router reaches them through the server's link address, so its
    neighbour table does not grow with the origins reached (on-link, each would be an entry:
    here 2 x 20). The server's own solicitations may name an origin as their source now and
    then (IPv6 takes the packet's), a handful at most."""
    layout = Layout(new_prefix(session_tag), server_ips=MAX_SERVER_IPS)
    started = time.monotonic()
    with NamespaceBed(layout) as bed:
        built = time.monotonic() - started
        held = run(("ip", "-n", layout.server, "addr", "show", "dev", "pb0")).stdout
        assert held.count(" inet ") == MAX_SERVER_IPS + 1 and held.count("/128 scope global") == MAX_SERVER_IPS
        server = serve_probe(bed, "::", 7000)
        sample = [0, 249, 250, MAX_SERVER_IPS - 1] + list(range(1000, 1016))
        for address in [layout.server_addresses[i] for i in sample] + [layout.server_addresses6[i] for i in sample]:
            samples = json.loads(probe(layout.client, "rtt", "--host", address, "--port", "7000", "--count", "2"))
            assert len(samples) == 2, address
        neighbours = run(("ip", "-n", layout.router, "neigh", "show", "dev", "rs")).stdout
        entries = {line.split()[0] for line in neighbours.splitlines()} - {layout.server_ip, layout.server_ip6}
        assert len({e for e in entries if not e.startswith("fe80:")}) <= 4, entries
    print(f"\nbuilt a lab with {MAX_SERVER_IPS} origin addresses (x2 families) in {built:.2f} s")
    assert built < 20, built  # one `ip` per address: 3 ms each at best, 12 s for these alone
    assert _gone(layout.prefix) and not server.running


def test_exception_inside_tears_everything_down(layout: Layout):
    with pytest.raises(RuntimeError, match="boom"):
        with NamespaceBed(layout) as bed:
            argv = bed.exec_argv(layout.server, ["sleep", "300"])
            sleeper = ManagedProcess("sleep", argv, bed.state_dir / "sleep.log", bed=bed)
            sleeper.start()
            raise RuntimeError("boom")
    assert not sleeper.running
    assert _gone(layout.prefix)


def test_a_signal_during_teardown_waits_for_it_then_stops(layout: Layout):
    """SIGTERM while the lab is torn down (here: a program that ignores SIGTERM, waited out
    for its grace): the teardown finishes, then the signal stops the command. Teardown used
    to ignore it, and the command went on as if none had come (a link check printed its
    result; a run built its next page's lab)."""
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    with signals_raise():
        with pytest.raises(Interrupted, match="SIGTERM"):
            with NamespaceBed(layout) as bed:
                argv = bed.exec_argv(layout.router, [sys.executable, "-c", code])
                stubborn = ManagedProcess("stubborn", argv, bed.state_dir / "stubborn.log", bed=bed, grace=1.0)
                stubborn.start(lambda: stubborn.logged("ready"))
                signaller = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
                signaller.start()  # lands in close(), while it waits out the grace
        signaller.join()
    assert not stubborn.running
    assert _gone(layout.prefix)


def test_processes_started_behind_our_back_are_killed(layout: Layout):
    with NamespaceBed(layout):
        stray = subprocess.Popen(["ip", "netns", "exec", layout.router, "sleep", "300"], start_new_session=True)
        time.sleep(0.2)
    assert stray.wait(timeout=5) is not None
    assert _gone(layout.prefix)


def test_a_failing_test_leaves_nothing(tmp_path: Path, session_tag: str):
    """Run a test that builds a lab and fails, in its own pytest, then look for leftovers."""
    prefix = new_prefix(session_tag)
    test_file = tmp_path / "test_fails.py"
    test_file.write_text(textwrap.dedent(f"""
        from pagebench.core.layout import Layout
        from pagebench.lab.netns import NamespaceBed
        from pagebench.system.process import ManagedProcess

        def test_fails():
            with NamespaceBed(Layout({prefix!r})) as bed:
                argv = bed.exec_argv(bed.layout.router, ["sleep", "300"])
                ManagedProcess("sleep", argv, bed.state_dir / "sleep.log", bed=bed).start()
                assert 1 + 1 == 3, "deliberate failure"
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and "deliberate failure" in result.stdout
    assert _gone(prefix)


def _wait_for_lab(tag_prefix: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for left in find_leftovers():
            if left.prefix.startswith(tag_prefix) and len(left.namespaces) == 3:
                stats = STATE_ROOT / left.prefix / "delay.stats"
                if stats.exists() and stats.stat().st_size > 0:
                    return left.prefix
        time.sleep(0.1)
    raise AssertionError("the lab never came up")


def _start_link_check(tag: str) -> subprocess.Popen[str]:
    """A link check of a group of its own (`tag`): its lab is found by the prefix."""
    return subprocess.Popen([sys.executable, "-m", "pagebench", "link", "check", "--rtt", "20", "--json"],
                            env=tagged(tag=tag), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=HARNESS)


#: Seconds after the link is up (measured on a 2-vCPU VM): the probe server starting, the
#: calibration's idle and busy handshakes, its hold applied (the delay program restarted),
#: the check's own handshakes, goodput down.
SIGNAL_MOMENTS = (0.0, 0.4, 1.0, 1.8, 2.0, 2.2, 2.8, 4.5)


def test_sigterm_mid_check_tears_down(session_tag: str):
    """Wherever a SIGTERM finds the check (a probe's wait, the delay program's restart), it
    ends it at once: 130, one line, nothing left."""
    tag = session_tag + "s"  # each check's lab is gone before the next starts
    for moment in SIGNAL_MOMENTS:
        proc = _start_link_check(tag)
        prefix = _wait_for_lab(f"pb{tag}")
        time.sleep(moment)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130, (moment, stderr)
        assert "interrupted" in stderr and stderr.count("\n") == 1, (moment, stderr)
        assert _gone(prefix), moment
        assert not leftovers()["processes"], moment


def test_kill9_leaves_a_lab_that_cleanup_removes_and_live_labs_are_kept(layout: Layout, session_tag: str):
    tag = session_tag + "k"
    proc = _start_link_check(tag)
    prefix = _wait_for_lab(f"pb{tag}")
    proc.kill()
    proc.wait()
    assert not _gone(prefix)  # SIGKILL cannot be caught: the lab is still there
    with NamespaceBed(layout):  # a live run that cleanup must not touch
        removed = cleanup()
        assert prefix in {left.prefix for left in removed}
        assert layout.prefix not in {left.prefix for left in removed}
        assert set(layout.namespaces) <= set(existing_namespaces())
    assert _gone(prefix) and _gone(layout.prefix)
    ps = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
    assert prefix not in ps
    assert nothing_left()
