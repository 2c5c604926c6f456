"""The CI gate on the worked example (issue 24's targets), through the CLI as CI runs it.

    sudo .venv/bin/python harness/benchmarks/gate.py > table.md             # both parts, about 45 minutes
    sudo .venv/bin/python harness/benchmarks/gate.py --part gate            # the first part only, about 5 minutes

1. The gate: a baseline run of examples/shop/pagebench.yaml (10 cold loads on `cable`
   after a warm-up), then a candidate with each regression of regressions.yaml shipped
   in a copy of the app, each compared on --metric: the gate must exit 1 naming the
   metric and the condition (target: caught with <= 10 loads a side). The wall time of
   one gate in CI is one `pagebench run` (the lab's set-up, link check and loads
   included) and one `compare` (target <= 5 minutes on 2 cores).
2. A/A: --pairs pairs of runs of the unchanged app, each pair compared as the gate
   compares; a false alarm is a compare that exits 1, or a run over the spec's budgets
   (target: at most 1 in 20).

The app's gunicorn must be on PATH (the test command installs it into .venv/bin, which
this puts first). Each part prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from pagebench.results.store import Store

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop"
REGRESSIONS: dict[str, dict[str, str]] = yaml.safe_load((SHOP / "regressions.yaml").read_text())
#: compare's --allow-different, as given (`--allow-different link-check` where the link check fails).
ALLOW: list[str] = []
ENV = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}:{os.environ.get('PATH', os.defpath)}"}


@dataclass(frozen=True)
class Measured:
    run_id: str
    status: int  # pagebench run's exit: 0, or 1 over a budget
    seconds: float


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


def run(copy: Path, db: str) -> Measured:
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pagebench", "run", str(copy / "pagebench.yaml"), "--db", db],
                         capture_output=True, text=True, env=ENV)
    lines = out.stdout.strip().splitlines()
    if out.returncode not in (0, 1) or not lines or not lines[-1].startswith("run "):
        sys.exit(f"pagebench run exited {out.returncode}: {(out.stderr.strip().splitlines() or [''])[-1]}")
    return Measured(lines[-1].split()[1], out.returncode, time.monotonic() - started)


def compare(db: str, base: str, candidate: str, metric: str) -> tuple[int, str, float]:
    """compare's exit status, its regression line (what it names), its seconds."""
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pagebench", "compare", base, candidate, "--db", db,
                          "--metric", metric, "--markdown", *ALLOW], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"pagebench compare exited {out.returncode}: {(out.stderr.strip().splitlines() or [''])[-1]}")
    head = (out.stdout.strip().splitlines() or [""])[0]
    return out.returncode, head, time.monotonic() - started


def medians(store: Store, run_id: str) -> dict[str, float]:
    """load_ms and lcp_ms medians of the run's counted loads."""
    loads = [l for l in store.loads(run_id) if l.ok and not l.flagged]
    return {metric: statistics.median(getattr(l, metric) for l in loads if getattr(l, metric) is not None)
            for metric in ("load_ms", "lcp_ms")}


def gate(workdir: Path, db: str, metric: str) -> None:
    copy = shop_copy(workdir / "gate")
    base = run(copy, db)
    store = Store(db)
    rows = [("unchanged (baseline)", base, None)]
    for name in sorted(REGRESSIONS):
        shop_copy(copy, name)
        candidate = run(copy, db)
        rows.append((name, candidate, compare(db, base.run_id, candidate.run_id, metric)))
    print(f"### The gate: examples/shop, h2, cable, 10 cold loads a side, compared on {metric}\n")
    print("| app | load_ms median | lcp_ms median | run exit (budgets) | compare exit | what compare says | "
          "gate wall time (run + compare) |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for name, measured, verdict in rows:
        found = medians(store, measured.run_id)
        status, head, seconds = verdict if verdict else (None, "", 0.0)
        print(f"| {name} | {found['load_ms']:.0f} | {found['lcp_ms']:.0f} | {measured.status} | "
              f"{'—' if status is None else status} | {head.replace('|', '/')} | {measured.seconds + seconds:.0f} s |")
    print()


def aa(workdir: Path, db: str, metric: str, pairs: int, chained: bool = False) -> None:
    """`pairs` pairs of runs of the unchanged app; `chained`: run k against run k + 1 (pairs + 1
    runs, not 2 x pairs: each pair is still two runs measured apart, but neighbouring pairs
    share a run, so their alarms are not independent)."""
    copy = shop_copy(workdir / "aa")
    store = Store(db)
    how = f", chained ({pairs + 1} runs, run k against run k + 1)" if chained else ""
    print(f"### A/A: {pairs} pairs of runs of the unchanged app{how}, compared on {metric}\n")
    print(f"| pair | base {metric} median | candidate {metric} median | change | run exits | compare exit |")
    print("|---:|---:|---:|---:|---|---:|")
    alarms = 0
    previous = run(copy, db) if chained else None
    for pair in range(1, pairs + 1):
        if previous is not None:
            base, candidate = previous, run(copy, db)
            previous = candidate
        else:
            base, candidate = run(copy, db), run(copy, db)
        status, _, _ = compare(db, base.run_id, candidate.run_id, metric)
        b, c = medians(store, base.run_id)[metric], medians(store, candidate.run_id)[metric]
        alarm = status == 1 or base.status == 1 or candidate.status == 1
        alarms += alarm
        print(f"| {pair} | {b:.0f} | {c:.0f} | {c / b - 1:+.1%} | {base.status}, {candidate.status} | "
              f"{status}{' (false alarm)' if alarm else ''} |", flush=True)
    print(f"\nFalse alarms: {alarms} of {pairs} (target: at most 1 in 20).\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="results store URL (default: a throwaway SQLite file)")
    parser.add_argument("--part", choices=("gate", "aa", "both"), default="both")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--chained", action="store_true", help="A/A: run k against run k + 1 (pairs + 1 runs)")
    parser.add_argument("--metric", default="lcp_ms", help="what compare tests (the example workflow's GATE_METRIC)")
    parser.add_argument("--allow-different", default="", help="passed to compare (e.g. link-check on a VM whose "
                        "link check fails in some minutes; say so with the figures)")
    args = parser.parse_args()
    if args.allow_different:
        ALLOW.extend(["--allow-different", args.allow_different])
    if shutil.which("gunicorn", path=ENV["PATH"]) is None:
        sys.exit("gunicorn is not installed: pip install -r examples/shop/requirements.txt into .venv")
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="pagebench-gate-"))
    os.chmod(workdir, 0o755)  # the app runs as an unprivileged user: it must read its copy
    try:
        db = args.db or f"sqlite:///{workdir}/gate.sqlite"
        if args.part in ("gate", "both"):
            gate(workdir, db, args.metric)
        if args.part in ("aa", "both"):
            aa(workdir, db, args.metric, args.pairs, args.chained)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{(time.monotonic() - started) / 60:.1f} min in all.")


if __name__ == "__main__":
    main()
