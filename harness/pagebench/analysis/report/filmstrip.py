"""The HTML report's "what a person sees": each condition's visual metrics, and per
condition but its mode, the filmstrip people compare first, as WebPageTest draws it: the
frame on screen at each step of time, one row per mode, with the visual progress curves
overlaid below. A row is the load whose SpeedIndex is its condition's median (the load
the SpeedIndex column describes), its frames read from the store's artifact directory.
Pure but for `gather`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from pagebench.analysis.report import charts
from pagebench.analysis.report.gather import ConditionView
from pagebench.analysis.report.page import DASH, chip, figure, legend, number
from pagebench.analysis.report.text import ms
from pagebench.analysis.summary import shown
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

#: The visual metrics the table shows, in order, with their headings.
COLUMNS = (("fcp_ms", "FCP"), ("lcp_ms", "LCP"), ("first_visual_change_ms", "first visual change"),
           ("speed_index_ms", "SpeedIndex"), ("visual_complete_85_ms", "visually complete 85 %"),
           ("visual_complete_99_ms", "99 %"), ("last_visual_change_ms", "last visual change"), ("cls", "CLS"),
           ("tbt_ms", "TBT"), ("long_tasks", "long tasks"))
#: Steps of the filmstrip (ms): the smallest that shows every row's changes in at most STEPS frames.
STEP_CHOICES = (100, 200, 500, 1000, 2000, 5000)
STEPS = 16


@dataclass(frozen=True)
class Strip:
    """One load's frames (ms, completeness, JPEG base64) and its progress curve."""

    load: LoadRow
    curve: tuple[tuple[float, float], ...]
    frames: tuple[tuple[float, float, str], ...]


