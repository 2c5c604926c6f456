"""The HTML report: one self-contained page, a pure function of what `gather` read, its
strings escaped. In Chromium (offline, nothing fetched, no label over another):
`test_html_e2e.py`."""

from __future__ import annotations

from pagebench.analysis.report.gather import gather
from pagebench.analysis.report.html import render
from tests.analysis.report.pages import figures, fill_hostile, report, report_data
from tests.helpers import META, PROFILES, SPEC, make_plan

CHARTS = {"distribution", "rtt", "connections", "waterfall"}


def test_hostile_strings_are_escaped(store, tmp_path):
    fill_hostile(store)
    page = report(store, tmp_path)
    assert "<script" not in page and "<img" not in page and '"&<b>' not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;/table&gt;&lt;script&gt;bad()&lt;/script&gt;" in page
    assert {name for name, _ in figures(page)} == CHARTS


def test_a_run_without_loads_has_notes_and_no_empty_figures(store, tmp_path):
    store.create_experiment("r1", SPEC, META, make_plan(), PROFILES)
    page = report(store, tmp_path)
    assert figures(page) == []
    assert page.count("the run has no usable load") == 3  # distribution, RTT, connections
    assert "n=0: can&#x27;t tell" in page and "No waterfall for keepalive 3g" in page
    assert "This run stored no link check" in page


def test_render_is_a_function_of_the_data_alone():
    data = report_data({"keepalive": 5, "h2": 1})
    page = render(data)
    assert page == render(data)
    assert page.startswith("<!DOCTYPE html>") and "pagebench run r1" in page


def test_gather_reads_what_render_draws(store, tmp_path):
    from tests.helpers import fill

    fill(store)
    data = gather(store, "r1")
    assert render(data) == report(store, tmp_path)
    assert [c.n for c in data.summary.conditions] == [6, 6, 5, 6] and data.experiment.run_id == "r1"
    assert len(data.resources) == 4  # the waterfall's median load of each condition, no more
