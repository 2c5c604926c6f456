"""The HTML report's links to the loads' evidence: each condition's median and slowest
usable load linked to its HAR, relative to the page (so they work with the page beside the
store); a load whose file was never kept or is gone says so."""

from __future__ import annotations

import gzip
import json
import re

from pagebench.results.artifacts import Evidence
from pagebench.results.store import Store
from tests.analysis.report.pages import report
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan

LINK = re.compile(r'<a href="([^"]+)" download>(HAR|trace)</a>')


def _fill(store: Store, keep=lambda planned: True, trace: bool = False) -> dict[str, list[tuple[int, float]]]:
    """2 modes x 1 profile, 5 loads each with a HAR naming its seq (`keep`: which); the
    (seq, load time) of each mode's loads."""
    plan = make_plan(profiles=("3g",), reps=5, warmups=0)
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    times: dict[str, list[tuple[int, float]]] = {}
    for planned in plan:
        load_ms = 1000.0 + 37 * ((planned.seq * 7) % 5) + (500 if planned.condition.mode.name == "h2" else 0)
        document = {"log": {"version": "1.2", "creator": {"name": "t", "version": "0"}, "entries": [],
                            "_seq": planned.seq}}
        evidence = [Evidence(har=document, trace={"traceEvents": []} if trace else None)] if keep(planned) else []
        store.record_loads("r1", planned, [fake_load(planned, load_ms)], 1_790_000_000.0, evidence)
        times.setdefault(planned.condition.mode.name, []).append((planned.seq, load_ms))
    return times


def _rows(page: str) -> dict[str, str]:
    body = page.split('<section id="evidence">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr><td class=\"f\">([^<]+)</td>(.*?)</tr>", body)
    return dict(rows)


def _median_and_worst(times: list[tuple[int, float]]) -> tuple[int, int]:
    ordered = sorted(times, key=lambda t: (t[1], t[0]))
    return ordered[(len(ordered) - 1) // 2][0], max(times, key=lambda t: (t[1], t[0]))[0]


def test_each_condition_links_its_median_and_slowest_load_beside_the_store(store, tmp_path):
    times = _fill(store, trace=True)
    page = report(store, tmp_path)  # tmp_path/report.html, beside tmp_path/x.sqlite
    rows = _rows(page)
    assert set(rows) == {"keepalive", "h2"}
    for mode, row in rows.items():
        median, worst = _median_and_worst(times[mode])
        assert median != worst
        links = LINK.findall(row)
        assert links == [(f"x.artifacts/r1/{median}-0.har.gz", "HAR"), (f"x.artifacts/r1/{median}-0.trace.json.gz",
                                                                          "trace"),
                         (f"x.artifacts/r1/{worst}-0.har.gz", "HAR"), (f"x.artifacts/r1/{worst}-0.trace.json.gz",
                                                                         "trace")]
        for href, kind in links:
            kept = json.loads(gzip.decompress((tmp_path / href).read_bytes()))  # the link resolves from the page
            if kind == "HAR":
                assert kept["log"]["_seq"] in (median, worst)


def test_a_page_elsewhere_links_back_to_the_artifact_directory(store, tmp_path):
    _fill(store)
    elsewhere = tmp_path / "pages" / "today"
    elsewhere.mkdir(parents=True)
    path = elsewhere / "run.html"
    from pagebench.analysis.report.html import write_html_report

    write_html_report(store, "r1", path)
    hrefs = [href for href, _ in LINK.findall(path.read_text())]
    assert hrefs and all(href.startswith("../../x.artifacts/r1/") for href in hrefs)
    assert all((elsewhere / href).resolve().is_file() for href in hrefs)


def test_loads_without_their_files_still_report_and_say_no_evidence_was_kept(store, tmp_path):
    times = _fill(store, keep=lambda planned: planned.condition.mode.name == "h2")
    median, worst = _median_and_worst(times["h2"])
    (tmp_path / "x.artifacts" / "r1" / f"{worst}-0.har.gz").unlink()  # deleted since
    rows = _rows(report(store, tmp_path))
    assert "HAR" not in rows["keepalive"] and rows["keepalive"].count("no evidence kept") == 2  # never kept
    assert LINK.findall(rows["h2"]) == [(f"x.artifacts/r1/{median}-0.har.gz", "HAR")]
    assert rows["h2"].count("no evidence kept") == 1
    assert [load.har is None for load in store.loads("r1")].count(True) == 5


def test_an_in_memory_store_keeps_no_evidence_and_reports(tmp_path):
    with Store("sqlite://") as store:
        assert store.artifacts is None
        _fill(store)
        rows = _rows(report(store, tmp_path))
    assert all(row.count("no evidence kept") == 2 for row in rows.values())
    assert not any(p.name.endswith(".artifacts") for p in tmp_path.iterdir())
