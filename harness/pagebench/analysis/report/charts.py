"""Inline SVG charts drawn from plain values: strip plots, lines, grouped bars, waterfalls.

Pure: values in, SVG text out, so a report needs no network, no script and no chart
library. Labels use a monospace font, whose widths are known in advance, so labels are
placed (and clipped) where they cannot overlap. Every label is HTML-escaped here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 960
FONT = 12
CHAR_EM = 0.62  # advance of a monospace glyph, in em (DejaVu Sans Mono 0.60, Menlo 0.60)
GRID = "#e3e3e3"
INK = "#333"
MUTED = "#777"
MARKERS = ("circle", "square", "triangle", "diamond")

Scale = Callable[[float], float]


@dataclass(frozen=True)
class Strip:
    """One row of a strip plot: the used values, the excluded ones, the median and its CI."""

    label: str
    colour: str
    values: tuple[float, ...]
    excluded: tuple[float, ...] = ()
    median: float | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Point:
    """One point of a line plot, with its interval (None: none drawn)."""

    x: float
    y: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Series:
    """One line of a line plot: its points, colour, dash and marker ("": none)."""

    label: str
    colour: str
    points: tuple[Point, ...]
    dashed: bool = False
    marker: str = "circle"


@dataclass(frozen=True)
class BarGroup:
    """One group of a grouped bar chart (None: no bar)."""

    label: str
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class Span:
    """One resource of a waterfall (ms from navigation start); lane None = no connection."""

    label: str
    title: str
    lane: int | None
    start: float
    response_start: float | None
    end: float | None


def text_width(text: str, size: float = FONT) -> float:
    """The width of `text` in the monospace font the charts use, in px."""
    return len(text) * size * CHAR_EM


def clip(text: str, chars: int) -> str:
    """Shorten to `chars` characters, keeping both ends (hosts and file names matter)."""
    if len(text) <= chars:
        return text
    head = (chars - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (chars - 1 - head):]


def number(value: float) -> str:
    """A number as the axes print it: no trailing zeros."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"


