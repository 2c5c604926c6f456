"""How many loads per side the regression gate needs on the CI link: from the per-load
spread of a real run of `experiments/ci.yaml` (seed000-small-n20, http1.0 and h2, cold,
WebPageTest cable), for n = 3..15 loads a side, draws disjoint base and candidate sets of
n of its loads per condition and compares them with `analysis.compare` (as `pagebench
compare` does): the smallest slowdown each verdict says it could tell (the whole gate at
--threshold 5 %, and the exact rank test alone), how often the unchanged loads raise an
alarm (A/A), and how often the candidate made 10 % and 20 % slower is caught. Then the
time `compare` takes on 40 conditions of 10 loads each.

    sudo flock /tmp/pagebench-e2e.lock .venv/bin/pagebench run experiments/ci.yaml --db sqlite:///ci.sqlite
    .venv/bin/python harness/benchmarks/gate_loads.py --db sqlite:///ci.sqlite [--run RUN] > table.md
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import replace

from pagebench.analysis import stats
from pagebench.analysis.compare import compare
from pagebench.analysis.summary import summarize
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

SIZES = (3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50)
DRAWS = 100
THRESHOLD = 0.05
ALPHA = 0.05
FACTORS = (1.10, 1.20)
INF = float("inf")


def usable(store: Store, run: str) -> dict[str, list[LoadRow]]:
    """The run's measured loads that count (ok, not flagged, a load time), by condition."""
    found: dict[str, list[LoadRow]] = {}
    for load in store.loads(run):
        if load.ok and not load.flagged and load.load_ms is not None:
            found.setdefault(load.condition.mode.name, []).append(load)
    return found


def slower(loads: list[LoadRow], factor: float) -> list[LoadRow]:
    return [replace(load, load_ms=load.load_ms * factor) for load in loads]


def spread(loads: dict[str, list[LoadRow]]) -> None:
    print("| condition | loads | median load_ms | IQR / median | (p90 - p10) / median |")
    print("|---|---|---|---|---|")
    for mode, rows in loads.items():
        times = sorted(row.load_ms for row in rows)
        median = statistics.median(times)
        deciles = statistics.quantiles(times, n=10)
        print(f"| {mode} | {len(times)} | {median:.0f} | {stats.iqr(times) / median:.1%} "
              f"| {(deciles[-1] - deciles[0]) / median:.1%} |")


def sizes(loads: dict[str, list[LoadRow]]) -> None:
    """Per n and condition: the medians over the draws of what the verdict said it could
    tell (the whole gate; the exact test alone at alpha / conditions), and how often a
    slowed candidate was caught; A/A: draws with any alarm."""
    rng = random.Random(24)
    modes = list(loads)
    print(f"\n| loads per side | condition | gate can tell (threshold {THRESHOLD:.0%}) | exact test alone "
          f"(alpha {ALPHA:g}/{len(modes)}) | +10 % caught | +20 % caught | A/A: draws with an alarm |")
    print("|---|---|---|---|---|---|---|")
    for n in SIZES:
        if 2 * n > min(len(rows) for rows in loads.values()):
            break
        gate: dict[str, list[float]] = {mode: [] for mode in modes}
        rank: dict[str, list[float]] = {mode: [] for mode in modes}
        caught = {(mode, factor): 0 for mode in modes for factor in FACTORS}
        alarms = 0
        for _ in range(DRAWS):
            base, candidate = [], []
            for rows in loads.values():
                picked = rng.sample(rows, 2 * n)
                base += picked[:n]
                candidate += picked[n:]
            same = compare(summarize("base", base), summarize("candidate", candidate), threshold=THRESHOLD, alpha=ALPHA)
            alarms += bool(same.regressions)
            for verdict in same.verdicts:
                mode = verdict.condition.mode.name
                gate[mode].append(INF if verdict.detectable is None else verdict.detectable)
                found = stats.detectable_slowdown(verdict.candidate, verdict.base, ALPHA / len(modes))
                rank[mode].append(INF if found is None else found)
            for factor in FACTORS:
                result = compare(summarize("base", base), summarize("candidate", slower(candidate, factor)),
                                 threshold=THRESHOLD, alpha=ALPHA)
                for verdict in result.regressions:
                    caught[verdict.condition.mode.name, factor] += 1
        for mode in modes:
            print(f"| {n} | {mode} | {shown(statistics.median(gate[mode]))} | {shown(statistics.median(rank[mode]))} "
                  + " ".join(f"| {caught[mode, factor]}/{DRAWS}" for factor in FACTORS)
                  + f" | {alarms}/{DRAWS} |")


def shown(value: float) -> str:
    return "nothing" if value == INF else f"{value:.1%}"


def speed(loads: dict[str, list[LoadRow]]) -> None:
    """compare of 40 conditions of 10 loads a side (the measured loads, each condition a
    site of its own), wall-clock of the call."""
    from pagebench.core.records import Condition

    rng = random.Random(40)
    pool = [row for rows in loads.values() for row in rows]
    base, candidate = [], []
    for i in range(40):
        template = pool[i % len(pool)].condition
        condition = Condition(f"site{i}", template.mode, template.topology, template.profile, template.cache,
                              template.tls)
        base += [replace(row, condition=condition) for row in rng.sample(pool, 10)]
        candidate += [replace(row, condition=condition) for row in rng.sample(pool, 10)]
    times = []
    for _ in range(3):
        started = time.perf_counter()
        compare(summarize("base", base), summarize("candidate", candidate))
        times.append(time.perf_counter() - started)
    print(f"\n`compare` of 40 conditions x 10 loads a side: {times[0]:.2f} s the first time in a process (as "
          f"`pagebench compare` runs it: scipy's exact distributions not yet cached), {min(times[1:]):.2f} s again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--run", default=None, help="default: the store's newest run")
    options = parser.parse_args()
    with Store(options.db) as store:
        run = options.run or store.runs()[0].run_id
        experiment = store.experiment(run)
        loads = usable(store, run)
    print(f"run {run}: {experiment.spec.get('name')}, {experiment.chromium_version}, kernel {experiment.kernel}, "
          f"{experiment.backend}", file=sys.stderr)
    spread(loads)
    sizes(loads)
    speed(loads)


if __name__ == "__main__":
    main()
