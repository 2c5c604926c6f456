"""What a person sees (the load's frames, `core.measure.visual`): per condition of one run,
the medians of the visual metrics, layout shift and main-thread blocking; and the visual
progress curves (`visual_progress`) of each protocol mode's median load."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grafana_foundation_sdk.builders import barchart, dashboard, trend
from grafana_foundation_sdk.models import common, dashboard as model

from boards.conditions import MODE, Field, but, chosen, columns, order
from boards.panels import bars, board as frame, coloured_text, in_their_colours, legend, lines, ms, run_variable, \
    table, tooltip, unit, variable
from boards.sql import EXCLUDED, INTERVAL, RUN, USABLE, chart_medians, median_interval
from pagebench.core import modes


@dataclass(frozen=True)
class Metric:
    """A column of `loads` the dashboard summarizes, and how it is shown."""

    column: str
    name: str
    unit: str = "ms"
    decimals: int = 0


SPEED_INDEX = Metric("speed_index_ms", "SpeedIndex")
#: When the page looked how: the frames' milestones, LCP beside them.
MILESTONES = (Metric("first_visual_change_ms", "first visual change"), SPEED_INDEX,
              Metric("visual_complete_85_ms", "visually complete 85 %"),
              Metric("visual_complete_95_ms", "visually complete 95 %"),
              Metric("visual_complete_99_ms", "visually complete 99 %"),
              Metric("last_visual_change_ms", "last visual change"), Metric("lcp_ms", "LCP"))
CLS = Metric("cls", "CLS", "none", 3)
BLOCKING = (Metric("tbt_ms", "TBT"), Metric("long_tasks", "long tasks", "none", 1))
METRICS = (*MILESTONES, CLS, *BLOCKING, Metric("inp_ms", "INP"))
#: The fields the curves' variables fix: a curve per mode within them.
CONTEXT = but(MODE)

SAMPLES = ",\n    ".join(f"('{metric.column}', l.{metric.column}::float8)" for metric in METRICS)


def _of(metric: Metric, statistic: str = "median") -> str:
    """A statistic of the metric from `summary s`, in a query grouped by condition."""
    return f"max(s.{statistic}) FILTER (WHERE s.metric = '{metric.column}')"


def _medians() -> str:
    """A column per metric's median, SpeedIndex's followed by its interval."""
    listed = []
    for metric in METRICS:
        listed.append(f'{_of(metric)} AS "{metric.name}"')
        if metric is SPEED_INDEX:
            listed += [f'{_of(metric, "ci_low")} AS "{metric.name} CI low"',
                       f'{_of(metric, "ci_high")} AS "{metric.name} CI high"',
                       f'round(100 * {_of(metric, "coverage")}, 1) AS "coverage %"']
    return ",\n       ".join(listed)


BY_CONDITION = f"""-- Per condition of the chosen run: n loads with frames, the median of each visual metric,
-- and SpeedIndex's distribution-free 95 % interval (order statistics: see the panel's description).
-- Only usable loads count; flagged and failed loads are counted instead.
WITH {RUN},
samples AS (   -- one row per usable load and metric it has: no warm-up, failed or flagged load
  SELECT l.condition_id, m.metric, m.value
  FROM loads l
  JOIN run ON run.id = l.experiment_id
  CROSS JOIN LATERAL (VALUES
    {SAMPLES}
  ) AS m(metric, value)
  WHERE {USABLE} AND m.value IS NOT NULL
),
{median_interval(("condition_id", "metric"))},
{EXCLUDED}
SELECT {columns()},
       coalesce({_of(SPEED_INDEX, "n")}, 0) AS n,
       {_medians()},
       coalesce(max(x.flagged), 0) AS flagged,
       coalesce(max(x.failed), 0) AS failed
FROM conditions c
JOIN run ON run.id = c.experiment_id
LEFT JOIN summary s ON s.condition_id = c.id
LEFT JOIN excluded x ON x.condition_id = c.id
GROUP BY c.id
ORDER BY {order()}
"""

PER_MODE = ",\n       ".join(f"max(p.progress) FILTER (WHERE m.mode = '{name}') AS \"{name}\"" for name in modes.NAMES)
CURVES = f"""-- Visual completeness against ms since navigation start, a column per protocol mode: the curve of
-- each mode's median load by SpeedIndex (the lower middle one of an even n) among the usable loads
-- of the condition the variables choose in the chosen run.
WITH {RUN},
ranked AS (    -- the chosen conditions' usable loads with frames, by SpeedIndex within each condition
  SELECT l.id, c.mode,
         row_number() OVER (PARTITION BY c.id ORDER BY l.speed_index_ms, l.seq, l.client) AS r,
         count(*) OVER (PARTITION BY c.id) AS n
  FROM loads l
  JOIN run ON run.id = l.experiment_id
  JOIN conditions c ON c.id = l.condition_id
  WHERE {USABLE} AND l.speed_index_ms IS NOT NULL
    AND {chosen(CONTEXT)}
)
SELECT p.ms,
       {PER_MODE}