def axis(low: float, high: float, count: int = 6) -> tuple[float, float, list[float]]:
    """A 'nice' domain covering [low, high] and its ticks (steps of 1, 2, 2.5 or 5 x 10^k)."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    start = math.floor(low / step + 1e-9) * step
    stop = math.ceil(high / step - 1e-9) * step
    ticks = [round(start + i * step, 10) for i in range(round((stop - start) / step) + 1)]
    return start, stop, ticks


def lane_colours(count: int) -> list[str]:
    """`count` colours, neighbours far apart: golden-angle hues, alternating lightness."""
    return [f"hsl({i * 137.508 % 360:.0f},70%,{40 if i % 2 else 52}%)" for i in range(count)]


def _f(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg viewBox="0 0 {_f(width)} {_f(height)}" width="{_f(width)}" height="{_f(height)}" '
            f'role="img" aria-label="{escape(label)}" font-family="ui-monospace,\'DejaVu Sans Mono\','
            f'Menlo,Consolas,monospace" font-size="{FONT}">' + "".join(body) + "</svg>")


def _title(title: str | None) -> str:
    return "" if title is None else f"<title>{escape(title)}</title>"


def _text(x: float, y: float, text: str, anchor: str = "start", size: float = FONT, fill: str = INK,
          extra: str = "", title: str | None = None) -> str:
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{_f(size)}" fill="{fill}"{extra}>'
            f"{_title(title)}{escape(text)}</text>")


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1, extra: str = "") -> str:
    return (f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" stroke="{stroke}" '
            f'stroke-width="{_f(width)}"{extra}/>')


def _rect(x: float, y: float, w: float, h: float, fill: str, extra: str = "", title: str | None = None) -> str:
    return (f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(max(w, 0.0))}" height="{_f(h)}" fill="{fill}"{extra}>'
            f"{_title(title)}</rect>")


def _marker(kind: str, x: float, y: float, colour: str, size: float = 4.5) -> str:
    if kind == "square":
        return _rect(x - size, y - size, 2 * size, 2 * size, colour)
    if kind in ("triangle", "diamond"):
        corners = ([(x, y - size * 1.2), (x + size * 1.1, y + size * 0.8), (x - size * 1.1, y + size * 0.8)]
                   if kind == "triangle" else
                   [(x, y - size * 1.3), (x + size * 1.1, y), (x, y + size * 1.3), (x - size * 1.1, y)])
        return f'<path d="M{" L".join(f"{_f(a)} {_f(b)}" for a, b in corners)} Z" fill="{colour}"/>'
    return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(size)}" fill="{colour}"/>'


def legend_swatch(colour: str, dashed: bool = False, marker: str | None = None) -> str:
    """A small SVG key (line and/or marker) for an HTML legend next to a chart."""
    parts = [_line(2, 7, 30, 7, colour, 2.5, ' stroke-dasharray="5 3"' if dashed else "")]
    if marker:
        parts.append(_marker(marker, 16, 7, colour, 4))
    return _svg(32, 14, parts, "key")


def _x_axis(left: float, right: float, y: float, ticks: list[float], scale: Scale, label: str, top: float) -> list[str]:
    """Grid lines from `top` down to the axis at `y`, tick labels below, the axis label under them."""
    parts = []
    for tick in ticks:
        x = scale(tick)
        parts.append(_line(x, top, x, y, GRID))
        parts.append(_line(x, y, x, y + 5, INK))
        parts.append(_text(x, y + 18, number(tick), "middle"))
    parts.append(_line(left, y, right, y, INK))
    parts.append(_text((left + right) / 2, y + 36, label, "middle"))
    return parts


def _linear(domain_low: float, domain_high: float, range_low: float, range_high: float) -> Scale:
    span = (domain_high - domain_low) or 1.0
    return lambda value: range_low + (value - domain_low) / span * (range_high - range_low)


def _from_zero(high: float, left: float, right: float, top: float, bottom: float, label: str,
               count: int = 6) -> tuple[Scale, list[str]]:
    """A horizontal axis from 0 to `high` (rounded up to a nice tick) across [left, right] at
    `bottom`, its grid up to `top`: the scale and the axis's parts, for a chart of rows."""
    start, stop, ticks = axis(0.0, high, count)
    scale = _linear(start, stop, left, right)
    return scale, _x_axis(left, right, bottom, ticks, scale, label, top)


def _label_column(labels: Sequence[str], limit: int = 44, size: float = FONT) -> tuple[list[str], float]:
    """The labels clipped to `limit` characters, and the width of a column that holds them."""
    shown = [clip(label, limit) for label in labels]
    return shown, max((text_width(text, size) for text in shown), default=0.0) + 14


def strip_plot(strips: Sequence[Strip], axis_label: str, width: float = WIDTH) -> str:
    """One row per strip on a shared axis from 0: each value a dot (excluded ones hollow),
    the median a dark tick, its confidence interval a band; the median's value at the right."""
    row = 30
    labels, left = _label_column([s.label for s in strips])
    right = width - 80
    values = [v for s in strips for v in (*s.values, *s.excluded, s.high or 0.0)]
    top = 8
    bottom = top + row * len(strips)
    scale, parts = _from_zero(max(values, default=1.0), left, right, top, bottom, axis_label)
    for i, (strip, label) in enumerate(zip(strips, labels)):
        y = top + row * i + row / 2
        if i % 2:
            parts.insert(0, _rect(left, y - row / 2, right - left, row, "#f6f6f6"))
        parts.append(_text(left - 8, y + 4, label, "end", title=strip.label if label != strip.label else None))
        if strip.low is not None and strip.high is not None:
            parts.append(_rect(scale(strip.low), y - 9, scale(strip.high) - scale(strip.low), 18, strip.colour,
                               ' fill-opacity="0.2"'))
        for j, value in enumerate(strip.values):
            jitter = ((j * 7) % 5 - 2) * 2.2
            parts.append(f'<circle cx="{_f(scale(value))}" cy="{_f(y + jitter)}" r="3.5" fill="{strip.colour}" '
                         f'fill-opacity="0.75"/>')
        for value in strip.excluded:
            parts.append(f'<circle cx="{_f(scale(value))}" cy="{_f(y)}" r="4.5" fill="none" stroke="#c00" '
                         f'stroke-width="1.5"/>')
        if strip.median is not None:
            parts.append(_line(scale(strip.median), y - 11, scale(strip.median), y + 11, INK, 2.5))
            parts.append(_text(right + 8, y + 4, f"{strip.median:.0f}", size=FONT - 1))
    return _svg(width, bottom + 44, parts, axis_label)


