"""Integration, through the CLI: a page of one's own in the lab. The committed HAR
(`fixtures/modern.har.gz`: the built-in `modern` loaded once by Chromium, see
`fixtures/make_modern_har.py`) is imported and replayed in every mode: nginx for
keep-alive, h2 and HTTP/1.0, Caddy for h3, the edge proxy for pipelining; cold and warm.
Every load must fetch exactly the HAR's requests (none unrecorded) with the three
connection counts in agreement (a disagreement flags the load)."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagebench.lab import sites as sitefiles
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

from tests.core.har.hars import PNG, T0, entry, har, iso
from tests.helpers import HARNESS, needs_root, pagebench, readable_dir, run_id_of, write_spec
from tests.lab.record.standin import recorded_stand_in

pytestmark = needs_root

FIXTURE = HARNESS / "tests" / "fixtures" / "modern.har.gz"
PROFILE = {"name": "t20", "rtt_ms": 20, "down_mbit": 20, "up_mbit": 20}
#: No link check before the loads: these tests read the loads only (about 17 s a run).
NO_LINK_CHECK = {"link_check": False}


def har_urls() -> list[str]:
    return [entry["request"]["url"] for entry in json.loads(gzip.decompress(FIXTURE.read_bytes()))["log"]["entries"]]


@pytest.fixture(scope="module")
def readable() -> Iterator[Path]:
    with readable_dir() as path:
        yield path


@pytest.fixture(scope="module")
def imported(readable) -> Path:
    into = readable / "modern-har"
    result = pagebench("site", "import-har", str(FIXTURE), "--name", "modern-har", "--into", str(into))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "0 request(s) will 404" in result.stdout or "will 404" not in result.stdout, result.stdout
    return into


@pytest.fixture(scope="module")
def runs(imported, tmp_path_factory) -> tuple[Store, str, str]:
    tmp = tmp_path_factory.mktemp("replay")
    db = f"sqlite:///{tmp}/runs.sqlite"
    direct = write_spec(tmp, name="replay", sites=[str(imported)], modes=["http1.0", "keepalive", "h2", "h3"],
                        profiles=[PROFILE], cache=["cold", "warm"], repetitions=1, warmup=0, seed=5,
                        timeouts=NO_LINK_CHECK)
    first = run_id_of(pagebench("run", str(direct), "--db", db))
    proxied = tmp / "proxied"
    proxied.mkdir()
    spec = write_spec(proxied, name="replay-proxy", sites=[str(imported)], modes=["pipelining"], topology="proxy",
                      profiles=[PROFILE], cache=["cold", "warm"], repetitions=1, warmup=0, seed=5,
                      timeouts=NO_LINK_CHECK)
    second = run_id_of(pagebench("run", str(spec), "--db", db))
    return Store(db), first, second


def test_the_imported_har_keeps_every_request_and_origin(imported):
    site = sitefiles.load_site(imported)
    assert site.recording is not None
    urls = har_urls()
    assert len(site.recording.exchanges) == len(urls) == 69
    assert sorted(site.recording.hosts) == sorted({u.split("/")[2] for u in urls})
    assert set(site.origins) == {f"{host}.test" for host in site.recording.hosts}


def test_every_replayed_load_fetches_exactly_the_har_requests(runs):
    store, direct, proxied = runs
    expected = sorted(url.replace(".modern.test/", ".modern.test.test/") for url in har_urls())
    seen = set()
    for run in (direct, proxied):
        for load in store.loads(run):
            where = (load.condition.mode.name, load.condition.cache)
            seen.add(where)
            assert load.ok and not load.flagged, (where, load.flags, load.errors)
            assert not load.unrecorded, where
            resources = store.resources(load.id)
            assert sorted(r.resource.url for r in resources) == expected, where
            if load.condition.cache == "cold":
                assert all(r.resource.status == 200 for r in resources), where
                if load.condition.mode.name != "pipelining":  # direct: the connections the browser used, the servers saw
                    # them all, the router as many or more (sockets Chromium opened and never used)
                    assert load.connections_browser == load.connections_server <= load.connections_link, where
    assert seen == {(m, c) for m in ("http1.0", "keepalive", "h2", "h3", "pipelining") for c in ("cold", "warm")}


def test_a_request_the_recording_lacks_is_a_counted_404(imported, readable, tmp_path):
    """Remove one image's exchange: every load fetches it, gets the unrecorded 404, stays
    ok but flagged with the URL."""
    copy = readable / "cut"
    shutil.copytree(imported, copy)
    recording = json.loads((copy / "recording.json").read_text())
    victim = next(e for e in recording["exchanges"] if e["target"].endswith(".png"))
    recording["exchanges"].remove(victim)
    (copy / "recording.json").write_text(json.dumps(recording))
    db = f"sqlite:///{tmp_path}/cut.sqlite"
    spec = write_spec(tmp_path, name="cut", sites=[str(copy)], modes=["h2"], profiles=[PROFILE],
                      repetitions=1, warmup=0, timeouts=NO_LINK_CHECK)
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    with Store(db) as store:
        [load] = store.loads(run)
    url = f"https://{victim['host']}{victim['target']}"
    assert load.ok and load.flagged and load.unrecorded == 1, load
    assert any("not in the recording" in flag and url in flag for flag in load.flags), load.flags


def test_a_recorded_page_replays_with_the_originals_requests_and_origins(readable, tmp_path, session_tag):
    """`modern` recorded from a stand-in internet (`tests/lab/record/standin.py`) and replayed
    beside the built-in itself, cold h2: the same requests per load over the same origins
    (renamed)."""
    recorded = recorded_stand_in(readable / "modern-shop", session_tag)
    db = f"sqlite:///{tmp_path}/rec.sqlite"
    spec = write_spec(tmp_path, name="recorded", sites=["modern", str(recorded)], modes=["h2"], profiles=[PROFILE],
                      repetitions=2, warmup=0, timeouts=NO_LINK_CHECK)
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    with Store(db) as store:
        loads = store.loads(run)
        by_site: dict[str, list[LoadRow]] = {}
        for load in loads:
            assert load.ok and not load.flagged, (load.condition.site, load.flags, load.errors)
            by_site.setdefault(load.condition.site, []).append(load)
        assert sorted(by_site) == ["modern", "modern-shop"]
        paths = {}
        for site, site_loads in by_site.items():
            for load in site_loads:
                urls = sorted(r.resource.url for r in store.resources(load.id))
                assert load.requests == len(urls) == 69, (site, len(urls))
                assert len({u.split("/")[2] for u in urls}) == 10, site
                paths.setdefault(site, set()).add(tuple(sorted(u.split("/", 3)[3] for u in urls)))
    assert paths["modern"] == paths["modern-shop"] and len(paths["modern"]) == 1  # the same files, every load


def test_a_chosen_page_with_ip_literal_and_port_origins_replays(readable, tmp_path):
    """The second page of a two-page HAR, its origins an IPv4 literal with a port, an IPv6
    literal and a host with a port, imported with `--page` and loaded cold in h2 and h3:
    every request it names is recorded under its lab name (none unrecorded), and what the
    import left out (data:, a WebSocket, the other page) is never asked for."""
    page = ('<!doctype html><link rel=stylesheet href="https://[2001:db8::1]/b.css">'
            '<script src="http://1.2.3.4:8080/a.js"></script><img src="https://localhost:8443/c.png">'
            '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">')
    pages = [{"id": "one", "startedDateTime": iso(T0), "title": "first"},
             {"id": "two", "startedDateTime": iso(T0 + 10), "title": "second"}]
    entries = [entry("https://www.example.com/", text="<p>first</p>", pageref="one"),
               entry("https://www.example.com/two", text=page, pageref="two", at=10),
               entry("https://[2001:db8::1]/b.css", mime="text/css", text="b{color:red}", pageref="two", at=10.1),
               entry("http://1.2.3.4:8080/a.js", mime="text/javascript", text="1", pageref="two", at=10.1),
               entry("https://localhost:8443/c.png", mime="image/png", text=PNG, pageref="two", at=10.1),
               entry("https://localhost:8443/c.png", mime="image/png", text=PNG, pageref="two", at=10.2),
               entry("data:image/gif;base64,R0lGODlhAQABAAAAACw=", mime="image/gif", text=b"GIF", pageref="two"),
               entry("wss://www.example.com/live", 101, mime="", text=None, pageref="two", at=10.3)]
    path = tmp_path / "two.har"
    path.write_text(har(*entries, pages=pages))
    into = readable / "two-pages"
    result = pagebench("site", "import-har", str(path), "--name", "two-pages", "--into", str(into), "--page", "2")
    assert result.returncode == 0, result.stderr
    assert "  4 request(s), " in result.stdout
    assert "  1 request(s) left out: of the HAR's 1 other page(s)" in result.stdout
    db = f"sqlite:///{tmp_path}/two.sqlite"
    spec = write_spec(tmp_path, name="two", sites=[str(into)], modes=["h2", "h3"], profiles=[PROFILE],
                      repetitions=1, warmup=0, timeouts=NO_LINK_CHECK)
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    expected = sorted(["https://www.example.com.test/two", "https://p8080.ip-1-2-3-4.test/a.js",
                       "https://ip6-2001-0db8-0000-0000-0000-0000-0000-0001.test/b.css",
                       "https://p8443.localhost.test/c.png"])
    with Store(db) as store:
        loads = store.loads(run)
        assert sorted(load.condition.mode.name for load in loads) == ["h2", "h3"]
        for load in loads:
            assert load.ok and not load.flagged and not load.unrecorded, (load.flags, load.errors)
            urls = sorted(r.resource.url for r in store.resources(load.id) if not r.resource.url.startswith("data:"))
            assert urls == expected, load.condition.mode.name
