"""Soak benchmark (issue 16): 1,000 cold loads in one run, watched from outside.

    sudo .venv/bin/python harness/benchmarks/soak.py [--loads 1000] > soak.md

Two modes (keep-alive and h2), each direct and through the edge proxy, on one small
site (seed000-small-n2) over a fast link (10 ms, 100 Mbit/s each way). While the run goes,
every 2 s: the runner's resident memory and open file descriptors, and the number of
Chromium and edge-proxy processes. Afterwards, from the store: load times of the first
and last hundred loads of each condition (ratio of medians with its 95 % interval), and
a link check before and after the run. Prints a markdown table for docs/benchmarks.md.

Two controls tell a drift of the run from a drift of the machine: a fresh run of the same
conditions right after the soak (--control loads: a new runner, new browsers, a new delay
program), compared with the soak's first hundred; and a second link check after a rest.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from pagebench.analysis.stats import ratio_ci
from pagebench.core.modes import H2, KEEPALIVE, Mode, rank
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

SAMPLE_S = 2.0
EDGE = 100  # loads at each end compared for drift
REST_S = 60.0  # between the two link checks after the soak


def link_check() -> dict:
    out = subprocess.run([sys.executable, "-m", "pagebench", "link", "check", "--rtt", "10", "--down", "100",
                          "--up", "100", "--json"], capture_output=True, text=True)
    if out.returncode not in (0, 1) or not out.stdout.strip():  # 1: measured, and not valid
        raise SystemExit(f"link check failed: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)


def proc_count(pattern: str) -> int:
    return len(subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split())


def sample(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    return {"rss_mib": rss_kb / 1024, "fds": fds,
            "chromium": proc_count("chromium-headless-shell"), "proxy": proc_count("pagebench.edge.serve"),
            "delay_mib": delay_rss_mib()}


def delay_rss_mib() -> float:
    """Resident memory of the delay program(s), summed (0 when none runs)."""
    total = 0
    for pid in subprocess.run(["pgrep", "-x", "pagebench-delay"], capture_output=True, text=True).stdout.split():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return total / 1024


def run(spec: dict, tmp: Path, name: str) -> tuple[list[LoadRow], list[tuple[float, dict[str, float]]], float]:
    """One `pagebench run` of spec, sampled from outside: its loads, the samples, wall seconds."""
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    db = f"sqlite:///{tmp}/{name}.sqlite"
    started = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(path), "--db", db],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    samples: list[tuple[float, dict[str, float]]] = []
    while proc.poll() is None:
        time.sleep(SAMPLE_S)
        try:
            samples.append((time.time(), sample(proc.pid)))
        except (OSError, StopIteration):
            pass
    out = proc.communicate()[0]
    if proc.returncode != 0:
        raise SystemExit(f"the {name} run failed")
    run_id = next(line for line in out.splitlines() if line.startswith("run ")).split()[1]
    return Store(db).loads(run_id), samples, time.time() - started


def times_of(loads: list[LoadRow], mode: Mode, topology: str) -> list[float]:
    """Good load times of one condition, in run order."""
    return [load.load_ms for load in sorted(loads, key=lambda l: l.seq)
            if load.condition.mode == mode and load.condition.topology == topology and load.ok and not load.flagged]


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys against xs."""
    return float(np.polyfit(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=1000)
    parser.add_argument("--control", type=int, default=200, help="loads of the fresh run after the soak")
    args = parser.parse_args()
    conditions = 4
    spec = {"name": "soak", "sites": ["seed000-small-n2"], "modes": [KEEPALIVE.name, H2.name],
            "topology": ["direct", "proxy"], "profiles": [{"name": "fast", "rtt_ms": 10, "down_mbit": 100, "up_mbit": 100}], "cache": ["cold"],
            "repetitions": args.loads // conditions, "warmup": 0, "timeouts": {"link_check": False}}
    before = link_check()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        loads, samples, wall = run(spec, tmp, "soak")
        after = link_check()
        time.sleep(REST_S)
        rested = link_check()
        control, _, _ = run({**spec, "name": "control", "repetitions": args.control // conditions}, tmp, "control")

    # Memory and descriptors against loads done (by time: the loads' own record times).
    done_at = sorted(load.recorded_at for load in loads)
    first_load, last_load = done_at[0], done_at[-1]
    # between the first and the last load: not start-up, the proxy's overhead loads or teardown
    steady = [(t, s) for t, s in samples if first_load < t < last_load]
    done = [sum(1 for d in done_at if d <= t) for t, _ in steady]
    print(f"Soak: {len(loads)} cold loads, {wall / 60:.1f} min, {len(samples)} samples of the runner every "
          f"{SAMPLE_S:g} s ({len(steady)} between the first and the last load).\n")
    print("| what | first | last | min .. max | slope |")
    print("|---|---|---|---|---|")
    for key, what, unit in (("rss_mib", "runner RSS (MiB)", " MiB"), ("fds", "runner open fds", ""),
                            ("delay_mib", "delay program RSS (MiB)", " MiB")):
        ys = [s[key] for _, s in steady]
        print(f"| {what} | {ys[0]:.1f} | {ys[-1]:.1f} | {min(ys):.1f} .. {max(ys):.1f} | "
              f"{slope(done, ys) * 1000:+.2f}{unit} per 1,000 loads |")
    for key in ("chromium", "proxy"):
        counts = [s[key] for _, s in steady]
        print(f"| {key} processes | {counts[0]} | {counts[-1]} | {min(counts)} .. {max(counts)} | |")
    print("\n| condition | n | median first 100 (ms) | median last 100 (ms) | last / first (95 % interval) "
          "| fresh run after: n, median (ms) | fresh / first (95 % interval) |")
    print("|---|---|---|---|---|---|---|")
    keys = sorted({(load.condition.mode, load.condition.topology) for load in loads}, key=lambda k: (rank(k[0]), k[1]))
    for mode, topology in keys:
        times = times_of(loads, mode, topology)
        fresh = times_of(control, mode, topology)
        edge = min(EDGE, len(times) // 2)
        first, last = times[:edge], times[-edge:]
        drift, reset = ratio_ci(last, first), ratio_ci(fresh, first)
        print(f"| {mode} {topology} | {len(times)} | {statistics.median(first):.0f} | {statistics.median(last):.0f} "
              f"| {drift.estimate:.3f} ({drift.low:.3f} .. {drift.high:.3f}) | {len(fresh)}, "
              f"{statistics.median(fresh):.0f} | {reset.estimate:.3f} ({reset.low:.3f} .. {reset.high:.3f}) |")
    flagged = sum(1 for load in loads + control if load.flagged or not load.ok)
    print(f"\nFlagged or failed loads: {flagged}.\n")
    print("| link check | RTT median (ms) | p95 | goodput down (Mbit/s) | lateness p99 (µs) | valid |")
    print("|---|---|---|---|---|---|")
    for label, check in (("before", before), ("right after", after), (f"after {REST_S:.0f} s rest", rested)):
        m = check["measured"]
        print(f"| {label} | {m['rtt_ms']['median']:.2f} | {m['rtt_ms']['p95']:.2f} | {m['down_mbit']:.0f} | "
              f"{check['lateness_us']['p99']} | {check['valid']} |")


if __name__ == "__main__":
    main()
