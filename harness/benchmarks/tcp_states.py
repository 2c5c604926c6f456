"""What holds a connection back: the server's TCP state (`ss -tin`) of every connection
that carries a lot, sampled while `pagebench run` loads a spec, one trace per connection.

    sudo .venv/bin/python harness/benchmarks/tcp_states.py SPEC [--db URL] [--min-mb 1] [--every 0.1]

It runs the spec, and meanwhile samples `ss -tin` inside the lab's server namespace (the
senders of the page's bytes) every `--every` seconds. For each connection that delivered
at least `--min-mb` MB it prints its bytes, how long it sent and at what rate, its
retransmissions, slow start's threshold, the round trip at the end (the base RTT when the
queue was empty, more when it was full) and its congestion window every half second:
enough to tell loss from a window that grows slowly from a link that is full. The
sampling costs some CPU (a process per sample): use it to explain loads, not to time them.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from pagebench.link.check import PROBE_PORT
from pagebench.system.places import TAG_ENV

FIELDS = ("cwnd", "ssthresh", "bytes_acked", "rtt")


@dataclass
class Trace:
    """One connection's samples: (seconds since the run started, field -> value)."""

    samples: list[tuple[float, dict[str, float]]] = field(default_factory=list)


def _parse(line: str) -> tuple[str, dict[str, float]] | None:
    """(local -> peer, fields) of one `ss -tinH` line pair joined, if established."""
    parts = line.split()
    if len(parts) < 5 or parts[0] != "ESTAB" or parts[3].endswith(f":{PROBE_PORT}"):
        return None  # the link check's probe is not the page's
    values = {}
    for name in FIELDS:
        found = re.search(rf"\b{name}:([\d.]+)", line)
        if found:
            values[name] = float(found.group(1))
    retransmitted = re.search(r"\bretrans:\d+/(\d+)", line)  # in flight now / in all
    values["retransmitted"] = float(retransmitted.group(1)) if retransmitted else 0.0
    return f"{parts[3]} -> {parts[4]}", values


def sample(traces: dict[str, Trace], stop: threading.Event, every: float, start: float, prefix: str) -> None:
    """Sample the server namespace of the run's lab (its namespaces start with `prefix`)."""
    while not stop.is_set():
        namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        for namespace in (n for n in namespaces if n.startswith(prefix) and n.endswith("-server")):
            out = subprocess.run(["ip", "netns", "exec", namespace, "ss", "-tinH"], capture_output=True, text=True)
            lines = out.stdout.splitlines()
            now = time.monotonic() - start
            for pair in (" ".join(lines[i:i + 2]) for i in range(0, len(lines) - 1, 2)):
                parsed = _parse(pair)
                if parsed:
                    traces.setdefault(f"{namespace} {parsed[0]}", Trace()).samples.append((now, parsed[1]))
        stop.wait(every)


def report(traces: dict[str, Trace], min_bytes: float) -> None:
    print("| connection | MB | sending (s) | Mbit/s | retransmitted | ssthresh | RTT at end (ms) | cwnd every 0.5 s |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, trace in sorted(traces.items(), key=lambda item: item[1].samples[0][0]):
        last = trace.samples[-1][1]
        acked = last.get("bytes_acked", 0)
        if acked < min_bytes:
            continue
        t0 = trace.samples[0][0]
        done = next(t for t, values in trace.samples if values.get("bytes_acked") == acked)
        seconds = max(done - t0, 1e-3)
        steps, cwnds = 0.0, []
        for t, values in trace.samples:
            if t - t0 >= steps and t <= done:
                cwnds.append(f"{values.get('cwnd', 0):.0f}")
                steps += 0.5
        print(f"| {name.split(' ', 1)[1]} | {acked / 1e6:.2f} | {seconds:.1f} | {acked * 8 / seconds / 1e6:.1f} "
              f"| {last['retransmitted']:.0f} segs | {last.get('ssthresh', 0):.0f} "
              f"| {last.get('rtt', 0):.0f} | {' '.join(cwnds)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("--db", default="sqlite:///tcp-states.sqlite")
    parser.add_argument("--min-mb", type=float, default=1.0, help="report connections that delivered this much")
    parser.add_argument("--every", type=float, default=0.1, help="seconds between samples")
    args = parser.parse_args()
    traces: dict[str, Trace] = {}
    stop = threading.Event()
    tag = "tcp" + secrets.token_hex(1)  # the run's namespaces are pb<tag><hex>: this run's, no other's
    sampler = threading.Thread(target=sample, args=(traces, stop, args.every, time.monotonic(), f"pb{tag}"),
                               daemon=True)
    sampler.start()
    try:
        run = subprocess.run([sys.executable, "-m", "pagebench", "run", args.spec, "--db", args.db],
                             capture_output=True, text=True, env=os.environ | {TAG_ENV: tag})
    finally:
        stop.set()
        sampler.join()
    if run.returncode not in (0, 1):
        sys.exit(f"run: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else run.returncode}")
    print(next((line for line in run.stdout.splitlines() if line.startswith("run ")), ""), file=sys.stderr)
    report(traces, args.min_mb * 1e6)


if __name__ == "__main__":
    main()
