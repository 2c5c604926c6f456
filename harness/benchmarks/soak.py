"""Soak benchmark (issue 16): 1,000 cold loads in one run, watched from outside.

    sudo .venv/bin/python harness/benchmarks/soak.py [--loads 1000] > soak.md

Two modes (keep-alive and h2), each direct and through the edge proxy, on one small
site (seed000-small-n2) over a fast link (10 ms, 100 Mbit/s each way). While the run goes,
every 2 s: the runner's resident memory and open file descriptors, and the number of
Chromium and edge-proxy processes. Afterwards, from the store: load times of the first
and last hundred loads of each condition (ratio of medians with its 95 % interval), and
a link check before and after the run. Prints a markdown table for docs/benchmarks.md.
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
from pagebench.core.modes import H2, KEEPALIVE
from pagebench.results.store import Store

SAMPLE_S = 2.0
EDGE = 100  # loads at each end compared for drift


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
            "chromium": proc_count("chromium-headless-shell"), "proxy": proc_count("pagebench.edge.serve")}


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys against xs."""
    return float(np.polyfit(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=1000)
    args = parser.parse_args()
    conditions = 4
    spec = {"name": "soak", "sites": ["seed000-small-n2"], "modes": [KEEPALIVE.name, H2.name],
            "topology": ["direct", "proxy"], "profiles": [{"name": "fast", "rtt_ms": 10, "down_mbit": 100, "up_mbit": 100}], "cache": ["cold"],
            "repetitions": args.loads // conditions, "warmup": 0, "timeouts": {"link_check": False}}
    before = link_check()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "soak.yaml"
        path.write_text(yaml.safe_dump(spec))
        db = f"sqlite:///{tmp}/soak.sqlite"
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
            raise SystemExit("the soak run failed")
        wall = time.time() - started
        run_id = next(line for line in out.splitlines() if line.startswith("run ")).split()[1]
        store = Store(db)
        loads = store.loads(run_id)
    after = link_check()

    # Memory and descriptors against loads done (by time: the loads' own record times).
    done_at = sorted(load["recorded_at"] for load in loads)
    first_load, last_load = done_at[0], done_at[-1]
    # between the first and the last load: not start-up, the proxy's overhead loads or teardown
    steady = [(t, s) for t, s in samples if first_load < t < last_load]
    done = [sum(1 for d in done_at if d <= t) for t, _ in steady]
    rss = [s["rss_mib"] for _, s in steady]
    fds = [s["fds"] for _, s in steady]
    print(f"Soak: {len(loads)} cold loads, {wall / 60:.1f} min, {len(samples)} samples of the runner every "
          f"{SAMPLE_S:g} s.\n")
    print("| what | first | last | min .. max | slope |")
    print("|---|---|---|---|---|")
    print(f"| runner RSS (MiB) | {rss[0]:.1f} | {rss[-1]:.1f} | {min(rss):.1f} .. {max(rss):.1f} | "
          f"{slope(done, rss) * 1000:+.2f} MiB per 1,000 loads |")
    print(f"| runner open fds | {fds[0]} | {fds[-1]} | {min(fds)} .. {max(fds)} | "
          f"{slope(done, fds) * 1000:+.2f} per 1,000 loads |")
    for key in ("chromium", "proxy"):
        counts = [s[key] for _, s in steady]
        print(f"| {key} processes | {counts[0]} | {counts[-1]} | {min(counts)} .. {max(counts)} | |")
    print("\n| condition | n | median first 100 (ms) | median last 100 (ms) | last / first (95 % interval) |")
    print("|---|---|---|---|---|")
    keys = sorted({(load["mode"], load["topology"]) for load in loads})
    for mode, topology in keys:
        times = [load["load_ms"] for load in sorted(loads, key=lambda l: l["seq"])
                 if load["mode"] == mode and load["topology"] == topology and load["ok"] and not load["flagged"]]
        edge = min(EDGE, len(times) // 2)
        first, last = times[:edge], times[-edge:]
        ratio = ratio_ci(last, first)
        print(f"| {mode} {topology} | {len(times)} | {statistics.median(first):.0f} | {statistics.median(last):.0f} "
              f"| {ratio.estimate:.3f} ({ratio.low:.3f} .. {ratio.high:.3f}) |")
    flagged = sum(1 for load in loads if load["flagged"] or not load["ok"])
    print(f"\nFlagged or failed loads: {flagged}.\n")
    print("| link check | RTT median (ms) | p95 | goodput down (Mbit/s) | lateness p99 (µs) | valid |")
    print("|---|---|---|---|---|---|")
    for name, check in (("before", before), ("after", after)):
        m = check["measured"]
        print(f"| {name} | {m['rtt_ms']['median']:.2f} | {m['rtt_ms']['p95']:.2f} | {m['down_mbit']:.0f} | "
              f"{check['lateness_us']['p99']} | {check['valid']} |")


if __name__ == "__main__":
    main()
