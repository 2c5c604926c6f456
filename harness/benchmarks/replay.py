"""Replay fidelity: does a page of one's own, recorded or imported, load as the page it
came from? The built-in `modern` is recorded from a stand-in internet (`pagebench site
record` through mitmproxy, as in tests/test_record.py) and imported from the committed
HAR (tests/fixtures/modern.har.gz), then all three are loaded cold in one interleaved
run per mode and profile; the table gives each one's median load with its bootstrap
interval and the ratio to the original's.

    cd harness && sudo ../.venv/bin/python -m benchmarks.replay [--reps 10] [--db sqlite:///replay.sqlite]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from pagebench.analysis.stats import median_ci, ratio_ci
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

HARNESS = Path(__file__).resolve().parents[1]
FIXTURE = HARNESS / "tests" / "fixtures" / "modern.har.gz"
PROFILES = [{"name": "cable-40", "rtt_ms": 40, "down_mbit": 20, "up_mbit": 5}]
MODES = ["h2", "keepalive", "h3"]


def pagebench(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "pagebench", *args], capture_output=True, text=True, cwd=HARNESS)
    if out.returncode != 0:
        sys.exit(f"pagebench {args[0]} {args[1] if len(args) > 1 else ''}: {out.stderr.strip()[-500:]}")
    return out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    from tests.lab.record.test_recorder import recorded_stand_in

    work = Path(tempfile.mkdtemp(prefix="pagebench-replay-bench-"))
    work.chmod(0o755)  # nginx's workers read the sites as nobody
    try:
        recorded = recorded_stand_in(work / "modern-shop")
        imported = work / "modern-har"
        pagebench("site", "import-har", str(FIXTURE), "--name", "modern-har", "--into", str(imported))
        spec = {"name": "bench-replay", "sites": ["modern", str(recorded), str(imported)], "modes": MODES,
                "profiles": PROFILES, "cache": ["cold"], "repetitions": args.reps, "warmup": 1, "seed": 15}
        (work / "spec.yaml").write_text(yaml.safe_dump(spec))
        db = args.db or f"sqlite:///{work}/replay.sqlite"
        out = pagebench("run", str(work / "spec.yaml"), "--db", db)
        run = next(line.split()[1] for line in out.splitlines() if line.startswith("run "))
        with Store(db) as store:
            table(store, run)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(store: Store, run: str, base: str = "modern") -> None:
    """The markdown table of a run: each site's median load and its ratio to `base`'s."""
    loads: dict[tuple[str, str, str], list[LoadRow]] = {}
    for load in store.loads(run):
        condition = load.condition  # profile and mode as their names (a Mode is not ordered)
        key = (getattr(condition.profile, "name", condition.profile), getattr(condition.mode, "name", condition.mode),
               condition.site)
        loads.setdefault(key, []).append(load)
    print(f"run {run}\n")
    print(f"| profile | mode | site | n | requests | flagged | median load (ms) [95 % CI] | / {base} [95 % CI] |")
    print("|---|---|---|---|---|---|---|---|")
    order = sorted(loads, key=lambda key: (key[0], key[1], key[2] != base, key[2]))  # the base first
    for profile, mode, site in order:
        rows = loads[(profile, mode, site)]
        times = [r.load_ms for r in rows if r.ok and r.load_ms is not None]
        against = [r.load_ms for r in loads[(profile, mode, base)] if r.ok and r.load_ms is not None]
        ci, ratio = median_ci(times), ratio_ci(times, against)
        requests = sorted({r.requests for r in rows})
        print(f"| {profile} | {mode} | {site} | {len(times)} | {'/'.join(map(str, requests))} | "
              f"{sum(r.flagged for r in rows)} | {ci.estimate:.0f} [{ci.low:.0f}, {ci.high:.0f}] | "
              f"{ratio.estimate:.3f} [{ratio.low:.3f}, {ratio.high:.3f}] |")


if __name__ == "__main__":
    main()
