"""SVG charts: nice axes, labels that are escaped, clipped and kept apart."""

from __future__ import annotations

import re

from pagebench.analysis.report import charts


def test_axis_snaps_to_nice_steps():
    assert charts.axis(0, 4447) == (0, 5000, [0, 1000, 2000, 3000, 4000, 5000])
    assert charts.axis(0, 69) == (0, 80, [0, 20, 40, 60, 80])
    assert charts.axis(0, 9) == (0, 10, [0, 2, 4, 6, 8, 10])
    low, high, ticks = charts.axis(20.0, 77.6)
    assert (low, high, ticks) == (20, 80, [20, 30, 40, 50, 60, 70, 80])
    low, high, ticks = charts.axis(5.0, 5.0)  # one value still gets an axis with width
    assert low <= 5 < high and len(ticks) >= 2


def test_clip_keeps_both_ends():
    assert charts.clip("short", 10) == "short"
    clipped = charts.clip("img.modern.test/a/very/long/path/p/21.jpg", 24)
    assert len(clipped) == 24 and clipped.startswith("img.modern.test") and clipped.endswith("21.jpg")


def test_lane_colours_are_distinct():
    colours = charts.lane_colours(70)
    assert len(set(colours)) == 70
    assert colours[0] != colours[1] and colours[0].startswith("hsl(")


def test_labels_are_escaped():
    svg = charts.strip_plot([charts.Strip("<b>&x</b>", "#000", (1.0, 2.0), median=1.5, low=1.0, high=2.0)], "ms")
    assert "<b>" not in svg and "&lt;b&gt;&amp;x&lt;/b&gt;" in svg
    assert svg.count("<circle") == 2


def test_colliding_x_marks_go_to_separate_lines():
    series = [charts.Series("a", "#000", (charts.Point(28, 100), charts.Point(30, 90), charts.Point(150, 50)))]
    svg = charts.line_plot(series, "rtt", "ms", {28: "cable", 30: "cable-ish", 150: "3g"})
    heights = {text: float(y) for y, text in re.findall(r'<text x="[^"]+" y="([^"]+)"[^>]*>([a-z0-9-]+)</text>',
                                                       svg)}
    assert heights["cable"] == heights["3g"] != heights["cable-ish"]


def test_waterfall_marks_resources_without_an_end():
    spans = [charts.Span("#1 a.test/", "https://a.test/", 0, 0.0, 100.0, 150.0),
             charts.Span("cache a.test/x.css", "https://a.test/x.css", None, 160.0, 170.0, 171.0),
             charts.Span("#1 a.test/f.woff", "https://a.test/f.woff", 0, 200.0, None, None)]
    svg = charts.waterfall(spans, charts.lane_colours(1), {"load": 180.0}, "ms")
    assert "no end recorded" in svg and "load 180 ms" in svg
    assert 'fill="#999"' in svg  # the cached resource, in no connection's colour
