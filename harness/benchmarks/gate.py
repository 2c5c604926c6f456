"""The CI gate on the worked example (issue 24's targets), through the CLI as CI runs it.

    sudo .venv/bin/python harness/benchmarks/gate.py > table.md             # both parts, about 25 minutes
    sudo .venv/bin/python harness/benchmarks/gate.py --part gate            # the first part only, about 3 minutes
    sudo .venv/bin/python harness/benchmarks/gate.py --separate --chained   # as before: two runs per verdict

Interleaved (the default, as the example workflow gates): one `pagebench run` of the
candidate's examples/shop/pagebench.yaml with `--baseline` naming an unchanged copy's, so
each run holds both apps' 10 cold loads on `cable` in one seeded order, then `pagebench
compare RUN`. `--separate`: a baseline run, then a candidate run, then `compare BASE CAND`.

1. The gate: the candidate ships each regression of regressions.yaml in turn; compare must
   exit 1 naming the metric and the condition (target: caught with <= 10 loads a side). The
   wall time of one gate is what CI pays: the run(s) (the lab's set-up, link check and loads
   included) and the compare (target <= 5 minutes on 2 cores).
2. A/A: --pairs verdicts on the unchanged app on both sides; a false alarm is a compare
   that exits 1, or a run over the spec's budgets (target: at most 1 in 20).

`--noise`: a noisy neighbour for the whole part: one process that keeps a core busy for
10-40 s, then rests 10-40 s (seeded), as another tenant of a shared runner does; the
same for both designs, so their A/A can be told apart on a host that drifts.

The app's gunicorn must be on PATH (the test command installs it into .venv/bin, which
this puts first). Each part prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from pagebench.analysis.summary import halves, of_run
from pagebench.results.store import Store

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop"
REGRESSIONS: dict[str, dict[str, str]] = yaml.safe_load((SHOP / "regressions.yaml").read_text())
#: compare's --allow-different, as given (`--allow-different link-check` where the link check fails).
ALLOW: list[str] = []
#: What the tables' titles say of the neighbour (set by --noise).
NOISE = [""]
ENV = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}:{os.environ.get('PATH', os.defpath)}"}
METRICS = ("load_ms", "lcp_ms")


@dataclass(frozen=True)
class Measured:
    """One verdict's measurement: its run(s), the runs' worst exit (1: over a budget),
    the seconds of the run(s) and of the compare, each side's medians and the compare."""

    base: dict[str, float]
    candidate: dict[str, float]
    run_status: int
    compare_status: int
    head: str
    seconds: float


#: The neighbour: busy for 10-40 s, idle for 10-40 s, from its seed, until killed.
NEIGHBOUR = """
import random, time
rng = random.Random(7)
while True:
    end = time.monotonic() + rng.uniform(10, 40)
    while time.monotonic() < end:
        sum(i * i for i in range(10000))
    time.sleep(rng.uniform(10, 40))
"""


@contextlib.contextmanager
def neighbour(on: bool):
    """A noisy neighbour on one core while the block runs (nothing when `on` is false)."""
    if not on:
        yield
        return
    process = subprocess.Popen([sys.executable, "-c", NEIGHBOUR])
    try:
        yield
    finally:
        process.kill()
        process.wait()


def shop_copy(dest: Path, regression: str | None = None) -> Path:
    """The app copied to `dest` (edited in place afterwards), with one regression or none."""
    shutil.copytree(SHOP, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
    for edit in REGRESSIONS.values():  # every edited file back to the original first (two edit app.py)
        (dest / edit["file"]).write_text((SHOP / edit["file"]).read_text())
    if regression is not None:
        edit = REGRESSIONS[regression]
        text = (SHOP / edit["file"]).read_text()
        if text.count(edit["old"]) != 1:
            sys.exit(f"regressions.yaml {regression}: {edit['old']!r} is not once in {edit['file']}")
        (dest / edit["file"]).write_text(text.replace(edit["old"], edit["new"]))
    return dest


def run(copy: Path, db: str, baseline: Path | None = None) -> tuple[str, int]:
    """`pagebench run` of a copy's spec (with --baseline: the other copy's): its id and exit."""
    extra = ["--baseline", str(baseline / "pagebench.yaml")] if baseline is not None else []
    out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(copy / "pagebench.yaml"), "--db", db, *extra],
                         capture_output=True, text=True, env=ENV)
    lines = out.stdout.strip().splitlines()
    if out.returncode not in (0, 1) or not lines or not lines[-1].startswith("run "):
        sys.exit(f"pagebench run exited {out.returncode}: {(out.stderr.strip().splitlines() or [''])[-1]}")
    return lines[-1].split()[1], out.returncode


def compare(db: str, runs: list[str], metric: str) -> tuple[int, str]:
    """compare's exit status and its regression line (what it names)."""
    out = subprocess.run([sys.executable, "-m", "pagebench", "compare", *runs, "--db", db,
                          "--metric", metric, "--markdown", *ALLOW], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"pagebench compare exited {out.returncode}: {(out.stderr.strip().splitlines() or [''])[-1]}")
    return out.returncode, (out.stdout.strip().splitlines() or [""])[0]


def medians(summary) -> dict[str, float]:
    """load_ms and lcp_ms medians of a side's one condition."""
    [condition] = summary.conditions
    return {metric: condition.metrics[metric].median for metric in METRICS}


