"""Link accuracy benchmark: `pagebench link check` on the issue's acceptance links, with
the machine idle and with every core kept busy by another process (as the browser will).

    sudo .venv/bin/python harness/benchmarks/link_accuracy.py [--repeat N] > table.md

Prints a Markdown table (the figures in docs/benchmarks.md come from it).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
from contextlib import contextmanager
from collections.abc import Iterator

CASES = [
    ("50 ms, 10/10 Mbit/s", ["--rtt", "50", "--down", "10", "--up", "10"]),
    ("100 ms, 100/100 Mbit/s", ["--rtt", "100", "--down", "100", "--up", "100"]),
    ("50 ms, 10/10 Mbit/s, 1 % loss", ["--rtt", "50", "--down", "10", "--up", "10", "--loss", "1"]),
]


def _burn() -> None:
    while True:
        pass


@contextmanager
def busy_cores(on: bool) -> Iterator[None]:
    """One busy loop per core at normal priority, for the duration of the block."""
    procs = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(os.cpu_count() or 1)] if on else []
    for proc in procs:
        proc.start()
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.join()


def check(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-m", "pagebench", "link", "check", "--json", *args],
                         capture_output=True, text=True)
    if out.stdout.strip() == "":
        raise SystemExit(f"link check {' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"host: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} cores\n")
    print("| link | load | backend | RTT median / p95 (ms) | down / up (Mbit/s) | loss % (n) "
          "| lateness p50 / p99 / max (µs) | NFQUEUE drops | valid |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, case in CASES:
        for busy in (False, True):
            for _ in range(args.repeat):
                with busy_cores(busy):
                    r = check(case)
                m, late = r["measured"], r["lateness_us"]
                n = sum(v["sent"] for v in m["loss"].values())
                print(f"| {label} | {'all cores busy' if busy else 'idle'} | {r['backend']} "
                      f"| {m['rtt_ms']['median']:.2f} / {m['rtt_ms']['p95']:.2f} "
                      f"| {m['down_mbit']:.2f} / {m['up_mbit']:.2f} | {m['loss_pct']:.2f} ({n}) "
                      f"| {late['p50']} / {late['p99']} / {late['max']} | {r['drops']['nfqueue']} "
                      f"| {r['valid']} |", flush=True)


if __name__ == "__main__":
    main()
