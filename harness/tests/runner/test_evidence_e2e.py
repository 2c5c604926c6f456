"""Integration: a real short run keeps each measured load's evidence beside its store (a
HAR, its frames, and with `--trace` a Chrome trace), the rows name it, and `export --har`
writes the HARs out; real nginx, Chromium and namespaces."""

from __future__ import annotations

import gzip
import json

import jsonschema

from pagebench.results.store import Store
from tests.core.measure.harschema import SCHEMA
from tests.helpers import needs_root, nothing_left, pagebench, run_id_of, write_spec

pytestmark = needs_root


def test_each_measured_load_keeps_a_har_with_its_requests_protocols_and_connections(tmp_path):
    spec = write_spec(tmp_path, name="evidence", sites=["seed000-small-n2"], modes=["keepalive", "h2"],
                      profiles=[{"name": "r10", "rtt_ms": 10}], repetitions=1, warmup=1,
                      timeouts={"link_check": False})
    db = f"sqlite:///{tmp_path}/ci.sqlite"
    run = run_id_of(pagebench("run", str(spec), "--db", db, "--trace"))
    assert nothing_left()
    kept = tmp_path / "ci.artifacts" / run
    with Store(db) as store:
        measured = store.loads(run)
        assert len(measured) == 2 and len(store.loads(run, include_warmup=True)) == 4
        assert all(load.har is None for load in store.loads(run, include_warmup=True) if load.warmup)
        assert sorted(p.name for p in kept.iterdir()) == sorted(
            f"{load.seq}-0{suffix}" for load in measured for suffix in (".har.gz", ".trace.json.gz", ".frames.json.gz"))
        curves = store.run_visual_progress(run)
        for load in measured:
            assert (load.har, load.trace, load.frames) == (
                f"{run}/{load.seq}-0.har.gz", f"{run}/{load.seq}-0.trace.json.gz", f"{run}/{load.seq}-0.frames.json.gz")
            frames = json.loads(gzip.decompress((tmp_path / "ci.artifacts" / load.frames).read_bytes()))["frames"]
            assert [(f["ms"], f["progress"]) for f in frames] == list(curves[load.id])  # the frames that changed it
            assert frames[-1]["progress"] == 1.0 and load.speed_index_ms is not None
            har = json.loads(gzip.decompress((tmp_path / "ci.artifacts" / load.har).read_bytes()))
            jsonschema.validate(har, SCHEMA)
            resources = [row.resource for row in store.resources(load.id)]
            entries = har["log"]["entries"]
            assert [e["request"]["url"] for e in entries] == [r.url for r in resources] and len(entries) == 3
            protocol = "h2" if load.condition.mode.name == "h2" else "http/1.1"
            assert {e["response"]["httpVersion"] for e in entries} == {protocol}
            assert [e["connection"] for e in entries] == [str(r.connection_id) for r in resources]
            assert [e["_initiator"]["type"] for e in entries] == ["other", "parser", "parser"]
            assert har["log"]["pages"][0]["pageTimings"]["onLoad"] == round(load.load_ms, 3)
            trace = json.loads(gzip.decompress((tmp_path / "ci.artifacts" / load.trace).read_bytes()))
            names = {event.get("name") for event in trace["traceEvents"]}
            assert {"ResourceSendRequest", "ResourceFinish"} <= names
    exported = pagebench("export", run, "--har", str(tmp_path / "hars"), "--db", db)
    assert exported.returncode == 0, exported.stderr
    hars = sorted((tmp_path / "hars").iterdir())
    assert [p.name for p in hars] == sorted(f"seed000-small-n2_{load.condition.mode.name}_direct_r10_cold_tls1.3-"
                                            f"seq{load.seq}.har" for load in measured)
    assert all(len(json.loads(p.read_text())["log"]["entries"]) == 3 for p in hars)