def _place(marks: dict[float, str], scale: Scale) -> list[tuple[float, int, str]]:
    """(x, line, text) for labels centred at x positions: a label that would collide
    with one already placed goes to the next free line below."""
    edges: list[float] = []  # right edge of the last label on each line
    placed = []
    for x_value, text in sorted(marks.items()):
        x = scale(x_value)
        half = text_width(text, FONT - 1) / 2
        line = next((k for k, edge in enumerate(edges) if edge < x - half - 6), len(edges))
        if line == len(edges):
            edges.append(0.0)
        edges[line] = x + half
        placed.append((x, line, text))
    return placed


def line_plot(series: Sequence[Series], x_label: str, y_label: str, x_marks: dict[float, str],
              width: float = WIDTH) -> str:
    """Series of points (with vertical CI whiskers) joined in x order, y from 0;
    `x_marks` names x positions (e.g. profiles) along the top."""
    points = [p for s in series for p in s.points]
    xs = [p.x for p in points]
    x_low, x_high = min(xs, default=0.0), max(xs, default=1.0)
    pad = (x_high - x_low) * 0.08 or max(abs(x_low) * 0.5, 1.0)
    x_low, x_high, x_ticks = axis(max(x_low - pad, 0.0), x_high + pad)
    y_low, y_high, y_ticks = axis(0.0, max((p.high if p.high is not None else p.y for p in points), default=1.0))
    left, right = 74.0, width - 24
    xscale = _linear(x_low, x_high, left, right)
    placed = _place(x_marks, xscale)
    top = 14 + 13 * (1 + max((line for _, line, _ in placed), default=0))
    bottom = top + 300
    yscale = _linear(y_low, y_high, bottom, top)
    parts = _x_axis(left, right, bottom, x_ticks, xscale, x_label, top)
    for tick in y_ticks:
        y = yscale(tick)
        parts.append(_line(left, y, right, y, GRID))
        parts.append(_text(left - 8, y + 4, number(tick), "end"))
    parts.append(_line(left, top, left, bottom, INK))
    parts.append(_text(16, (top + bottom) / 2, y_label, "middle",
                       extra=f' transform="rotate(-90 16 {_f((top + bottom) / 2)})"'))
    parts += [_text(x, 14 + 13 * line, text, "middle", FONT - 1, MUTED) for x, line, text in placed]
    for s in series:
        ordered = sorted(s.points, key=lambda p: p.x)
        if len(ordered) > 1:
            path = " L".join(f"{_f(xscale(p.x))} {_f(yscale(p.y))}" for p in ordered)
            dash = ' stroke-dasharray="7 4"' if s.dashed else ""
            parts.append(f'<path d="M{path}" fill="none" stroke="{s.colour}" stroke-width="2"{dash}/>')
        for p in ordered:
            x = xscale(p.x)
            if p.low is not None and p.high is not None:
                parts.append(_line(x, yscale(p.low), x, yscale(p.high), s.colour, 1.5))
                parts += [_line(x - 4, yscale(v), x + 4, yscale(v), s.colour, 1.5) for v in (p.low, p.high)]
            if s.marker:
                parts.append(_marker(s.marker, x, yscale(p.y), s.colour))
    return _svg(width, bottom + 44, parts, y_label)