def median_visual_load(view: ConditionView) -> LoadRow | None:
    """The load whose SpeedIndex is the median (the lower of the middle two for even n)."""
    ordered = sorted((row for row in view.summary.used if row.speed_index_ms is not None),
                     key=lambda row: (row.speed_index_ms, row.seq))
    return ordered[(len(ordered) - 1) // 2] if ordered else None


def gather(store: Store, run_id: str, conditions: Sequence[ConditionView]) -> dict[int, Strip]:
    """Each condition's median-SpeedIndex load as a Strip (by load id): its curve from the
    store, its frames from the artifact directory (none when not kept or since deleted)."""
    chosen = [load for load in map(median_visual_load, conditions) if load is not None]
    if not chosen:
        return {}
    curves = store.run_visual_progress(run_id)
    strips = {}
    for load in chosen:
        document: Any = store.artifacts.read(load.frames) if store.artifacts is not None else None
        frames = tuple((f["ms"], f["progress"], f["jpeg"]) for f in (document or {}).get("frames", ()))
        strips[load.id] = Strip(load, curves.get(load.id, ()), frames)
    return strips


def table(conditions: Sequence[ConditionView], fields: Sequence[str]) -> str:
    """One row per condition: the medians of its visual metrics."""
    head = ("<thead><tr>" + "".join(f"<th>{escape(f)}</th>" for f in fields)
            + "".join(f"<th>{escape(title)}{'' if key == 'cls' or key == 'long_tasks' else ' (ms)'}</th>"
                      for key, title in COLUMNS) + "</tr></thead>")
    rows = []
    for c in conditions:
        m = c.summary.metrics
        cells = [f'<td class="f">{escape(shown(f, getattr(c.condition, f)))}</td>' for f in fields]
        for key, _ in COLUMNS:
            value = m[key].median
            shown_value = DASH if value is None else (f"{value:.3f}" if key == "cls" else
                                                      number(value) if key == "long_tasks" else ms(value))
            cells.append(f"<td>{'<b>' + shown_value + '</b>' if key == 'speed_index_ms' else shown_value}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table class="numbers">{head}<tbody>{"".join(rows)}</tbody></table></div>'


def _times(curves: Sequence[Sequence[tuple[float, float]]]) -> list[float]:
    """The filmstrip's columns: from the step before the earliest first visual change (the
    blank screen once) to the latest last one, at the smallest step that fits STEPS."""
    first = min((curve[0][0] for curve in curves), default=0.0)
    last = max((curve[-1][0] for curve in curves), default=0.0)
    for step in STEP_CHOICES:
        start = max(1, math.floor(first / step))
        if math.ceil(last / step) - start < STEPS:
            break
    return [step * k for k in range(start, max(start, math.ceil(last / step)) + 1)]


def _on_screen(frames: Sequence[tuple[float, float, str]], at: float) -> tuple[float, float, str] | None:
    """The frame on screen at `at` ms: the last one at or before it (None: still blank)."""
    shown_frames = [frame for frame in frames if frame[0] <= at]
    return shown_frames[-1] if shown_frames else None


def _row(label: str, colour: str, strip: Strip, times: Sequence[float]) -> str:
    cells = [f'<th class="f">{chip(colour)}{escape(label)}</th>']
    before: tuple[float, float, str] | None = None
    for at in times:
        frame = _on_screen(strip.frames, at)
        changed = frame is not None and frame is not before
        style = ' class="changed"' if changed else ""
        picture = (f'<img alt="" src="data:image/jpeg;base64,{frame[2]}">' if frame is not None
                   else '<div class="blank"></div>')
        done = 0.0 if frame is None else frame[1]
        cells.append(f"<td{style}>{picture}<small>{done * 100:.0f} %</small></td>")
        before = frame
    return "<tr>" + "".join(cells) + "</tr>"


def filmstrips(conditions: Sequence[ConditionView], strips: Mapping[int, Strip]) -> str:
    """Per condition but its mode: the modes' median-SpeedIndex loads frame by frame at
    one step of time, and their progress curves overlaid."""
    groups: dict[tuple[Any, ...], list[tuple[ConditionView, Strip]]] = {}
    for c in conditions:
        load = median_visual_load(c)
        if load is not None and load.id in strips:
            key = tuple(v for k, v in c.condition.as_names().items() if k != "mode")
            groups.setdefault(key, []).append((c, strips[load.id]))
    if not groups:
        return ('<p class="note">No load of this run has frames: it was measured before frame capture, '
                "or with <code>run --no-frames</code>.</p>")
    parts = []
    for members in groups.values():
        first = members[0][0].condition
        title = " ".join(shown(k, v) for k, v in first.as_names().items() if k != "mode")
        times = _times([s.curve for _, s in members if s.curve])
        head = "<tr><th></th>" + "".join(f"<th>{at / 1000:g} s</th>" for at in times) + "</tr>"
        rows = [_row(f"{c.condition.mode.name} (SpeedIndex {ms(s.load.speed_index_ms)} ms)", c.condition.mode.colour,
                     s, times) for c, s in members]
        missing = [c.condition.mode.name for c, s in members if not s.frames]
        note = (f'<p class="note">No frames kept for {escape(", ".join(missing))} (its curve is drawn).</p>'
                if missing else "")
        parts.append(f"<h3>{escape(title)}</h3>{note}"
                     f'<div class="scroll"><table class="filmstrip">{head}{"".join(rows)}</table></div>'
                     + _curves(title, members))
    return "".join(parts)


def _curves(title: str, members: Sequence[tuple[ConditionView, Strip]]) -> str:
    """The progress curves of a filmstrip's rows as steps: the screen as complete as its
    last frame until the next."""
    series = []
    for c, strip in members:
        points, shown_now = [charts.Point(0.0, 0.0)], 0.0
        for at, done in strip.curve:
            points += [charts.Point(at, shown_now * 100), charts.Point(at, done * 100)]
            shown_now = done
        series.append(charts.Series(c.condition.mode.name, c.condition.mode.colour, tuple(points), marker=""))
    key = legend((charts.legend_swatch(s.colour), escape(s.label)) for s in series)
    svg = charts.line_plot(series, "time since navigation start (ms)", "visually complete (%)", {})
    caption = (f"{escape(title)}: visual progress of each mode's median-SpeedIndex load; SpeedIndex is the area "
               "above its curve up to its last visual change.")
    return figure("visual-progress", svg, caption, key, title)
