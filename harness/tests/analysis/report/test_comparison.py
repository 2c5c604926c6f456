"""`compare --html`: the verdicts and, per condition, the two runs' median loads as
waterfalls side by side on one time axis (regressions first), each linked to its HAR."""

from __future__ import annotations

import re

from pagebench.analysis.compare import compare
from pagebench.analysis.report.comparison import write_comparison
from pagebench.analysis.summary import of_run
from pagebench.results.artifacts import Evidence
from pagebench.results.store import Store
from tests.analysis.report.pages import figures
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan, pagebench

PAIR = re.compile(r'<h3>([^<:]+): <span class="(\w+)">([^<]+)</span></h3><div class="pair">(.*?)</div>', re.S)


def _run(store: Store, run_id: str, slower: float) -> None:
    """keepalive and h2 on 3g, 6 loads each with a HAR; h2 `slower` times the base's."""
    plan = make_plan(profiles=("3g",), reps=6, warmups=0)
    store.create_experiment(run_id, SPEC, META, plan, PROFILES)
    for planned in plan:
        base = 1200.0 if planned.condition.mode.name == "h2" else 2000.0
        load_ms = base * (slower if planned.condition.mode.name == "h2" else 1.0) + 10 * planned.repetition
        store.record_loads(run_id, planned, [fake_load(planned, load_ms)], 1_790_000_000.0,
                           [Evidence(har={"log": {"entries": []}})])


def _ticks(svg: str) -> list[float]:
    """The x axis's tick labels of a waterfall."""
    return [float(t) for t in re.findall(r'text-anchor="middle"[^>]*>(\d+(?:\.\d+)?)</text>', svg)]


def test_a_regression_is_drawn_first_both_loads_on_one_axis_with_their_hars(tmp_path):
    with Store(f"sqlite:///{tmp_path}/base.sqlite") as base, Store(f"sqlite:///{tmp_path}/cand.sqlite") as cand:
        _run(base, "b1", 1.0)
        _run(cand, "c1", 1.5)
        result = compare(of_run(base, "b1"), of_run(cand, "c1"))
        page_path = tmp_path / "compare.html"
        write_comparison(page_path, result, (base, of_run(base, "b1")), (cand, of_run(cand, "c1")))
    page = page_path.read_text()
    assert [v.name for v in result.regressions] == ["demo h2 direct 3g cold tls1.3"]
    pairs = PAIR.findall(page)
    assert [(name, status) for name, _, status, _ in pairs] == [
        ("demo h2 direct 3g cold tls1.3", "regression"), ("demo keepalive direct 3g cold tls1.3", "ok")]
    assert "Regression in demo h2 direct 3g cold tls1.3." in page
    for _, _, _, body in pairs:
        assert body.count('<figure class="chart" data-chart="waterfall"') == 2
        left, right = [svg for name, svg in figures(body)]
        assert _ticks(left) == _ticks(right)  # one time axis for both
        hrefs = re.findall(r'<a href="([^"]+)" download>HAR</a>', body)
        assert [href.split("/")[0] for href in hrefs] == ["base.artifacts", "cand.artifacts"]
        assert all((tmp_path / href).is_file() for href in hrefs)
    # h2's candidate median (1.5 x 1200 + 10 x 2 = 1820 ms) sets the axis: it reaches past it
    h2_left = figures(pairs[0][3])[0][1]
    assert max(_ticks(h2_left)) >= 1820 and "load 1820 ms" in figures(pairs[0][3])[1][1]


def test_compare_html_from_the_command_line(tmp_path):
    url = f"sqlite:///{tmp_path}/x.sqlite"
    with Store(url) as store:
        _run(store, "b1", 1.0)
        _run(store, "c1", 1.0)
        (tmp_path / "x.artifacts" / "c1").rename(tmp_path / "gone")  # the candidate's evidence deleted
    result = pagebench("compare", "b1", "c1", "--db", url, "--html", str(tmp_path / "c.html"))
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "c.html").read_text()
    assert len(PAIR.findall(page)) == 2 and "No regression." in page
    assert page.count('download>HAR</a>') == 2 and page.count("no evidence kept") == 2
