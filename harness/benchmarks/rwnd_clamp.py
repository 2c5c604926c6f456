"""Receive-window clamp benchmark: one bulk connection server -> client through a link
with `rwnd_bytes`, against window / RTT, in both families; and what the clamp's extra
NFQUEUE pass costs a handshake.

    sudo .venv/bin/python harness/benchmarks/rwnd_clamp.py > table.md

Prints Markdown tables (the figures in docs/benchmarks.md come from it). Goodput is the
slope of the bytes the application read, fitted from 3 s to 10 s: segments x MSS would
count the short segment that ends each window (32767 B = 22 x 1448 + 911) as a full one,
and two points could be a window apart in phase.
"""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

from pagebench.core.layout import Layout
from pagebench.core.profiles import make_profile
from pagebench.lab.netns import NamespaceBed
from pagebench.link.check import serve_probe
from pagebench.link.emulator import Link
from pagebench.system.places import run_prefix

PORT = "7100"
SECONDS, WARM_S = 10.0, 3.0
CASES = [(120, None), (120, 32767), (120, 16384), (120, 65535), (60, 32767)]


def probe(bed: NamespaceBed, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(bed.exec_argv(bed.layout.client, [sys.executable, "-m", "pagebench.link.probe", *args,
                                                              "--port", PORT]), stdout=subprocess.PIPE, text=True)


def bulk(bed: NamespaceBed, host: str) -> tuple[float, str]:
    """(application goodput in Mbit/s, the sender's snd_wnd and wscale from `ss -ti`)."""
    proc = probe(bed, "down", "--host", host, "--seconds", str(SECONDS))
    time.sleep(SECONDS / 2)
    ss = subprocess.run(bed.exec_argv(bed.layout.server, ["ss", "-tin", "state", "established",
                                                          f"( sport = :{PORT} )"]),
                        capture_output=True, text=True, check=True).stdout
    steady = [s for s in json.loads(proc.communicate(timeout=SECONDS + 60)[0]) if s[0] >= WARM_S]
    fit = statistics.linear_regression([s[0] for s in steady], [s[1] for s in steady])
    seen = " ".join(re.findall(r"wscale:\S+|snd_wnd:\d+", ss))
    return fit.slope * 8 / 1e6, seen


def handshake_ms(bed: NamespaceBed, host: str) -> tuple[float, float]:
    samples = json.loads(probe(bed, "rtt", "--host", host, "--count", "50").communicate(timeout=60)[0])
    return statistics.median(samples), sorted(samples)[round(0.95 * len(samples)) - 1]


def main() -> None:
    print(f"host: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} cores\n")
    with NamespaceBed(Layout(run_prefix(), server_ips=2)) as bed:
        link = Link(bed)
        serve_probe(bed, "::", int(PORT))
        hosts = (bed.layout.server_addresses[0], bed.layout.server_addresses6[1])
        print("| RTT (ms) | rwnd_bytes | family | backend | goodput (Mbit/s) | window / RTT | ratio "
              "| sender (ss -ti) |")
        print("|---|---|---|---|---|---|---|---|")
        for rtt, rwnd in CASES:
            fields: dict[str, object] = {"name": "b", "rtt_ms": rtt}
            if rwnd is not None:
                fields["rwnd_bytes"] = rwnd
            link.apply(make_profile(fields))
            for family, host in zip(("IPv4", "IPv6"), hosts):
                goodput, seen = bulk(bed, host)
                want = rwnd * 8 / (rtt / 1000) / 1e6 if rwnd else None
                ratio = f"{goodput / want:.3f}" if want else "–"
                print(f"| {rtt} | {rwnd or 'none'} | {family} | {link.backend} | {goodput:.3f} "
                      f"| {f'{want:.3f}' if want else '–'} | {ratio} | {seen} |", flush=True)
        print("\n| RTT (ms) | rwnd_bytes | handshake median / p95 (ms) |")
        print("|---|---|---|")
        for _ in range(2):
            for rwnd in (None, 32767):
                link.apply(make_profile({"name": "h", "rtt_ms": 40, **({"rwnd_bytes": rwnd} if rwnd else {})}))
                median, p95 = handshake_ms(bed, hosts[0])
                print(f"| 40 | {rwnd or 'none'} | {median:.3f} / {p95:.3f} |", flush=True)


if __name__ == "__main__":
    main()