FROM ranked m
JOIN visual_progress p ON p.load_id = m.id
WHERE m.r = (m.n + 1) / 2
GROUP BY p.ms
ORDER BY p.ms
"""


def _context(field: Field) -> dashboard.QueryVariable:
    """One value of the field among the chosen run's conditions that have the values chosen
    before it: what the curves show."""
    before = CONTEXT[:CONTEXT.index(field)]
    where = " AND ".join(["e.run_id = '$run'", *([chosen(before)] if before else [])])
    return variable(field.name, f"The {field.noun} of the visual progress curves (of the chosen run).", f"""\
-- The {field.plural} of the chosen run's conditions with the values chosen so far, in the report's order.
SELECT {field.column}
FROM conditions c JOIN experiments e ON e.id = c.experiment_id
WHERE {where}
GROUP BY {field.column}
ORDER BY {field.order}""")


def _table() -> dashboard.Panel:
    panel = table("Visual metrics by condition: medians", f"""\
Per condition of the chosen run: n usable loads with frames, and the medians of what a person sees.
From the load's frames (screenshots from navigation start): **first visual change**, **SpeedIndex**
(the area above the visual progress curve: the mean time a pixel waits for its final look, in ms),
the times the page was **visually complete** to 85, 95 and 99 %, and the **last visual change**;
**LCP** beside them. From the page: **CLS** (cumulative layout shift), **TBT** (total blocking time:
long tasks' time beyond 50 ms) with the **long tasks** that make it, and **INP** where the spec
scripts an interaction. SpeedIndex comes with its 95 % interval. Loads stored before frames were
captured have none: their n is 0. Warm-up loads never count; flagged and failed loads are left out
and counted in their own columns.

{INTERVAL}""", BY_CONDITION, height=9)
    for metric in METRICS:
        panel.override_by_name(metric.name, unit(metric.unit, metric.decimals))
    return panel.override_by_name("SpeedIndex CI low", ms(0)).override_by_name("SpeedIndex CI high", ms(0)) \
        .override_by_name("coverage %", coloured_text([(None, "orange"), (95, "text")])) \
        .override_by_name("flagged", coloured_text([(None, "text"), (1, "orange")])) \
        .override_by_name("failed", coloured_text([(None, "text"), (1, "red")]))


def _curves() -> trend.Panel:
    panel = lines(trend.Panel(), "Visual progress of each mode's median load", """\
How complete the page looked (0–100 %, against its final frame) over ms since navigation start, a
curve per protocol mode, for the condition the variables at the top choose in the chosen run. Each
curve is one real load: the mode's median load by SpeedIndex (the lower middle one when n is even),
as its frames recorded it, so the area above a curve is that load's SpeedIndex. Steps are frames
that changed the page. The table above has the medians over all loads.""", CURVES, height=11) \
        .x_field("ms").unit("percentunit").min(0).max(1).line_width(2) \
        .line_interpolation(common.LineInterpolation.STEP_AFTER).span_nulls(True) \
        .legend(legend()).tooltip(tooltip(common.SortOrder.DESCENDING)) \
        .override_by_name("ms", ms(0))
    return in_their_colours(panel, modes.MODES)


def _chart(title: str, description: str, metrics: Sequence[Metric], *, height: int, span: int = 24,
           unit: str = "ms") -> barchart.Panel:
    """Bars of the metrics' medians per condition of the chosen run, the modes side by side."""
    sql = chart_medians(f"""\
-- The median {', '.join(metric.name for metric in metrics)} per condition of the chosen run
-- (usable loads only), protocol modes side by side within each profile and cache state.""",
                        [(f"l.{metric.column}", metric.name) for metric in metrics])
    return bars(title, description, sql, x="condition", height=height, span=span, unit=unit)


def board() -> dashboard.Dashboard:
    return frame("pagebench-visual", "pagebench: visual metrics", """\
What a person sees while one run's pages load: per condition, medians of the visual metrics from
the loads' frames (SpeedIndex, first and last visual change, visually complete 85/95/99 %), LCP,
layout shift (CLS) and main-thread blocking (TBT, long tasks), and each mode's visual progress
curve. Flagged, failed and warm-up loads are excluded.""", [
        _table(),
        _curves(),
        _chart("Visual milestones: medians", """\
Median first visual change, SpeedIndex, visually complete 85/95/99 %, last visual change and LCP
per condition of the chosen run (usable loads with frames), the protocol modes next to each other
within each profile and cache state.""", MILESTONES, height=11),

        _chart("Main-thread blocking: medians", """\
Median total blocking time (ms, left axis) and long tasks per load (right axis) per condition of
the chosen run (usable loads): how long the main thread could not answer input while the page
loaded.""", BLOCKING, height=9, span=12)
        .override_by_name("long tasks", [*unit("none", 1), model.DynamicConfigValue(
            id_val="custom.axisPlacement", value=common.AxisPlacement.RIGHT)]),

        _chart("Layout shift: median CLS", """\
Median cumulative layout shift per condition of the chosen run (usable loads): how much visible
content moved while the page loaded (Core Web Vitals call 0.1 or less good).""", (CLS,), height=9, span=12,
               unit="none").decimals(CLS.decimals),
    ], variables=[run_variable(), *map(_context, CONTEXT)])
