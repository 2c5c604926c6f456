"""Stand-in fidelity: does a page synthesized from a HAR without bodies load as the real
replay of the same HAR? The committed HAR of `modern` (tests/fixtures/modern.har.gz) is
imported as it is (the real replay), and twice stripped of its bodies and synthesized:
once with Chrome's initiators (derived from the bodies, as DevTools records them), once
without (Playwright's HAR as it is: parents inferred from timing). All are loaded cold in
one interleaved run per mode; the table gives each one's median load with its bootstrap
interval and the ratio to the real replay's.

    cd harness && sudo ../.venv/bin/python -m benchmarks.synth [--reps 10] [--db sqlite:///synth.sqlite]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import yaml

from benchmarks.replay import FIXTURE, pagebench, table
from pagebench.results.store import Store

PROFILES = ["lte"]
MODES = ["http1.0", "keepalive", "h2"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    from tests.core.har.test_synth import _modern, _stripped, _with_initiators

    work = Path(tempfile.mkdtemp(prefix="pagebench-synth-bench-"))
    work.chmod(0o755)  # nginx's workers read the sites as nobody
    try:
        sites = {"modern-har": FIXTURE}
        bare = {"stand-in": _stripped(_with_initiators(_modern())), "stand-in-timed": _stripped(_modern())}
        for name, har in bare.items():
            sites[name] = work / f"{name}.har"
            sites[name].write_text(json.dumps(har))
        for name, har in sites.items():
            print(pagebench("site", "import-har", str(har), "--name", name, "--into", str(work / name)))
        spec = {"name": "bench-synth", "sites": [str(work / name) for name in sites], "modes": MODES,
                "profiles": PROFILES, "cache": ["cold"], "repetitions": args.reps, "warmup": 1, "seed": 25}
        (work / "spec.yaml").write_text(yaml.safe_dump(spec))
        db = args.db or f"sqlite:///{work}/synth.sqlite"
        out = pagebench("run", str(work / "spec.yaml"), "--db", db)
        run = next(line.split()[1] for line in out.splitlines() if line.startswith("run "))
        with Store(db) as store:
            table(store, run, base="modern-har")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
