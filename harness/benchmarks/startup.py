"""What a command costs before and after its loads: the start of `pagebench run`.

    sudo .venv/bin/python harness/benchmarks/startup.py [--repeat 7] > table.md

A CI job or a test that runs `pagebench run` on a small spec pays the command's start on
every run: Python importing the command, the lab built and torn down, the browser
launched. The per-load overhead (`page_loads.py`) says nothing about it. Measured here,
each the median of `--repeat` runs (after one discarded warm-up):

1. importing what `pagebench run` imports (the CLI, the runner), in a fresh interpreter;
2. for scale, importing scipy.stats alone (which that import no longer includes);
3. `pagebench run` of one cold load of seed000-small-n1 at 10 ms, without and with its
   link check (the check is on by default), wall time of the whole command.

Each runs in a fresh process, as a user's does; nothing is cached between them but the
operating system's page cache.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

RUN_IMPORTS = "import pagebench.cli.main, pagebench.cli.run, pagebench.runner.run"


def timed(command: list[str]) -> float:
    start = time.monotonic()
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
    return time.monotonic() - start


def row(label: str, command: list[str], repeat: int) -> None:
    timed(command)  # warm-up: the page cache, not the measurement
    seconds = sorted(timed(command) for _ in range(repeat))
    print(f"| {label} | {statistics.median(seconds):.2f} s | {seconds[0]:.2f}-{seconds[-1]:.2f} s | {repeat} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    python = [sys.executable]
    print("| what | median | range | runs |")
    print("|---|---|---|---|")
    row("import what `pagebench run` imports", python + ["-c", RUN_IMPORTS], args.repeat)
    row("import scipy.stats alone", python + ["-c", "import scipy.stats"], args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        for check in (False, True):
            spec = {"name": "startup", "sites": ["seed000-small-n1"], "modes": ["h2"], "cache": ["cold"],
                    "profiles": [{"name": "r10", "rtt_ms": 10}], "repetitions": 1, "warmup": 0,
                    "timeouts": {"link_check": check}}
            path = Path(tmp) / f"startup-{check}.yaml"
            path.write_text(yaml.safe_dump(spec))
            command = python + ["-m", "pagebench", "run", str(path), "--db", f"sqlite:///{tmp}/startup.sqlite"]
            label = f"`pagebench run`, one cold load, {'with' if check else 'without'} its link check"
            row(label, command, args.repeat if not check else max(1, args.repeat // 3))


if __name__ == "__main__":
    main()
