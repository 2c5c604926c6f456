"""Integration, through the CLI: content encodings and delta by dictionary in real runs
(nginx for keep-alive and h2, Caddy for h3, the edge proxy for pipelining, Chromium),
judged from what the browser received, per resource."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from pagebench.core import encodings
from pagebench.core.encodings import BR, DCZ, IDENTITY
from pagebench.core.modes import H2, H3, KEEPALIVE, PIPELINING
from pagebench.core.records import Resource
from pagebench.lab import sites as sitefiles
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

from tests.helpers import good_loads, needs_root, pagebench, run_id_of, write_spec

pytestmark = needs_root

#: Two CSS, two JS, a 30 KB page and two images over two origins; version 2 edits 1 % of
#: the bytes of half the text files (the page always among them).
SITE = {"generate": {"images": 2, "origins": 2, "css": 2, "js": 2, "html_bytes": 30000,
                     "versions": [0.01], "changed": 0.5}}
PROFILE = {"name": "t20", "rtt_ms": 20, "down_mbit": 20, "up_mbit": 20}


def _host_path(url: str) -> str:
    """As the site's manifest names its files: a directory is its index.html."""
    parts = urlsplit(url)
    return f"{parts.hostname}{parts.path}" + ("index.html" if parts.path.endswith("/") else "")


@pytest.fixture(scope="module")
def site():
    return sitefiles.resolve(SITE)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Store, str, str]:
    tmp = tmp_path_factory.mktemp("encodings")
    db = f"sqlite:///{tmp}/runs.sqlite"
    direct = write_spec(tmp, name="encodings", sites=[SITE], modes=["keepalive", "h2", "h3"],
                        profiles=[PROFILE], encoding=["identity", "br", "dcz"], version=[2],
                        cache=["cold", "warm"], repetitions=1, warmup=0, seed=3,
                        timeouts={"link_check": False})
    first = run_id_of(pagebench("run", str(direct), "--db", db))
    proxied = tmp / "proxied"
    proxied.mkdir()
    spec = write_spec(proxied, name="encodings-proxy", sites=[SITE], modes=["pipelining"], topology="proxy",
                      profiles=[PROFILE], encoding=["br", "dcz"], version=[2], cache=["cold", "warm"],
                      repetitions=1, warmup=0, seed=3, timeouts={"link_check": False})
    second = run_id_of(pagebench("run", str(spec), "--db", db))
    return Store(db), first, second


def _resources(store: Store, load: LoadRow) -> list[Resource]:
    return [row.resource for row in store.resources(load.id)]


def _network(store: Store, load: LoadRow) -> list[Resource]:
    return [r for r in _resources(store, load) if not r.from_cache]


def test_a_cold_br_load_receives_br_on_every_text_resource_and_none_on_images(runs):
    store, direct, proxied = runs
    for run, mode in ((direct, KEEPALIVE), (direct, H2), (direct, H3), (proxied, PIPELINING)):
        for load in good_loads(store, run, mode=mode, encoding=BR, cache="cold"):
            resources = _network(store, load)
            text = [r for r in resources if encodings.is_text(_host_path(r.url))]
            images = [r for r in resources if r.resource_type == "image"]
            assert len(text) >= 5 and len(images) == 2, (mode, [r.url for r in resources])
            for r in text:
                assert r.content_encoding == "br", (mode, r.url, r.content_encoding)
                assert r.encoded_bytes < r.body_bytes, (mode, r.url)
            for r in images:
                assert r.content_encoding == "" and r.encoded_bytes == r.body_bytes, (mode, r.url)


def test_a_warm_v1_to_v2_load_gets_every_changed_text_resource_as_a_small_delta(runs, site):
    store, direct, proxied = runs
    changed = set(site.manifest.changed[2])
    assert 2 <= len(changed) < len(site.manifest.dictionaries)  # some text files stay as they were
    identity = {}
    for load in good_loads(store, direct, mode=H2, encoding=IDENTITY, cache="cold"):
        identity.update({_host_path(r.url): r.body_bytes for r in _network(store, load)})
    for run, mode in ((direct, KEEPALIVE), (direct, H2), (direct, H3), (proxied, PIPELINING)):
        for load in good_loads(store, run, mode=mode, encoding=DCZ, cache="warm"):
            resources = {_host_path(r.url): r for r in _resources(store, load)}
            for path in changed:
                r = resources[path]
                # a body fetched whole (no dictionary offered, or not used) flags the load: not here
                assert r.status == 200 and r.dictionary_offered and r.dictionary_used, (mode, path, r)
                assert r.content_encoding == "dcz"
                assert r.encoded_bytes <= 0.05 * identity[path], (mode, path, r.encoded_bytes, identity[path])
            for path in set(site.manifest.dictionaries) - changed:  # Chromium reports a 304 as its cached 200
                assert resources[path].revalidated and not resources[path].dictionary_used, (mode, path)


def test_a_warm_br_load_of_v2_fetches_the_changed_files_whole_and_revalidates_the_rest(runs, site):
    store, direct, _ = runs
    changed = set(site.manifest.changed[2])
    for mode in (KEEPALIVE, H2, H3):
        for load in good_loads(store, direct, mode=mode, encoding=BR, cache="warm"):
            resources = {_host_path(r.url): r for r in _resources(store, load)}
            for path in changed:
                assert resources[path].status == 200 and resources[path].content_encoding == "br"
                assert not resources[path].dictionary_used
            for path in set(site.manifest.dictionaries) - changed:
                assert resources[path].revalidated, (mode, path)


def test_the_run_records_what_each_encoding_cost_to_make(runs, site):
    store, direct, _ = runs
    cost = store.experiment(direct).meta["encoding_cost"][site.name]
    assert set(cost) == {"gzip", "br", "zstd", "dcz"}
    assert all(c["bytes_out"] < c["bytes_in"] and c["cpu_ms"] > 0 for c in cost.values()), cost


def test_a_cold_dcz_load_falls_back_to_zstd(runs):
    store, direct, _ = runs
    for load in good_loads(store, direct, mode=H2, encoding=DCZ, cache="cold"):
        text = [r for r in _network(store, load) if r.resource_type in ("document", "stylesheet", "script")]
        assert text and {r.content_encoding for r in text} == {"zstd"}
        assert not any(r.dictionary_offered for r in text)
