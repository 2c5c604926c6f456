"""Integration, through the CLI: the paint twins (`core/sites/paint.py`), the same bytes
shown progressively or all at the end, measured in one run over an emulated link (the
at-end twin as the baseline's build, `run --baseline`): `compare` finds their load times
alike and their SpeedIndex apart, by what the design predicts from the browser's own
paint times."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.paint import ORIGIN, predicted_speed_index
from pagebench.results.store import Store
from tests.helpers import good_loads, needs_root, pagebench, run_id_of, write_spec

pytestmark = needs_root

#: Slow enough that the hero takes about a second after the header.
PROFILE = {"name": "paint12", "rtt_ms": 40, "down_mbit": 12, "up_mbit": 5}
LOADS = 6


def _checkout(root: Path, variant: str) -> Path:
    """A checkout whose build is the twin `variant`, and its spec."""
    for host_path, body in builtin(f"paint-{variant}").files.items():
        path = root / "build" / host_path.removeprefix(f"{ORIGIN}/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    return write_spec(root, name="paint", sites=[{"name": "paint", "path": "build"}], modes=["h2"],
                      profiles=[PROFILE], cache=["cold"], repetitions=LOADS, warmup=1,
                      timeouts={"link_check": False})


@pytest.fixture(scope="module")
def twins(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("paint")
    spec, base = _checkout(tmp / "progressive", "progressive"), _checkout(tmp / "at-end", "at-end")
    db = f"sqlite:///{tmp}/runs.sqlite"
    run = run_id_of(pagebench("run", str(spec), "--baseline", str(base), "--db", db))
    store = Store(db)
    return {"db": db, "run": run, "store": store,
            "progressive": good_loads(store, run, site="paint"), "at-end": good_loads(store, run, site="paint.baseline")}


def test_the_twins_load_alike(twins):
    verdict = pagebench("compare", twins["run"], "--db", twins["db"])
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr  # no regression in load time
    medians = [statistics.median(load.load_ms for load in twins[v]) for v in ("progressive", "at-end")]
    assert abs(medians[0] - medians[1]) <= 0.05 * max(medians), medians


def test_each_twins_speed_index_is_what_its_design_predicts(twins):
    for variant in ("progressive", "at-end"):
        for load in twins[variant]:
            assert load.fcp_ms is not None and load.lcp_ms is not None and load.speed_index_ms is not None
            predicted = predicted_speed_index(variant, load.fcp_ms, load.lcp_ms)
            assert load.speed_index_ms == pytest.approx(predicted, rel=0.10), (variant, load.id)
    # the hero arrives whole about a second after the header (physics: the link's rate)
    assert all(load.lcp_ms - load.fcp_ms > 500 for load in twins["progressive"])


def test_compare_sees_the_speed_index_apart_by_the_predicted_amount(twins):
    median = {v: statistics.median(load.speed_index_ms for load in twins[v]) for v in ("progressive", "at-end")}
    predicted = {v: statistics.median(predicted_speed_index(v, load.fcp_ms, load.lcp_ms) for load in twins[v])
                 for v in ("progressive", "at-end")}
    gap, expected = median["at-end"] - median["progressive"], predicted["at-end"] - predicted["progressive"]
    assert expected > 0 and gap == pytest.approx(expected, rel=0.10), (median, predicted)
    verdict = pagebench("compare", twins["run"], "--db", twins["db"], "--metric", "speed_index_ms")
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert "improvement" in verdict.stdout, verdict.stdout  # the change (progressive) shows itself sooner
    print(f"SpeedIndex medians {median}, predicted {predicted}")
