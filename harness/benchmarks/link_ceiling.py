"""The userspace link's ceiling on this machine: the rate and the packet rate past which
its release lateness p99 passes 1 ms (where `link check` calls a link invalid).

    sudo flock /tmp/pagebench-e2e.lock .venv/bin/python harness/benchmarks/link_ceiling.py [--repeat 3] > ceiling.md

One lab, the userspace backend, one RTT throughout (--rtt, 20 ms by default). Rate sweep: the profile's rate
both ways (10 .. 1000 Mbit/s, htb as in every run) and one bulk TCP transfer down for
--seconds; packet-rate sweep: no rate limit, 64-byte datagrams up at a paced rate. Each
point is measured --repeat times; the table gives the median over the repeats of each
measurement's lateness p99 (from the delay program's own histogram, over what that
measurement released), the worst p99 and max apart, and the CPU steal time of the host
during the point (a VM's stalls are the host's, not the emulator's: a point whose worst
repeat is far above its median, with steal, stalled). The netem backend is measured
where the kernel has sch_netem; where it has not, the script says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pagebench.core.layout import Layout, new_prefix
from pagebench.core.profiles import make_profile
from pagebench.lab.netns import NamespaceBed
from pagebench.link import delaystats
from pagebench.link.check import PROBE_PORT, serve_probe
from pagebench.link.emulator import Link, netem_available
from pagebench.link.verdict import MAX_LATENESS_P99_US, steady_goodput_mbit

RATES = (10, 20, 50, 100, 200, 500, 1000)
PACKET_RATES = (2_000, 5_000, 10_000, 20_000, 50_000)
RTT_MS = 20.0


def _cpu() -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs so far."""
    values = list(map(int, Path("/proc/stat").read_text().splitlines()[0].split()[1:]))
    return values[7], sum(values)


def _probe(bed: NamespaceBed, *args: str) -> object:
    argv = bed.exec_argv(bed.layout.client, [sys.executable, "-m", "pagebench.link.probe", *args])
    return json.loads(subprocess.run(argv, check=True, capture_output=True, text=True, timeout=300).stdout)


def _measure(bed: NamespaceBed, link: Link, run) -> dict:
    """Run `run()` and read what the delay program released meanwhile."""
    link.wait_settled()
    before, (steal0, total0) = delaystats.read(link.stats_path), _cpu()
    extra = run()
    link.wait_settled(10)
    after, (steal1, total1) = delaystats.read(link.stats_path), _cpu()
    hist = [a - b for a, b in zip(after.hist, before.hist)]
    released = sum(hist)
    return {
        "released": released,
        "p50": delaystats.percentile_us(hist, 50) if released else None,
        "p99": delaystats.percentile_us(hist, 99) if released else None,
        "max": delaystats.percentile_us(hist, 100) if released else None,
        "steal_pct": round(100 * (steal1 - steal0) / max(1, total1 - total0), 1),
        "enobufs": after.recv_enobufs - before.recv_enobufs,
        **extra,
    }


def rate_point(bed: NamespaceBed, link: Link, mbit: float, seconds: float, rtt_ms: float) -> dict:
    link.apply(make_profile({"name": f"ceiling-{mbit:g}", "rtt_ms": rtt_ms, "down_mbit": mbit, "up_mbit": mbit}))
    host = bed.layout.server_addresses[0]

    def run() -> dict:
        samples = _probe(bed, "down", "--host", host, "--port", str(PROBE_PORT), "--seconds", str(seconds))
        assert isinstance(samples, list)
        return {"goodput_mbit": round(steady_goodput_mbit([tuple(s) for s in samples], 1.0), 2)}

    return _measure(bed, link, run)


def packet_point(bed: NamespaceBed, link: Link, pps: int, seconds: float, rtt_ms: float) -> dict:
    link.apply(make_profile({"name": f"ceiling-{pps}pps", "rtt_ms": rtt_ms}))
    host = bed.layout.server_addresses[0]

    def run() -> dict:
        udp = _probe(bed, "loss", "--host", host, "--port", str(PROBE_PORT), "--me", bed.layout.client_ip,
                     "--count-up", str(int(pps * seconds)), "--pps-up", str(pps),
                     "--count-down", "100", "--pps-down", "1000", "--grace", "0.5")
        assert isinstance(udp, dict)
        return {"received_pct": round(100 * udp["up"]["received"] / udp["up"]["sent"], 2)}

    return _measure(bed, link, run)


def _row(label: str, points: list[dict], extra: str) -> str:
    p99 = [p["p99"] for p in points if p["p99"] is not None]
    med = statistics.median(p99) if p99 else float("nan")
    verdict = "ok" if med <= MAX_LATENESS_P99_US else "over"
    return (f"| {label} | {extra} | {med:.0f} | {max(p99):.0f} | {max(p['max'] for p in points):.0f} "
            f"| {', '.join(str(p['steal_pct']) for p in points)} | {verdict} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rates", default=",".join(map(str, RATES)))
    parser.add_argument("--packet-rates", default=",".join(map(str, PACKET_RATES)))
    parser.add_argument("--rtt", type=float, default=RTT_MS, help="the links' RTT (ms)")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{started}; host {platform.node()}, kernel {platform.release()}, {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.2f} at the start; RTT {args.rtt:g} ms; {args.repeat} repeats of "
          f"{args.seconds:g} s\n")
    if not netem_available():
        print("netem backend: not measured (this kernel has no sch_netem)\n")
    raw: dict[str, list[dict]] = {}
    print("| userspace backend | goodput (Mbit/s) or datagrams received | lateness p99, median of repeats (µs) "
          "| worst p99 | max | steal % per repeat | p99 <= 1 ms |")
    print("|---|---|---|---|---|---|---|")
    with NamespaceBed(Layout(new_prefix("ceil"))) as bed:
        link = Link(bed, "userspace")
        serve_probe(bed, bed.layout.server_addresses[0])
        for mbit in map(float, filter(None, args.rates.split(","))):
            points = [rate_point(bed, link, mbit, args.seconds, args.rtt) for _ in range(args.repeat)]
            raw[f"{mbit:g} Mbit/s"] = points
            print(_row(f"{mbit:g} Mbit/s bulk TCP down", points,
                       " / ".join(f"{p['goodput_mbit']:.1f}" for p in points)), flush=True)
        for pps in map(int, filter(None, args.packet_rates.split(","))):
            points = [packet_point(bed, link, pps, args.seconds, args.rtt) for _ in range(args.repeat)]
            raw[f"{pps} pps"] = points
            print(_row(f"{pps} datagrams/s up (64 B)", points,
                       " / ".join(f"{p['received_pct']:.1f} %" for p in points)), flush=True)
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
