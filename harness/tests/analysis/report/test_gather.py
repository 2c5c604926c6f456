"""What the HTML report reads and how it sees the run's one summary: each condition's
loads with a load time, its median (the summary's), the median's interval, the bound ratio."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pagebench.analysis import stats
from pagebench.analysis.report.gather import median_load, views
from pagebench.analysis.report.html import render
from pagebench.analysis.summary import of_run, summarize
from tests.analysis.report.pages import numbers_row, report_data
from tests.helpers import fill


def test_measured_over_bound_is_the_median_ratio(store):
    fill(store)
    loads = store.loads("r1")
    bounded = [replace(load, bound_ms=1000.0) for load in loads]
    profiles = {c.condition.profile: c.profile_fields for c in store.conditions("r1")}
    conditions = views(summarize("r1", bounded, store.plan("r1")), profiles, ["mode", "profile"])
    assert conditions[0].label == "keepalive 3g"
    assert conditions[0].bound_ratio == pytest.approx(2.025)  # loads 2000..2050 ms over 1000 ms
    unbounded = views(of_run(store, "r1"), profiles, ["mode"])
    assert {c.bound_ratio for c in unbounded} == {None}


def test_the_page_sees_the_one_summary(store):
    fill(store)
    summary = of_run(store, "r1")
    profiles = {c.condition.profile: c.profile_fields for c in store.conditions("r1")}
    for view, condition in zip(views(summary, profiles, ["mode"]), summary.conditions):
        assert view.summary is condition and view.median == condition.metrics["load_ms"].median
        assert [row.load_ms for row in view.used] == condition.values("load_ms")
        assert view.ci == stats.median_ci(condition.values("load_ms")) and view.rtt_ms == profiles[
            condition.condition.profile]["rtt_ms"]
    h2_3g = views(summary, profiles, ["mode"])[2]
    assert [row.seq for row in h2_3g.flagged] == [6] and h2_3g.summary.n == 5  # seq 6 flagged: drawn apart
    assert median_load(h2_3g).load_ms == 1230.0  # seq 6 (1200 ms) left out: 1210 .. 1250


def test_one_usable_load_has_no_interval():
    data = report_data({"keepalive": 5, "h2": 1})
    h2 = numbers_row(render(data), "h2")
    assert "<td><b>1200</b></td><td>—</td>" in h2  # a median of one load, no interval (not a zero-width one)
    [single] = [c for c in views(data.summary, data.profiles, ["mode"]) if c.condition.mode.name == "h2"]
    assert (len(single.used), single.median, single.ci) == (1, 1200.0, None)
