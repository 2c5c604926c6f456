"""Seed 002's link, fitted from the report's Appendix B: the `seed002` page, HTTP/1.1 and h2
over TLS 1.2, cold, at the appendix's capacity and a range of round trips; the RTT at which
HTTP/1.1's median load is the appendix's 7.59 s; h2's time there against the appendix's
5.97 s.

    sudo .venv/bin/python harness/benchmarks/seed002_fit.py [--rtt 40,80] [--db URL] > fit.md

The fit is fixed before the run and uses the appendix on one side only, so the other side
can fail: the bandwidth is the fastest of its 40 loads (16.8 Mbit/s, SPDY's trial 13: the
link carried at least that), the RTT is interpolated (linearly, between the two swept RTTs
that bracket it) from HTTP/1.1's medians alone, and h2's time at that RTT is a prediction
(`seed002.fit`). Each `--rtt` list is one run (keep each under a few minutes); the fit reads
every complete run of this benchmark in the store, the latest per RTT. `--rtt none` only
fits and prints.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from pagebench.analysis.reproduce.measures import values
from pagebench.analysis.reproduce.seed002 import APPENDIX_B, FIT_MBIT, Fit, fit
from pagebench.core.modes import H2, KEEPALIVE
from pagebench.results.store import Store

NAME = "bench-seed002-fit"
RTTS_MS = (40, 100, 120, 140, 160, 200)


def spec(rtts: list[int]) -> dict[str, object]:
    return {"name": NAME, "sites": ["seed002"], "modes": [KEEPALIVE.name, H2.name], "tls": ["1.2"], "cache": ["cold"],
            "profiles": [{"name": "fit", "rtt_ms": rtts, "down_mbit": FIT_MBIT, "up_mbit": FIT_MBIT}],
            "repetitions": 3, "warmup": 1, "seed": 2013, "timeouts": {"load_s": 120}}


def run(rtts: list[int], db: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fit.yaml"
        path.write_text(yaml.safe_dump(spec(rtts)))
        out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(path), "--db", db],
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"run: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    return next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("run "))


def medians(store: Store) -> dict[float, dict[str, list[float]]]:
    """RTT (ms) -> mode -> cold load times (s), from the latest complete run that swept it."""
    found: dict[float, dict[str, list[float]]] = {}
    for listed in store.runs():  # newest first
        if listed.status != "complete" or listed.spec.get("name") != NAME:
            continue
        rtt_of = {c.condition.profile: float(c.profile_fields["rtt_ms"]) for c in store.conditions(listed.run_id)}
        loads = [load for load in store.loads(listed.run_id) if load.ok and not load.flagged]
        for profile, rtt in rtt_of.items():
            if rtt in found:
                continue
            mine = [load for load in loads if load.condition.profile == profile]
            found[rtt] = {mode: [v / 1000 for v in values([load for load in mine if load.condition.mode == mode])]
                          for mode in (KEEPALIVE, H2)}
    return dict(sorted(found.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="sqlite:///seed002-fit.sqlite")
    parser.add_argument("--rtt", default=",".join(map(str, RTTS_MS)), help="RTTs (ms) to run now, or none")
    args = parser.parse_args()
    if args.rtt != "none":
        print(f"run {run([int(r) for r in args.rtt.split(',')], args.db)}\n", file=sys.stderr)
    sweep = medians(Store(args.db))
    print(f"### The sweep: seed002, TLS 1.2, cold, {FIT_MBIT:g} Mbit/s both ways (median of loads, s)\n")
    print("| RTT (ms) | HTTP/1.1 | h2 | h2's cut | loads |")
    print("|---:|---:|---:|---:|---:|")
    for rtt, times in sweep.items():
        h1, h2 = (sorted(times[m]) for m in (KEEPALIVE, H2))
        if h1 and h2:
            a, b = h1[len(h1) // 2], h2[len(h2) // 2]
            print(f"| {rtt:g} | {a:.2f} | {b:.2f} | {(1 - b / a) * 100:.0f} % | {len(h1)} + {len(h2)} |")
    found: Fit | None = fit({rtt: times[KEEPALIVE] for rtt, times in sweep.items()},
                            {rtt: times[H2] for rtt, times in sweep.items()})
    print()
    if found is None:
        print(f"No fit: HTTP/1.1's medians do not bracket the appendix's {APPENDIX_B.http_mean:.2f} s.")
        return
    print(f"### The fit\n\nBest-fit link: RTT {found.rtt_ms:.0f} ms, {FIT_MBIT:g} Mbit/s.\n")
    print("| protocol | appendix B (mean of 20) | fitted link | residual | role |")
    print("|---|---:|---:|---:|---|")
    print(f"| HTTP/1.1 | {APPENDIX_B.http_mean:.2f} s | {found.http_s:.2f} s | {found.http_residual * 100:+.1f} % "
          "| fitted (sets the RTT) |")
    print(f"| SPDY / h2 | {APPENDIX_B.spdy_mean:.2f} s | {found.spdy_s:.2f} s | {found.spdy_residual * 100:+.1f} % "
          "| predicted (the check) |")


if __name__ == "__main__":
    main()
