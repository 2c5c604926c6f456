"""What keeping each load's evidence costs a run (issue 24): the same 20 cold h2 loads of
the built-in `modern` page (69 requests over 7 origins) at 20 ms RTT, run with
`--no-har`, with HARs (the default) and with `--trace`, ROUNDS times each, in turn (the
order reversed every other round).

    sudo .venv/bin/python harness/benchmarks/evidence_cost.py > table.md

Per run: its wall time per load (first load's start to the last load's commit, over the
loads); the median time each load spends around the page's own load (its start to its
commit, less its load time: context, settling, idle wait, counters, and the HAR, built
and written after the load); and the median load time (a HAR cannot move it; a trace is
recorded during the load). Real `pagebench run`s into throwaway SQLite stores.
On a shared machine the wall times move by more than a HAR costs, so the cost itself is
timed too: building and writing the HAR of a recorded load of the same page
(`tests/fixtures/load-modern-h2-cold.raw.json.gz`), 50 times.
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from pagebench.core.measure.har import har
from pagebench.core.measure.metrics import LinkView, ServerView, evaluate
from pagebench.core.modes import H2
from pagebench.core.records import Condition, RawLoad
from pagebench.results.artifacts import Artifacts
from pagebench.results.store import Store

RECORDED = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "load-modern-h2-cold.raw.json.gz"

ROUNDS = 2
LOADS = 20
VARIANTS = (("no HAR (--no-har)", ["--no-har"]), ("HAR (default)", []), ("HAR + trace (--trace)", ["--trace"]))
SPEC = {"name": "evidence-cost", "sites": ["modern"], "modes": ["h2"], "profiles": [{"name": "r20", "rtt_ms": 20}],
        "cache": ["cold"], "repetitions": LOADS, "warmup": 1, "timeouts": {"link_check": False}}


def run(workdir: Path, index: int, options: list[str]) -> tuple[float, float, float, int]:
    """(wall ms per measured load, median ms around the load, median load_ms, bytes kept
    per load) of one run."""
    spec = workdir / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    db = f"sqlite:///{workdir}/run{index}.sqlite"
    out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(spec), "--db", db, *options],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"pagebench run failed: {out.stderr.strip().splitlines()[-1]}")
    run_id = next(line for line in out.stdout.splitlines() if line.startswith("run ")).split()[1]
    with Store(db) as store:
        loads = store.loads(run_id)
        wall = (max(l.recorded_at for l in loads) - min(l.started_at for l in loads)) / len(loads) * 1000
        kept = workdir / f"run{index}.artifacts" / run_id
        size = sum(p.stat().st_size for p in kept.iterdir()) // len(loads) if kept.is_dir() else 0
        around = statistics.median((l.recorded_at - l.started_at) * 1000 - l.load_ms for l in loads if l.load_ms)
        return wall, around, statistics.median(l.load_ms for l in loads if l.load_ms is not None), size


def har_cost(workdir: Path, times: int = 50) -> float:
    """Median ms to build and write the HAR of a recorded 69-request load."""
    with gzip.open(RECORDED, "rt") as f:
        raw = RawLoad(**json.load(f)["raw"])
    result = evaluate(Condition("modern", H2, "direct", "r20", "cold"), raw, LinkView(1, 0, {}),
                      ServerView(1, 69, (200,)))
    artifacts = Artifacts(workdir / "cost.artifacts")
    spent = []
    for i in range(times):
        started = time.perf_counter()
        artifacts.write(f"r/{i}-0.har.gz", har(raw, result, "modern h2 cold", "0", "chromium"))
        spent.append((time.perf_counter() - started) * 1000)
    return statistics.median(spent)


def main() -> None:
    results: dict[str, list[tuple[float, float, float, int]]] = {name: [] for name, _ in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        index = 0
        for round_ in range(ROUNDS):
            for name, options in VARIANTS if round_ % 2 == 0 else VARIANTS[::-1]:  # no variant always first
                index += 1
                results[name].append(run(Path(tmp), index, options))
        cost = har_cost(Path(tmp))
    base = statistics.median(wall for wall, *_ in results[VARIANTS[0][0]])
    print("| variant | wall time per load (each run) | median | vs no HAR | around the load (each run) "
          "| median load time | kept per load |")
    print("|---|---|---|---|---|---|---|")
    for name, found in results.items():
        walls = [wall for wall, *_ in found]
        median = statistics.median(walls)
        print(f"| {name} | {', '.join(f'{w:.0f}' for w in walls)} ms | {median:.0f} ms | {median - base:+.0f} ms | "
              f"{', '.join(f'{a:.0f}' for _, a, _, _ in found)} ms | "
              f"{statistics.median(t for _, _, t, _ in found):.0f} ms | {found[0][3] / 1024:.1f} KiB |")
    print(f"\nBuilding and writing one load's HAR (69 requests), median of 50: {cost:.1f} ms")


if __name__ == "__main__":
    main()

