"""The HTML report: one self-contained file with every chart, from a store filled with loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pagebench.analysis import stats
from pagebench.analysis.report.html import ReportData, _conditions, render, write_html_report
from pagebench.analysis.summary import summarize
from pagebench.core.records import Condition, PlannedLoad
from pagebench.lab.browser import CHROMIUM
from pagebench.results.store import Store, load_columns, resource_columns
from tests.helpers import CHECK, META, PROFILES, SPEC, fake_load, fill, make_plan

CHARTS = {"distribution", "rtt", "connections", "waterfall"}
HOSTILE = '<script>alert("x")</script>'
FIGURE = re.compile(r'<figure class="chart" data-chart="([^"]+)"[^>]*>(.*?)</figure>', re.S)
MARK = re.compile(r"<(?:rect|circle|line|path)\b")


@pytest.fixture
def store(tmp_path):
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as opened:
        yield opened


def report(store: Store, tmp_path: Path, run_id: str = "r1") -> str:
    path = tmp_path / "report.html"
    write_html_report(store, run_id, path)
    return path.read_text(encoding="utf-8")


def figures(page: str) -> list[tuple[str, str]]:
    """(chart name, its first svg) for every chart figure."""
    found = []
    for name, body in FIGURE.findall(page):
        svg = re.search(r"<svg\b.*?</svg>", body, re.S)
        found.append((name, svg.group(0) if svg else ""))
    return found


def fill_hostile(store: Store) -> None:
    """A run whose site, profile, host and flags try to break out of the HTML (8 conditions)."""
    profiles = {'cable"&<b>': PROFILES["cable"], "3g": PROFILES["3g"]}
    conditions = [Condition(site, mode, "direct", profile, "cold") for site in (HOSTILE, "plain")
                  for mode in ("http1.0", "h2") for profile in profiles]
    plan = [PlannedLoad(rep * len(conditions) + i, c, rep, False) for rep in range(5)
            for i, c in enumerate(conditions)]
    store.create_experiment("r1", SPEC, {**META, "host": "<img src=x onerror=alert(1)>"}, plan, profiles)
    store.add_link_check("r1", "3g", {**CHECK, "problems": ["</table><script>bad()</script>"]})
    for planned in plan:
        store.record_loads("r1", planned, [fake_load(planned, 1500.0 + 10 * planned.seq, flagged=planned.seq == 3)],
                          started_at=1_790_000_000.0 + planned.seq)


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


def test_table_shows_summary_ci_and_counts(store, tmp_path):
    fill(store)
    store.set_status("r1", "complete")
    page = report(store, tmp_path)
    assert '<span class="status complete">complete</span>' in page
    assert "28 / 28" in page and "131.0.6778.33" in page and "875bf20" in page and "bench-1" in page
    ci = stats.median_ci([2000.0, 2010.0, 2020.0, 2030.0, 2040.0, 2050.0])
    assert f"<td><b>2025</b></td><td>{ci.low:.0f}–{ci.high:.0f}</td><td>2045</td>" in page
    assert "<td>5</td><td>1</td><td></td>" in page  # h2 3g: n, flagged, failed
    assert "319.4 KiB" in page
    assert "Left out of the statistics" in page and "connections: server 3 != browser 2" in page
    # the link check: configured 300 ms, measured 300.4 ms median, valid
    assert "<td>300</td><td><b>300.4</b> / 301</td>" in page and '<td class="ok">yes</td>' in page


def test_measured_over_bound_is_a_dash_without_bounds(store, tmp_path):
    fill(store)
    page = report(store, tmp_path)
    body = page.split('<table class="numbers">', 1)[1].split("</tbody>", 1)[0].split("<tbody>", 1)[1]
    rows = body.split("</tr>")[:-1]
    assert len(rows) == 4
    assert all(row.endswith("<td>—</td>") for row in rows)


def test_measured_over_bound_is_the_median_ratio(store):
    fill(store)
    loads = store.loads("r1")
    bounded = [{**load, "bound_ms": 1000.0} for load in loads]
    summary = summarize("r1", bounded, store.plan("r1"))
    profiles = {c["profile"]: c["profile_fields"] for c in store.conditions("r1")}
    conditions = _conditions(summary["conditions"], bounded, profiles, ["mode", "profile"])
    assert conditions[0].label == "keepalive 3g"
    assert conditions[0].bound_ratio == pytest.approx(2.025)  # loads 2000..2050 ms over 1000 ms
    unbounded = _conditions(summarize("r1", loads, store.plan("r1"))["conditions"], loads, profiles, ["mode"])
    assert {c.bound_ratio for c in unbounded} == {None}


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


def test_hostile_strings_are_escaped(store, tmp_path):
    fill_hostile(store)
    page = report(store, tmp_path)
    assert "<script" not in page and "<img" not in page and '"&<b>' not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;/table&gt;&lt;script&gt;bad()&lt;/script&gt;" in page
    assert {name for name, _ in figures(page)} == CHARTS


def test_a_single_rtt_still_draws_one_point_per_series(store, tmp_path):
    plan = make_plan(modes=("http1.0", "keepalive", "h2"), profiles=("cable",), reps=5)
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    for planned in plan:
        store.record_loads("r1", planned, [fake_load(planned)], started_at=0.0)
    page = report(store, tmp_path)
    rtt = dict(figures(page))["rtt"]
    assert len(re.findall(r"<circle ", rtt)) == 3
    assert "This run has a single RTT (28 ms): one point per series." in page


def test_a_run_without_loads_has_notes_and_no_empty_figures(store, tmp_path):
    store.create_experiment("r1", SPEC, META, make_plan(), PROFILES)
    page = report(store, tmp_path)
    assert figures(page) == []
    assert page.count("the run has no usable load") == 3  # distribution, RTT, connections
    assert "n=0: can&#x27;t tell" in page and "No waterfall for keepalive 3g" in page
    assert "This run stored no link check" in page


def test_two_thousand_loads_are_each_drawn(store, tmp_path):
    """Every load is a point (how fast that renders is harness/benchmarks/html_report.py's)."""
    plan = make_plan(modes=("http1.0", "keepalive", "h2"), cache=("cold", "warm"), reps=167, warmups=0)
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    for planned in plan:
        store.record_loads("r1", planned, [fake_load(planned, 900.0 + planned.seq % 97)], started_at=0.0)
    page = report(store, tmp_path)
    assert len(plan) == 2004 and page.count('fill-opacity="0.75"') == 2004


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM}")
def test_the_page_renders_offline_in_chromium(store, tmp_path):
    from playwright.sync_api import sync_playwright

    fill_hostile(store)
    path = tmp_path / "report.html"
    write_html_report(store, "r1", path)
    errors: list[str] = []
    failed: list[str] = []
    requested: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM)
        try:
            page = browser.new_context(offline=True).new_page()
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.on("request", lambda request: requested.append(request.url))
            page.goto(path.as_uri(), wait_until="load")
            charts = page.evaluate(_FIGURES_JS)
            references = page.evaluate(_REFERENCES_JS)
            overlaps = page.evaluate(_OVERLAPS_JS)
            scripts = page.evaluate("document.querySelectorAll('script').length")  # HTML and SVG
        finally:
            browser.close()
    assert errors == [] and failed == []
    assert requested == [path.as_uri()]
    assert {chart["name"] for chart in charts} == CHARTS and len(charts) == 3 + 8  # a waterfall per condition
    for chart in charts:
        assert chart["width"] > 100 and chart["height"] > 50 and chart["marks"] > 0, chart
    assert references == [] and scripts == 0
    assert overlaps == []


