"""The report's "what a person sees": visual metrics per condition, and the filmstrip of
each mode's median-SpeedIndex load with the progress curves. Pure: values in, markup out
(a real run's frames: `tests/runner/test_paint_e2e.py` and the HTML report's e2e test)."""

from __future__ import annotations

import re
from dataclasses import replace

from pagebench.analysis.report import filmstrip
from pagebench.analysis.report.gather import views
from pagebench.analysis.report.html import render
from pagebench.analysis.summary import summarize
from pagebench.core.modes import H2, KEEPALIVE
from tests.analysis.report.pages import report_data
from tests.helpers import make_plan

JPEG = "AAAA"  # what a frame's bytes are does not matter to the markup


def _data(with_frames: bool = True):
    data = report_data({"keepalive": 3, "h2": 3})
    loads = []
    for load in data.summary.conditions[0].used + data.summary.conditions[1].used:
        # h2 paints its first half at 300 ms, keep-alive at 900 ms; both complete at 1200 ms
        first = 300.0 if load.condition.mode is H2 else 900.0
        loads.append(replace(load, speed_index_ms=first + 0.5 * (1200 - first) + load.repetition,
                             first_visual_change_ms=first, last_visual_change_ms=1200.0, cls=0.01, tbt_ms=0.0))
    summary = summarize("r1", loads, make_plan(modes=(KEEPALIVE, H2), profiles=("3g",), reps=5, warmups=0))
    data = replace(data, summary=summary)
    strips = {}
    for view in views(summary, data.profiles, ["mode"]):
        chosen = filmstrip.median_visual_load(view)
        assert chosen is not None
        first = chosen.first_visual_change_ms or 0.0
        curve = ((first, 0.5), (1200.0, 1.0))
        frames = tuple((ms, done, JPEG) for ms, done in curve) if with_frames else ()
        strips[chosen.id] = filmstrip.Strip(chosen, curve, frames)
    return replace(data, strips=strips)


def test_the_median_speed_index_load_is_each_rows_frames_at_one_step():
    data = _data()
    page = render(data)
    [strip] = re.findall(r'<table class="filmstrip">.*?</table>', page)
    head = re.findall(r"<th>([\d.]+) s</th>", strip)
    # from the step before the first change (blank once) to the last change, 100 ms apart
    assert head == [f"{k / 10:g}" for k in range(3, 13)]
    rows = strip.split("<tr>")[2:]
    assert [re.search(r"(keepalive|h2) \(SpeedIndex", row).group(1) for row in rows] == ["keepalive", "h2"]
    keepalive, h2 = rows
    assert h2.count('class="changed"') == 2 and keepalive.count('class="changed"') == 2
    assert h2.count("<img") == 10 and keepalive.count("<img") == 4  # blank before its first frame
    assert "50 %" in h2 and "100 %" in h2
    assert 'data-chart="visual-progress"' in page
    assert "SpeedIndex 751 ms" in h2  # the median of 750, 751, 752


def test_a_run_without_frames_says_so_and_draws_its_curves():
    page = render(_data(with_frames=False))
    assert "No frames kept for keepalive, h2" in page and 'data-chart="visual-progress"' in page
    page = render(replace(_data(), strips={}))
    assert "No load of this run has frames" in page
