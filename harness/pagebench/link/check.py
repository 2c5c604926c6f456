"""`link check`: measure what the emulated link really does (RTT by TCP handshake,
steady goodput each way, datagram loss, release lateness, drops)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from pagebench.core.profiles import Profile
from pagebench.link import calibration
from pagebench.link.emulator import Link, LinkControl
from pagebench.system.commands import Bed
from pagebench.system.process import ManagedProcess
from pagebench.link.verdict import probe_plan, steady_goodput_mbit, summarize

PROBE_PORT = 5201
PROBE_START_S = 10.0
Step = Callable[[str], None]


def _probe_argv(bed: Bed, ns: str, *args: str) -> list[str]:
    return bed.exec_argv(ns, [sys.executable, "-m", "pagebench.link.probe", *args])


def _client(bed: Bed, *args: str) -> object:
    argv = _probe_argv(bed, bed.layout.client, *args)
    result = bed.run(argv)
    return json.loads(result.stdout)


def serve_probe(bed: Bed, host: str, port: int = PROBE_PORT) -> ManagedProcess:
    """The probe server on `host` in the bed's server namespace, listening (it says "ready" then)."""
    argv = _probe_argv(bed, bed.layout.server, "serve", "--host", host, "--port", str(port))
    server = ManagedProcess("the link check's probe server", argv, bed.state_dir / f"probe-{port}.log", bed=bed)
    server.start(lambda: server.logged("ready"), PROBE_START_S)
    return server


def measure(bed: Bed, link: Link, profile: Profile, step: Step = lambda _: None) -> dict[str, object]:
    """Probe an applied link; leaves the bed as it found it."""
    topo = bed.layout
    host = topo.server_addresses[0]
    server = serve_probe(bed, host)
    try:
        return probe_link(link, profile, host, topo.client_ip, lambda *args: _client(bed, *args), step)
    finally:
        server.stop()


def calibrate_link(link: LinkControl, profile: Profile, host: str, client: Callable[..., object],
                   port: int = PROBE_PORT) -> calibration.Calibration | None:
    """Measure the applied link's handshakes idle and busy, take their fastest's excess off
    the holds (`link.calibration`) and apply that; None where the link cannot."""
    common = ("--host", host, "--port", str(port), "--count", str(calibration.SAMPLES), "--tcp")
    idle = client("rtt", *common)
    busy = client("rtt", *common, "--busy-pps", f"{calibration.busy_pps(profile):.0f}")
    assert isinstance(idle, list) and isinstance(busy, list)
    idle, busy = calibration.first_try(idle), calibration.first_try(busy)
    if not idle or not busy:
        return None  # every handshake of a pass was retransmitted: nothing to go by
    calibrated = calibration.calibrate(profile, idle, busy,
                                       link.holds.get(profile.name, calibration.Hold()))
    if not link.calibrate(profile, calibrated.hold):
        return None
    link.wait_settled()
    return calibrated


def probe_link(link: LinkControl, profile: Profile, host: str, me: str, client: Callable[..., object],
               step: Step = lambda _: None) -> dict[str, object]:
    """The measurement itself, wherever its ends run: a probe server listens on `host`,
    `client(*args)` runs the probe client on the client side (whose address is `me`)."""
    plan = probe_plan(profile)
    link.wait_settled()
    common = ("--host", host, "--port", str(PROBE_PORT))
    calibrated = None
    if link.backend == "userspace" and profile.rtt_ms > 0:
        step(f"calibrating the hold ({calibration.SAMPLES} connects idle, {calibration.SAMPLES} busy)")
        calibrated = calibrate_link(link, profile, host, client)
    before = link.counters()
    step(f"handshake RTT ({plan.rtt_samples} connects)")
    rtt = client("rtt", *common, "--count", str(plan.rtt_samples), "--tcp")
    assert isinstance(rtt, list)
    fixed = calibrated and calibration.give_back(profile, calibrated, calibration.first_try(rtt))
    if fixed and link.calibrate(profile, fixed.hold):
        # the calibration overdrew: the link measured faster than its profile (`give_back`)
        link.wait_settled()
        calibrated = fixed
        step(f"handshake RTT again ({fixed.given_back_us} µs of the hold given back)")
        before = link.counters()  # the program started again with the new hold
        rtt = client("rtt", *common, "--count", str(plan.rtt_samples), "--tcp")
    step(f"goodput down ({plan.bulk_s:.1f} s)")
    down = client("down", *common, "--seconds", str(plan.bulk_s))
    step(f"goodput up ({plan.bulk_s:.1f} s)")
    up = client("up", *common, "--seconds", str(plan.bulk_s))
    step(f"loss ({plan.udp_up[0]} + {plan.udp_down[0]} datagrams)")
    udp = client(
        "loss", *common, "--me", me,
        "--count-up", str(plan.udp_up[0]), "--pps-up", str(plan.udp_up[1]),
        "--count-down", str(plan.udp_down[0]), "--pps-down", str(plan.udp_down[1]),
        "--grace", str(plan.grace_s),
    )
    delta = link.drained_counters() - before
    assert isinstance(down, list) and isinstance(up, list) and isinstance(udp, dict)
    return summarize(
        link.backend, profile, [tuple(pair) for pair in rtt],
        steady_goodput_mbit([tuple(s) for s in down], plan.warm_s),
        steady_goodput_mbit([tuple(s) for s in up], plan.warm_s),
        udp, delta, calibrated,
    )