_FIGURES_JS = """() => [...document.querySelectorAll('figure.chart')].map(figure => {
  const svg = figure.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return {name: figure.dataset.chart, width: box.width, height: box.height,
          marks: svg ? svg.querySelectorAll('rect, circle, line, path').length : 0};
})"""

#: Every attribute that could make the page fetch something, and every CSS url().
_REFERENCES_JS = """() => {
  const names = ['src', 'href', 'xlink:href', 'srcset', 'data', 'poster', 'action', 'background'];
  const found = [];
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      if (names.includes(attribute.name) && !attribute.value.startsWith('#')) found.push(attribute.value);
      if (attribute.name === 'style' && attribute.value.includes('url(')) found.push(attribute.value);
    }
  }
  for (const sheet of document.styleSheets)
    for (const rule of sheet.cssRules) if (rule.cssText.includes('url(')) found.push(rule.cssText);
  return found;
}"""

#: Pairs of SVG labels whose glyphs would overlap (line boxes trimmed to the glyphs' ink).
_OVERLAPS_JS = """() => {
  const found = [];
  for (const svg of document.querySelectorAll('figure.chart > svg')) {
    const boxes = [...svg.querySelectorAll('text')].map(text => {
      const b = text.getBoundingClientRect();
      return {text: text.textContent, left: b.left, right: b.right, top: b.top + b.height * 0.2,
              bottom: b.bottom - b.height * 0.2};
    });
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
          found.push(svg.closest('figure').dataset.chart + ': ' + a.text + ' / ' + b.text);
      }
  }
  return found;
}"""


