"""The HTML report's charts: every load's time per condition, load time against RTT per
mode, the three connection counts, and the waterfall of each condition's median load.
Pure: `gather`'s values in, figures (inline SVG by `charts`) out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from pagebench.analysis.report import charts
from pagebench.analysis.report.gather import ConditionView, median_load
from pagebench.analysis.report.page import cell, chip, figure, legend, number
from pagebench.analysis.report.sections import COUNTS
from pagebench.analysis.report.text import ms
from pagebench.analysis.summary import shown
from pagebench.core import modes
from pagebench.core.modes import Mode
from pagebench.results.rows import LoadRow, ResourceRow

def _n_label(view: ConditionView) -> str:
    return f"{view.label}  n={view.summary.n}"


def _no_data(what: str) -> str:
    return f'<p class="note">No {escape(what)}: the run has no usable load (with an RTT) yet.</p>'


def distribution(conditions: Sequence[ConditionView]) -> str:
    if not any(c.used for c in conditions):
        return _no_data("load times")
    strips = [charts.Strip(label=_n_label(c), colour=c.condition.mode.colour,
                           values=tuple(c.summary.values("load_ms")),
                           excluded=tuple(r.load_ms for r in c.flagged if r.load_ms is not None),
                           median=c.median,
                           low=None if c.ci is None else c.ci.low, high=None if c.ci is None else c.ci.high)
              for c in conditions]
    key = legend([
        ('<span class="dot"></span>', "one load"),
        ('<span class="tick"></span>', "median (value at the right)"),
        (chip("#0072B2", 0.25), "95 % bootstrap interval of the median"),
        ('<span class="ring"></span>', "flagged load (left out)"),
        *((chip(mode.colour), escape(mode.name)) for mode in modes.MODES
          if any(c.condition.mode is mode for c in conditions)),
    ])
    return figure("distribution", charts.strip_plot(strips, "load time (ms)"),
                  "Every measured load of each condition, on one axis from 0 ms.", key)


def against_rtt(conditions: Sequence[ConditionView], varying: Sequence[str],
                profiles: Mapping[str, Mapping[str, Any]]) -> str:
    placed = [c for c in conditions if c.used and c.rtt_ms is not None]
    if not placed:
        return _no_data("load time against RTT")
    fields = [f for f in varying if f != "profile"] or ["mode"]
    groups: dict[tuple[str, ...], list[ConditionView]] = {}
    for c in placed:
        groups.setdefault(tuple(str(getattr(c.condition, f)) for f in fields), []).append(c)
    series = []
    looks: dict[tuple[Mode, str], int] = {}  # series already drawn in the same colour and dash
    for key, members in groups.items():
        mode, cache = members[0].condition.mode, members[0].condition.cache
        same = looks[mode, cache] = looks.get((mode, cache), -1) + 1
        series.append(charts.Series(
            label=" ".join(shown(f, v) for f, v in zip(fields, key)), colour=mode.colour,
            dashed=cache == "warm",
            marker=charts.MARKERS[same % len(charts.MARKERS)],
            points=tuple(charts.Point(c.rtt_ms, c.median, None if c.ci is None else c.ci.low,
                                      None if c.ci is None else c.ci.high)
                         for c in members if c.rtt_ms is not None and c.median is not None)))
    names: dict[float, list[str]] = {}
    for c in placed:
        if c.rtt_ms is not None and c.condition.profile not in names.setdefault(c.rtt_ms, []):
            names[c.rtt_ms].append(c.condition.profile)
    marks = {rtt: ", ".join(n) for rtt, n in names.items()}
    caption = "Median load time (whiskers: 95 % interval) against the profile's configured RTT."
    if len(marks) == 1:
        caption += f" This run has a single RTT ({number(next(iter(marks)))} ms): one point per series."
    others = _differing(profiles[name] for rtt in names for name in names[rtt])
    if others:
        caption += f" The profiles also differ in {escape(', '.join(others))}, which this axis does not show."
    key = legend((charts.legend_swatch(s.colour, s.dashed, s.marker), escape(s.label)) for s in series)
    svg = charts.line_plot(series, "round-trip time of the profile (ms)", "median load time (ms)", marks)
    return figure("rtt", svg, caption, key)


def _differing(profiles: Iterable[Mapping[str, Any]]) -> list[str]:
    """Profile fields other than the RTT (and names) whose values differ between profiles."""
    listed = list(profiles)
    keys = sorted({k for p in listed for k in p} - {"rtt_ms", "name", "source"})
    return [k for k in keys if len({json.dumps(p.get(k)) for p in listed}) > 1]


def connections(conditions: Sequence[ConditionView]) -> str:
    if not any(c.used for c in conditions):
        return _no_data("connection counts")
    groups = [charts.BarGroup(_n_label(c), tuple(c.summary.metrics[f"connections_{way}"].median
                                                 for way, _ in COUNTS)) for c in conditions]
    svg = charts.grouped_bars(groups, [way for way, _ in COUNTS], [colour for _, colour in COUNTS],
                              "connections per load (median)")
    key = legend((chip(colour), f"{way}") for way, colour in COUNTS)
    caption = ("Connections per load counted three ways: distinct CDP connection ids (browser), new TCP "
               "connections at the router (link), distinct nginx connections (server).")
    return figure("connections", svg, caption, key)


def waterfalls(resources: Mapping[int, Sequence[ResourceRow]], conditions: Sequence[ConditionView]) -> str:
    parts, missing = [], []
    for c in conditions:
        if c.used:
            load = median_load(c)
            parts.append(_waterfall(c, load, resources[load.id]))
        else:
            missing.append(c.label)
    if missing:
        parts.append(f'<p class="note">No waterfall for {escape(", ".join(missing))}: no usable load.</p>')
    return ('<p class="note">Each row is one request of the condition\'s median load: light while waiting for '
            "the first byte (queueing, connecting, request), solid while receiving. The colour and the #number "
            "are the connection; grey rows used none (served from the cache).</p>" + "".join(parts))


def _waterfall(condition: ConditionView, load: LoadRow, rows: Sequence[ResourceRow]) -> str:
    svg, key, requests, connections = load_waterfall(load, rows)
    notes = "".join(f"<li>{cell(text)}</li>" for text in [*load.flags, *load.notes])
    caption = (f"Load seq {load.seq}, {ms(load.load_ms)} ms "
               f"(median of n={condition.summary.n}: {ms(condition.median)} ms), "
               f"{_plural(requests, 'request')} over {_plural(connections, 'connection')}."
               + (f'<ul class="notes">{notes}</ul>' if notes else ""))
    return f"<h3>{escape(condition.label)}</h3>" + figure("waterfall", svg, caption, key, condition.label)


def load_waterfall(load: LoadRow, rows: Sequence[ResourceRow], until: float = 0.0,
                   width: float = charts.WIDTH) -> tuple[str, str, int, int]:
    """A load's waterfall (its axis to at least `until` ms) and its legend (origin, protocol
    and connections), with its counts of requests and connections."""
    resources = [row.resource for row in rows]
    lanes: dict[int, int] = {}  # connection id -> lane, numbered in order of first use
    for r in resources:
        if not r.from_cache and r.connection_id is not None:
            lanes.setdefault(r.connection_id, len(lanes))
    colours = charts.lane_colours(len(lanes))
    spans = [charts.Span(label=f"{'cache' if lane is None else f'#{lane + 1}':<5} {_bare(r.url)}",
                         title=f"{r.url} ({r.protocol})", lane=lane, start=r.start_ms,
                         response_start=r.response_start_ms, end=r.end_ms)
             for r in resources
             for lane in [None if r.from_cache or r.connection_id is None else lanes[r.connection_id]]]
    events = {name: value for name, value in (("DCL", load.dcl_ms), ("load", load.load_ms)) if value is not None}
    svg = charts.waterfall(spans, colours, events, "ms from navigation start", width, until)
    by_origin: dict[tuple[str, str], list[int]] = {}  # (origin, protocol) -> its connections' lanes
    for r, span in zip(resources, spans):
        if span.lane is not None:
            found = by_origin.setdefault((_bare(r.origin), str(r.protocol)), [])
            if span.lane not in found:
                found.append(span.lane)
    key = legend(
        [("", f"<b>{escape(origin)}</b>&nbsp;{escape(protocol)}: "
              + " ".join(f'<span class="lane">{chip(colours[lane])}#{lane + 1}</span>' for lane in found))
         for (origin, protocol), found in by_origin.items()]
        + ([(chip("#999"), "cache / no connection")] if any(s.lane is None for s in spans) else []))
    return svg, key, len(resources), len(lanes)


def waterfall_end(load: LoadRow, rows: Sequence[ResourceRow]) -> float:
    """Where a load's waterfall axis must reach: its last byte, DCL and load event."""
    stops = [v for row in rows for v in (row.resource.start_ms, row.resource.response_start_ms, row.resource.end_ms)
             if v is not None]
    return max([*stops, *(v for v in (load.dcl_ms, load.load_ms) if v is not None)], default=0.0)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _bare(url: str) -> str:
    """A URL or origin without its scheme: the host says enough, and rows stay short."""
    return str(url).removeprefix("https://").removeprefix("http://")
