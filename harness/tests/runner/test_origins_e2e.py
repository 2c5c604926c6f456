"""Integration: a page of 100 origins loads in every mode (HTTP/1.0, keep-alive, h2, h3
direct; pipelining and the rest through the edge proxy) in one real run, each request on
its own origin's address of the routed range; nothing is left behind."""

from __future__ import annotations

import gzip
import ipaddress
import json
from pathlib import Path

from pagebench.core.layout import ORIGIN_NETWORK
from pagebench.core.servers.plan import plan
from pagebench.core.sites.model import Site
from pagebench.core.spec.plan import origin_modes
from pagebench.results.store import Store
from pagebench.runner.prepare import prepare
from tests.helpers import needs_root, nothing_left, pagebench, run_id_of, write_spec

pytestmark = needs_root

ORIGINS = 100
SPEC = {"name": "origins", "sites": [{"generate": {"origins": ORIGINS, "images": ORIGINS, "image_bytes": 300}}],
        "modes": ["http1.0", "keepalive", "pipelining", "h2", "h3"], "topology": ["direct", "proxy"],
        "profiles": [{"name": "r2", "rtt_ms": 2}], "cache": ["cold"], "repetitions": 1, "warmup": 0, "seed": 3,
        "timeouts": {"link_check": False}}


def test_a_page_of_100_origins_loads_in_every_mode_each_request_on_its_own_address(tmp_path: Path):
    spec = write_spec(tmp_path, **SPEC)
    db = f"sqlite:///{tmp_path}/origins.sqlite"
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    assert nothing_left()
    # the run's server plan, as the runner computes it from the spec
    prepared = prepare(SPEC, "spec")
    (generated,) = prepared.sites.values()
    expected = plan([Site(generated.manifest, tmp_path)], origin_modes(prepared.spec), prepared.spec.tls)
    assert expected.ip_count == 4 * ORIGINS  # http1.0, keep-alive (and pipelining), h2, h3 under TLS 1.3
    seen: dict[str, set[str]] = {}
    with Store(db) as store:
        loads = store.loads(run)
        assert {(load.condition.mode.name, load.condition.topology) for load in loads} >= {
            ("http1.0", "direct"), ("keepalive", "direct"), ("h2", "direct"), ("h3", "direct"),
            ("pipelining", "proxy")}
        for load in loads:
            c = load.condition
            assert load.ok and not load.flagged, (c.label, load.flags, load.errors)
            resources = [row.resource for row in store.resources(load.id)]
            assert len(resources) == 1 + ORIGINS and len({r.origin for r in resources}) == ORIGINS, c.label
            if c.topology != "direct":
                continue  # the browser's hop ends at the edge proxy; its upstreams are the plan's addresses
            assert {r.protocol for r in resources} == {c.mode.browser_protocol}, c.label
            har = json.loads(gzip.decompress((tmp_path / "origins.artifacts" / load.har).read_bytes()))
            for entry in har["log"]["entries"]:
                host = entry["request"]["url"].split("/")[2]
                own = expected.address(c.mode, c.tls, host).ip
                assert entry["serverIPAddress"] == own, (c.label, host, entry["serverIPAddress"], own)
                assert ipaddress.ip_address(own) in ipaddress.ip_network(ORIGIN_NETWORK)
            seen[c.mode.name] = {entry["serverIPAddress"] for entry in har["log"]["entries"]}
    assert all(len(addresses) == ORIGINS for addresses in seen.values()) and len(seen) == 4
    assert len(set().union(*seen.values())) == 4 * ORIGINS  # no two modes share an address
