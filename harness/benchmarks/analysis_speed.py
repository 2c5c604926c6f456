"""How long `report`, `report --html` and `compare` take on runs of 2,000 loads (issue 5:
under 5 s each), wall-clock through the CLI as a user runs them.

    sudo .venv/bin/python harness/benchmarks/analysis_speed.py [--db SOURCE_URL] [--run RUN]

The two 2,000-load runs are built from a real run's loads (default: the newest in
results/pagebench.sqlite), resources and all, replayed through the store's public API
into a throwaway SQLite file: the candidate's load times are the baseline's x 1.03.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from pagebench.core.records import PlannedLoad
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

LOADS = 2000


def build(source: Store, run: str, target: Store, run_id: str, scale: float) -> None:
    experiment = source.experiment(run)
    loads = source.loads(run)
    plan_of = {p.seq: p for p in source.plan(run)}
    by_condition: dict[str, list[LoadRow]] = {}
    for load in loads:
        by_condition.setdefault(load.condition.key, []).append(load)
    conditions = sorted({plan_of[l.seq].condition for l in loads}, key=lambda c: c.key)
    plan = [PlannedLoad(seq, conditions[seq % len(conditions)], seq // len(conditions), False)
            for seq in range(LOADS)]
    profiles = {c.condition.profile: c.profile_fields for c in source.conditions(run)}
    target.create_experiment(run_id, experiment.spec, experiment.meta, plan, profiles)
    jitter = random.Random(run_id)
    for planned in plan:
        row = jitter.choice(by_condition[planned.condition.key])
        result = row.result([r.resource for r in source.resources(row.id)])  # what was recorded, copied
        result = replace(result, load_ms=result.load_ms * scale * jitter.uniform(0.98, 1.02))
        target.record_loads(run_id, planned, [result], row.started_at)
    target.set_status(run_id, "complete")


def timed(*args: str) -> float:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "pagebench", *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if out.returncode not in (0, 1):
        raise SystemExit(f"pagebench {' '.join(args)} failed: {out.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=Store.default_url())
    parser.add_argument("--run", default=None)
    options = parser.parse_args()
    source = Store(options.db)
    run = options.run or source.runs()[0].run_id
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/speed.sqlite"
        target = Store(url)
        started = time.perf_counter()
        build(source, run, target, "base", 1.0)
        build(source, run, target, "candidate", 1.03)
        print(f"built 2 x {LOADS} loads from run {run} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        print("| command (2,000 loads) | wall-clock | target |")
        print("|---|---|---|")
        for label, args in (("report", ("report", "base", "--db", url)),
                            ("report --json", ("report", "base", "--json", "--db", url)),
                            ("report --html", ("report", "base", "--html", str(Path(tmp) / "r.html"), "--db", url)),
                            ("compare", ("compare", "base", "candidate", "--db", url)),
                            ("compare --markdown --junit", ("compare", "base", "candidate", "--db", url,
                                                            "--markdown", "--junit", str(Path(tmp) / "j.xml")))):
            best = min(timed(*args) for _ in range(3))
            print(f"| `pagebench {label}` | {best:.2f} s (best of 3) | < 5 s |")


if __name__ == "__main__":
    main()
