"""A condition's medians run after run, with each run's commit: the CI regression view.
The trend's variables come from the condition fields (`conditions.Trend`): the fields
chosen once (site, profile) fix the context; a series per value of the others."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard, timeseries
from grafana_foundation_sdk.models import common, dashboard as model

from boards.conditions import FIELDS, Field, Trend, among, chosen, short_name
from boards.panels import board as frame, coloured_text, legend, lines, ms, table, tooltip, unit, variable
from boards.sdk import PAGEBENCH, SqlAnnotation
from boards.sql import INTERVAL, USABLE, median_interval

#: The fields chosen once, in order: each one's options depend on those before it.
ONE = tuple(field for field in FIELDS if field.trend is Trend.ONE)
#: A series per chosen value of each.
MANY = tuple(field for field in FIELDS if field.trend is Trend.MANY)

CHOSEN = """One point per run of the chosen site over the chosen profile, at the run's creation time, for
each chosen mode and cache state (the series' name); dashed lines are the ends of its 95 %
interval. The orange markers are the runs: hover for the run id and its git commit. Flagged,
failed and warm-up loads never count."""


def _chosen_once(field: Field) -> dashboard.QueryVariable:
    """One value of the field, of the runs of the fields chosen before it; the most
    recently used first (the default)."""
    before = ONE[:ONE.index(field)]
    of = f" of the chosen {' and '.join(f.noun for f in before)}" if before else " of all runs"
    where = f"\nWHERE {chosen(before)}" if before else ""
    return variable(field.name, f"The {field.noun} whose trend to show.", f"""\
-- {field.plural.capitalize()}{of}, the one used most recently first (the default).
SELECT {field.column}
FROM conditions c JOIN experiments e ON e.id = c.experiment_id{where}
GROUP BY {field.column}
ORDER BY max(e.created_at) DESC, {field.column}""")


def _series_of(field: Field) -> dashboard.QueryVariable:
    """Any values of the field measured in the chosen context, all by default."""
    unnamed = f"; {field.default} is unnamed" if field.default is not None else ""
    return variable(field.name, f"{field.plural.capitalize()} (one series each{unnamed}).", f"""\
-- {field.plural.capitalize()} measured for the chosen {' and '.join(f.noun for f in ONE)}, in the report's order.
SELECT {field.column}
FROM conditions c
WHERE {chosen(ONE)}
GROUP BY {field.column}
ORDER BY {field.order}""", several=True)


def _medians(metric: str, comment: str) -> str:
    """`summary` per run and series of the metric's samples, after `comment`."""
    series = short_name([field for field in FIELDS if field.trend is not Trend.ONE])
    return f"""{comment}
WITH runs AS (       -- runs in the time range; created_at is float epoch seconds
  SELECT id, run_id, git_commit, to_timestamp(created_at) AS run_time
  FROM experiments
),
samples AS (    -- usable loads of the chosen conditions: no warm-up, failed or flagged load
  SELECT r.id AS experiment_id, {series} AS series, l.{metric} AS value
  FROM runs r
  JOIN loads l ON l.experiment_id = r.id
  JOIN conditions c ON c.id = l.condition_id
  WHERE $__timeFilter(r.run_time)
    AND {chosen(ONE)}
    AND {among(MANY)}
    AND {USABLE} AND l.{metric} IS NOT NULL
),
{median_interval(("experiment_id", "series"))}"""


def _per_run(metric: str, name: str) -> str:
    return _medians(metric, f"""\
-- Median {name} per run of the chosen site and profile, a series per mode, cache state and encoding,
-- with the 95 % interval of each median (order statistics). The time is the run's creation;
-- the column named metric names the series.""") + """
SELECT r.run_time AS time, v.metric, v.value
FROM summary s
JOIN runs r ON r.id = s.experiment_id
CROSS JOIN LATERAL (VALUES (s.series, s.median),
                           (s.series || ' CI low', s.ci_low),
                           (s.series || ' CI high', s.ci_high)) AS v(metric, value)
ORDER BY r.run_time, v.metric
"""


RUNS = _medians("load_ms", """\
-- Per run of the chosen site and profile (newest first) and per mode and cache state: the
-- commit, n, the median load time with its 95 % interval, and the change from the previous run.""") + """
SELECT r.run_time AS created,
       r.run_id AS run,
       r.git_commit AS commit,
       s.series,
       s.n,
       s.median AS "load median",
       s.ci_low AS "CI low",
       s.ci_high AS "CI high",
       round(100 * s.coverage, 1) AS "coverage %",
       round((100 * (s.median / lag(s.median) OVER (PARTITION BY s.series ORDER BY r.run_time) - 1))::numeric, 1)
         AS "change %"
FROM summary s
JOIN runs r ON r.id = s.experiment_id
ORDER BY r.run_time DESC, s.series
"""

MARKERS = f"""-- A marker per run of the chosen site and profile in the time range: its id, commit and backend.
SELECT to_timestamp(e.created_at) AS time,
       'run ' || e.run_id || ', commit ' || coalesce(e.git_commit, 'unknown') AS text,
       concat_ws(',', e.backend, e.spec->>'name') AS tags
FROM experiments e
WHERE $__unixEpochFilter(e.created_at)
  AND EXISTS (SELECT 1 FROM conditions c
              WHERE c.experiment_id = e.id AND {chosen(ONE)})
ORDER BY e.created_at
"""


def _trend(title: str, description: str, sql: str, height: int) -> timeseries.Panel:
    """Medians over time, a solid line per series, its interval's ends dashed."""
    return lines(timeseries.Panel(), title, description, sql, height=height, format="time_series") \
        .unit("ms").decimals(1).line_width(2).line_interpolation(common.LineInterpolation.LINEAR) \
        .span_nulls(True).axis_soft_min(0) \
        .legend(legend(common.LegendPlacement.RIGHT, ["lastNotNull", "min", "max"])) \
        .tooltip(tooltip(common.SortOrder.DESCENDING)) \
        .override_by_regexp(".* CI (low|high)$", [
            model.DynamicConfigValue(id_val="custom.lineStyle", value=common.LineStyle(fill="dash", dash=[4, 4])),
            model.DynamicConfigValue(id_val="custom.lineWidth", value=1),
            model.DynamicConfigValue(id_val="custom.showPoints", value=common.VisibilityMode.NEVER)])


def board() -> dashboard.Dashboard:
    return frame("pagebench-trend", "pagebench: trend across runs", """\
A condition's median load time and TTFB run after run, with each run's git commit: the view of
the CI regression gate (experiments/ci.yaml runs on every push). Choose the site, profile, modes
and cache states.""", [
        _trend("Median load time per run", f"""\
Median load time (`load` event) per run: the CI regression view.

{CHOSEN}

{INTERVAL}""", _per_run("load_ms", "load time"), 11),

        _trend("Median TTFB per run", f"""\
Median time to first byte per run.

{CHOSEN}""", _per_run("ttfb_ms", "TTFB"), 9),

        table("Runs and commits", f"""\
The runs behind the trend, newest first: commit, n usable loads, the median load time with its
95 % interval and coverage, and the change of the median from the previous run of the same
series. `pagebench compare BASE CAND` tests such a change properly (Mann-Whitney U, Holm).

{INTERVAL}""", RUNS, height=10)
        .override_by_name("created", unit("dateTimeAsIso"))
        .override_by_name("load median", ms()).override_by_name("CI low", ms()).override_by_name("CI high", ms())
        .override_by_name("change %", coloured_text([(None, "green"), (-5, "text"), (5, "red")]))
        .override_by_name("coverage %", coloured_text([(None, "orange"), (95, "text")])),
    ], variables=[*map(_chosen_once, ONE), *map(_series_of, MANY)], since="now-90d") \
        .annotation(dashboard.AnnotationQuery().name("runs (commit)").datasource(PAGEBENCH).enable(True)
                    .hide(False).icon_color("rgba(255, 152, 48, 0.6)").target(SqlAnnotation(MARKERS)))
