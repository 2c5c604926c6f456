"""What capturing each load's frames costs (issue 27): does it move the load times it
measures, and the fixed time each load costs a run?

    sudo .venv/bin/python harness/benchmarks/capture_cost.py [--before TREE] > table.md

Real `pagebench run`s into throwaway SQLite stores, each CONDITION's 20 cold h2 loads run
with `--no-frames` (the HAR kept: what every load did before frames) and as the default
(HAR and frames), ROUNDS times each, in turn (the order reversed every other round). Per
run: the median and mean load time, and the fixed overhead per load: the wall time of the
measured loads (first start to last commit) over their number, less their mean load time
(issue 27's definition; 0.6-0.7 s before frames on the first condition). Per condition:
both variants' load times pooled, the shift of the median with a bootstrap 95 % interval
and the Mann-Whitney p (the runs' own spread says what noise is); SpeedIndex where frames
were captured. `--before TREE`: a third variant, a checkout of pagebench from before
frames existed (`git worktree add TREE 184ef29`, the commit before issue 27) running the
same spec with its own defaults (HAR kept): the overhead frames must not grow beyond.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml
from scipy.stats import mannwhitneyu

from pagebench.results.store import Store

ROUNDS = 3
LOADS = 20
VARIANTS = (("no frames (--no-frames)", ["--no-frames"]), ("frames (default)", []))
#: (label, spec fields): the page_loads CV condition, then the present-day page on LTE.
CONDITIONS = (
    ("seed000-small-n20, h2 cold, 50 ms 10/10 Mbit/s",
     {"sites": ["seed000-small-n20"], "profiles": [{"name": "r50", "rtt_ms": 50, "down_mbit": 10, "up_mbit": 10}]}),
    ("modern, h2 cold, lte", {"sites": ["modern"], "profiles": ["lte"]}),
)
BOOTSTRAP = 2000


def run(workdir: Path, name: str, fields: dict, options: list[str], tree: Path | None = None) -> dict:
    """One run's figures: its load times, SpeedIndexes and overhead per load (ms); `tree`:
    another checkout's pagebench runs it."""
    spec = workdir / f"{name}.yaml"
    spec.write_text(yaml.safe_dump({"name": "capture-cost", "modes": ["h2"], "cache": ["cold"],
                                    "repetitions": LOADS, "warmup": 1, "timeouts": {"link_check": False}, **fields}))
    db = f"sqlite:///{workdir}/{name}.sqlite"
    env = os.environ | ({"PYTHONPATH": str(tree / "harness")} if tree is not None else {})
    out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(spec), "--db", db, *options],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"pagebench run failed: {out.stderr.strip().splitlines()[-1]}")
    run_id = next(line for line in out.stdout.splitlines() if line.startswith("run ")).split()[1]
    with Store(db) as store:
        loads = [load for load in store.loads(run_id) if load.ok and not load.flagged and load.load_ms is not None]
    times = [load.load_ms for load in loads if load.load_ms is not None]
    wall = (max(l.recorded_at for l in loads) - min(l.started_at for l in loads)) * 1000
    return {"times": times, "overhead": wall / len(loads) - statistics.fmean(times),
            "si": [load.speed_index_ms for load in loads if load.speed_index_ms is not None],
            "n": len(loads)}


def shift(base: list[float], other: list[float]) -> tuple[float, float, float]:
    """The median's shift from `base` to `other` and its bootstrap 95 % interval."""
    rng = np.random.default_rng(27)
    a, b = np.asarray(base), np.asarray(other)
    draws = [np.median(rng.choice(b, b.size)) - np.median(rng.choice(a, a.size)) for _ in range(BOOTSTRAP)]
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(np.median(b) - np.median(a)), float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of pagebench from before frames (a third variant)")
    before: Path | None = parser.parse_args().before
    variants: list[tuple[str, list[str], Path | None]] = [(name, options, None) for name, options in VARIANTS]
    if before is not None:
        commit = subprocess.run(["git", "-C", str(before), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        variants.insert(0, (f"before frames ({commit})", [], before))
    print("| condition | variant | median load time (each run) | overhead per load (each run) | "
          "median SpeedIndex |")
    print("|---|---|---|---|---|")
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="capture-cost-") as tmp:
        for c, (label, fields) in enumerate(CONDITIONS):
            found: dict[str, list[dict]] = {name: [] for name, _, _ in variants}
            for round_ in range(ROUNDS):
                order = variants if round_ % 2 == 0 else variants[::-1]
                for v, (name, options, tree) in enumerate(order):
                    found[name].append(run(Path(tmp), f"c{c}r{round_}v{v}", fields, options, tree))
            for name, _, _ in variants:
                runs = found[name]
                medians = ", ".join(f"{statistics.median(r['times']):.0f}" for r in runs)
                overheads = ", ".join(f"{r['overhead']:.0f}" for r in runs)
                si = [s for r in runs for s in r["si"]]
                print(f"| {label} | {name} | {medians} ms | {overheads} ms | "
                      f"{f'{statistics.median(si):.0f} ms' if si else '-'} |")
            base = [t for r in found[VARIANTS[0][0]] for t in r["times"]]
            other = [t for r in found[VARIANTS[1][0]] for t in r["times"]]
            moved, low, high = shift(base, other)
            p = mannwhitneyu(base, other).pvalue
            spread = [statistics.median(r["times"]) for runs in found.values() for r in runs]
            overhead = {name: statistics.median(r["overhead"] for r in runs) for name, runs in found.items()}
            if before is not None:
                verdicts.append(f"- {label}: overhead per load before frames {overhead[variants[0][0]]:.0f} ms, "
                                f"now with all capture on {overhead[VARIANTS[1][0]]:.0f} ms (medians of runs)")
            verdicts.append(f"- {label}: frames move the median load time by {moved:+.1f} ms (95 % {low:+.1f} to "
                            f"{high:+.1f}; Mann-Whitney p = {p:.2f}, {len(base)} and {len(other)} loads); the runs' "
                            f"medians span {max(spread) - min(spread):.1f} ms; overhead per load "
                            f"{overhead[VARIANTS[0][0]]:.0f} -> {overhead[VARIANTS[1][0]]:.0f} ms (medians of runs)")
    print()
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
