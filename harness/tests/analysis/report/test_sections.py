"""The HTML report's tables: the conditions (the run's one summary, the median's interval),
what was left out, the modes against each other, the link checks."""

from __future__ import annotations

from pagebench.analysis import stats
from pagebench.analysis.report.html import render
from pagebench.analysis import encoding as enc
from pagebench.analysis.report.sections import encodings_against_identity
from pagebench.core import encodings
from pagebench.core.modes import H2
from pagebench.core.records import Condition
from tests.analysis.report.pages import numbers_row, report, report_data
from tests.analysis.test_encoding import load, resource
from tests.helpers import fill, fill_sharded


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


def test_five_loads_have_an_interval():
    data = report_data({"keepalive": 5, "h2": 1})
    keepalive = numbers_row(render(data), "keepalive")
    ci = stats.median_ci([2000.0, 2010.0, 2020.0, 2030.0, 2040.0])
    assert ci.low < ci.high
    assert f"<td><b>2020</b></td><td>{ci.low:.0f}–{ci.high:.0f}</td>" in keepalive


def test_encodings_are_drawn_in_the_encodings_tables_colours():
    """The bars of each encoding a run has, in the table's order, in the table's colour."""
    present = (encodings.GZIP, encodings.IDENTITY, encodings.BR)  # as a run stored them: any order
    rows = enc.savings({Condition("demo", H2, "direct", "3g", "cold", encoding=e): [load(900.0, resource("/a.js", 2_000))]
                        for e in present})
    html = encodings_against_identity(rows)
    fills = [html.index(f'fill="{e.colour}"') for e in encodings.ENCODINGS if e in present]
    assert fills == sorted(fills)  # identity, gzip, br: the table's order
    assert all(f'fill="{e.colour}"' not in html for e in encodings.ENCODINGS if e not in present)


def test_a_sharded_run_has_its_machines_table_and_intervals_that_resample_them(store, tmp_path):
    fill(store, "one")
    assert '<section id="machines">' not in report(store, tmp_path, "one")
    fill_sharded(store, "two", slower=1.1)  # lab-b 10 % slower: h2 lab-a 1200 + 10 r (r even), lab-b 1320 + 10 r
    page = report(store, tmp_path, "two")
    machines = page.split('<section id="machines">', 1)[1].split("</section>", 1)[0]
    rows = machines.split("<tbody>", 1)[1].split("</tr>")[:-1]
    assert len(rows) == 4 and '<td class="f" rowspan="2">h2</td>' in rows[2]
    marked = '<span class="bad" title="differs from the others beyond noise: see the warnings">lab-b</span>'
    assert marked in rows[1] and marked in rows[3] and "lab-a</span>" in rows[2] and "bad" not in rows[2]
    assert "<td>10</td><td><b>1290</b></td><td>-4.8%</td><td>312</td>" in rows[2]
    assert "machine lab-b&#x27;s load_ms differs from lab-a&#x27;s" in page.split('<section id="warnings">')[1]
    h2 = {"lab-a": [1200.0 + 10 * r for r in range(0, 20, 2)], "lab-b": [1320.0 + 10 * r for r in range(1, 20, 2)]}
    resampled, pooled = stats.median_ci(h2), stats.median_ci(h2["lab-a"] + h2["lab-b"])
    assert resampled.high - resampled.low > 1.5 * (pooled.high - pooled.low)
    assert f"<td><b>1355</b></td><td>{resampled.low:.0f}–{resampled.high:.0f}</td>" in numbers_row(page, "h2")
