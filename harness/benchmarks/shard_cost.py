"""What a shard costs (issue 28): the fixed cost each shard pays on its machine (the lab
built, the link checked, its own warm-ups, the lab taken down) and the cost of each
measured load, measured here; from them, the speed-up of a study on N lab machines.

    sudo .venv/bin/python harness/benchmarks/shard_cost.py > table.md

Real `pagebench run --shard K/2` processes, one after the other on this machine, into one
throwaway SQLite store: 2 conditions (h2, keep-alive) of `seed000-small-n20`, cold, on
50 ms 10/10 Mbit/s, REPETITIONS loads each, a warm-up each, the link check on (as a run
does by default). Per shard: its process's wall time, the time before its first measured
load (set-up: lab, link check, warm-ups), the measured loads' time per load (first start
to last commit, over their number), and what is left (taking the lab down). The model
then takes a study of C conditions x R repetitions on N machines (N <= R: a shard is whole
blocks): T(N) = fixed + C x warm-up + ceil(R / N) x C x per-load.
"""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from pagebench.results.store import Store

REPETITIONS = 10
SHARDS = 2
SPEC = {"name": "shard-cost", "sites": ["seed000-small-n20"], "modes": ["h2", "keepalive"], "cache": ["cold"],
        "profiles": [{"name": "r50", "rtt_ms": 50, "down_mbit": 10, "up_mbit": 10}],
        "repetitions": REPETITIONS, "warmup": 1, "seed": 28}
#: Studies to plan: (what, conditions, repetitions).
STUDIES = (("a seed's sweep: 40 conditions x 20 loads", 40, 20),
           ("a mode study: 5 modes x 4 links x 2 caches x 10 pages, 30 loads", 400, 30),
           ("a large matrix: 2000 conditions (one lab for all), 30 loads", 2000, 30))
MACHINES = (1, 4, 16, 64)


def shard(workdir: Path, db: str, k: int) -> dict:
    """One shard's process, timed; its loads from the store."""
    started = time.time()
    out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(workdir / "spec.yaml"), "--db", db,
                          "--shard", f"{k}/{SHARDS}"], capture_output=True, text=True)
    ended = time.time()
    if out.returncode != 0:
        raise SystemExit(f"pagebench run --shard {k}/{SHARDS} failed: {out.stderr.strip().splitlines()[-1]}")
    run_id = next(line for line in out.stdout.splitlines() if line.startswith("run ")).split()[1]
    with Store(db) as store:
        loads = [load for load in store.loads(run_id, include_warmup=True) if load.started_at >= started]
    measured = [load for load in loads if not load.warmup]
    warmups = [load for load in loads if load.warmup]
    first = min(load.started_at for load in measured)
    last = max(load.recorded_at for load in measured)
    per_load = (last - first) / len(measured)
    return {"wall": ended - started, "setup": first - started, "per_load": per_load, "n": len(measured),
            "warmups": len(warmups), "after": ended - last,
            "load_ms": statistics.median(load.load_ms for load in measured if load.load_ms is not None)}


def _duration(hours: float) -> str:
    return f"{hours:.1f} h" if hours >= 1 else f"{hours * 60:.0f} min"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="shard-cost-") as tmp:
        workdir = Path(tmp)
        (workdir / "spec.yaml").write_text(yaml.safe_dump(SPEC))
        db = f"sqlite:///{workdir}/shards.sqlite"
        found = [shard(workdir, db, k) for k in range(1, SHARDS + 1)]
    print("| shard | wall | before the first measured load | measured loads | per measured load "
          "| median load time | after the last |")
    print("|---|---|---|---|---|---|---|")
    for k, f in enumerate(found, 1):
        print(f"| {k}/{SHARDS} | {f['wall']:.1f} s | {f['setup']:.1f} s ({f['warmups']} warm-ups) | {f['n']} | "
              f"{f['per_load']:.2f} s | {f['load_ms']:.0f} ms | {f['after']:.1f} s |")
    per_load = statistics.fmean(f["per_load"] for f in found)
    warmup = per_load  # a warm-up is a load of the same condition
    fixed = statistics.fmean(f["wall"] - f["n"] * f["per_load"] - f["warmups"] * warmup for f in found)
    print()
    print(f"Fixed cost per shard (lab, link check, teardown): {fixed:.1f} s; per load (measured or warm-up): "
          f"{per_load:.2f} s.")
    print()
    print("| study | loads | " + " | ".join(f"{n} machine{'s' if n > 1 else ''}" for n in MACHINES)
          + " | most machines worth it |")
    print("|---|---|" + "---|" * (len(MACHINES) + 1))
    for what, conditions, repetitions in STUDIES:
        def hours(n: int) -> float:
            return (fixed + conditions * warmup + math.ceil(repetitions / n) * conditions * per_load) / 3600

        base = hours(1)
        cells = []
        for n in MACHINES:
            used = min(n, repetitions)
            cells.append(f"{_duration(hours(used))} ({base / hours(used):.1f}x"
                         + (f", {used} used" if used < n else "") + ")")
        # beyond this N, a shard's fixed cost and warm-ups outweigh its measured loads
        worth = max(1, min(repetitions, math.floor(repetitions * conditions * per_load
                                                   / (fixed + conditions * warmup))))
        print(f"| {what} | {conditions * repetitions} | " + " | ".join(cells) + f" | {worth} |")


if __name__ == "__main__":
    main()