def measure(store: Store, db: str, base: Path, candidate: Path, metric: str, separate: bool,
            base_run: tuple[str, int] | None = None) -> tuple[Measured, tuple[str, int]]:
    """One verdict: interleaved (one run), or separate (a base run, unless given, then the
    candidate's). Also returns the candidate's run, which a chained A/A reuses as the next base."""
    started = time.monotonic()
    if separate:
        base_run = base_run or run(base, db)
        candidate_run = run(candidate, db)
        status, head = compare(db, [base_run[0], candidate_run[0]], metric)
        sides = of_run(store, base_run[0]), of_run(store, candidate_run[0])
        run_status = max(base_run[1], candidate_run[1])
    else:
        candidate_run = run(candidate, db, baseline=base)
        status, head = compare(db, [candidate_run[0]], metric)
        sides = halves(of_run(store, candidate_run[0]), store.experiment(candidate_run[0]).meta["baseline"])
        run_status = candidate_run[1]
    seconds = time.monotonic() - started
    return Measured(medians(sides[0]), medians(sides[1]), run_status, status, head, seconds), candidate_run


def how(separate: bool, chained: bool = False) -> str:
    if not separate:
        return "interleaved (one run per verdict: `run --baseline`, then `compare RUN`)"
    return "separate runs" + (" chained (run k against run k + 1)" if chained else " (two new runs per verdict)")


def gate(workdir: Path, db: str, metric: str, separate: bool) -> None:
    base = shop_copy(workdir / "base")
    candidate = workdir / "candidate"
    store = Store(db)
    print(f"### The gate: examples/shop, h2, cable, 10 cold loads a side, {how(separate)}, compared on {metric}\n")
    print("| candidate | base load_ms | cand load_ms | base lcp_ms | cand lcp_ms | run exit (budgets) | compare exit | "
          "what compare says | gate wall time |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for name in [None, *sorted(REGRESSIONS)]:
        shop_copy(candidate, name)
        m, _ = measure(store, db, base, candidate, metric, separate)
        print(f"| {name or 'unchanged'} | {m.base['load_ms']:.0f} | {m.candidate['load_ms']:.0f} | "
              f"{m.base['lcp_ms']:.0f} | {m.candidate['lcp_ms']:.0f} | {m.run_status} | {m.compare_status} | "
              f"{m.head.replace('|', '/')} | {m.seconds:.0f} s |", flush=True)
    print()


def aa(workdir: Path, db: str, metric: str, pairs: int, separate: bool, chained: bool = False) -> None:
    """`pairs` verdicts with the unchanged app on both sides. Interleaved, each is one run;
    separate, two runs, or with `chained` run k against run k + 1 (pairs + 1 runs: each
    verdict is still two runs measured apart, but neighbouring verdicts share a run, so
    their alarms are not independent)."""
    base, candidate = shop_copy(workdir / "aa-base"), shop_copy(workdir / "aa-candidate")
    store = Store(db)
    print(f"### A/A: {pairs} verdicts on the unchanged app, {how(separate, chained)}, compared on {metric}"
          f"{NOISE[0]}\n")
    print(f"| verdict | base {metric} median | candidate {metric} median | change | run exit | compare exit | "
          "wall time |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    alarms = 0
    previous = run(base, db) if separate and chained else None
    for pair in range(1, pairs + 1):
        m, candidate_run = measure(store, db, base, candidate, metric, separate, previous)
        if separate and chained:
            previous = candidate_run
        b, c = m.base[metric], m.candidate[metric]
        alarm = m.compare_status == 1 or m.run_status == 1
        alarms += alarm
        print(f"| {pair} | {b:.0f} | {c:.0f} | {c / b - 1:+.1%} | {m.run_status} | "
              f"{m.compare_status}{' (false alarm)' if alarm else ''} | {m.seconds:.0f} s |", flush=True)
    print(f"\nFalse alarms: {alarms} of {pairs} (target: at most 1 in 20).\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="results store URL (default: a throwaway SQLite file)")
    parser.add_argument("--part", choices=("gate", "aa", "both"), default="both")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--noise", action="store_true", help="a noisy neighbour on one core, in bursts")
    parser.add_argument("--separate", action="store_true", help="two runs per verdict, compared (not interleaved)")
    parser.add_argument("--chained", action="store_true", help="A/A with --separate: run k against run k + 1 "
                        "(pairs + 1 runs)")
    parser.add_argument("--metric", default="lcp_ms", help="what compare tests (the example workflow's GATE_METRIC)")
    parser.add_argument("--allow-different", default="", help="passed to compare (e.g. link-check on a VM whose "
                        "link check fails in some minutes; say so with the figures)")
    args = parser.parse_args()
    if args.noise:
        NOISE[0] = ", with a noisy neighbour (one core busy 10-40 s, idle 10-40 s)"
    if args.allow_different:
        ALLOW.extend(["--allow-different", args.allow_different])
    if shutil.which("gunicorn", path=ENV["PATH"]) is None:
        sys.exit("gunicorn is not installed: pip install -r examples/shop/requirements.txt into .venv")
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="pagebench-gate-"))
    os.chmod(workdir, 0o755)  # the app runs as an unprivileged user: it must read its copy
    try:
        db = args.db or f"sqlite:///{workdir}/gate.sqlite"
        with neighbour(args.noise):
            if args.part in ("gate", "both"):
                gate(workdir, db, args.metric, args.separate)
            if args.part in ("aa", "both"):
                aa(workdir, db, args.metric, args.pairs, args.separate, args.chained)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{(time.monotonic() - started) / 60:.1f} min in all.")


if __name__ == "__main__":
    main()
