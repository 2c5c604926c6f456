"""Content encodings and deltas on seed 001's files A-D: bytes and time saved per encoding
on modem-28k8, t1-1994 and lte, and a dictionary delta's saving for 0.1 %, 1 % and 10 %
edits, each beside the seed's estimator (section 5.4).

    sudo .venv/bin/python harness/benchmarks/encodings.py [--db sqlite:///encodings.sqlite] > table.md

Runs two experiments through the CLI (h2, TLS 1.3, cold loads for the encodings, warm
loads of a later version for the deltas), then prints Markdown tables from the store (the
figures in docs/benchmarks.md come from it). `--run deltas` runs only that experiment and
takes the other's latest complete run from the store; `--run none` only prints.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from pagebench.analysis.encoding import EncodingSaving, loads_by_condition, savings
from pagebench.analysis.stats import Interval
from pagebench.core.encodings import BR, DCZ, GZIP, IDENTITY, ZSTD, Encoding
from pagebench.analysis.summary import of_run
from pagebench.results.store import Store

FILES = ("a", "b", "c", "d")
ENCODINGS = (IDENTITY, GZIP, BR, ZSTD)
DELTAS = (IDENTITY, GZIP, DCZ)
PROFILES = ("modem-28k8", "t1-1994", "lte")
EDITS = {2: "0.1 %", 3: "1 %", 4: "10 %"}
SITES = [f"seed001-{f}" for f in FILES]

SPECS = {
    "encodings": {"name": "bench-encodings", "sites": SITES, "modes": ["h2"], "profiles": list(PROFILES),
                  "encoding": [e.name for e in ENCODINGS], "cache": ["cold"], "repetitions": 2, "warmup": 0, "seed": 1997,
                  "timeouts": {"load_s": 300}},
    "deltas": {"name": "bench-deltas", "sites": SITES, "modes": ["h2"], "profiles": ["isdn-bri"],
               "encoding": [e.name for e in DELTAS], "version": list(EDITS), "cache": ["warm"],
               "repetitions": 2, "warmup": 0, "seed": 1997, "timeouts": {"load_s": 300}},
}


def run(name: str, db: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / f"{name}.yaml"
        spec.write_text(yaml.safe_dump(SPECS[name]))
        out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(spec), "--db", db],
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{name}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    return next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("run "))


def latest(store: Store, name: str) -> str:
    runs = [r for r in store.runs() if r.status == "complete" and r.spec.get("name") == SPECS[name]["name"]]
    if not runs:
        sys.exit(f"no complete {name} run in the store: --run {name}")
    return runs[0].run_id


def rows(store: Store, run_id: str) -> dict[tuple[str, str, Encoding, int], EncodingSaving]:
    """(site, profile, encoding, version) -> the condition against its identity twin."""
    found = savings(loads_by_condition(of_run(store, run_id), store.run_resources(run_id)))
    return {(r.condition.site, r.condition.profile, r.condition.encoding, r.condition.version): r for r in found}


def _s(interval: Interval | None) -> str:
    return "-" if interval is None else f"{interval.estimate / 1000:+.2f}"


def _line(row: EncodingSaving | None) -> str | None:
    if row is None or row.bytes is None:
        return None
    saved = "" if row.saved_pct is None else f"{row.saved_pct.estimate:.1f} %"
    return (f"| {row.condition.site.removeprefix('seed001-').upper()} | {row.condition.encoding} | "
            f"{row.bytes.estimate:,.0f} | {saved} | {_s(row.measured_ms)} | {_s(row.estimated_ms)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="sqlite:///encodings-bench.sqlite")
    parser.add_argument("--run", default="encodings,deltas", help="which experiments to run (the rest: from the store)")
    args = parser.parse_args()
    started = time.monotonic()
    wanted = set(args.run.split(","))
    runs = {name: (run(name, args.db) if name in wanted else latest(Store(args.db), name)) for name in SPECS}
    store = Store(args.db)
    found = rows(store, runs["encodings"])
    print(f"Runs {runs['encodings']} and {runs['deltas']}; {(time.monotonic() - started) / 60:.1f} min.\n")
    for profile in PROFILES:
        print(f"### {profile}: cold loads, h2, TLS 1.3 (median of {SPECS['encodings']['repetitions']})\n")
        print("| file | encoding | body bytes sent | bytes saved | time saved (s) | estimator (s) |")
        print("|---|---|---:|---:|---:|---:|")
        for site in SITES:
            for encoding in ENCODINGS:
                line = _line(found.get((site, profile, encoding, 1)))
                if line:
                    print(line)
        print()
    found = rows(store, runs["deltas"])
    print(f"### Deltas: version 1 in the cache, then an edited version, isdn-bri, h2 (median of "
          f"{SPECS['deltas']['repetitions']})\n")
    print("| file | edit | encoding | body bytes sent | bytes saved | time saved (s) | estimator (s) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for site in SITES:
        for version, edit in EDITS.items():
            for encoding in DELTAS:
                line = _line(found.get((site, "isdn-bri", encoding, version)))
                if line:
                    head, rest = line.split(" | ", 1)
                    print(f"{head} | {edit} | {rest}")
    print()


if __name__ == "__main__":
    main()