def test_modes_are_set_against_each_other_with_intervals(store, tmp_path):
    fill(store)
    page = report(store, tmp_path)
    ratios = page.split('<section id="ratios">', 1)[1].split("</section>", 1)[0]
    rows = ratios.split("<tbody>", 1)[1].split("</tr>")[:-1]
    assert len(rows) == 2  # h2 / keepalive on each of the two profiles
    for row in rows:
        assert "h2 / keepalive" in row
        low, high = (float(x) for x in row.rsplit("<td>", 1)[1].split("</td>")[0].split(" – "))
        estimate = float(row.split("<b>", 1)[1].split("</b>")[0])
        assert low <= estimate <= high and 0.55 < estimate < 0.65  # fill(): h2 1200 ms, keepalive 2000 ms


# render is pure: a ReportData built by hand, no store ------------------------------------


def report_data(loads_per_mode: dict[str, int]) -> ReportData:
    """A run of one profile (3g) planned with 5 loads per mode, of which `loads_per_mode`
    are recorded, as plain rows the way `gather` would read them."""
    plan = make_plan(modes=tuple(loads_per_mode), profiles=("3g",), reps=5, warmups=0)
    loads, resources = [], {}
    for planned in plan:
        condition = planned.condition
        if planned.repetition >= loads_per_mode[condition.mode]:
            continue
        result = fake_load(planned, (1200.0 if condition.mode == "h2" else 2000.0) + 10 * planned.repetition)
        load_id = len(loads) + 1
        loads.append({"id": load_id, "seq": planned.seq, "client": 0, "repetition": planned.repetition,
                      "warmup": planned.warmup, "started_at": 0.0, "recorded_at": 0.0,
                      **load_columns(result), "condition": condition.key, "site": condition.site,
                      "mode": condition.mode, "topology": condition.topology, "profile": condition.profile,
                      "cache": condition.cache, "tls": condition.tls})
        resources[load_id] = [{"load_id": load_id, "position": position, **resource_columns(resource)}
                              for position, resource in enumerate(result.resources)]
    experiment = {"run_id": "r1", "status": "complete", "recorded": len(loads), "planned": len(plan),
                  "created_at": 1_790_000_000.0, "spec": SPEC, "meta": META, **META}
    return ReportData("r1", experiment, loads, plan, {"3g": PROFILES["3g"]}, [], [], resources)


def numbers_row(page: str, mode: str) -> str:
    body = page.split('<table class="numbers">', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    [row] = [row for row in body.split("</tr>")[:-1] if f'<td class="f">{mode}</td>' in row]
    return row


def test_render_is_a_function_of_the_data_alone():
    data = report_data({"keepalive": 5, "h2": 1})
    page = render(data)
    assert page == render(data)
    assert page.startswith("<!DOCTYPE html>") and "pagebench run r1" in page


def test_one_usable_load_has_no_interval():
    data = report_data({"keepalive": 5, "h2": 1})
    h2 = numbers_row(render(data), "h2")
    assert "<td><b>1200</b></td><td>—</td>" in h2  # a median of one load, no interval (not a zero-width one)
    summary = summarize("r1", data.loads, data.plan)
    [single] = [c for c in _conditions(summary["conditions"], data.loads, data.profiles, ["mode"])
                if c.summary["mode"] == "h2"]
    assert (len(single.used), single.median, single.ci) == (1, 1200.0, None)


def test_five_loads_have_an_interval():
    data = report_data({"keepalive": 5, "h2": 1})
    keepalive = numbers_row(render(data), "keepalive")
    ci = stats.median_ci([2000.0, 2010.0, 2020.0, 2030.0, 2040.0])
    assert ci.low < ci.high
    assert f"<td><b>2020</b></td><td>{ci.low:.0f}–{ci.high:.0f}</td>" in keepalive
