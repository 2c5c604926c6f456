"""The HTML report's charts: every load a dot, load time against RTT, the connection
counts, and the waterfall of each condition's median load."""

from __future__ import annotations

import re

from tests.analysis.report.pages import figures, report
from pagebench.core.modes import H2, HTTP10, KEEPALIVE
from tests.helpers import META, PROFILES, SPEC, fake_load, fill, make_plan

CHARTS = {"distribution", "rtt", "connections", "waterfall"}
MARK = re.compile(r"<(?:rect|circle|line|path)\b")


def test_every_chart_is_drawn_with_marks(store, tmp_path):
    fill(store)
    page = report(store, tmp_path)
    drawn = figures(page)
    assert {name for name, _ in drawn} == CHARTS
    assert [name for name, _ in drawn].count("waterfall") == 4  # one per condition
    for name, svg in drawn:
        assert len(MARK.findall(svg)) >= 3, name
    distribution = dict(drawn)["distribution"]
    # 24 measured loads: 23 used (filled dots) and seq 6, flagged, as a hollow ring
    assert len(re.findall(r'<circle [^>]*fill-opacity="0.75"', distribution)) == 23
    assert len(re.findall(r'<circle [^>]*fill="none" stroke="#c00"', distribution)) == 1
    assert "http://" not in page and "https://demo.test" in page  # URLs only as text
    assert "<script" not in page and "<link" not in page and "<img" not in page


def test_waterfall_is_the_median_load_with_connection_lanes(store, tmp_path):
    fill(store)
    page = report(store, tmp_path)
    keepalive_3g = page.split('data-condition="keepalive 3g"', 1)[1].split("</figure>", 1)[0]
    # repetitions 0..5 take 2000..2050 ms: the lower middle one, 2020 ms, is repetition 2, seq 12
    assert "Load seq 12, 2020 ms (median of n=6: 2025 ms), 6 requests over 4 connections." in keepalive_3g
    assert "#4" in keepalive_3g and "#5" not in keepalive_3g
    assert len(set(re.findall(r'fill="(hsl\([^)]*\))"', keepalive_3g))) == 4
    h2_3g = page.split('data-condition="h2 3g"', 1)[1].split("</figure>", 1)[0]
    assert "6 requests over 1 connection." in h2_3g


def test_a_single_rtt_still_draws_one_point_per_series(store, tmp_path):
    plan = make_plan(modes=(HTTP10, KEEPALIVE, H2), profiles=("cable",), reps=5)
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    for planned in plan:
        store.record_loads("r1", planned, [fake_load(planned)], started_at=0.0)
    page = report(store, tmp_path)
    rtt = dict(figures(page))["rtt"]
    assert len(re.findall(r"<circle ", rtt)) == 3
    assert "This run has a single RTT (28 ms): one point per series." in page


def test_two_thousand_loads_are_each_drawn(store, tmp_path):
    """Every load is a point (how fast that renders is harness/benchmarks/html_report.py's)."""
    plan = make_plan(modes=(HTTP10, KEEPALIVE, H2), cache=("cold", "warm"), reps=167, warmups=0)
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    for planned in plan:
        store.record_loads("r1", planned, [fake_load(planned, 900.0 + planned.seq % 97)], started_at=0.0)
    page = report(store, tmp_path)
    assert len(plan) == 2004 and page.count('fill-opacity="0.75"') == 2004
