"""Seed 002's link, fitted from the report's Appendix B: the `seed002` page, HTTP/1.1 and h2
over TLS 1.2, cold, at the appendix's capacity and a range of round trips; the RTT at which
HTTP/1.1's median load is the appendix's 7.59 s; h2's time there against the appendix's
5.97 s.

    sudo .venv/bin/python harness/benchmarks/seed002_fit.py [--rtt 40,80] [--repetitions 3] [--confirm] [--db URL] > fit.md

The fit is fixed before the run and uses the appendix on one side only, so the other side
can fail: the bandwidth is the fastest of its 40 loads (16.8 Mbit/s, SPDY's trial 13: the
link carried at least that), the RTT is where HTTP/1.1's least-squares line through every
load of the sweep meets the appendix's mean HTTP time, and h2's line read at that RTT is
a prediction (`seed002.fit`). Appendix C (the virtual lab, whose fastest load also ran at 16.8 Mbit/s)
is fitted the same way from the same sweep. Each `--rtt` list is one run (keep each under a
few minutes); the fit reads every complete run of this benchmark in the store, the latest
per RTT. `--rtt none` only fits and prints. `--confirm` then loads the page on the built-in
profiles the fits became (`ec2-2013`, `vlab-2013`: the fitted RTT rounded to 5 ms) and
prints each protocol's measured residual.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from pagebench.analysis.reproduce.measures import values
from pagebench.analysis.reproduce.scenarios import EC2_2013, VLAB_2013
from pagebench.analysis.reproduce.seed002 import APPENDIX_B, APPENDIX_C, FIT_MBIT, Fit, Trials, fit
from pagebench.core.modes import H2, KEEPALIVE
from pagebench.results.store import Store

NAME, CONFIRM = "bench-seed002-fit", "bench-seed002-confirm"
FITS = (("Appendix B (EC2)", APPENDIX_B, EC2_2013), ("Appendix C (virtual lab)", APPENDIX_C, VLAB_2013))
RTTS_MS = (40, 100, 120, 140, 160, 200)


def spec(name: str, profiles: list[object], repetitions: int = 3) -> dict[str, object]:
    return {"name": name, "sites": ["seed002"], "modes": [KEEPALIVE.name, H2.name], "tls": ["1.2"], "cache": ["cold"],
            "profiles": profiles, "repetitions": repetitions, "warmup": 1, "seed": 2013, "timeouts": {"load_s": 120}}


def run(document: dict[str, object], db: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fit.yaml"
        path.write_text(yaml.safe_dump(document))
        out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(path), "--db", db],
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"run: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    return next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("run "))


Times = dict[str, tuple[float, dict[object, list[float]]]]


def times(store: Store, name: str) -> Times:
    """Profile -> (its RTT in ms, mode -> cold load times in s), from the latest complete
    run of `name` with that profile."""
    found: Times = {}
    for listed in store.runs():  # newest first
        if listed.status != "complete" or listed.spec.get("name") != name:
            continue
        loads = [load for load in store.loads(listed.run_id) if load.ok and not load.flagged]
        for condition in store.conditions(listed.run_id):
            profile = condition.condition.profile
            if profile not in found:
                mine = [load for load in loads if load.condition.profile == profile]
                found[profile] = (float(condition.profile_fields["rtt_ms"]), {
                    mode: [v / 1000 for v in values([load for load in mine if load.condition.mode == mode])]
                    for mode in (KEEPALIVE, H2)})
    return found


def medians(store: Store) -> dict[float, dict[object, list[float]]]:
    """RTT (ms) -> mode -> cold load times (s), the latest run per RTT (the confirming
    runs are not the fit's)."""
    found: dict[float, dict[object, list[float]]] = {}
    for rtt, by_mode in times(store, NAME).values():
        found.setdefault(rtt, by_mode)
    return dict(sorted(found.items()))


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def show_fit(title: str, target: Trials, found: Fit | None) -> None:
    if found is None:
        print(f"{title}: no fit, HTTP/1.1's medians do not bracket {target.http_mean:.2f} s.\n")
        return
    print(f"**{title}**: best-fit link RTT {found.rtt_ms:.0f} ms, {FIT_MBIT:g} Mbit/s.\n")
    print("| protocol | appendix (mean of 20) | fitted link (its line) | residual | role |")
    print("|---|---:|---:|---:|---|")
    print(f"| HTTP/1.1 | {target.http_mean:.2f} s | {found.http_s:.2f} s | {found.http_residual * 100:+.1f} % "
          "| fitted (sets the RTT) |")
    print(f"| SPDY / h2 | {target.spdy_mean:.2f} s | {found.spdy_s:.2f} s | {found.spdy_residual * 100:+.1f} % "
          "| predicted (the check) |\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="sqlite:///seed002-fit.sqlite")
    parser.add_argument("--rtt", default=",".join(map(str, RTTS_MS)), help="RTTs (ms) to run now, or none")
    parser.add_argument("--confirm", action="store_true", help="load the page on ec2-2013 and vlab-2013 too")
    parser.add_argument("--repetitions", type=int, default=3, help="cold loads per protocol and RTT (the report: 20)")
    args = parser.parse_args()
    if args.rtt != "none":
        rtts = [int(r) for r in args.rtt.split(",")]
        profile = {"name": "fit", "rtt_ms": rtts, "down_mbit": FIT_MBIT, "up_mbit": FIT_MBIT}
        print(f"run {run(spec(NAME, [profile], args.repetitions), args.db)}", file=sys.stderr)
    if args.confirm:
        print(f"run {run(spec(CONFIRM, [profile for _, _, profile in FITS]), args.db)}", file=sys.stderr)
    store = Store(args.db)
    sweep = medians(store)
    print(f"### The sweep: seed002, TLS 1.2, cold, {FIT_MBIT:g} Mbit/s both ways (s: mean, and each load)\n")
    print("| RTT (ms) | HTTP/1.1 | h2 | h2's cut of the mean |")
    print("|---:|---|---|---:|")
    for rtt, by_mode in sweep.items():
        h1, h2 = by_mode[KEEPALIVE], by_mode[H2]
        if h1 and h2:
            a, b = mean(h1), mean(h2)
            print(f"| {rtt:g} | {a:.2f} ({', '.join(f'{t:.2f}' for t in h1)}) | {b:.2f} "
                  f"({', '.join(f'{t:.2f}' for t in h2)}) | {(1 - b / a) * 100:.0f} % |")
    print("\n### The fits\n")
    for title, target, _ in FITS:
        show_fit(title, target, fit({r: t[KEEPALIVE] for r, t in sweep.items()}, {r: t[H2] for r, t in sweep.items()},
                                    target))
    confirmed = times(store, CONFIRM)
    if not confirmed:
        return
    print("### The fitted profiles, loaded (means, s)\n")
    print("| profile | RTT (ms) | HTTP/1.1 | residual | h2 | residual | h2's cut (appendix's) | loads |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for _, target, profile in FITS:
        rtt, by_mode = confirmed.get(profile, (0.0, {}))
        if by_mode.get(KEEPALIVE) and by_mode.get(H2):
            a, b = mean(by_mode[KEEPALIVE]), mean(by_mode[H2])
            print(f"| {profile} | {rtt:g} | {a:.2f} | {(a / target.http_mean - 1) * 100:+.1f} % "
                  f"| {b:.2f} | {(b / target.spdy_mean - 1) * 100:+.1f} % | {(1 - b / a) * 100:.0f} % "
                  f"({(1 - target.spdy_mean / target.http_mean) * 100:.0f} %) "
                  f"| {len(by_mode[KEEPALIVE])} + {len(by_mode[H2])} |")


if __name__ == "__main__":
    main()
