"""Integration, through the CLI: a synthesized stand-in page loaded by Chromium. The
committed HAR of `modern` (`fixtures/modern.har.gz`), given Chrome's initiators from its
bodies and then stripped of them, is imported (`site import-har` makes every body) and
loaded cold over h2: every request of the HAR is fetched, found the same way (resource
type), answered with its recorded status, and carries the stand-in's body (within 1 % of
the recorded size); none is unrecorded. A public bodiless HAR of the corpus, imported and
loaded, answers every request with the status its HAR recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.har_page import har_statuses, status_differences
from pagebench.core.records import Resource
from pagebench.lab import sites as sitefiles
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store
from tests.core.har.hars import FIXTURES
from tests.core.har.test_synth import _modern, _stripped, _with_initiators
from tests.helpers import needs_root, pagebench, readable_dir, run_id_of, write_spec

pytestmark = needs_root

PROFILE = {"name": "t20", "rtt_ms": 20, "down_mbit": 20, "up_mbit": 20}


@pytest.fixture(scope="module")
def readable() -> Iterator[Path]:
    with readable_dir() as path:
        yield path


def _load_once(tmp_path: Path, into: Path, mode: str) -> tuple[LoadRow, list[Resource]]:
    """One cold load of the site at `into` in `mode`: ok, none of its requests unrecorded
    (no link check: these tests read the load, about 18 s a run)."""
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    spec = write_spec(tmp_path, name="stand-in", sites=[str(into)], modes=[mode], profiles=[PROFILE],
                      cache=["cold"], repetitions=1, warmup=0, seed=5, timeouts={"link_check": False})
    run = run_id_of(pagebench("run", str(spec), "--db", db))
    with Store(db) as store:
        [load] = store.loads(run)
        assert load.ok and not load.unrecorded, (load.flags, load.errors)
        return load, [r.resource for r in store.resources(load.id)]


def test_a_stand_in_page_loads_as_its_har_recorded(readable, tmp_path):
    original = _with_initiators(_modern())
    recorded = {e["request"]["url"]: e for e in original["log"]["entries"]}
    har = tmp_path / "modern-bare.har"
    har.write_text(json.dumps(_stripped(original)))
    into = readable / "modern-bare"
    result = pagebench("site", "import-har", str(har), "--name", "modern-bare", "--into", str(into))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "69 of 69 request(s) have bodies made" in result.stdout and "will 404" not in result.stdout
    site = sitefiles.load_site(into)
    assert site.recording is not None
    made = {e.url: (into / e.host / e.file).stat().st_size for e in site.recording.exchanges if e.file}
    original_of = {e.url: e.original for e in site.recording.exchanges}

    load, resources = _load_once(tmp_path, into, "h2")
    assert not load.flagged, load.flags
    assert sorted(r.url for r in resources) == sorted(made)  # every request of the HAR, once
    wrong, untimed = [], set()
    for resource in resources:
        entry = recorded[original_of[resource.url]]
        size = made[resource.url]
        # on the wire: the body (identity) and its headers; decoded, where Resource Timing
        # has an entry (Chromium gives none to fonts, in the original's loads too)
        if resource.body_bytes == 0:
            untimed.add(resource.resource_type)
        if resource.status != entry["response"]["status"] or not size <= resource.transfer_bytes <= size + 1024 \
                or resource.body_bytes not in (0, size) or resource.resource_type != entry["_resourceType"] \
                or abs(size - entry["response"]["content"]["size"]) > 0.01 * entry["response"]["content"]["size"] + 64:
            wrong.append((resource.url, (resource.status, resource.transfer_bytes, resource.body_bytes,
                                         resource.resource_type), (entry["response"]["status"], size,
                                                                   entry["_resourceType"])))
    assert not wrong, wrong
    assert untimed <= {"font"}, untimed


@pytest.mark.parametrize("name", ["chrome-har-www.google.com.har"])
def test_a_corpus_page_answers_every_request_with_the_hars_status(readable, tmp_path, name):
    """A public bodiless HAR of the corpus (a 302 from http to https first, 204 beacons,
    seven origins), synthesized and loaded once in HTTP/1.0 (a connection per request:
    the redirects and empty answers each on their own): every request the browser makes
    gets the status the HAR recorded for its URL (`benchmarks.har_page` does the same
    for nytimes in every mode), and every request of the HAR is made (its two 302s are
    seen as their targets' responses: the browser's record of a redirected request is its
    last response). Without server time: its first redirect waited 55 s for the server
    when recorded (`test_replay_e2e` waits a think time)."""
    har = FIXTURES / "hars" / name
    into = readable / "corpus-page"
    result = pagebench("site", "import-har", str(har), "--name", "corpus-page", "--into", str(into),
                       "--no-server-time")
    assert result.returncode == 0, result.stderr[-2000:]
    site = sitefiles.load_site(into)
    assert site.recording is not None and not site.recording.missing
    original_of = {e.url: e.original for e in site.recording.exchanges}
    statuses = har_statuses(har)

    _, resources = _load_once(tmp_path, into, "http1.0")
    assert not status_differences(statuses, original_of, resources)
    # a redirect is seen as its target's response (one DevTools request id along the chain)
    assert {original_of[r.url] for r in resources} == {u for u, s in statuses.items() if not 300 <= s < 400}
    assert sorted(statuses.values()).count(302) == 2
