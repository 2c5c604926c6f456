"""Page-load throughput and stability benchmark (issue 3's targets).

    sudo .venv/bin/python harness/benchmarks/page_loads.py > table.md

1. Cold loads per minute of the 20-image seed-000 page at 20 ms RTT (target >= 60/min),
   per mode: wall-clock from the first load's start to the last load's start.
2. Coefficient of variation of load time over 20 cold h2 loads of the same page at
   50 ms RTT, 10/10 Mbit/s (target <= 3 %), in CV_RUNS separate runs: one run's CV is
   itself noisy, and a single lucky or unlucky figure would say little.
3. The fixed overhead per load in those runs (target <= 0.3 s): the wall time of the
   measured loads over their number, less their mean load time (`load_overhead.py`
   says where it goes).

The CV runs are made twice, interleaved: as a run is by default (every load's frames
captured for its visual metrics) and with `--no-frames` (no capture: what a run that
wants no SpeedIndex pays), each with its own CV and overhead figures.

Each runs a real `pagebench run` into a throwaway SQLite store and reads the store.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from pagebench.core.modes import H2, HTTP10, KEEPALIVE
from pagebench.results.store import Store

CV_RUNS = 5


def run(spec: dict, workdir: Path, *options: str) -> tuple[Store, str]:
    path = workdir / f"{spec['name']}.yaml"
    path.write_text(yaml.safe_dump(spec))
    db = f"sqlite:///{workdir}/bench.sqlite"
    out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(path), "--db", db, *options],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"pagebench run failed: {out.stderr.strip().splitlines()[-1]}")
    line = next(line for line in out.stdout.splitlines() if line.startswith("run "))
    return Store(db), line.split()[1]


def overhead_ms(loads: list) -> float:
    """What each measured load cost beyond the page: the wall time of the measured loads
    (first start to last commit) over their number, less their mean load time (issue 29)."""
    wall = (max(l.recorded_at for l in loads) - min(l.started_at for l in loads)) * 1000
    return wall / len(loads) - statistics.fmean(l.load_ms for l in loads)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        store, run_id = run({"name": "rate", "sites": ["seed000-small-n20"], "modes": [HTTP10.name, KEEPALIVE.name, H2.name],
                             "profiles": [{"name": "rtt20", "rtt_ms": 20}], "cache": ["cold"],
                             "repetitions": 30, "warmup": 1, "timeouts": {"link_check": False}}, workdir)
        loads = store.loads(run_id, include_warmup=True)
        span = max(l.started_at for l in loads) - min(l.started_at for l in loads)
        per_minute = (len(loads) - 1) / span * 60
        print("| benchmark | figure | target |")
        print("|---|---|---|")
        print(f"| cold loads per minute, seed000-small-n20, 20 ms RTT, modes interleaved "
              f"({len(loads)} loads) | {per_minute:.0f}/min | >= 60/min |")
        for mode in (HTTP10, KEEPALIVE, H2):
            times = [l.load_ms for l in loads if l.condition.mode is mode and not l.warmup]
            print(f"| load time {mode}, median (n={len(times)}) | {statistics.median(times):.0f} ms | |")
        flagged = sum(1 for l in loads if l.flagged)
        print(f"| flagged loads | {flagged} | 0 |")

        variants = {"frames (default)": (), "--no-frames": ("--no-frames",)}
        cvs: dict[str, list[float]] = {label: [] for label in variants}
        overheads: dict[str, list[float]] = {label: [] for label in variants}
        for attempt in range(CV_RUNS):
            order = list(variants) if attempt % 2 == 0 else list(variants)[::-1]
            for label in order:
                store, run_id = run({"name": f"cv{attempt}", "sites": ["seed000-small-n20"], "modes": [H2.name],
                                     "profiles": [{"name": "r50-10", "rtt_ms": 50, "down_mbit": 10, "up_mbit": 10}],
                                     "cache": ["cold"], "repetitions": 20, "warmup": 1,
                                     "timeouts": {"link_check": False}}, workdir, *variants[label])
                measured = store.loads(run_id)
                times = [l.load_ms for l in measured]
                cvs[label].append(statistics.stdev(times) / statistics.mean(times))
                overheads[label].append(overhead_ms(measured))
                print(f"| load time CV, run {attempt + 1}, {label}: 20 cold h2 loads, seed000-small-n20, 50 ms, "
                      f"10/10 Mbit/s | {100 * cvs[label][-1]:.2f} % (median {statistics.median(times):.0f} ms, "
                      f"min {min(times):.0f}, max {max(times):.0f}) | <= 3 % |")
        for label in variants:
            print(f"| load time CV, {label}, median of {CV_RUNS} runs | {100 * statistics.median(cvs[label]):.2f} % "
                  f"({sum(cv <= 0.03 for cv in cvs[label])} of {CV_RUNS} runs <= 3 %) | <= 3 % |")
            print(f"| overhead per load, {label} (wall time of the measured loads / their number - mean load "
                  f"time), each run | {', '.join(f'{o:.0f}' for o in overheads[label])} ms "
                  f"(median {statistics.median(overheads[label]):.0f}) | <= 300 ms |")


if __name__ == "__main__":
    main()
