"""Integration, through the CLI: mode h3 in a real run (Caddy in the server namespace,
Chromium forced onto QUIC for the site's origins), beside h2 on the same page."""

from __future__ import annotations

import pytest

from pagebench.results.store import Store

from tests.helpers import needs_root, pagebench, run_id_of, write_spec

pytestmark = needs_root


@pytest.fixture(scope="module")
def h3_run(tmp_path_factory) -> tuple[Store, str]:
    tmp = tmp_path_factory.mktemp("h3")
    spec = write_spec(tmp, name="h3", sites=[{"generate": {"images": 6, "origins": 2}}], modes=["h2", "h3"],
                      profiles=[{"name": "t40", "rtt_ms": 40, "down_mbit": 20, "up_mbit": 20}],
                      cache=["cold", "warm"], repetitions=2, warmup=1, seed=7, timeouts={"link_check": False})
    db = f"sqlite:///{tmp}/runs.sqlite"
    return Store(db), run_id_of(pagebench("run", str(spec), "--db", db))


def _h3(store: Store, run: str, cache: str) -> list[dict]:
    loads = [row for row in store.loads(run) if row.condition.mode.name == "h3" and row.condition.cache == cache]
    assert len(loads) == 2 and all(row.ok and not row.flagged for row in loads), \
        [row.flags for row in loads]
    return loads


def test_every_resource_comes_over_quic_and_no_tcp_reaches_the_origins(h3_run):
    store, run = h3_run
    for load in _h3(store, run, "cold"):
        resources = store.resources(load.id)
        assert len(resources) == load.requests >= 7  # the HTML, 6 images (and any css/js)
        assert {r.resource.protocol for r in resources} == {"h3"}
        assert load.link["tcp_conns"] == 0
        # one QUIC connection per origin, counted by the browser, the router (UDP flows) and Caddy
        assert load.connections_browser == load.connections_link == load.connections_server == 2


def test_warm_h3_revalidates_the_html_over_quic(h3_run):
    store, run = h3_run
    for load in _h3(store, run, "warm"):
        assert load.cache_hits == load.requests - 1 and load.link["tcp_conns"] == 0


def test_h3_runs_record_caddy_and_stay_above_their_bound(h3_run):
    store, run = h3_run
    assert store.experiment(run).meta["caddy_version"]
    for load in store.loads(run):
        assert load.bound_ms is not None and load.bound_ms <= load.load_ms, load
