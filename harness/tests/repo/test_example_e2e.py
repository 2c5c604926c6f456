"""The worked example gated as the CI gate gates it (examples/shop/pagebench.yaml, `cable`,
10 cold loads a side, compared on lcp_ms as .github/workflows/pageload.yml does): each
candidate is run with `--baseline` naming an unchanged copy's spec, so both apps' loads
share one run, then `compare RUN`. Each regression of regressions.yaml shipped in the
candidate fails the gate naming the metric and the condition, and the reverted app (the
unchanged app on both sides) passes, within its budgets. Nothing of either app is left running
after a run."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import SHOP_REGRESSIONS, needs_root, nothing_left, pagebench, readable_dir, shop_copy, with_venv_path

pytestmark = needs_root

METRIC = "lcp_ms"  # the workflow's GATE_METRIC
CONDITION = "shop h2 direct cable cold"


@pytest.fixture
def scratch() -> Iterator[Path]:
    with readable_dir() as path:
        yield path


def app_processes(copy: Path) -> list[int]:
    """Processes whose working directory is the copy: the app and its workers."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == copy:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def measured(candidate: Path, base: Path, db: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """`pagebench run` of the candidate's spec with the base copy's as its baseline (their
    gunicorn on PATH): the result and the run id."""
    result = pagebench("run", str(candidate / "pagebench.yaml"), "--baseline", str(base / "pagebench.yaml"),
                       "--db", db, timeout=600, env=with_venv_path())
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    found = re.match(r"run (\S+) complete: pagebench compare \1$", last)
    assert found, f"exit {result.returncode}: {result.stdout[-1000:]}{result.stderr[-3000:]}"
    assert not app_processes(candidate) and not app_processes(base), "an app outlived its run"
    return result, found.group(1)


def gate(db: str, run: str) -> subprocess.CompletedProcess[str]:
    """compare as the workflow runs it: one run, its baseline's app against its own."""
    return pagebench("compare", run, "--db", db, "--metric", METRIC, "--markdown", timeout=120)


def test_the_gate_catches_each_regression_and_passes_the_unchanged_app(scratch):
    db = f"sqlite:///{scratch}/gate.sqlite"
    base, copy = shop_copy(scratch / "base"), shop_copy(scratch / "shop")
    for regression in sorted(SHOP_REGRESSIONS):
        shop_copy(copy, regression)
        result, run = measured(copy, base, db)
        assert result.returncode in (0, 1), result.stderr[-3000:]  # 1: a budget breached, which is fine here
        verdict = gate(db, run)
        assert verdict.returncode == 1, f"{regression} not caught:\n{verdict.stdout}{verdict.stderr}"
        assert METRIC in verdict.stdout
        flagged = [line for line in verdict.stdout.splitlines() if CONDITION in line and "regression" in line]
        assert flagged, verdict.stdout

    shop_copy(copy)  # reverted: the unchanged app on both sides
    result, run = measured(copy, base, db)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]  # within its budgets
    assert result.stdout.count("budget ok: shop h2") == 2 and "shop.baseline" not in result.stdout  # the change's only
    verdict = gate(db, run)
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert nothing_left()
