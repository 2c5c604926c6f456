"""Where the time between loads goes (issue 29): the fixed overhead per load and its parts.

    sudo .venv/bin/python harness/benchmarks/load_overhead.py [--runs N] [--no-frames] > table.md

Runs 20 cold h2 loads of seed000-small-n20 at 50 ms, 10/10 Mbit/s (the page-loads
benchmark's CV condition) in this process, into a throwaway SQLite store, with a timer
around each step the runner and the browser driver take per load. The overhead per load
is the wall time of the measured loads (first start to last commit) over their number,
less their mean load time: what a load costs beyond the page itself (issue 27's and
29's definition, as in `capture_cost.py`). Each step's median per load is printed. Not
all are on the critical path: the link's drain and reading run in a thread while the
next load's browser starts (the wait only in what that start does not hide), and the
last load's evaluation and commit run inside the next load's network-idle wait.
"""

from __future__ import annotations

import argparse
import collections
import functools
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from playwright.sync_api._generated import Browser, BrowserContext, Page

from pagebench.lab import browser, network
from pagebench.link import emulator
from pagebench.results.store import Store
from pagebench.runner import run as runner
from pagebench.runner import runs
from pagebench.runner.measured import Keep
from pagebench.runner.prepare import prepare

SPEC = {"name": "load-overhead", "sites": ["seed000-small-n20"], "modes": ["h2"], "cache": ["cold"],
        "profiles": [{"name": "r50", "rtt_ms": 50, "down_mbit": 10, "up_mbit": 10}],
        "repetitions": 20, "warmup": 1, "timeouts": {"link_check": False}}
#: (label, owner, attribute): the steps timed, in the order a load takes them.
STEPS: tuple[tuple[str, Any, str], ...] = (
    ("new browser context", Browser, "new_context"),
    ("new page (its renderer)", BrowserContext, "new_page"),
    ("page.evaluate (renderer up; the page's metrics)", Page, "evaluate"),
    ("CDP session", BrowserContext, "new_cdp_session"),
    ("link: wait until no packet is held (in a thread)", emulator.Link, "wait_settled"),
    ("link: the drain, then the counters' read (in a thread)", emulator.Link, "drained_counters"),
    ("the last load's rest, with the wait for its reading", runner.Runner, "_measured"),
    ("page.goto (the load, to its load event)", Page, "goto"),
    ("the last load's evaluation and commit (in the idle wait)", runner.Runner, "_record"),
    ("network idle after load (IDLE_S, what the commit left of it)", network.Recorder, "wait_idle"),
    ("trace stop", browser._Tracer, "stop"),
    ("trace flush", browser._Tracer, "wait"),
    ("context close", BrowserContext, "close"),
)


def timed(times: dict[str, list[float]], label: str, owner: Any, name: str) -> None:
    """`owner.name` wrapped so each call's wall time is kept under `label`."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            times[label].append((time.perf_counter() - start) * 1000)

    setattr(owner, name, wrapper)


def one_run(frames: bool) -> tuple[float, float, int]:
    """A run's overhead per load and median load time (ms), and its measured loads."""
    with tempfile.TemporaryDirectory() as tmp, Store(f"sqlite:///{tmp}/overhead.sqlite") as store:
        run_id = runs.start(store, prepare(SPEC, "load_overhead"), lambda *_: None,
                            keep=Keep(har=True, frames=frames))
        loads = [load for load in store.loads(run_id) if load.ok and load.load_ms is not None]
    times = [load.load_ms for load in loads if load.load_ms is not None]
    wall = (max(load.recorded_at for load in loads) - min(load.started_at for load in loads)) * 1000
    return wall / len(loads) - statistics.fmean(times), statistics.median(times), len(loads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of 20 loads (default 3)")
    parser.add_argument("--no-frames", action="store_true", help="without frame capture (the HAR kept)")
    args = parser.parse_args()
    times: dict[str, list[float]] = collections.defaultdict(list)
    for label, owner, name in STEPS:
        timed(times, label, owner, name)
    results = [one_run(not args.no_frames) for _ in range(args.runs)]
    loads = sum(n for _, _, n in results) + args.runs  # with each run's warm-up
    print("| run | overhead per load | median load time | loads |\n|---|---|---|---|")
    for number, (overhead, median, n) in enumerate(results, 1):
        print(f"| {number} | {overhead:.0f} ms | {median:.0f} ms | {n} |")
    print(f"| median | {statistics.median(r[0] for r in results):.0f} ms | "
          f"{statistics.median(r[1] for r in results):.0f} ms | |\n")
    print("| step | calls per load | median per call | total per load |\n|---|---|---|---|")
    for label, _, _ in STEPS:
        found = times.get(label, [])
        if found:
            print(f"| {label} | {len(found) / loads:.1f} | {statistics.median(found):.1f} ms | "
                  f"{sum(found) / loads:.1f} ms |")


if __name__ == "__main__":
    main()