def grouped_bars(groups: Sequence[BarGroup], names: Sequence[str], colours: Sequence[str], axis_label: str,
                 width: float = WIDTH) -> str:
    """Horizontal bars, one group per label and one bar per name, each with its value."""
    bar, gap = 9, 10
    group_height = bar * len(names) + gap
    labels, left = _label_column([g.label for g in groups])
    right = width - 50
    top = 6
    bottom = top + group_height * len(groups)
    scale, parts = _from_zero(max((v for g in groups for v in g.values if v is not None), default=1.0),
                              left, right, top, bottom, axis_label)
    for i, (group, label) in enumerate(zip(groups, labels)):
        y0 = top + group_height * i + gap / 2
        parts.append(_text(left - 8, y0 + bar * len(names) / 2 + 4, label, "end"))
        for j, (value, colour) in enumerate(zip(group.values, colours)):
            y = y0 + bar * j
            if value is None:
                parts.append(_text(left + 4, y + bar - 1, "—", size=FONT - 3, fill=MUTED))
                continue
            parts.append(_rect(left, y + 0.5, scale(value) - left, bar - 1, colour,
                               title=f"{names[j]}: {number(value)}"))
            parts.append(_text(scale(value) + 4, y + bar - 1, number(value), size=FONT - 3))
    return _svg(width, bottom + 44, parts, axis_label)


def waterfall(spans: Sequence[Span], colours: Sequence[str], events: dict[str, float], axis_label: str,
              width: float = WIDTH, until: float = 0.0) -> str:
    """One row per resource: a light bar while waiting for the first byte, a solid one while
    receiving, in its connection's colour (grey when it used none); `events` are dashed lines.
    The axis reaches at least `until` ms (two waterfalls side by side share one scale)."""
    row = 13
    labels, left = _label_column([s.label for s in spans], 56, FONT - 2)
    left += 6
    right = width - 16
    stops = [v for s in spans for v in (s.start, s.response_start, s.end) if v is not None]
    top = 12 + 13 * len(events)
    bottom = top + row * len(spans) + 4
    scale, parts = _from_zero(max([*stops, *events.values(), until], default=1.0), left, right, top, bottom,
                              axis_label, 8)
    for i, (span, label) in enumerate(zip(spans, labels)):
        y = top + row * i + 2
        colour = "#999" if span.lane is None else colours[span.lane % len(colours)]
        parts.append(_text(6, y + row - 4, label, size=FONT - 2, title=span.title))
        waiting_end = span.response_start if span.response_start is not None else span.end
        if waiting_end is None:
            parts.append(f'<circle cx="{_f(scale(span.start))}" cy="{_f(y + row / 2 - 1)}" r="3" fill="none" '
                         f'stroke="{colour}" stroke-width="1.5">{_title(span.title + ": no end recorded")}</circle>')
            parts.append(_text(scale(span.start) + 6, y + row - 4, "no end recorded", size=FONT - 3, fill=MUTED))
            continue
        parts.append(_rect(scale(span.start), y, max(scale(waiting_end) - scale(span.start), 1.0), row - 3, colour,
                           ' fill-opacity="0.3"'))
        if span.response_start is not None and span.end is not None:
            parts.append(_rect(scale(span.response_start), y, max(scale(span.end) - scale(span.response_start), 1.5),
                               row - 3, colour))
    for k, (name, at) in enumerate(sorted(events.items(), key=lambda item: item[1])):
        x = scale(at)
        parts.append(_line(x, 12 + 13 * k - 2, x, bottom, "#b00", 1.2, ' stroke-dasharray="4 3"'))
        anchor = "end" if x > (left + right) / 2 else "start"
        parts.append(_text(x + (-4 if anchor == "end" else 4), 10 + 13 * k, f"{name} {at:.0f} ms", anchor,
                           FONT - 1, "#b00"))
    return _svg(width, bottom + 44, parts, axis_label)
