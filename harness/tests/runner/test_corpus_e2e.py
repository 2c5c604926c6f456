"""Integration, through the CLI: a corpus of public bodiless HARs (a Firefox and a
WebPageTest capture) run as one spec, page by page: each page imported as a stand-in,
loaded by Chromium in HTTP/1.0 and h2 in a lab of its own, every request answered with the
status the HAR recorded, and the report giving each page against the base mode and the
distribution across pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pagebench.lab.sites import load_site
from pagebench.results.store import Store
from tests.helpers import good_loads, needs_root, pagebench, run_id_of, write_spec

pytestmark = needs_root

HARS = Path(__file__).parents[1] / "fixtures" / "hars"
PAGES = ("firefox-www.wikipedia.org", "wpt-www.sitespeed.io")


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("corpus")
    (tmp / "hars").mkdir()
    for page in PAGES:
        shutil.copy(HARS / f"{page}.har", tmp / "hars" / f"{page}.har")
    (tmp / "specs").mkdir()
    spec = write_spec(tmp / "specs", name="corpus", sites=[{"corpus": "../hars/*.har"}], modes=["http1.0", "h2"],
                      profiles=[{"name": "r10", "rtt_ms": 10}], repetitions=2, warmup=0,
                      timeouts={"link_check": False})
    db = f"sqlite:///{tmp}/runs.sqlite"
    done = pagebench("run", str(spec), "--db", db)  # the harness directory is the working directory
    run = run_id_of(done)
    report = pagebench("report", run, "--db", db, "--json")
    assert report.returncode == 0, report.stderr
    return {"store": Store(db), "run": run, "stderr": done.stderr, "report": json.loads(report.stdout),
            "hars": tmp / "hars"}


def test_each_page_runs_in_a_lab_of_its_own_one_after_the_other(corpus_run):
    store, run = corpus_run["store"], corpus_run["run"]
    loads = sorted(store.loads(run), key=lambda row: row.seq)
    assert [row.condition.site for row in loads] == [PAGES[0]] * 4 + [PAGES[1]] * 4
    experiment = store.experiment(run)
    assert experiment.status == "complete"
    assert experiment.spec["sites"] == [{"corpus": str(corpus_run["hars"] / "*.har")}]  # anchored at the spec
    for page in PAGES:
        meta = experiment.meta["sites"][page]
        assert meta["kind"] == "corpus" and meta["synthesized"] is True
        assert meta["har"] == str(corpus_run["hars"] / f"{page}.har")
        assert meta["requests"] > 5 and meta["origins"] >= 1 and meta["bytes"] > 50_000


def test_every_request_is_answered_with_the_status_the_har_recorded(corpus_run):
    store, run = corpus_run["store"], corpus_run["run"]
    experiment = store.experiment(run)
    for page in PAGES:
        recording = load_site(Path(experiment.meta["sites"][page]["path"])).recording
        assert recording is not None
        expected = {f"https://{e.host}{e.target}": e.status for e in recording.exchanges}
        for load in good_loads(store, run, site=page):
            got = {row.resource.url: row.resource.status for row in store.resources(load.id)}
            assert got == {url: expected[url] for url in got}, (page, load.condition.mode)
            assert len(got) >= len(expected) - 1, (page, sorted(set(expected) - set(got)))


def test_the_report_gives_each_page_and_the_distribution_across_pages(corpus_run):
    [h2] = corpus_run["report"]["pages"]
    assert (h2["mode"], h2["base"], h2["pages"]) == ("h2", "http1.0", 2)
    assert h2["faster"] + h2["slower"] + h2["unclear"] == 2 and h2["too_few_loads"] == 0
    assert {p["page"] for p in h2["per_page"]} == set(PAGES)
    for page in h2["per_page"]:
        assert page["base_ms"] > 0 and page["mode_ms"] > 0 and page["requests"] > 5
        ratio, low, high = page["ratio"]
        assert low <= ratio <= high and ratio == pytest.approx(page["mode_ms"] / page["base_ms"])
    html = corpus_run["hars"].parent / "report.html"
    text = pagebench("report", corpus_run["run"], "--db", str(corpus_run["store"].url), "--html", str(html))
    assert "h2 / http1.0 over 2 pages: faster on" in text.stdout.replace("\n", " ")
    page = html.read_text()
    assert '<section id="pages"><h2>Pages of the corpus</h2>' in page
    assert all(f'<td class="f">{name}</td>' in page for name in PAGES)
